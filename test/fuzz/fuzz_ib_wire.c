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
 * 1..32767; an accepted header has an AM id below 32 or the grant id, and
 * a short message is refused.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "fuzz.h"

#include <uct/ib/rc/rc.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_DEV_ADDR_LEN sizeof(uct_ib_device_addr_t)
#define FUZZ_EP_ADDR_LEN  sizeof(uct_rc_ep_addr_t)

static uct_ib_md_t    fuzz_md;
static uct_ib_iface_t fuzz_iface;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_log_silence(-1);
    return 0;
}

/* Our port: RoCE v2 with 10.78.0.1, or InfiniBand with a LID */
static void fuzz_set_port(int roce)
{
    memset(&fuzz_md, 0, sizeof(fuzz_md));
    memset(&fuzz_iface, 0, sizeof(fuzz_iface));
    fuzz_md.dev.first_port = 1;
    fuzz_md.dev.num_ports  = 1;
    fuzz_iface.super.md    = &fuzz_md.super;
    fuzz_iface.port_num    = 1;
    snprintf(fuzz_iface.super.dev_name, sizeof(fuzz_iface.super.dev_name),
             "fuzz:1");
    fuzz_iface.config.hop_limit         = 64;
    fuzz_iface.config.roce_local_subnet = roce;
    fuzz_iface.config.roce_prefix_len   = 24;
    if (roce) {
        fuzz_md.dev.port_attr[0].link_layer = IBV_LINK_LAYER_ETHERNET;
        inet_pton(AF_INET6, "::ffff:10.78.0.1", fuzz_iface.gid_info.gid.raw);
        fuzz_iface.gid_info.gid_index    = 1;
        fuzz_iface.gid_info.roce_version = UCT_IB_ROCE_V2;
        fuzz_iface.gid_info.af           = AF_INET;
        fuzz_iface.path_mtu              = IBV_MTU_1024;
    } else {
        fuzz_md.dev.port_attr[0].link_layer = IBV_LINK_LAYER_INFINIBAND;
        inet_pton(AF_INET6, "fe80::1", fuzz_iface.gid_info.gid.raw);
        fuzz_iface.gid_info.gid_index    = 0;
        fuzz_iface.gid_info.roce_version = UCT_IB_ROCE_NONE;
        fuzz_iface.gid_info.af           = AF_INET6;
        fuzz_iface.path_mtu              = IBV_MTU_4096;
        fuzz_iface.lid                   = 7;
    }
}

static void fuzz_device_addr(const uint8_t *bytes)
{
    uct_ib_device_addr_t *addr = malloc(FUZZ_DEV_ADDR_LEN);
    struct ibv_ah_attr ah_attr;
    enum ibv_mtu mtu;
    char str[128];

    /* a heap copy of exactly the address size: reading past it is seen */
    memcpy(addr, bytes, FUZZ_DEV_ADDR_LEN);
    uct_ib_device_addr_str(addr, str, sizeof(str));
    fuzz_check(memchr(str, '\0', sizeof(str)) != NULL,
               "address string not terminated");

    if (uct_ib_iface_is_reachable_addr(&fuzz_iface, addr)) {
        mtu = uct_ib_iface_peer_mtu(&fuzz_iface, addr);
        fuzz_check((mtu >= IBV_MTU_256) && (mtu <= fuzz_iface.path_mtu),
                   "peer MTU %d out of range", mtu);
        memset(&ah_attr, 0xa5, sizeof(ah_attr));
        uct_ib_iface_fill_ah_attr(&fuzz_iface, addr, &ah_attr);
        fuzz_check(ah_attr.port_num == fuzz_iface.port_num,
                   "address handle on port %u", ah_attr.port_num);
        if (fuzz_md.dev.port_attr[0].link_layer == IBV_LINK_LAYER_ETHERNET) {
            fuzz_check(ah_attr.is_global && (ah_attr.grh.sgid_index ==
                                             fuzz_iface.gid_info.gid_index),
                       "RoCE address handle without our GRH");
        }
    }
    free(addr);
}

static void fuzz_ep_addr(const uint8_t *bytes)
{
    void *addr = malloc(FUZZ_EP_ADDR_LEN);
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
    uint8_t *msg = malloc(size ? size : 1);
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
    } else {
        fuzz_check((am_id == 0xee) && (credits == 0),
                   "outputs set on a refused header");
    }
    free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t addrs[FUZZ_DEV_ADDR_LEN + FUZZ_EP_ADDR_LEN];
    size_t head = ucs_min(size, sizeof(addrs));
    const uint8_t *msg = data + head;
    size_t msg_len     = size - head;

    memset(addrs, 0, sizeof(addrs));
    memcpy(addrs, data, head);
    fuzz_set_port((msg_len > sizeof(uct_rc_hdr_t)) ?
                  (msg[sizeof(uct_rc_hdr_t)] & 1) : 1);
    fuzz_device_addr(addrs);
    fuzz_ep_addr(addrs + FUZZ_DEV_ADDR_LEN);
    fuzz_message(msg, msg_len);
    return 0;
}
