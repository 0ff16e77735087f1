/*
 * Connection managers, the generic half: which components offer one, the
 * argument checks of uct_cm_*, uct_listener_* and the cm paths of
 * uct_ep_create(), and UCX's interface-based socket-address calls, which
 * no transport here offers.
 */
#include "uct_test.h"

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
