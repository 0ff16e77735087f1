/*
 * The tcp transport on the loopback device: the configuration rows.
 */
#include "tcp_test.h"

#include <climits>
#include <utility>

/* ------------------------------------------------------------------------
 * Configuration
 */

class uct_tcp_config : public uct_tcp {
protected:
    ucs_status_t read_config(entity &e, uct_iface_config_t **config_p)
    {
        return uct_md_iface_config_read(e.md(), "tcp", NULL, NULL, config_p);
    }
};

TEST_F(uct_tcp_config, rows_exist)
{
    entity *e = add_entity();
    uct_iface_config_t *config;

    ASSERT_EQ(UCS_OK, read_config(*e, &config));
    for (const char *name : {"SNDBUF",           "RCVBUF",       "NODELAY",
                             "TX_SEG_SIZE",      "RX_SEG_SIZE",  "MAX_IOV",
                             "SENDV_THRESH",     "PUT_ENABLE",   "KEEPIDLE",
                             "KEEPINTVL",        "KEEPCNT",      "SYN_CNT",
                             "MAX_CONN_RETRIES", "CONN_TIMEOUT", "PORT_RANGE",
                             "BACKLOG",          "AF_PRIO",      "PEER_TIMEOUT",
                             "MAX_BUFS",         "PEER_MAX_BUFS"}) {
        char value[256] = "";
        EXPECT_EQ(UCS_OK, uct_config_get(config, name, value, sizeof(value)))
            << "UCX_TCP_" << name;
        EXPECT_STRNE("", value) << "UCX_TCP_" << name << " has no value";
    }
    uct_config_release(config);
}

TEST_F(uct_tcp_config, bad_values_rejected)
{
    entity *e = add_entity();

    for (auto var_value : std::vector<std::pair<std::string, std::string>>{
             {"MAX_IOV", "abc"},
             {"NODELAY", "perhaps"},
             {"RX_SEG_SIZE", "big"},
             {"MAX_CONN_RETRIES", "many"},
             {"CONN_TIMEOUT", "soon"},
             {"KEEPIDLE", "1 fortnight"},
             {"PEER_MAX_BUFS", "lots"}}) {
        std::string var = "UCX_TCP_" + var_value.first;
        SCOPED_TRACE(var + "=" + var_value.second);
        ucs::scoped_setenv env(var.c_str(), var_value.second.c_str());
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();
        uct_iface_config_t *config;

        ucs_status_t status = read_config(*e, &config);
        EXPECT_NE(UCS_OK, status);
        if (status == UCS_OK) {
            uct_config_release(config);
        }
        std::vector<std::string> errors = log_lines(mark, "error");
        EXPECT_FALSE(errors.empty());
        EXPECT_TRUE(capture.contains(var)) << join(errors);
        EXPECT_TRUE(capture.contains(var_value.second)) << join(errors);
    }
}

/* Values set through the environment are what the config reports. */
TEST_F(uct_tcp_config, values_from_environment)
{
    entity *e = add_entity();
    ucs::scoped_setenv retries("UCX_TCP_MAX_CONN_RETRIES", "7");
    ucs::scoped_setenv iov("UCX_TCP_MAX_IOV", "3");
    uct_iface_config_t *config;
    char value[64];

    ASSERT_EQ(UCS_OK, read_config(*e, &config));
    ASSERT_EQ(UCS_OK,
              uct_config_get(config, "MAX_CONN_RETRIES", value, sizeof(value)));
    EXPECT_STREQ("7", value);
    ASSERT_EQ(UCS_OK, uct_config_get(config, "MAX_IOV", value, sizeof(value)));
    EXPECT_STREQ("3", value);
    uct_config_release(config);
}

/* A peer's share of the receive buffers: a quarter of the pool by
 * default, a number, or no limit; values that leave no room are refused
 * when the iface opens, naming the variable. */
TEST_F(uct_tcp_config, peer_share_of_receive_buffers)
{
    for (auto c : std::vector<std::vector<std::string>>{
             {"4096", "auto", "1024"},
             {"16", "auto", "4"},
             {"3", "auto", "1"},
             {"16", "7", "7"},
             {"16", "inf", std::to_string(UINT_MAX)},
             {"0", "auto", std::to_string(UINT_MAX)}}) {
        SCOPED_TRACE("MAX_BUFS=" + c[0] + " PEER_MAX_BUFS=" + c[1]);
        ucs::scoped_setenv bufs("UCX_TCP_MAX_BUFS", c[0].c_str());
        ucs::scoped_setenv share("UCX_TCP_PEER_MAX_BUFS", c[1].c_str());
        entity *e = add_entity();
        EXPECT_EQ(c[2] + "\n", iface_file(*e, "rx_peer_max_bufs"));
        remove_entity(e);
    }

    for (auto c : std::vector<std::pair<std::string, std::string>>{
             {"UCX_TCP_PEER_MAX_BUFS", "0"}, {"UCX_TCP_MAX_BUFS", "1"}}) {
        SCOPED_TRACE(c.first + "=" + c.second);
        ucs::scoped_setenv env(c.first.c_str(), c.second.c_str());
        ucs::scoped_log_capture capture;
        EXPECT_ANY_THROW(add_entity()) << "the iface opened";
        EXPECT_TRUE(capture.contains(c.first + "=" + c.second));
    }
}
