/*
 * ib devices: opening a verbs device, its ports, GID choice, path MTU,
 * speed estimates, locality, and asynchronous events.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ib_device.h"

#include <ucs/async/async.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Data rate of one lane after line encoding, bits per second, by the
 * active_speed value of a port. */
static const struct {
    uint8_t speed;
    const char *name;
    double lane_bps;
} uct_ib_device_speeds[] = {{1, "SDR", 2.5e9 * 8 / 10},
                            {2, "DDR", 5.0e9 * 8 / 10},
                            {4, "QDR", 10.0e9 * 8 / 10},
                            {8, "FDR10", 10.3125e9 * 64 / 66},
                            {16, "FDR", 14.0625e9 * 64 / 66},
                            {32, "EDR", 25.78125e9 * 64 / 66},
                            {64, "HDR", 50.0e9},
                            {128, "NDR", 100.0e9},
                            {0, NULL, 0}};

/* Lanes by the active_width value of a port */
static unsigned uct_ib_device_width_lanes(uint8_t width)
{
    switch (width) {
    case 1:
        return 1;
    case 2:
        return 4;
    case 4:
        return 8;
    case 8:
        return 12;
    case 16:
        return 2;
    default:
        return 0;
    }
}

static const char *uct_ib_device_port_state_str(enum ibv_port_state state)
{
    switch (state) {
    case IBV_PORT_DOWN:
        return "DOWN";
    case IBV_PORT_INIT:
        return "INIT";
    case IBV_PORT_ARMED:
        return "ARMED";
    case IBV_PORT_ACTIVE:
        return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
        return "ACTIVE_DEFER";
    default:
        return "NOP";
    }
}

size_t uct_ib_mtu_bytes(enum ibv_mtu mtu)
{
    switch (mtu) {
    case IBV_MTU_256:
        return 256;
    case IBV_MTU_512:
        return 512;
    case IBV_MTU_1024:
        return 1024;
    case IBV_MTU_2048:
        return 2048;
    case IBV_MTU_4096:
        return 4096;
    default:
        return 0;
    }
}

const char *uct_ib_gid_str(const union ibv_gid *gid, char *buf, size_t max)
{
    if (inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)max) == NULL) {
        snprintf(buf, max, "<invalid>");
    }
    return buf;
}

/* ::ffff:a.b.c.d */
static int uct_ib_gid_is_ipv4_mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0,    0,
                                       0, 0, 0, 0, 0xff, 0xff};

    return !memcmp(gid->raw, prefix, sizeof(prefix));
}

static int uct_ib_gid_is_zero(const union ibv_gid *gid)
{
    static const union ibv_gid zero;

    return !memcmp(gid->raw, zero.raw, sizeof(zero.raw));
}

static int uct_ib_device_port_exists(const uct_ib_device_t *dev,
                                     uint8_t port_num)
{
    return (port_num >= dev->first_port) &&
           (port_num < dev->first_port + dev->num_ports);
}

int uct_ib_device_is_port_roce(const uct_ib_device_t *dev, uint8_t port_num)
{
    return uct_ib_device_port_exists(dev, port_num) &&
           (uct_ib_device_port_attr(dev, port_num)->link_layer ==
            IBV_LINK_LAYER_ETHERNET);
}

const char *uct_ib_device_link_layer_str(const uct_ib_device_t *dev,
                                         uint8_t port_num)
{
    if (!uct_ib_device_port_exists(dev, port_num)) {
        return "unknown";
    }

    switch (uct_ib_device_port_attr(dev, port_num)->link_layer) {
    case IBV_LINK_LAYER_UNSPECIFIED:
    case IBV_LINK_LAYER_INFINIBAND:
        return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
        return "Ethernet";
    default:
        return "unknown";
    }
}

int uct_ib_device_is_port_usable(const uct_ib_device_t *dev, uint8_t port_num)
{
    const struct ibv_port_attr *attr;

    if (!uct_ib_device_port_exists(dev, port_num)) {
        ucs_debug("%s: no port %u (ports %u..%u)", dev->name, port_num,
                  dev->first_port, dev->first_port + dev->num_ports - 1);
        return 0;
    }

    attr = uct_ib_device_port_attr(dev, port_num);
    if (attr->state != IBV_PORT_ACTIVE) {
        ucs_debug("%s:%u: port is %s, not ACTIVE", dev->name, port_num,
                  uct_ib_device_port_state_str(attr->state));
        return 0;
    }

    switch (attr->link_layer) {
    case IBV_LINK_LAYER_UNSPECIFIED:
    case IBV_LINK_LAYER_INFINIBAND:
    case IBV_LINK_LAYER_ETHERNET:
        return 1;
    default:
        ucs_debug("%s:%u: unknown link layer %u", dev->name, port_num,
                  attr->link_layer);
        return 0;
    }
}

static ucs_status_t uct_ib_device_query_port_attr(uct_ib_device_t *dev,
                                                  uint8_t port_num,
                                                  struct ibv_port_attr *attr)
{
    int ret;

    ret = ibv_query_port(dev->ibv_context, port_num, attr);
    if (ret != 0) {
        errno = ret;
        ucs_error("%s: ibv_query_port(%u) failed: %m; check that the "
                  "device driver is loaded (ibv_devinfo -d %s)",
                  dev->name, port_num, dev->name);
        return UCS_ERR_NO_DEVICE;
    }
    return UCS_OK;
}

ucs_status_t uct_ib_device_port_refresh(uct_ib_device_t *dev, uint8_t port_num)
{
    struct ibv_port_attr attr;
    ucs_status_t status;

    if (!uct_ib_device_port_exists(dev, port_num)) {
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_ib_device_query_port_attr(dev, port_num, &attr);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_lock(&dev->hooks_lock);
    dev->port_attr[port_num - dev->first_port] = attr;
    pthread_mutex_unlock(&dev->hooks_lock);
    return UCS_OK;
}

/* PCI function and NUMA node behind /sys/class/infiniband/<dev>/device */
static void uct_ib_device_init_locality(uct_ib_device_t *dev)
{
    char path[PATH_MAX];
    ucs_status_t status;

    dev->sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;
    dev->numa_node  = UCS_NUMA_NODE_UNDEFINED;

    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev->name);
    status = ucs_topo_find_device_by_sysfs(path, &dev->sys_device);
    if (status != UCS_OK) {
        ucs_debug("%s: system device of %s not registered: %s", dev->name, path,
                  ucs_status_string(status));
        dev->sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;
        return;
    }

    if (dev->sys_device == UCS_SYS_DEVICE_ID_UNKNOWN) {
        ucs_debug("%s: no PCI function behind %s (a virtual device)", dev->name,
                  path);
        return;
    }

    ucs_topo_sys_device_set_name(dev->sys_device, dev->name);
    dev->numa_node = ucs_topo_sys_device_get_numa_node(dev->sys_device);
    ucs_debug("%s: PCI function %s, NUMA node %d", dev->name,
              ucs_topo_sys_device_get_name(dev->sys_device), dev->numa_node);
}

/* What an event means for the ifaces that use the device */
static ucs_status_t uct_ib_async_event_status(enum ibv_event_type type)
{
    switch (type) {
    case IBV_EVENT_DEVICE_FATAL:
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_CQ_ERR:
    case IBV_EVENT_SRQ_ERR:
        return UCS_ERR_IO_ERROR;
    case IBV_EVENT_PORT_ERR:
        return UCS_ERR_UNREACHABLE;
    default:
        return UCS_OK;
    }
}

void uct_ib_device_handle_async_event(uct_ib_device_t *dev,
                                      const uct_ib_async_event_t *event)
{
    uct_ib_async_hook_t *hook;

    switch (event->type) {
    case IBV_EVENT_PORT_ACTIVE:
        uct_ib_device_port_refresh(dev, event->port_num);
        ucs_info("%s:%u: port is up (ACTIVE)", dev->name, event->port_num);
        break;
    case IBV_EVENT_PORT_ERR:
        uct_ib_device_port_refresh(dev, event->port_num);
        ucs_warn("%s:%u: port went down; traffic through it stops until "
                 "the link is up again (check the cable or the network "
                 "interface under it)",
                 dev->name, event->port_num);
        break;
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_GID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
        uct_ib_device_port_refresh(dev, event->port_num);
        ucs_debug("%s:%u: %s", dev->name, event->port_num,
                  ibv_event_type_str(event->type));
        break;
    case IBV_EVENT_DEVICE_FATAL:
        ++dev->num_fatal_events;
        ucs_error("%s: fatal device error; every transport on it fails "
                  "(check dmesg, reset the adapter or reload its driver)",
                  dev->name);
        break;
    default:
        ucs_debug("%s: async event %s (qp 0x%x cq %p srq %p)", dev->name,
                  ibv_event_type_str(event->type), event->qp_num,
                  (void *)event->cq, (void *)event->srq);
        break;
    }

    pthread_mutex_lock(&dev->hooks_lock);
    ucs_list_for_each(hook, &dev->async_hooks, list) {
        hook->cb(hook->arg, event);
    }
    pthread_mutex_unlock(&dev->hooks_lock);
}

/* Converts a verbs event; only the member that belongs to the type is read */
static void uct_ib_async_event_from_ibv(const struct ibv_async_event *ibv,
                                        uct_ib_async_event_t *event)
{
    memset(event, 0, sizeof(*event));
    event->type   = ibv->event_type;
    event->status = uct_ib_async_event_status(ibv->event_type);

    switch (ibv->event_type) {
    case IBV_EVENT_CQ_ERR:
        event->cq = ibv->element.cq;
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
        event->qp_num = ibv->element.qp->qp_num;
        break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
        event->srq = ibv->element.srq;
        break;
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_GID_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
        event->port_num = (uint8_t)ibv->element.port_num;
        break;
    default:
        break;
    }
}

/* Async thread: read every pending event of the device */
static void uct_ib_device_async_cb(int fd, ucs_event_set_types_t events,
                                   void *arg)
{
    uct_ib_device_t *dev = arg;
    struct ibv_async_event ibv_event;
    uct_ib_async_event_t event;

    while (ibv_get_async_event(dev->ibv_context, &ibv_event) == 0) {
        uct_ib_async_event_from_ibv(&ibv_event, &event);
        ibv_ack_async_event(&ibv_event);
        uct_ib_device_handle_async_event(dev, &event);
    }

    if ((errno != EAGAIN) && (errno != EWOULDBLOCK)) {
        ucs_debug("%s: ibv_get_async_event() failed: %m", dev->name);
    }
}

static ucs_status_t uct_ib_device_async_init(uct_ib_device_t *dev)
{
    int fd = dev->ibv_context->async_fd;
    ucs_status_t status;

    status = ucs_sys_fcntl_modfl(fd, O_NONBLOCK, 0);
    if (status != UCS_OK) {
        return status;
    }

    status = ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_MUTEX, fd,
                                         UCS_EVENT_SET_EVREAD,
                                         uct_ib_device_async_cb, dev, NULL);
    if (status != UCS_OK) {
        ucs_error("%s: cannot watch async events (fd %d): %s", dev->name, fd,
                  ucs_status_string(status));
        return status;
    }

    dev->async_fd_registered = 1;
    return UCS_OK;
}

ucs_status_t uct_ib_device_init(uct_ib_device_t *dev,
                                struct ibv_device *ibv_device, int async_events)
{
    uct_ib_device_t tmp;
    ucs_status_t status;
    uint8_t i;
    int ret;

    memset(&tmp, 0, sizeof(tmp));
    snprintf(tmp.name, sizeof(tmp.name), "%s", ibv_get_device_name(ibv_device));

    tmp.ibv_context = ibv_open_device(ibv_device);
    if (tmp.ibv_context == NULL) {
        ucs_error("%s: ibv_open_device() failed: %m; check the permissions "
                  "of /dev/infiniband/uverbs* and that the driver is "
                  "loaded",
                  tmp.name);
        return UCS_ERR_NO_DEVICE;
    }

    ret = ibv_query_device(tmp.ibv_context, &tmp.dev_attr);
    if (ret != 0) {
        errno = ret;
        ucs_error("%s: ibv_query_device() failed: %m", tmp.name);
        status = UCS_ERR_NO_DEVICE;
        goto err_close;
    }

    tmp.first_port = 1;
    tmp.num_ports =
        (uint8_t)ucs_min(tmp.dev_attr.phys_port_cnt, UCT_IB_DEV_MAX_PORTS);
    if (tmp.dev_attr.phys_port_cnt > UCT_IB_DEV_MAX_PORTS) {
        ucs_debug("%s: only the first %u of %u ports are used", tmp.name,
                  UCT_IB_DEV_MAX_PORTS, tmp.dev_attr.phys_port_cnt);
    }

    for (i = 0; i < tmp.num_ports; ++i) {
        status = uct_ib_device_query_port_attr(&tmp, tmp.first_port + i,
                                               &tmp.port_attr[i]);
        if (status != UCS_OK) {
            goto err_close;
        }
    }

    uct_ib_device_init_locality(&tmp);

    /* the struct is final from here: the async thread may look at it */
    *dev = tmp;
    pthread_mutex_init(&dev->hooks_lock, NULL);
    ucs_list_head_init(&dev->async_hooks);

    if (async_events) {
        status = uct_ib_device_async_init(dev);
        if (status != UCS_OK) {
            pthread_mutex_destroy(&dev->hooks_lock);
            goto err_close;
        }
    }

    ucs_debug("%s: opened, %u port(s), sys device %s", dev->name,
              dev->num_ports, ucs_topo_sys_device_get_name(dev->sys_device));
    return UCS_OK;

err_close:
    ibv_close_device(tmp.ibv_context);
    return status;
}

void uct_ib_device_cleanup(uct_ib_device_t *dev)
{
    if (dev->async_fd_registered) {
        ucs_async_remove_handler(dev->ibv_context->async_fd, 1);
        dev->async_fd_registered = 0;
    }

    if (!ucs_list_is_empty(&dev->async_hooks)) {
        ucs_warn("%s: closed with async event hooks still registered",
                 dev->name);
    }

    pthread_mutex_destroy(&dev->hooks_lock);
    if (ibv_close_device(dev->ibv_context) != 0) {
        ucs_warn("%s: ibv_close_device() failed: %m", dev->name);
    }
}

ucs_status_t uct_ib_device_query_ports(const uct_ib_device_t *dev,
                                       uct_tl_device_resource_t **devices_p,
                                       unsigned *num_devices_p)
{
    uct_tl_device_resource_t *devices;
    unsigned num_devices = 0;
    uint8_t port_num;

    devices = calloc(dev->num_ports, sizeof(*devices));
    if ((devices == NULL) && (dev->num_ports > 0)) {
        ucs_error("%s: failed to allocate %u device entries", dev->name,
                  dev->num_ports);
        return UCS_ERR_NO_MEMORY;
    }

    for (port_num = dev->first_port;
         port_num < dev->first_port + dev->num_ports; ++port_num) {
        if (!uct_ib_device_is_port_usable(dev, port_num)) {
            continue;
        }

        /* a port number takes at most 3 digits and the colon */
        snprintf(devices[num_devices].name, sizeof(devices[num_devices].name),
                 "%.*s:%u", (int)sizeof(devices[num_devices].name) - 5,
                 dev->name, port_num);
        devices[num_devices].type       = UCT_DEVICE_TYPE_NET;
        devices[num_devices].sys_device = dev->sys_device;
        ++num_devices;
    }

    if (num_devices == 0) {
        ucs_debug("%s: no active InfiniBand or RoCE port", dev->name);
        free(devices);
        devices = NULL;
    }

    *devices_p     = devices;
    *num_devices_p = num_devices;
    return UCS_OK;
}

ucs_status_t uct_ib_device_query_gid(const uct_ib_device_t *dev,
                                     uint8_t port_num, unsigned gid_index,
                                     uct_ib_gid_info_t *gid_info)
{
    struct ibv_gid_entry entry;
    int ret;

    ret = ibv_query_gid_ex(dev->ibv_context, port_num, gid_index, &entry, 0);
    if ((ret != 0) || uct_ib_gid_is_zero(&entry.gid)) {
        return UCS_ERR_NO_ELEM;
    }

    gid_info->gid       = entry.gid;
    gid_info->gid_index = gid_index;
    gid_info->af = uct_ib_gid_is_ipv4_mapped(&entry.gid) ? AF_INET : AF_INET6;
    switch (entry.gid_type) {
    case IBV_GID_TYPE_ROCE_V1:
        gid_info->roce_version = UCT_IB_ROCE_V1;
        break;
    case IBV_GID_TYPE_ROCE_V2:
        gid_info->roce_version = UCT_IB_ROCE_V2;
        break;
    default:
        gid_info->roce_version = UCT_IB_ROCE_NONE;
        break;
    }
    return UCS_OK;
}

/* Rank of a RoCE GID for automatic choice; higher is better */
static int uct_ib_gid_rank(const uct_ib_gid_info_t *gid_info)
{
    if (gid_info->roce_version == UCT_IB_ROCE_V2) {
        return (gid_info->af == AF_INET) ? 3 : 2;
    }
    return 1;
}

ucs_status_t uct_ib_device_select_gid(const uct_ib_device_t *dev,
                                      uint8_t port_num, unsigned long gid_index,
                                      uct_ib_gid_info_t *gid_info)
{
    uct_ib_gid_info_t best, cur;
    unsigned i, table_len;
    int best_rank = 0;

    if (!uct_ib_device_port_exists(dev, port_num)) {
        ucs_error("%s: no port %u", dev->name, port_num);
        return UCS_ERR_INVALID_PARAM;
    }

    table_len = ucs_min(uct_ib_device_port_attr(dev, port_num)->gid_tbl_len,
                        UCT_IB_DEV_MAX_GIDS);

    if (gid_index != UCT_IB_GID_INDEX_AUTO) {
        if ((gid_index >= table_len) ||
            (uct_ib_device_query_gid(dev, port_num, (unsigned)gid_index,
                                     &cur) != UCS_OK)) {
            ucs_error("%s:%u: UCX_IB_GID_INDEX=%lu is not a valid GID of "
                      "the port (table of %u entries); run show_gids or "
                      "uct_info -d to list them, or use auto",
                      dev->name, port_num, gid_index, table_len);
            return UCS_ERR_INVALID_PARAM;
        }
        *gid_info = cur;
        return UCS_OK;
    }

    if (!uct_ib_device_is_port_roce(dev, port_num)) {
        /* InfiniBand: index 0 holds the port GID */
        if (uct_ib_device_query_gid(dev, port_num, 0, &cur) != UCS_OK) {
            ucs_debug("%s:%u: GID 0 cannot be read", dev->name, port_num);
            return UCS_ERR_NO_DEVICE;
        }
        cur.roce_version = UCT_IB_ROCE_NONE;
        *gid_info        = cur;
        return UCS_OK;
    }

    for (i = 0; i < table_len; ++i) {
        if (uct_ib_device_query_gid(dev, port_num, i, &cur) != UCS_OK) {
            continue;
        }
        if (uct_ib_gid_rank(&cur) > best_rank) {
            best      = cur;
            best_rank = uct_ib_gid_rank(&cur);
        }
    }

    if (best_rank == 0) {
        ucs_debug("%s:%u: the GID table holds no address; give the network "
                  "interface under it an IP address",
                  dev->name, port_num);
        return UCS_ERR_NO_DEVICE;
    }

    *gid_info = best;
    return UCS_OK;
}

size_t uct_ib_device_port_mtu(const uct_ib_device_t *dev, uint8_t port_num)
{
    if (!uct_ib_device_port_exists(dev, port_num)) {
        return 0;
    }
    return uct_ib_mtu_bytes(uct_ib_device_port_attr(dev, port_num)->active_mtu);
}

/* Index in uct_ib_device_speeds, or -1 */
static int uct_ib_device_speed_index(uint8_t speed)
{
    int i;

    for (i = 0; uct_ib_device_speeds[i].name != NULL; ++i) {
        if (uct_ib_device_speeds[i].speed == speed) {
            return i;
        }
    }
    return -1;
}

ucs_status_t uct_ib_device_port_estimate(const uct_ib_device_t *dev,
                                         uint8_t port_num, double *latency_p,
                                         double *bandwidth_p)
{
    const struct ibv_port_attr *attr;
    unsigned lanes;
    int speed;

    *latency_p   = UCT_IB_DEV_BASE_LATENCY;
    *bandwidth_p = 0;
    if (!uct_ib_device_port_exists(dev, port_num)) {
        return UCS_ERR_INVALID_PARAM;
    }

    attr  = uct_ib_device_port_attr(dev, port_num);
    speed = uct_ib_device_speed_index(attr->active_speed);
    lanes = uct_ib_device_width_lanes(attr->active_width);
    if ((speed < 0) || (lanes == 0)) {
        ucs_debug("%s:%u: unknown speed %u or width %u", dev->name, port_num,
                  attr->active_speed, attr->active_width);
        return UCS_ERR_UNSUPPORTED;
    }

    *bandwidth_p = uct_ib_device_speeds[speed].lane_bps * lanes / 8;
    return UCS_OK;
}

int uct_ib_device_priority(const uct_ib_device_t *dev)
{
    int cpu;

    if (dev->numa_node == UCS_NUMA_NODE_UNDEFINED) {
        return 0;
    }

    cpu = sched_getcpu();
    if (cpu < 0) {
        return 0;
    }

    return ucs_topo_get_cpu_numa_node((unsigned)cpu) == dev->numa_node;
}

void uct_ib_device_async_hook_add(uct_ib_device_t *dev,
                                  uct_ib_async_hook_t *hook,
                                  uct_ib_async_event_cb_t cb, void *arg)
{
    hook->cb  = cb;
    hook->arg = arg;
    pthread_mutex_lock(&dev->hooks_lock);
    ucs_list_add_tail(&dev->async_hooks, &hook->list);
    pthread_mutex_unlock(&dev->hooks_lock);
}

void uct_ib_device_async_hook_remove(uct_ib_device_t *dev,
                                     uct_ib_async_hook_t *hook)
{
    pthread_mutex_lock(&dev->hooks_lock);
    ucs_list_del(&hook->list);
    pthread_mutex_unlock(&dev->hooks_lock);
}

static void uct_ib_device_print_gids(const uct_ib_device_t *dev,
                                     uint8_t port_num,
                                     const uct_ib_gid_info_t *selected,
                                     FILE *stream)
{
    static const char *roce_names[] = {"IB", "RoCE v1", "RoCE v2"};
    unsigned i, table_len;
    uct_ib_gid_info_t gid;
    char str[64];

    table_len = ucs_min(uct_ib_device_port_attr(dev, port_num)->gid_tbl_len,
                        UCT_IB_DEV_MAX_GIDS);
    for (i = 0; i < table_len; ++i) {
        if (uct_ib_device_query_gid(dev, port_num, i, &gid) != UCS_OK) {
            continue;
        }
        fprintf(
            stream, "#           gid[%u]: %-28s %s%s%s\n", i,
            uct_ib_gid_str(&gid.gid, str, sizeof(str)),
            roce_names[gid.roce_version], (gid.af == AF_INET) ? ", IPv4" : "",
            ((selected != NULL) && (selected->gid_index == i)) ? " (selected)"
                                                               : "");
    }
}

void uct_ib_device_print_info(const uct_ib_device_t *dev,
                              unsigned long gid_index, FILE *stream)
{
    const struct ibv_port_attr *attr;
    double latency, bandwidth;
    uct_ib_gid_info_t gid;
    int speed, have_gid;
    uint8_t port_num;
    char str[64];

    fprintf(stream, "#       ib device: %s, %u port(s), firmware %s\n",
            dev->name, dev->num_ports, dev->dev_attr.fw_ver);
    fprintf(stream, "#        locality: %s, NUMA node %d, priority %d\n",
            (dev->sys_device == UCS_SYS_DEVICE_ID_UNKNOWN)
                ? "no PCI function (virtual device)"
                : ucs_topo_sys_device_get_name(dev->sys_device),
            dev->numa_node, uct_ib_device_priority(dev));

    for (port_num = dev->first_port;
         port_num < dev->first_port + dev->num_ports; ++port_num) {
        attr  = uct_ib_device_port_attr(dev, port_num);
        speed = uct_ib_device_speed_index(attr->active_speed);
        fprintf(
            stream, "#         port %u: %s:%u, %s, %s%s\n", port_num, dev->name,
            port_num, uct_ib_device_link_layer_str(dev, port_num),
            uct_ib_device_port_state_str(attr->state),
            uct_ib_device_is_port_usable(dev, port_num) ? "" : " (not used)");
        fprintf(stream, "#             mtu: %zu (max %zu)\n",
                uct_ib_mtu_bytes(attr->active_mtu),
                uct_ib_mtu_bytes(attr->max_mtu));
        fprintf(stream, "#           speed: %s x%u\n",
                (speed >= 0) ? uct_ib_device_speeds[speed].name : "unknown",
                uct_ib_device_width_lanes(attr->active_width));
        if (uct_ib_device_port_estimate(dev, port_num, &latency, &bandwidth) ==
            UCS_OK) {
            fprintf(stream, "#        estimate: %.2f MB/s, %.0f nsec\n",
                    bandwidth / 1e6, latency * 1e9);
        }
        if (!uct_ib_device_is_port_roce(dev, port_num)) {
            fprintf(stream, "#             lid: %u\n", attr->lid);
        }

        have_gid = (uct_ib_device_select_gid(dev, port_num, gid_index, &gid) ==
                    UCS_OK);
        if (have_gid) {
            fprintf(stream, "#             gid: %s (index %u%s)\n",
                    uct_ib_gid_str(&gid.gid, str, sizeof(str)), gid.gid_index,
                    (gid_index == UCT_IB_GID_INDEX_AUTO)
                        ? ", auto"
                        : ", UCX_IB_GID_INDEX");
        } else {
            fprintf(stream, "#             gid: none\n");
        }
        uct_ib_device_print_gids(dev, port_num, have_gid ? &gid : NULL, stream);
    }
}
