/*
 * The receive queue of a verbs interface: a QP's own receive queue
 * (ud_verbs) or a shared receive queue (rc_verbs), and the registered pool
 * of receive descriptors it is filled from.
 *
 * - Descriptors: the transport's fields first (uct_ib_rx_desc_t at their
 *   start: the lkey of the chunk), then the wire header and the payload
 *   as uct_rx_desc_layout_init() places them for the iface's rx_headroom
 *   and AM alignment. 128 per chunk, at most twice RX_QUEUE_LEN in all,
 *   so descriptors kept by handlers cannot take unbounded memory. Each
 *   work request has one SGE over the wire header and the segment.
 * - Posting fills the queue up to its target, in chains of at most
 *   `batch` work requests (RX_MAX_BATCH, capped by the transport). It
 *   stops when the pool is empty, and after a chain shorter than a batch.
 *   When the device refuses a chain: one error line, the descriptors from
 *   bad_wr on go back to the pool, those before it count as posted.
 * - Progress refills once a whole batch is missing
 *   (uct_ib_rxq_refill()), so a post is always a full chain.
 * - Target: the transport's first fill, at most RX_QUEUE_LEN. An SRQ
 *   arms its limit event at a quarter of the target; when the event says
 *   the queue ran low (the transport sets `low` from its async handler)
 *   uct_ib_rxq_grow() doubles the target, up to RX_QUEUE_LEN.
 *
 * The pool, its layout and its release callback are fields of the
 * transport's iface, which its receive path reads directly; the queue
 * sets them up in uct_ib_rxq_init() and cleans the pool up in
 * uct_ib_rxq_cleanup(). The QP or SRQ is the transport's: created between
 * the two, after uct_ib_rxq_init() and before uct_ib_rxq_start(), and
 * destroyed before uct_ib_rxq_cleanup().
 */
#ifndef UCT_IB_RXQ_H_
#define UCT_IB_RXQ_H_

#include "ib_iface.h"

BEGIN_C_DECLS

/** Most receive work requests posted in one chain. */
#define UCT_IB_RX_BATCH_MAX 128

/** The first fields of every receive descriptor of a verbs transport. */
typedef struct uct_ib_rx_desc {
    uint32_t lkey; /* of the chunk */
} uct_ib_rx_desc_t;

/** What a transport gives its receive queue at open. */
typedef struct uct_ib_rxq_params {
    const char *name;    /* the transport, for messages */
    const char *mp_name; /* the pool's */
    /* the descriptors: the transport's fields (uct_ib_rx_desc_t first),
     * the wire header before the payload, the largest payload */
    size_t priv_size;
    size_t hdr_len;
    size_t seg_size;
    /* where the transport keeps the pool, its layout, its release */
    ucs_mpool_t *mp;
    uct_rx_desc_layout_t *layout;
    uct_rx_desc_release_t *release;
    unsigned max_batch; /* cap of RX_MAX_BATCH (<= UCT_IB_RX_BATCH_MAX) */
    unsigned init_fill; /* first target; RX_QUEUE_LEN at most */
} uct_ib_rxq_params_t;

/** A receive queue. */
typedef struct uct_ib_rxq {
    unsigned posted; /* buffers in the queue */
    unsigned target; /* fill level, grows up to max */
    int low;         /* SRQ limit event seen (async): grow */
    unsigned batch;  /* work requests per chain */
    unsigned max;    /* RX_QUEUE_LEN */
    struct ibv_qp *qp;
    struct ibv_srq *srq;
    ucs_mpool_t *mp;
    const uct_rx_desc_layout_t *layout;
    const char *name;
    const char *dev_name; /* the iface's */
} uct_ib_rxq_t;

/**
 * Set up @a rxq of @a iface (RX_QUEUE_LEN, RX_MAX_BATCH) and its
 * descriptors: the layout, the release callback and the pool where
 * @a params says. Nothing is posted yet.
 *
 * @return UCS_OK, or the pool's status.
 */
ucs_status_t uct_ib_rxq_init(uct_ib_rxq_t *rxq, uct_ib_iface_t *iface,
                             const uct_ib_rxq_params_t *params);

/**
 * Start posting to the receive queue of @a qp, or to @a srq when @a qp
 * is NULL: fill it to the first target and, on an SRQ, arm the limit
 * event (when the device refuses, one debug line: the target stays).
 *
 * @return UCS_OK; UCS_ERR_NO_MEMORY (one error line) when not even one
 *         buffer could be posted.
 */
ucs_status_t uct_ib_rxq_start(uct_ib_rxq_t *rxq, struct ibv_qp *qp,
                              struct ibv_srq *srq);

/** Free the pool (descriptors that handlers still keep may remain). */
void uct_ib_rxq_cleanup(uct_ib_rxq_t *rxq);

/** Post buffers up to the target (see the top of this file); returns how
 *  many were posted. */
unsigned uct_ib_rxq_post(uct_ib_rxq_t *rxq);

/** The SRQ ran low: double the target (up to RX_QUEUE_LEN), post up to
 *  it and arm the limit event again at a quarter of it. */
void uct_ib_rxq_grow(uct_ib_rxq_t *rxq);

/** From progress: post when a whole batch is missing. */
static UCS_F_ALWAYS_INLINE void uct_ib_rxq_refill(uct_ib_rxq_t *rxq)
{
    if (rxq->target - rxq->posted >= rxq->batch) {
        uct_ib_rxq_post(rxq);
    }
}

END_C_DECLS

#endif
