/*
 * Basic types of the transport API: handles, limits and callback
 * signatures. Included by uct.h and tl.h.
 */
#ifndef UCT_DEF_H_
#define UCT_DEF_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

BEGIN_C_DECLS

#define UCT_COMPONENT_NAME_MAX   16
#define UCT_TL_NAME_MAX          10
#define UCT_MD_NAME_MAX          16
#define UCT_DEVICE_NAME_MAX      32
#define UCT_PENDING_REQ_PRIV_LEN 40
#define UCT_AM_ID_BITS           5
#define UCT_AM_ID_MAX            UCS_BIT(UCT_AM_ID_BITS) /* 32 ids */
#define UCT_MEM_HANDLE_NULL      NULL
#define UCT_INVALID_RKEY         ((uintptr_t)(-1))
#define UCT_INLINE_API           static UCS_F_ALWAYS_INLINE

/** What an active message tracer is told about. */
enum uct_am_trace_type {
    UCT_AM_TRACE_TYPE_SEND,
    UCT_AM_TRACE_TYPE_RECV,
    UCT_AM_TRACE_TYPE_SEND_DROP,
    UCT_AM_TRACE_TYPE_RECV_DROP,
    UCT_AM_TRACE_TYPE_LAST
};

/** Atomic operations; capability masks use UCS_BIT(op). */
typedef enum uct_atomic_op {
    UCT_ATOMIC_OP_ADD,
    UCT_ATOMIC_OP_AND,
    UCT_ATOMIC_OP_OR,
    UCT_ATOMIC_OP_XOR,
    UCT_ATOMIC_OP_SWAP,
    UCT_ATOMIC_OP_CSWAP,
    UCT_ATOMIC_OP_LAST
} uct_atomic_op_t;

/** Flags passed to an active message handler. */
enum uct_cb_param_flags {
    /** @a data lives in a transport descriptor: the handler may keep it by
     *  returning UCS_INPROGRESS and release it with uct_iface_release_desc */
    UCT_CB_PARAM_FLAG_DESC  = UCS_BIT(0),
    UCT_CB_PARAM_FLAG_FIRST = UCS_BIT(1),
    UCT_CB_PARAM_FLAG_MORE  = UCS_BIT(2)
};

typedef struct uct_component       *uct_component_h;
typedef struct uct_iface           *uct_iface_h;
typedef struct uct_iface_config    uct_iface_config_t;
typedef struct uct_md_config       uct_md_config_t;
typedef struct uct_cm_config       uct_cm_config_t;
typedef struct uct_ep              *uct_ep_h;
typedef void                       *uct_mem_h;
typedef uintptr_t                  uct_rkey_t;
typedef struct uct_md              *uct_md_h;
typedef struct uct_md_ops          uct_md_ops_t;
typedef void                       *uct_rkey_ctx_h;
typedef struct uct_iface_attr      uct_iface_attr_t;
typedef struct uct_iface_params    uct_iface_params_t;
typedef struct uct_md_attr         uct_md_attr_t;
typedef struct uct_completion      uct_completion_t;
typedef struct uct_pending_req     uct_pending_req_t;
typedef struct uct_worker          *uct_worker_h;
typedef struct uct_worker          uct_worker_t;
typedef struct uct_md              uct_md_t;
typedef enum uct_am_trace_type     uct_am_trace_type_t;
typedef struct uct_device_addr     uct_device_addr_t;
typedef struct uct_iface_addr      uct_iface_addr_t;
typedef struct uct_ep_addr         uct_ep_addr_t;
typedef struct uct_ep_params       uct_ep_params_t;
typedef struct uct_ep_connect_params uct_ep_connect_params_t;
typedef struct uct_cm              uct_cm_t;
typedef uct_cm_t                   *uct_cm_h;
typedef struct uct_listener        *uct_listener_h;
typedef void                       *uct_conn_request_h;
typedef uint64_t                   uct_tag_t;
typedef int                        uct_worker_cb_id_t;
typedef struct uct_iov             uct_iov_t;
typedef struct uct_recv_desc       uct_recv_desc_t;

/**
 * One element of a scatter/gather list. @a count repetitions of
 * @a length bytes, @a stride bytes apart (stride is ignored when
 * count == 1).
 */
struct uct_iov {
    void     *buffer;
    size_t   length;
    uct_mem_h memh;
    size_t   stride;
    unsigned count;
};

/**
 * Active message handler. @a data is valid for the call only, unless the
 * flags carry UCT_CB_PARAM_FLAG_DESC and the handler returns
 * UCS_INPROGRESS, in which case it owns the buffer until it calls
 * uct_iface_release_desc().
 */
typedef ucs_status_t (*uct_am_callback_t)(void *arg, void *data,
                                          size_t length, unsigned flags);

/** Prints a one-line description of a message into @a buffer. */
typedef void (*uct_am_tracer_t)(void *arg, uct_am_trace_type_t type,
                                uint8_t id, const void *data, size_t length,
                                char *buffer, size_t max);

typedef void (*uct_completion_callback_t)(uct_completion_t *self);

/**
 * Called from progress when a pending request may proceed. Return UCS_OK
 * when done (the request is removed), UCS_INPROGRESS when it made partial
 * progress, or UCS_ERR_NO_RESOURCE to be called again later.
 */
typedef ucs_status_t (*uct_pending_callback_t)(uct_pending_req_t *self);

/** Called once for an endpoint whose peer failed. */
typedef ucs_status_t (*uct_error_handler_t)(void *arg, uct_ep_h ep,
                                            ucs_status_t status);

typedef void (*uct_pending_purge_callback_t)(uct_pending_req_t *self,
                                             void *arg);

/** Packs data into @a dest and returns the number of bytes written. */
typedef size_t (*uct_pack_callback_t)(void *dest, void *arg);

/** Consumes @a length bytes of received data. */
typedef void (*uct_unpack_callback_t)(void *arg, const void *data,
                                      size_t length);

/** Releases a receive descriptor; see uct_iface_release_desc(). */
typedef void (*uct_desc_release_callback_t)(uct_recv_desc_t *self,
                                            void *desc);

typedef void (*uct_async_event_cb_t)(void *arg, unsigned flags);

END_C_DECLS

#endif
