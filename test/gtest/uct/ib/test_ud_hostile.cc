/*
 * ud_verbs and hostile input: datagrams from a stranger (a UD QP this
 * test makes with libibverbs on the same device) and refused PUTs. The
 * fixture is in ud_test.h.
 */
#include "ud_test.h"

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

/* ------------------------------------------------------------------------
 * Datagrams from a stranger
 */

void uct_ud::hostile_setup()
{
    m_b  = create_entity(params({}, true));
    m_a  = create_entity(params({}, true));
    m_ab = m_a->connect_to(*m_b);
    ASSERT_TRUE(m_ab != NULL);
    m_rec = &install_recorder(*m_b, AM_ID);
    ASSERT_TRUE(send_short(m_ab, 0));
    ASSERT_TRUE(wait_for([&] { return m_rec->count() == 1; },
                         "a message before the stranger"));
    raw_qp(*m_b);
}

/* After a dropped packet: b got nothing from it, and a message from the
 * real peer still arrives */
void uct_ud::hostile_check_alive(uint64_t value, size_t expected_count)
{
    EXPECT_EQ(expected_count - 1, m_rec->count()) << "something delivered";
    ASSERT_TRUE(send_short(m_ab, value));
    wait_for([&] { return m_rec->count() == expected_count; },
             "a message after the stranger");
    progress_for(20);
    EXPECT_EQ(expected_count, m_rec->count());
    EXPECT_EQ(value, am_header(m_rec->at(m_rec->count() - 1)));
    EXPECT_TRUE(m_errs.calls.empty());
}

/* Shorter than a header, and a header of an unknown type: dropped and
 * counted in rx_dropped only, one warning naming the stranger's QP and
 * why */
TEST_P(uct_ud, stranger_garbage_dropped)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    ud_stats before, after;

    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, std::vector<uint8_t>{1, 2, 3, 4}, &before,
                     &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        expect_unchanged(before, after, {&ud_stats::rx_dropped});
        EXPECT_EQ(1u, lines_with(cap, first, from));
        EXPECT_EQ(1u, lines_with(cap, first,
                                 ucs_status_string(UCS_ERR_MESSAGE_TRUNCATED)));
        hostile_check_alive(1, 2);
    }

    /* the limit lets the next line through a second later */
    usleep(1100000);
    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, ud_packet(0, 50, 1, 0), &before, &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        expect_unchanged(before, after, {&ud_stats::rx_dropped});
        EXPECT_EQ(1u, lines_with(cap, first, from));
        EXPECT_EQ(1u, lines_with(cap, first,
                                 ucs_status_string(UCS_ERR_INVALID_PARAM)));
        hostile_check_alive(2, 3);
        close_all();
    }
}

/* A flood of garbage: every packet is counted, but at most one line per
 * second passes; the lines that did not pass are counted in the next one
 * or, at close, in a line of their own, so none goes unaccounted */
TEST_P(uct_ud, stranger_flood_rate_limited)
{
    const unsigned N = 200;
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    ud_stats before  = stats(*m_b);

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    double start = now_sec();
    for (unsigned i = 0; i < N; ++i) {
        m_raw->send(dev_addr(*m_b), iface_qpn(*m_b), ud_packet(0, 60, i, 0));
    }
    wait_for([&] { return stats(*m_b).rx_dropped == before.rx_dropped + N; },
             "every packet dropped");
    double elapsed = now_sec() - start;
    ud_stats after = stats(*m_b);
    expect_unchanged(before, after, {&ud_stats::rx_dropped});
    size_t passed = lines_with(cap, first, from);
    EXPECT_GE(passed, 1u);
    EXPECT_LE(passed, 2 + (size_t)elapsed) << "in " << elapsed << " s";
    hostile_check_alive(1, 2);

    close_all();
    /* suppressed counts: "(N similar lines suppressed)" on a line that
     * passed, "N more lines like the last one" at close */
    unsigned accounted                   = 0;
    const std::vector<std::string> &msgs = cap.messages();
    for (size_t i = first; i < msgs.size(); ++i) {
        unsigned n;
        size_t pos;
        if ((pos = msgs[i].rfind("(")) != std::string::npos &&
            (sscanf(msgs[i].c_str() + pos, "(%u similar lines", &n) == 1)) {
            accounted += n;
        } else if ((pos = msgs[i].find("suppressed")) != std::string::npos &&
                   (pos = msgs[i].find(": ", msgs[i].find("peers"))) !=
                       std::string::npos &&
                   (sscanf(msgs[i].c_str() + pos + 2, "%u more lines", &n) ==
                    1)) {
            accounted += n;
        }
    }
    EXPECT_EQ(N, passed + accounted);
    std::cout << "[ INFO     ] " << N << " garbage packets in " << elapsed
              << " s: " << passed << " lines" << std::endl;
}

/* A packet for an ep id never given out is dropped with a line; one for
 * an ep destroyed here is a stale packet, counted without a line */
TEST_P(uct_ud, stranger_unknown_and_stale_ep_id)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    ud_stats before, after;

    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, am_packet(UCT_UD_EP_ID_MAX, 1, 99), &before,
                     &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        expect_unchanged(before, after, {&ud_stats::rx_dropped});
        EXPECT_EQ(1u, lines_with(cap, first, "no such endpoint"));
        EXPECT_EQ(1u, lines_with(cap, first, from));
        hostile_check_alive(1, 2);
    }

    /* an ep of b that existed */
    uct_ep_params_t p;
    uct_ep_h gone;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    p.iface      = m_b->iface();
    ASSERT_EQ(UCS_OK, uct_ep_create(&p, &gone));
    uint32_t gone_id = uct_ud_ep(gone)->id;
    uct_ep_destroy(gone);
    ASSERT_LT(gone_id, ud(*m_b)->eps.used);

    usleep(1100000); /* a line would pass the limit now */
    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, am_packet(gone_id, 1, 98), &before, &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        EXPECT_EQ(before.rx_stale + 1, after.rx_stale);
        expect_unchanged(before, after,
                         {&ud_stats::rx_dropped, &ud_stats::rx_stale});
        EXPECT_EQ(first, cap.messages().size()) << cap.messages().back();
        hostile_check_alive(2, 3);
    }
}

/* A CREQ with a wrong secret creates no ep and gets no reply; counted in
 * creq_denied */
TEST_P(uct_ud, stranger_creq_wrong_secret)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    unsigned eps     = ep_count(*m_b);
    ud_stats before, after;

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    send_dropped(*m_b, *m_raw,
                 creq_packet(iface_secret(*m_b) ^ 1, 5, 0, dev_addr(*m_b)),
                 &before, &after);
    EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
    EXPECT_EQ(before.creq_denied + 1, after.creq_denied);
    expect_unchanged(before, after,
                     {&ud_stats::rx_dropped, &ud_stats::creq_denied});
    EXPECT_EQ(1u, lines_with(cap, first, "secret"));
    EXPECT_EQ(1u, lines_with(cap, first, from));
    EXPECT_EQ(eps, ep_count(*m_b));
    std::vector<uint8_t> reply;
    EXPECT_FALSE(m_raw->recv(reply, 0.3)) << "a reply to a bad request";
    hostile_check_alive(1, 2);
    close_all();
}

/* A data packet for a real ep, in sequence, from a QP that is not the
 * ep's peer: not delivered, the ep's sequence does not move (the real
 * peer's next packet is taken) */
TEST_P(uct_ud, stranger_data_to_real_ep)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    uint32_t target  = uct_ud_ep(m_ab)->dest_id;
    uct_ud_ep_t *bep = uct_ud_iface_ep(ud(*m_b), target);
    ASSERT_TRUE(bep != NULL);
    uint16_t expected = bep->rx.expected;
    ud_stats before, after;

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    send_dropped(*m_b, *m_raw, am_packet(target, expected, 0xbad), &before,
                 &after);
    EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
    expect_unchanged(before, after, {&ud_stats::rx_dropped});
    EXPECT_EQ(1u, lines_with(cap, first, "not from the endpoint's peer"));
    EXPECT_EQ(1u, lines_with(cap, first, from));
    EXPECT_EQ(expected, bep->rx.expected);
    hostile_check_alive(1, 2);
    close_all();
}

/* ------------------------------------------------------------------------
 * Refused PUTs
 */

/* A PUT with a wrong key, and one with the key of another region than the
 * address, are not applied; put_denied counts each; the sender's next
 * flush completes with UCS_ERR_INVALID_ADDR, the one after a good PUT with
 * UCS_OK */
TEST_P(uct_ud, put_refused_flush_invalid_addr)
{
    /* b's md registers directly: a cache region is page-aligned and may have
     * merged with earlier registrations, so its key can rightly cover other
     * memory than rbuf, other included (glibc can place both in one heap
     * page once an earlier free() raised its mmap threshold) */
    ucs::scoped_setenv no_rcache("UCX_IB_RCACHE", "no");
    entity *b   = create_entity();
    entity *a   = create_entity(params({}, true));
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    mapped_buffer rbuf(64, *b);
    mapped_buffer other(1 << 20, *b);
    rbuf.pattern_fill(7);
    other.pattern_fill(8);

    /* @a what: flush after a PUT of 8 bytes to @a addr with @a rkey */
    auto put_and_flush = [&](uint64_t addr, uct_rkey_t rkey, const char *what) {
        uint64_t value = 0x1122334455667788ull;
        EXPECT_EQ(UCS_OK, retry_no_resource(
                              [&] {
                                  return (ssize_t)uct_ep_put_short(
                                      ab, &value, sizeof(value), addr, rkey);
                              },
                              what));
        counted_completion comp;
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] { return (ssize_t)uct_ep_flush(ab, 0, comp); }, "uct_ep_flush");
        if (status == UCS_INPROGRESS) {
            wait_for([&] { return comp.calls > 0; }, what);
            EXPECT_EQ(1, comp.calls);
            return comp.status_at_call;
        }
        return status;
    };

    ud_stats before = stats(*b);
    {
        ucs::scoped_log_capture cap;
        size_t first        = cap.messages().size();
        ucs_status_t status = put_and_flush(rbuf.addr(), rbuf.rkey() ^ 0x7fff00,
                                            "a PUT with a wrong key");
        EXPECT_EQ(UCS_ERR_INVALID_ADDR, status) << ucs_status_string(status);
        EXPECT_TRUE(rbuf.pattern_matches(7)) << "the refused PUT was applied";
        EXPECT_EQ(before.put_denied + 1, stats(*b).put_denied);
        EXPECT_EQ(1u, lines_with(cap, first, "refused a 8-byte PUT"));

        /* the key of one region, the address of another */
        usleep(1100000);
        first  = cap.messages().size();
        status = put_and_flush(other.addr() + 64, rbuf.rkey(),
                               "a PUT outside the key's region");
        EXPECT_EQ(UCS_ERR_INVALID_ADDR, status) << ucs_status_string(status);
        EXPECT_TRUE(rbuf.pattern_matches(7)) << "the refused PUT was applied";
        EXPECT_TRUE(other.pattern_matches(8)) << "the refused PUT was applied";
        EXPECT_EQ(before.put_denied + 2, stats(*b).put_denied);
        EXPECT_EQ(1u, lines_with(cap, first, "refused a 8-byte PUT"));
    }

    ucs_status_t status = put_and_flush(rbuf.addr(), rbuf.rkey(), "a good PUT");
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    uint64_t got;
    memcpy(&got, rbuf.ptr(), sizeof(got));
    EXPECT_EQ(0x1122334455667788ull, got);
    EXPECT_EQ(before.put_denied + 2, stats(*b).put_denied);
    EXPECT_TRUE(m_errs.calls.empty());
}

/* ------------------------------------------------------------------------
 * Reserved fields: a packet with anything set that ud_verbs does not
 * define (a reserved byte, a flag its type does not carry, a sequence
 * number on a packet that is not numbered, bytes after a control packet,
 * immediate data) is dropped, whoever sends it, and has no effect
 */

namespace {

const size_t HDR = sizeof(uct_ud_hdr_t);

std::vector<uint8_t> with_flags(std::vector<uint8_t> pkt, uint8_t flags)
{
    pkt[offsetof(uct_ud_hdr_t, type)] |= flags;
    return pkt;
}

std::vector<uint8_t> with_u16(std::vector<uint8_t> pkt, size_t offset,
                              uint16_t value)
{
    memcpy(&pkt[offset], &value, sizeof(value));
    return pkt;
}

/* The ways to set something reserved in control packet @a good, named
 * @a name: its reserved byte at @a reserved (0: none), each flag of
 * @a flags, a sequence number, a byte after it */
void add_reserved_cases(std::vector<reserved_case> &cases,
                        const std::string &name,
                        const std::vector<uint8_t> &good, size_t reserved,
                        uint8_t flags)
{
    std::vector<uint8_t> longer = good;

    if (reserved != 0) {
        std::vector<uint8_t> pkt = good;
        pkt[reserved]            = 0x80;
        cases.push_back({name + ": reserved byte", pkt, false});
    }
    for (uint8_t flag :
         {(uint8_t)UCT_UD_PKT_FLAG_DENIED, (uint8_t)UCT_UD_PKT_FLAG_ACK_REQ}) {
        if (flags & flag) {
            cases.push_back(
                {name + ": flag " + hex(flag), with_flags(good, flag), false});
        }
    }
    cases.push_back({name + ": psn",
                     with_u16(good, offsetof(uct_ud_hdr_t, psn), 1), false});
    longer.push_back(0);
    cases.push_back({name + ": a byte after it", longer, false});
}

} // namespace

void uct_ud::send_reserved_cases(
    entity &e, raw_ud_qp &raw, const std::vector<reserved_case> &cases,
    const ucs::scoped_log_capture &cap,
    const std::function<void(const std::string &)> &check)
{
    std::string from = "from qp " + hex(raw.qp_num());
    size_t first     = cap.messages().size();
    uint32_t imm     = 0x5a5a5a5a;
    ud_stats before, after;

    for (const reserved_case &c : cases) {
        before = stats(e);
        raw.send(dev_addr(e), iface_qpn(e), c.pkt, false, c.imm ? &imm : NULL);
        wait_for([&] { return stats(e).rx_dropped > before.rx_dropped; },
                 c.what + " dropped");
        progress_for(20);
        after = stats(e);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped) << c.what;
        expect_unchanged(before, after, {&ud_stats::rx_dropped});
        check(c.what);
    }
    /* the first case's line passed the limit (later ones may not) */
    ASSERT_FALSE(cases.empty());
    ASSERT_LT(first, cap.messages().size()) << "no line for " << cases[0].what;
    const std::string &line = cap.messages()[first];
    EXPECT_NE(std::string::npos, line.find(from)) << line;
    EXPECT_NE(std::string::npos,
              line.find(cases[0].imm ? "immediate data"
                                     : "a reserved field, a flag its type "
                                       "does not define"))
        << line;
}

/* A CREQ with the right secret and anything reserved set makes no ep and
 * gets no reply; the same request without it connects */
TEST_P(uct_ud, reserved_fields_of_creq_dropped)
{
    entity *b                      = create_entity(params({}, true));
    std::unique_ptr<raw_ud_qp> raw = new_raw_qp(*b);
    const std::vector<uint8_t> good =
        creq_packet(iface_secret(*b), 9, 0, dev_addr(*b));
    unsigned eps = ep_count(*b);
    std::vector<reserved_case> cases;
    std::vector<uint8_t> reply;

    add_reserved_cases(cases, "CREQ", good,
                       HDR + offsetof(uct_ud_creq_t, reserved),
                       UCT_UD_PKT_FLAG_DENIED | UCT_UD_PKT_FLAG_ACK_REQ);
    cases.push_back({"CREQ: ack_psn",
                     with_u16(good, offsetof(uct_ud_hdr_t, ack_psn), 1),
                     false});
    cases.push_back({"CREQ: immediate data", good, true});
    ucs::scoped_log_capture cap;
    send_reserved_cases(*b, *raw, cases, cap, [&](const std::string &what) {
        EXPECT_EQ(eps, ep_count(*b)) << what;
    });
    EXPECT_FALSE(raw->recv(reply, 0.1)) << "a reply to a refused request";

    raw->send(dev_addr(*b), iface_qpn(*b), good);
    EXPECT_TRUE(raw_recv_type(*b, *raw, UCT_UD_PKT_CREP, reply));
    EXPECT_EQ(eps + 1, ep_count(*b));
    EXPECT_EQ(1u, private_count(*b));
    EXPECT_TRUE(m_errs.calls.empty());
    close_all(); /* the count of suppressed lines */
}

/* From a connected peer, to its ep: a DISC, a DISC_REP, an ACK and a NAK
 * with anything reserved set, and an AM with immediate data, change
 * nothing (the ep stays, no reply, no message); then the same packets
 * without it work */
TEST_P(uct_ud, reserved_fields_from_the_peer_dropped)
{
    entity *b        = create_entity(params({}, true));
    am_recorder &rec = install_recorder(*b, AM_ID);
    raw_peer peer;
    ASSERT_TRUE(raw_connect(*b, peer, 21));
    const uint32_t x                = peer.ep_id;
    const size_t disc_reserved      = HDR + offsetof(uct_ud_disc_t, reserved);
    const std::vector<uint8_t> disc = disc_packet(x, UCT_UD_PKT_DISC, 21);
    const std::vector<uint8_t> ack_req =
        with_flags(ud_packet(x, UCT_UD_PKT_ACK, 0, 0), UCT_UD_PKT_FLAG_ACK_REQ);
    uint64_t map = 0;
    const std::vector<uint8_t> nak =
        ud_packet(x, UCT_UD_PKT_NAK, 0, 0, &map, sizeof(map));
    std::vector<reserved_case> cases;
    std::vector<uint8_t> reply;

    cases.push_back({"AM: immediate data", am_packet(x, 1, 1), true});
    add_reserved_cases(cases, "DISC", disc, disc_reserved,
                       UCT_UD_PKT_FLAG_ACK_REQ);
    add_reserved_cases(cases, "DISC_REP",
                       disc_packet(x, UCT_UD_PKT_DISC_REP, 21), disc_reserved,
                       UCT_UD_PKT_FLAG_ACK_REQ);
    add_reserved_cases(cases, "ACK", ack_req, 0, 0);
    add_reserved_cases(cases, "NAK", nak, 0, UCT_UD_PKT_FLAG_ACK_REQ);
    ucs::scoped_log_capture cap;
    send_reserved_cases(*b, *peer.qp, cases, cap, [&](const std::string &what) {
        EXPECT_EQ(1u, private_count(*b)) << what;
        EXPECT_EQ(0u, rec.count()) << what;
    });
    EXPECT_FALSE(raw_recv_type(*b, *peer.qp, UCT_UD_PKT_ACK, reply, 0.1))
        << "an acknowledgement asked by a dropped packet";
    EXPECT_FALSE(raw_recv_type(*b, *peer.qp, UCT_UD_PKT_DISC_REP, reply, 0.1))
        << "a reply to a dropped disconnect";

    /* the same packets with nothing reserved set */
    peer.qp->send(dev_addr(*b), iface_qpn(*b), am_packet(x, 1, 1));
    wait_for([&] { return rec.count() == 1; }, "the message");
    peer.qp->send(dev_addr(*b), iface_qpn(*b), ack_req);
    EXPECT_TRUE(raw_recv_type(*b, *peer.qp, UCT_UD_PKT_ACK, reply))
        << "no acknowledgement asked for";
    peer.qp->send(dev_addr(*b), iface_qpn(*b), disc);
    EXPECT_TRUE(raw_recv_type(*b, *peer.qp, UCT_UD_PKT_DISC_REP, reply))
        << "no reply to the disconnect";
    wait_for([&] { return private_count(*b) == 0; }, "the peer's ep freed");
    EXPECT_EQ(1u, rec.count());
    EXPECT_TRUE(m_errs.calls.empty());
    close_all();
}

/* An ep connecting to an iface (here the test's raw QP) takes no CREP
 * with anything reserved set; the same reply without it connects it */
TEST_P(uct_ud, reserved_fields_of_crep_dropped)
{
    entity *b                      = create_entity(params({}, true));
    std::unique_ptr<raw_ud_qp> raw = new_raw_qp(*b);
    uct_ud_iface_addr_t addr;
    std::vector<uint8_t> pkt;
    crep_info creq;

    memset(&addr, 0, sizeof(addr));
    uct_ud_u24_set(addr.qp_num, raw->qp_num());
    std::vector<char> iface_addr(sizeof(addr));
    memcpy(iface_addr.data(), &addr, sizeof(addr));
    uct_ep_h ep = connect_iface(*b, b->dev_addr(), iface_addr);
    ASSERT_TRUE(raw_recv_type(*b, *raw, UCT_UD_PKT_CREQ, pkt));
    ASSERT_TRUE(parse_creq(pkt, &creq));

    const std::vector<uint8_t> good =
        crep_packet(creq.src_id, 33, creq.conn_sn);
    std::vector<reserved_case> cases;
    add_reserved_cases(cases, "CREP", good,
                       HDR + offsetof(uct_ud_crep_t, reserved),
                       UCT_UD_PKT_FLAG_DENIED | UCT_UD_PKT_FLAG_ACK_REQ);
    cases.push_back({"CREP: immediate data", good, true});
    ucs::scoped_log_capture cap;
    send_reserved_cases(*b, *raw, cases, cap, [&](const std::string &what) {
        EXPECT_FALSE(connected(*b, ep)) << what;
    });

    raw->send(dev_addr(*b), iface_qpn(*b), good);
    wait_for([&] { return connected(*b, ep); }, "connected by the reply");
    EXPECT_EQ(33u, uct_ud_ep(ep)->dest_id);
    close_all();
}

/* ------------------------------------------------------------------------
 * Packets held after a gap: shares of the reorder table
 */

namespace {

/* AMs of ep @a ep_id with PSNs [@a first, @a end), header base + psn */
std::vector<std::vector<uint8_t>> am_run(uint32_t ep_id, uint16_t first,
                                         uint16_t end, uint64_t base)
{
    std::vector<std::vector<uint8_t>> pkts;

    for (uint16_t psn = first; psn < end; ++psn) {
        pkts.push_back(am_packet(ep_id, psn, base + psn));
    }
    return pkts;
}

} // namespace

/* One peer sends far more packets after a gap than its share (and than
 * the whole table), then another peer sends a few after a gap of its own:
 * the first holds its share only, the second's are all held, and the
 * moment its gap fills its whole stream is delivered, in order and once,
 * without any resend (the raw peers never resend). Then the first's gap
 * fills: what it held follows, its excess was not kept. */
TEST_P(uct_ud, reorder_share_keeps_other_peers)
{
    entity *b = create_entity(params({{"IB_RX_QUEUE_LEN", "128"}}, true));
    am_recorder &rec     = install_recorder(*b, AM_ID);
    const unsigned share = ud(*b)->ooo.share;
    raw_peer p1, p2;

    EXPECT_EQ(64u, ud(*b)->ooo.max);
    EXPECT_EQ(16u, share);
    ASSERT_TRUE(raw_connect(*b, p1, 31));
    ASSERT_TRUE(raw_connect(*b, p2, 32));
    ud_stats before = stats(*b);

    /* gap: PSNs 1 and 2 */
    send_gap_packets(*b, *p1.qp, am_run(p1.ep_id, 3, 83, 1000));
    EXPECT_EQ(share, held_by(*b, p1.ep_id)) << "the first peer over its share";
    send_gap_packets(*b, *p2.qp, am_run(p2.ep_id, 2, 8, 2000));
    EXPECT_EQ(6u, held_by(*b, p2.ep_id)) << "the second peer's packets";
    EXPECT_EQ(0u, rec.count());

    p2.qp->send(dev_addr(*b), iface_qpn(*b), am_packet(p2.ep_id, 1, 2001));
    wait_for([&] { return headers_between(rec, 2000, 3000).size() >= 7; },
             "the second peer's stream", 5);
    progress_for(50);
    EXPECT_EQ(iota(2001, 7), headers_between(rec, 2000, 3000));
    EXPECT_EQ(0u, held_by(*b, p2.ep_id));

    for (uint16_t psn = 1; psn <= 2; ++psn) {
        p1.qp->send(dev_addr(*b), iface_qpn(*b),
                    am_packet(p1.ep_id, psn, 1000 + psn));
    }
    wait_for(
        [&] { return headers_between(rec, 1000, 2000).size() >= 2 + share; },
        "the first peer's stream up to what it held", 5);
    progress_for(50);
    EXPECT_EQ(iota(1001, 2 + share), headers_between(rec, 1000, 2000));

    ud_stats after = stats(*b);
    EXPECT_EQ(before.rx_over_share + 80 - share, after.rx_over_share);
    EXPECT_EQ(before.rx_ooo + share + 6, after.rx_ooo);
    EXPECT_EQ(before.rx_evicted, after.rx_evicted);
    EXPECT_EQ(before.rx_ooo_full, after.rx_ooo_full);
    EXPECT_EQ(0u, ud(*b)->ooo.count);
    EXPECT_EQ(0u, ud(*b)->ooo.num_peers);
    EXPECT_TRUE(m_errs.calls.empty());
}

/* The table is full: a packet of a peer under its share takes the place
 * of everything held by the peer at its share, never of a peer under its
 * share; with nobody at its share, the packet is not held */
TEST_P(uct_ud, reorder_full_peer_at_share_gives_way)
{
    entity *b        = create_entity(params({{"IB_RX_QUEUE_LEN", "128"},
                                             {"UD_REORDER_BUFS", "32"},
                                             {"UD_PEER_REORDER_BUFS", "20"}},
                                            true));
    am_recorder &rec = install_recorder(*b, AM_ID);
    raw_peer p1, p2, p3, p4;

    EXPECT_EQ(32u, ud(*b)->ooo.max);
    EXPECT_EQ(20u, ud(*b)->ooo.share);
    ASSERT_TRUE(raw_connect(*b, p1, 41));
    ASSERT_TRUE(raw_connect(*b, p2, 42));
    ASSERT_TRUE(raw_connect(*b, p3, 43));
    ASSERT_TRUE(raw_connect(*b, p4, 44));
    ud_stats before = stats(*b);

    send_gap_packets(*b, *p1.qp, am_run(p1.ep_id, 3, 28, 1000)); /* 25 */
    send_gap_packets(*b, *p3.qp, am_run(p3.ep_id, 2, 5, 3000));  /* 3 */
    send_gap_packets(*b, *p2.qp, am_run(p2.ep_id, 2, 11, 2000)); /* 9 */
    EXPECT_EQ(20u, held_by(*b, p1.ep_id));
    EXPECT_EQ(32u, ud(*b)->ooo.count) << "the table is full";

    /* p2 is under its share: p1, at its share, gives way; p3 keeps its */
    send_gap_packets(*b, *p2.qp, am_run(p2.ep_id, 11, 12, 2000));
    EXPECT_EQ(0u, held_by(*b, p1.ep_id));
    EXPECT_EQ(10u, held_by(*b, p2.ep_id));
    EXPECT_EQ(3u, held_by(*b, p3.ep_id));
    ud_stats after = stats(*b);
    EXPECT_EQ(before.rx_evicted + 20, after.rx_evicted);
    EXPECT_EQ(before.rx_over_share + 5, after.rx_over_share);

    /* fill the table again without anyone at its share (p2 10, p3 19,
     * p1 3): p4's packet is not held */
    send_gap_packets(*b, *p3.qp, am_run(p3.ep_id, 5, 21, 3000)); /* 16 */
    send_gap_packets(*b, *p1.qp, am_run(p1.ep_id, 3, 6, 1000));  /* 3 */
    EXPECT_EQ(32u, ud(*b)->ooo.count);
    send_gap_packets(*b, *p4.qp, am_run(p4.ep_id, 2, 3, 4000));
    EXPECT_EQ(0u, held_by(*b, p4.ep_id));
    EXPECT_EQ(before.rx_ooo_full + 1, stats(*b).rx_ooo_full);
    EXPECT_EQ(before.rx_evicted + 20, stats(*b).rx_evicted);

    /* the gaps fill */
    for (raw_peer *p : {&p1, &p2, &p3, &p4}) {
        p->qp->send(dev_addr(*b), iface_qpn(*b),
                    am_packet(p->ep_id, 1, (p->own_id - 40) * 1000 + 1));
    }
    p1.qp->send(dev_addr(*b), iface_qpn(*b), am_packet(p1.ep_id, 2, 1002));
    wait_for(
        [&] {
            return (headers_between(rec, 1000, 2000).size() >= 5) &&
                   (headers_between(rec, 2000, 3000).size() >= 11) &&
                   (headers_between(rec, 3000, 4000).size() >= 20);
        },
        "the streams up to what was held", 5);
    progress_for(100);
    EXPECT_EQ(iota(1001, 5), headers_between(rec, 1000, 2000));
    EXPECT_EQ(iota(2001, 11), headers_between(rec, 2000, 3000));
    EXPECT_EQ(iota(3001, 20), headers_between(rec, 3000, 4000));
    EXPECT_EQ(iota(4001, 1), headers_between(rec, 4000, 5000));
    EXPECT_EQ(0u, ud(*b)->ooo.count);
    EXPECT_TRUE(m_errs.calls.empty());
}

/* REORDER_BUFS and PEER_REORDER_BUFS: auto, numbers, inf; out of range
 * values refuse the iface with a line naming the variable */
TEST_P(uct_ud, reorder_settings)
{
    struct {
        const char *bufs, *peer;
        unsigned max, share;
    } good[] = {{"auto", "auto", 64, 16}, {"0", "auto", 0, 1},
                {"100", "auto", 100, 25}, {"100", "inf", 100, 100},
                {"10", "7", 10, 7},       {"10", "12", 10, 10},
                {"2", "auto", 2, 1}};
    for (const auto &g : good) {
        entity e(res(), params({{"IB_RX_QUEUE_LEN", "128"},
                                {"UD_REORDER_BUFS", g.bufs},
                                {"UD_PEER_REORDER_BUFS", g.peer}}));
        EXPECT_EQ(g.max, ud(e)->ooo.max) << g.bufs << " " << g.peer;
        EXPECT_EQ(g.share, ud(e)->ooo.share) << g.bufs << " " << g.peer;
    }

    struct {
        const char *bufs, *peer, *line;
    } bad[] = {{"129", "auto", "UCX_UD_REORDER_BUFS=129"},
               {"inf", "auto", "UCX_UD_REORDER_BUFS=inf"},
               {"auto", "0", "UCX_UD_PEER_REORDER_BUFS=0"}};
    for (const auto &c : bad) {
        entity_params p = params({{"IB_RX_QUEUE_LEN", "128"},
                                  {"UD_REORDER_BUFS", c.bufs},
                                  {"UD_PEER_REORDER_BUFS", c.peer}});
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        EXPECT_THROW({ entity e(res(), p); }, std::runtime_error)
            << c.bufs << " " << c.peer;
        EXPECT_EQ(1u, lines_with(cap, first, c.line)) << c.line;
    }
}
