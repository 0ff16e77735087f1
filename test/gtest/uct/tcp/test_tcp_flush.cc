/*
 * The tcp transport on the loopback device: coalescing of small messages
 * and streams of them, and flush completed by the peer's acknowledgement.
 */
#include "tcp_test.h"

/* ------------------------------------------------------------------------
 * Coalescing of small messages (UCX_TCP_COALESCE_TIME)
 */

class uct_tcp_coalesce : public uct_tcp {
protected:
    /* Progresses @a e alone for @a msec. */
    void progress_only(entity &e, double msec)
    {
        double end = now_sec() + (msec / 1e3);
        while (now_sec() < end) {
            e.progress();
        }
    }

    /* A client ep to a server under a 300 ms window, which carried one
     * message (header 1) */
    void connect_with_window()
    {
        ucs::scoped_setenv window("UCX_TCP_COALESCE_TIME", "300ms");
        m_server = add_entity();
        m_client = add_entity();
        m_rec    = &install_recorder(*m_server, GOOD_AM_ID);
        m_ep     = m_client->connect_to(*m_server);
        ASSERT_TRUE(m_ep != NULL);
        ASSERT_TRUE(send_am_and_wait(m_ep, GOOD_AM_ID, 1, *m_rec, 5.0));
    }

    entity *m_server   = NULL;
    entity *m_client   = NULL;
    am_recorder *m_rec = NULL;
    uct_ep_h m_ep      = NULL;
};

TEST_F(uct_tcp_coalesce, held_until_window_arm_or_flush)
{
    ASSERT_NO_FATAL_FAILURE(connect_with_window());
    entity *server   = m_server;
    entity *client   = m_client;
    am_recorder &rec = *m_rec;
    uct_ep_h ep      = m_ep;

    /* a quiet ep sends at once, and so does a second message right after
     * the first (a pair, such as a rendezvous completion followed by the
     * next request); a third one in the window is held */
    progress_for(400);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 2, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 3, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 4, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(3u, rec.count()) << "the first two messages did not leave at "
                                  "once or the third was not held";
    EXPECT_EQ(2u, am_header_of(rec.at(1).data));
    EXPECT_EQ(3u, am_header_of(rec.at(2).data));

    /* arming the event fd writes what is held, the window notwithstanding */
    ucs_status_t status =
        uct_iface_event_arm(client->iface(), UCT_EVENT_SEND_COMP);
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_ERR_BUSY))
        << ucs_status_string(status);
    progress_only(*server, 50);
    ASSERT_EQ(4u, rec.count()) << "event arm did not write the held message";
    EXPECT_EQ(4u, am_header_of(rec.at(3).data));

    /* flush writes it too (progress first: after an arm nothing is held) */
    client->progress();
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 5, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(4u, rec.count()) << "the burst went on, but 5 was not held";
    status = uct_ep_flush(ep, 0, NULL);
    EXPECT_NE(UCS_OK, status) << "flush found nothing queued";
    progress_only(*server, 50);
    ASSERT_EQ(5u, rec.count()) << "flush did not write the held message";

    /* and progress does once the window has passed */
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 6, NULL, 0));
    progress_for(100);
    EXPECT_EQ(5u, rec.count()) << "written before the window passed";
    progress_for(400);
    ASSERT_EQ(6u, rec.count());
    EXPECT_EQ(6u, am_header_of(rec.at(5).data));

    /* after a quiet window the burst is over: one message, then a pair */
    progress_for(400);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 7, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 8, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(8u, rec.count()) << "a pair after a quiet window was held";
}

/* A process that arms, sends and then sleeps on the event fd: what it
 * sends after the arm leaves at once, until it calls progress again. */
TEST_F(uct_tcp_coalesce, nothing_held_between_arm_and_progress)
{
    ASSERT_NO_FATAL_FAILURE(connect_with_window());
    entity *server   = m_server;
    entity *client   = m_client;
    am_recorder &rec = *m_rec;
    uct_ep_h ep      = m_ep;
    progress_for(400);

    /* a quiet ep writes at once, which opens a window */
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 2, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(2u, rec.count());

    ucs_status_t status = uct_iface_event_arm(client->iface(), UCT_EVENT_RECV);
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_ERR_BUSY))
        << ucs_status_string(status);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 3, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 4, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(4u, rec.count()) << "a message sent after event arm was held";
    EXPECT_EQ(4u, am_header_of(rec.at(3).data));

    /* progress ends it: coalescing is back */
    client->progress();
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 5, NULL, 0));
    progress_only(*server, 50);
    EXPECT_EQ(4u, rec.count()) << "not held after progress";
    progress_for(400);
    ASSERT_EQ(5u, rec.count());
}

/* A message that answers one just received leaves at once, and so does
 * what the ep held: the peer may be waiting for it. Without this a
 * ping-pong whose round trip is shorter than the window runs at the
 * window's pace. */
TEST_F(uct_tcp_coalesce, answer_not_held)
{
    ucs::scoped_setenv window("UCX_TCP_COALESCE_TIME", "300ms");
    entity *a          = add_entity();
    entity *b          = add_entity();
    am_recorder &rec_a = install_recorder(*a, GOOD_AM_ID);
    am_recorder &rec_b = install_recorder(*b, GOOD_AM_ID);
    uct_ep_h ea        = create_unconnected_ep(*a);
    uct_ep_h eb        = create_unconnected_ep(*b);
    ASSERT_TRUE((ea != NULL) && (eb != NULL));

    std::vector<char> addr_a(a->iface_attr().ep_addr_len);
    std::vector<char> addr_b(b->iface_attr().ep_addr_len);
    ASSERT_EQ(UCS_OK, uct_ep_get_address(ea, (uct_ep_addr_t *)addr_a.data()));
    ASSERT_EQ(UCS_OK, uct_ep_get_address(eb, (uct_ep_addr_t *)addr_b.data()));
    ASSERT_EQ(UCS_OK, uct_ep_connect_to_ep(
                          ea, (const uct_device_addr_t *)b->dev_addr().data(),
                          (const uct_ep_addr_t *)addr_b.data()));
    ASSERT_EQ(UCS_OK, uct_ep_connect_to_ep(
                          eb, (const uct_device_addr_t *)a->dev_addr().data(),
                          (const uct_ep_addr_t *)addr_a.data()));
    ASSERT_TRUE(send_am_and_wait(ea, GOOD_AM_ID, 1, rec_b));
    ASSERT_TRUE(send_am_and_wait(eb, GOOD_AM_ID, 2, rec_a));
    progress_for(400); /* both windows closed */

    /* ping-pong: each side writes again well within its window, but
     * only after the peer's message came */
    for (uint64_t i = 0; i < 4; ++i) {
        ASSERT_EQ(UCS_OK, uct_ep_am_short(ea, GOOD_AM_ID, 10 + i, NULL, 0));
        ASSERT_TRUE(
            wait_for([&] { return rec_b.count() == 2 + i; }, "the ping", 0.1))
            << "ping " << i << " was held";
        ASSERT_EQ(UCS_OK, uct_ep_am_short(eb, GOOD_AM_ID, 20 + i, NULL, 0));
        ASSERT_TRUE(
            wait_for([&] { return rec_a.count() == 2 + i; }, "the pong", 0.1))
            << "pong " << i << " was held";
    }

    /* a message held before the peer's came leaves with the answer (the
     * first two of a burst leave at once, the third is held) */
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ea, GOOD_AM_ID, 30, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ea, GOOD_AM_ID, 31, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ea, GOOD_AM_ID, 32, NULL, 0));
    ASSERT_TRUE(wait_for([&] { return rec_b.count() == 7; }, "the pair", 0.1));
    progress_for(50);
    ASSERT_EQ(7u, rec_b.count()) << "the third message was not held";
    ASSERT_EQ(UCS_OK, uct_ep_am_short(eb, GOOD_AM_ID, 40, NULL, 0));
    ASSERT_TRUE(
        wait_for([&] { return rec_b.count() == 8; }, "the held message", 0.1))
        << "the held message waited for the window";
    EXPECT_EQ(32u, am_header_of(rec_b.at(7).data));
}

/* Connected to each other's interface, the two sides talk over two
 * connections: the answer leaves on another ep than the one the message
 * came in on, and must not be held either. */
TEST_F(uct_tcp_coalesce, answer_on_other_connection_not_held)
{
    ucs::scoped_setenv window("UCX_TCP_COALESCE_TIME", "300ms");
    entity *a          = add_entity();
    entity *b          = add_entity();
    am_recorder &rec_a = install_recorder(*a, GOOD_AM_ID);
    am_recorder &rec_b = install_recorder(*b, GOOD_AM_ID);
    uct_ep_h ea        = a->connect_to(*b);
    uct_ep_h eb        = b->connect_to(*a);
    ASSERT_TRUE((ea != NULL) && (eb != NULL));

    ASSERT_TRUE(send_am_and_wait(ea, GOOD_AM_ID, 1, rec_b));
    ASSERT_TRUE(send_am_and_wait(eb, GOOD_AM_ID, 2, rec_a));
    progress_for(400); /* both windows closed */

    for (uint64_t i = 0; i < 4; ++i) {
        ASSERT_EQ(UCS_OK, uct_ep_am_short(ea, GOOD_AM_ID, 10 + i, NULL, 0));
        ASSERT_TRUE(
            wait_for([&] { return rec_b.count() == 2 + i; }, "the ping", 0.1))
            << "ping " << i << " was held";
        ASSERT_EQ(UCS_OK, uct_ep_am_short(eb, GOOD_AM_ID, 20 + i, NULL, 0));
        ASSERT_TRUE(
            wait_for([&] { return rec_a.count() == 2 + i; }, "the pong", 0.1))
            << "pong " << i << " was held";
    }
}

TEST_F(uct_tcp_coalesce, stream_of_small_messages_in_order)
{
    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    uct_ep_h ep      = client->connect_to(*server);
    ASSERT_TRUE(ep != NULL);

    const uint64_t count = 20000;
    for (uint64_t i = 0; i < count; ++i) {
        ssize_t ret = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_short(ep, GOOD_AM_ID, i, &i,
                                                sizeof(i));
            },
            "uct_ep_am_short");
        ASSERT_EQ(UCS_OK, ret);
    }
    ASSERT_TRUE(
        wait_for([&] { return rec.count() == count; }, "every message"));
    for (uint64_t i = 0; i < count; ++i) {
        ASSERT_EQ(i, am_header_of(rec.at(i).data)) << "out of order";
    }
}

/* zcopy AMs without a user header, queued behind a full socket (the
 * queued operation copies the header, and there is none). */
TEST_F(uct_tcp_coalesce, zcopy_without_header_queued)
{
    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    uct_ep_h ep      = client->connect_to(*server);
    ASSERT_TRUE(ep != NULL);
    ASSERT_TRUE(send_am_and_wait(ep, GOOD_AM_ID, 1, rec));

    const size_t length = 60 * 1024;
    const int max_msgs  = 4096;
    mapped_buffer buf(length, *client);
    buf.pattern_fill(7);
    uct_iov_t iov = buf.iov(0, length);
    std::vector<counted_completion> comps(max_msgs);

    /* fill the socket without letting the server read */
    std::vector<bool> in_flight(max_msgs, false);
    int posted = 0, queued = 0;
    ucs_status_t status;
    do {
        status =
            uct_ep_am_zcopy(ep, GOOD_AM_ID, NULL, 0, &iov, 1, 0, comps[posted]);
        if (status == UCS_INPROGRESS) {
            in_flight[posted] = true;
            ++queued;
        }
        if (!UCS_STATUS_IS_ERR(status)) {
            ++posted;
        }
    } while ((status != UCS_ERR_NO_RESOURCE) && (posted < max_msgs));
    ASSERT_EQ(UCS_ERR_NO_RESOURCE, status) << "the socket never filled";
    EXPECT_GT(queued, 0) << "no zcopy was left in flight";

    ASSERT_TRUE(wait_for([&] { return rec.count() == (size_t)posted + 1; },
                         "every zcopy message"));
    for (int i = 0; i < posted; ++i) {
        EXPECT_EQ(in_flight[i] ? 1 : 0, comps[i].calls) << "message " << i;
        ASSERT_EQ(length, rec.at(i + 1).data.size());
        ASSERT_EQ(length, mapped_buffer::pattern_mismatch(
                              rec.at(i + 1).data.data(), length, 7))
            << "message " << i;
    }
}

/* ------------------------------------------------------------------------
 * Flush: RMA completes remotely
 */

class uct_tcp_flush : public uct_tcp {
protected:
    void SetUp() override
    {
        uct_tcp::SetUp();
        if (IsSkipped()) {
            return;
        }
        m_sender   = add_entity();
        m_receiver = add_entity();
        m_rec      = &install_recorder(*m_receiver, GOOD_AM_ID);
        m_ep       = m_sender->connect_to(*m_receiver);
        ASSERT_TRUE(m_ep != NULL);
        /* Connected and idle */
        ASSERT_TRUE(send_am_and_wait(m_ep, GOOD_AM_ID, 1, *m_rec));
        flush_ep(*m_sender, m_ep);
    }

    /* Progresses only the sender for @a msec: nothing the receiver must
     * do can happen. */
    void progress_sender_only(double msec)
    {
        double deadline = now_sec() + (msec / 1000.0);
        do {
            m_sender->progress();
        } while (now_sec() < deadline);
    }

    entity *m_sender   = NULL;
    entity *m_receiver = NULL;
    am_recorder *m_rec = NULL;
    uct_ep_h m_ep      = NULL;
};

TEST_F(uct_tcp_flush, ep_flush_waits_for_put_ack)
{
    mapped_buffer local(64, *m_sender);
    mapped_buffer remote(64, *m_receiver);
    local.pattern_fill(11);

    ssize_t ret = retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_put_short(m_ep, local.ptr(), 64,
                                             remote.addr(), remote.rkey());
        },
        "uct_ep_put_short");
    ASSERT_EQ(UCS_OK, ret) << ucs_status_string((ucs_status_t)ret);

    counted_completion &comp = make_comp();
    ucs_status_t status      = uct_ep_flush(m_ep, 0, comp);
    ASSERT_EQ(UCS_INPROGRESS, status)
        << "flush after a PUT must wait for the peer: "
        << ucs_status_string(status);

    progress_sender_only(100);
    EXPECT_EQ(0, comp.calls) << "flush completed without the peer";
    EXPECT_FALSE(remote.pattern_matches(11));

    wait_for([&] { return comp.calls > 0; }, "the flush completion");
    /* The data is in place once the flush completed */
    remote.pattern_check(11);
    progress_for(20);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call)
        << ucs_status_string(comp.status_at_call);
    EXPECT_EQ(UCS_OK, uct_ep_flush(m_ep, 0, NULL));
}

TEST_F(uct_tcp_flush, ep_flush_no_comp_after_put)
{
    mapped_buffer local(256, *m_sender);
    mapped_buffer remote(256, *m_receiver);
    local.pattern_fill(12);

    pack_arg pa = {local.ptr(), local.length()};
    ssize_t ret = retry_no_resource(
        [&] {
            return uct_ep_put_bcopy(m_ep, pack_buffer, &pa, remote.addr(),
                                    remote.rkey());
        },
        "uct_ep_put_bcopy");
    ASSERT_EQ((ssize_t)local.length(), ret);

    EXPECT_EQ(UCS_INPROGRESS, uct_ep_flush(m_ep, 0, NULL));
    progress_sender_only(100);
    EXPECT_EQ(UCS_INPROGRESS, uct_ep_flush(m_ep, 0, NULL))
        << "flush done without the peer";

    ucs_status_t status;
    wait_for(
        [&] {
            status = uct_ep_flush(m_ep, 0, NULL);
            return status != UCS_INPROGRESS;
        },
        "uct_ep_flush to return UCS_OK");
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    remote.pattern_check(12);
}

TEST_F(uct_tcp_flush, iface_flush_waits_for_put_ack)
{
    mapped_buffer local(1024, *m_sender);
    mapped_buffer remote(1024, *m_receiver);
    local.pattern_fill(13);

    uct_iov_t iov                = local.iov(0, local.length());
    counted_completion &put_comp = make_comp();
    ucs_status_t put_status      = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_put_zcopy(m_ep, &iov, 1, remote.addr(),
                                                  remote.rkey(), put_comp);
        },
        "uct_ep_put_zcopy");
    ASSERT_TRUE((put_status == UCS_OK) || (put_status == UCS_INPROGRESS))
        << ucs_status_string(put_status);

    counted_completion &comp = make_comp();
    ucs_status_t status      = uct_iface_flush(m_sender->iface(), 0, comp);
    ASSERT_EQ(UCS_INPROGRESS, status)
        << "iface flush after a PUT must wait for the peer: "
        << ucs_status_string(status);

    progress_sender_only(100);
    EXPECT_EQ(0, comp.calls) << "iface flush completed without the peer";

    wait_for([&] { return comp.calls > 0; }, "the iface flush completion");
    remote.pattern_check(13);
    /* A zcopy in progress completed no later than the iface flush */
    EXPECT_EQ((put_status == UCS_INPROGRESS) ? 1 : 0, put_comp.calls);
    progress_for(20);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call);
}

/* AMs the socket took need no acknowledgement: flush is done or
 * completes, and the AMs arrive. */
TEST_F(uct_tcp_flush, flush_after_am)
{
    for (uint64_t i = 0; i < 8; ++i) {
        ssize_t ret = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_short(m_ep, GOOD_AM_ID, 100 + i, NULL,
                                                0);
            },
            "uct_ep_am_short");
        ASSERT_EQ(UCS_OK, ret);
    }

    counted_completion &comp = make_comp();
    ucs_status_t status      = uct_ep_flush(m_ep, 0, comp);
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS))
        << ucs_status_string(status);
    wait_completion(status, comp, "uct_ep_flush after AMs");

    wait_for([&] { return m_rec->count() == 9; }, "8 AMs");
    for (uint64_t i = 0; i < 8; ++i) {
        EXPECT_EQ(100 + i, am_header_of(m_rec->at(1 + i).data));
    }
    flush_iface(*m_sender);
}
