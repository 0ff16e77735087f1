/*
 * One tcp connection per pair of CONNECT_TO_IFACE endpoints (tcp_pair.c):
 * the ep of the higher iface moves to the connection the lower iface's ep
 * opened, keeping the order of what it sends across the move, and only
 * when the lower iface confirms over a connection the higher one opened;
 * a destroyed ep leaves the connection to its peer's ep.
 */
#include "tcp_test.h"

#include <ucs/sys/sock.h>

class uct_tcp_pair : public uct_tcp {
protected:
    /* Two entities; m_low has the lower address (its ep's connection is
     * the one a pair keeps). Sockets counted before any ep exists. */
    void init_pair()
    {
        entity *a                 = add_entity();
        entity *b                 = add_entity();
        struct sockaddr_storage x = iface_sockaddr(*a);
        struct sockaddr_storage y = iface_sockaddr(*b);

        if (ucs_sockaddr_cmp((struct sockaddr *)&x, (struct sockaddr *)&y,
                             NULL) < 0) {
            m_low  = a;
            m_high = b;
        } else {
            m_low  = b;
            m_high = a;
        }
        m_rec_low  = &install_recorder(*m_low, GOOD_AM_ID);
        m_rec_high = &install_recorder(*m_high, GOOD_AM_ID);
        m_sockets  = count_sockets();
    }

    static unsigned iface_uint(const entity &e, const std::string &name)
    {
        return (unsigned)std::stoul(iface_file(e, name));
    }

    /* Waits until the pair shares one connection: one ep moved, and the
     * process holds the two ends of one connection beyond what it had */
    void wait_shared()
    {
        wait_for([&] { return iface_uint(*m_high, "pair_switched_eps") == 1; },
                 "the higher iface's ep to move to the lower one's "
                 "connection");
        wait_for([&] { return count_sockets() == m_sockets + 2; },
                 "one connection (two sockets) for the pair");
        EXPECT_EQ(0u, iface_uint(*m_low, "pair_switched_eps"));
    }

    /* AMs both ways still arrive, @a n each */
    void check_both_ways(uct_ep_h low_ep, uct_ep_h high_ep, unsigned n)
    {
        for (unsigned i = 0; i < n; ++i) {
            EXPECT_TRUE(
                send_am_and_wait(low_ep, GOOD_AM_ID, 100 + i, *m_rec_high));
            EXPECT_TRUE(
                send_am_and_wait(high_ep, GOOD_AM_ID, 200 + i, *m_rec_low));
        }
    }

    entity *m_low           = nullptr;
    entity *m_high          = nullptr;
    am_recorder *m_rec_low  = nullptr;
    am_recorder *m_rec_high = nullptr;
    size_t m_sockets        = 0;
};

/* The lower iface connects first and talks; the higher one's ep, created
 * later, moves to that connection */
TEST_F(uct_tcp_pair, lower_first_shares_one_connection)
{
    init_pair();
    uct_ep_h low_ep = m_low->connect_to(*m_high);
    ASSERT_TRUE(low_ep != NULL);
    ASSERT_TRUE(send_am_and_wait(low_ep, GOOD_AM_ID, 1, *m_rec_high));

    uct_ep_h high_ep = m_high->connect_to(*m_low);
    ASSERT_TRUE(high_ep != NULL);
    ASSERT_TRUE(send_am_and_wait(high_ep, GOOD_AM_ID, 2, *m_rec_low));
    wait_shared();
    check_both_ways(low_ep, high_ep, 4);
    EXPECT_EQ(m_sockets + 2, count_sockets());
}

/* Both eps created before either side progressed */
TEST_F(uct_tcp_pair, simultaneous_connects_share_one_connection)
{
    init_pair();
    uct_ep_h low_ep  = m_low->connect_to(*m_high);
    uct_ep_h high_ep = m_high->connect_to(*m_low);
    ASSERT_TRUE((low_ep != NULL) && (high_ep != NULL));
    check_both_ways(low_ep, high_ep, 2);
    wait_shared();
    check_both_ways(low_ep, high_ep, 2);
}

/* The higher iface's ep sends a stream of AMs and GETs on its own
 * connection, and keeps sending while it moves to the connection the
 * lower iface opens meanwhile: every AM arrives once, in order, and every
 * GET (some answered on the old connection, some on the new one) has
 * completed with its data in place when the flush after the last does */
TEST_F(uct_tcp_pair, move_keeps_the_order)
{
    const uint64_t total   = 3000;
    const size_t get_len   = 4096;
    const unsigned get_gap = 100; /* AMs between GETs */
    struct get_done {
        uct_completion_t comp; /* first: the callback's argument */
        int done;
    };
    uint64_t next   = 0;
    uct_ep_h low_ep = NULL;

    init_pair();
    uct_ep_h high_ep = m_high->connect_to(*m_low);
    ASSERT_TRUE(high_ep != NULL);

    unsigned num_gets = (unsigned)(total / get_gap);
    mapped_buffer remote(get_len * num_gets, *m_low);
    mapped_buffer local(get_len * num_gets, *m_high);
    remote.pattern_fill(77);
    local.memset(0xee);
    std::vector<get_done> gets(num_gets);
    std::vector<char> am_data(2048, 'a');
    unsigned posted = 0;

    while (next < total) {
        ucs_status_t status;
        if ((next % get_gap == 0) && (posted == next / get_gap) &&
            (posted < num_gets)) {
            get_done &g = gets[posted];
            g.comp.func = [](uct_completion_t *c) {
                reinterpret_cast<get_done *>(c)->done = 1;
            };
            g.comp.count  = 1;
            g.comp.status = UCS_OK;
            g.done        = 0;
            uct_iov_t iov = local.iov(posted * get_len, get_len);
            status        = uct_ep_get_zcopy(high_ep, &iov, 1,
                                             remote.addr() + posted * get_len,
                                             remote.rkey(), &g.comp);
            if (status == UCS_OK) {
                g.done = 1;
            }
            if ((status == UCS_OK) || (status == UCS_INPROGRESS)) {
                ++posted;
                continue;
            }
        } else {
            /* 2 KiB each, so that the old connection still holds some
             * when the move happens */
            memcpy(am_data.data(), &next, sizeof(next));
            pack_arg pa = {am_data.data(), am_data.size()};
            ssize_t ret =
                uct_ep_am_bcopy(high_ep, GOOD_AM_ID, pack_buffer, &pa, 0);
            status = (ret < 0) ? (ucs_status_t)ret : UCS_OK;
            if (status == UCS_OK) {
                ++next;
            }
        }
        if (status != UCS_OK) {
            ASSERT_EQ(UCS_ERR_NO_RESOURCE, status) << ucs_status_string(status);
            progress();
        }
        if ((next == 300) && (low_ep == NULL)) {
            low_ep = m_low->connect_to(*m_high);
            ASSERT_TRUE(low_ep != NULL);
        }
        if ((next % 16) == 0) {
            progress();
        }
    }
    ASSERT_TRUE(low_ep != NULL);
    ASSERT_EQ(num_gets, posted);

    struct get_done fl;
    fl.comp.func = [](uct_completion_t *c) {
        reinterpret_cast<get_done *>(c)->done = 1;
    };
    fl.comp.count       = 1;
    fl.comp.status      = UCS_OK;
    fl.done             = 0;
    ucs_status_t status = uct_ep_flush(high_ep, 0, &fl.comp);
    if (status == UCS_INPROGRESS) {
        ASSERT_TRUE(wait_for([&] { return fl.done != 0; }, "the flush"));
        status = fl.comp.status;
    }
    EXPECT_EQ(UCS_OK, status);
    /* a tcp flush covers GETs and PUTs; AMs it leaves in the socket */
    ASSERT_TRUE(
        wait_for([&] { return m_rec_low->count() >= total; }, "every AM"));
    progress_for(20);
    ASSERT_EQ(total, m_rec_low->count()) << "an AM arrived twice";
    for (uint64_t i = 0; i < total; ++i) {
        ASSERT_EQ(i, am_header_of(m_rec_low->at(i).data))
            << "AM " << i << " out of order";
    }
    for (unsigned i = 0; i < num_gets; ++i) {
        EXPECT_TRUE(gets[i].done) << "GET " << i << " not completed by the "
                                  << "flush";
        EXPECT_EQ(UCS_OK, gets[i].comp.status) << "GET " << i;
        EXPECT_EQ(0, memcmp(local.cptr() + i * get_len,
                            remote.cptr() + i * get_len, get_len))
            << "GET " << i << " data";
    }
    local.check_guard();
    wait_shared();
    check_both_ways(low_ep, high_ep, 2);
}

/* A destroyed ep leaves the shared connection to the peer's ep, which
 * keeps talking; once both are destroyed the connection is closed */
TEST_F(uct_tcp_pair, destroy_leaves_the_connection_to_the_peer)
{
    for (int high_first = 0; high_first < 2; ++high_first) {
        init_pair();
        uct_ep_h low_ep  = m_low->connect_to(*m_high);
        uct_ep_h high_ep = m_high->connect_to(*m_low);
        ASSERT_TRUE((low_ep != NULL) && (high_ep != NULL));
        check_both_ways(low_ep, high_ep, 1);
        wait_shared();

        entity *first   = high_first ? m_high : m_low;
        entity *second  = high_first ? m_low : m_high;
        uct_ep_h gone   = high_first ? high_ep : low_ep;
        uct_ep_h stays  = high_first ? low_ep : high_ep;
        am_recorder *at = high_first ? m_rec_high : m_rec_low;

        first->destroy_ep(gone);
        EXPECT_EQ(1u, iface_uint(*first, "pair_unpaired_eps"));
        for (uint64_t i = 0; i < 4; ++i) {
            EXPECT_TRUE(send_am_and_wait(stays, GOOD_AM_ID, 300 + i, *at))
                << "the peer's ep lost its connection when "
                << (high_first ? "the higher" : "the lower")
                << " iface's ep was destroyed";
        }
        EXPECT_EQ(m_sockets + 2, count_sockets());

        second->destroy_ep(stays);
        wait_for([&] { return count_sockets() == m_sockets; },
                 "the connection to close once neither side uses it");
        remove_entity(m_low);
        remove_entity(m_high);
    }
}

/* A third party that claims the lower iface's address in a handshake to
 * the higher iface does not get the higher iface's ep: the lower iface
 * denies the nonce, the ep stays on its own connection, and the claimant
 * receives nothing but the handshake reply */
TEST_F(uct_tcp_pair, forged_claim_is_denied)
{
    init_pair();
    struct sockaddr_storage low = iface_sockaddr(*m_low);
    std::string ip              = sockaddr_ip_bytes(low);
    raw_socket sock;

    ASSERT_TRUE(sock.connect_to(iface_sockaddr(*m_high)));
    wire::handshake hs = make_handshake(sock, wire::CONN_TO_IFACE, *m_high);
    hs.listen_port     = sockaddr_port(low);
    memset(hs.listen_addr, 0, sizeof(hs.listen_addr));
    memcpy(hs.listen_addr, ip.data(), ip.size());
    hs.src_nonce = htole64(0x5eed5eed5eed5eedull);
    ASSERT_TRUE(sock.send_obj(hs));
    wire::handshake_reply reply;
    ASSERT_TRUE(recv_reply(sock.fd(), &reply));
    ASSERT_EQ(wire::HS_ACCEPTED, reply.status);

    uct_ep_h high_ep = m_high->connect_to(*m_low);
    ASSERT_TRUE(high_ep != NULL);
    for (uint64_t i = 0; i < 4; ++i) {
        EXPECT_TRUE(send_am_and_wait(high_ep, GOOD_AM_ID, 400 + i, *m_rec_low));
    }
    progress_for(50);
    EXPECT_EQ(0u, iface_uint(*m_high, "pair_switched_eps"));

    char byte;
    ssize_t ret = ::recv(sock.fd(), &byte, 1, MSG_DONTWAIT);
    EXPECT_TRUE((ret < 0) && (errno == EAGAIN))
        << "the claimant received " << ret << " bytes";

    /* the claim did not stop the real pair from sharing a connection */
    uct_ep_h low_ep = m_low->connect_to(*m_high);
    ASSERT_TRUE(low_ep != NULL);
    check_both_ways(low_ep, high_ep, 2);
    sock.close();
    wait_shared();
    check_both_ways(low_ep, high_ep, 2);
}

/* What a peer can send of the pairing messages: a SWITCH naming no ep of
 * ours (a guess, or the slot of an endpoint address) is answered DENIED
 * and moves nothing; a malformed SWITCH, an answer to a SWITCH never sent
 * and an UNPAIR on a connection nobody paired close that connection, with
 * at most one warning each */
TEST_F(uct_tcp_pair, hostile_pairing_messages)
{
    init_pair();
    uct_ep_h low_ep = m_low->connect_to(*m_high);
    ASSERT_TRUE(low_ep != NULL);
    ASSERT_TRUE(send_am_and_wait(low_ep, GOOD_AM_ID, 1, *m_rec_high));
    uct_ep_h to_ep = create_unconnected_ep(*m_low);
    ASSERT_TRUE(to_ep != NULL);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    /* guesses: random, slot 0..3 with random bits, all ones */
    for (uint64_t nonce : {0x0123456789abcdefull, 0ull, 1ull << 32,
                           (2ull << 32) | 0x5a5a5a5a, ~0ull}) {
        raw_socket sock;
        ASSERT_TRUE(sock.connect_to(iface_sockaddr(*m_low)));
        handshake_accepted(sock, *m_low);
        ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_SWITCH, 8)));
        uint64_t le = htole64(nonce);
        ASSERT_TRUE(sock.send_obj(le));
        wire::hdr h;
        ASSERT_TRUE(recv_hdr(sock.fd(), &h));
        EXPECT_EQ(wire::OP_SWITCH_ACK, h.id);
        EXPECT_EQ(wire::FLAG_DENIED, h.flags) << "nonce " << nonce;
        EXPECT_EQ(0u, h.length);
    }

    /* malformed SWITCH, unsolicited SWITCH_ACK, UNPAIR: closed */
    for (uint8_t id : {(uint8_t)wire::OP_SWITCH, (uint8_t)wire::OP_SWITCH_ACK,
                       (uint8_t)wire::OP_UNPAIR}) {
        raw_socket sock;
        ASSERT_TRUE(sock.connect_to(iface_sockaddr(*m_low)));
        handshake_accepted(sock, *m_low);
        ASSERT_TRUE(
            sock.send_obj(wire::make_hdr(id, (id == wire::OP_SWITCH) ? 4 : 0)));
        if (id == wire::OP_SWITCH) {
            uint32_t junk = 7;
            ASSERT_TRUE(sock.send_obj(junk));
        }
        EXPECT_TRUE(wait_closed(sock.fd())) << "message id " << (int)id;
    }

    /* none of it touched the real pair */
    EXPECT_EQ(0u, iface_uint(*m_low, "pair_switched_eps"));
    uct_ep_h high_ep = m_high->connect_to(*m_low);
    ASSERT_TRUE(high_ep != NULL);
    check_both_ways(low_ep, high_ep, 2);
    wait_shared();

    /* closing the ifaces prints what the rate limit held back */
    destroy_own_ep(to_ep);
    m_low->destroy_ep(low_ep);
    m_high->destroy_ep(high_ep);
    remove_entity(m_low);
    remove_entity(m_high);
    std::vector<std::string> warns = log_lines(mark, "warn");
    EXPECT_LE(warns.size(), 2u) << join(warns); /* one, and its summary */
    EXPECT_TRUE(log_lines(mark, "error").empty())
        << join(log_lines(mark, "error"));
}

/* An ep of the higher iface destroyed while its SWITCH is still queued
 * gives back the connection it reserved: the next ep to the same peer
 * moves to it */
TEST_F(uct_tcp_pair, destroyed_while_switching_frees_the_reservation)
{
    init_pair();
    uct_ep_h low_ep = m_low->connect_to(*m_high);
    ASSERT_TRUE(low_ep != NULL);
    ASSERT_TRUE(send_am_and_wait(low_ep, GOOD_AM_ID, 1, *m_rec_high));

    /* finds the lower iface's connection and queues its SWITCH at once */
    uct_ep_h first = m_high->connect_to(*m_low);
    ASSERT_TRUE(first != NULL);
    m_high->destroy_ep(first);

    uct_ep_h high_ep = m_high->connect_to(*m_low);
    ASSERT_TRUE(high_ep != NULL);
    check_both_ways(low_ep, high_ep, 2);
    wait_for([&] { return iface_uint(*m_high, "pair_switched_eps") == 1; },
             "the second ep to move to the lower iface's connection");
    check_both_ways(low_ep, high_ep, 2);
}
