/*
 * The hand-made ib iface of the verbs harnesses (fuzz_ib.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"
#include "fuzz_ib.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static uct_ib_md_t fuzz_ib_md;
static uct_ib_iface_t fuzz_ib_iface;

uct_ib_iface_t *fuzz_ib_port(int roce)
{
    uct_ib_iface_t *iface = &fuzz_ib_iface;

    memset(&fuzz_ib_md, 0, sizeof(fuzz_ib_md));
    memset(iface, 0, sizeof(*iface));
    fuzz_ib_md.dev.first_port = 1;
    fuzz_ib_md.dev.num_ports  = 1;
    iface->super.md           = &fuzz_ib_md.super;
    iface->port_num           = 1;
    snprintf(iface->super.dev_name, sizeof(iface->super.dev_name), "fuzz:1");
    iface->config.hop_limit         = 64;
    iface->config.roce_local_subnet = roce;
    iface->config.roce_prefix_len   = 24;
    if (roce) {
        fuzz_ib_md.dev.port_attr[0].link_layer = IBV_LINK_LAYER_ETHERNET;
        inet_pton(AF_INET6, "::ffff:10.78.0.1", iface->gid_info.gid.raw);
        iface->gid_info.gid_index    = 1;
        iface->gid_info.roce_version = UCT_IB_ROCE_V2;
        iface->gid_info.af           = AF_INET;
        iface->path_mtu              = IBV_MTU_1024;
    } else {
        fuzz_ib_md.dev.port_attr[0].link_layer = IBV_LINK_LAYER_INFINIBAND;
        inet_pton(AF_INET6, "fe80::1", iface->gid_info.gid.raw);
        iface->gid_info.gid_index    = 0;
        iface->gid_info.roce_version = UCT_IB_ROCE_NONE;
        iface->gid_info.af           = AF_INET6;
        iface->path_mtu              = IBV_MTU_4096;
        iface->lid                   = 7;
    }
    return iface;
}

int fuzz_ib_check_device_addr(const uct_ib_iface_t *iface,
                              const uct_ib_device_addr_t *addr)
{
    struct ibv_ah_attr ah_attr;
    enum ibv_mtu mtu;
    char str[128];

    uct_ib_device_addr_str(addr, str, sizeof(str));
    fuzz_check(memchr(str, '\0', sizeof(str)) != NULL,
               "address string not terminated");

    if (!uct_ib_iface_is_reachable_addr(iface, addr)) {
        return 0;
    }
    /* nothing reserved: flags 0x01 RoCE, 0x02 v2, 0x04 IPv4 only; MTU
     * 1 (256) to 5 (4096); LID (bytes 2-3) 0 on RoCE */
    fuzz_check(!(addr->flags & 0xf8), "flags 0x%x reachable", addr->flags);
    fuzz_check((addr->path_mtu >= 1) && (addr->path_mtu <= 5),
               "MTU code %u reachable", addr->path_mtu);
    fuzz_check(!(addr->flags & 0x01) || ((((const uint8_t *)addr)[2] |
                                          ((const uint8_t *)addr)[3]) == 0),
               "a RoCE address with a LID reachable");
    mtu = uct_ib_iface_peer_mtu(iface, addr);
    fuzz_check((mtu >= IBV_MTU_256) && (mtu <= iface->path_mtu),
               "peer MTU %d out of range", mtu);
    memset(&ah_attr, 0xa5, sizeof(ah_attr));
    uct_ib_iface_fill_ah_attr(iface, addr, &ah_attr);
    fuzz_check(ah_attr.port_num == iface->port_num, "address handle on port %u",
               ah_attr.port_num);
    if (uct_ib_device_is_port_roce(uct_ib_iface_device(iface),
                                   iface->port_num)) {
        fuzz_check(ah_attr.is_global &&
                       (ah_attr.grh.sgid_index == iface->gid_info.gid_index),
                   "RoCE address handle without our GRH");
    }
    return 1;
}
