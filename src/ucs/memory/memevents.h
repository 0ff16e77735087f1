/**
 * @file
 * Memory release events: libucs tells its subscribers (the registration
 * caches) that a range of the address space is about to lose its pages,
 * before the pages go away.
 *
 * How the events are seen (details and limits in src/ucs/memory/README.md):
 * libucs exports its own munmap, mremap, madvise, mmap (MAP_FIXED), brk,
 * sbrk, shmat (SHM_REMAP) and shmdt. A program or library linked with
 * libucs resolves these names to libucs before libc, so every such call
 * first reports the affected range and then runs the libc function found
 * with dlsym(RTLD_NEXT, ...). glibc's allocator releases memory with
 * internal calls that no interposition sees, so libucs also exports free,
 * realloc, reallocarray and malloc_trim: a chunk that glibc mmapped is
 * reported before glibc unmaps it, and while someone subscribes the heap is
 * never trimmed (mallopt(M_TRIM_THRESHOLD)), so freed heap memory keeps its
 * pages.
 *
 * A callback runs in the thread that releases the memory, possibly inside
 * another callback (a deregistration that frees memory), and possibly
 * inside free(): it must not block on a lock that its own thread may hold,
 * must not subscribe or unsubscribe, and should only record the range.
 *
 * Included by the registration cache (rcache.h) and by programs that keep
 * their own cache of registrations.
 */
#ifndef UCS_MEMORY_MEMEVENTS_H_
#define UCS_MEMORY_MEMEVENTS_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stdint.h>

BEGIN_C_DECLS

/**
 * Subscriber callback: the pages of [start, end) are about to be released
 * or replaced. Runs with libucs's event lock held; see the rules above.
 *
 * @param [in] arg    The argument given to ucs_memevents_subscribe().
 * @param [in] start  First byte of the range.
 * @param [in] end    One past the last byte; start < end.
 */
typedef void (*ucs_memevents_cb_t)(void *arg, uintptr_t start, uintptr_t end);

/** What the interposition can see in this process. */
enum {
    /** munmap() and friends called by the program reach libucs. */
    UCS_MEMEVENTS_CAP_UNMAP = UCS_BIT(0),
    /** free() reaches libucs and the allocator is glibc's: its mmapped
     *  chunks are reported when freed. */
    UCS_MEMEVENTS_CAP_MALLOC = UCS_BIT(1)
};

/**
 * Call @a cb for every memory release event until unsubscribed. The first
 * subscription probes the interposition (one page mapped and unmapped, one
 * large block allocated and freed) and stops glibc from trimming its heap.
 * Thread-safe; must not be called from a callback.
 *
 * @param [in] cb   Callback; the pair (cb, arg) identifies the
 *                  subscription. Subscribing the same pair twice calls it
 *                  twice.
 * @param [in] arg  Passed to @a cb; must stay valid until unsubscribed.
 *
 * @return UCS_OK; UCS_ERR_UNSUPPORTED if munmap() calls do not reach libucs
 *         (libc comes first in the lookup order: the program does not link
 *         libucs itself, or loaded it with dlopen()), in which case nothing
 *         is subscribed; UCS_ERR_NO_MEMORY if the subscription record
 *         cannot be allocated.
 */
ucs_status_t ucs_memevents_subscribe(ucs_memevents_cb_t cb, void *arg);

/**
 * Stop calling @a cb with @a arg. When this returns, no thread is inside
 * that callback any more. Removes one subscription of the pair; does
 * nothing if there is none. Thread-safe; must not be called from a
 * callback.
 *
 * @param [in] cb   Callback given to ucs_memevents_subscribe().
 * @param [in] arg  Argument given with it.
 */
void ucs_memevents_unsubscribe(ucs_memevents_cb_t cb, void *arg);

/**
 * What the interposition sees in this process. Thread-safe.
 *
 * @return Mask of UCS_MEMEVENTS_CAP_* found by the probe (runs the probe if
 *         it has not run yet).
 */
unsigned ucs_memevents_caps(void);

/**
 * Report a release of [start, end) to every subscriber, as the interposed
 * functions do. For code that releases memory behind libc's back (a raw
 * system call, a device driver). An empty range, or no subscriber, costs
 * one atomic load. Thread-safe; the callbacks run in the calling thread.
 *
 * @param [in] start  First byte of the range.
 * @param [in] end    One past the last byte.
 */
void ucs_memevents_notify(uintptr_t start, uintptr_t end);

/**
 * The range a free() of @a ptr would unmap if glibc mmapped its chunk.
 *
 * @param [in]  ptr      A pointer returned by malloc() and not yet freed.
 * @param [out] start_p  Start of the mapping, set only when 1 is returned.
 * @param [out] end_p    End of the mapping, set only when 1 is returned.
 *
 * @return 1 if @a ptr is such a chunk, 0 if it is not or if the allocator
 *         is not glibc's (no UCS_MEMEVENTS_CAP_MALLOC).
 */
int ucs_memevents_malloc_chunk_range(const void *ptr, uintptr_t *start_p,
                                     uintptr_t *end_p);

END_C_DECLS

#endif
