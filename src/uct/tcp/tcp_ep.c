/*
 * tcp endpoints: socket events, failure (what a lost connection does to
 * outstanding operations), allocation and destruction, pending requests,
 * flush and fence.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_ep.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Status of a failed socket call. */
ucs_status_t uct_tcp_errno_status(int err)
{
    switch (err) {
    case ETIMEDOUT:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
        return UCS_ERR_UNREACHABLE;
    default:
        return UCS_ERR_CONNECTION_RESET;
    }
}

void uct_tcp_ep_update_events(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    unsigned events;

    if (ep->fd < 0) {
        return;
    }

    /* a peer over its reply budget is not read (back-pressure) */
    events =
        (ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED) ? 0 : UCS_EVENT_SET_EVREAD;
    if ((ep->state == UCT_TCP_EP_CONNECTING) ||
        (!ucs_list_is_empty(&ep->tx_list) &&
         !(ep->flags & UCT_TCP_EP_FLAG_DEFERRED) &&
         ((ep->state != UCT_TCP_EP_SWITCHING) ||
          (ep->flags & UCT_TCP_EP_FLAG_SWITCH_QUEUED)))) {
        events |= UCS_EVENT_SET_EVWRITE;
    }
    if ((events != ep->events) &&
        (ucs_event_set_mod(iface->event_set, ep->fd,
                           (ucs_event_set_types_t)events, ep) == UCS_OK)) {
        ep->events = events;
    }
}

ucs_status_t uct_tcp_ep_register(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;

    ep->events = UCS_EVENT_SET_EVREAD;
    if ((ep->state == UCT_TCP_EP_CONNECTING) ||
        !ucs_list_is_empty(&ep->tx_list)) {
        ep->events |= UCS_EVENT_SET_EVWRITE;
    }
    status = ucs_event_set_add(iface->event_set, ep->fd,
                               (ucs_event_set_types_t)ep->events, ep);
    if (status != UCS_OK) {
        ep->events = 0;
    }
    return status;
}

void uct_tcp_ep_close_socket(uct_tcp_ep_t *ep)
{
    if (ep->fd < 0) {
        return;
    }
    if (ep->events != 0) {
        ucs_event_set_del(uct_tcp_ep_iface(ep)->event_set, ep->fd);
    }
    close(ep->fd);
    ep->fd     = -1;
    ep->events = 0;
}

_Static_assert(sizeof(uct_tcp_ep_t) <= 152,
               "an idle tcp ep must fit a 160-byte heap block");
_Static_assert(sizeof(uct_tcp_ep_ext_t) <= 152,
               "the side state must fit the heap block of an ep");

int uct_tcp_ep_peer_addr(const uct_tcp_ep_t *ep, uct_tcp_sockaddr_t *addr)
{
    socklen_t len = sizeof(*addr);

    if ((ep->ext != NULL) && (ep->ext->peer_addr.sa.sa_family != 0)) {
        *addr = ep->ext->peer_addr;
        return 1;
    }
    memset(addr, 0, sizeof(*addr));
    return (ep->fd >= 0) && (getpeername(ep->fd, &addr->sa, &len) == 0) &&
           ((addr->sa.sa_family == AF_INET) ||
            (addr->sa.sa_family == AF_INET6));
}

const char *uct_tcp_ep_peer_str(const uct_tcp_ep_t *ep, char *buf, size_t max)
{
    uct_tcp_sockaddr_t addr;

    if (uct_tcp_ep_peer_addr(ep, &addr)) {
        return ucs_sockaddr_str(&addr.sa, buf, max);
    }
    snprintf(buf, max, "<unknown peer>");
    return buf;
}

uct_tcp_ep_ext_t *uct_tcp_ep_ext_alloc(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_ext_t *ext;

    ucs_assert(ep->ext == NULL);
    ext = calloc(1, sizeof(*ext));
    if (ext == NULL) {
        ucs_error("tcp ep %p: failed to allocate its connection state",
                  (void *)ep);
        return NULL;
    }
    ext->ep = ep;
    ucs_list_head_init(&ext->get_list);
    ucs_list_head_init(&ext->flush_list);
    ucs_list_add_tail(&iface->ext_list, &ext->list);
    ep->ext = ext;
    return ext;
}

static void uct_tcp_ep_ext_free(uct_tcp_ep_t *ep)
{
    uct_tcp_ep_ext_t *ext = ep->ext;

    if (ext == NULL) {
        return;
    }
    ucs_assert(ucs_list_is_empty(&ext->get_list));
    ucs_assert(ucs_list_is_empty(&ext->flush_list));
    ucs_list_del(&ext->list);
    free(ext);
    ep->ext = NULL;
}

/* Whether nothing in the side state of @a ep is needed any more: the
 * connection is up (or gone) and no GET, flush, acknowledgement or PUT
 * stream is outstanding. */
static int uct_tcp_ep_ext_is_idle(const uct_tcp_ep_t *ep)
{
    const uct_tcp_ep_ext_t *ext = ep->ext;

    if (ep->state == UCT_TCP_EP_FAILED) {
        /* what was outstanding completed with the failure */
        return ucs_list_is_empty(&ext->get_list) &&
               ucs_list_is_empty(&ext->flush_list);
    }
    return (ep->state == UCT_TCP_EP_CONNECTED) &&
           ucs_list_is_empty(&ext->get_list) &&
           ucs_list_is_empty(&ext->flush_list) &&
           (ext->acks_received == ext->ack_reqs_sent) &&
           (ep->rx_stream_id == 0);
}

void uct_tcp_ep_ext_release_idle(uct_tcp_ep_t *ep)
{
    if ((ep->ext != NULL) && uct_tcp_ep_ext_is_idle(ep)) {
        uct_tcp_ep_ext_free(ep);
    }
}

void uct_tcp_iface_release_idle_ext(uct_tcp_iface_t *iface)
{
    uct_tcp_ep_ext_t *ext, *tmp;

    ucs_list_for_each_safe(ext, tmp, &iface->ext_list, list) {
        if (uct_tcp_ep_ext_is_idle(ext->ep)) {
            uct_tcp_ep_ext_free(ext->ep);
        }
    }
}

static void uct_tcp_ep_fail_gets(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_get_op_t *op, *tmp;

    if (ep->ext == NULL) {
        return;
    }
    ep->ext->get_budget = 0;
    ucs_list_for_each_safe(op, tmp, &ep->ext->get_list, list) {
        ucs_list_del(&op->list);
        if (op->comp != NULL) {
            uct_invoke_completion(op->comp, status);
        }
        ucs_mpool_put(op);
    }
}

static void uct_tcp_ep_complete_flushes(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_flush_req_t *req, *tmp;

    if (ep->ext == NULL) {
        return;
    }
    ucs_list_for_each_safe(req, tmp, &ep->ext->flush_list, list) {
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, status);
        ucs_mpool_put(req);
    }
}

void uct_tcp_ep_release_rx(uct_tcp_ep_t *ep)
{
    if (ep->rx != NULL) {
        if (ep->rx->peer != NULL) {
            uct_tcp_rx_unhold(ep->rx);
        }
        ucs_mpool_put(ep->rx);
        ep->rx = NULL;
        --uct_tcp_ep_iface(ep)->rx_held;
    }
}

/* Frees an internal ep now, or at the end of the progress pass that may
 * still hold events for it. */
static void uct_tcp_ep_release(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    if (iface->hot_ep == ep) {
        iface->hot_ep = NULL;
    }
    ucs_list_del(&ep->list);
    if (iface->in_progress) {
        ep->state = UCT_TCP_EP_DESTROYED;
        ucs_list_add_tail(&iface->free_list, &ep->list);
    } else {
        free(ep);
    }
}

void uct_tcp_ep_free(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    uct_base_ep_cleanup(&ep->super);
    uct_tcp_pair_forget(ep);
    uct_tcp_ep_close_socket(ep);
    if ((ep->state == UCT_TCP_EP_RETRY_WAIT) ||
        (ep->state == UCT_TCP_EP_ACCEPTED) ||
        (ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED)) {
        ucs_list_del(&ep->retry_list);
        ep->flags &= ~UCT_TCP_EP_FLAG_RX_STOPPED;
    }
    uct_tcp_ep_defer_stop(ep);
    if (ep->flags & UCT_TCP_EP_FLAG_IN_IDS) {
        ucs_ptr_array_remove(&iface->ep_ids, ep->id, NULL);
    }
    uct_pending_group_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    uct_pending_group_cleanup(&ep->pending);
    uct_tcp_ep_tx_purge(ep, UCS_ERR_CANCELED);
    uct_tcp_ep_fail_gets(ep, UCS_ERR_CANCELED);
    uct_tcp_ep_complete_flushes(ep, UCS_ERR_CANCELED);
    uct_tcp_ep_release_rx(ep);
    uct_tcp_ep_ext_free(ep);
    uct_tcp_peer_put(iface, ep->peer);
    ep->peer = UCT_TCP_PEER_NONE;
    if (!uct_tcp_ep_is_internal(ep)) {
        --iface->num_user_eps;
    }
    uct_tcp_ep_release(ep);
}

/*
 * The connection is gone (peer closed or reset it, stopped answering, or
 * sent something invalid). An internal ep is freed; the user's ep is
 * marked failed, its outstanding operations complete with @a status and
 * the error handler runs once. Internal eps must not be touched after.
 */
void uct_tcp_ep_fail(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    if (uct_tcp_ep_is_internal(ep)) {
        ucs_debug("tcp iface %p: connection from %s closed (%s)", (void *)iface,
                  uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                  ucs_status_string(status));
        uct_tcp_ep_free(ep);
        return;
    }

    if (ep->state == UCT_TCP_EP_FAILED) {
        return;
    }

    ucs_debug("tcp ep %p: connection to %s lost (%s)", (void *)ep,
              uct_tcp_ep_peer_str(ep, str, sizeof(str)),
              ucs_status_string(status));
    uct_tcp_pair_forget(ep);
    uct_tcp_ep_close_socket(ep);
    if ((ep->state == UCT_TCP_EP_RETRY_WAIT) ||
        (ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED)) {
        ucs_list_del(&ep->retry_list);
        ep->flags &= ~UCT_TCP_EP_FLAG_RX_STOPPED;
    }
    uct_tcp_ep_defer_stop(ep);
    if (iface->hot_ep == ep) {
        iface->hot_ep = NULL;
    }
    ep->state        = UCT_TCP_EP_FAILED;
    ep->err_status   = (int8_t)status;
    ep->rx_stream_id = 0;
    uct_tcp_ep_release_rx(ep);
    uct_tcp_ep_tx_purge(ep, status);
    uct_tcp_ep_fail_gets(ep, status);
    uct_tcp_ep_complete_flushes(ep, status);
    uct_iface_handle_ep_err(&iface->super.super, &ep->super.super, status);
}

void uct_tcp_ep_protocol_error(uct_tcp_ep_t *ep, const char *what)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_PROTOCOL],
                     "tcp iface %p: %s from %s; closing the connection",
                     (void *)iface, what,
                     uct_tcp_ep_peer_str(ep, str, sizeof(str)));
    uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
}

uct_tcp_ep_t *uct_tcp_ep_alloc(uct_tcp_iface_t *iface)
{
    uct_tcp_ep_t *ep;

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("tcp iface %p: failed to allocate an endpoint",
                  (void *)iface);
        return NULL;
    }

    uct_base_ep_init(&ep->super, &iface->super);
    ep->fd   = -1;
    ep->peer = UCT_TCP_PEER_NONE;
    ucs_list_head_init(&ep->tx_list);
    uct_pending_group_init(&ep->pending);
    ucs_list_add_tail(&iface->ep_list, &ep->list);
    return ep;
}

ucs_status_t uct_tcp_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(params->iface);
    int has_dev = (params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) &&
                  (params->dev_addr != NULL);
    int has_iface = (params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) &&
                    (params->iface_addr != NULL);

    if (has_dev && has_iface) {
        return uct_tcp_ep_create_to_iface(iface, params, ep_p);
    } else if (!has_dev && !has_iface) {
        return uct_tcp_ep_create_for_ep(iface, ep_p);
    }

    ucs_error("tcp: uct_ep_create needs both dev_addr and iface_addr (to "
              "connect to an interface) or neither (to connect with "
              "uct_ep_connect_to_ep)");
    return UCS_ERR_INVALID_PARAM;
}

void uct_tcp_ep_destroy(uct_ep_h tl_ep)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    /* the peer's ep may still use the connection */
    if (!uct_tcp_pair_ep_release(ep)) {
        uct_tcp_ep_free(ep);
    }
}

ucs_status_t uct_tcp_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                    unsigned flags)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    /* Room for the largest message: any send would succeed now */
    if ((ep->state != UCT_TCP_EP_FAILED) && uct_tcp_ep_has_room(ep)) {
        return UCS_ERR_BUSY;
    }
    /* Scheduled on the arbiter when the socket drains (tx progress) */
    uct_pending_group_add(&ep->pending, req);
    return UCS_OK;
}

void uct_tcp_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    uct_pending_group_purge(&uct_tcp_ep_iface(ep)->arbiter, &ep->pending, cb,
                            arg);
}

/* Whether a flush of @a ep must wait for the peer: something is queued,
 * PUTs were not acknowledged, a GET is out, or the connection is not up
 * yet. */
static int uct_tcp_ep_flush_needs_ack(const uct_tcp_ep_t *ep)
{
    return (ep->flags & UCT_TCP_EP_FLAG_PUT_UNACKED) ||
           !ucs_list_is_empty(&ep->tx_list) ||
           ((ep->ext != NULL) && !ucs_list_is_empty(&ep->ext->get_list)) ||
           (ep->state != UCT_TCP_EP_CONNECTED);
}

/* Asks the peer to acknowledge what was sent so far, if needed. */
ucs_status_t uct_tcp_ep_flush_request_ack(uct_tcp_ep_t *ep)
{
    int kick = ucs_list_is_empty(&ep->tx_list) ||
               (ep->flags & UCT_TCP_EP_FLAG_DEFERRED);
    uct_tcp_ep_ext_t *ext;
    uct_tcp_hdr_t hdr;

    if (!uct_tcp_ep_flush_needs_ack(ep)) {
        return UCS_OK;
    }
    ext = uct_tcp_ep_ext_get(ep);
    if (ext == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    if ((ext->ack_reqs_sent - ext->acks_received) >= UCT_TCP_MAX_ACK_REQS) {
        return UCS_ERR_NO_RESOURCE; /* the peer answers so many at most */
    }

    uct_tcp_hdr_init(&hdr, UCT_TCP_OP_ACK_REQ, 0, 0);
    if (uct_tcp_ep_ctrl_send(ep, &hdr, sizeof(hdr)) != UCS_OK) {
        return UCS_ERR_NO_MEMORY;
    }
    ++ext->ack_reqs_sent;
    ep->flags &= ~UCT_TCP_EP_FLAG_PUT_UNACKED;
    if (kick) {
        uct_tcp_ep_tx_kick(ep); /* a flush does not wait for coalescing */
    }
    uct_tcp_ep_update_events(ep);
    return UCS_OK;
}

int uct_tcp_ep_is_flushed(const uct_tcp_ep_t *ep)
{
    return (ep->state == UCT_TCP_EP_FAILED) || (ep->ext == NULL) ||
           (ep->ext->acks_received == ep->ext->ack_reqs_sent);
}

ucs_status_t uct_tcp_ep_flush(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);
    uct_tcp_flush_req_t *req;
    ucs_status_t status;

    status = uct_tcp_ep_check_state(ep);
    if (status != UCS_OK) {
        return status;
    }
    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        uct_pending_group_purge(&uct_tcp_ep_iface(ep)->arbiter, &ep->pending,
                                NULL, NULL);
    }

    status = uct_tcp_ep_flush_request_ack(ep);
    if (status != UCS_OK) {
        return status;
    }
    if (uct_tcp_ep_is_flushed(ep)) {
        return UCS_OK;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    req = ucs_mpool_get(&uct_tcp_ep_iface(ep)->op_mp);
    if (req == NULL) {
        ucs_error("tcp ep %p: failed to allocate a flush request", (void *)ep);
        return UCS_ERR_NO_MEMORY;
    }
    req->comp    = comp;
    req->ack_seq = ep->ext->ack_reqs_sent;
    ucs_list_add_tail(&ep->ext->flush_list, &req->list);
    return UCS_INPROGRESS;
}

/* The stream is ordered and the peer handles messages in order, GETs
 * included: nothing can pass what was issued before. */
ucs_status_t uct_tcp_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    return uct_tcp_ep_check_state(uct_tcp_ep(tl_ep));
}
