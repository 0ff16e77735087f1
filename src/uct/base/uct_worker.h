/*
 * Worker: the progress engine. Interfaces add their progress function to
 * the worker's callback queue; uct_worker_progress() runs it.
 */
#ifndef UCT_BASE_WORKER_H_
#define UCT_BASE_WORKER_H_

#include <uct/api/uct.h>
#include <ucs/async/async.h>
#include <ucs/datastruct/list.h>

BEGIN_C_DECLS

typedef struct uct_priv_worker {
    uct_worker_t super;         /* public part: progress queue */
    ucs_async_context_t *async; /* may be NULL */
    ucs_thread_mode_t thread_mode;
    uint64_t id;            /* process-wide unique number */
    ucs_list_link_t ifaces; /* uct_base_iface_t on this worker */
    unsigned num_ifaces;
} uct_priv_worker_t;

static inline uct_priv_worker_t *uct_worker_priv(uct_worker_h worker)
{
    return ucs_container_of(worker, uct_priv_worker_t, super);
}

END_C_DECLS

#endif
