/*
 * The memory event handlers: a list ordered by priority, and the dispatch
 * of the VM mapped/unmapped events that libucs's interposed functions and
 * the program (ucm_vm_mmap, ucm_vm_munmap) report. See ucm/api/ucm.h and
 * src/ucm/README.md.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucm/event/event.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The events that can be delivered */
#define UCM_EVENT_VM_ALL (UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED)
/* Every bit ucm_event_type_t names */
#define UCM_EVENT_FLAGS \
    (UCM_EVENT_FLAG_NO_INSTALL | UCM_EVENT_FLAG_EXISTING_ALLOC)
#define UCM_EVENT_KNOWN                                   \
    (0xff | UCM_EVENT_VM_ALL | UCM_EVENT_MEM_TYPE_ALLOC | \
     UCM_EVENT_MEM_TYPE_FREE | UCM_EVENT_FLAGS)

typedef struct ucm_handler {
    struct ucm_handler *next;
    int events; /* UCM_EVENT_VM_* still delivered */
    int priority;
    ucm_event_callback_t cb;
    void *arg;
} ucm_handler_t;

int ucm_event_listened;

/* Handlers, the check's state and the external mask; recursive because a
 * handler may release memory, which reports again */
static pthread_mutex_t ucm_event_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static ucm_handler_t *ucm_event_handlers; /* ascending priority */
static int ucm_event_external;
/* The check's state is written before and read after mmap() and munmap(),
 * which glibc declares leaf functions: the compiler may assume they never
 * call back into this file, keep these in registers across the calls and
 * drop the stores as dead, although the calls do come back through libucs
 * to ucm_event_dispatch(). Every access is therefore atomic. */
static int ucm_event_checked;  /* the check ran */
static int ucm_event_seen;     /* UCM_EVENT_VM_* the check saw */
static int ucm_event_checking; /* UCM_EVENT_VM_* the check waits for */
static uintptr_t ucm_event_check_start;
static uintptr_t ucm_event_check_end;

static void ucm_event_lock_all(void)
{
    pthread_mutex_lock(&ucm_event_lock);
}

static void ucm_event_unlock_all(void)
{
    pthread_mutex_unlock(&ucm_event_lock);
}

/* The child runs with a new thread id and cannot unlock the lock taken
 * before fork(): make a fresh one. */
static void ucm_event_child_reinit(void)
{
    pthread_mutexattr_t attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&ucm_event_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

static void UCS_F_CTOR ucm_event_init(void)
{
    pthread_atfork(ucm_event_lock_all, ucm_event_unlock_all,
                   ucm_event_child_reinit);
}

/* Called with the lock held after the handlers or the check changed */
static void ucm_event_update_listened(void)
{
    const ucm_handler_t *handler;
    int mask = __atomic_load_n(&ucm_event_checking, __ATOMIC_ACQUIRE);

    for (handler = ucm_event_handlers; handler != NULL;
         handler = handler->next) {
        mask |= handler->events;
    }
    __atomic_store_n(&ucm_event_listened, mask, __ATOMIC_RELEASE);
}

static void ucm_event_dispatch(ucm_event_type_t type, void *addr, size_t length)
{
    uintptr_t start = (uintptr_t)addr;
    const ucm_handler_t *handler;
    ucm_event_t event;

    if ((length == 0) || !ucm_event_is_listened(type)) {
        return;
    }

    pthread_mutex_lock(&ucm_event_lock);
    if ((__atomic_load_n(&ucm_event_checking, __ATOMIC_ACQUIRE) & type) &&
        (start == __atomic_load_n(&ucm_event_check_start, __ATOMIC_ACQUIRE)) &&
        (start + length ==
         __atomic_load_n(&ucm_event_check_end, __ATOMIC_ACQUIRE))) {
        __atomic_fetch_or(&ucm_event_seen, type, __ATOMIC_ACQ_REL);
    }
    for (handler = __atomic_load_n(&ucm_event_handlers, __ATOMIC_ACQUIRE);
         handler != NULL; handler = handler->next) {
        if (handler->events & type) {
            /* both events share the layout of vm_mapped */
            event.vm_mapped.address = addr;
            event.vm_mapped.size    = length;
            handler->cb(type, &event, handler->arg);
        }
    }
    pthread_mutex_unlock(&ucm_event_lock);
}

void ucm_vm_mmap(void *addr, size_t length)
{
    ucm_event_dispatch(UCM_EVENT_VM_MAPPED, addr, length);
}

void ucm_vm_munmap(void *addr, size_t length)
{
    ucm_event_dispatch(UCM_EVENT_VM_UNMAPPED, addr, length);
}

/* Called with the lock held: one page mapped and unmapped through the
 * global mmap and munmap, which are libucs's when the interposition works */
static void ucm_event_check(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *ptr;

    __atomic_store_n(&ucm_event_checking, UCM_EVENT_VM_ALL, __ATOMIC_RELEASE);
    ucm_event_update_listened();

    /* the range is known after mmap() returns: the mapped event is
     * recognized by its length and the address mmap() gives back */
    __atomic_store_n(&ucm_event_check_start, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ucm_event_check_end, page, __ATOMIC_RELEASE);
    ptr = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
    if (ptr != MAP_FAILED) {
        __atomic_store_n(&ucm_event_check_start, (uintptr_t)ptr,
                         __ATOMIC_RELEASE);
        __atomic_store_n(&ucm_event_check_end, (uintptr_t)ptr + page,
                         __ATOMIC_RELEASE);
        munmap(ptr, page);
    }

    __atomic_store_n(&ucm_event_checking, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ucm_event_check_start, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ucm_event_check_end, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ucm_event_checked, 1, __ATOMIC_RELEASE);
    ucm_event_update_listened();
}

/* ucm_event_check() cannot see the mapped event's address before mmap()
 * returns it: the dispatch compares against the range set so far, so the
 * mapped event is recorded here instead, from inside the dispatch. */
static void ucm_event_check_mapped_cb(ucm_event_type_t type, ucm_event_t *event,
                                      void *arg)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if ((__atomic_load_n(&ucm_event_checking, __ATOMIC_ACQUIRE) &
         UCM_EVENT_VM_MAPPED) &&
        (event->vm_mapped.size == page)) {
        __atomic_fetch_or(&ucm_event_seen, UCM_EVENT_VM_MAPPED,
                          __ATOMIC_ACQ_REL);
    }
}

/* Called with the lock held */
static int ucm_event_seen_events(void)
{
    ucm_handler_t probe = {.next     = ucm_event_handlers,
                           .events   = UCM_EVENT_VM_MAPPED,
                           .priority = 0,
                           .cb       = ucm_event_check_mapped_cb,
                           .arg      = NULL};

    if (!__atomic_load_n(&ucm_event_checked, __ATOMIC_ACQUIRE)) {
        /* the check's own handler first, for the duration of the check */
        __atomic_store_n(&ucm_event_handlers, &probe, __ATOMIC_RELEASE);
        ucm_event_check();
        __atomic_store_n(&ucm_event_handlers, probe.next, __ATOMIC_RELEASE);
        ucm_event_update_listened();
    }
    return __atomic_load_n(&ucm_event_seen, __ATOMIC_ACQUIRE);
}

static ucs_status_t ucm_event_check_params(int events, int *vm_events_p)
{
    int vm_events = events & ~UCM_EVENT_FLAGS;

    if ((vm_events == 0) || (events & ~UCM_EVENT_KNOWN)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (vm_events & ~UCM_EVENT_VM_ALL) {
        return UCS_ERR_UNSUPPORTED;
    }

    *vm_events_p = vm_events;
    return UCS_OK;
}

ucs_status_t ucm_set_event_handler(int events, int priority,
                                   ucm_event_callback_t cb, void *arg)
{
    ucm_handler_t *handler, **pos;
    ucs_status_t status;
    int vm_events;

    if (cb == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }
    status = ucm_event_check_params(events, &vm_events);
    if (status != UCS_OK) {
        return status;
    }

    handler = malloc(sizeof(*handler));
    if (handler == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    handler->events   = vm_events;
    handler->priority = priority;
    handler->cb       = cb;
    handler->arg      = arg;

    pthread_mutex_lock(&ucm_event_lock);
    if (!(events & UCM_EVENT_FLAG_NO_INSTALL) &&
        ((vm_events & ~ucm_event_external) != 0) &&
        ((vm_events & ~ucm_event_external & ~ucm_event_seen_events()) != 0)) {
        pthread_mutex_unlock(&ucm_event_lock);
        free(handler);
        return UCS_ERR_UNSUPPORTED;
    }

    /* after every handler of the same or a lower priority */
    for (pos = &ucm_event_handlers; *pos != NULL; pos = &(*pos)->next) {
        if ((*pos)->priority > priority) {
            break;
        }
    }
    handler->next = *pos;
    *pos          = handler;
    ucm_event_update_listened();
    pthread_mutex_unlock(&ucm_event_lock);
    return UCS_OK;
}

void ucm_unset_event_handler(int events, ucm_event_callback_t cb, void *arg)
{
    ucm_handler_t **pos, *handler, *removed = NULL;

    pthread_mutex_lock(&ucm_event_lock);
    for (pos = &ucm_event_handlers; *pos != NULL; pos = &(*pos)->next) {
        handler = *pos;
        if ((handler->cb == cb) && (handler->arg == arg)) {
            handler->events &= ~events;
            if (handler->events == 0) {
                *pos    = handler->next;
                removed = handler;
            }
            break;
        }
    }
    ucm_event_update_listened();
    pthread_mutex_unlock(&ucm_event_lock);
    free(removed);
}

void ucm_set_external_event(int events)
{
    pthread_mutex_lock(&ucm_event_lock);
    ucm_event_external |= events & UCM_EVENT_VM_ALL;
    pthread_mutex_unlock(&ucm_event_lock);
}

void ucm_unset_external_event(int events)
{
    pthread_mutex_lock(&ucm_event_lock);
    ucm_event_external &= ~events;
    pthread_mutex_unlock(&ucm_event_lock);
}

ucs_status_t ucm_test_events(int events)
{
    int seen;

    if (events == 0) {
        events = UCM_EVENT_VM_ALL;
    }
    if (events & ~UCM_EVENT_VM_ALL) {
        return UCS_ERR_UNSUPPORTED;
    }

    pthread_mutex_lock(&ucm_event_lock);
    seen = ucm_event_seen_events();
    pthread_mutex_unlock(&ucm_event_lock);
    return ((events & ~seen) == 0) ? UCS_OK : UCS_ERR_UNSUPPORTED;
}

ucs_status_t ucm_test_external_events(int events)
{
    return (events & ~UCM_EVENT_VM_ALL) ? UCS_ERR_UNSUPPORTED : UCS_OK;
}

void *ucm_orig_mmap(void *addr, size_t length, int prot, int flags, int fd,
                    off_t offset)
{
    return (void *)syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
}

int ucm_orig_munmap(void *addr, size_t length)
{
    return (int)syscall(SYS_munmap, addr, length);
}

void *ucm_mmap(void *addr, size_t length, int prot, int flags, int fd,
               off_t offset)
{
    void *result;

    if (flags & MAP_FIXED) {
        ucm_vm_munmap(addr, length);
    }
    result = ucm_orig_mmap(addr, length, prot, flags, fd, offset);
    if (result != MAP_FAILED) {
        ucm_vm_mmap(result, length);
    }
    return result;
}

int ucm_munmap(void *addr, size_t length)
{
    ucm_vm_munmap(addr, length);
    return ucm_orig_munmap(addr, length);
}
