/**
 * @file
 * The memory event API (UCM): a program that keeps its own cache of
 * registered memory (an MPI library's registration cache, for instance)
 * asks here to be told when pages of its address space are mapped or are
 * about to be unmapped, so that it can drop registrations whose pages went
 * away. Included by such programs; libucs uses it for its own registration
 * cache. The functions live in libucm, which libucs links.
 *
 * The events come from libucs's interposition of munmap(), mremap(),
 * madvise(), mmap(), brk(), sbrk(), shmat(), shmdt() and of the glibc
 * allocator's release functions (src/ucs/memory/README.md): only the
 * aggregate events ::UCM_EVENT_VM_MAPPED and ::UCM_EVENT_VM_UNMAPPED are
 * delivered. Asking for a per-call event (::UCM_EVENT_MMAP and the like) or
 * a memory type event fails with UCS_ERR_UNSUPPORTED.
 */
#ifndef UCM_API_UCM_H_
#define UCM_API_UCM_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <ucs/memory/memory_type.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

BEGIN_C_DECLS

/**
 * Memory events and the flags that go with them in a bit mask, numbered as
 * in UCX 1.13.
 */
typedef enum ucm_event_type {
    /** No event. */
    UCM_EVENT_NONE = 0,
    /** One mmap() call, with its arguments and result (not delivered). */
    UCM_EVENT_MMAP = UCS_BIT(0),
    /** One munmap() call (not delivered). */
    UCM_EVENT_MUNMAP = UCS_BIT(1),
    /** One mremap() call (not delivered). */
    UCM_EVENT_MREMAP = UCS_BIT(2),
    /** One shmat() call (not delivered). */
    UCM_EVENT_SHMAT = UCS_BIT(3),
    /** One shmdt() call (not delivered). */
    UCM_EVENT_SHMDT = UCS_BIT(4),
    /** One sbrk() call (not delivered). */
    UCM_EVENT_SBRK = UCS_BIT(5),
    /** One madvise() call (not delivered). */
    UCM_EVENT_MADVISE = UCS_BIT(6),
    /** One brk() call (not delivered). */
    UCM_EVENT_BRK = UCS_BIT(7),
    /**
     * A range of the address space was mapped: delivered after a
     * successful mmap(), mremap() (the new range), shmat(), or sbrk()/brk()
     * that grows the heap, and by ucm_vm_mmap(). Mappings that the C
     * library makes with internal calls (malloc() of a large block) are not
     * seen. The event data is ucm_event_t::vm_mapped.
     */
    UCM_EVENT_VM_MAPPED = UCS_BIT(16),
    /**
     * The pages of a range are about to be released or replaced: delivered
     * before munmap(), mremap() (the old range), madvise() that drops pages,
     * mmap(MAP_FIXED) over it, shmdt(), sbrk()/brk() that shrink the heap,
     * free() or realloc() of a block that glibc mmapped, and by
     * ucm_vm_munmap(). The event data is ucm_event_t::vm_unmapped; a
     * release whose extent is unknown (malloc_trim(), shmdt() of a segment
     * attached before libucs was loaded) covers the whole address space.
     */
    UCM_EVENT_VM_UNMAPPED = UCS_BIT(17),
    /** Device memory allocated (not delivered: no device memory types). */
    UCM_EVENT_MEM_TYPE_ALLOC = UCS_BIT(20),
    /** Device memory freed (not delivered: no device memory types). */
    UCM_EVENT_MEM_TYPE_FREE = UCS_BIT(21),
    /**
     * Flag for ucm_set_event_handler(): add the handler without checking
     * that the interposition sees the program's calls. The handler still
     * receives what the interposition and ucm_vm_mmap()/ucm_vm_munmap()
     * report.
     */
    UCM_EVENT_FLAG_NO_INSTALL = UCS_BIT(24),
    /**
     * Flag for ucm_set_event_handler(): report the existing allocations of
     * the events' kind when the handler is added. Only meaningful with the
     * memory type events, which are not supported; ignored with the VM
     * events, as UCX does.
     */
    UCM_EVENT_FLAG_EXISTING_ALLOC = UCS_BIT(25)
} ucm_event_type_t;

/**
 * What a handler is told about an event: the member named after the event
 * is filled. Only @c vm_mapped and @c vm_unmapped are ever filled here; the
 * other members have UCX's layout so that code naming their fields builds.
 */
typedef union ucm_event {
    /** Arguments and result of mmap() (::UCM_EVENT_MMAP). */
    struct {
        void *result;  /**< Address mapped, or MAP_FAILED. */
        void *address; /**< Requested address. */
        size_t size;   /**< Length of the mapping. */
        int prot;      /**< Protection (PROT_*). */
        int flags;     /**< Flags (MAP_*). */
        int fd;        /**< File descriptor, or -1. */
        off_t offset;  /**< Offset in the file. */
    } mmap;

    /** Arguments and result of munmap() (::UCM_EVENT_MUNMAP). */
    struct {
        int result;    /**< 0, or -1 on failure. */
        void *address; /**< Start of the range. */
        size_t size;   /**< Length of the range. */
    } munmap;

    /** Arguments and result of mremap() (::UCM_EVENT_MREMAP). */
    struct {
        void *result;    /**< New address, or MAP_FAILED. */
        void *address;   /**< Old address. */
        size_t old_size; /**< Old length. */
        size_t new_size; /**< New length. */
        int flags;       /**< Flags (MREMAP_*). */
    } mremap;

    /** Arguments and result of shmat() (::UCM_EVENT_SHMAT). */
    struct {
        void *result;        /**< Address attached, or (void*)-1. */
        int shmid;           /**< Segment identifier. */
        const void *shmaddr; /**< Requested address, or NULL. */
        int shmflg;          /**< Flags (SHM_*). */
    } shmat;

    /** Arguments and result of shmdt() (::UCM_EVENT_SHMDT). */
    struct {
        int result;          /**< 0, or -1 on failure. */
        const void *shmaddr; /**< Address of the segment detached. */
    } shmdt;

    /** Arguments and result of sbrk() (::UCM_EVENT_SBRK). */
    struct {
        void *result;       /**< Previous break, or (void*)-1. */
        intptr_t increment; /**< Change of the break in bytes. */
    } sbrk;

    /** Arguments and result of madvise() (::UCM_EVENT_MADVISE). */
    struct {
        int result;    /**< 0, or -1 on failure. */
        void *addr;    /**< Start of the range. */
        size_t length; /**< Length of the range. */
        int advice;    /**< Advice (MADV_*). */
    } madvise;

    /** Arguments and result of brk() (::UCM_EVENT_BRK). */
    struct {
        int result; /**< 0, or -1 on failure. */
        void *addr; /**< New break. */
    } brk;

    /* one type for both, as in UCX: one may be assigned to the other */
    struct {
        void *address; /**< Start of the range. */
        size_t size;   /**< Length of the range in bytes. */
    } vm_mapped,       /**< The range of ::UCM_EVENT_VM_MAPPED, already mapped
                            when the handler runs. */
        vm_unmapped;   /**< The range of ::UCM_EVENT_VM_UNMAPPED, still mapped
                            when the handler runs. */

    /** Device memory event (::UCM_EVENT_MEM_TYPE_ALLOC/FREE). */
    struct {
        void *address;              /**< Start of the allocation. */
        size_t size;                /**< Length of the allocation. */
        ucs_memory_type_t mem_type; /**< Its memory type. */
    } mem_type;
} ucm_event_t;

/**
 * A memory event handler.
 *
 * @param [in]     event_type  The one event being delivered
 *                             (::UCM_EVENT_VM_MAPPED or
 *                             ::UCM_EVENT_VM_UNMAPPED).
 * @param [in,out] event       Its data; valid during the call only.
 * @param [in]     arg         The argument given to ucm_set_event_handler().
 *
 * The handler runs in the thread that maps or releases the memory, under a
 * lock shared by all handlers, possibly inside free() or inside another
 * handler's own release of memory. It must not allocate or release memory,
 * block on a lock its own thread may hold, or add or remove handlers: it
 * should record the range and return.
 */
typedef void (*ucm_event_callback_t)(ucm_event_type_t event_type,
                                     ucm_event_t *event, void *arg);

/**
 * Add a handler for memory events.
 *
 * @param [in] events    Mask of ::UCM_EVENT_VM_MAPPED and
 *                       ::UCM_EVENT_VM_UNMAPPED, optionally with
 *                       ::UCM_EVENT_FLAG_NO_INSTALL or
 *                       ::UCM_EVENT_FLAG_EXISTING_ALLOC.
 * @param [in] priority  Order among handlers: lower values run first;
 *                       handlers of equal priority run in the order they
 *                       were added.
 * @param [in] cb        Handler to call.
 * @param [in] arg       Passed to @a cb; the pair (@a cb, @a arg) names the
 *                       handler for ucm_unset_event_handler().
 *
 * Unless the flag ::UCM_EVENT_FLAG_NO_INSTALL is given or every event asked
 * for was made external (ucm_set_external_event()), the first call checks
 * once, by mapping and unmapping one page, that the program's calls reach
 * libucs's interposition. Thread safe; not from inside a handler.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if @a cb is NULL or @a events has
 *         no event or an unknown bit; UCS_ERR_UNSUPPORTED if an event other
 *         than the two VM events is asked for, or if the interposition does
 *         not see the program's calls (libc comes first in the symbol
 *         lookup order: the program does not link libucs, or loaded it with
 *         dlopen()); UCS_ERR_NO_MEMORY. On failure nothing is added.
 */
ucs_status_t ucm_set_event_handler(int events, int priority,
                                   ucm_event_callback_t cb, void *arg);

/**
 * Stop delivering @a events to the handler (@a cb, @a arg). The handler is
 * removed when none of its events is left. When this returns, no thread is
 * inside that handler for those events any more. Does nothing if there is
 * no such handler. Thread safe; not from inside a handler.
 *
 * @param [in] events  Events to stop delivering (flags are ignored).
 * @param [in] cb      Handler given to ucm_set_event_handler().
 * @param [in] arg     Argument given with it.
 */
void ucm_unset_event_handler(int events, ucm_event_callback_t cb, void *arg);

/**
 * Declare that the program reports @a events itself, with ucm_vm_mmap()
 * and ucm_vm_munmap() (for instance because it has memory hooks of its
 * own): ucm_set_event_handler() then adds handlers for them without
 * checking the interposition. The interposition cannot be switched off, so
 * the handlers still receive what it sees as well; a handler must accept
 * the same range twice. Thread safe.
 *
 * @param [in] events  Mask of events the program reports.
 */
void ucm_set_external_event(int events);

/**
 * Undo ucm_set_external_event() for @a events: later calls to
 * ucm_set_event_handler() check the interposition again. Handlers already
 * added stay. Thread safe.
 *
 * @param [in] events  Mask of events the program no longer reports.
 */
void ucm_unset_external_event(int events);

/**
 * Check that the interposition sees the program's calls for @a events, by
 * mapping and unmapping one page.
 *
 * @param [in] events  Mask of ::UCM_EVENT_VM_MAPPED and
 *                     ::UCM_EVENT_VM_UNMAPPED (0 checks both).
 *
 * @return UCS_OK; UCS_ERR_UNSUPPORTED if a call was not seen or another
 *         event is in the mask.
 */
ucs_status_t ucm_test_events(int events);

/**
 * Check that external @a events can be reported: ucm_vm_mmap() and
 * ucm_vm_munmap() always reach the handlers.
 *
 * @param [in] events  Mask of ::UCM_EVENT_VM_MAPPED and
 *                     ::UCM_EVENT_VM_UNMAPPED.
 *
 * @return UCS_OK; UCS_ERR_UNSUPPORTED if another event is in the mask.
 */
ucs_status_t ucm_test_external_events(int events);

/**
 * Deliver ::UCM_EVENT_VM_MAPPED for [@a addr, @a addr + @a length) to the
 * handlers, as if the program had just mapped it. Maps nothing.
 *
 * @param [in] addr    Start of the range.
 * @param [in] length  Length of the range; 0 delivers nothing.
 */
void ucm_vm_mmap(void *addr, size_t length);

/**
 * Deliver ::UCM_EVENT_VM_UNMAPPED for [@a addr, @a addr + @a length) to the
 * handlers, as if the program were about to release it: for a program
 * that releases memory behind the interposition's back (its own hooks, a
 * raw system call, a driver). Unmaps nothing; returns after every handler
 * ran.
 *
 * @param [in] addr    Start of the range.
 * @param [in] length  Length of the range; 0 delivers nothing.
 */
void ucm_vm_munmap(void *addr, size_t length);

/**
 * mmap() by system call, bypassing the interposition: no event.
 *
 * @param [in] addr    Requested address, or NULL.
 * @param [in] length  Length of the mapping.
 * @param [in] prot    Protection (PROT_*).
 * @param [in] flags   Flags (MAP_*).
 * @param [in] fd      File descriptor, or -1.
 * @param [in] offset  Offset in the file.
 *
 * @return The address mapped, or MAP_FAILED with errno set.
 */
void *ucm_orig_mmap(void *addr, size_t length, int prot, int flags, int fd,
                    off_t offset);

/**
 * munmap() by system call, bypassing the interposition: no event.
 *
 * @param [in] addr    Start of the range.
 * @param [in] length  Length of the range.
 *
 * @return 0, or -1 with errno set.
 */
int ucm_orig_munmap(void *addr, size_t length);

/**
 * mmap() by system call, then ::UCM_EVENT_VM_MAPPED for the new mapping.
 *
 * @param [in] addr    Requested address, or NULL.
 * @param [in] length  Length of the mapping.
 * @param [in] prot    Protection (PROT_*).
 * @param [in] flags   Flags (MAP_*); with MAP_FIXED, the range replaced is
 *                     first reported as ::UCM_EVENT_VM_UNMAPPED.
 * @param [in] fd      File descriptor, or -1.
 * @param [in] offset  Offset in the file.
 *
 * @return The address mapped, or MAP_FAILED with errno set.
 */
void *ucm_mmap(void *addr, size_t length, int prot, int flags, int fd,
               off_t offset);

/**
 * ::UCM_EVENT_VM_UNMAPPED for the range, then munmap() by system call.
 *
 * @param [in] addr    Start of the range.
 * @param [in] length  Length of the range.
 *
 * @return 0, or -1 with errno set.
 */
int ucm_munmap(void *addr, size_t length);

END_C_DECLS

#endif
