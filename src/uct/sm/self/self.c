/*
 * The self transport (module libuct_self.so, component "self", device
 * "memory"). Every operation completes inside the call: AM handlers of the
 * receiving interface run from the sender's call, RMA and atomics act on
 * local memory directly. Any self interface of the process can reach any
 * other.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "self.h"

#include <uct/base/uct_component.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static ucs_config_field_t uct_self_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_self_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"SEG_SIZE", "8k",
     "Largest message of the bcopy and zcopy active message modes; short "
     "messages take up to SEG_SIZE minus the 8-byte header.",
     ucs_offsetof(uct_self_iface_config_t, seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {NULL}
};

/* Process-wide list of self interfaces, for address lookup at connect. */
static UCS_LIST_HEAD(uct_self_ifaces);
static pthread_mutex_t uct_self_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t uct_self_next_id     = 1;

static inline uct_self_iface_t *uct_self_iface(uct_iface_h iface)
{
    return (uct_self_iface_t*)iface;
}

static inline uct_self_ep_t *uct_self_ep(uct_ep_h ep)
{
    return (uct_self_ep_t*)ep;
}

static inline uct_self_iface_t *uct_self_ep_iface(uct_self_ep_t *ep)
{
    return uct_self_iface(ep->super.super.iface);
}

/* ------------------------------------------------------------------------
 * Memory domain
 */

static void uct_self_md_close(uct_md_h md)
{
    free(md);
}

static ucs_status_t uct_self_md_query(uct_md_h md, uct_md_attr_t *md_attr)
{
    uct_md_base_attr_init(md, md_attr);
    md_attr->cap.flags            = UCT_MD_FLAG_REG;
    md_attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.detect_mem_types = 0;
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.max_reg          = SIZE_MAX;
    md_attr->rkey_packed_size     = 0;
    md_attr->reg_cost             = ucs_linear_func_make(0, 0);
    return UCS_OK;
}

static ucs_status_t uct_self_md_mkey_pack(uct_md_h md, uct_mem_h memh,
                                          void *rkey_buffer)
{
    return UCS_OK;
}

static ucs_status_t uct_self_md_mem_query(uct_md_h md, const void *address,
                                          size_t length,
                                          uct_md_mem_attr_t *mem_attr)
{
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_MEM_TYPE) {
        mem_attr->mem_type = UCS_MEMORY_TYPE_HOST;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_SYS_DEV) {
        mem_attr->sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS) {
        mem_attr->base_address = (void*)address;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH) {
        mem_attr->alloc_length = length;
    }
    return UCS_OK;
}

static ucs_status_t uct_self_md_detect_memory_type(uct_md_h md,
                                                   const void *addr,
                                                   size_t length,
                                                   ucs_memory_type_t *type_p)
{
    *type_p = UCS_MEMORY_TYPE_HOST;
    return UCS_OK;
}

static const uct_md_ops_t uct_self_md_ops = {
    .close              = uct_self_md_close,
    .query              = uct_self_md_query,
    .mem_reg            = uct_md_dummy_mem_reg,
    .mem_dereg          = uct_md_dummy_mem_dereg,
    .mem_query          = uct_self_md_mem_query,
    .mkey_pack          = uct_self_md_mkey_pack,
    .detect_memory_type = uct_self_md_detect_memory_type
};

static ucs_status_t uct_self_md_open(uct_component_t *component,
                                     const char *md_name,
                                     const uct_md_config_t *config,
                                     uct_md_h *md_p)
{
    uct_md_t *md;

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("failed to allocate the self memory domain");
        return UCS_ERR_NO_MEMORY;
    }

    uct_md_base_init(md, &uct_self_md_ops, component);
    *md_p = md;
    return UCS_OK;
}

static ucs_status_t uct_self_query_devices(uct_md_h md,
                                           uct_tl_device_resource_t **devs_p,
                                           unsigned *num_devices_p)
{
    return uct_single_device_resource(md, UCT_SELF_DEV_NAME,
                                      UCT_DEVICE_TYPE_SELF,
                                      UCS_SYS_DEVICE_ID_UNKNOWN, devs_p,
                                      num_devices_p);
}

static ucs_status_t uct_self_rkey_ptr(uct_component_t *component,
                                      uct_rkey_t rkey, void *handle,
                                      uint64_t remote_addr, void **addr_p)
{
    *addr_p = (void*)(uintptr_t)remote_addr;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Receive side helpers
 */

static inline void uct_self_iface_signal(uct_self_iface_t *iface)
{
    uint64_t one = 1;

    iface->armed = 0;
    if (write(iface->event_fd, &one, sizeof(one)) != sizeof(one)) {
        ucs_warn("self iface %p: failed to signal the event fd: %m",
                 (void*)iface);
    }
}

/* Runs on every delivery: trace and wake an armed waiter. */
static inline void uct_self_iface_delivered(uct_self_iface_t *iface,
                                            uint8_t id, const void *data,
                                            size_t length)
{
    if (ucs_unlikely(iface->super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, id, data,
                           length);
    }
    if (ucs_unlikely(iface->armed)) {
        uct_self_iface_signal(iface);
    }
}

static ucs_status_t uct_self_ep_unreachable(uct_self_ep_t *ep)
{
    ucs_error("self ep %p: the receiving interface was closed; destroy "
              "the endpoint", (void*)ep);
    return UCS_ERR_UNREACHABLE;
}

/* The data pointer of a descriptor object. */
static inline void *uct_self_desc_data(uct_self_iface_t *iface, void *obj)
{
    return UCS_PTR_BYTE_OFFSET(obj, iface->desc_offset);
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

static void uct_self_release_desc(uct_recv_desc_t *self, void *desc)
{
    /* desc is the start of the user headroom; the pointer to this
     * uct_recv_desc_t sits right before it, at the object start */
    ucs_mpool_put(UCS_PTR_BYTE_OFFSET(desc, -(ptrdiff_t)sizeof(void*)));
}

static void uct_self_mp_obj_init(ucs_mpool_t *mp, void *obj, void *chunk)
{
    uct_self_iface_t *iface = *(uct_self_iface_t**)ucs_mpool_priv(mp);

    *(uct_recv_desc_t**)obj = &iface->release_desc;
}

static ucs_mpool_ops_t uct_self_mp_ops = {
    .chunk_alloc   = ucs_mpool_chunk_malloc,
    .chunk_release = ucs_mpool_chunk_free,
    .obj_init      = uct_self_mp_obj_init,
    .obj_cleanup   = NULL
};

/* ------------------------------------------------------------------------
 * Active messages
 */

/* Messages up to this size are built in a fixed, cache-line aligned stack
 * buffer: no variable-size stack frame on the common path */
#define UCT_SELF_SMALL_MSG 64

static UCS_F_NOINLINE void uct_self_am_short_large(uct_self_iface_t *peer,
                                                   uint8_t id,
                                                   uint64_t header,
                                                   const void *payload,
                                                   unsigned length)
{
    size_t total = sizeof(header) + length;
    char buffer[total + peer->super.am_alignment];
    char *data;

    data = (char*)ucs_align_up_pow2((uintptr_t)buffer +
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

static ucs_status_t uct_self_ep_am_short(uct_ep_h tl_ep, uint8_t id,
                                         uint64_t header, const void *payload,
                                         unsigned length)
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
        uct_self_am_short_large(peer, id, header, payload, length);
        return UCS_OK;
    }

    memcpy(buffer, &header, sizeof(header));
    if (length > 0) {
        memcpy(buffer + sizeof(header), payload, length);
    }
    uct_iface_invoke_am(&peer->super, id, buffer, sizeof(header) + length,
                        0);
    uct_self_iface_delivered(peer, id, buffer, sizeof(header) + length);
    return UCS_OK;
}

static ucs_status_t uct_self_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                             const uct_iov_t *iov,
                                             size_t iovcnt)
{
    uct_self_ep_t *ep        = uct_self_ep(tl_ep);
    uct_self_iface_t *iface  = uct_self_ep_iface(ep);
    uct_self_iface_t *peer   = ep->peer;
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

    {
        char buffer[total + peer->super.am_alignment];

        data = (char*)ucs_align_up_pow2((uintptr_t)buffer +
                                        peer->super.am_align_offset,
                                        peer->super.am_alignment) -
               peer->super.am_align_offset;
        uct_iov_to_buffer(iov, iovcnt, data);
        uct_iface_invoke_am(&peer->super, id, data, total, 0);
        uct_self_iface_delivered(peer, id, data, total);
    }
    return UCS_OK;
}

static ssize_t uct_self_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
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
        return UCS_ERR_NO_RESOURCE;
    }

    length = pack_cb(uct_self_desc_data(peer, obj), arg);
    if (ucs_unlikely(length > iface->seg_size)) {
        ucs_mpool_put(obj);
        return uct_iface_invalid_length(&iface->super,
                                        "am_bcopy packed", length,
                                        iface->seg_size);
    }

    uct_self_deliver_desc(peer, id, obj, length);
    return length;
}

static ucs_status_t uct_self_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                         const void *header,
                                         unsigned header_length,
                                         const uct_iov_t *iov, size_t iovcnt,
                                         unsigned flags,
                                         uct_completion_t *comp)
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
        return UCS_ERR_NO_RESOURCE;
    }

    data = uct_self_desc_data(peer, obj);
    if (header_length > 0) {
        memcpy(data, header, header_length);
    }
    uct_iov_to_buffer(iov, iovcnt, data + header_length);
    uct_self_deliver_desc(peer, id, obj, total);
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * RMA: the remote address is a local pointer
 */

static ucs_status_t uct_self_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                          unsigned length,
                                          uint64_t remote_addr,
                                          uct_rkey_t rkey)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "put_short", length,
                                    iface->seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    memcpy((void*)(uintptr_t)remote_addr, buffer, length);
    return UCS_OK;
}

static ssize_t uct_self_ep_put_bcopy(uct_ep_h tl_ep,
                                     uct_pack_callback_t pack_cb, void *arg,
                                     uint64_t remote_addr, uct_rkey_t rkey)
{
    /* Pack straight into the target: it is local memory */
    return pack_cb((void*)(uintptr_t)remote_addr, arg);
}

static ucs_status_t uct_self_ep_put_zcopy(uct_ep_h tl_ep,
                                          const uct_iov_t *iov, size_t iovcnt,
                                          uint64_t remote_addr,
                                          uct_rkey_t rkey,
                                          uct_completion_t *comp)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_iovcnt(&iface->super, "put_zcopy", iovcnt,
                                    UCT_SELF_MAX_IOV);
    if (status != UCS_OK) {
        return status;
    }
    uct_iov_to_buffer(iov, iovcnt, (void*)(uintptr_t)remote_addr);
    return UCS_OK;
}

static ucs_status_t uct_self_ep_get_short(uct_ep_h tl_ep, void *buffer,
                                          unsigned length,
                                          uint64_t remote_addr,
                                          uct_rkey_t rkey)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "get_short", length,
                                    iface->seg_size);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    memcpy(buffer, (const void*)(uintptr_t)remote_addr, length);
    return UCS_OK;
}

static ucs_status_t uct_self_ep_get_bcopy(uct_ep_h tl_ep,
                                          uct_unpack_callback_t unpack_cb,
                                          void *arg, size_t length,
                                          uint64_t remote_addr,
                                          uct_rkey_t rkey,
                                          uct_completion_t *comp)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "get_bcopy", length,
                                    iface->seg_size);
    if (status != UCS_OK) {
        return status;
    }
    unpack_cb(arg, (const void*)(uintptr_t)remote_addr, length);
    return UCS_OK;
}

static ucs_status_t uct_self_ep_get_zcopy(uct_ep_h tl_ep,
                                          const uct_iov_t *iov, size_t iovcnt,
                                          uint64_t remote_addr,
                                          uct_rkey_t rkey,
                                          uct_completion_t *comp)
{
    uct_self_iface_t *iface = uct_self_ep_iface(uct_self_ep(tl_ep));
    ucs_status_t status;

    status = uct_iface_check_iovcnt(&iface->super, "get_zcopy", iovcnt,
                                    UCT_SELF_MAX_IOV);
    if (status != UCS_OK) {
        return status;
    }
    uct_iov_from_buffer(iov, iovcnt, (const void*)(uintptr_t)remote_addr);
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Atomics on local memory
 */

#define UCT_SELF_ATOMIC_OPS \
    (UCS_BIT(UCT_ATOMIC_OP_ADD) | UCS_BIT(UCT_ATOMIC_OP_AND) | \
     UCS_BIT(UCT_ATOMIC_OP_OR) | UCS_BIT(UCT_ATOMIC_OP_XOR))
#define UCT_SELF_ATOMIC_FOPS \
    (UCT_SELF_ATOMIC_OPS | UCS_BIT(UCT_ATOMIC_OP_SWAP) | \
     UCS_BIT(UCT_ATOMIC_OP_CSWAP))

static ucs_status_t uct_self_invalid_atomic(uct_atomic_op_t opcode)
{
    ucs_error("self: atomic opcode %d is not supported by this call; "
              "check cap.atomic32/64 op_flags and fop_flags", (int)opcode);
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

static ucs_status_t uct_self_ep_atomic64_post(uct_ep_h ep,
                                              uct_atomic_op_t opcode,
                                              uint64_t value,
                                              uint64_t remote_addr,
                                              uct_rkey_t rkey)
{
    return uct_self_atomic64(opcode, (uint64_t*)(uintptr_t)remote_addr,
                             value, NULL);
}

static ucs_status_t uct_self_ep_atomic32_post(uct_ep_h ep,
                                              uct_atomic_op_t opcode,
                                              uint32_t value,
                                              uint64_t remote_addr,
                                              uct_rkey_t rkey)
{
    return uct_self_atomic32(opcode, (uint32_t*)(uintptr_t)remote_addr,
                             value, NULL);
}

static ucs_status_t uct_self_ep_atomic64_fetch(uct_ep_h ep,
                                               uct_atomic_op_t opcode,
                                               uint64_t value,
                                               uint64_t *result,
                                               uint64_t remote_addr,
                                               uct_rkey_t rkey,
                                               uct_completion_t *comp)
{
    if (opcode == UCT_ATOMIC_OP_CSWAP) {
        return uct_self_invalid_atomic(opcode);
    }
    return uct_self_atomic64(opcode, (uint64_t*)(uintptr_t)remote_addr,
                             value, result);
}

static ucs_status_t uct_self_ep_atomic32_fetch(uct_ep_h ep,
                                               uct_atomic_op_t opcode,
                                               uint32_t value,
                                               uint32_t *result,
                                               uint64_t remote_addr,
                                               uct_rkey_t rkey,
                                               uct_completion_t *comp)
{
    if (opcode == UCT_ATOMIC_OP_CSWAP) {
        return uct_self_invalid_atomic(opcode);
    }
    return uct_self_atomic32(opcode, (uint32_t*)(uintptr_t)remote_addr,
                             value, result);
}

static ucs_status_t uct_self_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                               uint64_t swap,
                                               uint64_t remote_addr,
                                               uct_rkey_t rkey,
                                               uint64_t *result,
                                               uct_completion_t *comp)
{
    uint64_t expected = compare;

    __atomic_compare_exchange_n((uint64_t*)(uintptr_t)remote_addr, &expected,
                                swap, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *result = expected;
    return UCS_OK;
}

static ucs_status_t uct_self_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                               uint32_t swap,
                                               uint64_t remote_addr,
                                               uct_rkey_t rkey,
                                               uint32_t *result,
                                               uct_completion_t *comp)
{
    uint32_t expected = compare;

    __atomic_compare_exchange_n((uint32_t*)(uintptr_t)remote_addr, &expected,
                                swap, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *result = expected;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Pending: operations never run out of resources, so there is never
 * anything to queue.
 */

static ucs_status_t uct_self_ep_pending_add(uct_ep_h ep,
                                            uct_pending_req_t *req,
                                            unsigned flags)
{
    return UCS_ERR_BUSY;
}

static void uct_self_ep_pending_purge(uct_ep_h ep,
                                      uct_pending_purge_callback_t cb,
                                      void *arg)
{
}

/* ------------------------------------------------------------------------
 * Endpoints
 */

static uct_self_iface_t *uct_self_iface_find(uct_self_iface_addr_t id)
{
    uct_self_iface_t *iface;

    ucs_list_for_each(iface, &uct_self_ifaces, list) {
        if (iface->id == id) {
            return iface;
        }
    }
    return NULL;
}

static ucs_status_t uct_self_ep_create(const uct_ep_params_t *params,
                                       uct_ep_h *ep_p)
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
                  "UCX_SELF_SEG_SIZE for both", peer->seg_size,
                  iface->seg_size);
        return UCS_ERR_UNREACHABLE;
    }
    uct_base_ep_init(&ep->super, &iface->super);
    ep->peer = peer;
    ucs_list_add_tail(&peer->peers, &ep->peer_list);
    pthread_mutex_unlock(&uct_self_lock);

    *ep_p = &ep->super.super;
    return UCS_OK;
}

static void uct_self_ep_destroy(uct_ep_h tl_ep)
{
    uct_self_ep_t *ep = uct_self_ep(tl_ep);

    pthread_mutex_lock(&uct_self_lock);
    if (ep->peer != NULL) {
        ucs_list_del(&ep->peer_list);
    }
    pthread_mutex_unlock(&uct_self_lock);
    free(ep);
}

/* ------------------------------------------------------------------------
 * Interface
 */

static ucs_status_t uct_self_iface_query(uct_iface_h tl_iface,
                                         uct_iface_attr_t *attr)
{
    uct_self_iface_t *iface = uct_self_iface(tl_iface);

    uct_base_iface_query(&iface->super, attr);

    attr->cap.flags = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                      UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
                      UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                      UCT_IFACE_FLAG_GET_SHORT | UCT_IFACE_FLAG_GET_BCOPY |
                      UCT_IFACE_FLAG_GET_ZCOPY | UCT_IFACE_FLAG_ATOMIC_CPU |
                      UCT_IFACE_FLAG_PENDING |
                      UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_CB_ASYNC |
                      UCT_IFACE_FLAG_ERRHANDLE_AM_ID |
                      UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF;
    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_RECV |
                            UCT_IFACE_FLAG_EVENT_FD;

    attr->cap.am.max_short       = iface->seg_size - sizeof(uint64_t);
    attr->cap.am.max_bcopy       = iface->seg_size;
    attr->cap.am.min_zcopy       = 0;
    attr->cap.am.max_zcopy       = iface->seg_size;
    attr->cap.am.max_hdr         = iface->seg_size;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu       = 1;
    attr->cap.am.max_iov         = UCT_SELF_MAX_IOV;

    attr->cap.put.max_short       = iface->seg_size;
    attr->cap.put.max_bcopy       = SIZE_MAX;
    attr->cap.put.min_zcopy       = 0;
    attr->cap.put.max_zcopy       = SIZE_MAX;
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu       = 1;
    attr->cap.put.max_iov         = UCT_SELF_MAX_IOV;

    attr->cap.get.max_short       = iface->seg_size;
    attr->cap.get.max_bcopy       = iface->seg_size;
    attr->cap.get.min_zcopy       = 0;
    attr->cap.get.max_zcopy       = SIZE_MAX;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu       = 1;
    attr->cap.get.max_iov         = UCT_SELF_MAX_IOV;

    attr->cap.atomic32.op_flags  = UCT_SELF_ATOMIC_OPS;
    attr->cap.atomic32.fop_flags = UCT_SELF_ATOMIC_FOPS;
    attr->cap.atomic64.op_flags  = UCT_SELF_ATOMIC_OPS;
    attr->cap.atomic64.fop_flags = UCT_SELF_ATOMIC_FOPS;

    attr->device_addr_len     = 0;
    attr->iface_addr_len      = sizeof(uct_self_iface_addr_t);
    attr->ep_addr_len         = 0;
    attr->max_conn_priv       = 0;
    attr->overhead            = 10e-9;
    attr->bandwidth.dedicated = 6911.0 * 1024 * 1024;
    attr->bandwidth.shared    = 0;
    attr->latency             = ucs_linear_func_make(0, 0);
    attr->priority            = 0;
    return UCS_OK;
}

static ucs_status_t uct_self_iface_get_address(uct_iface_h tl_iface,
                                               uct_iface_addr_t *addr)
{
    memcpy(addr, &uct_self_iface(tl_iface)->id,
           sizeof(uct_self_iface_addr_t));
    return UCS_OK;
}

static ucs_status_t uct_self_iface_get_device_address(uct_iface_h tl_iface,
                                                      uct_device_addr_t *a)
{
    return UCS_OK;
}

static int uct_self_iface_is_reachable(const uct_iface_h tl_iface,
                                       const uct_device_addr_t *dev_addr,
                                       const uct_iface_addr_t *iface_addr)
{
    uct_self_iface_addr_t id;
    int found;

    if (iface_addr == NULL) {
        return 0;
    }

    memcpy(&id, iface_addr, sizeof(id));
    pthread_mutex_lock(&uct_self_lock);
    found = (uct_self_iface_find(id) != NULL);
    pthread_mutex_unlock(&uct_self_lock);
    return found;
}

static unsigned uct_self_iface_progress(uct_iface_h tl_iface)
{
    return 0;
}

static ucs_status_t uct_self_iface_event_fd_get(uct_iface_h tl_iface,
                                                int *fd_p)
{
    uct_self_iface_t *iface = uct_self_iface(tl_iface);

    if (iface->event_fd < 0) {
        iface->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (iface->event_fd < 0) {
            ucs_error("self iface %p: eventfd() failed: %m; check the open "
                      "files limit (ulimit -n)", (void*)iface);
            return UCS_ERR_IO_ERROR;
        }
    }

    *fd_p = iface->event_fd;
    return UCS_OK;
}

static ucs_status_t uct_self_iface_event_arm(uct_iface_h tl_iface,
                                             unsigned events)
{
    uct_self_iface_t *iface = uct_self_iface(tl_iface);
    uint64_t count;
    ssize_t ret;

    if (iface->event_fd < 0) {
        ucs_error("self iface %p: call uct_iface_event_fd_get() before "
                  "uct_iface_event_arm()", (void*)iface);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!(events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG))) {
        /* Sends complete inside the call: nothing to wait for */
        return UCS_OK;
    }

    /* A message that arrived since the last arm is a pending event */
    ret = read(iface->event_fd, &count, sizeof(count));
    if (ret == sizeof(count)) {
        return UCS_ERR_BUSY;
    } else if ((ret < 0) && (errno != EAGAIN)) {
        ucs_error("self iface %p: read(event fd) failed: %m", (void*)iface);
        return UCS_ERR_IO_ERROR;
    }

    iface->armed_events = events;
    iface->armed        = 1;
    return UCS_OK;
}

static void uct_self_iface_close(uct_iface_h tl_iface)
{
    uct_self_iface_t *iface = uct_self_iface(tl_iface);
    uct_self_ep_t *ep, *tmp;

    pthread_mutex_lock(&uct_self_lock);
    ucs_list_del(&iface->list);
    /* Endpoints of other ifaces that reach this one become unreachable */
    ucs_list_for_each_safe(ep, tmp, &iface->peers, peer_list) {
        ucs_list_del(&ep->peer_list);
        ep->peer = NULL;
    }
    pthread_mutex_unlock(&uct_self_lock);

    if (iface->event_fd >= 0) {
        close(iface->event_fd);
    }
    ucs_mpool_cleanup(&iface->msg_mp, 1);
    uct_base_iface_cleanup(&iface->super);
    free(iface);
}

static const uct_iface_ops_t uct_self_iface_ops = {
    .ep_put_short             = uct_self_ep_put_short,
    .ep_put_bcopy             = uct_self_ep_put_bcopy,
    .ep_put_zcopy             = uct_self_ep_put_zcopy,
    .ep_get_short             = uct_self_ep_get_short,
    .ep_get_bcopy             = uct_self_ep_get_bcopy,
    .ep_get_zcopy             = uct_self_ep_get_zcopy,
    .ep_am_short              = uct_self_ep_am_short,
    .ep_am_short_iov          = uct_self_ep_am_short_iov,
    .ep_am_bcopy              = uct_self_ep_am_bcopy,
    .ep_am_zcopy              = uct_self_ep_am_zcopy,
    .ep_atomic_cswap64        = uct_self_ep_atomic_cswap64,
    .ep_atomic_cswap32        = uct_self_ep_atomic_cswap32,
    .ep_atomic32_post         = uct_self_ep_atomic32_post,
    .ep_atomic64_post         = uct_self_ep_atomic64_post,
    .ep_atomic32_fetch        = uct_self_ep_atomic32_fetch,
    .ep_atomic64_fetch        = uct_self_ep_atomic64_fetch,
    .ep_pending_add           = uct_self_ep_pending_add,
    .ep_pending_purge         = uct_self_ep_pending_purge,
    .ep_flush                 = uct_base_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_create                = uct_self_ep_create,
    .ep_destroy               = uct_self_ep_destroy,
    .iface_flush              = uct_base_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress           = uct_self_iface_progress,
    .iface_event_fd_get       = uct_self_iface_event_fd_get,
    .iface_event_arm          = uct_self_iface_event_arm,
    .iface_close              = uct_self_iface_close,
    .iface_query              = uct_self_iface_query,
    .iface_get_device_address = uct_self_iface_get_device_address,
    .iface_get_address        = uct_self_iface_get_address,
    .iface_is_reachable       = uct_self_iface_is_reachable
};

static ucs_status_t uct_self_iface_open_tl(uct_md_h md, uct_worker_h worker,
                                           const uct_iface_params_t *params,
                                           const uct_iface_config_t *tl_config,
                                           uct_iface_h *iface_p)
{
    const uct_self_iface_config_t *config =
            (const uct_self_iface_config_t*)tl_config;
    ucs_mpool_params_t mp_params;
    uct_self_iface_t *iface;
    ucs_status_t status;

    if (config->seg_size < sizeof(uint64_t)) {
        ucs_error("UCX_SELF_SEG_SIZE=%zu is too small; it must be at least "
                  "%zu bytes", config->seg_size, sizeof(uint64_t));
        return UCS_ERR_INVALID_PARAM;
    }

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("self: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_base_iface_init(&iface->super, &uct_self_iface_ops, md,
                                 worker, params, tl_config);
    if (status != UCS_OK) {
        goto err_free;
    }

    iface->seg_size        = config->seg_size;
    iface->event_fd        = -1;
    iface->release_desc.cb = uct_self_release_desc;
    /* object: [recv desc pointer][rx headroom][data], data aligned */
    iface->desc_offset     = sizeof(void*) + iface->super.rx_headroom;
    ucs_list_head_init(&iface->peers);

    memset(&mp_params, 0, sizeof(mp_params));
    mp_params.elem_size       = iface->desc_offset + iface->seg_size;
    mp_params.alignment       = iface->super.am_alignment;
    mp_params.align_offset    = iface->desc_offset +
                                iface->super.am_align_offset;
    mp_params.elems_per_chunk = 64;
    mp_params.max_elems       = UINT_MAX;
    mp_params.priv_size       = sizeof(uct_self_iface_t*);
    mp_params.ops             = &uct_self_mp_ops;
    mp_params.name            = "self_msg_desc";
    status = ucs_mpool_init(&iface->msg_mp, &mp_params);
    if (status != UCS_OK) {
        goto err_cleanup_base;
    }
    *(uct_self_iface_t**)ucs_mpool_priv(&iface->msg_mp) = iface;

    pthread_mutex_lock(&uct_self_lock);
    iface->id = ((uint64_t)getpid() << 32) | uct_self_next_id++;
    ucs_list_add_tail(&uct_self_ifaces, &iface->list);
    pthread_mutex_unlock(&uct_self_lock);

    *iface_p = &iface->super.super;
    return UCS_OK;

err_cleanup_base:
    uct_base_iface_cleanup(&iface->super);
err_free:
    free(iface);
    return status;
}

static uct_tl_t uct_self_tl = {
    .name          = UCT_SELF_NAME,
    .query_devices = uct_self_query_devices,
    .iface_open    = uct_self_iface_open_tl,
    .config        = {
        .name   = "Self memory transport",
        .prefix = "SELF_",
        .table  = uct_self_iface_config_table,
        .size   = sizeof(uct_self_iface_config_t)
    }
};

static uct_component_t uct_self_component = {
    .name               = UCT_SELF_NAME,
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_self_md_open,
    .rkey_unpack        = uct_md_stub_rkey_unpack,
    .rkey_ptr           = uct_self_rkey_ptr,
    .rkey_release       = uct_md_stub_rkey_release,
    .md_config          = {
        .name   = "Self memory domain",
        .prefix = "SELF_",
        .table  = uct_md_config_table,
        .size   = sizeof(uct_md_config_t)
    },
    .flags              = UCT_COMPONENT_FLAG_RKEY_PTR
};

static ucs_status_t uct_self_init(void)
{
    uct_component_register(&uct_self_component);
    uct_tl_register(&uct_self_component, &uct_self_tl);
    return UCS_OK;
}

UCT_MODULE_DEFINE(uct_self_init)
