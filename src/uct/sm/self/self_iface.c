/*
 * self interfaces: configuration, addresses, events, descriptors.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "self.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

ucs_config_field_t uct_self_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_self_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"SEG_SIZE", "8k",
     "Largest message of the bcopy and zcopy active message modes; short "
     "messages take up to SEG_SIZE minus the 8-byte header.",
     ucs_offsetof(uct_self_iface_config_t, seg_size), UCS_CONFIG_TYPE_MEMUNITS},

    {NULL}};

/* Process-wide list of self interfaces, for address lookup at connect. */
UCS_LIST_HEAD(uct_self_ifaces);
pthread_mutex_t uct_self_lock    = PTHREAD_MUTEX_INITIALIZER;
static uint64_t uct_self_next_id = 1;

uct_self_iface_t *uct_self_iface_find(uct_self_iface_addr_t id)
{
    uct_self_iface_t *iface;

    ucs_list_for_each(iface, &uct_self_ifaces, list) {
        if (iface->id == id) {
            return iface;
        }
    }
    return NULL;
}

void uct_self_iface_signal(uct_self_iface_t *iface)
{
    uint64_t one = 1;

    iface->armed = 0;
    if (write(iface->event_fd, &one, sizeof(one)) != sizeof(one)) {
        ucs_warn("self iface %p: failed to signal the event fd: %m",
                 (void *)iface);
    }
}

static void uct_self_mp_obj_init(uct_iface_h tl_iface, void *obj,
                                 uct_mem_h memh)
{
    uct_self_iface_t *iface = uct_self_iface(tl_iface);

    /* self has no wire header to overlap the headroom: the release
     * pointer is stored once, for the object's life */
    (void)memh;
    uct_rx_desc_set_release(&iface->rx_layout, obj, &iface->release.super);
}

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
                      UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_CB_ASYNC |
                      UCT_IFACE_FLAG_ERRHANDLE_AM_ID |
                      UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF;
    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_FD;

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
    memcpy(addr, &uct_self_iface(tl_iface)->id, sizeof(uct_self_iface_addr_t));
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

/* Every operation completes inside the call, so there is nothing for the
 * worker to progress: enabling progress registers no callback. */
static void uct_self_iface_progress_enable(uct_iface_h tl_iface, unsigned flags)
{}

static void uct_self_iface_progress_disable(uct_iface_h tl_iface,
                                            unsigned flags)
{}

static ucs_status_t uct_self_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    uct_self_iface_t *iface = uct_self_iface(tl_iface);

    if (iface->event_fd < 0) {
        iface->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (iface->event_fd < 0) {
            ucs_error("self iface %p: eventfd() failed: %m; check the open "
                      "files limit (ulimit -n)",
                      (void *)iface);
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
                  "uct_iface_event_arm()",
                  (void *)iface);
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
        ucs_error("self iface %p: read(event fd) failed: %m", (void *)iface);
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
        ep->short_max = -1;
        ep->peer      = NULL;
    }
    pthread_mutex_unlock(&uct_self_lock);

    if (iface->event_fd >= 0) {
        close(iface->event_fd);
    }
    ucs_mpool_cleanup(&iface->msg_mp, 1);
    uct_base_iface_cleanup(&iface->super);
    free(iface);
}

/* The interface address: what uct_ep_create's iface_addr carries */
static void uct_self_iface_vfs_show_address(void *obj,
                                            ucs_string_buffer_t *strb,
                                            void *arg_ptr, uint64_t arg_u64)
{
    const uct_self_iface_t *iface = obj;

    ucs_string_buffer_appendf(strb, "iface 0x%" PRIx64 "\n",
                              (uint64_t)iface->id);
}

void uct_self_iface_vfs_init(uct_iface_h tl_iface)
{
    uct_self_iface_t *iface = uct_self_iface(tl_iface);

    uct_vfs_add_file(iface, uct_self_iface_vfs_show_address, NULL, 0,
                     "address");
    /* delivery is synchronous: nothing ever waits in a queue */
    uct_vfs_add_value(iface, 0, "tx_queued_bytes");
    uct_vfs_add_value(iface, 0, "rx_queued_msgs");
    uct_vfs_add_uint(iface, &iface->seg_size, sizeof(iface->seg_size),
                     "seg_size");
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
    .iface_progress_enable    = uct_self_iface_progress_enable,
    .iface_progress_disable   = uct_self_iface_progress_disable,
    .iface_event_fd_get       = uct_self_iface_event_fd_get,
    .iface_event_arm          = uct_self_iface_event_arm,
    .iface_close              = uct_self_iface_close,
    .iface_query              = uct_self_iface_query,
    .iface_get_device_address = uct_self_iface_get_device_address,
    .iface_get_address        = uct_self_iface_get_address,
    .iface_is_reachable       = uct_self_iface_is_reachable};

ucs_status_t uct_self_iface_open(uct_md_h md, uct_worker_h worker,
                                 const uct_iface_params_t *params,
                                 const uct_iface_config_t *tl_config,
                                 uct_iface_h *iface_p)
{
    const uct_self_iface_config_t *config =
        (const uct_self_iface_config_t *)tl_config;
    uct_iface_mpool_params_t mp_params;
    uct_self_iface_t *iface;
    ucs_status_t status;

    if (config->seg_size < sizeof(uint64_t)) {
        ucs_error("UCX_SELF_SEG_SIZE=%zu is too small; it must be at least "
                  "%zu bytes",
                  config->seg_size, sizeof(uint64_t));
        return UCS_ERR_INVALID_PARAM;
    }

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("self: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_base_iface_init(&iface->super, &uct_self_iface_ops, md, worker,
                                 params, tl_config);
    if (status != UCS_OK) {
        goto err_free;
    }

    /* nobody can read the counters: the cheapest message goes without */
    if (!iface->super.stats_on) {
        iface->super.super.ops.ep_am_short = uct_self_ep_am_short_uncounted;
    }

    iface->seg_size = config->seg_size;
    iface->event_fd = -1;
    ucs_list_head_init(&iface->peers);

    /* object: [recv desc pointer][rx headroom][data], data aligned */
    uct_rx_desc_layout_init(&iface->super, 0, 0, iface->seg_size,
                            &iface->rx_layout);
    uct_rx_desc_release_init(&iface->release, &iface->rx_layout);
    uct_rx_desc_mpool_params(&iface->rx_layout, &mp_params);
    mp_params.elems_per_chunk = 64;
    mp_params.max_elems       = UINT_MAX;
    mp_params.obj_init        = uct_self_mp_obj_init;
    mp_params.name            = "self_msg_desc";
    status = uct_iface_mpool_init(&iface->super, &iface->msg_mp, &mp_params);
    if (status != UCS_OK) {
        goto err_cleanup_base;
    }

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
