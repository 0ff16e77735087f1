/*
 * The process-wide async thread: one epoll set for the fds of every
 * thread-mode handler, plus a timerfd set to the earliest timer. Started by
 * the first thread-mode handler and stopped when the last one is removed
 * (or at library unload).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/async/async_int.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;       /* start/stop; never taken by handlers'
                                   thread while it dispatches */
    ucs_async_thread_t *thread; /* current instance, NULL if none */
    unsigned refcount;          /* registered thread-mode handlers */
} ucs_async_thread_ctx = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The instance the calling thread is, if it is an async thread. */
static __thread ucs_async_thread_t *ucs_async_thread_self = NULL;

static void ucs_async_thread_drain(int fd, const char *name)
{
    uint64_t value;

    if ((read(fd, &value, sizeof(value)) < 0) && (errno != EAGAIN)) {
        ucs_warn("async thread: reading its %s fd %d failed: %m", name, fd);
    }
}

static void ucs_async_thread_dispatch_timers(ucs_async_thread_t *thread)
{
    ucs_async_handler_t *expired[UCS_ASYNC_TIMER_BATCH];
    unsigned i, count;
    ucs_time_t now;

    do {
        ucs_async_global_lock();
        now   = ucs_get_time();
        count = ucs_async_timers_collect(&thread->timers, NULL, now, expired,
                                         UCS_ASYNC_TIMER_BATCH);
        ucs_async_thread_arm_timer(thread, now);
        ucs_async_global_unlock();

        for (i = 0; i < count; ++i) {
            ucs_async_handler_dispatch(expired[i], UCS_EVENT_SET_EVREAD, 1);
            ucs_async_handler_put(expired[i]);
        }
    } while (count == UCS_ASYNC_TIMER_BATCH);
}

static void ucs_async_thread_event(void *callback_data,
                                   ucs_event_set_types_t events, void *arg)
{
    ucs_async_thread_t *thread = arg;
    ucs_async_handler_t *handler;

    if (callback_data == UCS_ASYNC_KEY_WAKEUP) {
        ucs_async_thread_drain(thread->wakeup_fd, "wakeup");
        return;
    }

    if (callback_data == UCS_ASYNC_KEY_TIMER) {
        ucs_async_thread_drain(thread->timer_fd, "timer");
        ucs_async_thread_dispatch_timers(thread);
        return;
    }

    handler = ucs_async_handler_get(callback_data);
    if (handler == NULL) {
        return; /* removed after the event was reported */
    }

    ucs_async_handler_dispatch(handler, events, 1);
    ucs_async_handler_put(handler);
}

static void *ucs_async_thread_func(void *arg)
{
    ucs_async_thread_t *thread = arg;
    ucs_status_t status;
    unsigned num_events;

    ucs_async_thread_self = thread;
    ucs_debug("async thread started");

    while (!__atomic_load_n(&thread->stop, __ATOMIC_ACQUIRE)) {
        num_events = UCS_ASYNC_MAX_EVENTS;
        status     = ucs_event_set_wait(thread->event_set, &num_events, -1,
                                        ucs_async_thread_event, thread);
        if (status != UCS_OK) {
            ucs_error("async thread: waiting for events failed (%s); "
                      "asynchronous handlers no longer run",
                      ucs_status_string(status));
            break;
        }
    }

    ucs_debug("async thread stopped");
    return NULL;
}

void ucs_async_thread_arm_timer(ucs_async_thread_t *thread, ucs_time_t now)
{
    ucs_time_t next = ucs_async_timer_set_min(&thread->timers);
    struct itimerspec its;
    uint64_t nsec;

    memset(&its, 0, sizeof(its));
    if (next != UCS_TIME_INFINITY) {
        nsec = (next > now) ? (uint64_t)ucs_time_to_nsec(next - now) : 0;
        if (nsec == 0) {
            nsec = 1; /* an it_value of 0 would disarm the timer */
        }
        its.it_value.tv_sec  = (time_t)(nsec / 1000000000ull);
        its.it_value.tv_nsec = (long)(nsec % 1000000000ull);
    }

    if (timerfd_settime(thread->timer_fd, 0, &its, NULL) < 0) {
        ucs_error("async thread: timerfd_settime(fd=%d) failed: %m; timers "
                  "may fire late",
                  thread->timer_fd);
        return;
    }

    thread->armed_expiration = next;
}

static void ucs_async_thread_release(ucs_async_thread_t *thread)
{
    free(thread->timers.entries);
    close(thread->timer_fd);
    close(thread->wakeup_fd);
    ucs_event_set_cleanup(thread->event_set);
    free(thread);
}

static ucs_status_t ucs_async_thread_start(ucs_async_thread_t **thread_p)
{
    ucs_async_thread_t *thread;
    sigset_t all_signals, old_signals;
    ucs_status_t status;
    int ret;

    thread = calloc(1, sizeof(*thread));
    if (thread == NULL) {
        ucs_error("failed to allocate the async thread state");
        return UCS_ERR_NO_MEMORY;
    }

    thread->armed_expiration = UCS_TIME_INFINITY;

    status = ucs_event_set_create(&thread->event_set);
    if (status != UCS_OK) {
        goto err_free;
    }

    thread->wakeup_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (thread->wakeup_fd < 0) {
        ucs_error("async thread: eventfd() failed: %m; check the open files "
                  "limit (ulimit -n)");
        status = UCS_ERR_IO_ERROR;
        goto err_cleanup_set;
    }

    thread->timer_fd =
        timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (thread->timer_fd < 0) {
        ucs_error("async thread: timerfd_create() failed: %m; check the open "
                  "files limit (ulimit -n)");
        status = UCS_ERR_IO_ERROR;
        goto err_close_wakeup;
    }

    status = ucs_event_set_add(thread->event_set, thread->wakeup_fd,
                               UCS_EVENT_SET_EVREAD, UCS_ASYNC_KEY_WAKEUP);
    if (status != UCS_OK) {
        goto err_close_timer;
    }

    status = ucs_event_set_add(thread->event_set, thread->timer_fd,
                               UCS_EVENT_SET_EVREAD, UCS_ASYNC_KEY_TIMER);
    if (status != UCS_OK) {
        goto err_close_timer;
    }

    /* signals are for the application's threads */
    sigfillset(&all_signals);
    pthread_sigmask(SIG_SETMASK, &all_signals, &old_signals);
    ret = pthread_create(&thread->tid, NULL, ucs_async_thread_func, thread);
    pthread_sigmask(SIG_SETMASK, &old_signals, NULL);
    if (ret != 0) {
        ucs_error("failed to start the async thread: %s; check the process "
                  "and thread limits (ulimit -u)",
                  strerror(ret));
        status = UCS_ERR_IO_ERROR;
        goto err_close_timer;
    }

    pthread_setname_np(thread->tid, "ucs-async");
    *thread_p = thread;
    return UCS_OK;

err_close_timer:
    close(thread->timer_fd);
err_close_wakeup:
    close(thread->wakeup_fd);
err_cleanup_set:
    ucs_event_set_cleanup(thread->event_set);
err_free:
    free(thread);
    return status;
}

/* Ask @a thread to exit and wait for it. */
static void ucs_async_thread_join(ucs_async_thread_t *thread)
{
    uint64_t one = 1;
    int ret;

    __atomic_store_n(&thread->stop, 1, __ATOMIC_RELEASE);
    if (write(thread->wakeup_fd, &one, sizeof(one)) < 0) {
        ucs_error("async thread: writing to its wakeup fd %d failed: %m; "
                  "it may not stop",
                  thread->wakeup_fd);
    }

    ret = pthread_join(thread->tid, NULL);
    if (ret != 0) {
        ucs_error("async thread: pthread_join() failed: %s", strerror(ret));
    }
}

ucs_status_t ucs_async_thread_get(ucs_async_thread_t **thread_p)
{
    ucs_status_t status;

    pthread_mutex_lock(&ucs_async_thread_ctx.lock);
    if (ucs_async_thread_ctx.thread == NULL) {
        status = ucs_async_thread_start(&ucs_async_thread_ctx.thread);
        if (status != UCS_OK) {
            pthread_mutex_unlock(&ucs_async_thread_ctx.lock);
            return status;
        }
    }

    ++ucs_async_thread_ctx.refcount;
    *thread_p = ucs_async_thread_ctx.thread;
    pthread_mutex_unlock(&ucs_async_thread_ctx.lock);
    return UCS_OK;
}

void ucs_async_thread_put(void)
{
    ucs_async_thread_t *stopping = NULL;

    pthread_mutex_lock(&ucs_async_thread_ctx.lock);
    if ((--ucs_async_thread_ctx.refcount == 0) &&
        (ucs_async_thread_ctx.thread != ucs_async_thread_self)) {
        /* a new handler added from now on starts a new instance */
        stopping                    = ucs_async_thread_ctx.thread;
        ucs_async_thread_ctx.thread = NULL;
    }
    pthread_mutex_unlock(&ucs_async_thread_ctx.lock);

    if (stopping != NULL) {
        ucs_async_thread_join(stopping);
        ucs_async_thread_release(stopping);
    }
}

/* At library unload: no thread may keep running code that is going away. */
UCS_F_DTOR static void ucs_async_thread_cleanup(void)
{
    ucs_async_thread_t *thread;
    unsigned refcount;

    pthread_mutex_lock(&ucs_async_thread_ctx.lock);
    thread   = ucs_async_thread_ctx.thread;
    refcount = ucs_async_thread_ctx.refcount;
    if (thread == ucs_async_thread_self) {
        thread = NULL; /* exit() called from a handler */
    } else {
        ucs_async_thread_ctx.thread = NULL;
    }
    pthread_mutex_unlock(&ucs_async_thread_ctx.lock);

    if (thread == NULL) {
        return;
    }

    ucs_async_thread_join(thread);
    if (refcount == 0) {
        ucs_async_thread_release(thread);
    } else {
        /* handlers still point to its event set; keep it */
        ucs_debug("async thread stopped at exit with %u handlers still "
                  "registered",
                  refcount);
    }
}
