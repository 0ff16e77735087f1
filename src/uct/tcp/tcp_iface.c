/*
 * tcp interfaces: devices, configuration, the listening socket, the epoll
 * set that progress drives, addresses, capabilities and events.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp.h"
#include "tcp_device.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/sock.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <math.h>
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
     "Largest short/bcopy message, its 8-byte header included. An "
     "endpoint whose socket is busy holds back up to twice this much (in "
     "buffers of a pool shared by the interface, taken only while in use) "
     "before sends return UCS_ERR_NO_RESOURCE.",
     ucs_offsetof(uct_tcp_iface_config_t, tx_seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"RX_SEG_SIZE", "64k",
     "Receive buffer in which messages are reassembled (taken from a pool "
     "shared by the interface while a message is partial); bounds the "
     "largest active message a peer may send. PUT and GET data of any "
     "size is streamed to its destination.",
     ucs_offsetof(uct_tcp_iface_config_t, rx_seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_IOV", "6",
     "Largest iov count of zcopy operations (each is one sendmsg call).",
     ucs_offsetof(uct_tcp_iface_config_t, max_iov), UCS_CONFIG_TYPE_UINT},

    {"SENDV_THRESH", "2k",
     "Messages up to this size are gathered into one buffer and sent with "
     "send(); larger ones go straight from their pieces with sendmsg() "
     "(at most 4k).",
     ucs_offsetof(uct_tcp_iface_config_t, sendv_thresh),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"PUT_ENABLE", "y",
     "Offer PUT operations (short, bcopy, zcopy); with \"n\" the "
     "interface reports no PUT capability.",
     ucs_offsetof(uct_tcp_iface_config_t, put_enable), UCS_CONFIG_TYPE_BOOL},

    {"KEEPIDLE", "10s",
     "Idle time before the first keepalive probe (TCP_KEEPIDLE, whole "
     "seconds); \"inf\" disables keepalive. A peer that stops answering "
     "fails its endpoints with UCS_ERR_ENDPOINT_TIMEOUT after about "
     "KEEPIDLE + KEEPINTVL * KEEPCNT, also when data is waiting to be "
     "acknowledged (TCP_USER_TIMEOUT).",
     ucs_offsetof(uct_tcp_iface_config_t, keepidle), UCS_CONFIG_TYPE_TIME},

    {"KEEPINTVL", "2s",
     "Time between keepalive probes (TCP_KEEPINTVL, whole seconds).",
     ucs_offsetof(uct_tcp_iface_config_t, keepintvl), UCS_CONFIG_TYPE_TIME},

    {"KEEPCNT", "3",
     "Unanswered keepalive probes before the connection is dropped "
     "(TCP_KEEPCNT).",
     ucs_offsetof(uct_tcp_iface_config_t, keepcnt), UCS_CONFIG_TYPE_UINT},

    {"SYN_CNT", "0",
     "SYN retransmissions of a connect before it fails (TCP_SYNCNT); 0 "
     "keeps the kernel's setting (net.ipv4.tcp_syn_retries).",
     ucs_offsetof(uct_tcp_iface_config_t, syn_cnt), UCS_CONFIG_TYPE_UINT},

    {"MAX_CONN_RETRIES", "25",
     "Connect attempts retried after a refusal (the peer's interface is "
     "not listening yet), with a delay doubling from 10ms up to 1s.",
     ucs_offsetof(uct_tcp_iface_config_t, max_conn_retries),
     UCS_CONFIG_TYPE_UINT},

    {"CONN_TIMEOUT", "10s",
     "No connect retry starts later than this after the endpoint was "
     "created; an accepted connection that sends no handshake within it "
     "is closed.",
     ucs_offsetof(uct_tcp_iface_config_t, conn_timeout), UCS_CONFIG_TYPE_TIME},

    {"COALESCE_TIME", "10us",
     "A small message sent sooner than this after the previous write of "
     "its endpoint is held back, with those that follow, and written "
     "together by progress when the time has passed (or a flush or event "
     "arm asks): a stream of small messages costs one system call per "
     "window. An isolated message, and the first one sent after a "
     "message came from the peer, leave at once. 0 writes every message "
     "at once.",
     ucs_offsetof(uct_tcp_iface_config_t, coalesce_time), UCS_CONFIG_TYPE_TIME},

    {"PEER_TIMEOUT", "10s",
     "How long a peer may hold our resources without progress before its "
     "connection is dropped: a message of it received in part, or replies "
     "to its requests (acknowledgements, GET data) it does not read.",
     ucs_offsetof(uct_tcp_iface_config_t, peer_timeout), UCS_CONFIG_TYPE_TIME},

    {"MAX_BUFS", "4096",
     "Most send buffers, and most receive buffers, an interface allocates "
     "(each TX_SEG_SIZE/RX_SEG_SIZE plus a little); a connection that "
     "needs a send buffer past that is dropped. One receive buffer is "
     "always kept free: when a partial message would take it, the "
     "connection read least recently of the peer holding the most "
     "is dropped instead. 0: no limit.",
     ucs_offsetof(uct_tcp_iface_config_t, max_bufs), UCS_CONFIG_TYPE_UINT},

    {"PEER_MAX_BUFS", "auto",
     "Most receive buffers one peer may hold with partial messages; a "
     "peer is a remote IPv4 address, or the /64 prefix of an IPv6 "
     "address, with all its connections. A peer that needs one more "
     "loses the connection it sent to least recently instead, so one "
     "peer cannot starve the others. \"auto\": a quarter of MAX_BUFS "
     "(at least 1; no limit when MAX_BUFS is 0); \"inf\": no limit.",
     ucs_offsetof(uct_tcp_iface_config_t, peer_max_bufs),
     UCS_CONFIG_TYPE_ULUNITS},

    {"PORT_RANGE", "0",
     "Range of ports the listening socket may bind, such as 10000-10100; "
     "0 lets the kernel choose.",
     ucs_offsetof(uct_tcp_iface_config_t, port_range), UCS_CONFIG_TYPE_RANGE},

    {"BACKLOG", "256",
     "Backlog of the listening socket (capped by net.core.somaxconn).",
     ucs_offsetof(uct_tcp_iface_config_t, backlog), UCS_CONFIG_TYPE_UINT},

    {"AF_PRIO", "inet,inet6",
     "Address families to use, in order of preference: an interface is "
     "used with its address of the first family it has (inet = IPv4, "
     "inet6 = IPv6).",
     ucs_offsetof(uct_tcp_iface_config_t, af_prio),
     UCT_TCP_CONFIG_TYPE_AF_PRIO},

    {NULL}};

/* ------------------------------------------------------------------------
 * Sockets and events
 */

static ucs_status_t uct_tcp_setsockopt_int(int fd, int level, int name,
                                           int value, const char *what)
{
    if (setsockopt(fd, level, name, &value, sizeof(value)) < 0) {
        ucs_error("tcp: setsockopt(%s=%d) failed: %m", what, value);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t uct_tcp_iface_set_sockopts(uct_tcp_iface_t *iface, int fd,
                                        int connector)
{
    ucs_status_t status;

    status =
        uct_tcp_setsockopt_int(fd, IPPROTO_TCP, TCP_NODELAY,
                               iface->config.nodelay ? 1 : 0, "TCP_NODELAY");
    if ((status == UCS_OK) && (iface->config.sndbuf != UCS_MEMUNITS_AUTO)) {
        status = uct_tcp_setsockopt_int(
            fd, SOL_SOCKET, SO_SNDBUF,
            (int)ucs_min(iface->config.sndbuf, (size_t)INT_MAX), "SO_SNDBUF");
    }
    if ((status == UCS_OK) && (iface->config.rcvbuf != UCS_MEMUNITS_AUTO)) {
        status = uct_tcp_setsockopt_int(
            fd, SOL_SOCKET, SO_RCVBUF,
            (int)ucs_min(iface->config.rcvbuf, (size_t)INT_MAX), "SO_RCVBUF");
    }
    if ((status == UCS_OK) && iface->config.keepalive) {
        status = uct_tcp_setsockopt_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1,
                                        "SO_KEEPALIVE");
        if (status == UCS_OK) {
            status =
                uct_tcp_setsockopt_int(fd, IPPROTO_TCP, TCP_KEEPIDLE,
                                       iface->config.keepidle, "TCP_KEEPIDLE");
        }
        if (status == UCS_OK) {
            status = uct_tcp_setsockopt_int(fd, IPPROTO_TCP, TCP_KEEPINTVL,
                                            iface->config.keepintvl,
                                            "TCP_KEEPINTVL");
        }
        if (status == UCS_OK) {
            status =
                uct_tcp_setsockopt_int(fd, IPPROTO_TCP, TCP_KEEPCNT,
                                       iface->config.keepcnt, "TCP_KEEPCNT");
        }
        if (status == UCS_OK) {
            status = uct_tcp_setsockopt_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT,
                                            (int)iface->config.user_timeout_ms,
                                            "TCP_USER_TIMEOUT");
        }
    }
    if ((status == UCS_OK) && connector && (iface->config.syn_cnt > 0)) {
        status =
            uct_tcp_setsockopt_int(fd, IPPROTO_TCP, TCP_SYNCNT,
                                   (int)iface->config.syn_cnt, "TCP_SYNCNT");
    }
    if (status != UCS_OK) {
        return status;
    }
    return ucs_socket_set_nonblock(fd);
}

/* Out of file descriptors: the pending connection stays in the backlog
 * and the listening socket leaves the poll set for a while, so progress
 * does not spin on it. */
static void uct_tcp_iface_accept_pause(uct_tcp_iface_t *iface)
{
    ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_ACCEPT],
                     "tcp iface %s: cannot accept connections: out of file "
                     "descriptors; accepting again in %.0f ms (raise the "
                     "limit with 'ulimit -n')",
                     iface->super.dev_name, UCT_TCP_ACCEPT_BACKOFF_SEC * 1e3);
    if (ucs_event_set_del(iface->event_set, iface->listen_fd) == UCS_OK) {
        iface->listen_paused = 1;
        iface->accept_resume =
            ucs_get_time() + ucs_time_from_sec(UCT_TCP_ACCEPT_BACKOFF_SEC);
    }
}

static void uct_tcp_iface_accept(uct_tcp_iface_t *iface)
{
    char str[UCS_SOCKADDR_STRING_LEN];
    uct_tcp_sockaddr_t peer;
    socklen_t len;
    ucs_status_t status;
    int fd;

    for (;;) {
        len    = sizeof(peer);
        status = ucs_socket_accept(iface->listen_fd, &peer.sa, &len, &fd);
        if (status == UCS_ERR_NO_RESOURCE) {
            uct_tcp_iface_accept_pause(iface);
            return;
        } else if (status != UCS_OK) {
            return; /* nothing to accept, or logged */
        }

        status = uct_tcp_iface_set_sockopts(iface, fd, 0);
        if (status == UCS_OK) {
            status = uct_tcp_ep_accept(iface, fd, &peer);
        }
        if (status != UCS_OK) {
            ucs_debug("tcp iface %s: dropped the connection from %s",
                      iface->super.dev_name,
                      ucs_sockaddr_str(&peer.sa, str, sizeof(str)));
            close(fd);
        }
    }
}

/* The back-off after running out of file descriptors is over: poll the
 * listening socket again. */
static void uct_tcp_iface_accept_resume(uct_tcp_iface_t *iface)
{
    if (ucs_get_time() < iface->accept_resume) {
        return;
    }
    if (ucs_event_set_add(iface->event_set, iface->listen_fd,
                          UCS_EVENT_SET_EVREAD, iface) == UCS_OK) {
        iface->listen_paused = 0;
        uct_tcp_iface_accept(iface);
    }
}

/* The event set hands back either the iface (its listening socket) or
 * an ep. */
static void uct_tcp_iface_event_cb(void *callback_data,
                                   ucs_event_set_types_t events, void *arg)
{
    uct_tcp_iface_t *iface = arg;

    if (callback_data != iface->hot_ep) {
        iface->poll_other = 1;
    }
    if (callback_data == iface) {
        uct_tcp_iface_accept(iface);
    } else {
        uct_tcp_ep_handle_events(callback_data, events);
    }
}

static void uct_tcp_iface_check_flush(uct_tcp_iface_t *iface)
{
    uct_tcp_flush_req_t *req, *tmp;
    uct_tcp_ep_t *ep;

    ucs_list_for_each(ep, &iface->ep_list, list) {
        if (!(ep->flags & UCT_TCP_EP_FLAG_INTERNAL) &&
            !uct_tcp_ep_is_flushed(ep)) {
            return;
        }
    }

    /* a PUT or GET a peer refused since the flush was posted fails it */
    ucs_list_for_each_safe(req, tmp, &iface->flush_list, list) {
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, (req->ack_seq == iface->rma_denied)
                                             ? UCS_OK
                                             : UCS_ERR_INVALID_ADDR);
        ucs_mpool_put(req);
    }
}

/* Whether progress may read the last active socket directly instead of
 * asking epoll: it is connected and has nothing to write, nothing else
 * waits for progress, and epoll was asked recently. One system call per
 * poll instead of two while one connection carries the traffic; other
 * sockets are seen at the latest UCT_TCP_EPOLL_PERIOD calls later, or
 * UCT_TCP_EPOLL_PERIOD_MAX while epoll has found none active lately. */
static UCS_F_ALWAYS_INLINE int uct_tcp_iface_poll_hot(uct_tcp_iface_t *iface)
{
    uct_tcp_ep_t *ep = iface->hot_ep;

    return (ep != NULL) && (--iface->poll_count != 0) &&
           (ep->state == UCT_TCP_EP_CONNECTED) &&
           ucs_list_is_empty(&ep->tx_list) &&
           ucs_arbiter_is_empty(&iface->arbiter) &&
           ucs_list_is_empty(&iface->retry_list) &&
           ucs_list_is_empty(&iface->defer_list) &&
           ucs_list_is_empty(&iface->flush_list);
}

/* Once a second: drop peers that left a message half sent, and give idle
 * pool chunks back, so what hostile or dead peers made us allocate
 * returns to the system. */
static void uct_tcp_iface_housekeeping(uct_tcp_iface_t *iface)
{
    ucs_time_t now = ucs_get_time();

    if (ucs_likely(now < iface->next_housekeeping)) {
        return;
    }
    iface->next_housekeeping =
        now + ucs_time_from_sec(UCT_TCP_HOUSEKEEPING_SEC);
    uct_tcp_iface_rx_check_stale(iface, now);
    uct_tcp_iface_release_idle_ext(iface);
    ucs_mpool_release_idle(&iface->tx_mp);
    ucs_mpool_release_idle(&iface->rx_mp);
    ucs_mpool_release_idle(&iface->op_mp);
}

/* Frees the eps released during a progress pass. */
static void uct_tcp_iface_free_eps(uct_tcp_iface_t *iface)
{
    uct_tcp_ep_t *ep, *tmp;

    ucs_list_for_each_safe(ep, tmp, &iface->free_list, list) {
        ucs_list_del(&ep->list);
        free(ep);
    }
}

/* A progress pass that asks epoll and does what waits for progress. */
static UCS_F_NOINLINE unsigned
uct_tcp_iface_progress_all(uct_tcp_iface_t *iface)
{
    unsigned count = 16;
    ucs_status_t status;

    iface->poll_other = 0;
    status            = ucs_event_set_wait(iface->event_set, &count, 0,
                                           uct_tcp_iface_event_cb, iface);
    if (status != UCS_OK) {
        count = 0;
    }
    if (iface->poll_other) {
        iface->poll_period = UCT_TCP_EPOLL_PERIOD;
    } else if (iface->poll_period < UCT_TCP_EPOLL_PERIOD_MAX) {
        iface->poll_period *= 2;
    }
    iface->poll_count = iface->poll_period;

    if (ucs_unlikely(!ucs_arbiter_is_empty(&iface->arbiter))) {
        /* an ep that runs out again leaves the schedule until its socket
         * drains */
        count += ucs_arbiter_dispatch(&iface->arbiter, 1,
                                      uct_pending_group_dispatch_cb,
                                      UCT_PENDING_DISPATCH_DESCHED);
    }
    if (ucs_unlikely(!ucs_list_is_empty(&iface->defer_list))) {
        uct_tcp_ep_defer_progress(iface, 0);
    }
    if (ucs_unlikely(!ucs_list_is_empty(&iface->retry_list))) {
        uct_tcp_ep_retry_progress(iface);
    }
    if (ucs_unlikely(!ucs_list_is_empty(&iface->flush_list))) {
        uct_tcp_iface_check_flush(iface);
    }
    if (ucs_unlikely(iface->listen_paused)) {
        uct_tcp_iface_accept_resume(iface);
    }
    uct_tcp_iface_housekeeping(iface);
    return count;
}

static unsigned uct_tcp_iface_progress(uct_iface_h tl_iface)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    unsigned count;

    iface->in_progress = 1;
    iface->armed       = 0;
    if (uct_tcp_iface_poll_hot(iface)) {
        count = uct_tcp_ep_rx_progress(iface->hot_ep);
    } else {
        count = uct_tcp_iface_progress_all(iface);
    }
    iface->in_progress = 0;

    if (ucs_unlikely(!ucs_list_is_empty(&iface->free_list))) {
        uct_tcp_iface_free_eps(iface);
    }
    return count;
}

static ucs_status_t uct_tcp_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                        uct_completion_t *comp)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    uct_tcp_flush_req_t *req;
    uct_tcp_ep_t *ep;
    ucs_status_t status;
    int flushed = 1;

    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        ucs_error("tcp iface %p: UCT_FLUSH_FLAG_CANCEL is supported on "
                  "endpoints only",
                  (void *)iface);
        return UCS_ERR_UNSUPPORTED;
    }

    ucs_list_for_each(ep, &iface->ep_list, list) {
        if ((ep->flags & UCT_TCP_EP_FLAG_INTERNAL) ||
            (ep->state == UCT_TCP_EP_FAILED)) {
            continue;
        }
        status = uct_tcp_ep_flush_request_ack(ep);
        if (status != UCS_OK) {
            return status;
        }
        flushed = flushed && uct_tcp_ep_is_flushed(ep);
    }
    if (flushed) {
        return UCS_OK;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    req = ucs_mpool_get(&iface->op_mp);
    if (req == NULL) {
        ucs_error("tcp iface %p: failed to allocate a flush request",
                  (void *)iface);
        return UCS_ERR_NO_MEMORY;
    }
    req->comp    = comp;
    req->ack_seq = iface->rma_denied;
    ucs_list_add_tail(&iface->flush_list, &req->list);
    return UCS_INPROGRESS;
}

static ucs_status_t uct_tcp_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
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

    /* nothing may stay held back while the application sleeps: neither
     * what is held now nor what it sends after arming, until it calls
     * progress again */
    iface->armed = 1;
    uct_tcp_ep_defer_progress(iface, 1);

    if (!(events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG))) {
        return UCS_OK;
    }

    iface->armed_read = 0;
    status            = ucs_event_set_wait(iface->event_set, &count, 0,
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
    size_t max_bcopy       = iface->config.max_bcopy;
    size_t max_am          = iface->config.max_am;

    uct_base_iface_query(&iface->super, attr);

    attr->cap.flags =
        UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
        UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_GET_BCOPY |
        UCT_IFACE_FLAG_GET_ZCOPY | UCT_IFACE_FLAG_PENDING |
        UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_CONNECT_TO_EP |
        UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE | UCT_IFACE_FLAG_CB_SYNC;
    if (iface->config.put_enable) {
        attr->cap.flags |= UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
                           UCT_IFACE_FLAG_PUT_ZCOPY;
    }
    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_FD;

    attr->cap.am.max_short       = max_bcopy - sizeof(uint64_t);
    attr->cap.am.max_bcopy       = max_bcopy;
    attr->cap.am.min_zcopy       = 0;
    attr->cap.am.max_zcopy       = max_am;
    attr->cap.am.max_hdr         = iface->config.max_hdr;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu       = 1;
    attr->cap.am.max_iov         = iface->config.max_iov;

    if (iface->config.put_enable) {
        attr->cap.put.max_short = max_bcopy - sizeof(uct_tcp_put_hdr_t);
        attr->cap.put.max_bcopy = max_bcopy - sizeof(uct_tcp_put_hdr_t);
        attr->cap.put.min_zcopy = 0;
        attr->cap.put.max_zcopy =
            UCT_TCP_MAX_STREAM_MSG - sizeof(uct_tcp_put_hdr_t);
        attr->cap.put.opt_zcopy_align = 1;
        attr->cap.put.align_mtu       = 1;
        attr->cap.put.max_iov         = iface->config.max_iov;
    }

    attr->cap.get.max_short       = 0;
    attr->cap.get.max_bcopy       = max_am;
    attr->cap.get.min_zcopy       = 0;
    attr->cap.get.max_zcopy       = UCT_TCP_MAX_STREAM_MSG;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu       = 1;
    attr->cap.get.max_iov         = iface->config.max_iov;

    attr->device_addr_len =
        uct_tcp_device_addr_length(iface->listen_addr.sa.sa_family);
    attr->iface_addr_len      = sizeof(uct_tcp_iface_addr_t);
    attr->ep_addr_len         = sizeof(uct_tcp_ep_addr_t);
    attr->max_conn_priv       = 0;
    attr->overhead            = 50e-6;
    attr->bandwidth.dedicated = 0;
    attr->bandwidth.shared    = iface->config.bandwidth;
    attr->latency             = ucs_linear_func_make(iface->config.latency, 0);
    attr->priority            = 0;
    return UCS_OK;
}

static ucs_status_t uct_tcp_iface_get_device_address(uct_iface_h tl_iface,
                                                     uct_device_addr_t *addr)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    uct_tcp_device_addr_t dev;

    memset(&dev, 0, sizeof(dev));
    dev.family = (uint8_t)iface->listen_addr.sa.sa_family;
    if (dev.family == AF_INET6) {
        memcpy(dev.addr, &iface->listen_addr.in6.sin6_addr, 16);
    } else {
        memcpy(dev.addr, &iface->listen_addr.in.sin_addr, 4);
    }
    memcpy(addr, &dev, uct_tcp_device_addr_length(dev.family));
    return UCS_OK;
}

static uint16_t uct_tcp_iface_port(const uct_tcp_iface_t *iface)
{
    return (iface->listen_addr.sa.sa_family == AF_INET6)
               ? iface->listen_addr.in6.sin6_port
               : iface->listen_addr.in.sin_port;
}

static ucs_status_t uct_tcp_iface_get_address(uct_iface_h tl_iface,
                                              uct_iface_addr_t *addr)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    uct_tcp_iface_addr_t iface_addr;

    iface_addr.port   = uct_tcp_iface_port(iface);
    iface_addr.secret = iface->secret;
    memcpy(addr, &iface_addr, sizeof(iface_addr));
    return UCS_OK;
}

/* Same family; a loopback address is reachable only from a loopback
 * interface and the other way round; other addresses are left to
 * routing. */
static int uct_tcp_iface_is_reachable(const uct_iface_h tl_iface,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_iface_addr_t *iface_addr)
{
    uct_tcp_iface_t *iface           = uct_tcp_iface(tl_iface);
    const uct_tcp_device_addr_t *dev = (const uct_tcp_device_addr_t *)dev_addr;
    uct_tcp_sockaddr_t remote;

    if ((dev == NULL) || (dev->family != iface->listen_addr.sa.sa_family)) {
        return 0;
    }
    memset(&remote, 0, sizeof(remote));
    remote.sa.sa_family = dev->family;
    if (dev->family == AF_INET6) {
        memcpy(&remote.in6.sin6_addr, dev->addr, 16);
    } else {
        memcpy(&remote.in.sin_addr, dev->addr, 4);
    }
    return uct_tcp_sockaddr_is_loopback(&remote.sa) == iface->is_loopback;
}

/* ------------------------------------------------------------------------
 * Object tree
 */

/* The listening address: what peers connect to */
static void uct_tcp_iface_vfs_show_address(void *obj, ucs_string_buffer_t *strb,
                                           void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_iface_t *iface = obj;
    char str[UCS_SOCKADDR_STRING_LEN];

    ucs_string_buffer_appendf(
        strb, "%s\n",
        ucs_sockaddr_str(&iface->listen_addr.sa, str, sizeof(str)));
}

void uct_tcp_iface_vfs_init(uct_iface_h tl_iface)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);

    uct_vfs_add_file(iface, uct_tcp_iface_vfs_show_address, NULL, 0, "address");
    uct_vfs_add_uint(iface, &iface->num_user_eps, sizeof(iface->num_user_eps),
                     "num_user_eps");
    uct_vfs_add_uint(iface, &iface->tx_queued, sizeof(iface->tx_queued),
                     "tx_queued_bytes");
    uct_vfs_add_uint(iface, &iface->rx_held, sizeof(iface->rx_held),
                     "rx_partial_msgs");
    uct_vfs_add_uint(iface, &iface->rx_evicted, sizeof(iface->rx_evicted),
                     "rx_peer_evictions");
    uct_vfs_add_value(iface, iface->config.peer_max_bufs, "rx_peer_max_bufs");
    uct_vfs_add_uint(iface, &iface->rma_refused, sizeof(iface->rma_refused),
                     "rma_refused");
    uct_vfs_add_uint(iface, &iface->rma_denied, sizeof(iface->rma_denied),
                     "rma_denied_by_peers");
    uct_vfs_add_value(iface, iface->config.tx_buf_size,
                      "tx_queue_limit_per_ep");
    uct_vfs_add_uint(iface, &iface->pair_switched, sizeof(iface->pair_switched),
                     "pair_switched_eps");
    uct_vfs_add_uint(iface, &iface->pair_unpaired, sizeof(iface->pair_unpaired),
                     "pair_unpaired_eps");
}

/* ------------------------------------------------------------------------
 * Open and close
 */

/* Says how many peer-triggered lines were suppressed, before closing */
static void uct_tcp_iface_log_flush(uct_tcp_iface_t *iface)
{
    static const char *what[UCT_TCP_LOG_LAST] = {
        [UCT_TCP_LOG_PROTOCOL]   = "tcp: malformed input from peers",
        [UCT_TCP_LOG_REFUSED]    = "tcp: refused connections",
        [UCT_TCP_LOG_RMA_DENIED] = "tcp: refused remote accesses",
        [UCT_TCP_LOG_ACCEPT]     = "tcp: accept out of file descriptors",
        [UCT_TCP_LOG_SHARE]      = "tcp: peers over their receive buffer "
                                   "share"};
    unsigned i;

    for (i = 0; i < UCT_TCP_LOG_LAST; ++i) {
        ucs_log_limit_flush(&iface->log_limit[i], UCS_LOG_LEVEL_WARN, what[i]);
    }
}

static void uct_tcp_iface_close(uct_iface_h tl_iface)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(tl_iface);
    uct_tcp_flush_req_t *req, *treq;
    uct_tcp_ep_t *ep, *tmp;

    uct_base_iface_progress_disable(tl_iface,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    ucs_list_for_each_safe(ep, tmp, &iface->ep_list, list) {
        if (!(ep->flags & UCT_TCP_EP_FLAG_INTERNAL)) {
            ucs_debug("tcp iface %p: ep %p was not destroyed before the "
                      "interface was closed",
                      (void *)iface, (void *)ep);
        }
        uct_tcp_ep_free(ep);
    }
    ucs_list_for_each_safe(req, treq, &iface->flush_list, list) {
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, UCS_ERR_CANCELED);
        ucs_mpool_put(req);
    }
    if (!iface->listen_paused) {
        ucs_event_set_del(iface->event_set, iface->listen_fd);
    }
    close(iface->listen_fd);
    ucs_event_set_cleanup(iface->event_set);
    uct_tcp_iface_log_flush(iface);
    ucs_arbiter_cleanup(&iface->arbiter);
    ucs_ptr_array_cleanup(&iface->ep_ids, 0);
    uct_tcp_peer_table_cleanup(&iface->peers);
    ucs_hash_cleanup(&iface->pair_peers);
    if (iface->rx_spare != NULL) {
        ucs_mpool_put(iface->rx_spare);
    }
    ucs_mpool_cleanup(&iface->op_mp, 1);
    ucs_mpool_cleanup(&iface->rx_mp, 1);
    ucs_mpool_cleanup(&iface->tx_mp, 1);
    free(iface->align_buf);
    uct_base_iface_cleanup(&iface->super);
    free(iface);
}

#define UCT_TCP_IFACE_COMMON_OPS                                              \
    .ep_get_bcopy = uct_tcp_ep_get_bcopy,                                     \
    .ep_get_zcopy = uct_tcp_ep_get_zcopy, .ep_am_short = uct_tcp_ep_am_short, \
    .ep_am_short_iov = uct_tcp_ep_am_short_iov,                               \
    .ep_am_bcopy = uct_tcp_ep_am_bcopy, .ep_am_zcopy = uct_tcp_ep_am_zcopy,   \
    .ep_pending_add   = uct_tcp_ep_pending_add,                               \
    .ep_pending_purge = uct_tcp_ep_pending_purge,                             \
    .ep_flush = uct_tcp_ep_flush, .ep_fence = uct_tcp_ep_fence,               \
    .ep_create = uct_tcp_ep_create, .ep_destroy = uct_tcp_ep_destroy,         \
    .ep_get_address   = uct_tcp_ep_get_address,                               \
    .ep_connect_to_ep = uct_tcp_ep_connect_to_ep,                             \
    .iface_flush = uct_tcp_iface_flush, .iface_fence = uct_base_iface_fence,  \
    .iface_progress         = uct_tcp_iface_progress,                         \
    .iface_progress_enable  = uct_base_iface_progress_enable,                 \
    .iface_progress_disable = uct_base_iface_progress_disable,                \
    .iface_event_fd_get     = uct_tcp_iface_event_fd_get,                     \
    .iface_event_arm        = uct_tcp_iface_event_arm,                        \
    .iface_close = uct_tcp_iface_close, .iface_query = uct_tcp_iface_query,   \
    .iface_get_device_address = uct_tcp_iface_get_device_address,             \
    .iface_get_address        = uct_tcp_iface_get_address,                    \
    .iface_is_reachable       = uct_tcp_iface_is_reachable

static const uct_iface_ops_t uct_tcp_iface_ops = {
    .ep_put_short = uct_tcp_ep_put_short,
    .ep_put_bcopy = uct_tcp_ep_put_bcopy,
    .ep_put_zcopy = uct_tcp_ep_put_zcopy,
    UCT_TCP_IFACE_COMMON_OPS};

/* UCX_TCP_PUT_ENABLE=n: the PUT entries stay unset (UNSUPPORTED) */
static const uct_iface_ops_t uct_tcp_iface_noput_ops = {
    UCT_TCP_IFACE_COMMON_OPS};

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
        ucs_sockaddr_set_port(&iface->listen_addr.sa, (uint16_t)port);
        status = ucs_socket_server_init(&iface->listen_addr.sa, (int)backlog, 0,
                                        port != last, &iface->listen_fd);
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
    ucs_sockaddr_set_port(&iface->listen_addr.sa,
                          ntohs(((struct sockaddr_in *)&bound)->sin_port));

    status = ucs_socket_set_nonblock(iface->listen_fd);
    if (status != UCS_OK) {
        close(iface->listen_fd);
    }
    return status;
}

/* The interface's address: of the first family of UCX_TCP_AF_PRIO the
 * device has. */
static ucs_status_t uct_tcp_iface_get_addr(uct_tcp_iface_t *iface,
                                           const uct_tcp_af_prio_t *af,
                                           uct_tcp_sockaddr_t *addr)
{
    struct sockaddr_storage ss;
    ucs_status_t status;

    status =
        uct_tcp_device_get_addr(iface->super.dev_name, af->af, af->count, &ss);
    if (status != UCS_OK) {
        return status;
    }
    memset(addr, 0, sizeof(*addr));
    memcpy(addr, &ss,
           (ss.ss_family == AF_INET6) ? sizeof(addr->in6) : sizeof(addr->in));
    return UCS_OK;
}

static ucs_status_t uct_tcp_iface_init_mpools(uct_tcp_iface_t *iface)
{
    ucs_mpool_params_t params;
    ucs_status_t status;
    size_t op_size;

    ucs_mpool_params_reset(&params);
    params.elem_size = sizeof(uct_tcp_tx_t) + iface->config.tx_buf_size;
    /* chunks of their own pages: released chunks return to the system at
     * once, whatever malloc's thresholds are */
    params.ops             = &ucs_mpool_ops_mmap;
    params.alignment       = 8;
    params.elems_per_chunk = 8;
    params.max_elems       = iface->config.max_bufs;
    params.name            = "tcp send buffers";
    status                 = ucs_mpool_init(&iface->tx_mp, &params);
    if (status != UCS_OK) {
        return status;
    }

    params.elem_size = sizeof(uct_tcp_rx_t) + iface->config.rx_seg_size;
    params.name      = "tcp receive buffers";
    status           = ucs_mpool_init(&iface->rx_mp, &params);
    if (status != UCS_OK) {
        goto err_tx;
    }

    op_size = sizeof(uct_tcp_tx_t) +
              (UCT_TCP_MAX_SEND_IOV * sizeof(struct iovec)) +
              sizeof(uct_tcp_hdr_t) + iface->config.max_hdr;
    op_size                = ucs_max(op_size, sizeof(uct_tcp_get_op_t) +
                                                  (iface->config.max_iov * sizeof(uct_iov_t)));
    op_size                = ucs_max(op_size, sizeof(uct_tcp_flush_req_t));
    params.elem_size       = op_size;
    params.elems_per_chunk = 32;
    params.max_elems       = (iface->config.max_bufs == UINT_MAX)
                                 ? UINT_MAX
                                 : iface->config.max_bufs * 4;
    params.name            = "tcp operations";
    status                 = ucs_mpool_init(&iface->op_mp, &params);
    if (status != UCS_OK) {
        goto err_rx;
    }
    return UCS_OK;

err_rx:
    ucs_mpool_cleanup(&iface->rx_mp, 0);
err_tx:
    ucs_mpool_cleanup(&iface->tx_mp, 0);
    return status;
}

/* Checks the configuration and fills iface->config. */
static ucs_status_t uct_tcp_iface_init_config(uct_tcp_iface_t *iface,
                                              const uct_tcp_iface_config_t *c)
{
    /* a handshake and every control message must fit in a segment */
    const size_t min_seg = 256;
    double user_timeout;

    if ((c->tx_seg_size < min_seg) || (c->rx_seg_size < min_seg) ||
        (c->tx_seg_size > (1ul << 30)) || (c->rx_seg_size > (1ul << 30))) {
        ucs_error("UCX_TCP_TX_SEG_SIZE=%zu/UCX_TCP_RX_SEG_SIZE=%zu: each "
                  "must be at least %zu bytes and at most 1g",
                  c->tx_seg_size, c->rx_seg_size, min_seg);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((c->max_iov == 0) || (c->max_iov > UCT_TCP_MAX_SEND_IOV - 2)) {
        ucs_error("UCX_TCP_MAX_IOV=%u: must be 1..%d", c->max_iov,
                  UCT_TCP_MAX_SEND_IOV - 2);
        return UCS_ERR_INVALID_PARAM;
    }
    if (c->sendv_thresh > UCT_TCP_SENDV_THRESH_MAX) {
        ucs_error("UCX_TCP_SENDV_THRESH=%zu: at most %d", c->sendv_thresh,
                  UCT_TCP_SENDV_THRESH_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!isinf(c->keepidle) && ((c->keepidle < 1.0) || (c->keepintvl < 1.0) ||
                                (c->keepcnt == 0) || (c->keepidle > 32767) ||
                                (c->keepintvl > 32767) || (c->keepcnt > 127))) {
        ucs_error("UCX_TCP_KEEPIDLE=%gs/KEEPINTVL=%gs/KEEPCNT=%u: need "
                  "1s..32767s and a count of 1..127 (or KEEPIDLE=inf to "
                  "turn keepalive off)",
                  c->keepidle, c->keepintvl, c->keepcnt);
        return UCS_ERR_INVALID_PARAM;
    }
    if (c->syn_cnt > 127) {
        ucs_error("UCX_TCP_SYN_CNT=%u: at most 127", c->syn_cnt);
        return UCS_ERR_INVALID_PARAM;
    }
    if (c->max_conn_retries > 255) {
        ucs_error("UCX_TCP_MAX_CONN_RETRIES=%u: at most 255",
                  c->max_conn_retries);
        return UCS_ERR_INVALID_PARAM;
    }

    iface->config.sndbuf       = c->sndbuf;
    iface->config.rcvbuf       = c->rcvbuf;
    iface->config.nodelay      = c->nodelay;
    iface->config.tx_buf_size  = 2 * c->tx_seg_size;
    iface->config.rx_seg_size  = c->rx_seg_size + sizeof(uct_tcp_hdr_t);
    iface->config.max_iov      = c->max_iov;
    iface->config.sendv_thresh = c->sendv_thresh;
    iface->config.put_enable   = c->put_enable;
    iface->config.max_am       = c->rx_seg_size;
    iface->config.max_bcopy =
        ucs_min(c->tx_seg_size, c->rx_seg_size) - sizeof(uct_tcp_hdr_t);
    iface->config.max_hdr   = ucs_min(UCT_TCP_MAX_AM_HDR, iface->config.max_am);
    iface->config.keepalive = !isinf(c->keepidle);
    if (iface->config.keepalive) {
        iface->config.keepidle  = (int)c->keepidle;
        iface->config.keepintvl = (int)c->keepintvl;
        iface->config.keepcnt   = (int)c->keepcnt;
        user_timeout            = (double)iface->config.keepidle +
                       (double)iface->config.keepintvl * iface->config.keepcnt;
        iface->config.user_timeout_ms = (unsigned)(user_timeout * 1000.0);
    }
    iface->config.syn_cnt          = c->syn_cnt;
    iface->config.max_conn_retries = c->max_conn_retries;
    iface->config.coalesce_time =
        ucs_time_from_sec(isinf(c->coalesce_time) ? 1e-3 : c->coalesce_time);
    iface->config.conn_timeout =
        ucs_time_from_sec(isinf(c->conn_timeout) ? 1e9 : c->conn_timeout);
    iface->config.max_bufs = (c->max_bufs == 0) ? UINT_MAX : c->max_bufs;
    if (c->max_bufs == 1) {
        ucs_error("UCX_TCP_MAX_BUFS=1: at least 2 (one buffer is kept free "
                  "for reading), or 0 for no limit");
        return UCS_ERR_INVALID_PARAM;
    }
    if (c->peer_max_bufs == UCS_ULUNITS_AUTO) {
        iface->config.peer_max_bufs =
            (c->max_bufs == 0) ? UINT_MAX : ucs_max(1u, c->max_bufs / 4);
    } else if ((c->peer_max_bufs == UCS_ULUNITS_INF) ||
               (c->peer_max_bufs >= UINT_MAX)) {
        iface->config.peer_max_bufs = UINT_MAX;
    } else if (c->peer_max_bufs == 0) {
        ucs_error("UCX_TCP_PEER_MAX_BUFS=0: a peer needs at least one "
                  "receive buffer (use a number, auto or inf)");
        return UCS_ERR_INVALID_PARAM;
    } else {
        iface->config.peer_max_bufs = (unsigned)c->peer_max_bufs;
    }
    iface->config.peer_timeout =
        ucs_time_from_sec(isinf(c->peer_timeout) ? 1e9 : c->peer_timeout);
    /* own sends may queue up to two buffers (a message partly written),
     * two zero-copy sends, and the handshake */
    iface->config.reply_limit =
        (2 * iface->config.tx_buf_size) +
        (UCT_TCP_EP_MAX_ZCOPY_OPS * UCT_TCP_REPLY_OP_COST) +
        UCT_TCP_REPLY_BUDGET + (UCT_TCP_MAX_ACK_REQS * sizeof(uct_tcp_hdr_t)) +
        1024;
    return UCS_OK;
}

ucs_status_t uct_tcp_iface_open(uct_md_h md, uct_worker_h worker,
                                const uct_iface_params_t *params,
                                const uct_iface_config_t *tl_config,
                                uct_iface_h *iface_p)
{
    const uct_tcp_iface_config_t *config =
        (const uct_tcp_iface_config_t *)tl_config;
    uct_tcp_iface_t *iface;
    ucs_status_t status;
    unsigned i;

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("tcp: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }
    iface->poll_period = UCT_TCP_EPOLL_PERIOD;

    status = uct_tcp_iface_init_config(iface, config);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_base_iface_init(&iface->super,
                                 config->put_enable ? &uct_tcp_iface_ops
                                                    : &uct_tcp_iface_noput_ops,
                                 md, worker, params, tl_config);
    if (status != UCS_OK) {
        goto err_free;
    }

    iface->listen_fd = -1;
    for (i = 0; i < UCT_TCP_LOG_LAST; ++i) {
        ucs_log_limit_init(&iface->log_limit[i]);
    }
    status = ucs_sys_random_bytes(&iface->secret, sizeof(iface->secret));
    if (status != UCS_OK) {
        goto err_cleanup_base_iface;
    }
    ucs_list_head_init(&iface->ep_list);
    ucs_list_head_init(&iface->flush_list);
    ucs_list_head_init(&iface->retry_list);
    ucs_list_head_init(&iface->free_list);
    ucs_list_head_init(&iface->defer_list);
    ucs_list_head_init(&iface->ext_list);
    ucs_arbiter_init(&iface->arbiter);
    ucs_ptr_array_init(&iface->ep_ids, "tcp endpoint ids");

    status = uct_tcp_peer_table_init(&iface->peers);
    if (status != UCS_OK) {
        goto err_cleanup_base;
    }

    status = ucs_hash_init(&iface->pair_peers, 0);
    if (status != UCS_OK) {
        goto err_cleanup_peers;
    }

    status = uct_tcp_iface_init_mpools(iface);
    if (status != UCS_OK) {
        goto err_cleanup_pair_peers;
    }

    iface->align_buf = malloc(config->rx_seg_size + iface->super.am_alignment);
    if (iface->align_buf == NULL) {
        ucs_error("tcp: failed to allocate an alignment buffer");
        status = UCS_ERR_NO_MEMORY;
        goto err_cleanup_mpools;
    }

    status =
        uct_tcp_iface_get_addr(iface, &config->af_prio, &iface->listen_addr);
    if (status != UCS_OK) {
        goto err_free_align;
    }
    iface->is_loopback = uct_tcp_sockaddr_is_loopback(&iface->listen_addr.sa);
    uct_tcp_device_estimate(iface->super.dev_name, iface->is_loopback,
                            &iface->config.latency, &iface->config.bandwidth);

    status = uct_tcp_iface_listen(iface, &config->port_range, config->backlog);
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
err_cleanup_mpools:
    ucs_mpool_cleanup(&iface->op_mp, 0);
    ucs_mpool_cleanup(&iface->rx_mp, 0);
    ucs_mpool_cleanup(&iface->tx_mp, 0);
err_cleanup_pair_peers:
    ucs_hash_cleanup(&iface->pair_peers);
err_cleanup_peers:
    uct_tcp_peer_table_cleanup(&iface->peers);
err_cleanup_base:
    ucs_ptr_array_cleanup(&iface->ep_ids, 0);
    ucs_arbiter_cleanup(&iface->arbiter);
err_cleanup_base_iface:
    uct_base_iface_cleanup(&iface->super);
err_free:
    free(iface);
    return status;
}
