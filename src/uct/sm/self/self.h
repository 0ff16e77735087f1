/*
 * The self transport: endpoints deliver to interfaces of the same process
 * by calling the receiver's handler directly from the send call.
 */
#ifndef UCT_SELF_H_
#define UCT_SELF_H_

#include <uct/base/uct_desc.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <ucs/datastruct/list.h>
#include <ucs/memory/mpool.h>

#include <pthread.h>
#include <sys/types.h>

#define UCT_SELF_NAME     "self"
#define UCT_SELF_DEV_NAME "memory"
#define UCT_SELF_MAX_IOV  16

typedef uint64_t uct_self_iface_addr_t;

typedef struct uct_self_iface_config {
    uct_iface_config_t super;
    size_t seg_size; /* largest bcopy/zcopy message */
} uct_self_iface_config_t;

typedef struct uct_self_iface {
    uct_base_iface_t super;
    uct_self_iface_addr_t id; /* address other ifaces connect to */
    size_t seg_size;
    uct_rx_desc_layout_t rx_layout; /* of the objects of msg_mp */
    ucs_mpool_t msg_mp;             /* descriptors for bcopy/zcopy */
    uct_rx_desc_release_t release;  /* returns them to msg_mp */
    ucs_list_link_t peers;          /* eps that deliver to this iface */
    ucs_list_link_t list;           /* in the process-wide iface list */
    int event_fd;                   /* -1 until event_fd_get */
    int armed;                      /* signal event_fd on next recv */
    unsigned armed_events;
} uct_self_iface_t;

typedef struct uct_self_ep {
    uct_base_ep_t super;
    uct_self_iface_t *peer;        /* receiving iface, NULL once closed */
    ucs_list_link_t peer_list;     /* in peer->peers */
    uct_self_iface_addr_t peer_id; /* its address, for the object tree */
    ucs_status_t last_error;       /* of the last failed send */
    int64_t short_max;             /* largest am_short payload of the
                                      fast path; -1: every message
                                      takes the checked path (closed
                                      peer, alignment) */
} uct_self_ep_t;

/* Shared by the files of the transport (self_iface.c owns them). */
extern ucs_list_link_t uct_self_ifaces;
extern pthread_mutex_t uct_self_lock;
extern uct_tl_t uct_self_tl;
extern ucs_config_field_t uct_self_iface_config_table[];

static inline uct_self_iface_t *uct_self_iface(uct_iface_h iface)
{
    return (uct_self_iface_t *)iface;
}

static inline uct_self_ep_t *uct_self_ep(uct_ep_h ep)
{
    return (uct_self_ep_t *)ep;
}

static inline uct_self_iface_t *uct_self_ep_iface(uct_self_ep_t *ep)
{
    return uct_self_iface(ep->super.super.iface);
}

/** Wakes a thread waiting on an armed event fd. */
void uct_self_iface_signal(uct_self_iface_t *iface);

/* Runs on every delivery: trace and wake an armed waiter. */
static inline void uct_self_iface_delivered(uct_self_iface_t *iface, uint8_t id,
                                            const void *data, size_t length)
{
    if (ucs_unlikely(iface->super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, id, data,
                           length);
    }
    if (ucs_unlikely(iface->armed)) {
        uct_self_iface_signal(iface);
    }
}

/** Finds a self interface by address; call with uct_self_lock held. */
uct_self_iface_t *uct_self_iface_find(uct_self_iface_addr_t id);

ucs_status_t uct_self_iface_open(uct_md_h md, uct_worker_h worker,
                                 const uct_iface_params_t *params,
                                 const uct_iface_config_t *tl_config,
                                 uct_iface_h *iface_p);
ucs_status_t uct_self_query_devices(uct_md_h md,
                                    uct_tl_device_resource_t **devs_p,
                                    unsigned *num_devices_p);

/* Files of the object tree (uct_tl_t::iface_vfs_init/ep_vfs_init) */
void uct_self_iface_vfs_init(uct_iface_h tl_iface);
void uct_self_ep_vfs_init(uct_ep_h tl_ep);

/* Endpoint operations (self_ep.c) */
ucs_status_t uct_self_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                  const void *payload, unsigned length);
/* the same without the counters, for an iface whose tree was off */
ucs_status_t uct_self_ep_am_short_uncounted(uct_ep_h tl_ep, uint8_t id,
                                            uint64_t header,
                                            const void *payload,
                                            unsigned length);
ucs_status_t uct_self_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                      const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_self_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                             uct_pack_callback_t pack_cb, void *arg,
                             unsigned flags);
ucs_status_t uct_self_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                  const void *header, unsigned header_length,
                                  const uct_iov_t *iov, size_t iovcnt,
                                  unsigned flags, uct_completion_t *comp);
ucs_status_t uct_self_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                   unsigned length, uint64_t remote_addr,
                                   uct_rkey_t rkey);
ssize_t uct_self_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                              void *arg, uint64_t remote_addr, uct_rkey_t rkey);
ucs_status_t uct_self_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                   size_t iovcnt, uint64_t remote_addr,
                                   uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_self_ep_get_short(uct_ep_h tl_ep, void *buffer,
                                   unsigned length, uint64_t remote_addr,
                                   uct_rkey_t rkey);
ucs_status_t uct_self_ep_get_bcopy(uct_ep_h tl_ep,
                                   uct_unpack_callback_t unpack_cb, void *arg,
                                   size_t length, uint64_t remote_addr,
                                   uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_self_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                   size_t iovcnt, uint64_t remote_addr,
                                   uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_self_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                       uint64_t value, uint64_t remote_addr,
                                       uct_rkey_t rkey);
ucs_status_t uct_self_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                       uint32_t value, uint64_t remote_addr,
                                       uct_rkey_t rkey);
ucs_status_t uct_self_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                        uint64_t value, uint64_t *result,
                                        uint64_t remote_addr, uct_rkey_t rkey,
                                        uct_completion_t *comp);
ucs_status_t uct_self_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                        uint32_t value, uint32_t *result,
                                        uint64_t remote_addr, uct_rkey_t rkey,
                                        uct_completion_t *comp);
ucs_status_t uct_self_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                        uint64_t swap, uint64_t remote_addr,
                                        uct_rkey_t rkey, uint64_t *result,
                                        uct_completion_t *comp);
ucs_status_t uct_self_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                        uint32_t swap, uint64_t remote_addr,
                                        uct_rkey_t rkey, uint32_t *result,
                                        uct_completion_t *comp);
ucs_status_t uct_self_ep_pending_add(uct_ep_h ep, uct_pending_req_t *req,
                                     unsigned flags);
void uct_self_ep_pending_purge(uct_ep_h ep, uct_pending_purge_callback_t cb,
                               void *arg);
ucs_status_t uct_self_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_self_ep_destroy(uct_ep_h tl_ep);

#define UCT_SELF_ATOMIC_OPS                                    \
    (UCS_BIT(UCT_ATOMIC_OP_ADD) | UCS_BIT(UCT_ATOMIC_OP_AND) | \
     UCS_BIT(UCT_ATOMIC_OP_OR) | UCS_BIT(UCT_ATOMIC_OP_XOR))
#define UCT_SELF_ATOMIC_FOPS                             \
    (UCT_SELF_ATOMIC_OPS | UCS_BIT(UCT_ATOMIC_OP_SWAP) | \
     UCS_BIT(UCT_ATOMIC_OP_CSWAP))

#endif
