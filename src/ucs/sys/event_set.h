/*
 * A set of file descriptors to wait on (epoll underneath). Each registered
 * fd carries a user pointer that is handed back with its events.
 */
#ifndef UCS_SYS_EVENT_SET_H_
#define UCS_SYS_EVENT_SET_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/** Event bits: what to wait for, and what happened. */
typedef enum {
    UCS_EVENT_SET_EVREAD         = UCS_BIT(0), /* readable */
    UCS_EVENT_SET_EVWRITE        = UCS_BIT(1), /* writable */
    UCS_EVENT_SET_EVERR          = UCS_BIT(2), /* error or hang-up; always
                                                  reported */
    UCS_EVENT_SET_EDGE_TRIGGERED = UCS_BIT(3)  /* report changes only */
} ucs_event_set_types_t;

typedef struct ucs_sys_event_set ucs_sys_event_set_t;

/**
 * Called by ucs_event_set_wait() for each ready fd, with the pointer given
 * at registration, the events that happened, and the @a arg of the wait.
 */
typedef void (*ucs_event_set_handler_t)(void *callback_data,
                                        ucs_event_set_types_t events,
                                        void *arg);

/** Create an empty set (close-on-exec). */
ucs_status_t ucs_event_set_create(ucs_sys_event_set_t **event_set_p);

/** Close the set; registered fds are not closed. */
void ucs_event_set_cleanup(ucs_sys_event_set_t *event_set);

/**
 * Watch @a fd for @a events (EVERR is implied). @a callback_data is passed
 * to the handler. UCS_ERR_ALREADY_EXISTS if @a fd is already in the set.
 */
ucs_status_t ucs_event_set_add(ucs_sys_event_set_t *event_set, int fd,
                               ucs_event_set_types_t events,
                               void *callback_data);

/** Change the events and the pointer of a registered @a fd. */
ucs_status_t ucs_event_set_mod(ucs_sys_event_set_t *event_set, int fd,
                               ucs_event_set_types_t events,
                               void *callback_data);

/** Stop watching @a fd. Remove an fd before closing it. */
ucs_status_t ucs_event_set_del(ucs_sys_event_set_t *event_set, int fd);

/**
 * Wait up to @a timeout_ms (0: do not wait, -1: forever) for events and call
 * @a handler for each ready fd, at most *@a num_events of them (capped at
 * 64 per call). On return *@a num_events is the number handled; 0 on timeout
 * or when interrupted by a signal.
 */
ucs_status_t ucs_event_set_wait(ucs_sys_event_set_t *event_set,
                                unsigned *num_events, int timeout_ms,
                                ucs_event_set_handler_t handler, void *arg);

/**
 * The set's own fd: it becomes readable when some registered fd has events,
 * so a set can be watched by poll()/epoll or by another set.
 */
int ucs_event_set_fd(const ucs_sys_event_set_t *event_set);

END_C_DECLS

#endif
