/*
 * Memory events by interposition of the libc functions that map, release
 * or replace pages. See memevents.h and README.md. The handlers and their
 * dispatch live in libucm (src/ucm): every range seen here is reported
 * there, and ucs_memevents_subscribe() adds a libucm handler.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* mmap must keep its own name: no redirection to mmap64 */
#undef _FILE_OFFSET_BITS
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#undef _FILE_OFFSET_BITS

#include <ucs/memory/memevents.h>
#include <ucm/event/event.h>
#include <ucs/datastruct/list.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Size of the block the probe allocates: above glibc's largest dynamic
 * mmap threshold (32 MiB on 64-bit), so glibc always mmaps it. Only
 * address space, never touched. */
#define UCS_MEMEVENTS_PROBE_SIZE (33ul << 20)

/* glibc malloc chunk header in front of every block: the previous chunk's
 * size (for an mmapped chunk: the offset of the chunk from the start of its
 * mapping), then the chunk's size whose low bits are flags. */
#define UCS_MEMEVENTS_CHUNK_HDR  (2 * sizeof(size_t))
#define UCS_MEMEVENTS_IS_MMAPPED ((size_t)0x2)
#define UCS_MEMEVENTS_SIZE_FLAGS ((size_t)0x7)

/* Shared memory segments attached through shmat(), for shmdt() */
#define UCS_MEMEVENTS_MAX_SHM 64

/* A subscription: the libucm handler's argument */
typedef struct ucs_memevents_sub {
    ucs_memevents_cb_t cb;
    void *arg;
    ucs_list_link_t list;
} ucs_memevents_sub_t;

typedef struct ucs_memevents_shm {
    uintptr_t start;
    size_t size; /* 0: free slot */
} ucs_memevents_shm_t;

/* The libc functions behind ours */
typedef struct ucs_memevents_real {
    int (*munmap)(void *addr, size_t length);
    void *(*mremap)(void *old_addr, size_t old_size, size_t new_size, int flags,
                    ...);
    int (*madvise)(void *addr, size_t length, int advice);
    void *(*mmap)(void *addr, size_t length, int prot, int flags, int fd,
                  off_t offset);
    void *(*mmap64)(void *addr, size_t length, int prot, int flags, int fd,
                    off64_t offset);
    int (*brk)(void *addr);
    void *(*sbrk)(intptr_t increment);
    void *(*shmat)(int shmid, const void *shmaddr, int shmflg);
    int (*shmdt)(const void *shmaddr);
    void (*free)(void *ptr);
    void *(*realloc)(void *ptr, size_t size);
    void *(*reallocarray)(void *ptr, size_t nmemb, size_t size);
    int (*malloc_trim)(size_t pad);
} ucs_memevents_real_t;

enum {
    UCS_MEMEVENTS_UNRESOLVED = 0,
    UCS_MEMEVENTS_RESOLVING  = 1,
    UCS_MEMEVENTS_RESOLVED   = 2
};

static ucs_memevents_real_t ucs_memevents_real;
static int ucs_memevents_resolve_state = UCS_MEMEVENTS_UNRESOLVED;
static unsigned long ucs_memevents_resolver; /* pthread_t of the resolver */

/* Subscriptions, the probe state and the shm table; recursive because the
 * probe's munmap() reports to ucs_memevents_notify() */
static pthread_mutex_t ucs_memevents_lock =
    PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static UCS_LIST_HEAD(ucs_memevents_subs);
static int ucs_memevents_probing; /* the probe runs */
static int ucs_memevents_probed;
static unsigned ucs_memevents_caps_value;
static int ucs_memevents_glibc_layout; /* chunk headers can be decoded */
static uintptr_t ucs_memevents_probe_start;
static uintptr_t ucs_memevents_probe_end;
/* volatile: the compiler takes free() for a function that changes no
 * global, and would keep the 0 stored before the probe's free() */
static volatile int ucs_memevents_probe_hit;
static ucs_memevents_shm_t ucs_memevents_shm[UCS_MEMEVENTS_MAX_SHM];

/* ---- finding the next definitions ------------------------------------- */

#define UCS_MEMEVENTS_RESOLVE(_name) \
    *(void **)&ucs_memevents_real._name = dlsym(RTLD_NEXT, #_name)

static UCS_F_NOINLINE void ucs_memevents_resolve_slow(void)
{
    int expected       = UCS_MEMEVENTS_UNRESOLVED;
    unsigned long self = (unsigned long)pthread_self();

    if (!__atomic_compare_exchange_n(&ucs_memevents_resolve_state, &expected,
                                     UCS_MEMEVENTS_RESOLVING, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if ((expected == UCS_MEMEVENTS_RESOLVING) &&
            (__atomic_load_n(&ucs_memevents_resolver, __ATOMIC_RELAXED) ==
             self)) {
            /* dlsym() itself called one of our functions: the caller
             * falls back to the system call (or leaks, for free) */
            return;
        }
        while (__atomic_load_n(&ucs_memevents_resolve_state,
                               __ATOMIC_ACQUIRE) != UCS_MEMEVENTS_RESOLVED) {
            sched_yield();
        }
        return;
    }

    __atomic_store_n(&ucs_memevents_resolver, self, __ATOMIC_RELAXED);
    UCS_MEMEVENTS_RESOLVE(munmap);
    UCS_MEMEVENTS_RESOLVE(mremap);
    UCS_MEMEVENTS_RESOLVE(madvise);
    UCS_MEMEVENTS_RESOLVE(mmap);
    UCS_MEMEVENTS_RESOLVE(mmap64);
    UCS_MEMEVENTS_RESOLVE(brk);
    UCS_MEMEVENTS_RESOLVE(sbrk);
    UCS_MEMEVENTS_RESOLVE(shmat);
    UCS_MEMEVENTS_RESOLVE(shmdt);
    UCS_MEMEVENTS_RESOLVE(free);
    UCS_MEMEVENTS_RESOLVE(realloc);
    UCS_MEMEVENTS_RESOLVE(reallocarray);
    UCS_MEMEVENTS_RESOLVE(malloc_trim);
    __atomic_store_n(&ucs_memevents_resolve_state, UCS_MEMEVENTS_RESOLVED,
                     __ATOMIC_RELEASE);
}

static UCS_F_ALWAYS_INLINE void ucs_memevents_resolve(void)
{
    if (ucs_unlikely(
            __atomic_load_n(&ucs_memevents_resolve_state, __ATOMIC_ACQUIRE) !=
            UCS_MEMEVENTS_RESOLVED)) {
        ucs_memevents_resolve_slow();
    }
}

static void ucs_memevents_lock_all(void)
{
    pthread_mutex_lock(&ucs_memevents_lock);
}

static void ucs_memevents_unlock_all(void)
{
    pthread_mutex_unlock(&ucs_memevents_lock);
}

/* The child runs with a new thread id, so it does not own the lock taken
 * before fork() and cannot unlock it: make a fresh one instead. */
static void ucs_memevents_child_reinit(void)
{
    pthread_mutexattr_t attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&ucs_memevents_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

static void UCS_F_CTOR ucs_memevents_init(void)
{
    ucs_memevents_resolve();
    /* no other thread of the parent may hold the lock across fork() */
    pthread_atfork(ucs_memevents_lock_all, ucs_memevents_unlock_all,
                   ucs_memevents_child_reinit);
}

/* ---- dispatch --------------------------------------------------------- */

static UCS_F_ALWAYS_INLINE int ucs_memevents_is_listened(void)
{
    return ucm_event_is_listened(UCM_EVENT_VM_UNMAPPED) ||
           __atomic_load_n(&ucs_memevents_probing, __ATOMIC_ACQUIRE);
}

void ucs_memevents_notify(uintptr_t start, uintptr_t end)
{
    if ((start >= end) || !ucs_memevents_is_listened()) {
        return;
    }

    /* No lock: a libucm handler that releases memory would take it after
     * libucm's, and the probe takes them in the other order. Another
     * thread can only report the probe's range through the interposition,
     * which is what the probe wants to know. */
    if (__atomic_load_n(&ucs_memevents_probing, __ATOMIC_ACQUIRE) &&
        (start ==
         __atomic_load_n(&ucs_memevents_probe_start, __ATOMIC_ACQUIRE)) &&
        (end == __atomic_load_n(&ucs_memevents_probe_end, __ATOMIC_ACQUIRE))) {
        ucs_memevents_probe_hit = 1;
    }
    ucm_vm_munmap((void *)start, end - start);
}

/* [addr, addr + length) was mapped by a successful call */
static void ucs_memevents_notify_mapped(const void *addr, size_t length)
{
    if (ucm_event_is_listened(UCM_EVENT_VM_MAPPED)) {
        ucm_vm_mmap((void *)addr, length);
    }
}

static void ucs_memevents_notify_len(const void *addr, size_t length)
{
    uintptr_t start = (uintptr_t)addr;
    uintptr_t end   = start + length;

    ucs_memevents_notify(start, (end < start) ? UINTPTR_MAX : end);
}

/* ---- glibc malloc chunks ---------------------------------------------- */

/* The chunk header in front of @a ptr. Read through an integer address:
 * the compiler must not reason about the block's bounds here. */
static UCS_F_ALWAYS_INLINE const size_t *
ucs_memevents_chunk_hdr(const void *ptr)
{
    uintptr_t address = (uintptr_t)ptr - UCS_MEMEVENTS_CHUNK_HDR;

    __asm__("" : "+r"(address));
    return (const size_t *)address;
}

static UCS_F_ALWAYS_INLINE size_t ucs_memevents_chunk_size_word(const void *ptr)
{
    return ucs_memevents_chunk_hdr(ptr)[1];
}

static UCS_F_ALWAYS_INLINE int ucs_memevents_chunk_decode(const void *ptr,
                                                          uintptr_t *start_p,
                                                          uintptr_t *end_p)
{
    const size_t *hdr = ucs_memevents_chunk_hdr(ptr);

    if (!(hdr[1] & UCS_MEMEVENTS_IS_MMAPPED)) {
        return 0;
    }

    *start_p = (uintptr_t)hdr - hdr[0];
    *end_p   = (uintptr_t)hdr + (hdr[1] & ~UCS_MEMEVENTS_SIZE_FLAGS);
    return 1;
}

int ucs_memevents_malloc_chunk_range(const void *ptr, uintptr_t *start_p,
                                     uintptr_t *end_p)
{
    if ((ptr == NULL) ||
        !__atomic_load_n(&ucs_memevents_glibc_layout, __ATOMIC_RELAXED)) {
        return 0;
    }

    return ucs_memevents_chunk_decode(ptr, start_p, end_p);
}

/* The probes call malloc() and free() through these: the compiler knows
 * what the two functions do, and would drop a malloc()/free() pair whose
 * block it thinks unused, or assume free() leaves the probe's flag alone;
 * through a volatile pointer they are calls like any application's. */
static void *(*volatile ucs_memevents_probe_malloc)(size_t) = malloc;
static void (*volatile ucs_memevents_probe_free)(void *)    = free;

/* Whether blocks carry glibc's chunk headers. The usable size is checked
 * first, without reading memory in front of the block: glibc rounds a
 * 64-byte request to a chunk of 80 bytes, 72 of them usable, while other
 * allocators (and the ones of valgrind and the sanitizers) report exactly
 * the requested size or a size class without the 8-byte offset. */
static int ucs_memevents_check_glibc_layout(void)
{
    size_t page = ucs_get_page_size();
    uintptr_t start, end;
    size_t usable, hdr_size;
    void *ptr;
    int ok;

    ptr = ucs_memevents_probe_malloc(64);
    if (ptr == NULL) {
        return 0;
    }

    usable = malloc_usable_size(ptr);
    ok     = (usable >= 64) &&
         (((usable + sizeof(size_t)) % UCS_MEMEVENTS_CHUNK_HDR) == 0);
    if (ok) {
        hdr_size = ucs_memevents_chunk_size_word(ptr);
        ok =
            !(hdr_size & UCS_MEMEVENTS_IS_MMAPPED) &&
            ((hdr_size & ~UCS_MEMEVENTS_SIZE_FLAGS) == usable + sizeof(size_t));
    }
    ucs_memevents_probe_free(ptr);
    if (!ok) {
        return 0;
    }

    ptr = ucs_memevents_probe_malloc(UCS_MEMEVENTS_PROBE_SIZE);
    if (ptr == NULL) {
        return 0;
    }

    usable = malloc_usable_size(ptr);
    ok     = (usable >= UCS_MEMEVENTS_PROBE_SIZE) &&
         (((usable + UCS_MEMEVENTS_CHUNK_HDR) % page) == 0) &&
         ucs_memevents_chunk_decode(ptr, &start, &end) &&
         ((start % page) == 0) && ((end % page) == 0) &&
         (end == (uintptr_t)ptr + usable);
    ucs_memevents_probe_free(ptr);
    return ok;
}

/* The range whose release the probe waits for; read without the lock */
static void ucs_memevents_probe_range(uintptr_t start, uintptr_t end)
{
    __atomic_store_n(&ucs_memevents_probe_start, start, __ATOMIC_RELEASE);
    __atomic_store_n(&ucs_memevents_probe_end, end, __ATOMIC_RELEASE);
}

/* Called with ucs_memevents_lock held, once. */
static void ucs_memevents_probe(void)
{
    size_t page = ucs_get_page_size();
    uintptr_t start, end;
    void *ptr;

    __atomic_store_n(&ucs_memevents_probing, 1, __ATOMIC_RELEASE);

    /* munmap() called like any caller would, through the global symbol */
    ptr = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
    if (ptr != MAP_FAILED) {
        ucs_memevents_probe_range((uintptr_t)ptr, (uintptr_t)ptr + page);
        ucs_memevents_probe_hit = 0;
        munmap(ptr, page);
        if (ucs_memevents_probe_hit) {
            ucs_memevents_caps_value |= UCS_MEMEVENTS_CAP_UNMAP;
        }
    }

    if (ucs_memevents_check_glibc_layout()) {
        __atomic_store_n(&ucs_memevents_glibc_layout, 1, __ATOMIC_RELAXED);
        /* freed heap memory keeps its pages: glibc trims the heap top with
         * an internal sbrk() that no interposition sees */
        mallopt(M_TRIM_THRESHOLD, -1);

        ptr = ucs_memevents_probe_malloc(UCS_MEMEVENTS_PROBE_SIZE);
        if ((ptr != NULL) &&
            ucs_memevents_malloc_chunk_range(ptr, &start, &end)) {
            ucs_memevents_probe_range(start, end);
            ucs_memevents_probe_hit = 0;
            ucs_memevents_probe_free(ptr);
            if (ucs_memevents_probe_hit) {
                ucs_memevents_caps_value |= UCS_MEMEVENTS_CAP_MALLOC;
            }
        } else {
            ucs_memevents_probe_free(ptr);
        }
    }

    ucs_memevents_probe_range(0, 0);
    ucs_memevents_probed = 1;
    __atomic_store_n(&ucs_memevents_probing, 0, __ATOMIC_RELEASE);

    ucs_debug("memory events: munmap %s, glibc malloc chunks %s",
              (ucs_memevents_caps_value & UCS_MEMEVENTS_CAP_UNMAP) ? "seen"
                                                                   : "not seen",
              (ucs_memevents_caps_value & UCS_MEMEVENTS_CAP_MALLOC)
                  ? "seen"
                  : "not seen");
}

unsigned ucs_memevents_caps(void)
{
    unsigned caps;

    pthread_mutex_lock(&ucs_memevents_lock);
    if (!ucs_memevents_probed) {
        ucs_memevents_probe();
    }
    caps = ucs_memevents_caps_value;
    pthread_mutex_unlock(&ucs_memevents_lock);
    return caps;
}

static void ucs_memevents_handler(ucm_event_type_t event_type,
                                  ucm_event_t *event, void *arg)
{
    ucs_memevents_sub_t *sub = arg;
    uintptr_t start          = (uintptr_t)event->vm_unmapped.address;

    sub->cb(sub->arg, start, start + event->vm_unmapped.size);
}

ucs_status_t ucs_memevents_subscribe(ucs_memevents_cb_t cb, void *arg)
{
    ucs_memevents_sub_t *sub;
    ucs_status_t status;

    pthread_mutex_lock(&ucs_memevents_lock);
    if (!ucs_memevents_probed) {
        ucs_memevents_probe();
    }

    if (!(ucs_memevents_caps_value & UCS_MEMEVENTS_CAP_UNMAP)) {
        status = UCS_ERR_UNSUPPORTED;
        goto out;
    }

    sub = malloc(sizeof(*sub));
    if (sub == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }

    sub->cb  = cb;
    sub->arg = arg;
    /* the probe above checked the interposition already */
    status =
        ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED | UCM_EVENT_FLAG_NO_INSTALL,
                              0, ucs_memevents_handler, sub);
    if (status != UCS_OK) {
        free(sub);
        goto out;
    }
    ucs_list_add_tail(&ucs_memevents_subs, &sub->list);

out:
    pthread_mutex_unlock(&ucs_memevents_lock);
    return status;
}

void ucs_memevents_unsubscribe(ucs_memevents_cb_t cb, void *arg)
{
    ucs_memevents_sub_t *sub, *tmp;

    pthread_mutex_lock(&ucs_memevents_lock);
    ucs_list_for_each_safe(sub, tmp, &ucs_memevents_subs, list) {
        if ((sub->cb == cb) && (sub->arg == arg)) {
            ucs_list_del(&sub->list);
            /* returns when no thread is inside the handler any more */
            ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED,
                                    ucs_memevents_handler, sub);
            free(sub);
            break;
        }
    }
    pthread_mutex_unlock(&ucs_memevents_lock);
}

/* ---- shared memory segments ------------------------------------------- */

static size_t ucs_memevents_shm_size(int shmid)
{
    struct shmid_ds ds;

    if (shmctl(shmid, IPC_STAT, &ds) != 0) {
        return 0;
    }

    return ucs_align_up(ds.shm_segsz, ucs_get_page_size());
}

static void ucs_memevents_shm_add(const void *addr, size_t size)
{
    unsigned i;

    pthread_mutex_lock(&ucs_memevents_lock);
    for (i = 0; i < UCS_MEMEVENTS_MAX_SHM; ++i) {
        if (ucs_memevents_shm[i].size == 0) {
            ucs_memevents_shm[i].start = (uintptr_t)addr;
            ucs_memevents_shm[i].size  = size;
            break;
        }
    }
    pthread_mutex_unlock(&ucs_memevents_lock);
}

/* Size of the segment attached at @a addr, forgotten; 0 if unknown */
static size_t ucs_memevents_shm_remove(const void *addr)
{
    size_t size = 0;
    unsigned i;

    pthread_mutex_lock(&ucs_memevents_lock);
    for (i = 0; i < UCS_MEMEVENTS_MAX_SHM; ++i) {
        if ((ucs_memevents_shm[i].size != 0) &&
            (ucs_memevents_shm[i].start == (uintptr_t)addr)) {
            size                      = ucs_memevents_shm[i].size;
            ucs_memevents_shm[i].size = 0;
            break;
        }
    }
    pthread_mutex_unlock(&ucs_memevents_lock);
    return size;
}

/* ---- the interposed functions ----------------------------------------- */

int munmap(void *addr, size_t length)
{
    ucs_memevents_resolve();
    ucs_memevents_notify_len(addr, length);
    if (ucs_memevents_real.munmap == NULL) {
        return syscall(SYS_munmap, addr, length);
    }
    return ucs_memevents_real.munmap(addr, length);
}

void *mremap(void *old_addr, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_addr = NULL;
    void *result;
    va_list ap;

    if (flags & MREMAP_FIXED) {
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
        ucs_memevents_notify_len(new_addr, new_size);
    }

    ucs_memevents_resolve();
    /* moved, shrunk or grown: the old pages may all go */
    ucs_memevents_notify_len(old_addr, old_size);
    if (ucs_memevents_real.mremap == NULL) {
        result = (void *)syscall(SYS_mremap, old_addr, old_size, new_size,
                                 flags, new_addr);
    } else {
        result = ucs_memevents_real.mremap(old_addr, old_size, new_size, flags,
                                           new_addr);
    }
    if (result != MAP_FAILED) {
        ucs_memevents_notify_mapped(result, new_size);
    }
    return result;
}

static int ucs_memevents_advice_drops_pages(int advice)
{
    switch (advice) {
    case MADV_DONTNEED:
#ifdef MADV_FREE
    case MADV_FREE:
#endif
    case MADV_REMOVE:
    case 24: /* MADV_DONTNEED_LOCKED (Linux 5.18) */
        return 1;
    default:
        return 0;
    }
}

int madvise(void *addr, size_t length, int advice)
{
    ucs_memevents_resolve();
    if (ucs_memevents_advice_drops_pages(advice)) {
        ucs_memevents_notify_len(addr, length);
    }
    if (ucs_memevents_real.madvise == NULL) {
        return syscall(SYS_madvise, addr, length, advice);
    }
    return ucs_memevents_real.madvise(addr, length, advice);
}

void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
    void *result;

    ucs_memevents_resolve();
    if (flags & MAP_FIXED) {
        ucs_memevents_notify_len(addr, length);
    }
    if (ucs_memevents_real.mmap == NULL) {
        result =
            (void *)syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
    } else {
        result = ucs_memevents_real.mmap(addr, length, prot, flags, fd, offset);
    }
    if (result != MAP_FAILED) {
        ucs_memevents_notify_mapped(result, length);
    }
    return result;
}

void *mmap64(void *addr, size_t length, int prot, int flags, int fd,
             off64_t offset)
{
    void *result;

    ucs_memevents_resolve();
    if (flags & MAP_FIXED) {
        ucs_memevents_notify_len(addr, length);
    }
    if (ucs_memevents_real.mmap64 == NULL) {
        result =
            (void *)syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
    } else {
        result =
            ucs_memevents_real.mmap64(addr, length, prot, flags, fd, offset);
    }
    if (result != MAP_FAILED) {
        ucs_memevents_notify_mapped(result, length);
    }
    return result;
}

int brk(void *addr)
{
    void *cur;
    int ret;

    ucs_memevents_resolve();
    if ((ucs_memevents_real.brk == NULL) || (ucs_memevents_real.sbrk == NULL)) {
        errno = ENOMEM;
        return -1;
    }

    cur = ucs_memevents_real.sbrk(0);
    if ((cur != (void *)-1) && ((uintptr_t)addr < (uintptr_t)cur)) {
        ucs_memevents_notify((uintptr_t)addr, (uintptr_t)cur);
    }
    ret = ucs_memevents_real.brk(addr);
    if ((ret == 0) && (cur != (void *)-1) &&
        ((uintptr_t)addr > (uintptr_t)cur)) {
        ucs_memevents_notify_mapped(cur, (uintptr_t)addr - (uintptr_t)cur);
    }
    return ret;
}

void *sbrk(intptr_t increment)
{
    void *cur;

    ucs_memevents_resolve();
    if (ucs_memevents_real.sbrk == NULL) {
        errno = ENOMEM;
        return (void *)-1;
    }

    if (increment < 0) {
        cur = ucs_memevents_real.sbrk(0);
        if (cur != (void *)-1) {
            ucs_memevents_notify((uintptr_t)cur + increment, (uintptr_t)cur);
        }
    }
    cur = ucs_memevents_real.sbrk(increment);
    if ((cur != (void *)-1) && (increment > 0)) {
        ucs_memevents_notify_mapped(cur, increment);
    }
    return cur;
}

void *shmat(int shmid, const void *shmaddr, int shmflg)
{
    size_t size = ucs_memevents_shm_size(shmid);
    void *addr;

    ucs_memevents_resolve();
    if ((shmflg & SHM_REMAP) && (shmaddr != NULL)) {
        ucs_memevents_notify_len(shmaddr, (size != 0) ? size : SIZE_MAX);
    }

    if (ucs_memevents_real.shmat == NULL) {
        addr = (void *)syscall(SYS_shmat, shmid, shmaddr, shmflg);
    } else {
        addr = ucs_memevents_real.shmat(shmid, shmaddr, shmflg);
    }

    if ((addr != (void *)-1) && (size != 0)) {
        ucs_memevents_shm_add(addr, size);
        ucs_memevents_notify_mapped(addr, size);
    }
    return addr;
}

int shmdt(const void *shmaddr)
{
    size_t size = ucs_memevents_shm_remove(shmaddr);

    ucs_memevents_resolve();
    if (size != 0) {
        ucs_memevents_notify_len(shmaddr, size);
    } else {
        /* attached before libucs was loaded, or the table was full */
        ucs_memevents_notify(0, UINTPTR_MAX);
    }

    if (ucs_memevents_real.shmdt == NULL) {
        return syscall(SYS_shmdt, shmaddr);
    }
    return ucs_memevents_real.shmdt(shmaddr);
}

static UCS_F_ALWAYS_INLINE void ucs_memevents_chunk_release(void *ptr)
{
    uintptr_t start, end;

    if (ucs_memevents_is_listened() &&
        ucs_memevents_malloc_chunk_range(ptr, &start, &end)) {
        ucs_memevents_notify(start, end);
    }
}

void free(void *ptr)
{
    ucs_memevents_resolve();
    ucs_memevents_chunk_release(ptr);
    if (ucs_memevents_real.free != NULL) {
        ucs_memevents_real.free(ptr);
    }
    /* else: freed from inside dlsym() before it returned; leaked */
}

void *realloc(void *ptr, size_t size)
{
    ucs_memevents_resolve();
    /* a mmapped chunk is remapped or copied and unmapped */
    ucs_memevents_chunk_release(ptr);
    if (ucs_memevents_real.realloc == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    return ucs_memevents_real.realloc(ptr, size);
}

void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
    ucs_memevents_resolve();
    ucs_memevents_chunk_release(ptr);
    if (ucs_memevents_real.reallocarray == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    return ucs_memevents_real.reallocarray(ptr, nmemb, size);
}

int malloc_trim(size_t pad)
{
    ucs_memevents_resolve();
    /* drops the pages of free chunks anywhere in any arena */
    ucs_memevents_notify(0, UINTPTR_MAX);
    if (ucs_memevents_real.malloc_trim == NULL) {
        return 0;
    }
    return ucs_memevents_real.malloc_trim(pad);
}
