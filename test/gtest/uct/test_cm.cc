/*
 * Connection managers, the generic half: which components offer one, the
 * argument checks of uct_cm_*, uct_listener_* and the cm paths of
 * uct_ep_create(), and UCX's interface-based socket-address calls, which
 * no transport here offers.
 */
#include "uct_test.h"

#include <uct/tcp/tcp_cm.h>

#include <netinet/in.h>

#include <cstring>

namespace {

typedef uct_test::entity entity;
typedef uct_test::entity_params entity_params;

std::vector<uct_component_h> all_components()
{
    uct_component_h *components;
    unsigned count;

    EXPECT_EQ(UCS_OK, uct_query_components(&components, &count));
    std::vector<uct_component_h> result(components, components + count);
    uct_release_component_list(components);
    return result;
}

uct_component_attr_t component_attr(uct_component_h component)
{
    uct_component_attr_t attr;

    memset(&attr, 0, sizeof(attr));
    attr.field_mask =
        UCT_COMPONENT_ATTR_FIELD_FLAGS | UCT_COMPONENT_ATTR_FIELD_NAME;
    EXPECT_EQ(UCS_OK, uct_component_query(component, &attr));
    return attr;
}

} // namespace

class uct_cm_generic : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        ASSERT_EQ(UCS_OK, ucs_async_context_create(
                              UCS_ASYNC_MODE_THREAD_SPINLOCK, &m_async));
        ASSERT_EQ(UCS_OK, uct_worker_create(m_async, UCS_THREAD_MODE_SINGLE,
                                            &m_worker));
    }

    void TearDown() override
    {
        if (m_worker != NULL) {
            uct_worker_destroy(m_worker);
        }
        if (m_async != NULL) {
            ucs_async_context_destroy(m_async);
        }
        ucs::test::TearDown();
    }

    ucs_async_context_t *m_async = NULL;
    uct_worker_h m_worker        = NULL;
};

/* A component has a cm exactly when it says UCT_COMPONENT_FLAG_CM; one
 * without refuses with UNSUPPORTED and says what to use instead */
TEST_F(uct_cm_generic, component_flag_matches_cm_open)
{
    unsigned without = 0;

    for (uct_component_h component : all_components()) {
        uct_cm_config_t *config   = NULL;
        uct_cm_h cm               = NULL;
        uct_component_attr_t attr = component_attr(component);
        SCOPED_TRACE(attr.name);

        if (attr.flags & UCT_COMPONENT_FLAG_CM) {
            ASSERT_EQ(UCS_OK,
                      uct_cm_config_read(component, NULL, NULL, &config));
            uct_config_release(config);
            continue;
        }
        ++without;
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_cm_config_read(component, NULL, NULL, &config));
        EXPECT_EQ(NULL, config);
        EXPECT_TRUE(cap.contains("has no connection manager"));
        EXPECT_TRUE(cap.contains("UCT_COMPONENT_FLAG_CM"));
        /* a config of another component does not open a cm here */
        uct_cm_config_t *dummy = reinterpret_cast<uct_cm_config_t *>(&cm);
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_cm_open(component, m_worker, dummy, &cm));
        EXPECT_EQ(NULL, cm);
    }
    EXPECT_GT(without, 0u) << "every component has a cm (self has none)";
}

TEST_F(uct_cm_generic, null_arguments)
{
    std::vector<uct_component_h> components = all_components();
    ASSERT_FALSE(components.empty());
    uct_component_h component = components.front();
    uct_cm_config_t *config   = NULL;
    uct_cm_h cm               = NULL;
    uct_listener_h listener   = NULL;
    uct_cm_attr_t cm_attr;
    uct_listener_attr_t listener_attr;
    uct_listener_params_t params;
    struct sockaddr_in sin;

    memset(&params, 0, sizeof(params));
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;

    ucs::scoped_log_capture cap;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_cm_config_read(NULL, NULL, NULL, &config));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_cm_config_read(component, NULL, NULL, NULL));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_cm_open(NULL, m_worker, config, &cm));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_cm_open(component, NULL, config, &cm));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_cm_open(component, m_worker, NULL, &cm));
    EXPECT_TRUE(cap.contains("uct_cm_config_read()"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_cm_query(NULL, &cm_attr));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_listener_create(NULL, (struct sockaddr *)&sin, sizeof(sin),
                                  &params, &listener));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_listener_query(NULL, &listener_attr));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_listener_reject(NULL, &sin));
    EXPECT_EQ(NULL, cm);
    EXPECT_EQ(NULL, listener);
    uct_cm_close(NULL);         /* nothing */
    uct_listener_destroy(NULL); /* nothing */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ep_disconnect(NULL, 0));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_cm_client_ep_conn_notify(NULL));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ep_connect(NULL, NULL));
}

/* uct_ep_create() with UCT_EP_PARAM_FIELD_CM and no cm says so */
TEST_F(uct_cm_generic, ep_create_cm_without_cm)
{
    uct_ep_params_t params;
    uct_ep_h ep = NULL;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_CM;
    ucs::scoped_log_capture cap;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ep_create(&params, &ep));
    EXPECT_EQ(NULL, ep);
    EXPECT_TRUE(cap.contains("NULL cm"));

    params.field_mask = 0;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ep_create(&params, &ep));
    EXPECT_TRUE(cap.contains("UCT_EP_PARAM_FIELD_CM"));
}

/* An interface's endpoint is not a cm's: the cm calls say UNSUPPORTED;
 * UCX's interface-based sockaddr calls are not offered by any transport */
TEST_F(uct_cm_generic, iface_eps_and_sockaddr_calls)
{
    if (uct_test::enum_resources().empty()) {
        GTEST_SKIP() << "no transport resource selected";
    }

    for (const resource &r : uct_test::enum_resources()) {
        SCOPED_TRACE(r.test_name);
        entity e(r, entity_params());
        uct_md_attr_t md_attr;
        struct sockaddr_in sin;
        ucs_sock_addr_t saddr = {(struct sockaddr *)&sin, sizeof(sin)};

        memset(&sin, 0, sizeof(sin));
        sin.sin_family      = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(UCS_OK, uct_md_query(e.md(), &md_attr));
        EXPECT_FALSE(md_attr.cap.flags & UCT_MD_FLAG_SOCKADDR);
        EXPECT_EQ(0, uct_md_is_sockaddr_accessible(e.md(), &saddr,
                                                   UCT_SOCKADDR_ACC_LOCAL));
        EXPECT_EQ(0, uct_md_is_sockaddr_accessible(e.md(), &saddr,
                                                   UCT_SOCKADDR_ACC_REMOTE));
        {
            ucs::scoped_log_capture cap;
            EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_iface_accept(e.iface(), &sin));
            EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_iface_reject(e.iface(), &sin));
            EXPECT_TRUE(cap.contains("connection manager"));
        }

        uct_ep_h ep = e.connect_to(e);
        if (ep == NULL) {
            continue;
        }
        uct_ep_connect_params_t cparams;
        memset(&cparams, 0, sizeof(cparams));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_disconnect(ep, 0));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_cm_client_ep_conn_notify(ep));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_connect(ep, &cparams));
        e.destroy_eps();
    }
}

/* ------------------------------------------------------------------------
 * The tcp connection manager, both sides in this process (each with its
 * own worker and async context), and raw sockets as hostile clients
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace {

/* What one side's callbacks saw; they run on the async thread */
struct cm_side {
    std::atomic<int> requests{0}, connects{0}, notifies{0}, disconnects{0};
    std::atomic<uct_conn_request_h> request{NULL};
    std::atomic<int> status{UCS_OK};
    std::string remote_data; /* written before the counter is raised */
    std::string dev_name;
    std::string pack_data;    /* what this side packs */
    ssize_t pack_return = -1; /* -1: the length of pack_data */
};

ssize_t cm_pack(void *arg, const uct_cm_ep_priv_data_pack_args_t *args,
                void *priv_data)
{
    cm_side *side = static_cast<cm_side *>(arg);

    side->dev_name = args->dev_name;
    memcpy(priv_data, side->pack_data.data(), side->pack_data.size());
    return (side->pack_return >= 0) ? side->pack_return
                                    : (ssize_t)side->pack_data.size();
}

void cm_conn_request(uct_listener_h listener, void *arg,
                     const uct_cm_listener_conn_request_args_t *args)
{
    cm_side *side = static_cast<cm_side *>(arg);

    side->remote_data.assign(
        static_cast<const char *>(args->remote_data->conn_priv_data),
        args->remote_data->conn_priv_data_length);
    side->dev_name = args->dev_name;
    side->request  = args->conn_request;
    ++side->requests;
}

void cm_client_connect(uct_ep_h ep, void *arg,
                       const uct_cm_ep_client_connect_args_t *args)
{
    cm_side *side = static_cast<cm_side *>(arg);

    if (args->status == UCS_OK) {
        side->remote_data.assign(
            static_cast<const char *>(args->remote_data->conn_priv_data),
            args->remote_data->conn_priv_data_length);
    }
    side->status = args->status;
    ++side->connects;
}

void cm_server_notify(uct_ep_h ep, void *arg,
                      const uct_cm_ep_server_conn_notify_args_t *args)
{
    cm_side *side = static_cast<cm_side *>(arg);

    side->status = args->status;
    ++side->notifies;
}

void cm_disconnect(uct_ep_h ep, void *arg)
{
    ++static_cast<cm_side *>(arg)->disconnects;
}

/* A tcp cm header as a client would write it (tcp_cm.h) */
void hdr_pack(uct_tcp_cm_hdr_t *hdr, unsigned type, uint32_t length)
{
    hdr->magic    = htonl(UCT_TCP_CM_MAGIC);
    hdr->version  = UCT_TCP_CM_VERSION;
    hdr->type     = (uint8_t)type;
    hdr->reserved = 0;
    hdr->length   = htonl(length);
}

unsigned open_fds()
{
    unsigned count = 0;
    DIR *dir       = opendir("/proc/self/fd");

    while ((dir != NULL) && (readdir(dir) != NULL)) {
        ++count;
    }
    if (dir != NULL) {
        closedir(dir);
    }
    return count;
}

} // namespace

class uct_tcp_cm : public ucs::test {
protected:
    struct side_ctx {
        ucs_async_context_t *async = NULL;
        uct_worker_h worker        = NULL;
        uct_cm_h cm                = NULL;
    };

    void SetUp() override
    {
        ucs::test::SetUp();
        m_fds_before = open_fds();
        m_component  = uct_test::find_component("tcp");
        if (m_component == NULL) {
            GTEST_SKIP() << "no tcp component";
        }
        open_side(m_server);
        open_side(m_client);
    }

    void TearDown() override
    {
        if (m_listener != NULL) {
            uct_listener_destroy(m_listener);
        }
        close_side(m_client);
        close_side(m_server);
        if (m_component != NULL) {
            EXPECT_EQ(m_fds_before, open_fds()) << "a socket was left open";
        }
        ucs::test::TearDown();
    }

    void open_side(side_ctx &s)
    {
        uct_cm_config_t *config;

        ASSERT_EQ(UCS_OK, ucs_async_context_create(
                              UCS_ASYNC_MODE_THREAD_SPINLOCK, &s.async));
        ASSERT_EQ(UCS_OK, uct_worker_create(s.async, UCS_THREAD_MODE_SINGLE,
                                            &s.worker));
        ASSERT_EQ(UCS_OK, uct_cm_config_read(m_component, NULL, NULL, &config));
        ucs_status_t status = uct_cm_open(m_component, s.worker, config, &s.cm);
        uct_config_release(config);
        ASSERT_EQ(UCS_OK, status);
    }

    void close_side(side_ctx &s)
    {
        if (s.cm != NULL) {
            uct_cm_close(s.cm);
        }
        if (s.worker != NULL) {
            uct_worker_destroy(s.worker);
        }
        if (s.async != NULL) {
            ucs_async_context_destroy(s.async);
        }
    }

    void close_server()
    {
        uct_listener_destroy(m_listener);
        m_listener = NULL;
        close_side(m_server);
        m_server = side_ctx();
    }

    /* A listener on 127.0.0.1 and a free port; returns its address */
    struct sockaddr_in listen()
    {
        struct sockaddr_in sin;
        uct_listener_params_t params;
        uct_listener_attr_t attr;

        memset(&sin, 0, sizeof(sin));
        sin.sin_family      = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        memset(&params, 0, sizeof(params));
        params.field_mask = UCT_LISTENER_PARAM_FIELD_CONN_REQUEST_CB |
                            UCT_LISTENER_PARAM_FIELD_USER_DATA;
        params.conn_request_cb = cm_conn_request;
        params.user_data       = &m_srv;
        EXPECT_EQ(UCS_OK,
                  uct_listener_create(m_server.cm, (struct sockaddr *)&sin,
                                      sizeof(sin), &params, &m_listener));
        attr.field_mask = UCT_LISTENER_ATTR_FIELD_SOCKADDR;
        EXPECT_EQ(UCS_OK, uct_listener_query(m_listener, &attr));
        memcpy(&sin, &attr.sockaddr, sizeof(sin));
        EXPECT_NE(0, ntohs(sin.sin_port)) << "port 0 was not replaced";
        return sin;
    }

    ucs_status_t client_ep(const struct sockaddr_in &sin, uct_ep_h *ep_p,
                           const void *priv = NULL, size_t priv_len = 0)
    {
        ucs_sock_addr_t saddr = {(const struct sockaddr *)&sin, sizeof(sin)};
        uct_ep_params_t params;

        memset(&params, 0, sizeof(params));
        params.field_mask = UCT_EP_PARAM_FIELD_CM |
                            UCT_EP_PARAM_FIELD_SOCKADDR |
                            UCT_EP_PARAM_FIELD_USER_DATA |
                            UCT_EP_PARAM_FIELD_SOCKADDR_CONNECT_CB_CLIENT |
                            UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB;
        if (priv != NULL) {
            params.field_mask |= UCT_EP_PARAM_FIELD_PRIV_DATA |
                                 UCT_EP_PARAM_FIELD_PRIV_DATA_LENGTH;
            params.private_data        = priv;
            params.private_data_length = priv_len;
        } else {
            params.field_mask |= UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB;
            params.sockaddr_pack_cb = cm_pack;
        }
        params.cm                 = m_client.cm;
        params.sockaddr           = &saddr;
        params.user_data          = &m_cli;
        params.sockaddr_cb_client = cm_client_connect;
        params.disconnect_cb      = cm_disconnect;
        return uct_ep_create(&params, ep_p);
    }

    ucs_status_t server_ep(uct_conn_request_h request, uct_ep_h *ep_p)
    {
        uct_ep_params_t params;

        memset(&params, 0, sizeof(params));
        params.field_mask =
            UCT_EP_PARAM_FIELD_CM | UCT_EP_PARAM_FIELD_CONN_REQUEST |
            UCT_EP_PARAM_FIELD_USER_DATA | UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB |
            UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER |
            UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB;
        params.cm                 = m_server.cm;
        params.conn_request       = request;
        params.user_data          = &m_srv;
        params.sockaddr_pack_cb   = cm_pack;
        params.sockaddr_cb_server = cm_server_notify;
        params.disconnect_cb      = cm_disconnect;
        return uct_ep_create(&params, ep_p);
    }

    bool wait_for(const std::function<bool()> &cond, double seconds = 10)
    {
        auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds((int)(seconds * 1000));
        while (!cond()) {
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
            /* callbacks deferred while a side was blocked run here */
            for (side_ctx *s : {&m_server, &m_client}) {
                if (s->worker != NULL) {
                    uct_worker_progress(s->worker);
                }
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return true;
    }

    /* A plain TCP connection to @a sin, as a hostile client would open */
    int raw_connect(const struct sockaddr_in &sin)
    {
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        EXPECT_GE(fd, 0);
        EXPECT_EQ(0, connect(fd, (const struct sockaddr *)&sin, sizeof(sin)))
            << strerror(errno);
        return fd;
    }

    /* Whether the server closed @a fd within @a seconds */
    bool closed_by_peer(int fd, double seconds)
    {
        struct timeval tv = {(time_t)seconds,
                             (suseconds_t)((seconds - (time_t)seconds) * 1e6)};
        char buf[64];

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        for (;;) {
            ssize_t ret = recv(fd, buf, sizeof(buf), 0);
            if (ret == 0) {
                return true;
            } else if (ret < 0) {
                return (errno == ECONNRESET);
            }
        }
    }

    unsigned m_fds_before       = 0;
    uct_component_h m_component = NULL;
    side_ctx m_server, m_client;
    uct_listener_h m_listener = NULL;
    cm_side m_srv, m_cli;
};

TEST_F(uct_tcp_cm, component_offers_a_cm)
{
    uct_cm_attr_t attr;

    attr.field_mask = UCT_CM_ATTR_FIELD_MAX_CONN_PRIV;
    ASSERT_EQ(UCS_OK, uct_cm_query(m_client.cm, &attr));
    EXPECT_EQ(2048u, attr.max_conn_priv);
}

/* The whole handshake, each side's data verified, then a disconnect that
 * both sides see once */
TEST_F(uct_tcp_cm, connect_exchange_disconnect)
{
    struct sockaddr_in sin = listen();
    uct_ep_h cep, sep;

    m_cli.pack_data =
        std::string("client private data ") + std::string(1000, 'c');
    m_srv.pack_data = std::string(2048, 's');
    ASSERT_EQ(UCS_OK, client_ep(sin, &cep));
    ASSERT_TRUE(wait_for([&] { return m_srv.requests == 1; }));
    EXPECT_EQ(m_cli.pack_data, m_srv.remote_data);
    EXPECT_EQ("lo", m_srv.dev_name);
    EXPECT_EQ(UCS_ERR_BUSY, uct_ep_disconnect(cep, 0))
        << "disconnect during the handshake";

    ASSERT_EQ(UCS_OK, server_ep(m_srv.request, &sep));
    ASSERT_TRUE(wait_for([&] { return m_cli.connects == 1; }));
    EXPECT_EQ(UCS_OK, m_cli.status);
    EXPECT_EQ(m_srv.pack_data, m_cli.remote_data);
    EXPECT_EQ("lo", m_cli.dev_name);
    EXPECT_EQ(0, m_srv.notifies.load());

    ASSERT_EQ(UCS_OK, uct_cm_client_ep_conn_notify(cep));
    ASSERT_TRUE(wait_for([&] { return m_srv.notifies == 1; }));
    EXPECT_EQ(UCS_OK, m_srv.status);

    EXPECT_EQ(UCS_OK, uct_ep_disconnect(cep, 0));
    EXPECT_EQ(UCS_ERR_NOT_CONNECTED, uct_ep_disconnect(cep, 0));
    ASSERT_TRUE(wait_for([&] { return m_srv.disconnects == 1; }));
    EXPECT_EQ(UCS_ERR_NOT_CONNECTED, uct_ep_disconnect(sep, 0));
    uct_ep_destroy(sep);
    ASSERT_TRUE(wait_for([&] { return m_cli.disconnects == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(1, m_cli.connects.load());
    EXPECT_EQ(1, m_srv.disconnects.load());
    EXPECT_EQ(1, m_cli.disconnects.load());
    uct_ep_destroy(cep);
}

TEST_F(uct_tcp_cm, server_rejects)
{
    struct sockaddr_in sin = listen();
    uct_ep_h cep;

    ASSERT_EQ(UCS_OK, client_ep(sin, &cep, "hello", 5));
    ASSERT_TRUE(wait_for([&] { return m_srv.requests == 1; }));
    EXPECT_EQ("hello", m_srv.remote_data);
    EXPECT_EQ(UCS_OK, uct_listener_reject(m_listener, m_srv.request));
    ASSERT_TRUE(wait_for([&] { return m_cli.connects == 1; }));
    EXPECT_EQ(UCS_ERR_REJECTED, m_cli.status);
    EXPECT_EQ(0, m_cli.disconnects.load());
    uct_ep_destroy(cep);
}

TEST_F(uct_tcp_cm, no_listener_is_unreachable)
{
    struct sockaddr_in sin = listen();
    uct_ep_h cep;

    uct_listener_destroy(m_listener); /* the port is closed now */
    m_listener = NULL;
    ASSERT_EQ(UCS_OK, client_ep(sin, &cep, "x", 1));
    ASSERT_TRUE(wait_for([&] { return m_cli.connects == 1; }));
    EXPECT_EQ(UCS_ERR_UNREACHABLE, m_cli.status)
        << ucs_status_string((ucs_status_t)m_cli.status.load());
    uct_ep_destroy(cep);
}

/* Too much private data is refused before anything is sent */
TEST_F(uct_tcp_cm, private_data_over_the_limit)
{
    struct sockaddr_in sin = listen();
    std::string big(2049, 'b');
    uct_ep_h cep = NULL;

    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  client_ep(sin, &cep, big.data(), big.size()));
        EXPECT_TRUE(cap.contains("UCX_TCP_CM_PRIV_DATA_LEN"));
    }
    EXPECT_EQ(NULL, cep);

    /* a pack callback that claims more: the connect callback says so */
    m_cli.pack_data   = "y";
    m_cli.pack_return = 4096;
    ucs::scoped_log_capture cap;
    ASSERT_EQ(UCS_OK, client_ep(sin, &cep));
    ASSERT_TRUE(wait_for([&] { return m_cli.connects == 1; }));
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, m_cli.status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(0, m_srv.requests.load()) << "the server saw a request";
    uct_ep_destroy(cep);
}

/* Garbage, a length over the limit, and silence: each dropped, none
 * reaches the listener's callback */
TEST_F(uct_tcp_cm, hostile_clients_are_dropped)
{
    ucs::scoped_setenv timeout("UCX_TCP_CM_TIMEOUT", "300ms");
    close_side(m_server);
    m_server = side_ctx();
    open_side(m_server);
    struct sockaddr_in sin = listen();
    ucs::scoped_log_capture cap;

    int garbage = raw_connect(sin);
    ASSERT_EQ(16, send(garbage, "GET / HTTP/1.0\r\n", 16, 0));
    EXPECT_TRUE(closed_by_peer(garbage, 5));
    close(garbage);

    uct_tcp_cm_hdr_t hdr;
    hdr_pack(&hdr, UCT_TCP_CM_MSG_REQUEST, 2049);
    int oversized = raw_connect(sin);
    ASSERT_EQ((ssize_t)sizeof(hdr), send(oversized, &hdr, sizeof(hdr), 0));
    EXPECT_TRUE(closed_by_peer(oversized, 5));
    close(oversized);

    hdr_pack(&hdr, UCT_TCP_CM_MSG_NOTIFY, 0);
    int wrong_type = raw_connect(sin);
    ASSERT_EQ((ssize_t)sizeof(hdr), send(wrong_type, &hdr, sizeof(hdr), 0));
    EXPECT_TRUE(closed_by_peer(wrong_type, 5));
    close(wrong_type);

    auto start = std::chrono::steady_clock::now();
    int silent = raw_connect(sin);
    hdr_pack(&hdr, UCT_TCP_CM_MSG_REQUEST, 100);
    ASSERT_EQ(8, send(silent, &hdr, 8, 0)); /* half a header, then nothing */
    EXPECT_TRUE(closed_by_peer(silent, 5));
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_GE(waited, 0.25) << "dropped before the deadline";
    EXPECT_LT(waited, 3.0) << "UCX_TCP_CM_TIMEOUT was not applied";
    close(silent);

    EXPECT_EQ(0, m_srv.requests.load());
    EXPECT_TRUE(cap.contains("bad handshake message"));
    EXPECT_TRUE(cap.contains("UCX_TCP_CM_TIMEOUT"));
    close_server(); /* its count of suppressed lines is said here */
}

/* Connections the user has not taken are bounded */
TEST_F(uct_tcp_cm, pending_connections_are_bounded)
{
    ucs::scoped_setenv max("UCX_TCP_CM_MAX_PENDING", "4");
    close_side(m_server);
    m_server = side_ctx();
    open_side(m_server);
    struct sockaddr_in sin = listen();
    std::vector<int> fds;
    unsigned closed = 0;
    ucs::scoped_log_capture cap;

    for (int i = 0; i < 10; ++i) {
        fds.push_back(raw_connect(sin));
    }
    for (int fd : fds) {
        closed += closed_by_peer(fd, 0.5);
        close(fd);
    }
    EXPECT_EQ(6u, closed) << "4 held, 6 closed";
    EXPECT_TRUE(cap.contains("UCX_TCP_CM_MAX_PENDING"));
    close_server(); /* its count of suppressed lines is said here */
}

/* A client that goes away after its request: the server ep created from
 * the request hears it through its notify callback */
TEST_F(uct_tcp_cm, client_gone_before_accept)
{
    struct sockaddr_in sin = listen();
    uct_ep_h cep, sep;

    ASSERT_EQ(UCS_OK, client_ep(sin, &cep, "bye", 3));
    ASSERT_TRUE(wait_for([&] { return m_srv.requests == 1; }));
    uct_ep_destroy(cep);
    ASSERT_EQ(UCS_OK, server_ep(m_srv.request, &sep));
    ASSERT_TRUE(wait_for([&] { return m_srv.notifies == 1; }));
    EXPECT_NE(UCS_OK, m_srv.status);
    EXPECT_EQ(0, m_cli.connects.load());
    uct_ep_destroy(sep);
}

/* A client that resets its connection while its request waits for the
 * user: epoll reports the hang-up whatever was asked, and the server must
 * not spin on it; the ep created from the request hears the failure */
TEST_F(uct_tcp_cm, reset_before_accept_does_not_spin)
{
    struct sockaddr_in sin = listen();
    struct linger lg       = {1, 0};
    struct rusage before, after;
    uct_tcp_cm_hdr_t hdr;
    uct_ep_h sep;

    int fd = raw_connect(sin);
    hdr_pack(&hdr, UCT_TCP_CM_MSG_REQUEST, 4);
    ASSERT_EQ((ssize_t)sizeof(hdr), send(fd, &hdr, sizeof(hdr), 0));
    ASSERT_EQ(4, send(fd, "abcd", 4, 0));
    ASSERT_TRUE(wait_for([&] { return m_srv.requests == 1; }));
    EXPECT_EQ("abcd", m_srv.remote_data);
    ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
    close(fd); /* a reset, not a FIN */

    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    getrusage(RUSAGE_SELF, &before);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    getrusage(RUSAGE_SELF, &after);
    double cpu = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                 (after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                 (after.ru_utime.tv_usec - before.ru_utime.tv_usec) * 1e-6 +
                 (after.ru_stime.tv_usec - before.ru_stime.tv_usec) * 1e-6;
    EXPECT_LT(cpu, 0.1) << "the process used " << cpu
                        << " s of CPU in 0.3 s of waiting";

    ASSERT_EQ(UCS_OK, server_ep(m_srv.request, &sep));
    ASSERT_TRUE(wait_for([&] { return m_srv.notifies == 1; }));
    EXPECT_NE(UCS_OK, m_srv.status);
    uct_ep_destroy(sep);
}
