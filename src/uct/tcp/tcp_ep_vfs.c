/*
 * Object tree files of a tcp endpoint.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_ep.h"

#include <uct/base/uct_vfs.h>

/* What an operator needs to see of a connection, in five
 * files (each tree entry costs memory, and there may be 10k eps). Each file
 * reads plain fields; the peer address may change while it is read (a
 * connection being attached), which at worst shows a garbled address once.
 */

static const char *uct_tcp_ep_state_names[] = {
    [UCT_TCP_EP_CONNECTING] = "connecting",
    [UCT_TCP_EP_RETRY_WAIT] = "retry_wait",
    [UCT_TCP_EP_WAIT_PEER]  = "wait_peer",
    [UCT_TCP_EP_ACCEPTED]   = "accepted",
    [UCT_TCP_EP_CONNECTED]  = "connected",
    [UCT_TCP_EP_SWITCHING]  = "switching",
    [UCT_TCP_EP_FAILED]     = "failed",
    [UCT_TCP_EP_DESTROYED]  = "destroyed"};

static void uct_tcp_ep_vfs_show_peer(void *obj, ucs_string_buffer_t *strb,
                                     void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;
    char str[UCS_SOCKADDR_STRING_LEN];
    uct_tcp_sockaddr_t peer;

    if (!uct_tcp_ep_peer_addr(ep, &peer)) {
        ucs_string_buffer_appendf(strb, "unknown (waiting for "
                                        "uct_ep_connect_to_ep, or closed)\n");
        return;
    }
    /* an internal ep serves a connection a peer opened to this iface */
    ucs_string_buffer_appendf(strb, "%s%s\n",
                              ucs_sockaddr_str(&peer.sa, str, sizeof(str)),
                              uct_tcp_ep_is_internal(ep) ? " (accepted)" : "");
}

static void uct_tcp_ep_vfs_show_state(void *obj, ucs_string_buffer_t *strb,
                                      void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;
    uint8_t state          = ep->state;

    ucs_string_buffer_appendf(
        strb, "%s\n",
        (state < ucs_static_array_size(uct_tcp_ep_state_names))
            ? uct_tcp_ep_state_names[state]
            : "unknown");
}

/* Copied bytes waiting in send buffers, and zero-copy sends waiting */
static void uct_tcp_ep_vfs_show_tx_queue(void *obj, ucs_string_buffer_t *strb,
                                         void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;

    ucs_string_buffer_appendf(strb, "bytes %u\nzcopy_sends %u\n", ep->tx_queued,
                              ep->tx_ops);
}

static void uct_tcp_ep_vfs_show_last_error(void *obj, ucs_string_buffer_t *strb,
                                           void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;

    uct_vfs_append_status(strb, (ucs_status_t)ep->err_status);
}

void uct_tcp_ep_vfs_init(uct_ep_h tl_ep)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_peer, NULL, 0, "peer");
    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_state, NULL, 0, "state");
    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_tx_queue, NULL, 0, "tx_queue");
    uct_vfs_add_uint(ep, &ep->pending.count, sizeof(ep->pending.count),
                     "pending");
    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_last_error, NULL, 0, "last_error");
}
