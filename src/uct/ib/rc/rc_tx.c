/*
 * rc_verbs send operations: active messages, RDMA write and read, atomics.
 * Each checks its resources, builds one work request on the stack and
 * posts it (see rc.h for sequence numbers, moderation and credits).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "rc.h"

#include <inttypes.h>
#include <string.h>

/* An object of @a mp (send descriptors, ops), or NULL (counted) */
static UCS_F_ALWAYS_INLINE uct_rc_op_t *
uct_rc_iface_get_op(uct_rc_iface_t *iface, ucs_mpool_t *mp)
{
    uct_rc_op_t *op = ucs_mpool_get(mp);

    if (ucs_unlikely(op == NULL)) {
        uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
    }
    return op;
}

/* A send descriptor for a request of @a ep, after the resources the
 * request needs (an AM credit too when @a am); NULL with the status */
static UCS_F_ALWAYS_INLINE uct_rc_op_t *
uct_rc_ep_tx_desc(uct_rc_iface_t *iface, uct_rc_ep_t *ep, int am,
                  ucs_status_t *status_p)
{
    uct_rc_op_t *desc;

    *status_p =
        am ? uct_rc_ep_am_check(iface, ep) : uct_rc_ep_tx_check(iface, ep);
    if (ucs_unlikely(*status_p != UCS_OK)) {
        return NULL;
    }
    desc = uct_rc_iface_get_op(iface, &iface->tx_mp);
    if (ucs_unlikely(desc == NULL)) {
        *status_p = UCS_ERR_NO_RESOURCE;
    }
    return desc;
}

/* Post @a wr (opcode, flags and remote part set) over
 * @a sge[0..num_sge-1]; @a op, when not NULL, runs when the request is
 * done, and goes back to its pool when the post fails */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_rc_ep_post_sge(
    uct_rc_iface_t *iface, uct_rc_ep_t *ep, struct ibv_send_wr *wr,
    struct ibv_sge *sge, int num_sge, int signal, uct_rc_op_t *op)
{
    ucs_status_t status;

    wr->sg_list = sge;
    wr->num_sge = num_sge;
    status      = uct_rc_ep_post(iface, ep, wr, signal, op);
    if (ucs_unlikely(status != UCS_OK) && (op != NULL)) {
        ucs_mpool_put(op);
    }
    return status;
}

/* An active message: a send, solicited so that it wakes a receiver that
 * sleeps */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_rc_ep_post_am(uct_rc_iface_t *iface, uct_rc_ep_t *ep, struct ibv_sge *sge,
                  int num_sge, unsigned send_flags, int signal, uct_rc_op_t *op)
{
    struct ibv_send_wr wr;

    wr.opcode     = IBV_WR_SEND;
    wr.send_flags = send_flags | IBV_SEND_SOLICITED;
    return uct_rc_ep_post_sge(iface, ep, &wr, sge, num_sge, signal, op);
}

/* An RDMA write or read of @a remote_addr (@a rkey) */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_rc_ep_post_rdma(
    uct_rc_iface_t *iface, uct_rc_ep_t *ep, enum ibv_wr_opcode opcode,
    unsigned send_flags, struct ibv_sge *sge, int num_sge, uint64_t remote_addr,
    uct_rkey_t rkey, int signal, uct_rc_op_t *op)
{
    struct ibv_send_wr wr;

    wr.opcode              = opcode;
    wr.send_flags          = send_flags;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey        = uct_ib_md_direct_rkey(rkey);
    return uct_rc_ep_post_sge(iface, ep, &wr, sge, num_sge, signal, op);
}

static UCS_F_ALWAYS_INLINE void uct_rc_ep_am_sent(uct_rc_iface_t *iface,
                                                  uct_rc_ep_t *ep, uint8_t id,
                                                  const void *data,
                                                  size_t length)
{
    --ep->fc_credits;
    uct_iface_stat_am_tx(&iface->super.super, id, length);
    if (ucs_unlikely(iface->super.super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super.super, UCT_AM_TRACE_TYPE_SEND, id,
                           data, length);
    }
}

/* ------------------------------------------------------------------------
 * Active messages
 */

ucs_status_t uct_rc_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct {
        uct_rc_hdr_t rc;
        uint64_t am;
    } UCS_S_PACKED hdr;
    struct ibv_sge sge[2];
    ucs_status_t status;

    status = uct_iface_check_am_id(&iface->super.super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super.super, "am_short", length,
                                    iface->config.max_inline - sizeof(hdr));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_rc_ep_am_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_rc_ep_fill_hdr(ep, &hdr.rc, id);
    hdr.am = header;
    uct_ib_sge_fill(&sge[0], &hdr, sizeof(hdr), 0);
    uct_ib_sge_fill(&sge[1], payload, length, 0);
    status = uct_rc_ep_post_am(iface, ep, sge, (length == 0) ? 1 : 2,
                               IBV_SEND_INLINE, 0, NULL);
    if (ucs_likely(status == UCS_OK)) {
        uct_rc_ep_am_sent(iface, ep, id, &hdr.am, sizeof(hdr.am) + length);
    }
    return status;
}

ucs_status_t uct_rc_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_sge sge[UCT_RC_MAX_IOV + 1];
    uct_rc_hdr_t hdr;
    ucs_status_t status;
    size_t i, n, total = 0;

    status = uct_iface_check_am_id(&iface->super.super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    /* the header takes an SGE: the device refuses more than the QP's
     * even inline */
    status = uct_iface_check_iovcnt(&iface->super.super, "am_short_iov", iovcnt,
                                    iface->config.max_iov - 1);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_ib_sge_fill(&sge[0], &hdr, sizeof(hdr), 0);
    for (i = 0, n = 1; i < iovcnt; ++i) {
        size_t len = uct_iov_total_length(&iov[i], 1);

        if ((len == 0) || (iov[i].count > 1)) {
            if (len != 0) {
                /* strided entries do not fit inline SGEs */
                return uct_iface_invalid_iovcnt(&iface->super.super,
                                                "am_short_iov (strided)",
                                                iov[i].count, 1);
            }
            continue;
        }
        uct_ib_sge_fill(&sge[n], iov[i].buffer, len, 0);
        total += len;
        ++n;
    }
    status = uct_iface_check_length(&iface->super.super, "am_short_iov", total,
                                    iface->config.max_inline - sizeof(hdr) -
                                        sizeof(uint64_t));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_rc_ep_am_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_rc_ep_fill_hdr(ep, &hdr, id);
    status =
        uct_rc_ep_post_am(iface, ep, sge, (int)n, IBV_SEND_INLINE, 0, NULL);
    if (ucs_likely(status == UCS_OK)) {
        uct_rc_ep_am_sent(iface, ep, id, (n > 1) ? (void *)sge[1].addr : NULL,
                          total);
    }
    return status;
}

ssize_t uct_rc_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                           uct_pack_callback_t pack_cb, void *arg,
                           unsigned flags)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_sge sge;
    uct_rc_op_t *desc;
    uct_rc_hdr_t *hdr;
    ucs_status_t status;
    size_t length;

    (void)flags;
    status = uct_iface_check_am_id(&iface->super.super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_ep_tx_desc(iface, ep, 1, &status);
    if (ucs_unlikely(desc == NULL)) {
        return status;
    }

    hdr    = uct_rc_desc_buf(desc);
    length = pack_cb(hdr + 1, arg);
    if (ucs_unlikely(length > iface->config.seg_size)) {
        ucs_mpool_put(desc);
        return uct_iface_invalid_length(&iface->super.super, "am_bcopy", length,
                                        iface->config.seg_size);
    }

    uct_rc_ep_fill_hdr(ep, hdr, id);
    desc->handler = uct_rc_op_release;
    desc->comp    = NULL;
    uct_ib_sge_fill(&sge, hdr, sizeof(*hdr) + length, desc->lkey);
    status = uct_rc_ep_post_am(iface, ep, &sge, 1, 0, 0, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    uct_rc_ep_am_sent(iface, ep, id, hdr + 1, length);
    return (ssize_t)length;
}

ucs_status_t uct_rc_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                unsigned header_length, const uct_iov_t *iov,
                                size_t iovcnt, unsigned flags,
                                uct_completion_t *comp)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_sge sge[UCT_RC_MAX_IOV + 1];
    uct_rc_op_t *desc;
    uct_rc_hdr_t *hdr;
    ucs_status_t status;
    size_t length;
    int n;

    (void)flags;
    status = uct_ib_iface_check_am_zcopy(&iface->super, id, header_length,
                                         iovcnt, iface->config.max_iov - 1,
                                         UCT_RC_MAX_AM_HDR);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    n = uct_ib_iov_to_sge(iov, iovcnt, &sge[1], iface->config.max_iov - 1,
                          &length);
    if (ucs_unlikely(n < 0)) {
        return uct_ib_iface_too_many_sges(&iface->super, "am_zcopy",
                                          iface->config.max_iov - 1);
    }
    status =
        uct_iface_check_length(&iface->super.super, "am_zcopy",
                               header_length + length, iface->config.seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_ep_tx_desc(iface, ep, 1, &status);
    if (ucs_unlikely(desc == NULL)) {
        return status;
    }

    hdr = uct_rc_desc_buf(desc);
    uct_rc_ep_fill_hdr(ep, hdr, id);
    memcpy(hdr + 1, header, header_length);
    desc->handler = uct_rc_op_complete;
    desc->comp    = comp;
    uct_ib_sge_fill(&sge[0], hdr, sizeof(*hdr) + header_length, desc->lkey);
    status = uct_rc_ep_post_am(iface, ep, sge, n + 1, 0, 1, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    uct_rc_ep_am_sent(iface, ep, id, header, header_length + length);
    return UCS_INPROGRESS;
}

/* ------------------------------------------------------------------------
 * RDMA write and read
 */

ucs_status_t uct_rc_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_sge sge;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super.super, "put_short", length,
                                    iface->config.max_inline);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_rc_ep_tx_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_ib_sge_fill(&sge, buffer, length, 0);
    status = uct_rc_ep_post_rdma(iface, ep, IBV_WR_RDMA_WRITE, IBV_SEND_INLINE,
                                 &sge, 1, remote_addr, rkey, 0, NULL);
    if (ucs_likely(status == UCS_OK)) {
        uct_iface_stat_put(&iface->super.super, length);
    }
    return status;
}

ssize_t uct_rc_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_sge sge;
    uct_rc_op_t *desc;
    ucs_status_t status;
    size_t length;

    desc = uct_rc_ep_tx_desc(iface, ep, 0, &status);
    if (ucs_unlikely(desc == NULL)) {
        return status;
    }

    length = pack_cb(uct_rc_desc_buf(desc), arg);
    if (ucs_unlikely(length > iface->config.seg_size)) {
        ucs_mpool_put(desc);
        return uct_iface_invalid_length(&iface->super.super, "put_bcopy",
                                        length, iface->config.seg_size);
    }

    desc->handler = uct_rc_op_release;
    desc->comp    = NULL;
    uct_ib_sge_fill(&sge, uct_rc_desc_buf(desc), length, desc->lkey);
    status = uct_rc_ep_post_rdma(iface, ep, IBV_WR_RDMA_WRITE, 0, &sge, 1,
                                 remote_addr, rkey, 0, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    uct_iface_stat_put(&iface->super.super, length);
    return (ssize_t)length;
}

ucs_status_t uct_rc_ep_get_bcopy(uct_ep_h tl_ep,
                                 uct_unpack_callback_t unpack_cb, void *arg,
                                 size_t length, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_sge sge;
    uct_rc_op_t *desc;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super.super, "get_bcopy", length,
                                    iface->config.seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_ep_tx_desc(iface, ep, 0, &status);
    if (ucs_unlikely(desc == NULL)) {
        return status;
    }

    desc->handler      = uct_rc_op_get_bcopy_done;
    desc->comp         = comp;
    desc->u.get.cb     = unpack_cb;
    desc->u.get.arg    = arg;
    desc->u.get.length = length;
    uct_ib_sge_fill(&sge, uct_rc_desc_buf(desc), length, desc->lkey);
    status = uct_rc_ep_post_rdma(iface, ep, IBV_WR_RDMA_READ, 0, &sge, 1,
                                 remote_addr, rkey, 1, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    uct_iface_stat_get(&iface->super.super, length);
    return UCS_INPROGRESS;
}

/* An RDMA write or read of a zcopy iov */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_rc_ep_rdma_zcopy(
    uct_ep_h tl_ep, const char *what, enum ibv_wr_opcode opcode,
    const uct_iov_t *iov, size_t iovcnt, uint64_t remote_addr, uct_rkey_t rkey,
    uct_completion_t *comp)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_sge sge[UCT_RC_MAX_IOV];
    ucs_status_t status;
    uct_rc_op_t *op;
    size_t length;
    int n;

    status = uct_iface_check_iovcnt(&iface->super.super, what, iovcnt,
                                    iface->config.max_iov);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_rc_ep_tx_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    n = uct_ib_iov_to_sge(iov, iovcnt, sge, iface->config.max_iov, &length);
    if (ucs_unlikely(n < 0)) {
        return uct_ib_iface_too_many_sges(&iface->super, what,
                                          iface->config.max_iov);
    }
    op = uct_rc_iface_get_op(iface, &iface->op_mp);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_RESOURCE;
    }

    op->handler = uct_rc_op_complete;
    op->comp    = comp;
    status      = uct_rc_ep_post_rdma(iface, ep, opcode, 0, sge, n, remote_addr,
                                      rkey, 1, op);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    if (opcode == IBV_WR_RDMA_WRITE) {
        uct_iface_stat_put(&iface->super.super, length);
    } else {
        uct_iface_stat_get(&iface->super.super, length);
    }
    return UCS_INPROGRESS;
}

ucs_status_t uct_rc_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    return uct_rc_ep_rdma_zcopy(tl_ep, "put_zcopy", IBV_WR_RDMA_WRITE, iov,
                                iovcnt, remote_addr, rkey, comp);
}

ucs_status_t uct_rc_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    return uct_rc_ep_rdma_zcopy(tl_ep, "get_zcopy", IBV_WR_RDMA_READ, iov,
                                iovcnt, remote_addr, rkey, comp);
}

/* ------------------------------------------------------------------------
 * Atomics: the device's 64-bit fetch-add and compare-swap. The 8 bytes the
 * device returns land in a send descriptor; a fetching call copies them to
 * the user's result when the request is done.
 */

static ucs_status_t uct_rc_ep_atomic(uct_rc_ep_t *ep, enum ibv_wr_opcode opcode,
                                     uint64_t compare_add, uint64_t swap,
                                     uint64_t remote_addr, uct_rkey_t rkey,
                                     void *result, uct_completion_t *comp)
{
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    uct_rc_op_t *desc;
    ucs_status_t status;

    if (ucs_unlikely((remote_addr % sizeof(uint64_t)) != 0)) {
        ucs_error(
            "rc_verbs ep %p: atomic on unaligned remote address 0x%" PRIx64
            "; it must be a multiple of 8",
            (void *)ep, remote_addr);
        return UCS_ERR_INVALID_PARAM;
    }
    desc = uct_rc_ep_tx_desc(iface, ep, 0, &status);
    if (ucs_unlikely(desc == NULL)) {
        return status;
    }

    desc->handler =
        (result != NULL) ? uct_rc_op_atomic_done : uct_rc_op_release;
    desc->comp               = comp;
    desc->u.atomic.result    = result;
    wr.opcode                = opcode;
    wr.send_flags            = 0;
    wr.wr.atomic.remote_addr = remote_addr;
    wr.wr.atomic.rkey        = uct_ib_md_direct_rkey(rkey);
    wr.wr.atomic.compare_add = compare_add;
    wr.wr.atomic.swap        = swap;
    uct_ib_sge_fill(&sge, uct_rc_desc_buf(desc), sizeof(uint64_t), desc->lkey);
    status = uct_rc_ep_post_sge(iface, ep, &wr, &sge, 1, result != NULL, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    return (result != NULL) ? UCS_INPROGRESS : UCS_OK;
}

/* atomic64_post (@a result NULL) and atomic64_fetch: fetch-add only */
static ucs_status_t uct_rc_ep_atomic_add(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                         uint64_t value, uint64_t remote_addr,
                                         uct_rkey_t rkey, uint64_t *result,
                                         uct_completion_t *comp)
{
    if (opcode != UCT_ATOMIC_OP_ADD) {
        ucs_error("rc_verbs: atomic64_%s supports UCT_ATOMIC_OP_ADD only "
                  "(got %d); see the iface's cap.atomic64.%s",
                  (result != NULL) ? "fetch" : "post", opcode,
                  (result != NULL) ? "fop_flags" : "op_flags");
        return UCS_ERR_UNSUPPORTED;
    }
    return uct_rc_ep_atomic(uct_rc_ep(tl_ep), IBV_WR_ATOMIC_FETCH_AND_ADD,
                            value, 0, remote_addr, rkey, result, comp);
}

ucs_status_t uct_rc_ep_atomic64_post(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                     uint64_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    return uct_rc_ep_atomic_add(tl_ep, opcode, value, remote_addr, rkey, NULL,
                                NULL);
}

ucs_status_t uct_rc_ep_atomic64_fetch(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                      uint64_t value, uint64_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp)
{
    return uct_rc_ep_atomic_add(tl_ep, opcode, value, remote_addr, rkey, result,
                                comp);
}

ucs_status_t uct_rc_ep_atomic_cswap64(uct_ep_h tl_ep, uint64_t compare,
                                      uint64_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint64_t *result,
                                      uct_completion_t *comp)
{
    return uct_rc_ep_atomic(uct_rc_ep(tl_ep), IBV_WR_ATOMIC_CMP_AND_SWP,
                            compare, swap, remote_addr, rkey, result, comp);
}
