/*
 * ud_verbs connections: connection races, the pairing of eps, duplicated
 * and lost connection packets, a DISC from the wrong sender. The fixture
 * is in ud_test.h; test_ud_hostile.cc has the datagrams from a stranger,
 * test_ud_failure.cc peer failure and scale.
 */
#include "ud_test.h"

#include <cstring>
#include <iostream>
#include <unistd.h>
#include <vector>

/* ------------------------------------------------------------------------
 * Connections
 */

void uct_ud::simultaneous_connect(bool hold_async)
{
    const unsigned N = 100;
    entity *a        = create_entity(params({}, true));
    entity *b        = create_entity(params({}, true));
    am_recorder &ra  = install_recorder(*a, AM_ID);
    am_recorder &rb  = install_recorder(*b, AM_ID);

    /* with both async contexts held, neither side sees the other's request
     * before it sent its own */
    if (hold_async) {
        uct_ud_enter(ud(*a));
        uct_ud_enter(ud(*b));
    }
    uct_ep_h ab = a->connect_to(*b);
    uct_ep_h ba = b->connect_to(*a);
    if (hold_async) {
        uct_ud_leave(ud(*b));
        uct_ud_leave(ud(*a));
    }
    ASSERT_TRUE((ab != NULL) && (ba != NULL));

    for (unsigned i = 0; i < N; ++i) {
        ASSERT_TRUE(send_short(ab, i));
        ASSERT_TRUE(send_short(ba, 1000 + i));
    }
    wait_for([&] { return (ra.count() >= N) && (rb.count() >= N); },
             "messages both ways");
    progress_for(100);

    EXPECT_EQ(iota(0, N), headers(rb));
    EXPECT_EQ(iota(1000, N), headers(ra));
    EXPECT_EQ(1u, ep_count(*a));
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_EQ(0u, private_count(*a));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_EQ(uct_ud_ep(ab)->dest_id, uct_ud_ep(ba)->id);
    EXPECT_EQ(uct_ud_ep(ba)->dest_id, uct_ud_ep(ab)->id);
    EXPECT_EQ(uct_ud_ep(ab)->conn_sn, uct_ud_ep(ba)->conn_sn);
    EXPECT_TRUE(m_errs.calls.empty());
}

/* Both sides connect to each other's iface while neither progresses: the
 * requests cross, each matches the other's ep, one ep pair, traffic both
 * ways once and in order */
TEST_P(uct_ud, simultaneous_connect_crossing_requests)
{
    simultaneous_connect(true);
}

/* The same when the second side's ep takes the one the first side's
 * request already made */
TEST_P(uct_ud, simultaneous_connect_adopts_private_ep)
{
    simultaneous_connect(false);
}

/* Two eps each way: the n-th ep of one side pairs with the n-th of the
 * other */
TEST_P(uct_ud, connect_numbers_pair_eps)
{
    entity *a       = create_entity();
    entity *b       = create_entity();
    am_recorder &rb = install_recorder(*b, AM_ID);
    uct_ep_h ab0    = a->connect_to(*b);
    uct_ep_h ab1    = a->connect_to(*b);
    ASSERT_TRUE((ab0 != NULL) && (ab1 != NULL));
    ASSERT_TRUE(send_short(ab0, 0));
    ASSERT_TRUE(send_short(ab1, 1));
    wait_for([&] { return rb.count() == 2; }, "a message on each ep");
    EXPECT_EQ(2u, private_count(*b));

    uct_ep_h ba0 = b->connect_to(*a);
    uct_ep_h ba1 = b->connect_to(*a);
    ASSERT_TRUE((ba0 != NULL) && (ba1 != NULL));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_EQ(2u, ep_count(*a));
    EXPECT_EQ(2u, ep_count(*b));
    EXPECT_EQ(uct_ud_ep(ab0)->dest_id, uct_ud_ep(ba0)->id);
    EXPECT_EQ(uct_ud_ep(ab1)->dest_id, uct_ud_ep(ba1)->id);
    EXPECT_EQ(uct_ud_ep(ba0)->dest_id, uct_ud_ep(ab0)->id);
    EXPECT_EQ(uct_ud_ep(ba1)->dest_id, uct_ud_ep(ab1)->id);
}

/* The same CREQ twice (from a stranger that knows the secret): one ep,
 * two identical replies. A CREQ with the same number from another ep id
 * is refused; a new number makes a second ep. The stranger's packets on
 * its ep are taken once, a duplicate is counted and dropped. */
TEST_P(uct_ud, duplicate_creq_one_ep)
{
    entity *b                 = create_entity();
    am_recorder &rec          = install_recorder(*b, AM_ID);
    raw_ud_qp &raw            = raw_qp(*b);
    uct_ib_device_addr_t dest = dev_addr(*b);
    std::vector<uint8_t> creq = creq_packet(iface_secret(*b), 77, 0, dest);
    std::vector<uint8_t> reply;
    crep_info crep[2];

    for (int i = 0; i < 2; ++i) {
        raw.send(dest, iface_qpn(*b), creq, true);
        ASSERT_TRUE(raw.recv(reply, 5)) << "no reply to request " << i;
        ASSERT_TRUE(parse_crep(reply, &crep[i])) << i;
        EXPECT_EQ(77u, crep[i].dest_id);
        EXPECT_EQ(0u, crep[i].conn_sn);
    }
    EXPECT_EQ(crep[0].src_id, crep[1].src_id);
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_EQ(1u, private_count(*b));
    uct_ud_ep_t *bep = uct_ud_iface_ep(ud(*b), crep[0].src_id);
    ASSERT_TRUE(bep != NULL);
    EXPECT_EQ(raw.qp_num(), bep->dest_qpn);
    EXPECT_EQ(77u, bep->dest_id);

    /* data from the stranger on its ep, then the same packet again */
    ud_stats before = stats(*b);
    raw.send(dest, iface_qpn(*b), am_packet(crep[0].src_id, 1, 4242));
    wait_for([&] { return rec.count() == 1; }, "the stranger's message");
    raw.send(dest, iface_qpn(*b), am_packet(crep[0].src_id, 1, 4242));
    wait_for([&] { return stats(*b).rx_dup == before.rx_dup + 1; },
             "the duplicate counted");
    progress_for(50);
    EXPECT_EQ(1u, rec.count());
    EXPECT_EQ(4242u, am_header(rec.at(0)));

    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        before       = stats(*b);
        raw.send(dest, iface_qpn(*b),
                 creq_packet(iface_secret(*b), 78, 0, dest));
        wait_for([&] { return stats(*b).rx_dropped > before.rx_dropped; },
                 "the conflicting request dropped");
        EXPECT_EQ(1u, lines_with(cap, first, "is connected to ep"));
        EXPECT_EQ(1u, ep_count(*b));
    }

    raw.send(dest, iface_qpn(*b), creq_packet(iface_secret(*b), 79, 1, dest));
    crep_info second;
    bool got = false;
    while (!got && raw.recv(reply, 5)) {
        got = parse_crep(reply, &second) && (second.dest_id == 79);
    }
    ASSERT_TRUE(got) << "no reply to a new connection number";
    EXPECT_EQ(1u, second.conn_sn);
    EXPECT_NE(crep[0].src_id, second.src_id);
    EXPECT_EQ(2u, ep_count(*b));
    close_all();
}

/* A DISC is a peer's input: one that names another ep as its sender is
 * dropped with a line and frees nothing; the right one frees the ep the
 * request made and is answered with a DISC_REP naming it */
TEST_P(uct_ud, disconnect_from_wrong_sender_dropped)
{
    entity *b                 = create_entity();
    raw_ud_qp &raw            = raw_qp(*b);
    uct_ib_device_addr_t dest = dev_addr(*b);
    std::vector<uint8_t> reply;
    crep_info crep;

    raw.send(dest, iface_qpn(*b), creq_packet(iface_secret(*b), 77, 0, dest),
             true);
    ASSERT_TRUE(raw.recv(reply, 5)) << "no reply to the request";
    ASSERT_TRUE(parse_crep(reply, &crep));
    ASSERT_EQ(1u, private_count(*b));

    uct_ud_disc_t disc;
    memset(&disc, 0, sizeof(disc));
    uct_ud_u24_set(disc.src_id, 78); /* not the ep b's ep is connected to */
    {
        ucs::scoped_log_capture cap;
        ud_stats before, after;
        send_dropped(
            *b, raw,
            ud_packet(crep.src_id, UCT_UD_PKT_DISC, 0, 0, &disc, sizeof(disc)),
            &before, &after);
        EXPECT_EQ(1u, lines_with(cap, 0, "which is not its peer"));
        EXPECT_EQ(1u, private_count(*b));
    }

    uct_ud_u24_set(disc.src_id, 77);
    raw.send(
        dest, iface_qpn(*b),
        ud_packet(crep.src_id, UCT_UD_PKT_DISC, 0, 0, &disc, sizeof(disc)));
    wait_for([&] { return ep_count(*b) == 0; }, "b's ep freed");
    bool got = false;
    while (!got && raw.recv(reply, 5)) {
        uct_ud_hdr_t hdr;
        uct_ud_disc_t rep;
        if (reply.size() < sizeof(hdr) + sizeof(rep)) {
            continue;
        }
        memcpy(&hdr, reply.data(), sizeof(hdr));
        memcpy(&rep, reply.data() + sizeof(hdr), sizeof(rep));
        got = ((hdr.type & UCT_UD_PKT_TYPE_MASK) == UCT_UD_PKT_DISC_REP) &&
              (uct_ud_u24_get(hdr.dest_id) == 77) &&
              (uct_ud_u24_get(rep.src_id) == crep.src_id);
    }
    EXPECT_TRUE(got) << "no DISC_REP naming the freed ep";
    uct_ud_enter(ud(*b));
    EXPECT_EQ(1u, ud(*b)->stats.disc_rx);
    uct_ud_leave(ud(*b));
    close_all();
}

/* The reply to the first CREQ is lost: a's receive queue is full of a
 * stranger's garbage when it comes (a's async context is held, so nothing
 * drains it). The request is sent again, and the connection completes
 * with one ep on each side. */
TEST_P(uct_ud, lost_crep_connection_completes)
{
    entity *a       = create_entity(params({{"IB_RX_QUEUE_LEN", "128"}}, true));
    entity *b       = create_entity();
    am_recorder &rb = install_recorder(*b, AM_ID);
    am_recorder &ra = install_recorder(*a, AM_ID);
    raw_ud_qp &raw  = raw_qp(*a);
    uct_ud_iface_t *ia = ud(*a);
    ud_stats before    = stats(*a);

    ucs::scoped_log_capture cap;
    uct_ud_enter(ia);
    unsigned posted = ia->rx.posted;
    for (unsigned i = 0; i < posted + 8; ++i) {
        raw.send(dev_addr(*a), iface_qpn(*a), ud_packet(0, 61, i, 0));
    }
    uct_ep_h ab = a->connect_to(*b);
    /* b takes the request (its async context answers at once) */
    double deadline = now_sec() + 10;
    while ((ep_count(*b) == 0) && (now_sec() < deadline)) {
        b->progress();
    }
    usleep(200000); /* the reply reaches a's full queue and is dropped */
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_FALSE(uct_ud_ep(ab)->flags & UCT_UD_EP_FLAG_CONNECTED);
    uct_ud_leave(ia);
    ASSERT_TRUE(ab != NULL);

    wait_for([&] { return connected(*a, ab); }, "the connection");
    ud_stats after = stats(*a);
    EXPECT_EQ(before.rx_dropped + posted, after.rx_dropped)
        << "the queue was not full of garbage when the reply came";
    ASSERT_TRUE(send_short(ab, 1));
    uct_ep_h ba = b->connect_to(*a);
    ASSERT_TRUE(ba != NULL);
    ASSERT_TRUE(send_short(ba, 2));
    wait_for([&] { return (rb.count() == 1) && (ra.count() == 1); },
             "a message each way");
    EXPECT_EQ(1u, ep_count(*a));
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_EQ(1u, am_header(rb.at(0)));
    EXPECT_EQ(2u, am_header(ra.at(0)));
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << posted << " receive buffers filled, "
              << "the reply lost and the request sent again" << std::endl;
    close_all();
}

/* ------------------------------------------------------------------------
 * Acknowledgements
 */

uct_ep_h uct_ud::connect_first_message(entity &a, entity &b, am_recorder &rec)
{
    uct_ep_h ab = a.connect_to(b);
    if ((ab == NULL) || !send_short(ab, 0)) {
        ADD_FAILURE() << "no ep, or its first message not sent";
        return NULL;
    }
    flush_ep(a, ab); /* connected, and the first acknowledgement in */
    wait_for([&] { return rec.count() == 1; }, "the first message");
    return ab;
}

/* A zcopy send completes when its acknowledgement comes, so the sender
 * asks for one once the ep stops sending such packets (here when 8 are in
 * flight, or the last is sent). The receiver's timer is slow
 * (1 s) and its acknowledgement threshold is never reached (a quarter of
 * the window is 64), yet every batch completes while both progress, the
 * last one too. Without asking, the batches waited for b's timer or a's
 * resend (0.5 s here): 3.96 s and 32 resends for these 64 messages; asking
 * once per answer left the last messages to the resend (0.52 s). */
TEST_P(uct_ud, zcopy_completion_asks_for_ack)
{
    const unsigned N = 64, IN_FLIGHT = 8;
    const size_t LENGTH = 512;
    const double LIMIT  = 0.4; /* under one resend timeout */
    entity *a = create_entity(params({{"UD_RESEND_TIMEOUT", "500ms"}}, true));
    entity *b = create_entity(params({{"UD_TIMER_TICK", "1s"}}, true));
    am_recorder &rec = install_recorder(*b, AM_ID);
    uct_ep_h ab      = connect_first_message(*a, *b, rec);
    ASSERT_TRUE(ab != NULL);
    ASSERT_LE(sizeof(uint64_t) + LENGTH, a->iface_attr().cap.am.max_zcopy);

    mapped_buffer buf(LENGTH, *a);
    buf.pattern_fill(7);
    std::vector<counted_completion> comps(N);
    ud_stats before = stats(*a);
    auto acks       = [](const entity &e) {
        return ud_read<uint64_t>(
            e, [](const uct_ud_iface_t *i) { return i->stats.tx_acks; });
    };
    auto asks = [](const entity &e) {
        return ud_read<uint64_t>(
            e, [](const uct_ud_iface_t *i) { return i->stats.tx_ack_reqs; });
    };
    uint64_t acks_before = acks(*b), asks_before = asks(*a);
    unsigned posted = 0, done = 0;
    double start = now_sec(), deadline = start + 10;
    while ((done < N) && (now_sec() < deadline)) {
        if ((posted < N) && (posted - done < IN_FLIGHT)) {
            uint64_t hdr        = posted + 1;
            uct_iov_t iov       = buf.iov(0, LENGTH);
            ucs_status_t status = uct_ep_am_zcopy(ab, AM_ID, &hdr, sizeof(hdr),
                                                  &iov, 1, 0, comps[posted]);
            if (status == UCS_INPROGRESS) {
                ++posted;
            } else {
                ASSERT_EQ(UCS_ERR_NO_RESOURCE, status);
            }
        }
        a->progress();
        b->progress();
        while ((done < posted) && (comps[done].calls == 1)) {
            EXPECT_EQ(UCS_OK, comps[done].status_at_call);
            ++done;
        }
    }
    double elapsed  = now_sec() - start;
    uint64_t b_acks = acks(*b) - acks_before, a_asks = asks(*a) - asks_before;
    ASSERT_EQ(N, done) << "completions within 10 s";
    wait_for([&] { return rec.count() == N + 1; }, "the messages");
    EXPECT_EQ(iota(0, N + 1), headers(rec));
    const std::string payload(buf.cptr(), LENGTH);
    for (unsigned i = 1; i <= N; ++i) {
        EXPECT_EQ(payload, rec.at(i).data.substr(sizeof(uint64_t))) << i;
    }
    EXPECT_EQ(before.tx_resent, stats(*a).tx_resent);
    EXPECT_LT(elapsed, LIMIT) << "zcopy completions waited for a timer";
    /* a burst asks when it stops, not on each packet */
    EXPECT_LE(b_acks, N / 2) << "ACKs from b for " << N << " messages";
    EXPECT_LE(a_asks, N / 4) << "pure ACK requests from a";
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << N << " zcopy sends of " << LENGTH << " B, "
              << IN_FLIGHT << " in flight: all complete in " << elapsed * 1000
              << " ms; " << a_asks << " pure ACK requests, " << b_acks
              << " ACKs back" << std::endl;
}

/* A sender that posts a burst of zcopy sends and then sleeps on its event
 * fd (uct_iface_event_arm(), poll) without progressing: arming asks for
 * the acknowledgement the completions wait for. Its own timer is slow
 * (1 s) and would otherwise be the first to ask; b is served by its async
 * context alone. */
TEST_P(uct_ud, zcopy_burst_completes_while_sender_sleeps)
{
    const unsigned N    = 8;
    const size_t LENGTH = 256;
    entity *a           = create_entity(
                  params({{"UD_TIMER_TICK", "1s"}, {"UD_RESEND_TIMEOUT", "1s"}}, true));
    entity *b        = create_entity(params({}, true));
    am_recorder &rec = install_recorder(*b, AM_ID);
    uct_ep_h ab      = connect_first_message(*a, *b, rec);
    ASSERT_TRUE(ab != NULL);

    mapped_buffer buf(LENGTH, *a);
    buf.pattern_fill(3);
    std::vector<counted_completion> comps(N);
    for (unsigned i = 0; i < N; ++i) {
        uint64_t hdr  = i + 1;
        uct_iov_t iov = buf.iov(0, LENGTH);
        ucs_status_t status =
            uct_ep_am_zcopy(ab, AM_ID, &hdr, sizeof(hdr), &iov, 1, 0, comps[i]);
        ASSERT_EQ(UCS_INPROGRESS, status) << i;
    }
    auto all_done = [&] {
        for (const counted_completion &c : comps) {
            if (c.calls != 1) {
                return false;
            }
        }
        return true;
    };
    double start = now_sec(), deadline = start + 5;
    unsigned sleeps = 0;
    while (!all_done() && (now_sec() < deadline)) {
        ucs_status_t status = a->event_arm(UCT_EVENT_SEND_COMP);
        if (status == UCS_OK) {
            ++sleeps;
            a->event_wait(100);
        } else {
            ASSERT_EQ(UCS_ERR_BUSY, status);
        }
        a->progress(); /* what the event says is taken by progress */
    }
    double elapsed = now_sec() - start;
    ASSERT_TRUE(all_done()) << "completions within 5 s";
    for (const counted_completion &c : comps) {
        EXPECT_EQ(UCS_OK, c.status_at_call);
    }
    EXPECT_LT(elapsed, 0.5) << "the completions waited for a's timer";
    EXPECT_GE(sleeps, 1u);
    wait_for([&] { return rec.count() == N + 1; }, "the messages");
    EXPECT_EQ(iota(0, N + 1), headers(rec));
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << N << " zcopy sends, then the sender "
              << "sleeps: all complete in " << elapsed * 1000 << " ms ("
              << sleeps << " sleeps)" << std::endl;
}

/* The peer asks for an ACK (its flush) while a's zcopy still waits to be
 * asked for: a's progress answers the peer in the same pass that finds
 * its own send too recent to ask, and the ep must stay queued, so that
 * the next pass asks. Dropped from the queue there, the completion
 * waited for a's resend (its timer ticks once a second here). */
TEST_P(uct_ud, zcopy_asked_for_after_answering_the_peer)
{
    const size_t LENGTH = 256;
    entity *a           = create_entity(params(
                  {{"UD_TIMER_TICK", "1s"}, {"UD_RESEND_TIMEOUT", "500ms"}}, true));
    entity *b       = create_entity(params({{"UD_TIMER_TICK", "1s"}}, true));
    am_recorder &rb = install_recorder(*b, AM_ID);
    am_recorder &ra = install_recorder(*a, AM_ID);
    uct_ep_h ab     = a->connect_to(*b);
    uct_ep_h ba     = b->connect_to(*a);
    ASSERT_TRUE((ab != NULL) && (ba != NULL));
    ASSERT_TRUE(send_short(ab, 0));
    ASSERT_TRUE(send_short(ba, 0));
    flush_ep(*a, ab);
    flush_ep(*b, ba);
    wait_for([&] { return (ra.count() == 1) && (rb.count() == 1); },
             "a message each way");

    mapped_buffer buf(LENGTH, *a);
    buf.pattern_fill(5);
    counted_completion comp;
    uint64_t hdr  = 1;
    uct_iov_t iov = buf.iov(0, LENGTH);
    ASSERT_EQ(UCS_INPROGRESS,
              uct_ep_am_zcopy(ab, AM_ID, &hdr, sizeof(hdr), &iov, 1, 0, comp));
    /* b sends and asks for a's ACK before a progresses */
    ASSERT_TRUE(send_short(ba, 1));
    counted_completion b_flush;
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(ba, 0, b_flush));
    usleep(50000); /* both packets reach a's receive queue */

    double start = now_sec(), deadline = start + 5;
    while (((comp.calls == 0) || (b_flush.calls == 0)) &&
           (now_sec() < deadline)) {
        a->progress();
        b->progress();
    }
    double elapsed = now_sec() - start;
    ASSERT_EQ(1, comp.calls);
    ASSERT_EQ(1, b_flush.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call);
    EXPECT_LT(elapsed, 0.3) << "a's zcopy waited for its resend";
    wait_for([&] { return (rb.count() == 2) && (ra.count() == 2); },
             "the messages");
    EXPECT_EQ(1u, am_header(rb.at(1)));
    EXPECT_EQ(1u, am_header(ra.at(1)));
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] zcopy completed " << elapsed * 1000
              << " ms after a answered b's request" << std::endl;
}

/* An ep that owes its peer a NAK (packets held after a gap) when its
 * zcopy is to be asked for: a NAK may not carry ACK_REQ (the peer drops
 * such a packet as malformed, and the request with it), so the NAK goes
 * alone and the next pass asks. The held packets are simulated: the
 * ep's count says one is held, the reorder table holds none, so the NAK
 * names nothing to resend. */
TEST_P(uct_ud, zcopy_ask_not_on_a_nak)
{
    const size_t LENGTH = 128;
    entity *a           = create_entity(params(
                  {{"UD_TIMER_TICK", "1s"}, {"UD_RESEND_TIMEOUT", "500ms"}}, true));
    entity *b       = create_entity(params({{"UD_TIMER_TICK", "1s"}}, true));
    am_recorder &rb = install_recorder(*b, AM_ID);
    uct_ep_h ab     = connect_first_message(*a, *b, rb);
    ASSERT_TRUE(ab != NULL);

    mapped_buffer buf(LENGTH, *a);
    buf.pattern_fill(9);
    counted_completion comp;
    uint64_t hdr       = 1;
    uct_iov_t iov      = buf.iov(0, LENGTH);
    uct_ud_iface_t *ia = ud(*a);
    uct_ud_ep_t *ep    = uct_ud_ep(ab);
    ud_stats before    = stats(*b);
    ASSERT_EQ(UCS_INPROGRESS,
              uct_ep_am_zcopy(ab, AM_ID, &hdr, sizeof(hdr), &iov, 1, 0, comp));
    uct_ud_enter(ia);
    ep->rx_flags |= UCT_UD_EP_RX_NAK;
    ep->rx.ooo = 1;
    uct_ud_leave(ia);

    /* the first pass finds the send recent, the second asks */
    double start = now_sec(), deadline = start + 5;
    for (unsigned i = 0;
         (i < 4) || ((comp.calls == 0) && (now_sec() < deadline)); ++i) {
        a->progress();
        if (i == 3) {
            uct_ud_enter(ia);
            EXPECT_FALSE(ep->rx_flags & UCT_UD_EP_RX_NAK) << "the NAK went";
            ep->rx.ooo = 0;
            ep->rx_flags &= (uint8_t)~UCT_UD_EP_RX_NAK;
            uct_ud_leave(ia);
        }
        b->progress();
    }
    double elapsed = now_sec() - start;
    ASSERT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call);
    EXPECT_LT(elapsed, 0.3) << "the request was lost with the NAK";
    EXPECT_EQ(before.rx_dropped, stats(*b).rx_dropped)
        << "b dropped a NAK with ACK_REQ";
    wait_for([&] { return rb.count() == 2; }, "the zcopy message");
    EXPECT_EQ(1u, am_header(rb.at(1)));
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] NAK owed: zcopy completed in " << elapsed * 1000
              << " ms, b dropped " << stats(*b).rx_dropped - before.rx_dropped
              << std::endl;
}

/* a's user progressed, then lost its CPU while b's ACK came: the ACK
 * waits in a's receive queue and the tick after the resend wait finds
 * "progressed" set, so the async context did not take packets there. The
 * tick must take them before its sweep: it sent again what b had
 * acknowledged (a duplicate at b), which across the thousands of eps of
 * clients that a loaded host stalls made a resend storm at their server.
 * b's tick never comes and b progressed last, so b answers only when the
 * test progresses it. */
TEST_P(uct_ud, tick_takes_acks_before_resending)
{
    /* the tick's order is the transport's, whatever the device */
    if (res().dev_name != resources_of(UCT_UD_VERBS_NAME).front().dev_name) {
        GTEST_SKIP() << "runs on the first ud_verbs device only";
    }
    entity *a       = create_entity(params(
              {{"UD_TIMER_TICK", "500ms"}, {"UD_RESEND_TIMEOUT", "5ms"}}, true));
    entity *b       = create_entity(params({{"UD_TIMER_TICK", "1000s"}}, true));
    am_recorder &rb = install_recorder(*b, AM_ID);
    uct_ep_h ab     = connect_first_message(*a, *b, rb);
    ASSERT_TRUE(ab != NULL);
    uct_ud_iface_t *ia = ud(*a);
    uct_ud_ep_t *ep    = uct_ud_ep(ab);
    auto b_acks        = [&] {
        return ud_read<uint64_t>(
            *b, [](const uct_ud_iface_t *i) { return i->stats.tx_acks; });
    };
    auto swept = [&] {
        uct_ud_enter(ia);
        bool stamped = (ep->ack_time != UCT_UD_TIME_AT_SWEEP);
        uct_ud_leave(ia);
        return stamped;
    };
    /* a round trip of 1 ms learned (the connection's sample varies with
     * a's half-second ticks): the resend wait is RESEND_TIMEOUT */
    uct_ud_enter(ia);
    ia->data.srtt    = ucs_time_from_msec(1);
    ia->data.rttvar  = 0;
    ia->data.backoff = 0;
    uct_ud_leave(ia);
    b->progress();
    ud_stats a_before = stats(*a), b_before = stats(*b);
    uint64_t acks_before = b_acks();

    ASSERT_TRUE(send_short(ab, 1));
    counted_completion comp;
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(ab, 0, comp));
    /* a's first tick after the send starts the resend wait */
    double deadline = now_sec() + 5;
    while (!swept() && (now_sec() < deadline)) {
        usleep(1000);
    }
    ASSERT_TRUE(swept()) << "no tick of a in 5 s";
    double ticked = now_sec();
    a->progress();
    EXPECT_EQ(0, comp.calls) << "b answered before the test let it";
    while ((b_acks() == acks_before) && (now_sec() < deadline)) {
        b->progress();
    }
    ASSERT_GT(b_acks(), acks_before) << "b did not answer the flush";
    double answered = now_sec() - ticked;
    /* past a's next tick (and one more, which takes the ACK anyway) */
    usleep(1100000);
    while ((comp.calls == 0) && (now_sec() < deadline + 1)) {
        a->progress();
    }
    ASSERT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call);
    ASSERT_LT(answered, 0.4) << "b's answer came after a's next tick";
    EXPECT_EQ(a_before.tx_resent, stats(*a).tx_resent)
        << "a's tick resent what b had acknowledged";
    EXPECT_EQ(b_before.rx_dup, stats(*b).rx_dup);
    wait_for([&] { return rb.count() == 2; }, "the message");
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] b answered " << answered * 1000
              << " ms after a's tick; a resent "
              << stats(*a).tx_resent - a_before.tx_resent << std::endl;
}

/* An iface with 64 send slots and a resend wait of 5 s, and 200 of its
 * eps connected to @a b's iface: more eps than send slots, where a packet
 * that found no slot must go when slots come back, not after a wait */
static const unsigned FEW_SLOTS_EPS = 200;

uct_test::entity *uct_ud::few_slots_entity()
{
    return create_entity(params({{"IB_TX_QUEUE_LEN", "64"},
                                 {"UD_RESEND_TIMEOUT", "5s"},
                                 {"UD_TIMEOUT", "60s"}},
                                true));
}

bool uct_ud::connect_all(entity &a, entity &b, std::vector<uct_ep_h> &eps)
{
    auto count = [&] {
        unsigned n = 0;
        for (uct_ep_h ep : eps) {
            n += connected(a, ep);
        }
        return n;
    };

    if (!connect_eps(a, b, FEW_SLOTS_EPS, eps)) {
        return false;
    }
    wait_for([&] { return count() == eps.size(); }, "every ep connected", 60);
    return count() == eps.size();
}

/* a connects 200 eps to b with 64 send slots: the CREQs beyond the free
 * slots wait in the queue of CREQs for slots. They were counted as sent
 * and lost, so each waited out RESEND_TIMEOUT, was sent again and halved
 * the CREQ window (17 s for the 200 in the VM). */
TEST_P(uct_ud, creqs_wait_for_send_slots)
{
    entity *a = few_slots_entity();
    entity *b = create_entity(params({}, true));
    std::vector<uct_ep_h> eps;

    double t0 = now_sec();
    ASSERT_TRUE(connect_all(*a, *b, eps));
    double elapsed = now_sec() - t0;
    auto creq =
        ud_read<std::pair<uint64_t, uint64_t>>(*a, [](const uct_ud_iface_t *i) {
            return std::make_pair(i->stats.creq_resent,
                                  i->stats.creq_cwnd_cuts);
        });
    EXPECT_EQ(0u, creq.first) << "CREQs sent again";
    EXPECT_EQ(0u, creq.second) << "CREQ window cuts";
    EXPECT_EQ(FEW_SLOTS_EPS, private_count(*b));
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << FEW_SLOTS_EPS << " eps, 64 send slots: "
              << "connected in " << elapsed * 1000 << " ms" << std::endl;
}

/* a flushes 200 eps that each sent one message, with 64 send slots: the
 * flush's requests for ACKs beyond the free slots go once slots come
 * back. They were dropped, so the flush waited for the resend of each
 * such ep's message (RESEND_TIMEOUT). b's timer never ticks: it answers
 * only what asks. */
TEST_P(uct_ud, iface_flush_asks_past_the_send_queue)
{
    entity *a = few_slots_entity();
    entity *b = create_entity(params({{"UD_TIMER_TICK", "1000s"}}, true));
    am_recorder &rec = install_recorder(*b, AM_ID);
    std::vector<uct_ep_h> eps;

    auto no_slot = [&] {
        return ud_read<uint64_t>(
            *a, [](const uct_ud_iface_t *i) { return i->stats.tx_no_slot; });
    };
    ASSERT_TRUE(connect_all(*a, *b, eps));
    ud_stats before         = stats(*a);
    uint64_t no_slot_before = no_slot();
    double t0               = now_sec();
    ASSERT_TRUE(send_one_on_each(*a, eps, rec));
    double elapsed = now_sec() - t0;
    EXPECT_EQ(before.tx_resent, stats(*a).tx_resent)
        << "the flush waited for resends";
    /* 200 requests for 64 slots, in one call: the object tree counts the
     * ones that waited */
    EXPECT_GT(no_slot(), no_slot_before);
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << FEW_SLOTS_EPS << " eps, 64 send slots: "
              << "send and flush " << elapsed * 1000 << " ms" << std::endl;
}

/* a destroys 200 connected eps with 64 send slots: each tells b, whose
 * eps for them go. A DISC that found no free slot waited a growing
 * resend wait (RESEND_TIMEOUT, then doubled) instead of the next tick. */
TEST_P(uct_ud, destroyed_eps_tell_the_peer_past_the_send_queue)
{
    entity *a = few_slots_entity();
    entity *b = create_entity(params({}, true));
    std::vector<uct_ep_h> eps;

    ASSERT_TRUE(connect_all(*a, *b, eps));
    wait_for([&] { return private_count(*b) == FEW_SLOTS_EPS; },
             "b's eps for a's", 60);
    double t0 = now_sec();
    a->destroy_eps();
    wait_for([&] { return (ep_count(*a) == 0) && (ep_count(*b) == 0); },
             "every ep gone on both sides", 60);
    double elapsed = now_sec() - t0;
    EXPECT_EQ(0u, ep_count(*b));
    /* 4 passes of 64 at 10 ms ticks, against 5 s for one resend wait */
    EXPECT_LT(elapsed, 2.5) << "DISCs waited for resend waits";
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << FEW_SLOTS_EPS << " eps, 64 send slots: "
              << "gone on both sides after " << elapsed * 1000 << " ms"
              << std::endl;
}
