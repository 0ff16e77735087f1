/*
 * The ib device layer: one opened verbs device with its ports, and the
 * questions the verbs transports ask about it: which ports are usable, the
 * GID and path MTU a port uses, what a port is worth (latency, bandwidth),
 * where the device sits (its PCI function and NUMA node), and who wants to
 * hear about asynchronous device events.
 *
 * This file depends only on libucs, the uct base and libibverbs, so it can
 * be built into programs other than the ib module (the unit tests do).
 */
#ifndef UCT_IB_DEVICE_H_
#define UCT_IB_DEVICE_H_

#include <uct/base/uct_component.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/topo.h>

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>

BEGIN_C_DECLS

/** Ports of one device we look at (verbs numbers them from 1). */
#define UCT_IB_DEV_MAX_PORTS 16

/** Name of the ib component and the prefix of its configuration. */
#define UCT_IB_COMPONENT_NAME "ib"
#define UCT_IB_CONFIG_PREFIX  "IB_"

/** GID index choice: let the device layer choose (UCX_IB_GID_INDEX=auto). */
#define UCT_IB_GID_INDEX_AUTO UCS_ULUNITS_AUTO

/** Largest GID table we search. */
#define UCT_IB_DEV_MAX_GIDS 256

/** Latency of one hop through an adapter, seconds (a rough constant). */
#define UCT_IB_DEV_BASE_LATENCY 700e-9

/** What a GID is for: its RoCE version and the address family in it. */
typedef enum uct_ib_roce_version {
    UCT_IB_ROCE_NONE = 0, /* InfiniBand link layer: no RoCE */
    UCT_IB_ROCE_V1   = 1,
    UCT_IB_ROCE_V2   = 2
} uct_ib_roce_version_t;

/** A GID of a port and what it is. */
typedef struct uct_ib_gid_info {
    union ibv_gid gid;
    unsigned gid_index;
    uct_ib_roce_version_t roce_version;
    int af; /* AF_INET for ::ffff:a.b.c.d, else AF_INET6 */
} uct_ib_gid_info_t;

/** An asynchronous event of a device, as ifaces see it. */
typedef struct uct_ib_async_event {
    enum ibv_event_type type;
    uint8_t port_num;    /* for port events, else 0 */
    uint32_t qp_num;     /* for QP events, else 0 */
    struct ibv_cq *cq;   /* for CQ events, else NULL */
    struct ibv_srq *srq; /* for SRQ events, else NULL */
    ucs_status_t status; /* UCS_OK, or the error it means
                            (UCS_ERR_IO_ERROR for a fatal one) */
} uct_ib_async_event_t;

typedef void (*uct_ib_async_event_cb_t)(void *arg,
                                        const uct_ib_async_event_t *event);

/**
 * A hook an iface keeps registered while it lives: @a cb runs from the
 * async thread for every event of the device, after the device layer has
 * logged it; event->status says whether it breaks something (a fatal
 * device error is UCS_ERR_IO_ERROR for every hook; a QP, CQ or SRQ error
 * matters to the hook that owns that object). The callback must not add
 * or remove hooks. Embed it; add and remove it with
 * uct_ib_device_async_hook_add() / _remove().
 */
typedef struct uct_ib_async_hook {
    uct_ib_async_event_cb_t cb;
    void *arg;
    ucs_list_link_t list;
} uct_ib_async_hook_t;

/** An opened verbs device. */
typedef struct uct_ib_device {
    struct ibv_context *ibv_context;
    struct ibv_device_attr dev_attr;
    char name[UCT_DEVICE_NAME_MAX];
    uint8_t first_port; /* 1 */
    uint8_t num_ports;  /* at most UCT_IB_DEV_MAX_PORTS */
    struct ibv_port_attr port_attr[UCT_IB_DEV_MAX_PORTS];
    ucs_sys_device_t sys_device; /* PCI function, or unknown */
    int numa_node;               /* or UCS_NUMA_NODE_UNDEFINED */

    /* asynchronous events */
    int async_fd_registered;
    pthread_mutex_t hooks_lock;
    ucs_list_link_t async_hooks; /* uct_ib_async_hook_t */
    unsigned num_fatal_events;
} uct_ib_device_t;

/**
 * Open @a ibv_device and read its attributes, ports and locality. With
 * @a async_events, the device's async fd is watched from the async thread:
 * port up/down is logged, other events go to the registered hooks.
 * Outputs are set only on success.
 *
 * @return UCS_OK; UCS_ERR_NO_DEVICE (with a line naming the device and the
 *         cause) if it cannot be opened or queried.
 */
ucs_status_t uct_ib_device_init(uct_ib_device_t *dev,
                                struct ibv_device *ibv_device,
                                int async_events);

/** Stop watching events and close the device. */
void uct_ib_device_cleanup(uct_ib_device_t *dev);

/** Attributes of port @a port_num (first_port..first_port+num_ports-1). */
static inline const struct ibv_port_attr *
uct_ib_device_port_attr(const uct_ib_device_t *dev, uint8_t port_num)
{
    return &dev->port_attr[port_num - dev->first_port];
}

/** Nonzero if @a port_num has link layer Ethernet (RoCE). */
int uct_ib_device_is_port_roce(const uct_ib_device_t *dev, uint8_t port_num);

/**
 * Whether port @a port_num can carry traffic: it exists, is ACTIVE, and its
 * link layer is InfiniBand or Ethernet (RoCE). Why not is logged at debug
 * level.
 */
int uct_ib_device_is_port_usable(const uct_ib_device_t *dev, uint8_t port_num);

/** Read the port attributes again (after a port event). */
ucs_status_t uct_ib_device_port_refresh(uct_ib_device_t *dev, uint8_t port_num);

/**
 * The usable ports of @a dev as transport devices: name "<dev>:<port>"
 * (the names UCX_NET_DEVICES matches), type UCT_DEVICE_TYPE_NET, the
 * device's sys_device. The array is freed with free(); with no usable port
 * it is NULL and the count 0. Outputs are set only on success.
 */
ucs_status_t uct_ib_device_query_ports(const uct_ib_device_t *dev,
                                       uct_tl_device_resource_t **devices_p,
                                       unsigned *num_devices_p);

/**
 * The GID a port uses. @a gid_index is UCT_IB_GID_INDEX_AUTO or a table
 * index (UCX_IB_GID_INDEX). Auto on InfiniBand: index 0. Auto on RoCE:
 * the first RoCE v2 GID holding an IPv4-mapped address (::ffff:a.b.c.d),
 * else the first RoCE v2 GID, else the first valid GID.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (with an error line naming the
 *         port, the index and the table size) for an index beyond the table
 *         or an empty entry; UCS_ERR_NO_DEVICE if the port has no GID.
 */
ucs_status_t uct_ib_device_select_gid(const uct_ib_device_t *dev,
                                      uint8_t port_num, unsigned long gid_index,
                                      uct_ib_gid_info_t *gid_info);

/** Read GID @a gid_index of a port; UCS_ERR_NO_ELEM for an empty entry. */
ucs_status_t uct_ib_device_query_gid(const uct_ib_device_t *dev,
                                     uint8_t port_num, unsigned gid_index,
                                     uct_ib_gid_info_t *gid_info);

/** "fe80::1" or "::ffff:10.0.0.1" into @a buf. */
const char *uct_ib_gid_str(const union ibv_gid *gid, char *buf, size_t max);

/** Bytes of a verbs MTU enum value (IBV_MTU_256..IBV_MTU_4096), or 0. */
size_t uct_ib_mtu_bytes(enum ibv_mtu mtu);

/** The active path MTU of a port, in bytes. */
size_t uct_ib_device_port_mtu(const uct_ib_device_t *dev, uint8_t port_num);

/**
 * Estimated latency (seconds) and bandwidth (bytes per second) of a port,
 * from its active speed and width: signalling rate per lane times lanes,
 * less the line encoding (8b/10b up to QDR, 64b/66b above).
 * Returns UCS_ERR_UNSUPPORTED (bandwidth 0) for a speed it does not know.
 */
ucs_status_t uct_ib_device_port_estimate(const uct_ib_device_t *dev,
                                         uint8_t port_num, double *latency_p,
                                         double *bandwidth_p);

/**
 * Priority of the device for its users: 1 when its PCI function is on the
 * NUMA node of the calling thread's CPU, 0 when it is on another node or
 * its locality is unknown. Transports add it to their iface priority.
 */
int uct_ib_device_priority(const uct_ib_device_t *dev);

/** "InfiniBand", "Ethernet" or "unknown". */
const char *uct_ib_device_link_layer_str(const uct_ib_device_t *dev,
                                         uint8_t port_num);

/** Register / unregister a hook for the device's async events. */
void uct_ib_device_async_hook_add(uct_ib_device_t *dev,
                                  uct_ib_async_hook_t *hook,
                                  uct_ib_async_event_cb_t cb, void *arg);
void uct_ib_device_async_hook_remove(uct_ib_device_t *dev,
                                     uct_ib_async_hook_t *hook);

/**
 * Handle one event of the device: log it, update the port attributes on a
 * port event, and pass it to the hooks. Called for each event read from
 * the async fd; public so that tests can inject events.
 */
void uct_ib_device_handle_async_event(uct_ib_device_t *dev,
                                      const uct_ib_async_event_t *event);

/**
 * Print the device's ports, link layer, state, GID (chosen by
 * @a gid_index as uct_ib_device_select_gid() does), MTU, speed, estimates
 * and locality, one "# " line each, for uct_info -d.
 */
void uct_ib_device_print_info(const uct_ib_device_t *dev,
                              unsigned long gid_index, FILE *stream);

END_C_DECLS

#endif
