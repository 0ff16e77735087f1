/*
 * ud_verbs: one unreliable-datagram queue pair per interface; reliability,
 * ordering and connections are ours.
 *
 * Packets. Every packet starts with uct_ud_hdr_t: the receiver's endpoint
 * id, a type (an AM id, PUT, a connection request or reply, an
 * acknowledgement), this packet's sequence number and a cumulative
 * acknowledgement of the reverse direction. Data packets (AM, PUT) are
 * numbered per endpoint and direction; connection packets and pure
 * acknowledgements are not numbered (their PSN is 0). Whatever a packet
 * type does not define (flags, reserved bytes, bytes after a control
 * packet, immediate data) must be zero or absent, or the packet is
 * dropped.
 *
 * Reliability. A sender keeps each data packet in a send descriptor from
 * the interface's registered pool, queued on the endpoint in sequence
 * order, until an acknowledgement covers it; it may have TX_WINDOW
 * packets unacknowledged. The receiver accepts only the next packet in
 * sequence: a duplicate is dropped and acknowledged again, a packet after
 * a gap is held (in the iface's reorder table, within its peer's share:
 * see the tables below) and answered by a NAK (an acknowledgement saying
 * what is missing), which makes the sender resend that at once. Without
 * any answer, the sender resends everything unacknowledged after
 * RESEND_TIMEOUT, doubling the wait each time up to TIMEOUT/4, and gives
 * up after TIMEOUT
 * without an acknowledgement: the endpoint fails with
 * UCS_ERR_ENDPOINT_TIMEOUT. The first wait follows what the interface
 * learned (uct_ud_iface_data_rto()): twice the smoothed time to the ACK
 * of packets sent once plus four deviations (Karn's rule: a resent
 * flight gives no sample), doubled for every ep's first resend until the
 * next sample, so that a peer that acknowledges late because it is busy
 * is not sent everything again by all its eps at once.
 *
 * Acknowledgements ride on every packet. A sender whose window is half
 * used asks for one (ACK_REQ, sent solicited so that it wakes a receiver
 * that sleeps), once until one comes. A packet whose completion waits
 * for its acknowledgement (zcopy) is asked for by the first pass over
 * the ACKs owed (end of progress, async context, timer, event arm) after
 * its ep stopped sending such packets: a stream costs one ask per burst,
 * not one per packet. Otherwise the receiver answers with a pure
 * acknowledgement at the end of a progress call once a quarter of the
 * peer's window waits, or from the interface timer.
 *
 * Connections. CONNECT_TO_EP: both sides know each other's endpoint id and
 * QP from the endpoint addresses, and packets flow at once. CONNECT_TO_IFACE:
 * the endpoint sends a connection request (CREQ) carrying its id, its
 * device address, a connection number and the target interface's secret
 * (from its address), repeated by the timer until a reply (CREP) names the
 * peer's endpoint id; packets sent meanwhile are numbered and kept, and
 * go out when the reply arrives. The
 * target matches the request to its endpoint for the same peer interface
 * and connection number, or creates an internal one; the n-th endpoint
 * either side creates towards the other gets connection number n, so two
 * sides that connect at once end up with one endpoint pair. A request
 * without the right secret is dropped; one that would make more than
 * MAX_PEER_EPS internal endpoints is refused (the requester repeats it).
 *
 * Pacing. Requests are not sent as a storm that would overflow the
 * target's receive queue: an interface has at most a window of CREQs
 * outstanding (sent, not answered), a sixteenth of the smaller of the
 * target's RX_QUEUE_LEN (in its interface address) and its own (the
 * replies land there), so that sixteen interfaces connecting at once fit.
 * Endpoints beyond wait in creation order, counted as connecting, and
 * their CREQ goes out as replies come in. A request is sent again only
 * when its reply is later than the interface's recent replies make
 * likely: RESEND_TIMEOUT at least, and twice the smoothed time to a
 * reply plus four times its deviation (1 s until the first reply),
 * doubled by each loss until the
 * next reply to a request sent once (after TCP's retransmission
 * timeout), so that replies delayed by a busy target are not taken for
 * losses. When a
 * request times out, the waiting requests to the same remote QP fail with
 * it. The window also follows the answers (creq.cwnd, after TCP's
 * congestion window): a wait that runs out (a CREQ's, or a data flight's
 * of an ep connected by CREQ) halves it, once per episode, and each
 * window of requests answered the first time adds one, so that a target
 * loaded by many requesters gets fewer new connections, not resends.
 *
 * Who reaches an endpoint. A packet reaches an endpoint only from the
 * remote QP number and GID (LID without a GRH) it is bound to, both
 * written into the packet by the sending device; an endpoint not yet
 * bound takes nothing, one waiting for its CREP only that reply. A CREQ
 * must carry the secret and name its own source. On RoCE these are
 * header fields of a UDP datagram, which whoever can send UDP to us with
 * the peer's address can forge (docs/architecture.md, ud_verbs).
 *
 * Disconnection. A destroyed endpoint that the peer knows becomes a
 * zombie: it sends DISC (not numbered; it names both ends) until the
 * peer answers DISC_REP, or for at most TIMEOUT. The peer frees the
 * internal endpoint it made for it; a user's endpoint stays. So peers
 * that come and go leave nothing behind.
 *
 * Silent peers. A peer that dies without a DISC (killed, its host gone)
 * would leave the internal endpoints its requests made. The timer's idle
 * sweep looks at every endpoint id once per TIMEOUT/8 (UCT_UD_IDLE_LOOKS),
 * paced by the time elapsed rather than by ticks, and at most
 * UCT_UD_IDLE_SWEEP_MAX ids per tick. Liveness is a peer interface's
 * (a remote QP: its entry in the address handle's peers): a packet on
 * any of its endpoints, found by a look, marks it seen, and its other
 * endpoints stay while it was seen within UCT_UD_IDLE_QUIET looks. An
 * internal endpoint with nothing to send whose peer interface was quiet
 * that long is probed at each further look (an ACK with ACK_REQ, which
 * a live peer answers, from its async context when it does not
 * progress): one probe per peer interface and look period, sent on the
 * first of its endpoints looked at and counted by the others, except at
 * an endpoint's last look, which probes it itself (a peer that lost one
 * endpoint without a DISC still answers for the others); only while
 * more than half the send queue is free. One that got no answer over
 * UCT_UD_IDLE_PROBES looks is freed at the next look, as is one that
 * failed (unacknowledged data for TIMEOUT). So a dead peer's endpoints
 * go within 1.625 TIMEOUT, a live peer has 3/4 TIMEOUT to answer (a
 * loaded process stalls for a while), and an idle live peer costs about
 * one probe and one answer per 7/8 TIMEOUT, whatever its endpoints.
 *
 * Threads. An interface timer on the worker's async context resends,
 * acknowledges and detects dead peers, and a handler on the completion
 * channel (the receive CQ armed for solicited completions) takes packets
 * that ask for an acknowledgement: a process that does not call progress
 * still acknowledges and resends (while progress is being called, they
 * leave the packets to it). Active messages taken there are queued
 * for the next progress call, which delivers them in order; a PUT is
 * applied (or refused) there at once, since the acknowledgement that
 * covers it tells the sender its data is in place. Progress and every
 * operation hold the async context's lock.
 */
#ifndef UCT_IB_UD_H_
#define UCT_IB_UD_H_

#include <uct/ib/base/ib_iface.h>
#include <uct/ib/base/ib_rxq.h>
#include <uct/base/uct_pending.h>
#include <ucs/async/async.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/queue.h>

#include <endian.h>
#include <string.h>

BEGIN_C_DECLS

#define UCT_UD_VERBS_NAME "ud_verbs"

/** The Q_Key of every ud_verbs QP. */
#define UCT_UD_QKEY 0x1ee7a330u

/** Bytes in front of every UD receive: the GRH, or on RoCE v2 with IPv4
 *  20 undefined bytes and the IPv4 header. */
#define UCT_UD_GRH_LEN 40

/** Endpoint ids are 24 bits; this one means "none" (a CREQ's target). */
#define UCT_UD_EP_ID_NONE 0xffffffu
#define UCT_UD_EP_ID_MAX  0xfffffeu

/** No ep in the connection table (an empty bucket, the end of a chain). */
#define UCT_UD_CONN_NONE 0xffffffffu

/** Largest TX_WINDOW: sequence comparisons need it below 2^15. */
#define UCT_UD_TX_WINDOW_MAX 16384

/** User buffers of an AM zcopy (the header is one more SGE). */
#define UCT_UD_MAX_ZCOPY_IOV 3

/** Looks of the idle sweep at every endpoint id per TIMEOUT. */
#define UCT_UD_IDLE_LOOKS 8

/** Looks at an internal endpoint without a packet from its peer before
 *  the idle sweep probes the peer. */
#define UCT_UD_IDLE_QUIET 5

/** Probes an internal endpoint's peer leaves unanswered before the
 *  endpoint is freed (idle sweep). */
#define UCT_UD_IDLE_PROBES 6

UCS_STATIC_ASSERT(UCT_UD_IDLE_QUIET + UCT_UD_IDLE_PROBES <= 15);

/** Most endpoint ids the idle sweep looks at per timer tick. */
#define UCT_UD_IDLE_SWEEP_MAX 4096

/** Most doublings of the CREQ retransmission timeout (losses without a
 *  new sample of the reply time). */
#define UCT_UD_CREQ_BACKOFF_MAX 6

/** Most doublings of the first data wait (uct_ud_iface_data_rto()):
 *  resends of several eps since the last fresh time sample. */
#define UCT_UD_DATA_BACKOFF_MAX 4

/** Largest user header of an AM zcopy. */
#define UCT_UD_MAX_AM_HDR 128

/** Packet types (uct_ud_hdr_t::type, low 6 bits); AM ids are 0..31. */
enum {
    UCT_UD_PKT_PUT  = 32,         /* uct_ud_put_hdr_t, data */
    UCT_UD_PKT_CREQ = 33,         /* uct_ud_creq_t, to UCT_UD_EP_ID_NONE */
    UCT_UD_PKT_CREP = 34,         /* uct_ud_crep_t */
    UCT_UD_PKT_ACK  = 35,         /* nothing: the header's ack_psn */
    UCT_UD_PKT_NAK  = 36,         /* an ACK from a receiver with a gap: then a
                                     64-bit map of the packets after the first
                                     missing one that it holds */
    UCT_UD_PKT_DISC         = 37, /* uct_ud_disc_t: the sender's ep is gone */
    UCT_UD_PKT_DISC_REP     = 38, /* uct_ud_disc_t: the DISC arrived */
    UCT_UD_PKT_LAST         = 39,
    UCT_UD_PKT_TYPE_MASK    = 0x3f,
    UCT_UD_PKT_FLAG_DENIED  = 0x40, /* a PUT of the peer's was refused */
    UCT_UD_PKT_FLAG_ACK_REQ = 0x80  /* answer with an ACK now */
};

/** The header of every packet (little endian, unaligned). */
typedef struct uct_ud_hdr {
    uint8_t dest_id[3]; /* receiver's ep id, UCT_UD_EP_ID_NONE for CREQ */
    uint8_t type;       /* UCT_UD_PKT_* | UCT_UD_PKT_FLAG_* */
    uint16_t psn;       /* of this packet (data only) */
    uint16_t ack_psn;   /* every data packet up to it arrived */
} UCS_S_PACKED uct_ud_hdr_t;

/** After the header of a PUT: where the data goes. */
typedef struct uct_ud_put_hdr {
    uint64_t address;
    uint32_t rkey;
} UCS_S_PACKED uct_ud_put_hdr_t;

/** An interface address: the QP, the secret a CREQ must present, and the
 *  length of its receive queue (a requester's window of outstanding CREQs
 *  is sized from it). */
typedef struct uct_ud_iface_addr {
    uint8_t qp_num[3];
    uint64_t secret;
    uint16_t rx_queue_len;
} UCS_S_PACKED uct_ud_iface_addr_t;

/** An endpoint address: the interface's and the endpoint id. */
typedef struct uct_ud_ep_addr {
    uct_ud_iface_addr_t iface;
    uint8_t ep_id[3];
} UCS_S_PACKED uct_ud_ep_addr_t;

/** A connection request (after the header). */
typedef struct uct_ud_creq {
    uint64_t secret;   /* the target iface's */
    uint8_t src_id[3]; /* the requesting ep */
    uint8_t reserved;
    uint32_t conn_sn;
    uct_ib_device_addr_t dev_addr; /* the requester's */
} UCS_S_PACKED uct_ud_creq_t;

/** A connection reply (after the header, whose dest_id is the
 *  requester's ep). */
typedef struct uct_ud_crep {
    uint8_t src_id[3]; /* the replying ep */
    uint8_t reserved;
    uint32_t conn_sn; /* of the request */
} UCS_S_PACKED uct_ud_crep_t;

/** A disconnect or its reply (after the header, whose dest_id is the
 *  receiver's ep): the sender's ep id, which the receiver must be
 *  connected to. */
typedef struct uct_ud_disc {
    uint8_t src_id[3];
    uint8_t reserved;
} UCS_S_PACKED uct_ud_disc_t;

static inline uint32_t uct_ud_u24_get(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
}

static inline void uct_ud_u24_set(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
}

/** Whether sequence @a a is before @a b (16-bit wrap-around). */
static inline int uct_ud_psn_lt(uint16_t a, uint16_t b)
{
    return (int16_t)(a - b) < 0;
}

static inline int uct_ud_psn_le(uint16_t a, uint16_t b)
{
    return (int16_t)(a - b) <= 0;
}

/**
 * What a received packet's first bytes say, checked (a peer's input):
 * @a buf holds @a length bytes after the 40-byte GRH area.
 */
typedef struct uct_ud_pkt_info {
    uint32_t dest_id;
    uint8_t type;  /* without flags */
    uint8_t flags; /* UCT_UD_PKT_FLAG_* */
    uint16_t psn;
    uint16_t ack_psn;
    uint32_t hdr_len; /* header and the type's fixed part */
} uct_ud_pkt_info_t;

/** The flags a packet of @a type may carry (what our senders set). */
static inline uint8_t uct_ud_pkt_flags_allowed(uint8_t type)
{
    switch (type) {
    case UCT_UD_PKT_CREQ:
    case UCT_UD_PKT_CREP:
        return 0;
    case UCT_UD_PKT_NAK:
    case UCT_UD_PKT_DISC:
    case UCT_UD_PKT_DISC_REP:
        return UCT_UD_PKT_FLAG_DENIED;
    default: /* AM, PUT, ACK */
        return UCT_UD_PKT_FLAG_DENIED | UCT_UD_PKT_FLAG_ACK_REQ;
    }
}

/** Whether packets of @a type carry a sequence number (AM and PUT). */
static inline int uct_ud_pkt_is_data(uint8_t type)
{
    return (type < UCT_AM_ID_MAX) || (type == UCT_UD_PKT_PUT);
}

/** The reserved byte of a control packet's fixed part, or NULL. */
static inline const uint8_t *uct_ud_pkt_reserved(const uint8_t *body,
                                                 uint8_t type)
{
    switch (type) {
    case UCT_UD_PKT_CREQ:
        return body + offsetof(uct_ud_creq_t, reserved);
    case UCT_UD_PKT_CREP:
        return body + offsetof(uct_ud_crep_t, reserved);
    case UCT_UD_PKT_DISC:
    case UCT_UD_PKT_DISC_REP:
        return body + offsetof(uct_ud_disc_t, reserved);
    default:
        return NULL;
    }
}

/**
 * Parse and check a packet: long enough for its type's fixed part, a known
 * type, CREQ exactly to UCT_UD_EP_ID_NONE and nothing else to it; then
 * nothing we do not define is set: only the flags of its type (see
 * uct_ud_pkt_flags_allowed()), a zero sequence number on a packet that is
 * not numbered (not AM or PUT), a zero ack_psn on a CREQ, zero reserved
 * bytes, and no bytes after a control packet's fixed part.
 * @return UCS_OK; UCS_ERR_MESSAGE_TRUNCATED; UCS_ERR_INVALID_PARAM (type,
 *         destination); UCS_ERR_UNSUPPORTED (something reserved is set).
 */
static inline ucs_status_t uct_ud_pkt_parse(const void *buf, size_t length,
                                            uct_ud_pkt_info_t *info)
{
    const uct_ud_hdr_t *hdr = (const uct_ud_hdr_t *)buf;
    const uint8_t *reserved;
    uint16_t psn, ack_psn;
    uint8_t type, flags;
    size_t fixed;

    if (length < sizeof(*hdr)) {
        return UCS_ERR_MESSAGE_TRUNCATED;
    }
    type = hdr->type & UCT_UD_PKT_TYPE_MASK;
    switch (type) {
    case UCT_UD_PKT_PUT:
        fixed = sizeof(uct_ud_put_hdr_t);
        break;
    case UCT_UD_PKT_CREQ:
        fixed = sizeof(uct_ud_creq_t);
        break;
    case UCT_UD_PKT_CREP:
        fixed = sizeof(uct_ud_crep_t);
        break;
    case UCT_UD_PKT_ACK:
        fixed = 0;
        break;
    case UCT_UD_PKT_DISC:
    case UCT_UD_PKT_DISC_REP:
        fixed = sizeof(uct_ud_disc_t);
        break;
    case UCT_UD_PKT_NAK:
        fixed = sizeof(uint64_t); /* which packets after the gap arrived */
        break;
    default:
        if (type >= UCT_AM_ID_MAX) {
            return UCS_ERR_INVALID_PARAM;
        }
        fixed = 0;
        break;
    }
    if (length < sizeof(*hdr) + fixed) {
        return UCS_ERR_MESSAGE_TRUNCATED;
    }
    if ((type == UCT_UD_PKT_CREQ) !=
        (uct_ud_u24_get(hdr->dest_id) == UCT_UD_EP_ID_NONE)) {
        return UCS_ERR_INVALID_PARAM;
    }
    flags = hdr->type & (uint8_t)~UCT_UD_PKT_TYPE_MASK;
    memcpy(&psn, &hdr->psn, sizeof(psn));
    memcpy(&ack_psn, &hdr->ack_psn, sizeof(ack_psn));
    reserved = uct_ud_pkt_reserved((const uint8_t *)(hdr + 1), type);
    if ((flags & (uint8_t)~uct_ud_pkt_flags_allowed(type)) ||
        (!uct_ud_pkt_is_data(type) &&
         ((psn != 0) || (length != sizeof(*hdr) + fixed))) ||
        ((type == UCT_UD_PKT_CREQ) && (ack_psn != 0)) ||
        ((reserved != NULL) && (*reserved != 0))) {
        return UCS_ERR_UNSUPPORTED;
    }
    info->dest_id = uct_ud_u24_get(hdr->dest_id);
    info->type    = type;
    info->flags   = flags;
    info->psn     = psn;
    info->ack_psn = ack_psn;
    info->hdr_len = (uint32_t)(sizeof(*hdr) + fixed);
    return UCS_OK;
}

/**
 * Whether a CREQ's device address names the datagram's source: with a GRH
 * (@a sgid, its source GID) the GIDs are equal; without one (InfiniBand
 * within a subnet, @a sgid NULL) the LID is the sender's @a slid. An
 * endpoint made for the request sends to that address, and takes packets
 * only from it.
 */
static inline int uct_ud_creq_from_source(const uct_ud_creq_t *creq,
                                          const uint8_t *sgid, uint16_t slid)
{
    uint16_t lid;

    if (sgid != NULL) {
        return !memcmp(sgid, creq->dev_addr.gid, 16);
    }
    memcpy(&lid, &creq->dev_addr.lid, sizeof(lid));
    return le16toh(lid) == slid;
}

/**
 * The source and destination GIDs of a received datagram's 40-byte GRH
 * area. With @a ipv4 (our GID is RoCE v2 IPv4-mapped), the last 20 bytes
 * are an IPv4 header and the first 20 are undefined; otherwise the area is
 * an IPv6/IB GRH. UCS_ERR_INVALID_PARAM when the version does not match.
 */
static inline ucs_status_t uct_ud_grh_gids(const uint8_t *grh, int ipv4,
                                           uint8_t *sgid, uint8_t *dgid)
{
    static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0,    0,
                                          0, 0, 0, 0, 0xff, 0xff};

    if (ipv4) {
        if ((grh[20] >> 4) != 4) {
            return UCS_ERR_INVALID_PARAM;
        }
        memcpy(sgid, v4_prefix, 12);
        memcpy(sgid + 12, grh + 32, 4);
        memcpy(dgid, v4_prefix, 12);
        memcpy(dgid + 12, grh + 36, 4);
        return UCS_OK;
    }
    if ((grh[0] >> 4) != 6) {
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(sgid, grh + 8, 16);
    memcpy(dgid, grh + 24, 16);
    return UCS_OK;
}

/** Configuration (UCX_UD_VERBS_*, UCX_UD_*, UCX_IB_*). */
typedef struct uct_ud_iface_config {
    uct_ib_iface_config_t super;
    double timeout;                  /* TIMEOUT: peer silence, s */
    double resend_timeout;           /* RESEND_TIMEOUT: first wait */
    double timer_tick;               /* TIMER_TICK: sweep period */
    unsigned tx_window;              /* TX_WINDOW */
    unsigned max_peer_eps;           /* MAX_PEER_EPS */
    unsigned long reorder_bufs;      /* REORDER_BUFS, or auto */
    unsigned long peer_reorder_bufs; /* PEER_REORDER_BUFS, auto or inf */
} uct_ud_iface_config_t;

typedef struct uct_ud_verbs_iface_config {
    uct_ud_iface_config_t super;
} uct_ud_verbs_iface_config_t;

typedef struct uct_ud_iface uct_ud_iface_t;
typedef struct uct_ud_ep uct_ud_ep_t;

/** uct_ud_send_desc_t::flags */
enum {
    UCT_UD_DESC_FLAG_MARKER = UCS_BIT(0), /* no packet: a flush waits */
    UCT_UD_DESC_FLAG_INLINE = UCS_BIT(1), /* posted inline: no WQE wait */
    UCT_UD_DESC_FLAG_ZCOPY  = UCS_BIT(2), /* user buffers follow */
    UCT_UD_DESC_FLAG_IFLUSH = UCS_BIT(3), /* comp is an iface flush's */
    UCT_UD_DESC_FLAG_KEPT   = UCS_BIT(4)  /* not sent yet: kept for the
                                             CREP */
};

/**
 * A send descriptor: a packet kept until acknowledged (then until its
 * last work request completed), or a flush marker. Then the packet:
 * header and data, registered (lkey).
 */
typedef struct uct_ud_send_desc {
    ucs_queue_elem_t queue; /* ep's unacked, or iface's deferred */
    uct_completion_t *comp; /* may be NULL */
    uint32_t wqe_sn;        /* iface send sn of the last post */
    uint32_t lkey;
    uint16_t psn;    /* markers: the last packet's before */
    uint16_t length; /* bytes of the packet in the buffer */
    uint8_t flags;   /* UCT_UD_DESC_FLAG_* */
    uint8_t iovcnt;  /* zcopy */
    int8_t status;   /* async_comps: of the completion */
    struct ibv_sge iov[UCT_UD_MAX_ZCOPY_IOV]; /* zcopy: the user buffers,
                                                 kept for resends */
} uct_ud_send_desc_t;

static inline uct_ud_hdr_t *uct_ud_desc_hdr(uct_ud_send_desc_t *desc)
{
    return (uct_ud_hdr_t *)(desc + 1);
}

/**
 * An ep's descriptors in sequence order, held by the last one alone (one
 * pointer, where ucs_queue_head_t takes two): the last's queue.next is the
 * first.
 */
typedef struct uct_ud_desc_queue {
    uct_ud_send_desc_t *last; /* NULL: empty */
} uct_ud_desc_queue_t;

static inline uct_ud_send_desc_t *uct_ud_desc_of(ucs_queue_elem_t *elem)
{
    return ucs_container_of(elem, uct_ud_send_desc_t, queue);
}

static UCS_F_ALWAYS_INLINE int
uct_ud_desc_queue_is_empty(const uct_ud_desc_queue_t *q)
{
    return q->last == NULL;
}

static UCS_F_ALWAYS_INLINE void uct_ud_desc_queue_push(uct_ud_desc_queue_t *q,
                                                       uct_ud_send_desc_t *desc)
{
    if (q->last == NULL) {
        desc->queue.next = &desc->queue;
    } else {
        desc->queue.next    = q->last->queue.next;
        q->last->queue.next = &desc->queue;
    }
    q->last = desc;
}

/** The first descriptor, or NULL. */
static UCS_F_ALWAYS_INLINE uct_ud_send_desc_t *
uct_ud_desc_queue_first(const uct_ud_desc_queue_t *q)
{
    return (q->last == NULL) ? NULL : uct_ud_desc_of(q->last->queue.next);
}

/** The descriptor after @a desc, or NULL after the last. */
static UCS_F_ALWAYS_INLINE uct_ud_send_desc_t *
uct_ud_desc_queue_next(const uct_ud_desc_queue_t *q, uct_ud_send_desc_t *desc)
{
    return (desc == q->last) ? NULL : uct_ud_desc_of(desc->queue.next);
}

/** Takes the first descriptor out of a queue that is not empty. */
static UCS_F_ALWAYS_INLINE uct_ud_send_desc_t *
uct_ud_desc_queue_pull(uct_ud_desc_queue_t *q)
{
    uct_ud_send_desc_t *first = uct_ud_desc_of(q->last->queue.next);

    if (first == q->last) {
        q->last = NULL;
    } else {
        q->last->queue.next = first->queue.next;
    }
    return first;
}

#define uct_ud_desc_queue_for_each(_desc, _q)                    \
    for ((_desc) = uct_ud_desc_queue_first(_q); (_desc) != NULL; \
         (_desc) = uct_ud_desc_queue_next(_q, _desc))

/** An address handle shared by every ep to one remote port. */
/** A peer interface (remote QP) behind an address handle */
typedef struct {
    uint32_t qp_num;
    uint32_t next_conn_sn;
    uint32_t seen;   /* a stamp when the idle sweep last found a packet
                        from it on one of its eps; 0: never */
    uint32_t probed; /* a stamp of the sweep's last probe of it; 0: never */
} uct_ud_ah_peer_t;

typedef struct uct_ud_ah {
    struct uct_ud_ah *next; /* in its hash bucket */
    struct ibv_ah *ah;
    uint8_t gid[16];
    uint16_t lid;
    uint8_t path_mtu; /* enum ibv_mtu of the pair */
    /* per remote QP (a peer interface): connection numbers given out
     * (CONNECT_TO_IFACE) and what the idle sweep knows of it */
    unsigned num_peers;
    uct_ud_ah_peer_t *peers;
    unsigned num_secrets;
    uint64_t *secrets; /* of peers[i]'s iface, for CREQs */
} uct_ud_ah_t;

/** uct_ud_ep_t::flags */
enum {
    UCT_UD_EP_FLAG_CONNECTED = UCS_BIT(0), /* dest_id known */
    UCT_UD_EP_FLAG_CREQ      = UCS_BIT(1), /* waiting for a CREP */
    UCT_UD_EP_FLAG_PRIVATE   = UCS_BIT(2), /* created by a peer's CREQ */
    UCT_UD_EP_FLAG_FAILED    = UCS_BIT(3), /* status holds why */
    UCT_UD_EP_FLAG_ERR_SENT  = UCS_BIT(4), /* handler called */
    UCT_UD_EP_FLAG_ACK_Q     = UCS_BIT(5), /* in iface->acks */
    UCT_UD_EP_FLAG_ACTIVE    = UCS_BIT(6), /* in iface->active */
    UCT_UD_EP_FLAG_IN_CONN   = UCS_BIT(7), /* in the connection table */
    UCT_UD_EP_FLAG_ZOMBIE    = UCS_BIT(8), /* destroyed by the user: tells
                                              the peer (DISC), then goes */
    UCT_UD_EP_FLAG_CREQ_WAIT = UCS_BIT(9), /* with CREQ: not sent yet, in
                                              iface->creq.waiting */
    /* bits 10-13: idle sweep looks without a packet (0..15), see
     * uct_ud_ep_idle_probes() */
    UCT_UD_EP_FLAG_PROBES_SHIFT = 10,
    UCT_UD_EP_FLAG_PROBES       = 15u << UCT_UD_EP_FLAG_PROBES_SHIFT,
    UCT_UD_EP_FLAG_COMP_UNASKED = UCS_BIT(14), /* a packet with a
                                                  completion went without
                                                  asking for an ACK: in
                                                  iface->acks to ask */
    UCT_UD_EP_FLAG_COMP_RECENT = UCS_BIT(15)   /* and more such since the
                                                  last pass over iface->acks:
                                                  the sender is busy, the
                                                  next pass asks */
};

/** uct_ud_ep_t::rx_flags */
enum {
    UCT_UD_EP_RX_ACK_NOW = UCS_BIT(0),      /* the peer asked for an ACK */
    UCT_UD_EP_RX_NAK     = UCS_BIT(1),      /* packets held after a gap: the
                                               timer sends a NAK */
    UCT_UD_EP_RX_SEEN = UCS_BIT(2),         /* a packet arrived since the
                                               idle sweep looked */
    UCT_UD_EP_RX_DENIED       = UCS_BIT(3), /* tell the peer: PUT refused */
    UCT_UD_EP_TX_DENIED       = UCS_BIT(4), /* the peer refused our PUT */
    UCT_UD_EP_TX_CREQ_RESENT  = UCS_BIT(5), /* no time sample of its CREP */
    UCT_UD_EP_TX_ACK_REQ_SENT = UCS_BIT(6), /* since the last
                                              acknowledgement */
    UCT_UD_EP_TX_TIMED = UCS_BIT(7)         /* the first unacknowledged packet
                                               went at ack_time, none went twice:
                                               its ACK times a reply (Karn) */
};

/**
 * uct_ud_ep_t::ack_time when the window moved (a send to an idle peer, an
 * acknowledgement) since the last timer sweep: the sweep puts its own time
 * there and starts the resend wait. The fast path reads no clock (a
 * system call where the clock has no vDSO, as in many VMs), and the waits
 * come out up to one TIMER_TICK longer, never shorter.
 *
 * An endpoint's times are 32-bit stamps (uct_ud_iface_stamp()): the
 * ucs_time_t since the interface's iface->time.base, in units of
 * 2^time.shift clock ticks. The shift makes a unit 1-2 us, or longer when
 * TIMEOUT would exceed 2^29 units (about 9 min at 1 us). A time since a
 * stamp is read modulo 2^32 units (at least 71 min) and a deadline is
 * compared as a signed difference (up to 2^31 units, 35 min, ahead); the
 * longest interval compared is TIMEOUT, and the timer looks at every ep
 * with something to wait for at each TIMER_TICK, far inside either
 * range. Stamp 0 is never made (UCT_UD_TIME_AT_SWEEP).
 */
#define UCT_UD_TIME_AT_SWEEP 0

/** Largest TIMEOUT in stamp units (see UCT_UD_TIME_AT_SWEEP). */
#define UCT_UD_TIME_MAX_UNITS (1u << 29)

/**
 * An endpoint. Kept to 120 bytes, a 128-byte heap block with malloc's
 * header (and a peer's ep costs that beside its table entries); anything
 * added here must make room.
 */
struct uct_ud_ep {
    uct_base_ep_t super;
    uct_ud_ah_t *ah;             /* NULL until connected */
    uct_ud_desc_queue_t unacked; /* by psn */
    uct_pending_group_t pending;
    ucs_list_link_t active; /* in iface->active */
    uint32_t conn_next;     /* id of the next ep in the connection
                               table's bucket, UCT_UD_CONN_NONE: last */
    uint32_t ack_time;      /* last progress of our window (a stamp), or
                               UCT_UD_TIME_AT_SWEEP */
    uint32_t resend_time;   /* next resend of everything (a stamp) */
    uint32_t id;
    uint32_t dest_id;
    uint32_t dest_qpn;
    uint32_t conn_sn;
    struct {
        uint16_t psn;    /* of the next packet */
        uint16_t acked;  /* every packet up to it acked */
        uint16_t resend; /* next to resend (== psn: none) */
        uint8_t backoff; /* resends without an answer */
    } tx;
    struct {
        uint16_t expected; /* next psn to accept */
        uint16_t acked;    /* last ack_psn we sent */
        uint16_t ooo;      /* packets held after a gap */
    } rx;
    uint16_t flags;       /* UCT_UD_EP_FLAG_* */
    uint8_t rx_flags;     /* UCT_UD_EP_RX_* */
    int8_t status;        /* why it failed */
    uint16_t creq_window; /* CREQs of the iface outstanding at most while
                             this ep's is sent (from the peer's address) */
};

UCS_STATIC_ASSERT(sizeof(struct uct_ud_ep) <= 120);

/** Idle sweep looks at @a ep without a packet from its peer. */
static inline unsigned uct_ud_ep_idle_probes(const uct_ud_ep_t *ep)
{
    return (ep->flags & UCT_UD_EP_FLAG_PROBES) >> UCT_UD_EP_FLAG_PROBES_SHIFT;
}

static inline void uct_ud_ep_set_idle_probes(uct_ud_ep_t *ep, unsigned n)
{
    ep->flags = (uint16_t)((ep->flags & ~UCT_UD_EP_FLAG_PROBES) |
                           ((n << UCT_UD_EP_FLAG_PROBES_SHIFT) &
                            UCT_UD_EP_FLAG_PROBES));
}

/** Receive descriptor fields before the GRH area. */
typedef struct uct_ud_rx_desc {
    uct_ib_rx_desc_t super;
    uint32_t length;        /* async_rx: payload bytes */
    ucs_queue_elem_t queue; /* iface->async_rx */
    uint32_t ep_id;         /* async_rx, ooo: of the ep */
    uint16_t psn;           /* ooo: of the packet */
    uint8_t type;           /* async_rx, ooo: AM id or PUT */
    uint8_t hdr_len;        /* async_rx, ooo: header and fixed part */
} uct_ud_rx_desc_t;

/** A remote QP holding packets after a gap (iface->ooo.peers). */
typedef struct uct_ud_ooo_peer {
    const uct_ud_ah_t *ah; /* NULL: a free slot */
    uint32_t qp_num;
    uint32_t held;
} uct_ud_ooo_peer_t;

/** The interface. */
struct uct_ud_iface {
    uct_ib_iface_t super;
    struct ibv_qp *qp;
    uint64_t secret;
    ucs_async_context_t *async; /* the worker's, or own_async */
    ucs_async_context_t *own_async;
    int timer_id;        /* -1: none */
    int channel_handler; /* the channel fd is watched */
    uct_rx_desc_layout_t rx_layout;
    uct_rx_desc_release_t rx_release;
    ucs_mpool_t rx_mp;
    ucs_mpool_t tx_mp;     /* packets (registered) */
    ucs_mpool_t marker_mp; /* flush markers */
    ucs_arbiter_t arbiter;
    uct_ib_rxq_t rx; /* the QP's receive buffers */
    struct {
        int available;      /* send queue slots */
        uint32_t sn;        /* of the next work request */
        uint32_t completed; /* every request before it done */
        unsigned unsignaled;
        ucs_queue_head_t deferred; /* acked, last WQE not done */
    } tx;
    struct {
        uct_ud_ep_t **slots; /* by ep id, NULL when free */
        unsigned size;
        unsigned count;
        unsigned next;        /* where the id search starts */
        unsigned used;        /* ids below were given out */
        unsigned num_private; /* with UCT_UD_EP_FLAG_PRIVATE */
        unsigned num_zombies; /* with UCT_UD_EP_FLAG_ZOMBIE */
    } eps;
    struct {
        uct_ud_ah_t **buckets;
        unsigned mask;
        unsigned count;
    } ahs;
    struct {
        uint32_t *buckets; /* first ep id, chained by ep->conn_next;
                              UCT_UD_CONN_NONE: empty */
        unsigned mask;
        unsigned count;
    } conns;
    ucs_list_link_t active; /* eps the timer looks at */
    struct {
        ucs_time_t base; /* stamp 0 (uct_ud_iface_stamp()) */
        unsigned shift;  /* a stamp unit is 2^shift ticks */
    } time;
    struct {
        ucs_list_link_t waiting; /* eps whose CREQ waits (by ep->active) */
        unsigned outstanding;    /* CREQs sent, not answered, not yet
                                    taken for lost */
        ucs_time_t srtt;         /* smoothed time to a CREP, 0: none yet */
        ucs_time_t rttvar;       /* its mean deviation */
        unsigned backoff;        /* the timeout doubled: loss episodes
                                    since the last sample */
        ucs_time_t backoff_time; /* of the last doubling, 0: none yet */
        unsigned cwnd;           /* CREQs outstanding at most now (and at
                                    most an ep's creq_window): halved
                                    when a wait runs out, one more per
                                    cwnd CREQs answered without a loss */
        unsigned cwnd_count;     /* answers towards the next increase */
        ucs_time_t cut_time;     /* of the last halving, 0: none yet */
    } creq;
    struct {
        ucs_time_t srtt;   /* smoothed time to a data ACK, 0: none yet */
        ucs_time_t rttvar; /* its mean deviation */
        unsigned backoff;  /* the first wait doubled: resends since */
    } data;
    ucs_time_t tick_now;  /* of the timer's last sweep */
    unsigned idle_cursor; /* next ep id the idle sweep looks at */
    uint64_t idle_credit; /* of the idle sweep (ud_iface.c) */
    ucs_time_t idle_last; /* when the idle sweep last earned credit */
    struct {
        uct_ud_ep_t **eps; /* owing an ACK */
        unsigned count;
        unsigned max;
    } acks;
    ucs_queue_head_t async_rx; /* taken by the async handler */
    struct {
        uct_ud_rx_desc_t **slots; /* (ep id, psn) -> packet held */
        unsigned mask;            /*   after a gap; open addressing */
        unsigned count;
        unsigned max;             /* REORDER_BUFS: held at most */
        unsigned share;           /* PEER_REORDER_BUFS: by one peer */
        uct_ud_ooo_peer_t *peers; /* (ah, remote QP) -> held; open */
        unsigned peers_mask;      /*   addressing, only while > 0 */
        unsigned num_peers;
    } ooo;
    ucs_queue_head_t async_comps; /* acked there, comp to call */
    volatile int async_fatal;     /* device failed (async) */
    int timeouts_due;             /* the timer saw a dead peer */
    int progressed;               /* progress ran since the last
                                     timer tick */
    int resend_blocked;           /* a resend ran out of slots */
    int event_fd;                 /* the user's (eventfd), or -1 */
    unsigned armed;               /* UCT_EVENT_* the user waits for */
    ucs_log_limit_t proto_log;    /* bad packets from peers */
    struct {
        uint64_t rx_dropped;     /* not accepted, any reason */
        uint64_t rx_dup;         /* duplicates */
        uint64_t rx_stale;       /* for eps destroyed here */
        uint64_t rx_ooo;         /* held after a gap */
        uint64_t rx_over_share;  /* after a gap, its peer's share full */
        uint64_t rx_evicted;     /* held, given up for a peer under its
                                    share */
        uint64_t rx_ooo_full;    /* after a gap, no room and nobody at
                                    its share */
        uint64_t tx_resent;      /* packets sent again */
        uint64_t tx_acks;        /* pure ACKs and NAKs */
        uint64_t tx_ack_reqs;    /* of them, those that asked for one */
        uint64_t tx_no_slot;     /* control packets that found the send
                                    queue full (sent later) */
        uint64_t put_denied;     /* PUTs refused by the key check */
        uint64_t creq_denied;    /* CREQs without the secret */
        uint64_t creq_refused;   /* over MAX_PEER_EPS */
        uint64_t creq_queued;    /* CREQs that waited for the window */
        uint64_t creq_resent;    /* CREQs sent again (no CREP in time) */
        uint64_t creq_cwnd_cuts; /* halvings of the CREQ window */
        uint64_t disc_rx;        /* peers' eps gone */
        uint64_t idle_probes;    /* probes of silent peers (idle sweep) */
        uint64_t peer_reclaimed; /* peers' eps freed: the peer was silent
                                    or failed */
    } stats;
    struct {
        size_t max_inline;
        size_t seg_size; /* largest packet payload */
        unsigned tx_queue_len;
        unsigned tx_moderation;
        unsigned tx_window;
        unsigned max_peer_eps;
        unsigned ack_thresh; /* a pure ACK after this many */
        ucs_time_t timeout;
        ucs_time_t resend_timeout;
        ucs_time_t timer_tick;
        unsigned max_iov; /* SGEs of a send */
        int ipv4;         /* our GID is IPv4-mapped */
        int roce;         /* our port is RoCE: datagrams carry a GRH */
    } config;
};

extern uct_tl_t uct_ud_verbs_tl;
extern ucs_config_field_t uct_ud_verbs_iface_config_table[];

static inline uct_ud_iface_t *uct_ud_iface(uct_iface_h iface)
{
    return ucs_container_of(iface, uct_ud_iface_t, super.super.super);
}

static inline uct_ud_ep_t *uct_ud_ep(uct_ep_h ep)
{
    return ucs_container_of(ep, uct_ud_ep_t, super.super);
}

static inline uct_ud_iface_t *uct_ud_ep_iface(const uct_ud_ep_t *ep)
{
    return uct_ud_iface(ep->super.super.iface);
}

static inline void uct_ud_enter(uct_ud_iface_t *iface)
{
    ucs_async_block(iface->async);
}

static inline void uct_ud_leave(uct_ud_iface_t *iface)
{
    ucs_async_unblock(iface->async);
}

/** The ep of id @a id, or NULL. */
static inline uct_ud_ep_t *uct_ud_iface_ep(const uct_ud_iface_t *iface,
                                           uint32_t id)
{
    return (id < iface->eps.size) ? iface->eps.slots[id] : NULL;
}

/** The stamp of time @a t (see UCT_UD_TIME_AT_SWEEP): never 0. */
static inline uint32_t uct_ud_iface_stamp(const uct_ud_iface_t *iface,
                                          ucs_time_t t)
{
    uint32_t stamp = (uint32_t)((t - iface->time.base) >> iface->time.shift);

    return stamp + (stamp == UCT_UD_TIME_AT_SWEEP);
}

/** The time from @a stamp (in the past) to @a now. */
static inline ucs_time_t uct_ud_iface_since(const uct_ud_iface_t *iface,
                                            uint32_t stamp, ucs_time_t now)
{
    return (ucs_time_t)(uint32_t)(uct_ud_iface_stamp(iface, now) - stamp)
           << iface->time.shift;
}

/** Whether @a now is before the time of @a stamp. */
static inline int uct_ud_iface_before(const uct_ud_iface_t *iface,
                                      ucs_time_t now, uint32_t stamp)
{
    return (int32_t)(uct_ud_iface_stamp(iface, now) - stamp) < 0;
}

/* ------------------------------------------------------------------------
 * Interface (ud_iface.c)
 */
unsigned uct_ud_iface_progress(uct_iface_h tl_iface);

/** Queue @a ep to send a pure ACK (or NAK) at the end of progress. */
void uct_ud_iface_queue_ack(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** Take @a ep out of the ACK queue. */
void uct_ud_iface_unqueue_ack(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** Send the ACKs owed: @a all, or only those the peer waits for (ud_tx.c,
 *  with the queue). */
void uct_ud_iface_send_acks(uct_ud_iface_t *iface, int all);

/**
 * When completions taken by the async context wait for progress: queues a
 * marker with @a comp behind them (UCS_INPROGRESS; without @a comp just
 * UCS_INPROGRESS), else returns @a status. The flushes call it.
 */
ucs_status_t uct_ud_iface_flush_after_async(uct_ud_iface_t *iface,
                                            uct_completion_t *comp,
                                            ucs_status_t status);

/** Post one packet: @a sge[0..num_sge-1] to @a ep's peer (or @a ah and
 *  @a qpn when ep is NULL). @a inl: send inline. Returns the status. */
ucs_status_t uct_ud_iface_post(uct_ud_iface_t *iface, uct_ud_ah_t *ah,
                               uint32_t qpn, struct ibv_sge *sge, int num_sge,
                               int inl, int solicited, int signal);

/** Free a descriptor whose packet is acknowledged (or abandoned), now or
 *  once its last work request completed. */
void uct_ud_iface_desc_done(uct_ud_iface_t *iface, uct_ud_send_desc_t *desc);

/* ------------------------------------------------------------------------
 * Tables (ud_tables.c)
 */

/** Give @a ep an id; UCS_ERR_NO_MEMORY/NO_RESOURCE when none is left. */
ucs_status_t uct_ud_iface_add_ep(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** Free the id of @a ep (nothing when it has none). */
void uct_ud_iface_remove_ep(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** The shared address handle of a peer port (created on first use). */
ucs_status_t uct_ud_iface_get_ah(uct_ud_iface_t *iface,
                                 const uct_ib_device_addr_t *addr,
                                 uct_ud_ah_t **ah_p);

/** The next connection number towards remote QP @a qp_num of @a ah. */
/** The entry of remote QP @a qp_num of @a ah; with @a add, made when
 *  missing (NULL when out of memory). */
uct_ud_ah_peer_t *uct_ud_ah_peer(uct_ud_ah_t *ah, uint32_t qp_num, int add);

ucs_status_t uct_ud_ah_next_conn_sn(uct_ud_ah_t *ah, uint32_t qp_num,
                                    uint32_t *conn_sn_p);

/** Destroy every address handle of @a iface and free their table. */
void uct_ud_iface_ahs_cleanup(uct_ud_iface_t *iface);

/* The connection table: (ah, dest_qpn, conn_sn) -> ep. */

/** Add @a ep under its (ah, dest_qpn, conn_sn). */
ucs_status_t uct_ud_iface_conn_add(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** Take @a ep out of the connection table (nothing when it is not in). */
void uct_ud_iface_conn_remove(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** The ep of connection (@a ah, @a qp_num, @a conn_sn), or NULL. */
uct_ud_ep_t *uct_ud_iface_conn_find(const uct_ud_iface_t *iface,
                                    const uct_ud_ah_t *ah, uint32_t qp_num,
                                    uint32_t conn_sn);

/*
 * Packets held after a gap, counted per ep (ep->rx.ooo) and per peer: the
 * remote QP (ah, dest_qpn) of the eps, shared by every ep of one peer
 * interface. A peer holds at most ooo.share packets; when the table is
 * full, a packet of a peer under its share takes the place of every
 * packet held by a peer that holds its whole share (they are dropped: the
 * sender resends them), never of a peer under its share.
 */

/** Hold @a rdesc (a packet of connected @a ep) under its (ep id, psn).
 *  UCS_ERR_ALREADY_EXISTS: held already; UCS_ERR_EXCEEDS_LIMIT: the peer
 *  holds its share; UCS_ERR_NO_RESOURCE: the table is full and no peer
 *  holds its whole share. Counted in iface->stats. */
ucs_status_t uct_ud_iface_ooo_add(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                  uct_ud_rx_desc_t *rdesc);

/** Take the held packet of (@a ep, @a psn) out, or NULL. */
uct_ud_rx_desc_t *uct_ud_iface_ooo_take(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                        uint16_t psn);

/** Whether the packet of (@a ep_id, @a psn) is held. */
int uct_ud_iface_ooo_has(const uct_ud_iface_t *iface, uint32_t ep_id,
                         uint16_t psn);

/** Release every packet held for @a ep. */
void uct_ud_iface_ooo_drop_ep(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/* ------------------------------------------------------------------------
 * Endpoints (ud_ep.c)
 */
ucs_status_t uct_ud_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_ud_ep_destroy(uct_ep_h tl_ep);
ucs_status_t uct_ud_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr);
ucs_status_t uct_ud_ep_connect_to_ep(uct_ep_h tl_ep,
                                     const uct_device_addr_t *dev_addr,
                                     const uct_ep_addr_t *ep_addr);
ucs_status_t uct_ud_ep_flush(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp);
ucs_status_t uct_ud_ep_fence(uct_ep_h tl_ep, unsigned flags);
ucs_status_t uct_ud_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                   unsigned flags);
void uct_ud_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                             void *arg);

/** A new ep of @a iface (not yet connected, no id). */
ucs_status_t uct_ud_ep_alloc(uct_ud_iface_t *iface, uct_ud_ep_t **ep_p);

/** Free @a ep: its descriptors, its id, its table entries. */
void uct_ud_ep_free(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** A received packet for @a ep (checked, in sequence or not). */
void uct_ud_ep_rx(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                  const uct_ud_pkt_info_t *info, void *obj, void *packet,
                  unsigned length, int async);

/** Deliver a data packet taken in sequence (AM handler or PUT). Returns
 *  nonzero when the handler kept the descriptor. */
int uct_ud_ep_deliver(uct_ud_iface_t *iface, uct_ud_ep_t *ep, uint8_t type,
                      void *obj, void *packet, unsigned hdr_len,
                      unsigned length);

/** A CREQ from a peer (secret already checked by the caller). */
void uct_ud_iface_rx_creq(uct_ud_iface_t *iface, const struct ibv_wc *wc,
                          const uct_ud_creq_t *creq, const uint8_t *sgid);

/** Send a pure ACK (or NAK) now; UCS_ERR_NO_RESOURCE when no slot. */
ucs_status_t uct_ud_ep_send_ack(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                int ask);

/** Send @a ep's CREQ (again). */
ucs_status_t uct_ud_ep_send_creq(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/**
 * Fail the eps whose CREQ waits for the window and goes to remote QP
 * @a qp_num of @a ah: a request to it timed out, so theirs would too. The
 * error handler runs for each (it may destroy any ep). Returns how many.
 */
unsigned uct_ud_iface_creq_fail_waiting(uct_ud_iface_t *iface,
                                        const uct_ud_ah_t *ah, uint32_t qp_num);

/**
 * The idle sweep's look at @a ep, an ep a peer's request made, at @a now:
 * freed when it failed, or when neither it nor another ep of the same
 * peer interface got a packet over UCT_UD_IDLE_QUIET looks and then
 * UCT_UD_IDLE_PROBES more, each of which probed the peer (an ACK that
 * asks for one: one probe per peer interface and look period, sent on
 * the first of its eps looked at; an ep's last look probes it itself).
 * Returns nonzero when it freed the ep.
 */
int uct_ud_ep_idle_visit(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                         ucs_time_t now);

/** The timer's look at @a ep: resends, dead peer, CREQ. */
void uct_ud_ep_timer(uct_ud_iface_t *iface, uct_ud_ep_t *ep, ucs_time_t now);

/** Resend unacknowledged packets from ep->tx.resend while slots last. */
void uct_ud_ep_resend(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** The first wait for an acknowledgement of data (ud_ep.c). */
ucs_time_t uct_ud_iface_data_rto(const uct_ud_iface_t *iface);

/** Mark @a ep failed: every queued operation completes with @a status,
 *  the handler is called once (not for @a silent failures). */
void uct_ud_ep_set_failed(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                          ucs_status_t status, int silent);

/** Object tree files of an endpoint. */
void uct_ud_ep_vfs_init(uct_ep_h tl_ep);

/** Add @a ep to / take it from the timer's list. */
void uct_ud_ep_activate(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

static inline void uct_ud_ep_deactivate(uct_ud_ep_t *ep)
{
    if (ep->flags & UCT_UD_EP_FLAG_ACTIVE) {
        ucs_list_del(&ep->active);
        ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_ACTIVE;
    }
}

/** Post a control packet of @a length bytes at @a buf to (@a ah, @a qpn):
 *  inline when it fits, else from a descriptor. */
ucs_status_t uct_ud_iface_send_ctl(uct_ud_iface_t *iface, uct_ud_ah_t *ah,
                                   uint32_t qpn, const void *buf, size_t length,
                                   int solicited);

/** Send a DISC or DISC_REP (@a type) to @a ep's peer. */
ucs_status_t uct_ud_ep_send_disc(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                 uint8_t type);

/** Set @a ep's next resend time: the first wait doubled per resend. */
void uct_ud_ep_backoff(uct_ud_iface_t *iface, uct_ud_ep_t *ep, ucs_time_t now);

/* ------------------------------------------------------------------------
 * Connections (ud_conn.c)
 */

/** @a ep stops connecting (answered, failed, destroyed): it leaves the
 *  queue of waiting CREQs, or its place in the window goes to the next. */
void uct_ud_ep_creq_end(uct_ud_iface_t *iface, uct_ud_ep_t *ep);

/** Sends the waiting CREQs that the window and the free send slots
 *  have room for. */
void uct_ud_iface_creq_next(uct_ud_iface_t *iface);

/** A packet of @a ep sent at the stamp @a sent had no answer within its
 *  whole wait: halve the CREQ window, once per episode. */
void uct_ud_iface_creq_cwnd_cut(uct_ud_iface_t *iface, const uct_ud_ep_t *ep,
                                uint32_t sent, ucs_time_t now);

/** The timer's look at @a ep, whose CREQ is unanswered and due. */
void uct_ud_ep_creq_timer(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                          ucs_time_t now);

/** A CREP for @a ep. */
void uct_ud_ep_rx_crep(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                       const void *packet);

/** A reply time @a rtt: the smoothed time @a srtt (0: no sample yet) and
 *  its mean deviation @a rttvar move towards it (as TCP's, RFC 6298). */
static inline void uct_ud_rtt_update(ucs_time_t *srtt, ucs_time_t *rttvar,
                                     ucs_time_t rtt)
{
    ucs_time_t diff;

    if (*srtt == 0) {
        *srtt   = ucs_max(rtt, 1);
        *rttvar = rtt / 2;
        return;
    }
    diff    = (rtt > *srtt) ? (rtt - *srtt) : (*srtt - rtt);
    *rttvar = (3 * *rttvar + diff) / 4;
    *srtt   = ucs_max((7 * *srtt + rtt) / 8, 1);
}

/** The longest wait for an answer before sending again: a quarter of
 *  TIMEOUT, so that an ep tries a few times before it fails, and a
 *  loaded peer whose answers take longer than a fixed cap is not sent
 *  everything again each time (each resend more work for it). */
static inline ucs_time_t uct_ud_iface_max_wait(const uct_ud_iface_t *iface)
{
    return ucs_max(iface->config.timeout / 4, 1);
}

/** Whether @a ep can send a packet now. */
static UCS_F_ALWAYS_INLINE int uct_ud_ep_can_send(const uct_ud_iface_t *iface,
                                                  const uct_ud_ep_t *ep)
{
    /* an ep waiting for its CREP keeps packets until it has one */
    return !(ep->flags & UCT_UD_EP_FLAG_FAILED) &&
           ((ep->flags & (UCT_UD_EP_FLAG_CONNECTED | UCT_UD_EP_FLAG_CREQ)) !=
            0) &&
           ((uint16_t)(ep->tx.psn - ep->tx.acked - 1) <
            iface->config.tx_window) &&
           (iface->tx.available > 1) &&
           ((ep->tx.resend == ep->tx.psn) ||
            !(ep->flags & UCT_UD_EP_FLAG_CONNECTED));
}

/** Schedule @a ep's pending requests. */
static inline void uct_ud_ep_schedule(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    if (!ucs_arbiter_group_is_empty(&ep->pending.group)) {
        ucs_arbiter_group_schedule(&iface->arbiter, &ep->pending.group);
    }
}

/** Fill the header of a packet of @a ep, piggybacking our ACK. */
static UCS_F_ALWAYS_INLINE void uct_ud_ep_fill_hdr(uct_ud_iface_t *iface,
                                                   uct_ud_ep_t *ep,
                                                   uct_ud_hdr_t *hdr,
                                                   uint8_t type, uint16_t psn)
{
    uint16_t ack_psn = (uint16_t)(ep->rx.expected - 1);

    uct_ud_u24_set(hdr->dest_id, ep->dest_id);
    if (ucs_unlikely(ep->rx_flags & UCT_UD_EP_RX_DENIED)) {
        type |= UCT_UD_PKT_FLAG_DENIED;
        ep->rx_flags &= (uint8_t)~UCT_UD_EP_RX_DENIED;
    }
    hdr->type = type;
    memcpy(&hdr->psn, &psn, sizeof(psn));
    memcpy(&hdr->ack_psn, &ack_psn, sizeof(ack_psn));
    ep->rx.acked = ack_psn;
    if (ucs_unlikely(ep->flags & UCT_UD_EP_FLAG_ACK_Q)) {
        if (!(ep->flags & UCT_UD_EP_FLAG_COMP_UNASKED)) {
            uct_ud_iface_unqueue_ack(iface, ep);
        } else {
            /* stays queued to ask; what it owed rides here */
            ep->rx_flags &= (uint8_t)~UCT_UD_EP_RX_ACK_NOW;
        }
    }
}

/* ------------------------------------------------------------------------
 * Send operations (ud_tx.c)
 */
ucs_status_t uct_ud_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length);
ucs_status_t uct_ud_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_ud_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                           uct_pack_callback_t pack_cb, void *arg,
                           unsigned flags);
ucs_status_t uct_ud_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                unsigned header_length, const uct_iov_t *iov,
                                size_t iovcnt, unsigned flags,
                                uct_completion_t *comp);
ucs_status_t uct_ud_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey);
ssize_t uct_ud_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey);

/** Post the packet of @a desc (first send or resend). */
ucs_status_t uct_ud_ep_post_desc(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                 uct_ud_send_desc_t *desc, int resend);

END_C_DECLS

#endif
