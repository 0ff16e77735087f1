#ifdef HAVE_CONFIG_H
#include "config.h" /* HAVE_HWLOC */
#endif

#include <common/test.h>

extern "C" {
#include <ucs/sys/topo.h>
}

#include <cfloat>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <glob.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

class ucs_topo : public ucs::test {
protected:
    /* The deepest "dddd:bb:ss.f" component of the resolved @a path. */
    static std::string pci_bus_id_of(const std::string &path)
    {
        char resolved[PATH_MAX];
        std::string found;

        if (realpath(path.c_str(), resolved) == NULL) {
            return found;
        }

        char *save = NULL;
        for (char *comp = strtok_r(resolved, "/", &save); comp != NULL;
             comp       = strtok_r(NULL, "/", &save)) {
            unsigned d, b, s, f;
            int n = 0;
            if ((sscanf(comp, "%x:%x:%x.%x%n", &d, &b, &s, &f, &n) == 4) &&
                (comp[n] == '\0')) {
                found = comp;
            }
        }
        return found;
    }
};

TEST_F(ucs_topo, backend_name)
{
    std::string name = ucs_topo_backend_name();
#ifdef HAVE_HWLOC
    EXPECT_EQ("hwloc", name);
#else
    EXPECT_EQ("sysfs", name);
#endif
}

TEST_F(ucs_topo, num_cpus_matches_sysconf)
{
    EXPECT_EQ((unsigned)sysconf(_SC_NPROCESSORS_CONF), ucs_topo_num_cpus());
}

TEST_F(ucs_topo, cpus_and_numa_nodes)
{
    unsigned num_nodes = ucs_topo_num_numa_nodes();
    unsigned covered   = 0;
    ucs_cpu_set_t cpus;

    ASSERT_GE(num_nodes, 1u);

    for (unsigned cpu = 0; cpu < ucs_topo_num_cpus(); ++cpu) {
        int node = ucs_topo_get_cpu_numa_node(cpu);
        if (node == UCS_NUMA_NODE_UNDEFINED) {
            continue; /* offline CPU */
        }
        ASSERT_EQ(UCS_OK, ucs_topo_numa_node_cpus(node, &cpus));
        EXPECT_TRUE(UCS_CPU_ISSET(cpu, &cpus)) << "cpu " << cpu;
        ++covered;
    }

    /* the CPU running this test is on some node */
    int self = sched_getcpu();
    if (self >= 0) {
        EXPECT_NE(UCS_NUMA_NODE_UNDEFINED, ucs_topo_get_cpu_numa_node(self));
    }
    EXPECT_GE(covered, 1u);

    EXPECT_EQ(UCS_NUMA_NODE_UNDEFINED,
              ucs_topo_get_cpu_numa_node(ucs_topo_num_cpus()));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_topo_numa_node_cpus(-1, &cpus));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_topo_numa_node_cpus(100000, &cpus));
}

TEST_F(ucs_topo, device_from_sysfs)
{
    glob_t g;
    std::string path, bus_id;

    if (glob("/sys/class/net/*/device", 0, NULL, &g) != 0) {
        GTEST_SKIP() << "no /sys/class/net/*/device: no network device with "
                        "a bus in this system";
    }
    for (size_t i = 0; (i < g.gl_pathc) && bus_id.empty(); ++i) {
        path   = g.gl_pathv[i];
        bus_id = pci_bus_id_of(path);
    }
    globfree(&g);

    ucs_sys_device_t dev = 0;
    ASSERT_EQ(UCS_OK, ucs_topo_find_device_by_sysfs(path.c_str(), &dev));
    if (bus_id.empty()) {
        EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, dev);
        GTEST_SKIP() << path << " is not behind a PCI function";
    }

    ASSERT_NE(UCS_SYS_DEVICE_ID_UNKNOWN, dev);
    EXPECT_EQ(bus_id, ucs_topo_sys_device_get_name(dev));

    ucs_sys_bus_id_t id;
    ASSERT_EQ(UCS_OK, ucs_topo_get_device_bus_id(dev, &id));
    char str[32];
    snprintf(str, sizeof(str), UCS_SYS_BUS_ID_FMT, UCS_SYS_BUS_ID_ARG(&id));
    EXPECT_EQ(bus_id, str);

    /* the NUMA node the kernel reports, or 0 when it does not know and the
     * machine has one node */
    long expected         = -1;
    std::string numa_file = "/sys/bus/pci/devices/" + bus_id + "/numa_node";
    FILE *f               = fopen(numa_file.c_str(), "r");
    if (f != NULL) {
        if (fscanf(f, "%ld", &expected) != 1) {
            expected = -1;
        }
        fclose(f);
    }
    if ((expected < 0) && (ucs_topo_num_numa_nodes() == 1)) {
        expected = 0;
    }
    EXPECT_EQ(expected, ucs_topo_sys_device_get_numa_node(dev));

    /* same device, same number */
    ucs_sys_device_t again = 0;
    EXPECT_EQ(UCS_OK, ucs_topo_find_device_by_sysfs(path.c_str(), &again));
    EXPECT_EQ(dev, again);
    EXPECT_EQ(UCS_OK, ucs_topo_find_device_by_bus_id(&id, &again));
    EXPECT_EQ(dev, again);

    ucs_sys_dev_distance_t distance;
    EXPECT_EQ(UCS_OK, ucs_topo_get_distance(dev, dev, &distance));
    EXPECT_EQ(0, distance.latency);
    EXPECT_EQ(DBL_MAX, distance.bandwidth);
}

TEST_F(ucs_topo, non_pci_paths_are_unknown)
{
    ucs_sys_device_t dev = 0;

    EXPECT_EQ(UCS_OK,
              ucs_topo_find_device_by_sysfs("/sys/class/net/lo/device", &dev));
    EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, dev);

    dev = 0;
    EXPECT_EQ(UCS_OK, ucs_topo_find_device_by_sysfs("/sys/class/net/lo", &dev));
    EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, dev);

    dev = 0;
    EXPECT_EQ(UCS_OK, ucs_topo_find_device_by_sysfs("/no/such/path", &dev));
    EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, dev);

    EXPECT_STREQ("<unknown>",
                 ucs_topo_sys_device_get_name(UCS_SYS_DEVICE_ID_UNKNOWN));
    EXPECT_EQ(UCS_NUMA_NODE_UNDEFINED,
              ucs_topo_sys_device_get_numa_node(UCS_SYS_DEVICE_ID_UNKNOWN));

    ucs_sys_bus_id_t id;
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              ucs_topo_get_device_bus_id(UCS_SYS_DEVICE_ID_UNKNOWN, &id));
}

/* Concurrent registration of one device gives every thread one number. */
TEST_F(ucs_topo, register_from_threads)
{
    /* not a real device; another one on each run of the test */
    static unsigned run = 0;
    ucs_sys_bus_id_t id = {0xfffe, (uint8_t)(0xa0 + (run / 32)),
                           (uint8_t)(run % 32), 7};
    std::vector<ucs_sys_device_t> devs(8, UCS_SYS_DEVICE_ID_UNKNOWN);
    std::vector<std::thread> threads;

    for (size_t i = 0; i < devs.size(); ++i) {
        threads.emplace_back(
            [&devs, &id, i] { ucs_topo_find_device_by_bus_id(&id, &devs[i]); });
    }
    for (auto &t : threads) {
        t.join();
    }

    for (size_t i = 0; i < devs.size(); ++i) {
        EXPECT_NE(UCS_SYS_DEVICE_ID_UNKNOWN, devs[i]);
        EXPECT_EQ(devs[0], devs[i]);
    }
    EXPECT_GE(ucs_topo_num_devices(), 1u);
    char name[32];
    snprintf(name, sizeof(name), "fffe:%02x:%02x.7", id.bus, id.slot);
    EXPECT_STREQ(name, ucs_topo_sys_device_get_name(devs[0]));
    ++run;

    EXPECT_EQ(UCS_OK, ucs_topo_sys_device_set_name(devs[0], "fake0"));
    EXPECT_STREQ("fake0", ucs_topo_sys_device_get_name(devs[0]));
    EXPECT_EQ(UCS_OK, ucs_topo_sys_device_set_name(devs[0], "fake1"));
    EXPECT_STREQ("fake0", ucs_topo_sys_device_get_name(devs[0]));
}

TEST_F(ucs_topo, distance_defaults)
{
    ucs_sys_dev_distance_t distance;
    ucs_sys_bus_id_t id = {0xfffe, 0xab, 0x1e, 0};
    ucs_sys_device_t dev;

    ASSERT_EQ(UCS_OK, ucs_topo_find_device_by_bus_id(&id, &dev));
    EXPECT_EQ(UCS_OK,
              ucs_topo_get_distance(UCS_SYS_DEVICE_ID_UNKNOWN, dev, &distance));
    EXPECT_EQ(0, distance.latency);
    EXPECT_EQ(DBL_MAX, distance.bandwidth);
}

TEST_F(ucs_topo, print_info)
{
    char *buf    = NULL;
    size_t size  = 0;
    FILE *stream = open_memstream(&buf, &size);

    ASSERT_NE(nullptr, stream);
    ucs_topo_print_info(stream);
    fclose(stream);

    std::string out(buf, size);
    free(buf);
    EXPECT_NE(std::string::npos, out.find("Topology"));
    EXPECT_NE(std::string::npos, out.find(ucs_topo_backend_name()));
    EXPECT_NE(std::string::npos, out.find("numa node"));
}
