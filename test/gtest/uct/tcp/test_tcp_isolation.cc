/*
 * One peer of a tcp iface must not reach another peer's endpoint or
 * starve it: endpoint address cookies that tell nothing about each other,
 * a connected endpoint that takes a connection only from its own peer,
 * each peer's share of the receive buffers, and messages whose bytes stop
 * coming.
 */
#include "tcp_test.h"

#include <arpa/inet.h>
#include <set>

namespace {

/* Bits set in @a x */
unsigned popcount64(uint64_t x)
{
    return (unsigned)__builtin_popcountll(x);
}

} // namespace

/* Peer-triggered lines are rate-limited; what the limiter held back is
 * said when the iface closes, which these tests let happen here. */
class uct_tcp_limited_logs : public uct_tcp {
protected:
    void TearDown() override
    {
        {
            ucs::scoped_log_capture capture;
            size_t mark = log_mark();

            destroy_own_eps();
            reset_entities();
            for (const std::string &line : log_lines(mark, "warn")) {
                EXPECT_NE(std::string::npos, line.find("suppressed")) << line;
            }
            EXPECT_TRUE(log_lines(mark, "error").empty());
        }
        uct_tcp::TearDown();
    }
};

/* ------------------------------------------------------------------------
 * Endpoint addresses
 */

class uct_tcp_ep_capability : public uct_tcp_limited_logs {
protected:
    /* What an endpoint address says, in host order and natural alignment
     * (the wire struct is packed: its fields cannot be bound to
     * references) */
    struct ep_fields {
        uint32_t ep_id;
        uint64_t cookie;
        uint64_t secret;
    };

    static ep_fields ep_address(entity &e, uct_ep_h ep)
    {
        std::vector<char> buf(e.iface_attr().ep_addr_len);
        wire::ep_addr addr;
        ep_fields f;

        EXPECT_EQ(sizeof(addr), buf.size());
        EXPECT_EQ(UCS_OK, uct_ep_get_address(ep, (uct_ep_addr_t *)buf.data()));
        memcpy(&addr, buf.data(), sizeof(addr));
        f.ep_id  = le32toh(addr.ep_id);
        f.cookie = le64toh(addr.cookie);
        f.secret = le64toh(addr.secret);
        return f;
    }

    /* Of two entities on one address, the one with the larger port waits
     * for the other to connect (CONNECT_TO_EP). */
    static bool waits_for(const entity &a, const entity &b)
    {
        return ntohs(sockaddr_port(iface_sockaddr(a))) >
               ntohs(sockaddr_port(iface_sockaddr(b)));
    }

    /*
     * A CONN_TO_EP handshake to @a server naming endpoint @a dst_id with
     * @a cookie, from endpoint @a src_id/@a src_cookie: refused with
     * NO_EP, and nothing but the reply arrives before the close.
     */
    void expect_no_ep(entity &server, uint32_t dst_id, uint64_t cookie,
                      uint32_t src_id = 1, uint64_t src_cookie = 2)
    {
        raw_socket sock;
        std::string received;

        ASSERT_TRUE(sock.connect_to(iface_sockaddr(server)));
        wire::handshake hs = make_handshake(sock, wire::CONN_TO_EP, server);
        hs.dst_ep_id       = htole32(dst_id);
        hs.dst_ep_cookie   = htole64(cookie);
        hs.src_ep_id       = htole32(src_id);
        hs.src_ep_cookie   = htole64(src_cookie);
        ASSERT_TRUE(sock.send_obj(hs));
        EXPECT_TRUE(wait_closed(sock.fd(), &received))
            << "a connection to endpoint " << dst_id << " with cookie 0x"
            << std::hex << cookie << " was kept open";
        ASSERT_EQ(sizeof(wire::handshake_reply), received.size())
            << "bytes after the reply: the connection was accepted";
        wire::handshake_reply reply;
        memcpy(&reply, received.data(), sizeof(reply));
        EXPECT_EQ(wire::HS_NO_EP, le16toh(reply.status))
            << "endpoint " << dst_id << " cookie 0x" << std::hex << cookie;
    }
};

/* 64 random bits per ep: no two alike, none close to the previous one (a
 * counter, or anything derived from a shared seed by small steps, would
 * be). */
TEST_F(uct_tcp_ep_capability, cookies_are_random_per_endpoint)
{
    entity *e = add_entity();
    std::set<uint64_t> cookies;
    unsigned close_pairs = 0, high_zero = 0;
    uint64_t prev = 0;
    const int num = 64;

    for (int i = 0; i < num; ++i) {
        uct_ep_h ep  = create_unconnected_ep(*e);
        ep_fields ea = ep_address(*e, ep);
        cookies.insert(ea.cookie);
        /* two random words differ in 32 +- 4 bits; fewer than 12 has a
         * chance of about 1e-7 */
        if ((i > 0) && (popcount64(ea.cookie ^ prev)) < 12) {
            ++close_pairs;
        }
        high_zero += ((ea.cookie >> 32) == 0);
        prev = ea.cookie;
    }
    EXPECT_EQ((size_t)num, cookies.size());
    EXPECT_EQ(0u, close_pairs) << "cookies of consecutive endpoints are "
                                  "close: one can be guessed from another";
    EXPECT_LE(high_zero, 1u) << "cookies are not 64 bits wide";
}

/*
 * A peer given endpoint A's address tries the ids and cookies around it
 * to reach endpoint B, which has messages queued for its own peer: every
 * try is refused with NO_EP, nothing is delivered to it, and its tries
 * draw few (rate-limited) lines; B's real peer then gets all of them.
 */
TEST_F(uct_tcp_ep_capability, neighbour_address_gives_no_access)
{
    entity *server     = add_entity();
    entity *client     = add_entity();
    am_recorder &rec_c = install_recorder(*client, GOOD_AM_ID);
    uct_ep_h a         = create_unconnected_ep(*server);
    uct_ep_h b         = create_unconnected_ep(*server);
    uct_ep_h peer_of_b = create_unconnected_ep(*client);
    ep_fields addr_a   = ep_address(*server, a);
    ep_fields addr_b   = ep_address(*server, b);
    const uint64_t num = 7;

    for (uint64_t i = 0; i < num; ++i) {
        ssize_t ret = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_short(b, GOOD_AM_ID, 700 + i, NULL,
                                                0);
            },
            "uct_ep_am_short");
        ASSERT_EQ(UCS_OK, ret);
    }

    unsigned tries = 0;
    {
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();

        for (int64_t id = -2; id <= 8; ++id) {
            uint32_t dst = addr_a.ep_id + (uint32_t)id;
            if (dst == addr_a.ep_id) {
                continue; /* A's own address is ours to use */
            }
            for (int64_t d = -4; d <= 4; ++d) {
                expect_no_ep(*server, dst, addr_a.cookie + (uint64_t)d);
                ++tries;
            }
            expect_no_ep(*server, dst, addr_a.cookie ^ 1);
            expect_no_ep(*server, dst, 0);
            tries += 2;
            if (HasFatalFailure()) {
                return;
            }
        }
        progress_for(20);
        std::vector<std::string> warns = log_lines(mark, "warn");
        EXPECT_GE(warns.size(), 1u);
        EXPECT_LE(warns.size(), 3u)
            << tries << " refusals drew too many lines: " << join(warns);
        EXPECT_TRUE(log_lines(mark, "error").empty());
    }
    /* B's real address was never among the guesses */
    EXPECT_NE(addr_b.cookie, addr_a.cookie + 1);

    ASSERT_EQ(UCS_OK, server->connect_ep_to(b, *client, peer_of_b));
    ASSERT_EQ(UCS_OK, client->connect_ep_to(peer_of_b, *server, b));
    wait_for([&] { return rec_c.count() == num; }, "B's messages at its peer");
    progress_for(20);
    ASSERT_EQ(num, rec_c.count());
    for (uint64_t i = 0; i < num; ++i) {
        EXPECT_EQ(700 + i, am_header_of(rec_c.at(i).data));
    }
}

/* Once the user connected an endpoint to its peer, knowing the endpoint's
 * own address is not enough: the connection must come from that peer. */
TEST_F(uct_tcp_ep_capability, connected_endpoint_takes_only_its_peer)
{
    entity *x = add_entity();
    entity *y = add_entity();
    /* the one that waits for the other's connection is the target */
    entity *target     = waits_for(*x, *y) ? x : y;
    entity *connector  = (target == x) ? y : x;
    am_recorder &rec_t = install_recorder(*target, GOOD_AM_ID);
    uct_ep_h t         = create_unconnected_ep(*target);
    uct_ep_h c         = create_unconnected_ep(*connector);
    ep_fields addr_t   = ep_address(*target, t);
    ep_fields addr_c   = ep_address(*connector, c);

    ASSERT_EQ(UCS_OK, target->connect_ep_to(t, *connector, c));
    if (HasFatalFailure()) {
        return;
    }
    {
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();

        /* the target's full address, but another source */
        expect_no_ep(*target, addr_t.ep_id, addr_t.cookie, addr_c.ep_id,
                     addr_c.cookie + 1);
        expect_no_ep(*target, addr_t.ep_id, addr_t.cookie, addr_c.ep_id + 1,
                     addr_c.cookie);
        progress_for(20);
        std::vector<std::string> warns = log_lines(mark, "warn");
        ASSERT_EQ(1u, warns.size()) << join(warns);
        EXPECT_NE(std::string::npos, warns[0].find("not the one")) << warns[0];
    }

    ASSERT_EQ(UCS_OK, connector->connect_ep_to(c, *target, t));
    ssize_t ret = retry_no_resource(
        [&] { return (ssize_t)uct_ep_am_short(c, GOOD_AM_ID, 42, NULL, 0); },
        "uct_ep_am_short");
    ASSERT_EQ(UCS_OK, ret);
    wait_for([&] { return rec_t.count() == 1; }, "the peer's message");
}

/* ------------------------------------------------------------------------
 * Reserved fields of the handshake
 */

class uct_tcp_reserved : public uct_tcp_ep_capability {
protected:
    /* @a hs is refused with BAD_REQUEST, nothing delivered. */
    void expect_bad_request(entity &server, const wire::handshake &hs)
    {
        am_recorder &rec = install_recorder(server, GOOD_AM_ID);
        raw_socket sock;
        std::string received;
        struct {
            wire::handshake hs;
            wire::hdr h;
            uint64_t payload;
        } data;

        data.hs      = hs;
        data.h       = wire::make_hdr(GOOD_AM_ID, 8);
        data.payload = 1;
        ASSERT_TRUE(sock.connect_to(iface_sockaddr(server)));
        ASSERT_TRUE(sock.send_obj(data));
        EXPECT_TRUE(wait_closed(sock.fd(), &received));
        ASSERT_EQ(sizeof(wire::handshake_reply), received.size());
        wire::handshake_reply reply;
        memcpy(&reply, received.data(), sizeof(reply));
        EXPECT_EQ(wire::HS_BAD_REQUEST, le16toh(reply.status));
        progress_for(20);
        EXPECT_EQ(0u, rec.count());
    }

    wire::handshake valid_hs(entity &server)
    {
        raw_socket sock;
        EXPECT_TRUE(sock.connect_to(iface_sockaddr(server)));
        wire::handshake hs = make_handshake(sock, wire::CONN_TO_IFACE, server);
        return hs;
    }
};

TEST_F(uct_tcp_reserved, every_reserved_field_must_be_zero)
{
    entity *server = add_entity();
    ucs::scoped_log_capture capture;
    wire::handshake hs;

    hs          = valid_hs(*server);
    hs.reserved = htole16(1);
    expect_bad_request(*server, hs);

    hs = valid_hs(*server);
    if (hs.family == AF_INET) {
        hs.listen_addr[15] = 1; /* past the 4 bytes of an IPv4 address */
        expect_bad_request(*server, hs);
    }

    /* ep fields in a connection to the iface */
    hs           = valid_hs(*server);
    hs.dst_ep_id = htole32(3);
    expect_bad_request(*server, hs);
    hs               = valid_hs(*server);
    hs.src_ep_cookie = htole64(1ull << 40);
    expect_bad_request(*server, hs);
}

/* The reply a connecting ep gets must have its reserved field zero too:
 * a server that sets it is not one of ours. */
TEST_F(uct_tcp_reserved, reply_with_reserved_bits_fails_the_ep)
{
    entity *client = add_entity_with_err();
    int listen_fd  = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);

    ASSERT_GE(listen_fd, 0);
    raw_socket owner(listen_fd);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family      = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(0, bind(listen_fd, (struct sockaddr *)&sin, sizeof(sin)));
    ASSERT_EQ(0, listen(listen_fd, 4));
    ASSERT_EQ(0, getsockname(listen_fd, (struct sockaddr *)&sin, &len));
    if (client->dev_addr().at(0) != AF_INET) {
        GTEST_SKIP() << "the iface on lo is not IPv4";
    }

    uct_ep_h ep;
    ASSERT_EQ(UCS_OK, create_ep_to(*client, client->dev_addr(), sin.sin_port,
                                   &ep, 0x1234));
    int fd = -1;
    wait_for(
        [&] {
            fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK);
            return fd >= 0;
        },
        "the ep's connection");
    raw_socket conn(fd);
    wire::handshake hs;
    ASSERT_TRUE(recv_exact(fd, &hs, sizeof(hs)));

    wire::handshake_reply reply;
    memset(&reply, 0, sizeof(reply));
    reply.magic    = htole64(wire::MAGIC);
    reply.version  = htole16(wire::VERSION);
    reply.status   = htole16(wire::HS_ACCEPTED);
    reply.reserved = htole32(0x100);
    {
        ucs::scoped_log_capture capture;
        ASSERT_TRUE(conn.send_obj(reply));
        wait_for([&] { return m_errs.count() == 1; }, "the ep to fail");
    }
    ASSERT_EQ(1u, m_errs.count());
    EXPECT_EQ(ep, m_errs.at(0).ep);
}

/* ------------------------------------------------------------------------
 * Receive buffer shares
 */

class uct_tcp_share : public uct_tcp_limited_logs {
protected:
    /*
     * A server and a client entity on lo with a pair of eps that keep
     * exchanging AMs, while hostile sockets from @a hostile_ip hold
     * partial messages. The hostile sockets are returned in @a socks.
     */
    void SetUp() override
    {
        uct_tcp_limited_logs::SetUp();
        m_server = add_entity_with_err();
        if (m_server->dev_addr().at(0) != AF_INET) {
            GTEST_SKIP() << "the iface on lo is not IPv4";
        }
        m_client = add_entity_with_err();
        m_rec_s  = &install_recorder(*m_server, GOOD_AM_ID);
        m_rec_c  = &install_recorder(*m_client, GOOD_AM_ID);
        m_cs     = m_client->connect_to(*m_server);
        m_sc     = m_server->connect_to(*m_client);
        ASSERT_TRUE((m_cs != NULL) && (m_sc != NULL));
    }

    /* A hostile connection from @a ip that completed its handshake and
     * left the first @a bytes of a message header behind it. */
    void hold_partial(std::list<raw_socket> &socks, const char *ip,
                      size_t bytes = 4)
    {
        socks.emplace_back();
        raw_socket &sock = socks.back();
        ASSERT_TRUE(sock.connect_from(ip, iface_sockaddr(*m_server)));
        handshake_accepted(sock, *m_server);
        wire::hdr h = wire::make_hdr(GOOD_AM_ID, 1000);
        ASSERT_TRUE(sock.send_all(&h, bytes));
    }

    /* Whether the server closed @a sock's connection (without waiting) */
    static bool is_closed(const raw_socket &sock)
    {
        char c;
        ssize_t ret = recv(sock.fd(), &c, 1, MSG_DONTWAIT | MSG_PEEK);
        return (ret == 0) || ((ret < 0) && (errno != EAGAIN));
    }

    static size_t count_closed(const std::list<raw_socket> &socks)
    {
        size_t n = 0;
        for (const raw_socket &sock : socks) {
            n += is_closed(sock);
        }
        return n;
    }

    /* Both ways, @a n messages each, a large one among small ones so that
     * the legitimate connections hold partial messages too. */
    void exchange(uint64_t base, unsigned n)
    {
        std::string big(8000, 'b'); /* about the bcopy limit */
        size_t want_s = m_rec_s->count() + n, want_c = m_rec_c->count() + n;

        for (unsigned i = 0; i < n; ++i) {
            for (uct_ep_h ep : {m_cs, m_sc}) {
                ssize_t ret;
                if (i % 4 == 0) {
                    pack_arg arg = {big.data(), big.size()};
                    ret          = retry_no_resource(
                        [&] {
                            return uct_ep_am_bcopy(ep, GOOD_AM_ID, pack_buffer,
                                                            &arg, 0);
                        },
                        "uct_ep_am_bcopy");
                    ASSERT_EQ((ssize_t)big.size(), ret);
                } else {
                    ret = retry_no_resource(
                        [&] {
                            return (ssize_t)uct_ep_am_short(ep, GOOD_AM_ID,
                                                            base + i, NULL, 0);
                        },
                        "uct_ep_am_short");
                    ASSERT_EQ(UCS_OK, ret);
                }
            }
        }
        wait_for(
            [&] {
                return (m_rec_s->count() == want_s) &&
                       (m_rec_c->count() == want_c);
            },
            "the legitimate messages");
        flush_ep(*m_client, m_cs);
        flush_ep(*m_server, m_sc);
    }

    /* Three partial messages from 127.0.0.3, then @a num from 127.0.0.2,
     * then a legitimate exchange: how many of each host's connections
     * the server closed. */
    void two_hosts(unsigned num, size_t *modest_closed, size_t *flood_closed)
    {
        std::list<raw_socket> flood, modest;

        for (int i = 0; i < 3; ++i) {
            hold_partial(modest, "127.0.0.3");
        }
        for (unsigned i = 0; i < num; ++i) {
            hold_partial(flood, "127.0.0.2");
            progress_for(1);
        }
        exchange(1, 8);
        progress_for(20);
        *modest_closed = count_closed(modest);
        *flood_closed  = count_closed(flood);
    }

    unsigned iface_value(const char *name)
    {
        return (unsigned)std::stoul(iface_file(*m_server, name));
    }

    entity *m_server     = nullptr;
    entity *m_client     = nullptr;
    am_recorder *m_rec_s = nullptr;
    am_recorder *m_rec_c = nullptr;
    uct_ep_h m_cs        = nullptr;
    uct_ep_h m_sc        = nullptr;
};

/*
 * UCX_TCP_MAX_BUFS=16, so a peer's share is 4: many connections from one
 * host holding partial messages lose to each other, never the legitimate
 * pair (on 127.0.0.1 too), which keeps exchanging, flushing and never
 * sees an error. Before shares, the 16th hold emptied the pool and the
 * next connection to read (the legitimate one) was dropped.
 */
class uct_tcp_share_small : public uct_tcp_share {
protected:
    void SetUp() override
    {
        m_bufs.reset(new ucs::scoped_setenv("UCX_TCP_MAX_BUFS", "16"));
        uct_tcp_share::SetUp();
    }

    std::unique_ptr<ucs::scoped_setenv> m_bufs;
};

TEST_F(uct_tcp_share_small, one_host_cannot_starve_the_others)
{
    std::list<raw_socket> socks;
    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    exchange(100, 8);
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 10; ++i) {
            /* the legitimate client's host */
            hold_partial(socks, "127.0.0.1");
            if (HasFatalFailure()) {
                return;
            }
            progress_for(2);
        }
        exchange(1000 * (round + 1), 8);
        if (HasFatalFailure()) {
            return;
        }
        EXPECT_LE(iface_value("rx_partial_msgs"), 15u);
    }
    progress_for(20);

    EXPECT_EQ(0u, m_errs.count()) << "a legitimate ep failed";
    /* the legitimate connections, read most recently, may have held one
     * of the host's four at a time */
    EXPECT_GE(iface_value("rx_peer_evictions"), 40u - 4u);
    EXPECT_LE(iface_value("rx_peer_evictions"), 40u - 2u);
    EXPECT_GE(count_closed(socks), 40u - 4u)
        << "the host over its share kept more than its 4 buffers";
    std::vector<std::string> warns = log_lines(mark, "warn");
    EXPECT_GE(warns.size(), 1u);
    EXPECT_LE(warns.size(), 4u) << join(warns);
    if (!warns.empty()) {
        EXPECT_NE(std::string::npos, warns[0].find("over its share"))
            << warns[0];
    }
}

/* A second host under its share keeps every buffer while the first one
 * floods: the peer over its share is the one that loses. */
TEST_F(uct_tcp_share_small, the_host_over_its_share_loses)
{
    ucs::scoped_log_capture capture;
    size_t modest, flood;

    two_hosts(30, &modest, &flood);
    EXPECT_EQ(0u, modest) << "a host under its share lost";
    EXPECT_EQ(30u - 4u, flood);
    EXPECT_EQ(0u, m_errs.count());
}

/* No per-host limit: when the pool runs low, the host holding the most
 * loses its connection read least recently; the others keep theirs. */
class uct_tcp_share_pool : public uct_tcp_share {
protected:
    void SetUp() override
    {
        m_bufs.reset(new ucs::scoped_setenv("UCX_TCP_MAX_BUFS", "16"));
        m_share.reset(new ucs::scoped_setenv("UCX_TCP_PEER_MAX_BUFS", "inf"));
        uct_tcp_share::SetUp();
    }

    std::unique_ptr<ucs::scoped_setenv> m_bufs, m_share;
};

TEST_F(uct_tcp_share_pool, pool_low_takes_from_the_largest_holder)
{
    ucs::scoped_log_capture capture;
    size_t modest, flood;

    two_hosts(20, &modest, &flood);
    EXPECT_EQ(0u, modest);
    EXPECT_GE(flood, 20u - 12u);
    EXPECT_LE(iface_value("rx_partial_msgs"), 15u);
    EXPECT_EQ(0u, m_errs.count());
}

/* ------------------------------------------------------------------------
 * Messages whose bytes stop coming
 */

class uct_tcp_stall : public uct_tcp {
protected:
    /* A connection to @a server that starts a PUT of @a length bytes
     * (header included) with a key nobody has. */
    void start_put(raw_socket &sock, const entity &server, uint32_t length)
    {
        wire::put_hdr put;

        ASSERT_TRUE(sock.connect_to(iface_sockaddr(server)));
        handshake_accepted(sock, server);
        put.remote_addr = htole64(0x1000);
        put.rkey        = htole64(0x42);
        ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_PUT, length)));
        ASSERT_TRUE(sock.send_obj(put));
    }

    /* A peer announces a PUT of @a length bytes, sends 100 of them and
     * goes silent: its connection is closed after UCX_TCP_PEER_TIMEOUT,
     * not before. */
    void stalled_put(uint32_t length)
    {
        ucs::scoped_setenv timeout("UCX_TCP_PEER_TIMEOUT", "300ms");
        entity *server = add_entity();
        raw_socket sock;
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();

        start_put(sock, *server, length);
        std::string data(100, 'p');
        ASSERT_TRUE(sock.send_all(data.data(), data.size()));

        double start = now_sec();
        EXPECT_TRUE(wait_closed(sock.fd(), NULL, 5.0))
            << "a PUT of " << length << " bytes that stopped was kept";
        EXPECT_GE(now_sec() - start, 0.25)
            << "closed before UCX_TCP_PEER_TIMEOUT";
        progress_for(20);
        bool said = false;
        for (const std::string &line : log_lines(mark, "warn")) {
            said |= (line.find("stalled") != std::string::npos);
        }
        EXPECT_TRUE(said) << join(log_lines(mark, "warn"));
    }
};

TEST_F(uct_tcp_stall, put_of_4g_that_stops_is_dropped)
{
    stalled_put(0xfffffff0u);
}

TEST_F(uct_tcp_stall, put_of_1m_that_stops_is_dropped)
{
    stalled_put(1024 * 1024);
}

/* A stream that keeps moving, however slowly, is not stalled. */
TEST_F(uct_tcp_stall, slow_put_that_keeps_moving_is_kept)
{
    ucs::scoped_setenv timeout("UCX_TCP_PEER_TIMEOUT", "300ms");
    entity *server = add_entity();
    raw_socket sock;
    ucs::scoped_log_capture capture;
    const size_t chunk = 100, chunks = 12;

    start_put(sock, *server, sizeof(wire::put_hdr) + (chunk * chunks));
    std::string data(chunk, 'p');
    for (size_t i = 0; i < chunks; ++i) {
        ASSERT_TRUE(sock.send_all(data.data(), data.size()));
        progress_for(100); /* 1.2 s in all, four times the timeout */
    }
    ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_ACK_REQ, 0)));
    wire::hdr h;
    ASSERT_TRUE(recv_hdr(sock.fd(), &h));
    EXPECT_EQ(wire::OP_ACK, h.id);
    EXPECT_EQ(wire::FLAG_DENIED, h.flags) << "the PUT had no valid key";
}
