/*
 * Harness of what ud_verbs receives from any peer on the fabric: a
 * datagram, that is the 40-byte area in front of it (the GRH, or on RoCE
 * v2 with IPv4 20 undefined bytes and the IPv4 header) and the packet,
 * parsed by the helpers of ud.h that the receive path calls
 * (uct_ud_iface_rx_one(), uct_ud_iface_rx_creq(), uct_ud_ep_rx(),
 * uct_ud_ep_deliver()); and the table of packets held after a gap
 * (ud_tables.c) with the shares of its peers.
 *
 * Input: the 40-byte GRH area, then the packet (ud header and the rest).
 * A shorter input is the start of the area, zero-padded, and an empty
 * packet. The area is read in both modes (IPv4 and IPv6/IB); our port is
 * RoCE v2 with 10.78.0.1 when it reads as IPv4, else InfiniBand. The
 * packet's bytes are read a second time as a script for the reorder
 * table of a hand-made iface: the first byte sizes it (REORDER_BUFS, 0 to
 * 15), the second gives the share of a peer (PEER_REORDER_BUFS, 1 to 16,
 * capped at the table), then every two bytes are a packet's arrival: the
 * first byte picks one of 6 connected eps on 3 peers (remote QPs: eps 0-1,
 * 2-3 and 4-5) or, with its top bits 11, frees that ep; the second is the
 * packet's PSN minus the ep's next expected one (signed); 64 steps at
 * most.
 *
 * Rules: nothing crashes or reads out of bounds; the GIDs are the ones
 * the area's bytes hold, and only an area of the right IP version is
 * accepted; a packet is accepted exactly when it is long enough for its
 * type's fixed part, of a known type, addressed to UCT_UD_EP_ID_NONE if
 * and only if it is a connection request, and nothing reserved is set
 * (only the flags its type carries, no sequence number on a packet that
 * is not AM or PUT, no ack_psn on a request, zero reserved bytes, no byte
 * after a control packet); then the header fields are the packet's, its
 * length (with the fixed part) fits the packet and a receive descriptor's
 * 8-bit field; a request's device address passes the device address
 * checks of fuzz_ib.h, and it is the datagram's source exactly when its
 * GID is the GRH's (or without a GRH its LID the sender's). A refusal
 * says why: a truncated packet, an invalid one, or one with something
 * reserved set. 24-bit ids keep their three bytes and nothing more;
 * sequence number order is consistent (16-bit wrap-around).
 * The reorder table holds a packet after a gap unless it holds it
 * already, its peer holds its share, or it is full with no peer at its
 * share; when full, one peer at its share (not the arriving one) gives
 * up all it holds and nobody else loses anything; in-sequence packets
 * take the held ones that follow; the counts per ep, per peer and in all
 * agree with what was held, never above the share or the table; freeing
 * an ep releases its packets, and nothing is leaked.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"
#include "fuzz_ib.h"

#include <uct/ib/ud/ud.h>
#include <ucs/memory/mpool.h>

#include <stdlib.h>
#include <string.h>

static const uint8_t fuzz_v4_prefix[12] = {0, 0, 0, 0, 0,    0,
                                           0, 0, 0, 0, 0xff, 0xff};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_silence(-1);
    return 0;
}

/* One mode of the GRH area; returns whether it was accepted, the source
 * GID in @a sgid */
static int fuzz_grh_mode(const uint8_t *grh, int ipv4, uint8_t *sgid)
{
    uint8_t dgid[16];
    ucs_status_t status;
    int version;

    status  = uct_ud_grh_gids(grh, ipv4, sgid, dgid);
    version = ipv4 ? (grh[20] >> 4) : (grh[0] >> 4);
    if (version != (ipv4 ? 4 : 6)) {
        fuzz_check(status == UCS_ERR_INVALID_PARAM,
                   "an IPv%d area read as IPv%d: %s", version, ipv4 ? 4 : 6,
                   ucs_status_string(status));
        return 0;
    }
    fuzz_check(status == UCS_OK, "an IPv%d area refused: %s", version,
               ucs_status_string(status));
    if (ipv4) {
        /* source and destination addresses of the IPv4 header */
        fuzz_check(!memcmp(sgid, fuzz_v4_prefix, 12) &&
                       !memcmp(sgid + 12, grh + 32, 4),
                   "IPv4 source GID is not the header's source address");
        fuzz_check(!memcmp(dgid, fuzz_v4_prefix, 12) &&
                       !memcmp(dgid + 12, grh + 36, 4),
                   "IPv4 destination GID is not the header's destination");
    } else {
        fuzz_check(!memcmp(sgid, grh + 8, 16), "source GID is not the GRH's");
        fuzz_check(!memcmp(dgid, grh + 24, 16),
                   "destination GID is not the GRH's");
    }
    return 1;
}

/* The fixed part after the header of a known type, or -1 */
static int fuzz_fixed_len(uint8_t type)
{
    switch (type) {
    case UCT_UD_PKT_PUT:
        return sizeof(uct_ud_put_hdr_t);
    case UCT_UD_PKT_CREQ:
        return sizeof(uct_ud_creq_t);
    case UCT_UD_PKT_CREP:
        return sizeof(uct_ud_crep_t);
    case UCT_UD_PKT_ACK:
        return 0;
    case UCT_UD_PKT_NAK:
        return sizeof(uint64_t); /* the map of packets held */
    case UCT_UD_PKT_DISC:
    case UCT_UD_PKT_DISC_REP:
        return sizeof(uct_ud_disc_t);
    default:
        return (type < UCT_AM_ID_MAX) ? 0 : -1;
    }
}

static uint16_t fuzz_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

/* Whether a long enough packet of known @a type with @a fixed bytes after
 * its header sets something reserved (the rules written out again: flags
 * 0x40 DENIED, 0x80 ACK_REQ; psn at byte 4, ack_psn at 6; the reserved
 * byte of CREQ at 8 + 11, of CREP, DISC and DISC_REP at 8 + 3) */
static int fuzz_reserved_set(const uint8_t *pkt, size_t length, uint8_t type,
                             int fixed)
{
    uint8_t flags = pkt[3] & 0xc0;
    int data      = (type < UCT_AM_ID_MAX) || (type == UCT_UD_PKT_PUT);
    uint8_t allowed;

    switch (type) {
    case UCT_UD_PKT_CREQ:
        allowed = 0;
        if ((fuzz_le16(pkt + 6) != 0) || (pkt[8 + 11] != 0)) {
            return 1;
        }
        break;
    case UCT_UD_PKT_CREP:
        allowed = 0;
        if (pkt[8 + 3] != 0) {
            return 1;
        }
        break;
    case UCT_UD_PKT_DISC:
    case UCT_UD_PKT_DISC_REP:
        allowed = 0x40;
        if (pkt[8 + 3] != 0) {
            return 1;
        }
        break;
    case UCT_UD_PKT_NAK:
        allowed = 0x40;
        break;
    default:
        allowed = 0xc0;
        break;
    }
    return (flags & ~allowed) ||
           (!data && ((fuzz_le16(pkt + 4) != 0) ||
                      (length != sizeof(uct_ud_hdr_t) + (size_t)fixed)));
}

/* The packet must be refused; checks the reason given */
static void fuzz_pkt_refused(const uint8_t *pkt, size_t length,
                             ucs_status_t status)
{
    uint32_t dest_id;
    uint8_t type;
    int fixed;

    if (length < sizeof(uct_ud_hdr_t)) {
        fuzz_check(status == UCS_ERR_MESSAGE_TRUNCATED, "a %zu-byte packet: %s",
                   length, ucs_status_string(status));
        return;
    }
    type  = pkt[offsetof(uct_ud_hdr_t, type)] & UCT_UD_PKT_TYPE_MASK;
    fixed = fuzz_fixed_len(type);
    if (fixed < 0) {
        fuzz_check(status == UCS_ERR_INVALID_PARAM,
                   "a packet of unknown type %u: %s", type,
                   ucs_status_string(status));
    } else if (length < sizeof(uct_ud_hdr_t) + (size_t)fixed) {
        fuzz_check(status == UCS_ERR_MESSAGE_TRUNCATED,
                   "a %zu-byte packet of type %u: %s", length, type,
                   ucs_status_string(status));
    } else {
        /* long enough and of a known type: the destination, or something
         * reserved */
        dest_id = uct_ud_u24_get(pkt);
        if ((type == UCT_UD_PKT_CREQ) != (dest_id == UCT_UD_EP_ID_NONE)) {
            fuzz_check(status == UCS_ERR_INVALID_PARAM,
                       "a packet of type %u to ep 0x%x: %s", type, dest_id,
                       ucs_status_string(status));
            return;
        }
        fuzz_check(fuzz_reserved_set(pkt, length, type, fixed),
                   "a packet of type %u to ep 0x%x refused: %s", type, dest_id,
                   ucs_status_string(status));
        fuzz_check(status == UCS_ERR_UNSUPPORTED,
                   "a packet of type %u with something reserved set: %s", type,
                   ucs_status_string(status));
    }
}

/* The fields of an accepted packet against its bytes */
static void fuzz_pkt_accepted(const uint8_t *pkt, size_t length,
                              const uct_ud_pkt_info_t *info)
{
    uint8_t raw_type = pkt[offsetof(uct_ud_hdr_t, type)];
    uint32_t dest_id = uct_ud_u24_get(pkt);
    int fixed        = fuzz_fixed_len(info->type);

    fuzz_check(info->type == (raw_type & UCT_UD_PKT_TYPE_MASK),
               "type %u of a packet saying 0x%x", info->type, raw_type);
    fuzz_check(info->flags == (raw_type & (uint8_t)~UCT_UD_PKT_TYPE_MASK),
               "flags 0x%x of a packet saying 0x%x", info->flags, raw_type);
    fuzz_check((info->type < UCT_UD_PKT_LAST) && (fixed >= 0),
               "type %u accepted", info->type);
    fuzz_check(info->hdr_len == sizeof(uct_ud_hdr_t) + (size_t)fixed,
               "header length %u for type %u", info->hdr_len, info->type);
    fuzz_check(info->hdr_len <= length, "header length %u of a %zu-byte packet",
               info->hdr_len, length);
    /* uct_ud_rx_desc_t keeps it in 8 bits for the async queue */
    fuzz_check(info->hdr_len <= UINT8_MAX, "header length %u over 8 bits",
               info->hdr_len);
    fuzz_check(info->dest_id == dest_id, "dest id 0x%x of a packet to 0x%x",
               info->dest_id, dest_id);
    if (info->type == UCT_UD_PKT_CREQ) {
        fuzz_check(info->dest_id == UCT_UD_EP_ID_NONE,
                   "a connection request to ep 0x%x", info->dest_id);
    } else {
        fuzz_check(info->dest_id <= UCT_UD_EP_ID_MAX,
                   "a packet of type %u to ep 0x%x", info->type, info->dest_id);
    }
    fuzz_check(info->psn == fuzz_le16(pkt + offsetof(uct_ud_hdr_t, psn)),
               "psn %u is not the packet's", info->psn);
    fuzz_check(info->ack_psn ==
                   fuzz_le16(pkt + offsetof(uct_ud_hdr_t, ack_psn)),
               "ack_psn %u is not the packet's", info->ack_psn);
    fuzz_check(!fuzz_reserved_set(pkt, length, info->type, fixed),
               "a packet of type %u with something reserved set accepted",
               info->type);
}

/* A connection request's device address, where the receiver looks at
 * it: when it is the datagram's source (with a GRH, @a sgid, its GID; else
 * its LID is the sender's, here @a slid) */
static void fuzz_creq(const uint8_t *pkt, const uint8_t *sgid, uint16_t slid,
                      const uct_ib_iface_t *iface)
{
    const uint8_t *body       = pkt + sizeof(uct_ud_hdr_t);
    const uct_ud_creq_t *creq = (const uct_ud_creq_t *)body;
    /* dev_addr after secret 8, src_id 3, reserved 1, conn_sn 4: its
     * lid at 2, gid at 4 */
    const uint8_t *dev = body + 16;
    int from_source;

    from_source = (sgid != NULL) ? !memcmp(sgid, dev + 4, 16)
                                 : (fuzz_le16(dev + 2) == slid);
    fuzz_check(uct_ud_creq_from_source(creq, sgid, slid) == from_source,
               "a request taken as %sfrom its source",
               from_source ? "not " : "");
    if (!from_source) {
        return;
    }
    (void)fuzz_ib_check_device_addr(iface, &creq->dev_addr);
    if (sgid == NULL) {
        /* the same request seen with a GRH whose source is its GID */
        fuzz_check(uct_ud_creq_from_source(creq, dev + 4, (uint16_t)~slid),
                   "a request with its own GID refused");
    }
}

/* The 24-bit and sequence helpers on values from the packet */
static void fuzz_helpers(const uct_ud_pkt_info_t *info, const uint8_t *pkt)
{
    uint32_t v = ((uint32_t)info->ack_psn << 16) | info->psn;
    uint16_t a = info->psn, b = info->ack_psn;
    uint8_t bytes[4] = {0, 0, 0, 0x5a};

    uct_ud_u24_set(bytes, v);
    fuzz_check((uct_ud_u24_get(bytes) == (v & 0xffffff)) && (bytes[3] == 0x5a),
               "24-bit value 0x%x stored as 0x%x", v, uct_ud_u24_get(bytes));
    uct_ud_u24_set(bytes, uct_ud_u24_get(pkt));
    fuzz_check(!memcmp(bytes, pkt, 3), "24-bit id changed by a round trip");

    fuzz_check(uct_ud_psn_le(a, a) && !uct_ud_psn_lt(a, a),
               "psn %u not equal to itself", a);
    fuzz_check(uct_ud_psn_lt(a, (uint16_t)(a + 1)) &&
                   uct_ud_psn_lt((uint16_t)(a - 1), a),
               "psn %u not between its neighbours", a);
    /* half the space apart, the order is undefined (TX_WINDOW keeps
     * every live pair closer) */
    if ((uint16_t)(a - b) != 0x8000) {
        fuzz_check(uct_ud_psn_lt(a, b) == !uct_ud_psn_le(b, a),
                   "psn %u < %u but not the reverse", a, b);
        fuzz_check(!(uct_ud_psn_lt(a, b) && uct_ud_psn_lt(b, a)),
                   "psn %u and %u each before the other", a, b);
    }
}

static void fuzz_packet(const uint8_t *data, size_t length, const uint8_t *sgid,
                        uint16_t slid, const uct_ib_iface_t *iface)
{
    /* a heap copy of exactly the packet: reading past it is seen */
    uint8_t *pkt = malloc(length ? length : 1);
    uct_ud_pkt_info_t info;
    ucs_status_t status;

    memcpy(pkt, data, length);
    status = uct_ud_pkt_parse(pkt, length, &info);
    if (status != UCS_OK) {
        fuzz_pkt_refused(pkt, length, status);
        free(pkt);
        return;
    }

    fuzz_pkt_accepted(pkt, length, &info);
    if (info.type == UCT_UD_PKT_CREQ) {
        fuzz_creq(pkt, sgid, slid, iface);
    }
    fuzz_helpers(&info, pkt);
    free(pkt);
}

/* ------------------------------------------------------------------------
 * The reorder table (ud_tables.c) on a hand-made iface: 6 connected eps,
 * two per peer; a peer is (address handle, remote QP number)
 */

#define FUZZ_OOO_EPS        6
#define FUZZ_OOO_HELD       16  /* most packets the table may hold */
#define FUZZ_OOO_CHUNK      64  /* receive descriptors: held + one arriving */
#define FUZZ_OOO_SCRIPT_MAX 130 /* sizes and 64 steps */

typedef struct {
    uct_ud_iface_t iface;
    uct_ud_ep_t eps[FUZZ_OOO_EPS];
    uct_ud_ep_t *slots[FUZZ_OOO_EPS];
    uct_ud_ah_t ahs[2];
    ucs_mpool_t mp;
    /* what the harness expects to be held: a PSN list per ep */
    uint16_t held[FUZZ_OOO_EPS][FUZZ_OOO_HELD];
    unsigned num_held[FUZZ_OOO_EPS];
    unsigned objs_made, objs_free;
} fuzz_ooo_t;

static fuzz_ooo_t *fuzz_ooo_current;

static ucs_status_t fuzz_ooo_chunk_alloc(ucs_mpool_t *mp, size_t *size_p,
                                         void **chunk_p)
{
    return ucs_mpool_ops_malloc.chunk_alloc(mp, size_p, chunk_p);
}

static void fuzz_ooo_chunk_release(ucs_mpool_t *mp, void *chunk)
{
    ucs_mpool_ops_malloc.chunk_release(mp, chunk);
}

static void fuzz_ooo_obj_init(ucs_mpool_t *mp, void *obj, void *chunk)
{
    ++fuzz_ooo_current->objs_made;
}

static void fuzz_ooo_obj_cleanup(ucs_mpool_t *mp, void *obj)
{
    ++fuzz_ooo_current->objs_free;
}

static const ucs_mpool_ops_t fuzz_ooo_mp_ops = {
    .chunk_alloc   = fuzz_ooo_chunk_alloc,
    .chunk_release = fuzz_ooo_chunk_release,
    .obj_init      = fuzz_ooo_obj_init,
    .obj_cleanup   = fuzz_ooo_obj_cleanup};

/* Which peer ep @a i is on: eps 0-1 on peer 0 (ah 0, QP 0x100), 2-3 on
 * peer 1 (ah 0, QP 0x101), 4-5 on peer 2 (ah 1, QP 0x100) */
static unsigned fuzz_ooo_peer_of(unsigned i)
{
    return i / 2;
}

static unsigned fuzz_ooo_peer_held(const fuzz_ooo_t *t, unsigned peer)
{
    return t->num_held[2 * peer] + t->num_held[2 * peer + 1];
}

static int fuzz_ooo_expects(const fuzz_ooo_t *t, unsigned i, uint16_t psn)
{
    unsigned k;

    for (k = 0; k < t->num_held[i]; ++k) {
        if (t->held[i][k] == psn) {
            return 1;
        }
    }
    return 0;
}

static void fuzz_ooo_forget(fuzz_ooo_t *t, unsigned i, uint16_t psn)
{
    unsigned k;

    for (k = 0; k < t->num_held[i]; ++k) {
        if (t->held[i][k] == psn) {
            t->held[i][k] = t->held[i][--t->num_held[i]];
            return;
        }
    }
    fuzz_check(0, "ep %u took psn %u, which it did not hold", i, psn);
}

/* The table against what the harness expects */
static void fuzz_ooo_check(const fuzz_ooo_t *t)
{
    const uct_ud_iface_t *iface = &t->iface;
    unsigned i, k, total = 0, holders = 0, peer, held;

    for (i = 0; i < FUZZ_OOO_EPS; ++i) {
        fuzz_check(t->eps[i].rx.ooo == t->num_held[i],
                   "ep %u counts %u held, holds %u", i, t->eps[i].rx.ooo,
                   t->num_held[i]);
        for (k = 0; k < t->num_held[i]; ++k) {
            fuzz_check(uct_ud_iface_ooo_has(iface, i, t->held[i][k]),
                       "ep %u lost psn %u", i, t->held[i][k]);
        }
        total += t->num_held[i];
    }
    fuzz_check(iface->ooo.count == total, "the table counts %u, holds %u",
               iface->ooo.count, total);
    fuzz_check(total <= iface->ooo.max, "%u held in a table of %u", total,
               iface->ooo.max);
    for (peer = 0; peer < FUZZ_OOO_EPS / 2; ++peer) {
        held = fuzz_ooo_peer_held(t, peer);
        fuzz_check(held <= iface->ooo.share, "peer %u holds %u, share %u", peer,
                   held, iface->ooo.share);
        holders += (held != 0);
    }
    fuzz_check(iface->ooo.num_peers == holders, "%u peers counted, %u hold",
               iface->ooo.num_peers, holders);
}

/* A packet of ep @a i arrives, @a offset from its next expected PSN, as
 * uct_ud_ep_rx() takes it */
static void fuzz_ooo_arrive(fuzz_ooo_t *t, unsigned i, int8_t offset)
{
    uct_ud_iface_t *iface = &t->iface;
    uct_ud_ep_t *ep       = &t->eps[i];
    uint16_t psn          = (uint16_t)(ep->rx.expected + offset);
    unsigned before[FUZZ_OOO_EPS / 2], peer, victim, n, count;
    unsigned self = fuzz_ooo_peer_of(i);
    uct_ud_rx_desc_t *rdesc;
    ucs_status_t status;
    int at_share;

    rdesc = ucs_mpool_get(&t->mp);
    fuzz_check(rdesc != NULL, "no receive descriptor");
    rdesc->ep_id = ep->id;
    rdesc->psn   = psn;

    if (offset <= 0) {
        ucs_mpool_put(rdesc); /* a duplicate, or in sequence: below */
        if (offset < 0) {
            return;
        }
        for (;;) {
            ++ep->rx.expected;
            rdesc = uct_ud_iface_ooo_take(iface, ep, ep->rx.expected);
            fuzz_check((rdesc != NULL) ==
                           fuzz_ooo_expects(t, i, ep->rx.expected),
                       "ep %u psn %u %s", i, ep->rx.expected,
                       (rdesc != NULL) ? "taken, not held" : "held, not taken");
            if (rdesc == NULL) {
                break;
            }
            fuzz_check((rdesc->ep_id == ep->id) &&
                           (rdesc->psn == ep->rx.expected),
                       "took ep %u psn %u for ep %u psn %u", rdesc->ep_id,
                       rdesc->psn, ep->id, ep->rx.expected);
            fuzz_ooo_forget(t, i, ep->rx.expected);
            ucs_mpool_put(rdesc);
        }
        return;
    }

    at_share = 0;
    for (peer = 0; peer < FUZZ_OOO_EPS / 2; ++peer) {
        before[peer] = fuzz_ooo_peer_held(t, peer);
        at_share |= (before[peer] >= iface->ooo.share);
    }
    count  = iface->ooo.count;
    status = uct_ud_iface_ooo_add(iface, ep, rdesc);
    if (fuzz_ooo_expects(t, i, psn)) {
        fuzz_check(status == UCS_ERR_ALREADY_EXISTS,
                   "ep %u psn %u held twice: %s", i, psn,
                   ucs_status_string(status));
    } else if (before[self] >= iface->ooo.share) {
        fuzz_check(status == UCS_ERR_EXCEEDS_LIMIT,
                   "peer %u held %u, share %u: %s", self, before[self],
                   iface->ooo.share, ucs_status_string(status));
    } else if ((iface->ooo.max == 0) ||
               ((count >= iface->ooo.max) && !at_share)) {
        fuzz_check(status == UCS_ERR_NO_RESOURCE,
                   "%u held, table %u, nobody at share %u: %s", count,
                   iface->ooo.max, iface->ooo.share, ucs_status_string(status));
    } else {
        fuzz_check(status == UCS_OK, "ep %u psn %u not held: %s", i, psn,
                   ucs_status_string(status));
    }
    if (status != UCS_OK) {
        ucs_mpool_put(rdesc);
        return;
    }

    /* a full table: one peer at its share gave up all it held */
    victim = FUZZ_OOO_EPS;
    for (n = 0; n < FUZZ_OOO_EPS; ++n) {
        if ((t->num_held[n] != 0) &&
            !uct_ud_iface_ooo_has(iface, n, t->held[n][0])) {
            peer = fuzz_ooo_peer_of(n);
            fuzz_check((victim == FUZZ_OOO_EPS) || (victim == peer),
                       "peers %u and %u lost packets", victim, peer);
            victim = peer;
        }
    }
    if (victim != FUZZ_OOO_EPS) {
        fuzz_check(count >= iface->ooo.max,
                   "peer %u lost packets to a table of %u holding %u", victim,
                   iface->ooo.max, count);
        fuzz_check((victim != self) && (before[victim] >= iface->ooo.share),
                   "peer %u (holding %u, share %u) gave way to peer %u", victim,
                   before[victim], iface->ooo.share, self);
        t->num_held[2 * victim]     = 0;
        t->num_held[2 * victim + 1] = 0;
    }
    fuzz_check(t->num_held[i] < FUZZ_OOO_HELD, "ep %u holds too many", i);
    t->held[i][t->num_held[i]++] = psn;
}

/* The script of the input's packet bytes on a fresh table */
static void fuzz_reorder(const uint8_t *script, size_t length)
{
    fuzz_ooo_t *t = calloc(1, sizeof(*t));
    ucs_mpool_params_t mp_params;
    uct_ud_iface_t *iface;
    unsigned i, max, share;
    size_t pos;

    fuzz_check(t != NULL, "no memory");
    fuzz_ooo_current = t;
    iface            = &t->iface;
    max              = (length > 0) ? (script[0] & 0x0f) : 4;
    iface->ooo.max   = max;
    share            = 1u + ((length > 1) ? (script[1] & 0x0fu) : 1u);
    iface->ooo.share = (max == 0) ? 1 : ucs_min(max, share);
    iface->ooo.mask  = 1;
    while (iface->ooo.mask < 2 * max + 1) {
        iface->ooo.mask = (iface->ooo.mask << 1) | 1;
    }
    iface->ooo.peers_mask = iface->ooo.mask;
    iface->ooo.slots = calloc(iface->ooo.mask + 1, sizeof(*iface->ooo.slots));
    iface->ooo.peers =
        calloc(iface->ooo.peers_mask + 1, sizeof(*iface->ooo.peers));
    fuzz_check((iface->ooo.slots != NULL) && (iface->ooo.peers != NULL),
               "no memory");
    for (i = 0; i < FUZZ_OOO_EPS; ++i) {
        t->eps[i].id          = i;
        t->eps[i].flags       = UCT_UD_EP_FLAG_CONNECTED;
        t->eps[i].ah          = &t->ahs[i / 4];
        t->eps[i].dest_qpn    = 0x100 + ((i / 2) & 1);
        t->eps[i].rx.expected = 1;
        t->slots[i]           = &t->eps[i];
    }
    iface->eps.slots = t->slots;
    iface->eps.size  = FUZZ_OOO_EPS;
    iface->eps.count = FUZZ_OOO_EPS;

    ucs_mpool_params_reset(&mp_params);
    mp_params.elem_size       = sizeof(uct_ud_rx_desc_t);
    mp_params.elems_per_chunk = FUZZ_OOO_CHUNK;
    mp_params.max_elems       = FUZZ_OOO_CHUNK;
    mp_params.ops             = &fuzz_ooo_mp_ops;
    mp_params.name            = "fuzz_ooo";
    fuzz_check(ucs_mpool_init(&t->mp, &mp_params) == UCS_OK, "mpool");

    /* a longer script finds nothing new and slows the packet checks */
    length = ucs_min(length, FUZZ_OOO_SCRIPT_MAX);
    for (pos = 2; pos + 1 < length; pos += 2) {
        i = (script[pos] & 0x3f) % FUZZ_OOO_EPS;
        if ((script[pos] >> 6) == 3) {
            /* the ep goes (freed, failed, a zombie): what it held too */
            uct_ud_iface_ooo_drop_ep(iface, &t->eps[i]);
            t->num_held[i]        = 0;
            t->eps[i].rx.expected = (uint16_t)(t->eps[i].rx.expected + 7);
        } else {
            fuzz_ooo_arrive(t, i, (int8_t)script[pos + 1]);
        }
        fuzz_ooo_check(t);
    }

    for (i = 0; i < FUZZ_OOO_EPS; ++i) {
        uct_ud_iface_ooo_drop_ep(iface, &t->eps[i]);
        t->num_held[i] = 0;
    }
    fuzz_ooo_check(t);
    ucs_mpool_cleanup(&t->mp, 0);
    fuzz_check(t->objs_free == t->objs_made, "%u of %u descriptors leaked",
               t->objs_made - t->objs_free, t->objs_made);
    free(iface->ooo.slots);
    free(iface->ooo.peers);
    free(t);
    fuzz_ooo_current = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t head            = ucs_min(size, UCT_UD_GRH_LEN);
    uint8_t *grh           = calloc(1, UCT_UD_GRH_LEN);
    const uint8_t *src_gid = NULL;
    uint8_t sgid4[16], sgid6[16];
    const uct_ib_iface_t *iface;
    int ipv4, ipv6;

    memcpy(grh, data, head);
    ipv4 = fuzz_grh_mode(grh, 1, sgid4);
    ipv6 = fuzz_grh_mode(grh, 0, sgid6);
    /* as uct_ud_iface_rx_one() with a GRH: the source GID of our mode;
     * without one (neither mode), a sender LID from the area's start */
    iface = fuzz_ib_port(ipv4);
    if (ipv4) {
        src_gid = sgid4;
    } else if (ipv6) {
        src_gid = sgid6;
    }
    fuzz_packet(data + head, size - head, src_gid, fuzz_le16(grh), iface);
    fuzz_reorder(data + head, size - head);
    free(grh);
    return 0;
}
