#ifndef UCT_TL_H_
#define UCT_TL_H_

/**
 * @file
 * The transport interface: the operations table every transport fills,
 * and the base structures of interfaces, endpoints and receive
 * descriptors. Transport modules include this header (and the uct/base/
 * helpers); applications get it through <uct/api/uct.h>, whose inline
 * wrappers call through the table.
 *
 * Rule: an operation a transport does not implement is a function that
 * returns UCS_ERR_UNSUPPORTED, never NULL. uct_base_iface_init() fills every
 * NULL slot of a transport's table with such a function, so a transport
 * only lists what it does. (The defaults of the void operations do
 * nothing; the default progress returns 0 and is_reachable returns 0.)
 *
 * Common rules for the send operations below. They are called on the
 * fast path: no system call, lock or allocation for a small message where
 * the transport can avoid it. They are called from the thread that owns
 * the worker (or under the application's lock, by the worker's thread
 * mode), possibly from inside a callback the transport itself is running
 * (an active message handler or a pending callback), so they must not
 * call user callbacks recursively. A send that cannot proceed for lack of
 * resources returns UCS_ERR_NO_RESOURCE with nothing sent and nothing
 * kept, so that the caller may use uct_ep_pending_add(). A send on an
 * endpoint that has failed returns the failure status (for example
 * UCS_ERR_UNREACHABLE or UCS_ERR_CONNECTION_RESET). An operation given a
 * completion returns UCS_OK if it completed at once (the completion is
 * then not touched) or UCS_INPROGRESS, and later decrements the
 * completion's count from progress, setting its status on error.
 * Buffers passed by pointer (short operations, headers) may be reused
 * as soon as the call returns; zero-copy buffers only after completion.
 */

#include <uct/api/uct_def.h>
#include <ucs/type/status.h>
#include <ucs/sys/compiler_def.h>

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

BEGIN_C_DECLS

/**
 * Write a small buffer to remote memory (uct_ep_put_short()).
 * The data is copied or sent before the call returns.
 * @param [in] ep          the endpoint.
 * @param [in] buffer      data to write; may be reused after the return.
 * @param [in] length      bytes, at most cap.put.max_short.
 * @param [in] remote_addr destination address in the peer's memory.
 * @param [in] rkey        remote key of the destination.
 * @return UCS_OK when sent (remote completion is learnt by a flush),
 *         UCS_ERR_NO_RESOURCE, or an error status.
 */
typedef ucs_status_t (*uct_ep_put_short_func_t)(uct_ep_h ep, const void *buffer,
                                                unsigned length,
                                                uint64_t remote_addr,
                                                uct_rkey_t rkey);
/**
 * Write to remote memory data packed by a callback (uct_ep_put_bcopy()).
 * The transport calls @a pack_cb once, synchronously, into its own buffer.
 * @param [in] ep          the endpoint.
 * @param [in] pack_cb     fills the transport buffer and returns its length.
 * @param [in] arg         argument of @a pack_cb.
 * @param [in] remote_addr destination address in the peer's memory.
 * @param [in] rkey        remote key of the destination.
 * @return the number of bytes packed (>= 0) on success, or a negative
 *         ucs_status_t: UCS_ERR_NO_RESOURCE (then @a pack_cb was not called)
 *         or an error status.
 */
typedef ssize_t (*uct_ep_put_bcopy_func_t)(uct_ep_h ep,
                                           uct_pack_callback_t pack_cb,
                                           void *arg, uint64_t remote_addr,
                                           uct_rkey_t rkey);
/**
 * Write registered memory to remote memory without a copy
 * (uct_ep_put_zcopy()).
 * @param [in] ep          the endpoint.
 * @param [in] iov         the local data; must stay untouched until completion.
 * @param [in] iovcnt      number of @a iov elements, at most cap.put.max_iov.
 * @param [in] remote_addr destination address in the peer's memory.
 * @param [in] rkey        remote key of the destination.
 * @param [in] comp        completion to decrement when the data was sent and
 *                         may be reused, or NULL.
 * @return UCS_OK (completed, @a comp untouched), UCS_INPROGRESS,
 *         UCS_ERR_NO_RESOURCE, or an error status.
 */
typedef ucs_status_t (*uct_ep_put_zcopy_func_t)(
    uct_ep_h ep, const uct_iov_t *iov, size_t iovcnt, uint64_t remote_addr,
    uct_rkey_t rkey, uct_completion_t *comp);
/**
 * Read a small piece of remote memory into @a buffer (uct_ep_get_short()).
 * @param [in]  ep          the endpoint.
 * @param [out] buffer      where to store the data.
 * @param [in]  length      bytes, at most cap.get.max_short.
 * @param [in]  remote_addr source address in the peer's memory.
 * @param [in]  rkey        remote key of the source.
 * @return UCS_OK when @a buffer holds the data, UCS_INPROGRESS if it will
 *         hold it after a flush completes, UCS_ERR_NO_RESOURCE, or an error.
 */
typedef ucs_status_t (*uct_ep_get_short_func_t)(uct_ep_h ep, void *buffer,
                                                unsigned length,
                                                uint64_t remote_addr,
                                                uct_rkey_t rkey);
/**
 * Read remote memory and hand it to an unpack callback
 * (uct_ep_get_bcopy()).
 * @param [in] ep          the endpoint.
 * @param [in] unpack_cb   called once with the data, from this call or from
 *                         progress.
 * @param [in] arg         argument of @a unpack_cb.
 * @param [in] length      bytes to read, at most cap.get.max_bcopy.
 * @param [in] remote_addr source address in the peer's memory.
 * @param [in] rkey        remote key of the source.
 * @param [in] comp        completion to decrement after @a unpack_cb ran.
 * @return UCS_OK (done, @a comp untouched), UCS_INPROGRESS,
 *         UCS_ERR_NO_RESOURCE, or an error status.
 */
typedef ucs_status_t (*uct_ep_get_bcopy_func_t)(
    uct_ep_h ep, uct_unpack_callback_t unpack_cb, void *arg, size_t length,
    uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
/**
 * Read remote memory into registered local memory (uct_ep_get_zcopy()).
 * @param [in] ep          the endpoint.
 * @param [in] iov         the local destination; not to be read before
 *                         completion.
 * @param [in] iovcnt      number of @a iov elements, at most cap.get.max_iov.
 * @param [in] remote_addr source address in the peer's memory.
 * @param [in] rkey        remote key of the source.
 * @param [in] comp        completion to decrement when the data has arrived.
 * @return UCS_OK (done, @a comp untouched), UCS_INPROGRESS,
 *         UCS_ERR_NO_RESOURCE, or an error status.
 */
typedef ucs_status_t (*uct_ep_get_zcopy_func_t)(
    uct_ep_h ep, const uct_iov_t *iov, size_t iovcnt, uint64_t remote_addr,
    uct_rkey_t rkey, uct_completion_t *comp);
/**
 * Send a small active message: an 8-byte header and a payload, both
 * copied before the return (uct_ep_am_short()).
 * @param [in] ep      the endpoint.
 * @param [in] id      active message id, below UCT_AM_ID_MAX.
 * @param [in] header  8 bytes delivered first.
 * @param [in] payload data after the header; may be NULL when @a length is 0.
 * @param [in] length  payload bytes; header + payload at most cap.am.max_short.
 * @return UCS_OK, UCS_ERR_NO_RESOURCE, UCS_ERR_INVALID_PARAM for a bad id or
 *         size, or an error status of a failed endpoint.
 */
typedef ucs_status_t (*uct_ep_am_short_func_t)(uct_ep_h ep, uint8_t id,
                                               uint64_t header,
                                               const void *payload,
                                               unsigned length);
/**
 * Send a small active message gathered from an iov, copied before the
 * return (uct_ep_am_short_iov()); the handler sees the concatenation.
 * @param [in] ep     the endpoint.
 * @param [in] id     active message id, below UCT_AM_ID_MAX.
 * @param [in] iov    the data; memh is ignored.
 * @param [in] iovcnt number of @a iov elements, at most cap.am.max_iov.
 * @return UCS_OK, UCS_ERR_NO_RESOURCE, UCS_ERR_INVALID_PARAM, or an error
 *         status of a failed endpoint.
 */
typedef ucs_status_t (*uct_ep_am_short_iov_func_t)(uct_ep_h ep, uint8_t id,
                                                   const uct_iov_t *iov,
                                                   size_t iovcnt);
/**
 * Send an active message packed by a callback into a transport buffer
 * (uct_ep_am_bcopy()).
 * @param [in] ep      the endpoint.
 * @param [in] id      active message id, below UCT_AM_ID_MAX.
 * @param [in] pack_cb fills the buffer (up to cap.am.max_bcopy bytes) and
 *                     returns the length; called once, synchronously.
 * @param [in] arg     argument of @a pack_cb.
 * @param [in] flags   UCT_SEND_FLAG_* bits.
 * @return the number of bytes packed (>= 0), or a negative ucs_status_t:
 *         UCS_ERR_NO_RESOURCE (@a pack_cb not called), UCS_ERR_INVALID_PARAM,
 *         or an error status of a failed endpoint.
 */
typedef ssize_t (*uct_ep_am_bcopy_func_t)(uct_ep_h ep, uint8_t id,
                                          uct_pack_callback_t pack_cb,
                                          void *arg, unsigned flags);
/**
 * Send an active message whose payload is sent from registered memory
 * without a copy (uct_ep_am_zcopy()).
 * @param [in] ep            the endpoint.
 * @param [in] id            active message id, below UCT_AM_ID_MAX.
 * @param [in] header        copied before the return.
 * @param [in] header_length bytes of @a header, at most cap.am.max_hdr.
 * @param [in] iov           the payload; untouched until completion.
 * @param [in] iovcnt        number of @a iov elements, at most cap.am.max_iov.
 * @param [in] flags         UCT_SEND_FLAG_* bits.
 * @param [in] comp          completion to decrement when the payload may be
 *                           reused, or NULL.
 * @return UCS_OK (done, @a comp untouched), UCS_INPROGRESS,
 *         UCS_ERR_NO_RESOURCE, UCS_ERR_INVALID_PARAM, or an error status.
 */
typedef ucs_status_t (*uct_ep_am_zcopy_func_t)(uct_ep_h ep, uint8_t id,
                                               const void *header,
                                               unsigned header_length,
                                               const uct_iov_t *iov,
                                               size_t iovcnt, unsigned flags,
                                               uct_completion_t *comp);
/**
 * 64-bit compare-and-swap on remote memory (uct_ep_atomic_cswap64()): the
 * remote value becomes @a swap if it equals @a compare; the old value is
 * returned in any case.
 * @param [in]  ep          the endpoint.
 * @param [in]  compare     value expected at the remote address.
 * @param [in]  swap        value to store on a match.
 * @param [in]  remote_addr address of the remote value, naturally aligned.
 * @param [in]  rkey        remote key of that memory.
 * @param [out] result      receives the old value; valid after completion.
 * @param [in]  comp        completion to decrement when @a result is set.
 * @return UCS_OK (done, @a result set), UCS_INPROGRESS, UCS_ERR_NO_RESOURCE,
 *         UCS_ERR_UNSUPPORTED if the interface does not advertise it, or an
 *         error status.
 */
typedef ucs_status_t (*uct_ep_atomic_cswap64_func_t)(
    uct_ep_h ep, uint64_t compare, uint64_t swap, uint64_t remote_addr,
    uct_rkey_t rkey, uint64_t *result, uct_completion_t *comp);
/**
 * 32-bit compare-and-swap on remote memory (uct_ep_atomic_cswap32()): the
 * remote value becomes @a swap if it equals @a compare; the old value is
 * returned in any case.
 * @param [in]  ep          the endpoint.
 * @param [in]  compare     value expected at the remote address.
 * @param [in]  swap        value to store on a match.
 * @param [in]  remote_addr address of the remote value, naturally aligned.
 * @param [in]  rkey        remote key of that memory.
 * @param [out] result      receives the old value; valid after completion.
 * @param [in]  comp        completion to decrement when @a result is set.
 * @return UCS_OK (done, @a result set), UCS_INPROGRESS, UCS_ERR_NO_RESOURCE,
 *         UCS_ERR_UNSUPPORTED if the interface does not advertise it, or an
 *         error status.
 */
typedef ucs_status_t (*uct_ep_atomic_cswap32_func_t)(
    uct_ep_h ep, uint32_t compare, uint32_t swap, uint64_t remote_addr,
    uct_rkey_t rkey, uint32_t *result, uct_completion_t *comp);
/**
 * 32-bit atomic operation on remote memory without a result
 * (uct_ep_atomic32_post()); its completion is learnt by a flush.
 * @param [in] ep          the endpoint.
 * @param [in] opcode      ADD, AND, OR or XOR (SWAP and CSWAP fetch).
 * @param [in] value       operand.
 * @param [in] remote_addr address of the remote value, naturally aligned.
 * @param [in] rkey        remote key of that memory.
 * @return UCS_OK, UCS_ERR_NO_RESOURCE, UCS_ERR_UNSUPPORTED for an operation
 *         not in the interface's op_flags, or an error status.
 */
typedef ucs_status_t (*uct_ep_atomic32_post_func_t)(uct_ep_h ep,
                                                    uct_atomic_op_t opcode,
                                                    uint32_t value,
                                                    uint64_t remote_addr,
                                                    uct_rkey_t rkey);
/**
 * 64-bit atomic operation on remote memory without a result
 * (uct_ep_atomic64_post()); its completion is learnt by a flush.
 * @param [in] ep          the endpoint.
 * @param [in] opcode      ADD, AND, OR or XOR (SWAP and CSWAP fetch).
 * @param [in] value       operand.
 * @param [in] remote_addr address of the remote value, naturally aligned.
 * @param [in] rkey        remote key of that memory.
 * @return UCS_OK, UCS_ERR_NO_RESOURCE, UCS_ERR_UNSUPPORTED for an operation
 *         not in the interface's op_flags, or an error status.
 */
typedef ucs_status_t (*uct_ep_atomic64_post_func_t)(uct_ep_h ep,
                                                    uct_atomic_op_t opcode,
                                                    uint64_t value,
                                                    uint64_t remote_addr,
                                                    uct_rkey_t rkey);
/**
 * 32-bit atomic operation on remote memory returning the old value
 * (uct_ep_atomic32_fetch()).
 * @param [in]  ep          the endpoint.
 * @param [in]  opcode      ADD, AND, OR, XOR or SWAP.
 * @param [in]  value       operand.
 * @param [out] result      receives the old value; valid after completion.
 * @param [in]  remote_addr address of the remote value, naturally aligned.
 * @param [in]  rkey        remote key of that memory.
 * @param [in]  comp        completion to decrement when @a result is set.
 * @return UCS_OK (done, @a result set), UCS_INPROGRESS, UCS_ERR_NO_RESOURCE,
 *         UCS_ERR_UNSUPPORTED for an operation not in the interface's
 *         fop_flags, or an error status.
 */
typedef ucs_status_t (*uct_ep_atomic32_fetch_func_t)(
    uct_ep_h ep, uct_atomic_op_t opcode, uint32_t value, uint32_t *result,
    uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
/**
 * 64-bit atomic operation on remote memory returning the old value
 * (uct_ep_atomic64_fetch()).
 * @param [in]  ep          the endpoint.
 * @param [in]  opcode      ADD, AND, OR, XOR or SWAP.
 * @param [in]  value       operand.
 * @param [out] result      receives the old value; valid after completion.
 * @param [in]  remote_addr address of the remote value, naturally aligned.
 * @param [in]  rkey        remote key of that memory.
 * @param [in]  comp        completion to decrement when @a result is set.
 * @return UCS_OK (done, @a result set), UCS_INPROGRESS, UCS_ERR_NO_RESOURCE,
 *         UCS_ERR_UNSUPPORTED for an operation not in the interface's
 *         fop_flags, or an error status.
 */
typedef ucs_status_t (*uct_ep_atomic64_fetch_func_t)(
    uct_ep_h ep, uct_atomic_op_t opcode, uint64_t value, uint64_t *result,
    uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
/**
 * Queue a request until the endpoint has send resources again
 * (uct_ep_pending_add()). The transport calls req->func from its progress
 * when a send could succeed, in the order requests were added, and keeps
 * the request queued while the callback returns UCS_ERR_NO_RESOURCE. The
 * transport may use req->priv while the request is queued.
 * @param [in] ep    the endpoint.
 * @param [in] req   the request; owned by the transport until its callback
 *                   returns UCS_OK or it is purged.
 * @param [in] flags reserved, 0.
 * @return UCS_OK when queued, or UCS_ERR_BUSY when resources are available
 *         now (nothing queued: the caller retries its send).
 */
typedef ucs_status_t (*uct_ep_pending_add_func_t)(uct_ep_h ep,
                                                  uct_pending_req_t *req,
                                                  unsigned flags);
/**
 * Remove every queued request of the endpoint (uct_ep_pending_purge()),
 * calling @a cb for each, in queue order. Must be called before an endpoint
 * with queued requests is destroyed.
 * @param [in] ep  the endpoint.
 * @param [in] cb  called with each request after it left the queue; may be
 *                 NULL to drop them silently.
 * @param [in] arg argument of @a cb.
 */
typedef void (*uct_ep_pending_purge_func_t)(uct_ep_h ep,
                                            uct_pending_purge_callback_t cb,
                                            void *arg);
/**
 * Complete every operation started on the endpoint (uct_ep_flush()).
 * @param [in] ep    the endpoint.
 * @param [in] flags UCT_FLUSH_FLAG_LOCAL, or UCT_FLUSH_FLAG_CANCEL to give up
 *                   outstanding operations (they complete with
 *                   UCS_ERR_CANCELED).
 * @param [in] comp  completion to decrement when everything started before
 *                   the call has completed, or NULL to poll.
 * @return UCS_OK when nothing is outstanding, UCS_INPROGRESS (with @a comp,
 *         or retry later), UCS_ERR_NO_RESOURCE when the flush itself cannot
 *         be started now, or the endpoint's failure status.
 */
typedef ucs_status_t (*uct_ep_flush_func_t)(uct_ep_h ep, unsigned flags,
                                            uct_completion_t *comp);
/**
 * Order the endpoint's operations: those started after the fence take
 * effect after those started before (uct_ep_fence()).
 * @param [in] ep    the endpoint.
 * @param [in] flags reserved, 0.
 * @return UCS_OK (transports whose operations are already ordered just
 *         return it), or an error status.
 */
typedef ucs_status_t (*uct_ep_fence_func_t)(uct_ep_h ep, unsigned flags);
/**
 * Check that the peer of an endpoint is still alive (uct_ep_check()). A
 * dead peer is reported through the interface's error handler, not here.
 * @param [in] ep    the endpoint.
 * @param [in] flags reserved, 0.
 * @param [in] comp  reserved, NULL.
 * @return UCS_OK when the check was started or needs nothing,
 *         UCS_ERR_NO_RESOURCE, or the endpoint's failure status.
 */
typedef ucs_status_t (*uct_ep_check_func_t)(uct_ep_h ep, unsigned flags,
                                            uct_completion_t *comp);
/**
 * Create an endpoint (uct_ep_create()); libuct has already checked that
 * @a params names an interface. With dev_addr and iface_addr the endpoint
 * connects to that remote interface; without them it is an endpoint to be
 * connected with ep_connect_to_ep.
 * @param [in]  params endpoint parameters; read during the call only.
 * @param [out] ep_p   receives the endpoint, set only on success.
 * @return UCS_OK, UCS_ERR_INVALID_PARAM, UCS_ERR_NO_MEMORY,
 *         UCS_ERR_UNREACHABLE, or UCS_ERR_UNSUPPORTED for a connection mode
 *         the transport lacks.
 */
typedef ucs_status_t (*uct_ep_create_func_t)(const uct_ep_params_t *params,
                                             uct_ep_h *ep_p);
/**
 * Destroy an endpoint (uct_ep_destroy()): release it at once. Operations
 * still outstanding complete with UCS_ERR_CANCELED from inside the call
 * (their completions run); pending requests still queued are dropped
 * without their callbacks (purge them first); the peer learns of it as
 * the transport can (tcp closes the connection).
 * @param [in] ep the endpoint; invalid after the call.
 */
typedef void (*uct_ep_destroy_func_t)(uct_ep_h ep);
/**
 * Write the endpoint's address, for a peer's ep_connect_to_ep
 * (uct_ep_get_address()).
 * @param [in]  ep   the endpoint.
 * @param [out] addr buffer of ep_addr_len bytes (uct_iface_attr_t).
 * @return UCS_OK, or UCS_ERR_UNSUPPORTED for transports that do not connect
 *         endpoint to endpoint.
 */
typedef ucs_status_t (*uct_ep_get_address_func_t)(uct_ep_h ep,
                                                  uct_ep_addr_t *addr);
/**
 * Connect an endpoint to a remote endpoint (uct_ep_connect_to_ep()).
 * @param [in] ep       an endpoint created without a remote address.
 * @param [in] dev_addr the remote device address.
 * @param [in] ep_addr  the remote endpoint's address.
 * @return UCS_OK, UCS_ERR_UNREACHABLE, UCS_ERR_INVALID_PARAM, or another
 *         error status.
 */
typedef ucs_status_t (*uct_ep_connect_to_ep_func_t)(
    uct_ep_h ep, const uct_device_addr_t *dev_addr,
    const uct_ep_addr_t *ep_addr);
/**
 * Complete every operation started on the interface's endpoints
 * (uct_iface_flush()).
 * @param [in] iface the interface.
 * @param [in] flags UCT_FLUSH_FLAG_LOCAL; UCT_FLUSH_FLAG_CANCEL is for
 *                  endpoints (tcp refuses it with UCS_ERR_UNSUPPORTED).
 * @param [in] comp  completion to decrement when done, or NULL to poll.
 * @return UCS_OK when nothing is outstanding, UCS_INPROGRESS,
 *         UCS_ERR_NO_RESOURCE, UCS_ERR_UNSUPPORTED, or an error status.
 */
typedef ucs_status_t (*uct_iface_flush_func_t)(uct_iface_h iface,
                                               unsigned flags,
                                               uct_completion_t *comp);
/**
 * Order the operations of all endpoints of the interface
 * (uct_iface_fence()).
 * @param [in] iface the interface.
 * @param [in] flags reserved, 0.
 * @return UCS_OK, or an error status.
 */
typedef ucs_status_t (*uct_iface_fence_func_t)(uct_iface_h iface,
                                               unsigned flags);
/**
 * Make the worker's progress drive this interface (for the kinds of
 * events in @a flags). The default registers the interface's progress
 * with the worker.
 * @param [in] iface the interface.
 * @param [in] flags UCT_PROGRESS_SEND, UCT_PROGRESS_RECV, and
 *                   UCT_PROGRESS_THREAD_SAFE when called from another
 *                   thread than the worker's.
 */
typedef void (*uct_iface_progress_enable_func_t)(uct_iface_h iface,
                                                 unsigned flags);
/**
 * Stop driving the interface from the worker's progress for the kinds
 * of events in @a flags (the reverse of progress_enable).
 * @param [in] iface the interface.
 * @param [in] flags UCT_PROGRESS_* bits, as for progress_enable.
 */
typedef void (*uct_iface_progress_disable_func_t)(uct_iface_h iface,
                                                  unsigned flags);
/**
 * Make progress on the interface: deliver received messages, complete
 * sends, run pending requests (uct_iface_progress()). Called by the owner
 * thread of the worker; must not block.
 * @param [in] iface the interface.
 * @return the number of events processed, 0 when there was nothing to do.
 */
typedef unsigned (*uct_iface_progress_func_t)(uct_iface_h iface);
/**
 * Give the file descriptor that becomes readable when the interface has
 * an event armed with event_arm (uct_iface_event_fd_get()).
 * @param [in]  iface the interface; cap.event_flags of its attributes say
 *                    which events it can signal.
 * @param [out] fd_p  receives the fd; owned by the interface, do not close.
 * @return UCS_OK or UCS_ERR_UNSUPPORTED.
 */
typedef ucs_status_t (*uct_iface_event_fd_get_func_t)(uct_iface_h iface,
                                                      int *fd_p);
/**
 * Arm the event fd for the events in @a events, unless such events are
 * already waiting (uct_iface_event_arm()).
 * @param [in] iface  the interface.
 * @param [in] events UCT_EVENT_* bits.
 * @return UCS_OK when armed (wait on the fd), UCS_ERR_BUSY when events are
 *         already there (call progress first), or an error status.
 */
typedef ucs_status_t (*uct_iface_event_arm_func_t)(uct_iface_h iface,
                                                   unsigned events);
/**
 * Close the interface (uct_iface_close()): release its resources. Its
 * endpoints have been destroyed by the caller.
 * @param [in] iface the interface; invalid after the call.
 */
typedef void (*uct_iface_close_func_t)(uct_iface_h iface);
/**
 * Fill the interface's attributes (uct_iface_query()).
 * @param [in]  iface      the interface.
 * @param [out] iface_attr capabilities, limits and address lengths.
 * @return UCS_OK, or an error status.
 */
typedef ucs_status_t (*uct_iface_query_func_t)(uct_iface_h iface,
                                               uct_iface_attr_t *iface_attr);
/**
 * Write the address of the interface's device (uct_iface_get_device_address()).
 * @param [in]  iface the interface.
 * @param [out] addr  buffer of device_addr_len bytes (uct_iface_attr_t).
 * @return UCS_OK, or an error status.
 */
typedef ucs_status_t (*uct_iface_get_device_address_func_t)(
    uct_iface_h iface, uct_device_addr_t *addr);
/**
 * Write the interface's address, for peers that connect to it
 * (uct_iface_get_address()).
 * @param [in]  iface the interface.
 * @param [out] addr  buffer of iface_addr_len bytes (uct_iface_attr_t).
 * @return UCS_OK, or UCS_ERR_UNSUPPORTED for transports that connect endpoint
 *         to endpoint only.
 */
typedef ucs_status_t (*uct_iface_get_address_func_t)(uct_iface_h iface,
                                                     uct_iface_addr_t *addr);
/**
 * Say whether a remote interface can be reached from this one
 * (uct_iface_is_reachable()). Must not block or send anything.
 * @param [in] iface      the interface.
 * @param [in] dev_addr   the remote device address.
 * @param [in] iface_addr the remote interface address, or NULL for
 *                        endpoint-to-endpoint transports.
 * @return nonzero if reachable, 0 if not.
 */
typedef int (*uct_iface_is_reachable_func_t)(
    const uct_iface_h iface, const uct_device_addr_t *dev_addr,
    const uct_iface_addr_t *iface_addr);

/**
 * Send a tagged eager message from a buffer (uct_ep_tag_eager_short());
 * tag-matching offload.
 * @param [in] ep     the endpoint.
 * @param [in] tag    the message's tag.
 * @param [in] data   the payload, copied before the return.
 * @param [in] length bytes of @a data, at most cap.tag.eager.max_short.
 * @return UCS_OK, UCS_ERR_NO_RESOURCE, or an error status.
 */
typedef ucs_status_t (*uct_ep_tag_eager_short_func_t)(uct_ep_h ep,
                                                      uct_tag_t tag,
                                                      const void *data,
                                                      size_t length);
/**
 * Send a tagged eager message packed by a callback
 * (uct_ep_tag_eager_bcopy()); tag-matching offload.
 * @param [in] ep      the endpoint.
 * @param [in] tag     the message's tag.
 * @param [in] imm     immediate value delivered with the message.
 * @param [in] pack_cb writes the payload, at most cap.tag.eager.max_bcopy.
 * @param [in] arg     argument of @a pack_cb.
 * @param [in] flags   UCT_SEND_FLAG_* bits.
 * @return the bytes packed, or a negative ucs_status_t.
 */
typedef ssize_t (*uct_ep_tag_eager_bcopy_func_t)(uct_ep_h ep, uct_tag_t tag,
                                                 uint64_t imm,
                                                 uct_pack_callback_t pack_cb,
                                                 void *arg, unsigned flags);
/**
 * Send a tagged eager message from registered memory
 * (uct_ep_tag_eager_zcopy()); tag-matching offload.
 * @param [in] ep     the endpoint.
 * @param [in] tag    the message's tag.
 * @param [in] imm    immediate value delivered with the message.
 * @param [in] iov    the payload; untouched until completion.
 * @param [in] iovcnt number of @a iov elements.
 * @param [in] flags  UCT_SEND_FLAG_* bits.
 * @param [in] comp   completion, or NULL.
 * @return UCS_OK, UCS_INPROGRESS, UCS_ERR_NO_RESOURCE, or an error.
 */
typedef ucs_status_t (*uct_ep_tag_eager_zcopy_func_t)(
    uct_ep_h ep, uct_tag_t tag, uint64_t imm, const uct_iov_t *iov,
    size_t iovcnt, unsigned flags, uct_completion_t *comp);
/**
 * Start a tagged rendezvous send (uct_ep_tag_rndv_zcopy());
 * tag-matching offload.
 * @param [in] ep            the endpoint.
 * @param [in] tag           the message's tag.
 * @param [in] header        rendezvous header for the receiver.
 * @param [in] header_length bytes of @a header.
 * @param [in] iov           the payload; untouched until completion.
 * @param [in] iovcnt        number of @a iov elements.
 * @param [in] flags         UCT_SEND_FLAG_* bits.
 * @param [in] comp          completion, or NULL.
 * @return an operation handle for uct_ep_tag_rndv_cancel(), or an error
 *         status as a pointer (UCS_STATUS_PTR).
 */
typedef ucs_status_ptr_t (*uct_ep_tag_rndv_zcopy_func_t)(
    uct_ep_h ep, uct_tag_t tag, const void *header, unsigned header_length,
    const uct_iov_t *iov, size_t iovcnt, unsigned flags,
    uct_completion_t *comp);
/**
 * Cancel a rendezvous send (uct_ep_tag_rndv_cancel()).
 * @param [in] ep the endpoint.
 * @param [in] op what uct_ep_tag_rndv_zcopy() returned.
 * @return UCS_OK or an error status.
 */
typedef ucs_status_t (*uct_ep_tag_rndv_cancel_func_t)(uct_ep_h ep, void *op);
/**
 * Send a rendezvous request that the receiver's software completes
 * (uct_ep_tag_rndv_request()); tag-matching offload.
 * @param [in] ep            the endpoint.
 * @param [in] tag           the message's tag.
 * @param [in] header        request header.
 * @param [in] header_length bytes of @a header.
 * @param [in] flags         UCT_SEND_FLAG_* bits.
 * @return UCS_OK, UCS_ERR_NO_RESOURCE, or an error status.
 */
typedef ucs_status_t (*uct_ep_tag_rndv_request_func_t)(uct_ep_h ep,
                                                       uct_tag_t tag,
                                                       const void *header,
                                                       unsigned header_length,
                                                       unsigned flags);
/**
 * Post a tagged receive (uct_iface_tag_recv_zcopy()); tag-matching
 * offload.
 * @param [in] iface    the interface.
 * @param [in] tag      the tag to match.
 * @param [in] tag_mask bits of @a tag that must match.
 * @param [in] iov      the receive buffer.
 * @param [in] iovcnt   number of @a iov elements.
 * @param [in] ctx      the receive's context, owned by the caller until
 *                      its completed_cb.
 * @return UCS_OK, UCS_ERR_EXCEEDS_LIMIT, or an error status.
 */
typedef ucs_status_t (*uct_iface_tag_recv_zcopy_func_t)(
    uct_iface_h iface, uct_tag_t tag, uct_tag_t tag_mask, const uct_iov_t *iov,
    size_t iovcnt, uct_tag_context_t *ctx);
/**
 * Cancel a posted tagged receive (uct_iface_tag_recv_cancel()).
 * @param [in] iface the interface.
 * @param [in] ctx   the receive's context.
 * @param [in] force nonzero: drop it now, without a completion.
 * @return UCS_OK or an error status.
 */
typedef ucs_status_t (*uct_iface_tag_recv_cancel_func_t)(uct_iface_h iface,
                                                         uct_tag_context_t *ctx,
                                                         int force);

/**
 * Send a client endpoint's connection request once its route is resolved
 * (uct_ep_connect()); connection managers.
 * @param [in] ep     the client endpoint.
 * @param [in] params the private data.
 * @return UCS_OK, or an error status.
 */
typedef ucs_status_t (*uct_ep_connect_func_t)(
    uct_ep_h ep, const uct_ep_connect_params_t *params);
/**
 * Start ending a connection (uct_ep_disconnect()); connection managers.
 * @param [in] ep    the endpoint.
 * @param [in] flags reserved, 0.
 * @return UCS_OK, UCS_INPROGRESS, UCS_ERR_BUSY, UCS_ERR_NOT_CONNECTED.
 */
typedef ucs_status_t (*uct_ep_disconnect_func_t)(uct_ep_h ep, unsigned flags);
/**
 * Tell the server that the client's side is ready
 * (uct_cm_client_ep_conn_notify()); connection managers.
 * @param [in] ep the client endpoint.
 * @return UCS_OK, or an error status.
 */
typedef ucs_status_t (*uct_cm_ep_conn_notify_func_t)(uct_ep_h ep);

/**
 * Operations of an interface and its endpoints. The fast-path wrappers in
 * uct.h call through this table with no other work. A transport fills a
 * table (unset slots get the defaults described at the top of this file)
 * and copies it into uct_iface_t::ops when it initializes its interface.
 */
typedef struct uct_iface_ops {
    /* endpoint: RMA */
    /** See uct_ep_put_short_func_t. */
    uct_ep_put_short_func_t ep_put_short;
    /** See uct_ep_put_bcopy_func_t. */
    uct_ep_put_bcopy_func_t ep_put_bcopy;
    /** See uct_ep_put_zcopy_func_t. */
    uct_ep_put_zcopy_func_t ep_put_zcopy;
    /** See uct_ep_get_short_func_t. */
    uct_ep_get_short_func_t ep_get_short;
    /** See uct_ep_get_bcopy_func_t. */
    uct_ep_get_bcopy_func_t ep_get_bcopy;
    /** See uct_ep_get_zcopy_func_t. */
    uct_ep_get_zcopy_func_t ep_get_zcopy;

    /* endpoint: active messages */
    /** See uct_ep_am_short_func_t. */
    uct_ep_am_short_func_t ep_am_short;
    /** See uct_ep_am_short_iov_func_t. */
    uct_ep_am_short_iov_func_t ep_am_short_iov;
    /** See uct_ep_am_bcopy_func_t. */
    uct_ep_am_bcopy_func_t ep_am_bcopy;
    /** See uct_ep_am_zcopy_func_t. */
    uct_ep_am_zcopy_func_t ep_am_zcopy;

    /* endpoint: atomics */
    /** See uct_ep_atomic_cswap64_func_t. */
    uct_ep_atomic_cswap64_func_t ep_atomic_cswap64;
    /** See uct_ep_atomic_cswap32_func_t. */
    uct_ep_atomic_cswap32_func_t ep_atomic_cswap32;
    /** See uct_ep_atomic32_post_func_t. */
    uct_ep_atomic32_post_func_t ep_atomic32_post;
    /** See uct_ep_atomic64_post_func_t. */
    uct_ep_atomic64_post_func_t ep_atomic64_post;
    /** See uct_ep_atomic32_fetch_func_t. */
    uct_ep_atomic32_fetch_func_t ep_atomic32_fetch;
    /** See uct_ep_atomic64_fetch_func_t. */
    uct_ep_atomic64_fetch_func_t ep_atomic64_fetch;

    /* endpoint: pending queue, ordering, health */
    /** See uct_ep_pending_add_func_t. */
    uct_ep_pending_add_func_t ep_pending_add;
    /** See uct_ep_pending_purge_func_t. */
    uct_ep_pending_purge_func_t ep_pending_purge;
    /** See uct_ep_flush_func_t. */
    uct_ep_flush_func_t ep_flush;
    /** See uct_ep_fence_func_t. */
    uct_ep_fence_func_t ep_fence;
    /** See uct_ep_check_func_t. */
    uct_ep_check_func_t ep_check;

    /* endpoint: life cycle and connection */
    /** See uct_ep_create_func_t. */
    uct_ep_create_func_t ep_create;
    /** See uct_ep_destroy_func_t. */
    uct_ep_destroy_func_t ep_destroy;
    /** See uct_ep_get_address_func_t. */
    uct_ep_get_address_func_t ep_get_address;
    /** See uct_ep_connect_to_ep_func_t. */
    uct_ep_connect_to_ep_func_t ep_connect_to_ep;

    /* interface */
    /** See uct_iface_flush_func_t. */
    uct_iface_flush_func_t iface_flush;
    /** See uct_iface_fence_func_t. */
    uct_iface_fence_func_t iface_fence;
    /** See uct_iface_progress_enable_func_t. */
    uct_iface_progress_enable_func_t iface_progress_enable;
    /** See uct_iface_progress_disable_func_t. */
    uct_iface_progress_disable_func_t iface_progress_disable;
    /** See uct_iface_progress_func_t. */
    uct_iface_progress_func_t iface_progress;
    /** See uct_iface_event_fd_get_func_t. */
    uct_iface_event_fd_get_func_t iface_event_fd_get;
    /** See uct_iface_event_arm_func_t. */
    uct_iface_event_arm_func_t iface_event_arm;
    /** See uct_iface_close_func_t. */
    uct_iface_close_func_t iface_close;
    /** See uct_iface_query_func_t. */
    uct_iface_query_func_t iface_query;
    /** See uct_iface_get_device_address_func_t. */
    uct_iface_get_device_address_func_t iface_get_device_address;
    /** See uct_iface_get_address_func_t. */
    uct_iface_get_address_func_t iface_get_address;
    /** See uct_iface_is_reachable_func_t. */
    uct_iface_is_reachable_func_t iface_is_reachable;

    /* tag-matching offload (no transport of openuct fills them) */
    /** See uct_ep_tag_eager_short_func_t. */
    uct_ep_tag_eager_short_func_t ep_tag_eager_short;
    /** See uct_ep_tag_eager_bcopy_func_t. */
    uct_ep_tag_eager_bcopy_func_t ep_tag_eager_bcopy;
    /** See uct_ep_tag_eager_zcopy_func_t. */
    uct_ep_tag_eager_zcopy_func_t ep_tag_eager_zcopy;
    /** See uct_ep_tag_rndv_zcopy_func_t. */
    uct_ep_tag_rndv_zcopy_func_t ep_tag_rndv_zcopy;
    /** See uct_ep_tag_rndv_cancel_func_t. */
    uct_ep_tag_rndv_cancel_func_t ep_tag_rndv_cancel;
    /** See uct_ep_tag_rndv_request_func_t. */
    uct_ep_tag_rndv_request_func_t ep_tag_rndv_request;
    /** See uct_iface_tag_recv_zcopy_func_t. */
    uct_iface_tag_recv_zcopy_func_t iface_tag_recv_zcopy;
    /** See uct_iface_tag_recv_cancel_func_t. */
    uct_iface_tag_recv_cancel_func_t iface_tag_recv_cancel;

    /* connection-manager endpoints */
    /** See uct_ep_connect_func_t. */
    uct_ep_connect_func_t ep_connect;
    /** See uct_ep_disconnect_func_t. */
    uct_ep_disconnect_func_t ep_disconnect;
    /** See uct_cm_ep_conn_notify_func_t. */
    uct_cm_ep_conn_notify_func_t cm_ep_conn_notify;
} uct_iface_ops_t;

/** The base of every interface: its operations table. */
typedef struct uct_iface {
    uct_iface_ops_t ops; /**< operations of this interface and its eps */
} uct_iface_t;

/** The base of every endpoint: the interface it belongs to. */
typedef struct uct_ep {
    uct_iface_h iface; /**< the interface whose table serves the ep */
} uct_ep_t;

/**
 * Handle for a received descriptor kept by an active message handler.
 * A pointer to it is stored right before the memory passed to
 * uct_iface_release_desc().
 */
struct uct_recv_desc {
    uct_desc_release_callback_t cb; /**< returns the buffer to its owner */
};

/**
 * The receive descriptor of a kept buffer. The pointer may sit at any
 * alignment (it follows user headroom of any size), so it is copied.
 *
 * @param [in] desc what uct_iface_release_desc() is given.
 * @return the release record stored before @a desc.
 */
static inline uct_recv_desc_t *uct_recv_desc(void *desc)
{
    uct_recv_desc_t *rdesc;

    memcpy(&rdesc, (char *)desc - sizeof(rdesc), sizeof(rdesc));
    return rdesc;
}

/**
 * Store the release record of a buffer a transport hands to an active
 * message handler with UCT_CB_PARAM_FLAG_DESC; the sizeof(pointer) bytes
 * before @a desc must belong to the transport's buffer.
 *
 * @param [in] desc  the start of the user's headroom in the buffer.
 * @param [in] rdesc the release record (usually one per interface).
 */
static inline void uct_recv_desc_set(void *desc, uct_recv_desc_t *rdesc)
{
    memcpy((char *)desc - sizeof(rdesc), &rdesc, sizeof(rdesc));
}

END_C_DECLS

#endif
