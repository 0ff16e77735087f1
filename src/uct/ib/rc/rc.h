/*
 * rc_verbs: one reliable-connected queue pair per endpoint, a shared
 * receive queue per interface, credit-based flow control for active
 * messages, moderated send completions.
 *
 * Send path. Every work request an endpoint posts gets the endpoint's next
 * 16-bit sequence number as its wr_id. Only one request in
 * TX_CQ_MODERATION is signaled (and every one whose completion someone
 * waits for: zcopy, GET, atomics, flush); a signaled completion with
 * sequence S retires every request of that endpoint up to S, since a queue
 * pair completes in order. Work that must happen when a request is done
 * (release a bcopy descriptor, unpack a GET, call a completion) is a
 * uct_rc_op_t in the endpoint's outstanding queue, in sequence order. Two
 * resources make UCS_ERR_NO_RESOURCE: the endpoint's send queue slots
 * (one is kept for credit grants) and the interface's send CQ entries
 * (every posted request may produce one: when a QP fails, each of its
 * requests completes with a flush error, signaled or not).
 *
 * Rescue of the send CQ. An unsignaled request keeps its CQ entry until a
 * later signaled request of its endpoint completes. Endpoints that sent a
 * few unsignaled requests and went idle can hold every entry between them
 * (moderation shrinks as endpoints are added, but those that posted
 * before hold what they posted under the larger budget), and then no
 * endpoint could post, flush or send a grant again. So a few entries
 * (tx_cq_reserve) are kept out of cq_available, and when cq_available is
 * used up, progress walks the endpoints (a bounded number of table slots
 * per call, on from where it stopped) and posts a signaled empty RDMA
 * write on each idle one that holds unsignaled requests (none of its
 * signaled requests in flight), from the reserve; each marker's
 * completion gives back its entry and those of the requests before it.
 *
 * Flow control. A sender may have fc_wnd active messages that the peer has
 * not handed back. The receiver counts what it delivered and returns the
 * count in the header of its next active message to that peer, or, once
 * half the peer's window is waiting and there is no reverse traffic, in an
 * explicit grant: a small inline send that consumes no credit, takes the
 * reserved slot, never waits in a pending queue, and is not solicited.
 *
 * Receive path. One shared receive queue per interface, posted from the
 * registered receive pool in batches from progress; it starts at a fill
 * target that doubles (up to RX_QUEUE_LEN) whenever the SRQ limit event
 * says it ran low (uct_ib_rxq_t, ../base/ib_rxq.h). rnr_retry 7 covers a
 * momentarily empty queue.
 */
#ifndef UCT_IB_RC_H_
#define UCT_IB_RC_H_

#include <uct/ib/base/ib_iface.h>
#include <uct/ib/base/ib_rxq.h>
#include <uct/base/uct_pending.h>
#include <ucs/datastruct/hash.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/queue.h>

#include <string.h>

BEGIN_C_DECLS

#define UCT_RC_VERBS_NAME "rc_verbs"

/** AM id of a credit grant (no handler may have it: ids are < 32). */
#define UCT_RC_HDR_GRANT 0xff

/** Receive buffers posted when an interface opens. */
#define UCT_RC_RX_INIT_FILL 256

/** Most receive buffers posted in one chain (RX_MAX_BATCH is capped). */
#define UCT_RC_RX_BATCH_MAX 128

/** Largest flow-control window (the grant field is 16 bits). */
#define UCT_RC_FC_WND_MAX 32767

/** Largest user header of an AM zcopy. */
#define UCT_RC_MAX_AM_HDR 128

/** Most SGEs of a send work request (header + payload entries). */
#define UCT_RC_MAX_IOV 16

/** Most send CQ entries kept for the rescue markers (see above). */
#define UCT_RC_TX_CQ_RESERVE_MAX 16

/** Endpoint table slots the rescue looks at per progress call. */
#define UCT_RC_RESCUE_SCAN 256

/** First PSNs drawn from the system's random source at once. */
#define UCT_RC_PSN_BATCH 32

/** The header of every send: the AM id, and AM credits handed back. */
typedef struct uct_rc_hdr {
    uint8_t am_id;    /* < UCT_AM_ID_MAX, or UCT_RC_HDR_GRANT */
    uint16_t credits; /* little endian */
} UCS_S_PACKED uct_rc_hdr_t;

/** An endpoint address: what the peer's QP needs to connect to ours. */
typedef struct uct_rc_ep_addr {
    uint8_t qp_num[3]; /* little endian, 24 bits */
    uint8_t psn[3];    /* our first send PSN */
    uint16_t fc_wnd;   /* our window: the peer grants at half of it */
} UCS_S_PACKED uct_rc_ep_addr_t;

/**
 * Check the header of a received message of @a length bytes (a peer's
 * input): long enough, an AM id that a handler can have or a grant, and
 * a grant is the header alone. Outputs are set only on success.
 *
 * @return UCS_OK; UCS_ERR_MESSAGE_TRUNCATED (shorter than the header);
 *         UCS_ERR_INVALID_PARAM (a bad AM id); UCS_ERR_UNSUPPORTED (bytes
 *         after a grant's header).
 */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_rc_hdr_unpack(const void *buf,
                                                          size_t length,
                                                          uint8_t *am_id_p,
                                                          uint16_t *credits_p)
{
    const uct_rc_hdr_t *hdr = (const uct_rc_hdr_t *)buf;
    uint16_t credits;

    if (ucs_unlikely(length < sizeof(*hdr))) {
        return UCS_ERR_MESSAGE_TRUNCATED;
    }
    if (ucs_unlikely(hdr->am_id >= UCT_AM_ID_MAX)) {
        if (hdr->am_id != UCT_RC_HDR_GRANT) {
            return UCS_ERR_INVALID_PARAM;
        }
        if (length != sizeof(*hdr)) {
            return UCS_ERR_UNSUPPORTED;
        }
    }
    memcpy(&credits, &hdr->credits, sizeof(credits));
    *am_id_p   = hdr->am_id;
    *credits_p = credits;
    return UCS_OK;
}

/**
 * Read and check an endpoint address from a peer: a QP number that can be
 * a connected QP's (> 1) and a window of 1..UCT_RC_FC_WND_MAX. Outputs are
 * set only on success; UCS_ERR_INVALID_PARAM otherwise.
 */
static inline ucs_status_t uct_rc_ep_addr_unpack(const void *addr,
                                                 uint32_t *qp_num_p,
                                                 uint32_t *psn_p,
                                                 uint16_t *fc_wnd_p)
{
    const uct_rc_ep_addr_t *rc_addr = (const uct_rc_ep_addr_t *)addr;
    const uint8_t *q = rc_addr->qp_num, *p = rc_addr->psn;
    uint32_t qp_num =
        (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16);
    uint16_t fc_wnd;

    memcpy(&fc_wnd, &rc_addr->fc_wnd, sizeof(fc_wnd));
    if ((qp_num <= 1) || (fc_wnd == 0) || (fc_wnd > UCT_RC_FC_WND_MAX)) {
        return UCS_ERR_INVALID_PARAM;
    }
    *qp_num_p = qp_num;
    *psn_p    = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    *fc_wnd_p = fc_wnd;
    return UCS_OK;
}

/** Configuration (UCX_RC_VERBS_*, UCX_RC_*, UCX_IB_*). */
typedef struct uct_rc_iface_config {
    uct_ib_iface_config_t super;
    double timeout;           /* TIMEOUT: seconds */
    unsigned retry_count;     /* RETRY_COUNT */
    double rnr_timeout;       /* RNR_TIMEOUT: seconds */
    unsigned rnr_retry_count; /* RNR_RETRY_COUNT (7: forever) */
    unsigned max_rd_atomic;   /* MAX_RD_ATOMIC */
    unsigned fc_wnd_size;     /* FC_WND_SIZE */
} uct_rc_iface_config_t;

typedef struct uct_rc_verbs_iface_config {
    uct_rc_iface_config_t super;
    unsigned tx_cq_moderation; /* TX_CQ_MODERATION */
} uct_rc_verbs_iface_config_t;

typedef struct uct_rc_iface uct_rc_iface_t;
typedef struct uct_rc_ep uct_rc_ep_t;
typedef struct uct_rc_op uct_rc_op_t;

/** What to do when an outstanding operation's request is done. */
typedef void (*uct_rc_op_handler_t)(uct_rc_op_t *op, ucs_status_t status);

/** An iface flush that waits for several endpoints. */
typedef struct uct_rc_iface_flush {
    uct_completion_t *comp;
    unsigned remaining;
    ucs_status_t status;
} uct_rc_iface_flush_t;

/** Work to do when a request of an endpoint is done. */
struct uct_rc_op {
    ucs_queue_elem_t queue; /* in the ep's outstanding queue */
    uct_rc_op_handler_t handler;
    uct_completion_t *comp; /* may be NULL */
    uint16_t sn;            /* of the request */
    uint32_t lkey;          /* send descriptors: of the buffer */
    union {
        struct {
            uct_unpack_callback_t cb;
            void *arg;
            size_t length;
        } get;
        struct {
            void *result; /* user's, filled from the buffer */
        } atomic;
        uct_rc_iface_flush_t *iface_flush;
    } u;
};

/** Send descriptors: an op, then the buffer (bcopy data, GET/atomic
 *  landing area), from the registered tx pool. */
static inline void *uct_rc_desc_buf(uct_rc_op_t *desc)
{
    return desc + 1;
}

/** uct_rc_ep_t::flags */
enum {
    UCT_RC_EP_FLAG_CONNECTED = UCS_BIT(0),
    UCT_RC_EP_FLAG_FAILED    = UCS_BIT(1), /* status holds why */
    UCT_RC_EP_FLAG_ERR_SENT  = UCS_BIT(2), /* handler called */
    UCT_RC_EP_FLAG_FENCE     = UCS_BIT(3), /* fence the next request */
    UCT_RC_EP_FLAG_GRANT_Q   = UCS_BIT(4), /* in iface->grants */
    UCT_RC_EP_FLAG_ZOMBIE    = UCS_BIT(5)  /* destroyed, draining */
};

/** An endpoint: one RC QP. */
struct uct_rc_ep {
    uct_base_ep_t super;
    struct ibv_qp *qp;
    ucs_queue_head_t outstanding; /* uct_rc_op_t, by sn */
    uct_pending_group_t pending;
    uint16_t tx_sn;        /* sn of the next request */
    uint16_t acked_sn;     /* first request not yet done */
    int16_t tx_available;  /* free slots, the grant's excluded */
    uint16_t unsignaled;   /* requests since the last signal */
    int16_t fc_credits;    /* AMs we may still send */
    uint16_t fc_grant;     /* AMs delivered, not yet granted */
    uint16_t grant_thresh; /* half the peer's window */
    uint8_t flags;         /* UCT_RC_EP_FLAG_* */
    int8_t status;         /* why it failed (ucs_status_t) */
    uint32_t psn;          /* our first send PSN: random, 24 bits */
};

/**
 * QP number -> endpoint, every ep of an iface (zombies included): open
 * addressing with linear probing over a power-of-two array of ep pointers
 * (the key is the ep's QP number), at most 3/4 full; a removal moves the
 * entries after it back, so there are no tombstones. 8 bytes a slot: 11
 * to 21 bytes per ep, with nothing inside the ep.
 */
typedef struct uct_rc_ep_table {
    uct_rc_ep_t **slots;
    unsigned mask; /* slots - 1 */
    unsigned count;
} uct_rc_ep_table_t;

/** The interface. */
struct uct_rc_iface {
    uct_ib_iface_t super;
    struct ibv_srq *srq;
    uct_rx_desc_layout_t rx_layout;
    uct_rx_desc_release_t rx_release;
    ucs_mpool_t rx_mp;     /* receive descriptors */
    ucs_mpool_t tx_mp;     /* send descriptors (registered) */
    ucs_mpool_t op_mp;     /* ops without a buffer */
    ucs_arbiter_t arbiter; /* pending requests of the eps */
    uct_rc_ep_table_t eps; /* every ep, by QP number */
    struct {
        uct_rc_ep_t **eps; /* owing an explicit grant, FIFO */
        unsigned count;
        unsigned max;
    } grants;
    struct {
        uint32_t pool[UCT_RC_PSN_BATCH]; /* random, for the next eps */
        unsigned left;                   /* unused at the pool's end */
    } psn;
    int cq_available; /* send CQ entries left; the rescue
                         takes it down to -tx_cq_reserve */
    struct {
        unsigned cursor;       /* next ep table slot to look at */
        unsigned long markers; /* posted so far */
    } rescue;
    uct_ib_rxq_t rx;             /* the SRQ's buffers */
    volatile int async_qp_error; /* a QP event arrived (async) */
    volatile int fatal;          /* the device failed (async) */
    ucs_log_limit_t proto_log;   /* bad headers from peers */
    struct {
        size_t max_inline;
        size_t seg_size;
        unsigned tx_queue_len;      /* send queue slots per QP */
        unsigned tx_cq_reserve;     /* send CQ entries of the rescue */
        unsigned tx_moderation;     /* now: see
                                       uct_rc_iface_update_moderation */
        unsigned tx_moderation_max; /* TX_CQ_MODERATION, capped */
        unsigned max_iov;           /* SGEs of a zcopy */
        unsigned max_rd_atomic;
        unsigned fc_wnd;
        uint8_t timeout; /* exponent */
        uint8_t retry_count;
        uint8_t rnr_timer; /* code */
        uint8_t rnr_retry;
        int atomics; /* 64-bit fetch-add and cswap */
    } config;
};

extern uct_tl_t uct_rc_verbs_tl;
extern ucs_config_field_t uct_rc_verbs_iface_config_table[];

static inline uct_rc_iface_t *uct_rc_iface(uct_iface_h iface)
{
    return ucs_container_of(iface, uct_rc_iface_t, super.super.super);
}

static inline uct_rc_ep_t *uct_rc_ep(uct_ep_h ep)
{
    return ucs_container_of(ep, uct_rc_ep_t, super.super);
}

static inline uct_rc_iface_t *uct_rc_ep_iface(const uct_rc_ep_t *ep)
{
    return uct_rc_iface(ep->super.super.iface);
}

/** Requests posted and not yet done. */
static inline uint16_t uct_rc_ep_unretired(const uct_rc_ep_t *ep)
{
    return (uint16_t)(ep->tx_sn - ep->acked_sn);
}

/** Whether sequence @a a is at or before @a b (16-bit wrap-around). */
static inline int uct_rc_sn_le(uint16_t a, uint16_t b)
{
    return (int16_t)(a - b) <= 0;
}

/* ------------------------------------------------------------------------
 * The send path (rc_tx.c uses these, rc_ep.c and rc_iface.c too)
 */

/** Why an endpoint cannot post now: UCS_ERR_NO_RESOURCE (counted) or its
 *  failure status. */
ucs_status_t uct_rc_ep_tx_busy(uct_rc_iface_t *iface, uct_rc_ep_t *ep);

/** UCS_OK when @a ep may post one request now. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_rc_ep_tx_check(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    if (ucs_unlikely((ep->tx_available <= 0) || (iface->cq_available <= 0) ||
                     (ep->flags & UCT_RC_EP_FLAG_FAILED))) {
        return uct_rc_ep_tx_busy(iface, ep);
    }
    return UCS_OK;
}

/** The same for an active message, which also needs a credit. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_rc_ep_am_check(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    if (ucs_unlikely((ep->tx_available <= 0) || (iface->cq_available <= 0) ||
                     (ep->fc_credits <= 0) ||
                     (ep->flags & UCT_RC_EP_FLAG_FAILED))) {
        return uct_rc_ep_tx_busy(iface, ep);
    }
    return UCS_OK;
}

/** ibv_post_send failed: log, fail the ep, return the status. */
ucs_status_t uct_rc_ep_post_failed(uct_rc_ep_t *ep, int ret);

/**
 * Post @a wr on @a ep (resources checked by the caller): sequence number,
 * moderation (@a signal forces a signaled request), fence; @a op, when
 * not NULL, is queued to run when the request is done.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_rc_ep_post(uct_rc_iface_t *iface,
                                                       uct_rc_ep_t *ep,
                                                       struct ibv_send_wr *wr,
                                                       int signal,
                                                       uct_rc_op_t *op)
{
    struct ibv_send_wr *bad_wr;
    int ret;

    wr->next  = NULL;
    wr->wr_id = ep->tx_sn;
    if (signal || (++ep->unsignaled >= iface->config.tx_moderation)) {
        wr->send_flags |= IBV_SEND_SIGNALED;
        ep->unsignaled = 0;
    }
    if (ucs_unlikely(ep->flags & UCT_RC_EP_FLAG_FENCE)) {
        wr->send_flags |= IBV_SEND_FENCE;
        ep->flags &= (uint8_t)~UCT_RC_EP_FLAG_FENCE;
    }

    ret = ibv_post_send(ep->qp, wr, &bad_wr);
    if (ucs_unlikely(ret != 0)) {
        return uct_rc_ep_post_failed(ep, ret);
    }

    if (op != NULL) {
        op->sn = ep->tx_sn;
        ucs_queue_push(&ep->outstanding, &op->queue);
    }
    ++ep->tx_sn;
    --ep->tx_available;
    --iface->cq_available;
    return UCS_OK;
}

/** Header fields of a send of @a am_id: hands back the credits owed. */
static UCS_F_ALWAYS_INLINE void
uct_rc_ep_fill_hdr(uct_rc_ep_t *ep, uct_rc_hdr_t *hdr, uint8_t am_id)
{
    hdr->am_id   = am_id;
    hdr->credits = ep->fc_grant;
    ep->fc_grant = 0;
}

/* op handlers (rc_ep.c) */
void uct_rc_op_release(uct_rc_op_t *op, ucs_status_t status);
void uct_rc_op_complete(uct_rc_op_t *op, ucs_status_t status);
void uct_rc_op_get_bcopy_done(uct_rc_op_t *op, ucs_status_t status);
void uct_rc_op_atomic_done(uct_rc_op_t *op, ucs_status_t status);
void uct_rc_op_iface_flush_done(uct_rc_op_t *op, ucs_status_t status);

/* ------------------------------------------------------------------------
 * Endpoints (rc_ep.c)
 */
ucs_status_t uct_rc_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_rc_ep_destroy(uct_ep_h tl_ep);
ucs_status_t uct_rc_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr);
ucs_status_t uct_rc_ep_connect_to_ep(uct_ep_h tl_ep,
                                     const uct_device_addr_t *dev_addr,
                                     const uct_ep_addr_t *ep_addr);
ucs_status_t uct_rc_ep_flush(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp);
ucs_status_t uct_rc_ep_fence(uct_ep_h tl_ep, unsigned flags);
ucs_status_t uct_rc_ep_check(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp);
ucs_status_t uct_rc_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                   unsigned flags);
void uct_rc_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                             void *arg);

/** A request of @a ep with sequence @a sn is done with @a status: retire
 *  it and every earlier one. */
void uct_rc_ep_retire(uct_rc_iface_t *iface, uct_rc_ep_t *ep, uint16_t sn,
                      ucs_status_t status);

/** Mark @a ep failed with @a status and move its QP to the error state,
 *  so that every request still queued completes (flushed). */
void uct_rc_ep_set_failed(uct_rc_ep_t *ep, ucs_status_t status);

/** After completions: report a failed ep whose requests are all done to
 *  the error handler (once), free a drained zombie. Returns nonzero when
 *  the ep is gone. */
int uct_rc_ep_check_state(uct_rc_iface_t *iface, uct_rc_ep_t *ep);

/** Free an ep now (QP destroyed, ops released without completions). */
void uct_rc_ep_free(uct_rc_iface_t *iface, uct_rc_ep_t *ep);

/** Post the explicit grant of @a ep; UCS_ERR_NO_RESOURCE when no slot. */
ucs_status_t uct_rc_ep_send_grant(uct_rc_iface_t *iface, uct_rc_ep_t *ep);

/** On a failed ep whose last request was not signaled, post a signaled
 *  empty write (flushed at once) while cq_available > @a cq_floor.
 *  Returns 1 when posted. */
int uct_rc_ep_post_flush_marker(uct_rc_iface_t *iface, uct_rc_ep_t *ep,
                                int cq_floor);

/** Post a signaled empty RDMA write (flush and check markers). */
ucs_status_t uct_rc_ep_post_marker(uct_rc_iface_t *iface, uct_rc_ep_t *ep,
                                   uct_rc_op_t *op);

/** Object tree files of an endpoint. */
void uct_rc_ep_vfs_init(uct_ep_h tl_ep);

/* ------------------------------------------------------------------------
 * Send operations (rc_tx.c)
 */
ucs_status_t uct_rc_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length);
ucs_status_t uct_rc_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_rc_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                           uct_pack_callback_t pack_cb, void *arg,
                           unsigned flags);
ucs_status_t uct_rc_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                unsigned header_length, const uct_iov_t *iov,
                                size_t iovcnt, unsigned flags,
                                uct_completion_t *comp);
ucs_status_t uct_rc_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey);
ssize_t uct_rc_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey);
ucs_status_t uct_rc_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_rc_ep_get_bcopy(uct_ep_h tl_ep,
                                 uct_unpack_callback_t unpack_cb, void *arg,
                                 size_t length, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_rc_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_rc_ep_atomic64_post(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                     uint64_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey);
ucs_status_t uct_rc_ep_atomic64_fetch(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                      uint64_t value, uint64_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp);
ucs_status_t uct_rc_ep_atomic_cswap64(uct_ep_h tl_ep, uint64_t compare,
                                      uint64_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint64_t *result,
                                      uct_completion_t *comp);

/* ------------------------------------------------------------------------
 * Interface (rc_iface.c)
 */

/** Schedule @a ep's pending requests (resources came back). */
static inline void uct_rc_ep_schedule(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    if (!ucs_arbiter_group_is_empty(&ep->pending.group)) {
        ucs_arbiter_group_schedule(&iface->arbiter, &ep->pending.group);
    }
}

/**
 * Requests an ep may post unsignaled: TX_CQ_MODERATION, lowered as eps are
 * added so that all of them together hold at most half the send CQ. An
 * unsignaled request keeps its CQ entry counted until a later signaled one
 * of its ep completes, and an ep that sent a few messages and went idle
 * would otherwise hold them for ever: with enough such eps no ep of the
 * iface could post at all.
 */
void uct_rc_iface_update_moderation(uct_rc_iface_t *iface);

/**
 * The send CQ has no entry left (cq_available <= 0): post a signaled
 * marker, from the reserve, on idle endpoints that hold unsignaled
 * requests, looking at UCT_RC_RESCUE_SCAN table slots at most. Returns
 * the markers posted.
 */
unsigned uct_rc_iface_tx_rescue(uct_rc_iface_t *iface);

/** Queue @a ep for an explicit grant. */
void uct_rc_iface_queue_grant(uct_rc_iface_t *iface, uct_rc_ep_t *ep);

/** Take @a ep out of the grant queue. */
void uct_rc_iface_unqueue_grant(uct_rc_iface_t *iface, uct_rc_ep_t *ep);

/** Add an ep to the table / remove it; add fails only for memory. */
ucs_status_t uct_rc_ep_table_add(uct_rc_ep_table_t *table, uct_rc_ep_t *ep);
void uct_rc_ep_table_remove(uct_rc_ep_table_t *table, uct_rc_ep_t *ep);

static UCS_F_ALWAYS_INLINE unsigned
uct_rc_ep_table_home(const uct_rc_ep_table_t *table, uint32_t qp_num)
{
    return (unsigned)ucs_hash_u64(qp_num) & table->mask;
}

/** The ep of QP @a qp_num, or NULL. */
static UCS_F_ALWAYS_INLINE uct_rc_ep_t *
uct_rc_ep_table_find(const uct_rc_ep_table_t *table, uint32_t qp_num)
{
    unsigned i = uct_rc_ep_table_home(table, qp_num);
    uct_rc_ep_t *ep;

    while ((ep = table->slots[i]) != NULL) {
        if (ep->qp->qp_num == qp_num) {
            return ep;
        }
        i = (i + 1) & table->mask;
    }
    return NULL;
}

/** Walk every ep of the table (the body must not add or remove eps). */
#define uct_rc_ep_table_for_each(_ep, _i, _table)  \
    for ((_i) = 0; (_i) <= (_table)->mask; ++(_i)) \
        if (((_ep) = (_table)->slots[_i]) != NULL)

/**
 * A first send PSN for a new ep of @a iface: 24 random bits of their own,
 * independent of the QP number and of every other ep's (the system's
 * random source, UCT_RC_PSN_BATCH at a time). UCS_ERR_IO_ERROR when there
 * are no random bytes.
 */
ucs_status_t uct_rc_iface_new_psn(uct_rc_iface_t *iface, uint32_t *psn_p);

unsigned uct_rc_iface_progress(uct_iface_h tl_iface);

END_C_DECLS

#endif
