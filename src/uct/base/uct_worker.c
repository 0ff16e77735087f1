/*
 * Worker: progress queue owner.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_worker.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>

#include <stdlib.h>

static uint64_t uct_worker_next_id = 0;

ucs_status_t uct_worker_create(ucs_async_context_t *async,
                               ucs_thread_mode_t thread_mode,
                               uct_worker_h *worker_p)
{
    uct_priv_worker_t *worker;
    ucs_status_t status;

    if (worker_p == NULL) {
        ucs_error("uct_worker_create: NULL worker_p");
        return UCS_ERR_INVALID_PARAM;
    }
    if (thread_mode >= UCS_THREAD_MODE_LAST) {
        ucs_error("uct_worker_create: invalid thread mode %d",
                  (int)thread_mode);
        return UCS_ERR_INVALID_PARAM;
    }
    if (thread_mode == UCS_THREAD_MODE_MULTI) {
        ucs_error("uct_worker_create: UCS_THREAD_MODE_MULTI is not "
                  "supported; use one worker per thread or serialize calls "
                  "(UCS_THREAD_MODE_SERIALIZED)");
        return UCS_ERR_UNSUPPORTED;
    }

    worker = calloc(1, sizeof(*worker));
    if (worker == NULL) {
        ucs_error("failed to allocate a worker");
        return UCS_ERR_NO_MEMORY;
    }

    status = ucs_callbackq_init(&worker->super.progress_q);
    if (status != UCS_OK) {
        free(worker);
        return status;
    }

    worker->async       = async;
    worker->thread_mode = thread_mode;
    worker->id = __atomic_fetch_add(&uct_worker_next_id, 1, __ATOMIC_RELAXED);
    ucs_list_head_init(&worker->ifaces);
    uct_worker_vfs_init(worker);

    *worker_p = &worker->super;
    return UCS_OK;
}

void uct_worker_destroy(uct_worker_h tl_worker)
{
    uct_priv_worker_t *worker;

    if (tl_worker == NULL) {
        return;
    }

    worker = uct_worker_priv(tl_worker);
    ucs_vfs_obj_remove(worker);
    if (worker->num_ifaces != 0) {
        ucs_warn("worker %p destroyed with %u interfaces still open; close "
                 "them first",
                 (void *)worker, worker->num_ifaces);
    }
    ucs_callbackq_cleanup(&worker->super.progress_q);
    free(worker);
}

void uct_worker_progress_register_safe(uct_worker_h worker, ucs_callback_t func,
                                       void *arg, unsigned flags,
                                       uct_worker_cb_id_t *id_p)
{
    if ((worker == NULL) || (func == NULL) || (id_p == NULL)) {
        ucs_error("uct_worker_progress_register_safe: NULL %s",
                  (worker == NULL) ? "worker"
                  : (func == NULL) ? "callback"
                                   : "id_p");
        return;
    }

    if (*id_p == UCS_CALLBACKQ_ID_NULL) {
        *id_p = ucs_callbackq_add_safe(&worker->progress_q, func, arg, flags);
    }
}

void uct_worker_progress_unregister_safe(uct_worker_h worker,
                                         uct_worker_cb_id_t *id_p)
{
    if ((worker == NULL) || (id_p == NULL)) {
        return;
    }

    if (*id_p != UCS_CALLBACKQ_ID_NULL) {
        ucs_callbackq_remove_safe(&worker->progress_q, *id_p);
        *id_p = UCS_CALLBACKQ_ID_NULL;
    }
}
