/*
 * Harness of what a verbs peer hands us: the device address and the rc
 * endpoint address an application passes to uct_ep_connect_to_ep() (they
 * come from the peer over the application's own channel), and the header
 * of every message rc_verbs receives.
 *
 * Input: 20 bytes of device address (uct_ib_device_addr_t), 8 bytes of rc
 * endpoint address (uct_rc_ep_addr_t), then a received message (rc header
 * and payload). Shorter inputs are zero-padded. The device address is
 * checked from a hand-made iface (no device needed) whose port is RoCE v2
 * or InfiniBand as the message's first payload byte says.
 *
 * Rules: nothing crashes or reads out of bounds; an address handle is
 * only filled for a reachable address, and then carries our port, our
 * GID index and a GRH on RoCE; the peer MTU is a valid verbs MTU no larger
 * than ours; an accepted ep address has a QP number > 1 and a window of
 * 1..32767; an accepted header has an AM id below 32 or the grant id, a
 * grant is the header alone, and a short message is refused. A reachable
 * device address sets no flag we do not define, names a verbs MTU, and on
 * RoCE no LID.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"
#include "fuzz_ib.h"

#include <uct/ib/rc/rc.h>

#include <stdlib.h>
#include <string.h>

#define FUZZ_DEV_ADDR_LEN sizeof(uct_ib_device_addr_t)
#define FUZZ_EP_ADDR_LEN  sizeof(uct_rc_ep_addr_t)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_silence(-1);
    return 0;
}

/* A heap copy of exactly the address size: reading past it is seen */
static void fuzz_device_addr(const uct_ib_iface_t *iface, const uint8_t *bytes)
{
    uct_ib_device_addr_t *addr = malloc(FUZZ_DEV_ADDR_LEN);

    memcpy(addr, bytes, FUZZ_DEV_ADDR_LEN);
    (void)fuzz_ib_check_device_addr(iface, addr);
    free(addr);
}

static void fuzz_ep_addr(const uint8_t *bytes)
{
    void *addr      = malloc(FUZZ_EP_ADDR_LEN);
    uint32_t qp_num = 0, psn = 0;
    uint16_t wnd = 0;

    memcpy(addr, bytes, FUZZ_EP_ADDR_LEN);
    if (uct_rc_ep_addr_unpack(addr, &qp_num, &psn, &wnd) == UCS_OK) {
        fuzz_check((qp_num > 1) && (qp_num <= 0xffffff),
                   "accepted QP number 0x%x", qp_num);
        fuzz_check((wnd >= 1) && (wnd <= UCT_RC_FC_WND_MAX),
                   "accepted window %u", wnd);
        fuzz_check(psn <= 0xffffff, "PSN 0x%x over 24 bits", psn);
    } else {
        fuzz_check((qp_num == 0) && (psn == 0) && (wnd == 0),
                   "outputs set on a refused address");
    }
    free(addr);
}

static void fuzz_message(const uint8_t *data, size_t size)
{
    uint8_t *msg     = malloc(size ? size : 1);
    uint16_t credits = 0;
    uint8_t am_id    = 0xee;
    ucs_status_t status;

    memcpy(msg, data, size);
    status = uct_rc_hdr_unpack(msg, size, &am_id, &credits);
    if (size < sizeof(uct_rc_hdr_t)) {
        fuzz_check(status == UCS_ERR_MESSAGE_TRUNCATED,
                   "a %zu-byte message accepted", size);
    }
    if (status == UCS_OK) {
        fuzz_check((am_id < UCT_AM_ID_MAX) || (am_id == UCT_RC_HDR_GRANT),
                   "AM id %u accepted", am_id);
        fuzz_check((am_id != UCT_RC_HDR_GRANT) ||
                       (size == sizeof(uct_rc_hdr_t)),
                   "a %zu-byte grant accepted", size);
    } else {
        fuzz_check(
            (status != UCS_ERR_UNSUPPORTED) ||
                ((size > sizeof(uct_rc_hdr_t)) && (msg[0] == UCT_RC_HDR_GRANT)),
            "a %zu-byte message with AM id %u refused as a long "
            "grant",
            size, msg[0]);
        fuzz_check((am_id == 0xee) && (credits == 0),
                   "outputs set on a refused header");
    }
    free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t addrs[FUZZ_DEV_ADDR_LEN + FUZZ_EP_ADDR_LEN];
    size_t head        = ucs_min(size, sizeof(addrs));
    const uint8_t *msg = data + head;
    size_t msg_len     = size - head;
    const uct_ib_iface_t *iface;

    memset(addrs, 0, sizeof(addrs));
    memcpy(addrs, data, head);
    iface = fuzz_ib_port(
        (msg_len > sizeof(uct_rc_hdr_t)) ? (msg[sizeof(uct_rc_hdr_t)] & 1) : 1);
    fuzz_device_addr(iface, addrs);
    fuzz_ep_addr(addrs + FUZZ_DEV_ADDR_LEN);
    fuzz_message(msg, msg_len);
    return 0;
}
