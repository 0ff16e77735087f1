/*
 * The tcp transport on the loopback device: connect retries,
 * CONNECT_TO_EP (one connection per ep pair), running out of file
 * descriptors, and 2,000 endpoints.
 */
#include "tcp_test.h"

#include <algorithm>
#include <set>

/* ------------------------------------------------------------------------
 * Connection establishment: retries
 */

class uct_tcp_connect : public uct_tcp {};

/* An ep to a port nobody listens on yet; a server starts listening
 * there a little later and gets the handshake, with the secret of the
 * address the ep was created with, and the AM sent before. (A plain
 * socket plays the server: an iface opened later draws a new secret.) */
TEST_F(uct_tcp_connect, retry_until_server_listens)
{
    const uint64_t secret = 0x0ddba11cafe5eedull;
    entity *client        = add_entity_with_err();
    uint16_t port         = free_port();
    uct_ep_h ep;

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    ASSERT_EQ(UCS_OK, create_ep_to(*client, client->dev_addr(), htons(port),
                                   &ep, secret));
    ucs_status_t status = uct_ep_am_short(ep, GOOD_AM_ID, 0xabcdef, NULL, 0);
    EXPECT_TRUE((status == UCS_OK) || (status == UCS_ERR_NO_RESOURCE))
        << ucs_status_string(status);

    progress_for(100); /* refused at least once */

    struct sockaddr_storage ss = iface_sockaddr(*client);
    socklen_t len;
    if (ss.ss_family == AF_INET) {
        ((struct sockaddr_in *)&ss)->sin_port = htons(port);
        len                                   = sizeof(struct sockaddr_in);
    } else {
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
        len                                     = sizeof(struct sockaddr_in6);
    }
    /* non-blocking: the client connects only from its progress */
    raw_socket listener(socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0));
    ASSERT_EQ(0, bind(listener.fd(), (struct sockaddr *)&ss, len))
        << strerror(errno);
    ASSERT_EQ(0, listen(listener.fd(), 4));

    int fd;
    double deadline = now_sec() + (5.0 * time_scale());
    while ((fd = accept4(listener.fd(), NULL, NULL, SOCK_NONBLOCK)) < 0) {
        ASSERT_LT(now_sec(), deadline) << "the client did not retry";
        progress();
        usleep(100);
    }
    raw_socket conn(fd);

    wire::handshake hs;
    ASSERT_TRUE(recv_exact(fd, &hs, sizeof(hs)));
    EXPECT_EQ(wire::CONN_TO_IFACE, hs.conn_type);
    EXPECT_EQ(secret, le64toh(hs.secret));
    wire::handshake_reply reply;
    memset(&reply, 0, sizeof(reply));
    reply.magic   = htole64(wire::MAGIC);
    reply.version = htole16(wire::VERSION);
    reply.status  = htole16(wire::HS_ACCEPTED);
    ASSERT_TRUE(conn.send_obj(reply));

    if (status == UCS_ERR_NO_RESOURCE) {
        status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_short(ep, GOOD_AM_ID, 0xabcdef, NULL,
                                                0);
            },
            "uct_ep_am_short");
        EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    }

    wire::hdr h;
    ASSERT_TRUE(recv_hdr(fd, &h));
    EXPECT_EQ(GOOD_AM_ID, h.id);
    ASSERT_EQ(8u, h.length);
    uint64_t header;
    ASSERT_TRUE(recv_exact(fd, &header, sizeof(header)));
    EXPECT_EQ(0xabcdefull, le64toh(header));
    progress_for(20);
    EXPECT_EQ(0u, m_errs.count())
        << "error handler called: " << ucs_status_string(m_errs.at(0).status);
    EXPECT_TRUE(log_lines(mark, "error").empty())
        << join(log_lines(mark, "error"));
}

/* Nobody ever listens: after UCX_TCP_MAX_CONN_RETRIES the error handler
 * reports UCS_ERR_UNREACHABLE once, and sends fail. */
TEST_F(uct_tcp_connect, retries_exhausted)
{
    entity *client;
    {
        ucs::scoped_setenv retries("UCX_TCP_MAX_CONN_RETRIES", "2");
        client = add_entity_with_err();
    }
    uint16_t port = free_port();
    uct_ep_h ep;

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    ASSERT_EQ(UCS_OK,
              create_ep_to(*client, client->dev_addr(), htons(port), &ep));
    ucs_status_t status = uct_ep_am_short(ep, GOOD_AM_ID, 1, NULL, 0);
    EXPECT_TRUE((status == UCS_OK) || (status == UCS_ERR_NO_RESOURCE))
        << ucs_status_string(status);

    double start = now_sec();
    wait_for([&] { return m_errs.count() > 0; },
             "the error handler after 2 connect retries", 5.0);
    double elapsed = now_sec() - start;
    progress_for(300);

    ASSERT_EQ(1u, m_errs.count());
    EXPECT_EQ(ep, m_errs.at(0).ep);
    EXPECT_EQ(UCS_ERR_UNREACHABLE, m_errs.at(0).status)
        << ucs_status_string(m_errs.at(0).status);
    EXPECT_LT(elapsed, 5.0 * time_scale());

    status = uct_ep_am_short(ep, GOOD_AM_ID, 2, NULL, 0);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);
    uint64_t word = 0;
    status =
        uct_ep_put_short(ep, &word, sizeof(word), 0x1000, UCT_INVALID_RKEY);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);

    progress_for(50);
    EXPECT_EQ(1u, m_errs.count()) << "error handler called again";
    EXPECT_TRUE(log_lines(mark, "error").empty())
        << join(log_lines(mark, "error"));
}

/* ------------------------------------------------------------------------
 * CONNECT_TO_EP
 */

class uct_tcp_connect_to_ep : public uct_tcp {
protected:
    /* Connects ep @a ea of @a a and ep @a eb of @a b to each other, both
     * at once, or with @a progress_between ms of progress in between. */
    void connect_pair(entity &a, uct_ep_h ea, entity &b, uct_ep_h eb,
                      double progress_between)
    {
        std::vector<char> addr_a(
            std::max<size_t>(a.iface_attr().ep_addr_len, 1));
        std::vector<char> addr_b(
            std::max<size_t>(b.iface_attr().ep_addr_len, 1));

        ASSERT_EQ(UCS_OK,
                  uct_ep_get_address(ea, (uct_ep_addr_t *)addr_a.data()));
        ASSERT_EQ(UCS_OK,
                  uct_ep_get_address(eb, (uct_ep_addr_t *)addr_b.data()));

        /* The ep address carries the iface's port */
        wire::ep_addr wa;
        memcpy(&wa, addr_a.data(), sizeof(wa));
        uint16_t port = wa.port;
        EXPECT_EQ(sockaddr_port(iface_sockaddr(a)), port);

        ASSERT_EQ(UCS_OK,
                  uct_ep_connect_to_ep(
                      ea, (const uct_device_addr_t *)b.dev_addr().data(),
                      (const uct_ep_addr_t *)addr_b.data()));
        if (progress_between > 0) {
            double deadline = now_sec() + (progress_between / 1000.0);
            do {
                progress();
                sample_sockets();
            } while (now_sec() < deadline);
        }
        ASSERT_EQ(UCS_OK,
                  uct_ep_connect_to_ep(
                      eb, (const uct_device_addr_t *)a.dev_addr().data(),
                      (const uct_ep_addr_t *)addr_a.data()));
    }

    /* Highest socket count seen: a second connection opened and closed
     * again while connecting shows up here. */
    void sample_sockets()
    {
        m_max_sockets = std::max(m_max_sockets, count_sockets());
    }

    /* Two eps connected to each other (on one iface when @a b == @a a)
     * exchange AMs both ways over exactly one TCP connection. */
    void run(bool one_iface, double progress_between)
    {
        entity *a = add_entity();
        entity *b = one_iface ? a : add_entity();

        ASSERT_TRUE(a->has_cap(UCT_IFACE_FLAG_CONNECT_TO_EP));
        ASSERT_GT(a->iface_attr().ep_addr_len, 0u);

        am_recorder &rec_a = install_recorder(*a, GOOD_AM_ID);
        am_recorder &rec_b =
            one_iface ? rec_a : install_recorder(*b, GOOD_AM_ID);

        size_t sockets = count_sockets();
        m_max_sockets  = sockets;
        uct_ep_h ea    = create_unconnected_ep(*a);
        uct_ep_h eb    = create_unconnected_ep(*b);
        ASSERT_TRUE((ea != NULL) && (eb != NULL));
        connect_pair(*a, ea, *b, eb, progress_between);
        if (HasFatalFailure()) {
            return;
        }

        const uint64_t num = 10;
        for (uint64_t i = 0; i < num; ++i) {
            for (auto ep_value :
                 {std::make_pair(ea, 1000 + i), std::make_pair(eb, 2000 + i)}) {
                ssize_t ret = retry_no_resource(
                    [&] {
                        return (ssize_t)uct_ep_am_short(
                            ep_value.first, GOOD_AM_ID, ep_value.second, NULL,
                            0);
                    },
                    "uct_ep_am_short");
                ASSERT_EQ(UCS_OK, ret) << ucs_status_string((ucs_status_t)ret);
            }
        }

        wait_for(
            [&] {
                sample_sockets();
                return one_iface
                           ? (rec_a.count() == 2 * num)
                           : ((rec_a.count() == num) && (rec_b.count() == num));
            },
            "the AMs of both eps");
        /* A late second connection would show up now */
        double deadline = now_sec() + 0.1;
        do {
            progress();
            sample_sockets();
        } while (now_sec() < deadline);

        /* In order per sender, each exactly once */
        std::vector<uint64_t> from_ea, from_eb;
        for (size_t i = 0; i < rec_a.count(); ++i) {
            uint64_t v = am_header_of(rec_a.at(i).data);
            (v >= 2000 ? from_eb : from_ea).push_back(v);
        }
        if (!one_iface) {
            EXPECT_TRUE(from_ea.empty()) << "AMs of ea came back to a";
            for (size_t i = 0; i < rec_b.count(); ++i) {
                uint64_t v = am_header_of(rec_b.at(i).data);
                EXPECT_LT(v, 2000u) << "an AM of eb came back to b";
                (v >= 2000 ? from_eb : from_ea).push_back(v);
            }
        }
        ASSERT_EQ(num, from_ea.size());
        ASSERT_EQ(num, from_eb.size());
        for (uint64_t i = 0; i < num; ++i) {
            EXPECT_EQ(1000 + i, from_ea[i]);
            EXPECT_EQ(2000 + i, from_eb[i]);
        }

        EXPECT_EQ(sockets + 2, count_sockets())
            << "expected both ends of exactly one connection";
        EXPECT_EQ(sockets + 2, m_max_sockets)
            << "more than one connection was opened for the pair";

        flush_ep(*a, ea);
        flush_ep(*b, eb);
    }

    size_t m_max_sockets = 0;
};

TEST_F(uct_tcp_connect_to_ep, two_ifaces)
{
    run(false, 0);
}

TEST_F(uct_tcp_connect_to_ep, two_ifaces_progress_between)
{
    run(false, 50);
}

TEST_F(uct_tcp_connect_to_ep, one_iface)
{
    run(true, 0);
}

TEST_F(uct_tcp_connect_to_ep, one_iface_progress_between)
{
    run(true, 50);
}

/* ------------------------------------------------------------------------
 * Out of file descriptors
 */

class uct_tcp_fd_limit : public uct_tcp {
protected:
    /* The soft RLIMIT_NOFILE that leaves exactly @a free descriptor
     * numbers unused below it. */
    static rlim_t limit_leaving(unsigned free)
    {
        std::vector<int> fds = open_fds(false);
        std::set<int> used(fds.begin(), fds.end());
        unsigned unused = 0;
        rlim_t limit    = 0;

        while (unused < free) {
            if (!used.count((int)limit)) {
                ++unused;
            }
            ++limit;
        }
        return limit;
    }
};

TEST_F(uct_tcp_fd_limit, ep_create_fails_cleanly)
{
    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    std::vector<uct_ep_h> eps;
    ucs_status_t failure = UCS_OK;

    {
        nofile_limit limit;
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();

        /* Each ep takes one descriptor here and one for the accepted
         * socket on the server: room for 3 eps, the 4th must fail. */
        ASSERT_TRUE(limit.set_soft(limit_leaving(6)));
        for (int i = 0; i < 32; ++i) {
            uct_ep_h ep;
            ucs_status_t status = create_ep_to(*client, *server, &ep);
            if (status != UCS_OK) {
                failure = status;
                break;
            }
            eps.push_back(ep);
            if (!send_am_and_wait(ep, GOOD_AM_ID, i, rec, 3.0)) {
                ADD_FAILURE() << "ep " << i << " does not work under the "
                              << "limit (the server may have run out of "
                              << "descriptors accepting it)";
                break;
            }
        }

        EXPECT_EQ(UCS_ERR_NO_RESOURCE, failure) << ucs_status_string(failure);
        EXPECT_GE(eps.size(), 1u) << "no ep could be created under the limit";
        std::vector<std::string> errors = log_lines(mark, "error");
        EXPECT_TRUE(std::any_of(errors.begin(), errors.end(),
                                [](const std::string &line) {
                                    return line.find("ulimit -n") !=
                                           std::string::npos;
                                }))
            << "no error line says to raise ulimit -n:" << join(errors)
            << join(log_lines(mark, "warn"));

        /* The eps created before still work, under the limit */
        for (size_t i = 0; i < eps.size(); ++i) {
            EXPECT_TRUE(send_am_and_wait(eps[i], GOOD_AM_ID, 100 + i, rec));
        }
        limit.restore();
        progress_for(20);
    }

    /* With the limit back, new eps work and so do the old ones */
    uct_ep_h ep;
    ASSERT_EQ(UCS_OK, create_ep_to(*client, *server, &ep));
    EXPECT_TRUE(send_am_and_wait(ep, GOOD_AM_ID, 200, rec));
    for (size_t i = 0; i < eps.size(); ++i) {
        EXPECT_TRUE(send_am_and_wait(eps[i], GOOD_AM_ID, 300 + i, rec));
    }
}

/* ------------------------------------------------------------------------
 * Many endpoints
 */

class uct_tcp_scale : public uct_tcp {};

TEST_F(uct_tcp_scale, eps_2000)
{
    const size_t num_eps = ucs::test_scale(2000);
    nofile_limit limit;

    const struct rlimit &rl = limit.orig();
    if ((rl.rlim_max != RLIM_INFINITY) && (rl.rlim_max < 4200)) {
        GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << rl.rlim_max
                     << " is below the 4,200 descriptors the test needs";
    }
    rlim_t want = 8192;
    if ((rl.rlim_max != RLIM_INFINITY) && (rl.rlim_max < want)) {
        want = rl.rlim_max;
    }
    if (rl.rlim_cur < want) {
        ASSERT_TRUE(limit.set_soft(want));
    }

    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    size_t sockets   = count_sockets();
    std::vector<uct_ep_h> eps;
    double start = now_sec();

    for (size_t i = 0; i < num_eps; ++i) {
        uct_ep_h ep;
        ucs_status_t status = create_ep_to(*client, *server, &ep);
        ASSERT_EQ(UCS_OK, status)
            << "ep " << i << ": " << ucs_status_string(status);
        eps.push_back(ep);
        ssize_t ret = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_short(ep, GOOD_AM_ID, i, NULL, 0);
            },
            "uct_ep_am_short");
        ASSERT_EQ(UCS_OK, ret) << "ep " << i;
        progress(); /* the server accepts as we go: no backlog overflow */
    }

    wait_for([&] { return rec.count() >= num_eps; },
             "one AM on each of the eps", 20.0);
    progress_for(20);
    EXPECT_EQ(num_eps, rec.count());
    std::vector<unsigned> seen(num_eps, 0);
    for (size_t i = 0; i < rec.count(); ++i) {
        uint64_t v = am_header_of(rec.at(i).data);
        ASSERT_LT(v, num_eps);
        ++seen[v];
    }
    for (size_t i = 0; i < num_eps; ++i) {
        EXPECT_EQ(1u, seen[i]) << "AM of ep " << i;
    }
    EXPECT_EQ(sockets + (2 * num_eps), count_sockets());

    for (uct_ep_h ep : eps) {
        destroy_own_ep(ep);
    }
    wait_for([&] { return count_sockets() == sockets; },
             "the server to close the accepted sockets");
    RecordProperty("seconds", std::to_string(now_sec() - start));
}

/* Out of descriptors with connections waiting: the listening socket is
 * not retried on every progress call (the event fd stays quiet, one
 * warning per second with the hint), and accepting resumes by itself
 * once descriptors are back. */
TEST_F(uct_tcp_fd_limit, accept_backs_off_when_out_of_fds)
{
    entity *server = add_entity();
    std::vector<std::unique_ptr<raw_socket>> socks;

    for (int i = 0; i < 8; ++i) {
        socks.emplace_back(new raw_socket);
        ASSERT_TRUE(socks.back()->connect_to(iface_sockaddr(*server)));
    }

    {
        nofile_limit limit;
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();

        ASSERT_TRUE(limit.set_soft(limit_leaving(0)));
        progress_for(1500);
        ucs_status_t status =
            uct_iface_event_arm(server->iface(), UCT_EVENT_RECV);
        limit.restore();

        std::vector<std::string> warns = log_lines(mark, "warn");
        EXPECT_GE(warns.size(), 1u);
        EXPECT_LE(warns.size(), 2u) << join(warns);
        for (const std::string &w : warns) {
            EXPECT_NE(std::string::npos, w.find("ulimit -n")) << w;
        }
        EXPECT_TRUE(log_lines(mark, "error").empty())
            << join(log_lines(mark, "error"));
        EXPECT_EQ(UCS_OK, status)
            << "the listening socket is still polled while no "
            << "descriptor is free: " << ucs_status_string(status);
    }

    for (auto &sock : socks) {
        ASSERT_TRUE(sock->send_obj(
            make_handshake(*sock, wire::CONN_TO_IFACE, *server)));
        wire::handshake_reply reply;
        ASSERT_TRUE(recv_reply(sock->fd(), &reply));
        EXPECT_EQ(wire::HS_ACCEPTED, reply.status);
    }

    /* the lines held back are counted when the iface closes */
    ucs::scoped_log_capture capture;
    size_t mark = log_mark();
    socks.clear();
    remove_entity(server);
    std::string warns = join(log_lines(mark, "warn"));
    EXPECT_NE(std::string::npos, warns.find("more lines like the last one"))
        << warns;
}
