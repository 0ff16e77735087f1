/*
 * rc_verbs behaviours the transport-parametrized suites cannot see: flow
 * control windows and grants, the shared receive queue under many senders,
 * send completion moderation and the send CQ rescue, the capabilities
 * the QPs got, bad and stale connection input, a peer
 * process that dies, a thousand endpoints, the solicited-event rule,
 * flush with cancel, and receive descriptors kept by the application.
 *
 * The tests read the transport's state through the structs of
 * src/uct/ib/rc/rc.h. They run on the rc_verbs resources only, which exist
 * on the Soft-RoCE devices of test/rxe/run.sh; elsewhere the suite has no
 * instances.
 */
#include "rc_test.h"

extern "C" {
#include <ucs/sys/sys.h>
}

/* ------------------------------------------------------------------------
 * Flow control
 */

/* A sender whose receiver does not progress stops at exactly its window;
 * pending requests wait without errors; once the receiver progresses,
 * every message arrives once and in order, the pending requests run in
 * order, and the credits come back in explicit grants (the receiver
 * sends nothing else). */
TEST_P(uct_rc, stalled_receiver_window_and_grants)
{
    const unsigned WND = 8, NUM_PENDING = 4, TOTAL = 32;
    auto p           = params({{"RC_FC_WND_SIZE", std::to_string(WND)}}, true);
    entity *receiver = create_entity(p);
    entity *sender   = create_entity(p);
    uct_ep_h ep      = sender->connect_to(*receiver);
    ASSERT_TRUE(ep != NULL);
    uct_ep_h reverse_ep = newest_ep(*receiver);
    am_recorder &rec    = install_recorder(*receiver, AM_ID);
    am_recorder &back   = install_recorder(*sender, AM_ID);

    /* only the sender progresses */
    unsigned sent = 0;
    ucs_status_t status;
    while ((status = uct_ep_am_short(ep, AM_ID, sent, NULL, 0)) == UCS_OK) {
        ++sent;
        sender->progress();
        ASSERT_LT(sent, 1000u) << "the window never closed";
    }
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, status) << ucs_status_string(status);
    EXPECT_EQ(WND, sent);
    EXPECT_EQ(0, rc_ep_of(ep)->fc_credits);

    /* the messages reached the receiver's device, yet no credit comes
     * back while it does not progress */
    progress_only(*sender, 200);
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, uct_ep_am_short(ep, AM_ID, 999, NULL, 0));

    std::vector<uint64_t> order;
    pending_send reqs[NUM_PENDING];
    for (unsigned i = 0; i < NUM_PENDING; ++i) {
        reqs[i].uct.func = pending_send_cb;
        reqs[i].ep       = ep;
        reqs[i].value    = sent + i;
        reqs[i].order    = &order;
        ASSERT_EQ(UCS_OK, uct_ep_pending_add(ep, &reqs[i].uct, 0));
    }
    progress_only(*sender, 50);
    EXPECT_TRUE(order.empty());
    EXPECT_EQ(0u, rec.count());
    EXPECT_TRUE(m_errs.calls.empty());

    /* now the receiver too */
    wait_for([&] { return order.size() == NUM_PENDING; }, "pending requests");
    std::vector<uint64_t> expected_order;
    for (unsigned i = 0; i < NUM_PENDING; ++i) {
        expected_order.push_back(sent + i);
    }
    EXPECT_EQ(expected_order, order);
    for (unsigned i = sent + NUM_PENDING; i < TOTAL; ++i) {
        ASSERT_TRUE(send_short(ep, i));
    }
    wait_for([&] { return rec.count() >= TOTAL; }, "every message");
    wait_for([&] { return rc_ep_of(ep)->fc_credits == (int)WND; },
             "the whole window back");
    progress_for(50);

    EXPECT_EQ(iota(0, TOTAL), headers(rec));
    EXPECT_EQ(0u, back.count()) << "the receiver sent active messages";
    /* what the receiver posted were the grants: at most one per half
     * window (one grant hands back what several messages freed when they
     * are handled in one progress call) */
    EXPECT_GE(rc_ep_of(reverse_ep)->tx_sn, 1);
    EXPECT_LE(rc_ep_of(reverse_ep)->tx_sn, TOTAL / (WND / 2));
    EXPECT_EQ(0, rc_ep_of(reverse_ep)->fc_grant);
    EXPECT_TRUE(m_errs.calls.empty());
}

/* Credits owed to a peer ride on the active messages sent to it: with
 * traffic both ways no explicit grant is sent, while one-way traffic needs
 * one per half window. Explicit grants are what an ep posts besides its
 * active messages (no flush here). */
TEST_P(uct_rc, grants_ride_on_reverse_traffic)
{
    const unsigned WND = 8, N = 64;
    auto p      = params({{"RC_FC_WND_SIZE", std::to_string(WND)}});
    entity *a   = create_entity(p);
    entity *b   = create_entity(p);
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    uct_ep_h ba     = newest_ep(*b);
    am_recorder &ra = install_recorder(*a, AM_ID);
    am_recorder &rb = install_recorder(*b, AM_ID);

    /* one way */
    for (unsigned i = 0; i < N; ++i) {
        ASSERT_TRUE(send_short(ab, i));
        ASSERT_TRUE(
            wait_for([&] { return rb.count() == i + 1; }, "one-way message"));
    }
    wait_for([&] { return rc_ep_of(ab)->fc_credits == (int)WND; },
             "one-way credits");
    unsigned one_way_grants = rc_ep_of(ba)->tx_sn;
    EXPECT_EQ(N / (WND / 2), one_way_grants);

    /* both ways */
    uint16_t base_ab = rc_ep_of(ab)->tx_sn, base_ba = rc_ep_of(ba)->tx_sn;
    for (unsigned i = 0; i < N; ++i) {
        ASSERT_TRUE(send_short(ab, N + i));
        ASSERT_TRUE(send_short(ba, i));
        ASSERT_TRUE(wait_for(
            [&] { return (rb.count() == N + i + 1) && (ra.count() == i + 1); },
            "two-way messages"));
    }
    unsigned grants_ab = (uint16_t)(rc_ep_of(ab)->tx_sn - base_ab) - N;
    unsigned grants_ba = (uint16_t)(rc_ep_of(ba)->tx_sn - base_ba) - N;
    std::cout << "[ INFO     ] explicit grants: one way " << one_way_grants
              << ", two ways " << grants_ab << " + " << grants_ba << std::endl;
    EXPECT_EQ(0u, grants_ab + grants_ba);
    EXPECT_EQ(iota(0, N), headers(ra));
    EXPECT_EQ(iota(0, 2 * N), headers(rb));
}

/* ------------------------------------------------------------------------
 * Shared receive queue
 */

/* The receive queue is refilled from progress even when it is shorter
 * than RX_MAX_BATCH (the default batch is 64): after 40 messages and no
 * SRQ limit event (it fires at a quarter of the fill), progress has put
 * it back near its fill level. */
TEST_P(uct_rc, srq_refilled_by_progress)
{
    const unsigned QUEUE_LEN = 63, N = 40;
    auto p           = params({{"IB_RX_QUEUE_LEN", std::to_string(QUEUE_LEN)}});
    entity *receiver = create_entity(p);
    entity *sender   = create_entity();
    uct_ep_h ep      = sender->connect_to(*receiver);
    ASSERT_TRUE(ep != NULL);
    am_recorder &rec      = install_recorder(*receiver, AM_ID);
    uct_rc_iface_t *iface = rc_iface_of(*receiver);

    EXPECT_EQ(QUEUE_LEN, iface->rx.target);
    EXPECT_EQ(QUEUE_LEN, iface->rx.posted);
    for (unsigned i = 0; i < N; ++i) {
        ASSERT_TRUE(send_short(ep, i));
    }
    wait_for([&] { return rec.count() == N; }, "every message");
    progress_for(50);
    EXPECT_EQ(iota(0, N), headers(rec));
    EXPECT_EQ(QUEUE_LEN, iface->rx.target);
    EXPECT_GE(iface->rx.posted, iface->rx.target - iface->rx.target / 4)
        << "the receive queue was not refilled";
}

void uct_rc::many_senders(unsigned rx_queue_len, bool stall_receiver)
{
    const unsigned NUM_SENDERS = 8, PER_SENDER = stall_receiver ? 64 : 96;
    auto p = params({{"IB_RX_QUEUE_LEN", std::to_string(rx_queue_len)}}, true);
    entity *receiver      = create_entity(p);
    am_recorder &rec      = install_recorder(*receiver, AM_ID);
    uct_rc_iface_t *iface = rc_iface_of(*receiver);
    std::vector<entity *> senders;
    std::vector<uct_ep_h> eps;
    std::vector<unsigned> seq(NUM_SENDERS, 0);

    for (unsigned s = 0; s < NUM_SENDERS; ++s) {
        senders.push_back(create_entity(params({}, true)));
        eps.push_back(senders.back()->connect_to(*receiver));
        ASSERT_TRUE(eps.back() != NULL);
    }
    unsigned initial_target = iface->rx.target;

    auto try_send = [&](unsigned s) {
        bcopy_msg msg;
        memset(&msg, 0, sizeof(msg));
        msg.sender  = s;
        msg.seq     = seq[s];
        ssize_t ret = uct_ep_am_bcopy(eps[s], AM_ID, pack_bcopy_msg, &msg, 0);
        if (ret >= 0) {
            ++seq[s];
            return true;
        }
        EXPECT_EQ(UCS_ERR_NO_RESOURCE, ret)
            << ucs_status_string((ucs_status_t)ret);
        return false;
    };

    if (stall_receiver) {
        /* every sender fills its window while the receiver sleeps: the
         * queue runs low, the device raises the SRQ limit event */
        for (unsigned s = 0; s < NUM_SENDERS; ++s) {
            while ((seq[s] < PER_SENDER) && try_send(s)) {
            }
        }
        double deadline = now_sec() + 20;
        while (!iface->rx.low && (now_sec() < deadline)) {
            for (entity *e : senders) {
                e->progress();
            }
        }
        EXPECT_TRUE(iface->rx.low) << "no SRQ limit event";
    }

    wait_for(
        [&] {
            for (unsigned s = 0; s < NUM_SENDERS; ++s) {
                if (seq[s] < PER_SENDER) {
                    try_send(s);
                }
            }
            return rec.count() == NUM_SENDERS * PER_SENDER;
        },
        "every message", 60);
    progress_for(50);

    std::vector<uint32_t> next(NUM_SENDERS, 0);
    EXPECT_EQ(NUM_SENDERS * PER_SENDER, rec.count());
    for (size_t i = 0; i < rec.count(); ++i) {
        auto msg = rec.at(i);
        bcopy_msg m;
        ASSERT_EQ(sizeof(m), msg.data.size());
        memcpy(&m, msg.data.data(), sizeof(m));
        ASSERT_LT(m.sender, NUM_SENDERS);
        EXPECT_EQ(next[m.sender], m.seq) << "sender " << m.sender;
        next[m.sender] = m.seq + 1;
    }
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] receive queue fill " << initial_target << " -> "
              << iface->rx.target << " (RX_QUEUE_LEN " << rx_queue_len << ")"
              << std::endl;
    if (stall_receiver) {
        EXPECT_GT(iface->rx.target, initial_target)
            << "the fill level did not grow after the limit event";
    }
}

/* Eight senders drain one short SRQ: the device retries while it is
 * empty (rnr_retry 7), every message arrives once, in order per sender */
TEST_P(uct_rc, many_senders_one_small_srq)
{
    many_senders(63, false);
}

/* The fill level grows when the SRQ limit event says the queue ran low */
TEST_P(uct_rc, srq_fill_grows_on_limit_event)
{
    many_senders(1024, true);
}

/* ------------------------------------------------------------------------
 * Send completions
 */

/* With one signaled request in 16, signaled completions retire the
 * requests before them: after a flush every slot, CQ entry and send
 * descriptor is back, and each zcopy completion ran once, in order */
TEST_P(uct_rc, moderation_retires_everything)
{
    const unsigned MODERATION = 16, N = 300;
    entity *receiver = create_entity();
    entity *sender   = create_entity(
          params({{"TX_CQ_MODERATION", std::to_string(MODERATION)}}));
    uct_ep_h ep = sender->connect_to(*receiver);
    ASSERT_TRUE(ep != NULL);
    am_recorder &rec      = install_recorder(*receiver, AM_ID);
    uct_rc_iface_t *iface = rc_iface_of(*sender);
    uct_rc_ep_t *rep      = rc_ep_of(ep);
    std::unique_ptr<mapped_buffer> sbuf_p(new mapped_buffer(256, *sender));
    std::unique_ptr<mapped_buffer> rbuf_p(
        new mapped_buffer(256 * N, *receiver));
    mapped_buffer &sbuf = *sbuf_p, &rbuf = *rbuf_p;

    ASSERT_EQ(MODERATION, iface->config.tx_moderation);
    int initial_cq    = iface->cq_available;
    int initial_slots = rep->tx_available;
    EXPECT_EQ((int)iface->super.cq_len[UCT_IB_DIR_TX] - 1 -
                  (int)iface->config.tx_cq_reserve,
              initial_cq);
    EXPECT_EQ((int)iface->config.tx_queue_len - 1, initial_slots);

    std::vector<unsigned> order;
    std::vector<order_comp> comps(N / 10);
    unsigned num_am = 0, num_zcopy = 0, max_unsignaled = 0;
    sbuf.pattern_fill(1);
    for (unsigned i = 0; i < N; ++i) {
        ssize_t ret;
        if (i % 10 == 9) {
            order_comp &c = comps[num_zcopy];
            c.init(num_zcopy, &order);
            uct_iov_t iov = sbuf.iov(0, sbuf.length());
            ret           = retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_put_zcopy(
                                  ep, &iov, 1, rbuf.addr() + 256 * num_zcopy, rbuf.rkey(),
                                  &c.uct);
                },
                "put_zcopy");
            EXPECT_EQ(UCS_INPROGRESS, ret);
            ++num_zcopy;
        } else {
            pattern_arg arg = {num_am, 200};
            ret             = retry_no_resource(
                [&] {
                    return uct_ep_am_bcopy(ep, AM_ID, pack_pattern, &arg, 0);
                },
                "am_bcopy");
            EXPECT_EQ(200, ret);
            ++num_am;
        }
        max_unsignaled = std::max<unsigned>(max_unsignaled, rep->unsignaled);
    }
    EXPECT_LT(max_unsignaled, MODERATION);

    flush_ep(*sender, ep);
    EXPECT_EQ(0u, uct_rc_ep_unretired(rep));
    EXPECT_TRUE(ucs_queue_is_empty(&rep->outstanding));
    EXPECT_EQ(initial_slots, rep->tx_available);
    EXPECT_EQ(initial_cq, iface->cq_available);

    std::vector<unsigned> expected;
    for (unsigned i = 0; i < num_zcopy; ++i) {
        expected.push_back(i);
        EXPECT_EQ(1u, comps[i].calls) << "zcopy " << i;
        EXPECT_EQ(UCS_OK, comps[i].status) << "zcopy " << i;
    }
    EXPECT_EQ(expected, order);

    wait_for([&] { return rec.count() == num_am; }, "every message");
    for (unsigned i = 0; i < num_am; ++i) {
        EXPECT_EQ(200u, rec.at(i).data.size());
        EXPECT_EQ(200u, mapped_buffer::pattern_mismatch(rec.at(i).data.data(),
                                                        200, i))
            << "message " << i;
    }
    for (unsigned i = 0; i < num_zcopy; ++i) {
        EXPECT_EQ(256u, mapped_buffer::pattern_mismatch(rbuf.cptr() + 256 * i,
                                                        256, 1));
    }

    /* the send descriptor pool is checked for leaks when the iface
     * closes: a descriptor not returned is a warning, which fails here */
    sbuf_p.reset();
    rbuf_p.reset();
    reset_entities();
    EXPECT_EQ(0u, unexpected_count());
}

/* Endpoints are added one at a time, and each posts as many unsignaled
 * PUTs as the moderation of the moment lets it (it shrinks as endpoints
 * are added; what was posted stays): together they hold every send CQ
 * entry, with no signaled request in flight, so every post fails for want
 * of a CQ entry. Progress must rescue them (a signaled marker on each
 * idle ep that holds unsignaled requests): within a bounded wait an ep
 * posts again, then every ep does, and a flush gives every entry back. */
TEST_P(uct_rc, cq_rescue_idle_unsignaled_eps)
{
    const unsigned MAX_EPS = 64;
    const double WAIT_SEC  = 5;
    auto p                 = params({{"IB_TX_CQ_LEN", "128"},
                                     {"IB_TX_QUEUE_LEN", "63"},
                                     {"TX_CQ_MODERATION", "16"}});
    entity *receiver       = create_entity(p);
    entity *sender         = create_entity(p);
    uct_rc_iface_t *iface  = rc_iface_of(*sender);
    std::unique_ptr<mapped_buffer> rbuf(new mapped_buffer(64, *receiver));
    const int initial_cq = iface->cq_available;
    uint64_t value       = 0;
    std::vector<uct_ep_h> eps;

    EXPECT_GT(iface->config.tx_cq_reserve, 0u);
    EXPECT_EQ(128 - 1 - (int)iface->config.tx_cq_reserve, initial_cq);

    /* nobody progresses while the order is built */
    auto put = [&](uct_ep_h ep) {
        return uct_ep_put_short(ep, &value, sizeof(value), rbuf->addr(),
                                rbuf->rkey());
    };
    ucs_status_t status = UCS_OK;
    while (status == UCS_OK) {
        ASSERT_LT(eps.size(), MAX_EPS) << "the send CQ was never used up";
        uct_ep_h ep = sender->connect_to(*receiver);
        ASSERT_TRUE(ep != NULL);
        eps.push_back(ep);
        uct_rc_ep_t *rep = rc_ep_of(ep);
        while ((status == UCS_OK) &&
               (rep->unsignaled + 1u < iface->config.tx_moderation)) {
            status = put(ep);
        }
    }
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, status) << ucs_status_string(status);
    EXPECT_EQ(0, iface->cq_available);
    unsigned holders = 0;
    for (uct_ep_h ep : eps) {
        uct_rc_ep_t *rep = rc_ep_of(ep);
        EXPECT_EQ(uct_rc_ep_unretired(rep), rep->unsignaled);
        holders += (rep->unsignaled != 0);
    }
    EXPECT_GT(holders, 1u);

    /* without a rescue this stays UCS_ERR_NO_RESOURCE for ever */
    double deadline = now_sec() + WAIT_SEC;
    while (((status = put(eps.back())) == UCS_ERR_NO_RESOURCE) &&
           (now_sec() < deadline)) {
        sender->progress();
    }
    ASSERT_EQ(UCS_OK, status)
        << "no ep could post for " << WAIT_SEC << " s: " << eps.size()
        << " idle eps hold every send CQ entry unsignaled";
    EXPECT_GT(iface->rescue.markers, 0ul);

    for (uct_ep_h ep : eps) {
        EXPECT_EQ(UCS_OK,
                  retry_no_resource([&] { return (ssize_t)put(ep); }, "put"));
    }
    flush_iface(*sender);
    EXPECT_EQ(initial_cq, iface->cq_available);
    for (uct_ep_h ep : eps) {
        EXPECT_EQ(0u, uct_rc_ep_unretired(rc_ep_of(ep)));
    }
    rbuf.reset();
    reset_entities();
    EXPECT_EQ(0u, unexpected_count());
}

/* The capabilities are what the QPs got: inline size and SGEs as an ep's
 * QP reports them. By default a send slot of rxe (its 208-byte header and
 * max(16 * SGEs, inline)) fits 256 bytes; asking 64 bytes inline, rxe
 * grows the SGEs to fill the larger slot, and the capabilities say so. */
TEST_P(uct_rc, caps_are_what_the_qp_got)
{
    for (const char *inl : {"", "64"}) {
        SCOPED_TRACE(std::string("TX_MIN_INLINE ") + (*inl ? inl : "default"));
        config_list config;
        if (*inl) {
            config.push_back({"IB_TX_MIN_INLINE", inl});
        }
        entity *receiver = create_entity(params(config));
        entity *sender   = create_entity(params(config));
        uct_ep_h ep      = sender->connect_to(*receiver);
        ASSERT_TRUE(ep != NULL);

        struct ibv_qp_attr attr;
        struct ibv_qp_init_attr init;
        struct ibv_qp *qp = rc_ep_of(ep)->qp;
        ASSERT_EQ(0, ibv_query_qp(qp, &attr, IBV_QP_CAP, &init));
        const uct_iface_attr_t &ia = sender->iface_attr();
        size_t hdr                 = sizeof(uct_rc_hdr_t) + sizeof(uint64_t);
        EXPECT_EQ(init.cap.max_inline_data, ia.cap.put.max_short);
        EXPECT_EQ(init.cap.max_inline_data - hdr, ia.cap.am.max_short);
        EXPECT_EQ(init.cap.max_send_sge, ia.cap.put.max_iov);
        EXPECT_EQ(init.cap.max_send_sge, ia.cap.get.max_iov);
        EXPECT_EQ(init.cap.max_send_sge - 1, ia.cap.am.max_iov);

        std::string dev = ibv_get_device_name(qp->context->device);
        if (dev.compare(0, 3, "rxe") == 0) {
            size_t need = std::max<size_t>(16 * init.cap.max_send_sge,
                                           init.cap.max_inline_data);
            if (*inl) {
                EXPECT_EQ(64u, init.cap.max_inline_data);
                EXPECT_EQ(4u, init.cap.max_send_sge);
            } else {
                EXPECT_LE(208 + need, 256u) << "a 512-byte send slot";
                EXPECT_EQ(48u, init.cap.max_inline_data);
                EXPECT_EQ(3u, init.cap.max_send_sge);
            }
        }
        reset_entities();
    }
}

/* ------------------------------------------------------------------------
 * Connection input
 */

/* Garbage endpoint addresses and a device address of another link layer
 * are refused with a status and one error line; the ep is untouched and
 * connects to a real peer afterwards */
TEST_P(uct_rc, connect_bad_input)
{
    entity *a   = create_entity();
    entity *b   = create_entity();
    uct_ep_h ea = raw_ep(*a), eb = raw_ep(*b);
    std::vector<char> addr_a = ep_address(ea), addr_b = ep_address(eb);
    const std::vector<char> &dev_b = b->dev_addr();
    uct_rc_ep_addr_t good;
    memcpy(&good, addr_b.data(), sizeof(good));

    struct bad_case {
        const char *what;
        uint32_t qpn;
        uint16_t wnd;
    };
    uint32_t good_qpn      = rc_ep_of(eb)->qp->qp_num;
    const bad_case cases[] = {
        {"qpn 0, window 0", 0, 0},
        {"qpn 0", 0, 64},
        {"qpn 1", 1, 64},
        {"window 0", good_qpn, 0},
        {"window above the maximum", good_qpn, UCT_RC_FC_WND_MAX + 1},
    };
    for (const bad_case &c : cases) {
        uct_rc_ep_addr_t bad = good;
        bad.qp_num[0]        = (uint8_t)c.qpn;
        bad.qp_num[1]        = (uint8_t)(c.qpn >> 8);
        bad.qp_num[2]        = (uint8_t)(c.qpn >> 16);
        memcpy(&bad.fc_wnd, &c.wnd, sizeof(c.wnd));

        ucs::scoped_log_capture cap;
        size_t before = cap.messages().size();
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_ep_connect_to_ep(ea,
                                       (const uct_device_addr_t *)dev_b.data(),
                                       (const uct_ep_addr_t *)&bad))
            << c.what;
        EXPECT_EQ(1u, cap.messages().size() - before) << c.what;
    }

    /* an InfiniBand address (no RoCE flags, a LID) on a RoCE iface */
    uct_ib_device_addr_t ib_addr;
    memset(&ib_addr, 0, sizeof(ib_addr));
    ib_addr.flags    = 0;
    ib_addr.path_mtu = IBV_MTU_1024;
    ib_addr.lid      = 7;
    ib_addr.gid[0]   = 0xfe;
    ib_addr.gid[1]   = 0x80;
    ib_addr.gid[15]  = 1;
    EXPECT_FALSE(uct_iface_is_reachable(
        a->iface(), (const uct_device_addr_t *)&ib_addr, NULL));
    {
        ucs::scoped_log_capture cap;
        size_t before = cap.messages().size();
        EXPECT_EQ(UCS_ERR_UNREACHABLE,
                  uct_ep_connect_to_ep(ea, (const uct_device_addr_t *)&ib_addr,
                                       (const uct_ep_addr_t *)&good));
        EXPECT_EQ(1u, cap.messages().size() - before);
    }
    EXPECT_FALSE(rc_ep_of(ea)->flags & UCT_RC_EP_FLAG_CONNECTED);

    /* the same ep still connects */
    am_recorder &rec = install_recorder(*b, AM_ID);
    ASSERT_EQ(UCS_OK, connect(ea, dev_b, addr_b));
    ASSERT_EQ(UCS_OK, connect(eb, a->dev_addr(), addr_a));
    ASSERT_TRUE(send_short(ea, 42));
    wait_for([&] { return rec.count() == 1; }, "a message after the refusals");
    EXPECT_EQ(42u, am_header(rec.at(0)));
}

/* An ep connected to the address of an ep that was destroyed (its QP is
 * gone) fails: sends end with an error, the error handler runs once with
 * a peer failure status, and another ep of the iface keeps working.
 * Timeouts are short: 4.096 us * 2^16 (268 ms) and two retries. */
TEST_P(uct_rc, connect_to_stale_qp)
{
    auto pa   = params({{"RC_TIMEOUT", "0.2s"}, {"RC_RETRY_COUNT", "2"}}, true);
    entity *a = create_entity(pa);
    entity *b = create_entity();
    entity *c = create_entity();
    uct_ep_h ac = a->connect_to(*c);
    ASSERT_TRUE(ac != NULL);
    am_recorder &rc_rec = install_recorder(*c, AM_ID);
    EXPECT_EQ(16, rc_iface_of(*a)->config.timeout);

    uct_ep_h eb             = raw_ep(*b);
    std::vector<char> stale = ep_address(eb);
    destroy_raw_ep(eb);

    uct_ep_h ea = raw_ep(*a);
    ASSERT_EQ(UCS_OK, connect(ea, b->dev_addr(), stale));

    std::unique_ptr<mapped_buffer> sbuf(new mapped_buffer(64, *a));
    std::vector<unsigned> order;
    order_comp comp;
    comp.init(0, &order);
    uct_iov_t iov = sbuf->iov(0, 64);

    ucs::scoped_log_capture cap;
    double start = now_sec();
    EXPECT_EQ(UCS_OK, uct_ep_am_short(ea, AM_ID, 1, NULL, 0));
    EXPECT_EQ(UCS_INPROGRESS,
              uct_ep_am_zcopy(ea, AM_ID, NULL, 0, &iov, 1, 0, &comp.uct));
    wait_for([&] { return m_errs.count(ea) > 0; }, "the error handler", 60);
    double elapsed = now_sec() - start;
    progress_for(100);

    EXPECT_EQ(1u, m_errs.count(ea));
    EXPECT_EQ(1u, m_errs.calls.size());
    ucs_status_t status = m_errs.status(ea);
    EXPECT_TRUE((status == UCS_ERR_ENDPOINT_TIMEOUT) ||
                (status == UCS_ERR_CONNECTION_RESET))
        << ucs_status_string(status);
    EXPECT_EQ(1u, comp.calls);
    EXPECT_NE(UCS_OK, comp.status);

    /* a failed ep refuses new work with its status, with slots free */
    EXPECT_EQ(status, uct_ep_am_short(ea, AM_ID, 2, NULL, 0));
    EXPECT_EQ(status, uct_ep_put_short(ea, &elapsed, sizeof(elapsed), 0, 0));
    EXPECT_EQ(status, uct_ep_flush(ea, 0, NULL)) << "flush of a failed ep";
    std::cout << "[ INFO     ] stale QP detected in " << elapsed << " s ("
              << ucs_status_string(status) << ")" << std::endl;

    /* the other ep of the iface */
    ASSERT_TRUE(send_short(ac, 5));
    wait_for([&] { return rc_rec.count() == 1; }, "a message on another ep");
    EXPECT_EQ(1u, m_errs.calls.size());

    sbuf.reset();
    close_all();
}

/* ------------------------------------------------------------------------
 * Peer failure
 */

/* A fatal event of the device (here injected through the device layer, as
 * its async thread would deliver it) fails every ep of the ifaces on it:
 * outstanding work completes with an error, the handler runs once per ep
 * with UCS_ERR_IO_ERROR, new sends are refused; nothing aborts. */
TEST_P(uct_rc, device_fatal_event_fails_the_eps)
{
    entity *a   = create_entity(params({}, true));
    entity *c   = create_entity();
    uct_ep_h ac = a->connect_to(*c);
    ASSERT_TRUE(ac != NULL);
    am_recorder &rec = install_recorder(*c, AM_ID);
    ASSERT_TRUE(send_short(ac, 1));
    wait_for([&] { return rec.count() == 1; }, "a message before the event");

    uct_ib_async_event_t event;
    memset(&event, 0, sizeof(event));
    event.type   = IBV_EVENT_DEVICE_FATAL;
    event.status = UCS_ERR_IO_ERROR;
    {
        ucs::scoped_log_capture cap;
        uct_ib_device_handle_async_event(
            uct_ib_iface_device(&rc_iface_of(*a)->super), &event);
        wait_for([&] { return m_errs.count(ac) > 0; }, "the error handler");
        progress_for(50);
    }

    EXPECT_EQ(1u, m_errs.count(ac));
    EXPECT_EQ(UCS_ERR_IO_ERROR, m_errs.status(ac));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_ep_am_short(ac, AM_ID, 2, NULL, 0));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_ep_flush(ac, 0, NULL));
    EXPECT_EQ(1u, rec.count());
    close_all();
}

/* A peer process (this binary started again, see ib_peer.h)
 * connects two eps to ours and is killed with SIGKILL. Our ep with PUTs
 * and AMs outstanding completes every one with an error and calls the
 * error handler once with UCS_ERR_ENDPOINT_TIMEOUT; uct_ep_check on the
 * idle one leads to the handler too; an ep to a live peer keeps working. */
TEST_P(uct_rc, peer_process_killed)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }

    /* the default RETRY_COUNT: a dead peer must be found with it */
    auto pa     = params({{"RC_TIMEOUT", "0.2s"}}, true);
    entity *a   = create_entity(pa);
    entity *b   = create_entity();
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    am_recorder &rb = install_recorder(*b, AM_ID);

    /* the peer process */
    ASSERT_TRUE(start_peer(ib_peer::options()));
    uct_ep_h ep_busy = raw_ep(*a), ep_idle = raw_ep(*a);
    ASSERT_TRUE(connect_with_peer(*a, ep_busy));
    ASSERT_TRUE(connect_with_peer(*a, ep_idle));

    uct_rkey_bundle_t rkey;
    uint64_t remote_addr = m_peer.buffer_addr;
    ASSERT_EQ(UCS_OK,
              uct_rkey_unpack(a->component(), m_peer.rkey.data(), &rkey));
    std::unique_ptr<mapped_buffer> sbuf(new mapped_buffer(1024, *a));
    sbuf->pattern_fill(3);
    uct_iov_t iov = sbuf->iov(0, sbuf->length());

    /* the peer is alive: a PUT and an AM complete */
    {
        std::vector<unsigned> order;
        order_comp c;
        c.init(0, &order);
        EXPECT_EQ(
            UCS_INPROGRESS,
            uct_ep_put_zcopy(ep_busy, &iov, 1, remote_addr, rkey.rkey, &c.uct));
        EXPECT_EQ(UCS_OK, uct_ep_am_short(ep_busy, AM_ID, 0, NULL, 0));
        wait_for([&] { return c.calls == 1; }, "a PUT to the live peer");
        EXPECT_EQ(UCS_OK, c.status);
        flush_ep(*a, ep_busy);
        /* the idle ep has sent once: a done but unsignaled request,
         * which uct_ep_check must not take for one in flight */
        EXPECT_EQ(UCS_OK, uct_ep_am_short(ep_idle, AM_ID, 0, NULL, 0));
        progress_for(200);
    }
    EXPECT_TRUE(send_short(ab, 0));

    test_peer::stop(m_peer);

    ucs::scoped_log_capture cap;
    const unsigned NUM_PUTS = 4;
    std::vector<unsigned> order;
    order_comp comps[NUM_PUTS + 1];
    double start = now_sec();
    for (unsigned i = 0; i < NUM_PUTS; ++i) {
        comps[i].init(i, &order);
        EXPECT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(ep_busy, &iov, 1, remote_addr, rkey.rkey,
                                   &comps[i].uct));
        EXPECT_EQ(UCS_OK, uct_ep_am_short(ep_busy, AM_ID, i, NULL, 0));
    }
    comps[NUM_PUTS].init(NUM_PUTS, &order);
    EXPECT_EQ(UCS_INPROGRESS, uct_ep_flush(ep_busy, 0, &comps[NUM_PUTS].uct));
    ASSERT_TRUE(send_short(ab, 1));

    wait_for([&] { return m_errs.count(ep_busy) > 0; }, "the error handler",
             60);
    double elapsed = now_sec() - start;
    for (unsigned i = 0; i <= NUM_PUTS; ++i) {
        EXPECT_EQ(1u, comps[i].calls) << i;
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, comps[i].status)
            << i << ": " << ucs_status_string(comps[i].status);
    }
    EXPECT_EQ(std::vector<unsigned>({0, 1, 2, 3, 4}), order);
    EXPECT_EQ(1u, m_errs.count(ep_busy));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, m_errs.status(ep_busy))
        << ucs_status_string(m_errs.status(ep_busy));
    EXPECT_EQ(0u, m_errs.count(ep_idle));

    /* the idle ep learns of it when checked */
    double check_start = now_sec();
    EXPECT_EQ(UCS_OK, uct_ep_check(ep_idle, 0, NULL));
    wait_for([&] { return m_errs.count(ep_idle) > 0; },
             "the error handler after uct_ep_check", 60);
    double check_elapsed = now_sec() - check_start;
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, m_errs.status(ep_idle));

    /* a live peer */
    ASSERT_TRUE(send_short(ab, 2));
    wait_for([&] { return rb.count() == 3; }, "messages to the live peer");
    progress_for(100);
    EXPECT_EQ(1u, m_errs.count(ep_busy));
    EXPECT_EQ(1u, m_errs.count(ep_idle));
    EXPECT_EQ(2u, m_errs.calls.size());
    if (UCT_IFACE_STATS_ENABLED) {
        /* counted once per failed ep, as the handler is called */
        EXPECT_EQ(2u, uct_base_iface(a->iface())->stats.peer_failures);
    }
    EXPECT_EQ(iota(0, 3), headers(rb));
    std::cout << "[ INFO     ] dead peer: handler after " << elapsed
              << " s, uct_ep_check to handler " << check_elapsed << " s"
              << std::endl;
    uct_rkey_release(a->component(), &rkey);
    sbuf.reset();
    close_all(); /* the count of suppressed completion errors */
}

/* ------------------------------------------------------------------------
 * Scale
 */

/* 1000 eps of one iface connected to 1000 eps of another, one message on
 * each, all delivered; destroy and close are clean. Prints the time of
 * each step and the heap per ep (send queues of 31 slots: the QP buffers
 * themselves are the kernel's, not in the heap). The send CQ is smaller
 * than the number of eps: one unsignaled message per ep, kept counted
 * until the ep signals, must not use it up. */
TEST_P(uct_rc, thousand_endpoints)
{
    /* what it checks is the transport's tables and moderation, not the
     * device's: the first rc_verbs device is enough (the VM's devices are
     * all rxe, 10 s each) */
    if (res().dev_name != resources_of(UCT_RC_VERBS_NAME).front().dev_name) {
        GTEST_SKIP() << "runs on the first rc_verbs device only";
    }
    const unsigned N = ucs::test_scale(1000);
    auto p    = params({{"IB_TX_QUEUE_LEN", "31"}, {"IB_TX_CQ_LEN", "511"}});
    entity *a = create_entity(p);
    entity *b = create_entity(p);
    am_recorder &rec = install_recorder(*b, AM_ID);
    std::vector<uct_ep_h> eps;

    size_t heap_before = ucs_sys_heap_in_use();
    double t0          = now_sec();
    ASSERT_TRUE(connect_eps(*a, *b, N, eps));
    double t_connect  = now_sec() - t0;
    size_t heap_after = ucs_sys_heap_in_use();

    t0 = now_sec();
    ASSERT_TRUE(send_one_on_each(*a, eps, rec));
    double t_send = now_sec() - t0;
    EXPECT_EQ(2 * N, rc_iface_of(*a)->eps.count + rc_iface_of(*b)->eps.count);
    /* every ep is found by its QP number */
    for (const entity *e : {a, b}) {
        for (uct_ep_h ep : e->eps()) {
            uct_rc_ep_t *rc_ep = ucs_container_of(ep, uct_rc_ep_t, super.super);
            EXPECT_EQ(rc_ep, uct_rc_ep_table_find(&rc_iface_of(*e)->eps,
                                                  rc_ep->qp->qp_num));
        }
    }

    /* removing every other ep keeps the rest findable (a removal moves
     * the entries after it back) */
    std::vector<uct_ep_h> a_eps = a->eps();
    t0                          = now_sec();
    for (size_t k = 0; k < a_eps.size(); k += 2) {
        a->destroy_ep(a_eps[k]);
    }
    EXPECT_EQ(a_eps.size() / 2, (size_t)rc_iface_of(*a)->eps.count);
    for (uct_ep_h ep : a->eps()) {
        uct_rc_ep_t *rc_ep = ucs_container_of(ep, uct_rc_ep_t, super.super);
        EXPECT_EQ(rc_ep, uct_rc_ep_table_find(&rc_iface_of(*a)->eps,
                                              rc_ep->qp->qp_num));
    }
    a->destroy_eps();
    b->destroy_eps();
    double t_destroy = now_sec() - t0;
    EXPECT_EQ(0u, rc_iface_of(*a)->eps.count);
    EXPECT_EQ(0u, rc_iface_of(*b)->eps.count);

    t0 = now_sec();
    reset_entities();
    double t_close = now_sec() - t0;
    EXPECT_EQ(0u, unexpected_count());

    ucs::print_heap_definition();
    std::cout << "[ INFO     ] " << N << " ep pairs: connect " << t_connect
              << " s, send+flush " << t_send << " s, destroy " << t_destroy
              << " s, close " << t_close << " s; heap per ep pair "
              << ucs_sys_heap_per_object(heap_before, heap_after, N) << " bytes"
              << std::endl;
}

/* ------------------------------------------------------------------------
 * Events
 */

namespace {

/* Whether @a fd becomes readable within @a msec */
bool fd_readable(int fd, int msec)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    return poll(&pfd, 1, msec) > 0;
}

} // namespace

/* A receiver armed for UCT_EVENT_RECV wakes for active messages (sent
 * solicited), not for PUTs that land in its memory; arm says BUSY while a
 * completion waits. A sender armed for UCT_EVENT_SEND_COMP wakes for a
 * signaled send, not for an unsignaled one. */
TEST_P(uct_rc, solicited_event_rule)
{
    const unsigned ITERS = 20;
    entity *receiver     = create_entity();
    entity *sender       = create_entity();
    uct_ep_h ep          = sender->connect_to(*receiver);
    ASSERT_TRUE(ep != NULL);
    am_recorder &rec = install_recorder(*receiver, AM_ID);
    mapped_buffer rbuf(sizeof(uint64_t), *receiver);
    int rfd, sfd;
    ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(receiver->iface(), &rfd));
    ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(sender->iface(), &sfd));

    auto arm = [&](entity &e, unsigned events) {
        double deadline = now_sec() + 10;
        ucs_status_t status;
        while ((status = uct_iface_event_arm(e.iface(), events)) ==
               UCS_ERR_BUSY) {
            e.progress();
            if (now_sec() > deadline) {
                break;
            }
        }
        EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    };
    auto sender_flush = [&] {
        counted_completion comp;
        ucs_status_t status = uct_ep_flush(ep, 0, comp);
        double deadline     = now_sec() + 10;
        if (status == UCS_INPROGRESS) {
            while ((comp.calls == 0) && (now_sec() < deadline)) {
                sender->progress();
            }
            EXPECT_EQ(1, comp.calls);
        } else {
            EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
        }
    };

    for (unsigned i = 0; i < ITERS; ++i) {
        arm(*receiver, UCT_EVENT_RECV);

        uint64_t value = 1000 + i;
        ASSERT_EQ(UCS_OK, uct_ep_put_short(ep, &value, sizeof(value),
                                           rbuf.addr(), rbuf.rkey()));
        sender_flush();
        EXPECT_EQ(value, *(volatile uint64_t *)rbuf.ptr());
        EXPECT_FALSE(fd_readable(rfd, 50)) << "a PUT woke the receiver, "
                                           << "iteration " << i;

        ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, i, NULL, 0));
        ASSERT_TRUE(fd_readable(rfd, 5000)) << "an AM did not wake the "
                                            << "receiver, iteration " << i;
        if (i == 0) {
            /* the message waits in the CQ: arming must say so */
            EXPECT_EQ(UCS_ERR_BUSY,
                      uct_iface_event_arm(receiver->iface(), UCT_EVENT_RECV));
        }
        wait_for([&] { return rec.count() == i + 1; }, "the message");
    }
    EXPECT_EQ(iota(0, ITERS), headers(rec));

    /* send completions */
    sender_flush();
    arm(*sender, UCT_EVENT_SEND_COMP);
    ASSERT_LT(rc_ep_of(ep)->unsignaled + 1u,
              rc_iface_of(*sender)->config.tx_moderation);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, ITERS, NULL, 0));
    EXPECT_FALSE(fd_readable(sfd, 50)) << "an unsignaled send woke the "
                                       << "sender";
    mapped_buffer sbuf(sizeof(uint64_t), *sender);
    uct_iov_t iov = sbuf.iov(0, sbuf.length());
    counted_completion comp;
    ASSERT_EQ(UCS_INPROGRESS,
              uct_ep_put_zcopy(ep, &iov, 1, rbuf.addr(), rbuf.rkey(), comp));
    EXPECT_TRUE(fd_readable(sfd, 5000)) << "a signaled send did not wake "
                                        << "the sender";
    wait_for([&] { return comp.calls == 1; }, "the PUT");
    wait_for([&] { return rec.count() == ITERS + 1; }, "the last message");
}

/* ------------------------------------------------------------------------
 * Flush with cancel
 */

/* uct_ep_flush(UCT_FLUSH_FLAG_CANCEL) with zcopy operations outstanding:
 * each completes once, in order, those not done with UCS_ERR_CANCELED; the
 * error handler is not called. The receiver does not progress and its
 * receive queue holds 16 buffers, so the active messages after the 16th
 * (and the PUTs behind them) wait for it (RNR) until canceled. */
TEST_P(uct_rc, flush_cancel_outstanding_zcopy)
{
    const unsigned RX = 16, NUM_AM = 24, NUM_PUT = 4, N = NUM_AM + NUM_PUT;
    entity *receiver =
        create_entity(params({{"IB_RX_QUEUE_LEN", std::to_string(RX)}}));
    entity *sender = create_entity(params({}, true));
    uct_ep_h ep    = sender->connect_to(*receiver);
    ASSERT_TRUE(ep != NULL);
    am_recorder &rec = install_recorder(*receiver, AM_ID);
    mapped_buffer sbuf(4096, *sender), rbuf(4096, *receiver);
    uct_iov_t iov = sbuf.iov(0, 256);

    std::vector<unsigned> order;
    std::vector<order_comp> comps(N);
    for (unsigned i = 0; i < N; ++i) {
        comps[i].init(i, &order);
        ucs_status_t status;
        if (i < NUM_AM) {
            status =
                uct_ep_am_zcopy(ep, AM_ID, NULL, 0, &iov, 1, 0, &comps[i].uct);
        } else {
            status = uct_ep_put_zcopy(ep, &iov, 1, rbuf.addr(), rbuf.rkey(),
                                      &comps[i].uct);
        }
        ASSERT_EQ(UCS_INPROGRESS, status) << i;
    }
    /* the sender alone: what the receive queue took completes */
    double deadline = now_sec() + 10;
    while ((order.size() < RX) && (now_sec() < deadline)) {
        sender->progress();
    }
    progress_only(*sender, 50);
    EXPECT_EQ(RX, order.size());

    counted_completion flush_comp;
    ucs_status_t status = uct_ep_flush(ep, UCT_FLUSH_FLAG_CANCEL, flush_comp);
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);
    wait_for([&] { return flush_comp.calls > 0; }, "the flush");
    progress_for(200);
    /* the ep stays canceled: a later flush says so */
    EXPECT_EQ(UCS_ERR_CANCELED, uct_ep_flush(ep, 0, NULL));

    unsigned canceled = 0;
    for (unsigned i = 0; i < N; ++i) {
        EXPECT_EQ(1u, comps[i].calls) << i;
        if (comps[i].status == UCS_ERR_CANCELED) {
            ++canceled;
        } else {
            EXPECT_EQ(UCS_OK, comps[i].status) << i;
            EXPECT_EQ(0u, canceled) << "zcopy " << i << " succeeded after "
                                    << "an earlier one was canceled";
        }
    }
    std::vector<unsigned> expected;
    for (unsigned i = 0; i < N; ++i) {
        expected.push_back(i);
    }
    EXPECT_EQ(expected, order);
    EXPECT_EQ(N - RX, canceled);
    EXPECT_EQ(1, flush_comp.calls);
    EXPECT_TRUE(m_errs.calls.empty());
    EXPECT_EQ(RX, rec.count());
    std::cout << "[ INFO     ] " << canceled << " of " << N
              << " zcopy operations canceled; the flush completed with "
              << ucs_status_string(flush_comp.status_at_call) << std::endl;
}

/* ------------------------------------------------------------------------
 * Receive descriptors kept by the application
 */

/* A handler keeps descriptors (UCS_INPROGRESS) with rx_headroom and a
 * 4096-byte AM alignment: the payload is page aligned, the headroom is the
 * application's, the data stays intact until released, and every buffer
 * returns to the receive pool (more messages pass than the pool holds, so
 * one that did not return would stall the receiver). */
TEST_P(uct_rc, kept_descriptors_aligned_and_returned)
{
    const size_t HEADROOM = 40, ALIGN = 4096, LENGTH = 1000;
    const unsigned ROUNDS = 5, PER_ROUND = 48;
    auto p             = params({{"IB_RX_QUEUE_LEN", "64"}});
    p.rx_headroom      = HEADROOM;
    p.set_am_alignment = true;
    p.am_alignment     = ALIGN;
    entity *receiver   = create_entity(p);
    entity *sender     = create_entity();
    uct_ep_h ep        = sender->connect_to(*receiver);
    ASSERT_TRUE(ep != NULL);
    am_recorder &rec = install_recorder(*receiver, AM_ID);
    rec.keep_descriptors(HEADROOM);
    uct_rc_iface_t *iface = rc_iface_of(*receiver);

    progress_for(20);
    unsigned total = mpool_free_count(&iface->rx_mp) + iface->rx.posted;
    unsigned seq   = 0;
    for (unsigned r = 0; r < ROUNDS; ++r) {
        size_t first = rec.count();
        for (unsigned i = 0; i < PER_ROUND; ++i) {
            pattern_arg arg = {seq++, LENGTH};
            EXPECT_EQ((ssize_t)LENGTH,
                      retry_no_resource(
                          [&] {
                              return uct_ep_am_bcopy(ep, AM_ID, pack_pattern,
                                                     &arg, 0);
                          },
                          "am_bcopy"));
        }
        ASSERT_TRUE(wait_for([&] { return rec.count() == first + PER_ROUND; },
                             "round " + std::to_string(r)));
        progress_for(20);

        std::vector<void *> kept = rec.kept();
        ASSERT_EQ(PER_ROUND, kept.size());
        EXPECT_EQ(total, mpool_free_count(&iface->rx_mp) + iface->rx.posted +
                             PER_ROUND);
        for (unsigned i = 0; i < PER_ROUND; ++i) {
            const char *data = static_cast<const char *>(kept[i]);
            EXPECT_EQ(0u, (uintptr_t)data % ALIGN) << (void *)data;
            EXPECT_EQ(LENGTH,
                      mapped_buffer::pattern_mismatch(data, LENGTH, first + i))
                << "kept message " << first + i << " changed";
            for (size_t h = 1; h <= HEADROOM; ++h) {
                ASSERT_EQ((char)0xcc, data[-(ssize_t)h]);
            }
        }
        rec.release_kept();
        progress_for(20);
        EXPECT_EQ(total, mpool_free_count(&iface->rx_mp) + iface->rx.posted)
            << "round " << r;
    }
    EXPECT_GT(ROUNDS * PER_ROUND, total);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(uct_rc);
INSTANTIATE_TEST_SUITE_P(, uct_rc,
                         testing::ValuesIn(resources_of(UCT_RC_VERBS_NAME)),
                         uct_test::resource_name);
