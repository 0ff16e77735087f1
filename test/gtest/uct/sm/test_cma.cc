/*
 * The cma transport against a second process: PUT and GET zcopy into its
 * memory, transfers of many segments progressed fairly across endpoints,
 * a peer killed in the middle of a transfer, a stale address (start time
 * of another process), a bad remote address, ep_check, the config
 * checks, the heap an idle endpoint takes, and a process that is not
 * dumpable finding cma not offered.
 *
 * The peer is this binary started again (fork + exec of /proc/self/exe)
 * with OPENUCT_CMA_PEER_FD naming its end of a socket pair: it opens a
 * cma interface, sends its device and interface addresses and the address
 * of a buffer, then serves commands (fill the buffer, checksum it, exit).
 */
#include "../uct_test.h"

extern "C" {
#include <uct/base/uct_md.h>
#include <uct/sm/cma/cma.h>
#include <ucs/sys/sys.h>
#include <ucs/vfs/vfs.h>
}

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace {

const char *PEER_FD_ENV   = "OPENUCT_CMA_PEER_FD";
const char *PEER_SIZE_ENV = "OPENUCT_CMA_PEER_SIZE";
const char *PEER_MODE_ENV = "OPENUCT_CMA_PEER_MODE";

/* ------------------------------------------------------------------------
 * Socket helpers: exact reads with a timeout
 */

bool write_all(int fd, const void *data, size_t length)
{
    const char *p = static_cast<const char *>(data);
    while (length > 0) {
        ssize_t ret = write(fd, p, length);
        if (ret < 0 && errno == EINTR) {
            continue;
        }
        if (ret <= 0) {
            return false;
        }
        p += ret;
        length -= (size_t)ret;
    }
    return true;
}

bool read_all(int fd, void *data, size_t length, int timeout_ms = 30000)
{
    char *p = static_cast<char *>(data);
    while (length > 0) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int ret           = poll(&pfd, 1, timeout_ms);
        if (ret < 0 && errno == EINTR) {
            continue;
        }
        if (ret <= 0) {
            return false;
        }
        ssize_t n = read(fd, p, length);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        length -= (size_t)n;
    }
    return true;
}

uint64_t pattern_byte(uint64_t seed, size_t i)
{
    return (uint8_t)((i * 131) + (seed * 7) + (i >> 12));
}

void fill(void *buf, size_t length, uint64_t seed)
{
    uint8_t *p = static_cast<uint8_t *>(buf);
    for (size_t i = 0; i < length; ++i) {
        p[i] = (uint8_t)pattern_byte(seed, i);
    }
}

/* FNV-1a */
uint64_t checksum(const void *buf, size_t length)
{
    const uint8_t *p = static_cast<const uint8_t *>(buf);
    uint64_t h       = 1469598103934665603ull;
    for (size_t i = 0; i < length; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

uint64_t pattern_checksum(size_t length, uint64_t seed)
{
    std::vector<uint8_t> v(length);
    fill(v.data(), length, seed);
    return checksum(v.data(), length);
}

uct_component_h find_cma_component()
{
    uct_component_h *components;
    unsigned num;
    uct_component_h found = NULL;

    if (uct_query_components(&components, &num) != UCS_OK) {
        return NULL;
    }
    for (unsigned i = 0; i < num; ++i) {
        uct_component_attr_t attr;
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "cma")) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    return found;
}

/* The cma md (NULL when there is no cma component) */
uct_md_h open_cma_md()
{
    uct_component_h component = find_cma_component();
    uct_md_config_t *config;
    uct_md_h md = NULL;

    if (component == NULL ||
        uct_md_config_read(component, NULL, NULL, &config) != UCS_OK) {
        return NULL;
    }
    if (uct_md_open(component, "cma", config, &md) != UCS_OK) {
        md = NULL;
    }
    uct_config_release(config);
    return md;
}

unsigned count_cma_resources(uct_md_h md)
{
    uct_tl_resource_desc_t *resources;
    unsigned num, count = 0;

    if (uct_md_query_tl_resources(md, &resources, &num) != UCS_OK) {
        return 0;
    }
    for (unsigned i = 0; i < num; ++i) {
        count += !strcmp(resources[i].tl_name, "cma");
    }
    uct_release_tl_resource_list(resources);
    return count;
}

std::string md_info(uct_md_h md)
{
    char *text  = NULL;
    size_t size = 0;
    FILE *f     = open_memstream(&text, &size);
    uct_md_print_info(md, f);
    fclose(f);
    std::string s(text, size);
    free(text);
    return s;
}

/* One cma interface with its worker and md */
struct cma_side {
    uct_md_h md                = NULL;
    uct_worker_h worker        = NULL;
    uct_iface_h iface          = NULL;
    ucs_async_context_t *async = NULL;

    ucs_status_t
    open(const std::vector<std::pair<std::string, std::string>> &config_mods,
         uct_error_handler_t err_handler, void *err_arg)
    {
        uct_iface_config_t *config;
        uct_iface_params_t params;
        ucs_status_t status;

        md = open_cma_md();
        if (md == NULL) {
            return UCS_ERR_NO_DEVICE;
        }
        status =
            ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async);
        if (status != UCS_OK) {
            return status;
        }
        status = uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker);
        if (status != UCS_OK) {
            return status;
        }
        status = uct_md_iface_config_read(md, "cma", NULL, NULL, &config);
        if (status != UCS_OK) {
            return status;
        }
        for (const auto &mod : config_mods) {
            status = uct_config_modify(config, mod.first.c_str(),
                                       mod.second.c_str());
            if (status != UCS_OK) {
                uct_config_release(config);
                return status;
            }
        }
        memset(&params, 0, sizeof(params));
        params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = "cma";
        params.mode.device.dev_name = "memory";
        if (err_handler != NULL) {
            params.field_mask |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                 UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                 UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
            params.err_handler       = err_handler;
            params.err_handler_arg   = err_arg;
            params.err_handler_flags = UCT_CB_FLAG_SYNC;
        }
        status = uct_iface_open(md, worker, &params, config, &iface);
        uct_config_release(config);
        if (status == UCS_OK) {
            uct_iface_progress_enable(iface,
                                      UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
        }
        return status;
    }

    void close()
    {
        if (iface != NULL) {
            uct_iface_close(iface);
            iface = NULL;
        }
        if (worker != NULL) {
            uct_worker_destroy(worker);
            worker = NULL;
        }
        if (async != NULL) {
            ucs_async_context_destroy(async);
            async = NULL;
        }
        if (md != NULL) {
            uct_md_close(md);
            md = NULL;
        }
    }

    ~cma_side()
    {
        close();
    }
};

/* What the peer sends first */
struct peer_hello {
    uint8_t dev_addr[64];
    uint32_t dev_addr_len;
    uint8_t iface_addr[64];
    uint32_t iface_addr_len;
    uint64_t buffer;
    uint64_t size;
};

/* ------------------------------------------------------------------------
 * The peer process
 */

int peer_not_dumpable(int fd)
{
    /* from here on no other process may read or write our memory */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    uct_md_h md = open_cma_md();
    if (md == NULL) {
        return 2;
    }
    uint32_t count   = count_cma_resources(md);
    std::string info = md_info(md);
    uint32_t len     = (uint32_t)info.size();
    uct_md_close(md);
    return (write_all(fd, &count, sizeof(count)) &&
            write_all(fd, &len, sizeof(len)) && write_all(fd, info.data(), len))
               ? 0
               : 3;
}

int peer_main(int fd)
{
    const char *mode = getenv(PEER_MODE_ENV);
    if ((mode != NULL) && !strcmp(mode, "not_dumpable")) {
        return peer_not_dumpable(fd);
    }

    size_t size = strtoull(getenv(PEER_SIZE_ENV), NULL, 0);
    cma_side side;
    if (side.open({}, NULL, NULL) != UCS_OK) {
        return 2;
    }

    uct_iface_attr_t attr;
    peer_hello hello;
    memset(&hello, 0, sizeof(hello));
    if (uct_iface_query(side.iface, &attr) != UCS_OK ||
        attr.device_addr_len > sizeof(hello.dev_addr) ||
        attr.iface_addr_len > sizeof(hello.iface_addr) ||
        uct_iface_get_device_address(
            side.iface, (uct_device_addr_t *)hello.dev_addr) != UCS_OK ||
        uct_iface_get_address(side.iface,
                              (uct_iface_addr_t *)hello.iface_addr) != UCS_OK) {
        return 3;
    }
    std::vector<uint8_t> buffer(size);
    fill(buffer.data(), size, 1);
    hello.dev_addr_len   = (uint32_t)attr.device_addr_len;
    hello.iface_addr_len = (uint32_t)attr.iface_addr_len;
    hello.buffer         = (uintptr_t)buffer.data();
    hello.size           = size;
    if (!write_all(fd, &hello, sizeof(hello))) {
        return 4;
    }

    /* commands: 'F' seed -> fill; 'C' offset length -> checksum;
     * 'Q' -> exit */
    for (;;) {
        char cmd;
        if (!read_all(fd, &cmd, 1, -1)) {
            return 0; /* the test closed the socket */
        }
        uint64_t args[2] = {0, 0}, reply = 0;
        if (cmd == 'F') {
            if (!read_all(fd, args, sizeof(uint64_t))) {
                return 5;
            }
            fill(buffer.data(), size, args[0]);
        } else if (cmd == 'C') {
            if (!read_all(fd, args, sizeof(args)) || args[0] + args[1] > size) {
                return 5;
            }
            reply = checksum(buffer.data() + args[0], args[1]);
        } else {
            return 0;
        }
        if (!write_all(fd, &reply, sizeof(reply))) {
            return 6;
        }
    }
}

/* Runs the peer main and exits when this process was started as one */
struct peer_registrar {
    peer_registrar()
    {
        const char *fd = getenv(PEER_FD_ENV);
        if (fd != NULL) {
            _exit(peer_main(atoi(fd)));
        }
    }
} peer_registrar_instance;

/* ------------------------------------------------------------------------
 * The test side
 */

struct peer_process {
    pid_t pid = -1;
    int sock  = -1;
    peer_hello hello;

    /* starts the peer with a buffer of @a size bytes */
    bool start(size_t size, const char *mode = NULL)
    {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            return false;
        }
        /* the child's end must survive exec */
        int child_fd = dup(sv[1]);
        close(sv[1]);

        std::vector<std::string> env;
        for (char **e = environ; *e != NULL; ++e) {
            env.push_back(*e);
        }
        env.push_back(std::string(PEER_FD_ENV) + "=" +
                      std::to_string(child_fd));
        env.push_back(std::string(PEER_SIZE_ENV) + "=" + std::to_string(size));
        if (mode != NULL) {
            env.push_back(std::string(PEER_MODE_ENV) + "=" + mode);
        }
        std::vector<char *> envp;
        for (std::string &s : env) {
            envp.push_back(&s[0]);
        }
        envp.push_back(NULL);
        char exe[]   = "/proc/self/exe";
        char *argv[] = {exe, NULL};

        pid = fork();
        if (pid == 0) {
            execve(exe, argv, envp.data());
            _exit(127);
        }
        close(child_fd);
        sock = sv[0];
        if (pid < 0) {
            return false;
        }
        return (mode != NULL) || read_all(sock, &hello, sizeof(hello));
    }

    uint64_t remote_checksum(uint64_t offset, uint64_t length)
    {
        char cmd         = 'C';
        uint64_t args[2] = {offset, length};
        uint64_t reply   = 0;
        EXPECT_TRUE(write_all(sock, &cmd, 1) &&
                    write_all(sock, args, sizeof(args)) &&
                    read_all(sock, &reply, sizeof(reply)));
        return reply;
    }

    void remote_fill(uint64_t seed)
    {
        char cmd       = 'F';
        uint64_t reply = 0;
        EXPECT_TRUE(write_all(sock, &cmd, 1) &&
                    write_all(sock, &seed, sizeof(seed)) &&
                    read_all(sock, &reply, sizeof(reply)));
    }

    void kill_and_wait()
    {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            pid = -1;
        }
    }

    ~peer_process()
    {
        kill_and_wait();
        if (sock >= 0) {
            close(sock);
        }
    }
};

struct completion {
    uct_completion_t uct; /* keep first */
    int calls           = 0;
    ucs_status_t status = UCS_OK;
    unsigned done_at    = 0;    /* progress round it completed in */
    unsigned *round     = NULL; /* the test's round counter */

    completion()
    {
        uct.func   = cb;
        uct.count  = 1;
        uct.status = UCS_OK;
    }

    static void cb(uct_completion_t *self)
    {
        completion *c = reinterpret_cast<completion *>(self);
        ++c->calls;
        c->status = self->status;
        if (c->round != NULL) {
            c->done_at = *c->round;
        }
    }
};

struct err_record {
    int calls           = 0;
    uct_ep_h ep         = NULL;
    ucs_status_t status = UCS_OK;
};

ucs_status_t record_error(void *arg, uct_ep_h ep, ucs_status_t status)
{
    err_record *rec = static_cast<err_record *>(arg);
    ++rec->calls;
    rec->ep     = ep;
    rec->status = status;
    return UCS_OK;
}

} // namespace

class test_cma : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        uct_md_h md = open_cma_md();
        if (md == NULL) {
            GTEST_SKIP() << "no cma component (module not built)";
        }
        unsigned count   = count_cma_resources(md);
        std::string info = md_info(md);
        uct_md_close(md);
        if (count == 0) {
            GTEST_SKIP() << "cma is not offered here: " << info;
        }
    }

    void open(const std::vector<std::pair<std::string, std::string>> &mods = {})
    {
        ASSERT_EQ(UCS_OK, m_side.open(mods, record_error, &m_err));
    }

    uct_ep_h connect(const peer_process &peer)
    {
        uct_ep_params_t params;
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                            UCT_EP_PARAM_FIELD_DEV_ADDR |
                            UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.iface      = m_side.iface;
        params.dev_addr   = (const uct_device_addr_t *)peer.hello.dev_addr;
        params.iface_addr = (const uct_iface_addr_t *)peer.hello.iface_addr;
        uct_ep_h ep       = NULL;
        EXPECT_EQ(UCS_OK, uct_ep_create(&params, &ep));
        return ep;
    }

    unsigned progress()
    {
        return uct_worker_progress(m_side.worker);
    }

    /* progresses until @a done or the timeout */
    template <typename F> bool wait(F done, double seconds = 10)
    {
        double deadline = now() + seconds;
        while (!done()) {
            if (now() > deadline) {
                return false;
            }
            progress();
        }
        return true;
    }

    static double now()
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec * 1e-9;
    }

    static uct_iov_t iov(void *buf, size_t length)
    {
        uct_iov_t v;
        v.buffer = buf;
        v.length = length;
        v.memh   = UCT_MEM_HANDLE_NULL;
        v.stride = 0;
        v.count  = 1;
        return v;
    }

    void TearDown() override
    {
        for (uct_ep_h ep : m_eps) {
            uct_ep_destroy(ep);
        }
        m_side.close();
        ucs::test::TearDown();
    }

    cma_side m_side;
    err_record m_err;
    std::vector<uct_ep_h> m_eps;
};

TEST_F(test_cma, put_and_get_zcopy_reach_the_peer)
{
    const size_t size = 256 * 1024;
    peer_process peer;
    ASSERT_TRUE(peer.start(size));
    open();
    uct_ep_h ep = connect(peer);
    ASSERT_NE(nullptr, ep);
    m_eps.push_back(ep);

    /* one segment: done in the call */
    std::vector<uint8_t> src(size), dst(size);
    fill(src.data(), size, 42);
    uct_iov_t v = iov(src.data(), size);
    ASSERT_EQ(UCS_OK, uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer, 0, NULL));
    EXPECT_EQ(checksum(src.data(), size), peer.remote_checksum(0, size));

    peer.remote_fill(77);
    v = iov(dst.data(), size);
    ASSERT_EQ(UCS_OK, uct_ep_get_zcopy(ep, &v, 1, peer.hello.buffer, 0, NULL));
    EXPECT_EQ(pattern_checksum(size, 77), checksum(dst.data(), size));

    /* an iov of three entries, one of them strided blocks, lands in
     * order at a remote offset */
    std::vector<uint8_t> a(100), b(4 * 64), c(3000);
    fill(a.data(), a.size(), 5);
    fill(b.data(), b.size(), 6);
    fill(c.data(), c.size(), 7);
    uct_iov_t vs[3] = {iov(a.data(), a.size()), iov(b.data(), 16),
                       iov(c.data(), c.size())};
    vs[1].count     = 4;
    vs[1].stride    = 64;
    std::vector<uint8_t> expect(a);
    for (int i = 0; i < 4; ++i) {
        expect.insert(expect.end(), b.begin() + i * 64,
                      b.begin() + i * 64 + 16);
    }
    expect.insert(expect.end(), c.begin(), c.end());
    ASSERT_EQ(UCS_OK,
              uct_ep_put_zcopy(ep, vs, 3, peer.hello.buffer + 1000, 0, NULL));
    EXPECT_EQ(checksum(expect.data(), expect.size()),
              peer.remote_checksum(1000, expect.size()));

    /* and back into the same layout */
    std::vector<uint8_t> a2(a.size()), b2(b.size()), c2(c.size());
    uct_iov_t vg[3] = {iov(a2.data(), a2.size()), iov(b2.data(), 16),
                       iov(c2.data(), c2.size())};
    vg[1].count     = 4;
    vg[1].stride    = 64;
    ASSERT_EQ(UCS_OK,
              uct_ep_get_zcopy(ep, vg, 3, peer.hello.buffer + 1000, 0, NULL));
    EXPECT_EQ(a, a2);
    EXPECT_EQ(c, c2);
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(0, memcmp(&b[i * 64], &b2[i * 64], 16)) << "block " << i;
    }
    EXPECT_EQ(0, m_err.calls);
}

TEST_F(test_cma, large_transfers_progress_fairly_across_eps)
{
    const size_t seg = 64 * 1024, length = 2 * 1024 * 1024;
    const unsigned num_eps = 3;
    peer_process peer;
    ASSERT_TRUE(peer.start(num_eps * length));
    open({{"SEG_SIZE", "64k"}});

    std::vector<std::vector<uint8_t>> bufs(num_eps);
    std::vector<completion> comps(num_eps);
    unsigned round = 0;
    for (unsigned i = 0; i < num_eps; ++i) {
        uct_ep_h ep = connect(peer);
        ASSERT_NE(nullptr, ep);
        m_eps.push_back(ep);
        bufs[i].resize(length);
        fill(bufs[i].data(), length, 100 + i);
        comps[i].round = &round;
        uct_iov_t v    = iov(bufs[i].data(), length);
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer + i * length, 0,
                                   &comps[i].uct))
            << "a zcopy of " << length << " bytes over " << seg
            << "-byte segments completed inside the call";
    }

    /* one segment per op per round: equal transfers end in the same
     * round (ep by ep, they would end length/seg rounds apart) */
    ASSERT_TRUE(wait([&] {
        ++round;
        for (const completion &c : comps) {
            if (c.calls == 0) {
                return false;
            }
        }
        return true;
    }));
    unsigned first = comps[0].done_at, last = comps[0].done_at;
    for (const completion &c : comps) {
        EXPECT_EQ(1, c.calls);
        EXPECT_EQ(UCS_OK, c.status);
        first = std::min(first, c.done_at);
        last  = std::max(last, c.done_at);
    }
    EXPECT_LE(last - first, 1u) << "transfers of one size finished "
                                << (last - first) << " rounds apart";
    EXPECT_GE(first, (unsigned)(length / seg) - 1)
        << "a transfer of " << length / seg << " segments finished in " << first
        << " rounds";
    for (unsigned i = 0; i < num_eps; ++i) {
        EXPECT_EQ(checksum(bufs[i].data(), length),
                  peer.remote_checksum(i * length, length))
            << "ep " << i;
    }

    /* a large GET, then an ep flush that waits for it */
    peer.remote_fill(9);
    std::vector<uint8_t> dst(num_eps * length);
    completion get_comp, flush_comp;
    uct_iov_t v = iov(dst.data(), dst.size());
    ASSERT_EQ(
        UCS_INPROGRESS,
        uct_ep_get_zcopy(m_eps[0], &v, 1, peer.hello.buffer, 0, &get_comp.uct));
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(m_eps[0], 0, &flush_comp.uct));
    ASSERT_TRUE(wait([&] { return flush_comp.calls > 0; }));
    EXPECT_EQ(1, get_comp.calls) << "the flush completed before the GET";
    EXPECT_EQ(UCS_OK, get_comp.status);
    EXPECT_EQ(pattern_checksum(dst.size(), 9),
              checksum(dst.data(), dst.size()));
    EXPECT_EQ(UCS_OK, uct_ep_flush(m_eps[0], 0, NULL));
    EXPECT_EQ(UCS_OK, uct_iface_flush(m_side.iface, 0, NULL));
    EXPECT_EQ(0, m_err.calls);
}

TEST_F(test_cma, peer_killed_mid_transfer_fails_the_ep_once)
{
    const size_t length = 64 * 1024 * 1024;
    peer_process peer;
    ASSERT_TRUE(peer.start(length));
    open({{"SEG_SIZE", "64k"}});
    uct_ep_h ep = connect(peer);
    ASSERT_NE(nullptr, ep);
    m_eps.push_back(ep);

    std::vector<uint8_t> src(length, 0x5a);
    completion comp, flush_comp;
    uct_iov_t v = iov(src.data(), length);
    ASSERT_EQ(UCS_INPROGRESS,
              uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer, 0, &comp.uct));
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(ep, 0, &flush_comp.uct));
    for (int i = 0; i < 4; ++i) {
        progress();
    }
    ASSERT_EQ(0, comp.calls) << "1024 segments done in 4 rounds";

    peer.kill_and_wait();
    ASSERT_TRUE(wait([&] { return m_err.calls > 0; }));
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, comp.status);
    EXPECT_EQ(1, flush_comp.calls);
    EXPECT_NE(UCS_OK, flush_comp.status);
    EXPECT_EQ(ep, m_err.ep);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, m_err.status);

    /* once: later progress and operations report nothing more */
    for (int i = 0; i < 100; ++i) {
        progress();
    }
    EXPECT_EQ(1, m_err.calls);
    EXPECT_EQ(1, comp.calls);
    uint64_t word = 0;
    v             = iov(&word, sizeof(word));
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET,
              uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer, 0, NULL));
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET,
              uct_ep_get_zcopy(ep, &v, 1, peer.hello.buffer, 0, NULL));
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, uct_ep_flush(ep, 0, NULL));
    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    progress();
    EXPECT_EQ(1, m_err.calls);
    EXPECT_EQ(UCS_OK, uct_iface_flush(m_side.iface, 0, NULL));
}

TEST_F(test_cma, dead_peer_found_by_a_send_is_reported_from_progress)
{
    peer_process peer;
    ASSERT_TRUE(peer.start(4096));
    open();
    uct_ep_h ep = connect(peer);
    ASSERT_NE(nullptr, ep);
    m_eps.push_back(ep);
    peer.kill_and_wait();

    uint64_t word = 1;
    uct_iov_t v   = iov(&word, sizeof(word));
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET,
              uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer, 0, NULL));
    EXPECT_EQ(0, m_err.calls) << "the error handler ran inside the send";
    ASSERT_TRUE(wait([&] { return m_err.calls > 0; }));
    EXPECT_EQ(ep, m_err.ep);
    for (int i = 0; i < 10; ++i) {
        progress();
    }
    EXPECT_EQ(1, m_err.calls);
}

TEST_F(test_cma, ep_check_reports_a_dead_peer)
{
    peer_process peer;
    ASSERT_TRUE(peer.start(4096));
    open();
    uct_ep_h ep = connect(peer);
    ASSERT_NE(nullptr, ep);
    m_eps.push_back(ep);

    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    for (int i = 0; i < 10; ++i) {
        progress();
    }
    EXPECT_EQ(0, m_err.calls) << "a live peer was reported";

    peer.kill_and_wait();
    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    EXPECT_EQ(0, m_err.calls);
    ASSERT_TRUE(wait([&] { return m_err.calls > 0; }));
    EXPECT_EQ(ep, m_err.ep);
    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    for (int i = 0; i < 10; ++i) {
        progress();
    }
    EXPECT_EQ(1, m_err.calls);
}

TEST_F(test_cma, stale_address_is_unreachable)
{
    peer_process peer;
    ASSERT_TRUE(peer.start(4096));
    open();

    /* same pid, another start time: another process's address */
    peer_process stale = peer;
    stale.pid          = -1;
    stale.sock         = -1;
    uint64_t start;
    memcpy(&start, stale.hello.iface_addr + 4, sizeof(start));
    start += 1;
    memcpy(stale.hello.iface_addr + 4, &start, sizeof(start));
    EXPECT_FALSE(uct_iface_is_reachable(
        m_side.iface, (const uct_device_addr_t *)stale.hello.dev_addr,
        (const uct_iface_addr_t *)stale.hello.iface_addr));
    uct_ep_params_t params;
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = m_side.iface;
    params.dev_addr   = (const uct_device_addr_t *)stale.hello.dev_addr;
    params.iface_addr = (const uct_iface_addr_t *)stale.hello.iface_addr;
    uct_ep_h ep       = NULL;
    EXPECT_EQ(UCS_ERR_UNREACHABLE, uct_ep_create(&params, &ep));

    /* the real address works while the process lives... */
    EXPECT_TRUE(uct_iface_is_reachable(
        m_side.iface, (const uct_device_addr_t *)peer.hello.dev_addr,
        (const uct_iface_addr_t *)peer.hello.iface_addr));
    /* ...and not once it exited */
    peer.kill_and_wait();
    EXPECT_FALSE(uct_iface_is_reachable(
        m_side.iface, (const uct_device_addr_t *)peer.hello.dev_addr,
        (const uct_iface_addr_t *)peer.hello.iface_addr));
    params.iface_addr = (const uct_iface_addr_t *)peer.hello.iface_addr;
    EXPECT_EQ(UCS_ERR_UNREACHABLE, uct_ep_create(&params, &ep));

    /* a device address of another user is not reachable */
    std::vector<uint8_t> dev(peer.hello.dev_addr,
                             peer.hello.dev_addr + peer.hello.dev_addr_len);
    dev[32] ^= 1; /* uid */
    EXPECT_FALSE(uct_iface_is_reachable(
        m_side.iface, (const uct_device_addr_t *)dev.data(), NULL));
}

TEST_F(test_cma, bad_remote_address_fails_the_op_not_the_ep)
{
    const size_t seg = 4096;
    peer_process peer;
    ASSERT_TRUE(peer.start(64 * 1024));
    open({{"SEG_SIZE", "4k"}});
    uct_ep_h ep = connect(peer);
    ASSERT_NE(nullptr, ep);
    m_eps.push_back(ep);

    /* in the call */
    uint64_t word = 1;
    uct_iov_t v   = iov(&word, sizeof(word));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, uct_ep_put_zcopy(ep, &v, 1, 16, 0, NULL));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, uct_ep_get_zcopy(ep, &v, 1, 16, 0, NULL));

    /* queued: runs past the end of the peer's buffer mapping */
    std::vector<uint8_t> big(64 * seg);
    completion comp;
    v = iov(big.data(), big.size());
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_put_zcopy(ep, &v, 1, 4096, 0, &comp.uct));
    ASSERT_TRUE(wait([&] { return comp.calls > 0; }));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, comp.status);

    /* the ep still works */
    word = 0x1234;
    v    = iov(&word, sizeof(word));
    EXPECT_EQ(UCS_OK, uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer, 0, NULL));
    EXPECT_EQ(checksum(&word, sizeof(word)),
              peer.remote_checksum(0, sizeof(word)));
    for (int i = 0; i < 10; ++i) {
        progress();
    }
    EXPECT_EQ(0, m_err.calls);
}

/* Only progress moves queued work: arm refuses while some is queued,
 * and work queued while armed wakes the sleeper at once */
TEST_F(test_cma, event_fd_wakes_for_queued_work)
{
    const size_t length = 1024 * 1024;
    peer_process peer;
    ASSERT_TRUE(peer.start(length));
    open({{"SEG_SIZE", "64k"}});
    uct_ep_h ep = connect(peer);
    ASSERT_NE(nullptr, ep);
    m_eps.push_back(ep);

    int fd = -1;
    ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(m_side.iface, &fd));
    ASSERT_EQ(UCS_OK, uct_iface_event_arm(m_side.iface, UCT_EVENT_SEND_COMP));
    struct pollfd pfd = {fd, POLLIN, 0};
    EXPECT_EQ(0, poll(&pfd, 1, 0)) << "readable with nothing queued";

    std::vector<uint8_t> src(length);
    completion comp;
    uct_iov_t v = iov(src.data(), length);
    ASSERT_EQ(UCS_INPROGRESS,
              uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer, 0, &comp.uct));
    EXPECT_EQ(1, poll(&pfd, 1, 1000)) << "queued work did not wake the fd";
    EXPECT_EQ(UCS_ERR_BUSY,
              uct_iface_event_arm(m_side.iface, UCT_EVENT_SEND_COMP));
    EXPECT_EQ(UCS_ERR_BUSY,
              uct_iface_event_arm(m_side.iface, UCT_EVENT_SEND_COMP))
        << "armed with work queued: a sleeper would never wake";
    ASSERT_TRUE(wait([&] { return comp.calls > 0; }));
    EXPECT_EQ(UCS_OK, uct_iface_event_arm(m_side.iface, UCT_EVENT_SEND_COMP));
}

TEST_F(test_cma, destroy_cancels_queued_ops)
{
    peer_process peer;
    ASSERT_TRUE(peer.start(1024 * 1024));
    open({{"SEG_SIZE", "4k"}});
    uct_ep_h ep = connect(peer);
    ASSERT_NE(nullptr, ep);

    std::vector<uint8_t> src(1024 * 1024);
    completion comp, flush_comp;
    uct_iov_t v = iov(src.data(), src.size());
    ASSERT_EQ(UCS_INPROGRESS,
              uct_ep_put_zcopy(ep, &v, 1, peer.hello.buffer, 0, &comp.uct));
    ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(ep, 0, &flush_comp.uct));
    uct_ep_destroy(ep);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_ERR_CANCELED, comp.status);
    EXPECT_EQ(1, flush_comp.calls);
    EXPECT_EQ(UCS_OK, uct_iface_flush(m_side.iface, 0, NULL));
}

TEST_F(test_cma, bad_config_values_are_rejected)
{
    for (const char *seg : {"0", "2g"}) {
        ucs::scoped_log_capture capture;
        cma_side side;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  side.open({{"SEG_SIZE", seg}}, NULL, NULL));
        EXPECT_TRUE(capture.contains("UCX_CMA_SEG_SIZE")) << seg;
    }
    for (const char *max_iov : {"0", "5000"}) {
        ucs::scoped_log_capture capture;
        cma_side side;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  side.open({{"MAX_IOV", max_iov}}, NULL, NULL));
        EXPECT_TRUE(capture.contains("UCX_CMA_MAX_IOV")) << max_iov;
    }
}

TEST_F(test_cma, idle_ep_heap_is_at_most_64_bytes)
{
    const unsigned num_eps = 500;
    peer_process peer;
    ASSERT_TRUE(peer.start(4096));
    open();

    /* the object tree is off by default (UCX_VFS_ENABLE=n); the test
     * runner turns it on, which costs a directory and files per ep */
    struct enable_again {
        ~enable_again()
        {
            ucs_vfs_set_enabled(1);
        }
    } enable_again;
    ucs_vfs_set_enabled(0);

    /* the heap a second batch of endpoints adds: what the first ep
     * allocates once (tables that grow) is not per endpoint */
    std::vector<uct_ep_h> eps;
    eps.reserve(2 * num_eps);
    size_t heap[3];
    for (int batch = 0; batch < 3; ++batch) {
        heap[batch] = ucs_sys_heap_in_use();
        if (batch == 2) {
            break;
        }
        for (unsigned i = 0; i < num_eps; ++i) {
            uct_ep_h ep = connect(peer);
            ASSERT_NE(nullptr, ep);
            eps.push_back(ep);
        }
    }
    for (uct_ep_h ep : eps) {
        uct_ep_destroy(ep);
    }

    double per_ep = ucs_sys_heap_per_object(heap[1], heap[2], num_eps);
    RecordProperty("heap_bytes_per_idle_ep", std::to_string(per_ep));
    ucs::print_heap_definition();
    printf("heap per idle cma ep: %.1f bytes (first batch %.1f)\n", per_ep,
           ucs_sys_heap_per_object(heap[0], heap[1], num_eps));
    /* 64 bytes each; anything else the process allocates meanwhile (a
     * few bytes over 500 endpoints) is not per endpoint */
    EXPECT_LT(per_ep, 65.0);
    EXPECT_LE(sizeof(uct_cma_ep_t), 64u);
}

/* Endpoints to one peer share its pidfd: 500 of them hold one
 * descriptor, not 500 (the open files limit is often 1024) */
TEST_F(test_cma, eps_to_one_peer_share_one_descriptor)
{
    const unsigned num_eps = 500;
    peer_process peer;
    ASSERT_TRUE(peer.start(4096));
    open();

    auto open_fds = [] {
        unsigned count = 0;
        DIR *dir       = opendir("/proc/self/fd");
        while ((dir != nullptr) && (readdir(dir) != nullptr)) {
            ++count;
        }
        if (dir != nullptr) {
            closedir(dir);
        }
        return count;
    };

    unsigned before = open_fds();
    std::vector<uct_ep_h> eps;
    for (unsigned i = 0; i < num_eps; ++i) {
        uct_ep_h ep = connect(peer);
        ASSERT_NE(nullptr, ep);
        eps.push_back(ep);
    }
    unsigned during = open_fds();
    for (uct_ep_h ep : eps) {
        uct_ep_destroy(ep);
    }
    EXPECT_LE(during, before + 1)
        << "descriptors for " << num_eps << " endpoints to one peer";
    EXPECT_EQ(before, open_fds()) << "a descriptor outlived its endpoints";
}

/* A process that is not dumpable cannot be reached by its peers: cma is
 * not offered there, and the md says why */
TEST_F(test_cma, not_offered_when_not_dumpable)
{
    peer_process child;
    ASSERT_TRUE(child.start(0, "not_dumpable"));
    uint32_t count = 99, len = 0;
    ASSERT_TRUE(read_all(child.sock, &count, sizeof(count)));
    ASSERT_TRUE(read_all(child.sock, &len, sizeof(len)));
    std::string info(len, '\0');
    ASSERT_TRUE(read_all(child.sock, &info[0], len));
    EXPECT_EQ(0u, count) << "cma offered in a process peers cannot reach";
    EXPECT_EQ(0u, info.find("# cma: not offered: ")) << info;
    EXPECT_NE(std::string::npos, info.find("dumpable")) << info;
    EXPECT_EQ(1, (int)std::count(info.begin(), info.end(), '\n')) << info;

    /* and this process still has it */
    uct_md_h md = open_cma_md();
    ASSERT_NE(nullptr, md);
    EXPECT_EQ(1u, count_cma_resources(md));
    EXPECT_EQ(std::string::npos, md_info(md).find("not offered"));
    uct_md_close(md);
}
