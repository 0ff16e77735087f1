/*
 * Object tree (ucs/vfs/vfs.h): adding, reading, listing, links, removal,
 * bad input, threads and fork; and the process side of the uct_vfs daemon
 * connection (vfs_conn.h) against a fake daemon run by the test.
 */
#include <common/test.h>

extern "C" {
#include <ucs/config/global_opts.h>
#include <ucs/vfs/vfs.h>
#include <ucs/vfs/vfs_conn.h>
#include <ucs/vfs/vfs_sock.h>
}

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <poll.h>
#include <set>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

/* A stand-in for a transport object: the show callbacks read its fields */
struct fake_obj {
    uint64_t counter = 0;
    char pad[8]; /* distinct addresses for the objects of an array */
};

void show_counter(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                  uint64_t arg_u64)
{
    const fake_obj *o = static_cast<const fake_obj *>(obj);
    const char *label = static_cast<const char *>(arg_ptr);

    ucs_string_buffer_appendf(
        strb, "%s %lu %lu\n", (label == NULL) ? "-" : label,
        (unsigned long)o->counter, (unsigned long)arg_u64);
}

void collect_name(const char *name, void *arg)
{
    static_cast<std::vector<std::string> *>(arg)->push_back(name);
}

} // namespace

class ucs_vfs : public ucs::test {
protected:
    static std::vector<std::string> list(const std::string &path)
    {
        std::vector<std::string> names;
        ucs_status_t status =
            ucs_vfs_path_list_dir(path.c_str(), collect_name, &names);
        EXPECT_EQ(UCS_OK, status) << path;
        std::sort(names.begin(), names.end());
        return names;
    }

    static std::string read(const std::string &path)
    {
        ucs_string_buffer_t strb;
        ucs_string_buffer_init(&strb);
        ucs_status_t status = ucs_vfs_path_read_file(path.c_str(), &strb);
        EXPECT_EQ(UCS_OK, status) << path;
        std::string result = ucs_string_buffer_cstr(&strb);
        ucs_string_buffer_cleanup(&strb);
        return result;
    }

    static std::string readlink(const std::string &path)
    {
        ucs_string_buffer_t strb;
        ucs_string_buffer_init(&strb);
        ucs_status_t status = ucs_vfs_path_get_link(path.c_str(), &strb);
        EXPECT_EQ(UCS_OK, status) << path;
        std::string result = ucs_string_buffer_cstr(&strb);
        ucs_string_buffer_cleanup(&strb);
        return result;
    }

    static bool exists(const std::string &path)
    {
        ucs_vfs_path_info_t info;
        return ucs_vfs_path_get_info(path.c_str(), &info) == UCS_OK;
    }

    static ucs_vfs_path_info_t info(const std::string &path)
    {
        ucs_vfs_path_info_t info;
        memset(&info, 0xff, sizeof(info));
        EXPECT_EQ(UCS_OK, ucs_vfs_path_get_info(path.c_str(), &info)) << path;
        return info;
    }

    /* The path names one expected error line, which must be logged */
    static void expect_add_dir_error(void *parent, void *obj, const char *path,
                                     ucs_status_t expected)
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(expected, ucs_vfs_obj_add_dir(parent, obj, "%s", path))
            << path;
        EXPECT_TRUE(capture.contains("vfs")) << path;
    }
};

TEST_F(ucs_vfs, add_dir_makes_implicit_parents_that_vanish)
{
    fake_obj md;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &md, "vfs_t1/md/%s", "tcp"));
    EXPECT_EQ(UCS_VFS_NODE_TYPE_DIR, info("/vfs_t1").type);
    EXPECT_EQ(1u, info("/vfs_t1").size);
    EXPECT_EQ(std::vector<std::string>{"md"}, list("/vfs_t1"));
    EXPECT_EQ(std::vector<std::string>{"tcp"}, list("/vfs_t1/md"));
    EXPECT_EQ(0u, info("/vfs_t1/md/tcp").size);
    std::vector<std::string> root = list("/");
    EXPECT_NE(root.end(), std::find(root.begin(), root.end(), "vfs_t1"));

    ucs_vfs_obj_remove(&md);
    EXPECT_FALSE(exists("/vfs_t1/md/tcp"));
    EXPECT_FALSE(exists("/vfs_t1/md"));
    EXPECT_FALSE(exists("/vfs_t1"));
}

TEST_F(ucs_vfs, implicit_dir_stays_while_it_has_entries)
{
    fake_obj a, b;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t2/x/a"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &b, "vfs_t2/x/b"));
    EXPECT_EQ(2u, info("/vfs_t2/x").size);

    ucs_vfs_obj_remove(&a);
    EXPECT_EQ((std::vector<std::string>{"b"}), list("/vfs_t2/x"));
    ucs_vfs_obj_remove(&b);
    EXPECT_FALSE(exists("/vfs_t2"));
}

TEST_F(ucs_vfs, object_dir_stays_when_empty)
{
    fake_obj a;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t3"));
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_ro_file(&a, show_counter, NULL, 0, "sub/file"));
    EXPECT_EQ(UCS_VFS_NODE_TYPE_RO_FILE, info("/vfs_t3/sub/file").type);
    ucs_vfs_obj_remove(&a);
    EXPECT_FALSE(exists("/vfs_t3"));
}

TEST_F(ucs_vfs, read_file_calls_show_with_its_arguments)
{
    fake_obj iface;
    char label[] = "tx";

    iface.counter = 7;
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &iface, "vfs_t4/iface"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&iface, show_counter, label, 42,
                                              "stats/%s_bytes", "tx"));

    EXPECT_EQ("tx 7 42\n", read("/vfs_t4/iface/stats/tx_bytes"));
    iface.counter = 12345;
    EXPECT_EQ("tx 12345 42\n", read("/vfs_t4/iface/stats/tx_bytes"));

    ucs_vfs_path_info_t i = info("/vfs_t4/iface/stats/tx_bytes");
    EXPECT_EQ(UCS_VFS_NODE_TYPE_RO_FILE, i.type);
    EXPECT_EQ(strlen("tx 12345 42\n"), i.size);

    ucs_vfs_obj_remove(&iface);
}

TEST_F(ucs_vfs, wrong_kind_and_missing_paths)
{
    fake_obj a;
    ucs_string_buffer_t strb;
    std::vector<std::string> names;
    ucs_vfs_path_info_t i;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t5"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&a, show_counter, NULL, 0, "f"));
    ucs_string_buffer_init(&strb);

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_vfs_path_read_file("/vfs_t5", &strb));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_vfs_path_get_link("/vfs_t5/f", &strb));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_vfs_path_list_dir("/vfs_t5/f", collect_name, &names));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_vfs_path_read_file("/vfs_t5/g", &strb));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_vfs_path_get_link("/vfs_t5/g", &strb));
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              ucs_vfs_path_list_dir("/vfs_t5/g", collect_name, &names));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_vfs_path_get_info("vfs_t5", &i));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_vfs_path_get_info("", &i));
    EXPECT_EQ(0u, ucs_string_buffer_length(&strb));
    EXPECT_TRUE(names.empty());

    EXPECT_EQ(UCS_OK, ucs_vfs_path_get_info("/", &i));
    EXPECT_EQ(UCS_VFS_NODE_TYPE_DIR, i.type);

    ucs_string_buffer_cleanup(&strb);
    ucs_vfs_obj_remove(&a);
}

TEST_F(ucs_vfs, link_target_is_relative_to_the_link_dir)
{
    fake_obj md, worker, iface;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &md, "vfs_t6/md/tcp"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &worker, "vfs_t6/worker/1"));
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_dir(&worker, &iface, "iface/0x%x", 0x55d0));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&iface, &md, "md"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&iface, &md, "deep/er/md"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&iface, &worker, "worker"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&iface, &iface, "self"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&worker, &iface, "first"));

    EXPECT_EQ("../../../../md/tcp",
              readlink("/vfs_t6/worker/1/iface/0x55d0/md"));
    EXPECT_EQ("../../../../../../md/tcp",
              readlink("/vfs_t6/worker/1/iface/0x55d0/deep/er/md"));
    EXPECT_EQ("../..", readlink("/vfs_t6/worker/1/iface/0x55d0/worker"));
    EXPECT_EQ(".", readlink("/vfs_t6/worker/1/iface/0x55d0/self"));
    EXPECT_EQ("iface/0x55d0", readlink("/vfs_t6/worker/1/first"));

    ucs_vfs_path_info_t i = info("/vfs_t6/worker/1/iface/0x55d0/md");
    EXPECT_EQ(UCS_VFS_NODE_TYPE_SYM_LINK, i.type);
    EXPECT_EQ(strlen("../../../../md/tcp"), i.size);

    ucs_vfs_obj_remove(&worker);
    ucs_vfs_obj_remove(&md);
    EXPECT_FALSE(exists("/vfs_t6"));
}

TEST_F(ucs_vfs, link_prefix_of_a_name_is_not_a_common_dir)
{
    fake_obj a, b;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t7/ab"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &b, "vfs_t7/a"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&a, &b, "to_a"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&b, &a, "to_ab"));
    EXPECT_EQ("../a", readlink("/vfs_t7/ab/to_a"));
    EXPECT_EQ("../ab", readlink("/vfs_t7/a/to_ab"));
    ucs_vfs_obj_remove(&a);
    EXPECT_EQ(std::vector<std::string>{}, list("/vfs_t7/a"));
    ucs_vfs_obj_remove(&b);
}

TEST_F(ucs_vfs, link_goes_away_with_its_target)
{
    fake_obj a, b;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t8/a"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &b, "vfs_t8/b"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&a, &b, "links/b"));
    EXPECT_TRUE(exists("/vfs_t8/a/links/b"));

    ucs_vfs_obj_remove(&b);
    EXPECT_FALSE(exists("/vfs_t8/a/links/b"));
    EXPECT_FALSE(exists("/vfs_t8/a/links")); /* implicit, now empty */
    EXPECT_TRUE(exists("/vfs_t8/a"));

    /* a new object at the old address starts without links */
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &b, "vfs_t8/b"));
    ucs_vfs_obj_remove(&b);
    ucs_vfs_obj_remove(&a);
    EXPECT_FALSE(exists("/vfs_t8"));
}

TEST_F(ucs_vfs, link_owner_removed_before_target)
{
    fake_obj a, b;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t9/a"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &b, "vfs_t9/b"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&a, &b, "b"));
    ucs_vfs_obj_remove(&a);
    EXPECT_EQ(0u, info("/vfs_t9/b").size);
    ucs_vfs_obj_remove(&b); /* must not touch the freed link */
    EXPECT_FALSE(exists("/vfs_t9"));
}

TEST_F(ucs_vfs, nested_removal_takes_children_and_links_into_them)
{
    fake_obj worker, iface, ep, md, other;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &md, "vfs_t10/md/tcp"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &other, "vfs_t10/other"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &worker, "vfs_t10/worker"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(&worker, &iface, "iface/0x1"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(&iface, &ep, "ep/0x2"));
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_ro_file(&ep, show_counter, NULL, 1, "state"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&iface, show_counter, NULL, 2,
                                              "stats/rx"));
    /* links out of, into, and inside the removed subtree */
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&iface, &md, "md"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&other, &ep, "peers/ep"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&other, &iface, "iface"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&ep, &iface, "iface"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&iface, &ep, "first_ep"));

    ucs_vfs_obj_remove(&iface);
    EXPECT_FALSE(exists("/vfs_t10/worker/iface"));
    EXPECT_TRUE(list("/vfs_t10/worker").empty());
    EXPECT_TRUE(list("/vfs_t10/other").empty());
    EXPECT_EQ(0u, info("/vfs_t10/md/tcp").size);

    /* the child object is gone too: removing it again does nothing, and
     * its address may be used again */
    ucs_vfs_obj_remove(&ep);
    {
        ucs_vfs_path_info_t i;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_vfs_obj_add_ro_file(&ep, show_counter, NULL, 0, "x"));
        EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_vfs_path_get_info(
                                       "/vfs_t10/worker/iface/0x1/ep/0x2", &i));
    }
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(&worker, &ep, "ep/0x2"));

    ucs_vfs_obj_remove(&worker);
    ucs_vfs_obj_remove(&md);
    ucs_vfs_obj_remove(&other);
    EXPECT_FALSE(exists("/vfs_t10"));
}

TEST_F(ucs_vfs, list_shows_every_entry_once)
{
    fake_obj dir;
    std::vector<fake_obj> objs(5);
    std::vector<std::string> expected;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &dir, "vfs_t11"));
    for (size_t i = 0; i < objs.size(); ++i) {
        ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(&dir, &objs[i], "o%zu", i));
        expected.push_back("o" + std::to_string(i));
    }
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_ro_file(&dir, show_counter, NULL, 0, "file"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&dir, &objs[0], "link"));
    expected.push_back("file");
    expected.push_back("link");
    std::sort(expected.begin(), expected.end());

    EXPECT_EQ(expected, list("/vfs_t11"));
    EXPECT_EQ(expected.size(), info("/vfs_t11").size);
    ucs_vfs_obj_remove(&dir);
    EXPECT_FALSE(exists("/vfs_t11"));
}

TEST_F(ucs_vfs, bad_paths_are_rejected)
{
    fake_obj a;
    std::string long_name(UCS_VFS_NAME_MAX + 1, 'n');
    std::string max_name(UCS_VFS_NAME_MAX, 'm');
    std::string long_path;

    while (long_path.size() < UCS_VFS_PATH_MAX) {
        long_path += "p/";
    }
    long_path += "end";

    const char *bad[] = {"",    "/abs", "a//b", "a/",
                         "./a", "a/.",  "..",   "a/../b"};
    for (const char *path : bad) {
        expect_add_dir_error(NULL, &a, path, UCS_ERR_INVALID_PARAM);
    }
    expect_add_dir_error(NULL, &a, long_name.c_str(), UCS_ERR_INVALID_PARAM);
    expect_add_dir_error(NULL, &a, long_path.c_str(), UCS_ERR_INVALID_PARAM);
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_vfs_obj_add_dir(NULL, NULL, "vfs_t12"));
    }
    EXPECT_FALSE(exists("/vfs_t12"));

    /* a name of exactly UCS_VFS_NAME_MAX is fine; names are not
     * interpreted otherwise */
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_dir(NULL, &a, "vfs_t12/%s", max_name.c_str()));
    EXPECT_TRUE(exists("/vfs_t12/" + max_name));
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_vfs_obj_add_ro_file(&a, show_counter, NULL, 0, "x/"));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_vfs_obj_add_ro_file(&a, NULL, NULL, 0, "nocb"));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_vfs_obj_add_sym_link(&a, &a, "/x"));
    }
    EXPECT_TRUE(list("/vfs_t12/" + max_name).empty());
    ucs_vfs_obj_remove(&a);
}

TEST_F(ucs_vfs, unknown_objects)
{
    fake_obj a, b, unknown;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t13"));
    /* no error line: the failed add of the object already logged one */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_vfs_obj_add_dir(&unknown, &b, "child"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_vfs_obj_add_ro_file(&unknown, show_counter, NULL, 0, "f"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_vfs_obj_add_sym_link(&unknown, &a, "l"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_vfs_obj_add_sym_link(&a, &unknown, "l"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_vfs_obj_add_ro_file(NULL, show_counter, NULL, 0, "f"));
    ucs_vfs_obj_remove(&unknown);
    ucs_vfs_obj_remove(NULL);
    EXPECT_TRUE(list("/vfs_t13").empty());
    ucs_vfs_obj_remove(&a);
}

/* Switched off, the add functions succeed and keep nothing; what was
 * added before stays and can still be removed */
TEST_F(ucs_vfs, switched_off_keeps_nothing)
{
    struct enable_again {
        ~enable_again()
        {
            ucs_vfs_set_enabled(1);
        }
    } guard;
    fake_obj a, b;

    ASSERT_TRUE(ucs_vfs_is_enabled()); /* gtest's main switched it on */
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t13b/on"));

    ucs_vfs_set_enabled(0);
    EXPECT_FALSE(ucs_vfs_is_enabled());
    EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &b, "vfs_t13b/off"));
    EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&b, show_counter, NULL, 0, "f"));
    EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&a, show_counter, NULL, 0, "f"));
    EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&a, &b, "l"));
    EXPECT_EQ(std::vector<std::string>{"on"}, list("/vfs_t13b"));
    EXPECT_TRUE(list("/vfs_t13b/on").empty());
    EXPECT_FALSE(exists("/vfs_t13b/off"));
    ucs_vfs_obj_remove(&b);
    ucs_vfs_obj_remove(&a);
    EXPECT_FALSE(exists("/vfs_t13b"));

    ucs_vfs_set_enabled(1);
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &b, "vfs_t13b/off"));
    EXPECT_TRUE(exists("/vfs_t13b/off"));
    ucs_vfs_obj_remove(&b);
}

TEST_F(ucs_vfs, duplicates_are_rejected)
{
    fake_obj a, b, c;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t14/a"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&a, show_counter, NULL, 0, "f"));
    expect_add_dir_error(NULL, &b, "vfs_t14/a", UCS_ERR_ALREADY_EXISTS);
    expect_add_dir_error(NULL, &a, "vfs_t14/again", UCS_ERR_ALREADY_EXISTS);
    /* a file cannot be a directory on the way */
    expect_add_dir_error(&a, &b, "f/sub/b", UCS_ERR_ALREADY_EXISTS);
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_ALREADY_EXISTS,
                  ucs_vfs_obj_add_ro_file(&a, show_counter, NULL, 0, "f"));
        EXPECT_EQ(UCS_ERR_ALREADY_EXISTS,
                  ucs_vfs_obj_add_sym_link(&a, &a, "f"));
        EXPECT_TRUE(capture.contains("already exists"));
    }
    /* nothing was left behind by the failures */
    EXPECT_EQ((std::vector<std::string>{"a"}), list("/vfs_t14"));
    EXPECT_EQ((std::vector<std::string>{"f"}), list("/vfs_t14/a"));

    /* an object dir may be a directory on the way of another object */
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &c, "vfs_t14/a/sub/c"));
    ucs_vfs_obj_remove(&a);
    EXPECT_FALSE(exists("/vfs_t14"));
    ucs_vfs_obj_remove(&c); /* removed with a */
}

TEST_F(ucs_vfs, many_entries_in_one_dir)
{
    const unsigned count = ucs::test_scale(20000);
    std::vector<fake_obj> eps(count);
    fake_obj iface;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &iface, "vfs_t15"));
    for (unsigned i = 0; i < count; ++i) {
        ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(&iface, &eps[i], "ep/%p",
                                              (void *)&eps[i]));
        ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&eps[i], show_counter, NULL,
                                                  i, "state"));
        ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&eps[i], &iface, "iface"));
    }
    EXPECT_EQ(count, info("/vfs_t15/ep").size);
    for (unsigned i = 0; i < count; i += 2) {
        ucs_vfs_obj_remove(&eps[i]);
    }
    EXPECT_EQ(count / 2, info("/vfs_t15/ep").size);
    ucs_vfs_obj_remove(&iface); /* the rest, with their links */
    EXPECT_FALSE(exists("/vfs_t15"));
}

/* Creators add and remove objects with files and links while readers walk
 * the tree; everything a reader finds must read back consistently. */
TEST_F(ucs_vfs, concurrent_add_remove_and_read)
{
    const unsigned num_creators = 3, num_readers = 2;
    const unsigned rounds = ucs::test_scale(3000);
    std::atomic<unsigned> creators_done(0);
    std::atomic<unsigned long> files_read(0);
    std::vector<std::thread> threads;
    fake_obj shared;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &shared, "vfs_race/shared"));

    for (unsigned t = 0; t < num_creators; ++t) {
        threads.emplace_back([&, t]() {
            std::vector<fake_obj> objs(8);
            for (unsigned r = 0; r < rounds; ++r) {
                fake_obj *o     = &objs[r % objs.size()];
                fake_obj *child = &objs[(r + 1) % objs.size()];
                o->counter      = r;
                EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_dir(
                                      NULL, o, "vfs_race/t%u/o%u", t, r));
                EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(o, show_counter, NULL,
                                                          r, "stat"));
                EXPECT_EQ(UCS_OK,
                          ucs_vfs_obj_add_sym_link(o, &shared, "shared"));
                EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_dir(o, child, "child"));
                EXPECT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&shared, child,
                                                           "t%u_%u", t, r));
                ucs_vfs_obj_remove(o);
            }
            ++creators_done;
        });
    }

    for (unsigned t = 0; t < num_readers; ++t) {
        threads.emplace_back([&]() {
            while (creators_done < num_creators) {
                std::vector<std::string> dirs;
                ucs_vfs_path_list_dir("/vfs_race", collect_name, &dirs);
                for (const std::string &d : dirs) {
                    std::vector<std::string> objs;
                    std::string dpath = "/vfs_race/" + d;
                    ucs_vfs_path_list_dir(dpath.c_str(), collect_name, &objs);
                    for (const std::string &o : objs) {
                        std::string opath = dpath + "/" + o;
                        ucs_string_buffer_t strb;
                        ucs_vfs_path_info_t i;
                        ucs_string_buffer_init(&strb);
                        if (ucs_vfs_path_read_file((opath + "/stat").c_str(),
                                                   &strb) == UCS_OK) {
                            ++files_read;
                        }
                        ucs_string_buffer_reset(&strb);
                        ucs_vfs_path_get_link((opath + "/shared").c_str(),
                                              &strb);
                        ucs_vfs_path_get_info((opath + "/child").c_str(), &i);
                        ucs_string_buffer_cleanup(&strb);
                    }
                }
                std::vector<std::string> links;
                ucs_vfs_path_list_dir("/vfs_race/shared", collect_name, &links);
            }
        });
    }

    for (std::thread &t : threads) {
        t.join();
    }

    /* every object removed its child: no link may be left */
    EXPECT_TRUE(list("/vfs_race/shared").empty());
    EXPECT_EQ((std::vector<std::string>{"shared"}), list("/vfs_race"));
    ucs_vfs_obj_remove(&shared);
    EXPECT_FALSE(exists("/vfs_race"));
    (void)files_read.load(); /* how many depends on the timing */
}

namespace {

struct blocking_obj {
    std::atomic<bool> entered{false};
    std::atomic<bool> release{false};
    std::atomic<bool> finished{false};
};

void show_blocking(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                   uint64_t arg_u64)
{
    blocking_obj *o = static_cast<blocking_obj *>(obj);

    o->entered = true;
    while (!o->release) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ucs_string_buffer_appendf(strb, "done");
    o->finished = true;
}

} // namespace

TEST_F(ucs_vfs, remove_waits_for_running_show)
{
    blocking_obj obj;
    std::atomic<bool> removed(false);

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &obj, "vfs_t16"));
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_ro_file(&obj, show_blocking, NULL, 0, "slow"));

    std::thread reader([&]() { EXPECT_EQ("done", read("/vfs_t16/slow")); });
    while (!obj.entered) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }

    std::thread remover([&]() {
        ucs_vfs_obj_remove(&obj);
        EXPECT_TRUE(obj.finished);
        removed = true;
    });

    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(removed);
    obj.release = true;

    reader.join();
    remover.join();
    EXPECT_TRUE(removed);
    EXPECT_FALSE(exists("/vfs_t16"));
}

TEST_F(ucs_vfs, fork_child_has_its_own_lock_and_tree)
{
    blocking_obj slow;
    fake_obj a;

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_t17/a"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&a, show_counter, NULL, 3, "f"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &slow, "vfs_t17/slow"));
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_ro_file(&slow, show_blocking, NULL, 0, "f"));

    /* fork() while another thread is inside a show callback: the fork
     * waits for it, and the child can use the tree */
    std::thread reader([&]() { read("/vfs_t17/slow/f"); });
    while (!slow.entered) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::thread releaser([&]() {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        slow.release = true;
    });

    /* the child's verdict goes through a pipe: under valgrind its exit
     * code reports the parent's threads' memory as leaked */
    int verdict[2];
    ASSERT_EQ(0, pipe(verdict));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        fake_obj b;
        ucs_string_buffer_t strb;
        int ok = 1;

        ucs_string_buffer_init(&strb);
        ok &= (ucs_vfs_path_read_file("/vfs_t17/a/f", &strb) == UCS_OK);
        ok &= (strcmp(ucs_string_buffer_cstr(&strb), "- 0 3\n") == 0);
        ok &= (ucs_vfs_obj_add_dir(&a, &b, "b") == UCS_OK);
        ucs_vfs_obj_remove(&a);
        ok &=
            (ucs_vfs_path_read_file("/vfs_t17/a/f", &strb) == UCS_ERR_NO_ELEM);
        char c = ok ? 'y' : 'n';
        _exit((write(verdict[1], &c, 1) == 1) ? 0 : 1);
    }

    close(verdict[1]);
    char c = '?';
    EXPECT_EQ(1, ::read(verdict[0], &c, 1));
    close(verdict[0]);
    EXPECT_EQ('y', c) << "the child could not use the tree";
    int wstatus;
    ASSERT_EQ(pid, waitpid(pid, &wstatus, 0));
    EXPECT_TRUE(WIFEXITED(wstatus));
    reader.join();
    releaser.join();

    /* the parent's tree is untouched by the child */
    EXPECT_EQ("- 0 3\n", read("/vfs_t17/a/f"));
    ucs_vfs_obj_remove(&a);
    ucs_vfs_obj_remove(&slow);
    EXPECT_FALSE(exists("/vfs_t17"));
}

/* ---- the daemon connection ------------------------------------------- */

namespace {

/* The process's name as the kernel keeps it (at most 15 characters; under
 * valgrind, the tool's) */
std::string self_comm()
{
    std::ifstream comm("/proc/self/comm");
    std::string name;
    std::getline(comm, name);
    return name;
}

struct reply {
    ucs_status_t status;
    uint16_t op;
    uint32_t seq;
    std::string payload;
};

const int WAIT_MS = 5000; /* longest wait for the process to act */

} // namespace

/*
 * The test plays the daemon: it listens in a private directory named by
 * UCX_VFS_SOCK_DIR, accepts the service thread's connection and sends
 * requests. The retry interval is made short so reconnecting is quick.
 */
class ucs_vfs_conn : public ucs_vfs {
protected:
    virtual void SetUp()
    {
        ucs_vfs::SetUp();

        char tmpl[] = "/tmp/ucs_vfs_conn.XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl)) << strerror(errno);
        m_dir  = tmpl;
        m_path = m_dir + "/" + UCS_VFS_SOCK_NAME;
        m_env.reset(new ucs::scoped_setenv("UCX_VFS_SOCK_DIR", m_dir.c_str()));
        m_saved_interval                   = ucs_global_opts.vfs_retry_interval;
        ucs_global_opts.vfs_retry_interval = 0.02;
    }

    virtual void TearDown()
    {
        ucs_vfs_conn_stop();
        close_conn();
        close_listener();
        rmdir(m_dir.c_str());
        ucs_global_opts.vfs_retry_interval = m_saved_interval;
        m_env.reset();
        ucs_vfs::TearDown();
    }

    void listen_sock()
    {
        struct sockaddr_un addr;

        m_listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_GE(m_listen_fd, 0) << strerror(errno);
        memset(&addr, 0, sizeof(addr));
        addr.sun_family = AF_UNIX;
        ASSERT_LT(m_path.size(), sizeof(addr.sun_path));
        strcpy(addr.sun_path, m_path.c_str());
        ASSERT_EQ(0, bind(m_listen_fd, (struct sockaddr *)&addr, sizeof(addr)))
            << strerror(errno);
        ASSERT_EQ(0, listen(m_listen_fd, 8)) << strerror(errno);
    }

    void close_listener()
    {
        if (m_listen_fd >= 0) {
            close(m_listen_fd);
            m_listen_fd = -1;
            unlink(m_path.c_str());
        }
    }

    void close_conn()
    {
        if (m_fd >= 0) {
            close(m_fd);
            m_fd = -1;
        }
    }

    /* True if a connection arrives within @a timeout_ms */
    bool wait_incoming(int timeout_ms)
    {
        struct pollfd pfd = {m_listen_fd, POLLIN, 0};
        return poll(&pfd, 1, timeout_ms) == 1;
    }

    /* Accepts the next connection and checks its HELLO; returns the pid */
    uint32_t accept_conn()
    {
        struct timeval tv = {WAIT_MS / 1000, 0};
        ucs_vfs_sock_hello_t hello;
        ucs_vfs_sock_hdr_t hdr;

        EXPECT_TRUE(wait_incoming(WAIT_MS)) << "no connection";
        int fd = accept4(m_listen_fd, NULL, NULL, SOCK_CLOEXEC);
        EXPECT_GE(fd, 0) << strerror(errno);
        if (fd < 0) {
            return 0;
        }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

        EXPECT_EQ(UCS_OK, ucs_vfs_sock_recv_hdr(fd, &hdr));
        EXPECT_EQ(UCS_VFS_SOCK_OP_HELLO, hdr.op);
        EXPECT_GT(hdr.length, sizeof(hello) + 1);
        std::string payload(hdr.length, '\0');
        EXPECT_EQ(UCS_OK, ucs_vfs_sock_recv_all(fd, &payload[0], hdr.length));
        memcpy(&hello, payload.data(), sizeof(hello));
        m_prog_name = payload.c_str() + sizeof(hello);
        EXPECT_EQ(hdr.length, sizeof(hello) + m_prog_name.size() + 1);
        EXPECT_EQ('\0', payload.back());
        m_fd = fd;
        return hello.pid;
    }

    reply recv_reply()
    {
        ucs_vfs_sock_hdr_t hdr;
        reply r;

        r.status = UCS_ERR_IO_ERROR;
        if (ucs_vfs_sock_recv_hdr(m_fd, &hdr) != UCS_OK) {
            ADD_FAILURE() << "no reply";
            return r;
        }
        r.payload.resize(hdr.length);
        if ((hdr.length > 0) && (ucs_vfs_sock_recv_all(m_fd, &r.payload[0],
                                                       hdr.length) != UCS_OK)) {
            ADD_FAILURE() << "truncated reply";
            return r;
        }
        r.status = (ucs_status_t)hdr.status;
        r.op     = hdr.op;
        r.seq    = hdr.seq;
        return r;
    }

    reply request(uint16_t op, const std::string &path)
    {
        uint32_t seq = ++m_seq;

        EXPECT_EQ(UCS_OK, ucs_vfs_sock_send(m_fd, op, seq, 0, path.c_str(),
                                            path.size() + 1));
        reply r = recv_reply();
        EXPECT_EQ(op, r.op);
        EXPECT_EQ(seq, r.seq);
        if (r.status != UCS_OK) {
            EXPECT_TRUE(r.payload.empty());
        }
        return r;
    }

    static std::set<std::string> names(const std::string &payload)
    {
        std::set<std::string> result;
        size_t pos = 0;

        EXPECT_TRUE(payload.empty() || (payload.back() == '\0'));
        while (pos < payload.size()) {
            std::string name = payload.c_str() + pos;
            result.insert(name);
            pos += name.size() + 1;
        }
        return result;
    }

    /* The process sees EOF or an error on its side */
    bool wait_closed_by_process(int timeout_ms)
    {
        struct pollfd pfd = {m_fd, POLLIN, 0};
        char c;

        return (poll(&pfd, 1, timeout_ms) == 1) && (recv(m_fd, &c, 1, 0) <= 0);
    }

    std::string m_dir;
    std::string m_path;
    std::string m_prog_name;
    std::unique_ptr<ucs::scoped_setenv> m_env;
    double m_saved_interval = 1.0;
    int m_listen_fd         = -1;
    int m_fd                = -1;
    uint32_t m_seq          = 0;
};

TEST_F(ucs_vfs_conn, hello_then_requests_served_from_the_tree)
{
    fake_obj md, iface;

    iface.counter = 5;
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &md, "vfs_c1/md/tcp"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &iface, "vfs_c1/iface/0"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_ro_file(&iface, show_counter, NULL, 9,
                                              "counter"));
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_sym_link(&iface, &md, "md"));

    listen_sock();
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start()); /* already running: fine */
    EXPECT_EQ((uint32_t)getpid(), accept_conn());
    EXPECT_EQ(self_comm(), m_prog_name); /* the kernel's name of it */

    reply r = request(UCS_VFS_SOCK_OP_GET_INFO, "/vfs_c1/iface/0/counter");
    ASSERT_EQ(UCS_OK, r.status);
    ASSERT_EQ(sizeof(ucs_vfs_sock_info_t), r.payload.size());
    ucs_vfs_sock_info_t i;
    memcpy(&i, r.payload.data(), sizeof(i));
    EXPECT_EQ((uint32_t)UCS_VFS_NODE_TYPE_RO_FILE, i.type);
    EXPECT_EQ(strlen("- 5 9\n"), i.size);

    r = request(UCS_VFS_SOCK_OP_GET_INFO, "/vfs_c1/iface/0");
    ASSERT_EQ(UCS_OK, r.status);
    memcpy(&i, r.payload.data(), sizeof(i));
    EXPECT_EQ((uint32_t)UCS_VFS_NODE_TYPE_DIR, i.type);
    EXPECT_EQ(2u, i.size);

    r = request(UCS_VFS_SOCK_OP_GET_INFO, "/vfs_c1/none");
    EXPECT_EQ(UCS_ERR_NO_ELEM, r.status);

    r = request(UCS_VFS_SOCK_OP_LIST, "/vfs_c1/iface/0");
    EXPECT_EQ(UCS_OK, r.status);
    EXPECT_EQ((std::set<std::string>{"counter", "md"}), names(r.payload));

    r = request(UCS_VFS_SOCK_OP_LIST, "/vfs_c1/md/tcp");
    EXPECT_EQ(UCS_OK, r.status);
    EXPECT_TRUE(r.payload.empty());

    r = request(UCS_VFS_SOCK_OP_READ, "/vfs_c1/iface/0/counter");
    EXPECT_EQ(UCS_OK, r.status);
    EXPECT_EQ("- 5 9\n", r.payload);

    r = request(UCS_VFS_SOCK_OP_READLINK, "/vfs_c1/iface/0/md");
    EXPECT_EQ(UCS_OK, r.status);
    EXPECT_EQ(std::string("../../md/tcp", 13), r.payload);

    r = request(UCS_VFS_SOCK_OP_READ, "/vfs_c1/iface");
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, r.status);
    r = request(UCS_VFS_SOCK_OP_READLINK, "/vfs_c1/iface/0/counter");
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, r.status);
    r = request(UCS_VFS_SOCK_OP_LIST, "/vfs_c1/iface/0/counter");
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, r.status);

    /* a removed object is gone for the daemon too */
    ucs_vfs_obj_remove(&iface);
    r = request(UCS_VFS_SOCK_OP_READ, "/vfs_c1/iface/0/counter");
    EXPECT_EQ(UCS_ERR_NO_ELEM, r.status);

    ucs_vfs_obj_remove(&md);
}

TEST_F(ucs_vfs_conn, bad_requests_get_error_replies)
{
    listen_sock();
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());
    accept_conn();

    /* no terminating NUL */
    ASSERT_EQ(UCS_OK,
              ucs_vfs_sock_send(m_fd, UCS_VFS_SOCK_OP_LIST, 1, 0, "/", 1));
    reply r = recv_reply();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, r.status);
    EXPECT_EQ(1u, r.seq);

    /* a NUL inside */
    ASSERT_EQ(UCS_OK,
              ucs_vfs_sock_send(m_fd, UCS_VFS_SOCK_OP_LIST, 2, 0, "/\0/", 4));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, recv_reply().status);

    /* no payload */
    ASSERT_EQ(UCS_OK,
              ucs_vfs_sock_send(m_fd, UCS_VFS_SOCK_OP_LIST, 3, 0, NULL, 0));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, recv_reply().status);

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              request(UCS_VFS_SOCK_OP_LIST, "relative").status);
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, request(99, "/").status);
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, request(UCS_VFS_SOCK_OP_HELLO, "/").status);

    /* longer than any path: drained and refused */
    std::string huge(UCS_VFS_PATH_MAX * 40, 'x');
    r = request(UCS_VFS_SOCK_OP_READ, "/" + huge);
    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, r.status);

    /* the stream is still in step */
    r = request(UCS_VFS_SOCK_OP_GET_INFO, "/");
    EXPECT_EQ(UCS_OK, r.status);
}

TEST_F(ucs_vfs_conn, broken_stream_closes_and_reconnects)
{
    ucs_vfs_sock_hdr_t bad;

    listen_sock();
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());
    accept_conn();

    memset(&bad, 0, sizeof(bad));
    bad.magic = 0x12345678;
    ASSERT_EQ((ssize_t)sizeof(bad), send(m_fd, &bad, sizeof(bad), 0));
    EXPECT_TRUE(wait_closed_by_process(WAIT_MS));
    close_conn();

    /* a header, then nothing: the receive times out and closes */
    EXPECT_EQ((uint32_t)getpid(), accept_conn());
    EXPECT_EQ(UCS_OK, request(UCS_VFS_SOCK_OP_GET_INFO, "/").status);
    ASSERT_EQ(4, send(m_fd, &bad, 4, 0));
    EXPECT_TRUE(wait_closed_by_process(WAIT_MS));
    close_conn();

    EXPECT_EQ((uint32_t)getpid(), accept_conn());
    EXPECT_EQ(UCS_OK, request(UCS_VFS_SOCK_OP_GET_INFO, "/").status);
}

TEST_F(ucs_vfs_conn, daemon_appears_later)
{
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    listen_sock();
    EXPECT_EQ((uint32_t)getpid(), accept_conn());
    EXPECT_EQ(UCS_OK, request(UCS_VFS_SOCK_OP_GET_INFO, "/").status);
}

TEST_F(ucs_vfs_conn, reconnects_to_a_restarted_daemon)
{
    listen_sock();
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());
    accept_conn();
    EXPECT_EQ(UCS_OK, request(UCS_VFS_SOCK_OP_GET_INFO, "/").status);

    /* the daemon goes away altogether */
    close_conn();
    close_listener();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));

    listen_sock();
    EXPECT_EQ((uint32_t)getpid(), accept_conn());
    EXPECT_EQ(UCS_OK, request(UCS_VFS_SOCK_OP_GET_INFO, "/").status);
}

TEST_F(ucs_vfs_conn, daemon_dying_mid_reply_leaves_process_running)
{
    fake_obj big;
    std::string line(1000 * 1000, 'z'); /* ~1 MB per reply */

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &big, "vfs_c2"));
    ASSERT_EQ(UCS_OK,
              ucs_vfs_obj_add_ro_file(&big, show_counter, &line[0], 0, "big"));

    listen_sock();
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());
    accept_conn();
    for (uint32_t seq = 1; seq <= 8; ++seq) {
        ASSERT_EQ(UCS_OK,
                  ucs_vfs_sock_send(m_fd, UCS_VFS_SOCK_OP_READ, seq, 0,
                                    "/vfs_c2/big", sizeof("/vfs_c2/big")));
    }
    close_conn(); /* without reading: the process gets EPIPE, no signal */

    EXPECT_EQ((uint32_t)getpid(), accept_conn());
    reply r = request(UCS_VFS_SOCK_OP_READ, "/vfs_c2/big");
    EXPECT_EQ(UCS_OK, r.status);
    EXPECT_EQ(line.size() + 5, r.payload.size());
    ucs_vfs_obj_remove(&big);
}

TEST_F(ucs_vfs_conn, unsafe_dir_is_refused_and_reported_once)
{
    ucs::scoped_log_capture capture;
    int reports = 0;

    ASSERT_EQ(0, chmod(m_dir.c_str(), 0755));
    listen_sock();
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());

    for (int ms = 0; (ms < WAIT_MS) && !capture.contains("open to other");
         ms += 10) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(capture.contains("open to other users"));

    /* several retry intervals: no connection, no new report */
    EXPECT_FALSE(wait_incoming(200));
    for (const std::string &msg : capture.messages()) {
        reports += (msg.find("open to other users") != std::string::npos);
    }
    EXPECT_EQ(1, reports);

    /* fixed: the process connects */
    ASSERT_EQ(0, chmod(m_dir.c_str(), 0700));
    EXPECT_EQ((uint32_t)getpid(), accept_conn());
    ucs_vfs_conn_stop();
}

TEST_F(ucs_vfs_conn, too_long_socket_path_is_refused)
{
    std::string dir = "/tmp/" + std::string(200, 'd');
    ucs::scoped_setenv env("UCX_VFS_SOCK_DIR", dir.c_str());
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, ucs_vfs_conn_start());
    EXPECT_TRUE(capture.contains("too long"));
}

TEST_F(ucs_vfs_conn, disabled_option_does_not_connect)
{
    fake_obj a;

    listen_sock();
    ASSERT_FALSE(ucs_global_opts.vfs_enable);
    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &a, "vfs_c3"));
    EXPECT_FALSE(wait_incoming(100)); /* disabled: no connection */
    ucs_vfs_obj_remove(&a);
    /* UCX_VFS_ENABLE=y is exercised by fork_child_connects_on_its_own,
     * in a child whose first object starts the connection */
}

/* A child of a connected process does not keep the parent's connection:
 * it connects on its own when it creates objects, and serves its tree. */
TEST_F(ucs_vfs_conn, fork_child_connects_on_its_own)
{
    fake_obj parent_obj;
    int go[2];

    ASSERT_EQ(UCS_OK, ucs_vfs_obj_add_dir(NULL, &parent_obj, "vfs_c4/p"));
    listen_sock();
    ASSERT_EQ(UCS_OK, ucs_vfs_conn_start());
    accept_conn();
    int parent_fd = m_fd;
    ASSERT_EQ(0, pipe(go));

    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        fake_obj child_obj;
        char c;

        close(go[1]);
        ucs_global_opts.vfs_enable = 1;
        if (ucs_vfs_obj_add_dir(NULL, &child_obj, "vfs_c4/c") != UCS_OK) {
            _exit(2);
        }
        /* wait until the parent is done with us */
        if (::read(go[0], &c, 1) < 0) {
            _exit(3);
        }
        ucs_vfs_conn_stop();
        _exit(0);
    }
    close(go[0]);

    EXPECT_EQ((uint32_t)pid, accept_conn());
    int child_fd = m_fd;
    reply r      = request(UCS_VFS_SOCK_OP_LIST, "/vfs_c4");
    EXPECT_EQ((std::set<std::string>{"c", "p"}), names(r.payload));

    /* the parent's connection still answers, from the parent's tree */
    m_fd = parent_fd;
    r    = request(UCS_VFS_SOCK_OP_LIST, "/vfs_c4");
    EXPECT_EQ((std::set<std::string>{"p"}), names(r.payload));

    close(go[1]);
    int wstatus;
    ASSERT_EQ(pid, waitpid(pid, &wstatus, 0));
    EXPECT_TRUE(WIFEXITED(wstatus) && (WEXITSTATUS(wstatus) == 0));

    m_fd = child_fd;
    EXPECT_TRUE(wait_closed_by_process(WAIT_MS));
    close(child_fd);

    m_fd = parent_fd;
    r    = request(UCS_VFS_SOCK_OP_LIST, "/vfs_c4");
    EXPECT_EQ((std::set<std::string>{"p"}), names(r.payload));
    ucs_vfs_obj_remove(&parent_obj);
}
