/**
 * @file
 * The one status type of the project, the helpers that pack a status into
 * a pointer, and ucs_status_string(). Included by every ucs and uct header
 * that declares a function returning a status.
 */
#ifndef UCS_TYPE_STATUS_H_
#define UCS_TYPE_STATUS_H_

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/**
 * Result of an operation: UCS_OK, UCS_INPROGRESS, or a negative error.
 * The numeric values follow the UCT ABI so that programs printing them
 * see familiar numbers.
 */
typedef enum {
    /** Success; the operation is complete. */
    UCS_OK = 0,
    /** Accepted and under way: completion comes later, through the
     *  completion handle (uct_completion_t) or a flush. Also
     *  ucs_socket_connect() of a non-blocking socket. */
    UCS_INPROGRESS = 1,

    /** No message is waiting. Kept for UCX programs; openuct does not
     *  return it. */
    UCS_ERR_NO_MESSAGE = -1,
    /** Temporarily out of resources (send queue or window full, no
     *  descriptor, out of file descriptors in ucs_socket_create() and
     *  ucs_socket_accept()): retry after progress, or add a pending
     *  request. The uct send operations return it. */
    UCS_ERR_NO_RESOURCE = -2,
    /** A system call failed unexpectedly; the cause is logged. */
    UCS_ERR_IO_ERROR = -3,
    /** An allocation or a memory mapping failed. */
    UCS_ERR_NO_MEMORY = -4,
    /** An argument, a parameter field or a configuration value is not
     *  valid; nothing was done. */
    UCS_ERR_INVALID_PARAM = -5,
    /** The peer cannot be reached: connection refused, no route, no such
     *  local address, or an address of another interface. */
    UCS_ERR_UNREACHABLE = -6,
    /** An address is malformed or of the wrong kind (socket address
     *  strings, packed device/interface addresses, remote keys), or a
     *  remote access fell outside the peer's registered region. */
    UCS_ERR_INVALID_ADDR = -7,
    /** Kept for UCX programs; openuct reports missing operations with
     *  UCS_ERR_UNSUPPORTED instead. */
    UCS_ERR_NOT_IMPLEMENTED = -8,
    /** A received packet or message is shorter than its header says
     *  (verbs transports' receive checks). */
    UCS_ERR_MESSAGE_TRUNCATED = -9,
    /** Nothing could be done now without blocking: a non-blocking socket
     *  would block (sock.h); the tcp transport's receive path. */
    UCS_ERR_NO_PROGRESS = -10,
    /** A caller's buffer is too small. Kept for UCX programs; openuct
     *  does not return it. */
    UCS_ERR_BUFFER_TOO_SMALL = -11,
    /** No such element: a lookup found nothing (configuration variable,
     *  hash key, async handler, vfs path, system device...). */
    UCS_ERR_NO_ELEM = -12,
    /** Kept for UCX programs; openuct does not return it. */
    UCS_ERR_SOME_CONNECTS_FAILED = -13,
    /** No such device: a network interface or verbs device is missing or
     *  has no usable address. */
    UCS_ERR_NO_DEVICE = -14,
    /** Busy: a socket address is in use (ucs_socket_server_init()), or an
     *  interface cannot be armed or an endpoint flushed/destroyed because
     *  events or operations are outstanding; progress and retry. */
    UCS_ERR_BUSY = -15,
    /** The operation was canceled: the completion status of operations
     *  still outstanding when their endpoint or interface is destroyed or
     *  fails. */
    UCS_ERR_CANCELED = -16,
    /** Kept for UCX programs; openuct does not return it. */
    UCS_ERR_SHMEM_SEGMENT = -17,
    /** The element already exists (an fd in an event set, a hash key, a
     *  vfs path, an async handler, an endpoint connected twice). */
    UCS_ERR_ALREADY_EXISTS = -18,
    /** Kept for UCX programs; openuct does not return it. */
    UCS_ERR_OUT_OF_RANGE = -19,
    /** An operation did not finish in time; used by uct_perftest, not
     *  by the libraries. */
    UCS_ERR_TIMED_OUT = -20,
    /** A configured or fixed limit was reached (memory pool max_elems,
     *  number of system devices, vfs message or path sizes). */
    UCS_ERR_EXCEEDS_LIMIT = -21,
    /** The operation or option is not supported here: a transport lacks
     *  it, a size is above its maximum, or (memevents.h) release events
     *  cannot be seen. */
    UCS_ERR_UNSUPPORTED = -22,
    /** Kept for UCX programs; openuct does not return it. */
    UCS_ERR_REJECTED = -23,
    /** Not connected: the peer closed the connection in order (sock.h),
     *  or the socket has no peer. */
    UCS_ERR_NOT_CONNECTED = -24,
    /** The peer reset the connection, or the transport found the peer
     *  gone; an endpoint failure reported to the error handler. */
    UCS_ERR_CONNECTION_RESET = -25,

    /** First of the range of link failures; ucs_status_string() names the
     *  whole range "Link failure". Not returned by openuct. */
    UCS_ERR_FIRST_LINK_FAILURE = -40,
    /** Last of the range of link failures. */
    UCS_ERR_LAST_LINK_FAILURE = -59,
    /** First of the range of endpoint failures. */
    UCS_ERR_FIRST_ENDPOINT_FAILURE = -60,
    /** The peer stopped answering (keepalive or retransmission gave up,
     *  or the kernel timed the connection out); an endpoint failure
     *  reported to the error handler. */
    UCS_ERR_ENDPOINT_TIMEOUT = -80,
    /** Last of the range of endpoint failures. */
    UCS_ERR_LAST_ENDPOINT_FAILURE = -89,

    /** Lower bound of all status values; not a status. */
    UCS_ERR_LAST = -100
} ucs_status_t;

/** A pointer that may carry an error status instead of an address. */
typedef void *ucs_status_ptr_t;

/**
 * Nonzero if @a _ptr carries an error status.
 * @param _ptr  A ucs_status_ptr_t.
 */
#define UCS_PTR_IS_ERR(_ptr) (((uintptr_t)(_ptr)) >= ((uintptr_t)UCS_ERR_LAST))
/**
 * Nonzero if @a _ptr is a real pointer (neither NULL nor a status).
 * @param _ptr  A ucs_status_ptr_t.
 */
#define UCS_PTR_IS_PTR(_ptr) \
    (((uintptr_t)(_ptr)-1) < ((uintptr_t)UCS_ERR_LAST - 1))
/**
 * The status stored in @a _ptr, without checking that it holds one.
 * @param _ptr  A ucs_status_ptr_t.
 */
#define UCS_PTR_RAW_STATUS(_ptr) ((ucs_status_t)(intptr_t)(_ptr))
/**
 * The status of @a _ptr: UCS_INPROGRESS for a real pointer, UCS_OK for
 * NULL, the error otherwise.
 * @param _ptr  A ucs_status_ptr_t.
 */
#define UCS_PTR_STATUS(_ptr) \
    (UCS_PTR_IS_PTR(_ptr) ? UCS_INPROGRESS : UCS_PTR_RAW_STATUS(_ptr))
/**
 * A ucs_status_ptr_t carrying @a _status.
 * @param _status  A ucs_status_t.
 */
#define UCS_STATUS_PTR(_status) ((void *)(intptr_t)(_status))
/**
 * Nonzero if @a _status is an error (negative).
 * @param _status  A ucs_status_t.
 */
#define UCS_STATUS_IS_ERR(_status) ((_status) < 0)

/**
 * A short human-readable description of @a status. Thread-safe.
 *
 * @param [in] status  Any value, also one outside the enumeration.
 *
 * @return A static string, never NULL; for an unknown value, a
 *         thread-local "Unknown error N" overwritten by the next such call
 *         in the same thread.
 */
const char *ucs_status_string(ucs_status_t status);

END_C_DECLS

#endif
