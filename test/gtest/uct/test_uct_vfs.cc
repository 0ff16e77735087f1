/*
 * UCT objects in the object tree (uct/base/uct_vfs.h), on every transport:
 * the directories of components, memory domains, workers, interfaces and
 * endpoints appear and disappear with their objects and show what the
 * objects are; the per-interface counters count exactly what was sent and
 * received. Read through the tree API the uct_vfs daemon uses
 * (ucs/vfs/vfs.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h" /* ENABLE_STATS */
#endif

#include "uct_test.h"

extern "C" {
#include <uct/base/uct_iface.h>
#include <uct/base/uct_worker.h>
#include <ucs/vfs/vfs.h>
}

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

const uint8_t AM_ID = 5;

void collect_name(const char *name, void *arg)
{
    static_cast<std::vector<std::string> *>(arg)->push_back(name);
}

/* Entries of a directory, sorted; empty when it does not exist */
std::vector<std::string> vfs_list(const std::string &path)
{
    std::vector<std::string> names;
    ucs_vfs_path_list_dir(path.c_str(), collect_name, &names);
    std::sort(names.begin(), names.end());
    return names;
}

bool vfs_exists(const std::string &path)
{
    ucs_vfs_path_info_t info;
    return ucs_vfs_path_get_info(path.c_str(), &info) == UCS_OK;
}

bool vfs_is_dir(const std::string &path)
{
    ucs_vfs_path_info_t info;
    return (ucs_vfs_path_get_info(path.c_str(), &info) == UCS_OK) &&
           (info.type == UCS_VFS_NODE_TYPE_DIR);
}

std::string vfs_read(const std::string &path)
{
    ucs_string_buffer_t strb;
    ucs_string_buffer_init(&strb);
    ucs_status_t status = ucs_vfs_path_read_file(path.c_str(), &strb);
    EXPECT_EQ(UCS_OK, status) << "reading " << path;
    std::string content = ucs_string_buffer_cstr(&strb);
    ucs_string_buffer_cleanup(&strb);
    return content;
}

std::vector<std::string> split_lines(const std::string &s)
{
    std::vector<std::string> lines;
    std::stringstream ss(s);
    std::string line;
    while (std::getline(ss, line)) {
        lines.push_back(line);
    }
    return lines;
}

bool has_line(const std::string &content, const std::string &line)
{
    std::vector<std::string> lines = split_lines(content);
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

/* The absolute path a link at @a link_path points to, ".." resolved */
std::string vfs_resolve_link(const std::string &link_path)
{
    ucs_string_buffer_t strb;
    ucs_string_buffer_init(&strb);
    ucs_status_t status = ucs_vfs_path_get_link(link_path.c_str(), &strb);
    EXPECT_EQ(UCS_OK, status) << "reading the link " << link_path;
    std::string target = ucs_string_buffer_cstr(&strb);
    ucs_string_buffer_cleanup(&strb);

    std::vector<std::string> comps;
    std::string dir = link_path.substr(0, link_path.rfind('/'));
    for (const std::string &s : {dir, target}) {
        std::stringstream ss(s);
        std::string comp;
        while (std::getline(ss, comp, '/')) {
            if (comp.empty() || (comp == ".")) {
                continue;
            } else if (comp == "..") {
                if (!comps.empty()) {
                    comps.pop_back();
                }
            } else {
                comps.push_back(comp);
            }
        }
    }

    std::string path;
    for (const std::string &comp : comps) {
        path += "/" + comp;
    }
    return path;
}

uint64_t to_u64(const std::string &s)
{
    return std::stoull(s);
}

/* bcopy pack callback: the bytes of the std::string @a arg */
size_t pack_string(void *dest, void *arg)
{
    const std::string *data = static_cast<const std::string *>(arg);
    memcpy(dest, data->data(), data->size());
    return data->size();
}

/* The vfs shows the objects of this process: every receiver is here */
uct_test::entity_params local_receiver()
{
    uct_test::entity_params params;
    params.local_only = true;
    return params;
}

} // namespace

class uct_vfs : public uct_test {
protected:
    typedef std::map<std::string, uint64_t> counters_t;

    static std::string worker_dir(const entity &e)
    {
        return "/uct/worker/" + std::to_string(uct_worker_priv(e.worker())->id);
    }

    /* Each entity has its own worker with its one interface */
    static std::string iface_dir(const entity &e)
    {
        std::vector<std::string> ifaces = vfs_list(worker_dir(e) + "/iface");
        EXPECT_EQ(1u, ifaces.size()) << worker_dir(e);
        return ifaces.empty() ? std::string("/none")
                              : worker_dir(e) + "/iface/" + ifaces[0];
    }

    static std::vector<std::string> ep_dirs(const entity &e)
    {
        return vfs_list(iface_dir(e) + "/ep");
    }

    /* The "name value" lines of a file (values that are numbers) */
    static counters_t read_values(const std::string &path)
    {
        counters_t values;
        for (const std::string &line : split_lines(vfs_read(path))) {
            size_t sp = line.find(' ');
            if ((sp != std::string::npos) &&
                (line.find_first_not_of("0123456789", sp + 1) ==
                 std::string::npos)) {
                values[line.substr(0, sp)] = to_u64(line.substr(sp + 1));
            }
        }
        return values;
    }

    /* None when counters are compiled out */
    static counters_t read_counters(const entity &e)
    {
        return read_values(iface_dir(e) + "/counters");
    }

    static std::string am_counter(uint8_t id, const std::string &name)
    {
        return "am." + std::to_string(id) + "." + name;
    }

    /* The new entry of @a after that @a before lacks */
    static std::string new_entry(const std::vector<std::string> &before,
                                 const std::vector<std::string> &after)
    {
        std::vector<std::string> diff;
        std::set_difference(after.begin(), after.end(), before.begin(),
                            before.end(), std::back_inserter(diff));
        EXPECT_EQ(1u, diff.size());
        return diff.empty() ? std::string() : diff[0];
    }

    /* Sends @a count messages of each AM mode the sender has (short with
     * @a short_len payload bytes, bcopy of @a bcopy_len); returns the
     * bytes the receiver's handler gets, and sets @a num_msgs. */
    uint64_t send_ams(const pair &p, unsigned count, size_t short_len,
                      size_t bcopy_len, uint64_t *num_msgs);

    static void unpack_bytes(void *arg, const void *data, size_t length)
    {
        memcpy(arg, data, length);
    }

    static ucs_status_t err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
    {
        ++*static_cast<int *>(arg);
        return UCS_OK;
    }
};

uint64_t uct_vfs::send_ams(const pair &p, unsigned count, size_t short_len,
                           size_t bcopy_len, uint64_t *num_msgs)
{
    std::string payload(std::max(short_len, bcopy_len), 'x');
    std::string bcopy_data(bcopy_len, 'y');
    uint64_t bytes = 0;

    *num_msgs = 0;
    for (unsigned i = 0; i < count; ++i) {
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            ssize_t ret = retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_am_short(p.ep, AM_ID, i,
                                                    payload.data(), short_len);
                },
                "uct_ep_am_short");
            EXPECT_EQ(UCS_OK, ret);
            bytes += sizeof(uint64_t) + short_len;
            ++*num_msgs;
        }
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY)) {
            ssize_t ret = retry_no_resource(
                [&] {
                    return uct_ep_am_bcopy(p.ep, AM_ID, pack_string,
                                           &bcopy_data, 0);
                },
                "uct_ep_am_bcopy");
            EXPECT_EQ((ssize_t)bcopy_len, ret);
            bytes += bcopy_len;
            ++*num_msgs;
        }
    }
    return bytes;
}

TEST_P(uct_vfs, component_dir)
{
    entity *e       = create_entity();
    std::string dir = "/uct/component/" + res().component_name;

    ASSERT_TRUE(vfs_is_dir(dir)) << dir;
    EXPECT_EQ(res().component_name + "\n", vfs_read(dir + "/name"));
    EXPECT_TRUE(vfs_exists(dir + "/flags"));
    EXPECT_GE(to_u64(vfs_read(dir + "/md_resources")), 1u);
    (void)e;
}

TEST_P(uct_vfs, worker_dir)
{
    entity *e       = create_entity();
    std::string dir = worker_dir(*e);

    ASSERT_TRUE(vfs_is_dir(dir)) << dir;
    EXPECT_EQ("single\n", vfs_read(dir + "/thread_mode"));
    EXPECT_EQ("1\n", vfs_read(dir + "/num_ifaces"));
}

TEST_P(uct_vfs, iface_dir_shows_the_iface)
{
    entity *e                    = create_entity();
    const uct_iface_attr_t &attr = e->iface_attr();
    std::string dir              = iface_dir(*e);

    EXPECT_EQ(res().tl_name + "\n", vfs_read(dir + "/transport"));
    EXPECT_EQ(res().dev_name + "\n", vfs_read(dir + "/device"));

    std::string caps = vfs_read(dir + "/capabilities");
    EXPECT_EQ(e->has_cap(UCT_IFACE_FLAG_AM_SHORT), has_line(caps, "am_short"))
        << caps;
    EXPECT_EQ(e->has_cap(UCT_IFACE_FLAG_AM_BCOPY), has_line(caps, "am_bcopy"))
        << caps;
    EXPECT_EQ(e->has_cap(UCT_IFACE_FLAG_PUT_SHORT), has_line(caps, "put_short"))
        << caps;
    EXPECT_EQ(e->has_cap(UCT_IFACE_FLAG_CONNECT_TO_IFACE),
              has_line(caps, "connect_to_iface"))
        << caps;
    EXPECT_EQ(e->has_cap(UCT_IFACE_FLAG_CONNECT_TO_EP),
              has_line(caps, "connect_to_ep"))
        << caps;
    /* one flag per line, every set bit named */
    EXPECT_EQ((size_t)__builtin_popcountll(attr.cap.flags),
              split_lines(caps).size())
        << caps;

    if (e->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
        EXPECT_EQ(attr.cap.am.max_short,
                  to_u64(vfs_read(dir + "/am/max_short")));
    }
    if (e->has_cap(UCT_IFACE_FLAG_AM_BCOPY)) {
        EXPECT_EQ(attr.cap.am.max_bcopy,
                  to_u64(vfs_read(dir + "/am/max_bcopy")));
    }
    EXPECT_EQ(e->has_cap(UCT_IFACE_FLAG_PUT_SHORT),
              vfs_exists(dir + "/put/max_short"));

    std::string address = vfs_read(dir + "/address");
    EXPECT_FALSE(address.empty());
    if (res().tl_name == "tcp") {
        uint16_t port;
        memcpy(&port, e->iface_addr().data(), sizeof(port));
        std::string suffix = ":" + std::to_string(ntohs(port)) + "\n";
        ASSERT_GE(address.size(), suffix.size()) << address;
        EXPECT_EQ(suffix, address.substr(address.size() - suffix.size()))
            << address;
    }

    EXPECT_EQ("0\n", vfs_read(dir + "/num_eps"));
    EXPECT_TRUE(vfs_exists(dir + "/am_handlers"));
    EXPECT_TRUE(vfs_exists(dir + "/counters"));
}

TEST_P(uct_vfs, memory_domain_link_resolves_to_the_md)
{
    entity *e          = create_entity();
    std::string md_dir = vfs_resolve_link(iface_dir(*e) + "/memory_domain");
    std::string prefix = "/uct/md/" + res().md_name;

    ASSERT_EQ(prefix, md_dir.substr(0, prefix.size())) << md_dir;
    ASSERT_TRUE(vfs_is_dir(md_dir)) << md_dir;
    EXPECT_EQ((e->md_attr().cap.flags & UCT_MD_FLAG_REG) != 0,
              has_line(vfs_read(md_dir + "/flags"), "reg"));
    EXPECT_EQ(e->md_attr().rkey_packed_size,
              to_u64(vfs_read(md_dir + "/rkey_packed_size")));
    EXPECT_TRUE(vfs_exists(md_dir + "/reg_cost"));
    EXPECT_TRUE(vfs_exists(md_dir + "/max_reg"));
    EXPECT_EQ("/uct/component/" + res().component_name,
              vfs_resolve_link(md_dir + "/component"));
}

TEST_P(uct_vfs, md_dirs_are_unique_and_go_with_the_md)
{
    uct_component_h component = find_component(res().component_name);
    ASSERT_NE(nullptr, component);
    std::vector<std::string> before = vfs_list("/uct/md");

    uct_md_config_t *config;
    ASSERT_EQ(UCS_OK, uct_md_config_read(component, NULL, NULL, &config));
    uct_md_h md1, md2;
    ASSERT_EQ(UCS_OK,
              uct_md_open(component, res().md_name.c_str(), config, &md1));
    ASSERT_EQ(UCS_OK,
              uct_md_open(component, res().md_name.c_str(), config, &md2));
    uct_config_release(config);

    std::vector<std::string> with_two = vfs_list("/uct/md");
    std::vector<std::string> added;
    std::set_difference(with_two.begin(), with_two.end(), before.begin(),
                        before.end(), std::back_inserter(added));
    ASSERT_EQ(2u, added.size());
    for (const std::string &name : added) {
        EXPECT_EQ(0u, name.find(res().md_name)) << name;
    }

    uct_md_close(md1);
    EXPECT_EQ(with_two.size() - 1, vfs_list("/uct/md").size());
    uct_md_close(md2);
    EXPECT_EQ(before, vfs_list("/uct/md"));
}

TEST_P(uct_vfs, iface_dir_goes_with_the_iface)
{
    entity *e        = create_entity();
    std::string wdir = worker_dir(*e);
    std::string dir  = iface_dir(*e);

    ASSERT_TRUE(vfs_is_dir(dir));
    reset_entities();
    EXPECT_FALSE(vfs_exists(dir)) << dir;
    EXPECT_FALSE(vfs_exists(wdir)) << wdir;
}

TEST_P(uct_vfs, am_handlers_lists_the_ids_set)
{
    entity *e        = create_entity();
    std::string file = iface_dir(*e) + "/am_handlers";

    EXPECT_EQ("", vfs_read(file));
    install_recorder(*e, 3);
    install_recorder(*e, 17);
    std::vector<std::string> lines = split_lines(vfs_read(file));
    ASSERT_EQ(2u, lines.size());
    EXPECT_EQ(0u, lines[0].find("3 ")) << lines[0];
    EXPECT_EQ(0u, lines[1].find("17 ")) << lines[1];
}

TEST_P(uct_vfs, ep_dirs_come_and_go_with_eps)
{
    UCT_TEST_INIT_PAIRS(local_receiver(), false);
    const pair &p                = m_pairs.at(0);
    std::vector<std::string> eps = ep_dirs(*p.sender);

    ASSERT_EQ(1u, eps.size());
    std::string dir = iface_dir(*p.sender) + "/ep/" + eps[0];
    for (const char *name :
         {"peer", "state", "tx_queue", "pending", "last_error"}) {
        EXPECT_TRUE(vfs_exists(dir + "/" + name)) << dir << "/" << name;
    }
    EXPECT_EQ("none\n", vfs_read(dir + "/last_error"));
    EXPECT_EQ("0\n", vfs_read(dir + "/pending"));
    EXPECT_EQ("1\n", vfs_read(iface_dir(*p.sender) + "/num_eps"));

    /* a second ep gets its own directory */
    uct_ep_h ep2 = p.sender->connect_to(*p.receiver);
    ASSERT_NE(nullptr, ep2);
    std::vector<std::string> eps2 = ep_dirs(*p.sender);
    ASSERT_EQ(2u, eps2.size());
    std::string dir2 = new_entry(eps, eps2);

    p.sender->destroy_ep(ep2);
    EXPECT_FALSE(vfs_exists(iface_dir(*p.sender) + "/ep/" + dir2));
    EXPECT_EQ(eps, ep_dirs(*p.sender));
}

TEST_P(uct_vfs, ep_state_after_traffic)
{
    UCT_TEST_INIT_PAIRS(local_receiver(), false);
    const pair &p    = m_pairs.at(0);
    am_recorder &rec = install_recorder(*p.receiver, AM_ID);
    uint64_t num_msgs;

    send_ams(p, 1, 8, 8, &num_msgs);
    wait_for([&] { return rec.count() >= num_msgs; }, "messages");
    flush_ep(*p.sender, p.ep);

    std::string dir = iface_dir(*p.sender) + "/ep/" + ep_dirs(*p.sender)[0];
    EXPECT_EQ("connected\n", vfs_read(dir + "/state"));
    /* after a flush every figure of the send queue is 0 (tcp and self:
     * bytes and zcopy sends; rc: requests and operations) */
    std::vector<std::string> txq = split_lines(vfs_read(dir + "/tx_queue"));
    EXPECT_EQ(2u, txq.size());
    for (const std::string &line : txq) {
        EXPECT_EQ(line.size() - 2, line.rfind(" 0")) << line;
    }
    EXPECT_NE(std::string::npos,
              vfs_read(dir + "/peer").find_first_not_of(" \n"));
}

/* With the tree off (UCX_VFS_ENABLE=n, the default), an iface gets no
 * directory and its eps none: no memory or lock per connection */
TEST_P(uct_vfs, tree_off_gives_ifaces_and_eps_nothing)
{
    struct enable_again {
        ~enable_again()
        {
            ucs_vfs_set_enabled(1);
        }
    } guard;

    ucs_vfs_set_enabled(0);
    UCT_TEST_INIT_PAIRS(local_receiver(), false);
    const pair &p = m_pairs.at(0);

    for (const entity *e : {p.sender, p.receiver}) {
        EXPECT_EQ(nullptr, uct_base_iface(e->iface())->vfs);
        EXPECT_FALSE(vfs_exists(worker_dir(*e))) << worker_dir(*e);
        EXPECT_FALSE(uct_base_iface(e->iface())->stats_on);
    }

    /* self's am_short, the cheapest message, then goes uncounted */
    if (res().tl_name == "self") {
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        uint64_t payload = 7;
        ASSERT_EQ(UCS_OK,
                  uct_ep_am_short(p.ep, AM_ID, 1, &payload, sizeof(payload)));
        wait_for([&] { return rec.count() >= 1; }, "the message");
        const uct_iface_am_stats_t &tx =
            uct_base_iface(p.sender->iface())->am[AM_ID].stats;
        const uct_iface_am_stats_t &rx =
            uct_base_iface(p.receiver->iface())->am[AM_ID].stats;
        EXPECT_EQ(0u, tx.tx_msgs) << "am_short was counted";
        EXPECT_EQ(0u, rx.rx_msgs) << "am_short was counted";
    }

    /* an iface made while off stays out, with every ep made later */
    ucs_vfs_set_enabled(1);
    uct_ep_h ep2 = p.sender->connect_to(*p.receiver);
    ASSERT_NE(nullptr, ep2);
    EXPECT_EQ(nullptr, uct_base_iface(p.sender->iface())->vfs);
    EXPECT_FALSE(vfs_exists(worker_dir(*p.sender)));
    p.sender->destroy_ep(ep2);
}

UCT_INSTANTIATE_TEST_SUITE(uct_vfs);

/* ------------------------------------------------------------------------
 * Counters
 */

class uct_vfs_counters : public uct_vfs {
protected:
    void SetUp() override
    {
        uct_vfs::SetUp();
#ifndef ENABLE_STATS
        GTEST_SKIP() << "counters are compiled out (configure "
                     << "--disable-stats)";
#endif
    }
};

TEST_P(uct_vfs_counters, am_messages_and_bytes_exact)
{
    UCT_TEST_INIT_PAIRS(local_receiver());
    if (!m_pairs[0].sender->has_cap(UCT_IFACE_FLAG_AM_SHORT) &&
        !m_pairs[0].sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY) &&
        !m_pairs[0].sender->has_cap(UCT_IFACE_FLAG_AM_ZCOPY)) {
        GTEST_SKIP() << GetParam().tl_name << " has no active messages";
    }

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec        = install_recorder(*p.receiver, AM_ID);
        counters_t tx_before    = read_counters(*p.sender);
        counters_t rx_before    = read_counters(*p.receiver);
        size_t delivered_before = rec.count();
        const unsigned count    = 20;
        uint64_t num_msgs;

        uint64_t bytes = send_ams(p, count, 24, 100, &num_msgs);
        ASSERT_GT(num_msgs, 0u);
        wait_for([&] { return rec.count() >= delivered_before + num_msgs; },
                 "messages");
        flush_ep(*p.sender, p.ep);

        counters_t tx = read_counters(*p.sender);
        counters_t rx = read_counters(*p.receiver);
        EXPECT_EQ(num_msgs, tx[am_counter(AM_ID, "tx_msgs")] -
                                tx_before[am_counter(AM_ID, "tx_msgs")]);
        EXPECT_EQ(bytes, tx[am_counter(AM_ID, "tx_bytes")] -
                             tx_before[am_counter(AM_ID, "tx_bytes")]);
        EXPECT_EQ(num_msgs, rx[am_counter(AM_ID, "rx_msgs")] -
                                rx_before[am_counter(AM_ID, "rx_msgs")]);
        EXPECT_EQ(bytes, rx[am_counter(AM_ID, "rx_bytes")] -
                             rx_before[am_counter(AM_ID, "rx_bytes")]);
        EXPECT_EQ(0u, tx["tx_errors"]);
        EXPECT_EQ(0u, tx["peer_failures"]);
    }
}

TEST_P(uct_vfs_counters, only_active_ids_listed)
{
    UCT_TEST_INIT_PAIRS(local_receiver(), false);
    const pair &p = m_pairs.at(0);

    counters_t before = read_counters(*p.receiver);
    EXPECT_EQ(0u, before.count(am_counter(AM_ID, "rx_msgs")));
    install_recorder(*p.receiver, AM_ID);
    counters_t after = read_counters(*p.receiver);
    EXPECT_EQ(1u, after.count(am_counter(AM_ID, "rx_msgs")));
    EXPECT_EQ(0u, after[am_counter(AM_ID, "rx_msgs")]);
    EXPECT_EQ(0u, after.count(am_counter(AM_ID + 1, "rx_msgs")));
    for (const char *name :
         {"put.msgs", "put.bytes", "get.msgs", "get.bytes", "tx_no_resource",
          "tx_retries", "conn_retries", "tx_errors", "peer_failures"}) {
        EXPECT_EQ(1u, after.count(name)) << name;
    }
}

TEST_P(uct_vfs_counters, put_and_get_exact)
{
    UCT_TEST_INIT_PAIRS(local_receiver(), false);
    const pair &p        = m_pairs.at(0);
    const size_t length  = 16;
    const unsigned count = 5;
    mapped_buffer remote(length, *p.receiver);
    std::vector<char> local(length, 'p');
    counters_t before = read_counters(*p.sender);
    uint64_t puts = 0, gets = 0;

    for (unsigned i = 0; i < count; ++i) {
        if (p.sender->has_cap(UCT_IFACE_FLAG_PUT_SHORT)) {
            ASSERT_EQ(UCS_OK, retry_no_resource(
                                  [&] {
                                      return (ssize_t)uct_ep_put_short(
                                          p.ep, local.data(), length,
                                          remote.addr(), remote.rkey());
                                  },
                                  "uct_ep_put_short"));
            ++puts;
        }
        if (p.sender->has_cap(UCT_IFACE_FLAG_GET_BCOPY)) {
            counted_completion comp;
            ucs_status_t status = (ucs_status_t)retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_get_bcopy(
                        p.ep, unpack_bytes, local.data(), length, remote.addr(),
                        remote.rkey(), comp);
                },
                "uct_ep_get_bcopy");
            wait_completion(status, comp, "uct_ep_get_bcopy");
            ++gets;
        }
    }
    flush_ep(*p.sender, p.ep);

    counters_t after = read_counters(*p.sender);
    EXPECT_EQ(puts, after["put.msgs"] - before["put.msgs"]);
    EXPECT_EQ(puts * length, after["put.bytes"] - before["put.bytes"]);
    EXPECT_EQ(gets, after["get.msgs"] - before["get.msgs"]);
    EXPECT_EQ(gets * length, after["get.bytes"] - before["get.bytes"]);
}

UCT_INSTANTIATE_TEST_SUITE(uct_vfs_counters);

/* With --disable-stats the file says so instead of showing zeros */
class uct_vfs_no_counters : public uct_vfs {};

TEST_P(uct_vfs_no_counters, counters_file_says_disabled)
{
#ifdef ENABLE_STATS
    GTEST_SKIP() << "counters are compiled in (configure without "
                 << "--disable-stats)";
#else
    entity *e = create_entity();
    EXPECT_EQ("disabled (configure --disable-stats)\n",
              vfs_read(iface_dir(*e) + "/counters"));
#endif
}

UCT_INSTANTIATE_TEST_SUITE(uct_vfs_no_counters);

/* ------------------------------------------------------------------------
 * tcp: connections accepted on the passive side, and peer failure
 */

class uct_vfs_tcp : public uct_vfs {
protected:
    void SetUp() override
    {
        uct_vfs::SetUp();
        if (res().tl_name != "tcp") {
            GTEST_SKIP() << "tcp only";
        }
    }
};

TEST_P(uct_vfs_tcp, accepted_connection_has_an_ep_dir)
{
    UCT_TEST_INIT_PAIRS(local_receiver(), false);
    const pair &p    = m_pairs.at(0);
    am_recorder &rec = install_recorder(*p.receiver, AM_ID);
    uint64_t num_msgs;

    EXPECT_TRUE(ep_dirs(*p.receiver).empty());
    send_ams(p, 1, 8, 8, &num_msgs);
    wait_for([&] { return rec.count() >= num_msgs; }, "messages");

    std::vector<std::string> eps = ep_dirs(*p.receiver);
    ASSERT_EQ(1u, eps.size());
    std::string dir  = iface_dir(*p.receiver) + "/ep/" + eps[0];
    std::string peer = vfs_read(dir + "/peer");
    EXPECT_NE(std::string::npos, peer.find(" (accepted)")) << peer;
    EXPECT_EQ("connected\n", vfs_read(dir + "/state"));

    /* the sender closes: the accepted connection ends and its ep goes */
    p.sender->destroy_ep(p.ep);
    m_pairs.clear();
    wait_for([&] { return !vfs_exists(dir); },
             "the accepted ep's directory to go");
    EXPECT_TRUE(ep_dirs(*p.receiver).empty());
}

TEST_P(uct_vfs_tcp, peer_failure_shows_in_ep_and_counters)
{
    int failures = 0;
    entity_params params;
    params.err_handler     = err_handler;
    params.err_handler_arg = &failures;
    entity *sender         = create_entity(params);
    entity *receiver       = create_entity();
    am_recorder &rec       = install_recorder(*receiver, AM_ID);
    uct_ep_h ep            = sender->connect_to(*receiver);
    ASSERT_NE(nullptr, ep);
    pair p = {"two-ifaces", sender, receiver, ep};
    uint64_t num_msgs;

    send_ams(p, 1, 8, 8, &num_msgs);
    wait_for([&] { return rec.count() >= num_msgs; }, "messages");
    std::string dir = iface_dir(*sender) + "/ep/" + ep_dirs(*sender)[0];

    /* the receiver goes away: the sender's connection fails */
    m_entities.erase(std::find_if(
        m_entities.begin(), m_entities.end(),
        [&](const std::unique_ptr<entity> &e) { return e.get() == receiver; }));
    wait_for([&] { return failures > 0; }, "the error handler");

    EXPECT_EQ("failed\n", vfs_read(dir + "/state"));
    EXPECT_NE("none\n", vfs_read(dir + "/last_error"));
#ifdef ENABLE_STATS
    EXPECT_EQ(1u, read_counters(*sender)["peer_failures"]);
#endif
}

namespace {

/* A pending request that sends one bcopy AM */
struct send_req {
    uct_pending_req_t uct; /* keep first */
    uct_ep_h ep;
    std::string *data;
    bool sent;
};

ucs_status_t send_req_cb(uct_pending_req_t *self)
{
    send_req *req = reinterpret_cast<send_req *>(self);
    ssize_t ret   = uct_ep_am_bcopy(req->ep, AM_ID, pack_string, req->data, 0);

    if (ret == UCS_ERR_NO_RESOURCE) {
        return UCS_ERR_NO_RESOURCE;
    }
    EXPECT_GE(ret, 0) << ucs_status_string((ucs_status_t)ret);
    req->sent = true;
    return UCS_OK;
}

void count_purged(uct_pending_req_t *self, void *arg)
{
    ++*static_cast<unsigned *>(arg);
}

} // namespace

/* A socket the receiver does not drain: the ep shows what waits in its
 * queue and how many requests are pending, and the counts go back to 0
 * when the queue drains (dispatch) or is purged. */
TEST_P(uct_vfs_tcp, full_socket_shows_queue_and_pending)
{
    UCT_TEST_INIT_PAIRS(local_receiver(), false);
    const pair &p    = m_pairs.at(0);
    am_recorder &rec = install_recorder(*p.receiver, AM_ID);
    uint64_t num_msgs;

    send_ams(p, 1, 8, 8, &num_msgs);
    wait_for([&] { return rec.count() >= num_msgs; }, "messages");
    flush_ep(*p.sender, p.ep);
    std::string dir   = iface_dir(*p.sender) + "/ep/" + ep_dirs(*p.sender)[0];
    counters_t before = read_counters(*p.sender);

    /* fill the socket without letting the receiver read */
    const size_t length = 60 * 1024;
    const int max_msgs  = 4096;
    mapped_buffer buf(length, *p.sender);
    uct_iov_t iov = buf.iov(0, length);
    std::vector<counted_completion> comps(max_msgs);
    ucs_status_t status;
    int posted = 0;
    do {
        status =
            uct_ep_am_zcopy(p.ep, AM_ID, NULL, 0, &iov, 1, 0, comps[posted]);
        if (!UCS_STATUS_IS_ERR(status)) {
            ++posted;
        }
    } while ((status != UCS_ERR_NO_RESOURCE) && (posted < max_msgs));
    ASSERT_EQ(UCS_ERR_NO_RESOURCE, status) << "the socket never filled";
    counters_t queue = read_values(dir + "/tx_queue");
    EXPECT_GT(queue["bytes"] + queue["zcopy_sends"], 0u);
    EXPECT_EQ(queue["bytes"],
              to_u64(vfs_read(iface_dir(*p.sender) + "/tx_queued_bytes")));

    const unsigned num_reqs = 3;
    std::string data(100, 'q');
    std::vector<send_req> reqs(num_reqs);
    for (send_req &req : reqs) {
        memset(&req.uct, 0, sizeof(req.uct));
        req.uct.func = send_req_cb;
        req.ep       = p.ep;
        req.data     = &data;
        req.sent     = false;
        ASSERT_EQ(UCS_OK, uct_ep_pending_add(p.ep, &req.uct, 0));
    }
    EXPECT_EQ(std::to_string(num_reqs) + "\n", vfs_read(dir + "/pending"));

    unsigned purged = 0;
    uct_ep_pending_purge(p.ep, count_purged, &purged);
    EXPECT_EQ(num_reqs, purged);
    EXPECT_EQ("0\n", vfs_read(dir + "/pending"));

    for (send_req &req : reqs) {
        ASSERT_EQ(UCS_OK, uct_ep_pending_add(p.ep, &req.uct, 0));
    }
    EXPECT_EQ(std::to_string(num_reqs) + "\n", vfs_read(dir + "/pending"));

#ifdef ENABLE_STATS
    counters_t full = read_counters(*p.sender);
    EXPECT_GE(full["tx_no_resource"] - before["tx_no_resource"], 1u);
    EXPECT_GE(full["tx_retries"] - before["tx_retries"], 1u);
#endif

    wait_for(
        [&] {
            return std::all_of(reqs.begin(), reqs.end(),
                               [](const send_req &r) { return r.sent; });
        },
        "the pending requests to be sent");
    EXPECT_EQ("0\n", vfs_read(dir + "/pending"));
    wait_for([&] { return rec.count() >= num_msgs + posted + num_reqs; },
             "every message");
    flush_ep(*p.sender, p.ep);
    EXPECT_EQ("bytes 0\nzcopy_sends 0\n", vfs_read(dir + "/tx_queue"));
    EXPECT_EQ("0\n", vfs_read(iface_dir(*p.sender) + "/tx_queued_bytes"));
}

UCT_INSTANTIATE_TEST_SUITE(uct_vfs_tcp);
