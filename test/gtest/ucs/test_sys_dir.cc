#include <common/test.h>

extern "C" {
#include <ucs/sys/dir.h>
}

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <ftw.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

/*
 * ucs_sys_dir_check_private() in a private temporary directory: what is
 * refused (and said), what is accepted, and what is made.
 */
static const uid_t OTHER_UID = 65534; /* nobody */

class ucs_sys_dir : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        char tmpl[] = "/tmp/ucs_sys_dir.XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl)) << strerror(errno);
        m_dir = tmpl;
    }

    void TearDown() override
    {
        nftw(m_dir.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
        ucs::test::TearDown();
    }

    static int remove_one(const char *path, const struct stat *, int,
                          struct FTW *)
    {
        remove(path);
        return 0;
    }

    /* Checks m_dir/name; *real_p is the resolved path on success */
    ucs_status_t check(const std::string &name, mode_t forbidden, int create,
                       int *created_p = nullptr, std::string *real_p = nullptr)
    {
        ucs_sys_dir_check_t c = {"test: the directory", "choose another",
                                 forbidden, create};
        char buf[PATH_MAX];
        ucs_status_t status;

        status = ucs_sys_dir_check_private(path(name).c_str(), &c, buf,
                                           sizeof(buf), created_p);
        if ((status == UCS_OK) && (real_p != nullptr)) {
            *real_p = buf;
        }
        return status;
    }

    /* Expects @a name to be refused, with one message containing @a why */
    void expect_refused(const std::string &name, mode_t forbidden,
                        const std::string &why, int create = 0)
    {
        ucs::scoped_log_capture capture;
        size_t before = capture.messages().size(); /* of the whole test */
        int created   = -1;

        EXPECT_EQ(UCS_ERR_IO_ERROR, check(name, forbidden, create, &created))
            << name;
        EXPECT_EQ(-1, created) << "output set on failure";
        EXPECT_EQ(before + 1, capture.messages().size()) << name;
        EXPECT_TRUE(capture.contains(why)) << name << ": " << why;
        EXPECT_TRUE(capture.contains("choose another")) << name;
    }

    void make_dir(const std::string &name, mode_t mode)
    {
        ASSERT_EQ(0, mkdir(path(name).c_str(), 0700)) << strerror(errno);
        ASSERT_EQ(0, chmod(path(name).c_str(), mode)) << strerror(errno);
    }

    std::string path(const std::string &name) const
    {
        return m_dir + "/" + name;
    }

    struct stat lstat_of(const std::string &name) const
    {
        struct stat st;

        memset(&st, 0, sizeof(st));
        EXPECT_EQ(0, lstat(path(name).c_str(), &st)) << name;
        return st;
    }

    void skip_unless_root()
    {
        if (geteuid() != 0) {
            GTEST_SKIP() << "needs root, to give a directory to uid "
                         << OTHER_UID;
        }
    }

    std::string m_dir;
};

TEST_F(ucs_sys_dir, missing_dir_is_made_0700_whatever_the_umask)
{
    mode_t old_mask = umask(0277); /* mkdir(0700) alone would give 0500 */
    std::string real;
    int created = 0;

    EXPECT_EQ(UCS_OK, check("new", 022, 1, &created, &real));
    umask(old_mask);

    struct stat st = lstat_of("new");
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(0700u, (unsigned)(st.st_mode & 07777));
    EXPECT_EQ(geteuid(), st.st_uid);
    EXPECT_EQ(1, created);
    EXPECT_EQ(path("new"), real);

    /* a second time it exists: checked, not made */
    created = -1;
    EXPECT_EQ(UCS_OK, check("new", 077, 1, &created));
    EXPECT_EQ(0, created);
}

TEST_F(ucs_sys_dir, missing_dir_without_create_is_no_elem_silently)
{
    /* an error log would fail the test */
    EXPECT_EQ(UCS_ERR_NO_ELEM, check("none", 077, 0));
    EXPECT_EQ(UCS_ERR_NO_ELEM, check("none/deeper", 077, 0));
    EXPECT_NE(0, access(path("none").c_str(), F_OK));
}

TEST_F(ucs_sys_dir, symbolic_link_is_refused_and_target_untouched)
{
    make_dir("target", 0700);
    ASSERT_EQ(0, symlink(path("target").c_str(), path("link").c_str()));

    expect_refused("link", 022, "is a symbolic link");
    expect_refused("link/", 022, "is a symbolic link");
    expect_refused("link//", 022, "is a symbolic link", 1);

    EXPECT_EQ(0700u, (unsigned)(lstat_of("target").st_mode & 07777));
    EXPECT_TRUE(S_ISLNK(lstat_of("link").st_mode));
}

TEST_F(ucs_sys_dir, dangling_link_is_refused_not_followed)
{
    ASSERT_EQ(0, symlink(path("made-by-link").c_str(), path("link").c_str()));

    expect_refused("link", 022, "is a symbolic link", 1);
    EXPECT_NE(0, access(path("made-by-link").c_str(), F_OK));
}

TEST_F(ucs_sys_dir, file_is_refused)
{
    int fd = open(path("file").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0) << strerror(errno);
    close(fd);

    expect_refused("file", 022, "is not a directory", 1);
    EXPECT_TRUE(S_ISREG(lstat_of("file").st_mode));
}

TEST_F(ucs_sys_dir, group_or_other_writable_is_refused)
{
    make_dir("d777", 0777);
    make_dir("d775", 0775);
    make_dir("d757", 0757);

    expect_refused("d777", 022, "writable by other users (mode 0777)");
    expect_refused("d775", 022, "writable by other users (mode 0775)");
    expect_refused("d757", 022, "writable by other users (mode 0757)", 1);
    EXPECT_EQ(0777u, (unsigned)(lstat_of("d777").st_mode & 07777));
}

TEST_F(ucs_sys_dir, own_0755_dir_is_accepted_when_only_writes_are_forbidden)
{
    int created = -1;

    make_dir("d755", 0755);
    EXPECT_EQ(UCS_OK, check("d755", 022, 1, &created));
    EXPECT_EQ(0, created);
    EXPECT_EQ(0755u, (unsigned)(lstat_of("d755").st_mode & 07777));
}

TEST_F(ucs_sys_dir, own_0755_dir_is_refused_when_any_access_is_forbidden)
{
    make_dir("d755", 0755);
    make_dir("d700", 0700);

    expect_refused("d755", 077, "open to other users (mode 0755)");
    EXPECT_EQ(UCS_OK, check("d700", 077, 0));
}

TEST_F(ucs_sys_dir, dot_or_dotdot_as_last_component_is_refused)
{
    make_dir("d", 0700);

    expect_refused("d/.", 022, "does not end with a directory name");
    expect_refused("d/..", 022, "does not end with a directory name", 1);
    expect_refused("d/./", 022, "does not end with a directory name");
}

TEST_F(ucs_sys_dir, parent_writable_by_others_needs_the_sticky_bit)
{
    make_dir("open", 0777);
    expect_refused("open/sub", 022, "no sticky bit", 1);
    EXPECT_NE(0, access(path("open/sub").c_str(), F_OK)) << "was made";

    ASSERT_EQ(0, chmod(path("open").c_str(), 01777));
    EXPECT_EQ(UCS_OK, check("open/sub", 022, 1));
}

TEST_F(ucs_sys_dir, any_directory_above_is_checked)
{
    make_dir("open", 0777);
    make_dir("open/mine", 0700);
    make_dir("open/mine/d", 0700);

    expect_refused("open/mine/d", 022, "is inside " + path("open") + ",");
}

TEST_F(ucs_sys_dir, symbolic_link_above_is_followed_and_resolved)
{
    std::string real;

    make_dir("real", 0700);
    make_dir("real/d", 0700);
    ASSERT_EQ(0, symlink("real", path("via").c_str()));

    EXPECT_EQ(UCS_OK, check("via/d", 077, 0, nullptr, &real));
    EXPECT_EQ(path("real/d"), real);
}

TEST_F(ucs_sys_dir, dir_of_another_user_is_refused)
{
    skip_unless_root();
    make_dir("theirs", 0700);
    ASSERT_EQ(0, chown(path("theirs").c_str(), OTHER_UID, OTHER_UID));

    expect_refused("theirs", 022,
                   "belongs to uid " + std::to_string(OTHER_UID) +
                       ", not to this user");
}

TEST_F(ucs_sys_dir, parent_of_another_user_is_refused)
{
    skip_unless_root();
    make_dir("theirs", 0755);
    make_dir("theirs/mine", 0700);
    ASSERT_EQ(0, chown(path("theirs").c_str(), OTHER_UID, OTHER_UID));

    expect_refused("theirs/mine", 022,
                   "which belongs to uid " + std::to_string(OTHER_UID));
}
