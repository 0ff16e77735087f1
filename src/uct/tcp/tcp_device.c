/*
 * tcp devices: interface discovery, listen address selection by address
 * family preference, system device and performance estimates.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_device.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/topo.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Largest link speed believed, in Mb/s (10 Tb/s); above is a bogus value */
#define UCT_TCP_DEVICE_MAX_SPEED 10000000L

static const struct {
    const char *name;
    int af;
} uct_tcp_af_names[UCT_TCP_AF_PRIO_MAX] = {{"inet", AF_INET},
                                           {"inet6", AF_INET6}};

const char *uct_tcp_af_name(int af)
{
    unsigned i;

    for (i = 0; i < UCT_TCP_AF_PRIO_MAX; ++i) {
        if (uct_tcp_af_names[i].af == af) {
            return uct_tcp_af_names[i].name;
        }
    }
    return "unknown";
}

/* Whether @a af is one of the families of uct_tcp_af_names */
static int uct_tcp_af_is_known(int af)
{
    return (af == AF_INET) || (af == AF_INET6);
}

/* "inet,inet6" from a family list, for messages */
static void uct_tcp_af_list_str(const int *af, unsigned count, char *buf,
                                size_t max)
{
    size_t len = 0;
    unsigned i;
    int ret;

    buf[0] = '\0';
    for (i = 0; (i < count) && (len < max); ++i) {
        ret = snprintf(buf + len, max - len, "%s%s", (i == 0) ? "" : ",",
                       uct_tcp_af_name(af[i]));
        if (ret < 0) {
            break;
        }
        len += (size_t)ret;
    }
}

int uct_tcp_sockaddr_is_loopback(const struct sockaddr *sa)
{
    const struct sockaddr_in6 *sin6;
    const struct sockaddr_in *sin;

    if (sa == NULL) {
        return 0;
    }

    switch (sa->sa_family) {
    case AF_INET:
        sin = (const struct sockaddr_in *)sa;
        /* 127.0.0.0/8: the top byte */
        return (ntohl(sin->sin_addr.s_addr) >> 24) == IN_LOOPBACKNET;
    case AF_INET6:
        sin6 = (const struct sockaddr_in6 *)sa;
        return IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) ||
               (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) &&
                (sin6->sin6_addr.s6_addr[12] == IN_LOOPBACKNET));
    default:
        return 0;
    }
}

/* An address a peer can reach without more context: IPv4, or IPv6 that is
 * not link-local (those need the scope id of the sender's interface). */
static int uct_tcp_ifaddr_is_usable(const struct ifaddrs *ifa)
{
    const struct sockaddr_in6 *sin6;

    if (ifa->ifa_addr == NULL) {
        return 0;
    }

    switch (ifa->ifa_addr->sa_family) {
    case AF_INET:
        return 1;
    case AF_INET6:
        sin6 = (const struct sockaddr_in6 *)ifa->ifa_addr;
        return !IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr);
    default:
        return 0;
    }
}

static int uct_tcp_ifaddr_is_active(const struct ifaddrs *ifa)
{
    return (ifa->ifa_flags & IFF_UP) && (ifa->ifa_flags & IFF_RUNNING);
}

/* The name of the interface in /sys/class/net: an IPv4 alias label such as
 * "eth0:1" belongs to "eth0". */
static void uct_tcp_device_sysfs_name(const char *if_name, char *buf,
                                      size_t max)
{
    size_t len = strcspn(if_name, ":");

    snprintf(buf, max, "%.*s", (int)len, if_name);
}

ucs_sys_device_t uct_tcp_device_sys_device(const char *if_name)
{
    char name[UCT_DEVICE_NAME_MAX];
    char path[PATH_MAX];
    ucs_sys_device_t sys_dev;
    ucs_status_t status;

    uct_tcp_device_sysfs_name(if_name, name, sizeof(name));
    snprintf(path, sizeof(path), "/sys/class/net/%s/device", name);
    status = ucs_topo_find_device_by_sysfs(path, &sys_dev);
    if (status != UCS_OK) {
        ucs_debug("tcp: %s: system device of %s not registered: %s", if_name,
                  path, ucs_status_string(status));
        return UCS_SYS_DEVICE_ID_UNKNOWN;
    }

    return sys_dev;
}

static int uct_tcp_device_is_listed(const uct_tl_device_resource_t *devices,
                                    unsigned num_devices, const char *name)
{
    unsigned i;

    for (i = 0; i < num_devices; ++i) {
        if (!strcmp(devices[i].name, name)) {
            return 1;
        }
    }
    return 0;
}

ucs_status_t uct_tcp_device_query_all(uct_md_h md,
                                      uct_tl_device_resource_t **devices_p,
                                      unsigned *num_devices_p)
{
    uct_tl_device_resource_t *devices = NULL, *tmp;
    unsigned num_devices              = 0;
    struct ifaddrs *ifaddrs, *ifa;
    uct_tl_device_resource_t *dev;

    if (getifaddrs(&ifaddrs) < 0) {
        ucs_error("tcp: getifaddrs() failed: %m; cannot list the network "
                  "interfaces");
        return UCS_ERR_IO_ERROR;
    }

    for (ifa = ifaddrs; ifa != NULL; ifa = ifa->ifa_next) {
        if (!uct_tcp_ifaddr_is_active(ifa) || !uct_tcp_ifaddr_is_usable(ifa) ||
            uct_tcp_device_is_listed(devices, num_devices, ifa->ifa_name)) {
            continue;
        }

        if (strlen(ifa->ifa_name) >= UCT_DEVICE_NAME_MAX) {
            ucs_debug("tcp: interface name '%s' is too long for a device "
                      "name; skipped",
                      ifa->ifa_name);
            continue;
        }

        tmp = realloc(devices, sizeof(*devices) * (num_devices + 1));
        if (tmp == NULL) {
            ucs_error("tcp: failed to allocate the device list (%u entries)",
                      num_devices + 1);
            free(devices);
            freeifaddrs(ifaddrs);
            return UCS_ERR_NO_MEMORY;
        }

        devices = tmp;
        dev     = &devices[num_devices++];
        memset(dev, 0, sizeof(*dev));
        snprintf(dev->name, sizeof(dev->name), "%s", ifa->ifa_name);
        dev->type       = UCT_DEVICE_TYPE_NET;
        dev->sys_device = uct_tcp_device_sys_device(ifa->ifa_name);
    }

    freeifaddrs(ifaddrs);
    *devices_p     = devices;
    *num_devices_p = num_devices;
    return UCS_OK;
}

/* What one interface offers, for the choice and for the error message */
typedef struct uct_tcp_ifaddr_scan {
    const struct sockaddr *addr[UCT_TCP_AF_PRIO_MAX]; /* per af_prio entry */
    int exists;
    int active;
    int has_inet;
    int has_inet6;
    int has_link_local;
} uct_tcp_ifaddr_scan_t;

static void uct_tcp_ifaddr_scan(const struct ifaddrs *ifaddrs,
                                const char *if_name, const int *af_prio,
                                unsigned num_af, uct_tcp_ifaddr_scan_t *scan)
{
    const struct ifaddrs *ifa;
    unsigned i;

    memset(scan, 0, sizeof(*scan));
    for (ifa = ifaddrs; ifa != NULL; ifa = ifa->ifa_next) {
        if (strcmp(ifa->ifa_name, if_name)) {
            continue;
        }

        scan->exists = 1;
        if (!uct_tcp_ifaddr_is_active(ifa)) {
            continue;
        }

        scan->active = 1;
        if (!uct_tcp_ifaddr_is_usable(ifa)) {
            scan->has_link_local |= (ifa->ifa_addr != NULL) &&
                                    (ifa->ifa_addr->sa_family == AF_INET6);
            continue;
        }

        scan->has_inet |= (ifa->ifa_addr->sa_family == AF_INET);
        scan->has_inet6 |= (ifa->ifa_addr->sa_family == AF_INET6);
        for (i = 0; i < num_af; ++i) {
            if ((af_prio[i] == ifa->ifa_addr->sa_family) &&
                (scan->addr[i] == NULL)) {
                scan->addr[i] = ifa->ifa_addr;
            }
        }
    }
}

static void uct_tcp_device_report_no_addr(const char *if_name,
                                          const int *af_prio, unsigned num_af,
                                          const uct_tcp_ifaddr_scan_t *scan)
{
    char wanted[32], has[64];

    if (!scan->exists) {
        ucs_error("tcp: there is no network interface '%s'; run uct_info -d "
                  "to list the tcp devices",
                  if_name);
        return;
    }

    if (!scan->active) {
        ucs_error("tcp: network interface '%s' is not up and running; bring "
                  "it up or choose another device (uct_info -d lists them)",
                  if_name);
        return;
    }

    uct_tcp_af_list_str(af_prio, num_af, wanted, sizeof(wanted));
    if (scan->has_inet && scan->has_inet6) {
        snprintf(has, sizeof(has), "inet,inet6");
    } else if (scan->has_inet || scan->has_inet6) {
        snprintf(has, sizeof(has), "%s", scan->has_inet ? "inet" : "inet6");
    } else if (scan->has_link_local) {
        snprintf(has, sizeof(has), "none (only link-local inet6)");
    } else {
        snprintf(has, sizeof(has), "none");
    }
    ucs_error("tcp: network interface '%s' has no address of the families "
              "%s (UCX_TCP_AF_PRIO); its usable addresses: %s; set "
              "UCX_TCP_AF_PRIO to a family it has or choose another device",
              if_name, wanted, has);
}

ucs_status_t uct_tcp_device_get_addr(const char *if_name, const int *af_prio,
                                     unsigned num_af,
                                     struct sockaddr_storage *addr_p)
{
    struct sockaddr_storage addr;
    uct_tcp_ifaddr_scan_t scan;
    struct ifaddrs *ifaddrs;
    size_t addr_len;
    unsigned i;

    if ((if_name == NULL) || (af_prio == NULL) || (addr_p == NULL)) {
        ucs_error("uct_tcp_device_get_addr: NULL %s",
                  (if_name == NULL)   ? "interface name"
                  : (af_prio == NULL) ? "address family list"
                                      : "addr_p");
        return UCS_ERR_INVALID_PARAM;
    }

    if ((num_af == 0) || (num_af > UCT_TCP_AF_PRIO_MAX)) {
        ucs_error("tcp: %u address families given for interface '%s'; "
                  "give 1 to %d of inet, inet6",
                  num_af, if_name, UCT_TCP_AF_PRIO_MAX);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < num_af; ++i) {
        if (!uct_tcp_af_is_known(af_prio[i])) {
            ucs_error("tcp: unsupported address family %d for interface "
                      "'%s'; use AF_INET or AF_INET6",
                      af_prio[i], if_name);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    if (getifaddrs(&ifaddrs) < 0) {
        ucs_error("tcp: getifaddrs() failed: %m; cannot find the address of "
                  "interface '%s'",
                  if_name);
        return UCS_ERR_IO_ERROR;
    }

    uct_tcp_ifaddr_scan(ifaddrs, if_name, af_prio, num_af, &scan);
    for (i = 0; i < num_af; ++i) {
        if (scan.addr[i] != NULL) {
            break;
        }
    }

    if (i == num_af) {
        uct_tcp_device_report_no_addr(if_name, af_prio, num_af, &scan);
        freeifaddrs(ifaddrs);
        return UCS_ERR_NO_DEVICE;
    }

    addr_len = (af_prio[i] == AF_INET) ? sizeof(struct sockaddr_in)
                                       : sizeof(struct sockaddr_in6);
    memset(&addr, 0, sizeof(addr));
    memcpy(&addr, scan.addr[i], addr_len);
    freeifaddrs(ifaddrs);

    /* a listen address: the port is chosen later */
    if (addr.ss_family == AF_INET) {
        ((struct sockaddr_in *)&addr)->sin_port = 0;
    } else {
        ((struct sockaddr_in6 *)&addr)->sin6_port = 0;
    }

    *addr_p = addr;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Address family lists
 */

static int uct_tcp_is_blank(char c)
{
    return (c == ' ') || (c == '\t');
}

/*
 * Appends the family named by @a token (@a len characters) to @a af, which
 * holds @a *count_p entries. On failure describes the problem, in @a where,
 * in @a err.
 */
static ucs_status_t uct_tcp_af_prio_add(int *af, unsigned *count_p,
                                        const char *token, size_t len,
                                        const char *where, char *err,
                                        size_t max)
{
    int found = -1;
    unsigned i;

    if (len == 0) {
        snprintf(err, max, "empty address family in %s", where);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < UCT_TCP_AF_PRIO_MAX; ++i) {
        if ((strlen(uct_tcp_af_names[i].name) == len) &&
            !strncasecmp(token, uct_tcp_af_names[i].name, len)) {
            found = uct_tcp_af_names[i].af;
        }
    }

    if (found < 0) {
        snprintf(err, max, "unknown address family '%.*s' in %s", (int)len,
                 token, where);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < *count_p; ++i) {
        if (af[i] == found) {
            snprintf(err, max, "address family '%.*s' is listed twice in %s",
                     (int)len, token, where);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    /* with no repeats of UCT_TCP_AF_PRIO_MAX names, this stays in range */
    af[(*count_p)++] = found;
    return UCS_OK;
}

/* Parses @a value; on failure describes the problem in @a err. */
static ucs_status_t uct_tcp_af_prio_parse(const char *value, int *af_prio,
                                          unsigned *num_af_p, char *err,
                                          size_t max)
{
    int af[UCT_TCP_AF_PRIO_MAX];
    const char *token, *end;
    char where[96];
    unsigned count = 0;
    ucs_status_t status;
    size_t len;

    snprintf(where, sizeof(where), "'%s'", value);
    for (token = value;; token = end + 1) {
        end = strchr(token, ',');
        if (end == NULL) {
            end = token + strlen(token);
        }

        while ((token < end) && uct_tcp_is_blank(*token)) {
            ++token;
        }
        len = (size_t)(end - token);
        while ((len > 0) && uct_tcp_is_blank(token[len - 1])) {
            --len;
        }

        status = uct_tcp_af_prio_add(af, &count, token, len, where, err, max);
        if (status != UCS_OK) {
            return status;
        }

        if (*end == '\0') {
            break;
        }
    }

    memcpy(af_prio, af, sizeof(*af) * count);
    *num_af_p = count;
    return UCS_OK;
}

ucs_status_t
uct_tcp_device_af_prio_from_names(const ucs_config_names_array_t *names,
                                  int *af_prio, unsigned *num_af_p)
{
    int af[UCT_TCP_AF_PRIO_MAX];
    unsigned i, count = 0;
    ucs_status_t status;
    char err[192];

    if ((names == NULL) || (af_prio == NULL) || (num_af_p == NULL)) {
        ucs_error("uct_tcp_device_af_prio_from_names: NULL %s",
                  (names == NULL) ? "names" : "output argument");
        return UCS_ERR_INVALID_PARAM;
    }

    if (names->count == 0) {
        ucs_error("tcp: UCX_TCP_AF_PRIO is empty; list inet, inet6 or both, "
                  "preferred first");
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < names->count; ++i) {
        status = uct_tcp_af_prio_add(af, &count, names->names[i],
                                     strlen(names->names[i]), "UCX_TCP_AF_PRIO",
                                     err, sizeof(err));
        if (status != UCS_OK) {
            ucs_error("tcp: %s; accepted address families: inet, inet6 "
                      "(comma-separated, preferred first)",
                      err);
            return status;
        }
    }

    memcpy(af_prio, af, sizeof(*af) * count);
    *num_af_p = count;
    return UCS_OK;
}

ucs_status_t uct_tcp_device_parse_af_prio(const char *value, int *af_prio,
                                          unsigned *num_af_p)
{
    char err[192];
    ucs_status_t status;

    if ((value == NULL) || (af_prio == NULL) || (num_af_p == NULL)) {
        ucs_error("uct_tcp_device_parse_af_prio: NULL %s",
                  (value == NULL) ? "value" : "output argument");
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_tcp_af_prio_parse(value, af_prio, num_af_p, err, sizeof(err));
    if (status != UCS_OK) {
        ucs_error("tcp: %s; accepted address families: inet, inet6 "
                  "(comma-separated, preferred first)",
                  err);
    }
    return status;
}

ucs_status_t uct_tcp_af_prio_read(const char *buf, void *dest, const void *arg)
{
    uct_tcp_af_prio_t prio;
    char err[192];
    ucs_status_t status;

    /* the parser reports the variable, the value and the help text */
    status = uct_tcp_af_prio_parse(buf, prio.af, &prio.count, err, sizeof(err));
    if (status != UCS_OK) {
        ucs_debug("tcp: %s", err);
        return status;
    }

    *(uct_tcp_af_prio_t *)dest = prio;
    return UCS_OK;
}

void uct_tcp_af_prio_write(char *buf, size_t max, const void *src,
                           const void *arg)
{
    const uct_tcp_af_prio_t *prio = src;

    uct_tcp_af_list_str(prio->af, ucs_min(prio->count, UCT_TCP_AF_PRIO_MAX),
                        buf, max);
}

void uct_tcp_af_prio_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max,
             "comma-separated address families, preferred "
             "first: inet (IPv4), inet6 (IPv6)");
}

/* ------------------------------------------------------------------------
 * Estimates
 */

void uct_tcp_device_estimate(const char *if_name, int is_loopback,
                             double *latency_p, double *bandwidth_p)
{
    char name[UCT_DEVICE_NAME_MAX];
    ucs_status_t status;
    long speed;

    if (is_loopback) {
        *latency_p   = UCT_TCP_DEVICE_LOOPBACK_LATENCY;
        *bandwidth_p = UCT_TCP_DEVICE_LOOPBACK_BANDWIDTH;
        ucs_debug("tcp: %s: loopback estimates: latency %.1f us, bandwidth "
                  "%.0f MB/s",
                  if_name, *latency_p * 1e6, *bandwidth_p / 1e6);
        return;
    }

    *latency_p = UCT_TCP_DEVICE_NIC_LATENCY;
    uct_tcp_device_sysfs_name(if_name, name, sizeof(name));
    status = ucs_read_file_number(&speed, 1, "/sys/class/net/%s/speed", name);
    if ((status == UCS_OK) && (speed > 0) &&
        (speed <= UCT_TCP_DEVICE_MAX_SPEED)) {
        *bandwidth_p = (double)speed * 1e6 / 8;
        ucs_debug("tcp: %s: link speed %ld Mb/s from /sys/class/net/%s/speed:"
                  " bandwidth %.0f MB/s, latency %.1f us (estimate)",
                  if_name, speed, name, *bandwidth_p / 1e6, *latency_p * 1e6);
        return;
    }

    *bandwidth_p = UCT_TCP_DEVICE_NIC_BANDWIDTH;
    if (status == UCS_OK) {
        ucs_debug("tcp: %s: link speed %ld in /sys/class/net/%s/speed is not "
                  "known; default bandwidth %.0f MB/s, latency %.1f us",
                  if_name, speed, name, *bandwidth_p / 1e6, *latency_p * 1e6);
    } else {
        ucs_debug("tcp: %s: no link speed in /sys/class/net/%s/speed; "
                  "default bandwidth %.0f MB/s, latency %.1f us",
                  if_name, name, *bandwidth_p / 1e6, *latency_p * 1e6);
    }
}
