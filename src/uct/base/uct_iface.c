/*
 * Interface and endpoint base, and the interface/endpoint API calls that
 * are not on the fast path.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_iface.h>
#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/vfs/vfs.h>

#include <stdlib.h>
#include <string.h>

const char *uct_alloc_method_names[] = {
    [UCT_ALLOC_METHOD_THP] = "thp",   [UCT_ALLOC_METHOD_MD] = "md",
    [UCT_ALLOC_METHOD_HEAP] = "heap", [UCT_ALLOC_METHOD_MMAP] = "mmap",
    [UCT_ALLOC_METHOD_HUGE] = "huge", [UCT_ALLOC_METHOD_LAST] = NULL};

const char *uct_device_type_names[] = {[UCT_DEVICE_TYPE_NET]  = "network",
                                       [UCT_DEVICE_TYPE_SHM]  = "intra-node",
                                       [UCT_DEVICE_TYPE_ACC]  = "accelerator",
                                       [UCT_DEVICE_TYPE_SELF] = "loopback",
                                       [UCT_DEVICE_TYPE_LAST] = NULL};

ucs_config_field_t uct_iface_config_table[] = {
    {"ALLOC", "thp,md,mmap,heap",
     "Methods to allocate interface buffers, tried in order: thp "
     "(transparent huge pages), md (the memory domain's allocator), mmap, "
     "heap, huge (explicit huge pages).",
     ucs_offsetof(uct_iface_config_t, alloc_methods),
     UCS_CONFIG_TYPE_STRING_ARRAY},

    {"FAILURE", "diag",
     "Log level of peer failure reports when no error handler is set.",
     ucs_offsetof(uct_iface_config_t, failure_level),
     UCS_CONFIG_TYPE_ENUM(ucs_log_level_names)},

    {"MAX_NUM_EPS", "inf",
     "Largest number of endpoints an interface may create.",
     ucs_offsetof(uct_iface_config_t, max_num_eps), UCS_CONFIG_TYPE_ULUNITS},

    {NULL}};

/* ------------------------------------------------------------------------
 * Operations a transport did not provide
 */

static ucs_status_t uct_unsupported_put_short(uct_ep_h ep, const void *b,
                                              unsigned l, uint64_t ra,
                                              uct_rkey_t rk)
{
    return UCS_ERR_UNSUPPORTED;
}

static ssize_t uct_unsupported_put_bcopy(uct_ep_h ep, uct_pack_callback_t cb,
                                         void *arg, uint64_t ra, uct_rkey_t rk)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_rma_zcopy(uct_ep_h ep, const uct_iov_t *iov,
                                              size_t iovcnt, uint64_t ra,
                                              uct_rkey_t rk,
                                              uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_get_short(uct_ep_h ep, void *b, unsigned l,
                                              uint64_t ra, uct_rkey_t rk)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_get_bcopy(uct_ep_h ep,
                                              uct_unpack_callback_t cb,
                                              void *arg, size_t l, uint64_t ra,
                                              uct_rkey_t rk,
                                              uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_am_short(uct_ep_h ep, uint8_t id,
                                             uint64_t h, const void *p,
                                             unsigned l)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_am_short_iov(uct_ep_h ep, uint8_t id,
                                                 const uct_iov_t *iov,
                                                 size_t iovcnt)
{
    return UCS_ERR_UNSUPPORTED;
}

static ssize_t uct_unsupported_am_bcopy(uct_ep_h ep, uint8_t id,
                                        uct_pack_callback_t cb, void *arg,
                                        unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_am_zcopy(uct_ep_h ep, uint8_t id,
                                             const void *h, unsigned hl,
                                             const uct_iov_t *iov,
                                             size_t iovcnt, unsigned flags,
                                             uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_cswap64(uct_ep_h ep, uint64_t c, uint64_t s,
                                            uint64_t ra, uct_rkey_t rk,
                                            uint64_t *r, uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_cswap32(uct_ep_h ep, uint32_t c, uint32_t s,
                                            uint64_t ra, uct_rkey_t rk,
                                            uint32_t *r, uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_atomic32_post(uct_ep_h ep,
                                                  uct_atomic_op_t op,
                                                  uint32_t v, uint64_t ra,
                                                  uct_rkey_t rk)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_atomic64_post(uct_ep_h ep,
                                                  uct_atomic_op_t op,
                                                  uint64_t v, uint64_t ra,
                                                  uct_rkey_t rk)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_atomic32_fetch(uct_ep_h ep,
                                                   uct_atomic_op_t op,
                                                   uint32_t v, uint32_t *r,
                                                   uint64_t ra, uct_rkey_t rk,
                                                   uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_atomic64_fetch(uct_ep_h ep,
                                                   uct_atomic_op_t op,
                                                   uint64_t v, uint64_t *r,
                                                   uint64_t ra, uct_rkey_t rk,
                                                   uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t
uct_unsupported_pending_add(uct_ep_h ep, uct_pending_req_t *req, unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static void uct_unsupported_pending_purge(uct_ep_h ep,
                                          uct_pending_purge_callback_t cb,
                                          void *arg)
{}

static ucs_status_t uct_unsupported_ep_flush(uct_ep_h ep, unsigned flags,
                                             uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_ep_fence(uct_ep_h ep, unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_ep_check(uct_ep_h ep, unsigned flags,
                                             uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_ep_create(const uct_ep_params_t *params,
                                              uct_ep_h *ep_p)
{
    return UCS_ERR_UNSUPPORTED;
}

static void uct_unsupported_ep_destroy(uct_ep_h ep)
{}

static ucs_status_t uct_unsupported_ep_get_address(uct_ep_h ep,
                                                   uct_ep_addr_t *addr)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t
uct_unsupported_ep_connect_to_ep(uct_ep_h ep, const uct_device_addr_t *dev_addr,
                                 const uct_ep_addr_t *ep_addr)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_iface_flush(uct_iface_h iface,
                                                unsigned flags,
                                                uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_iface_fence(uct_iface_h iface,
                                                unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static unsigned uct_unsupported_iface_progress(uct_iface_h iface)
{
    return 0;
}

static ucs_status_t uct_unsupported_event_fd_get(uct_iface_h iface, int *fd_p)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_event_arm(uct_iface_h iface,
                                              unsigned events)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_iface_query(uct_iface_h iface,
                                                uct_iface_attr_t *attr)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_get_device_address(uct_iface_h iface,
                                                       uct_device_addr_t *a)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_get_iface_address(uct_iface_h iface,
                                                      uct_iface_addr_t *a)
{
    return UCS_ERR_UNSUPPORTED;
}

static int uct_unsupported_is_reachable(const uct_iface_h iface,
                                        const uct_device_addr_t *dev_addr,
                                        const uct_iface_addr_t *iface_addr)
{
    return 0;
}

/* Tag-matching offload: no transport of openuct has it */
static ucs_status_t uct_unsupported_tag_eager_short(uct_ep_h ep, uct_tag_t tag,
                                                    const void *data,
                                                    size_t length)
{
    return UCS_ERR_UNSUPPORTED;
}

static ssize_t uct_unsupported_tag_eager_bcopy(uct_ep_h ep, uct_tag_t tag,
                                               uint64_t imm,
                                               uct_pack_callback_t pack_cb,
                                               void *arg, unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t
uct_unsupported_tag_eager_zcopy(uct_ep_h ep, uct_tag_t tag, uint64_t imm,
                                const uct_iov_t *iov, size_t iovcnt,
                                unsigned flags, uct_completion_t *comp)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_ptr_t uct_unsupported_tag_rndv_zcopy(
    uct_ep_h ep, uct_tag_t tag, const void *header, unsigned header_length,
    const uct_iov_t *iov, size_t iovcnt, unsigned flags, uct_completion_t *comp)
{
    return UCS_STATUS_PTR(UCS_ERR_UNSUPPORTED);
}

static ucs_status_t uct_unsupported_tag_rndv_cancel(uct_ep_h ep, void *op)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_tag_rndv_request(uct_ep_h ep, uct_tag_t tag,
                                                     const void *header,
                                                     unsigned header_length,
                                                     unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t
uct_unsupported_tag_recv_zcopy(uct_iface_h iface, uct_tag_t tag,
                               uct_tag_t tag_mask, const uct_iov_t *iov,
                               size_t iovcnt, uct_tag_context_t *ctx)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_tag_recv_cancel(uct_iface_h iface,
                                                    uct_tag_context_t *ctx,
                                                    int force)
{
    return UCS_ERR_UNSUPPORTED;
}

/* Endpoints of an interface are not endpoints of a connection manager */
static ucs_status_t
uct_unsupported_ep_connect(uct_ep_h ep, const uct_ep_connect_params_t *params)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_ep_disconnect(uct_ep_h ep, unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_unsupported_cm_ep_conn_notify(uct_ep_h ep)
{
    return UCS_ERR_UNSUPPORTED;
}

#define UCT_OPS_FILL(_ops, _field, _func) \
    if ((_ops)->_field == NULL) {         \
        (_ops)->_field = _func;           \
    }

void uct_iface_ops_fill_unsupported(uct_iface_ops_t *ops)
{
    UCT_OPS_FILL(ops, ep_put_short, uct_unsupported_put_short);
    UCT_OPS_FILL(ops, ep_put_bcopy, uct_unsupported_put_bcopy);
    UCT_OPS_FILL(ops, ep_put_zcopy, uct_unsupported_rma_zcopy);
    UCT_OPS_FILL(ops, ep_get_short, uct_unsupported_get_short);
    UCT_OPS_FILL(ops, ep_get_bcopy, uct_unsupported_get_bcopy);
    UCT_OPS_FILL(ops, ep_get_zcopy, uct_unsupported_rma_zcopy);
    UCT_OPS_FILL(ops, ep_am_short, uct_unsupported_am_short);
    UCT_OPS_FILL(ops, ep_am_short_iov, uct_unsupported_am_short_iov);
    UCT_OPS_FILL(ops, ep_am_bcopy, uct_unsupported_am_bcopy);
    UCT_OPS_FILL(ops, ep_am_zcopy, uct_unsupported_am_zcopy);
    UCT_OPS_FILL(ops, ep_atomic_cswap64, uct_unsupported_cswap64);
    UCT_OPS_FILL(ops, ep_atomic_cswap32, uct_unsupported_cswap32);
    UCT_OPS_FILL(ops, ep_atomic32_post, uct_unsupported_atomic32_post);
    UCT_OPS_FILL(ops, ep_atomic64_post, uct_unsupported_atomic64_post);
    UCT_OPS_FILL(ops, ep_atomic32_fetch, uct_unsupported_atomic32_fetch);
    UCT_OPS_FILL(ops, ep_atomic64_fetch, uct_unsupported_atomic64_fetch);
    UCT_OPS_FILL(ops, ep_pending_add, uct_unsupported_pending_add);
    UCT_OPS_FILL(ops, ep_pending_purge, uct_unsupported_pending_purge);
    UCT_OPS_FILL(ops, ep_flush, uct_unsupported_ep_flush);
    UCT_OPS_FILL(ops, ep_fence, uct_unsupported_ep_fence);
    UCT_OPS_FILL(ops, ep_check, uct_unsupported_ep_check);
    UCT_OPS_FILL(ops, ep_create, uct_unsupported_ep_create);
    UCT_OPS_FILL(ops, ep_destroy, uct_unsupported_ep_destroy);
    UCT_OPS_FILL(ops, ep_get_address, uct_unsupported_ep_get_address);
    UCT_OPS_FILL(ops, ep_connect_to_ep, uct_unsupported_ep_connect_to_ep);
    UCT_OPS_FILL(ops, iface_flush, uct_unsupported_iface_flush);
    UCT_OPS_FILL(ops, iface_fence, uct_unsupported_iface_fence);
    UCT_OPS_FILL(ops, iface_progress_enable, uct_base_iface_progress_enable);
    UCT_OPS_FILL(ops, iface_progress_disable, uct_base_iface_progress_disable);
    UCT_OPS_FILL(ops, iface_progress, uct_unsupported_iface_progress);
    UCT_OPS_FILL(ops, iface_event_fd_get, uct_unsupported_event_fd_get);
    UCT_OPS_FILL(ops, iface_event_arm, uct_unsupported_event_arm);
    UCT_OPS_FILL(ops, iface_query, uct_unsupported_iface_query);
    UCT_OPS_FILL(ops, iface_get_device_address,
                 uct_unsupported_get_device_address);
    UCT_OPS_FILL(ops, iface_get_address, uct_unsupported_get_iface_address);
    UCT_OPS_FILL(ops, iface_is_reachable, uct_unsupported_is_reachable);
    UCT_OPS_FILL(ops, ep_tag_eager_short, uct_unsupported_tag_eager_short);
    UCT_OPS_FILL(ops, ep_tag_eager_bcopy, uct_unsupported_tag_eager_bcopy);
    UCT_OPS_FILL(ops, ep_tag_eager_zcopy, uct_unsupported_tag_eager_zcopy);
    UCT_OPS_FILL(ops, ep_tag_rndv_zcopy, uct_unsupported_tag_rndv_zcopy);
    UCT_OPS_FILL(ops, ep_tag_rndv_cancel, uct_unsupported_tag_rndv_cancel);
    UCT_OPS_FILL(ops, ep_tag_rndv_request, uct_unsupported_tag_rndv_request);
    UCT_OPS_FILL(ops, iface_tag_recv_zcopy, uct_unsupported_tag_recv_zcopy);
    UCT_OPS_FILL(ops, iface_tag_recv_cancel, uct_unsupported_tag_recv_cancel);
    UCT_OPS_FILL(ops, ep_connect, uct_unsupported_ep_connect);
    UCT_OPS_FILL(ops, ep_disconnect, uct_unsupported_ep_disconnect);
    UCT_OPS_FILL(ops, cm_ep_conn_notify, uct_unsupported_cm_ep_conn_notify);
}

/* ------------------------------------------------------------------------
 * Base interface
 */

/* A handler slot is found with a shift (uct_am_handler_t) */
UCS_STATIC_ASSERT(sizeof(uct_am_handler_t) == 64);

/* The stub handler's argument is its slot, whose reserved field holds the
 * id; the interface is found from the slot. A peer can send any id, so
 * the warning is rate-limited per interface. */
static ucs_status_t uct_iface_stub_am_handler(void *arg, void *data,
                                              size_t length, unsigned flags)
{
    uct_am_handler_t *slot = arg;
    uct_base_iface_t *iface =
        ucs_container_of(slot - slot->reserved, uct_base_iface_t, am);

    ucs_warn_limited(&iface->am_drop_log,
                     "%s iface %p: dropped an active message with id %u "
                     "(%zu bytes): no handler is set for it; call "
                     "uct_iface_set_am_handler() before peers send",
                     (iface->tl != NULL) ? iface->tl->name : "uct",
                     (void *)iface, slot->reserved, length);
    return UCS_OK;
}

static void uct_iface_set_stub_am_handler(uct_base_iface_t *iface, uint8_t id)
{
    iface->am[id].cb       = uct_iface_stub_am_handler;
    iface->am[id].arg      = &iface->am[id];
    iface->am[id].flags    = UCT_CB_FLAG_ASYNC;
    iface->am[id].reserved = id;
}

static ucs_status_t
uct_iface_parse_alloc_methods(uct_base_iface_t *iface,
                              const uct_iface_config_t *config)
{
    unsigned i, m;

    iface->config.num_alloc_methods = 0;
    for (i = 0; i < config->alloc_methods.count; ++i) {
        for (m = 0; m < UCT_ALLOC_METHOD_LAST; ++m) {
            if (!strcmp(config->alloc_methods.names[i],
                        uct_alloc_method_names[m])) {
                break;
            }
        }
        if (m == UCT_ALLOC_METHOD_LAST) {
            ucs_error("invalid allocation method '%s' in UCX_*ALLOC; "
                      "accepted: thp, md, heap, mmap, huge",
                      config->alloc_methods.names[i]);
            return UCS_ERR_INVALID_PARAM;
        }
        if (iface->config.num_alloc_methods < UCT_ALLOC_METHOD_LAST) {
            iface->config.alloc_methods[iface->config.num_alloc_methods++] =
                (uct_alloc_method_t)m;
        }
    }
    return UCS_OK;
}

ucs_status_t uct_base_iface_init(uct_base_iface_t *iface,
                                 const uct_iface_ops_t *ops, uct_md_h md,
                                 uct_worker_h worker,
                                 const uct_iface_params_t *params,
                                 const uct_iface_config_t *config)
{
    uint64_t mask = params->field_mask;
    ucs_status_t status;
    unsigned id;

    memset(iface, 0, sizeof(*iface));
    iface->super.ops = *ops;
    uct_iface_ops_fill_unsupported(&iface->super.ops);

    iface->md      = md;
    iface->worker  = uct_worker_priv(worker);
    iface->prog_id = UCS_CALLBACKQ_ID_NULL;
    iface->tl =
        (mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE) &&
                (params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)
            ? uct_component_find_tl(md->component, params->mode.device.tl_name)
            : NULL;
    if ((mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE) &&
        (params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
        snprintf(iface->dev_name, sizeof(iface->dev_name), "%s",
                 params->mode.device.dev_name);
    }

    iface->rx_headroom =
        (mask & UCT_IFACE_PARAM_FIELD_RX_HEADROOM) ? params->rx_headroom : 0;

    iface->am_alignment    = 1;
    iface->am_align_offset = 0;
    /* counters are read only through the object tree */
    iface->stats_on = UCT_IFACE_STATS_ENABLED && ucs_vfs_is_enabled();
    if (mask & UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT) {
        if (!ucs_is_pow2(params->am_alignment)) {
            ucs_error("am_alignment %zu is not a power of 2; pass 1 for no "
                      "alignment",
                      params->am_alignment);
            return UCS_ERR_INVALID_PARAM;
        }
        iface->am_alignment = params->am_alignment;
    }
    if (mask & UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET) {
        if (!(mask & UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT)) {
            ucs_error("am_align_offset was set without am_alignment; set "
                      "UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT too");
            return UCS_ERR_INVALID_PARAM;
        }
        if (params->am_align_offset >= iface->am_alignment) {
            ucs_error("am_align_offset %zu must be smaller than "
                      "am_alignment %zu",
                      params->am_align_offset, iface->am_alignment);
            return UCS_ERR_INVALID_PARAM;
        }
        iface->am_align_offset = params->am_align_offset;
    }

    if (mask & UCT_IFACE_PARAM_FIELD_ERR_HANDLER) {
        iface->err_handler = params->err_handler;
    }
    if (mask & UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG) {
        iface->err_handler_arg = params->err_handler_arg;
    }
    if (mask & UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS) {
        iface->err_handler_flags = params->err_handler_flags;
    }

    status = uct_iface_parse_alloc_methods(iface, config);
    if (status != UCS_OK) {
        return status;
    }

    iface->config.failure_level = (ucs_log_level_t)config->failure_level;
    iface->config.max_num_eps   = config->max_num_eps;

    for (id = 0; id < UCT_AM_ID_MAX; ++id) {
        uct_iface_set_stub_am_handler(iface, id);
    }

    ucs_list_add_tail(&iface->worker->ifaces, &iface->list);
    ++iface->worker->num_ifaces;
    return UCS_OK;
}

void uct_base_iface_cleanup(uct_base_iface_t *iface)
{
    /* uct_iface_close did it already, unless the iface was closed some
     * other way; show callbacks must not see a half torn down iface */
    uct_iface_vfs_cleanup(iface);
    ucs_log_limit_flush(&iface->am_drop_log, UCS_LOG_LEVEL_WARN,
                        "active messages without a handler");
    uct_worker_progress_unregister_safe(&iface->worker->super, &iface->prog_id);
    iface->progress_flags = 0;
    ucs_list_del(&iface->list);
    --iface->worker->num_ifaces;
}

void uct_base_iface_query(uct_base_iface_t *iface, uct_iface_attr_t *attr)
{
    memset(attr, 0, sizeof(*attr));
    attr->max_num_eps   = iface->config.max_num_eps;
    attr->dev_num_paths = 1;
}

static unsigned uct_base_iface_progress_cb(void *arg)
{
    uct_iface_h iface = arg;

    return iface->ops.iface_progress(iface);
}

void uct_base_iface_progress_enable(uct_iface_h tl_iface, unsigned flags)
{
    uct_base_iface_t *iface = uct_base_iface(tl_iface);
    unsigned mask           = UCT_PROGRESS_SEND | UCT_PROGRESS_RECV;

    if ((iface->progress_flags & mask) == 0 && (flags & mask)) {
        uct_worker_progress_register_safe(
            &iface->worker->super, uct_base_iface_progress_cb, iface,
            UCS_CALLBACKQ_FLAG_FAST, &iface->prog_id);
    }
    iface->progress_flags |= flags & mask;
}

void uct_base_iface_progress_disable(uct_iface_h tl_iface, unsigned flags)
{
    uct_base_iface_t *iface = uct_base_iface(tl_iface);
    unsigned mask           = UCT_PROGRESS_SEND | UCT_PROGRESS_RECV;

    iface->progress_flags &= ~(flags & mask);
    if ((iface->progress_flags & mask) == 0) {
        uct_worker_progress_unregister_safe(&iface->worker->super,
                                            &iface->prog_id);
    }
}

ucs_status_t uct_base_iface_flush(uct_iface_h iface, unsigned flags,
                                  uct_completion_t *comp)
{
    return UCS_OK;
}

ucs_status_t uct_base_iface_fence(uct_iface_h iface, unsigned flags)
{
    return UCS_OK;
}

ucs_status_t uct_base_ep_flush(uct_ep_h ep, unsigned flags,
                               uct_completion_t *comp)
{
    return UCS_OK;
}

ucs_status_t uct_base_ep_fence(uct_ep_h ep, unsigned flags)
{
    return UCS_OK;
}

void uct_base_ep_init(uct_base_ep_t *ep, uct_base_iface_t *iface)
{
    ep->super.iface = &iface->super;
    ++iface->num_eps;
    uct_ep_vfs_init(ep, iface);
}

void uct_base_ep_cleanup(uct_base_ep_t *ep)
{
    uct_ep_vfs_cleanup(ep);
    --uct_base_iface(ep->super.iface)->num_eps;
}

int uct_iface_am_handler_is_set(const uct_base_iface_t *iface, uint8_t id)
{
    return iface->am[id].cb != uct_iface_stub_am_handler;
}

ucs_status_t uct_iface_handle_ep_err(uct_iface_h tl_iface, uct_ep_h ep,
                                     ucs_status_t status)
{
    uct_base_iface_t *iface = uct_base_iface(tl_iface);

    uct_iface_stat_peer_failure(iface);
    if (iface->err_handler != NULL) {
        return iface->err_handler(iface->err_handler_arg, ep, status);
    }

    ucs_log(iface->config.failure_level,
            "iface %p (%s/%s): endpoint %p failed: %s; set an error "
            "handler to recover",
            (void *)iface, (iface->tl != NULL) ? iface->tl->name : "?",
            iface->dev_name, (void *)ep, ucs_status_string(status));
    return status;
}

ucs_status_t uct_iface_invalid_am_id(uct_base_iface_t *iface, unsigned id)
{
    ucs_error("iface %p (%s/%s): active message id %u is out of range; "
              "valid ids are 0..%u",
              (void *)iface, (iface->tl != NULL) ? iface->tl->name : "?",
              iface->dev_name, id, (unsigned)UCT_AM_ID_MAX - 1);
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t uct_iface_invalid_length(uct_base_iface_t *iface, const char *what,
                                      size_t length, size_t max)
{
    ucs_error("iface %p (%s/%s): %s length %zu exceeds the maximum %zu; "
              "check uct_iface_query() limits",
              (void *)iface, (iface->tl != NULL) ? iface->tl->name : "?",
              iface->dev_name, what, length, max);
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t uct_iface_invalid_iovcnt(uct_base_iface_t *iface, const char *what,
                                      size_t iovcnt, size_t max)
{
    ucs_error("iface %p (%s/%s): %s iov count %zu exceeds max_iov %zu",
              (void *)iface, (iface->tl != NULL) ? iface->tl->name : "?",
              iface->dev_name, what, iovcnt, max);
    return UCS_ERR_INVALID_PARAM;
}

void uct_iface_trace_am(uct_base_iface_t *iface, uct_am_trace_type_t type,
                        uint8_t id, const void *data, size_t length)
{
    char buf[256] = "";

    if (iface->am_tracer == NULL) {
        return;
    }
    iface->am_tracer(iface->am_tracer_arg, type, id, data, length, buf,
                     sizeof(buf));
    ucs_trace_data("iface %p am id %u length %zu: %s", (void *)iface, id,
                   length, buf);
}

size_t uct_iov_to_buffer(const uct_iov_t *iov, size_t iovcnt, void *dest)
{
    char *p = dest;
    size_t i;
    unsigned c;

    for (i = 0; i < iovcnt; ++i) {
        if (iov[i].length == 0) {
            continue;
        }
        for (c = 0; c < iov[i].count; ++c) {
            memcpy(p, (const char *)iov[i].buffer + (c * iov[i].stride),
                   iov[i].length);
            p += iov[i].length;
        }
    }
    return p - (char *)dest;
}

size_t uct_iov_from_buffer(const uct_iov_t *iov, size_t iovcnt, const void *src)
{
    const char *p = src;
    size_t i;
    unsigned c;

    for (i = 0; i < iovcnt; ++i) {
        if (iov[i].length == 0) {
            continue;
        }
        for (c = 0; c < iov[i].count; ++c) {
            memcpy((char *)iov[i].buffer + (c * iov[i].stride), p,
                   iov[i].length);
            p += iov[i].length;
        }
    }
    return p - (const char *)src;
}

/* ------------------------------------------------------------------------
 * API calls
 */

static int uct_iface_has_device(uct_md_h md, uct_tl_t *tl, const char *dev_name)
{
    uct_tl_device_resource_t *devices;
    unsigned i, num_devices;
    int found = 0;

    if (tl->query_devices(md, &devices, &num_devices) != UCS_OK) {
        return 0;
    }
    for (i = 0; i < num_devices; ++i) {
        if (!strcmp(devices[i].name, dev_name)) {
            found = 1;
        }
    }
    free(devices);
    return found;
}

ucs_status_t uct_iface_open(uct_md_h md, uct_worker_h worker,
                            const uct_iface_params_t *params,
                            const uct_iface_config_t *config,
                            uct_iface_h *iface_p)
{
    uct_iface_config_t *own_config = NULL;
    const char *tl_name, *dev_name;
    ucs_status_t status;
    uct_iface_h iface;
    uct_tl_t *tl;

    if ((md == NULL) || (worker == NULL) || (params == NULL) ||
        (iface_p == NULL)) {
        ucs_error("uct_iface_open: NULL %s", (md == NULL)       ? "md"
                                             : (worker == NULL) ? "worker"
                                             : (params == NULL) ? "params"
                                                                : "iface_p");
        return UCS_ERR_INVALID_PARAM;
    }

    if (!(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE) ||
        !(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
        ucs_error("uct_iface_open: set open_mode to "
                  "UCT_IFACE_OPEN_MODE_DEVICE with "
                  "UCT_IFACE_PARAM_FIELD_OPEN_MODE (sockaddr modes are not "
                  "supported)");
        return UCS_ERR_INVALID_PARAM;
    }

    tl_name  = params->mode.device.tl_name;
    dev_name = params->mode.device.dev_name;
    if ((tl_name == NULL) || (dev_name == NULL)) {
        ucs_error("uct_iface_open: NULL %s name",
                  (tl_name == NULL) ? "transport" : "device");
        return UCS_ERR_INVALID_PARAM;
    }

    tl = uct_component_find_tl(md->component, tl_name);
    if (tl == NULL) {
        ucs_error("transport '%s' is not available on memory domain '%s'; "
                  "run uct_info -d to list transports",
                  tl_name, md->component->name);
        return UCS_ERR_NO_DEVICE;
    }

    if (!uct_iface_has_device(md, tl, dev_name)) {
        ucs_error("device '%s' is not available for transport '%s'; run "
                  "uct_info -d to list devices",
                  dev_name, tl_name);
        return UCS_ERR_NO_DEVICE;
    }

    if (config == NULL) {
        status = uct_md_iface_config_read(md, tl_name, NULL, NULL, &own_config);
        if (status != UCS_OK) {
            return status;
        }
        config = own_config;
    }

    status = tl->iface_open(md, worker, params, config, &iface);
    uct_config_release(own_config);
    if (status != UCS_OK) {
        ucs_debug("failed to open %s/%s: %s", tl_name, dev_name,
                  ucs_status_string(status));
        return status;
    }

    /* the transport has filled its fields: its files can show them */
    uct_iface_vfs_init(uct_base_iface(iface));
    *iface_p = iface;
    return UCS_OK;
}

void uct_iface_close(uct_iface_h iface)
{
    if (iface != NULL) {
        /* out of the tree before the transport starts tearing down */
        uct_iface_vfs_cleanup(uct_base_iface(iface));
        iface->ops.iface_close(iface);
    }
}

ucs_status_t uct_iface_query(uct_iface_h iface, uct_iface_attr_t *iface_attr)
{
    if ((iface == NULL) || (iface_attr == NULL)) {
        ucs_error("uct_iface_query: NULL %s",
                  (iface == NULL) ? "iface" : "attributes");
        return UCS_ERR_INVALID_PARAM;
    }
    return iface->ops.iface_query(iface, iface_attr);
}

ucs_status_t uct_iface_get_device_address(uct_iface_h iface,
                                          uct_device_addr_t *addr)
{
    if ((iface == NULL) || (addr == NULL)) {
        ucs_error("uct_iface_get_device_address: NULL %s",
                  (iface == NULL) ? "iface" : "address buffer");
        return UCS_ERR_INVALID_PARAM;
    }
    return iface->ops.iface_get_device_address(iface, addr);
}

ucs_status_t uct_iface_get_address(uct_iface_h iface, uct_iface_addr_t *addr)
{
    if ((iface == NULL) || (addr == NULL)) {
        ucs_error("uct_iface_get_address: NULL %s",
                  (iface == NULL) ? "iface" : "address buffer");
        return UCS_ERR_INVALID_PARAM;
    }
    return iface->ops.iface_get_address(iface, addr);
}

int uct_iface_is_reachable(const uct_iface_h iface,
                           const uct_device_addr_t *dev_addr,
                           const uct_iface_addr_t *iface_addr)
{
    if (iface == NULL) {
        ucs_error("uct_iface_is_reachable: NULL iface");
        return 0;
    }
    return iface->ops.iface_is_reachable(iface, dev_addr, iface_addr);
}

ucs_status_t uct_ep_check(const uct_ep_h ep, unsigned flags,
                          uct_completion_t *comp)
{
    if (ep == NULL) {
        ucs_error("uct_ep_check: NULL ep");
        return UCS_ERR_INVALID_PARAM;
    }
    return ep->iface->ops.ep_check(ep, flags, comp);
}

ucs_status_t uct_iface_event_fd_get(uct_iface_h iface, int *fd_p)
{
    if ((iface == NULL) || (fd_p == NULL)) {
        ucs_error("uct_iface_event_fd_get: NULL %s",
                  (iface == NULL) ? "iface" : "fd_p");
        return UCS_ERR_INVALID_PARAM;
    }
    return iface->ops.iface_event_fd_get(iface, fd_p);
}

ucs_status_t uct_iface_event_arm(uct_iface_h iface, unsigned events)
{
    if (iface == NULL) {
        ucs_error("uct_iface_event_arm: NULL iface");
        return UCS_ERR_INVALID_PARAM;
    }
    return iface->ops.iface_event_arm(iface, events);
}

ucs_status_t uct_iface_set_am_handler(uct_iface_h tl_iface, uint8_t id,
                                      uct_am_callback_t cb, void *arg,
                                      uint32_t flags)
{
    uct_base_iface_t *iface = uct_base_iface(tl_iface);
    uct_iface_attr_t attr;
    ucs_status_t status;

    if (tl_iface == NULL) {
        ucs_error("uct_iface_set_am_handler: NULL iface");
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_iface_check_am_id(iface, id);
    if (status != UCS_OK) {
        return status;
    }

    if (cb == NULL) {
        uct_iface_set_stub_am_handler(iface, id);
        return UCS_OK;
    }

    status = uct_iface_query(tl_iface, &attr);
    if (status != UCS_OK) {
        return status;
    }

    if (!(flags & UCT_CB_FLAG_ASYNC) &&
        !(attr.cap.flags & UCT_IFACE_FLAG_CB_SYNC)) {
        ucs_error("iface %p: synchronous AM callbacks are not supported by "
                  "%s; register with UCT_CB_FLAG_ASYNC",
                  (void *)iface, (iface->tl != NULL) ? iface->tl->name : "?");
        return UCS_ERR_UNSUPPORTED;
    }
    if ((flags & UCT_CB_FLAG_ASYNC) &&
        !(attr.cap.flags &
          (UCT_IFACE_FLAG_CB_ASYNC | UCT_IFACE_FLAG_CB_SYNC))) {
        ucs_error("iface %p: asynchronous AM callbacks are not supported",
                  (void *)iface);
        return UCS_ERR_UNSUPPORTED;
    }

    iface->am[id].cb    = cb;
    iface->am[id].arg   = arg;
    iface->am[id].flags = flags;
    return UCS_OK;
}

ucs_status_t uct_iface_set_am_tracer(uct_iface_h tl_iface,
                                     uct_am_tracer_t tracer, void *arg)
{
    uct_base_iface_t *iface = uct_base_iface(tl_iface);

    if (tl_iface == NULL) {
        ucs_error("uct_iface_set_am_tracer: NULL iface");
        return UCS_ERR_INVALID_PARAM;
    }
    iface->am_tracer     = tracer;
    iface->am_tracer_arg = arg;
    return UCS_OK;
}

ucs_status_t uct_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    if ((params == NULL) || (ep_p == NULL)) {
        ucs_error("uct_ep_create: NULL %s",
                  (params == NULL) ? "params" : "ep_p");
        return UCS_ERR_INVALID_PARAM;
    }
    if (params->field_mask & UCT_EP_PARAM_FIELD_CM) {
        return uct_cm_ep_create(params, ep_p);
    }
    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE) ||
        (params->iface == NULL)) {
        ucs_error("uct_ep_create: set params->iface and "
                  "UCT_EP_PARAM_FIELD_IFACE, or params->cm and "
                  "UCT_EP_PARAM_FIELD_CM");
        return UCS_ERR_INVALID_PARAM;
    }
    return params->iface->ops.ep_create(params, ep_p);
}

void uct_ep_destroy(uct_ep_h ep)
{
    if (ep != NULL) {
        /* out of the tree even if the transport does not call
         * uct_base_ep_cleanup (then its next ep could not be added); a
         * connection manager's eps are not in it */
        if (!uct_cm_owns_iface(ep->iface)) {
            uct_ep_vfs_cleanup((uct_base_ep_t *)ep);
        }
        ep->iface->ops.ep_destroy(ep);
    }
}

ucs_status_t uct_ep_get_address(uct_ep_h ep, uct_ep_addr_t *addr)
{
    if ((ep == NULL) || (addr == NULL)) {
        ucs_error("uct_ep_get_address: NULL %s",
                  (ep == NULL) ? "ep" : "address buffer");
        return UCS_ERR_INVALID_PARAM;
    }
    return ep->iface->ops.ep_get_address(ep, addr);
}

ucs_status_t uct_ep_connect_to_ep(uct_ep_h ep,
                                  const uct_device_addr_t *dev_addr,
                                  const uct_ep_addr_t *ep_addr)
{
    if ((ep == NULL) || (ep_addr == NULL)) {
        ucs_error("uct_ep_connect_to_ep: NULL %s",
                  (ep == NULL) ? "ep" : "ep address");
        return UCS_ERR_INVALID_PARAM;
    }
    return ep->iface->ops.ep_connect_to_ep(ep, dev_addr, ep_addr);
}
