/*
 * Network devices: the UCX_NET_DEVICES filter of the resource lists (read
 * at each query, whole-name matching, "^" negation, one warning for names
 * no transport has, bad values rejected), and the tcp device layer (built
 * into this binary from src/uct/tcp/tcp_device.c): interface discovery,
 * listen address by family preference, family list parsing, estimates.
 * Interfaces that lack a family, or are down, are made in a private network
 * namespace of a child process when the system allows it.
 */
#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
#include <uct/tcp/tcp_device.h>
#include <ucs/config/parser.h>
#include <ucs/sys/topo.h>
}

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <ifaddrs.h>
#include <map>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <set>
#include <string>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

struct net_resource {
    std::string component;
    std::string tl_name;
    std::string dev_name;
    uct_device_type_t dev_type;
    ucs_sys_device_t sys_device;
};

/* A name no device has, different at each call (warnings are given once
 * per process for each UCX_NET_DEVICES value) */
std::string unique_name(const std::string &prefix)
{
    static unsigned counter = 0;
    return prefix + std::to_string(getpid()) + "x" + std::to_string(++counter);
}

std::string join(const std::set<std::string> &names)
{
    std::string out;
    for (const std::string &name : names) {
        out += (out.empty() ? "" : ",") + name;
    }
    return out;
}

/*
 * Every transport resource of every component, as uct_md_query_tl_resources
 * lists them now. The first failing status is stored in @a status_p.
 */
std::vector<net_resource> query_all_resources(ucs_status_t *status_p = NULL)
{
    std::vector<net_resource> out;
    uct_component_h *components;
    unsigned num_components;
    ucs_status_t first = UCS_OK;

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        ADD_FAILURE() << "uct_query_components failed";
        return out;
    }

    for (unsigned c = 0; c < num_components; ++c) {
        uct_component_attr_t attr;
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &attr) != UCS_OK) {
            ADD_FAILURE() << "uct_component_query failed";
            continue;
        }

        std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds.data();
        if (!mds.empty() &&
            (uct_component_query(components[c], &attr) != UCS_OK)) {
            ADD_FAILURE() << "uct_component_query(md_resources) failed";
            continue;
        }

        for (const uct_md_resource_desc_t &md_res : mds) {
            uct_md_config_t *md_config;
            uct_md_h md;
            if (uct_md_config_read(components[c], NULL, NULL, &md_config) !=
                UCS_OK) {
                ADD_FAILURE() << "uct_md_config_read failed";
                continue;
            }
            ucs_status_t status =
                uct_md_open(components[c], md_res.md_name, md_config, &md);
            uct_config_release(md_config);
            if (status != UCS_OK) {
                ADD_FAILURE() << "uct_md_open(" << md_res.md_name << ") failed";
                continue;
            }

            uct_tl_resource_desc_t *resources;
            unsigned num_resources;
            status = uct_md_query_tl_resources(md, &resources, &num_resources);
            if (status == UCS_OK) {
                for (unsigned i = 0; i < num_resources; ++i) {
                    out.push_back({attr.name, resources[i].tl_name,
                                   resources[i].dev_name, resources[i].dev_type,
                                   resources[i].sys_device});
                }
                uct_release_tl_resource_list(resources);
            } else if (first == UCS_OK) {
                first = status;
            }
            uct_md_close(md);
        }
    }

    uct_release_component_list(components);
    if (status_p != NULL) {
        *status_p = first;
    }
    return out;
}

std::set<std::string> net_names(const std::vector<net_resource> &resources)
{
    std::set<std::string> names;
    for (const net_resource &r : resources) {
        if (r.dev_type == UCT_DEVICE_TYPE_NET) {
            names.insert(r.dev_name);
        }
    }
    return names;
}

/* "tl/dev" of the resources that are not network devices */
std::set<std::string> other_names(const std::vector<net_resource> &resources)
{
    std::set<std::string> names;
    for (const net_resource &r : resources) {
        if (r.dev_type != UCT_DEVICE_TYPE_NET) {
            names.insert(r.component + ":" + r.tl_name + "/" + r.dev_name);
        }
    }
    return names;
}

std::set<std::string> tcp_names(const std::vector<net_resource> &resources)
{
    std::set<std::string> names;
    for (const net_resource &r : resources) {
        if (r.tl_name == "tcp") {
            names.insert(r.dev_name);
        }
    }
    return names;
}

/* What getifaddrs() says about each interface */
struct if_info {
    bool active      = false; /* up and running */
    bool inet        = false;
    bool inet6       = false; /* not link-local */
    bool link_local6 = false;
};

std::map<std::string, if_info> list_interfaces()
{
    std::map<std::string, if_info> out;
    struct ifaddrs *ifaddrs;

    if (getifaddrs(&ifaddrs) != 0) {
        ADD_FAILURE() << "getifaddrs: " << strerror(errno);
        return out;
    }
    for (struct ifaddrs *ifa = ifaddrs; ifa != NULL; ifa = ifa->ifa_next) {
        if_info &info = out[ifa->ifa_name];
        info.active =
            (ifa->ifa_flags & IFF_UP) && (ifa->ifa_flags & IFF_RUNNING);
        if (ifa->ifa_addr == NULL) {
            continue;
        }
        if (ifa->ifa_addr->sa_family == AF_INET) {
            info.inet = true;
        } else if (ifa->ifa_addr->sa_family == AF_INET6) {
            const struct sockaddr_in6 *sin6 =
                (const struct sockaddr_in6 *)ifa->ifa_addr;
            if (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr)) {
                info.link_local6 = true;
            } else {
                info.inet6 = true;
            }
        }
    }
    freeifaddrs(ifaddrs);
    return out;
}

/* The interfaces the tcp transport should offer */
std::set<std::string> expected_tcp_devices()
{
    std::set<std::string> out;
    for (const auto &entry : list_interfaces()) {
        if (entry.second.active && (entry.second.inet || entry.second.inet6)) {
            out.insert(entry.first);
        }
    }
    return out;
}

std::vector<uct_tl_device_resource_t> tcp_query_all()
{
    uct_tl_device_resource_t *devices = NULL;
    unsigned num_devices              = 0;
    std::vector<uct_tl_device_resource_t> out;

    ucs_status_t status =
        uct_tcp_device_query_all(NULL, &devices, &num_devices);
    EXPECT_EQ(UCS_OK, status);
    if (status == UCS_OK) {
        out.assign(devices, devices + num_devices);
        free(devices);
    }
    return out;
}

std::string addr_str(const struct sockaddr_storage &addr)
{
    char buf[INET6_ADDRSTRLEN] = "";
    const void *in =
        (addr.ss_family == AF_INET)
            ? (const void *)&((const struct sockaddr_in *)&addr)->sin_addr
            : (const void *)&((const struct sockaddr_in6 *)&addr)->sin6_addr;
    inet_ntop(addr.ss_family, in, buf, sizeof(buf));
    return buf;
}

struct sockaddr_storage make_addr(const char *ip)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    if (strchr(ip, ':') != NULL) {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
        sin6->sin6_family         = AF_INET6;
        EXPECT_EQ(1, inet_pton(AF_INET6, ip, &sin6->sin6_addr)) << ip;
    } else {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        sin->sin_family         = AF_INET;
        EXPECT_EQ(1, inet_pton(AF_INET, ip, &sin->sin_addr)) << ip;
    }
    return ss;
}

/* Number of captured lines from index @a start on that contain @a text */
size_t count_lines(const ucs::scoped_log_capture &capture, size_t start,
                   const std::string &text)
{
    const std::vector<std::string> &lines = capture.messages();
    size_t count                          = 0;
    for (size_t i = start; i < lines.size(); ++i) {
        count += (lines[i].find(text) != std::string::npos);
    }
    return count;
}

} // namespace

/* ------------------------------------------------------------------------
 * UCX_NET_DEVICES
 */

class net_devices : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        /* the baseline: every device, whatever the caller's environment */
        ucs::scoped_setenv all("UCX_NET_DEVICES", "all");
        m_baseline = query_all_resources();
        ASSERT_TRUE(net_names(m_baseline).count("lo"))
            << "the tcp transport does not offer lo";
    }

    std::vector<net_resource> m_baseline;
};

TEST_F(net_devices, variable_is_registered)
{
    /* known to the configuration: printed with its value and no
     * unknown-variable warning */
    ucs::scoped_setenv env("UCX_NET_DEVICES", "lo");
    char *text   = NULL;
    size_t size  = 0;
    FILE *stream = open_memstream(&text, &size);
    ASSERT_NE((FILE *)NULL, stream);
    ucs_config_parser_print_all_opts(stream, NULL, UCS_CONFIG_PRINT_CONFIG,
                                     NULL);
    fclose(stream);
    std::string printed(text, size);
    free(text);
    EXPECT_NE(std::string::npos, printed.find("UCX_NET_DEVICES=lo\n"))
        << printed;

    ucs::scoped_setenv typo("UCX_NET_DEVICEZ", "lo");
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();
    ucs_config_parser_warn_unused_env_vars(NULL);
    /* the misspelled name is reported, with ours as the suggestion */
    EXPECT_EQ(1u, count_lines(capture, start, "UCX_NET_DEVICEZ"));
    EXPECT_EQ(1u, count_lines(capture, start, "did you mean UCX_NET_DEVICES"));
    EXPECT_EQ(0u, count_lines(capture, start,
                              "unknown environment variable "
                              "UCX_NET_DEVICES"));
}

TEST_F(net_devices, default_is_all)
{
    ucs::scoped_setenv env("UCX_NET_DEVICES", NULL);
    std::vector<net_resource> resources = query_all_resources();
    EXPECT_EQ(net_names(m_baseline), net_names(resources));
    EXPECT_EQ(other_names(m_baseline), other_names(resources));
}

TEST_F(net_devices, select_one)
{
    ucs::scoped_setenv env("UCX_NET_DEVICES", "lo");
    std::vector<net_resource> resources = query_all_resources();

    EXPECT_EQ(std::set<std::string>{"lo"}, net_names(resources));
    EXPECT_EQ(std::set<std::string>{"lo"}, tcp_names(resources));
    /* memory and shared memory devices are not network devices */
    EXPECT_EQ(other_names(m_baseline), other_names(resources));
}

TEST_F(net_devices, select_several)
{
    std::set<std::string> all = net_names(m_baseline);
    ucs::scoped_setenv env("UCX_NET_DEVICES", join(all).c_str());
    std::vector<net_resource> resources = query_all_resources();

    EXPECT_EQ(all, net_names(resources));
    EXPECT_EQ(m_baseline.size(), resources.size());
}

TEST_F(net_devices, all_but)
{
    ucs::scoped_setenv env("UCX_NET_DEVICES", "^lo");
    std::vector<net_resource> resources = query_all_resources();

    std::set<std::string> expected = net_names(m_baseline);
    expected.erase("lo");
    EXPECT_EQ(expected, net_names(resources));
    EXPECT_EQ(other_names(m_baseline), other_names(resources));
}

TEST_F(net_devices, read_at_each_query)
{
    {
        ucs::scoped_setenv env("UCX_NET_DEVICES", "lo");
        EXPECT_EQ(std::set<std::string>{"lo"},
                  net_names(query_all_resources()));
    }
    {
        ucs::scoped_setenv env("UCX_NET_DEVICES", "^lo");
        EXPECT_EQ(0u, net_names(query_all_resources()).count("lo"));
    }
    EXPECT_EQ(net_names(m_baseline), net_names(query_all_resources()));
}

TEST_F(net_devices, whole_names)
{
    /* "l" is a prefix of "lo", "lo..." extends it: neither selects lo */
    std::string longer = unique_name("lo");
    for (const std::string &value : {std::string("l"), longer}) {
        ucs::scoped_setenv env("UCX_NET_DEVICES", value.c_str());
        ucs::scoped_log_capture capture;
        EXPECT_TRUE(net_names(query_all_resources()).empty()) << value;
        EXPECT_EQ(other_names(m_baseline), other_names(query_all_resources()));
    }
}

TEST_F(net_devices, unknown_name_warns_once)
{
    std::string bogus = unique_name("nodev");
    std::string value = "lo," + bogus;
    ucs::scoped_setenv env("UCX_NET_DEVICES", value.c_str());
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();

    /* every memory domain of every component is queried, twice */
    EXPECT_EQ(std::set<std::string>{"lo"}, net_names(query_all_resources()));
    EXPECT_EQ(std::set<std::string>{"lo"}, net_names(query_all_resources()));

    EXPECT_EQ(1u, count_lines(capture, start, "'" + bogus + "'"));
    EXPECT_EQ(1u, count_lines(capture, start, "UCX_NET_DEVICES=" + value));
    /* the available devices are listed; lo is not reported as unknown */
    EXPECT_EQ(1u, count_lines(capture, start, "available network devices:"));
    EXPECT_EQ(0u, count_lines(capture, start, "'lo'"));
    for (const std::string &name : net_names(m_baseline)) {
        EXPECT_EQ(1u, count_lines(capture, start, " " + name)) << name;
    }
    EXPECT_EQ(capture.messages().size() - start, 1u);
}

TEST_F(net_devices, unknown_names_with_negation)
{
    std::string bogus1 = unique_name("nodev");
    std::string bogus2 = unique_name("nodev");
    std::string value  = "^" + bogus1 + ",lo," + bogus2;
    ucs::scoped_setenv env("UCX_NET_DEVICES", value.c_str());
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();

    std::set<std::string> expected = net_names(m_baseline);
    expected.erase("lo");
    EXPECT_EQ(expected, net_names(query_all_resources()));

    EXPECT_EQ(1u, capture.messages().size() - start);
    EXPECT_EQ(1u, count_lines(capture, start,
                              "'" + bogus1 + "', '" + bogus2 + "' match"));
}

TEST_F(net_devices, known_names_do_not_warn)
{
    ucs::scoped_setenv env("UCX_NET_DEVICES",
                           join(net_names(m_baseline)).c_str());
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();
    query_all_resources();
    EXPECT_EQ(0u, capture.messages().size() - start);
}

TEST_F(net_devices, empty_selects_nothing_and_warns_once)
{
    ucs::scoped_setenv env("UCX_NET_DEVICES", "");
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();

    /* every memory domain of every component is queried, twice */
    std::vector<net_resource> resources = query_all_resources();
    EXPECT_TRUE(net_names(resources).empty());
    EXPECT_EQ(other_names(m_baseline), other_names(resources));
    EXPECT_TRUE(net_names(query_all_resources()).empty());

    EXPECT_EQ(1u, capture.messages().size() - start);
    EXPECT_EQ(1u, count_lines(capture, start,
                              "UCX_NET_DEVICES is empty: no network device "
                              "is selected; unset it or set it to 'all'"));
}

TEST_F(net_devices, empty_warns_again_after_another_value)
{
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();
    {
        ucs::scoped_setenv env("UCX_NET_DEVICES", "");
        query_all_resources();
    }
    query_all_resources(); /* the default, "all" */
    {
        ucs::scoped_setenv env("UCX_NET_DEVICES", "");
        query_all_resources();
    }
    EXPECT_EQ(2u, count_lines(capture, start, "UCX_NET_DEVICES is empty"));
    EXPECT_EQ(2u, capture.messages().size() - start);
}

TEST_F(net_devices, negation_of_nothing_selects_all)
{
    ucs::scoped_setenv env("UCX_NET_DEVICES", "^");
    std::vector<net_resource> resources = query_all_resources();
    EXPECT_EQ(net_names(m_baseline), net_names(resources));
}

TEST_F(net_devices, bad_value_is_rejected)
{
    ucs::scoped_setenv env("UCX_NET_DEVICES", "lo,,eth0");
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();
    ucs_status_t status;

    std::vector<net_resource> resources = query_all_resources(&status);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, status);
    EXPECT_TRUE(resources.empty());
    EXPECT_LE(1u, count_lines(capture, start,
                              "invalid value for UCX_NET_DEVICES: "
                              "'lo,,eth0'"));
    /* nothing but the parser's line, which says it all */
    EXPECT_EQ(count_lines(capture, start, "UCX_NET_DEVICES"),
              capture.messages().size() - start);
}

TEST_F(net_devices, tcp_lists_active_interfaces)
{
    /* lo always; every interface that is up with an IPv4 address (the
     * device layer's own test checks IPv6) */
    std::set<std::string> tcp = tcp_names(m_baseline);
    EXPECT_TRUE(tcp.count("lo"));
    for (const auto &entry : list_interfaces()) {
        if (entry.second.active && entry.second.inet &&
            (entry.first.size() < UCT_DEVICE_NAME_MAX)) {
            EXPECT_TRUE(tcp.count(entry.first)) << entry.first;
        }
        if (!entry.second.active) {
            EXPECT_FALSE(tcp.count(entry.first)) << entry.first;
        }
    }
    for (const net_resource &r : m_baseline) {
        if (r.tl_name == "tcp") {
            EXPECT_EQ(UCT_DEVICE_TYPE_NET, r.dev_type) << r.dev_name;
        }
    }
}

/* ------------------------------------------------------------------------
 * tcp device layer
 */

class tcp_device : public ucs::test {};

TEST_F(tcp_device, query_all_matches_interfaces)
{
    std::vector<uct_tl_device_resource_t> devices = tcp_query_all();
    std::set<std::string> names;

    for (const uct_tl_device_resource_t &dev : devices) {
        EXPECT_TRUE(names.insert(dev.name).second)
            << dev.name << " listed twice";
        EXPECT_EQ(UCT_DEVICE_TYPE_NET, dev.type) << dev.name;
    }
    EXPECT_EQ(expected_tcp_devices(), names);
    EXPECT_TRUE(names.count("lo"));
}

TEST_F(tcp_device, sys_device)
{
    for (const uct_tl_device_resource_t &dev : tcp_query_all()) {
        std::string link =
            std::string("/sys/class/net/") + dev.name + "/device";
        char path[PATH_MAX];
        if (realpath(link.c_str(), path) == NULL) {
            /* virtual: lo, bridges, veth */
            EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, dev.sys_device) << dev.name;
            continue;
        }

        /* a PCI function ("0000:00:03.0") somewhere in the path */
        ucs_sys_bus_id_t bus_id;
        std::string pci;
        for (const char *p = path + 1; *p != '\0'; ++p) {
            unsigned d, b, s, f;
            int n = 0;
            if ((p[-1] == '/') &&
                (sscanf(p, "%4x:%2x:%2x.%1x%n", &d, &b, &s, &f, &n) == 4) &&
                ((p[n] == '/') || (p[n] == '\0'))) {
                pci = std::string(p, n);
            }
        }
        if (pci.empty()) {
            EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, dev.sys_device) << dev.name;
            continue;
        }

        ASSERT_NE(UCS_SYS_DEVICE_ID_UNKNOWN, dev.sys_device)
            << dev.name << " at " << path;
        ASSERT_EQ(UCS_OK, ucs_topo_get_device_bus_id(dev.sys_device, &bus_id));
        char bus_str[32];
        snprintf(bus_str, sizeof(bus_str), UCS_SYS_BUS_ID_FMT,
                 UCS_SYS_BUS_ID_ARG(&bus_id));
        EXPECT_EQ(pci, bus_str) << dev.name;
        EXPECT_EQ(dev.sys_device, uct_tcp_device_sys_device(dev.name));
    }
    EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, uct_tcp_device_sys_device("lo"));
}

TEST_F(tcp_device, get_addr_loopback)
{
    std::map<std::string, if_info> ifs = list_interfaces();
    const int inet[]                   = {AF_INET};
    const int inet6[]                  = {AF_INET6};
    const int inet6_first[]            = {AF_INET6, AF_INET};
    const int inet_first[]             = {AF_INET, AF_INET6};
    struct sockaddr_storage addr;

    ASSERT_TRUE(ifs.count("lo"));
    if (ifs["lo"].inet) {
        ASSERT_EQ(UCS_OK, uct_tcp_device_get_addr("lo", inet, 1, &addr));
        EXPECT_EQ(AF_INET, addr.ss_family);
        EXPECT_EQ("127.0.0.1", addr_str(addr));
        EXPECT_EQ(0, ((struct sockaddr_in *)&addr)->sin_port);
        EXPECT_TRUE(uct_tcp_sockaddr_is_loopback((struct sockaddr *)&addr));

        ASSERT_EQ(UCS_OK, uct_tcp_device_get_addr("lo", inet_first, 2, &addr));
        EXPECT_EQ(AF_INET, addr.ss_family);
    }
    if (ifs["lo"].inet6) {
        ASSERT_EQ(UCS_OK, uct_tcp_device_get_addr("lo", inet6, 1, &addr));
        EXPECT_EQ(AF_INET6, addr.ss_family);
        EXPECT_EQ("::1", addr_str(addr));
        EXPECT_TRUE(uct_tcp_sockaddr_is_loopback((struct sockaddr *)&addr));

        ASSERT_EQ(UCS_OK, uct_tcp_device_get_addr("lo", inet6_first, 2, &addr));
        EXPECT_EQ(AF_INET6, addr.ss_family);
    }
}

TEST_F(tcp_device, get_addr_every_device)
{
    const int inet_first[]             = {AF_INET, AF_INET6};
    const int inet6_first[]            = {AF_INET6, AF_INET};
    std::map<std::string, if_info> ifs = list_interfaces();

    for (const uct_tl_device_resource_t &dev : tcp_query_all()) {
        const if_info &info = ifs[dev.name];
        struct sockaddr_storage addr;

        ASSERT_EQ(UCS_OK,
                  uct_tcp_device_get_addr(dev.name, inet_first, 2, &addr))
            << dev.name;
        EXPECT_EQ(info.inet ? AF_INET : AF_INET6, addr.ss_family) << dev.name;

        ASSERT_EQ(UCS_OK,
                  uct_tcp_device_get_addr(dev.name, inet6_first, 2, &addr))
            << dev.name;
        EXPECT_EQ(info.inet6 ? AF_INET6 : AF_INET, addr.ss_family) << dev.name;
        if (addr.ss_family == AF_INET6) {
            /* link-local addresses need a scope id: never chosen */
            EXPECT_FALSE(IN6_IS_ADDR_LINKLOCAL(
                &((struct sockaddr_in6 *)&addr)->sin6_addr))
                << dev.name << " " << addr_str(addr);
            EXPECT_EQ(0, ((struct sockaddr_in6 *)&addr)->sin6_port);
        }
    }
}

TEST_F(tcp_device, get_addr_errors)
{
    const int inet[]  = {AF_INET};
    const int bad[]   = {AF_UNIX};
    std::string nodev = unique_name("nodev");
    struct sockaddr_storage addr, orig;

    memset(&addr, 0xa5, sizeof(addr));
    orig = addr;

    {
        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        EXPECT_EQ(UCS_ERR_NO_DEVICE,
                  uct_tcp_device_get_addr(nodev.c_str(), inet, 1, &addr));
        EXPECT_EQ(1u, count_lines(capture, start, "'" + nodev + "'"));
    }
    {
        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_tcp_device_get_addr("lo", inet, 0, &addr));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_tcp_device_get_addr("lo", bad, 1, &addr));
        EXPECT_EQ(2u, count_lines(capture, start, "'lo'"));
    }
    /* outputs are set only on success */
    EXPECT_EQ(0, memcmp(&orig, &addr, sizeof(addr)));
}

TEST_F(tcp_device, parse_af_prio)
{
    int af[UCT_TCP_AF_PRIO_MAX];
    unsigned num_af;

    ASSERT_EQ(UCS_OK, uct_tcp_device_parse_af_prio("inet,inet6", af, &num_af));
    ASSERT_EQ(2u, num_af);
    EXPECT_EQ(AF_INET, af[0]);
    EXPECT_EQ(AF_INET6, af[1]);

    ASSERT_EQ(UCS_OK, uct_tcp_device_parse_af_prio("inet6", af, &num_af));
    ASSERT_EQ(1u, num_af);
    EXPECT_EQ(AF_INET6, af[0]);

    ASSERT_EQ(UCS_OK,
              uct_tcp_device_parse_af_prio(" INET6 , inet", af, &num_af));
    ASSERT_EQ(2u, num_af);
    EXPECT_EQ(AF_INET6, af[0]);
    EXPECT_EQ(AF_INET, af[1]);

    const struct {
        const char *value;
        const char *message;
    } bad[] = {{"ipv4,inet6", "unknown address family 'ipv4'"},
               {"inet,inet6x", "unknown address family 'inet6x'"},
               {"inet6,inet6", "'inet6' is listed twice"},
               {"inet,inet6,inet", "'inet' is listed twice"},
               {"", "empty address family"},
               {"inet,", "empty address family"},
               {"inet,,inet6", "empty address family"}};
    for (const auto &b : bad) {
        int out[UCT_TCP_AF_PRIO_MAX] = {-7, -7};
        unsigned num_out             = 77;
        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_tcp_device_parse_af_prio(b.value, out, &num_out))
            << b.value;
        EXPECT_EQ(1u, count_lines(capture, start, b.message)) << b.value;
        EXPECT_EQ(1u, count_lines(capture, start, "inet, inet6"))
            << "accepted names for " << b.value;
        EXPECT_EQ(-7, out[0]);
        EXPECT_EQ(77u, num_out);
    }
}

TEST_F(tcp_device, af_prio_from_names)
{
    int af[UCT_TCP_AF_PRIO_MAX] = {-7, -7};
    unsigned num_af             = 77;
    char inet[] = "inet", inet6[] = "Inet6", ipx[] = "ipx";

    char *good[]                   = {inet6, inet};
    ucs_config_names_array_t names = {good, 2};
    ASSERT_EQ(UCS_OK, uct_tcp_device_af_prio_from_names(&names, af, &num_af));
    ASSERT_EQ(2u, num_af);
    EXPECT_EQ(AF_INET6, af[0]);
    EXPECT_EQ(AF_INET, af[1]);

    const struct {
        std::vector<char *> names;
        const char *message;
    } bad[] = {{{inet, ipx}, "unknown address family 'ipx' in UCX_TCP_AF_PRIO"},
               {{inet, inet}, "'inet' is listed twice in UCX_TCP_AF_PRIO"},
               {{}, "UCX_TCP_AF_PRIO is empty"}};
    for (const auto &b : bad) {
        int out[UCT_TCP_AF_PRIO_MAX] = {-7, -7};
        unsigned num_out             = 77;
        std::vector<char *> list     = b.names;
        ucs_config_names_array_t arr = {list.data(), (unsigned)list.size()};
        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_tcp_device_af_prio_from_names(&arr, out, &num_out))
            << b.message;
        EXPECT_EQ(1u, count_lines(capture, start, b.message));
        EXPECT_EQ(1u, count_lines(capture, start, "inet, inet6"));
        EXPECT_EQ(-7, out[0]);
        EXPECT_EQ(77u, num_out);
    }
}

namespace {

struct af_prio_opts {
    uct_tcp_af_prio_t af_prio;
};

ucs_config_field_t af_prio_table[] = {
    {"AF_PRIO", "inet,inet6", "Address families",
     offsetof(af_prio_opts, af_prio), UCT_TCP_CONFIG_TYPE_AF_PRIO},
    {NULL}};

} // namespace

TEST_F(tcp_device, af_prio_config_type)
{
    af_prio_opts opts;
    char value[64];

    ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, af_prio_table, NULL,
                                                  "NETDEVTEST_", 0));
    ASSERT_EQ(2u, opts.af_prio.count);
    EXPECT_EQ(AF_INET, opts.af_prio.af[0]);
    EXPECT_EQ(AF_INET6, opts.af_prio.af[1]);

    ASSERT_EQ(UCS_OK, ucs_config_parser_set_value(&opts, af_prio_table,
                                                  "AF_PRIO", "inet6"));
    ASSERT_EQ(1u, opts.af_prio.count);
    EXPECT_EQ(AF_INET6, opts.af_prio.af[0]);
    ASSERT_EQ(UCS_OK,
              ucs_config_parser_get_value(&opts, af_prio_table, "AF_PRIO",
                                          value, sizeof(value)));
    EXPECT_STREQ("inet6", value);

    {
        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_config_parser_set_value(&opts, af_prio_table, "AF_PRIO",
                                              "inet,ipx"));
        EXPECT_EQ(1u, count_lines(capture, start, "'inet,ipx'"));
        EXPECT_EQ(1u, count_lines(capture, start, "inet (IPv4), inet6"));
    }
    EXPECT_EQ(1u, opts.af_prio.count) << "a bad value changed the field";

    {
        ucs::scoped_setenv env("UCX_NETDEVTEST_AF_PRIO", "inet6,inet");
        af_prio_opts env_opts;
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&env_opts, af_prio_table,
                                                      NULL, "NETDEVTEST_", 0));
        ASSERT_EQ(2u, env_opts.af_prio.count);
        EXPECT_EQ(AF_INET6, env_opts.af_prio.af[0]);
        EXPECT_EQ(AF_INET, env_opts.af_prio.af[1]);
        ucs_config_parser_release_opts(&env_opts, af_prio_table);
    }
    ucs_config_parser_release_opts(&opts, af_prio_table);
}

TEST_F(tcp_device, estimate)
{
    double latency = 0, bandwidth = 0;

    uct_tcp_device_estimate("lo", 1, &latency, &bandwidth);
    EXPECT_DOUBLE_EQ(UCT_TCP_DEVICE_LOOPBACK_LATENCY, latency);
    EXPECT_DOUBLE_EQ(UCT_TCP_DEVICE_LOOPBACK_BANDWIDTH, bandwidth);
    EXPECT_GE(bandwidth, 1e9);
    EXPECT_GT(latency, 0);

    /* no sysfs entry: the default */
    uct_tcp_device_estimate(unique_name("nodev").c_str(), 0, &latency,
                            &bandwidth);
    EXPECT_DOUBLE_EQ(UCT_TCP_DEVICE_NIC_LATENCY, latency);
    EXPECT_DOUBLE_EQ(10e9 / 8, bandwidth);

    /* every device: the link speed when the system knows it */
    for (const uct_tl_device_resource_t &dev : tcp_query_all()) {
        std::string path = std::string("/sys/class/net/") + dev.name + "/speed";
        long speed       = -1;
        FILE *f          = fopen(path.c_str(), "r");
        if (f != NULL) {
            if (fscanf(f, "%ld", &speed) != 1) {
                speed = -1;
            }
            fclose(f);
        }
        uct_tcp_device_estimate(dev.name, 0, &latency, &bandwidth);
        EXPECT_DOUBLE_EQ(UCT_TCP_DEVICE_NIC_LATENCY, latency) << dev.name;
        if (speed > 0) {
            EXPECT_DOUBLE_EQ(speed * 1e6 / 8, bandwidth) << dev.name;
        } else {
            EXPECT_DOUBLE_EQ(UCT_TCP_DEVICE_NIC_BANDWIDTH, bandwidth)
                << dev.name;
        }
    }
}

TEST_F(tcp_device, sockaddr_is_loopback)
{
    const struct {
        const char *ip;
        int loopback;
    } cases[] = {{"127.0.0.1", 1},
                 {"127.255.3.4", 1},
                 {"126.0.0.1", 0},
                 {"128.0.0.1", 0},
                 {"10.1.2.3", 0},
                 {"0.0.0.0", 0},
                 {"::1", 1},
                 {"::", 0},
                 {"::2", 0},
                 {"fe80::1", 0},
                 {"fd00::2", 0},
                 {"::ffff:127.0.0.1", 1},
                 {"::ffff:10.0.0.1", 0}};
    for (const auto &c : cases) {
        struct sockaddr_storage ss = make_addr(c.ip);
        EXPECT_EQ(c.loopback,
                  uct_tcp_sockaddr_is_loopback((struct sockaddr *)&ss))
            << c.ip;
    }

    struct sockaddr_storage unix_addr;
    memset(&unix_addr, 0, sizeof(unix_addr));
    unix_addr.ss_family = AF_UNIX;
    EXPECT_EQ(0, uct_tcp_sockaddr_is_loopback((struct sockaddr *)&unix_addr));
    EXPECT_EQ(0, uct_tcp_sockaddr_is_loopback(NULL));
}

/* ------------------------------------------------------------------------
 * Interfaces this machine may not have, made in a new network namespace:
 * there, lo is the only interface, down, until brought up. And link
 * speeds, shown through a new mount namespace.
 */

class tcp_device_ns : public ucs::test {
protected:
    /* Runs @a body in a child process in new namespaces @a ns_flags
     * (CLONE_NEWNET, CLONE_NEWNS). The body returns "" on success,
     * "SKIP: why", or what went wrong. */
    static std::string run(int ns_flags,
                           const std::function<std::string()> &body)
    {
        int fds[2];
        if (pipe(fds) != 0) {
            return std::string("pipe: ") + strerror(errno);
        }

        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            return std::string("fork: ") + strerror(errno);
        }

        if (pid == 0) {
            close(fds[0]);
            std::string report;
            if (unshare(ns_flags) != 0) {
                report =
                    std::string("SKIP: no new namespace: ") + strerror(errno);
            } else {
                ucs::scoped_log_capture capture; /* reported by body */
                report = body();
            }
            ssize_t ret = write(fds[1], report.data(), report.size());
            _exit((ret == (ssize_t)report.size()) ? 0 : 1);
        }

        close(fds[1]);
        std::string report;
        char buf[256];
        ssize_t n;
        while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
            report.append(buf, n);
        }
        close(fds[0]);

        int wstatus;
        if (waitpid(pid, &wstatus, 0) != pid) {
            return std::string("waitpid: ") + strerror(errno);
        }
        if (!WIFEXITED(wstatus) || (WEXITSTATUS(wstatus) != 0)) {
            return report + " (child did not exit cleanly: status " +
                   std::to_string(wstatus) + ")";
        }
        return report;
    }

    static void check(const std::string &report)
    {
        if (report.compare(0, 5, "SKIP:") == 0) {
            GTEST_SKIP() << report;
        }
        EXPECT_EQ("", report);
    }

    static std::string lo_set_up(bool up)
    {
        struct ifreq ifr;
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (fd < 0) {
            return std::string("socket: ") + strerror(errno);
        }
        memset(&ifr, 0, sizeof(ifr));
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
        std::string err;
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
            err = std::string("SIOCGIFFLAGS: ") + strerror(errno);
        } else {
            ifr.ifr_flags =
                up ? (ifr.ifr_flags | IFF_UP) : (ifr.ifr_flags & ~IFF_UP);
            if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0) {
                err = std::string("SKIP: SIOCSIFFLAGS: ") + strerror(errno);
            }
        }
        close(fd);
        return err;
    }

    /* Removes the IPv4 address of lo (setting 0.0.0.0 deletes it) */
    static std::string lo_remove_inet()
    {
        struct ifreq ifr;
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (fd < 0) {
            return std::string("socket: ") + strerror(errno);
        }
        memset(&ifr, 0, sizeof(ifr));
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
        struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
        sin->sin_family         = AF_INET;
        sin->sin_addr.s_addr    = htonl(INADDR_ANY);
        std::string err;
        if (ioctl(fd, SIOCSIFADDR, &ifr) != 0) {
            err = std::string("SKIP: SIOCSIFADDR: ") + strerror(errno);
        }
        close(fd);
        return err;
    }

    static std::string lo_disable_inet6()
    {
        int fd = open("/proc/sys/net/ipv6/conf/lo/disable_ipv6", O_WRONLY);
        if (fd < 0) {
            return std::string("SKIP: disable_ipv6: ") + strerror(errno);
        }
        ssize_t ret = write(fd, "1", 1);
        close(fd);
        return (ret == 1) ? "" : "SKIP: cannot disable IPv6 on lo";
    }

    /* Adds (@a add) or deletes an IPv6 address of lo */
    static std::string lo_inet6_addr(bool add, const char *ip,
                                     unsigned prefix_len)
    {
        /* struct in6_ifreq of the kernel, in an area the size of a
         * struct ifreq (what valgrind expects of these requests) */
        struct in6_req {
            struct in6_addr addr;
            uint32_t prefix_len;
            int ifindex;
        };
        union {
            struct in6_req r;
            struct ifreq pad;
        } u;
        memset(&u, 0, sizeof(u));
        if (inet_pton(AF_INET6, ip, &u.r.addr) != 1) {
            return std::string("bad address ") + ip;
        }
        u.r.prefix_len = prefix_len;
        u.r.ifindex    = (int)if_nametoindex("lo");
        int fd         = socket(AF_INET6, SOCK_DGRAM, 0);
        if (fd < 0) {
            return std::string("SKIP: IPv6 socket: ") + strerror(errno);
        }
        std::string err;
        if (ioctl(fd, add ? SIOCSIFADDR : SIOCDIFADDR, &u) != 0) {
            err = std::string("SKIP: ") + (add ? "adding " : "removing ") + ip +
                  ": " + strerror(errno);
        }
        close(fd);
        return err;
    }

    static bool tcp_lists(const std::string &name)
    {
        for (const uct_tl_device_resource_t &dev : tcp_query_all()) {
            if (dev.name == name) {
                return true;
            }
        }
        return false;
    }

    /* Family of the address get_addr chooses, or -status on failure */
    static int chosen_family(const std::vector<int> &prio)
    {
        struct sockaddr_storage addr;
        ucs_status_t status =
            uct_tcp_device_get_addr("lo", prio.data(), prio.size(), &addr);
        return (status == UCS_OK) ? addr.ss_family : (int)status;
    }
};

TEST_F(tcp_device_ns, down_interface)
{
    check(run(CLONE_NEWNET, []() -> std::string {
        if (!list_interfaces().count("lo")) {
            return "SKIP: no lo in the new namespace";
        }
        std::string err = lo_set_up(false);
        if (!err.empty()) {
            return err;
        }
        if (list_interfaces()["lo"].active) {
            return "SKIP: lo is still active";
        }
        if (tcp_lists("lo")) {
            return "lo is down but listed";
        }

        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        if (chosen_family({AF_INET, AF_INET6}) != UCS_ERR_NO_DEVICE) {
            return "get_addr of a down interface did not fail";
        }
        if (count_lines(capture, start, "'lo' is not up") != 1) {
            return "no error saying lo is not up";
        }
        return "";
    }));
}

TEST_F(tcp_device_ns, ipv6_only_interface)
{
    check(run(CLONE_NEWNET, []() -> std::string {
        std::string err = lo_set_up(true);
        if (err.empty()) {
            err = lo_remove_inet();
        }
        if (!err.empty()) {
            return err;
        }
        if_info lo = list_interfaces()["lo"];
        if (!lo.active || lo.inet || !lo.inet6) {
            return "SKIP: could not make lo IPv6-only";
        }

        if (!tcp_lists("lo")) {
            return "IPv6-only lo is not a tcp device";
        }
        if (chosen_family({AF_INET, AF_INET6}) != AF_INET6) {
            return "inet,inet6 did not fall back to inet6";
        }

        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        if (chosen_family({AF_INET}) != UCS_ERR_NO_DEVICE) {
            return "inet on an IPv6-only interface did not fail";
        }
        if (count_lines(capture, start,
                        "'lo' has no address of the families inet") != 1) {
            return "the error does not name lo and inet";
        }

        /* through the API: the tcp transport offers lo */
        std::set<std::string> tcp = tcp_names(query_all_resources());
        if (!tcp.count("lo")) {
            return "uct_md_query_tl_resources does not list the "
                   "IPv6-only lo for tcp";
        }
        return "";
    }));
}

TEST_F(tcp_device_ns, ipv4_only_interface)
{
    check(run(CLONE_NEWNET, []() -> std::string {
        std::string err = lo_set_up(true);
        if (err.empty()) {
            err = lo_disable_inet6();
        }
        if (!err.empty()) {
            return err;
        }
        if_info lo = list_interfaces()["lo"];
        if (!lo.active || !lo.inet || lo.inet6) {
            return "SKIP: could not make lo IPv4-only";
        }

        if (!tcp_lists("lo")) {
            return "IPv4-only lo is not a tcp device";
        }
        if (chosen_family({AF_INET6, AF_INET}) != AF_INET) {
            return "inet6,inet did not fall back to inet";
        }

        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        if (chosen_family({AF_INET6}) != UCS_ERR_NO_DEVICE) {
            return "inet6 on an IPv4-only interface did not fail";
        }
        if (count_lines(capture, start,
                        "'lo' has no address of the families inet6") != 1) {
            return "the error does not name lo and inet6";
        }
        if (count_lines(capture, start, "its usable addresses: inet;") != 1) {
            return "the error does not say which families lo has";
        }
        return "";
    }));
}

TEST_F(tcp_device_ns, link_local_only_interface)
{
    check(run(CLONE_NEWNET, []() -> std::string {
        std::string err = lo_set_up(true);
        if (err.empty()) {
            err = lo_remove_inet();
        }
        if (err.empty()) {
            err = lo_inet6_addr(false, "::1", 128);
        }
        if (err.empty()) {
            err = lo_inet6_addr(true, "fe80::1", 64);
        }
        if (!err.empty()) {
            return err;
        }
        if_info lo = list_interfaces()["lo"];
        if (!lo.active || lo.inet || lo.inet6 || !lo.link_local6) {
            return "SKIP: could not leave lo with a link-local address only";
        }

        /* a link-local address needs a scope id: not usable */
        if (tcp_lists("lo")) {
            return "lo with only a link-local address is listed";
        }

        ucs::scoped_log_capture capture;
        size_t start = capture.messages().size();
        if (chosen_family({AF_INET6, AF_INET}) != UCS_ERR_NO_DEVICE) {
            return "get_addr chose a link-local address";
        }
        if (count_lines(capture, start, "only link-local inet6") != 1) {
            return "the error does not mention the link-local address";
        }
        return "";
    }));
}

TEST_F(tcp_device_ns, estimate_link_speed)
{
    check(run(CLONE_NEWNS, []() -> std::string {
        /* keep the mounts below in this namespace */
        if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0) {
            return std::string("SKIP: private mounts: ") + strerror(errno);
        }

        const char *target = "/sys/class/net/lo/speed";
        const struct {
            const char *speed;
            double bandwidth;
        } cases[] = {{"25000\n", 25000 * 1e6 / 8},
                     {"100\n", 100 * 1e6 / 8},
                     {"-1\n", UCT_TCP_DEVICE_NIC_BANDWIDTH},
                     {"0\n", UCT_TCP_DEVICE_NIC_BANDWIDTH},
                     {"fast\n", UCT_TCP_DEVICE_NIC_BANDWIDTH}};
        for (const auto &c : cases) {
            char path[] = "/tmp/netdev_speed_XXXXXX";
            int fd      = mkstemp(path);
            if (fd < 0) {
                return std::string("mkstemp: ") + strerror(errno);
            }
            ssize_t len = strlen(c.speed);
            bool wrote  = (write(fd, c.speed, len) == len);
            close(fd);
            int ret = wrote ? mount(path, target, "none", MS_BIND, NULL) : -1;
            unlink(path);
            if (!wrote) {
                return "cannot write the speed file";
            }
            if (ret != 0) {
                return std::string("SKIP: bind mount on ") + target + ": " +
                       strerror(errno);
            }

            double latency, bandwidth;
            uct_tcp_device_estimate("lo", 0, &latency, &bandwidth);
            umount(target);
            if ((bandwidth != c.bandwidth) ||
                (latency != UCT_TCP_DEVICE_NIC_LATENCY)) {
                return std::string("speed ") + c.speed + ": bandwidth " +
                       std::to_string(bandwidth) + ", expected " +
                       std::to_string(c.bandwidth) + "; latency " +
                       std::to_string(latency);
            }
        }
        return "";
    }));
}
