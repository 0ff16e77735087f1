/**
 * @file
 * A set of file descriptors to wait on (epoll underneath). Each registered
 * fd carries a user pointer that is handed back with its events. Included
 * by the async layer, by transports that wait on sockets, and by programs
 * that wait for interface events. Like epoll, add/mod/del may run while
 * another thread waits on the set; the caller must make sure the pointer
 * of a removed fd is no longer used by a wait in progress.
 */
#ifndef UCS_SYS_EVENT_SET_H_
#define UCS_SYS_EVENT_SET_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/** Event bits: what to wait for, and what happened. */
typedef enum {
    UCS_EVENT_SET_EVREAD  = UCS_BIT(0),       /**< Readable. */
    UCS_EVENT_SET_EVWRITE = UCS_BIT(1),       /**< Writable. */
    UCS_EVENT_SET_EVERR   = UCS_BIT(2),       /**< Error or hang-up; always
                                                   reported. */
    UCS_EVENT_SET_EDGE_TRIGGERED = UCS_BIT(3) /**< Report changes only (a
                                                   request flag). */
} ucs_event_set_types_t;

/** An event set; opaque, created by ucs_event_set_create(). */
typedef struct ucs_sys_event_set ucs_sys_event_set_t;

/**
 * Called by ucs_event_set_wait() for each ready fd, in the waiting thread.
 * It may add, modify or remove fds of the set.
 *
 * @param [in] callback_data  The pointer given at registration.
 * @param [in] events         The events that happened.
 * @param [in] arg            The @a arg of the wait.
 */
typedef void (*ucs_event_set_handler_t)(void *callback_data,
                                        ucs_event_set_types_t events,
                                        void *arg);

/**
 * Create an empty set (close-on-exec).
 *
 * @param [out] event_set_p  The set, set only on success; release it with
 *                           ucs_event_set_cleanup().
 *
 * @return UCS_OK, UCS_ERR_NO_MEMORY, or UCS_ERR_IO_ERROR if epoll_create
 *         fails (e.g. out of file descriptors).
 */
ucs_status_t ucs_event_set_create(ucs_sys_event_set_t **event_set_p);

/**
 * Close the set and free it; registered fds are not closed. No wait may be
 * in progress.
 *
 * @param [in] event_set  The set.
 */
void ucs_event_set_cleanup(ucs_sys_event_set_t *event_set);

/**
 * Watch @a fd for @a events (EVERR is implied).
 *
 * @param [in] event_set      The set.
 * @param [in] fd             File descriptor; not owned by the set.
 * @param [in] events         UCS_EVENT_SET_* bits.
 * @param [in] callback_data  Passed to the handler; must stay valid while
 *                            @a fd is in the set.
 *
 * @return UCS_OK, UCS_ERR_ALREADY_EXISTS if @a fd is already in the set,
 *         or UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_event_set_add(ucs_sys_event_set_t *event_set, int fd,
                               ucs_event_set_types_t events,
                               void *callback_data);

/**
 * Change the events and the pointer of a registered @a fd.
 *
 * @param [in] event_set      The set.
 * @param [in] fd             A registered file descriptor.
 * @param [in] events         New UCS_EVENT_SET_* bits.
 * @param [in] callback_data  New pointer for the handler.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR (also if @a fd is not registered).
 */
ucs_status_t ucs_event_set_mod(ucs_sys_event_set_t *event_set, int fd,
                               ucs_event_set_types_t events,
                               void *callback_data);

/**
 * Stop watching @a fd. Remove an fd before closing it.
 *
 * @param [in] event_set  The set.
 * @param [in] fd         A registered file descriptor.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR (also if @a fd is not registered).
 */
ucs_status_t ucs_event_set_del(ucs_sys_event_set_t *event_set, int fd);

/**
 * Wait for events and call @a handler for each ready fd.
 *
 * @param [in]     event_set   The set.
 * @param [in,out] num_events  At most this many fds are handled (capped at
 *                             64 per call); on return, the number handled:
 *                             0 on timeout or when interrupted by a signal.
 * @param [in]     timeout_ms  0: do not wait, -1: forever.
 * @param [in]     handler     Called for each ready fd.
 * @param [in]     arg         Passed to @a handler.
 *
 * @return UCS_OK (also on timeout and on EINTR), or UCS_ERR_IO_ERROR if
 *         epoll_wait fails.
 */
ucs_status_t ucs_event_set_wait(ucs_sys_event_set_t *event_set,
                                unsigned *num_events, int timeout_ms,
                                ucs_event_set_handler_t handler, void *arg);

/**
 * The set's own fd: it becomes readable when some registered fd has events,
 * so a set can be watched by poll()/epoll or by another set.
 *
 * @param [in] event_set  The set.
 *
 * @return The epoll descriptor, owned by the set.
 */
int ucs_event_set_fd(const ucs_sys_event_set_t *event_set);

END_C_DECLS

#endif
