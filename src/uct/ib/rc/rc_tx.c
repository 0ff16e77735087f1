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

/* A send descriptor from the registered pool, or NULL (counted) */
static UCS_F_ALWAYS_INLINE uct_rc_op_t *
uct_rc_iface_get_desc(uct_rc_iface_t *iface)
{
    uct_rc_op_t *desc = ucs_mpool_get(&iface->tx_mp);

    if (ucs_unlikely(desc == NULL)) {
        uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
    }
    return desc;
}

/* An op without a buffer, or NULL (counted) */
static UCS_F_ALWAYS_INLINE uct_rc_op_t *
uct_rc_iface_get_op(uct_rc_iface_t *iface)
{
    uct_rc_op_t *op = ucs_mpool_get(&iface->op_mp);

    if (ucs_unlikely(op == NULL)) {
        uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
    }
    return op;
}

/* Fills at most @a max SGEs from a zcopy iov (memh of the ib md: its
 * lkey) and sets the total length. An entry of count > 1 takes one SGE per
 * element, @a stride apart. Entries of length 0 are skipped. Returns the
 * SGE count, or -1 when @a max SGEs do not suffice. */
static UCS_F_ALWAYS_INLINE int uct_rc_iov_to_sge(const uct_iov_t *iov,
                                                 size_t iovcnt,
                                                 struct ibv_sge *sge,
                                                 size_t max, size_t *length_p)
{
    size_t i, c, n = 0, total = 0;
    const uct_ib_mem_t *memh;

    for (i = 0; i < iovcnt; ++i) {
        if ((iov[i].length == 0) || (iov[i].count == 0)) {
            continue;
        }
        memh = iov[i].memh;
        for (c = 0; c < iov[i].count; ++c) {
            if (n == max) {
                return -1;
            }
            sge[n].addr = (uintptr_t)iov[i].buffer +
                          (c * ((iov[i].count > 1) ? iov[i].stride : 0));
            sge[n].length = (uint32_t)iov[i].length;
            sge[n].lkey   = (memh != NULL) ? memh->lkey : 0;
            total += iov[i].length;
            ++n;
        }
    }
    *length_p = total;
    return (int)n;
}

/* A strided iov that needs more SGEs than the QP has */
static ucs_status_t uct_rc_iov_too_many_sges(uct_rc_iface_t *iface,
                                             const char *what)
{
    /* a capability limit, not a bad argument: the caller may fall back */
    ucs_diag("rc_verbs %s: %s: the iov's strided entries need more than %u "
             "SGEs; pass fewer elements per call",
             iface->super.super.dev_name, what, iface->config.max_iov);
    return UCS_ERR_UNSUPPORTED;
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
    struct ibv_send_wr wr;
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
    hdr.am        = header;
    sge[0].addr   = (uintptr_t)&hdr;
    sge[0].length = sizeof(hdr);
    sge[0].lkey   = 0;
    sge[1].addr   = (uintptr_t)payload;
    sge[1].length = length;
    sge[1].lkey   = 0;
    wr.sg_list    = sge;
    wr.num_sge    = (length == 0) ? 1 : 2;
    wr.opcode     = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SOLICITED;

    status = uct_rc_ep_post(iface, ep, &wr, 0, NULL);
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
    struct ibv_send_wr wr;
    uct_rc_hdr_t hdr;
    ucs_status_t status;
    size_t i, n, total = 0;

    status = uct_iface_check_am_id(&iface->super.super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super.super, "am_short_iov", iovcnt,
                                    UCT_RC_MAX_IOV);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    sge[0].addr   = (uintptr_t)&hdr;
    sge[0].length = sizeof(hdr);
    sge[0].lkey   = 0;
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
        sge[n].addr   = (uintptr_t)iov[i].buffer;
        sge[n].length = (uint32_t)len;
        sge[n].lkey   = 0;
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
    wr.sg_list    = sge;
    wr.num_sge    = (int)n;
    wr.opcode     = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SOLICITED;
    status        = uct_rc_ep_post(iface, ep, &wr, 0, NULL);
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
    struct ibv_send_wr wr;
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
    status = uct_rc_ep_am_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_iface_get_desc(iface);
    if (ucs_unlikely(desc == NULL)) {
        return UCS_ERR_NO_RESOURCE;
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
    sge.addr      = (uintptr_t)hdr;
    sge.length    = (uint32_t)(sizeof(*hdr) + length);
    sge.lkey      = desc->lkey;
    wr.sg_list    = &sge;
    wr.num_sge    = 1;
    wr.opcode     = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SOLICITED;
    status        = uct_rc_ep_post(iface, ep, &wr, 0, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put(desc);
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
    struct ibv_send_wr wr;
    uct_rc_op_t *desc;
    uct_rc_hdr_t *hdr;
    ucs_status_t status;
    size_t length;
    int n;

    (void)flags;
    status = uct_iface_check_am_id(&iface->super.super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super.super, "am_zcopy", iovcnt,
                                    iface->config.max_iov - 1);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super.super, "am_zcopy header",
                                    header_length, UCT_RC_MAX_AM_HDR);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    n = uct_rc_iov_to_sge(iov, iovcnt, &sge[1], iface->config.max_iov - 1,
                          &length);
    if (ucs_unlikely(n < 0)) {
        return uct_rc_iov_too_many_sges(iface, "am_zcopy");
    }
    status =
        uct_iface_check_length(&iface->super.super, "am_zcopy",
                               header_length + length, iface->config.seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_rc_ep_am_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_iface_get_desc(iface);
    if (ucs_unlikely(desc == NULL)) {
        return UCS_ERR_NO_RESOURCE;
    }

    hdr = uct_rc_desc_buf(desc);
    uct_rc_ep_fill_hdr(ep, hdr, id);
    memcpy(hdr + 1, header, header_length);
    desc->handler = uct_rc_op_complete;
    desc->comp    = comp;
    sge[0].addr   = (uintptr_t)hdr;
    sge[0].length = (uint32_t)(sizeof(*hdr) + header_length);
    sge[0].lkey   = desc->lkey;
    wr.sg_list    = sge;
    wr.num_sge    = n + 1;
    wr.opcode     = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SOLICITED;
    status        = uct_rc_ep_post(iface, ep, &wr, 1, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put(desc);
        return status;
    }
    uct_rc_ep_am_sent(iface, ep, id, header, header_length + length);
    return UCS_INPROGRESS;
}

/* ------------------------------------------------------------------------
 * RDMA write
 */

ucs_status_t uct_rc_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_send_wr wr;
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

    sge.addr               = (uintptr_t)buffer;
    sge.length             = length;
    sge.lkey               = 0;
    wr.sg_list             = &sge;
    wr.num_sge             = 1;
    wr.opcode              = IBV_WR_RDMA_WRITE;
    wr.send_flags          = IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey        = uct_ib_md_direct_rkey(rkey);
    status                 = uct_rc_ep_post(iface, ep, &wr, 0, NULL);
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
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    uct_rc_op_t *desc;
    ucs_status_t status;
    size_t length;

    status = uct_rc_ep_tx_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_iface_get_desc(iface);
    if (ucs_unlikely(desc == NULL)) {
        return UCS_ERR_NO_RESOURCE;
    }

    length = pack_cb(uct_rc_desc_buf(desc), arg);
    if (ucs_unlikely(length > iface->config.seg_size)) {
        ucs_mpool_put(desc);
        return uct_iface_invalid_length(&iface->super.super, "put_bcopy",
                                        length, iface->config.seg_size);
    }

    desc->handler          = uct_rc_op_release;
    desc->comp             = NULL;
    sge.addr               = (uintptr_t)uct_rc_desc_buf(desc);
    sge.length             = (uint32_t)length;
    sge.lkey               = desc->lkey;
    wr.sg_list             = &sge;
    wr.num_sge             = 1;
    wr.opcode              = IBV_WR_RDMA_WRITE;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey        = uct_ib_md_direct_rkey(rkey);
    status                 = uct_rc_ep_post(iface, ep, &wr, 0, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put(desc);
        return status;
    }
    uct_iface_stat_put(&iface->super.super, length);
    return (ssize_t)length;
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
    struct ibv_send_wr wr;
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
    n = uct_rc_iov_to_sge(iov, iovcnt, sge, iface->config.max_iov, &length);
    if (ucs_unlikely(n < 0)) {
        return uct_rc_iov_too_many_sges(iface, what);
    }
    op = uct_rc_iface_get_op(iface);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_RESOURCE;
    }

    op->handler            = uct_rc_op_complete;
    op->comp               = comp;
    wr.sg_list             = sge;
    wr.num_sge             = n;
    wr.opcode              = opcode;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey        = uct_ib_md_direct_rkey(rkey);
    status                 = uct_rc_ep_post(iface, ep, &wr, 1, op);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put(op);
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

/* ------------------------------------------------------------------------
 * RDMA read
 */

ucs_status_t uct_rc_ep_get_bcopy(uct_ep_h tl_ep,
                                 uct_unpack_callback_t unpack_cb, void *arg,
                                 size_t length, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    uct_rc_op_t *desc;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super.super, "get_bcopy", length,
                                    iface->config.seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_rc_ep_tx_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_iface_get_desc(iface);
    if (ucs_unlikely(desc == NULL)) {
        return UCS_ERR_NO_RESOURCE;
    }

    desc->handler          = uct_rc_op_get_bcopy_done;
    desc->comp             = comp;
    desc->u.get.cb         = unpack_cb;
    desc->u.get.arg        = arg;
    desc->u.get.length     = length;
    sge.addr               = (uintptr_t)uct_rc_desc_buf(desc);
    sge.length             = (uint32_t)length;
    sge.lkey               = desc->lkey;
    wr.sg_list             = &sge;
    wr.num_sge             = 1;
    wr.opcode              = IBV_WR_RDMA_READ;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey        = uct_ib_md_direct_rkey(rkey);
    status                 = uct_rc_ep_post(iface, ep, &wr, 1, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put(desc);
        return status;
    }
    uct_iface_stat_get(&iface->super.super, length);
    return UCS_INPROGRESS;
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
    status = uct_rc_ep_tx_check(iface, ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    desc = uct_rc_iface_get_desc(iface);
    if (ucs_unlikely(desc == NULL)) {
        return UCS_ERR_NO_RESOURCE;
    }

    desc->handler =
        (result != NULL) ? uct_rc_op_atomic_done : uct_rc_op_release;
    desc->comp               = comp;
    desc->u.atomic.result    = result;
    sge.addr                 = (uintptr_t)uct_rc_desc_buf(desc);
    sge.length               = sizeof(uint64_t);
    sge.lkey                 = desc->lkey;
    wr.sg_list               = &sge;
    wr.num_sge               = 1;
    wr.opcode                = opcode;
    wr.send_flags            = 0;
    wr.wr.atomic.remote_addr = remote_addr;
    wr.wr.atomic.rkey        = uct_ib_md_direct_rkey(rkey);
    wr.wr.atomic.compare_add = compare_add;
    wr.wr.atomic.swap        = swap;
    status = uct_rc_ep_post(iface, ep, &wr, result != NULL, desc);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put(desc);
        return status;
    }
    return (result != NULL) ? UCS_INPROGRESS : UCS_OK;
}

ucs_status_t uct_rc_ep_atomic64_post(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                     uint64_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    if (opcode != UCT_ATOMIC_OP_ADD) {
        ucs_error("rc_verbs: atomic64_post supports UCT_ATOMIC_OP_ADD only "
                  "(got %d); see the iface's cap.atomic64.op_flags",
                  opcode);
        return UCS_ERR_UNSUPPORTED;
    }
    return uct_rc_ep_atomic(uct_rc_ep(tl_ep), IBV_WR_ATOMIC_FETCH_AND_ADD,
                            value, 0, remote_addr, rkey, NULL, NULL);
}

ucs_status_t uct_rc_ep_atomic64_fetch(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                      uint64_t value, uint64_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp)
{
    if (opcode != UCT_ATOMIC_OP_ADD) {
        ucs_error("rc_verbs: atomic64_fetch supports UCT_ATOMIC_OP_ADD only "
                  "(got %d); see the iface's cap.atomic64.fop_flags",
                  opcode);
        return UCS_ERR_UNSUPPORTED;
    }
    return uct_rc_ep_atomic(uct_rc_ep(tl_ep), IBV_WR_ATOMIC_FETCH_AND_ADD,
                            value, 0, remote_addr, rkey, result, comp);
}

ucs_status_t uct_rc_ep_atomic_cswap64(uct_ep_h tl_ep, uint64_t compare,
                                      uint64_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint64_t *result,
                                      uct_completion_t *comp)
{
    return uct_rc_ep_atomic(uct_rc_ep(tl_ep), IBV_WR_ATOMIC_CMP_AND_SWP,
                            compare, swap, remote_addr, rkey, result, comp);
}
