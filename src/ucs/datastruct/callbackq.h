#ifndef UCS_DATASTRUCT_CALLBACKQ_H_
#define UCS_DATASTRUCT_CALLBACKQ_H_

/**
 * @file
 * Progress callback queue: the list of functions a worker calls on every
 * progress pass. uct.h embeds one in uct_worker_t, so uct_worker_progress()
 * is an inline call of ucs_callbackq_dispatch().
 *
 * Structure
 *  - Up to UCS_CALLBACKQ_FAST_COUNT callbacks added with
 *    UCS_CALLBACKQ_FLAG_FAST live in a small array embedded in the queue;
 *    ucs_callbackq_dispatch() walks it until a NULL callback, with no lock
 *    and no branch other than the loop.
 *  - Every other callback (not FAST, ONESHOT, or FAST when the array is
 *    full) lives in a "slow" array. While the slow array or the deferred
 *    command list is non-empty, one extra entry of the fast array is a proxy
 *    that applies deferred commands and then calls the slow callbacks.
 *
 * Threads and re-entrancy
 *  - The queue has an owner thread: the one that calls dispatch. The plain
 *    functions (add, remove, remove_if, cleanup) must be called by the owner
 *    (or while no dispatch runs); they may be called from inside a running
 *    callback, including to remove the running callback itself or another.
 *  - add_safe and remove_safe may be called from any thread, including from
 *    inside a callback. They never touch the arrays that dispatch walks
 *    except through atomic stores: add_safe queues the callback for the
 *    proxy, which inserts it on the next dispatch; remove_safe disables the
 *    callback at once and lets the proxy unlink it. When called from another
 *    thread, a call of the callback that already started may still be
 *    running when remove_safe returns.
 *  - A lock protects the bookkeeping; dispatch never takes it, and the proxy
 *    releases it while it calls the slow callbacks.
 *  - A callback that is removed (or added) during a dispatch pass may or may
 *    not be called again (or yet) in that pass; it is never called after the
 *    pass in which it was removed ended. Removing a fast callback during a
 *    pass may also make that pass skip the entry that followed it (a fast
 *    callback, or the slow callbacks as a group); apart from that, every
 *    callback is called once per pass.
 */

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/** Number of callbacks the lock-free fast array holds. */
#define UCS_CALLBACKQ_FAST_COUNT 7

/** An invalid callback id. */
#define UCS_CALLBACKQ_ID_NULL (-1)

/**
 * A progress callback, called from ucs_callbackq_dispatch() on the owner
 * thread.
 *
 * @param [in] arg the argument given when it was added.
 * @return the amount of work done (0 if none); the results of one dispatch
 *         pass are summed.
 */
typedef unsigned (*ucs_callback_t)(void *arg);

/** Flags of ucs_callbackq_add(). */
enum ucs_callbackq_flags {
    /** Prefer the fast array (best effort; ignored with ONESHOT). */
    UCS_CALLBACKQ_FLAG_FAST = UCS_BIT(0),
    /** Call once, then remove automatically. */
    UCS_CALLBACKQ_FLAG_ONESHOT = UCS_BIT(1)
};

/** A registered callback, as seen by dispatch and by remove_if
 *  predicates. */
typedef struct ucs_callbackq_elem {
    ucs_callback_t cb; /**< the callback; NULL ends the fast array */
    void *arg;         /**< its argument */
    unsigned flags;    /**< UCS_CALLBACKQ_FLAG_* given at add time */
    int id;            /**< the id returned by add */
} ucs_callbackq_elem_t;

/**
 * Selects elements for ucs_callbackq_remove_if().
 *
 * @param [in] elem a registered callback.
 * @param [in] arg  the argument given to ucs_callbackq_remove_if().
 * @return nonzero to remove @a elem.
 */
typedef int (*ucs_callbackq_predicate_t)(const ucs_callbackq_elem_t *elem,
                                         void *arg);

/** Bookkeeping of a queue (private to callbackq.c). */
typedef struct ucs_callbackq_priv ucs_callbackq_priv_t;

/** A callback queue; fields are private except to the inline dispatch. */
typedef struct ucs_callbackq {
    /** Fast callbacks, possibly the proxy, then NULL entries: one more than
     *  the callbacks plus the proxy, so the walk always ends on a NULL. */
    ucs_callbackq_elem_t fast_elems[UCS_CALLBACKQ_FAST_COUNT + 2];
    ucs_callbackq_priv_t *priv; /**< everything else (slow array, lock) */
} ucs_callbackq_t;

/**
 * Initialize an empty queue; the calling thread need not be its owner.
 *
 * @param [out] cbq the queue; release with ucs_callbackq_cleanup().
 * @return UCS_OK or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_callbackq_init(ucs_callbackq_t *cbq);

/**
 * Release the queue. Deferred removals are applied first; callbacks still
 * registered afterwards draw one warning with their count. No dispatch may
 * run and no other thread may use the queue.
 *
 * @param [in,out] cbq the queue.
 */
void ucs_callbackq_cleanup(ucs_callbackq_t *cbq);

/**
 * Register a callback; owner thread only, callable from inside a callback.
 *
 * @param [in,out] cbq   the queue.
 * @param [in]     cb    the callback, not NULL.
 * @param [in]     arg   passed to @a cb; must stay valid until removal.
 * @param [in]     flags UCS_CALLBACKQ_FLAG_* bits.
 * @return the id (>= 0) for removal, or UCS_CALLBACKQ_ID_NULL on failure
 *         (NULL @a cb, or out of memory).
 */
int ucs_callbackq_add(ucs_callbackq_t *cbq, ucs_callback_t cb, void *arg,
                      unsigned flags);

/**
 * Unregister a callback; owner thread only, callable from inside a
 * callback (including the one being removed).
 *
 * @param [in,out] cbq the queue.
 * @param [in]     id  an id returned by an add call.
 * @return UCS_OK, or UCS_ERR_NO_ELEM if @a id is not registered.
 */
ucs_status_t ucs_callbackq_remove(ucs_callbackq_t *cbq, int id);

/**
 * Like ucs_callbackq_add(), from any thread. The callback is inserted by the
 * next dispatch pass.
 *
 * @param [in,out] cbq   the queue.
 * @param [in]     cb    the callback, not NULL.
 * @param [in]     arg   passed to @a cb; must stay valid until removal.
 * @param [in]     flags UCS_CALLBACKQ_FLAG_* bits.
 * @return the id (>= 0), or UCS_CALLBACKQ_ID_NULL on failure.
 */
int ucs_callbackq_add_safe(ucs_callbackq_t *cbq, ucs_callback_t cb, void *arg,
                           unsigned flags);

/**
 * Like ucs_callbackq_remove(), from any thread. The callback is not called
 * by any dispatch that starts after this returns.
 *
 * @param [in,out] cbq the queue.
 * @param [in]     id  an id returned by an add call.
 * @return UCS_OK, or UCS_ERR_NO_ELEM if @a id is not registered (or its
 *         removal is already pending).
 */
ucs_status_t ucs_callbackq_remove_safe(ucs_callbackq_t *cbq, int id);

/**
 * Unregister every callback for which a predicate returns nonzero; owner
 * thread only.
 *
 * @param [in,out] cbq  the queue.
 * @param [in]     pred called with each registered callback and @a arg;
 *                      runs under the queue lock and must not call back
 *                      into the queue.
 * @param [in]     arg  passed to @a pred.
 * @return the number of callbacks removed.
 */
unsigned ucs_callbackq_remove_if(ucs_callbackq_t *cbq,
                                 ucs_callbackq_predicate_t pred, void *arg);

/**
 * Call every registered callback once (lock-free for the fast array).
 * Owner thread only; not re-entrant on the same queue.
 *
 * @param [in] cbq the queue.
 * @return the sum of the callbacks' results.
 */
static UCS_F_ALWAYS_INLINE unsigned ucs_callbackq_dispatch(ucs_callbackq_t *cbq)
{
    ucs_callbackq_elem_t *elem;
    ucs_callback_t cb;
    unsigned count = 0;

    /* Another thread may set a callback (the proxy, or a disabled stub);
     * the acquire pairs with its release store so that arg is seen too. */
    for (elem = cbq->fast_elems;
         (cb = __atomic_load_n(&elem->cb, __ATOMIC_ACQUIRE)) != NULL; ++elem) {
        count += cb(elem->arg);
    }
    return count;
}

END_C_DECLS

#endif
