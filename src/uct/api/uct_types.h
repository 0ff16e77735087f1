/**
 * @file
 * The types of the UCT API: resource descriptions, interface, memory
 * domain and endpoint parameters and attributes, capability flags,
 * completions and pending requests.
 *
 * Included by `<uct/api/uct.h>`, which applications include; it is not
 * meant to be included on its own, though it compiles alone.
 */
#ifndef UCT_TYPES_H_
#define UCT_TYPES_H_

#include <uct/api/uct_def.h>
#include <uct/api/tl.h>
#include <uct/api/version.h>
#include <ucs/async/async_fwd.h>
#include <ucs/config/types.h>
#include <ucs/datastruct/callbackq.h>
#include <ucs/memory/memory_type.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/topo.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/linear_func.h>
#include <ucs/type/status.h>
#include <ucs/type/thread_mode.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

BEGIN_C_DECLS

/* ------------------------------------------------------------------------
 * Resources
 */

/**
 * Kind of device a transport runs on.
 * @ingroup UCT_RESOURCE
 */
typedef enum {
    UCT_DEVICE_TYPE_NET,  /**< network device */
    UCT_DEVICE_TYPE_SHM,  /**< shared memory */
    UCT_DEVICE_TYPE_ACC,  /**< accelerator */
    UCT_DEVICE_TYPE_SELF, /**< loopback within the process */
    UCT_DEVICE_TYPE_LAST  /**< number of device types, not a type */
} uct_device_type_t;

/**
 * Names of the device types ("network", "intra-node", "accelerator",
 * "loopback"), indexed by uct_device_type_t and ended by a NULL entry at
 * UCT_DEVICE_TYPE_LAST. Read only.
 * @ingroup UCT_RESOURCE
 */
extern const char *uct_device_type_names[];

/**
 * A transport on a device, as listed by uct_md_query_tl_resources().
 * The two names are what uct_iface_params_t::mode.device takes to open an
 * interface on it.
 * @ingroup UCT_RESOURCE
 */
typedef struct uct_tl_resource_desc {
    /** Transport name, e.g. "tcp", "self", "rc_verbs" (NUL-terminated). */
    char tl_name[UCT_TL_NAME_MAX];
    /** Device name, e.g. "lo", "eth0", "mlx5_0:1" (NUL-terminated). */
    char dev_name[UCT_DEVICE_NAME_MAX];
    /** Kind of the device. */
    uct_device_type_t dev_type;
    /** The device in the system topology; UCS_SYS_DEVICE_ID_UNKNOWN if
     *  the transport does not know it. */
    ucs_sys_device_t sys_device; /* UCS_SYS_DEVICE_ID_UNKNOWN if none */
} uct_tl_resource_desc_t;

/**
 * printf format of a transport resource as "transport/device"; use with
 * UCT_TL_RESOURCE_DESC_ARG().
 * @ingroup UCT_RESOURCE
 */
#define UCT_TL_RESOURCE_DESC_FMT "%s/%s"
/**
 * The printf arguments matching UCT_TL_RESOURCE_DESC_FMT.
 * @ingroup UCT_RESOURCE
 * @param _r pointer to a uct_tl_resource_desc_t (evaluated twice).
 */
#define UCT_TL_RESOURCE_DESC_ARG(_r) (_r)->tl_name, (_r)->dev_name

/**
 * A memory domain offered by a component
 * (uct_component_attr_t::md_resources).
 * @ingroup UCT_RESOURCE
 */
typedef struct uct_md_resource_desc {
    /** Name to pass to uct_md_open() (NUL-terminated). */
    char md_name[UCT_MD_NAME_MAX];
} uct_md_resource_desc_t;

/**
 * Which fields of uct_component_attr_t uct_component_query() fills
 * (uct_component_attr_t::field_mask).
 * @ingroup UCT_RESOURCE
 */
enum uct_component_attr_field {
    /** Fill uct_component_attr_t::name. */
    UCT_COMPONENT_ATTR_FIELD_NAME = UCS_BIT(0),
    /** Fill uct_component_attr_t::md_resource_count. */
    UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT = UCS_BIT(1),
    /** Fill the caller's uct_component_attr_t::md_resources array. */
    UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES = UCS_BIT(2),
    /** Fill uct_component_attr_t::flags. */
    UCT_COMPONENT_ATTR_FIELD_FLAGS = UCS_BIT(3)
};

/**
 * Capabilities of a component (uct_component_attr_t::flags).
 * @ingroup UCT_RESOURCE
 */
enum {
    /** The component can open a client/server connection manager. */
    UCT_COMPONENT_FLAG_CM = UCS_BIT(0),
    /** Remote keys of this component can be mapped (uct_rkey_ptr). */
    UCT_COMPONENT_FLAG_RKEY_PTR = UCS_BIT(1)
};

/**
 * Attributes of a component, filled by uct_component_query() for the
 * fields selected in field_mask.
 * @ingroup UCT_RESOURCE
 */
typedef struct uct_component_attr {
    /** Set by the caller: mask of uct_component_attr_field values. */
    uint64_t field_mask;
    /** Component name, e.g. "tcp", "self", "ib" (NUL-terminated). */
    char name[UCT_COMPONENT_NAME_MAX];
    /** How many memory domains the component offers. */
    unsigned md_resource_count;
    /** Filled when FIELD_MD_RESOURCES is set: the caller provides an array
     *  of md_resource_count entries (query the count first). */
    uct_md_resource_desc_t *md_resources;
    /** UCT_COMPONENT_FLAG_* capabilities. */
    uint64_t flags;
} uct_component_attr_t;

/* ------------------------------------------------------------------------
 * Interface capabilities
 */

/**
 * @name Interface capability flags
 * Capability flags of an interface (uct_iface_attr_t::cap.flags): an
 * operation whose flag is missing returns UCS_ERR_UNSUPPORTED.
 * @ingroup UCT_IFACE
 * @{
 */
/** uct_ep_am_short() and uct_ep_am_short_iov() are supported. */
#define UCT_IFACE_FLAG_AM_SHORT UCS_BIT(0)
/** uct_ep_am_bcopy() is supported. */
#define UCT_IFACE_FLAG_AM_BCOPY UCS_BIT(1)
/** uct_ep_am_zcopy() is supported. */
#define UCT_IFACE_FLAG_AM_ZCOPY UCS_BIT(2)
/** uct_ep_pending_add() is supported. */
#define UCT_IFACE_FLAG_PENDING UCS_BIT(3)
/** uct_ep_put_short() is supported. */
#define UCT_IFACE_FLAG_PUT_SHORT UCS_BIT(4)
/** uct_ep_put_bcopy() is supported. */
#define UCT_IFACE_FLAG_PUT_BCOPY UCS_BIT(5)
/** uct_ep_put_zcopy() is supported. */
#define UCT_IFACE_FLAG_PUT_ZCOPY UCS_BIT(6)
/** uct_ep_get_short() is supported. */
#define UCT_IFACE_FLAG_GET_SHORT UCS_BIT(8)
/** uct_ep_get_bcopy() is supported. */
#define UCT_IFACE_FLAG_GET_BCOPY UCS_BIT(9)
/** uct_ep_get_zcopy() is supported. */
#define UCT_IFACE_FLAG_GET_ZCOPY UCS_BIT(10)
/** Atomics are atomic with respect to CPU atomics on the target memory. */
#define UCT_IFACE_FLAG_ATOMIC_CPU UCS_BIT(30)
/** Atomics are atomic only with respect to other atomics of the same
 *  device. */
#define UCT_IFACE_FLAG_ATOMIC_DEVICE UCS_BIT(31)
/** A bad short send buffer is reported as an error, not a crash. */
#define UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF UCS_BIT(32)
/** A bad bcopy send buffer is reported as an error. */
#define UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF UCS_BIT(33)
/** A bad zcopy buffer is reported as an error. */
#define UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF UCS_BIT(34)
/** An active message id without a handler is reported as an error. */
#define UCT_IFACE_FLAG_ERRHANDLE_AM_ID UCS_BIT(35)
/** Bad remote memory access is reported as an error. */
#define UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM UCS_BIT(36)
/** A bcopy length beyond the limit is reported as an error. */
#define UCT_IFACE_FLAG_ERRHANDLE_BCOPY_LEN UCS_BIT(37)
/** A failed peer is reported to the error handler
 *  (uct_iface_params_t::err_handler) instead of aborting. */
#define UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE UCS_BIT(38)
/** uct_ep_check() is supported. */
#define UCT_IFACE_FLAG_EP_CHECK UCS_BIT(39)
/** Endpoints connect to an interface address: uct_ep_create() with
 *  uct_ep_params_t::dev_addr and iface_addr. */
#define UCT_IFACE_FLAG_CONNECT_TO_IFACE UCS_BIT(40)
/** Endpoints connect pairwise: uct_ep_create() without addresses, then
 *  uct_ep_get_address() and uct_ep_connect_to_ep() on both sides. */
#define UCT_IFACE_FLAG_CONNECT_TO_EP UCS_BIT(41)
/** Endpoints connect to a socket address (connection managers; not
 *  offered by the transports of openuct). */
#define UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR UCS_BIT(42)
/** A message may be delivered more than once. */
#define UCT_IFACE_FLAG_AM_DUP UCS_BIT(43)
/** Active message handlers may be registered without UCT_CB_FLAG_ASYNC:
 *  they run from progress on the worker's thread. */
#define UCT_IFACE_FLAG_CB_SYNC UCS_BIT(44)
/** Active message handlers may run from another thread
 *  (UCT_CB_FLAG_ASYNC). */
#define UCT_IFACE_FLAG_CB_ASYNC UCS_BIT(45)
/** The transport checks on its own that peers are alive. */
#define UCT_IFACE_FLAG_EP_KEEPALIVE UCS_BIT(46)
/** Tag offload: eager short send (hardware tag matching). */
#define UCT_IFACE_FLAG_TAG_EAGER_SHORT UCS_BIT(50)
/** Tag offload: eager bcopy send. */
#define UCT_IFACE_FLAG_TAG_EAGER_BCOPY UCS_BIT(51)
/** Tag offload: eager zcopy send. */
#define UCT_IFACE_FLAG_TAG_EAGER_ZCOPY UCS_BIT(52)
/** Tag offload: rendezvous zcopy. */
#define UCT_IFACE_FLAG_TAG_RNDV_ZCOPY UCS_BIT(53)
/** The interface can reach other hosts, not only this one. */
#define UCT_IFACE_FLAG_INTER_NODE UCS_BIT(54)
/** @} */

/**
 * @name Interface event capability flags
 * Event capabilities (uct_iface_attr_t::cap.event_flags): which events
 * uct_iface_event_arm() can wait for and how they are signalled.
 * @ingroup UCT_IFACE
 * @{
 */
/** Arming for UCT_EVENT_SEND_COMP is supported. */
#define UCT_IFACE_FLAG_EVENT_SEND_COMP UCS_BIT(0)
/** Arming for UCT_EVENT_RECV is supported. */
#define UCT_IFACE_FLAG_EVENT_RECV UCS_BIT(1)
/** Arming for UCT_EVENT_RECV_SIG is supported. */
#define UCT_IFACE_FLAG_EVENT_RECV_SIG UCS_BIT(2)
/** Events are signalled on the file descriptor of
 *  uct_iface_event_fd_get(). */
#define UCT_IFACE_FLAG_EVENT_FD UCS_BIT(3)
/** Events are signalled through uct_iface_params_t::async_event_cb. */
#define UCT_IFACE_FLAG_EVENT_ASYNC_CB UCS_BIT(4)
/** @} */

/**
 * How an interface is opened (uct_iface_params_t::open_mode).
 * @ingroup UCT_IFACE
 */
enum uct_iface_open_mode {
    /** On a transport resource: uct_iface_params_t::mode.device. The only
     *  mode uct_iface_open() accepts. */
    UCT_IFACE_OPEN_MODE_DEVICE = UCS_BIT(0),
    /** As a socket address server (not supported). */
    UCT_IFACE_OPEN_MODE_SOCKADDR_SERVER = UCS_BIT(1),
    /** As a socket address client (not supported). */
    UCT_IFACE_OPEN_MODE_SOCKADDR_CLIENT = UCS_BIT(2)
};

/**
 * Which fields of uct_iface_params_t are set
 * (uct_iface_params_t::field_mask); unset fields take their defaults.
 * @ingroup UCT_IFACE
 */
enum uct_iface_params_field {
    /** uct_iface_params_t::cpu_mask is set. */
    UCT_IFACE_PARAM_FIELD_CPU_MASK = UCS_BIT(0),
    /** uct_iface_params_t::open_mode is set (required). */
    UCT_IFACE_PARAM_FIELD_OPEN_MODE = UCS_BIT(1),
    /** uct_iface_params_t::mode.device is set. */
    UCT_IFACE_PARAM_FIELD_DEVICE = UCS_BIT(2),
    /** uct_iface_params_t::mode.sockaddr is set. */
    UCT_IFACE_PARAM_FIELD_SOCKADDR = UCS_BIT(3),
    /** uct_iface_params_t::stats_root is set. */
    UCT_IFACE_PARAM_FIELD_STATS_ROOT = UCS_BIT(4),
    /** uct_iface_params_t::rx_headroom is set (default 0). */
    UCT_IFACE_PARAM_FIELD_RX_HEADROOM = UCS_BIT(5),
    /** uct_iface_params_t::err_handler_arg is set. */
    UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG = UCS_BIT(6),
    /** uct_iface_params_t::err_handler is set. */
    UCT_IFACE_PARAM_FIELD_ERR_HANDLER = UCS_BIT(7),
    /** uct_iface_params_t::err_handler_flags is set. */
    UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS = UCS_BIT(8),
    /** uct_iface_params_t::eager_arg is set. */
    UCT_IFACE_PARAM_FIELD_HW_TM_EAGER_ARG = UCS_BIT(9),
    /** uct_iface_params_t::eager_cb is set. */
    UCT_IFACE_PARAM_FIELD_HW_TM_EAGER_CB = UCS_BIT(10),
    /** uct_iface_params_t::rndv_arg is set. */
    UCT_IFACE_PARAM_FIELD_HW_TM_RNDV_ARG = UCS_BIT(11),
    /** uct_iface_params_t::rndv_cb is set. */
    UCT_IFACE_PARAM_FIELD_HW_TM_RNDV_CB = UCS_BIT(12),
    /** uct_iface_params_t::async_event_arg is set. */
    UCT_IFACE_PARAM_FIELD_ASYNC_EVENT_ARG = UCS_BIT(13),
    /** uct_iface_params_t::async_event_cb is set. */
    UCT_IFACE_PARAM_FIELD_ASYNC_EVENT_CB = UCS_BIT(14),
    /** uct_iface_params_t::keepalive_interval is set. */
    UCT_IFACE_PARAM_FIELD_KEEPALIVE_INTERVAL = UCS_BIT(15),
    /** uct_iface_params_t::am_alignment is set (default 1). */
    UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT = UCS_BIT(16),
    /** uct_iface_params_t::am_align_offset is set (default 0); needs
     *  UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT too. */
    UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET = UCS_BIT(17),
    /** uct_iface_params_t::features is set. */
    UCT_IFACE_PARAM_FIELD_FEATURES = UCS_BIT(18)
};

/**
 * Features the user will use; a transport may save resources on others.
 * @ingroup UCT_IFACE
 */
enum uct_iface_feature {
    UCT_IFACE_FEATURE_AM    = UCS_BIT(0), /**< active messages */
    UCT_IFACE_FEATURE_PUT   = UCS_BIT(1), /**< put operations */
    UCT_IFACE_FEATURE_GET   = UCS_BIT(2), /**< get operations */
    UCT_IFACE_FEATURE_AMO32 = UCS_BIT(3), /**< 32 bit atomics */
    UCT_IFACE_FEATURE_AMO64 = UCS_BIT(4), /**< 64 bit atomics */
    UCT_IFACE_FEATURE_TAG   = UCS_BIT(5), /**< tag offload */
    /** remote completion flushes (UCT_FLUSH_FLAG_REMOTE) */
    UCT_IFACE_FEATURE_FLUSH_REMOTE = UCS_BIT(6),
    UCT_IFACE_FEATURE_LAST         = UCS_BIT(7) /**< end marker */
};

/**
 * Bandwidth of a device: dedicated per process plus a shared part.
 * The bandwidth one of N processes can expect is
 * dedicated + shared / N.
 * @ingroup UCT_IFACE
 */
typedef struct uct_ppn_bandwidth {
    double dedicated; /**< bytes/sec each process gets on its own */
    double shared;    /**< bytes/sec, divided among processes */
} uct_ppn_bandwidth_t;

/**
 * Limits of one kind of operation. The same fields appear, per kind, in
 * uct_iface_attr_t::cap.
 * @ingroup UCT_IFACE
 */
typedef struct uct_iface_op_caps {
    size_t max_short;       /**< largest short payload */
    size_t max_bcopy;       /**< largest bcopy payload */
    size_t min_zcopy;       /**< smallest zcopy total length */
    size_t max_zcopy;       /**< largest zcopy total length */
    size_t opt_zcopy_align; /**< best buffer alignment for zcopy */
    size_t align_mtu;       /**< MTU used for alignment */
    size_t max_iov;         /**< most iov entries a zcopy takes */
} uct_iface_op_caps_t;

/**
 * Attributes of an interface, filled whole by uct_iface_query(). Limits
 * are 0 for an operation the interface does not support.
 * @ingroup UCT_IFACE
 */
struct uct_iface_attr {
    /** What the interface can do. */
    struct {
        /** Limits of put and get (see uct_iface_op_caps_t). */
        struct {
            size_t max_short;       /**< largest short length */
            size_t max_bcopy;       /**< largest bcopy length */
            size_t min_zcopy;       /**< smallest zcopy total length */
            size_t max_zcopy;       /**< largest zcopy total length */
            size_t opt_zcopy_align; /**< best zcopy buffer alignment */
            size_t align_mtu;       /**< MTU used for alignment */
            size_t max_iov;         /**< most iov entries in a zcopy */
        } put, get;

        /** Limits of active messages. */
        struct {
            size_t max_short;       /**< largest header + payload */
            size_t max_bcopy;       /**< largest packed length */
            size_t min_zcopy;       /**< smallest zcopy total length */
            size_t max_zcopy;       /**< largest zcopy payload */
            size_t opt_zcopy_align; /**< best zcopy buffer alignment */
            size_t align_mtu;       /**< MTU used for alignment */
            size_t max_hdr;         /**< largest zcopy header */
            size_t max_iov;         /**< most iov entries in a zcopy */
        } am;

        /** Limits of tag-matching offload: all 0 here, since no
         *  transport of openuct offers it (no UCT_IFACE_FLAG_TAG_*). */
        struct {
            /** Posted tagged receives. */
            struct {
                size_t min_recv;        /**< smallest receive buffer */
                size_t max_zcopy;       /**< largest receive buffer */
                size_t max_iov;         /**< most iov entries */
                size_t max_outstanding; /**< most posted at once */
            } recv;
            /** Eager tagged sends. */
            struct {
                size_t max_short; /**< largest short payload */
                size_t max_bcopy; /**< largest packed payload */
                size_t max_zcopy; /**< largest zcopy payload */
                size_t max_iov;   /**< most iov entries */
            } eager;
            /** Rendezvous tagged sends. */
            struct {
                size_t max_zcopy; /**< largest payload */
                size_t max_hdr;   /**< largest header */
                size_t max_iov;   /**< most iov entries */
            } rndv;
        } tag;

        /** Atomic operations supported, by width. */
        struct {
            uint64_t op_flags;  /**< UCS_BIT(uct_atomic_op_t) for post */
            uint64_t fop_flags; /**< UCS_BIT(uct_atomic_op_t) for fetch */
        } atomic32, atomic64;

        uint64_t flags;       /**< UCT_IFACE_FLAG_* */
        uint64_t event_flags; /**< UCT_IFACE_FLAG_EVENT_* */
    } cap;

    /** Size of the buffer uct_iface_get_device_address() fills. */
    size_t device_addr_len;
    /** Size of the buffer uct_iface_get_address() fills. */
    size_t iface_addr_len;
    /** Size of the buffer uct_ep_get_address() fills. */
    size_t ep_addr_len;
    /** Largest private data of a connection manager (0 here). */
    size_t max_conn_priv;
    /** Address a sockaddr server listens on (unused here). */
    struct sockaddr_storage listen_sockaddr;
    double overhead; /**< seconds of CPU per message */
    /** Bandwidth of the device. */
    uct_ppn_bandwidth_t bandwidth;
    ucs_linear_func_t latency; /**< seconds; m is per endpoint */
    /** Preference among devices otherwise alike; higher is preferred
     *  (0 for tcp, from the device for InfiniBand). */
    uint8_t priority;
    /** Most endpoints the interface may create (UCX_*_MAX_NUM_EPS). */
    size_t max_num_eps;
    /** Number of network paths of the device (1 here); an endpoint picks
     *  one with uct_ep_params_t::path_index. */
    unsigned dev_num_paths;
};

/**
 * Called for an unexpected tag-matched eager message (tag offload only,
 * which no transport of openuct offers).
 * @ingroup UCT_IFACE
 * @param [in]  arg     uct_iface_params_t::eager_arg.
 * @param [in]  data    the message payload.
 * @param [in]  length  payload length in bytes.
 * @param [in]  flags   UCT_CB_PARAM_FLAG_* of the message.
 * @param [in]  stag    the sender's tag.
 * @param [in]  imm     immediate value sent with the message.
 * @param [in,out] context per-message context for multi-fragment
 *                 messages.
 * @return UCS_OK when the data was consumed, UCS_INPROGRESS to keep a
 *         descriptor (UCT_CB_PARAM_FLAG_DESC).
 */
typedef ucs_status_t (*uct_tag_unexp_eager_cb_t)(void *arg, void *data,
                                                 size_t length, unsigned flags,
                                                 uct_tag_t stag, uint64_t imm,
                                                 void **context);
/**
 * Called for an unexpected tag-matched rendezvous request (tag offload
 * only, which no transport of openuct offers).
 * @ingroup UCT_IFACE
 * @param [in] arg           uct_iface_params_t::rndv_arg.
 * @param [in] flags         UCT_CB_PARAM_FLAG_* of the request.
 * @param [in] stag          the sender's tag.
 * @param [in] header        user header sent with the request.
 * @param [in] header_length header length in bytes.
 * @param [in] remote_addr   address of the data at the sender.
 * @param [in] length        data length in bytes.
 * @param [in] rkey_buf      packed remote key of the data.
 * @return UCS_OK when handled.
 */
typedef ucs_status_t (*uct_tag_unexp_rndv_cb_t)(
    void *arg, unsigned flags, uint64_t stag, const void *header,
    unsigned header_length, uint64_t remote_addr, size_t length,
    const void *rkey_buf);

/**
 * Parameters of uct_iface_open(). Only the fields named in field_mask are
 * read; the structure and the strings it points to are only read during
 * uct_iface_open() and may be freed when it returns.
 * @ingroup UCT_IFACE
 */
struct uct_iface_params {
    uint64_t field_mask; /**< UCT_IFACE_PARAM_FIELD_* */
    /** CPUs the interface should be near (accepted, not used by the
     *  transports of openuct). */
    ucs_cpu_set_t cpu_mask;
    uint64_t open_mode; /**< UCT_IFACE_OPEN_MODE_* */
    /** Where to open, by open_mode. */
    union {
        /** UCT_IFACE_OPEN_MODE_DEVICE: a resource of
         *  uct_md_query_tl_resources(). */
        struct {
            const char *tl_name;  /**< transport name */
            const char *dev_name; /**< device name */
        } device;
        /** UCT_IFACE_OPEN_MODE_SOCKADDR_SERVER/CLIENT: UCX's
         *  interface-based connection API, which no transport of openuct
         *  offers (uct_iface_open() refuses those modes); connect by
         *  address through a connection manager instead (uct_cm_open()). */
        struct {
            ucs_sock_addr_t listen_sockaddr; /**< address to listen on */
            void *conn_request_arg;          /**< argument of the callback */
            /** Called for each connection request. */
            uct_sockaddr_conn_request_callback_t conn_request_cb;
            uint32_t cb_flags; /**< UCT_CB_FLAG_* of the callback */
        } sockaddr;
    } mode;
    /** Parent of the interface's statistics node (ignored: counters are
     *  in the object tree, see uct_vfs). */
    void *stats_root;
    size_t rx_headroom; /**< user bytes before AM data */
    /** Passed to err_handler. */
    void *err_handler_arg;
    /** Called from progress, once per failed endpoint, with the
     *  endpoint and the failure status; after it the endpoint only
     *  returns that status and should be destroyed. Without it a failure
     *  is logged at the UCX_*_FAILURE level. */
    uct_error_handler_t err_handler;
    /** UCT_CB_FLAG_* of err_handler (stored; the handler always runs
     *  from progress). */
    uint32_t err_handler_flags;
    void *eager_arg; /**< argument of eager_cb */
    /** Unexpected eager tag handler (tag offload). */
    uct_tag_unexp_eager_cb_t eager_cb;
    void *rndv_arg; /**< argument of rndv_cb */
    /** Unexpected rendezvous tag handler (tag offload). */
    uct_tag_unexp_rndv_cb_t rndv_cb;
    /** Passed to async_event_cb. */
    void *async_event_arg;
    /** Called when an armed event occurs, if the interface signals events
     *  that way (UCT_IFACE_FLAG_EVENT_ASYNC_CB). */
    uct_async_event_cb_t async_event_cb;
    /** Interval between liveness checks of the peers (accepted, not used
     *  by the transports of openuct). */
    uint64_t keepalive_interval;
    /** Align the AM data passed to handlers: (data + am_align_offset) is a
     *  multiple of am_alignment (a power of two). */
    size_t am_alignment;
    /** See am_alignment; smaller than am_alignment. */
    size_t am_align_offset;
    /** UCT_IFACE_FEATURE_* the user needs (accepted; the transports of
     *  openuct set up every feature they have). */
    uint64_t features; /* UCT_IFACE_FEATURE_* */
};

/* ------------------------------------------------------------------------
 * Endpoints
 */

/**
 * Which fields of uct_ep_params_t are set (uct_ep_params_t::field_mask).
 * @ingroup UCT_EP
 */
enum uct_ep_params_field {
    /** uct_ep_params_t::iface is set (required). */
    UCT_EP_PARAM_FIELD_IFACE = UCS_BIT(0),
    /** uct_ep_params_t::user_data is set. */
    UCT_EP_PARAM_FIELD_USER_DATA = UCS_BIT(1),
    /** uct_ep_params_t::dev_addr is set. */
    UCT_EP_PARAM_FIELD_DEV_ADDR = UCS_BIT(2),
    /** uct_ep_params_t::iface_addr is set. */
    UCT_EP_PARAM_FIELD_IFACE_ADDR = UCS_BIT(3),
    /** uct_ep_params_t::sockaddr is set (a client of a connection
     *  manager). */
    UCT_EP_PARAM_FIELD_SOCKADDR = UCS_BIT(4),
    /** uct_ep_params_t::sockaddr_cb_flags is set. */
    UCT_EP_PARAM_FIELD_SOCKADDR_CB_FLAGS = UCS_BIT(5),
    /** uct_ep_params_t::sockaddr_pack_cb is set. */
    UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB = UCS_BIT(6),
    /** uct_ep_params_t::cm is set: the endpoint belongs to a connection
     *  manager, not to an interface. */
    UCT_EP_PARAM_FIELD_CM = UCS_BIT(7),
    /** uct_ep_params_t::conn_request is set (a server endpoint). */
    UCT_EP_PARAM_FIELD_CONN_REQUEST = UCS_BIT(8),
    /** uct_ep_params_t::sockaddr_cb_client is set. */
    UCT_EP_PARAM_FIELD_SOCKADDR_CONNECT_CB_CLIENT = UCS_BIT(9),
    /** uct_ep_params_t::sockaddr_cb_server is set. */
    UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER = UCS_BIT(10),
    /** uct_ep_params_t::disconnect_cb is set. */
    UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB = UCS_BIT(11),
    /** uct_ep_params_t::path_index is set. */
    UCT_EP_PARAM_FIELD_PATH_INDEX = UCS_BIT(12),
    /** uct_ep_params_t::cm_resolve_cb is set. */
    UCT_EP_PARAM_FIELD_CM_RESOLVE_CB = UCS_BIT(13),
    /** uct_ep_params_t::private_data is set. */
    UCT_EP_PARAM_FIELD_PRIV_DATA = UCS_BIT(14),
    /** uct_ep_params_t::private_data_length is set. */
    UCT_EP_PARAM_FIELD_PRIV_DATA_LENGTH = UCS_BIT(15),
    /** uct_ep_params_t::local_sockaddr is set. */
    UCT_EP_PARAM_FIELD_LOCAL_SOCKADDR = UCS_BIT(16)
};

/**
 * Parameters of uct_ep_create(). Only the fields named in field_mask are
 * read. The structure may be freed when uct_ep_create() returns; the
 * addresses it points to are copied or used during the call only.
 * @ingroup UCT_EP
 */
struct uct_ep_params {
    uint64_t field_mask; /**< UCT_EP_PARAM_FIELD_* */
    /** Interface the endpoint belongs to (required: connection managers
     *  are not supported). */
    uct_iface_h iface;
    /** User value of the endpoint: the argument of a connection
     *  manager's callbacks (the transports of openuct do not store it). */
    void *user_data;
    /** Peer's device address (uct_iface_get_device_address()); with
     *  iface_addr it connects to that interface. */
    const uct_device_addr_t *dev_addr;
    /** Peer's interface address (uct_iface_get_address()). Leave both
     *  addresses out to create an endpoint for uct_ep_connect_to_ep(). */
    const uct_iface_addr_t *iface_addr;
    /** The server's address, for a client endpoint of a connection
     *  manager; copied during the call. */
    const ucs_sock_addr_t *sockaddr;
    /** UCT_CB_FLAG_* of the connection manager's callbacks
     *  (UCT_CB_FLAG_ASYNC: they run from the async context). */
    uint32_t sockaddr_cb_flags;
    /** Writes the private data sent to the peer in the handshake. */
    uct_cm_ep_priv_data_pack_callback_t sockaddr_pack_cb;
    /** The connection manager the endpoint belongs to. */
    uct_cm_h cm;
    /** The request a server endpoint accepts (from the listener's
     *  callback). */
    uct_conn_request_h conn_request;
    /** A client endpoint's callback: the server accepted or refused. */
    uct_cm_ep_client_connect_callback_t sockaddr_cb_client;
    /** A server endpoint's callback: the client answered. */
    uct_cm_ep_server_conn_notify_callback_t sockaddr_cb_server;
    /** Called once when the connection ends after it was
     *  established. */
    uct_ep_disconnect_cb_t disconnect_cb;
    /** Which of uct_iface_attr_t::dev_num_paths network paths to use
     *  (there is one path here). */
    unsigned path_index;
    /** A client endpoint's callback when the route is resolved, for
     *  packing the private data before uct_ep_connect(). */
    uct_cm_ep_resolve_callback_t cm_resolve_cb;
    /** Private data sent with the handshake, instead of a pack
     *  callback. */
    const void *private_data;
    /** Bytes at @a private_data. */
    size_t private_data_length;
    /** The local address a client endpoint connects from. */
    const ucs_sock_addr_t *local_sockaddr;
};

/**
 * Fields of uct_ep_connect_params_t that are set.
 * @ingroup UCT_CM
 */
enum uct_ep_connect_params_field {
    /** uct_ep_connect_params_t::private_data is set. */
    UCT_EP_CONNECT_PARAM_FIELD_PRIVATE_DATA = UCS_BIT(0),
    /** uct_ep_connect_params_t::private_data_length is set. */
    UCT_EP_CONNECT_PARAM_FIELD_PRIVATE_DATA_LENGTH = UCS_BIT(1)
};

/**
 * Parameters of uct_ep_connect(): what a client endpoint created with a
 * resolve callback sends once its route is known.
 * @ingroup UCT_CM
 */
struct uct_ep_connect_params {
    uint64_t field_mask;        /**< UCT_EP_CONNECT_PARAM_FIELD_* */
    const void *private_data;   /**< data sent to the peer */
    size_t private_data_length; /**< length of private_data */
};

/**
 * Whether a socket address is usable locally or remotely
 * (uct_md_is_sockaddr_accessible()).
 * @ingroup UCT_MD
 */
typedef enum {
    UCT_SOCKADDR_ACC_LOCAL, /**< to listen on */
    UCT_SOCKADDR_ACC_REMOTE /**< to connect to */
} uct_sockaddr_accessibility_t;

/**
 * Fields of uct_cm_attr_t to fill.
 * @ingroup UCT_CM
 */
enum uct_cm_attr_field {
    /** uct_cm_attr_t::max_conn_priv */
    UCT_CM_ATTR_FIELD_MAX_CONN_PRIV = UCS_BIT(0)
};

/**
 * Attributes of a connection manager (uct_cm_query()).
 * @ingroup UCT_CM
 */
struct uct_cm_attr {
    uint64_t field_mask;  /**< UCT_CM_ATTR_FIELD_*: what to fill */
    size_t max_conn_priv; /**< most private-data bytes per handshake */
};

/**
 * Fields of uct_listener_attr_t to fill.
 * @ingroup UCT_CM
 */
enum uct_listener_attr_field {
    /** uct_listener_attr_t::sockaddr */
    UCT_LISTENER_ATTR_FIELD_SOCKADDR = UCS_BIT(0)
};

/**
 * Attributes of a listener (uct_listener_query()).
 * @ingroup UCT_CM
 */
struct uct_listener_attr {
    uint64_t field_mask; /**< UCT_LISTENER_ATTR_FIELD_*: what to fill */
    /** The address the listener is bound to, with the port the system
     *  chose when it was created with port 0. */
    struct sockaddr_storage sockaddr;
};

/**
 * Fields of uct_listener_params_t that are set.
 * @ingroup UCT_CM
 */
enum uct_listener_params_field {
    /** uct_listener_params_t::backlog */
    UCT_LISTENER_PARAM_FIELD_BACKLOG = UCS_BIT(0),
    /** uct_listener_params_t::conn_request_cb (required) */
    UCT_LISTENER_PARAM_FIELD_CONN_REQUEST_CB = UCS_BIT(1),
    /** uct_listener_params_t::user_data */
    UCT_LISTENER_PARAM_FIELD_USER_DATA = UCS_BIT(2)
};

/**
 * Parameters of uct_listener_create().
 * @ingroup UCT_CM
 */
struct uct_listener_params {
    uint64_t field_mask; /**< UCT_LISTENER_PARAM_FIELD_* */
    /** Most connection requests waiting to be taken; without it, the
     *  connection manager's default. */
    int backlog;
    /** Called from the async context for each connection request. */
    uct_cm_listener_conn_request_callback_t conn_request_cb;
    /** Argument of conn_request_cb. */
    void *user_data;
};

/* ------------------------------------------------------------------------
 * Memory domains and memory
 */

/**
 * Memory domain capabilities (uct_md_attr_t::cap.flags).
 * @ingroup UCT_MD
 */
enum {
    UCT_MD_FLAG_ALLOC     = UCS_BIT(0), /**< can allocate memory */
    UCT_MD_FLAG_REG       = UCS_BIT(1), /**< can register memory */
    UCT_MD_FLAG_NEED_MEMH = UCS_BIT(2), /**< zcopy needs a memh */
    UCT_MD_FLAG_NEED_RKEY = UCS_BIT(3), /**< RMA needs a remote key */
    /** uct_md_mem_advise() works */
    UCT_MD_FLAG_ADVISE = UCS_BIT(4), /* uct_md_mem_advise works */
    /** can map at a fixed address */
    UCT_MD_FLAG_FIXED    = UCS_BIT(5), /* can map at a fixed address */
    UCT_MD_FLAG_RKEY_PTR = UCS_BIT(6), /**< remote keys map locally */
    /** can open a socket address connection (not here) */
    UCT_MD_FLAG_SOCKADDR = UCS_BIT(7),
    /** registrations can be invalidated (not here) */
    UCT_MD_FLAG_INVALIDATE = UCS_BIT(8),
    /** memory keys can be exported to other processes (not here) */
    UCT_MD_FLAG_EXPORTED_MKEY = UCS_BIT(9),
    /** can register dma-buf memory (not here) */
    UCT_MD_FLAG_REG_DMABUF = UCS_BIT(10),
    UCT_MD_FLAG_LAST       = UCS_BIT(11) /**< end marker */
};

/**
 * Flags of uct_md_mem_reg() and memory allocation
 * (uct_mem_alloc_params_t::flags, uct_iface_mem_alloc()).
 * @ingroup UCT_MD
 */
enum uct_md_mem_flags {
    /** Register lazily, without touching the pages now (accepted; the
     *  memory domains of openuct register at once). */
    UCT_MD_MEM_FLAG_NONBLOCK = UCS_BIT(0),
    /** Allocate at exactly uct_mem_alloc_params_t::address, which must be
     *  page aligned; methods that cannot are skipped. */
    UCT_MD_MEM_FLAG_FIXED = UCS_BIT(1),
    /** Lock the pages in memory (accepted, not acted upon). */
    UCT_MD_MEM_FLAG_LOCK = UCS_BIT(2),
    /** Do not log an error when the allocation fails; only the status
     *  tells. */
    UCT_MD_MEM_FLAG_HIDE_ERRORS = UCS_BIT(3),
    /** Remote peers may put to the memory. */
    UCT_MD_MEM_ACCESS_REMOTE_PUT = UCS_BIT(5),
    /** Remote peers may get from the memory. */
    UCT_MD_MEM_ACCESS_REMOTE_GET = UCS_BIT(6),
    /** Remote peers may run atomics on the memory. */
    UCT_MD_MEM_ACCESS_REMOTE_ATOMIC = UCS_BIT(7),
    /** Local operations may read the memory (zcopy sends). */
    UCT_MD_MEM_ACCESS_LOCAL_READ = UCS_BIT(8),
    /** Local operations may write the memory (get into it). */
    UCT_MD_MEM_ACCESS_LOCAL_WRITE = UCS_BIT(9),

    /** Every kind of access. */
    UCT_MD_MEM_ACCESS_ALL =
        UCT_MD_MEM_ACCESS_REMOTE_PUT | UCT_MD_MEM_ACCESS_REMOTE_GET |
        UCT_MD_MEM_ACCESS_REMOTE_ATOMIC | UCT_MD_MEM_ACCESS_LOCAL_READ |
        UCT_MD_MEM_ACCESS_LOCAL_WRITE,
    /** Every access but atomics: what put and get need. */
    UCT_MD_MEM_ACCESS_RMA =
        UCT_MD_MEM_ACCESS_REMOTE_PUT | UCT_MD_MEM_ACCESS_REMOTE_GET |
        UCT_MD_MEM_ACCESS_LOCAL_READ | UCT_MD_MEM_ACCESS_LOCAL_WRITE
};

/**
 * Advice on how registered memory will be used (uct_md_mem_advise()).
 * @ingroup UCT_MD
 */
typedef enum {
    UCT_MADV_NORMAL = 0, /**< no particular advice */
    UCT_MADV_WILLNEED    /**< the range will be accessed soon */
} uct_mem_advice_t;

/**
 * Attributes of a memory domain, filled whole by uct_md_query().
 * @ingroup UCT_MD
 */
struct uct_md_attr {
    /** What the memory domain can do. */
    struct {
        uint64_t max_alloc;     /**< largest allocation */
        size_t max_reg;         /**< largest registration */
        uint64_t flags;         /**< UCT_MD_FLAG_* */
        uint64_t reg_mem_types; /**< UCS_BIT(ucs_memory_type_t) */
        /** Memory types uct_md_detect_memory_type() recognizes. */
        uint64_t detect_mem_types;
        /** Memory types the domain can allocate. */
        uint64_t alloc_mem_types;
        /** Memory types its transports can access. */
        uint64_t access_mem_types;
    } cap;
    ucs_linear_func_t reg_cost; /**< seconds: c + m * bytes */
    /** Name of the component of the memory domain. */
    char component_name[UCT_COMPONENT_NAME_MAX];
    /** Size of the buffer uct_md_mkey_pack() fills (may be 0). */
    size_t rkey_packed_size;
    /** CPUs close to the device of the memory domain (empty if not
     *  known). */
    ucs_cpu_set_t local_cpus;
};

/**
 * Which fields of uct_md_mem_attr_t uct_md_mem_query() fills.
 * @ingroup UCT_MD
 */
enum uct_md_mem_attr_field {
    /** Fill uct_md_mem_attr_t::mem_type. */
    UCT_MD_MEM_ATTR_FIELD_MEM_TYPE = UCS_BIT(0),
    /** Fill uct_md_mem_attr_t::sys_dev. */
    UCT_MD_MEM_ATTR_FIELD_SYS_DEV = UCS_BIT(1),
    /** Fill uct_md_mem_attr_t::base_address. */
    UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS = UCS_BIT(2),
    /** Fill uct_md_mem_attr_t::alloc_length. */
    UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH = UCS_BIT(3)
};

/**
 * What a memory domain knows about a range of memory
 * (uct_md_mem_query()).
 * @ingroup UCT_MD
 */
typedef struct uct_md_mem_attr {
    /** Set by the caller: mask of uct_md_mem_attr_field values. */
    uint64_t field_mask;
    ucs_memory_type_t mem_type; /**< kind of memory */
    /** Device the memory is on; UCS_SYS_DEVICE_ID_UNKNOWN for host
     *  memory. */
    ucs_sys_device_t sys_dev;
    void *base_address;  /**< start of the allocation */
    size_t alloc_length; /**< length of the allocation */
} uct_md_mem_attr_t;

/**
 * Ways to allocate memory, tried in the order given.
 * @ingroup UCT_MD
 */
typedef enum {
    UCT_ALLOC_METHOD_THP,  /**< transparent huge pages */
    UCT_ALLOC_METHOD_MD,   /**< the memory domain's own allocator */
    UCT_ALLOC_METHOD_HEAP, /**< malloc-style heap */
    UCT_ALLOC_METHOD_MMAP, /**< anonymous mmap */
    UCT_ALLOC_METHOD_HUGE, /**< explicit huge pages (MAP_HUGETLB) */
    UCT_ALLOC_METHOD_LAST, /**< number of methods, not a method */
    /** Same as UCT_ALLOC_METHOD_LAST (no method of its own). */
    UCT_ALLOC_METHOD_DEFAULT = UCT_ALLOC_METHOD_LAST
} uct_alloc_method_t;

/**
 * Names of the allocation methods ("thp", "md", "heap", "mmap", "huge"),
 * indexed by uct_alloc_method_t and ended by NULL at UCT_ALLOC_METHOD_LAST.
 * Read only.
 * @ingroup UCT_MD
 */
extern const char *uct_alloc_method_names[];

/**
 * Memory allocated by uct_mem_alloc() or uct_iface_mem_alloc(). Free it
 * with the matching uct_mem_free() or uct_iface_mem_free(); do not change
 * the fields.
 * @ingroup UCT_MD
 */
typedef struct uct_allocated_memory {
    void *address;              /**< start of the usable memory */
    size_t length;              /**< usable length (may be rounded up) */
    uct_alloc_method_t method;  /**< the method that succeeded */
    ucs_memory_type_t mem_type; /**< kind of memory (host here) */
    /** Memory domain that allocated or registered it, or NULL. */
    uct_md_h md; /* set for UCT_ALLOC_METHOD_MD */
    /** Its memory handle, for zcopy operations and uct_md_mkey_pack();
     *  UCT_MEM_HANDLE_NULL when not registered. */
    uct_mem_h memh;
} uct_allocated_memory_t;

/**
 * Which fields of uct_mem_alloc_params_t are set.
 * @ingroup UCT_MD
 */
enum uct_mem_alloc_params_field {
    /** uct_mem_alloc_params_t::flags is set (default 0). */
    UCT_MEM_ALLOC_PARAM_FIELD_FLAGS = UCS_BIT(0),
    /** uct_mem_alloc_params_t::address is set (default NULL). */
    UCT_MEM_ALLOC_PARAM_FIELD_ADDRESS = UCS_BIT(1),
    /** uct_mem_alloc_params_t::mem_type is set (default host). */
    UCT_MEM_ALLOC_PARAM_FIELD_MEM_TYPE = UCS_BIT(2),
    /** uct_mem_alloc_params_t::mds is set (needed by
     *  UCT_ALLOC_METHOD_MD). */
    UCT_MEM_ALLOC_PARAM_FIELD_MDS = UCS_BIT(3),
    /** uct_mem_alloc_params_t::name is set (default "user"). */
    UCT_MEM_ALLOC_PARAM_FIELD_NAME = UCS_BIT(4)
};

/**
 * Parameters of uct_mem_alloc(); read during the call only.
 * @ingroup UCT_MD
 */
typedef struct uct_mem_alloc_params {
    uint64_t field_mask; /**< UCT_MEM_ALLOC_PARAM_FIELD_* */
    unsigned flags;      /**< UCT_MD_MEM_FLAG_* and access flags */
    void *address;       /**< hint, or required with FLAG_FIXED */
    /** Kind of memory; only UCS_MEMORY_TYPE_HOST is supported. */
    ucs_memory_type_t mem_type;
    /** Memory domains UCT_ALLOC_METHOD_MD tries, in order. */
    struct {
        const uct_md_h *mds; /**< array of count memory domains */
        unsigned count;      /**< entries in mds */
    } mds;
    /** Name of the allocation, for log messages. */
    const char *name;
} uct_mem_alloc_params_t;

/**
 * An unpacked remote key (uct_rkey_unpack()). Pass @a rkey to RMA and
 * atomic calls; release the bundle with uct_rkey_release().
 * @ingroup UCT_MD
 */
typedef struct uct_rkey_bundle {
    uct_rkey_t rkey; /**< the key RMA and atomic calls take */
    void *handle;    /**< transport state of the key, or NULL */
    void *type;      /**< the component that unpacked it */
} uct_rkey_bundle_t;

/* ------------------------------------------------------------------------
 * Requests, completions, flags
 */

/**
 * Completion of one or more operations. The user sets func and count
 * (the number of operations it waits for) and status to UCS_OK; each
 * operation that returned UCS_INPROGRESS with this completion decrements
 * count when it finishes, recording a failure in status, and func runs,
 * from progress on the worker's thread, when count reaches 0. The
 * structure must stay valid until then.
 * @ingroup UCT_FLUSH
 */
struct uct_completion {
    uct_completion_callback_t func; /**< runs when count reaches 0 */
    int count;                      /**< operations still outstanding */
    ucs_status_t status;            /**< first error seen, or UCS_OK */
};

/**
 * A request queued by uct_ep_pending_add(). The user owns the memory
 * (usually embedded in a larger request of its own); it must stay valid
 * until func returned UCS_OK or the request was purged.
 * @ingroup UCT_FLUSH
 */
struct uct_pending_req {
    /** Called from progress when the endpoint may have resources. */
    uct_pending_callback_t func;
    /** Used by the transport while the request is queued. */
    char priv[UCT_PENDING_REQ_PRIV_LEN];
};

/**
 * Flags of uct_tag_context_t::completed_cb.
 * @ingroup UCT_TAG
 */
enum {
    /** The payload is in the callback's inline_data, not in the posted
     *  buffer. */
    UCT_TAG_RECV_CB_INLINE_DATA = UCS_BIT(0)
};

/**
 * A tagged receive posted with uct_iface_tag_recv_zcopy(), for transports
 * with hardware tag matching. No transport of openuct has it, so the
 * calls that take a context return UCS_ERR_UNSUPPORTED; the type exists
 * so that programs written for UCX compile.
 * @ingroup UCT_TAG
 */
struct uct_tag_context {
    /** Called when a sender's tag matched and the receive is taken. */
    void (*tag_consumed_cb)(uct_tag_context_t *self);
    /**
     * Called when the message arrived or the receive was cancelled.
     * @param [in] self        this context.
     * @param [in] stag        the sender's tag.
     * @param [in] imm         the sender's immediate value.
     * @param [in] length      payload length in bytes.
     * @param [in] inline_data the payload, when it did not go to the
     *                         posted buffer (UCT_TAG_RECV_CB_INLINE_DATA).
     * @param [in] status      UCS_OK, UCS_ERR_CANCELED or an error.
     */
    void (*completed_cb)(uct_tag_context_t *self, uct_tag_t stag, uint64_t imm,
                         size_t length, void *inline_data, ucs_status_t status);
    /**
     * Called when a rendezvous request matched this receive.
     * @param [in] self          this context.
     * @param [in] stag          the sender's tag.
     * @param [in] header        the sender's rendezvous header.
     * @param [in] header_length bytes of @a header.
     * @param [in] status        UCS_OK or an error.
     * @param [in] flags         UCT_TAG_RECV_CB_* bits.
     */
    void (*rndv_cb)(uct_tag_context_t *self, uct_tag_t stag, const void *header,
                    unsigned header_length, ucs_status_t status,
                    unsigned flags);
    /** Used by the transport while the receive is posted. */
    char priv[UCT_TAG_PRIV_LEN];
};

/**
 * The worker: its progress queue is public so progress is inline.
 * @ingroup UCT_CONTEXT
 */
struct uct_worker {
    /** Callbacks uct_worker_progress() runs (interfaces, user
     *  callbacks of uct_worker_progress_register_safe()). */
    ucs_callbackq_t progress_q;
};

/**
 * Flags of uct_ep_flush() and uct_iface_flush().
 * @ingroup UCT_FLUSH
 */
enum uct_flush_flags {
    UCT_FLUSH_FLAG_LOCAL = 0, /**< local completion */
    /** Cancel outstanding operations: on an endpoint, queued pending
     *  requests are dropped without their callback; the tcp interface
     *  flush refuses it (UCS_ERR_UNSUPPORTED). */
    UCT_FLUSH_FLAG_CANCEL = UCS_BIT(0), /* cancel outstanding operations */
    UCT_FLUSH_FLAG_REMOTE = UCS_BIT(1)  /**< remote completion */
};

/**
 * Which progress uct_iface_progress_enable() and
 * uct_iface_progress_disable() turn on or off.
 * @ingroup UCT_CONTEXT
 */
enum uct_progress_types {
    UCT_PROGRESS_SEND = UCS_BIT(0), /**< send completions */
    UCT_PROGRESS_RECV = UCS_BIT(1), /**< receives */
    /** The call may come from another thread than the worker's (the
     *  base implementation is safe either way). */
    UCT_PROGRESS_THREAD_SAFE = UCS_BIT(7)
};

/**
 * Events uct_iface_event_arm() can wait for.
 * @ingroup UCT_IFACE
 */
enum uct_iface_event_types {
    UCT_EVENT_SEND_COMP = UCS_BIT(0), /**< a send completed */
    UCT_EVENT_RECV      = UCS_BIT(1), /**< a message arrived */
    /** a message sent with UCT_SEND_FLAG_SIGNALED arrived */
    UCT_EVENT_RECV_SIG = UCS_BIT(2)
};

/**
 * Flags of send operations (uct_ep_am_bcopy(), uct_ep_am_zcopy()).
 * @ingroup UCT_AM
 */
enum uct_msg_flags {
    /** Wake a receiver armed for UCT_EVENT_RECV_SIG. */
    UCT_SEND_FLAG_SIGNALED = UCS_BIT(0),
    /** Check the peer is alive before sending. */
    UCT_SEND_FLAG_PEER_CHECK = UCS_BIT(1)
};

/**
 * Flags of uct_iface_set_am_handler().
 * @ingroup UCT_AM
 */
enum uct_cb_flags {
    /** UCX's name of the bit since 1.13 (its value, 2, is UCX's); the
     *  same as UCT_CB_FLAG_SYNC. */
    UCT_CB_FLAG_RESERVED = UCS_BIT(1),
    /** The handler runs from uct_worker_progress() on the worker's
     *  thread (needs UCT_IFACE_FLAG_CB_SYNC); also the default without
     *  flags. */
    UCT_CB_FLAG_SYNC = UCS_BIT(1), /* run from uct_worker_progress */
    /** The handler tolerates running on any thread; on interfaces
     *  without UCT_IFACE_FLAG_CB_ASYNC it still runs from progress. */
    UCT_CB_FLAG_ASYNC = UCS_BIT(2) /* may run from any thread */
};

END_C_DECLS

#endif
