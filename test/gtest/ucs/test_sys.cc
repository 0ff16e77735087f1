#include <common/test.h>

extern "C" {
#include <ucs/sys/sock.h>
#include <ucs/sys/sys.h>
}

#include <algorithm>
#include <arpa/inet.h>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/tcp.h>
#include <string>
#include <set>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

class ucs_sys : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        char tmpl[] = "/tmp/ucs_sys_test.XXXXXX";
        int fd      = mkstemp(tmpl);
        ASSERT_GE(fd, 0);
        close(fd);
        m_file = tmpl;
    }

    void TearDown() override
    {
        unlink(m_file.c_str());
        ucs::test::TearDown();
    }

    void write_file(const std::string &contents)
    {
        FILE *f = fopen(m_file.c_str(), "w");
        ASSERT_NE(nullptr, f);
        fputs(contents.c_str(), f);
        fclose(f);
    }

    std::string m_file;
};

TEST_F(ucs_sys, page_size)
{
    EXPECT_EQ((size_t)sysconf(_SC_PAGESIZE), ucs_get_page_size());
    EXPECT_TRUE(ucs_is_pow2(ucs_get_page_size()));
}

TEST_F(ucs_sys, huge_page_size)
{
    unsigned long expected_kb = 0;
    char line[256];
    FILE *f = fopen("/proc/meminfo", "r");

    ASSERT_NE(nullptr, f);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "Hugepagesize: %lu kB", &expected_kb) == 1) {
            break;
        }
    }
    fclose(f);

    EXPECT_EQ(expected_kb * 1024, ucs_get_huge_page_size());
    if (ucs_get_huge_page_size() != 0) {
        EXPECT_TRUE(ucs_is_pow2(ucs_get_huge_page_size()));
    }
}

TEST_F(ucs_sys, host_name_and_exe)
{
    char host[256] = {};
    char exe[PATH_MAX];
    ssize_t len;

    gethostname(host, sizeof(host) - 1);
    EXPECT_STREQ(host, ucs_get_host_name());

    len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ASSERT_GT(len, 0);
    exe[len] = '\0';
    EXPECT_STREQ(exe, ucs_get_exe());
    EXPECT_EQ(ucs_get_exe(), ucs_get_exe()); /* cached */
}

TEST_F(ucs_sys, num_cpus_and_tid)
{
    EXPECT_EQ(sysconf(_SC_NPROCESSORS_CONF), ucs_sys_get_num_cpus());
    EXPECT_EQ(getpid(), ucs_get_tid()); /* main thread */

    pid_t other = 0;
    std::thread t([&other] { other = ucs_get_tid(); });
    t.join();
    EXPECT_NE(getpid(), other);
}

TEST_F(ucs_sys, fcntl_modfl)
{
    int fds[2];

    ASSERT_EQ(0, pipe(fds));
    EXPECT_FALSE(fcntl(fds[0], F_GETFL) & O_NONBLOCK);
    EXPECT_EQ(UCS_OK, ucs_sys_fcntl_modfl(fds[0], O_NONBLOCK, 0));
    EXPECT_TRUE(fcntl(fds[0], F_GETFL) & O_NONBLOCK);
    EXPECT_EQ(UCS_OK, ucs_sys_fcntl_modfl(fds[0], 0, O_NONBLOCK));
    EXPECT_FALSE(fcntl(fds[0], F_GETFL) & O_NONBLOCK);
    close(fds[0]);
    close(fds[1]);

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_IO_ERROR, ucs_sys_fcntl_modfl(-1, O_NONBLOCK, 0));
    EXPECT_TRUE(capture.contains("F_GETFL"));
}

TEST_F(ucs_sys, read_file)
{
    char buf[64];

    write_file("hello\n");
    EXPECT_EQ(6, ucs_read_file(buf, sizeof(buf), 0, "%s", m_file.c_str()));
    EXPECT_STREQ("hello\n", buf);
    EXPECT_EQ(5, ucs_read_file_str(buf, sizeof(buf), 0, "%s", m_file.c_str()));
    EXPECT_STREQ("hello", buf);

    /* truncated to the buffer, always terminated */
    EXPECT_EQ(3, ucs_read_file(buf, 4, 0, "%s", m_file.c_str()));
    EXPECT_STREQ("hel", buf);
}

TEST_F(ucs_sys, read_file_missing)
{
    char buf[16];

    /* silent: no error line */
    EXPECT_EQ(-1,
              ucs_read_file(buf, sizeof(buf), 1, "%s.none", m_file.c_str()));

    ucs::scoped_log_capture capture;
    EXPECT_EQ(-1,
              ucs_read_file(buf, sizeof(buf), 0, "%s.none", m_file.c_str()));
    EXPECT_TRUE(capture.contains(".none"));
}

TEST_F(ucs_sys, read_file_number)
{
    long value = 0;

    write_file("42\n");
    EXPECT_EQ(UCS_OK, ucs_read_file_number(&value, 0, "%s", m_file.c_str()));
    EXPECT_EQ(42, value);

    write_file("-1\n");
    EXPECT_EQ(UCS_OK, ucs_read_file_number(&value, 0, "%s", m_file.c_str()));
    EXPECT_EQ(-1, value);

    write_file("0x10");
    EXPECT_EQ(UCS_OK, ucs_read_file_number(&value, 0, "%s", m_file.c_str()));
    EXPECT_EQ(16, value);

    value = 7;
    write_file("12abc\n");
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_IO_ERROR,
                  ucs_read_file_number(&value, 0, "%s", m_file.c_str()));
        EXPECT_TRUE(capture.contains("does not hold a number"));
    }
    EXPECT_EQ(7, value); /* untouched on failure */

    EXPECT_EQ(UCS_ERR_IO_ERROR,
              ucs_read_file_number(&value, 1, "%s.none", m_file.c_str()));
}

TEST_F(ucs_sys, limits)
{
    struct rlimit rlim, expected;

    ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &expected));
    ASSERT_EQ(UCS_OK, ucs_sys_getrlimit(RLIMIT_NOFILE, &rlim));
    EXPECT_EQ(expected.rlim_cur, rlim.rlim_cur);
    if (expected.rlim_cur < (rlim_t)INT_MAX) {
        EXPECT_EQ((int)expected.rlim_cur, ucs_sys_max_open_files());
    } else {
        EXPECT_EQ(INT_MAX, ucs_sys_max_open_files());
    }
}

TEST_F(ucs_sys, mmap_munmap)
{
    size_t length = 2 * ucs_get_page_size();
    void *ptr     = NULL;

    ASSERT_EQ(UCS_OK,
              ucs_sys_mmap(NULL, length, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, "test", &ptr));
    ASSERT_NE(nullptr, ptr);
    memset(ptr, 0xab, length);
    EXPECT_EQ(UCS_OK, ucs_sys_munmap(ptr, length, "test"));

    ucs::scoped_log_capture capture;
    void *untouched = &length;
    ptr             = untouched;
    EXPECT_EQ(UCS_ERR_NO_MEMORY,
              ucs_sys_mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                           0, "empty", &ptr));
    EXPECT_EQ(untouched, ptr);
    EXPECT_TRUE(capture.contains("empty"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_sys_munmap((void *)1, length, "misaligned"));
}

/* ------------------------------------------------------------------------
 * Heap in use
 */

/* What another thread allocates counts, in its own arena (16 KiB blocks)
 * and mapped by malloc (a block above glibc's largest mmap threshold, 32
 * MiB): the heap in use grows by at least the bytes allocated and
 * touched there, and falls back once they are freed */
TEST_F(ucs_sys, heap_in_use_counts_other_threads_and_drops_after_free)
{
    const size_t block = 16 * 1024, num_blocks = 64, big = 40ul << 20;
    const size_t total = (num_blocks * block) + big;
    const size_t slack = 64 * 1024; /* a new arena's own header and cache */
    std::vector<void *> blocks;

    if (ucs_sys_heap_in_use() == 0) {
        GTEST_SKIP() << "no heap figure: no mallinfo2(), or the allocator "
                        "is not glibc's (valgrind, sanitizer)";
    }

    blocks.reserve(num_blocks + 1);
    size_t before = ucs_sys_heap_in_use();
    std::thread([&] {
        for (size_t i = 0; i <= num_blocks; ++i) {
            size_t size = (i < num_blocks) ? block : big;
            void *ptr   = malloc(size);
            if (ptr != NULL) {
                memset(ptr, 0x5a, size);
            }
            blocks.push_back(ptr);
        }
    }).join();
    size_t held = ucs_sys_heap_in_use();
    bool all    = (std::count(blocks.begin(), blocks.end(), nullptr) == 0);
    for (void *ptr : blocks) {
        free(ptr);
    }
    size_t after = ucs_sys_heap_in_use();

    ASSERT_TRUE(all) << "malloc failed";
    EXPECT_GE(held, before + total);
    EXPECT_LE(after, before + slack);
}

TEST_F(ucs_sys, heap_per_object_is_signed)
{
    const size_t tib = 1ul << 40;

    EXPECT_DOUBLE_EQ(64.0, ucs_sys_heap_per_object(1000, 1640, 10));
    /* objects destroyed, or a pool given back: the heap shrank */
    EXPECT_DOUBLE_EQ(-24.0, ucs_sys_heap_per_object(1000, 952, 2));
    EXPECT_DOUBLE_EQ(-1024.0, ucs_sys_heap_per_object(tib, tib - 4096, 4));
    EXPECT_DOUBLE_EQ(0.0, ucs_sys_heap_per_object(1000, 1000, 3));
    EXPECT_DOUBLE_EQ(0.0, ucs_sys_heap_per_object(1000, 2000, 0));
}

/* ------------------------------------------------------------------------
 * Random bytes
 */

TEST_F(ucs_sys, random_bytes_of_length_0_touch_nothing)
{
    uint8_t byte = 0xa5;

    EXPECT_EQ(UCS_OK, ucs_sys_random_bytes(NULL, 0));
    EXPECT_EQ(UCS_OK, ucs_sys_random_bytes(&byte, 0));
    EXPECT_EQ(0xa5, byte);
}

TEST_F(ucs_sys, random_bytes_of_length_1_write_one_byte_and_vary)
{
    std::set<uint8_t> seen;

    for (int i = 0; i < 64; ++i) {
        uint8_t buf[9];
        memset(buf, 0xa5, sizeof(buf));
        ASSERT_EQ(UCS_OK, ucs_sys_random_bytes(buf, 1));
        for (size_t j = 1; j < sizeof(buf); ++j) {
            ASSERT_EQ(0xa5, buf[j]) << "byte " << j << " was written";
        }
        seen.insert(buf[0]);
    }
    /* 64 equal draws happen with probability 2^-504 */
    EXPECT_GT(seen.size(), 1u);
}

TEST_F(ucs_sys, random_bytes_differ_between_calls)
{
    uint64_t a = 0, b = 0;

    ASSERT_EQ(UCS_OK, ucs_sys_random_bytes(&a, sizeof(a)));
    ASSERT_EQ(UCS_OK, ucs_sys_random_bytes(&b, sizeof(b)));
    EXPECT_NE(a, b);
    EXPECT_NE(0u, a | b);
}

/* More than one getrandom() call returns (33554431 bytes at most): every
 * part of the buffer is filled, with every byte value */
TEST_F(ucs_sys, random_bytes_fill_a_large_buffer)
{
    const size_t length =
        ucs::running_on_valgrind() ? (1ul << 20) : (34ul << 20);
    const size_t part = 4096;
    std::vector<uint8_t> buf(length, 0);

    ASSERT_EQ(UCS_OK, ucs_sys_random_bytes(buf.data(), length));
    for (size_t offset = 0; offset < length; offset += part) {
        bool seen[256]  = {};
        unsigned values = 0;
        for (size_t i = offset; i < offset + part; ++i) {
            values += !seen[buf[i]];
            seen[buf[i]] = true;
        }
        /* 4096 uniform bytes show fewer than 200 values with probability
         * far below 2^-100 */
        ASSERT_GT(values, 200u) << "at offset " << offset;
    }
}

/* A kernel or sandbox without getrandom(): the bytes come from
 * /dev/urandom. The child process installs a seccomp filter that fails
 * getrandom() with ENOSYS. */
TEST_F(ucs_sys, random_bytes_fall_back_to_urandom_without_getrandom)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "valgrind does not run seccomp filters";
    }

    pid_t pid = fork();
    ASSERT_NE(-1, pid) << strerror(errno);
    if (pid == 0) {
        /* the child: no gtest assertions, only an exit code */
        struct sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                     offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrandom, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
        struct sock_fprog prog;
        uint64_t a = 0, b = 0;

        alarm(20);
        prog.len    = sizeof(filter) / sizeof(filter[0]);
        prog.filter = filter;
        if ((prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ||
            (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)) {
            _exit(77); /* seccomp is not available here */
        }
        if ((syscall(SYS_getrandom, &a, sizeof(a), 0) != -1) ||
            (errno != ENOSYS)) {
            _exit(2); /* the filter does not work */
        }
        if ((ucs_sys_random_bytes(&a, sizeof(a)) != UCS_OK) ||
            (ucs_sys_random_bytes(&b, sizeof(b)) != UCS_OK)) {
            _exit(3);
        }
        _exit((a != b) ? 0 : 4);
    }

    int wstatus = 0;
    ASSERT_EQ(pid, waitpid(pid, &wstatus, 0)) << strerror(errno);
    ASSERT_TRUE(WIFEXITED(wstatus))
        << "the child died by signal " << WTERMSIG(wstatus);
    if (WEXITSTATUS(wstatus) == 77) {
        GTEST_SKIP() << "seccomp filters are not available";
    }
    EXPECT_EQ(0, WEXITSTATUS(wstatus));
}

/* ------------------------------------------------------------------------
 * Socket addresses
 */

TEST_F(ucs_sys, sockaddr_ipv4)
{
    struct sockaddr_storage ss;
    char str[UCS_SOCKADDR_STRING_LEN];
    uint16_t port = 0;
    size_t size   = 0;

    ASSERT_EQ(UCS_OK, ucs_sockaddr_from_str("10.1.2.3", 4242, &ss));
    const struct sockaddr *sa = (const struct sockaddr *)&ss;
    EXPECT_STREQ("10.1.2.3:4242", ucs_sockaddr_str(sa, str, sizeof(str)));
    EXPECT_EQ(UCS_OK, ucs_sockaddr_sizeof(sa, &size));
    EXPECT_EQ(sizeof(struct sockaddr_in), size);
    EXPECT_EQ(UCS_OK, ucs_sockaddr_get_port(sa, &port));
    EXPECT_EQ(4242, port);
    EXPECT_EQ(UCS_OK, ucs_sockaddr_set_port((struct sockaddr *)&ss, 7));
    EXPECT_STREQ("10.1.2.3:7", ucs_sockaddr_str(sa, str, sizeof(str)));
    EXPECT_FALSE(ucs_sockaddr_is_inaddr_any(sa));

    struct in_addr expected;
    inet_pton(AF_INET, "10.1.2.3", &expected);
    EXPECT_EQ(
        0, memcmp(&expected, ucs_sockaddr_get_inet_addr(sa), sizeof(expected)));

    ASSERT_EQ(UCS_OK, ucs_sockaddr_from_str("0.0.0.0", 0, &ss));
    EXPECT_TRUE(ucs_sockaddr_is_inaddr_any(sa));

    /* a short buffer is truncated, not overrun */
    char small[6];
    ucs_sockaddr_str(sa, small, sizeof(small));
    EXPECT_STREQ("0.0.0", small);
}

TEST_F(ucs_sys, sockaddr_ipv6)
{
    struct sockaddr_storage ss;
    char str[UCS_SOCKADDR_STRING_LEN];
    uint16_t port = 0;
    size_t size   = 0;

    ASSERT_EQ(UCS_OK, ucs_sockaddr_from_str("fe80::1", 13337, &ss));
    const struct sockaddr *sa = (const struct sockaddr *)&ss;
    EXPECT_EQ(AF_INET6, sa->sa_family);
    EXPECT_STREQ("[fe80::1]:13337", ucs_sockaddr_str(sa, str, sizeof(str)));
    EXPECT_EQ(UCS_OK, ucs_sockaddr_sizeof(sa, &size));
    EXPECT_EQ(sizeof(struct sockaddr_in6), size);
    EXPECT_EQ(UCS_OK, ucs_sockaddr_get_port(sa, &port));
    EXPECT_EQ(13337, port);

    ASSERT_EQ(UCS_OK, ucs_sockaddr_from_str("::", 1, &ss));
    EXPECT_TRUE(ucs_sockaddr_is_inaddr_any(sa));
    EXPECT_STREQ("[::]:1", ucs_sockaddr_str(sa, str, sizeof(str)));
}

TEST_F(ucs_sys, sockaddr_invalid)
{
    struct sockaddr_storage ss;
    char str[UCS_SOCKADDR_STRING_LEN];
    struct sockaddr unix_sa;
    size_t size;
    uint16_t port;

    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              ucs_sockaddr_from_str("not.an.address", 1, &ss));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, ucs_sockaddr_from_str("", 1, &ss));

    memset(&unix_sa, 0, sizeof(unix_sa));
    unix_sa.sa_family = AF_UNIX;
    EXPECT_STREQ("<family 1>", ucs_sockaddr_str(&unix_sa, str, sizeof(str)));
    EXPECT_STREQ("<null>", ucs_sockaddr_str(NULL, str, sizeof(str)));
    EXPECT_EQ(nullptr, ucs_sockaddr_get_inet_addr(&unix_sa));

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_sockaddr_sizeof(&unix_sa, &size));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_sockaddr_get_port(&unix_sa, &port));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_sockaddr_set_port(&unix_sa, 1));
    EXPECT_TRUE(capture.contains("AF_INET"));
}

TEST_F(ucs_sys, sockaddr_cmp)
{
    struct sockaddr_storage a, b, c, d;
    ucs_status_t status = UCS_ERR_NO_MESSAGE;

    ucs_sockaddr_from_str("192.168.0.1", 100, &a);
    ucs_sockaddr_from_str("192.168.0.1", 100, &b);
    ucs_sockaddr_from_str("192.168.0.1", 101, &c);
    ucs_sockaddr_from_str("::1", 100, &d);

    const struct sockaddr *sa = (const struct sockaddr *)&a;
    EXPECT_EQ(0, ucs_sockaddr_cmp(sa, (struct sockaddr *)&b, &status));
    EXPECT_EQ(UCS_OK, status);
    EXPECT_LT(ucs_sockaddr_cmp(sa, (struct sockaddr *)&c, NULL), 0);
    EXPECT_GT(ucs_sockaddr_cmp((struct sockaddr *)&c, sa, NULL), 0);
    EXPECT_NE(0, ucs_sockaddr_cmp(sa, (struct sockaddr *)&d, NULL));

    struct sockaddr unix_sa;
    memset(&unix_sa, 0, sizeof(unix_sa));
    unix_sa.sa_family = AF_UNIX;
    ucs::scoped_log_capture capture;
    EXPECT_NE(0, ucs_sockaddr_cmp(sa, &unix_sa, &status));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, status);
}

/* ------------------------------------------------------------------------
 * Sockets over loopback
 */

class ucs_socket : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        m_listen_fd = m_client_fd = m_server_fd = -1;
    }

    void TearDown() override
    {
        close_fd(m_client_fd);
        close_fd(m_server_fd);
        close_fd(m_listen_fd);
        ucs::test::TearDown();
    }

    static void close_fd(int &fd)
    {
        if (fd >= 0) {
            close(fd);
            fd = -1;
        }
    }

    /* Listen on an ephemeral port of @a ip; returns false if the address
     * family is not available here. */
    bool listen_on(const char *ip)
    {
        struct sockaddr_storage ss;
        socklen_t len;

        EXPECT_EQ(UCS_OK, ucs_sockaddr_from_str(ip, 0, &ss));
        ucs::scoped_log_capture capture;
        if (ucs_socket_server_init((struct sockaddr *)&ss, 16, 1, 0,
                                   &m_listen_fd) != UCS_OK) {
            return false;
        }
        EXPECT_EQ(UCS_OK, ucs_socket_getname(m_listen_fd, &m_addr, &len));
        return true;
    }

    void connect_pair()
    {
        ucs_status_t status;

        ASSERT_EQ(UCS_OK, ucs_socket_create(m_addr.ss_family, SOCK_STREAM,
                                            &m_client_fd));
        status = ucs_socket_connect(m_client_fd, (struct sockaddr *)&m_addr);
        ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS))
            << ucs_status_string(status);
        ASSERT_EQ(UCS_OK,
                  ucs_socket_accept(m_listen_fd, NULL, NULL, &m_server_fd));
    }

    void transfer(size_t size)
    {
        std::vector<char> sbuf(size), rbuf(size, 0);
        for (size_t i = 0; i < size; ++i) {
            sbuf[i] = (char)(i * 7 + 1);
        }

        ucs_status_t send_status = UCS_ERR_NO_MESSAGE;
        std::thread sender([&] {
            send_status = ucs_socket_send(m_client_fd, sbuf.data(), size);
        });
        EXPECT_EQ(UCS_OK, ucs_socket_recv(m_server_fd, rbuf.data(), size));
        sender.join();
        EXPECT_EQ(UCS_OK, send_status);
        EXPECT_TRUE(sbuf == rbuf);
    }

    struct sockaddr_storage m_addr;
    int m_listen_fd;
    int m_client_fd;
    int m_server_fd;
};

TEST_F(ucs_socket, blocking_transfer_ipv4)
{
    char str[UCS_SOCKADDR_STRING_LEN];
    uint16_t port;

    ASSERT_TRUE(listen_on("127.0.0.1"));
    ASSERT_EQ(UCS_OK, ucs_sockaddr_get_port((struct sockaddr *)&m_addr, &port));
    EXPECT_NE(0, port);
    EXPECT_EQ("127.0.0.1:" + std::to_string(port),
              std::string(ucs_sockaddr_str((struct sockaddr *)&m_addr, str,
                                           sizeof(str))));

    connect_pair();
    transfer(8 * 1024 * 1024); /* far more than the socket buffers */

    struct sockaddr_storage peer;
    socklen_t len;
    ASSERT_EQ(UCS_OK, ucs_socket_getpeername(m_client_fd, &peer, &len));
    EXPECT_EQ(0, ucs_sockaddr_cmp((struct sockaddr *)&peer,
                                  (struct sockaddr *)&m_addr, NULL));
}

TEST_F(ucs_socket, blocking_transfer_ipv6)
{
    if (!listen_on("::1")) {
        GTEST_SKIP() << "IPv6 loopback is not available here";
    }

    char str[UCS_SOCKADDR_STRING_LEN];
    EXPECT_EQ(0, strncmp("[::1]:",
                         ucs_sockaddr_str((struct sockaddr *)&m_addr, str,
                                          sizeof(str)),
                         6));
    connect_pair();
    transfer(1024 * 1024);
}

TEST_F(ucs_socket, nonblocking_io)
{
    char buf[4096];
    size_t length;

    ASSERT_TRUE(listen_on("127.0.0.1"));
    ASSERT_EQ(UCS_OK, ucs_socket_set_nonblock(m_listen_fd));

    /* nothing to accept yet */
    int fd = -1;
    EXPECT_EQ(UCS_ERR_NO_PROGRESS,
              ucs_socket_accept(m_listen_fd, NULL, NULL, &fd));
    EXPECT_EQ(-1, fd);

    connect_pair();
    ASSERT_EQ(UCS_OK, ucs_socket_set_nonblock(m_server_fd));

    /* nothing to receive yet */
    length = sizeof(buf);
    EXPECT_EQ(UCS_ERR_NO_PROGRESS,
              ucs_socket_recv_nb(m_server_fd, buf, &length));
    EXPECT_EQ(0u, length);

    length = 5;
    EXPECT_EQ(UCS_OK, ucs_socket_send_nb(m_client_fd, "hello", &length));
    EXPECT_EQ(5u, length);

    struct iovec iov[2];
    iov[0].iov_base = (void *)" wor";
    iov[0].iov_len  = 4;
    iov[1].iov_base = (void *)"ld";
    iov[1].iov_len  = 2;
    EXPECT_EQ(UCS_OK, ucs_socket_sendv_nb(m_client_fd, iov, 2, &length));
    EXPECT_EQ(6u, length);

    EXPECT_EQ(UCS_OK, ucs_socket_recv(m_server_fd, buf, 11));
    EXPECT_EQ(0, memcmp("hello world", buf, 11));

    /* fill the socket until it would block */
    ASSERT_EQ(UCS_OK, ucs_socket_set_nonblock(m_client_fd));
    ucs_status_t status;
    size_t total = 0;
    memset(buf, 0, sizeof(buf));
    do {
        length = sizeof(buf);
        status = ucs_socket_send_nb(m_client_fd, buf, &length);
        total += length;
    } while (status == UCS_OK);
    EXPECT_EQ(UCS_ERR_NO_PROGRESS, status);
    EXPECT_EQ(0u, length);
    EXPECT_GT(total, 0u);
}

TEST_F(ucs_socket, peer_closed)
{
    char buf[16];
    size_t length;

    ASSERT_TRUE(listen_on("127.0.0.1"));
    connect_pair();

    length = 3;
    ASSERT_EQ(UCS_OK, ucs_socket_send_nb(m_client_fd, "abc", &length));
    close_fd(m_client_fd);

    /* data sent before the close is still delivered, then the end */
    EXPECT_EQ(UCS_OK, ucs_socket_recv(m_server_fd, buf, 3));
    length = sizeof(buf);
    EXPECT_EQ(UCS_ERR_NOT_CONNECTED,
              ucs_socket_recv_nb(m_server_fd, buf, &length));
    EXPECT_EQ(0u, length);
    EXPECT_EQ(UCS_ERR_NOT_CONNECTED,
              ucs_socket_recv(m_server_fd, buf, sizeof(buf)));
}

TEST_F(ucs_socket, peer_reset)
{
    struct linger linger = {1, 0}; /* close with RST */
    ucs_status_t status;
    char buf[16] = {};
    size_t length;

    ASSERT_TRUE(listen_on("127.0.0.1"));
    connect_pair();
    ASSERT_EQ(UCS_OK, ucs_socket_setopt(m_client_fd, SOL_SOCKET, SO_LINGER,
                                        &linger, sizeof(linger)));
    close_fd(m_client_fd);

    length = sizeof(buf);
    status = ucs_socket_recv_nb(m_server_fd, buf, &length);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, status) << ucs_status_string(status);

    /* sending after the reset fails without SIGPIPE */
    do {
        length = sizeof(buf);
        status = ucs_socket_send_nb(m_server_fd, buf, &length);
    } while (status == UCS_OK);
    EXPECT_TRUE((status == UCS_ERR_CONNECTION_RESET) ||
                (status == UCS_ERR_NOT_CONNECTED))
        << ucs_status_string(status);
}

TEST_F(ucs_socket, connect_refused)
{
    struct sockaddr_storage ss;
    int fd;

    /* a port that was just free */
    ASSERT_TRUE(listen_on("127.0.0.1"));
    ss = m_addr;
    close_fd(m_listen_fd);

    ASSERT_EQ(UCS_OK, ucs_socket_create(AF_INET, SOCK_STREAM, &fd));
    EXPECT_EQ(UCS_ERR_UNREACHABLE,
              ucs_socket_connect(fd, (struct sockaddr *)&ss));
    close(fd);
}

TEST_F(ucs_socket, connect_nonblocking)
{
    ucs_status_t status;
    int retries = 0;

    ASSERT_TRUE(listen_on("127.0.0.1"));
    ASSERT_EQ(UCS_OK, ucs_socket_create(AF_INET, SOCK_STREAM, &m_client_fd));
    ASSERT_EQ(UCS_OK, ucs_socket_set_nonblock(m_client_fd));

    status = ucs_socket_connect(m_client_fd, (struct sockaddr *)&m_addr);
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS));
    do {
        status = ucs_socket_connect_nb_get_status(m_client_fd);
        if (status == UCS_INPROGRESS) {
            usleep(1000);
        }
    } while ((status == UCS_INPROGRESS) && (++retries < 2000));
    EXPECT_EQ(UCS_OK, status);

    ASSERT_EQ(UCS_OK, ucs_socket_accept(m_listen_fd, NULL, NULL, &m_server_fd));
}

TEST_F(ucs_socket, address_in_use)
{
    int fd = -1;

    ASSERT_TRUE(listen_on("127.0.0.1"));

    /* silent: no error line */
    EXPECT_EQ(UCS_ERR_BUSY,
              ucs_socket_server_init((struct sockaddr *)&m_addr, 1, 0, 1, &fd));

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_BUSY,
              ucs_socket_server_init((struct sockaddr *)&m_addr, 1, 0, 0, &fd));
    EXPECT_EQ(-1, fd);
    EXPECT_TRUE(capture.contains("bind"));
}

TEST_F(ucs_socket, setopt)
{
    int one = 1, value = 0;
    socklen_t len = sizeof(value);

    ASSERT_EQ(UCS_OK, ucs_socket_create(AF_INET, SOCK_STREAM, &m_client_fd));
    EXPECT_TRUE(fcntl(m_client_fd, F_GETFD) & FD_CLOEXEC);
    EXPECT_EQ(UCS_OK, ucs_socket_setopt(m_client_fd, IPPROTO_TCP, TCP_NODELAY,
                                        &one, sizeof(one)));
    getsockopt(m_client_fd, IPPROTO_TCP, TCP_NODELAY, &value, &len);
    EXPECT_NE(0, value);

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_IO_ERROR, ucs_socket_setopt(m_client_fd, SOL_SOCKET,
                                                  -12345, &one, sizeof(one)));
    EXPECT_TRUE(capture.contains("setsockopt"));
}

TEST_F(ucs_socket, netif)
{
    struct sockaddr_storage addr, mask;
    char str[UCS_SOCKADDR_STRING_LEN];

    EXPECT_TRUE(ucs_netif_is_active("lo"));
    EXPECT_FALSE(ucs_netif_is_active("nosuchif0"));

    ASSERT_EQ(UCS_OK, ucs_netif_get_addr("lo", AF_INET, &addr, &mask));
    EXPECT_STREQ("127.0.0.1:0",
                 ucs_sockaddr_str((struct sockaddr *)&addr, str, sizeof(str)));
    EXPECT_STREQ("255.0.0.0:0",
                 ucs_sockaddr_str((struct sockaddr *)&mask, str, sizeof(str)));

    ASSERT_EQ(UCS_OK, ucs_netif_get_addr("lo", AF_UNSPEC, &addr, NULL));
    EXPECT_EQ(AF_INET, addr.ss_family);

    EXPECT_EQ(UCS_ERR_NO_DEVICE,
              ucs_netif_get_addr("nosuchif0", AF_INET, &addr, NULL));
}
