/*
 * Internals shared by async.c (contexts, handlers, dispatch) and thread.c
 * (the process-wide async thread). Not installed.
 *
 * Locking:
 *  - the global lock (ucs_async_global_lock()) protects the handler table,
 *    the timer sets, the armed state of fds in event sets, and the thread's
 *    timerfd; it is never held while a handler runs;
 *  - a context's missed_lock protects its missed queue and the missed_*
 *    fields of its handlers;
 *  - the context lock (block/unblock) is taken by dispatchers only with a
 *    try-lock, so the async thread never waits for an owner;
 *  - the thread lifecycle lock (thread.c) is never taken by the async
 *    thread while it runs handlers.
 */
#ifndef UCS_ASYNC_ASYNC_INT_H_
#define UCS_ASYNC_ASYNC_INT_H_

#include <ucs/async/async.h>
#include <ucs/sys/event_set.h>
#include <ucs/time/time.h>

#include <pthread.h>

BEGIN_C_DECLS

typedef struct ucs_async_thread ucs_async_thread_t;

/** Timers in no particular order; expirations are scanned linearly. */
typedef struct ucs_async_timer_set {
    ucs_async_handler_t **entries;
    unsigned count;
    unsigned capacity;
} ucs_async_timer_set_t;

struct ucs_async_handler {
    int id;       /* fd, or timer id */
    uint32_t gen; /* tells a reused id apart */
    ucs_async_mode_t mode;
    ucs_async_event_cb_t cb;
    void *arg;
    ucs_async_context_t *async; /* NULL: no lock (thread modes) */
    ucs_async_thread_t *thread; /* thread modes: serving thread */

    /* fd handlers; global lock */
    int events;   /* ucs_event_set_types_t bits */
    int disarmed; /* fd taken out of its event set
                     while an event waits in the
                     missed queue */

    /* timers; global lock */
    ucs_time_t interval; /* 0 for fd handlers */
    ucs_time_t expiration;
    unsigned timer_index; /* position in its timer set */

    /* atomics */
    int refcount; /* table, missed queue, dispatchers */
    int running;  /* dispatches in progress */
    int removed;

    /* missed queue; async->missed_lock */
    int missed_queued;
    int missed_events;
    ucs_async_handler_t *missed_next;
};

/** One instance of the async thread; replaced after it is stopped. */
struct ucs_async_thread {
    pthread_t tid;
    ucs_sys_event_set_t *event_set;
    int wakeup_fd;                /* eventfd: stop request */
    int timer_fd;                 /* timerfd: next expiration */
    int stop;                     /* atomic */
    ucs_async_timer_set_t timers; /* global lock */
    ucs_time_t armed_expiration;  /* global lock */
};

/* Keys the thread gives its own fds in the event set. */
#define UCS_ASYNC_KEY_WAKEUP ((void *)(uintptr_t)UINT32_MAX)
#define UCS_ASYNC_KEY_TIMER  ((void *)(uintptr_t)(UINT32_MAX - 1))

/* Most expired timers collected under one hold of the global lock. */
#define UCS_ASYNC_TIMER_BATCH 32

/* Most fd events handled per wait. */
#define UCS_ASYNC_MAX_EVENTS 32

void ucs_async_global_lock(void);
void ucs_async_global_unlock(void);

/** The handler behind an event-set key, with a reference, or NULL. */
ucs_async_handler_t *ucs_async_handler_get(void *key);

/** Drop a reference; the last one frees the handler. */
void ucs_async_handler_put(ucs_async_handler_t *handler);

/**
 * Deliver @a events to @a handler: run it under its context's lock if
 * @a may_run and the lock is free, otherwise queue it as missed.
 */
void ucs_async_handler_dispatch(ucs_async_handler_t *handler, int events,
                                int may_run);

/**
 * Under the global lock: take a reference on up to @a max expired timers of
 * @a set (only those of @a filter unless it is NULL), store them in
 * @a expired and move their expiration one interval on.
 */
unsigned ucs_async_timers_collect(ucs_async_timer_set_t *set,
                                  const ucs_async_context_t *filter,
                                  ucs_time_t now, ucs_async_handler_t **expired,
                                  unsigned max);

/** Earliest expiration in @a set, UCS_TIME_INFINITY if empty. */
ucs_time_t ucs_async_timer_set_min(const ucs_async_timer_set_t *set);

/** Start the thread if needed and count one more thread-mode handler. */
ucs_status_t ucs_async_thread_get(ucs_async_thread_t **thread_p);

/**
 * Count one thread-mode handler less; the last one stops the thread,
 * unless called from the thread itself (then it idles until the next
 * cycle or process exit).
 */
void ucs_async_thread_put(void);

/** Under the global lock: program the timerfd for the earliest timer. */
void ucs_async_thread_arm_timer(ucs_async_thread_t *thread, ucs_time_t now);

END_C_DECLS

#endif
