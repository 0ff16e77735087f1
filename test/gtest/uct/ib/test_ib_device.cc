/*
 * The ib device layer (built into this binary from
 * src/uct/ib/base/ib_device.c) and device discovery through the ib
 * component: one memory domain per verbs device, usable ports named
 * "<dev>:<port>", link layer, GID choice and UCX_IB_GID_INDEX, path MTU,
 * estimates, locality, UCX_NET_DEVICES filtering, and async event hooks.
 *
 * The expectations on rxe_lo, rxe_v0 and rxe_v1 are those of the Soft-RoCE
 * devices test/rxe/run.sh sets up; without RDMA devices the tests that need
 * one are skipped.
 */
#include "ib_lookup.h"

#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/ib/base/ib_device.h>
#include <uct/ib/base/ib_md.h>
#include <ucs/sys/topo.h>
}

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

/* Discovery through the component: runs everywhere, devices or not */
class uct_ib_component : public ucs::test {};

TEST_F(uct_ib_component, one_md_per_verbs_device)
{
    uct_component_h component = ib_lookup::component();
    ASSERT_TRUE(component != NULL) << "the ib module was not loaded";

    std::vector<std::string> expected = ib_lookup::device_names();
    std::vector<std::string> actual;
    EXPECT_EQ(UCS_OK, ib_lookup::md_names(actual));
    EXPECT_EQ(std::set<std::string>(expected.begin(), expected.end()),
              std::set<std::string>(actual.begin(), actual.end()));
    if (expected.empty()) {
        /* no devices: no resources and no error line (checked by the
         * fixture), and opening a made-up md fails cleanly */
        ucs::scoped_log_capture capture;
        uct_md_config_t *config;
        uct_md_h md;
        ASSERT_EQ(UCS_OK, uct_md_config_read(component, NULL, NULL, &config));
        EXPECT_EQ(UCS_ERR_NO_DEVICE,
                  uct_md_open(component, "rxe_lo", config, &md));
        uct_config_release(config);
    }
}

TEST_F(uct_ib_component, bad_gid_index_value_rejected)
{
    uct_component_h component = ib_lookup::component();
    ASSERT_TRUE(component != NULL) << "the ib module was not loaded";

    ucs::scoped_setenv env("UCX_IB_GID_INDEX", "first");
    ucs::scoped_log_capture capture;
    uct_md_config_t *config;

    EXPECT_NE(UCS_OK, uct_md_config_read(component, NULL, NULL, &config));
    EXPECT_TRUE(capture.contains("GID_INDEX"));
}

/* The device layer on one opened device */
class uct_ib_device_test : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        if (ib_lookup::device_names().empty()) {
            GTEST_SKIP() << "no RDMA devices here (ibv_get_device_list "
                            "lists none); run under test/rxe/run.sh";
        }
    }

    void TearDown() override
    {
        for (uct_ib_device_t *dev : m_devs) {
            uct_ib_device_cleanup(dev);
            delete dev;
        }
        m_devs.clear();
        ucs::test::TearDown();
    }

    /* Opens device @a name, or NULL (and the test skips) */
    uct_ib_device_t *open_dev(const std::string &name, int async = 0)
    {
        uct_ib_device_t *dev = NULL;

        ib_lookup::with_device(name, [&](struct ibv_device *device) {
            dev = new uct_ib_device_t;
            EXPECT_EQ(UCS_OK, uct_ib_device_init(dev, device, async));
        });
        if (dev != NULL) {
            m_devs.push_back(dev);
        }
        return dev;
    }

    static std::string gid_str(const uct_ib_gid_info_t &gid)
    {
        char buf[64];
        return uct_ib_gid_str(&gid.gid, buf, sizeof(buf));
    }

    std::vector<uct_ib_device_t *> m_devs;
};

#define OPEN_OR_SKIP(_dev, _name, ...)                      \
    uct_ib_device_t *_dev = open_dev(_name, ##__VA_ARGS__); \
    if (_dev == NULL) {                                     \
        GTEST_SKIP() << "no device " << _name               \
                     << " (test/rxe/run.sh sets "           \
                        "up rxe_lo, rxe_v0 and rxe_v1)";    \
    }

TEST_F(uct_ib_device_test, rxe_lo_port_is_active_roce)
{
    OPEN_OR_SKIP(dev, "rxe_lo");

    EXPECT_STREQ("rxe_lo", dev->name);
    EXPECT_EQ(1u, dev->first_port);
    EXPECT_EQ(1u, dev->num_ports);
    EXPECT_TRUE(uct_ib_device_is_port_usable(dev, 1));
    EXPECT_TRUE(uct_ib_device_is_port_roce(dev, 1));
    EXPECT_STREQ("Ethernet", uct_ib_device_link_layer_str(dev, 1));
    EXPECT_FALSE(uct_ib_device_is_port_usable(dev, 2));
    EXPECT_FALSE(uct_ib_device_is_port_usable(dev, 0));

    uct_tl_device_resource_t *devices;
    unsigned num_devices;
    ASSERT_EQ(UCS_OK, uct_ib_device_query_ports(dev, &devices, &num_devices));
    ASSERT_EQ(1u, num_devices);
    EXPECT_STREQ("rxe_lo:1", devices[0].name);
    EXPECT_EQ(UCT_DEVICE_TYPE_NET, devices[0].type);
    EXPECT_EQ(dev->sys_device, devices[0].sys_device);
    free(devices);
}

TEST_F(uct_ib_device_test, path_mtu)
{
    OPEN_OR_SKIP(lo, "rxe_lo");
    OPEN_OR_SKIP(v0, "rxe_v0");
    OPEN_OR_SKIP(v1, "rxe_v1");

    /* rxe takes the largest verbs MTU below the netdev MTU: 64K on lo,
     * 1500 on the veth pair */
    EXPECT_EQ(4096u, uct_ib_device_port_mtu(lo, 1));
    EXPECT_EQ(1024u, uct_ib_device_port_mtu(v0, 1));
    EXPECT_EQ(1024u, uct_ib_device_port_mtu(v1, 1));
    EXPECT_EQ(0u, uct_ib_device_port_mtu(lo, 2));
    EXPECT_EQ(2048u, uct_ib_mtu_bytes(IBV_MTU_2048));
}

TEST_F(uct_ib_device_test, gid_auto_prefers_roce_v2_ipv4)
{
    OPEN_OR_SKIP(lo, "rxe_lo");
    OPEN_OR_SKIP(v0, "rxe_v0");
    OPEN_OR_SKIP(v1, "rxe_v1");
    uct_ib_gid_info_t gid;

    ASSERT_EQ(UCS_OK,
              uct_ib_device_select_gid(lo, 1, UCT_IB_GID_INDEX_AUTO, &gid));
    EXPECT_EQ(1u, gid.gid_index);
    EXPECT_EQ(UCT_IB_ROCE_V2, gid.roce_version);
    EXPECT_EQ(AF_INET, gid.af);
    EXPECT_EQ("::ffff:127.0.0.1", gid_str(gid));

    ASSERT_EQ(UCS_OK,
              uct_ib_device_select_gid(v0, 1, UCT_IB_GID_INDEX_AUTO, &gid));
    EXPECT_EQ("::ffff:10.78.0.1", gid_str(gid));
    EXPECT_EQ(AF_INET, gid.af);

    ASSERT_EQ(UCS_OK,
              uct_ib_device_select_gid(v1, 1, UCT_IB_GID_INDEX_AUTO, &gid));
    EXPECT_EQ("::ffff:10.78.0.2", gid_str(gid));
}

TEST_F(uct_ib_device_test, gid_explicit_index)
{
    OPEN_OR_SKIP(lo, "rxe_lo");
    uct_ib_gid_info_t gid;

    /* index 0 is the link-local GID made from the MAC address */
    ASSERT_EQ(UCS_OK, uct_ib_device_select_gid(lo, 1, 0, &gid));
    EXPECT_EQ(0u, gid.gid_index);
    EXPECT_EQ(AF_INET6, gid.af);
    EXPECT_EQ(0, gid_str(gid).compare(0, 5, "fe80:")) << gid_str(gid);

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ib_device_select_gid(lo, 1, 200, &gid));
    EXPECT_TRUE(capture.contains("UCX_IB_GID_INDEX=200"));
    EXPECT_EQ(0u, gid.gid_index); /* untouched on failure */
}

TEST_F(uct_ib_device_test, estimates)
{
    OPEN_OR_SKIP(lo, "rxe_lo");
    double latency, bandwidth;

    ucs_status_t status =
        uct_ib_device_port_estimate(lo, 1, &latency, &bandwidth);
    EXPECT_GT(latency, 0);
    if (status == UCS_OK) {
        EXPECT_GT(bandwidth, 100e6); /* at least SDR x1 */
        EXPECT_LT(bandwidth, 200e9);
    } else {
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, status);
    }
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ib_device_port_estimate(lo, 9, &latency, &bandwidth));
}

TEST_F(uct_ib_device_test, locality)
{
    OPEN_OR_SKIP(lo, "rxe_lo");
    ucs_sys_device_t sys_dev;

    /* the same answer as the topology layer gives for the sysfs path */
    ASSERT_EQ(UCS_OK, ucs_topo_find_device_by_sysfs(
                          "/sys/class/infiniband/rxe_lo/device", &sys_dev));
    EXPECT_EQ(sys_dev, lo->sys_device);
    if (lo->sys_device == UCS_SYS_DEVICE_ID_UNKNOWN) {
        /* Soft-RoCE has no PCI function of its own */
        EXPECT_EQ(UCS_NUMA_NODE_UNDEFINED, lo->numa_node);
        EXPECT_EQ(0, uct_ib_device_priority(lo));
    }
}

TEST_F(uct_ib_device_test, print_info)
{
    OPEN_OR_SKIP(lo, "rxe_lo");
    char *buf    = NULL;
    size_t size  = 0;
    FILE *stream = open_memstream(&buf, &size);

    ASSERT_TRUE(stream != NULL);
    uct_ib_device_print_info(lo, UCT_IB_GID_INDEX_AUTO, stream);
    fclose(stream);
    std::string out(buf, size);
    free(buf);

    EXPECT_NE(std::string::npos, out.find("rxe_lo:1")) << out;
    EXPECT_NE(std::string::npos, out.find("Ethernet")) << out;
    EXPECT_NE(std::string::npos, out.find("mtu: 4096")) << out;
    EXPECT_NE(std::string::npos,
              out.find("gid: ::ffff:127.0.0.1 (index 1, auto)"))
        << out;
    EXPECT_NE(std::string::npos, out.find("locality:")) << out;
}

namespace {

struct hook_record {
    std::atomic<unsigned> count{0};
    std::atomic<int> last_type{-1};
    std::atomic<int> last_status{0};
    std::atomic<unsigned> last_port{0};
};

void record_event(void *arg, const uct_ib_async_event_t *event)
{
    hook_record *rec = static_cast<hook_record *>(arg);
    rec->last_type   = event->type;
    rec->last_status = event->status;
    rec->last_port   = event->port_num;
    ++rec->count;
}

} // namespace

TEST_F(uct_ib_device_test, fatal_event_reaches_hooks)
{
    OPEN_OR_SKIP(lo, "rxe_lo", 1);
    hook_record rec;
    uct_ib_async_hook_t hook;
    uct_ib_async_event_t event;

    uct_ib_device_async_hook_add(lo, &hook, record_event, &rec);

    memset(&event, 0, sizeof(event));
    event.type   = IBV_EVENT_DEVICE_FATAL;
    event.status = UCS_ERR_IO_ERROR;
    {
        ucs::scoped_log_capture capture;
        uct_ib_device_handle_async_event(lo, &event);
        EXPECT_TRUE(capture.contains("fatal device error"));
    }
    EXPECT_EQ(1u, rec.count.load());
    EXPECT_EQ(IBV_EVENT_DEVICE_FATAL, rec.last_type.load());
    EXPECT_EQ(UCS_ERR_IO_ERROR, rec.last_status.load());
    EXPECT_EQ(1u, lo->num_fatal_events);

    uct_ib_device_async_hook_remove(lo, &hook);
    {
        ucs::scoped_log_capture capture;
        uct_ib_device_handle_async_event(lo, &event); /* nobody hooked */
    }
    EXPECT_EQ(1u, rec.count.load());
}

/* A real port event: take the network interface under rxe_v1 down and up
 * (needs root, as in the test VM) */
TEST_F(uct_ib_device_test, port_down_and_up_events)
{
    OPEN_OR_SKIP(v1, "rxe_v1", 1);
    hook_record rec;
    uct_ib_async_hook_t hook;

    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to set veth1 down and up";
    }

    uct_ib_device_async_hook_add(v1, &hook, record_event, &rec);
    auto wait_for = [&](int type) {
        for (int i = 0; i < 1000; ++i) {
            if (rec.last_type.load() == type) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    };

    {
        ucs::scoped_log_capture capture;
        ASSERT_EQ(0, system("ip link set veth1 down"));
        EXPECT_TRUE(wait_for(IBV_EVENT_PORT_ERR));
        EXPECT_EQ(1u, rec.last_port.load());
        EXPECT_EQ(UCS_ERR_UNREACHABLE, rec.last_status.load());
        EXPECT_FALSE(uct_ib_device_is_port_usable(v1, 1));
        EXPECT_TRUE(capture.contains("rxe_v1:1: port went down"));

        ASSERT_EQ(0, system("ip link set veth1 up"));
        EXPECT_TRUE(wait_for(IBV_EVENT_PORT_ACTIVE));
        EXPECT_EQ(UCS_OK, rec.last_status.load());
    }
    EXPECT_TRUE(uct_ib_device_is_port_usable(v1, 1));
    uct_ib_device_async_hook_remove(v1, &hook);
}

/*
 * UCX_NET_DEVICES and UCX_IB_GID_INDEX through the uct API. No verbs
 * transport exists yet, so a test transport on the ib component lists the
 * usable ports of its md with uct_ib_device_query_ports(), as rc_verbs and
 * ud_verbs will.
 */
class uct_ib_md_devices : public uct_ib_device_test {
protected:
    void SetUp() override
    {
        uct_ib_device_test::SetUp();
        if (IsSkipped()) {
            return;
        }
        m_component = ib_lookup::component();
        ASSERT_TRUE(m_component != NULL);

        memset(&m_tl, 0, sizeof(m_tl));
        snprintf(m_tl.name, sizeof(m_tl.name), "ibtest");
        m_tl.query_devices = query_devices;
        m_tl.config.name   = "ib test transport";
        m_tl.config.prefix = "IBTEST_";
        m_tl.config.table  = m_tl_config_table;
        m_tl.config.size   = sizeof(uct_iface_config_t);
        uct_tl_register(m_component, &m_tl);
    }

    void TearDown() override
    {
        if (m_component != NULL) {
            uct_tl_unregister(&m_tl);
        }
        uct_ib_device_test::TearDown();
    }

    static ucs_status_t query_devices(uct_md_h md,
                                      uct_tl_device_resource_t **devices_p,
                                      unsigned *num_devices_p)
    {
        return uct_ib_device_query_ports(&uct_ib_md_from(md)->dev, devices_p,
                                         num_devices_p);
    }

    static uct_md_h open_md(const char *name)
    {
        uct_md_h md = NULL;

        EXPECT_EQ(UCS_OK, ib_lookup::open_md(name, &md));
        return md;
    }

    /* "<dev>:<port>" of every ib resource of the test transport */
    std::set<std::string> resource_names()
    {
        std::set<std::string> names;
        std::vector<std::string> md_names;
        EXPECT_EQ(UCS_OK, ib_lookup::md_names(md_names));
        for (const std::string &md_name : md_names) {
            uct_tl_resource_desc_t *res;
            unsigned num_res;
            uct_md_h md = open_md(md_name.c_str());
            if (md == NULL) {
                continue;
            }
            EXPECT_EQ(UCS_OK, uct_md_query_tl_resources(md, &res, &num_res));
            for (unsigned i = 0; i < num_res; ++i) {
                /* the module's own transports are listed too */
                if (strcmp("ibtest", res[i].tl_name) != 0) {
                    continue;
                }
                EXPECT_EQ(UCT_DEVICE_TYPE_NET, res[i].dev_type);
                names.insert(res[i].dev_name);
            }
            uct_release_tl_resource_list(res);
            uct_md_close(md);
        }
        return names;
    }

    static ucs_config_field_t m_tl_config_table[];
    uct_component_h m_component = NULL;
    uct_tl_t m_tl;
};

ucs_config_field_t uct_ib_md_devices::m_tl_config_table[] = {{NULL}};

TEST_F(uct_ib_md_devices, net_devices_filter)
{
    std::set<std::string> all = resource_names();
    if (all.count("rxe_lo:1") == 0) {
        GTEST_SKIP() << "no rxe_lo:1 (test/rxe/run.sh sets it up)";
    }
    EXPECT_EQ(1u, all.count("rxe_v0:1"));
    EXPECT_EQ(1u, all.count("rxe_v1:1"));

    {
        ucs::scoped_setenv env("UCX_NET_DEVICES", "rxe_lo:1");
        EXPECT_EQ(std::set<std::string>({"rxe_lo:1"}), resource_names());
    }
    {
        ucs::scoped_setenv env("UCX_NET_DEVICES", "rxe_v0:1,rxe_v1:1");
        EXPECT_EQ(std::set<std::string>({"rxe_v0:1", "rxe_v1:1"}),
                  resource_names());
    }
    {
        ucs::scoped_setenv env("UCX_NET_DEVICES", "^rxe_lo:1");
        std::set<std::string> rest = resource_names();
        EXPECT_EQ(0u, rest.count("rxe_lo:1"));
        EXPECT_EQ(all.size() - 1, rest.size());
    }
    {
        /* the bare device name is not a port name */
        ucs::scoped_setenv env("UCX_NET_DEVICES", "rxe_lo");
        ucs::scoped_log_capture capture;
        EXPECT_TRUE(resource_names().empty());
    }
}

TEST_F(uct_ib_md_devices, gid_index_config)
{
    if (open_dev("rxe_lo") == NULL) {
        GTEST_SKIP() << "no rxe_lo (test/rxe/run.sh sets it up)";
    }

    uct_md_h md = open_md("rxe_lo");
    ASSERT_TRUE(md != NULL);
    EXPECT_EQ(UCT_IB_GID_INDEX_AUTO, uct_ib_md_from(md)->gid_index);
    uct_md_close(md);

    ucs::scoped_setenv env("UCX_IB_GID_INDEX", "0");
    md = open_md("rxe_lo");
    ASSERT_TRUE(md != NULL);
    uct_ib_md_t *ib_md = uct_ib_md_from(md);
    EXPECT_EQ(0ul, ib_md->gid_index);

    uct_ib_gid_info_t gid;
    ASSERT_EQ(UCS_OK,
              uct_ib_device_select_gid(&ib_md->dev, 1, ib_md->gid_index, &gid));
    EXPECT_EQ(0u, gid.gid_index);

    /* uct_info -d shows the chosen GID through the md */
    std::string out = ib_lookup::md_info(md);
    ASSERT_FALSE(out.empty());
    EXPECT_NE(std::string::npos, out.find("(index 0, UCX_IB_GID_INDEX)"))
        << out;
    uct_md_close(md);
}
