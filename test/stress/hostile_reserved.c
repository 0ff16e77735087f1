/*
 * tcp_hostile reserved: fields that must be zero, each set on its own
 * connection to the target's interface (with its secret):
 *   handshakes  the reserved field, the bytes of listen_addr past an IPv4
 *               address, each endpoint field of a CONNECT_TO_IFACE: each
 *               must be answered BAD_REQUEST and closed; a well-formed one
 *               must be accepted
 *   headers     after a well-formed handshake, an active message (id
 *               HX_RESERVED_BAD_AM) whose header has reserved bits set, and
 *               an ACK_REQ with them: each must close the connection and
 *               deliver nothing; a well-formed active message (id
 *               HX_RESERVED_GOOD_AM) followed by an ACK_REQ must be
 *               answered with an ACK, the connection left open
 * The target then shows what it delivered: the good message once, the bad
 * ones never.
 */
#include "hostile.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HX_RESERVED_BAD_AM  7
#define HX_RESERVED_GOOD_AM 8
#define HX_RESERVED_OP_ACK  0x44

typedef struct {
    const char *name;
    void (*spoil)(hx_handshake_t *hs);
} hx_reserved_hs_t;

static void hx_spoil_reserved(hx_handshake_t *hs)
{
    hs->reserved = 1;
}

static void hx_spoil_reserved_high(hx_handshake_t *hs)
{
    hs->reserved = 0x8000;
}

static void hx_spoil_addr_tail(hx_handshake_t *hs)
{
    hs->listen_addr[4] = 1;
}

static void hx_spoil_addr_end(hx_handshake_t *hs)
{
    hs->listen_addr[15] = 0x80;
}

static void hx_spoil_dst_id(hx_handshake_t *hs)
{
    hs->dst_ep_id = 1;
}

static void hx_spoil_src_id(hx_handshake_t *hs)
{
    hs->src_ep_id = 0x80000000u;
}

static void hx_spoil_dst_cookie(hx_handshake_t *hs)
{
    hs->dst_ep_cookie = 1;
}

static void hx_spoil_src_cookie(hx_handshake_t *hs)
{
    hs->src_ep_cookie = 1ull << 63;
}

static const hx_reserved_hs_t hx_reserved_hs[] = {
    {"reserved = 1", hx_spoil_reserved},
    {"reserved = 0x8000", hx_spoil_reserved_high},
    {"listen_addr[4] != 0", hx_spoil_addr_tail},
    {"listen_addr[15] != 0", hx_spoil_addr_end},
    {"dst_ep_id", hx_spoil_dst_id},
    {"src_ep_id", hx_spoil_src_id},
    {"dst_ep_cookie", hx_spoil_dst_cookie},
    {"src_ep_cookie", hx_spoil_src_cookie}};

#define HX_RESERVED_NUM_HS (sizeof(hx_reserved_hs) / sizeof(hx_reserved_hs[0]))

/* Message headers sent after a well-formed handshake */
static const struct {
    const char *name;
    uint8_t id;
    uint16_t reserved;
    uint32_t length;
} hx_reserved_hdr[] = {{"AM, reserved = 1", HX_RESERVED_BAD_AM, 1, 8},
                       {"AM, reserved = 0x8000", HX_RESERVED_BAD_AM, 0x8000, 8},
                       {"ACK_REQ, reserved = 1", HX_OP_ACK_REQ, 1, 0}};

#define HX_RESERVED_NUM_HDR \
    (sizeof(hx_reserved_hdr) / sizeof(hx_reserved_hdr[0]))

/* A handshake spoiled by @a spoil (none: well-formed): 1 when it got
 * @a expected and then (if a refusal) the close */
static int hx_reserved_handshake(const hx_target_t *t,
                                 void (*spoil)(hx_handshake_t *hs),
                                 int expected, const char *name)
{
    hx_handshake_t hs;
    int fd, status, ok;

    fd = hx_open(t, 0, HX_CONN_TO_IFACE, &hs);
    if (fd < 0) {
        return 0;
    }
    if (spoil != NULL) {
        spoil(&hs);
    }
    status = hx_handshake(fd, t, &hs, NULL, 0);
    ok     = (status == expected) &&
         ((expected == HX_HS_ACCEPTED) || hx_wait_close(fd, 2000));
    if (!ok) {
        printf("reserved: handshake with %s: %s%s, expected %s\n", name,
               (status < 0) ? "no reply" : hx_status_name((unsigned)status),
               (status == expected) ? " but not closed" : "",
               hx_status_name((unsigned)expected));
    }
    close(fd);
    return ok;
}

/* Header #@a i after a well-formed handshake: 1 when the target closed
 * the connection */
static int hx_reserved_header(const hx_target_t *t, unsigned i)
{
    uint8_t msg[HX_HDR_LEN + 8];
    hx_handshake_t hs;
    int fd, ok = 0;

    memset(msg, 0, sizeof(msg));
    hx_hdr_pack(msg, hx_reserved_hdr[i].id, 0, hx_reserved_hdr[i].reserved,
                hx_reserved_hdr[i].length);
    memcpy(msg + HX_HDR_LEN, "reserved", 8);
    fd = hx_open(t, 0, HX_CONN_TO_IFACE, &hs);
    if ((fd >= 0) && (hx_handshake(fd, t, &hs, NULL, 0) == HX_HS_ACCEPTED) &&
        (hx_send_all(fd, msg, HX_HDR_LEN + hx_reserved_hdr[i].length) == 0)) {
        ok = hx_wait_close(fd, 2000);
        if (!ok) {
            printf("reserved: header %s: the connection stayed open\n",
                   hx_reserved_hdr[i].name);
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

/* A well-formed AM and an ACK_REQ: 1 when the ACK came and the
 * connection stayed open */
static int hx_reserved_control(const hx_target_t *t)
{
    uint8_t msg[2 * HX_HDR_LEN + 8], ack[HX_HDR_LEN];
    hx_handshake_t hs;
    int fd, ok = 0;

    hx_hdr_pack(msg, HX_RESERVED_GOOD_AM, 0, 0, 8);
    memcpy(msg + HX_HDR_LEN, "wellmade", 8);
    hx_hdr_pack(msg + HX_HDR_LEN + 8, HX_OP_ACK_REQ, 0, 0, 0);
    fd = hx_open(t, 0, HX_CONN_TO_IFACE, &hs);
    if ((fd >= 0) && (hx_handshake(fd, t, &hs, NULL, 0) == HX_HS_ACCEPTED) &&
        (hx_send_all(fd, msg, sizeof(msg)) == 0) &&
        (hx_recv_exact(fd, ack, sizeof(ack), 2000) == 0)) {
        ok = (ack[0] == HX_RESERVED_OP_ACK) && !hx_wait_close(fd, 300);
    }
    if (!ok) {
        printf("reserved: a well-formed AM and ACK_REQ got no ACK, or the "
               "connection closed\n");
    }
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

int hx_reserved_main(int argc, char **argv)
{
    unsigned i, hs_ok = 0, hdr_ok = 0;
    int good_hs, good_msg;
    hx_target_t t;

    if (hx_parse_check(argc, argv, "", NULL, NULL, &t) != 0) {
        return HX_EXIT_SETUP;
    }
    for (i = 0; i < HX_RESERVED_NUM_HS; ++i) {
        hs_ok +=
            hx_reserved_handshake(&t, hx_reserved_hs[i].spoil,
                                  HX_HS_BAD_REQUEST, hx_reserved_hs[i].name);
    }
    good_hs = hx_reserved_handshake(&t, NULL, HX_HS_ACCEPTED, "nothing set");
    for (i = 0; i < HX_RESERVED_NUM_HDR; ++i) {
        hdr_ok += hx_reserved_header(&t, i);
    }
    good_msg = hx_reserved_control(&t);

    printf("reserved: %u of %zu handshakes with a reserved field set refused "
           "(BAD_REQUEST) and closed, a well-formed one %s; %u of %zu "
           "headers with reserved bits closed the connection, a well-formed "
           "AM (id %d) %s\n",
           hs_ok, HX_RESERVED_NUM_HS, good_hs ? "accepted" : "NOT accepted",
           hdr_ok, HX_RESERVED_NUM_HDR, HX_RESERVED_GOOD_AM,
           good_msg ? "acknowledged" : "NOT acknowledged");
    return ((hs_ok == HX_RESERVED_NUM_HS) && good_hs &&
            (hdr_ok == HX_RESERVED_NUM_HDR) && good_msg)
               ? HX_EXIT_PASS
               : HX_EXIT_FAIL;
}
