/*
 * Asynchronous event context.
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
#ifndef UCS_ASYNC_ASYNC_H_
#define UCS_ASYNC_ASYNC_H_

#include <ucs/async/async_fwd.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/spinlock.h>
#include <ucs/type/status.h>

#include <pthread.h>

BEGIN_C_DECLS

typedef struct ucs_async_handler ucs_async_handler_t;

/** Recursive mutex with a known owner (UCS_ASYNC_MODE_THREAD_MUTEX). */
typedef struct ucs_async_mutex {
    pthread_mutex_t lock;
    pthread_t       owner; /* UCS_SPINLOCK_OWNER_NULL when free */
    int             count;
} ucs_async_mutex_t;

/**
 * The context. Embed it and use ucs_async_context_init()/cleanup(), or
 * allocate it with ucs_async_context_create(). Fields are private to
 * async.c except through the inline calls below.
 */
struct ucs_async_context {
    union {
        ucs_recursive_spinlock_t spinlock; /* THREAD_SPINLOCK and POLL */
        ucs_async_mutex_t        mutex;    /* THREAD_MUTEX */
    } lock;
    ucs_async_mode_t    mode;
    unsigned            num_missed;    /* handlers in the missed queue */
    unsigned            num_handlers;  /* registered handlers */
    unsigned            num_handler_objs; /* handler objects still alive */
    ucs_spinlock_t      missed_lock;   /* protects the missed queue */
    ucs_async_handler_t *missed_head;
    ucs_async_handler_t **missed_tail;
};

/**
 * Initialize an embedded context for @a mode. UCS_ERR_UNSUPPORTED for
 * UCS_ASYNC_MODE_SIGNAL.
 */
ucs_status_t ucs_async_context_init(ucs_async_context_t *async,
                                    ucs_async_mode_t mode);

/**
 * Release an embedded context. Handlers still registered on it are removed
 * (with a warning); waits until no other thread is using any of them.
 */
void ucs_async_context_cleanup(ucs_async_context_t *async);

/** Run the deferred events of @a async; use ucs_async_check_miss(). */
void ucs_async_dispatch_missed(ucs_async_context_t *async);

static UCS_F_ALWAYS_INLINE void ucs_async_mutex_lock(ucs_async_mutex_t *m)
{
    pthread_t self = pthread_self();

    if (!pthread_equal(__atomic_load_n(&m->owner, __ATOMIC_RELAXED),
                       self)) {
        pthread_mutex_lock(&m->lock);
        __atomic_store_n(&m->owner, self, __ATOMIC_RELAXED);
    }
    ++m->count;
}

static UCS_F_ALWAYS_INLINE int ucs_async_mutex_trylock(ucs_async_mutex_t *m)
{
    pthread_t self = pthread_self();

    if (!pthread_equal(__atomic_load_n(&m->owner, __ATOMIC_RELAXED),
                       self)) {
        if (pthread_mutex_trylock(&m->lock) != 0) {
            return 0;
        }
        __atomic_store_n(&m->owner, self, __ATOMIC_RELAXED);
    }
    ++m->count;
    return 1;
}

static UCS_F_ALWAYS_INLINE void ucs_async_mutex_unlock(ucs_async_mutex_t *m)
{
    if (--m->count == 0) {
        __atomic_store_n(&m->owner, UCS_SPINLOCK_OWNER_NULL,
                         __ATOMIC_RELAXED);
        pthread_mutex_unlock(&m->lock);
    }
}

/**
 * Enter a blocked section: no handler of @a async runs until the matching
 * ucs_async_unblock(). Recursive.
 */
static UCS_F_ALWAYS_INLINE void ucs_async_block(ucs_async_context_t *async)
{
    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        ucs_async_mutex_lock(&async->lock.mutex);
    } else {
        ucs_recursive_spin_lock(&async->lock.spinlock);
    }
}

/** Leave a blocked section. */
static UCS_F_ALWAYS_INLINE void ucs_async_unblock(ucs_async_context_t *async)
{
    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        ucs_async_mutex_unlock(&async->lock.mutex);
    } else {
        ucs_recursive_spin_unlock(&async->lock.spinlock);
    }
}

/** Enter a blocked section if nobody else is in one; nonzero on success. */
static UCS_F_ALWAYS_INLINE int ucs_async_try_block(ucs_async_context_t *async)
{
    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        return ucs_async_mutex_trylock(&async->lock.mutex);
    }
    return ucs_recursive_spin_trylock(&async->lock.spinlock);
}

/**
 * Nonzero if the calling thread is inside a blocked section of @a async
 * (or running one of its handlers). For assertions.
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
 */
static UCS_F_ALWAYS_INLINE void
ucs_async_check_miss(ucs_async_context_t *async)
{
    if (ucs_unlikely(__atomic_load_n(&async->num_missed,
                                     __ATOMIC_RELAXED) != 0)) {
        ucs_async_dispatch_missed(async);
    } else if (ucs_unlikely(async->mode == UCS_ASYNC_MODE_POLL) &&
               (__atomic_load_n(&async->num_handlers,
                                __ATOMIC_RELAXED) != 0)) {
        ucs_async_poll(async);
    }
}

#define UCS_ASYNC_BLOCK(_async)   ucs_async_block(_async)
#define UCS_ASYNC_UNBLOCK(_async) ucs_async_unblock(_async)

END_C_DECLS

#endif
