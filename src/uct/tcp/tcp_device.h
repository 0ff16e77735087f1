/*
 * tcp devices: which network interfaces the tcp transport offers, the
 * address an interface listens on (by address family preference), and
 * the latency and bandwidth figures an interface reports.
 *
 * This file depends only on libucs and the uct base, so it can be built
 * into programs other than the tcp module (the unit tests do).
 */
#ifndef UCT_TCP_DEVICE_H_
#define UCT_TCP_DEVICE_H_

#include <uct/base/uct_component.h>
#include <ucs/config/parser.h>

#include <sys/socket.h>

BEGIN_C_DECLS

/** Address families the tcp transport knows: inet and inet6. */
#define UCT_TCP_AF_PRIO_MAX 2

/** Estimates when nothing better is known (seconds, bytes per second). */
#define UCT_TCP_DEVICE_LOOPBACK_LATENCY   10e-6
#define UCT_TCP_DEVICE_LOOPBACK_BANDWIDTH (4.0 * 1e9)
#define UCT_TCP_DEVICE_NIC_LATENCY        50e-6
#define UCT_TCP_DEVICE_NIC_BANDWIDTH      (10e9 / 8) /* 10 Gb/s */

/**
 * Address families in order of preference, the value of a configuration
 * field of type UCT_TCP_CONFIG_TYPE_AF_PRIO ("inet,inet6").
 */
typedef struct uct_tcp_af_prio {
    int af[UCT_TCP_AF_PRIO_MAX]; /* AF_INET or AF_INET6, no repeats */
    unsigned count;              /* 1..UCT_TCP_AF_PRIO_MAX */
} uct_tcp_af_prio_t;

/**
 * Configuration value type of a uct_tcp_af_prio_t field: a comma-separated
 * list of "inet" and "inet6". A bad value is rejected by the parser with
 * the variable name, the value and the accepted names.
 */
#define UCT_TCP_CONFIG_TYPE_AF_PRIO                                  \
    {                                                                \
        uct_tcp_af_prio_read, uct_tcp_af_prio_write, NULL, NULL,     \
            uct_tcp_af_prio_help, NULL, sizeof(uct_tcp_af_prio_t), 0 \
    }

/**
 * The tcp devices: every network interface that is up and running and has
 * an IPv4 address or an IPv6 address that is not link-local (fe80::/10
 * needs a scope id, which a peer cannot use). One entry per interface
 * name, in the order the system lists them; type UCT_DEVICE_TYPE_NET;
 * sys_device is the PCI function behind /sys/class/net/<name>/device, or
 * UCS_SYS_DEVICE_ID_UNKNOWN for virtual interfaces such as lo.
 * The array is freed with free(); with no interface it may be NULL.
 * Has the signature of uct_tl_t::query_devices.
 */
ucs_status_t uct_tcp_device_query_all(uct_md_h md,
                                      uct_tl_device_resource_t **devices_p,
                                      unsigned *num_devices_p);

/**
 * The address of interface @a if_name to listen on: an address of the
 * first family in @a af_prio (AF_INET, AF_INET6) the interface has, skipping
 * IPv6 link-local addresses. The port is 0. @a addr_p is set only on
 * success.
 *
 * @return UCS_OK; UCS_ERR_NO_DEVICE, with an error line naming the
 *         interface and the families, when the interface does not exist,
 *         is not up and running, or has no address of those families;
 *         UCS_ERR_INVALID_PARAM for an empty or unknown family list;
 *         UCS_ERR_IO_ERROR if the interfaces cannot be listed.
 */
ucs_status_t uct_tcp_device_get_addr(const char *if_name, const int *af_prio,
                                     unsigned num_af,
                                     struct sockaddr_storage *addr_p);

/**
 * Parse an address family list such as "inet,inet6" (names are matched
 * ignoring case; blanks around them are ignored) into @a af_prio, which
 * holds UCT_TCP_AF_PRIO_MAX entries. Outputs are set only on success.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM with an error line naming the
 *         bad token and the accepted names.
 */
ucs_status_t uct_tcp_device_parse_af_prio(const char *value, int *af_prio,
                                          unsigned *num_af_p);

/**
 * Like uct_tcp_device_parse_af_prio(), for a list already split at the
 * commas (a UCS_CONFIG_TYPE_STRING_ARRAY field). The error line names the
 * bad entry and UCX_TCP_AF_PRIO.
 */
ucs_status_t
uct_tcp_device_af_prio_from_names(const ucs_config_names_array_t *names,
                                  int *af_prio, unsigned *num_af_p);

/**
 * Latency (seconds) and bandwidth (bytes per second) of interface
 * @a if_name. Loopback: UCT_TCP_DEVICE_LOOPBACK_*. Otherwise the bandwidth
 * is the link speed of /sys/class/net/<name>/speed, or
 * UCT_TCP_DEVICE_NIC_BANDWIDTH when the speed is not known (virtual
 * devices report -1 or nothing); the latency is UCT_TCP_DEVICE_NIC_LATENCY.
 * Where the numbers come from is logged at debug level.
 */
void uct_tcp_device_estimate(const char *if_name, int is_loopback,
                             double *latency_p, double *bandwidth_p);

/**
 * The system device of interface @a if_name (see uct_tcp_device_query_all),
 * or UCS_SYS_DEVICE_ID_UNKNOWN.
 */
ucs_sys_device_t uct_tcp_device_sys_device(const char *if_name);

/** Nonzero if @a sa is a loopback address: 127.0.0.0/8, ::1 or
 *  ::ffff:127.0.0.0/104. */
int uct_tcp_sockaddr_is_loopback(const struct sockaddr *sa);

/** "inet", "inet6", or "unknown". */
const char *uct_tcp_af_name(int af);

/* Implementation of UCT_TCP_CONFIG_TYPE_AF_PRIO */
ucs_status_t uct_tcp_af_prio_read(const char *buf, void *dest, const void *arg);
void uct_tcp_af_prio_write(char *buf, size_t max, const void *src,
                           const void *arg);
void uct_tcp_af_prio_help(char *buf, size_t max, const void *arg);

END_C_DECLS

#endif
