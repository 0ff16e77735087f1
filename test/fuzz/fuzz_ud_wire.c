/*
 * Harness of what ud_verbs receives from any peer on the fabric: a
 * datagram, that is the 40-byte area in front of it (the GRH, or on RoCE
 * v2 with IPv4 20 undefined bytes and the IPv4 header) and the packet,
 * parsed by the helpers of ud.h that the receive path calls
 * (uct_ud_iface_rx_one(), uct_ud_iface_rx_creq(), uct_ud_ep_rx(),
 * uct_ud_ep_deliver()).
 *
 * Input: the 40-byte GRH area, then the packet (ud header and the rest).
 * A shorter input is the start of the area, zero-padded, and an empty
 * packet. The area is read in both modes (IPv4 and IPv6/IB); our port is
 * RoCE v2 with 10.78.0.1 when it reads as IPv4, else InfiniBand.
 *
 * Rules: nothing crashes or reads out of bounds; the GIDs are the ones
 * the area's bytes hold, and only an area of the right IP version is
 * accepted; a packet is accepted exactly when it is long enough for its
 * type's fixed part, of a known type, and addressed to UCT_UD_EP_ID_NONE
 * if and only if it is a connection request; then the header fields are
 * the packet's, its length (with the fixed part) fits the packet and a
 * receive descriptor's 8-bit field; a request's device address passes
 * the device address checks of fuzz_ib.h. A refusal says why: a
 * truncated packet or an invalid one. 24-bit ids keep their three bytes
 * and nothing more; sequence number order is consistent (16-bit
 * wrap-around).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"
#include "fuzz_ib.h"

#include <uct/ib/ud/ud.h>

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
        /* long enough and of a known type: only the destination can be
         * wrong */
        dest_id = uct_ud_u24_get(pkt);
        fuzz_check((type == UCT_UD_PKT_CREQ) != (dest_id == UCT_UD_EP_ID_NONE),
                   "a packet of type %u to ep 0x%x refused: %s", type, dest_id,
                   ucs_status_string(status));
        fuzz_check(status == UCS_ERR_INVALID_PARAM,
                   "a packet of type %u to ep 0x%x: %s", type, dest_id,
                   ucs_status_string(status));
    }
}

static uint16_t fuzz_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
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
}

/* A connection request's device address, where the receiver looks at
 * it: when it is the datagram's source (or there is no GRH) */
static void fuzz_creq(const uint8_t *pkt, const uint8_t *sgid,
                      const uct_ib_iface_t *iface)
{
    const uct_ud_creq_t *creq =
        (const uct_ud_creq_t *)(pkt + sizeof(uct_ud_hdr_t));

    if ((sgid == NULL) || !memcmp(sgid, creq->dev_addr.gid, 16)) {
        (void)fuzz_ib_check_device_addr(iface, &creq->dev_addr);
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
                        const uct_ib_iface_t *iface)
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
        fuzz_creq(pkt, sgid, iface);
    }
    fuzz_helpers(&info, pkt);
    free(pkt);
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
    /* as uct_ud_iface_rx_one() with a GRH: the source GID of our mode */
    iface = fuzz_ib_port(ipv4);
    if (ipv4) {
        src_gid = sgid4;
    } else if (ipv6) {
        src_gid = sgid6;
    }
    fuzz_packet(data + head, size - head, src_gid, iface);
    free(grh);
    return 0;
}
