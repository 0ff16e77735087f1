/*
 * PUT and GET operations of tcp endpoints. The remote address and the
 * remote key (the 64-bit key of a region registered with the peer's tcp
 * memory domain) travel in the PUT and GET messages; the peer applies an
 * access only inside that region. PUTs are acknowledged only when a flush
 * asks; a refused PUT fails that flush, a refused GET its own completion,
 * with UCS_ERR_INVALID_ADDR.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_ep.h"

/* The same for a PUT of @a length bytes */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_tcp_ep_put_sent(uct_tcp_ep_t *ep,
                                                            size_t length,
                                                            ucs_status_t status)
{
    uct_base_iface_t *iface = &uct_tcp_ep_iface(ep)->super;

    if (ucs_likely(!UCS_STATUS_IS_ERR(status))) {
        uct_iface_stat_put(iface, length);
    } else {
        uct_iface_stat_tx_error(iface, status);
    }
    return status;
}

/* The same for a GET of @a length bytes */
static ucs_status_t uct_tcp_ep_get_sent(uct_tcp_ep_t *ep, size_t length,
                                        ucs_status_t status)
{
    uct_base_iface_t *iface = &uct_tcp_ep_iface(ep)->super;

    if (!UCS_STATUS_IS_ERR(status)) {
        uct_iface_stat_get(iface, length);
    } else {
        uct_iface_stat_tx_error(iface, status);
    }
    return status;
}

ucs_status_t uct_tcp_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                  unsigned length, uint64_t remote_addr,
                                  uct_rkey_t rkey)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    struct {
        uct_tcp_hdr_t hdr;
        uct_tcp_put_hdr_t put;
    } msg;
    struct iovec iov[2];
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "put_short", length,
                                    iface->config.max_bcopy - sizeof(msg.put));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_tcp_hdr_init(&msg.hdr, UCT_TCP_OP_PUT, sizeof(msg.put) + length, 0);
    msg.put.remote_addr = remote_addr;
    msg.put.rkey        = rkey;
    iov[0].iov_base     = &msg;
    iov[0].iov_len      = sizeof(msg);
    iov[1].iov_base     = (void *)buffer;
    iov[1].iov_len      = length;
    status =
        uct_tcp_ep_sendv(ep, iov, (length > 0) ? 2 : 1, sizeof(msg) + length);
    if (ucs_likely(status == UCS_OK)) {
        ep->flags |= UCT_TCP_EP_FLAG_PUT_UNACKED;
    }
    return uct_tcp_ep_put_sent(ep, length, status);
}

ssize_t uct_tcp_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                             void *arg, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_tcp_ep_t *ep      = uct_tcp_ep(tl_ep);
    uct_tcp_put_hdr_t put = {remote_addr, rkey};
    ssize_t ret;

    ret = uct_tcp_ep_send_packed(ep, UCT_TCP_OP_PUT, &put, sizeof(put), pack_cb,
                                 arg, "put_bcopy packed");
    if (ret >= 0) {
        ep->flags |= UCT_TCP_EP_FLAG_PUT_UNACKED;
        uct_tcp_ep_put_sent(ep, ret, UCS_OK);
    } else {
        uct_tcp_ep_put_sent(ep, 0, (ucs_status_t)ret);
    }
    return ret;
}

ucs_status_t uct_tcp_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_put_hdr_t put  = {remote_addr, rkey};
    ucs_status_t status;
    size_t length;

    status = uct_iface_check_iovcnt(&iface->super, "put_zcopy", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    length = uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "put_zcopy", length,
                                    UCT_TCP_MAX_STREAM_MSG - sizeof(put));
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_ep_send_zcopy(ep, UCT_TCP_OP_PUT, &put, sizeof(put), iov,
                                   iovcnt, comp);
    if (!UCS_STATUS_IS_ERR(status)) {
        ep->flags |= UCT_TCP_EP_FLAG_PUT_UNACKED;
    }
    return uct_tcp_ep_put_sent(ep, length, status);
}

/* Sends a GET request; the response completes @a op in order. */
static ucs_status_t uct_tcp_ep_get_post(uct_tcp_ep_t *ep, uct_tcp_get_op_t *op,
                                        uint64_t remote_addr, uct_rkey_t rkey)
{
    struct {
        uct_tcp_hdr_t hdr;
        uct_tcp_get_req_t req;
    } msg;
    struct iovec iov;
    ucs_status_t status;

    uct_tcp_hdr_init(&msg.hdr, UCT_TCP_OP_GET_REQ, sizeof(msg.req), 0);
    msg.req.remote_addr = remote_addr;
    msg.req.length      = op->length;
    msg.req.rkey        = rkey;
    iov.iov_base        = &msg;
    iov.iov_len         = sizeof(msg);
    status              = uct_tcp_ep_sendv(ep, &iov, 1, sizeof(msg));
    if (status != UCS_OK) {
        ucs_mpool_put(op);
        return status;
    }

    /* the ext was made by uct_tcp_ep_get_op_start() */
    ep->ext->get_budget += uct_tcp_get_reply_cost(op->length);
    ucs_list_add_tail(&ep->ext->get_list, &op->list);
    /* the answer comes on this connection: progress reads it first (with
     * CONNECT_TO_IFACE the last data may have come on the other one) */
    if (ep->state == UCT_TCP_EP_CONNECTED) {
        uct_tcp_ep_iface(ep)->hot_ep = ep;
    }
    return UCS_INPROGRESS;
}

/* A GET of @a length bytes that may be posted now, or the status that
 * refuses it: a failed ep, or the reply budget (the peer would stop
 * reading us) used up until answers come. */
static ucs_status_t uct_tcp_ep_get_op_start(uct_tcp_ep_t *ep, size_t length,
                                            uct_completion_t *comp,
                                            uct_tcp_get_op_t **op_p)
{
    uct_tcp_ep_ext_t *ext;
    uct_tcp_get_op_t *op;
    ucs_status_t status;

    status = uct_tcp_ep_check_state(ep);
    if (status != UCS_OK) {
        return status;
    }
    ext = uct_tcp_ep_ext_get(ep);
    if (ext == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    if (ext->get_budget + uct_tcp_get_reply_cost(length) >
        UCT_TCP_REPLY_BUDGET) {
        return UCS_ERR_NO_RESOURCE;
    }
    op = ucs_mpool_get(&uct_tcp_ep_iface(ep)->op_mp);
    if (op == NULL) {
        ucs_error("tcp ep %p: out of memory for a GET", (void *)ep);
        return UCS_ERR_NO_MEMORY;
    }
    op->length = length;
    op->offset = 0;
    op->comp   = comp;
    *op_p      = op;
    return UCS_OK;
}

ucs_status_t uct_tcp_ep_get_bcopy(uct_ep_h tl_ep,
                                  uct_unpack_callback_t unpack_cb, void *arg,
                                  size_t length, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_get_op_t *op;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "get_bcopy", length,
                                    iface->config.max_am);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_ep_get_op_start(ep, length, comp, &op);
    if (status != UCS_OK) {
        return uct_tcp_ep_get_sent(ep, length, status);
    }
    op->unpack_cb = unpack_cb;
    op->arg       = arg;
    op->iovcnt    = 0;
    return uct_tcp_ep_get_sent(ep, length,
                               uct_tcp_ep_get_post(ep, op, remote_addr, rkey));
}

ucs_status_t uct_tcp_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_get_op_t *op;
    ucs_status_t status;
    size_t length;

    status = uct_iface_check_iovcnt(&iface->super, "get_zcopy", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    length = uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "get_zcopy", length,
                                    UCT_TCP_MAX_STREAM_MSG);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_ep_get_op_start(ep, length, comp, &op);
    if (status != UCS_OK) {
        return uct_tcp_ep_get_sent(ep, length, status);
    }
    op->unpack_cb = NULL;
    op->arg       = NULL;
    op->iovcnt    = iovcnt;
    memcpy(op->iov, iov, sizeof(*iov) * iovcnt);
    if (length == 0) {
        /* nothing to fetch; still ordered after what was sent before */
        op->iovcnt = 0;
    }
    return uct_tcp_ep_get_sent(ep, length,
                               uct_tcp_ep_get_post(ep, op, remote_addr, rkey));
}
