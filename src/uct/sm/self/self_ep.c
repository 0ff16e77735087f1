/*
 * self endpoints: active messages, RMA and atomics, all completed inside
 * the call. AM handlers of the receiving interface run from the sender's
 * call; RMA and atomics act on the (local) remote address directly.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "self.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static ucs_status_t uct_self_ep_unreachable(uct_self_ep_t *ep)
{
    ucs_error("self ep %p: the receiving interface was closed; destroy "
              "the endpoint",
              (void *)ep);
    ep->last_error = UCS_ERR_UNREACHABLE;
    uct_iface_stat_tx_error(&uct_self_ep_iface(ep)->super, UCS_ERR_UNREACHABLE);
    return UCS_ERR_UNREACHABLE;
}

/* The receiver's pool is empty: the caller retries later */
static ucs_status_t uct_self_ep_no_desc(uct_self_iface_t *iface)
{
    uct_iface_stat_tx_error(&iface->super, UCS_ERR_NO_RESOURCE);
    return UCS_ERR_NO_RESOURCE;
}

/* The data pointer of a descriptor object. */
static inline void *uct_self_desc_data(uct_self_iface_t *iface, void *obj)
{
    return uct_rx_desc_payload(&iface->rx_layout, obj);
}

/* Delivers a descriptor-held message; returns it to the pool unless the
 * handler kept it. */
static inline void uct_self_deliver_desc(uct_self_iface_t *peer, uint8_t id,
                                         void *obj, size_t length)
{
    void *data = uct_self_desc_data(peer, obj);
    ucs_status_t status;

    status = uct_iface_invoke_am(&peer->super, id, data, length,
                                 UCT_CB_PARAM_FLAG_DESC);
    uct_self_iface_delivered(peer, id, data, length);
    if (status != UCS_INPROGRESS) {
        ucs_mpool_put(obj);
    }
}

/* ------------------------------------------------------------------------
 * Active messages
 */

/* Messages up to this size are built in a fixed, cache-line aligned stack
 * buffer: no variable-size stack frame on the common path */
#define UCT_SELF_SMALL_MSG 64

/* The stack of a call is aligned to 16 bytes at no cost: a peer that asks
 * for no more alignment than that takes the fast path of am_short */
#define UCT_SELF_FAST_ALIGN 16

static UCS_F_NOINLINE void uct_self_am_short_large(uct_self_iface_t *peer,
                                                   uint8_t id, uint64_t header,
                                                   const void *payload,
                                                   unsigned length)
{
    size_t total = sizeof(header) + length;
    char buffer[total + peer->super.am_alignment];
    char *data;

    data = (char *)ucs_align_up_pow2((uintptr_t)buffer +
                                         peer->super.am_align_offset,
                                     peer->super.am_alignment) -
           peer->super.am_align_offset;
    memcpy(data, &header, sizeof(header));
    if (length > 0) {
        memcpy(data + sizeof(header), payload, length);
    }
    uct_iface_invoke_am(&peer->super, id, data, total, 0);
    uct_self_iface_delivered(peer, id, data, total);
}

/* The checked path: any id, length, alignment, a closed peer, a tracer or
 * an armed event fd. @a count: update the counters (a constant: the
 * compiler keeps one of the two paths in each caller) */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_self_ep_am_short_common(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                            const void *payload, unsigned length, int count)
{
    uct_self_ep_t *ep       = uct_self_ep(tl_ep);
    uct_self_iface_t *iface = uct_self_ep_iface(ep);
    uct_self_iface_t *peer  = ep->peer;
    char buffer[UCT_SELF_SMALL_MSG] UCS_V_ALIGNED(UCS_CACHE_LINE_SIZE);
    ucs_status_t status;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_short", length,
                                    iface->seg_size - sizeof(header));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    if (ucs_unlikely(peer == NULL)) {
        return uct_self_ep_unreachable(ep);
    }

    if (ucs_unlikely((sizeof(header) + length > UCT_SELF_SMALL_MSG) ||
                     (peer->super.am_align_offset != 0) ||
                     (peer->super.am_alignment > UCS_CACHE_LINE_SIZE))) {
        if (count) {
            uct_iface_stat_am_tx(&iface->super, id, sizeof(header) + length);
        }
        uct_self_am_short_large(peer, id, header, payload, length);
        return UCS_OK;
    }

    memcpy(buffer, &header, sizeof(header));
    if (length > 0) {
        memcpy(buffer + sizeof(header), payload, length);
    }
    if (count) {
        uct_iface_stat_am_tx(&iface->super, id, sizeof(header) + length);
        uct_iface_invoke_am(&peer->super, id, buffer, sizeof(header) + length,
                            0);
    } else {
        uct_iface_invoke_am_uncounted(&peer->super, id, buffer,
                                      sizeof(header) + length, 0);
    }
    uct_self_iface_delivered(peer, id, buffer, sizeof(header) + length);
    return UCS_OK;
}

static UCS_F_NOINLINE ucs_status_t
uct_self_ep_am_short_checked(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                             const void *payload, unsigned length)
{
    return uct_self_ep_am_short_common(tl_ep, id, header, payload, length, 1);
}

static UCS_F_NOINLINE ucs_status_t uct_self_ep_am_short_checked_uncounted(
    uct_ep_h tl_ep, uint8_t id, uint64_t header, const void *payload,
    unsigned length)
{
    return uct_self_ep_am_short_common(tl_ep, id, header, payload, length, 0);
}

/* The fast path of a message with a payload: copied behind the header
 * here, so that a header-only message needs no buffer and no register
 * across a call */
static UCS_F_NOINLINE void
uct_self_am_short_payload(uct_self_iface_t *peer, uint8_t id, uint64_t header,
                          const void *payload, unsigned length, int count)
{
    uint64_t buffer[UCT_SELF_SMALL_MSG / sizeof(uint64_t)] UCS_V_ALIGNED(
        UCT_SELF_FAST_ALIGN);

    buffer[0] = header;
    memcpy(&buffer[1], payload, length);
    if (count) {
        uct_iface_invoke_am(&peer->super, id, buffer, sizeof(header) + length,
                            0);
    } else {
        uct_iface_invoke_am_uncounted(&peer->super, id, buffer,
                                      sizeof(header) + length, 0);
    }
}

/*
 * The common case in a handful of instructions: ep->short_max says at
 * once that the peer is open, the length fits and a 16-byte aligned
 * stack buffer suits the peer's alignment; with no tracer and no armed
 * event fd on the peer nothing is left to do after the handler. Anything
 * else takes the checked path, which also reports the errors.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_self_ep_am_short_fast(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                          const void *payload, unsigned length, int count)
{
    uct_self_ep_t *ep      = uct_self_ep(tl_ep);
    uct_self_iface_t *peer = ep->peer;
    uint64_t buffer UCS_V_ALIGNED(UCT_SELF_FAST_ALIGN);

    if (ucs_unlikely((id >= UCT_AM_ID_MAX) ||
                     ((int64_t)length > ep->short_max) ||
                     (peer->super.am_tracer != NULL) || peer->armed)) {
        return count ? uct_self_ep_am_short_checked(tl_ep, id, header, payload,
                                                    length)
                     : uct_self_ep_am_short_checked_uncounted(tl_ep, id, header,
                                                              payload, length);
    }

    if (count) {
        uct_iface_stat_am_tx(&uct_self_ep_iface(ep)->super, id,
                             sizeof(header) + length);
    }
    if (length > 0) {
        uct_self_am_short_payload(peer, id, header, payload, length, count);
    } else if (count) {
        buffer = header;
        uct_iface_invoke_am(&peer->super, id, &buffer, sizeof(header), 0);
    } else {
        buffer = header;
        uct_iface_invoke_am_uncounted(&peer->super, id, &buffer, sizeof(header),
                                      0);
    }
    return UCS_OK;
}

ucs_status_t uct_self_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                  const void *payload, unsigned length)
{
    return uct_self_ep_am_short_fast(tl_ep, id, header, payload, length, 1);
}

ucs_status_t uct_self_ep_am_short_uncounted(uct_ep_h tl_ep, uint8_t id,
                                            uint64_t header,
                                            const void *payload,
                                            unsigned length)
{
    return uct_self_ep_am_short_fast(tl_ep, id, header, payload, length, 0);
}

ucs_status_t uct_self_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                      const uct_iov_t *iov, size_t iovcnt)
{
    uct_self_ep_t *ep       = uct_self_ep(tl_ep);
    uct_self_iface_t *iface = uct_self_ep_iface(ep);
    uct_self_iface_t *peer  = ep->peer;
    size_t total;
    ucs_status_t status;
    char *data;

    status = uct_iface_check_am_id(&iface->super, id);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super, "am_short_iov", iovcnt,
                                    UCT_SELF_MAX_IOV);
    if (status != UCS_OK) {
        return status;
    }
    total  = uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "am_short_iov", total,
                                    iface->seg_size - sizeof(uint64_t));
    if (status != UCS_OK) {
        return status;
    }
    if (peer == NULL) {
        return uct_self_ep_unreachable(ep);
    }

    uct_iface_stat_am_tx(&iface->super, id, total);
    {
        char buffer[total + peer->super.am_alignment];

        data = (char *)ucs_align_up_pow2((uintptr_t)buffer +
                                             peer->super.am_align_offset,
                                         peer->super.am_alignment) -
               peer->super.am_align_offset;
        uct_iov_to_buffer(iov, iovcnt, data);
        uct_iface_invoke_am(&peer->super, id, data, total, 0);
        uct_self_iface_delivered(peer, id, data, total);
    }
    return UCS_OK;
}

ssize_t uct_self_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                             uct_pack_callback_t pack_cb, void *arg,
                             unsigned flags)
{
    uct_self_ep_t *ep       = uct_self_ep(tl_ep);
    uct_self_iface_t *iface = uct_self_ep_iface(ep);
    uct_self_iface_t *peer  = ep->peer;
    ucs_status_t status;
    size_t length;
    void *obj;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    if (ucs_unlikely(peer == NULL)) {
        return uct_self_ep_unreachable(ep);
    }

    obj = ucs_mpool_get(&peer->msg_mp);
    if (ucs_unlikely(obj == NULL)) {
        return uct_self_ep_no_desc(iface);
    }

    length = pack_cb(uct_self_desc_data(peer, obj), arg);
    if (ucs_unlikely(length > iface->seg_size)) {
        ucs_mpool_put(obj);
        return uct_iface_invalid_length(&iface->super, "am_bcopy packed",
                                        length, iface->seg_size);
    }

    uct_iface_stat_am_tx(&iface->super, id, length);
    uct_self_deliver_desc(peer, id, obj, length);
    return length;
}

ucs_status_t uct_self_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                  const void *header, unsigned header_length,
                                  const uct_iov_t *iov, size_t iovcnt,
                                  unsigned flags, uct_completion_t *comp)
{
    uct_self_ep_t *ep       = uct_self_ep(tl_ep);
    uct_self_iface_t *iface = uct_self_ep_iface(ep);
    uct_self_iface_t *peer  = ep->peer;
    ucs_status_t status;
    size_t total;
    char *data;
    void *obj;

    status = uct_iface_check_am_id(&iface->super, id);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super, "am_zcopy", iovcnt,
                                    UCT_SELF_MAX_IOV);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_zcopy header",
                                    header_length, iface->seg_size);
    if (status != UCS_OK) {
        return status;
    }
    total  = header_length + uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "am_zcopy", total,
                                    iface->seg_size);
    if (status != UCS_OK) {
        return status;
    }
    if (peer == NULL) {
        return uct_self_ep_unreachable(ep);
    }

    obj = ucs_mpool_get(&peer->msg_mp);
    if (obj == NULL) {
        return uct_self_ep_no_desc(iface);
    }

    data = uct_self_desc_data(peer, obj);
    if (header_length > 0) {
        memcpy(data, header, header_length);
    }
    uct_iov_to_buffer(iov, iovcnt, data + header_length);
    uct_iface_stat_am_tx(&iface->super, id, total);
    uct_self_deliver_desc(peer, id, obj, total);
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * RMA: the remote address is a local pointer
 */

ucs_status_t uct_self_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                   unsigned length, uint64_t remote_addr,
                                   uct_rkey_t rkey)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "put_short", length,
                                    iface->seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    uct_iface_stat_put(&iface->super, length);
    memcpy((void *)(uintptr_t)remote_addr, buffer, length);
    return UCS_OK;
}

ssize_t uct_self_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                              void *arg, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    size_t length;

    /* Pack straight into the target: it is local memory */
    length = pack_cb((void *)(uintptr_t)remote_addr, arg);
    uct_iface_stat_put(&iface->super, length);
    return length;
}

ucs_status_t uct_self_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                   size_t iovcnt, uint64_t remote_addr,
                                   uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_iovcnt(&iface->super, "put_zcopy", iovcnt,
                                    UCT_SELF_MAX_IOV);
    if (status != UCS_OK) {
        return status;
    }
    uct_iface_stat_put(
        &iface->super,
        uct_iov_to_buffer(iov, iovcnt, (void *)(uintptr_t)remote_addr));
    return UCS_OK;
}

ucs_status_t uct_self_ep_get_short(uct_ep_h tl_ep, void *buffer,
                                   unsigned length, uint64_t remote_addr,
                                   uct_rkey_t rkey)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "get_short", length,
                                    iface->seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    uct_iface_stat_get(&iface->super, length);
    memcpy(buffer, (const void *)(uintptr_t)remote_addr, length);
    return UCS_OK;
}

ucs_status_t uct_self_ep_get_bcopy(uct_ep_h tl_ep,
                                   uct_unpack_callback_t unpack_cb, void *arg,
                                   size_t length, uint64_t remote_addr,
                                   uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "get_bcopy", length,
                                    iface->seg_size);
    if (status != UCS_OK) {
        return status;
    }
    uct_iface_stat_get(&iface->super, length);
    unpack_cb(arg, (const void *)(uintptr_t)remote_addr, length);
    return UCS_OK;
}

ucs_status_t uct_self_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                   size_t iovcnt, uint64_t remote_addr,
                                   uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_iovcnt(&iface->super, "get_zcopy", iovcnt,
                                    UCT_SELF_MAX_IOV);
    if (status != UCS_OK) {
        return status;
    }
    uct_iface_stat_get(
        &iface->super,
        uct_iov_from_buffer(iov, iovcnt, (const void *)(uintptr_t)remote_addr));
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Atomics on local memory
 */

static ucs_status_t uct_self_invalid_atomic(uct_atomic_op_t opcode)
{
    ucs_error("self: atomic opcode %d is not supported by this call; "
              "check cap.atomic32/64 op_flags and fop_flags",
              (int)opcode);
    return UCS_ERR_UNSUPPORTED;
}

static inline ucs_status_t uct_self_atomic64(uct_atomic_op_t opcode,
                                             uint64_t *ptr, uint64_t value,
                                             uint64_t *result)
{
    uint64_t prev;

    switch (opcode) {
    case UCT_ATOMIC_OP_ADD:
        prev = __atomic_fetch_add(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_AND:
        prev = __atomic_fetch_and(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_OR:
        prev = __atomic_fetch_or(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_XOR:
        prev = __atomic_fetch_xor(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_SWAP:
        if (result == NULL) {
            return uct_self_invalid_atomic(opcode);
        }
        prev = __atomic_exchange_n(ptr, value, __ATOMIC_SEQ_CST);
        break;
    default:
        return uct_self_invalid_atomic(opcode);
    }

    if (result != NULL) {
        *result = prev;
    }
    return UCS_OK;
}

static inline ucs_status_t uct_self_atomic32(uct_atomic_op_t opcode,
                                             uint32_t *ptr, uint32_t value,
                                             uint32_t *result)
{
    uint32_t prev;

    switch (opcode) {
    case UCT_ATOMIC_OP_ADD:
        prev = __atomic_fetch_add(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_AND:
        prev = __atomic_fetch_and(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_OR:
        prev = __atomic_fetch_or(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_XOR:
        prev = __atomic_fetch_xor(ptr, value, __ATOMIC_SEQ_CST);
        break;
    case UCT_ATOMIC_OP_SWAP:
        if (result == NULL) {
            return uct_self_invalid_atomic(opcode);
        }
        prev = __atomic_exchange_n(ptr, value, __ATOMIC_SEQ_CST);
        break;
    default:
        return uct_self_invalid_atomic(opcode);
    }

    if (result != NULL) {
        *result = prev;
    }
    return UCS_OK;
}

ucs_status_t uct_self_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                       uint64_t value, uint64_t remote_addr,
                                       uct_rkey_t rkey)
{
    return uct_self_atomic64(opcode, (uint64_t *)(uintptr_t)remote_addr, value,
                             NULL);
}

ucs_status_t uct_self_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                       uint32_t value, uint64_t remote_addr,
                                       uct_rkey_t rkey)
{
    return uct_self_atomic32(opcode, (uint32_t *)(uintptr_t)remote_addr, value,
                             NULL);
}

ucs_status_t uct_self_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                        uint64_t value, uint64_t *result,
                                        uint64_t remote_addr, uct_rkey_t rkey,
                                        uct_completion_t *comp)
{
    if (opcode == UCT_ATOMIC_OP_CSWAP) {
        return uct_self_invalid_atomic(opcode);
    }
    return uct_self_atomic64(opcode, (uint64_t *)(uintptr_t)remote_addr, value,
                             result);
}

ucs_status_t uct_self_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                        uint32_t value, uint32_t *result,
                                        uint64_t remote_addr, uct_rkey_t rkey,
                                        uct_completion_t *comp)
{
    if (opcode == UCT_ATOMIC_OP_CSWAP) {
        return uct_self_invalid_atomic(opcode);
    }
    return uct_self_atomic32(opcode, (uint32_t *)(uintptr_t)remote_addr, value,
                             result);
}

ucs_status_t uct_self_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                        uint64_t swap, uint64_t remote_addr,
                                        uct_rkey_t rkey, uint64_t *result,
                                        uct_completion_t *comp)
{
    uint64_t expected = compare;

    __atomic_compare_exchange_n((uint64_t *)(uintptr_t)remote_addr, &expected,
                                swap, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *result = expected;
    return UCS_OK;
}

ucs_status_t uct_self_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                        uint32_t swap, uint64_t remote_addr,
                                        uct_rkey_t rkey, uint32_t *result,
                                        uct_completion_t *comp)
{
    uint32_t expected = compare;

    __atomic_compare_exchange_n((uint32_t *)(uintptr_t)remote_addr, &expected,
                                swap, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *result = expected;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Pending: operations never run out of resources, so there is never
 * anything to queue.
 */

ucs_status_t uct_self_ep_pending_add(uct_ep_h ep, uct_pending_req_t *req,
                                     unsigned flags)
{
    return UCS_ERR_BUSY;
}

void uct_self_ep_pending_purge(uct_ep_h ep, uct_pending_purge_callback_t cb,
                               void *arg)
{}

/* ------------------------------------------------------------------------
 * Endpoints
 */

/* ep->short_max for an endpoint of @a iface that delivers to @a peer */
static int64_t uct_self_ep_short_max(const uct_self_iface_t *iface,
                                     const uct_self_iface_t *peer)
{
    if ((peer->super.am_align_offset != 0) ||
        (peer->super.am_alignment > UCT_SELF_FAST_ALIGN)) {
        return -1;
    }
    return ucs_min(iface->seg_size, UCT_SELF_SMALL_MSG) - sizeof(uint64_t);
}

ucs_status_t uct_self_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_self_iface_t *iface = uct_self_iface(params->iface);
    uct_self_iface_addr_t id;
    uct_self_iface_t *peer;
    uct_self_ep_t *ep;

    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) ||
        (params->iface_addr == NULL)) {
        ucs_error("self: uct_ep_create needs iface_addr "
                  "(UCT_EP_PARAM_FIELD_IFACE_ADDR): the transport connects "
                  "to interfaces");
        return UCS_ERR_INVALID_PARAM;
    }

    memcpy(&id, params->iface_addr, sizeof(id));

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("self: failed to allocate an endpoint");
        return UCS_ERR_NO_MEMORY;
    }

    pthread_mutex_lock(&uct_self_lock);
    peer = uct_self_iface_find(id);
    if (peer == NULL) {
        pthread_mutex_unlock(&uct_self_lock);
        free(ep);
        ucs_error("self: no interface with address 0x%lx in this process; "
                  "self reaches only interfaces of the same process",
                  (unsigned long)id);
        return UCS_ERR_UNREACHABLE;
    }
    if (peer->seg_size < iface->seg_size) {
        pthread_mutex_unlock(&uct_self_lock);
        free(ep);
        ucs_error("self: the target interface takes messages up to %zu "
                  "bytes, smaller than this interface's %zu; use the same "
                  "UCX_SELF_SEG_SIZE for both",
                  peer->seg_size, iface->seg_size);
        return UCS_ERR_UNREACHABLE;
    }
    ep->peer      = peer;
    ep->peer_id   = id;
    ep->short_max = uct_self_ep_short_max(iface, peer);
    uct_base_ep_init(&ep->super, &iface->super);
    ucs_list_add_tail(&peer->peers, &ep->peer_list);
    pthread_mutex_unlock(&uct_self_lock);

    *ep_p = &ep->super.super;
    return UCS_OK;
}

void uct_self_ep_destroy(uct_ep_h tl_ep)
{
    uct_self_ep_t *ep = uct_self_ep(tl_ep);

    uct_base_ep_cleanup(&ep->super);
    pthread_mutex_lock(&uct_self_lock);
    if (ep->peer != NULL) {
        ucs_list_del(&ep->peer_list);
    }
    pthread_mutex_unlock(&uct_self_lock);
    free(ep);
}

/* ------------------------------------------------------------------------
 * Object tree: the peer, and the queues a self endpoint never has (every
 * operation completes inside the call)
 */

static void uct_self_ep_vfs_show_peer(void *obj, ucs_string_buffer_t *strb,
                                      void *arg_ptr, uint64_t arg_u64)
{
    const uct_self_ep_t *ep = obj;

    ucs_string_buffer_appendf(strb, "iface 0x%" PRIx64 "\n",
                              (uint64_t)ep->peer_id);
}

static void uct_self_ep_vfs_show_state(void *obj, ucs_string_buffer_t *strb,
                                       void *arg_ptr, uint64_t arg_u64)
{
    const uct_self_ep_t *ep = obj;

    /* the pointer is only compared, never followed: the peer may be
     * closing on another thread */
    ucs_string_buffer_appendf(strb, "%s\n",
                              (ep->peer != NULL)
                                  ? "connected"
                                  : "unreachable (peer interface closed)");
}

static void uct_self_ep_vfs_show_last_error(void *obj,
                                            ucs_string_buffer_t *strb,
                                            void *arg_ptr, uint64_t arg_u64)
{
    const uct_self_ep_t *ep = obj;

    uct_vfs_append_status(strb, ep->last_error);
}

void uct_self_ep_vfs_init(uct_ep_h tl_ep)
{
    uct_self_ep_t *ep = uct_self_ep(tl_ep);

    uct_vfs_add_file(ep, uct_self_ep_vfs_show_peer, NULL, 0, "peer");
    uct_vfs_add_file(ep, uct_self_ep_vfs_show_state, NULL, 0, "state");
    uct_vfs_add_string(ep, "bytes 0\nzcopy_sends 0", "tx_queue");
    uct_vfs_add_value(ep, 0, "pending");
    uct_vfs_add_file(ep, uct_self_ep_vfs_show_last_error, NULL, 0,
                     "last_error");
}
