#ifndef UCS_ASYNC_ASYNC_FWD_H_
#define UCS_ASYNC_ASYNC_FWD_H_

/**
 * @file
 * Asynchronous events: the declarations programs need to create a context
 * and register fd and timer handlers. The context itself, and the inline
 * block/unblock calls, are in <ucs/async/async.h>. Included by uct.h
 * (interface parameters name an async context) and by transports.
 *
 * Handler registration is process-wide: the table of handlers is shared
 * by all contexts and protected by a global lock, so the register and
 * remove calls may be made from any thread.
 */

#include <ucs/sys/compiler_def.h>
#include <ucs/sys/event_set.h>
#include <ucs/time/time_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/** Where handlers of a context run. */
typedef enum {
    UCS_ASYNC_MODE_SIGNAL,          /**< not supported (UCS_ERR_UNSUPPORTED);
                                         use a thread mode */
    UCS_ASYNC_MODE_THREAD_SPINLOCK, /**< process-wide thread; context lock
                                         is a spinlock */
    UCS_ASYNC_MODE_THREAD = UCS_ASYNC_MODE_THREAD_SPINLOCK, /**< older name */
    UCS_ASYNC_MODE_THREAD_MUTEX, /**< process-wide thread; context lock
                                      is a mutex (the owner may sleep
                                      inside a blocked section) */
    UCS_ASYNC_MODE_POLL,         /**< no thread: ucs_async_check_miss()
                                      or ucs_async_poll() run the
                                      handlers */
    UCS_ASYNC_MODE_LAST          /**< number of modes */
} ucs_async_mode_t;

/** Names of the modes, indexed by ucs_async_mode_t: "signal",
 *  "thread_spinlock", "thread_mutex", "poll". */
extern const char *ucs_async_mode_names[];

/** An async context (struct ucs_async_context in <ucs/async/async.h>). */
typedef struct ucs_async_context ucs_async_context_t;

/**
 * An event handler. In the thread modes it runs on the async thread, with
 * its context blocked (or, when registered without a context, with no
 * lock); in POLL mode, and for events deferred because the context was
 * blocked, it runs on the thread that calls ucs_async_check_miss() or
 * ucs_async_poll(). It may remove itself or other handlers.
 *
 * @param [in] id     the fd or the timer id it was registered with.
 * @param [in] events what happened on the fd (UCS_EVENT_SET_EVREAD for a
 *                    timer).
 * @param [in] arg    the argument given at registration.
 */
typedef void (*ucs_async_event_cb_t)(int id, ucs_event_set_types_t events,
                                     void *arg);

/** Timer ids are at least this large; fd handler ids are the fds, so the
 *  two never collide. */
#define UCS_ASYNC_TIMER_ID_MIN (1 << 30)

/**
 * Allocate and initialize a context whose handlers run in @a mode.
 *
 * @param [in]  mode    a thread mode or UCS_ASYNC_MODE_POLL.
 * @param [out] async_p receives the context, set only on success; free it
 *                      with ucs_async_context_destroy().
 * @return UCS_OK; UCS_ERR_UNSUPPORTED for UCS_ASYNC_MODE_SIGNAL;
 *         UCS_ERR_INVALID_PARAM for an unknown mode; UCS_ERR_NO_MEMORY;
 *         UCS_ERR_IO_ERROR if the mutex could not be created.
 */
ucs_status_t ucs_async_context_create(ucs_async_mode_t mode,
                                      ucs_async_context_t **async_p);

/**
 * Destroy a context made by ucs_async_context_create(). Handlers still
 * registered on it are removed, with a warning, and the call waits until
 * no other thread runs any of them. Not from one of its own handlers.
 *
 * @param [in] async the context; freed by the call.
 */
void ucs_async_context_destroy(ucs_async_context_t *async);

/**
 * Call @a cb when @a fd has @a events. The handler's id is @a fd. Remove
 * the handler (ucs_async_remove_handler()) before closing the fd.
 *
 * @param [in] mode   must be the mode of @a async.
 * @param [in] fd     the file descriptor to watch (>= 0).
 * @param [in] events UCS_EVENT_SET_EV* bits to wait for.
 * @param [in] cb     the handler, not NULL.
 * @param [in] arg    passed to @a cb; must stay valid until the handler is
 *                    removed (with @a sync, if another thread may run it).
 * @param [in] async  the context whose lock the handler runs under; may be
 *                    NULL in the thread modes, the handler then runs on the
 *                    async thread without any lock.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a bad mode, fd or callback,
 *         a NULL @a async in POLL mode, or a mode other than the
 *         context's; UCS_ERR_UNSUPPORTED for UCS_ASYNC_MODE_SIGNAL;
 *         UCS_ERR_ALREADY_EXISTS if @a fd already has a handler;
 *         UCS_ERR_NO_MEMORY; or the error of starting the async thread or
 *         adding the fd to its event set.
 */
ucs_status_t ucs_async_set_event_handler(ucs_async_mode_t mode, int fd,
                                         ucs_event_set_types_t events,
                                         ucs_async_event_cb_t cb, void *arg,
                                         ucs_async_context_t *async);

/**
 * Call @a cb periodically; the first call is one interval from now.
 *
 * @param [in]  mode       must be the mode of @a async.
 * @param [in]  interval   period in ucs_time_t ticks, > 0 and finite.
 * @param [in]  cb         the handler, not NULL.
 * @param [in]  arg        passed to @a cb; valid until the timer is removed.
 * @param [in]  async      the context, or NULL in the thread modes (see
 *                         ucs_async_set_event_handler()).
 * @param [out] timer_id_p receives the timer id (>= UCS_ASYNC_TIMER_ID_MIN),
 *                         set only on success.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a bad mode, callback, context
 *         or interval; UCS_ERR_UNSUPPORTED for UCS_ASYNC_MODE_SIGNAL;
 *         UCS_ERR_NO_MEMORY; or the error of starting the async thread.
 */
ucs_status_t ucs_async_add_timer(ucs_async_mode_t mode, ucs_time_t interval,
                                 ucs_async_event_cb_t cb, void *arg,
                                 ucs_async_context_t *async, int *timer_id_p);

/**
 * Remove a handler. It never starts again after the call; a deferred event
 * of it is dropped. May be called from any thread, and from inside the
 * handler itself.
 *
 * @param [in] id   an fd or a timer id.
 * @param [in] sync if nonzero, wait until no call of the handler is in
 *                  progress on another thread, so that its arg may be freed
 *                  after the return. Do not pass it while holding a lock
 *                  that the handler takes (its context's included, unless
 *                  the call is made from the handler itself).
 * @return UCS_OK, or UCS_ERR_NO_ELEM if there is no such handler.
 */
ucs_status_t ucs_async_remove_handler(int id, int sync);

/**
 * Change the events the fd handler @a fd waits for. Any thread.
 *
 * @param [in] fd     an fd with a handler.
 * @param [in] events the new UCS_EVENT_SET_EV* bits (0 to pause it).
 * @return UCS_OK; UCS_ERR_NO_ELEM if @a fd has no handler; or the error of
 *         updating the event set.
 */
ucs_status_t ucs_async_modify_handler(int fd, ucs_event_set_types_t events);

/**
 * Run pending work of a context from the calling thread: events that were
 * deferred because the context was blocked, and, in POLL mode, timers that
 * expired and fds that are ready. Never blocks waiting for an event.
 *
 * @param [in] async the context, or NULL to run the POLL-mode timers and
 *                   fds of every context (each under its own context's
 *                   lock).
 */
void ucs_async_poll(ucs_async_context_t *async);

END_C_DECLS

#endif
