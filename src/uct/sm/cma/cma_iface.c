/*
 * cma interfaces: configuration, addresses, progress of queued
 * operations, flush, events, object tree.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* IOV_MAX */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cma.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

/* process_vm_*() move at most MAX_RW_COUNT (2 GiB less a page) per call;
 * a segment is kept well below */
#define UCT_CMA_MAX_SEG_SIZE (1ul << 30)

ucs_config_field_t uct_cma_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_cma_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"BW", "11145MBps",
     "Memory bandwidth reported by uct_iface_query() for a cma transfer.",
     ucs_offsetof(uct_cma_iface_config_t, bandwidth), UCS_CONFIG_TYPE_BW},

    {"MAX_IOV", "16",
     "Largest iov count of a PUT or GET zcopy (1 to IOV_MAX, 1024).",
     ucs_offsetof(uct_cma_iface_config_t, max_iov), UCS_CONFIG_TYPE_UINT},

    {"SEG_SIZE", "512k",
     "Bytes one system call moves (1 to 1g). A PUT or GET zcopy up to this "
     "size completes inside the call; a larger one is queued and progress "
     "moves every queued operation by one segment per turn, round robin.",
     ucs_offsetof(uct_cma_iface_config_t, seg_size), UCS_CONFIG_TYPE_MEMUNITS},

    {NULL}};

void uct_cma_iface_signal(uct_cma_iface_t *iface)
{
    uint64_t one = 1;

    if (!iface->armed) {
        return;
    }
    iface->armed = 0;
    if (write(iface->event_fd, &one, sizeof(one)) != sizeof(one)) {
        ucs_warn("cma iface %p: failed to signal the event fd: %m",
                 (void *)iface);
    }
}

void uct_cma_iface_check_flushes(uct_cma_iface_t *iface)
{
    uct_completion_t *comp;
    uct_cma_op_t *op;

    /* a completion may start new operations: it then waits for nothing
     * more than what it started, since the flushes were taken off first */
    while ((iface->num_queued == 0) && !ucs_list_is_empty(&iface->flushes)) {
        op   = ucs_list_extract_head(&iface->flushes, uct_cma_op_t, list);
        comp = op->comp;
        ucs_mpool_put(op);
        uct_invoke_completion(comp, UCS_OK);
    }
}

unsigned uct_cma_iface_progress(uct_iface_h tl_iface)
{
    uct_cma_iface_t *iface = uct_cma_iface(tl_iface);
    unsigned count         = 0;
    size_t turns;
    uct_cma_op_t *op;

    /* one round: every op that was active when it started moves once;
     * ops that completions add wait for the next round */
    for (turns = iface->num_active; (turns > 0) && (iface->num_active > 0);
         --turns) {
        op = ucs_list_extract_head(&iface->active, uct_cma_op_t, list);
        --iface->num_active;
        count += uct_cma_ep_progress_one(iface, op);
    }

    if (ucs_unlikely(!ucs_list_is_empty(&iface->flushes))) {
        uct_cma_iface_check_flushes(iface);
    }
    return count;
}

static ucs_status_t uct_cma_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                        uct_completion_t *comp)
{
    uct_cma_iface_t *iface = uct_cma_iface(tl_iface);
    uct_cma_op_t *op;

    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        return UCS_ERR_UNSUPPORTED; /* cancel is for endpoints */
    }
    if ((iface->num_queued == 0) && ucs_list_is_empty(&iface->flushes)) {
        return UCS_OK;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    /* completes once nothing is queued (later operations also delay it) */
    op = ucs_mpool_get(&iface->op_mp);
    if (op == NULL) {
        ucs_error("cma iface %p: no memory for a flush", (void *)iface);
        return UCS_ERR_NO_MEMORY;
    }
    op->type = UCT_CMA_OP_IFACE_FLUSH;
    op->comp = comp;
    op->ep   = NULL;
    ucs_list_add_tail(&iface->flushes, &op->list);
    return UCS_INPROGRESS;
}

static ucs_status_t uct_cma_iface_fence(uct_iface_h tl_iface, unsigned flags)
{
    return UCS_OK; /* each endpoint runs its operations in order */
}

static ucs_status_t uct_cma_iface_query(uct_iface_h tl_iface,
                                        uct_iface_attr_t *attr)
{
    uct_cma_iface_t *iface = uct_cma_iface(tl_iface);

    uct_base_iface_query(&iface->super, attr);

    attr->cap.flags = UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                      UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                      UCT_IFACE_FLAG_EP_CHECK | UCT_IFACE_FLAG_PENDING |
                      UCT_IFACE_FLAG_CB_SYNC;
    attr->cap.event_flags =
        UCT_IFACE_FLAG_EVENT_SEND_COMP | UCT_IFACE_FLAG_EVENT_FD;

    attr->cap.put.min_zcopy       = 0;
    attr->cap.put.max_zcopy       = SIZE_MAX;
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu       = 1;
    attr->cap.put.max_iov         = iface->max_iov;

    attr->cap.get.min_zcopy       = 0;
    attr->cap.get.max_zcopy       = SIZE_MAX;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu       = 1;
    attr->cap.get.max_iov         = iface->max_iov;

    attr->device_addr_len = sizeof(uct_sm_dev_addr_t);
    attr->iface_addr_len  = UCT_CMA_IFACE_ADDR_LEN;
    attr->ep_addr_len     = 0;
    attr->max_conn_priv   = 0;
    /* a process_vm_*() call of a few bytes takes about 2 us, a liveness
     * check of the peer (poll of its pidfd) 0.4 us of it */
    attr->overhead            = 0.4e-6;
    attr->latency             = ucs_linear_func_make(2e-6, 0);
    attr->bandwidth.dedicated = iface->bandwidth;
    attr->bandwidth.shared    = 0;
    attr->priority            = 0;
    return UCS_OK;
}

static void uct_cma_iface_addr_pack(pid_t pid, uint64_t start, void *addr)
{
    uint32_t pid32 = (uint32_t)pid;

    memcpy(addr, &pid32, sizeof(pid32));
    memcpy((char *)addr + sizeof(pid32), &start, sizeof(start));
}

static ucs_status_t uct_cma_iface_get_address(uct_iface_h tl_iface,
                                              uct_iface_addr_t *addr)
{
    uct_cma_iface_addr_pack(uct_sm_self_pid(), uct_sm_self_start_time(), addr);
    return UCS_OK;
}

static ucs_status_t uct_cma_iface_get_device_address(uct_iface_h tl_iface,
                                                     uct_device_addr_t *addr)
{
    uct_sm_dev_addr_t dev;
    ucs_status_t status;

    status = uct_sm_dev_addr_get(&dev);
    if (status != UCS_OK) {
        return status;
    }
    memcpy(addr, &dev, sizeof(dev));
    return UCS_OK;
}

static int uct_cma_iface_is_reachable(const uct_iface_h tl_iface,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_iface_addr_t *iface_addr)
{
    uint64_t start, now;
    uint32_t pid;

    if (!uct_sm_dev_addr_is_local(dev_addr, UCT_SM_SAME_PID_NS)) {
        return 0;
    }
    if (iface_addr == NULL) {
        return 1; /* the device is */
    }

    /* the process must still be the one that gave the address */
    memcpy(&pid, iface_addr, sizeof(pid));
    memcpy(&start, (const char *)iface_addr + sizeof(pid), sizeof(start));
    return (pid > 0) && (pid <= INT_MAX) &&
           (uct_sm_proc_start_time((pid_t)pid, &now) == UCS_OK) &&
           (now == start);
}

static ucs_status_t uct_cma_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    uct_cma_iface_t *iface = uct_cma_iface(tl_iface);

    if (iface->event_fd < 0) {
        iface->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (iface->event_fd < 0) {
            ucs_error("cma iface %p: eventfd() failed: %m; check the open "
                      "files limit (ulimit -n)",
                      (void *)iface);
            return UCS_ERR_IO_ERROR;
        }
    }

    *fd_p = iface->event_fd;
    return UCS_OK;
}

/*
 * Only progress moves queued operations, so a sleeper would wait for ever
 * on work that is queued: arm refuses while anything is (UCS_ERR_BUSY,
 * progress first), and an operation queued while armed signals the fd at
 * once. There is no receive side, so receive events never come.
 */
static ucs_status_t uct_cma_iface_event_arm(uct_iface_h tl_iface,
                                            unsigned events)
{
    uct_cma_iface_t *iface = uct_cma_iface(tl_iface);
    uint64_t count;
    ssize_t ret;

    if (iface->event_fd < 0) {
        ucs_error("cma iface %p: call uct_iface_event_fd_get() before "
                  "uct_iface_event_arm()",
                  (void *)iface);
        return UCS_ERR_INVALID_PARAM;
    }

    ret = read(iface->event_fd, &count, sizeof(count));
    if (ret == sizeof(count)) {
        return UCS_ERR_BUSY;
    } else if ((ret < 0) && (errno != EAGAIN)) {
        ucs_error("cma iface %p: read(event fd) failed: %m", (void *)iface);
        return UCS_ERR_IO_ERROR;
    }

    if (!(events & UCT_EVENT_SEND_COMP)) {
        iface->armed = 0;
        return UCS_OK;
    }
    if ((iface->num_queued > 0) || !ucs_list_is_empty(&iface->flushes)) {
        return UCS_ERR_BUSY;
    }

    iface->armed = 1;
    return UCS_OK;
}

static void uct_cma_iface_close(uct_iface_h tl_iface)
{
    uct_cma_iface_t *iface = uct_cma_iface(tl_iface);
    uct_cma_op_t *op;

    /* endpoints left with work: their operations are canceled */
    while (iface->num_active > 0) {
        op = ucs_list_head(&iface->active, uct_cma_op_t, list);
        uct_cma_ep_cancel_all(op->ep);
    }
    while (!ucs_list_is_empty(&iface->flushes)) {
        op = ucs_list_extract_head(&iface->flushes, uct_cma_op_t, list);
        uct_invoke_completion(op->comp, UCS_ERR_CANCELED);
        ucs_mpool_put(op);
    }

    if (iface->event_fd >= 0) {
        close(iface->event_fd);
    }
    uct_cma_iface_peers_cleanup(iface);
    ucs_mpool_cleanup(&iface->op_mp, 1);
    uct_base_iface_cleanup(&iface->super);
    free(iface);
}

/* ------------------------------------------------------------------------
 * Object tree
 */

static void uct_cma_iface_vfs_show_address(void *obj, ucs_string_buffer_t *strb,
                                           void *arg_ptr, uint64_t arg_u64)
{
    ucs_string_buffer_appendf(strb, "pid %d start %" PRIu64 "\n",
                              (int)uct_sm_self_pid(), uct_sm_self_start_time());
}

void uct_cma_iface_vfs_init(uct_iface_h tl_iface)
{
    uct_cma_iface_t *iface = uct_cma_iface(tl_iface);

    uct_vfs_add_file(iface, uct_cma_iface_vfs_show_address, NULL, 0, "address");
    uct_vfs_add_uint(iface, &iface->num_queued, sizeof(iface->num_queued),
                     "inflight_ops");
    uct_vfs_add_uint(iface, &iface->queued_bytes, sizeof(iface->queued_bytes),
                     "inflight_bytes");
    uct_vfs_add_uint(iface, &iface->seg_size, sizeof(iface->seg_size),
                     "seg_size");
    uct_vfs_add_uint(iface, &iface->max_iov, sizeof(iface->max_iov), "max_iov");
}

static const uct_iface_ops_t uct_cma_iface_ops = {
    .ep_put_zcopy             = uct_cma_ep_put_zcopy,
    .ep_get_zcopy             = uct_cma_ep_get_zcopy,
    .ep_pending_add           = uct_cma_ep_pending_add,
    .ep_pending_purge         = uct_cma_ep_pending_purge,
    .ep_flush                 = uct_cma_ep_flush,
    .ep_fence                 = uct_cma_ep_fence,
    .ep_check                 = uct_cma_ep_check,
    .ep_create                = uct_cma_ep_create,
    .ep_destroy               = uct_cma_ep_destroy,
    .iface_flush              = uct_cma_iface_flush,
    .iface_fence              = uct_cma_iface_fence,
    .iface_progress           = uct_cma_iface_progress,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_event_fd_get       = uct_cma_iface_event_fd_get,
    .iface_event_arm          = uct_cma_iface_event_arm,
    .iface_close              = uct_cma_iface_close,
    .iface_query              = uct_cma_iface_query,
    .iface_get_device_address = uct_cma_iface_get_device_address,
    .iface_get_address        = uct_cma_iface_get_address,
    .iface_is_reachable       = uct_cma_iface_is_reachable};

static ucs_status_t
uct_cma_iface_check_config(const uct_cma_iface_config_t *config)
{
    if ((config->seg_size == 0) || (config->seg_size > UCT_CMA_MAX_SEG_SIZE)) {
        ucs_error("UCX_CMA_SEG_SIZE=%zu is out of range; it must be between "
                  "1 and 1g bytes",
                  config->seg_size);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->max_iov == 0) || (config->max_iov > IOV_MAX)) {
        ucs_error("UCX_CMA_MAX_IOV=%u is out of range; it must be between 1 "
                  "and %d (IOV_MAX)",
                  config->max_iov, IOV_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(config->bandwidth > 0)) {
        ucs_error("UCX_CMA_BW must be a positive bandwidth, e.g. 10GBps");
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/*
 * Under Yama's ptrace_scope 1 only our ancestors could attach to us, so
 * peers that are not could not reach our memory: let any process attach
 * (what the kernel then allows is the classic rule, same user), as
 * UCX does. Once per process.
 */
static void uct_cma_allow_ptracers(void)
{
    static int done = 0;

    if (__atomic_exchange_n(&done, 1, __ATOMIC_RELAXED)) {
        return;
    }
    if (uct_cma_ptrace_scope() != 1) {
        return;
    }
    if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0) {
        ucs_warn("cma: prctl(PR_SET_PTRACER, ANY) failed: %m; with "
                 "kernel.yama.ptrace_scope=1 peers that are not ancestors "
                 "of this process cannot reach it");
    }
}

ucs_status_t uct_cma_iface_open(uct_md_h md, uct_worker_h worker,
                                const uct_iface_params_t *params,
                                const uct_iface_config_t *tl_config,
                                uct_iface_h *iface_p)
{
    const uct_cma_iface_config_t *config =
        (const uct_cma_iface_config_t *)tl_config;
    ucs_mpool_params_t mp_params;
    uct_cma_iface_t *iface;
    ucs_status_t status;
    char why[256];

    status = uct_cma_iface_check_config(config);
    if (status != UCS_OK) {
        return status;
    }

    if (!uct_cma_usable(why, sizeof(why))) {
        ucs_error("cma: cannot open an interface: %s", why);
        return UCS_ERR_NO_DEVICE;
    }

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("cma: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_base_iface_init(&iface->super, &uct_cma_iface_ops, md, worker,
                                 params, tl_config);
    if (status != UCS_OK) {
        goto err_free;
    }

    iface->seg_size   = config->seg_size;
    iface->max_iov    = config->max_iov;
    iface->bandwidth  = config->bandwidth;
    iface->event_fd   = -1;
    iface->failing_ep = NULL;
    ucs_list_head_init(&iface->active);
    ucs_list_head_init(&iface->flushes);
    ucs_log_limit_init(&iface->err_log);

    status = ucs_hash_init(&iface->peers, 8);
    if (status != UCS_OK) {
        goto err_cleanup_base;
    }

    ucs_mpool_params_reset(&mp_params);
    mp_params.elem_size =
        sizeof(uct_cma_op_t) + (iface->max_iov * sizeof(uct_iov_t));
    mp_params.alignment       = UCS_CACHE_LINE_SIZE;
    mp_params.elems_per_chunk = 32;
    mp_params.name            = "cma_ops";
    status                    = ucs_mpool_init(&iface->op_mp, &mp_params);
    if (status != UCS_OK) {
        goto err_hash;
    }

    uct_cma_allow_ptracers();

    *iface_p = &iface->super.super;
    return UCS_OK;

err_hash:
    ucs_hash_cleanup(&iface->peers);
err_cleanup_base:
    uct_base_iface_cleanup(&iface->super);
err_free:
    free(iface);
    return status;
}
