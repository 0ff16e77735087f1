/*
 * The tcp transport on the loopback device: peer failure, and a plain
 * socket as the server (the messages the transport sends, the ACK that
 * completes a flush, a reset with a GET outstanding).
 */
#include "tcp_test.h"

#include <fcntl.h>
#include <memory>
#include <unistd.h>

extern "C" {
#include <uct/tcp/tcp.h>
}

/* ------------------------------------------------------------------------
 * Peer failure
 */

class uct_tcp_peer_failure : public uct_tcp {};

/* The server iface closes while a GET to it is outstanding. */
TEST_F(uct_tcp_peer_failure, server_closed_with_get_outstanding)
{
    entity *client  = add_entity_with_err();
    entity *server  = add_entity();
    entity *third   = add_entity();
    am_recorder &rs = install_recorder(*server, GOOD_AM_ID);
    am_recorder &rt = install_recorder(*third, GOOD_AM_ID);

    uct_ep_h ep1 = client->connect_to(*server);
    uct_ep_h ep2 = client->connect_to(*third);
    ASSERT_TRUE((ep1 != NULL) && (ep2 != NULL));
    ASSERT_TRUE(send_am_and_wait(ep1, GOOD_AM_ID, 1, rs));
    ASSERT_TRUE(send_am_and_wait(ep2, GOOD_AM_ID, 2, rt));

    std::unique_ptr<mapped_buffer> remote(new mapped_buffer(64, *server));
    remote->pattern_fill(21);
    unpack_arg &ua           = make_unpack_arg();
    counted_completion &comp = make_comp();
    ucs_status_t status      = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_get_bcopy(ep1, unpack_to_string, &ua, 64,
                                                  remote->addr(), remote->rkey(),
                                                  comp);
        },
        "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    /* The server goes away before it read the request */
    remote.reset();
    remove_entity(server);

    wait_for([&] { return m_errs.count() > 0; }, "the error handler", 5.0);
    wait_for([&] { return comp.calls > 0; }, "the GET completion", 5.0);
    progress_for(50);

    ASSERT_EQ(1u, m_errs.count());
    EXPECT_EQ(ep1, m_errs.at(0).ep);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, m_errs.at(0).status)
        << ucs_status_string(m_errs.at(0).status);
    EXPECT_EQ(1, comp.calls);
    EXPECT_LT(comp.status_at_call, UCS_OK)
        << ucs_status_string(comp.status_at_call);
    EXPECT_EQ(0u, ua.calls) << "the GET of a failed ep delivered data";

    status = uct_ep_am_short(ep1, GOOD_AM_ID, 3, NULL, 0);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);

    /* The other ep of the client is unaffected */
    EXPECT_TRUE(send_am_and_wait(ep2, GOOD_AM_ID, 4, rt));
    mapped_buffer third_buf(64, *third);
    third_buf.pattern_fill(22);
    unpack_arg &ua2           = make_unpack_arg();
    counted_completion &comp2 = make_comp();
    status                    = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_get_bcopy(ep2, unpack_to_string, &ua2, 64,
                                                                third_buf.addr(), third_buf.rkey(),
                                                                comp2);
        },
        "uct_ep_get_bcopy");
    wait_completion(status, comp2, "GET from the third iface");
    EXPECT_EQ(std::string(third_buf.cptr(), 64), ua2.data);
    EXPECT_EQ(1u, m_errs.count());

    /* the failed ep's side state (its GET's) goes at the idle deadline,
     * and so does the live one's */
    EXPECT_NE(nullptr, uct_tcp_ep(ep2)->ext);
    wait_for(
        [&] {
            return (uct_tcp_ep(ep1)->ext == nullptr) &&
                   (uct_tcp_ep(ep2)->ext == nullptr);
        },
        "the side state freed at the idle deadline",
        UCT_TCP_HOUSEKEEPING_SEC * 3);

    EXPECT_TRUE(log_lines(mark, "error").empty())
        << join(log_lines(mark, "error"));
    EXPECT_LE(log_lines(mark, "warn").size(), 1u)
        << join(log_lines(mark, "warn"));
}

/* An ep that fails with a GET and a flush outstanding (an
 * acknowledgement asked for and never coming) completes them and frees
 * its side state at the idle deadline. */
TEST_F(uct_tcp_peer_failure, failed_ep_frees_side_state)
{
    entity *client  = add_entity_with_err();
    entity *server  = add_entity();
    am_recorder &rs = install_recorder(*server, GOOD_AM_ID);
    uct_ep_h ep     = client->connect_to(*server);
    ASSERT_NE(nullptr, ep);
    ASSERT_TRUE(send_am_and_wait(ep, GOOD_AM_ID, 1, rs));

    std::unique_ptr<mapped_buffer> remote(new mapped_buffer(64, *server));
    unpack_arg &ua           = make_unpack_arg();
    counted_completion &comp = make_comp();
    ucs_status_t status      = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_get_bcopy(ep, unpack_to_string, &ua, 64,
                                                  remote->addr(), remote->rkey(),
                                                  comp);
        },
        "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);
    counted_completion &fcomp = make_comp();
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(ep, 0, fcomp));

    ucs::scoped_log_capture capture;
    remote.reset();
    remove_entity(server);
    wait_for([&] { return (comp.calls > 0) && (fcomp.calls > 0); },
             "the GET and flush completions", 5.0);
    EXPECT_LT(fcomp.status_at_call, UCS_OK);
    EXPECT_EQ(1u, m_errs.count());

    wait_for([&] { return uct_tcp_ep(ep)->ext == nullptr; },
             "the side state freed at the idle deadline",
             UCT_TCP_HOUSEKEEPING_SEC * 3);
}

/* ------------------------------------------------------------------------
 * A plain socket as the server: what the transport sends
 */

class uct_tcp_raw_server : public uct_tcp {
protected:
    void SetUp() override
    {
        uct_tcp::SetUp();
        if (IsSkipped()) {
            return;
        }
        m_client = add_entity_with_err();

        /* Listen on the client's device address */
        struct sockaddr_storage ss = iface_sockaddr(*m_client);
        ASSERT_FALSE(HasFailure());
        socklen_t len = (ss.ss_family == AF_INET) ? sizeof(struct sockaddr_in)
                                                  : sizeof(struct sockaddr_in6);
        if (ss.ss_family == AF_INET) {
            ((struct sockaddr_in *)&ss)->sin_port = 0;
        } else {
            ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
        }
        m_listen.reset(new raw_socket(socket(ss.ss_family, SOCK_STREAM, 0)));
        ASSERT_GE(m_listen->fd(), 0);
        ASSERT_EQ(0, bind(m_listen->fd(), (struct sockaddr *)&ss, len))
            << strerror(errno);
        ASSERT_EQ(0, listen(m_listen->fd(), 4));

        uint16_t port = sockaddr_port(m_listen->local());
        ASSERT_EQ(UCS_OK, create_ep_to(*m_client, m_client->dev_addr(), port,
                                       &m_ep, SECRET));
    }

    /* Accepts the client's connection, checks its handshake and replies
     * ACCEPTED. */
    void accept_client()
    {
        double deadline = now_sec() + (5.0 * time_scale());
        int fd;

        while ((fd = accept4(m_listen->fd(), NULL, NULL, SOCK_NONBLOCK)) < 0) {
            ASSERT_TRUE((errno == EAGAIN) || (errno == EWOULDBLOCK))
                << strerror(errno);
            ASSERT_LT(now_sec(), deadline) << "the client did not connect";
            progress();
            usleep(100);
        }
        int flags = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        m_conn.reset(new raw_socket(fd));

        wire::handshake hs;
        ASSERT_TRUE(recv_exact(fd, &hs, sizeof(hs)));
        struct sockaddr_storage client_addr = iface_sockaddr(*m_client);
        std::string ip                      = sockaddr_ip_bytes(client_addr);
        EXPECT_EQ(wire::MAGIC, le64toh(hs.magic));
        EXPECT_EQ(wire::VERSION, le16toh(hs.version));
        EXPECT_EQ(wire::CONN_TO_IFACE, hs.conn_type);
        EXPECT_EQ(client_addr.ss_family, hs.family);
        EXPECT_EQ(sockaddr_port(client_addr), hs.listen_port)
            << "the handshake must carry the client's listening port";
        EXPECT_EQ(ip, std::string((const char *)hs.listen_addr, ip.size()));
        EXPECT_EQ(SECRET, le64toh(hs.secret))
            << "the handshake must present the secret of the address";

        wire::handshake_reply reply;
        memset(&reply, 0, sizeof(reply));
        reply.magic   = htole64(wire::MAGIC);
        reply.version = htole16(wire::VERSION);
        reply.status  = htole16(wire::HS_ACCEPTED);
        ASSERT_TRUE(m_conn->send_obj(reply));
    }

    /* Reads the next message; its payload into @a payload. */
    void recv_msg(wire::hdr *h, std::string *payload)
    {
        ASSERT_TRUE(recv_hdr(m_conn->fd(), h));
        ASSERT_LE(h->length, 1024u * 1024u);
        payload->resize(h->length);
        if (h->length > 0) {
            ASSERT_TRUE(recv_exact(m_conn->fd(), &(*payload)[0], h->length));
        }
    }

    /* The secret of the address the client was given */
    static constexpr uint64_t SECRET = 0x5ec12e7a11ce0042ull;

    entity *m_client = NULL;
    std::unique_ptr<raw_socket> m_listen;
    std::unique_ptr<raw_socket> m_conn;
    uct_ep_h m_ep = NULL;
};

/* The handshake fields, and an AM and a PUT as they appear on the wire. */
TEST_F(uct_tcp_raw_server, handshake_and_messages)
{
    ASSERT_NO_FATAL_FAILURE(accept_client());

    const char payload[] = "abcd";
    ssize_t ret          = retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_am_short(m_ep, 5, 0x1122334455667788ull,
                                                     payload, 4);
        },
        "uct_ep_am_short");
    ASSERT_EQ(UCS_OK, ret);

    wire::hdr h;
    std::string data;
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(5, h.id);
    ASSERT_EQ(12u, h.length);
    EXPECT_EQ(0x1122334455667788ull, le64toh(am_header_of(data)));
    EXPECT_EQ("abcd", data.substr(8));

    uint64_t words[2] = {0x0102030405060708ull, 0x1112131415161718ull};
    ret               = retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_put_short(m_ep, words, sizeof(words),
                                                           0xdead0000ull,
                                                           0x0123456789abcdefull);
        },
        "uct_ep_put_short");
    ASSERT_EQ(UCS_OK, ret);

    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(wire::OP_PUT, h.id);
    EXPECT_EQ(0, h.flags);
    ASSERT_EQ(sizeof(wire::put_hdr) + sizeof(words), h.length);
    wire::put_hdr put;
    memcpy(&put, data.data(), sizeof(put));
    EXPECT_EQ(0xdead0000ull, le64toh(put.remote_addr));
    EXPECT_EQ(0x0123456789abcdefull, le64toh(put.rkey))
        << "a PUT must carry the remote key";
    EXPECT_EQ(std::string((const char *)words, sizeof(words)),
              data.substr(sizeof(put)));
    EXPECT_EQ(0u, m_errs.count());
}

/* Flush after a PUT asks for an acknowledgement (ACK_REQ) and completes
 * only when the ACK comes back. */
TEST_F(uct_tcp_raw_server, flush_completes_on_ack)
{
    ASSERT_NO_FATAL_FAILURE(accept_client());

    uint64_t word = 42;
    ssize_t ret   = retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_put_short(m_ep, &word, sizeof(word), 0x1000,
                                               UCT_INVALID_RKEY);
        },
        "uct_ep_put_short");
    ASSERT_EQ(UCS_OK, ret);

    counted_completion &comp = make_comp();
    ucs_status_t status      = uct_ep_flush(m_ep, 0, comp);
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);

    wire::hdr h;
    std::string data;
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(wire::OP_PUT, h.id);
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(wire::OP_ACK_REQ, h.id);
    EXPECT_EQ(0u, h.length);

    progress_for(100);
    EXPECT_EQ(0, comp.calls) << "flush completed before the ACK";

    ASSERT_TRUE(m_conn->send_obj(wire::make_hdr(wire::OP_ACK, 0)));
    wait_for([&] { return comp.calls > 0; }, "the flush completion");
    progress_for(20);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call);
    EXPECT_EQ(0u, m_errs.count());
}

/* A GET is answered; the next one is cut by a reset: the handler reports
 * UCS_ERR_CONNECTION_RESET once and the GET completes with an error. */
TEST_F(uct_tcp_raw_server, reset_with_get_outstanding)
{
    ASSERT_NO_FATAL_FAILURE(accept_client());

    unpack_arg &ua           = make_unpack_arg();
    counted_completion &comp = make_comp();
    ucs_status_t status      = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_get_bcopy(m_ep, unpack_to_string, &ua, 16,
                                                  0x2000, 0x77ull, comp);
        },
        "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);

    wire::hdr h;
    std::string data;
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    ASSERT_EQ(wire::OP_GET_REQ, h.id);
    ASSERT_EQ(sizeof(wire::get_req), h.length);
    wire::get_req req;
    memcpy(&req, data.data(), sizeof(req));
    EXPECT_EQ(0x2000u, le64toh(req.remote_addr));
    EXPECT_EQ(16u, le64toh(req.length));
    EXPECT_EQ(0x77u, le64toh(req.rkey)) << "a GET must carry the remote key";

    std::string answer = "0123456789abcdef";
    ASSERT_TRUE(m_conn->send_obj(wire::make_hdr(wire::OP_GET_RESP, 16)));
    ASSERT_TRUE(m_conn->send_all(answer.data(), answer.size()));
    wait_for([&] { return comp.calls > 0; }, "the first GET");
    EXPECT_EQ(UCS_OK, comp.status_at_call);
    EXPECT_EQ(answer, ua.data);

    comp.reset();
    status = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_get_bcopy(m_ep, unpack_to_string, &ua, 16,
                                             0x3000, UCT_INVALID_RKEY, comp);
        },
        "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    ASSERT_EQ(wire::OP_GET_REQ, h.id);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();
    m_conn->reset();

    wait_for([&] { return m_errs.count() > 0; }, "the error handler", 5.0);
    wait_for([&] { return comp.calls > 0; }, "the GET completion", 5.0);
    progress_for(50);
    ASSERT_EQ(1u, m_errs.count());
    EXPECT_EQ(m_ep, m_errs.at(0).ep);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, m_errs.at(0).status)
        << ucs_status_string(m_errs.at(0).status);
    EXPECT_EQ(1, comp.calls);
    EXPECT_LT(comp.status_at_call, UCS_OK)
        << ucs_status_string(comp.status_at_call);
    EXPECT_EQ(1u, ua.calls);

    status = uct_ep_am_short(m_ep, GOOD_AM_ID, 0, NULL, 0);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);
    EXPECT_TRUE(log_lines(mark, "error").empty())
        << join(log_lines(mark, "error"));
    EXPECT_LE(log_lines(mark, "warn").size(), 1u)
        << join(log_lines(mark, "warn"));
}
