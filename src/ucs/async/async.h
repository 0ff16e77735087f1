#ifndef UCS_ASYNC_ASYNC_H_
#define UCS_ASYNC_ASYNC_H_

/**
 * @file
 * Asynchronous event context: the structure, its initialization for
 * embedding, and the inline calls that block and unblock it. Included by
 * uct.h users that run an async context and by transports.
 *
 * A context owns a lock. Its handlers (fd events and timers) run only while
 * holding that lock, so code between ucs_async_block() and
 * ucs_async_unblock() never runs at the same time as a handler of the
 * context. An event that arrives while the context is blocked is recorded
 * and runs later, when the owner calls ucs_async_check_miss() (from its
 * progress loop).
 *
 * Thread modes: one process-wide thread waits on every registered fd and
 * timer; it takes the context lock with a try-lock before calling a
 * handler, and defers the event when that fails. It never waits for a
 * context lock. POLL mode: no thread; ucs_async_check_miss() and
 * ucs_async_poll() run expired timers and ready fds from the caller.
 */

#include <ucs/async/async_fwd.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/spinlock.h>
#include <ucs/type/status.h>

#include <pthread.h>

BEGIN_C_DECLS

/** A registered handler (private to async.c). */
typedef struct ucs_async_handler ucs_async_handler_t;

/** Recursive mutex with a known owner (UCS_ASYNC_MODE_THREAD_MUTEX). */
typedef struct ucs_async_mutex {
    pthread_mutex_t lock; /**< the mutex */
    pthread_t owner;      /**< UCS_SPINLOCK_OWNER_NULL when free */
    int count;            /**< recursion depth of the owner */
} ucs_async_mutex_t;

/**
 * The context. Embed it and use ucs_async_context_init()/cleanup(), or
 * allocate it with ucs_async_context_create(). Fields are private to
 * async.c except through the inline calls below.
 */
struct ucs_async_context {
    /** The context lock; which member depends on the mode. */
    union {
        ucs_recursive_spinlock_t spinlock; /**< THREAD_SPINLOCK and POLL */
        ucs_async_mutex_t mutex;           /**< THREAD_MUTEX */
    } lock;
    ucs_async_mode_t mode;             /**< where handlers run */
    unsigned num_missed;               /**< handlers in the missed queue */
    unsigned num_handlers;             /**< registered handlers */
    unsigned num_handler_objs;         /**< handler objects still alive */
    ucs_spinlock_t missed_lock;        /**< protects the missed queue */
    ucs_async_handler_t *missed_head;  /**< first deferred handler */
    ucs_async_handler_t **missed_tail; /**< link to append the next one */
};

/**
 * Initialize an embedded context.
 *
 * @param [out] async the context to initialize; must not move while in use.
 * @param [in]  mode  a thread mode or UCS_ASYNC_MODE_POLL.
 * @return UCS_OK; UCS_ERR_UNSUPPORTED for UCS_ASYNC_MODE_SIGNAL;
 *         UCS_ERR_INVALID_PARAM for an unknown mode; UCS_ERR_IO_ERROR if
 *         the mutex could not be created; or the error of creating a lock.
 */
ucs_status_t ucs_async_context_init(ucs_async_context_t *async,
                                    ucs_async_mode_t mode);

/**
 * Release an embedded context. Handlers still registered on it are removed
 * (with a warning); waits until no other thread is using any of them.
 * Not from one of its own handlers, nor inside a blocked section.
 *
 * @param [in] async a context made by ucs_async_context_init().
 */
void ucs_async_context_cleanup(ucs_async_context_t *async);

/**
 * Run the deferred events of a context, if its lock can be taken at once
 * (otherwise on a later call); use ucs_async_check_miss(), which calls it
 * only when needed.
 *
 * @param [in] async the context.
 */
void ucs_async_dispatch_missed(ucs_async_context_t *async);

/**
 * Take a ucs_async_mutex_t, recursively.
 *
 * @param [in,out] m the mutex.
 */
static UCS_F_ALWAYS_INLINE void ucs_async_mutex_lock(ucs_async_mutex_t *m)
{
    pthread_t self = pthread_self();

    if (!pthread_equal(__atomic_load_n(&m->owner, __ATOMIC_RELAXED), self)) {
        pthread_mutex_lock(&m->lock);
        __atomic_store_n(&m->owner, self, __ATOMIC_RELAXED);
    }
    ++m->count;
}

/**
 * Take a ucs_async_mutex_t if it is free or already held by the caller.
 *
 * @param [in,out] m the mutex.
 * @return 1 if taken, 0 if another thread holds it.
 */
static UCS_F_ALWAYS_INLINE int ucs_async_mutex_trylock(ucs_async_mutex_t *m)
{
    pthread_t self = pthread_self();

    if (!pthread_equal(__atomic_load_n(&m->owner, __ATOMIC_RELAXED), self)) {
        if (pthread_mutex_trylock(&m->lock) != 0) {
            return 0;
        }
        __atomic_store_n(&m->owner, self, __ATOMIC_RELAXED);
    }
    ++m->count;
    return 1;
}

/**
 * Release one level of a ucs_async_mutex_t held by the caller.
 *
 * @param [in,out] m the mutex.
 */
static UCS_F_ALWAYS_INLINE void ucs_async_mutex_unlock(ucs_async_mutex_t *m)
{
    if (--m->count == 0) {
        __atomic_store_n(&m->owner, UCS_SPINLOCK_OWNER_NULL, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&m->lock);
    }
}

/**
 * Enter a blocked section: no handler of @a async runs until the matching
 * ucs_async_unblock(); its events are deferred. Recursive. In the thread
 * modes it waits while the async thread runs one of the handlers.
 *
 * @param [in] async the context.
 */
static UCS_F_ALWAYS_INLINE void ucs_async_block(ucs_async_context_t *async)
{
    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        ucs_async_mutex_lock(&async->lock.mutex);
    } else {
        ucs_recursive_spin_lock(&async->lock.spinlock);
    }
}

/**
 * Leave a blocked section entered by ucs_async_block() or
 * ucs_async_try_block() on the same thread.
 *
 * @param [in] async the context.
 */
static UCS_F_ALWAYS_INLINE void ucs_async_unblock(ucs_async_context_t *async)
{
    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        ucs_async_mutex_unlock(&async->lock.mutex);
    } else {
        ucs_recursive_spin_unlock(&async->lock.spinlock);
    }
}

/**
 * Enter a blocked section if no other thread is in one.
 *
 * @param [in] async the context.
 * @return nonzero if entered (leave with ucs_async_unblock()), 0 if not.
 */
static UCS_F_ALWAYS_INLINE int ucs_async_try_block(ucs_async_context_t *async)
{
    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        return ucs_async_mutex_trylock(&async->lock.mutex);
    }
    return ucs_recursive_spin_trylock(&async->lock.spinlock);
}

/**
 * Whether the calling thread is inside a blocked section of @a async
 * (or running one of its handlers). For assertions.
 *
 * @param [in] async the context.
 * @return nonzero if the caller holds the context lock.
 */
static inline int ucs_async_is_blocked(const ucs_async_context_t *async)
{
    pthread_t owner;

    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        owner = __atomic_load_n(&async->lock.mutex.owner, __ATOMIC_RELAXED);
        return pthread_equal(owner, pthread_self());
    }
    return ucs_recursive_spin_is_owner(&async->lock.spinlock, pthread_self());
}

/**
 * Run handlers whose events were deferred while @a async was blocked, and
 * in POLL mode poll the context's timers and fds. Cheap when there is
 * nothing to do; call it from the progress loop, outside blocked sections.
 *
 * @param [in] async the context.
 */
static UCS_F_ALWAYS_INLINE void ucs_async_check_miss(ucs_async_context_t *async)
{
    if (ucs_unlikely(__atomic_load_n(&async->num_missed, __ATOMIC_RELAXED) !=
                     0)) {
        ucs_async_dispatch_missed(async);
    } else if (ucs_unlikely(async->mode == UCS_ASYNC_MODE_POLL) &&
               (__atomic_load_n(&async->num_handlers, __ATOMIC_RELAXED) != 0)) {
        ucs_async_poll(async);
    }
}

/** Same as ucs_async_block() (UCX spelling).
 *  @param _async the context. */
#define UCS_ASYNC_BLOCK(_async) ucs_async_block(_async)
/** Same as ucs_async_unblock() (UCX spelling).
 *  @param _async the context. */
#define UCS_ASYNC_UNBLOCK(_async) ucs_async_unblock(_async)

END_C_DECLS

#endif
