/*
 * The tcp transport on the loopback device: its addresses, the connection
 * handshake and its refusals, and hostile bytes on the listening port
 * (junk, bad headers, connections that never send their handshake).
 */
#include "tcp_test.h"

#include <arpa/inet.h>
#include <functional>
#include <ifaddrs.h>

#include <uct/base/uct_worker.h>
#include <ucs/vfs/vfs.h>

/* ------------------------------------------------------------------------
 * Addresses
 */

TEST_F(uct_tcp, addresses)
{
    entity *e                    = add_entity();
    const uct_iface_attr_t &attr = e->iface_attr();

    EXPECT_TRUE(e->has_cap(UCT_IFACE_FLAG_CONNECT_TO_IFACE));
    EXPECT_TRUE(e->has_cap(UCT_IFACE_FLAG_CONNECT_TO_EP));
    EXPECT_EQ(sizeof(wire::iface_addr), attr.iface_addr_len);
    EXPECT_EQ(sizeof(wire::ep_addr), attr.ep_addr_len);

    /* The secret is drawn at random for each iface */
    entity *other = add_entity();
    EXPECT_NE(0u, iface_secret(*e));
    EXPECT_NE(iface_secret(*e), iface_secret(*other));

    uint8_t family = (uint8_t)e->dev_addr().at(0);
    ASSERT_TRUE((family == AF_INET) || (family == AF_INET6))
        << "first byte of the device address: " << (unsigned)family;
    size_t ip_len = (family == AF_INET) ? 4 : 16;
    EXPECT_EQ(1 + ip_len, attr.device_addr_len);

    /* The address bytes are one of lo's addresses of that family */
    struct ifaddrs *ifaddrs;
    bool found = false;
    ASSERT_EQ(0, getifaddrs(&ifaddrs));
    for (struct ifaddrs *ifa = ifaddrs; ifa != NULL; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr == NULL) || (ifa->ifa_addr->sa_family != family) ||
            strcmp(ifa->ifa_name, "lo")) {
            continue;
        }
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof(ss));
        memcpy(&ss, ifa->ifa_addr,
               (family == AF_INET) ? sizeof(struct sockaddr_in)
                                   : sizeof(struct sockaddr_in6));
        found |=
            (sockaddr_ip_bytes(ss) == std::string(&e->dev_addr()[1], ip_len));
    }
    freeifaddrs(ifaddrs);
    EXPECT_TRUE(found) << "the device address is not an address of lo";

    /* Something listens on the iface address */
    raw_socket sock;
    EXPECT_TRUE(sock.connect_to(iface_sockaddr(*e)));
    sock.close();
    progress_for(20);

    EXPECT_TRUE(e->is_reachable(*e));
}

/* ------------------------------------------------------------------------
 * Handshake
 */

class uct_tcp_handshake : public uct_tcp {
protected:
    /* Sends @a data as the first bytes of a connection and expects the
     * transport to refuse it: the connection closes, one warning names
     * the peer and contains @a what. Returns the bytes received. */
    std::string expect_refused(const void *data, size_t length,
                               const std::string &what,
                               entity *server = nullptr)
    {
        if (server == nullptr) {
            server = add_entity();
        }
        am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
        size_t sockets   = count_sockets();
        std::string received;
        std::string peer;

        {
            ucs::scoped_log_capture capture;
            size_t mark = log_mark();
            raw_socket sock;

            if (!sock.connect_to(iface_sockaddr(*server))) {
                return received;
            }
            peer = sock.local_str();
            sock.send_all(data, length);
            EXPECT_TRUE(wait_closed(sock.fd(), &received))
                << "the transport kept the connection open";
            sock.close();
            wait_for([&] { return count_sockets() == sockets; },
                     "the accepted socket to be closed");
            progress_for(20);

            std::vector<std::string> warns  = log_lines(mark, "warn");
            std::vector<std::string> errors = log_lines(mark, "error");
            EXPECT_EQ(1u, warns.size()) << join(warns);
            EXPECT_TRUE(errors.empty()) << join(errors);
            if (!warns.empty()) {
                EXPECT_NE(std::string::npos, warns[0].find(peer))
                    << "the warning does not name the peer " << peer << ": "
                    << warns[0];
                EXPECT_NE(std::string::npos, warns[0].find(what))
                    << "the warning does not say '" << what
                    << "': " << warns[0];
            }
        }

        EXPECT_EQ(0u, rec.count());
        return received;
    }

    /* Checks a refusal that carries a reply with @a status. */
    void check_refusal_reply(const std::string &received, uint16_t status)
    {
        wire::handshake_reply reply;
        ASSERT_EQ(sizeof(reply), received.size())
            << "expected exactly one handshake reply before the close";
        memcpy(&reply, received.data(), sizeof(reply));
        EXPECT_EQ(wire::MAGIC, le64toh(reply.magic));
        EXPECT_EQ(wire::VERSION, le16toh(reply.version));
        EXPECT_EQ(status, le16toh(reply.status));
    }

    /* A valid handshake of our version to @a server, from 127.0.0.1:1 */
    static wire::handshake handshake_to(const entity &server)
    {
        wire::handshake hs;

        memset(&hs, 0, sizeof(hs));
        hs.magic          = htole64(wire::MAGIC);
        hs.version        = htole16(wire::VERSION);
        hs.conn_type      = wire::CONN_TO_IFACE;
        hs.family         = AF_INET;
        hs.listen_port    = htons(1);
        hs.listen_addr[0] = 127;
        hs.listen_addr[3] = 1;
        hs.secret         = htole64(iface_secret(server));
        return hs;
    }
};

/* A correct handshake is accepted, and messages after it are delivered
 * however the stream splits them. */
TEST_F(uct_tcp_handshake, accepted_then_messages)
{
    entity *server   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    raw_socket sock;

    ASSERT_TRUE(sock.connect_to(iface_sockaddr(*server)));
    ASSERT_TRUE(
        sock.send_obj(make_handshake(sock, wire::CONN_TO_IFACE, *server)));

    wire::handshake_reply reply;
    ASSERT_TRUE(recv_reply(sock.fd(), &reply));
    EXPECT_EQ(wire::MAGIC, reply.magic);
    EXPECT_EQ(wire::VERSION, reply.version);
    EXPECT_EQ(wire::HS_ACCEPTED, reply.status);

    /* Three messages: one whole, two in one write, the last one byte at
     * a time with progress in between. */
    std::string stream;
    for (uint64_t i = 0; i < 3; ++i) {
        wire::hdr h         = wire::make_hdr(GOOD_AM_ID, 16);
        uint64_t payload[2] = {htole64(100 + i), htole64(~i)};
        stream.append((const char *)&h, sizeof(h));
        stream.append((const char *)payload, sizeof(payload));
    }
    const size_t msg = sizeof(wire::hdr) + 16;
    ASSERT_TRUE(sock.send_all(stream.data(), msg));
    wait_for([&] { return rec.count() == 1; }, "the first message");
    for (size_t i = msg; i < stream.size(); ++i) {
        ASSERT_TRUE(sock.send_all(&stream[i], 1));
        progress();
    }
    wait_for([&] { return rec.count() == 3; }, "three messages");
    progress_for(20);

    ASSERT_EQ(3u, rec.count());
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(stream.substr(i * msg + sizeof(wire::hdr), 16),
                  rec.at(i).data)
            << "message " << i;
    }

    /* Still open: nothing to read, no close */
    char c;
    ssize_t ret = recv(sock.fd(), &c, 1, MSG_DONTWAIT);
    EXPECT_TRUE((ret < 0) && (errno == EAGAIN)) << "recv returned " << ret;
}

TEST_F(uct_tcp_handshake, bad_magic)
{
    wire::handshake hs;

    memset(&hs, 0, sizeof(hs));
    hs.magic     = htole64(0x0123456789abcdefull);
    hs.version   = htole16(wire::VERSION);
    hs.conn_type = wire::CONN_TO_IFACE;
    hs.family    = AF_INET;

    std::string received = expect_refused(&hs, sizeof(hs), "magic");
    if (received.size() >= sizeof(wire::handshake_reply)) {
        wire::handshake_reply reply;
        memcpy(&reply, received.data(), sizeof(reply));
        EXPECT_NE(wire::HS_ACCEPTED, le16toh(reply.status))
            << "a handshake with a wrong magic was accepted";
    }
}

TEST_F(uct_tcp_handshake, bad_version)
{
    wire::handshake hs;

    memset(&hs, 0, sizeof(hs));
    hs.magic     = htole64(wire::MAGIC);
    hs.version   = htole16(wire::VERSION + 1);
    hs.conn_type = wire::CONN_TO_IFACE;
    hs.family    = AF_INET;

    std::string received = expect_refused(&hs, sizeof(hs), "version");
    check_refusal_reply(received, wire::HS_BAD_VERSION);
}

/* A version 1 peer sends its 24-byte handshake and waits: the refusal
 * must not wait for the 48 bytes of a version 2 handshake. */
TEST_F(uct_tcp_handshake, old_version_short_handshake)
{
    wire::handshake_v1 hs;

    memset(&hs, 0, sizeof(hs));
    hs.magic       = htole64(wire::MAGIC);
    hs.version     = htole32(1);
    hs.listen_ip   = htonl(INADDR_LOOPBACK);
    hs.listen_port = htons(1);

    std::string received = expect_refused(&hs, sizeof(hs), "version");
    check_refusal_reply(received, wire::HS_BAD_VERSION);
}

/* Someone who scans the port does not know the secret of the address:
 * refused with BAD_SECRET, and an AM sent right behind the handshake, in
 * the same write, never reaches a handler. */
TEST_F(uct_tcp_handshake, wrong_secret)
{
    entity *server = add_entity();
    struct {
        wire::handshake hs;
        wire::hdr h;
        uint64_t payload;
    } data;

    data.hs = handshake_to(*server);
    data.hs.secret ^= htole64(1);
    data.h       = wire::make_hdr(GOOD_AM_ID, 8);
    data.payload = 0x4141414141414141ull;
    std::string received =
        expect_refused(&data, sizeof(data), "secret", server);
    check_refusal_reply(received, wire::HS_BAD_SECRET);
}

/* The right secret with a family that is neither IPv4 nor IPv6 */
TEST_F(uct_tcp_handshake, bad_family)
{
    entity *server     = add_entity();
    wire::handshake hs = handshake_to(*server);

    hs.family            = 99;
    std::string received = expect_refused(&hs, sizeof(hs), "family", server);
    check_refusal_reply(received, wire::HS_BAD_REQUEST);
}

/* The right secret with an unknown connection type */
TEST_F(uct_tcp_handshake, bad_conn_type)
{
    entity *server     = add_entity();
    wire::handshake hs = handshake_to(*server);

    hs.conn_type = 7;
    std::string received =
        expect_refused(&hs, sizeof(hs), "connection type", server);
    check_refusal_reply(received, wire::HS_BAD_REQUEST);
}

/* CONN_TO_EP naming an ep the iface does not have: refused with NO_EP. */
TEST_F(uct_tcp_handshake, conn_to_unknown_ep)
{
    entity *server = add_entity();
    raw_socket sock;
    std::string received;

    ASSERT_TRUE(sock.connect_to(iface_sockaddr(*server)));
    wire::handshake hs = make_handshake(sock, wire::CONN_TO_EP, *server);
    hs.dst_ep_id       = htole32(0x7fff1234);
    hs.dst_ep_cookie   = htole32(0x5a5a5a5a);
    hs.src_ep_id       = htole32(1);
    hs.src_ep_cookie   = htole32(2);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();
    ASSERT_TRUE(sock.send_obj(hs));
    EXPECT_TRUE(wait_closed(sock.fd(), &received))
        << "the transport kept the connection open";
    progress_for(20);

    ASSERT_EQ(sizeof(wire::handshake_reply), received.size());
    wire::handshake_reply reply;
    memcpy(&reply, received.data(), sizeof(reply));
    EXPECT_EQ(wire::MAGIC, le64toh(reply.magic));
    EXPECT_EQ(wire::HS_NO_EP, le16toh(reply.status));
    EXPECT_LE(log_lines(mark, "warn").size(), 1u);
    EXPECT_TRUE(log_lines(mark, "error").empty())
        << join(log_lines(mark, "error"));
}

/* ------------------------------------------------------------------------
 * Hostile input on the listening port
 */

class uct_tcp_hostile : public uct_tcp {
protected:
    /*
     * A server iface with a recorder on every AM id, and a well-behaved
     * pair (client <-> server) exchanging AMs before and after @a attack
     * sends its bytes on a plain socket. @a closed_by_peer: the transport
     * must close that connection; @a min_warn..@a max_warn warnings, no
     * error.
     */
    void run(const std::function<void(raw_socket &)> &attack,
             bool closed_by_peer, unsigned min_warn, unsigned max_warn)
    {
        entity *server = add_entity();
        entity *client = add_entity();

        m_server = server;

        am_recorder &bad = install_recorder(*server, 0);
        for (uint8_t id = 1; id < UCT_AM_ID_MAX; ++id) {
            if (id != GOOD_AM_ID) {
                bad.install(*server, id);
            }
        }
        am_recorder &good_s = install_recorder(*server, GOOD_AM_ID);
        am_recorder &good_c = install_recorder(*client, GOOD_AM_ID);

        uct_ep_h cs = client->connect_to(*server);
        uct_ep_h sc = server->connect_to(*client);
        ASSERT_TRUE((cs != NULL) && (sc != NULL));
        ASSERT_TRUE(send_am_and_wait(cs, GOOD_AM_ID, 1, good_s));
        ASSERT_TRUE(send_am_and_wait(sc, GOOD_AM_ID, 2, good_c));
        /* the pair shares one connection: the one the server's ep left
         * closes on both sides */
        progress_for(50);

        size_t sockets = count_sockets();
        {
            ucs::scoped_log_capture capture;
            size_t mark = log_mark();
            raw_socket sock;

            ASSERT_TRUE(sock.connect_to(iface_sockaddr(*server)));
            attack(sock);
            if (HasFatalFailure()) {
                return;
            }
            if (closed_by_peer) {
                EXPECT_TRUE(wait_closed(sock.fd()))
                    << "the transport kept the connection open";
            } else {
                progress_for(50);
            }
            sock.close();
            wait_for([&] { return count_sockets() == sockets; },
                     "the accepted socket to be closed");
            progress_for(20);

            std::vector<std::string> warns  = log_lines(mark, "warn");
            std::vector<std::string> errors = log_lines(mark, "error");
            EXPECT_GE(warns.size(), min_warn) << join(warns);
            EXPECT_LE(warns.size(), max_warn) << join(warns);
            EXPECT_TRUE(errors.empty()) << join(errors);
        }

        EXPECT_EQ(0u, bad.count()) << "hostile bytes reached an AM handler";
        for (uint64_t i = 0; i < 4; ++i) {
            EXPECT_TRUE(send_am_and_wait(cs, GOOD_AM_ID, 10 + i, good_s));
            EXPECT_TRUE(send_am_and_wait(sc, GOOD_AM_ID, 20 + i, good_c));
        }
        /* every receive buffer went back, the attacker's included */
        EXPECT_EQ("0\n", rx_partial_msgs(*server));
    }

    /* The rx_partial_msgs file of @a e's one iface in the object tree */
    static std::string rx_partial_msgs(const entity &e)
    {
        return iface_file(e, "rx_partial_msgs");
    }

    entity *m_server = nullptr;

    /* Sends a valid CONN_TO_IFACE handshake and checks it is accepted. */
    void handshake(raw_socket &sock)
    {
        handshake_accepted(sock, *m_server);
    }
};

TEST_F(uct_tcp_hostile, random_bytes)
{
    run(
        [](raw_socket &sock) {
            std::string junk(512, '\0');
            uint64_t x = 0x243f6a8885a308d3ull;
            for (char &c : junk) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                c = (char)x;
            }
            junk[0] = (char)~(wire::MAGIC & 0xff); /* surely not the magic */
            ASSERT_TRUE(sock.send_all(junk.data(), junk.size()));
        },
        true, 1, 1);
}

TEST_F(uct_tcp_hostile, am_id_out_of_range)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            wire::hdr h      = wire::make_hdr(UCT_AM_ID_MAX, 8);
            uint64_t payload = 0x1122334455667788ull;
            ASSERT_TRUE(sock.send_obj(h));
            ASSERT_TRUE(sock.send_obj(payload));
        },
        true, 1, 1);
}

TEST_F(uct_tcp_hostile, length_above_rx_seg)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            /* UCX_TCP_RX_SEG_SIZE is 64k by default */
            wire::hdr h = wire::make_hdr(1, 64 * 1024 + 1);
            std::string payload(1024, 'x');
            ASSERT_TRUE(sock.send_obj(h));
            ASSERT_TRUE(sock.send_all(payload.data(), payload.size()));
        },
        true, 1, 1);
}

TEST_F(uct_tcp_hostile, truncated_header_then_close)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            wire::hdr h = wire::make_hdr(1, 8);
            ASSERT_TRUE(sock.send_all(&h, 3));
            progress_for(20);
            /* the server holds a receive buffer for the partial header */
            EXPECT_EQ("1\n", rx_partial_msgs(*m_server));
        },
        false, 0, 1);
}

TEST_F(uct_tcp_hostile, silent_connection)
{
    /* connects and never sends its handshake: dropped after the timeout */
    ucs::scoped_setenv timeout("UCX_TCP_CONN_TIMEOUT", "300ms");
    run(
        [this](raw_socket &sock) {
            double start = now_sec();
            EXPECT_TRUE(wait_closed(sock.fd()))
                << "a connection without a handshake was kept open";
            EXPECT_GE(now_sec() - start, 0.2)
                << "closed before UCX_TCP_CONN_TIMEOUT";
        },
        true, 1, 1);
}

/* An ACK for nothing would complete a flush before the peer handled the
 * data: a protocol violation. */
TEST_F(uct_tcp_hostile, unsolicited_ack)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_ACK, 0)));
        },
        true, 1, 1);
}

TEST_F(uct_tcp_hostile, header_flags_on_an_am)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            uint64_t payload = 1;
            ASSERT_TRUE(sock.send_obj(
                wire::make_hdr(GOOD_AM_ID, 8, wire::FLAG_DENIED)));
            ASSERT_TRUE(sock.send_obj(payload));
        },
        true, 1, 1);
}

/* Memory of the process that was never registered */
static char hostile_target[64] = "nobody may write here";

/* A PUT into the process's memory with a guessed key touches nothing: the
 * connection stays, the next ACK says the PUT was refused, one warning. */
TEST_F(uct_tcp_hostile, put_into_unregistered_memory)
{
    const std::string before(hostile_target, sizeof(hostile_target));

    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            wire::put_hdr put;
            put.remote_addr = htole64((uintptr_t)hostile_target);
            put.rkey        = htole64(0x1234567890abcdefull);
            std::string data(16, 'X');
            ASSERT_TRUE(sock.send_obj(
                wire::make_hdr(wire::OP_PUT, sizeof(put) + data.size())));
            ASSERT_TRUE(sock.send_obj(put));
            ASSERT_TRUE(sock.send_all(data.data(), data.size()));
            ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_ACK_REQ, 0)));

            wire::hdr h;
            ASSERT_TRUE(recv_hdr(sock.fd(), &h));
            EXPECT_EQ(wire::OP_ACK, h.id);
            EXPECT_EQ(wire::FLAG_DENIED, h.flags)
                << "the ACK does not say the PUT was refused";
            EXPECT_EQ(0u, h.length);

            /* the next ACK is clean again */
            ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_ACK_REQ, 0)));
            ASSERT_TRUE(recv_hdr(sock.fd(), &h));
            EXPECT_EQ(wire::OP_ACK, h.id);
            EXPECT_EQ(0, h.flags);
        },
        false, 1, 1);
    EXPECT_EQ(before, std::string(hostile_target, sizeof(hostile_target)));
}

/* A GET of an unmapped address with a guessed key: an empty, refused
 * response, no crash, one warning. */
TEST_F(uct_tcp_hostile, get_of_unmapped_memory)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            wire::get_req req;
            req.remote_addr = htole64(0x10);
            req.length      = htole64(4096);
            req.rkey        = htole64(0x42);
            ASSERT_TRUE(
                sock.send_obj(wire::make_hdr(wire::OP_GET_REQ, sizeof(req))));
            ASSERT_TRUE(sock.send_obj(req));

            wire::hdr h;
            ASSERT_TRUE(recv_hdr(sock.fd(), &h));
            EXPECT_EQ(wire::OP_GET_RESP, h.id);
            EXPECT_EQ(wire::FLAG_DENIED, h.flags);
            EXPECT_EQ(0u, h.length);
        },
        false, 1, 1);
}

/* A thousand refused accesses draw one warning: a peer does not decide
 * how much we log. */
TEST_F(uct_tcp_hostile, refused_accesses_log_once)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            std::string burst;
            for (int i = 0; i < 1000; ++i) {
                wire::hdr h =
                    wire::make_hdr(wire::OP_PUT, sizeof(wire::put_hdr) + 8);
                wire::put_hdr put;
                put.remote_addr = htole64((uintptr_t)hostile_target);
                put.rkey        = htole64(1000 + i);
                uint64_t word   = 0xbadbadbadull;
                burst.append((const char *)&h, sizeof(h));
                burst.append((const char *)&put, sizeof(put));
                burst.append((const char *)&word, sizeof(word));
            }
            ASSERT_TRUE(sock.send_all(burst.data(), burst.size()));
            ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_ACK_REQ, 0)));
            wire::hdr h;
            ASSERT_TRUE(recv_hdr(sock.fd(), &h));
            EXPECT_EQ(wire::OP_ACK, h.id);
            EXPECT_EQ(wire::FLAG_DENIED, h.flags);
        },
        false, 1, 1);

    /* a second later the next one passes and says how many were held */
    ucs::scoped_log_capture capture;
    size_t mark = log_mark();
    progress_for(1100);
    raw_socket sock;
    ASSERT_TRUE(sock.connect_to(iface_sockaddr(*m_server)));
    handshake(sock);
    wire::put_hdr put;
    put.remote_addr = htole64((uintptr_t)hostile_target);
    put.rkey        = htole64(7);
    ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_PUT, sizeof(put))));
    ASSERT_TRUE(sock.send_obj(put));
    ASSERT_TRUE(sock.send_obj(wire::make_hdr(wire::OP_ACK_REQ, 0)));
    wire::hdr h;
    ASSERT_TRUE(recv_hdr(sock.fd(), &h));
    std::vector<std::string> warns = log_lines(mark, "warn");
    ASSERT_EQ(1u, warns.size()) << join(warns);
    EXPECT_NE(std::string::npos,
              warns[0].find("(999 similar lines suppressed)"))
        << warns[0];
}

/* A message left half sent holds a receive buffer only for
 * UCX_TCP_PEER_TIMEOUT; then the connection is dropped. */
TEST_F(uct_tcp_hostile, partial_message_times_out)
{
    ucs::scoped_setenv timeout("UCX_TCP_PEER_TIMEOUT", "300ms");
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            wire::hdr h = wire::make_hdr(GOOD_AM_ID, 100);
            ASSERT_TRUE(sock.send_obj(h));
            ASSERT_TRUE(sock.send_all("0123456789", 10));
            double start = now_sec();
            EXPECT_TRUE(wait_closed(sock.fd()))
                << "a half-sent message was kept forever";
            EXPECT_GE(now_sec() - start, 0.25)
                << "closed before UCX_TCP_PEER_TIMEOUT";
        },
        true, 1, 1);
}

/*
 * A peer that asks for acknowledgements and never reads them: after the
 * reply budget the transport stops reading it (its sends block), holds
 * a bounded queue, and drops it after UCX_TCP_PEER_TIMEOUT.
 */
TEST_F(uct_tcp_hostile, unread_replies_are_bounded_then_dropped)
{
    ucs::scoped_setenv timeout("UCX_TCP_PEER_TIMEOUT", "1s");
    size_t max_queued = 0;

    run(
        [this, &max_queued](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            int small = 4096;
            setsockopt(sock.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
            wire::hdr req = wire::make_hdr(wire::OP_ACK_REQ, 0);
            std::string burst;
            for (int i = 0; i < 8192; ++i) {
                burst.append((const char *)&req, sizeof(req));
            }
            /* send until the transport stops taking our bytes */
            size_t sent = 0;
            double idle = now_sec();
            while ((now_sec() - idle) < 0.3) {
                progress();
                ssize_t ret = ::send(sock.fd(), burst.data(), burst.size(),
                                     MSG_DONTWAIT | MSG_NOSIGNAL);
                if (ret > 0) {
                    sent += ret;
                    idle = now_sec();
                }
                max_queued =
                    std::max(max_queued, (size_t)std::stoul(iface_file(
                                             *m_server, "tx_queued_bytes")));
                ASSERT_LT(sent, 256u * 1024 * 1024)
                    << "the transport reads a peer that reads nothing";
            }
            EXPECT_TRUE(wait_closed(sock.fd(), NULL, 5.0))
                << "a peer that never reads was kept";
        },
        true, 1, 1);
    /* two send buffers (128 KiB each), the budget and some slack */
    EXPECT_GT(max_queued, 0u);
    EXPECT_LT(max_queued, 2u * 1024 * 1024) << "replies held unbounded";
}

/* The same flood from a peer that reads its replies, slowly: every
 * request is answered, in order, nothing is dropped. */
TEST_F(uct_tcp_hostile, slow_reader_gets_every_reply)
{
    run(
        [this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            const size_t count = 100000;
            wire::hdr req      = wire::make_hdr(wire::OP_ACK_REQ, 0);
            std::string burst;
            for (size_t i = 0; i < count; ++i) {
                burst.append((const char *)&req, sizeof(req));
            }
            size_t sent = 0, got = 0;
            double deadline = now_sec() + (30.0 * time_scale());
            while ((got < count * sizeof(wire::hdr)) &&
                   (now_sec() < deadline)) {
                progress();
                if (sent < burst.size()) {
                    ssize_t ret = ::send(sock.fd(), burst.data() + sent,
                                         burst.size() - sent,
                                         MSG_DONTWAIT | MSG_NOSIGNAL);
                    sent += (ret > 0) ? ret : 0;
                }
                char buf[4096];
                ssize_t ret = ::recv(sock.fd(), buf, sizeof(buf), MSG_DONTWAIT);
                for (ssize_t i = 0; i < ret; ++i) {
                    /* every reply is an ACK header: id, 0, 0, 0, 0... */
                    ASSERT_EQ((got % sizeof(wire::hdr) == 0) ? wire::OP_ACK : 0,
                              (uint8_t)buf[i])
                        << "at byte " << got;
                    ++got;
                }
            }
            EXPECT_EQ(count * sizeof(wire::hdr), got);
        },
        false, 0, 0);
}
