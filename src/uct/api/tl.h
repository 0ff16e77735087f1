/*
 * The transport interface: the operations table every transport fills.
 * Plugin authors include this header (and uct/base/ helpers); applications
 * get it through uct.h.
 *
 * Rule: an operation a transport does not implement is a function that
 * returns UCS_ERR_UNSUPPORTED, never NULL. uct_base_iface_init() fills every
 * NULL slot of a transport's table with such a function, so a transport
 * only lists what it does.
 */
#ifndef UCT_TL_H_
#define UCT_TL_H_

#include <uct/api/uct_def.h>
#include <ucs/type/status.h>
#include <ucs/sys/compiler_def.h>

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

BEGIN_C_DECLS

typedef ucs_status_t (*uct_ep_put_short_func_t)(uct_ep_h ep,
        const void *buffer, unsigned length, uint64_t remote_addr,
        uct_rkey_t rkey);
typedef ssize_t (*uct_ep_put_bcopy_func_t)(uct_ep_h ep,
        uct_pack_callback_t pack_cb, void *arg, uint64_t remote_addr,
        uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_put_zcopy_func_t)(uct_ep_h ep,
        const uct_iov_t *iov, size_t iovcnt, uint64_t remote_addr,
        uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_get_short_func_t)(uct_ep_h ep, void *buffer,
        unsigned length, uint64_t remote_addr, uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_get_bcopy_func_t)(uct_ep_h ep,
        uct_unpack_callback_t unpack_cb, void *arg, size_t length,
        uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_get_zcopy_func_t)(uct_ep_h ep,
        const uct_iov_t *iov, size_t iovcnt, uint64_t remote_addr,
        uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_am_short_func_t)(uct_ep_h ep, uint8_t id,
        uint64_t header, const void *payload, unsigned length);
typedef ucs_status_t (*uct_ep_am_short_iov_func_t)(uct_ep_h ep, uint8_t id,
        const uct_iov_t *iov, size_t iovcnt);
typedef ssize_t (*uct_ep_am_bcopy_func_t)(uct_ep_h ep, uint8_t id,
        uct_pack_callback_t pack_cb, void *arg, unsigned flags);
typedef ucs_status_t (*uct_ep_am_zcopy_func_t)(uct_ep_h ep, uint8_t id,
        const void *header, unsigned header_length, const uct_iov_t *iov,
        size_t iovcnt, unsigned flags, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic_cswap64_func_t)(uct_ep_h ep,
        uint64_t compare, uint64_t swap, uint64_t remote_addr,
        uct_rkey_t rkey, uint64_t *result, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic_cswap32_func_t)(uct_ep_h ep,
        uint32_t compare, uint32_t swap, uint64_t remote_addr,
        uct_rkey_t rkey, uint32_t *result, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic32_post_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint32_t value, uint64_t remote_addr,
        uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_atomic64_post_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint64_t value, uint64_t remote_addr,
        uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_atomic32_fetch_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint32_t value, uint32_t *result,
        uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic64_fetch_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint64_t value, uint64_t *result,
        uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_pending_add_func_t)(uct_ep_h ep,
        uct_pending_req_t *req, unsigned flags);
typedef void (*uct_ep_pending_purge_func_t)(uct_ep_h ep,
        uct_pending_purge_callback_t cb, void *arg);
typedef ucs_status_t (*uct_ep_flush_func_t)(uct_ep_h ep, unsigned flags,
        uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_fence_func_t)(uct_ep_h ep, unsigned flags);
typedef ucs_status_t (*uct_ep_check_func_t)(uct_ep_h ep, unsigned flags,
        uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_create_func_t)(const uct_ep_params_t *params,
        uct_ep_h *ep_p);
typedef void (*uct_ep_destroy_func_t)(uct_ep_h ep);
typedef ucs_status_t (*uct_ep_get_address_func_t)(uct_ep_h ep,
        uct_ep_addr_t *addr);
typedef ucs_status_t (*uct_ep_connect_to_ep_func_t)(uct_ep_h ep,
        const uct_device_addr_t *dev_addr, const uct_ep_addr_t *ep_addr);
typedef ucs_status_t (*uct_iface_flush_func_t)(uct_iface_h iface,
        unsigned flags, uct_completion_t *comp);
typedef ucs_status_t (*uct_iface_fence_func_t)(uct_iface_h iface,
        unsigned flags);
typedef void (*uct_iface_progress_enable_func_t)(uct_iface_h iface,
        unsigned flags);
typedef void (*uct_iface_progress_disable_func_t)(uct_iface_h iface,
        unsigned flags);
typedef unsigned (*uct_iface_progress_func_t)(uct_iface_h iface);
typedef ucs_status_t (*uct_iface_event_fd_get_func_t)(uct_iface_h iface,
        int *fd_p);
typedef ucs_status_t (*uct_iface_event_arm_func_t)(uct_iface_h iface,
        unsigned events);
typedef void (*uct_iface_close_func_t)(uct_iface_h iface);
typedef ucs_status_t (*uct_iface_query_func_t)(uct_iface_h iface,
        uct_iface_attr_t *iface_attr);
typedef ucs_status_t (*uct_iface_get_device_address_func_t)(
        uct_iface_h iface, uct_device_addr_t *addr);
typedef ucs_status_t (*uct_iface_get_address_func_t)(uct_iface_h iface,
        uct_iface_addr_t *addr);
typedef int (*uct_iface_is_reachable_func_t)(const uct_iface_h iface,
        const uct_device_addr_t *dev_addr, const uct_iface_addr_t *iface_addr);

/**
 * Operations of an interface and its endpoints. The fast-path wrappers in
 * uct.h call through this table with no other work.
 */
typedef struct uct_iface_ops {
    /* endpoint: RMA */
    uct_ep_put_short_func_t              ep_put_short;
    uct_ep_put_bcopy_func_t              ep_put_bcopy;
    uct_ep_put_zcopy_func_t              ep_put_zcopy;
    uct_ep_get_short_func_t              ep_get_short;
    uct_ep_get_bcopy_func_t              ep_get_bcopy;
    uct_ep_get_zcopy_func_t              ep_get_zcopy;

    /* endpoint: active messages */
    uct_ep_am_short_func_t               ep_am_short;
    uct_ep_am_short_iov_func_t           ep_am_short_iov;
    uct_ep_am_bcopy_func_t               ep_am_bcopy;
    uct_ep_am_zcopy_func_t               ep_am_zcopy;

    /* endpoint: atomics */
    uct_ep_atomic_cswap64_func_t         ep_atomic_cswap64;
    uct_ep_atomic_cswap32_func_t         ep_atomic_cswap32;
    uct_ep_atomic32_post_func_t          ep_atomic32_post;
    uct_ep_atomic64_post_func_t          ep_atomic64_post;
    uct_ep_atomic32_fetch_func_t         ep_atomic32_fetch;
    uct_ep_atomic64_fetch_func_t         ep_atomic64_fetch;

    /* endpoint: pending queue, ordering, health */
    uct_ep_pending_add_func_t            ep_pending_add;
    uct_ep_pending_purge_func_t          ep_pending_purge;
    uct_ep_flush_func_t                  ep_flush;
    uct_ep_fence_func_t                  ep_fence;
    uct_ep_check_func_t                  ep_check;

    /* endpoint: life cycle and connection */
    uct_ep_create_func_t                 ep_create;
    uct_ep_destroy_func_t                ep_destroy;
    uct_ep_get_address_func_t            ep_get_address;
    uct_ep_connect_to_ep_func_t          ep_connect_to_ep;

    /* interface */
    uct_iface_flush_func_t               iface_flush;
    uct_iface_fence_func_t               iface_fence;
    uct_iface_progress_enable_func_t     iface_progress_enable;
    uct_iface_progress_disable_func_t    iface_progress_disable;
    uct_iface_progress_func_t            iface_progress;
    uct_iface_event_fd_get_func_t        iface_event_fd_get;
    uct_iface_event_arm_func_t           iface_event_arm;
    uct_iface_close_func_t               iface_close;
    uct_iface_query_func_t               iface_query;
    uct_iface_get_device_address_func_t  iface_get_device_address;
    uct_iface_get_address_func_t         iface_get_address;
    uct_iface_is_reachable_func_t        iface_is_reachable;
} uct_iface_ops_t;

/** The base of every interface: its operations table. */
typedef struct uct_iface {
    uct_iface_ops_t ops;
} uct_iface_t;

/** The base of every endpoint: the interface it belongs to. */
typedef struct uct_ep {
    uct_iface_h iface;
} uct_ep_t;

/**
 * Handle for a received descriptor kept by an active message handler.
 * A pointer to it is stored right before the memory passed to
 * uct_iface_release_desc().
 */
struct uct_recv_desc {
    uct_desc_release_callback_t cb;
};

/** The receive descriptor of a kept buffer. The pointer may sit at any
 *  alignment (it follows user headroom of any size), so it is copied. */
static inline uct_recv_desc_t *uct_recv_desc(void *desc)
{
    uct_recv_desc_t *rdesc;

    memcpy(&rdesc, (char*)desc - sizeof(rdesc), sizeof(rdesc));
    return rdesc;
}

static inline void uct_recv_desc_set(void *desc, uct_recv_desc_t *rdesc)
{
    memcpy((char*)desc - sizeof(rdesc), &rdesc, sizeof(rdesc));
}

END_C_DECLS

#endif
