/**
 * @file
 * Spinlocks: a plain one, and a recursive one that remembers its owner
 * thread (the async context's lock, "is this thread inside a blocked
 * section?" checks).
 *
 * The owner field of the recursive lock is written only by the thread
 * holding the lock and read by any thread; a reader that is not the owner
 * can never see its own thread id there, which is all the checks need.
 *
 * Included by the async layer, the registration cache and transports. The
 * plain lock is not recursive: taking it twice in one thread deadlocks.
 */
#ifndef UCS_TYPE_SPINLOCK_H_
#define UCS_TYPE_SPINLOCK_H_

#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <pthread.h>

BEGIN_C_DECLS

/** ucs_spinlock_init() flag: the lock lives in memory shared by processes. */
#define UCS_SPINLOCK_FLAG_SHARED UCS_BIT(0)

/** "No thread" value of ucs_recursive_spinlock_t::owner. */
#define UCS_SPINLOCK_OWNER_NULL ((pthread_t)-1)

/** A test-and-set spinlock on one atomic word. */
typedef struct ucs_spinlock {
    int lock; /**< 0 free, 1 taken; works in shared memory too. */
} ucs_spinlock_t;

/** A spinlock its owner thread may take again (nested). */
typedef struct ucs_recursive_spinlock {
    ucs_spinlock_t super; /**< The underlying lock. */
    int count;            /**< Nesting depth of the owner. */
    pthread_t owner;      /**< UCS_SPINLOCK_OWNER_NULL when free. */
} ucs_recursive_spinlock_t;

/**
 * Initialize @a lock, unlocked.
 *
 * @param [out] lock   The lock.
 * @param [in]  flags  0 or UCS_SPINLOCK_FLAG_SHARED (an atomic-word lock
 *                     works across processes as it is).
 *
 * @return UCS_OK.
 */
static inline ucs_status_t ucs_spinlock_init(ucs_spinlock_t *lock, int flags)
{
    (void)flags;
    __atomic_store_n(&lock->lock, 0, __ATOMIC_RELEASE);
    return UCS_OK;
}

/**
 * Release the resources of an unlocked @a lock (there are none; a lock
 * still held draws a warning).
 *
 * @param [in] lock  The lock.
 */
static inline void ucs_spinlock_destroy(ucs_spinlock_t *lock)
{
    if (__atomic_load_n(&lock->lock, __ATOMIC_RELAXED) != 0) {
        ucs_warn("spinlock %p destroyed while held", (void *)lock);
    }
}

/**
 * Take @a lock, spinning (with a pause hint) until it is free. Not
 * recursive.
 *
 * @param [in,out] lock  The lock.
 */
static UCS_F_ALWAYS_INLINE void ucs_spin_lock(ucs_spinlock_t *lock)
{
    while (__atomic_exchange_n(&lock->lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&lock->lock, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
            __asm__ __volatile__("pause" ::: "memory");
#endif
        }
    }
}

/**
 * Take @a lock if it is free, without waiting.
 *
 * @param [in,out] lock  The lock.
 *
 * @return Nonzero if the lock was taken, 0 if it is held.
 */
static UCS_F_ALWAYS_INLINE int ucs_spin_trylock(ucs_spinlock_t *lock)
{
    return !__atomic_load_n(&lock->lock, __ATOMIC_RELAXED) &&
           !__atomic_exchange_n(&lock->lock, 1, __ATOMIC_ACQUIRE);
}

/**
 * Release @a lock, held by the calling thread.
 *
 * @param [in,out] lock  The lock.
 */
static UCS_F_ALWAYS_INLINE void ucs_spin_unlock(ucs_spinlock_t *lock)
{
    __atomic_store_n(&lock->lock, 0, __ATOMIC_RELEASE);
}

/**
 * Initialize a recursive lock, free.
 *
 * @param [out] lock   The lock.
 * @param [in]  flags  As for ucs_spinlock_init().
 *
 * @return UCS_OK.
 */
static inline ucs_status_t
ucs_recursive_spinlock_init(ucs_recursive_spinlock_t *lock, int flags)
{
    lock->count = 0;
    lock->owner = UCS_SPINLOCK_OWNER_NULL;
    return ucs_spinlock_init(&lock->super, flags);
}

/**
 * Release the resources of @a lock.
 *
 * @param [in] lock  The lock.
 *
 * @return UCS_OK; UCS_ERR_BUSY (with a warning), leaving the lock alone,
 *         if some thread still holds it.
 */
static inline ucs_status_t
ucs_recursive_spinlock_destroy(ucs_recursive_spinlock_t *lock)
{
    if (lock->count != 0) {
        ucs_warn("recursive spinlock %p is still held (depth %d); unlock it "
                 "before destroying",
                 (void *)lock, lock->count);
        return UCS_ERR_BUSY;
    }

    ucs_spinlock_destroy(&lock->super);
    return UCS_OK;
}

/**
 * Tell whether thread @a self holds @a lock. Any thread may ask.
 *
 * @param [in] lock  The lock.
 * @param [in] self  pthread_self() of the calling thread.
 *
 * @return Nonzero if @a self holds the lock.
 */
static UCS_F_ALWAYS_INLINE int
ucs_recursive_spin_is_owner(const ucs_recursive_spinlock_t *lock,
                            pthread_t self)
{
    return pthread_equal(__atomic_load_n(&lock->owner, __ATOMIC_RELAXED), self);
}

/**
 * Take @a lock, spinning until it is free, or nest once more if the calling
 * thread already holds it.
 *
 * @param [in,out] lock  The lock.
 */
static UCS_F_ALWAYS_INLINE void
ucs_recursive_spin_lock(ucs_recursive_spinlock_t *lock)
{
    pthread_t self = pthread_self();

    if (!ucs_recursive_spin_is_owner(lock, self)) {
        ucs_spin_lock(&lock->super);
        __atomic_store_n(&lock->owner, self, __ATOMIC_RELAXED);
    }
    ++lock->count;
}

/**
 * Take @a lock if it is free or already ours, without waiting.
 *
 * @param [in,out] lock  The lock.
 *
 * @return Nonzero on success, 0 if another thread holds it.
 */
static UCS_F_ALWAYS_INLINE int
ucs_recursive_spin_trylock(ucs_recursive_spinlock_t *lock)
{
    pthread_t self = pthread_self();

    if (!ucs_recursive_spin_is_owner(lock, self)) {
        if (!ucs_spin_trylock(&lock->super)) {
            return 0;
        }
        __atomic_store_n(&lock->owner, self, __ATOMIC_RELAXED);
    }
    ++lock->count;
    return 1;
}

/**
 * Undo one ucs_recursive_spin_lock() or successful trylock; the lock is
 * released when the depth reaches 0. Only the owner may call it.
 *
 * @param [in,out] lock  The lock.
 */
static UCS_F_ALWAYS_INLINE void
ucs_recursive_spin_unlock(ucs_recursive_spinlock_t *lock)
{
    if (--lock->count == 0) {
        __atomic_store_n(&lock->owner, UCS_SPINLOCK_OWNER_NULL,
                         __ATOMIC_RELAXED);
        ucs_spin_unlock(&lock->super);
    }
}

END_C_DECLS

#endif
