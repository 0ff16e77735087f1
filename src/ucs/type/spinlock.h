/*
 * Spinlocks: a plain one, and a recursive one that remembers its owner
 * thread (the async context's lock, "is this thread inside a blocked
 * section?" checks).
 *
 * The owner field of the recursive lock is written only by the thread
 * holding the lock and read by any thread; a reader that is not the owner
 * can never see its own thread id there, which is all the checks need.
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

typedef struct ucs_spinlock {
    int lock; /* 0 free, 1 taken; works in shared memory too */
} ucs_spinlock_t;

typedef struct ucs_recursive_spinlock {
    ucs_spinlock_t super;
    int            count; /* nesting depth of the owner */
    pthread_t      owner; /* UCS_SPINLOCK_OWNER_NULL when free */
} ucs_recursive_spinlock_t;

/** Initialize @a lock; @a flags is 0 or UCS_SPINLOCK_FLAG_SHARED (an
 *  atomic-word lock works across processes as it is). */
static inline ucs_status_t ucs_spinlock_init(ucs_spinlock_t *lock, int flags)
{
    (void)flags;
    __atomic_store_n(&lock->lock, 0, __ATOMIC_RELEASE);
    return UCS_OK;
}

/** Release the resources of an unlocked @a lock. */
static inline void ucs_spinlock_destroy(ucs_spinlock_t *lock)
{
    if (__atomic_load_n(&lock->lock, __ATOMIC_RELAXED) != 0) {
        ucs_warn("spinlock %p destroyed while held", (void*)lock);
    }
}

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

/** Nonzero if the lock was taken. */
static UCS_F_ALWAYS_INLINE int ucs_spin_trylock(ucs_spinlock_t *lock)
{
    return !__atomic_load_n(&lock->lock, __ATOMIC_RELAXED) &&
           !__atomic_exchange_n(&lock->lock, 1, __ATOMIC_ACQUIRE);
}

static UCS_F_ALWAYS_INLINE void ucs_spin_unlock(ucs_spinlock_t *lock)
{
    __atomic_store_n(&lock->lock, 0, __ATOMIC_RELEASE);
}

/** Initialize a recursive lock; @a flags as for ucs_spinlock_init(). */
static inline ucs_status_t
ucs_recursive_spinlock_init(ucs_recursive_spinlock_t *lock, int flags)
{
    lock->count = 0;
    lock->owner = UCS_SPINLOCK_OWNER_NULL;
    return ucs_spinlock_init(&lock->super, flags);
}

/**
 * Release the resources of @a lock. Returns UCS_ERR_BUSY, and leaves the
 * lock alone, if some thread still holds it.
 */
static inline ucs_status_t
ucs_recursive_spinlock_destroy(ucs_recursive_spinlock_t *lock)
{
    if (lock->count != 0) {
        ucs_warn("recursive spinlock %p is still held (depth %d); unlock it "
                 "before destroying", (void*)lock, lock->count);
        return UCS_ERR_BUSY;
    }

    ucs_spinlock_destroy(&lock->super);
    return UCS_OK;
}

/** Nonzero if the calling thread holds @a lock. */
static UCS_F_ALWAYS_INLINE int
ucs_recursive_spin_is_owner(const ucs_recursive_spinlock_t *lock,
                            pthread_t self)
{
    return pthread_equal(__atomic_load_n(&lock->owner, __ATOMIC_RELAXED),
                         self);
}

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

/** Take @a lock if it is free or already ours; nonzero on success. */
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

/** Undo one ucs_recursive_spin_lock() or successful trylock. */
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
