/*
 * Asynchronous events: the declarations programs need to create a context
 * and register fd and timer handlers. The context itself, and the inline
 * block/unblock calls, are in <ucs/async/async.h>.
 */
#ifndef UCS_ASYNC_ASYNC_FWD_H_
#define UCS_ASYNC_ASYNC_FWD_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/sys/event_set.h>
#include <ucs/time/time_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/** Where handlers of a context run. */
typedef enum {
    UCS_ASYNC_MODE_SIGNAL,          /* not supported; use a thread mode */
    UCS_ASYNC_MODE_THREAD_SPINLOCK, /* process-wide thread; context lock is a
                                       spinlock */
    UCS_ASYNC_MODE_THREAD = UCS_ASYNC_MODE_THREAD_SPINLOCK, /* older name */
    UCS_ASYNC_MODE_THREAD_MUTEX,    /* process-wide thread; context lock is a
                                       mutex (the owner may sleep inside a
                                       blocked section) */
    UCS_ASYNC_MODE_POLL,            /* no thread: ucs_async_check_miss() or
                                       ucs_async_poll() run the handlers */
    UCS_ASYNC_MODE_LAST
} ucs_async_mode_t;

/** "signal", "thread_spinlock", "thread_mutex", "poll". */
extern const char *ucs_async_mode_names[];

typedef struct ucs_async_context ucs_async_context_t;

/**
 * An event handler. @a id is the fd or the timer id it was registered
 * with; @a events is what happened on the fd (UCS_EVENT_SET_EVREAD for a
 * timer).
 */
typedef void (*ucs_async_event_cb_t)(int id, ucs_event_set_types_t events,
                                     void *arg);

/** Timer ids are at least this large; fd handler ids are the fds. */
#define UCS_ASYNC_TIMER_ID_MIN (1 << 30)

/**
 * Create a context whose handlers run in @a mode. UCS_ERR_UNSUPPORTED for
 * UCS_ASYNC_MODE_SIGNAL.
 */
ucs_status_t ucs_async_context_create(ucs_async_mode_t mode,
                                      ucs_async_context_t **async_p);

/**
 * Destroy a context made by ucs_async_context_create(). Handlers still
 * registered on it are removed, with a warning. Not from one of its own
 * handlers.
 */
void ucs_async_context_destroy(ucs_async_context_t *async);

/**
 * Call @a cb when @a fd has @a events. The handler's id is @a fd.
 * @a mode must be the mode of @a async. @a async may be NULL in the thread
 * modes: the handler then runs on the async thread without any lock.
 * UCS_ERR_ALREADY_EXISTS if @a fd already has a handler. Remove the handler
 * before closing the fd.
 */
ucs_status_t ucs_async_set_event_handler(ucs_async_mode_t mode, int fd,
                                         ucs_event_set_types_t events,
                                         ucs_async_event_cb_t cb, void *arg,
                                         ucs_async_context_t *async);

/**
 * Call @a cb every @a interval (ucs_time_t ticks, > 0); the first call is
 * one interval from now. The new id is stored in @a timer_id_p.
 */
ucs_status_t ucs_async_add_timer(ucs_async_mode_t mode, ucs_time_t interval,
                                 ucs_async_event_cb_t cb, void *arg,
                                 ucs_async_context_t *async,
                                 int *timer_id_p);

/**
 * Remove the handler @a id (an fd or a timer id). With @a sync, wait until
 * no call of it is in progress on another thread, so that after the return
 * it never runs again and its arg may be freed. May be called from inside
 * the handler itself. UCS_ERR_NO_ELEM if there is no such handler.
 */
ucs_status_t ucs_async_remove_handler(int id, int sync);

/** Change the events the fd handler @a fd waits for. */
ucs_status_t ucs_async_modify_handler(int fd, ucs_event_set_types_t events);

/**
 * Run pending work of @a async from the calling thread: events that were
 * deferred because the context was blocked, and, in POLL mode, timers that
 * expired and fds that are ready. With @a async == NULL, POLL-mode timers
 * and fds of every context are run (each under its own context's lock).
 */
void ucs_async_poll(ucs_async_context_t *async);

END_C_DECLS

#endif
