/*
 * The ib interface layer (built into this binary from
 * src/uct/ib/base/ib_iface.c): configuration and its nesting in the
 * transports' tables, the timeout, RNR and MTU encodings, work-completion
 * statuses, reachability and address handles of hand-made addresses, and,
 * on the Soft-RoCE devices of test/rxe/run.sh, opening an iface on a port
 * (names, inline probe, CQ sizes, path MTU), the async event hook, and the
 * event fd with arm on a loopback RC QP pair connected by the helpers.
 */
#include "ib_lookup.h"

#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
#include <uct/base/uct_component.h>
#include <uct/ib/base/ib_iface.h>
#include <ucs/config/parser.h>
}

#include <arpa/inet.h>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <poll.h>
#include <string>
#include <vector>

/* ------------------------------------------------------------------------
 * Encodings and statuses: run everywhere
 */

class uct_ib_iface_encoding : public ucs::test {};

TEST_F(uct_ib_iface_encoding, timeout_exp_covers_the_time)
{
    EXPECT_EQ(1u, uct_ib_timeout_exp(0));
    EXPECT_EQ(1u, uct_ib_timeout_exp(8.192e-6));
    EXPECT_EQ(2u, uct_ib_timeout_exp(8.2e-6));
    EXPECT_EQ(14u, uct_ib_timeout_exp(ldexp(4.096e-6, 14)));
    EXPECT_EQ(18u, uct_ib_timeout_exp(1.0)); /* 1.07 s */
    EXPECT_EQ(31u, uct_ib_timeout_exp(1e6));
    for (unsigned exp = 1; exp <= 31; ++exp) {
        double seconds = ldexp(4.096e-6, (int)exp);
        EXPECT_EQ(exp, uct_ib_timeout_exp(seconds)) << seconds;
        if (exp < 31) {
            EXPECT_EQ(exp + 1, uct_ib_timeout_exp(seconds * 1.01));
        }
    }
}

TEST_F(uct_ib_iface_encoding, rnr_timer_code_is_the_smallest_delay_covering)
{
    /* the IB specification's table, milliseconds by code */
    static const double ms[32] = {
        655.36, 0.01,  0.02,  0.03,   0.04,   0.06,   0.08,   0.12,
        0.16,   0.24,  0.32,  0.48,   0.64,   0.96,   1.28,   1.92,
        2.56,   3.84,  5.12,  7.68,   10.24,  15.36,  20.48,  30.72,
        40.96,  61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};

    EXPECT_EQ(1u, uct_ib_rnr_timer_code(0));
    EXPECT_EQ(2u, uct_ib_rnr_timer_code(0.011e-3));
    EXPECT_EQ(14u, uct_ib_rnr_timer_code(1e-3)); /* 1.28 ms */
    EXPECT_EQ(0u, uct_ib_rnr_timer_code(0.5));   /* 655.36 ms */
    EXPECT_EQ(0u, uct_ib_rnr_timer_code(10.0));  /* the longest */
    for (unsigned code = 1; code < 32; ++code) {
        EXPECT_EQ(code, uct_ib_rnr_timer_code(ms[code] / 1e3)) << ms[code];
    }
    EXPECT_EQ(0u, uct_ib_rnr_timer_code(ms[0] / 1e3));
}

TEST_F(uct_ib_iface_encoding, mtu_from_bytes)
{
    static const size_t sizes[] = {256, 512, 1024, 2048, 4096};

    for (size_t bytes : sizes) {
        enum ibv_mtu mtu = uct_ib_mtu_from_bytes(bytes);
        EXPECT_NE(0, (int)mtu);
        EXPECT_EQ(bytes, uct_ib_mtu_bytes(mtu));
    }
    EXPECT_EQ(IBV_MTU_1024, uct_ib_mtu_from_bytes(1024));
    EXPECT_EQ(0, (int)uct_ib_mtu_from_bytes(0));
    EXPECT_EQ(0, (int)uct_ib_mtu_from_bytes(300));
    EXPECT_EQ(0, (int)uct_ib_mtu_from_bytes(8192));
}

TEST_F(uct_ib_iface_encoding, wc_status_mapping)
{
    EXPECT_EQ(UCS_OK, uct_ib_wc_status(IBV_WC_SUCCESS));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ib_wc_status(IBV_WC_RETRY_EXC_ERR));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT,
              uct_ib_wc_status(IBV_WC_RNR_RETRY_EXC_ERR));
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET,
              uct_ib_wc_status(IBV_WC_REM_ACCESS_ERR));
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET,
              uct_ib_wc_status(IBV_WC_REM_INV_REQ_ERR));
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, uct_ib_wc_status(IBV_WC_REM_OP_ERR));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, uct_ib_wc_status(IBV_WC_LOC_PROT_ERR));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, uct_ib_wc_status(IBV_WC_LOC_LEN_ERR));
    EXPECT_EQ(UCS_ERR_CANCELED, uct_ib_wc_status(IBV_WC_WR_FLUSH_ERR));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_ib_wc_status(IBV_WC_LOC_QP_OP_ERR));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_ib_wc_status(IBV_WC_FATAL_ERR));
}

/* ------------------------------------------------------------------------
 * Configuration: run everywhere
 */

namespace {

/* A transport that nests the ib table the way rc_verbs will: rc_verbs
 * (prefix RC_VERBS_) embeds rc in "RC_", which embeds ib in "IB_" */
struct test_rc_config {
    uct_ib_iface_config_t super;
    unsigned rc_only;
};

struct test_rc_verbs_config {
    test_rc_config super;
    unsigned verbs_only;
};

ucs_config_field_t test_rc_config_table[] = {
    {"IB_", "", NULL, ucs_offsetof(test_rc_config, super),
     UCS_CONFIG_TYPE_TABLE(uct_ib_iface_config_table)},
    {"RC_ONLY", "1", "test", ucs_offsetof(test_rc_config, rc_only),
     UCS_CONFIG_TYPE_UINT},
    {NULL}};

ucs_config_field_t test_rc_verbs_config_table[] = {
    {"RC_", "", NULL, ucs_offsetof(test_rc_verbs_config, super),
     UCS_CONFIG_TYPE_TABLE(test_rc_config_table)},
    {"VERBS_ONLY", "2", "test", ucs_offsetof(test_rc_verbs_config, verbs_only),
     UCS_CONFIG_TYPE_UINT},
    {NULL}};

} // namespace

class uct_ib_iface_conf : public ucs::test {
protected:
    /* TX_QUEUE_LEN as rc_verbs would read it */
    unsigned nested_tx_queue_len()
    {
        test_rc_verbs_config config;
        unsigned value;

        EXPECT_EQ(UCS_OK, ucs_config_parser_fill_opts(
                              &config, test_rc_verbs_config_table, NULL,
                              "RC_VERBS_", 0));
        value = config.super.super.tx.queue_len;
        ucs_config_parser_release_opts(&config, test_rc_verbs_config_table);
        return value;
    }
};

TEST_F(uct_ib_iface_conf, defaults)
{
    uct_ib_iface_config_t config;

    ASSERT_EQ(UCS_OK,
              ucs_config_parser_fill_opts(&config, uct_ib_iface_config_table,
                                          NULL, UCT_IB_CONFIG_PREFIX, 0));
    EXPECT_EQ(8192u, config.seg_size);
    EXPECT_EQ(255u, config.tx.queue_len);
    EXPECT_EQ(64u, config.tx.min_inline);
    EXPECT_EQ(3u, config.tx.min_sge);
    EXPECT_EQ(16u, config.tx.max_poll);
    EXPECT_EQ(4095u, config.tx.cq_len);
    EXPECT_EQ(4095u, config.rx.queue_len);
    EXPECT_EQ(64u, config.rx.max_batch);
    EXPECT_EQ(16u, config.rx.max_poll);
    EXPECT_EQ(0u, config.sl);
    EXPECT_EQ(0u, config.traffic_class);
    EXPECT_EQ(255u, config.hop_limit);
    EXPECT_EQ((unsigned)UCT_IB_PATH_MTU_DEFAULT, config.path_mtu);
    EXPECT_EQ(0, config.roce_local_subnet);
    EXPECT_EQ(0u, config.roce_prefix_len);
    ucs_config_parser_release_opts(&config, uct_ib_iface_config_table);
}

TEST_F(uct_ib_iface_conf, path_mtu_values)
{
    uct_ib_iface_config_t config;
    char value[32];

    ASSERT_EQ(UCS_OK,
              ucs_config_parser_fill_opts(&config, uct_ib_iface_config_table,
                                          NULL, UCT_IB_CONFIG_PREFIX, 0));
    EXPECT_EQ(UCS_OK,
              ucs_config_parser_get_value(&config, uct_ib_iface_config_table,
                                          "PATH_MTU", value, sizeof(value)));
    EXPECT_STREQ("default", value);

    EXPECT_EQ(UCS_OK,
              ucs_config_parser_set_value(&config, uct_ib_iface_config_table,
                                          "PATH_MTU", "2048"));
    EXPECT_EQ(2048u, config.path_mtu);
    EXPECT_EQ(UCS_OK,
              ucs_config_parser_set_value(&config, uct_ib_iface_config_table,
                                          "PATH_MTU", "DEFAULT"));
    EXPECT_EQ((unsigned)UCT_IB_PATH_MTU_DEFAULT, config.path_mtu);

    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_config_parser_set_value(
                      &config, uct_ib_iface_config_table, "PATH_MTU", "600"));
        EXPECT_TRUE(capture.contains("4096")) << "names the valid values";
    }
    EXPECT_EQ((unsigned)UCT_IB_PATH_MTU_DEFAULT, config.path_mtu);
    ucs_config_parser_release_opts(&config, uct_ib_iface_config_table);
}

TEST_F(uct_ib_iface_conf, bad_path_mtu_from_environment)
{
    ucs::scoped_setenv env("UCX_IB_PATH_MTU", "1000");
    ucs::scoped_log_capture capture;
    uct_ib_iface_config_t config;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_config_parser_fill_opts(&config, uct_ib_iface_config_table,
                                          NULL, UCT_IB_CONFIG_PREFIX, 0));
    EXPECT_TRUE(capture.contains("PATH_MTU"));
}

TEST_F(uct_ib_iface_conf, nested_prefixes_in_order)
{
    EXPECT_EQ(255u, nested_tx_queue_len());

    ucs::scoped_setenv ib("UCX_IB_TX_QUEUE_LEN", "31");
    EXPECT_EQ(31u, nested_tx_queue_len());

    ucs::scoped_setenv rc("UCX_RC_TX_QUEUE_LEN", "63");
    EXPECT_EQ(63u, nested_tx_queue_len());

    ucs::scoped_setenv rc_verbs("UCX_RC_VERBS_TX_QUEUE_LEN", "127");
    EXPECT_EQ(127u, nested_tx_queue_len());
}

/* ------------------------------------------------------------------------
 * Addresses of a hand-made iface: run everywhere
 */

class uct_ib_iface_addr : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        memset(&m_md, 0, sizeof(m_md));
        memset(&m_iface, 0, sizeof(m_iface));
        m_md.dev.first_port = 1;
        m_md.dev.num_ports  = 1;
        m_iface.super.md    = &m_md.super;
        m_iface.port_num    = 1;
        snprintf(m_iface.super.dev_name, sizeof(m_iface.super.dev_name),
                 "fake:1");
        m_iface.config.sl            = 3;
        m_iface.config.hop_limit     = 64;
        m_iface.config.traffic_class = 106;
    }

    /* Our port on RoCE v2 with @a ip */
    void set_roce(const char *ip)
    {
        m_md.dev.port_attr[0].link_layer = IBV_LINK_LAYER_ETHERNET;
        m_iface.gid_info.gid             = ipv4_gid(ip);
        m_iface.gid_info.gid_index       = 1;
        m_iface.gid_info.roce_version    = UCT_IB_ROCE_V2;
        m_iface.gid_info.af              = AF_INET;
        m_iface.path_mtu                 = IBV_MTU_4096;
        m_iface.lid                      = 0;
    }

    /* Our port on InfiniBand with @a gid and @a lid */
    void set_ib(const char *gid, uint16_t lid)
    {
        m_md.dev.port_attr[0].link_layer = IBV_LINK_LAYER_INFINIBAND;
        inet_pton(AF_INET6, gid, m_iface.gid_info.gid.raw);
        m_iface.gid_info.gid_index    = 0;
        m_iface.gid_info.roce_version = UCT_IB_ROCE_NONE;
        m_iface.gid_info.af           = AF_INET6;
        m_iface.path_mtu              = IBV_MTU_2048;
        m_iface.lid                   = lid;
    }

    static union ibv_gid ipv4_gid(const char *ip)
    {
        union ibv_gid gid;
        std::string mapped = std::string("::ffff:") + ip;

        EXPECT_EQ(1, inet_pton(AF_INET6, mapped.c_str(), gid.raw));
        return gid;
    }

    static uct_ib_device_addr_t
    roce_addr(const char *ip, uint8_t flags = UCT_IB_ADDR_FLAG_ROCE |
                                              UCT_IB_ADDR_FLAG_ROCEV2 |
                                              UCT_IB_ADDR_FLAG_IPV4)
    {
        uct_ib_device_addr_t addr;
        union ibv_gid gid = ipv4_gid(ip);

        memset(&addr, 0, sizeof(addr));
        addr.flags    = flags;
        addr.path_mtu = IBV_MTU_1024;
        memcpy(addr.gid, gid.raw, sizeof(addr.gid));
        return addr;
    }

    static uct_ib_device_addr_t ib_addr(const char *gid, uint16_t lid)
    {
        uct_ib_device_addr_t addr;

        memset(&addr, 0, sizeof(addr));
        addr.path_mtu = IBV_MTU_4096;
        addr.lid      = htole16(lid);
        EXPECT_EQ(1, inet_pton(AF_INET6, gid, addr.gid));
        return addr;
    }

    uct_ib_device_addr_t own_addr()
    {
        uct_ib_device_addr_t addr;

        EXPECT_EQ(UCS_OK,
                  uct_ib_iface_get_device_address(&m_iface.super.super,
                                                  (uct_device_addr_t *)&addr));
        return addr;
    }

    uct_ib_md_t m_md;
    uct_ib_iface_t m_iface;
};

TEST_F(uct_ib_iface_addr, roce_address_packs_flags_gid_and_mtu)
{
    set_roce("10.78.0.1");
    uct_ib_device_addr_t addr = own_addr();
    char buf[128];

    EXPECT_EQ(UCT_IB_ADDR_FLAG_ROCE | UCT_IB_ADDR_FLAG_ROCEV2 |
                  UCT_IB_ADDR_FLAG_IPV4,
              addr.flags);
    EXPECT_EQ(IBV_MTU_4096, addr.path_mtu);
    EXPECT_EQ(0u, addr.lid);
    EXPECT_EQ(0, memcmp(addr.gid, m_iface.gid_info.gid.raw, 16));
    EXPECT_STREQ("::ffff:10.78.0.1 lid 0 mtu 4096",
                 uct_ib_device_addr_str(&addr, buf, sizeof(buf)));
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &addr));
}

TEST_F(uct_ib_iface_addr, roce_reachability)
{
    set_roce("10.78.0.1");

    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, NULL));
    uct_ib_device_addr_t peer = roce_addr("10.78.1.2");
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &peer));

    /* another link layer, RoCE version or address family */
    uct_ib_device_addr_t ib = ib_addr("fe80::1", 5);
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &ib));
    uct_ib_device_addr_t v1 =
        roce_addr("10.78.0.2", UCT_IB_ADDR_FLAG_ROCE | UCT_IB_ADDR_FLAG_IPV4);
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &v1));
    uct_ib_device_addr_t v6 =
        roce_addr("10.78.0.2", UCT_IB_ADDR_FLAG_ROCE | UCT_IB_ADDR_FLAG_ROCEV2);
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &v6));
}

TEST_F(uct_ib_iface_addr, roce_local_subnet)
{
    set_roce("10.78.0.1");
    m_iface.config.roce_local_subnet = 1;

    uct_ib_device_addr_t same    = roce_addr("10.78.0.2");
    uct_ib_device_addr_t next    = roce_addr("10.78.1.2");
    uct_ib_device_addr_t faraway = roce_addr("192.168.0.1");

    /* prefix 0: the whole address is not checked */
    m_iface.config.roce_prefix_len = 0;
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &faraway));

    m_iface.config.roce_prefix_len = 24;
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &same));
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &next));
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &faraway));

    /* 10.78.0.0/23 holds 10.78.1.x; bits beyond a byte boundary count */
    m_iface.config.roce_prefix_len = 23;
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &next));
    m_iface.config.roce_prefix_len = 32;
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &same));
    uct_ib_device_addr_t self = roce_addr("10.78.0.1");
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &self));

    /* ROCE_LOCAL_SUBNET=n ignores the prefix */
    m_iface.config.roce_local_subnet = 0;
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &faraway));
}

TEST_F(uct_ib_iface_addr, roce_ah_attr_has_the_grh)
{
    set_roce("10.78.0.1");
    uct_ib_device_addr_t peer = roce_addr("10.78.0.2");
    struct ibv_ah_attr ah;

    memset(&ah, 0xff, sizeof(ah));
    uct_ib_iface_fill_ah_attr(&m_iface, &peer, &ah);
    EXPECT_EQ(1, ah.is_global);
    EXPECT_EQ(0, memcmp(ah.grh.dgid.raw, peer.gid, 16));
    EXPECT_EQ(1u, ah.grh.sgid_index);
    EXPECT_EQ(64u, ah.grh.hop_limit);
    EXPECT_EQ(106u, ah.grh.traffic_class);
    EXPECT_EQ(0u, ah.grh.flow_label);
    EXPECT_EQ(3u, ah.sl);
    EXPECT_EQ(1u, ah.port_num);
    EXPECT_EQ(0u, ah.dlid);
    EXPECT_EQ(0u, ah.src_path_bits);
    EXPECT_EQ(0u, ah.static_rate);

    EXPECT_EQ(IBV_MTU_1024, uct_ib_iface_peer_mtu(&m_iface, &peer));
    peer.path_mtu = 0;
    EXPECT_EQ(IBV_MTU_256, uct_ib_iface_peer_mtu(&m_iface, &peer));
    peer.path_mtu = 77;
    EXPECT_EQ(IBV_MTU_256, uct_ib_iface_peer_mtu(&m_iface, &peer));
}

TEST_F(uct_ib_iface_addr, infiniband_subnets)
{
    set_ib("fe80::2", 7);
    uct_ib_device_addr_t addr = own_addr();
    struct ibv_ah_attr ah;

    EXPECT_EQ(0u, addr.flags);
    EXPECT_EQ(7u, le16toh(addr.lid));
    EXPECT_EQ(IBV_MTU_2048, addr.path_mtu);

    /* the same subnet: the LID is enough */
    uct_ib_device_addr_t peer = ib_addr("fe80::9", 9);
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &peer));
    uct_ib_iface_fill_ah_attr(&m_iface, &peer, &ah);
    EXPECT_EQ(0, ah.is_global);
    EXPECT_EQ(9u, ah.dlid);
    EXPECT_EQ(3u, ah.sl);
    EXPECT_EQ(IBV_MTU_2048, uct_ib_iface_peer_mtu(&m_iface, &peer));

    /* RoCE peer, or another subnet while ours is link-local: no route */
    uct_ib_device_addr_t roce = roce_addr("10.0.0.1");
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &roce));
    uct_ib_device_addr_t routed = ib_addr("2001:db8:0:1::9", 9);
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &routed));

    /* both on routable subnets: through the GRH */
    set_ib("2001:db8:0:2::2", 7);
    EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &routed));
    uct_ib_iface_fill_ah_attr(&m_iface, &routed, &ah);
    EXPECT_EQ(1, ah.is_global);
    EXPECT_EQ(0, memcmp(ah.grh.dgid.raw, routed.gid, 16));
    EXPECT_EQ(0u, ah.grh.sgid_index);
    EXPECT_EQ(9u, ah.dlid);
}

/* An address with anything set that we do not define is not reachable:
 * a flag bit beyond the three, RoCE bits on InfiniBand, an MTU code that
 * is not a verbs MTU, a LID on RoCE */
TEST_F(uct_ib_iface_addr, reserved_bits_unreachable)
{
    set_roce("10.78.0.1");
    uct_ib_device_addr_t good = roce_addr("10.78.0.2");
    ASSERT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &good));
    for (uint8_t bit = 0x08; bit != 0; bit = (uint8_t)(bit << 1)) {
        uct_ib_device_addr_t bad = good;
        bad.flags |= bit;
        EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &bad))
            << "flag 0x" << std::hex << (unsigned)bit;
    }
    for (uint8_t mtu : {0, 6, 7, 0xff}) {
        uct_ib_device_addr_t bad = good;
        bad.path_mtu             = mtu;
        EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &bad))
            << "mtu code " << (unsigned)mtu;
    }
    uct_ib_device_addr_t lid = good;
    lid.lid                  = htole16(1);
    EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &lid));

    set_ib("fe80::2", 7);
    uct_ib_device_addr_t ib = ib_addr("fe80::9", 9);
    ASSERT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &ib));
    const unsigned flags[] = {UCT_IB_ADDR_FLAG_ROCEV2, UCT_IB_ADDR_FLAG_IPV4,
                              0x10};
    for (unsigned flag : flags) {
        uct_ib_device_addr_t bad = ib;
        bad.flags |= (uint8_t)flag;
        EXPECT_FALSE(uct_ib_iface_is_reachable_addr(&m_iface, &bad))
            << "flag 0x" << std::hex << (unsigned)flag;
    }
}

/* ------------------------------------------------------------------------
 * Interfaces on the Soft-RoCE devices (test/rxe/run.sh)
 */

namespace {

struct async_record {
    std::vector<uct_ib_async_event_t> events;
    uct_ib_iface_t *iface;
};

} // namespace

class uct_ib_iface_dev : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        m_md     = NULL;
        m_worker = NULL;
        m_opened = false;
        m_filled = false;
        s_async  = &m_async;
        if (!ib_lookup::have_device("rxe_lo")) {
            GTEST_SKIP() << "no device rxe_lo; run under test/rxe/run.sh";
        }
        memset(&m_ops, 0, sizeof(m_ops));
        m_ops.iface_event_fd_get = uct_ib_iface_event_fd_get;
        memset(&m_init_attr, 0, sizeof(m_init_attr));
        m_init_attr.qp_type        = IBV_QPT_RC;
        m_init_attr.async_event_cb = async_cb;
        ASSERT_EQ(UCS_OK,
                  uct_worker_create(NULL, UCS_THREAD_MODE_SINGLE, &m_worker));
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(
                              &m_config, uct_ib_iface_config_table, NULL,
                              UCT_IB_CONFIG_PREFIX, 0));
        m_filled = true;
    }

    void TearDown() override
    {
        close_iface();
        if (m_filled) {
            ucs_config_parser_release_opts(&m_config,
                                           uct_ib_iface_config_table);
        }
        if (m_worker != NULL) {
            uct_worker_destroy(m_worker);
        }
        close_md();
        ucs::test::TearDown();
    }

    void open_md(const std::string &dev)
    {
        close_md();
        ASSERT_EQ(UCS_OK, ib_lookup::open_md(dev, &m_md));
    }

    void close_md()
    {
        if (m_md != NULL) {
            uct_md_close(m_md);
            m_md = NULL;
        }
    }

    ucs_status_t open_iface(const std::string &name)
    {
        uct_iface_params_t params;
        ucs_status_t status;

        close_iface();
        memset(&params, 0, sizeof(params));
        params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = "ib_test";
        params.mode.device.dev_name = name.c_str();
        m_async.iface               = &m_iface;
        status   = uct_ib_iface_init(&m_iface, &m_ops, m_md, m_worker, &params,
                                     &m_config, &m_init_attr);
        m_opened = (status == UCS_OK);
        return status;
    }

    void close_iface()
    {
        if (m_opened) {
            uct_ib_iface_cleanup(&m_iface);
            m_opened = false;
        }
    }

    /* Open "rxe_lo:1" with TX_MIN_INLINE=@a inline_size */
    size_t max_inline(size_t inline_size)
    {
        m_config.tx.min_inline = inline_size;
        EXPECT_EQ(UCS_OK, open_iface("rxe_lo:1"));
        return m_opened ? m_iface.max_inline : 0;
    }

    static void async_cb(void *arg, const uct_ib_async_event_t *event)
    {
        EXPECT_EQ(s_async->iface, (uct_ib_iface_t *)arg);
        s_async->events.push_back(*event);
    }

    static async_record *s_async;

    uct_md_h m_md;
    uct_worker_h m_worker;
    uct_ib_iface_config_t m_config;
    uct_iface_ops_t m_ops;
    uct_ib_iface_init_attr_t m_init_attr;
    uct_ib_iface_t m_iface;
    bool m_opened;
    bool m_filled;
    async_record m_async;
};

async_record *uct_ib_iface_dev::s_async = NULL;

TEST_F(uct_ib_iface_dev, open_on_each_rxe_port)
{
    static const struct {
        const char *dev;
        enum ibv_mtu mtu;
    } ports[] = {{"rxe_lo", IBV_MTU_4096},
                 {"rxe_v0", IBV_MTU_1024},
                 {"rxe_v1", IBV_MTU_1024}};

    for (const auto &port : ports) {
        if (!ib_lookup::have_device(port.dev)) {
            continue;
        }
        SCOPED_TRACE(port.dev);
        open_md(port.dev);
        ASSERT_EQ(UCS_OK, open_iface(std::string(port.dev) + ":1"));
        EXPECT_EQ(1u, m_iface.port_num);
        EXPECT_EQ(1u, m_iface.gid_info.gid_index) << "::ffff:<IPv4>";
        EXPECT_EQ(UCT_IB_ROCE_V2, m_iface.gid_info.roce_version);
        EXPECT_EQ(0u, m_iface.lid);
        EXPECT_EQ(port.mtu, m_iface.path_mtu);
        EXPECT_EQ(4095u, m_iface.cq_len[UCT_IB_DIR_TX]);
        EXPECT_EQ(4095u, m_iface.cq_len[UCT_IB_DIR_RX]);
        EXPECT_EQ(64u, m_iface.max_inline);
        EXPECT_EQ(255u, m_iface.config.tx_queue_len);
        EXPECT_EQ(8192u, m_iface.config.seg_size);
        EXPECT_STREQ((std::string(port.dev) + ":1").c_str(),
                     m_iface.super.dev_name);

        /* the address of the iface reaches itself */
        uct_ib_device_addr_t addr;
        EXPECT_EQ(UCS_OK,
                  uct_ib_iface_get_device_address(&m_iface.super.super,
                                                  (uct_device_addr_t *)&addr));
        EXPECT_TRUE(uct_ib_iface_is_reachable_addr(&m_iface, &addr));
        EXPECT_EQ(UCT_IB_ADDR_FLAG_ROCE | UCT_IB_ADDR_FLAG_ROCEV2 |
                      UCT_IB_ADDR_FLAG_IPV4,
                  addr.flags);

        uct_iface_attr_t attr;
        uct_ib_iface_query(&m_iface, 50e-9, &attr);
        EXPECT_EQ(sizeof(uct_ib_device_addr_t), attr.device_addr_len);
        EXPECT_GT(attr.latency.c, 0);
        EXPECT_DOUBLE_EQ(50e-9, attr.overhead);
        EXPECT_EQ((uint64_t)(UCT_IFACE_FLAG_EVENT_SEND_COMP |
                             UCT_IFACE_FLAG_EVENT_RECV |
                             UCT_IFACE_FLAG_EVENT_RECV_SIG |
                             UCT_IFACE_FLAG_EVENT_FD),
                  attr.cap.event_flags);
        close_iface();
    }
}

TEST_F(uct_ib_iface_dev, bad_port_names)
{
    static const char *names[] = {"rxe_lo:9",  "nodev:1",   "rxe_lo",
                                  "rxe_lo:",   "rxe_lo:1x", "rxe_lo:0",
                                  "rxe_lo:257"};

    open_md("rxe_lo");
    for (const char *name : names) {
        ucs::scoped_log_capture capture;
        size_t before = capture.messages().size(); /* all of the test's */
        EXPECT_EQ(UCS_ERR_NO_DEVICE, open_iface(name)) << name;
        EXPECT_TRUE(capture.contains(name)) << name;
        EXPECT_EQ(before + 1, capture.messages().size()) << "one line";
    }
    EXPECT_EQ(UCS_OK, open_iface("rxe_lo:1"));
}

TEST_F(uct_ib_iface_dev, bad_config_at_open)
{
    open_md("rxe_lo");
    m_config.path_mtu = 600;
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, open_iface("rxe_lo:1"));
        EXPECT_TRUE(capture.contains("PATH_MTU=600"));
        EXPECT_TRUE(capture.contains("2048"));
    }
    m_config.path_mtu = UCT_IB_PATH_MTU_DEFAULT;
    m_config.sl       = 16;
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, open_iface("rxe_lo:1"));
        EXPECT_TRUE(capture.contains("SL=16"));
    }
}

TEST_F(uct_ib_iface_dev, path_mtu_is_the_smaller)
{
    open_md("rxe_lo");
    m_config.path_mtu = 1024;
    ASSERT_EQ(UCS_OK, open_iface("rxe_lo:1"));
    EXPECT_EQ(IBV_MTU_1024, m_iface.path_mtu);
}

TEST_F(uct_ib_iface_dev, inline_probe)
{
    open_md("rxe_lo");
    EXPECT_EQ(64u, max_inline(64));
    EXPECT_EQ(512u, max_inline(UCT_IB_MAX_INLINE_PROBE));
    size_t halved = max_inline(600);
    std::cout << "TX_MIN_INLINE=600 gives " << halved << std::endl;
    EXPECT_LT(halved, 512u);
    EXPECT_GE(halved, 300u);
    EXPECT_GT(max_inline(0), 0u) << "rxe grants room for one SGE";

    m_init_attr.qp_type = IBV_QPT_UD;
    EXPECT_EQ(64u, max_inline(64));
}

TEST_F(uct_ib_iface_dev, cq_lengths_capped_at_max_cqe)
{
    open_md("rxe_lo");
    unsigned max_cqe = (unsigned)uct_ib_md_from(m_md)->dev.dev_attr.max_cqe;

    m_init_attr.tx_cq_len = 100;
    m_init_attr.rx_cq_len = max_cqe + 1000;
    ASSERT_EQ(UCS_OK, open_iface("rxe_lo:1"));
    EXPECT_EQ(100u, m_iface.cq_len[UCT_IB_DIR_TX]);
    EXPECT_EQ(max_cqe, m_iface.cq_len[UCT_IB_DIR_RX]);
    EXPECT_GE((unsigned)m_iface.cq[UCT_IB_DIR_RX]->cqe, max_cqe);
}

TEST_F(uct_ib_iface_dev, async_events_of_own_objects)
{
    open_md("rxe_lo");
    ASSERT_EQ(UCS_OK, open_iface("rxe_lo:1"));
    uct_ib_device_t *dev = &uct_ib_md_from(m_md)->dev;
    uct_ib_async_event_t event;

    memset(&event, 0, sizeof(event));
    event.type   = IBV_EVENT_CQ_ERR;
    event.cq     = m_iface.cq[UCT_IB_DIR_RX];
    event.status = UCS_ERR_IO_ERROR;
    uct_ib_device_handle_async_event(dev, &event);
    event.cq = (struct ibv_cq *)&event; /* another iface's */
    uct_ib_device_handle_async_event(dev, &event);

    memset(&event, 0, sizeof(event));
    event.type   = IBV_EVENT_QP_FATAL;
    event.qp_num = 0x1234;
    event.status = UCS_ERR_IO_ERROR;
    uct_ib_device_handle_async_event(dev, &event);

    memset(&event, 0, sizeof(event));
    event.type     = IBV_EVENT_LID_CHANGE;
    event.port_num = 2;
    uct_ib_device_handle_async_event(dev, &event);

    ASSERT_EQ(2u, m_async.events.size());
    EXPECT_EQ(IBV_EVENT_CQ_ERR, m_async.events[0].type);
    EXPECT_EQ(m_iface.cq[UCT_IB_DIR_RX], m_async.events[0].cq);
    EXPECT_EQ(IBV_EVENT_QP_FATAL, m_async.events[1].type);
    EXPECT_EQ(0x1234u, m_async.events[1].qp_num);

    close_iface();
    uct_ib_device_handle_async_event(dev, &event);
    EXPECT_EQ(2u, m_async.events.size()) << "the hook left with the iface";
}

/* Two RC QPs of the iface connected to each other with the helpers */
class uct_ib_iface_loopback : public uct_ib_iface_dev {
protected:
    void SetUp() override
    {
        m_qp[0] = m_qp[1] = NULL;
        m_mr              = NULL;
        uct_ib_iface_dev::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        open_md("rxe_lo");
        ASSERT_EQ(UCS_OK, open_iface("rxe_lo:1"));
        for (int i = 0; i < 2; ++i) {
            struct ibv_qp_init_attr attr;

            memset(&attr, 0, sizeof(attr));
            attr.qp_type          = IBV_QPT_RC;
            attr.cap.max_send_wr  = 4;
            attr.cap.max_recv_wr  = 4;
            attr.cap.max_send_sge = 1;
            attr.cap.max_recv_sge = 1;
            ASSERT_EQ(UCS_OK,
                      uct_ib_iface_create_qp(&m_iface, &attr, &m_qp[i]));
            EXPECT_GE(attr.cap.max_inline_data, 64u);
        }
        connect(m_qp[0], m_qp[1]->qp_num);
        connect(m_qp[1], m_qp[0]->qp_num);
        m_mr = ibv_reg_mr(uct_ib_md_from(m_md)->pd, m_buf, sizeof(m_buf),
                          IBV_ACCESS_LOCAL_WRITE);
        ASSERT_TRUE(m_mr != NULL) << strerror(errno);
    }

    void TearDown() override
    {
        if (m_mr != NULL) {
            ibv_dereg_mr(m_mr);
        }
        destroy_qps();
        uct_ib_iface_dev::TearDown();
    }

    /* The QPs go before the CQs they use */
    void destroy_qps()
    {
        for (int i = 0; i < 2; ++i) {
            if (m_qp[i] != NULL) {
                EXPECT_EQ(0, ibv_destroy_qp(m_qp[i]));
                m_qp[i] = NULL;
            }
        }
    }

    void connect(struct ibv_qp *qp, uint32_t dest_qp_num)
    {
        uct_ib_device_addr_t addr;
        struct ibv_qp_attr attr;

        ASSERT_EQ(UCS_OK, uct_ib_iface_qp_init(&m_iface, qp,
                                               IBV_ACCESS_LOCAL_WRITE, 0));
        ASSERT_EQ(UCS_OK,
                  uct_ib_iface_get_device_address(&m_iface.super.super,
                                                  (uct_device_addr_t *)&addr));

        memset(&attr, 0, sizeof(attr));
        attr.qp_state           = IBV_QPS_RTR;
        attr.path_mtu           = uct_ib_iface_peer_mtu(&m_iface, &addr);
        attr.dest_qp_num        = dest_qp_num;
        attr.rq_psn             = 0;
        attr.max_dest_rd_atomic = 1;
        attr.min_rnr_timer      = uct_ib_rnr_timer_code(1e-3);
        uct_ib_iface_fill_ah_attr(&m_iface, &addr, &attr.ah_attr);
        ASSERT_EQ(UCS_OK,
                  uct_ib_qp_modify(qp, &attr,
                                   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                       IBV_QP_MAX_DEST_RD_ATOMIC |
                                       IBV_QP_MIN_RNR_TIMER,
                                   "test"));

        memset(&attr, 0, sizeof(attr));
        attr.qp_state      = IBV_QPS_RTS;
        attr.timeout       = uct_ib_timeout_exp(1.0);
        attr.retry_cnt     = 7;
        attr.rnr_retry     = 7;
        attr.sq_psn        = 0;
        attr.max_rd_atomic = 1;
        ASSERT_EQ(UCS_OK,
                  uct_ib_qp_modify(qp, &attr,
                                   IBV_QP_STATE | IBV_QP_TIMEOUT |
                                       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
                                   "test"));
    }

    void post_recv(struct ibv_qp *qp)
    {
        struct ibv_recv_wr wr, *bad_wr;
        struct ibv_sge sge;

        sge.addr   = (uintptr_t)m_buf;
        sge.length = sizeof(m_buf);
        sge.lkey   = m_mr->lkey;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id   = 2;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ASSERT_EQ(0, ibv_post_recv(qp, &wr, &bad_wr));
    }

    void post_send(struct ibv_qp *qp, unsigned send_flags)
    {
        static const char msg[] = "hello";
        struct ibv_send_wr wr, *bad_wr;
        struct ibv_sge sge;

        sge.addr   = (uintptr_t)msg;
        sge.length = sizeof(msg);
        sge.lkey   = 0;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id      = 1;
        wr.sg_list    = &sge;
        wr.num_sge    = 1;
        wr.opcode     = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED | send_flags;
        ASSERT_EQ(0, ibv_post_send(qp, &wr, &bad_wr));
    }

    /* Whether the event fd becomes readable within @a ms */
    bool wait_fd(int ms)
    {
        struct pollfd pfd;
        int fd;

        EXPECT_EQ(UCS_OK, uct_iface_event_fd_get(&m_iface.super.super, &fd));
        pfd.fd      = fd;
        pfd.events  = POLLIN;
        pfd.revents = 0;
        return poll(&pfd, 1, ms) == 1;
    }

    /* Poll @a dir until one completion comes, for up to 30 s */
    bool poll_one(uct_ib_dir_t dir, struct ibv_wc *wc)
    {
        for (int i = 0; i < 30000; ++i) {
            int ret = uct_ib_iface_poll_cq(&m_iface, dir, wc, 1);
            EXPECT_GE(ret, 0);
            if (ret == 1) {
                return true;
            }
            usleep(1000);
        }
        return false;
    }

    struct ibv_qp *m_qp[2];
    struct ibv_mr *m_mr;
    char m_buf[64];
};

TEST_F(uct_ib_iface_loopback, send_and_receive)
{
    struct ibv_wc wc;

    post_recv(m_qp[1]);
    post_send(m_qp[0], 0);
    ASSERT_TRUE(poll_one(UCT_IB_DIR_TX, &wc));
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(1u, wc.wr_id);
    EXPECT_EQ(m_qp[0]->qp_num, wc.qp_num);
    ASSERT_TRUE(poll_one(UCT_IB_DIR_RX, &wc));
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(2u, wc.wr_id);
    EXPECT_EQ(m_qp[1]->qp_num, wc.qp_num);
    EXPECT_STREQ("hello", m_buf);
}

TEST_F(uct_ib_iface_loopback, arm_is_busy_while_a_completion_waits)
{
    struct ibv_wc wc[4];
    int count;

    /* idle: nothing waits, nothing wakes us up */
    EXPECT_EQ(UCS_OK, uct_ib_iface_arm(
                          &m_iface, UCT_EVENT_SEND_COMP | UCT_EVENT_RECV, 0));
    EXPECT_EQ(UCS_ERR_BUSY, uct_ib_iface_arm(&m_iface, UCT_EVENT_SEND_COMP, 1))
        << "the transport is busy";
    EXPECT_FALSE(wait_fd(0));

    /* a solicited send wakes up the fd and the next arm keeps both
     * completions in the stash */
    post_recv(m_qp[1]);
    post_send(m_qp[0], IBV_SEND_SOLICITED);
    EXPECT_TRUE(wait_fd(30000));
    for (int i = 0; (i < 3000) && (m_iface.stash[UCT_IB_DIR_RX].count == 0);
         ++i) {
        EXPECT_EQ(UCS_ERR_BUSY,
                  uct_ib_iface_arm(&m_iface,
                                   UCT_EVENT_SEND_COMP | UCT_EVENT_RECV, 0));
        usleep(1000);
    }
    EXPECT_EQ(1u, m_iface.stash[UCT_IB_DIR_TX].count);
    EXPECT_EQ(1u, m_iface.stash[UCT_IB_DIR_RX].count);
    EXPECT_EQ(0u, m_iface.num_cq_events[UCT_IB_DIR_TX]) << "acknowledged";
    EXPECT_FALSE(wait_fd(0)) << "the channel was drained";

    /* the poll hands out what the arm kept */
    count = uct_ib_iface_poll_cq(&m_iface, UCT_IB_DIR_TX, wc, 4);
    ASSERT_EQ(1, count);
    EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
    EXPECT_EQ(1u, wc[0].wr_id);
    count = uct_ib_iface_poll_cq(&m_iface, UCT_IB_DIR_RX, wc, 4);
    ASSERT_EQ(1, count);
    EXPECT_EQ(2u, wc[0].wr_id);
    EXPECT_EQ(0, uct_ib_iface_poll_cq(&m_iface, UCT_IB_DIR_TX, wc, 4));

    EXPECT_EQ(UCS_OK, uct_ib_iface_arm(
                          &m_iface, UCT_EVENT_SEND_COMP | UCT_EVENT_RECV, 0));
}

TEST_F(uct_ib_iface_loopback, unsolicited_receive_does_not_wake)
{
    struct ibv_wc wc;

    /* only the receive CQ is armed, for solicited completions */
    EXPECT_EQ(UCS_OK, uct_ib_iface_arm(&m_iface, UCT_EVENT_RECV, 0));
    post_recv(m_qp[1]);
    post_send(m_qp[0], 0);
    ASSERT_TRUE(poll_one(UCT_IB_DIR_TX, &wc));
    EXPECT_FALSE(wait_fd(100));
    EXPECT_EQ(UCS_ERR_BUSY, uct_ib_iface_arm(&m_iface, UCT_EVENT_RECV, 0));
    ASSERT_TRUE(poll_one(UCT_IB_DIR_RX, &wc));
    EXPECT_EQ(2u, wc.wr_id);
}

TEST_F(uct_ib_iface_loopback, wc_error_is_logged_once_per_interval)
{
    struct ibv_wc wc;

    memset(&wc, 0, sizeof(wc));
    wc.status     = IBV_WC_RETRY_EXC_ERR;
    wc.qp_num     = m_qp[0]->qp_num;
    wc.vendor_err = 0x81;

    ucs::scoped_log_capture capture;
    size_t before = capture.messages().size(); /* all of the test's */
    for (int i = 0; i < 5; ++i) {
        uct_ib_iface_log_wc_error(&m_iface, &wc, "peer 10.0.0.1");
    }
    ASSERT_EQ(before + 1, capture.messages().size());
    EXPECT_TRUE(capture.contains("peer 10.0.0.1"));
    EXPECT_TRUE(capture.contains(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR)));
    destroy_qps();
    close_iface(); /* reports the 4 suppressed */
    EXPECT_EQ(before + 2, capture.messages().size());
    EXPECT_TRUE(capture.contains("rxe_lo:1: completion errors: 4 more"));
}

TEST_F(uct_ib_iface_loopback, qp_modify_error_names_the_state)
{
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR; /* RTS -> RTR is not a transition */
    ucs::scoped_log_capture capture;
    EXPECT_NE(UCS_OK,
              uct_ib_qp_modify(m_qp[0], &attr, IBV_QP_STATE, "test qp"));
    EXPECT_TRUE(capture.contains("RTR"));
    EXPECT_TRUE(capture.contains("test qp"));
}
