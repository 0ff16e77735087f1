/*
 * ud_verbs peer failure and scale: peers that disconnect, MAX_PEER_EPS,
 * lost disconnect replies, flush with cancel and after an acknowledgement
 * taken asynchronously, a peer process that dies or stops for a while, the
 * log line of a failure without an error handler, and ten thousand
 * endpoints. The fixture is in ud_test.h.
 */
#include "ud_test.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <ucs/sys/sys.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

/* ------------------------------------------------------------------------
 * Peer failure
 */

/* Peers that connect to b's iface, send, flush and leave, 300 times: each
 * leaves no ep behind on either side (the DISC of a's destroyed ep frees
 * the ep b made for it; the DISC_REP frees a's zombie), and every message
 * arrives once */
TEST_P(uct_ud, peer_disconnect_frees_its_ep)
{
    const unsigned N     = 300;
    entity *a            = create_entity();
    entity *b            = create_entity();
    am_recorder &rb      = install_recorder(*b, AM_ID);
    unsigned max_private = 0;

    for (unsigned i = 0; i < N; ++i) {
        uct_ep_h ab = a->connect_to(*b);
        ASSERT_TRUE(ab != NULL);
        ASSERT_TRUE(send_short(ab, i));
        flush_ep(*a, ab);
        max_private = std::max(max_private, private_count(*b));
        a->destroy_ep(ab);
    }
    wait_for([&] { return rb.count() == N; }, "every message");
    wait_for([&] { return (ep_count(*a) == 0) && (ep_count(*b) == 0); },
             "both sides without eps");
    EXPECT_EQ(iota(0, N), headers(rb));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_LE(max_private, 2u);
    uct_ud_enter(ud(*b));
    EXPECT_EQ(N, ud(*b)->stats.disc_rx);
    EXPECT_EQ(0u, ud(*b)->eps.num_private);
    uct_ud_leave(ud(*b));
    uct_ud_enter(ud(*a));
    EXPECT_EQ(0u, ud(*a)->eps.num_zombies);
    uct_ud_leave(ud(*a));

    /* a user's ep stays when its peer's goes: d's ep takes c's
     * connection (both are the first towards the other) */
    entity *c       = create_entity();
    entity *d       = create_entity();
    am_recorder &rd = install_recorder(*d, AM_ID);
    uct_ep_h cd     = c->connect_to(*d);
    ASSERT_TRUE(cd != NULL);
    ASSERT_TRUE(send_short(cd, N));
    flush_ep(*c, cd);
    uct_ep_h dc = d->connect_to(*c);
    ASSERT_TRUE(dc != NULL);
    EXPECT_EQ(0u, private_count(*d)) << "d's ep did not take c's connection";
    EXPECT_EQ(1u, ep_count(*d));
    c->destroy_ep(cd);
    wait_for([&] { return ep_count(*c) == 0; }, "c's zombie gone");
    EXPECT_EQ(1u, ep_count(*d));
    EXPECT_EQ(uct_ud_ep(dc), uct_ud_iface_ep(ud(*d), uct_ud_ep(dc)->id));
    EXPECT_EQ(1u, rd.count());
}

/* MAX_PEER_EPS bounds what peers' requests may create: the requests past
 * it are refused with a line that names the variable, and are taken once
 * a peer's ep has gone */
TEST_P(uct_ud, max_peer_eps_refuses_then_recovers)
{
    entity *a       = create_entity();
    entity *b       = create_entity(params({{"UD_MAX_PEER_EPS", "4"}}));
    am_recorder &rb = install_recorder(*b, AM_ID);
    std::vector<uct_ep_h> eps;

    ucs::scoped_log_capture cap;
    for (unsigned i = 0; i < 6; ++i) {
        eps.push_back(a->connect_to(*b));
        ASSERT_TRUE(eps.back() != NULL);
        ASSERT_TRUE(send_short(eps.back(), i));
    }
    wait_for([&] { return rb.count() == 4; }, "four connections");
    uct_ud_enter(ud(*b));
    uint64_t refused = ud(*b)->stats.creq_refused;
    uct_ud_leave(ud(*b));
    progress_for(100); /* the refused requests are repeated */
    EXPECT_GE(refused, 2u);
    EXPECT_EQ(4u, rb.count());
    EXPECT_EQ(4u, private_count(*b));
    EXPECT_FALSE(connected(*a, eps[4]));
    EXPECT_FALSE(connected(*a, eps[5]));
    EXPECT_GE(lines_with(cap, 0, "raise UCX_UD_MAX_PEER_EPS"), 1u);

    a->destroy_ep(eps[0]);
    a->destroy_ep(eps[1]);
    wait_for([&] { return connected(*a, eps[4]) && connected(*a, eps[5]); },
             "the refused eps connected");
    wait_for([&] { return rb.count() == 6; }, "their messages");
    std::vector<uint64_t> got = headers(rb);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(iota(0, 6), got);
    EXPECT_EQ(4u, private_count(*b));
    close_all();
}

/* The DISC_REP is lost (a's receive queue is full of a stranger's
 * garbage while a's async context is held): a repeats the DISC, b no
 * longer has the ep and drops it, and a's zombie gives up after TIMEOUT */
TEST_P(uct_ud, disconnect_reply_lost_zombie_bounded)
{
    entity *a = create_entity(
        params({{"IB_RX_QUEUE_LEN", "128"}, {"UD_TIMEOUT", "1s"}}));
    entity *b          = create_entity();
    am_recorder &rb    = install_recorder(*b, AM_ID);
    uct_ud_iface_t *ia = ud(*a);
    raw_ud_qp &raw     = raw_qp(*a);

    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    ASSERT_TRUE(send_short(ab, 7));
    flush_ep(*a, ab);
    /* acknowledged by b's async thread, delivered by b's progress */
    wait_for([&] { return rb.count() == 1; }, "the message");

    ucs::scoped_log_capture cap;
    uct_ud_enter(ia);
    unsigned posted = ia->rx.posted;
    for (unsigned i = 0; i < posted + 8; ++i) {
        raw.send(dev_addr(*a), iface_qpn(*a), ud_packet(0, 61, i, 0));
    }
    a->destroy_ep(ab);
    EXPECT_EQ(1u, ia->eps.num_zombies);
    double start    = now_sec();
    double deadline = start + 10;
    /* only b progresses: it takes the DISC and answers */
    while ((ep_count(*b) != 0) && (now_sec() < deadline)) {
        b->progress();
    }
    EXPECT_EQ(0u, ep_count(*b));
    usleep(200000); /* the reply reaches a's full queue and is dropped */
    uct_ud_leave(ia);

    wait_for([&] { return ep_count(*a) == 0; }, "a's zombie gone", 10);
    double elapsed = now_sec() - start;
    EXPECT_GE(elapsed, 0.9) << "the reply was not lost";
    EXPECT_LE(elapsed, 3.0);
    uct_ud_enter(ud(*b));
    EXPECT_GE(ud(*b)->stats.rx_stale, 1u) << "the DISC was not repeated";
    uct_ud_leave(ud(*b));
    close_all();
}

/* uct_ep_flush(UCT_FLUSH_FLAG_CANCEL) while the peer does not answer (its
 * async context is held): every outstanding zcopy completes once, in
 * order, with UCS_ERR_CANCELED, the flush is done at once, no error
 * handler runs, and the ep then refuses sends and flushes with
 * UCS_ERR_CANCELED; another ep of the iface carries on */
TEST_P(uct_ud, flush_cancel_completes_everything)
{
    entity *a       = create_entity(params({}, true));
    entity *b       = create_entity();
    am_recorder &rb = install_recorder(*b, AM_ID);
    uct_ep_h ab     = a->connect_to(*b);
    uct_ep_h ab2    = a->connect_to(*b);
    ASSERT_TRUE((ab != NULL) && (ab2 != NULL));
    ASSERT_TRUE(send_short(ab, 0));
    flush_ep(*a, ab);

    const unsigned N = 8;
    mapped_buffer sbuf(64, *a);
    uct_iov_t iov = sbuf.iov(0, 64);
    std::vector<unsigned> order;
    order_comp comps[N];
    uct_ud_enter(ud(*b));
    for (unsigned i = 0; i < N; ++i) {
        comps[i].init(i, &order);
        EXPECT_EQ(UCS_INPROGRESS, (ucs_status_t)retry_no_resource(
                                      [&] {
                                          return (ssize_t)uct_ep_am_zcopy(
                                              ab, AM_ID, NULL, 0, &iov, 1, 0,
                                              &comps[i].uct);
                                      },
                                      "am_zcopy"));
    }
    order_comp fcomp;
    fcomp.init(N, &order);
    ucs_status_t status = uct_ep_flush(ab, UCT_FLUSH_FLAG_CANCEL, &fcomp.uct);
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    uct_ud_leave(ud(*b));

    EXPECT_EQ(0u, fcomp.calls) << "an immediate flush touched its comp";
    for (unsigned i = 0; i < N; ++i) {
        EXPECT_EQ(1u, comps[i].calls) << i;
        EXPECT_EQ(UCS_ERR_CANCELED, comps[i].status)
            << i << ": " << ucs_status_string(comps[i].status);
    }
    EXPECT_EQ(std::vector<unsigned>({0, 1, 2, 3, 4, 5, 6, 7}), order);
    EXPECT_EQ(UCS_ERR_CANCELED, uct_ep_am_short(ab, AM_ID, 1, NULL, 0));
    EXPECT_EQ(UCS_ERR_CANCELED, uct_ep_flush(ab, 0, NULL));

    ASSERT_TRUE(send_short(ab2, 2));
    flush_ep(*a, ab2);
    progress_for(100);
    EXPECT_TRUE(m_errs.calls.empty());
    EXPECT_EQ((size_t)N, order.size()) << "a completion ran twice";
    wait_for([&] { return rb.count() >= 2; }, "the other ep's message");
}

/* The acknowledgement of a's zcopies is taken by a's async timer while a
 * does not progress, so their completions wait for progress; a flush
 * then must not say UCS_OK (it is not done for the user until they ran),
 * and its completion runs after theirs. The same for an iface flush. */
TEST_P(uct_ud, flush_after_async_acknowledgement)
{
    entity *a = create_entity();
    entity *b = create_entity();
    install_recorder(*b, AM_ID);
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    ASSERT_TRUE(send_short(ab, 0));
    flush_ep(*a, ab);

    for (int iface_flush = 0; iface_flush < 2; ++iface_flush) {
        const unsigned N = 4;
        mapped_buffer sbuf(64, *a);
        uct_iov_t iov = sbuf.iov(0, 64);
        std::vector<unsigned> order;
        order_comp comps[N + 1];
        for (unsigned i = 0; i < N; ++i) {
            comps[i].init(i, &order);
            ASSERT_EQ(UCS_INPROGRESS, (ucs_status_t)retry_no_resource(
                                          [&] {
                                              return (ssize_t)uct_ep_am_zcopy(
                                                  ab, AM_ID, NULL, 0, &iov, 1,
                                                  0, &comps[i].uct);
                                          },
                                          "am_zcopy"));
        }
        /* b takes them and acknowledges (its timer at the latest); a's
         * timer takes the acknowledgement */
        double deadline = now_sec() + 10;
        bool acked      = false;
        while (!acked && (now_sec() < deadline)) {
            b->progress();
            uct_ud_enter(ud(*a));
            acked = uct_ud_desc_queue_is_empty(&uct_ud_ep(ab)->unacked);
            uct_ud_leave(ud(*a));
        }
        ASSERT_TRUE(acked) << "a's async context took no acknowledgement";
        EXPECT_TRUE(order.empty()) << "a completion ran without progress";

        comps[N].init(N, &order);
        ucs_status_t status =
            iface_flush ? uct_iface_flush(a->iface(), 0, &comps[N].uct)
                        : uct_ep_flush(ab, 0, &comps[N].uct);
        EXPECT_EQ(UCS_INPROGRESS, status)
            << (iface_flush ? "iface" : "ep")
            << " flush: " << ucs_status_string(status);
        wait_for([&] { return order.size() == N + 1; }, "the completions");
        EXPECT_EQ(std::vector<unsigned>({0, 1, 2, 3, 4}), order)
            << (iface_flush ? "iface" : "ep") << " flush";
    }
}

/* A peer process is killed while it echoes our messages. The ep to it
 * calls the error handler once with UCS_ERR_ENDPOINT_TIMEOUT within
 * TIMEOUT + 1 s; its outstanding zcopy sends and flush complete with that
 * error, in order; new sends are refused; another ep of the iface keeps
 * working. */
TEST_P(uct_ud, peer_process_killed)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    const double TIMEOUT = 1.0;
    entity *a            = create_entity(params({{"UD_TIMEOUT", "1s"}}, true));
    entity *b            = create_entity();
    uct_ep_h ab          = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    am_recorder &rb   = install_recorder(*b, AM_ID);
    am_recorder &echo = install_recorder(*a, AM_ID);
    EXPECT_EQ(ucs_time_from_sec(TIMEOUT), ud(*a)->config.timeout);

    ASSERT_TRUE(start_echo_peer(*a));
    uct_ep_h ap = connect_iface(*a, m_peer.dev_addr, m_peer.iface_addr);

    /* live: 100 echoes, then traffic in flight when it dies */
    for (unsigned i = 0; i < 100; ++i) {
        ASSERT_TRUE(send_short(ap, i));
    }
    ASSERT_TRUE(wait_for([&] { return echo.count() == 100; }, "echoes"));
    EXPECT_EQ(iota(0, 100), headers(echo));
    ASSERT_TRUE(send_short(ab, 0));
    EXPECT_EQ(2u, ep_count(*a)) << "one ep to the peer process";

    for (unsigned i = 100; i < 120; ++i) {
        ASSERT_TRUE(send_short(ap, i));
    }
    double killed = now_sec();
    test_peer::kill_and_wait(m_peer);

    mapped_buffer sbuf(256, *a);
    uct_iov_t iov            = sbuf.iov(0, 256);
    const unsigned NUM_ZCOPY = 4;
    std::vector<unsigned> order;
    order_comp comps[NUM_ZCOPY + 1];
    for (unsigned i = 0; i < NUM_ZCOPY; ++i) {
        comps[i].init(i, &order);
        EXPECT_EQ(UCS_INPROGRESS, (ucs_status_t)retry_no_resource(
                                      [&] {
                                          return (ssize_t)uct_ep_am_zcopy(
                                              ap, AM_ID, NULL, 0, &iov, 1, 0,
                                              &comps[i].uct);
                                      },
                                      "am_zcopy"));
    }
    comps[NUM_ZCOPY].init(NUM_ZCOPY, &order);
    EXPECT_EQ(UCS_INPROGRESS, uct_ep_flush(ap, 0, &comps[NUM_ZCOPY].uct));

    wait_for([&] { return m_errs.count(ap) > 0; }, "the error handler", 30);
    double elapsed = m_errs.times.empty() ? -1 : m_errs.times[0] - killed;
    EXPECT_LE(elapsed, TIMEOUT + 1.0);
    progress_for(1500); /* no second call */
    EXPECT_EQ(1u, m_errs.count(ap));
    EXPECT_EQ(1u, m_errs.calls.size());
    if (UCT_IFACE_STATS_ENABLED) {
        /* counted once, as the handler is called once */
        EXPECT_EQ(1u, uct_base_iface(a->iface())->stats.peer_failures);
    }
    ASSERT_FALSE(m_errs.calls.empty());
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, m_errs.calls[0].second)
        << ucs_status_string(m_errs.calls[0].second);
    for (unsigned i = 0; i <= NUM_ZCOPY; ++i) {
        EXPECT_EQ(1u, comps[i].calls) << i;
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, comps[i].status)
            << i << ": " << ucs_status_string(comps[i].status);
    }
    EXPECT_EQ(std::vector<unsigned>({0, 1, 2, 3, 4}), order);
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_am_short(ap, AM_ID, 0, NULL, 0));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_flush(ap, 0, NULL))
        << "flush of a failed ep";

    ASSERT_TRUE(send_short(ab, 1));
    wait_for([&] { return rb.count() == 2; }, "a message on another ep");
    EXPECT_EQ(iota(0, 2), headers(rb));
    EXPECT_EQ(1u, m_errs.calls.size());
    std::cout << "[ INFO     ] killed peer: error handler after " << elapsed
              << " s (UD_TIMEOUT " << TIMEOUT << " s)" << std::endl;
}

/* A peer process stopped for half of TIMEOUT and continued: no error;
 * every message and every echo arrives once, in order (the messages
 * sent meanwhile are sent again). TIMEOUT is 4 s: the emulated VM of
 * test/rxe can stall a process for a second or more. */
TEST_P(uct_ud, peer_process_stopped_and_continued)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    const double TIMEOUT = 4.0, STOP = TIMEOUT / 2;
    const unsigned N  = 600;
    entity *a         = create_entity(params({{"UD_TIMEOUT", "4s"}}, true));
    am_recorder &echo = install_recorder(*a, AM_ID);

    ASSERT_TRUE(start_echo_peer(*a));
    uct_ep_h ap     = connect_iface(*a, m_peer.dev_addr, m_peer.iface_addr);
    ud_stats before = stats(*a);

    /* the peer is continued from a thread, on time even when a progress
     * call takes long */
    unsigned sent     = 0;
    double stopped_at = 0, continued_at = 0;
    pid_t pid = m_peer.pid;
    std::thread waker;
    double deadline = now_sec() + 60;
    while ((echo.count() < N) && (now_sec() < deadline)) {
        if (!waker.joinable() && (sent == N / 3)) {
            kill(pid, SIGSTOP);
            stopped_at = now_sec();
            waker      = std::thread([&continued_at, pid, STOP] {
                usleep((useconds_t)(STOP * 1e6));
                kill(pid, SIGCONT);
                continued_at = now_sec();
            });
        }
        if ((sent < N) &&
            (uct_ep_am_short(ap, AM_ID, sent, NULL, 0) == UCS_OK)) {
            ++sent;
        }
        progress();
    }
    if (waker.joinable()) {
        waker.join();
    }
    double stopped_for = continued_at - stopped_at;
    progress_for(200);
    ud_stats after = stats(*a);

    EXPECT_EQ(N, sent);
    EXPECT_EQ(iota(0, N), headers(echo));
    EXPECT_TRUE(m_errs.calls.empty());
    EXPECT_GE(stopped_for, STOP);
    EXPECT_GT(after.tx_resent, before.tx_resent) << "nothing was sent again";
    std::cout << "[ INFO     ] peer stopped for " << stopped_for
              << " s: " << after.tx_resent - before.tx_resent
              << " packets resent, " << after.rx_dup - before.rx_dup
              << " duplicates here" << std::endl;
}

/* Without an error handler a failed ep is one error line (per ep), not an
 * abort: an ep whose peer iface closed with data outstanding, and one
 * whose connection request is never answered. Both refuse new sends with
 * UCS_ERR_ENDPOINT_TIMEOUT. */
TEST_P(uct_ud, failure_without_handler_one_line)
{
    auto p    = params({{"UD_TIMEOUT", "1s"}, {"FAILURE", "error"}});
    entity *a = create_entity(p);
    std::unique_ptr<entity> b(new entity(res(), entity_params()));
    std::unique_ptr<entity> c(new entity(res(), entity_params()));
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    ASSERT_TRUE(wait_for(
        [&] {
            b->progress();
            return connected(*a, ab);
        },
        "the connection"));
    std::vector<char> c_dev = c->dev_addr(), c_iface = c->iface_addr();
    b.reset();
    c.reset();

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    uct_ep_h ac  = connect_iface(*a, c_dev, c_iface);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ab, AM_ID, 1, NULL, 0));
    wait_for(
        [&] {
            return (ep_flags(*a, ab) & UCT_UD_EP_FLAG_FAILED) &&
                   (ep_flags(*a, ac) & UCT_UD_EP_FLAG_FAILED);
        },
        "both eps failed");
    progress_for(1500);

    const std::vector<std::string> &msgs = cap.messages();
    std::string timeout = ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT);
    EXPECT_EQ(first + 2, msgs.size());
    char ptr[2][32];
    snprintf(ptr[0], sizeof(ptr[0]), "%p", (void *)ab);
    snprintf(ptr[1], sizeof(ptr[1]), "%p", (void *)ac);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(1u, lines_with(cap, first,
                                 std::string("endpoint ") + ptr[i] + " failed"))
            << ptr[i];
    }
    EXPECT_EQ(2u, lines_with(cap, first, timeout));
    for (size_t i = first; i < msgs.size(); ++i) {
        EXPECT_EQ(0u, msgs[i].find("error ")) << msgs[i];
    }
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_am_short(ab, AM_ID, 2, NULL, 0));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_am_short(ac, AM_ID, 2, NULL, 0));
}

/* ------------------------------------------------------------------------
 * Scale
 */

/* ------------------------------------------------------------------------
 * Connection pacing and silent peers
 */

/* a connects 500 eps to b's iface, whose receive queue holds 256
 * packets, while b does not take packets: a sends 256/16 = 16 requests
 * and the others wait their turn. Then b takes packets: its queue never
 * overflows, no request is sent twice (all at once, they overflowed it
 * and were sent again after RESEND_TIMEOUT), and every ep connects. */
TEST_P(uct_ud, creq_window_paces_connects)
{
    const unsigned N = ucs::test_scale(500);
    /* a's first requests wait for b longer than RESEND_TIMEOUT's default */
    entity *a = create_entity(
        params({{"UD_RESEND_TIMEOUT", "5s"}, {"UD_TIMEOUT", "60s"}}, true));
    entity *b = create_entity(params({{"IB_RX_QUEUE_LEN", "256"}}, true));
    std::vector<uct_ep_h> eps;

    auto outstanding = [&] {
        return ud_read<unsigned>(
            *a, [](const uct_ud_iface_t *i) { return i->creq.outstanding; });
    };
    auto waiting = [&] {
        return ud_read<bool>(*a, [](const uct_ud_iface_t *i) {
            return !ucs_list_is_empty(&i->creq.waiting);
        });
    };
    uct_ud_enter(ud(*b));
    bool ok                  = connect_eps(*a, *b, N, eps);
    unsigned max_outstanding = outstanding();
    uint64_t queued          = ud_read<uint64_t>(
        *a, [](const uct_ud_iface_t *i) { return i->stats.creq_queued; });
    uct_ud_leave(ud(*b));
    ASSERT_TRUE(ok);
    EXPECT_EQ(16u, max_outstanding);
    EXPECT_EQ(N - 16, queued);

    wait_for(
        [&] {
            max_outstanding = std::max(max_outstanding, outstanding());
            return (outstanding() == 0) && !waiting();
        },
        "every request answered", 120);
    unsigned connected_eps = 0;
    for (uct_ep_h ep : eps) {
        connected_eps += connected(*a, ep);
    }
    EXPECT_EQ(N, connected_eps);
    EXPECT_EQ(N, private_count(*b));
    EXPECT_EQ(16u, max_outstanding);
    EXPECT_EQ(0u, ud_read<uint64_t>(*a,
                                    [](const uct_ud_iface_t *i) {
                                        return i->stats.creq_resent;
                                    }))
        << "requests sent again";
    EXPECT_TRUE(m_errs.calls.empty());
    /* half of b's receive queue at a time: ud has no flow control across
     * the eps of one peer, and 500 datagrams at once would wait for
     * a's resends (5 s here) */
    am_recorder &rec = install_recorder(*b, AM_ID);
    ASSERT_TRUE(send_one_on_each(*a, eps, rec, 128));
}

/* b stops answering while a's 16 requests (of 40 eps) are out: they
 * time out together and are taken for lost, which halves a's request
 * window and doubles the reply timeout once for the 16 (one episode:
 * sent before the halving), so that eps resending to a loaded target do
 * not keep it loaded; only the first is sent again at once. The lost
 * ones leave the window, and 8 of the waiting requests take it. b
 * answers again, every ep connects, and the window grows back by one per
 * window of answers. */
TEST_P(uct_ud, creq_window_halves_when_replies_stop)
{
    const unsigned N = 40;
    entity *a        = create_entity(params({{"UD_TIMEOUT", "20s"}}, true));
    entity *b = create_entity(params({{"IB_RX_QUEUE_LEN", "256"}}, true));
    std::vector<uct_ep_h> eps;

    auto cwnd = [&] {
        return ud_read<unsigned>(
            *a, [](const uct_ud_iface_t *i) { return i->creq.cwnd; });
    };
    auto cuts = [&] {
        return ud_read<uint64_t>(*a, [](const uct_ud_iface_t *i) {
            return i->stats.creq_cwnd_cuts;
        });
    };
    auto resent = [&] {
        return ud_read<uint64_t>(
            *a, [](const uct_ud_iface_t *i) { return i->stats.creq_resent; });
    };
    /* eps whose request timed out */
    auto timed_out = [&] {
        return ud_read<unsigned>(*a, [&](const uct_ud_iface_t *) {
            unsigned n = 0;
            for (uct_ep_h ep : eps) {
                n += !!(uct_ud_ep(ep)->rx_flags & UCT_UD_EP_TX_CREQ_RESENT);
            }
            return n;
        });
    };
    uct_ud_enter(ud(*b));
    bool ok = connect_eps(*a, *b, N, eps);
    /* the first replies are waited for 1 s; the new requests then wait
     * 2 s, and b answers before. Only a progresses (b's lock is held). */
    double deadline = now_sec() + 30;
    while (ok && (timed_out() < 16) && (now_sec() < deadline)) {
        a->progress();
        usleep(1000);
    }
    ok                  = ok && (timed_out() == 16);
    uint64_t resent_now = resent();
    unsigned cut_cwnd   = cwnd();
    uint64_t cut_count  = cuts();
    unsigned out        = ud_read<unsigned>(
        *a, [](const uct_ud_iface_t *i) { return i->creq.outstanding; });
    unsigned backoff = ud_read<unsigned>(
        *a, [](const uct_ud_iface_t *i) { return i->creq.backoff; });
    unsigned resent_eps = timed_out();
    uct_ud_leave(ud(*b));
    ASSERT_TRUE(ok);
    EXPECT_EQ(8u, cut_cwnd);
    EXPECT_EQ(1u, cut_count) << "one halving for requests of one episode";
    EXPECT_EQ(1u, backoff) << "one doubling for requests of one episode";
    EXPECT_EQ(8u, out) << "the lost requests left the window to new ones";
    EXPECT_EQ(1u, resent_now) << "the episode's first request is sent again "
                                 "at once, the others after 2 s";

    wait_for(
        [&] {
            unsigned n = 0;
            for (uct_ep_h ep : eps) {
                n += connected(*a, ep);
            }
            return n == N;
        },
        "every ep connected", 60);
    unsigned connected_eps = 0;
    for (uct_ep_h ep : eps) {
        connected_eps += connected(*a, ep);
    }
    EXPECT_EQ(N, connected_eps);
    /* the requests answered on their first send (the 24 that did not
     * time out) grow it: 8 answers to reach 9, 9 more to reach 10 */
    unsigned expect = 8, first_sends = N - resent_eps;
    while (first_sends >= expect) {
        first_sends -= expect++;
    }
    EXPECT_EQ(expect, cwnd()) << resent_eps << " eps timed out";
    EXPECT_EQ(1u, cuts());
    EXPECT_TRUE(m_errs.calls.empty());
}

/* The peer process is gone before a connects 64 eps to it; a's receive
 * queue of 128 makes a window of 8. The 56 waiting requests fail with the
 * first that times out, so every ep reports the timeout about TIMEOUT
 * after it was made, not after 8 rounds of TIMEOUT. */
TEST_P(uct_ud, waiting_requests_fail_with_their_peer)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    const double TIMEOUT = 1.0;
    const unsigned N     = 64;
    entity *a            = create_entity(
                   params({{"UD_TIMEOUT", "1s"}, {"IB_RX_QUEUE_LEN", "128"}}, true));
    ASSERT_TRUE(start_peer(ib_peer::options()));
    test_peer::kill_and_wait(m_peer);

    double t0 = now_sec();
    std::vector<uct_ep_h> eps;
    for (unsigned i = 0; i < N; ++i) {
        eps.push_back(connect_iface(*a, m_peer.dev_addr, m_peer.iface_addr));
    }
    EXPECT_EQ(8u, ud_read<unsigned>(*a, [](const uct_ud_iface_t *i) {
                  return i->creq.outstanding;
              }));
    wait_for([&] { return m_errs.calls.size() >= N; }, "every ep's failure",
             30);
    double elapsed = now_sec() - t0;
    EXPECT_EQ(N, m_errs.calls.size());
    for (uct_ep_h ep : eps) {
        EXPECT_EQ(1u, m_errs.count(ep));
    }
    for (const auto &call : m_errs.calls) {
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, call.second)
            << ucs_status_string(call.second);
    }
    EXPECT_LE(elapsed, TIMEOUT + 1.5);
    EXPECT_EQ(0u, ud_read<unsigned>(*a, [](const uct_ud_iface_t *i) {
                  return i->creq.outstanding;
              }));
    std::cout << "[ INFO     ] " << N << " eps to a dead peer failed after "
              << elapsed << " s (UD_TIMEOUT " << TIMEOUT << " s)" << std::endl;
}

/* The peer process is gone before a connects 8 eps to it, which fill
 * a's window (receive queue 128); then a connects an ep to b. Once the
 * dead peer's requests time out (1 s) they are taken for lost and leave
 * the window, and b's request goes: it waited until they failed, after
 * TIMEOUT (20 s here). */
TEST_P(uct_ud, dead_target_requests_leave_the_window)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    const double TIMEOUT = 20.0;
    entity *a            = create_entity(
                   params({{"UD_TIMEOUT", "20s"}, {"IB_RX_QUEUE_LEN", "128"}}, true));
    entity *b = create_entity(params({}, true));
    ASSERT_TRUE(start_peer(ib_peer::options()));
    test_peer::kill_and_wait(m_peer);

    std::vector<uct_ep_h> dead;
    for (unsigned i = 0; i < 8; ++i) {
        dead.push_back(connect_iface(*a, m_peer.dev_addr, m_peer.iface_addr));
    }
    double t0   = now_sec();
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    EXPECT_TRUE(ep_flags(*a, ab) & UCT_UD_EP_FLAG_CREQ_WAIT)
        << "the window was not full";
    wait_for([&] { return connected(*a, ab); }, "b's ep connected",
             TIMEOUT / 2);
    double elapsed = now_sec() - t0;
    ASSERT_TRUE(connected(*a, ab));
    EXPECT_LT(elapsed, TIMEOUT / 2);
    EXPECT_TRUE(m_errs.calls.empty()) << "the dead peer's eps failed first";
    am_recorder &rec = install_recorder(*b, AM_ID);
    ASSERT_TRUE(send_one_on_each(*a, {ab}, rec));
    std::cout << "[ INFO     ] an ep to a live target behind 8 requests to "
              << "a dead one connected after " << elapsed << " s (UD_TIMEOUT "
              << TIMEOUT << " s)" << std::endl;
}

/* a's receive queue of 128 makes a window of 8. Eps destroyed while their
 * request waits were never known to the peer: they go at once, without a
 * zombie; the others connect and deliver */
TEST_P(uct_ud, destroy_while_request_waits)
{
    entity *a = create_entity(params({{"IB_RX_QUEUE_LEN", "128"}}, true));
    entity *b = create_entity();
    std::vector<uct_ep_h> eps;

    /* b cannot answer meanwhile: eps 8-39 wait */
    uct_ud_enter(ud(*b));
    bool ok = connect_eps(*a, *b, 40, eps);
    for (unsigned i = 10; ok && (i < 40); ++i) {
        a->destroy_ep(eps[i]);
    }
    unsigned zombies = ud_read<unsigned>(
        *a, [](const uct_ud_iface_t *i) { return i->eps.num_zombies; });
    uct_ud_leave(ud(*b));
    ASSERT_TRUE(ok);
    eps.resize(10);
    EXPECT_EQ(10u, ep_count(*a)) << "waiting eps became zombies";
    EXPECT_EQ(0u, zombies);
    am_recorder &rec = install_recorder(*b, AM_ID);
    ASSERT_TRUE(send_one_on_each(*a, eps, rec));
    EXPECT_EQ(10u, private_count(*b));
    EXPECT_EQ(0u, ud_read<unsigned>(*a, [](const uct_ud_iface_t *i) {
                  return i->creq.outstanding;
              }));
    EXPECT_TRUE(m_errs.calls.empty());
}

/* A peer that acknowledges late (busy for 100 ms after each message: no
 * progress, its async context blocked) is not sent the same packets again
 * and again: the first wait doubles while every message was sent again,
 * then learns the acknowledgement time from a message that went once.
 * With a fixed 20 ms wait every message went two or three times more. */
TEST_P(uct_ud, late_acknowledgements_learned)
{
    if (res().dev_name != resources_of(UCT_UD_VERBS_NAME).front().dev_name) {
        GTEST_SKIP() << "runs on the first ud_verbs device only";
    }
    const unsigned WARMUP = 8, N = 20;
    const double BUSY            = 0.1;
    entity *a                    = create_entity(params({}, true));
    entity *b                    = create_entity(params({}, true));
    am_recorder &rec             = install_recorder(*b, AM_ID);
    ucs_async_context_t *async_b = ud(*b)->async;
    ASSERT_NE(ud(*a)->async, async_b) << "a's timer must run while b's waits";

    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    ASSERT_TRUE(send_short(ab, 0));
    flush_ep(*a, ab);
    uint64_t resent_warmup = 0;
    for (unsigned i = 1; i <= N; ++i) {
        if (i == WARMUP + 1) {
            resent_warmup = stats(*a).tx_resent;
        }
        ASSERT_EQ(UCS_OK, uct_ep_am_short(ab, AM_ID, i, NULL, 0));
        ucs_async_block(async_b);
        double until = now_sec() + BUSY;
        while (now_sec() < until) {
            a->progress();
        }
        ucs_async_unblock(async_b);
        flush_ep(*a, ab);
    }
    uint64_t resent = stats(*a).tx_resent - resent_warmup;
    EXPECT_EQ(iota(0, N + 1), headers(rec));
    EXPECT_LE(resent, 2u) << "of the last " << N - WARMUP << " messages";
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] acknowledgements " << BUSY * 1000
              << " ms late: " << resent << " packets sent again for the last "
              << N - WARMUP << " messages, " << stats(*a).tx_resent - resent
              << " for the first " << WARMUP + 1 << std::endl;
}

/* A peer process connects 5 eps to a's iface and is killed without a
 * disconnect; b, in this process, connects one and stays idle. a frees
 * the killed peer's eps within 2x TIMEOUT with no traffic from its user
 * (its idle sweep probes them), and keeps b's: b answers the probes. */
TEST_P(uct_ud, killed_peer_eps_reclaimed)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    /* the idle sweep is the transport's, whatever the device; the scale
     * step of check-rxe reclaims killed clients across the veth pair */
    if (res().dev_name != resources_of(UCT_UD_VERBS_NAME).front().dev_name) {
        GTEST_SKIP() << "runs on the first ud_verbs device only";
    }
    const double TIMEOUT = 1.0;
    entity *a            = create_entity(params({{"UD_TIMEOUT", "1s"}}, true));
    entity *b            = create_entity(params({}, true));
    am_recorder &rec     = install_recorder(*a, AM_ID);

    ASSERT_TRUE(start_peer(ib_peer::options()));
    for (unsigned i = 0; i < 5; ++i) {
        ASSERT_TRUE(peer_connects_to(*a));
    }
    uct_ep_h ba = b->connect_to(*a);
    ASSERT_TRUE(ba != NULL);
    ASSERT_TRUE(send_short(ba, 0));
    wait_for([&] { return (private_count(*a) == 6) && (rec.count() == 1); },
             "6 peers' eps on a");
    ASSERT_EQ(6u, private_count(*a));

    /* the peer process is alive and idle: it answers the probes, and its
     * eps stay over 3 TIMEOUTs */
    progress_for(3000);
    ASSERT_EQ(6u, private_count(*a));

    double killed = now_sec();
    test_peer::kill_and_wait(m_peer);
    wait_for([&] { return private_count(*a) == 1; },
             "the killed peer's eps gone", 10);
    double elapsed = now_sec() - killed;
    EXPECT_EQ(1u, private_count(*a));
    EXPECT_LE(elapsed, 2 * TIMEOUT);

    /* b is idle, answers probes: its ep stays over 3 TIMEOUTs */
    progress_for(3000);
    EXPECT_EQ(1u, private_count(*a));
    EXPECT_EQ(5u, ud_read<uint64_t>(*a, [](const uct_ud_iface_t *i) {
                  return i->stats.peer_reclaimed;
              }));
    EXPECT_GT(
        ud_read<uint64_t>(
            *a, [](const uct_ud_iface_t *i) { return i->stats.idle_probes; }),
        5u);
    ASSERT_TRUE(send_short(ba, 1));
    wait_for([&] { return rec.count() == 2; }, "b's second message");
    EXPECT_EQ(iota(0, 2), headers(rec));
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] killed peer's eps reclaimed after " << elapsed
              << " s (UD_TIMEOUT " << TIMEOUT << " s)" << std::endl;
}

/* The idle sweep is paced by elapsed time, not by timer ticks: with a's
 * async context blocked 90% of the time (the timer fires about once per
 * 100 ms instead of once per 10 ms, as in a loaded process), a killed
 * peer's eps still go within 2x TIMEOUT. A sweep that earned its credit
 * per tick took about ten times as long. */
TEST_P(uct_ud, killed_peer_eps_reclaimed_with_late_ticks)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    /* the idle sweep is the transport's, whatever the device; the scale
     * step of check-rxe reclaims killed clients across the veth pair */
    if (res().dev_name != resources_of(UCT_UD_VERBS_NAME).front().dev_name) {
        GTEST_SKIP() << "runs on the first ud_verbs device only";
    }
    const double TIMEOUT = 1.0;
    entity *a            = create_entity(params({{"UD_TIMEOUT", "1s"}}, true));

    ASSERT_TRUE(start_peer(ib_peer::options()));
    for (unsigned i = 0; i < 5; ++i) {
        ASSERT_TRUE(peer_connects_to(*a));
    }
    wait_for([&] { return private_count(*a) == 5; }, "5 peer's eps on a");

    double killed = now_sec();
    test_peer::kill_and_wait(m_peer);
    ucs_async_context_t *async = ud(*a)->async;
    while ((private_count(*a) != 0) && (now_sec() - killed < 10 * TIMEOUT)) {
        ucs_async_block(async);
        usleep(90000);
        ucs_async_unblock(async);
        usleep(10000);
    }
    double elapsed = now_sec() - killed;
    EXPECT_EQ(0u, private_count(*a));
    EXPECT_LE(elapsed, 2 * TIMEOUT);
    std::cout << "[ INFO     ] with late ticks, killed peer's eps reclaimed "
                 "after "
              << elapsed << " s (UD_TIMEOUT " << TIMEOUT << " s)" << std::endl;
}

/* A live, idle peer process with many eps costs one probe per look
 * period (TIMEOUT/8), not one per ep: its eps share what the sweep knows
 * of its interface. Probed per ep, 64 eps made 192 probes in 3
 * TIMEOUTs. Killed, all its eps still go within 2x TIMEOUT. */
TEST_P(uct_ud, idle_peer_probed_per_interface)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    if (res().dev_name != resources_of(UCT_UD_VERBS_NAME).front().dev_name) {
        GTEST_SKIP() << "runs on the first ud_verbs device only";
    }
    const double TIMEOUT = 1.0;
    const unsigned N     = 64;
    entity *a            = create_entity(params({{"UD_TIMEOUT", "1s"}}, true));
    auto probes          = [&] {
        return ud_read<uint64_t>(
            *a, [](const uct_ud_iface_t *i) { return i->stats.idle_probes; });
    };

    ASSERT_TRUE(start_peer(ib_peer::options()));
    for (unsigned i = 0; i < N; ++i) {
        ASSERT_TRUE(peer_connects_to(*a));
    }
    wait_for([&] { return private_count(*a) == N; }, "the peer's eps on a");
    uint64_t before = probes();
    progress_for(3000);
    uint64_t idle_probes = probes() - before;
    EXPECT_EQ(N, private_count(*a)) << "a live peer's eps were freed";
    /* 24 look periods in 3 TIMEOUTs, the first 5 quiet */
    EXPECT_LE(idle_probes, 24u);
    EXPECT_GT(idle_probes, 0u) << "the idle peer was never probed";

    double killed = now_sec();
    test_peer::kill_and_wait(m_peer);
    wait_for([&] { return private_count(*a) == 0; },
             "the killed peer's eps gone", 10);
    double elapsed = now_sec() - killed;
    EXPECT_EQ(0u, private_count(*a));
    EXPECT_LE(elapsed, 2 * TIMEOUT);
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << N
              << " idle eps of a live peer: " << idle_probes
              << " probes in 3 TIMEOUTs; killed, gone after " << elapsed
              << " s (UD_TIMEOUT " << TIMEOUT << " s)" << std::endl;
}

/* Ten thousand eps of one iface connect to another's iface: every request
 * is answered (one private ep each on the other side), one message on
 * each ep arrives, and once they are destroyed no ep is left on either
 * side. Prints the time per connect and the heap per ep. */
TEST_P(uct_ud, ten_thousand_endpoints)
{
    /* what it measures is the transport's, not the device's: the first
     * ud_verbs device is enough (the VM's devices are all rxe) */
    if (res().dev_name != resources_of(UCT_UD_VERBS_NAME).front().dev_name) {
        GTEST_SKIP() << "runs on the first ud_verbs device only";
    }
    unsigned N      = ucs::test_scale(10000);
    const char *env = getenv("OPENUCT_TEST_UD_EPS");
    if (env != NULL) {
        N = (unsigned)atoi(env);
    }
    entity *a          = create_entity(params({}, true));
    entity *b          = create_entity(params({}, true));
    am_recorder &rec   = install_recorder(*b, AM_ID);
    uct_ud_iface_t *ia = ud(*a);
    std::vector<uct_ep_h> eps;

    size_t heap_before = ucs_sys_heap_in_use();
    double t0          = now_sec();
    ASSERT_TRUE(connect_eps(*a, *b, N, eps));
    double t_create = now_sec() - t0;
    wait_for(
        [&] {
            uct_ud_enter(ia);
            bool done = ucs_list_is_empty(&ia->active);
            uct_ud_leave(ia);
            return done;
        },
        "every connection", 100);
    double t_connect       = now_sec() - t0;
    size_t heap_after      = ucs_sys_heap_in_use();
    unsigned connected_eps = 0;
    for (uct_ep_h ep : eps) {
        connected_eps += connected(*a, ep);
    }
    EXPECT_EQ(N, connected_eps);
    EXPECT_EQ(N, ep_count(*b));
    EXPECT_EQ(N, private_count(*b));
    /* paced, the requests are not lost; a few are sent again when this
     * process (both sides, in an emulated VM) stalls for longer than
     * twice the reply time (all at once, about 3 resends each) */
    uint64_t creq_resent = ud_read<uint64_t>(
        *a, [](const uct_ud_iface_t *i) { return i->stats.creq_resent; });
    EXPECT_LE(creq_resent, N / 100) << "connection requests sent again";

    /* nothing outstanding: a flush looks at no ep (the median of 101) */
    std::vector<double> flush_times;
    for (unsigned i = 0; i < 101; ++i) {
        t0 = now_sec();
        EXPECT_EQ(UCS_OK, uct_iface_flush(b->iface(), 0, NULL));
        flush_times.push_back(now_sec() - t0);
    }
    std::sort(flush_times.begin(), flush_times.end());
    double t_idle_flush = flush_times[flush_times.size() / 2];

    /* half of b's receive queue (4,095) at a time: more at once would be
     * dropped and wait for resends */
    t0 = now_sec();
    ASSERT_TRUE(send_one_on_each(*a, eps, rec, 2048));
    double t_send = now_sec() - t0;
    EXPECT_TRUE(m_errs.calls.empty());

    t0 = now_sec();
    a->destroy_eps();
    double t_destroy = now_sec() - t0;
    /* each destroyed ep tells b, which frees the ep it made for it */
    wait_for([&] { return (ep_count(*a) == 0) && (ep_count(*b) == 0); },
             "every ep gone on both sides", 60);
    double t_disc = now_sec() - t0;
    EXPECT_EQ(0u, ep_count(*a));
    EXPECT_EQ(0u, ep_count(*b));
    std::cout << "[ INFO     ] " << N << " eps: create " << t_create
              << " s, all connected " << t_connect << " s ("
              << t_connect / N * 1e6 << " us per connect, " << creq_resent
              << " requests sent again), idle flush of "
              << "the iface with " << N << " peers' eps " << t_idle_flush * 1e6
              << " us, send+flush " << t_send << " s, destroy " << t_destroy
              << " s, gone on "
              << "both sides after " << t_disc << " s; heap "
              << ucs_sys_heap_per_object(heap_before, heap_after, N)
              << " bytes per ep (both sides, with their first message's "
              << "buffers), " << stats(*a).tx_resent << " resent" << std::endl;
    ucs::print_heap_definition();
}
