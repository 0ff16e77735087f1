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
    entity *b   = create_entity();
    entity *a   = create_entity(params({}, true));
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    mapped_buffer rbuf(64, *b);
    mapped_buffer other(1 << 20, *b); /* pages of its own */
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
