/*
 * Async contexts and handlers: registration, dispatch with the context
 * try-lock, the missed-event queue, and POLL mode.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/async/async_int.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define UCS_ASYNC_TABLE_MIN_SIZE 64

const char *ucs_async_mode_names[] = {
    [UCS_ASYNC_MODE_SIGNAL]          = "signal",
    [UCS_ASYNC_MODE_THREAD_SPINLOCK] = "thread_spinlock",
    [UCS_ASYNC_MODE_THREAD_MUTEX]    = "thread_mutex",
    [UCS_ASYNC_MODE_POLL]            = "poll",
    [UCS_ASYNC_MODE_LAST]            = NULL};

/* A handler call in progress on this thread; innermost first. */
typedef struct ucs_async_call {
    ucs_async_handler_t *handler;
    struct ucs_async_call *prev;
} ucs_async_call_t;

static __thread ucs_async_call_t *ucs_async_calls = NULL;

static struct {
    pthread_mutex_t lock;
    ucs_async_handler_t **table; /* open addressing, keyed by id */
    unsigned table_size;         /* 0 or a power of 2 */
    unsigned table_count;
    int next_timer_id;
    uint32_t next_gen;

    /* POLL mode: fds and timers of every context, polled by the owners */
    ucs_sys_event_set_t *poll_event_set; /* created on first use */
    ucs_async_timer_set_t poll_timers;
    unsigned poll_num_fds;           /* atomic reads */
    unsigned poll_num_handlers;      /* atomic reads */
    ucs_time_t poll_next_expiration; /* atomic reads; may be
                                        early, never late */
} ucs_async_global = {.lock                 = PTHREAD_MUTEX_INITIALIZER,
                      .next_timer_id        = UCS_ASYNC_TIMER_ID_MIN,
                      .next_gen             = 1,
                      .poll_next_expiration = UCS_TIME_INFINITY};

void ucs_async_global_lock(void)
{
    pthread_mutex_lock(&ucs_async_global.lock);
}

void ucs_async_global_unlock(void)
{
    pthread_mutex_unlock(&ucs_async_global.lock);
}

/* ------------------------------------------------------------------------
 * Handler table: open addressing with linear probing, keyed by id.
 * Global lock held.
 */

static unsigned ucs_async_table_home(int id, unsigned size)
{
    return ((uint32_t)id * 2654435761u) & (size - 1);
}

static unsigned ucs_async_table_slot(int id)
{
    unsigned mask = ucs_async_global.table_size - 1;
    unsigned i;

    for (i = ucs_async_table_home(id, ucs_async_global.table_size);
         ucs_async_global.table[i] != NULL; i = (i + 1) & mask) {
        if (ucs_async_global.table[i]->id == id) {
            return i;
        }
    }
    return i; /* the empty slot ending the probe */
}

static ucs_async_handler_t *ucs_async_table_find(int id)
{
    if (ucs_async_global.table_size == 0) {
        return NULL;
    }
    return ucs_async_global.table[ucs_async_table_slot(id)];
}

static void ucs_async_table_place(ucs_async_handler_t **table, unsigned size,
                                  ucs_async_handler_t *handler)
{
    unsigned i;

    for (i = ucs_async_table_home(handler->id, size); table[i] != NULL;
         i = (i + 1) & (size - 1)) {
    }
    table[i] = handler;
}

static ucs_status_t ucs_async_table_insert(ucs_async_handler_t *handler)
{
    unsigned new_size, i;
    ucs_async_handler_t **table;

    if (((ucs_async_global.table_count + 1) * 2) >
        ucs_async_global.table_size) {
        new_size =
            ucs_max(UCS_ASYNC_TABLE_MIN_SIZE, ucs_async_global.table_size * 2);
        table = calloc(new_size, sizeof(*table));
        if (table == NULL) {
            ucs_error("failed to grow the async handler table to %u entries",
                      new_size);
            return UCS_ERR_NO_MEMORY;
        }

        for (i = 0; i < ucs_async_global.table_size; ++i) {
            if (ucs_async_global.table[i] != NULL) {
                ucs_async_table_place(table, new_size,
                                      ucs_async_global.table[i]);
            }
        }

        free(ucs_async_global.table);
        ucs_async_global.table      = table;
        ucs_async_global.table_size = new_size;
    }

    ucs_async_table_place(ucs_async_global.table, ucs_async_global.table_size,
                          handler);
    ++ucs_async_global.table_count;
    return UCS_OK;
}

static ucs_async_handler_t *ucs_async_table_remove(int id)
{
    ucs_async_handler_t **table = ucs_async_global.table;
    unsigned mask               = ucs_async_global.table_size - 1;
    ucs_async_handler_t *handler;
    unsigned hole, i, home;

    if (ucs_async_global.table_size == 0) {
        return NULL;
    }

    hole    = ucs_async_table_slot(id);
    handler = table[hole];
    if (handler == NULL) {
        return NULL;
    }

    table[hole] = NULL;
    --ucs_async_global.table_count;

    /* Close the gap: move back each later entry of the cluster whose home
     * is not in the cyclic range (hole, i], so every probe still finds it. */
    for (i = (hole + 1) & mask; table[i] != NULL; i = (i + 1) & mask) {
        home = ucs_async_table_home(table[i]->id, ucs_async_global.table_size);
        if ((i > hole) ? ((home <= hole) || (home > i))
                       : ((home <= hole) && (home > i))) {
            table[hole] = table[i];
            table[i]    = NULL;
            hole        = i;
        }
    }

    return handler;
}

/* ------------------------------------------------------------------------
 * Timer sets. Global lock held.
 */

static ucs_status_t ucs_async_timer_set_add(ucs_async_timer_set_t *set,
                                            ucs_async_handler_t *handler)
{
    ucs_async_handler_t **entries;
    unsigned capacity;

    if (set->count == set->capacity) {
        capacity = ucs_max(16, set->capacity * 2);
        entries  = realloc(set->entries, capacity * sizeof(*entries));
        if (entries == NULL) {
            ucs_error("failed to grow a timer set to %u entries", capacity);
            return UCS_ERR_NO_MEMORY;
        }
        set->entries  = entries;
        set->capacity = capacity;
    }

    handler->timer_index       = set->count;
    set->entries[set->count++] = handler;
    return UCS_OK;
}

static void ucs_async_timer_set_remove(ucs_async_timer_set_t *set,
                                       ucs_async_handler_t *handler)
{
    ucs_async_handler_t *last = set->entries[--set->count];

    ucs_assert(set->entries[handler->timer_index] == handler);
    set->entries[handler->timer_index] = last;
    last->timer_index                  = handler->timer_index;
}

ucs_time_t ucs_async_timer_set_min(const ucs_async_timer_set_t *set)
{
    ucs_time_t min = UCS_TIME_INFINITY;
    unsigned i;

    for (i = 0; i < set->count; ++i) {
        min = ucs_min(min, set->entries[i]->expiration);
    }
    return min;
}

unsigned ucs_async_timers_collect(ucs_async_timer_set_t *set,
                                  const ucs_async_context_t *filter,
                                  ucs_time_t now, ucs_async_handler_t **expired,
                                  unsigned max)
{
    ucs_async_handler_t *handler;
    unsigned i, count = 0;

    for (i = 0; (i < set->count) && (count < max); ++i) {
        handler = set->entries[i];
        if ((handler->expiration > now) ||
            ((filter != NULL) && (handler->async != filter))) {
            continue;
        }

        /* keep the period; after a long stall do not fire a burst */
        handler->expiration += handler->interval;
        if (handler->expiration <= now) {
            handler->expiration = now + handler->interval;
        }

        __atomic_add_fetch(&handler->refcount, 1, __ATOMIC_RELAXED);
        expired[count++] = handler;
    }
    return count;
}

/* ------------------------------------------------------------------------
 * Handler objects, references and event-set membership
 */

static void *ucs_async_handler_key(const ucs_async_handler_t *handler)
{
#if UINTPTR_MAX > UINT32_MAX
    return (void *)(((uintptr_t)handler->gen << 32) | (uint32_t)handler->id);
#else
    return (void *)(uintptr_t)(uint32_t)handler->id; /* no generation */
#endif
}

ucs_async_handler_t *ucs_async_handler_get(void *key)
{
    int id = (int)(uint32_t)(uintptr_t)key;
    ucs_async_handler_t *handler;

    ucs_async_global_lock();
    handler = ucs_async_table_find(id);
    if ((handler != NULL) && (ucs_async_handler_key(handler) == key)) {
        __atomic_add_fetch(&handler->refcount, 1, __ATOMIC_RELAXED);
    } else {
        handler = NULL;
    }
    ucs_async_global_unlock();
    return handler;
}

void ucs_async_handler_put(ucs_async_handler_t *handler)
{
    ucs_async_context_t *async = handler->async;

    if (__atomic_sub_fetch(&handler->refcount, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }

    ucs_trace("async handler %d released", handler->id);
    free(handler);
    if (async != NULL) {
        /* the context may be freed right after this */
        __atomic_sub_fetch(&async->num_handler_objs, 1, __ATOMIC_RELEASE);
    }
}

static ucs_sys_event_set_t *
ucs_async_handler_event_set(const ucs_async_handler_t *handler)
{
    if (handler->mode == UCS_ASYNC_MODE_POLL) {
        return ucs_async_global.poll_event_set;
    }
    return handler->thread->event_set;
}

/*
 * A level-triggered fd whose event waits in the missed queue would be
 * reported again and again while the owner keeps the context blocked; take
 * it out of its event set until the queued event has run.
 */
static void ucs_async_handler_disarm(ucs_async_handler_t *handler)
{
    ucs_async_global_lock();
    if (!handler->removed && !handler->disarmed &&
        !(handler->events & UCS_EVENT_SET_EDGE_TRIGGERED) &&
        (ucs_event_set_del(ucs_async_handler_event_set(handler), handler->id) ==
         UCS_OK)) {
        handler->disarmed = 1;
    }
    ucs_async_global_unlock();
}

static void ucs_async_handler_rearm(ucs_async_handler_t *handler)
{
    ucs_async_global_lock();
    if (handler->disarmed && !handler->removed &&
        (ucs_event_set_add(ucs_async_handler_event_set(handler), handler->id,
                           (ucs_event_set_types_t)handler->events,
                           ucs_async_handler_key(handler)) == UCS_OK)) {
        handler->disarmed = 0;
    }
    ucs_async_global_unlock();
}

/* ------------------------------------------------------------------------
 * Dispatch
 */

static void ucs_async_handler_invoke(ucs_async_handler_t *handler, int events)
{
    ucs_async_call_t call;

    call.handler    = handler;
    call.prev       = ucs_async_calls;
    ucs_async_calls = &call;

    ucs_trace("async handler %d: events 0x%x", handler->id, events);
    handler->cb(handler->id, (ucs_event_set_types_t)events, handler->arg);

    ucs_async_calls = call.prev;
}

static void ucs_async_missed_add(ucs_async_handler_t *handler, int events)
{
    ucs_async_context_t *async = handler->async;

    if (handler->interval == 0) {
        ucs_async_handler_disarm(handler);
    }

    ucs_spin_lock(&async->missed_lock);
    handler->missed_events |= events;
    if (!handler->missed_queued) {
        handler->missed_queued = 1;
        handler->missed_next   = NULL;
        __atomic_add_fetch(&handler->refcount, 1, __ATOMIC_RELAXED);
        *async->missed_tail = handler;
        async->missed_tail  = &handler->missed_next;
        __atomic_add_fetch(&async->num_missed, 1, __ATOMIC_RELEASE);
    }
    ucs_spin_unlock(&async->missed_lock);

    ucs_trace("async handler %d: context %p is blocked, event 0x%x deferred",
              handler->id, (void *)async, events);
}

static ucs_async_handler_t *ucs_async_missed_pop(ucs_async_context_t *async,
                                                 int *events_p)
{
    ucs_async_handler_t *handler;

    ucs_spin_lock(&async->missed_lock);
    handler = async->missed_head;
    if (handler != NULL) {
        async->missed_head = handler->missed_next;
        if (async->missed_head == NULL) {
            async->missed_tail = &async->missed_head;
        }
        *events_p              = handler->missed_events;
        handler->missed_events = 0;
        handler->missed_queued = 0;
        __atomic_sub_fetch(&async->num_missed, 1, __ATOMIC_RELAXED);
    }
    ucs_spin_unlock(&async->missed_lock);
    return handler;
}

void ucs_async_handler_dispatch(ucs_async_handler_t *handler, int events,
                                int may_run)
{
    ucs_async_context_t *async = handler->async;

    /* Announce the dispatch before looking at "removed": a remover sets
     * "removed" before reading "running", so one of us sees the other. */
    __atomic_add_fetch(&handler->running, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&handler->removed, __ATOMIC_SEQ_CST)) {
        goto out;
    }

    if (async == NULL) {
        ucs_async_handler_invoke(handler, events);
    } else if (may_run && ucs_async_try_block(async)) {
        ucs_async_handler_invoke(handler, events);
        ucs_async_unblock(async);
    } else {
        ucs_async_missed_add(handler, events);
    }

out:
    __atomic_sub_fetch(&handler->running, 1, __ATOMIC_SEQ_CST);
}

void ucs_async_dispatch_missed(ucs_async_context_t *async)
{
    ucs_async_handler_t *handler;
    unsigned budget;
    int events;

    /* The async thread may be running a handler of this context right now;
     * never wait for it, try again on the next call. */
    if (!ucs_async_try_block(async)) {
        return;
    }

    /* Only what is queued now, so a handler re-queued meanwhile waits for
     * the next call instead of keeping us here. */
    budget = __atomic_load_n(&async->num_missed, __ATOMIC_ACQUIRE);
    while ((budget-- > 0) &&
           ((handler = ucs_async_missed_pop(async, &events)) != NULL)) {
        __atomic_add_fetch(&handler->running, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&handler->removed, __ATOMIC_SEQ_CST)) {
            ucs_async_handler_invoke(handler, events);
        }
        __atomic_sub_fetch(&handler->running, 1, __ATOMIC_SEQ_CST);

        if (handler->interval == 0) {
            ucs_async_handler_rearm(handler);
        }
        ucs_async_handler_put(handler);
    }

    ucs_async_unblock(async);
}

/* ------------------------------------------------------------------------
 * Registration
 */

static ucs_status_t ucs_async_signal_mode_refuse(void)
{
    ucs_error("async mode \"signal\" is not supported; use "
              "UCS_ASYNC_MODE_THREAD_SPINLOCK, UCS_ASYNC_MODE_THREAD_MUTEX or "
              "UCS_ASYNC_MODE_POLL");
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t ucs_async_check_params(ucs_async_mode_t mode,
                                           ucs_async_event_cb_t cb,
                                           const ucs_async_context_t *async)
{
    if (mode == UCS_ASYNC_MODE_SIGNAL) {
        return ucs_async_signal_mode_refuse();
    }

    if ((mode != UCS_ASYNC_MODE_THREAD_SPINLOCK) &&
        (mode != UCS_ASYNC_MODE_THREAD_MUTEX) &&
        (mode != UCS_ASYNC_MODE_POLL)) {
        ucs_error("invalid async mode %d", (int)mode);
        return UCS_ERR_INVALID_PARAM;
    }

    if (cb == NULL) {
        ucs_error("async handler callback is NULL");
        return UCS_ERR_INVALID_PARAM;
    }

    if ((async == NULL) && (mode == UCS_ASYNC_MODE_POLL)) {
        ucs_error("a poll-mode async handler needs a context: its owner's "
                  "progress runs it");
        return UCS_ERR_INVALID_PARAM;
    }

    if ((async != NULL) && (async->mode != mode)) {
        ucs_error("async handler mode \"%s\" differs from the mode \"%s\" of "
                  "context %p; pass the context's mode",
                  ucs_async_mode_names[mode], ucs_async_mode_names[async->mode],
                  (const void *)async);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* A new handler object holding one reference (the table's), or NULL. */
static ucs_async_handler_t *
ucs_async_handler_create(ucs_async_mode_t mode, int id, ucs_async_event_cb_t cb,
                         void *arg, ucs_async_context_t *async)
{
    ucs_async_handler_t *handler;

    handler = calloc(1, sizeof(*handler));
    if (handler == NULL) {
        ucs_error("failed to allocate an async handler");
        return NULL;
    }

    handler->id       = id;
    handler->mode     = mode;
    handler->cb       = cb;
    handler->arg      = arg;
    handler->async    = async;
    handler->refcount = 1;
    if (async != NULL) {
        __atomic_add_fetch(&async->num_handler_objs, 1, __ATOMIC_RELAXED);
    }
    return handler;
}

/* Global lock held. */
static int ucs_async_timer_id_alloc(void)
{
    int id;

    do {
        id = ucs_async_global.next_timer_id;
        ucs_async_global.next_timer_id =
            (id == INT_MAX) ? UCS_ASYNC_TIMER_ID_MIN : (id + 1);
    } while (ucs_async_table_find(id) != NULL);

    return id;
}

/* Global lock held. Put the fd of @a handler in its event set. */
static ucs_status_t ucs_async_fd_start(ucs_async_handler_t *handler)
{
    ucs_sys_event_set_t *poll_set;
    ucs_status_t status;

    if ((handler->mode == UCS_ASYNC_MODE_POLL) &&
        (ucs_async_global.poll_event_set == NULL)) {
        status = ucs_event_set_create(&poll_set);
        if (status != UCS_OK) {
            return status;
        }
        __atomic_store_n(&ucs_async_global.poll_event_set, poll_set,
                         __ATOMIC_RELEASE);
    }

    status = ucs_event_set_add(
        ucs_async_handler_event_set(handler), handler->id,
        (ucs_event_set_types_t)handler->events, ucs_async_handler_key(handler));
    if (status == UCS_ERR_ALREADY_EXISTS) {
        ucs_error("fd %d is already watched by the async event set; remove "
                  "its handler before registering a new one",
                  handler->id);
        return status;
    } else if (status != UCS_OK) {
        return status;
    }

    if (handler->mode == UCS_ASYNC_MODE_POLL) {
        __atomic_add_fetch(&ucs_async_global.poll_num_fds, 1, __ATOMIC_RELEASE);
    }
    return UCS_OK;
}

/* Global lock held. Schedule the first expiration of @a handler. */
static ucs_status_t ucs_async_timer_start(ucs_async_handler_t *handler)
{
    ucs_time_t now = ucs_get_time();
    ucs_time_t next_poll;
    ucs_status_t status;

    handler->expiration = now + handler->interval;

    if (handler->mode == UCS_ASYNC_MODE_POLL) {
        status =
            ucs_async_timer_set_add(&ucs_async_global.poll_timers, handler);
        if (status != UCS_OK) {
            return status;
        }

        next_poll = __atomic_load_n(&ucs_async_global.poll_next_expiration,
                                    __ATOMIC_RELAXED);
        if (handler->expiration < next_poll) {
            __atomic_store_n(&ucs_async_global.poll_next_expiration,
                             handler->expiration, __ATOMIC_RELEASE);
        }
        return UCS_OK;
    }

    status = ucs_async_timer_set_add(&handler->thread->timers, handler);
    if (status != UCS_OK) {
        return status;
    }

    if (handler->expiration < handler->thread->armed_expiration) {
        ucs_async_thread_arm_timer(handler->thread, now);
    }
    return UCS_OK;
}

/* Global lock held. Undo ucs_async_fd_start()/ucs_async_timer_start(). */
static void ucs_async_handler_stop(ucs_async_handler_t *handler)
{
    if (handler->interval != 0) {
        ucs_async_timer_set_remove((handler->mode == UCS_ASYNC_MODE_POLL)
                                       ? &ucs_async_global.poll_timers
                                       : &handler->thread->timers,
                                   handler);
        /* an early thread or poll wake-up finds nothing and re-arms */
        return;
    }

    if (!handler->disarmed) {
        ucs_event_set_del(ucs_async_handler_event_set(handler), handler->id);
    }
    if (handler->mode == UCS_ASYNC_MODE_POLL) {
        __atomic_sub_fetch(&ucs_async_global.poll_num_fds, 1, __ATOMIC_RELEASE);
    }
}

/* Make @a handler visible: table, event set or timer set, counters. On
 * failure the handler is freed. */
static ucs_status_t ucs_async_handler_add(ucs_async_handler_t *handler,
                                          int *id_p)
{
    int is_thread = (handler->mode != UCS_ASYNC_MODE_POLL);
    ucs_status_t status;
    int id;

    if (is_thread) {
        status = ucs_async_thread_get(&handler->thread);
        if (status != UCS_OK) {
            goto err_free;
        }
    }

    ucs_async_global_lock();

    if (handler->interval != 0) {
        handler->id = ucs_async_timer_id_alloc();
    } else if (ucs_async_table_find(handler->id) != NULL) {
        ucs_error("fd %d already has an async handler; remove it first",
                  handler->id);
        status = UCS_ERR_ALREADY_EXISTS;
        goto err_unlock;
    }

    handler->gen = ucs_async_global.next_gen++;
    if (ucs_async_global.next_gen == 0) {
        ucs_async_global.next_gen = 1;
    }

    status = ucs_async_table_insert(handler);
    if (status != UCS_OK) {
        goto err_unlock;
    }

    status = (handler->interval != 0) ? ucs_async_timer_start(handler)
                                      : ucs_async_fd_start(handler);
    if (status != UCS_OK) {
        goto err_table_remove;
    }

    if (!is_thread) {
        __atomic_add_fetch(&ucs_async_global.poll_num_handlers, 1,
                           __ATOMIC_RELEASE);
    }
    if (handler->async != NULL) {
        __atomic_add_fetch(&handler->async->num_handlers, 1, __ATOMIC_RELEASE);
    }

    /* once unlocked the handler may run, remove itself and be freed */
    id = handler->id;
    ucs_debug("added async handler %d (%s, context %p)", id,
              ucs_async_mode_names[handler->mode], (void *)handler->async);
    ucs_async_global_unlock();

    *id_p = id;
    return UCS_OK;

err_table_remove:
    ucs_async_table_remove(handler->id);
err_unlock:
    ucs_async_global_unlock();
    if (is_thread) {
        ucs_async_thread_put();
    }
err_free:
    ucs_async_handler_put(handler);
    return status;
}

ucs_status_t ucs_async_set_event_handler(ucs_async_mode_t mode, int fd,
                                         ucs_event_set_types_t events,
                                         ucs_async_event_cb_t cb, void *arg,
                                         ucs_async_context_t *async)
{
    ucs_async_handler_t *handler;
    ucs_status_t status;
    int id;

    status = ucs_async_check_params(mode, cb, async);
    if (status != UCS_OK) {
        return status;
    }

    if ((fd < 0) || (fd >= UCS_ASYNC_TIMER_ID_MIN)) {
        ucs_error("invalid fd %d for an async event handler", fd);
        return UCS_ERR_INVALID_PARAM;
    }

    handler = ucs_async_handler_create(mode, fd, cb, arg, async);
    if (handler == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    handler->events = (int)events;
    return ucs_async_handler_add(handler, &id);
}

ucs_status_t ucs_async_add_timer(ucs_async_mode_t mode, ucs_time_t interval,
                                 ucs_async_event_cb_t cb, void *arg,
                                 ucs_async_context_t *async, int *timer_id_p)
{
    ucs_async_handler_t *handler;
    ucs_status_t status;

    status = ucs_async_check_params(mode, cb, async);
    if (status != UCS_OK) {
        return status;
    }

    if ((interval == 0) || (interval == UCS_TIME_INFINITY)) {
        ucs_error("invalid async timer interval %llu; it must be positive "
                  "and finite",
                  (unsigned long long)interval);
        return UCS_ERR_INVALID_PARAM;
    }

    handler = ucs_async_handler_create(mode, -1, cb, arg, async);
    if (handler == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    handler->interval = interval;
    return ucs_async_handler_add(handler, timer_id_p);
}

/* Wait until no other thread is dispatching @a handler. Calls of it on
 * this thread's stack (removal from inside the handler) do not count. */
static void ucs_async_handler_wait(ucs_async_handler_t *handler)
{
    const ucs_async_call_t *call;
    int own_calls = 0;

    for (call = ucs_async_calls; call != NULL; call = call->prev) {
        if (call->handler == handler) {
            ++own_calls;
        }
    }

    while (__atomic_load_n(&handler->running, __ATOMIC_SEQ_CST) > own_calls) {
        sched_yield();
    }
}

ucs_status_t ucs_async_remove_handler(int id, int sync)
{
    ucs_async_handler_t *handler;

    ucs_async_global_lock();
    handler = ucs_async_table_remove(id);
    if (handler == NULL) {
        ucs_async_global_unlock();
        ucs_debug("no async handler with id %d", id);
        return UCS_ERR_NO_ELEM;
    }

    __atomic_store_n(&handler->removed, 1, __ATOMIC_SEQ_CST);
    ucs_async_handler_stop(handler);
    if (handler->mode == UCS_ASYNC_MODE_POLL) {
        __atomic_sub_fetch(&ucs_async_global.poll_num_handlers, 1,
                           __ATOMIC_RELEASE);
    }
    if (handler->async != NULL) {
        __atomic_sub_fetch(&handler->async->num_handlers, 1, __ATOMIC_RELEASE);
    }
    ucs_async_global_unlock();

    ucs_debug("removing async handler %d (%s, context %p%s)", id,
              ucs_async_mode_names[handler->mode], (void *)handler->async,
              sync ? ", sync" : "");

    if (sync) {
        ucs_async_handler_wait(handler);
    }

    if (handler->mode != UCS_ASYNC_MODE_POLL) {
        ucs_async_thread_put();
    }

    ucs_async_handler_put(handler);
    return UCS_OK;
}

ucs_status_t ucs_async_modify_handler(int fd, ucs_event_set_types_t events)
{
    ucs_async_handler_t *handler;
    ucs_status_t status = UCS_OK;

    ucs_async_global_lock();
    handler = ucs_async_table_find(fd);
    if ((handler == NULL) || (handler->interval != 0)) {
        ucs_async_global_unlock();
        ucs_error("no async event handler for fd %d", fd);
        return UCS_ERR_NO_ELEM;
    }

    handler->events = (int)events;
    if (!handler->disarmed) {
        /* a disarmed fd gets the new events when it is re-armed */
        status = ucs_event_set_mod(ucs_async_handler_event_set(handler), fd,
                                   events, ucs_async_handler_key(handler));
    }
    ucs_async_global_unlock();
    return status;
}

/* ------------------------------------------------------------------------
 * POLL mode
 */

static void ucs_async_poll_timers(ucs_async_context_t *filter)
{
    ucs_async_handler_t *expired[UCS_ASYNC_TIMER_BATCH];
    unsigned i, count;
    ucs_time_t now;

    if (ucs_get_time() < __atomic_load_n(&ucs_async_global.poll_next_expiration,
                                         __ATOMIC_ACQUIRE)) {
        return;
    }

    do {
        ucs_async_global_lock();
        now   = ucs_get_time();
        count = ucs_async_timers_collect(&ucs_async_global.poll_timers, filter,
                                         now, expired, UCS_ASYNC_TIMER_BATCH);
        __atomic_store_n(&ucs_async_global.poll_next_expiration,
                         ucs_async_timer_set_min(&ucs_async_global.poll_timers),
                         __ATOMIC_RELEASE);
        ucs_async_global_unlock();

        for (i = 0; i < count; ++i) {
            ucs_async_handler_dispatch(expired[i], UCS_EVENT_SET_EVREAD, 1);
            ucs_async_handler_put(expired[i]);
        }
    } while (count == UCS_ASYNC_TIMER_BATCH);
}

/* An fd of another context is queued for its own owner, never run here. */
static void ucs_async_poll_event(void *callback_data,
                                 ucs_event_set_types_t events, void *arg)
{
    ucs_async_context_t *filter = arg;
    ucs_async_handler_t *handler;

    handler = ucs_async_handler_get(callback_data);
    if (handler == NULL) {
        return;
    }

    ucs_async_handler_dispatch(handler, events,
                               (filter == NULL) || (handler->async == filter));
    ucs_async_handler_put(handler);
}

static void ucs_async_poll_fds(ucs_async_context_t *filter)
{
    ucs_sys_event_set_t *poll_set;
    unsigned num_events;

    if (__atomic_load_n(&ucs_async_global.poll_num_fds, __ATOMIC_ACQUIRE) ==
        0) {
        return;
    }

    poll_set =
        __atomic_load_n(&ucs_async_global.poll_event_set, __ATOMIC_ACQUIRE);
    num_events = UCS_ASYNC_MAX_EVENTS;
    ucs_event_set_wait(poll_set, &num_events, 0, ucs_async_poll_event, filter);
}

void ucs_async_poll(ucs_async_context_t *async)
{
    if (async != NULL) {
        if (__atomic_load_n(&async->num_missed, __ATOMIC_RELAXED) != 0) {
            ucs_async_dispatch_missed(async);
        }
        if ((async->mode != UCS_ASYNC_MODE_POLL) ||
            (__atomic_load_n(&async->num_handlers, __ATOMIC_RELAXED) == 0)) {
            return;
        }
    } else if (__atomic_load_n(&ucs_async_global.poll_num_handlers,
                               __ATOMIC_RELAXED) == 0) {
        return;
    }

    ucs_async_poll_timers(async);
    ucs_async_poll_fds(async);
}

/* ------------------------------------------------------------------------
 * Contexts
 */

ucs_status_t ucs_async_context_init(ucs_async_context_t *async,
                                    ucs_async_mode_t mode)
{
    ucs_status_t status;
    int ret;

    memset(async, 0, sizeof(*async));
    async->mode        = mode;
    async->missed_head = NULL;
    async->missed_tail = &async->missed_head;

    switch (mode) {
    case UCS_ASYNC_MODE_SIGNAL:
        return ucs_async_signal_mode_refuse();
    case UCS_ASYNC_MODE_THREAD_SPINLOCK:
    case UCS_ASYNC_MODE_POLL:
        status = ucs_recursive_spinlock_init(&async->lock.spinlock, 0);
        if (status != UCS_OK) {
            return status;
        }
        break;
    case UCS_ASYNC_MODE_THREAD_MUTEX:
        ret = pthread_mutex_init(&async->lock.mutex.lock, NULL);
        if (ret != 0) {
            ucs_error("pthread_mutex_init() failed: %s", strerror(ret));
            return UCS_ERR_IO_ERROR;
        }
        async->lock.mutex.owner = UCS_SPINLOCK_OWNER_NULL;
        async->lock.mutex.count = 0;
        break;
    default:
        ucs_error("invalid async mode %d", (int)mode);
        return UCS_ERR_INVALID_PARAM;
    }

    status = ucs_spinlock_init(&async->missed_lock, 0);
    if (status != UCS_OK) {
        goto err_cleanup_lock;
    }

    ucs_debug("initialized async context %p, mode %s", (void *)async,
              ucs_async_mode_names[mode]);
    return UCS_OK;

err_cleanup_lock:
    if (mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        pthread_mutex_destroy(&async->lock.mutex.lock);
    } else {
        ucs_recursive_spinlock_destroy(&async->lock.spinlock);
    }
    return status;
}

/* Id of some handler still registered on @a async, or -1. */
static int ucs_async_context_find_handler(const ucs_async_context_t *async)
{
    int id = -1;
    unsigned i;

    ucs_async_global_lock();
    for (i = 0; i < ucs_async_global.table_size; ++i) {
        if ((ucs_async_global.table[i] != NULL) &&
            (ucs_async_global.table[i]->async == async)) {
            id = ucs_async_global.table[i]->id;
            break;
        }
    }
    ucs_async_global_unlock();
    return id;
}

void ucs_async_context_cleanup(ucs_async_context_t *async)
{
    ucs_async_handler_t *handler;
    unsigned num_handlers;
    int events, id;

    num_handlers = __atomic_load_n(&async->num_handlers, __ATOMIC_ACQUIRE);
    if (num_handlers != 0) {
        ucs_warn("async context %p is released with %u handler(s) still "
                 "registered; removing them (remove handlers before "
                 "releasing their context)",
                 (void *)async, num_handlers);
        while ((id = ucs_async_context_find_handler(async)) >= 0) {
            ucs_async_remove_handler(id, 1);
        }
    }

    /* Drop deferred events, and wait for other threads (dispatching a
     * handler removed without sync) to let go of our handlers. */
    for (;;) {
        while ((handler = ucs_async_missed_pop(async, &events)) != NULL) {
            ucs_async_handler_put(handler);
        }
        if (__atomic_load_n(&async->num_handler_objs, __ATOMIC_ACQUIRE) == 0) {
            break;
        }
        sched_yield();
    }

    ucs_spinlock_destroy(&async->missed_lock);
    if (async->mode == UCS_ASYNC_MODE_THREAD_MUTEX) {
        pthread_mutex_destroy(&async->lock.mutex.lock);
    } else {
        ucs_recursive_spinlock_destroy(&async->lock.spinlock);
    }
    ucs_debug("released async context %p", (void *)async);
}

ucs_status_t ucs_async_context_create(ucs_async_mode_t mode,
                                      ucs_async_context_t **async_p)
{
    ucs_async_context_t *async;
    ucs_status_t status;

    async = malloc(sizeof(*async));
    if (async == NULL) {
        ucs_error("failed to allocate an async context");
        return UCS_ERR_NO_MEMORY;
    }

    status = ucs_async_context_init(async, mode);
    if (status != UCS_OK) {
        free(async);
        return status;
    }

    *async_p = async;
    return UCS_OK;
}

void ucs_async_context_destroy(ucs_async_context_t *async)
{
    ucs_async_context_cleanup(async);
    free(async);
}
