/*
 * tcp interfaces: devices, configuration, the listening socket, the epoll
 * set that progress drives, addresses, capabilities and events.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sock.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ucs_config_field_t uct_tcp_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_tcp_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"SNDBUF", "auto",
     "Socket send buffer size (SO_SNDBUF); \"auto\" keeps the kernel's "
     "default and its autotuning.",
     ucs_offsetof(uct_tcp_iface_config_t, sndbuf), UCS_CONFIG_TYPE_MEMUNITS},

    {"RCVBUF", "auto",
     "Socket receive buffer size (SO_RCVBUF); \"auto\" keeps the kernel's "
     "default and its autotuning.",
     ucs_offsetof(uct_tcp_iface_config_t, rcvbuf), UCS_CONFIG_TYPE_MEMUNITS},

    {"NODELAY", "y",
     "Disable Nagle's algorithm (TCP_NODELAY) so small messages leave at "
     "once.",
     ucs_offsetof(uct_tcp_iface_config_t, nodelay), UCS_CONFIG_TYPE_BOOL},

    {"TX_SEG_SIZE", "8k",
     "Send buffer of each endpoint: bytes a busy socket can hold back "
     "before sends return UCS_ERR_NO_RESOURCE. Also bounds the largest "
     "message.",
     ucs_offsetof(uct_tcp_iface_config_t, tx_seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"RX_SEG_SIZE", "64k",
     "Receive buffer of each endpoint, in which messages are reassembled; "
     "bounds the largest message a peer may send.",
     ucs_offsetof(uct_tcp_iface_config_t, rx_seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_IOV", "6",
     "Largest iov count of zcopy operations (each is one sendmsg call).",
     ucs_offsetof(uct_tcp_iface_config_t, max_iov), UCS_CONFIG_TYPE_UINT},

    {"PORT_RANGE", "0",
     "Range of ports the listening socket may bind, such as 10000-10100; "
     "0 lets the kernel choose.",
     ucs_offsetof(uct_tcp_iface_config_t, port_range),
     UCS_CONFIG_TYPE_RANGE},

    {"BACKLOG", "256",
     "Backlog of the listening socket (capped by net.core.somaxconn).",
     ucs_offsetof(uct_tcp_iface_config_t, backlog), UCS_CONFIG_TYPE_UINT},

    {NULL}
};

/* ------------------------------------------------------------------------
 * Devices: every interface that is up with an IPv4 address
 */

ucs_status_t uct_tcp_query_devices(uct_md_h md,
                                   uct_tl_device_resource_t **devices_p,
                                   unsigned *num_devices_p)
{
    uct_tl_device_resource_t *devices = NULL, *tmp;
    struct ifaddrs *ifaddrs, *ifa;
    unsigned i, num_devices = 0;
    int found;

    if (getifaddrs(&ifaddrs) < 0) {
        ucs_error("tcp: getifaddrs() failed: %m");
        return UCS_ERR_IO_ERROR;
    }

    for (ifa = ifaddrs; ifa != NULL; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr == NULL) || (ifa->ifa_addr->sa_family != AF_INET) ||
            !(ifa->ifa_flags & IFF_UP) || !(ifa->ifa_flags & IFF_RUNNING) ||
            (strlen(ifa->ifa_name) >= UCT_DEVICE_NAME_MAX)) {
            continue;
        }

        found = 0;
        for (i = 0; i < num_devices; ++i) {
            found |= !strcmp(devices[i].name, ifa->ifa_name);
        }
        if (found) {
            continue; /* an interface with several addresses */
        }

        tmp = realloc(devices, sizeof(*devices) * (num_devices + 1));
        if (tmp == NULL) {
            ucs_error("tcp: failed to allocate the device list");
            free(devices);
            freeifaddrs(ifaddrs);
            return UCS_ERR_NO_MEMORY;
        }
        devices = tmp;
        memset(&devices[num_devices], 0, sizeof(*devices));
        snprintf(devices[num_devices].name, UCT_DEVICE_NAME_MAX, "%s",
                 ifa->ifa_name);
        devices[num_devices].type       = UCT_DEVICE_TYPE_NET;
        devices[num_devices].sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;
        ++num_devices;
    }

    freeifaddrs(ifaddrs);
    *devices_p     = devices;
    *num_devices_p = num_devices;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Sockets and events
 */

ucs_status_t uct_tcp_iface_set_sockopts(uct_tcp_iface_t *iface, int fd)
{
    int nodelay = iface->config.nodelay ? 1 : 0;
    int size;
    ucs_status_t status;

    status = ucs_socket_setopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay,
                               sizeof(nodelay));
    if (status != UCS_OK) {
        return status;
    }
    if (iface->config.sndbuf != UCS_MEMUNITS_AUTO) {
        size   = (int)ucs_min(iface->config.sndbuf, (size_t)INT_MAX);
        status = ucs_socket_setopt(fd, SOL_SOCKET, SO_SNDBUF, &size,
                                   sizeof(size));
        if (status != UCS_OK) {
            return status;
        }
    }
    if (iface->config.rcvbuf != UCS_MEMUNITS_AUTO) {
        size   = (int)ucs_min(iface->config.rcvbuf, (size_t)INT_MAX);
        status = ucs_socket_setopt(fd, SOL_SOCKET, SO_RCVBUF, &size,
                                   sizeof(size));
        if (status != UCS_OK) {
            return status;
        }
    }
    return ucs_socket_set_nonblock(fd);
}

static void uct_tcp_iface_accept(uct_tcp_iface_t *iface)
{
    struct sockaddr_in peer;
    socklen_t len;
    ucs_status_t status;
    int fd;

    for (;;) {
        len    = sizeof(peer);
        status = ucs_socket_accept(iface->listen_fd, (struct sockaddr*)&peer,
                                   &len, &fd);
        if (status != UCS_OK) {
            return; /* none left, or already logged */
        }

        status = uct_tcp_iface_set_sockopts(iface, fd);
        if (status == UCS_OK) {
            status = uct_tcp_ep_accept(iface, fd, &peer);
        }
        if (status != UCS_OK) {
            close(fd);
        }
    }
}

/* The event set hands back either the iface (its listening socket) or
 * an ep. Both start with uct_iface_t/uct_ep_t, so tell them apart by
 * comparing with the iface itself. */
static void uct_tcp_iface_event_cb(void *callback_data,
                                   ucs_event_set_types_t events, void *arg)
{
    uct_tcp_iface_t *iface = arg;

    if (callback_data == iface) {
        uct_tcp_iface_accept(iface);
    } else {
        uct_tcp_ep_handle_events(callback_data, events);
    }
}

static unsigned uct_tcp_iface_progress(uct_iface_h tl_iface)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    unsigned count         = 16;
    ucs_status_t status;

    status = ucs_event_set_wait(iface->event_set, &count, 0,
                                uct_tcp_iface_event_cb, iface);
    if (status != UCS_OK) {
        count = 0;
    }

    ucs_arbiter_dispatch(&iface->arbiter, 1, uct_pending_req_dispatch_cb,
                         NULL);
    if (!ucs_list_is_empty(&iface->flush_list)) {
        uct_tcp_iface_check_flush(iface);
    }
    return count;
}

void uct_tcp_iface_check_flush(uct_tcp_iface_t *iface)
{
    uct_tcp_flush_req_t *req, *tmp;
    uct_tcp_ep_t *ep;

    ucs_list_for_each(ep, &iface->ep_list, list) {
        if (!uct_tcp_ep_is_idle(ep)) {
            return;
        }
    }

    ucs_list_for_each_safe(req, tmp, &iface->flush_list, list) {
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, UCS_OK);
        free(req);
    }
}

static ucs_status_t uct_tcp_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                        uct_completion_t *comp)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    uct_tcp_flush_req_t *req;
    uct_tcp_ep_t *ep;
    int idle = 1;

    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        return UCS_ERR_UNSUPPORTED;
    }

    ucs_list_for_each(ep, &iface->ep_list, list) {
        if (!uct_tcp_ep_is_idle(ep)) {
            idle = 0;
            break;
        }
    }
    if (idle) {
        return UCS_OK;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    req = malloc(sizeof(*req));
    if (req == NULL) {
        ucs_error("tcp iface %p: failed to allocate a flush request",
                  (void*)iface);
        return UCS_ERR_NO_MEMORY;
    }
    req->comp = comp;
    ucs_list_add_tail(&iface->flush_list, &req->list);
    return UCS_INPROGRESS;
}

static ucs_status_t uct_tcp_iface_event_fd_get(uct_iface_h tl_iface,
                                               int *fd_p)
{
    *fd_p = ucs_event_set_fd(uct_tcp_iface(tl_iface)->event_set);
    return UCS_OK;
}

static void uct_tcp_iface_arm_cb(void *callback_data,
                                 ucs_event_set_types_t events, void *arg)
{
    uct_tcp_iface_t *iface = arg;

    if (events & (UCS_EVENT_SET_EVREAD | UCS_EVENT_SET_EVERR)) {
        ++iface->armed_read;
    }
}

/* The event fd is the epoll fd itself: it is readable whenever a socket
 * is. Arming only checks that nothing is readable yet (level-triggered
 * epoll reports the same sockets again to progress). */
static ucs_status_t uct_tcp_iface_event_arm(uct_iface_h tl_iface,
                                            unsigned events)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    unsigned count         = 64;
    ucs_status_t status;

    if (!(events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG))) {
        return UCS_OK;
    }

    iface->armed_read = 0;
    status = ucs_event_set_wait(iface->event_set, &count, 0,
                                uct_tcp_iface_arm_cb, iface);
    if (status != UCS_OK) {
        return status;
    }
    return (iface->armed_read > 0) ? UCS_ERR_BUSY : UCS_OK;
}

/* ------------------------------------------------------------------------
 * Query and addresses
 */

static ucs_status_t uct_tcp_iface_query(uct_iface_h tl_iface,
                                        uct_iface_attr_t *attr)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    size_t max_msg         = iface->config.max_msg;

    uct_base_iface_query(&iface->super, attr);

    attr->cap.flags = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                      UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
                      UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                      UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                      UCT_IFACE_FLAG_PENDING |
                      UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                      UCT_IFACE_FLAG_CB_SYNC;
    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_RECV |
                            UCT_IFACE_FLAG_EVENT_FD;

    attr->cap.am.max_short       = max_msg - sizeof(uint64_t);
    attr->cap.am.max_bcopy       = max_msg;
    attr->cap.am.min_zcopy       = 0;
    attr->cap.am.max_zcopy       = max_msg;
    attr->cap.am.max_hdr         = max_msg;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu       = 1;
    attr->cap.am.max_iov         = iface->config.max_iov;

    attr->cap.put.max_short       = max_msg - sizeof(uint64_t);
    attr->cap.put.max_bcopy       = max_msg - sizeof(uint64_t);
    attr->cap.put.min_zcopy       = 0;
    attr->cap.put.max_zcopy       = max_msg - sizeof(uint64_t);
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu       = 1;
    attr->cap.put.max_iov         = iface->config.max_iov;

    attr->cap.get.max_short       = 0;
    attr->cap.get.max_bcopy       = max_msg;
    attr->cap.get.min_zcopy       = 0;
    attr->cap.get.max_zcopy       = max_msg;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu       = 1;
    attr->cap.get.max_iov         = iface->config.max_iov;

    attr->device_addr_len     = sizeof(uct_tcp_device_addr_t);
    attr->iface_addr_len      = sizeof(uct_tcp_iface_addr_t);
    attr->ep_addr_len         = 0;
    attr->max_conn_priv       = 0;
    attr->overhead            = 50e-6;
    attr->bandwidth.dedicated = 0;
    attr->bandwidth.shared    = iface->is_loopback ? 4000.0 * 1024 * 1024 :
                                                     100.0 * 1024 * 1024;
    attr->latency             = ucs_linear_func_make(
                                    iface->is_loopback ? 10e-6 : 50e-6, 0);
    attr->priority            = 0;
    return UCS_OK;
}

static ucs_status_t uct_tcp_iface_get_device_address(uct_iface_h tl_iface,
                                                     uct_device_addr_t *addr)
{
    memcpy(addr, &uct_tcp_iface(tl_iface)->listen_addr.sin_addr,
           sizeof(uct_tcp_device_addr_t));
    return UCS_OK;
}

static ucs_status_t uct_tcp_iface_get_address(uct_iface_h tl_iface,
                                              uct_iface_addr_t *addr)
{
    memcpy(addr, &uct_tcp_iface(tl_iface)->listen_addr.sin_port,
           sizeof(uct_tcp_iface_addr_t));
    return UCS_OK;
}

static int uct_tcp_addr_is_loopback(const struct in_addr *addr)
{
    return (ntohl(addr->s_addr) >> 24) == IN_LOOPBACKNET;
}

/* A loopback address is reachable only from a loopback interface and the
 * other way round; other addresses are left to routing. */
static int uct_tcp_iface_is_reachable(const uct_iface_h tl_iface,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_iface_addr_t *iface_addr)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    struct in_addr remote;

    if ((dev_addr == NULL) || (iface_addr == NULL)) {
        return 0;
    }
    memcpy(&remote, dev_addr, sizeof(remote));
    return uct_tcp_addr_is_loopback(&remote) == iface->is_loopback;
}

/* ------------------------------------------------------------------------
 * Open and close
 */

static void uct_tcp_iface_close(uct_iface_h tl_iface)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    uct_tcp_flush_req_t *req, *treq;
    uct_tcp_ep_t *ep, *tmp;

    uct_base_iface_progress_disable(tl_iface,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    ucs_list_for_each_safe(ep, tmp, &iface->ep_list, list) {
        if (!ep->passive) {
            ucs_debug("tcp iface %p: ep %p was not destroyed before the "
                      "interface was closed", (void*)iface, (void*)ep);
        }
        uct_tcp_ep_free(ep);
    }
    ucs_list_for_each_safe(req, treq, &iface->flush_list, list) {
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, UCS_ERR_CANCELED);
        free(req);
    }
    ucs_event_set_del(iface->event_set, iface->listen_fd);
    close(iface->listen_fd);
    ucs_event_set_cleanup(iface->event_set);
    ucs_arbiter_cleanup(&iface->arbiter);
    free(iface->align_buf);
    uct_base_iface_cleanup(&iface->super);
    free(iface);
}

static const uct_iface_ops_t uct_tcp_iface_ops = {
    .ep_put_short             = uct_tcp_ep_put_short,
    .ep_put_bcopy             = uct_tcp_ep_put_bcopy,
    .ep_put_zcopy             = uct_tcp_ep_put_zcopy,
    .ep_get_bcopy             = uct_tcp_ep_get_bcopy,
    .ep_get_zcopy             = uct_tcp_ep_get_zcopy,
    .ep_am_short              = uct_tcp_ep_am_short,
    .ep_am_short_iov          = uct_tcp_ep_am_short_iov,
    .ep_am_bcopy              = uct_tcp_ep_am_bcopy,
    .ep_am_zcopy              = uct_tcp_ep_am_zcopy,
    .ep_pending_add           = uct_tcp_ep_pending_add,
    .ep_pending_purge         = uct_tcp_ep_pending_purge,
    .ep_flush                 = uct_tcp_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_create                = uct_tcp_ep_create,
    .ep_destroy               = uct_tcp_ep_destroy,
    .iface_flush              = uct_tcp_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress           = uct_tcp_iface_progress,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_event_fd_get       = uct_tcp_iface_event_fd_get,
    .iface_event_arm          = uct_tcp_iface_event_arm,
    .iface_close              = uct_tcp_iface_close,
    .iface_query              = uct_tcp_iface_query,
    .iface_get_device_address = uct_tcp_iface_get_device_address,
    .iface_get_address        = uct_tcp_iface_get_address,
    .iface_is_reachable       = uct_tcp_iface_is_reachable
};

/* Binds the listening socket to the device address, on a port of the
 * configured range (or one the kernel picks). */
static ucs_status_t uct_tcp_iface_listen(uct_tcp_iface_t *iface,
                                         const ucs_range_spec_t *range,
                                         unsigned backlog)
{
    struct sockaddr_storage bound;
    socklen_t len = sizeof(bound);
    unsigned port, first, last;
    ucs_status_t status;

    if ((range->first == 0) && (range->last == 0)) {
        first = last = 0;
    } else {
        first = range->first;
        last  = ucs_max(range->first, range->last);
        if (last > UINT16_MAX) {
            ucs_error("UCX_TCP_PORT_RANGE=%u-%u: ports go up to %u",
                      range->first, range->last, UINT16_MAX);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    status = UCS_ERR_BUSY;
    for (port = first; port <= last; ++port) {
        iface->listen_addr.sin_port = htons((uint16_t)port);
        status = ucs_socket_server_init((struct sockaddr*)&iface->listen_addr,
                                        (int)backlog, 0, port != last,
                                        &iface->listen_fd);
        if (status != UCS_ERR_BUSY) {
            break;
        }
    }
    if (status != UCS_OK) {
        ucs_error("tcp iface %s: no free port in UCX_TCP_PORT_RANGE=%u-%u",
                  iface->super.dev_name, first, last);
        return status;
    }

    status = ucs_socket_getname(iface->listen_fd, &bound, &len);
    if (status != UCS_OK) {
        close(iface->listen_fd);
        return status;
    }
    iface->listen_addr.sin_port = ((struct sockaddr_in*)&bound)->sin_port;

    status = ucs_socket_set_nonblock(iface->listen_fd);
    if (status != UCS_OK) {
        close(iface->listen_fd);
    }
    return status;
}

ucs_status_t uct_tcp_iface_open(uct_md_h md, uct_worker_h worker,
                                const uct_iface_params_t *params,
                                const uct_iface_config_t *tl_config,
                                uct_iface_h *iface_p)
{
    const uct_tcp_iface_config_t *config =
            (const uct_tcp_iface_config_t*)tl_config;
    const size_t overhead = sizeof(uct_tcp_hdr_t) + sizeof(uint64_t);
    struct sockaddr_storage addr;
    uct_tcp_iface_t *iface;
    ucs_status_t status;

    if ((config->tx_seg_size <= overhead) ||
        (config->rx_seg_size <= overhead) ||
        (config->tx_seg_size > UINT32_MAX) ||
        (config->rx_seg_size > UINT32_MAX)) {
        ucs_error("UCX_TCP_TX_SEG_SIZE=%zu/UCX_TCP_RX_SEG_SIZE=%zu: each "
                  "must be larger than %zu bytes and below 4g",
                  config->tx_seg_size, config->rx_seg_size, overhead);
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->max_iov == 0) {
        ucs_error("UCX_TCP_MAX_IOV must be at least 1");
        return UCS_ERR_INVALID_PARAM;
    }

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("tcp: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_base_iface_init(&iface->super, &uct_tcp_iface_ops, md,
                                 worker, params, tl_config);
    if (status != UCS_OK) {
        goto err_free;
    }

    iface->listen_fd          = -1;
    iface->config.sndbuf      = config->sndbuf;
    iface->config.rcvbuf      = config->rcvbuf;
    iface->config.nodelay     = config->nodelay;
    iface->config.tx_seg_size = config->tx_seg_size;
    iface->config.rx_seg_size = config->rx_seg_size;
    iface->config.max_iov     = config->max_iov;
    iface->config.max_msg     = ucs_min(config->tx_seg_size,
                                        config->rx_seg_size) -
                                sizeof(uct_tcp_hdr_t);
    ucs_list_head_init(&iface->ep_list);
    ucs_list_head_init(&iface->flush_list);
    ucs_arbiter_init(&iface->arbiter);

    iface->align_buf = malloc(config->rx_seg_size +
                              iface->super.am_alignment);
    if (iface->align_buf == NULL) {
        ucs_error("tcp: failed to allocate an alignment buffer");
        status = UCS_ERR_NO_MEMORY;
        goto err_cleanup_base;
    }

    status = ucs_netif_get_addr(iface->super.dev_name, AF_INET, &addr, NULL);
    if (status != UCS_OK) {
        ucs_error("tcp: interface %s has no IPv4 address",
                  iface->super.dev_name);
        goto err_free_align;
    }
    memcpy(&iface->listen_addr, &addr, sizeof(iface->listen_addr));
    iface->is_loopback = uct_tcp_addr_is_loopback(&iface->listen_addr.sin_addr);

    status = uct_tcp_iface_listen(iface, &config->port_range,
                                  config->backlog);
    if (status != UCS_OK) {
        goto err_free_align;
    }

    status = ucs_event_set_create(&iface->event_set);
    if (status != UCS_OK) {
        goto err_close_listen;
    }

    status = ucs_event_set_add(iface->event_set, iface->listen_fd,
                               UCS_EVENT_SET_EVREAD, iface);
    if (status != UCS_OK) {
        goto err_cleanup_set;
    }

    *iface_p = &iface->super.super;
    return UCS_OK;

err_cleanup_set:
    ucs_event_set_cleanup(iface->event_set);
err_close_listen:
    close(iface->listen_fd);
err_free_align:
    free(iface->align_buf);
err_cleanup_base:
    ucs_arbiter_cleanup(&iface->arbiter);
    uct_base_iface_cleanup(&iface->super);
err_free:
    free(iface);
    return status;
}
