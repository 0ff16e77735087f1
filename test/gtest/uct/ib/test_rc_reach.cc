/*
 * rc_verbs: who can reach an ep (the first PSN is random per ep) and what
 * a message may carry (no immediate data, no bytes after a grant). Runs on
 * the rc_verbs resources of the Soft-RoCE devices (test/rxe), like
 * test_rc.cc, which instantiates the suite.
 */
#include "rc_test.h"

/* ------------------------------------------------------------------------
 * Who can reach an ep: the first PSN, and what a message may carry
 */

namespace {

/* The first PSN an ep address carries */
uint32_t address_psn(const std::vector<char> &addr)
{
    uct_rc_ep_addr_t rc_addr;

    memcpy(&rc_addr, addr.data(), sizeof(rc_addr));
    return (uint32_t)rc_addr.psn[0] | ((uint32_t)rc_addr.psn[1] << 8) |
           ((uint32_t)rc_addr.psn[2] << 16);
}

} // namespace

/* The first PSN of each ep is random on its own: 24 bits, distinct across
 * the eps of one iface, neither the QP number plus or xor a constant nor
 * the keyed hash of the QP number that an iface-wide seed gave (a peer
 * that saw some eps' addresses could then find the seed and predict the
 * PSN of every other ep; no 64-bit word of the iface reproduces them);
 * the address says it and the QP starts there. */
TEST_P(uct_rc, first_psn_random_per_ep)
{
    const unsigned N = 64;
    entity *a        = create_entity();
    std::vector<uint32_t> qpns, psns;
    std::set<uint32_t> distinct, minus_qpn, xor_qpn;
    uint32_t all_and = 0xffffff, all_or = 0;
    unsigned ones = 0;

    for (unsigned i = 0; i < N; ++i) {
        uct_ep_h ep          = raw_ep(*a);
        std::vector<char> ad = ep_address(ep);
        qpns.push_back(rc_ep_of(ep)->qp->qp_num);
        psns.push_back(address_psn(ad));
        EXPECT_EQ(ad, ep_address(ep)) << "the address of ep " << i;
        distinct.insert(psns[i]);
        minus_qpn.insert((psns[i] - qpns[i]) & 0xffffff);
        xor_qpn.insert(psns[i] ^ qpns[i]);
        all_and &= psns[i];
        all_or |= psns[i];
        ones += (unsigned)__builtin_popcount(psns[i]);
    }
    /* two equal of 64 happens once in 8000 runs, three never */
    EXPECT_GE(distinct.size(), N - 1);
    EXPECT_GE(minus_qpn.size(), N - 1);
    EXPECT_GE(xor_qpn.size(), N - 1);
    EXPECT_EQ(0u, all_and) << "a bit set in every PSN";
    EXPECT_EQ(0xffffffu, all_or) << "a bit clear in every PSN";
    /* 1536 bits: 768 ones +- 20 (one standard deviation) */
    EXPECT_NEAR(768.0, (double)ones, 140.0);

    const uint8_t *bytes = (const uint8_t *)rc_iface_of(*a);
    for (size_t off = 0; off + sizeof(uint64_t) <= sizeof(uct_rc_iface_t);
         ++off) {
        uint64_t key;
        memcpy(&key, bytes + off, sizeof(key));
        unsigned i = 0;
        while ((i < 4) &&
               ((ucs_hash_u64(key ^ qpns[i]) & 0xffffff) == psns[i])) {
            ++i;
        }
        EXPECT_LT(i, 4u) << "the PSNs are a keyed hash of the QP numbers, "
                            "key at byte "
                         << off << " of the iface";
    }

    /* connected, each QP sends from its advertised PSN and expects the
     * peer's */
    entity *b   = create_entity();
    uct_ep_h ea = raw_ep(*a), eb = raw_ep(*b);
    std::vector<char> addr_a = ep_address(ea), addr_b = ep_address(eb);
    ASSERT_EQ(UCS_OK, connect(ea, b->dev_addr(), addr_b));
    ASSERT_EQ(UCS_OK, connect(eb, a->dev_addr(), addr_a));
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    ASSERT_EQ(0, ibv_query_qp(rc_ep_of(ea)->qp, &attr,
                              IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &init));
    EXPECT_EQ(address_psn(addr_a), attr.sq_psn);
    EXPECT_EQ(address_psn(addr_b), attr.rq_psn);
    am_recorder &rec = install_recorder(*b, AM_ID);
    ASSERT_TRUE(send_short(ea, 3));
    wait_for([&] { return rec.count() == 1; }, "a message");
}

/* A send with immediate data, and a credit grant with bytes after its
 * header, from the connected peer's QP (our sends carry neither) are
 * dropped with a line saying why; the ep keeps working */
TEST_P(uct_rc, immediate_data_and_long_grant_dropped)
{
    entity *a   = create_entity();
    entity *b   = create_entity();
    uct_ep_h ea = raw_ep(*a), eb = raw_ep(*b);
    std::vector<char> addr_a = ep_address(ea), addr_b = ep_address(eb);
    ASSERT_EQ(UCS_OK, connect(ea, b->dev_addr(), addr_b));
    ASSERT_EQ(UCS_OK, connect(eb, a->dev_addr(), addr_a));
    am_recorder &rec = install_recorder(*b, AM_ID);

    /* posted on a's QP behind the transport's back, inline and
     * unsignaled, with the sequence number of a request already done */
    auto post = [&](const std::vector<uint8_t> &msg, bool imm) {
        struct ibv_send_wr wr, *bad_wr;
        struct ibv_sge sge;

        sge.addr   = (uintptr_t)msg.data();
        sge.length = (uint32_t)msg.size();
        sge.lkey   = 0;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id      = (uint16_t)(rc_ep_of(ea)->acked_sn - 1);
        wr.sg_list    = &sge;
        wr.num_sge    = 1;
        wr.opcode     = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
        wr.imm_data   = htobe32(0x5a5a5a5a);
        wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SOLICITED;
        return ibv_post_send(rc_ep_of(ea)->qp, &wr, &bad_wr);
    };
    uint64_t value = 77;
    std::vector<uint8_t> am(sizeof(uct_rc_hdr_t) + sizeof(value), 0);
    am[0] = AM_ID;
    memcpy(&am[sizeof(uct_rc_hdr_t)], &value, sizeof(value));
    std::vector<uint8_t> grant(sizeof(uct_rc_hdr_t) + 1, 0);
    grant[0] = UCT_RC_HDR_GRANT;

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    ASSERT_EQ(0, post(am, true));
    wait_for([&] { return lines_with(cap, first, "immediate data") > 0; },
             "the message with immediate data dropped");
    progress_for(50);
    EXPECT_EQ(0u, rec.count()) << "delivered";
    EXPECT_EQ(1u, lines_with(cap, first, "dropped a 11-byte message"));

    usleep(1100000); /* the next line passes the limit */
    first = cap.messages().size();
    ASSERT_EQ(0, post(grant, false));
    wait_for(
        [&] { return lines_with(cap, first, "bytes after a credit grant"); },
        "the grant with a byte after it dropped");
    EXPECT_EQ(1u, lines_with(cap, first, "dropped a 4-byte message"));

    /* the same message without immediate data is delivered */
    ASSERT_EQ(0, post(am, false));
    wait_for([&] { return rec.count() == 1; }, "the message");
    ASSERT_TRUE(send_short(ea, 78));
    wait_for([&] { return rec.count() == 2; }, "a message of the transport");
    EXPECT_EQ(77u, am_header(rec.at(0)));
    EXPECT_EQ(78u, am_header(rec.at(1)));
    close_all();
}
