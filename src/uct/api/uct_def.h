#ifndef UCT_DEF_H_
#define UCT_DEF_H_

/**
 * @file
 * Basic types of the transport API: opaque handles, name and id limits,
 * and the signatures of the callbacks an application or a transport
 * supplies. Applications get it through <uct/api/uct.h>; transport
 * modules through <uct/api/tl.h>. It declares no functions, only types
 * and constants, so it can be included anywhere without linking libuct.
 */

#include <ucs/config/types.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

BEGIN_C_DECLS

/** Size of a component name buffer, including the terminating NUL. */
#define UCT_COMPONENT_NAME_MAX 16
/** Size of a transport name buffer ("tcp", "rc_verbs"), with the NUL. */
#define UCT_TL_NAME_MAX 10
/** Size of a memory domain name buffer, including the terminating NUL. */
#define UCT_MD_NAME_MAX 16
/** Size of a device name buffer ("lo", "mlx5_0:1"), with the NUL. */
#define UCT_DEVICE_NAME_MAX 32
/**
 * Bytes of uct_pending_req_t::priv the transport may use while the request
 * sits on its pending queue; the owner of the request must not touch them
 * between uct_ep_pending_add() and the request's callback or purge.
 */
#define UCT_PENDING_REQ_PRIV_LEN 40
/** Bytes of uct_tag_context_t::priv a transport may use. */
#define UCT_TAG_PRIV_LEN 32
/** Bits of an active message id as carried by the transports. */
#define UCT_AM_ID_BITS 5
/** Number of active message ids: valid ids are 0 .. UCT_AM_ID_MAX - 1. */
#define UCT_AM_ID_MAX UCS_BIT(UCT_AM_ID_BITS) /* 32 ids */
/** "No registration": a uct_iov_t::memh for memory that is not registered
 *  (accepted by transports that copy, such as tcp and self). */
#define UCT_MEM_HANDLE_NULL NULL
/** A remote key value that no uct_rkey_unpack() ever returns (all ones);
 *  use it to mark a key as not yet unpacked. */
#define UCT_INVALID_RKEY ((uintptr_t)(-1))
/** Storage class of the fast-path wrappers of uct.h: static and always
 *  inlined, so a call is one indirect call through the operations table. */
#define UCT_INLINE_API static UCS_F_ALWAYS_INLINE

/** What an active message tracer (uct_am_tracer_t) is told about. */
enum uct_am_trace_type {
    UCT_AM_TRACE_TYPE_SEND,      /**< a message is being sent */
    UCT_AM_TRACE_TYPE_RECV,      /**< a message arrived and is delivered */
    UCT_AM_TRACE_TYPE_SEND_DROP, /**< a message was not sent */
    UCT_AM_TRACE_TYPE_RECV_DROP, /**< a message arrived and was dropped */
    UCT_AM_TRACE_TYPE_LAST       /**< number of trace types */
};

/**
 * Atomic operations on remote memory. The capability masks of
 * uct_iface_attr_t (atomic32/atomic64 op_flags and fop_flags) hold
 * UCS_BIT(op) for each operation the interface supports.
 */
typedef enum uct_atomic_op {
    UCT_ATOMIC_OP_ADD,   /**< remote += value */
    UCT_ATOMIC_OP_AND,   /**< remote &= value */
    UCT_ATOMIC_OP_OR,    /**< remote |= value */
    UCT_ATOMIC_OP_XOR,   /**< remote ^= value */
    UCT_ATOMIC_OP_SWAP,  /**< remote = value (fetching only) */
    UCT_ATOMIC_OP_CSWAP, /**< remote = swap if remote == compare */
    UCT_ATOMIC_OP_LAST   /**< number of operations */
} uct_atomic_op_t;

/** Flags passed to an active message handler (uct_am_callback_t). */
enum uct_cb_param_flags {
    /** The data lives in a transport descriptor: the handler may keep it by
     *  returning UCS_INPROGRESS and release it with uct_iface_release_desc */
    UCT_CB_PARAM_FLAG_DESC = UCS_BIT(0),
    /** First fragment of a multi-fragment message (defined for UCX source
     *  compatibility; no transport of ours fragments messages) */
    UCT_CB_PARAM_FLAG_FIRST = UCS_BIT(1),
    /** More fragments of this message follow (never set by our
     *  transports, like UCT_CB_PARAM_FLAG_FIRST) */
    UCT_CB_PARAM_FLAG_MORE = UCS_BIT(2)
};

/** A component: a family of memory domains (uct_query_components()). */
typedef struct uct_component *uct_component_h;
/** An open communication interface (uct_iface_open()). */
typedef struct uct_iface *uct_iface_h;
/** Interface configuration read by uct_md_iface_config_read(). */
typedef struct uct_iface_config uct_iface_config_t;
/** Memory domain configuration read by uct_md_config_read(). */
typedef struct uct_md_config uct_md_config_t;
/** Connection manager configuration (declared for UCX compatibility;
 *  connection managers are not implemented). */
typedef struct uct_cm_config uct_cm_config_t;
/** An endpoint: a connection to one peer (uct_ep_create()). */
typedef struct uct_ep *uct_ep_h;
/** A memory registration (uct_md_mem_reg()); UCT_MEM_HANDLE_NULL for
 *  none. */
typedef void *uct_mem_h;
/** A remote key as used by RMA and atomic calls: the rkey field of the
 *  bundle filled by uct_rkey_unpack(). */
typedef uintptr_t uct_rkey_t;
/** An open memory domain (uct_md_open()). */
typedef struct uct_md *uct_md_h;
/** Operations table of a memory domain (private to libuct and the
 *  transport modules). */
typedef struct uct_md_ops uct_md_ops_t;
/** Per-process context of unpacked remote keys (opaque). */
typedef void *uct_rkey_ctx_h;
/** Interface capabilities and limits, filled by uct_iface_query(). */
typedef struct uct_iface_attr uct_iface_attr_t;
/** Parameters of uct_iface_open(). */
typedef struct uct_iface_params uct_iface_params_t;
/** Memory domain attributes, filled by uct_md_query(). */
typedef struct uct_md_attr uct_md_attr_t;
/** Completion counter of zero-copy and fetching operations. */
typedef struct uct_completion uct_completion_t;
/** A request waiting for send resources (uct_ep_pending_add()). */
typedef struct uct_pending_req uct_pending_req_t;
/** A progress engine (uct_worker_create()). */
typedef struct uct_worker *uct_worker_h;
/** The worker structure, for code that embeds or inspects it. */
typedef struct uct_worker uct_worker_t;
/** The memory domain structure (the base of every domain). */
typedef struct uct_md uct_md_t;
/** See enum uct_am_trace_type. */
typedef enum uct_am_trace_type uct_am_trace_type_t;
/** Opaque device address (uct_iface_get_device_address()). */
typedef struct uct_device_addr uct_device_addr_t;
/** Opaque interface address (uct_iface_get_address()). */
typedef struct uct_iface_addr uct_iface_addr_t;
/** Opaque endpoint address (uct_ep_get_address()). */
typedef struct uct_ep_addr uct_ep_addr_t;
/** Parameters of uct_ep_create(). */
typedef struct uct_ep_params uct_ep_params_t;
/** Parameters of uct_ep_connect() (declared for UCX compatibility). */
typedef struct uct_ep_connect_params uct_ep_connect_params_t;
/** A connection manager: connects endpoints by IP address and port
 *  (uct_cm_open()). */
typedef struct uct_cm uct_cm_t;
/** Handle of a connection manager. */
typedef uct_cm_t *uct_cm_h;
/** Attributes of a connection manager (uct_cm_query()). */
typedef struct uct_cm_attr uct_cm_attr_t;
/** Handle of a connection manager's listener (uct_listener_create()). */
typedef struct uct_listener *uct_listener_h;
/** Attributes of a listener (uct_listener_query()). */
typedef struct uct_listener_attr uct_listener_attr_t;
/** Parameters of uct_listener_create(). */
typedef struct uct_listener_params uct_listener_params_t;
/** Handle of an incoming connection request, valid from the listener's
 *  callback until uct_ep_create() or uct_listener_reject() takes it. */
typedef void *uct_conn_request_h;
/** A tag of the tag-matching offload API. */
typedef uint64_t uct_tag_t;
/** A posted tagged receive (uct_iface_tag_recv_zcopy()). */
typedef struct uct_tag_context uct_tag_context_t;
/** Id of a progress callback (uct_worker_progress_register_safe()). */
typedef int uct_worker_cb_id_t;
/** See struct uct_iov. */
typedef struct uct_iov uct_iov_t;
/** See struct uct_recv_desc. */
typedef struct uct_recv_desc uct_recv_desc_t;

/**
 * One element of a scatter/gather list. @a count repetitions of
 * @a length bytes, @a stride bytes apart (stride is ignored when
 * count == 1).
 */
struct uct_iov {
    void *buffer;   /**< start of the first block */
    size_t length;  /**< bytes in each block */
    uct_mem_h memh; /**< registration covering every block, or
                         UCT_MEM_HANDLE_NULL where the transport copies */
    size_t stride;  /**< distance between block starts, in bytes */
    unsigned count; /**< number of blocks (usually 1) */
};

/**
 * Active message handler, registered with uct_iface_set_am_handler() and
 * called from uct_worker_progress() (or from the interface's async thread
 * when registered with UCT_CB_FLAG_ASYNC on a transport that supports it).
 *
 * @param [in] arg    the argument given at registration.
 * @param [in] data   the message: the 8-byte header of am_short, then the
 *                    payload. Valid for the call only, unless @a flags has
 *                    UCT_CB_PARAM_FLAG_DESC and the handler returns
 *                    UCS_INPROGRESS: the handler then owns the buffer until
 *                    it passes @a data to uct_iface_release_desc().
 * @param [in] length bytes at @a data.
 * @param [in] flags  UCT_CB_PARAM_FLAG_* bits.
 * @return UCS_OK when done with @a data; UCS_INPROGRESS to keep it (only
 *         allowed with UCT_CB_PARAM_FLAG_DESC).
 */
typedef ucs_status_t (*uct_am_callback_t)(void *arg, void *data, size_t length,
                                          unsigned flags);

/**
 * Message tracer set with uct_iface_set_am_tracer(): writes a one-line
 * description of a message of its own id into @a buffer, for logs.
 *
 * @param [in]  arg    the argument given with the tracer.
 * @param [in]  type   send, receive or drop.
 * @param [in]  id     active message id.
 * @param [in]  data   the message (header and payload).
 * @param [in]  length bytes at @a data.
 * @param [out] buffer where to write the NUL-terminated text.
 * @param [in]  max    size of @a buffer.
 */
typedef void (*uct_am_tracer_t)(void *arg, uct_am_trace_type_t type, uint8_t id,
                                const void *data, size_t length, char *buffer,
                                size_t max);

/**
 * Called once when the count of a uct_completion_t reaches 0: usually
 * from the progress of the interface that finished the last operation, or
 * from uct_ep_destroy() or a failed endpoint's error path when outstanding
 * operations are cancelled.
 *
 * @param [in] self the completion; its status field holds the first error
 *                  of the operations it counted, or UCS_OK. The callback
 *                  may free or reuse it.
 */
typedef void (*uct_completion_callback_t)(uct_completion_t *self);

/**
 * Called from progress when a pending request may proceed. The callback
 * usually retries its send; it may add other requests but must not add
 * itself back to the queue it is being called from.
 *
 * @param [in] self the request given to uct_ep_pending_add().
 * @return UCS_OK when done (the request is removed and may be reused),
 *         UCS_INPROGRESS when it made partial progress and wants to be
 *         called again, or UCS_ERR_NO_RESOURCE to stay queued and be
 *         called again when resources return.
 */
typedef ucs_status_t (*uct_pending_callback_t)(uct_pending_req_t *self);

/**
 * Error handler of an interface (uct_iface_params_t::err_handler), called
 * once for an endpoint whose peer failed or whose connection broke. The
 * endpoint's outstanding operations complete with an error; the only
 * useful thing left to do with it is uct_ep_destroy().
 *
 * @param [in] arg    uct_iface_params_t::err_handler_arg.
 * @param [in] ep     the failed endpoint.
 * @param [in] status why it failed (e.g. UCS_ERR_ENDPOINT_TIMEOUT,
 *                    UCS_ERR_CONNECTION_RESET).
 * @return UCS_OK when the error was handled; any other status is passed on
 *         to the caller that detected the failure.
 */
typedef ucs_status_t (*uct_error_handler_t)(void *arg, uct_ep_h ep,
                                            ucs_status_t status);

/**
 * Called by uct_ep_pending_purge() for each request still queued, after
 * the request has been taken off the queue.
 *
 * @param [in] self a request given to uct_ep_pending_add(); the callback
 *                  owns it again and may free it.
 * @param [in] arg  the argument given to uct_ep_pending_purge().
 */
typedef void (*uct_pending_purge_callback_t)(uct_pending_req_t *self,
                                             void *arg);

/**
 * Packs the data of a bcopy operation into transport memory.
 *
 * @param [out] dest where to write; room for the interface's bcopy limit
 *                   (max_bcopy of uct_iface_attr_t).
 * @param [in]  arg  the argument given to the bcopy call.
 * @return the number of bytes written.
 */
typedef size_t (*uct_pack_callback_t)(void *dest, void *arg);

/**
 * Consumes the data fetched by uct_ep_get_bcopy().
 *
 * @param [in] arg    the argument given to the get call.
 * @param [in] data   the data; valid for the call only.
 * @param [in] length bytes at @a data.
 */
typedef void (*uct_unpack_callback_t)(void *arg, const void *data,
                                      size_t length);

/**
 * Releases a receive descriptor kept by an active message handler; called
 * by uct_iface_release_desc().
 *
 * @param [in] self the descriptor's release record.
 * @param [in] desc the data pointer the handler was given.
 */
typedef void (*uct_desc_release_callback_t)(uct_recv_desc_t *self, void *desc);

/**
 * Asynchronous event notification (uct_iface_params_t::async_event_cb):
 * accepted for UCX compatibility; none of our transports calls
 * it.
 *
 * @param [in] arg   uct_iface_params_t::async_event_arg.
 * @param [in] flags reserved, 0.
 */
typedef void (*uct_async_event_cb_t)(void *arg, unsigned flags);

/* ------------------------------------------------------------------------
 * Connection managers: the arguments of their callbacks
 */

/** Fields of uct_cm_ep_priv_data_pack_args_t that are set. */
enum uct_cm_ep_priv_data_pack_args_field {
    /** uct_cm_ep_priv_data_pack_args_t::dev_name is set. */
    UCT_CM_EP_PRIV_DATA_PACK_ARGS_FIELD_DEVICE_NAME = UCS_BIT(0)
};

/** What a connection manager tells the callback that packs the private
 *  data of a connection (uct_cm_ep_priv_data_pack_callback_t). */
typedef struct uct_cm_ep_priv_data_pack_args {
    /** UCT_CM_EP_PRIV_DATA_PACK_ARGS_FIELD_* bits of the set fields. */
    uint64_t field_mask;
    /** The local network device the connection goes through ("eth0",
     *  or an RDMA device and port such as "mlx5_0:1"): the one whose
     *  transport addresses the private data should carry. */
    char dev_name[UCT_DEVICE_NAME_MAX];
} uct_cm_ep_priv_data_pack_args_t;

/** Fields of uct_cm_ep_resolve_args_t that are set. */
enum uct_cm_ep_resolve_args_field {
    /** uct_cm_ep_resolve_args_t::dev_name is set. */
    UCT_CM_EP_RESOLVE_ARGS_FIELD_DEV_NAME = UCS_BIT(0),
    /** uct_cm_ep_resolve_args_t::status is set. */
    UCT_CM_EP_RESOLVE_ARGS_FIELD_STATUS = UCS_BIT(1)
};

/** What a client endpoint's resolve callback is told
 *  (uct_cm_ep_resolve_callback_t). */
typedef struct uct_cm_ep_resolve_args {
    /** UCT_CM_EP_RESOLVE_ARGS_FIELD_* bits of the set fields. */
    uint64_t field_mask;
    /** The local device the route to the server goes through. */
    char dev_name[UCT_DEVICE_NAME_MAX];
    /** UCS_OK, or why the address or route could not be resolved. */
    ucs_status_t status;
} uct_cm_ep_resolve_args_t;

/** Fields of uct_cm_remote_data_t that are set. */
enum uct_cm_remote_data_field {
    /** uct_cm_remote_data_t::dev_addr is set. */
    UCT_CM_REMOTE_DATA_FIELD_DEV_ADDR = UCS_BIT(0),
    /** uct_cm_remote_data_t::dev_addr_length is set. */
    UCT_CM_REMOTE_DATA_FIELD_DEV_ADDR_LENGTH = UCS_BIT(1),
    /** uct_cm_remote_data_t::conn_priv_data is set. */
    UCT_CM_REMOTE_DATA_FIELD_CONN_PRIV_DATA = UCS_BIT(2),
    /** uct_cm_remote_data_t::conn_priv_data_length is set. */
    UCT_CM_REMOTE_DATA_FIELD_CONN_PRIV_DATA_LENGTH = UCS_BIT(3)
};

/** What the peer sent in the handshake. The memory it points to is valid
 *  during the callback only. */
typedef struct uct_cm_remote_data {
    /** UCT_CM_REMOTE_DATA_FIELD_* bits of the set fields. */
    uint64_t field_mask;
    /** The peer's device address on the connection's network. */
    const uct_device_addr_t *dev_addr;
    /** Bytes at @a dev_addr. */
    size_t dev_addr_length;
    /** The private data the peer's pack callback wrote. */
    const void *conn_priv_data;
    /** Bytes at @a conn_priv_data; never more than
     *  uct_cm_attr_t::max_conn_priv. */
    size_t conn_priv_data_length;
} uct_cm_remote_data_t;

/** Fields of uct_cm_listener_conn_request_args_t that are set. */
enum uct_cm_listener_conn_request_args_field {
    /** uct_cm_listener_conn_request_args_t::dev_name is set. */
    UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_DEV_NAME = UCS_BIT(0),
    /** uct_cm_listener_conn_request_args_t::conn_request is set. */
    UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_CONN_REQUEST = UCS_BIT(1),
    /** uct_cm_listener_conn_request_args_t::remote_data is set. */
    UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_REMOTE_DATA = UCS_BIT(2),
    /** uct_cm_listener_conn_request_args_t::client_address is set. */
    UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_CLIENT_ADDR = UCS_BIT(3)
};

/** What a listener's connection-request callback is told. */
typedef struct uct_cm_listener_conn_request_args {
    /** UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_* bits of the set
     *  fields. */
    uint64_t field_mask;
    /** The local device the request arrived on. */
    char dev_name[UCT_DEVICE_NAME_MAX];
    /** The request: pass it to uct_ep_create() (with
     *  UCT_EP_PARAM_FIELD_CONN_REQUEST) or to uct_listener_reject(). */
    uct_conn_request_h conn_request;
    /** The client's private data. */
    const uct_cm_remote_data_t *remote_data;
    /** The client's address, valid during the callback. */
    ucs_sock_addr_t client_address;
} uct_cm_listener_conn_request_args_t;

/** Fields of uct_cm_ep_client_connect_args_t that are set. */
enum uct_cm_ep_client_connect_args_field {
    /** uct_cm_ep_client_connect_args_t::remote_data is set. */
    UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_REMOTE_DATA = UCS_BIT(0),
    /** uct_cm_ep_client_connect_args_t::status is set. */
    UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_STATUS = UCS_BIT(1)
};

/** What a client endpoint's connect callback is told. */
typedef struct uct_cm_ep_client_connect_args {
    /** UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_* bits of the set fields. */
    uint64_t field_mask;
    /** The server's private data (with status UCS_OK). */
    const uct_cm_remote_data_t *remote_data;
    /** UCS_OK: the server accepted, and the client answers with
     *  uct_cm_client_ep_conn_notify(); otherwise UCS_ERR_REJECTED,
     *  UCS_ERR_UNREACHABLE, UCS_ERR_ENDPOINT_TIMEOUT,
     *  UCS_ERR_CONNECTION_RESET or another error. */
    ucs_status_t status;
} uct_cm_ep_client_connect_args_t;

/** Fields of uct_cm_ep_server_conn_notify_args_t that are set. */
enum uct_cm_ep_server_conn_notify_args_field {
    /** uct_cm_ep_server_conn_notify_args_t::status is set. */
    UCT_CM_EP_SERVER_CONN_NOTIFY_ARGS_FIELD_STATUS = UCS_BIT(0)
};

/** What a server endpoint's notify callback is told. */
typedef struct uct_cm_ep_server_conn_notify_args {
    /** UCT_CM_EP_SERVER_CONN_NOTIFY_ARGS_FIELD_* bits of the set
     *  fields. */
    uint64_t field_mask;
    /** UCS_OK: the client called uct_cm_client_ep_conn_notify(); an
     *  error: the client went away first. */
    ucs_status_t status;
} uct_cm_ep_server_conn_notify_args_t;

/**
 * The callback of an interface opened in a socket-address server mode
 * (UCX's interface-based connection API, which openuct does not offer: use
 * a connection manager).
 *
 * @param [in] iface          the interface.
 * @param [in] arg            the argument given with the callback.
 * @param [in] conn_request   the request.
 * @param [in] conn_priv_data the client's private data.
 * @param [in] length         bytes at @a conn_priv_data.
 */
typedef void (*uct_sockaddr_conn_request_callback_t)(
    uct_iface_h iface, void *arg, uct_conn_request_h conn_request,
    const void *conn_priv_data, size_t length);

/**
 * Called from the async context when a client's connection request
 * reached a listener. The callback must take the request, now or later
 * from another thread: uct_ep_create() with it, or uct_listener_reject().
 *
 * @param [in] listener      the listener.
 * @param [in] arg           uct_listener_params_t::user_data.
 * @param [in] conn_req_args the request, its device, the client's address
 *                           and private data.
 */
typedef void (*uct_cm_listener_conn_request_callback_t)(
    uct_listener_h listener, void *arg,
    const uct_cm_listener_conn_request_args_t *conn_req_args);

/**
 * Called from the async context on a server endpoint when the client
 * answered (uct_cm_client_ep_conn_notify()) or went away before it did.
 *
 * @param [in] ep           the server endpoint.
 * @param [in] arg          uct_ep_params_t::user_data.
 * @param [in] connect_args the outcome.
 */
typedef void (*uct_cm_ep_server_conn_notify_callback_t)(
    uct_ep_h ep, void *arg,
    const uct_cm_ep_server_conn_notify_args_t *connect_args);

/**
 * Called from the async context on a client endpoint when the server
 * accepted (with its private data), rejected, or could not be reached.
 *
 * @param [in] ep           the client endpoint.
 * @param [in] arg          uct_ep_params_t::user_data.
 * @param [in] connect_args the outcome and the server's private data.
 */
typedef void (*uct_cm_ep_client_connect_callback_t)(
    uct_ep_h ep, void *arg,
    const uct_cm_ep_client_connect_args_t *connect_args);

/**
 * Called from the async context, once, when the peer disconnected or the
 * connection was lost after it was established.
 *
 * @param [in] ep  the endpoint.
 * @param [in] arg uct_ep_params_t::user_data.
 */
typedef void (*uct_ep_disconnect_cb_t)(uct_ep_h ep, void *arg);

/**
 * Writes the private data a connection carries to the peer (client: with
 * the request; server: with the accept).
 *
 * @param [in]  arg       uct_ep_params_t::user_data.
 * @param [in]  pack_args the device the connection goes through.
 * @param [out] priv_data where to write, uct_cm_attr_t::max_conn_priv
 *                        bytes.
 * @return the bytes written, at most max_conn_priv, or a negative
 *         ucs_status_t that fails the connection.
 */
typedef ssize_t (*uct_cm_ep_priv_data_pack_callback_t)(
    void *arg, const uct_cm_ep_priv_data_pack_args_t *pack_args,
    void *priv_data);

/**
 * Called on a client endpoint when the server's address and route are
 * resolved, with the local device; the user then packs the private data
 * and calls uct_ep_connect().
 *
 * @param [in] user_data    uct_ep_params_t::user_data.
 * @param [in] resolve_args the device, or why resolving failed.
 * @return UCS_OK, or an error that fails the connection.
 */
typedef ucs_status_t (*uct_cm_ep_resolve_callback_t)(
    void *user_data, const uct_cm_ep_resolve_args_t *resolve_args);

END_C_DECLS

#endif
