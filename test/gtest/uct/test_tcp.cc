/*
 * The tcp transport on the loopback device: the connection handshake and
 * its refusals, hostile bytes on the listening port, connect retries,
 * CONNECT_TO_EP (one connection per ep pair), flush completed by the
 * peer's acknowledgement, running out of file descriptors, 2,000
 * endpoints, peer failure, and the configuration rows.
 *
 * Several tests talk to the transport through plain sockets. They build
 * the messages from the wire format written out below, on purpose not
 * taken from the transport's header: a change of the format on either
 * side makes a test fail instead of silently following along.
 */
#include "uct_test.h"

#include <uct/base/uct_worker.h>
#include <ucs/vfs/vfs.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <functional>
#include <ifaddrs.h>
#include <list>
#include <memory>
#include <netinet/in.h>
#include <set>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

/* ------------------------------------------------------------------------
 * Wire format, version 2. Integers are little-endian on the wire except
 * ports and addresses, which are in network order.
 */
namespace wire {

const uint64_t MAGIC   = 0x706374756e65706full; /* "openuctp" */
const uint16_t VERSION = 2;

enum {
    OP_PUT      = 0x40,
    OP_GET_REQ  = 0x41,
    OP_GET_RESP = 0x42,
    OP_ACK_REQ  = 0x43,
    OP_ACK      = 0x44
};

enum { CONN_TO_IFACE = 1, CONN_TO_EP = 2 };

enum { HS_ACCEPTED = 0, HS_BAD_VERSION = 1, HS_NO_EP = 2, HS_DUPLICATE = 3 };

struct hdr {
    uint8_t  id;
    uint8_t  reserved[3];
    uint32_t length;
};

struct handshake {
    uint64_t magic;
    uint16_t version;
    uint8_t  conn_type;
    uint8_t  family;
    uint16_t listen_port;
    uint16_t reserved;
    uint32_t dst_ep_id;
    uint32_t dst_ep_cookie;
    uint32_t src_ep_id;
    uint32_t src_ep_cookie;
    uint8_t  listen_addr[16];
};

struct handshake_reply {
    uint64_t magic;
    uint16_t version;
    uint16_t status;
    uint32_t reserved;
};

struct get_req {
    uint64_t remote_addr;
    uint64_t length;
};

/* The version 1 handshake, for the refusal of an old peer */
struct handshake_v1 {
    uint64_t magic;
    uint32_t version;
    uint32_t reserved;
    uint32_t listen_ip;
    uint16_t listen_port;
    uint16_t reserved2;
};

#pragma pack(push, 1)
struct ep_addr {
    uint16_t port;
    uint32_t ep_id;
    uint32_t cookie;
};
#pragma pack(pop)

static_assert(sizeof(hdr) == 8, "message header is 8 bytes");
static_assert(sizeof(handshake) == 48, "handshake is 48 bytes");
static_assert(offsetof(handshake, listen_addr) == 32, "handshake layout");
static_assert(sizeof(handshake_reply) == 16, "handshake reply is 16 bytes");
static_assert(sizeof(get_req) == 16, "GET request is 16 bytes");
static_assert(sizeof(handshake_v1) == 24, "version 1 handshake is 24 bytes");
static_assert(sizeof(ep_addr) == 10, "ep address is 10 bytes");

hdr make_hdr(uint8_t id, uint32_t length)
{
    hdr h;
    memset(&h, 0, sizeof(h));
    h.id     = id;
    h.length = htole32(length);
    return h;
}

} // namespace wire

const uint8_t GOOD_AM_ID = 2;

double now_sec()
{
    return std::chrono::duration<double>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
}

double time_scale()
{
    return ucs::running_on_valgrind() ? 5.0 : 1.0;
}

std::string sockaddr_str(const struct sockaddr_storage &ss)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned port;

    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in*)&ss;
        inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
        port = ntohs(sin->sin_port);
        return std::string(ip) + ":" + std::to_string(port);
    }
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6*)&ss;
    inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
    port = ntohs(sin6->sin6_port);
    return "[" + std::string(ip) + "]:" + std::to_string(port);
}

uint16_t sockaddr_port(const struct sockaddr_storage &ss)
{
    return (ss.ss_family == AF_INET) ?
                   ((const struct sockaddr_in*)&ss)->sin_port :
                   ((const struct sockaddr_in6*)&ss)->sin6_port;
}

/* Address bytes (4 or 16) of an AF_INET/AF_INET6 socket address */
std::string sockaddr_ip_bytes(const struct sockaddr_storage &ss)
{
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in*)&ss;
        return std::string((const char*)&sin->sin_addr, 4);
    }
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6*)&ss;
    return std::string((const char*)&sin6->sin6_addr, 16);
}

/* Entries of /proc/self/fd: every descriptor, or only sockets. */
std::vector<int> open_fds(bool sockets_only)
{
    std::vector<int> fds;
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;

    if (dir == NULL) {
        ADD_FAILURE() << "opendir(/proc/self/fd): " << strerror(errno);
        return fds;
    }
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        int fd = atoi(entry->d_name);
        if (fd == dirfd(dir)) {
            continue;
        }
        if (sockets_only) {
            char link[256];
            std::string path = std::string("/proc/self/fd/") + entry->d_name;
            ssize_t len = readlink(path.c_str(), link, sizeof(link) - 1);
            if ((len <= 0) || (strncmp(link, "socket:", 7) != 0)) {
                continue;
            }
        }
        fds.push_back(fd);
    }
    closedir(dir);
    return fds;
}

size_t count_sockets()
{
    return open_fds(true).size();
}

/* A port on the loopback address nobody listens on (right now). */
uint16_t free_port()
{
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    int fd        = socket(AF_INET, SOCK_STREAM, 0);

    memset(&sin, 0, sizeof(sin));
    sin.sin_family      = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((fd < 0) || (bind(fd, (struct sockaddr*)&sin, sizeof(sin)) != 0) ||
        (getsockname(fd, (struct sockaddr*)&sin, &len) != 0)) {
        ADD_FAILURE() << "could not find a free port: " << strerror(errno);
    }
    if (fd >= 0) {
        close(fd);
    }
    return ntohs(sin.sin_port);
}

/* Restores RLIMIT_NOFILE when it goes out of scope. */
class nofile_limit {
public:
    nofile_limit()
    {
        m_saved = (getrlimit(RLIMIT_NOFILE, &m_orig) == 0);
        EXPECT_TRUE(m_saved) << "getrlimit: " << strerror(errno);
    }

    ~nofile_limit() { restore(); }

    const struct rlimit &orig() const { return m_orig; }

    bool set_soft(rlim_t soft)
    {
        struct rlimit rl = m_orig;
        rl.rlim_cur      = soft;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            ADD_FAILURE() << "setrlimit(RLIMIT_NOFILE, " << soft
                          << "): " << strerror(errno);
            return false;
        }
        m_changed = true;
        return true;
    }

    void restore()
    {
        if (m_changed) {
            EXPECT_EQ(0, setrlimit(RLIMIT_NOFILE, &m_orig))
                    << strerror(errno);
            m_changed = false;
        }
    }

private:
    struct rlimit m_orig;
    bool          m_saved   = false;
    bool          m_changed = false;
};

/* Records the calls of an iface error handler. */
struct err_recorder {
    struct call {
        uct_ep_h     ep;
        ucs_status_t status;
    };

    std::mutex        lock;
    std::vector<call> calls;

    size_t count()
    {
        std::lock_guard<std::mutex> guard(lock);
        return calls.size();
    }

    call at(size_t i)
    {
        std::lock_guard<std::mutex> guard(lock);
        return calls.at(i);
    }

    static ucs_status_t cb(void *arg, uct_ep_h ep, ucs_status_t status)
    {
        err_recorder *self = static_cast<err_recorder*>(arg);
        std::lock_guard<std::mutex> guard(self->lock);
        self->calls.push_back({ep, status});
        return UCS_OK;
    }
};

struct unpack_arg {
    std::string data;
    unsigned    calls = 0;
};

void unpack_to_string(void *arg, const void *data, size_t length)
{
    unpack_arg *ua = static_cast<unpack_arg*>(arg);
    ua->data.assign((const char*)data, length);
    ++ua->calls;
}

struct pack_arg {
    const void *buffer;
    size_t     length;
};

size_t pack_buffer(void *dest, void *arg)
{
    pack_arg *pa = static_cast<pack_arg*>(arg);
    memcpy(dest, pa->buffer, pa->length);
    return pa->length;
}

uint64_t am_header_of(const std::string &data)
{
    uint64_t value = ~0ull;
    if (data.size() >= sizeof(value)) {
        memcpy(&value, data.data(), sizeof(value));
    }
    return value;
}

} // namespace

/*
 * Base of the tcp suites: entities on tcp/lo (found through the public
 * component/md/resource queries), plain sockets to and from them, and log
 * line counting.
 */
class uct_tcp : public uct_test {
protected:
    /* A stream socket the test drives by hand. */
    class raw_socket {
    public:
        raw_socket() : m_fd(-1) {}
        explicit raw_socket(int fd) : m_fd(fd) {}
        ~raw_socket() { close(); }

        raw_socket(const raw_socket &) = delete;
        raw_socket &operator=(const raw_socket &) = delete;

        int fd() const { return m_fd; }

        /* Blocking connect: the listening socket's backlog completes it
         * without the transport progressing. */
        bool connect_to(const struct sockaddr_storage &dest)
        {
            socklen_t len = (dest.ss_family == AF_INET) ?
                                    sizeof(struct sockaddr_in) :
                                    sizeof(struct sockaddr_in6);
            m_fd = socket(dest.ss_family, SOCK_STREAM, 0);
            if (m_fd < 0) {
                ADD_FAILURE() << "socket: " << strerror(errno);
                return false;
            }
            if (::connect(m_fd, (const struct sockaddr*)&dest, len) != 0) {
                ADD_FAILURE() << "connect to " << sockaddr_str(dest) << ": "
                              << strerror(errno);
                return false;
            }
            return true;
        }

        struct sockaddr_storage local() const
        {
            struct sockaddr_storage ss;
            socklen_t len = sizeof(ss);
            memset(&ss, 0, sizeof(ss));
            getsockname(m_fd, (struct sockaddr*)&ss, &len);
            return ss;
        }

        std::string local_str() const { return sockaddr_str(local()); }

        bool send_all(const void *data, size_t length)
        {
            const char *p = static_cast<const char*>(data);
            while (length > 0) {
                ssize_t ret = ::send(m_fd, p, length, MSG_NOSIGNAL);
                if (ret < 0) {
                    if (errno == EINTR) {
                        continue;
                    }
                    ADD_FAILURE() << "send: " << strerror(errno);
                    return false;
                }
                p      += ret;
                length -= ret;
            }
            return true;
        }

        template <typename T> bool send_obj(const T &obj)
        {
            return send_all(&obj, sizeof(obj));
        }

        void close()
        {
            if (m_fd >= 0) {
                ::close(m_fd);
                m_fd = -1;
            }
        }

        /* Closes with a reset (RST) instead of an orderly shutdown. */
        void reset()
        {
            struct linger lin = {1, 0};
            setsockopt(m_fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
            close();
        }

    private:
        int m_fd;
    };

    void SetUp() override
    {
        uct_test::SetUp();
        for (const resource &r : uct_test::all_resources()) {
            if ((r.tl_name == "tcp") && (r.dev_name == "lo")) {
                m_res   = r;
                m_found = true;
                break;
            }
        }
        if (!m_found) {
            GTEST_SKIP() << "no tcp transport on the loopback device";
        }
    }

    void TearDown() override
    {
        destroy_own_eps();
        uct_test::TearDown();
    }

    entity *add_entity(const entity_params &params = entity_params())
    {
        m_entities.emplace_back(new entity(m_res, params));
        return m_entities.back().get();
    }

    /* An entity whose iface reports ep failures to m_errs. */
    entity *add_entity_with_err()
    {
        entity_params params;
        params.err_handler     = err_recorder::cb;
        params.err_handler_arg = &m_errs;
        return add_entity(params);
    }

    /* Completions and GET targets owned by the fixture: they outlive the
     * endpoints, which may complete what is outstanding when destroyed
     * after a failed test. */
    counted_completion &make_comp(int count = 1)
    {
        m_comps.emplace_back(count);
        return m_comps.back();
    }

    unpack_arg &make_unpack_arg()
    {
        m_unpack_args.emplace_back();
        return m_unpack_args.back();
    }

    /* Closes @a e (its iface and everything under it) now. */
    void remove_entity(entity *e)
    {
        for (auto it = m_entities.begin(); it != m_entities.end(); ++it) {
            if (it->get() == e) {
                m_entities.erase(it);
                return;
            }
        }
        ADD_FAILURE() << "entity " << e << " is not the test's";
    }

    /* The socket address the iface of @a e listens on, from its device
     * address (family byte + address bytes) and iface address (port). */
    static struct sockaddr_storage iface_sockaddr(const entity &e)
    {
        struct sockaddr_storage ss;
        const std::vector<char> &dev = e.dev_addr();
        uint16_t port;

        memset(&ss, 0, sizeof(ss));
        EXPECT_GE(e.iface_addr().size(), sizeof(port));
        memcpy(&port, e.iface_addr().data(), sizeof(port));

        uint8_t family = (uint8_t)dev.at(0);
        if ((family == AF_INET) && (dev.size() >= 5)) {
            struct sockaddr_in *sin = (struct sockaddr_in*)&ss;
            sin->sin_family         = AF_INET;
            sin->sin_port           = port;
            memcpy(&sin->sin_addr, &dev[1], 4);
        } else if ((family == AF_INET6) && (dev.size() >= 17)) {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6*)&ss;
            sin6->sin6_family         = AF_INET6;
            sin6->sin6_port           = port;
            memcpy(&sin6->sin6_addr, &dev[1], 16);
        } else {
            ADD_FAILURE() << "device address of " << dev.size()
                          << " bytes does not start with AF_INET/AF_INET6 "
                          << "(first byte " << (unsigned)family << ")";
        }
        return ss;
    }

    /* A valid handshake from @a sock (its own address as the listening
     * address, for lack of one). */
    static wire::handshake make_handshake(const raw_socket &sock,
                                          uint8_t conn_type)
    {
        struct sockaddr_storage local = sock.local();
        std::string ip                = sockaddr_ip_bytes(local);
        wire::handshake hs;

        memset(&hs, 0, sizeof(hs));
        hs.magic       = htole64(wire::MAGIC);
        hs.version     = htole16(wire::VERSION);
        hs.conn_type   = conn_type;
        hs.family      = (uint8_t)local.ss_family;
        hs.listen_port = sockaddr_port(local);
        memcpy(hs.listen_addr, ip.data(), ip.size());
        return hs;
    }

    /* Reads exactly @a length bytes from @a fd while progressing. */
    bool recv_exact(int fd, void *buffer, size_t length,
                    double timeout = 5.0)
    {
        char *p         = static_cast<char*>(buffer);
        size_t got      = 0;
        double deadline = now_sec() + (timeout * time_scale());

        while (got < length) {
            progress();
            ssize_t ret = ::recv(fd, p + got, length - got, MSG_DONTWAIT);
            if (ret > 0) {
                got += ret;
            } else if (ret == 0) {
                ADD_FAILURE() << "connection closed after " << got
                              << " of " << length << " bytes";
                return false;
            } else if ((errno != EAGAIN) && (errno != EINTR)) {
                ADD_FAILURE() << "recv after " << got << " of " << length
                              << " bytes: " << strerror(errno);
                return false;
            } else if (now_sec() > deadline) {
                ADD_FAILURE() << "timed out with " << got << " of " << length
                              << " bytes";
                return false;
            }
        }
        return true;
    }

    bool recv_hdr(int fd, wire::hdr *h)
    {
        if (!recv_exact(fd, h, sizeof(*h))) {
            return false;
        }
        h->length = le32toh(h->length);
        return true;
    }

    bool recv_reply(int fd, wire::handshake_reply *reply)
    {
        if (!recv_exact(fd, reply, sizeof(*reply))) {
            return false;
        }
        reply->magic   = le64toh(reply->magic);
        reply->version = le16toh(reply->version);
        reply->status  = le16toh(reply->status);
        return true;
    }

    /* Progresses until the transport closes @a fd's connection (EOF or
     * reset); bytes read on the way are appended to @a data. */
    bool wait_closed(int fd, std::string *data = NULL, double timeout = 5.0)
    {
        double deadline = now_sec() + (timeout * time_scale());
        char buf[4096];

        for (;;) {
            progress();
            ssize_t ret = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (ret == 0) {
                return true;
            } else if (ret > 0) {
                if (data != NULL) {
                    data->append(buf, ret);
                }
                continue;
            } else if ((errno != EAGAIN) && (errno != EINTR)) {
                return true; /* ECONNRESET and the like */
            }
            if (now_sec() > deadline) {
                return false;
            }
        }
    }

    /* Sends an AM (retrying UCS_ERR_NO_RESOURCE) with @a value as header
     * and waits for @a rec to record it. */
    bool send_am_and_wait(uct_ep_h ep, uint8_t id, uint64_t value,
                          am_recorder &rec, double timeout = DEFAULT_TIMEOUT)
    {
        size_t before = rec.count();
        ssize_t ret   = retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_am_short(ep, id, value, NULL, 0);
                },
                "uct_ep_am_short");
        if (ret != UCS_OK) {
            ADD_FAILURE() << "uct_ep_am_short: "
                          << ucs_status_string((ucs_status_t)ret);
            return false;
        }
        if (!wait_for([&] { return rec.count() > before; },
                      "active message " + std::to_string(value), timeout)) {
            return false;
        }
        EXPECT_EQ(value, am_header_of(rec.at(before).data));
        return true;
    }

    /* An ep of @a from to the iface at @a dev_addr/@a port (network
     * order), destroyed by the fixture. */
    ucs_status_t create_ep_to(entity &from, const std::vector<char> &dev_addr,
                              uint16_t port, uct_ep_h *ep_p)
    {
        uct_ep_params_t params;

        memset(&params, 0, sizeof(params));
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                            UCT_EP_PARAM_FIELD_DEV_ADDR |
                            UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.iface      = from.iface();
        params.dev_addr   = (const uct_device_addr_t*)dev_addr.data();
        params.iface_addr = (const uct_iface_addr_t*)&port;
        ucs_status_t status = uct_ep_create(&params, ep_p);
        if (status == UCS_OK) {
            m_own_eps.push_back(*ep_p);
        }
        return status;
    }

    ucs_status_t create_ep_to(entity &from, const entity &to, uct_ep_h *ep_p)
    {
        uint16_t port;
        memcpy(&port, to.iface_addr().data(), sizeof(port));
        return create_ep_to(from, to.dev_addr(), port, ep_p);
    }

    /* An unconnected ep (for CONNECT_TO_EP), destroyed by the fixture. */
    uct_ep_h create_unconnected_ep(entity &e)
    {
        uct_ep_params_t params;
        uct_ep_h ep = NULL;

        memset(&params, 0, sizeof(params));
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
        params.iface      = e.iface();
        ucs_status_t status = uct_ep_create(&params, &ep);
        EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
        if (status != UCS_OK) {
            return NULL;
        }
        m_own_eps.push_back(ep);
        return ep;
    }

    void destroy_own_ep(uct_ep_h ep)
    {
        auto it = std::find(m_own_eps.begin(), m_own_eps.end(), ep);
        ASSERT_TRUE(it != m_own_eps.end());
        uct_ep_destroy(ep);
        m_own_eps.erase(it);
    }

    void destroy_own_eps()
    {
        for (uct_ep_h ep : m_own_eps) {
            uct_ep_destroy(ep);
        }
        m_own_eps.clear();
    }

    /* Position in the captured log lines, for log_lines(). */
    size_t log_mark() const { return captured().size(); }

    /* Captured lines since @a mark of @a level ("warn", "error"). */
    std::vector<std::string> log_lines(size_t mark, const char *level) const
    {
        std::vector<std::string> out;
        std::vector<std::string> all = captured();
        std::string prefix           = std::string(level) + " ";

        for (size_t i = mark; i < all.size(); ++i) {
            if (all[i].compare(0, prefix.size(), prefix) == 0) {
                out.push_back(all[i]);
            }
        }
        return out;
    }

    static std::string join(const std::vector<std::string> &lines)
    {
        std::string out;
        for (const std::string &l : lines) {
            out += "\n    " + l;
        }
        return out;
    }

    resource                      m_res;
    bool                          m_found = false;
    std::vector<uct_ep_h>         m_own_eps;
    err_recorder                  m_errs;
    std::list<counted_completion> m_comps;
    std::list<unpack_arg>         m_unpack_args;
};

/* ------------------------------------------------------------------------
 * Addresses
 */

TEST_F(uct_tcp, addresses)
{
    entity *e                    = add_entity();
    const uct_iface_attr_t &attr = e->iface_attr();

    EXPECT_TRUE(e->has_cap(UCT_IFACE_FLAG_CONNECT_TO_IFACE));
    EXPECT_TRUE(e->has_cap(UCT_IFACE_FLAG_CONNECT_TO_EP));
    EXPECT_EQ(sizeof(uint16_t), attr.iface_addr_len);
    EXPECT_EQ(sizeof(wire::ep_addr), attr.ep_addr_len);

    uint8_t family = (uint8_t)e->dev_addr().at(0);
    ASSERT_TRUE((family == AF_INET) || (family == AF_INET6))
            << "first byte of the device address: " << (unsigned)family;
    size_t ip_len = (family == AF_INET) ? 4 : 16;
    EXPECT_EQ(1 + ip_len, attr.device_addr_len);

    /* The address bytes are one of lo's addresses of that family */
    struct ifaddrs *ifaddrs;
    bool found = false;
    ASSERT_EQ(0, getifaddrs(&ifaddrs));
    for (struct ifaddrs *ifa = ifaddrs; ifa != NULL; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr == NULL) || (ifa->ifa_addr->sa_family != family) ||
            strcmp(ifa->ifa_name, "lo")) {
            continue;
        }
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof(ss));
        memcpy(&ss, ifa->ifa_addr,
               (family == AF_INET) ? sizeof(struct sockaddr_in) :
                                     sizeof(struct sockaddr_in6));
        found |= (sockaddr_ip_bytes(ss) ==
                  std::string(&e->dev_addr()[1], ip_len));
    }
    freeifaddrs(ifaddrs);
    EXPECT_TRUE(found) << "the device address is not an address of lo";

    /* Something listens on the iface address */
    raw_socket sock;
    EXPECT_TRUE(sock.connect_to(iface_sockaddr(*e)));
    sock.close();
    progress_for(20);

    EXPECT_TRUE(e->is_reachable(*e));
}

/* ------------------------------------------------------------------------
 * Handshake
 */

class uct_tcp_handshake : public uct_tcp {
protected:
    /* Sends @a data as the first bytes of a connection and expects the
     * transport to refuse it: the connection closes, one warning names
     * the peer and contains @a what. Returns the bytes received. */
    std::string expect_refused(const void *data, size_t length,
                               const std::string &what)
    {
        entity *server = add_entity();
        am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
        size_t sockets   = count_sockets();
        std::string received;
        std::string peer;

        {
            ucs::scoped_log_capture capture;
            size_t mark = log_mark();
            raw_socket sock;

            if (!sock.connect_to(iface_sockaddr(*server))) {
                return received;
            }
            peer = sock.local_str();
            sock.send_all(data, length);
            EXPECT_TRUE(wait_closed(sock.fd(), &received))
                    << "the transport kept the connection open";
            sock.close();
            wait_for([&] { return count_sockets() == sockets; },
                     "the accepted socket to be closed");
            progress_for(20);

            std::vector<std::string> warns  = log_lines(mark, "warn");
            std::vector<std::string> errors = log_lines(mark, "error");
            EXPECT_EQ(1u, warns.size()) << join(warns);
            EXPECT_TRUE(errors.empty()) << join(errors);
            if (!warns.empty()) {
                EXPECT_NE(std::string::npos, warns[0].find(peer))
                        << "the warning does not name the peer " << peer
                        << ": " << warns[0];
                EXPECT_NE(std::string::npos, warns[0].find(what))
                        << "the warning does not say '" << what
                        << "': " << warns[0];
            }
        }

        EXPECT_EQ(0u, rec.count());
        return received;
    }

    /* Checks a refusal that carries a reply with @a status. */
    void check_refusal_reply(const std::string &received, uint16_t status)
    {
        wire::handshake_reply reply;
        ASSERT_EQ(sizeof(reply), received.size())
                << "expected exactly one handshake reply before the close";
        memcpy(&reply, received.data(), sizeof(reply));
        EXPECT_EQ(wire::MAGIC, le64toh(reply.magic));
        EXPECT_EQ(wire::VERSION, le16toh(reply.version));
        EXPECT_EQ(status, le16toh(reply.status));
    }
};

/* A correct handshake is accepted, and messages after it are delivered
 * however the stream splits them. */
TEST_F(uct_tcp_handshake, accepted_then_messages)
{
    entity *server   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    raw_socket sock;

    ASSERT_TRUE(sock.connect_to(iface_sockaddr(*server)));
    ASSERT_TRUE(sock.send_obj(make_handshake(sock, wire::CONN_TO_IFACE)));

    wire::handshake_reply reply;
    ASSERT_TRUE(recv_reply(sock.fd(), &reply));
    EXPECT_EQ(wire::MAGIC, reply.magic);
    EXPECT_EQ(wire::VERSION, reply.version);
    EXPECT_EQ(wire::HS_ACCEPTED, reply.status);

    /* Three messages: one whole, two in one write, the last one byte at
     * a time with progress in between. */
    std::string stream;
    for (uint64_t i = 0; i < 3; ++i) {
        wire::hdr h = wire::make_hdr(GOOD_AM_ID, 16);
        uint64_t payload[2] = {htole64(100 + i), htole64(~i)};
        stream.append((const char*)&h, sizeof(h));
        stream.append((const char*)payload, sizeof(payload));
    }
    const size_t msg = sizeof(wire::hdr) + 16;
    ASSERT_TRUE(sock.send_all(stream.data(), msg));
    wait_for([&] { return rec.count() == 1; }, "the first message");
    for (size_t i = msg; i < stream.size(); ++i) {
        ASSERT_TRUE(sock.send_all(&stream[i], 1));
        progress();
    }
    wait_for([&] { return rec.count() == 3; }, "three messages");
    progress_for(20);

    ASSERT_EQ(3u, rec.count());
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(stream.substr(i * msg + sizeof(wire::hdr), 16),
                  rec.at(i).data)
                << "message " << i;
    }

    /* Still open: nothing to read, no close */
    char c;
    ssize_t ret = recv(sock.fd(), &c, 1, MSG_DONTWAIT);
    EXPECT_TRUE((ret < 0) && (errno == EAGAIN)) << "recv returned " << ret;
}

TEST_F(uct_tcp_handshake, bad_magic)
{
    wire::handshake hs;

    memset(&hs, 0, sizeof(hs));
    hs.magic     = htole64(0x0123456789abcdefull);
    hs.version   = htole16(wire::VERSION);
    hs.conn_type = wire::CONN_TO_IFACE;
    hs.family    = AF_INET;

    std::string received = expect_refused(&hs, sizeof(hs), "magic");
    if (received.size() >= sizeof(wire::handshake_reply)) {
        wire::handshake_reply reply;
        memcpy(&reply, received.data(), sizeof(reply));
        EXPECT_NE(wire::HS_ACCEPTED, le16toh(reply.status))
                << "a handshake with a wrong magic was accepted";
    }
}

TEST_F(uct_tcp_handshake, bad_version)
{
    wire::handshake hs;

    memset(&hs, 0, sizeof(hs));
    hs.magic     = htole64(wire::MAGIC);
    hs.version   = htole16(wire::VERSION + 1);
    hs.conn_type = wire::CONN_TO_IFACE;
    hs.family    = AF_INET;

    std::string received = expect_refused(&hs, sizeof(hs), "version");
    check_refusal_reply(received, wire::HS_BAD_VERSION);
}

/* A version 1 peer sends its 24-byte handshake and waits: the refusal
 * must not wait for the 48 bytes of a version 2 handshake. */
TEST_F(uct_tcp_handshake, old_version_short_handshake)
{
    wire::handshake_v1 hs;

    memset(&hs, 0, sizeof(hs));
    hs.magic       = htole64(wire::MAGIC);
    hs.version     = htole32(1);
    hs.listen_ip   = htonl(INADDR_LOOPBACK);
    hs.listen_port = htons(1);

    std::string received = expect_refused(&hs, sizeof(hs), "version");
    check_refusal_reply(received, wire::HS_BAD_VERSION);
}

/* CONN_TO_EP naming an ep the iface does not have: refused with NO_EP. */
TEST_F(uct_tcp_handshake, conn_to_unknown_ep)
{
    entity *server = add_entity();
    raw_socket sock;
    std::string received;

    ASSERT_TRUE(sock.connect_to(iface_sockaddr(*server)));
    wire::handshake hs = make_handshake(sock, wire::CONN_TO_EP);
    hs.dst_ep_id       = htole32(0x7fff1234);
    hs.dst_ep_cookie   = htole32(0x5a5a5a5a);
    hs.src_ep_id       = htole32(1);
    hs.src_ep_cookie   = htole32(2);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();
    ASSERT_TRUE(sock.send_obj(hs));
    EXPECT_TRUE(wait_closed(sock.fd(), &received))
            << "the transport kept the connection open";
    progress_for(20);

    ASSERT_EQ(sizeof(wire::handshake_reply), received.size());
    wire::handshake_reply reply;
    memcpy(&reply, received.data(), sizeof(reply));
    EXPECT_EQ(wire::MAGIC, le64toh(reply.magic));
    EXPECT_EQ(wire::HS_NO_EP, le16toh(reply.status));
    EXPECT_LE(log_lines(mark, "warn").size(), 1u);
    EXPECT_TRUE(log_lines(mark, "error").empty())
            << join(log_lines(mark, "error"));
}

/* ------------------------------------------------------------------------
 * Hostile input on the listening port
 */

class uct_tcp_hostile : public uct_tcp {
protected:
    /*
     * A server iface with a recorder on every AM id, and a well-behaved
     * pair (client <-> server) exchanging AMs before and after @a attack
     * sends its bytes on a plain socket. @a closed_by_peer: the transport
     * must close that connection; @a min_warn..@a max_warn warnings, no
     * error.
     */
    void run(const std::function<void(raw_socket &)> &attack,
             bool closed_by_peer, unsigned min_warn, unsigned max_warn)
    {
        entity *server = add_entity();
        entity *client = add_entity();

        m_server = server;

        am_recorder &bad = install_recorder(*server, 0);
        for (uint8_t id = 1; id < UCT_AM_ID_MAX; ++id) {
            if (id != GOOD_AM_ID) {
                bad.install(*server, id);
            }
        }
        am_recorder &good_s = install_recorder(*server, GOOD_AM_ID);
        am_recorder &good_c = install_recorder(*client, GOOD_AM_ID);

        uct_ep_h cs = client->connect_to(*server);
        uct_ep_h sc = server->connect_to(*client);
        ASSERT_TRUE((cs != NULL) && (sc != NULL));
        ASSERT_TRUE(send_am_and_wait(cs, GOOD_AM_ID, 1, good_s));
        ASSERT_TRUE(send_am_and_wait(sc, GOOD_AM_ID, 2, good_c));

        size_t sockets = count_sockets();
        {
            ucs::scoped_log_capture capture;
            size_t mark = log_mark();
            raw_socket sock;

            ASSERT_TRUE(sock.connect_to(iface_sockaddr(*server)));
            attack(sock);
            if (HasFatalFailure()) {
                return;
            }
            if (closed_by_peer) {
                EXPECT_TRUE(wait_closed(sock.fd()))
                        << "the transport kept the connection open";
            } else {
                progress_for(50);
            }
            sock.close();
            wait_for([&] { return count_sockets() == sockets; },
                     "the accepted socket to be closed");
            progress_for(20);

            std::vector<std::string> warns  = log_lines(mark, "warn");
            std::vector<std::string> errors = log_lines(mark, "error");
            EXPECT_GE(warns.size(), min_warn) << join(warns);
            EXPECT_LE(warns.size(), max_warn) << join(warns);
            EXPECT_TRUE(errors.empty()) << join(errors);
        }

        EXPECT_EQ(0u, bad.count()) << "hostile bytes reached an AM handler";
        for (uint64_t i = 0; i < 4; ++i) {
            EXPECT_TRUE(send_am_and_wait(cs, GOOD_AM_ID, 10 + i, good_s));
            EXPECT_TRUE(send_am_and_wait(sc, GOOD_AM_ID, 20 + i, good_c));
        }
        /* every receive buffer went back, the attacker's included */
        EXPECT_EQ("0\n", rx_partial_msgs(*server));
    }

    /* The rx_partial_msgs file of @a e's one iface in the object tree */
    static std::string rx_partial_msgs(const entity &e)
    {
        std::string dir = "/uct/worker/" +
                          std::to_string(uct_worker_priv(e.worker())->id) +
                          "/iface";
        std::vector<std::string> ifaces;
        ucs_vfs_path_list_dir(
                dir.c_str(),
                [](const char *name, void *arg) {
                    static_cast<std::vector<std::string>*>(arg)->push_back(
                            name);
                },
                &ifaces);
        if (ifaces.size() != 1) {
            return "no single iface under " + dir;
        }

        std::string path = dir + "/" + ifaces[0] + "/rx_partial_msgs";
        ucs_string_buffer_t strb;
        ucs_string_buffer_init(&strb);
        ucs_status_t status = ucs_vfs_path_read_file(path.c_str(), &strb);
        std::string text = (status == UCS_OK) ?
                           ucs_string_buffer_cstr(&strb) :
                           path + ": " + ucs_status_string(status);
        ucs_string_buffer_cleanup(&strb);
        return text;
    }

    entity *m_server = nullptr;

    /* Sends a valid CONN_TO_IFACE handshake and checks it is accepted. */
    void handshake(raw_socket &sock)
    {
        ASSERT_TRUE(sock.send_obj(make_handshake(sock, wire::CONN_TO_IFACE)));
        wire::handshake_reply reply;
        ASSERT_TRUE(recv_reply(sock.fd(), &reply));
        ASSERT_EQ(wire::HS_ACCEPTED, reply.status);
    }
};

TEST_F(uct_tcp_hostile, random_bytes)
{
    run([](raw_socket &sock) {
            std::string junk(512, '\0');
            uint64_t x = 0x243f6a8885a308d3ull;
            for (char &c : junk) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                c  = (char)x;
            }
            junk[0] = (char)~(wire::MAGIC & 0xff); /* surely not the magic */
            ASSERT_TRUE(sock.send_all(junk.data(), junk.size()));
        },
        true, 1, 1);
}

TEST_F(uct_tcp_hostile, am_id_out_of_range)
{
    run([this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            wire::hdr h      = wire::make_hdr(UCT_AM_ID_MAX, 8);
            uint64_t payload = 0x1122334455667788ull;
            ASSERT_TRUE(sock.send_obj(h));
            ASSERT_TRUE(sock.send_obj(payload));
        },
        true, 1, 1);
}

TEST_F(uct_tcp_hostile, length_above_rx_seg)
{
    run([this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            /* UCX_TCP_RX_SEG_SIZE is 64k by default */
            wire::hdr h = wire::make_hdr(1, 64 * 1024 + 1);
            std::string payload(1024, 'x');
            ASSERT_TRUE(sock.send_obj(h));
            ASSERT_TRUE(sock.send_all(payload.data(), payload.size()));
        },
        true, 1, 1);
}

TEST_F(uct_tcp_hostile, truncated_header_then_close)
{
    run([this](raw_socket &sock) {
            handshake(sock);
            if (HasFatalFailure()) {
                return;
            }
            wire::hdr h = wire::make_hdr(1, 8);
            ASSERT_TRUE(sock.send_all(&h, 3));
            progress_for(20);
            /* the server holds a receive buffer for the partial header */
            EXPECT_EQ("1\n", rx_partial_msgs(*m_server));
        },
        false, 0, 1);
}

TEST_F(uct_tcp_hostile, silent_connection)
{
    /* connects and never sends its handshake: dropped after the timeout */
    ucs::scoped_setenv timeout("UCX_TCP_CONN_TIMEOUT", "300ms");
    run([this](raw_socket &sock) {
            double start = now_sec();
            EXPECT_TRUE(wait_closed(sock.fd()))
                    << "a connection without a handshake was kept open";
            EXPECT_GE(now_sec() - start, 0.2)
                    << "closed before UCX_TCP_CONN_TIMEOUT";
        },
        true, 1, 1);
}

/* ------------------------------------------------------------------------
 * Coalescing of small messages (UCX_TCP_COALESCE_TIME)
 */

class uct_tcp_coalesce : public uct_tcp {
protected:
    /* Progresses @a e alone for @a msec. */
    void progress_only(entity &e, double msec)
    {
        double end = now_sec() + (msec / 1e3);
        while (now_sec() < end) {
            e.progress();
        }
    }

    /* A client ep to a server under a 300 ms window, which carried one
     * message (header 1) */
    void connect_with_window()
    {
        ucs::scoped_setenv window("UCX_TCP_COALESCE_TIME", "300ms");
        m_server = add_entity();
        m_client = add_entity();
        m_rec    = &install_recorder(*m_server, GOOD_AM_ID);
        m_ep     = m_client->connect_to(*m_server);
        ASSERT_TRUE(m_ep != NULL);
        ASSERT_TRUE(send_am_and_wait(m_ep, GOOD_AM_ID, 1, *m_rec, 5.0));
    }

    entity *m_server     = NULL;
    entity *m_client     = NULL;
    am_recorder *m_rec   = NULL;
    uct_ep_h m_ep        = NULL;
};

TEST_F(uct_tcp_coalesce, held_until_window_arm_or_flush)
{
    ASSERT_NO_FATAL_FAILURE(connect_with_window());
    entity *server   = m_server;
    entity *client   = m_client;
    am_recorder &rec = *m_rec;
    uct_ep_h ep      = m_ep;

    /* a quiet ep sends at once; one that just wrote holds the next */
    progress_for(400);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 2, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 3, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(2u, rec.count()) << "the first message did not leave at once "
                                  "or the second was not held";
    EXPECT_EQ(2u, am_header_of(rec.at(1).data));

    /* arming the event fd writes what is held, the window notwithstanding */
    ucs_status_t status = uct_iface_event_arm(client->iface(),
                                              UCT_EVENT_SEND_COMP);
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_ERR_BUSY))
            << ucs_status_string(status);
    progress_only(*server, 50);
    ASSERT_EQ(3u, rec.count()) << "event arm did not write the held message";
    EXPECT_EQ(3u, am_header_of(rec.at(2).data));

    /* flush writes it too (progress first: after an arm nothing is held) */
    client->progress();
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 4, NULL, 0));
    status = uct_ep_flush(ep, 0, NULL);
    EXPECT_NE(UCS_OK, status) << "flush found nothing queued";
    progress_only(*server, 50);
    ASSERT_EQ(4u, rec.count()) << "flush did not write the held message";

    /* and progress does once the window has passed */
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 5, NULL, 0));
    progress_for(100);
    EXPECT_EQ(4u, rec.count()) << "written before the window passed";
    progress_for(400);
    ASSERT_EQ(5u, rec.count());
    EXPECT_EQ(5u, am_header_of(rec.at(4).data));
}

/* A process that arms, sends and then sleeps on the event fd: what it
 * sends after the arm leaves at once, until it calls progress again. */
TEST_F(uct_tcp_coalesce, nothing_held_between_arm_and_progress)
{
    ASSERT_NO_FATAL_FAILURE(connect_with_window());
    entity *server   = m_server;
    entity *client   = m_client;
    am_recorder &rec = *m_rec;
    uct_ep_h ep      = m_ep;
    progress_for(400);

    /* a quiet ep writes at once, which opens a window */
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 2, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(2u, rec.count());

    ucs_status_t status = uct_iface_event_arm(client->iface(),
                                              UCT_EVENT_RECV);
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_ERR_BUSY))
            << ucs_status_string(status);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 3, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 4, NULL, 0));
    progress_only(*server, 50);
    ASSERT_EQ(4u, rec.count()) << "a message sent after event arm was held";
    EXPECT_EQ(4u, am_header_of(rec.at(3).data));

    /* progress ends it: coalescing is back */
    client->progress();
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, GOOD_AM_ID, 5, NULL, 0));
    progress_only(*server, 50);
    EXPECT_EQ(4u, rec.count()) << "not held after progress";
    progress_for(400);
    ASSERT_EQ(5u, rec.count());
}

TEST_F(uct_tcp_coalesce, stream_of_small_messages_in_order)
{
    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    uct_ep_h ep      = client->connect_to(*server);
    ASSERT_TRUE(ep != NULL);

    const uint64_t count = 20000;
    for (uint64_t i = 0; i < count; ++i) {
        ssize_t ret = retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_am_short(ep, GOOD_AM_ID, i, &i,
                                                    sizeof(i));
                },
                "uct_ep_am_short");
        ASSERT_EQ(UCS_OK, ret);
    }
    ASSERT_TRUE(wait_for([&] { return rec.count() == count; },
                         "every message"));
    for (uint64_t i = 0; i < count; ++i) {
        ASSERT_EQ(i, am_header_of(rec.at(i).data)) << "out of order";
    }
}

/* zcopy AMs without a user header, queued behind a full socket (the
 * queued operation copies the header, and there is none). */
TEST_F(uct_tcp_coalesce, zcopy_without_header_queued)
{
    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    uct_ep_h ep      = client->connect_to(*server);
    ASSERT_TRUE(ep != NULL);
    ASSERT_TRUE(send_am_and_wait(ep, GOOD_AM_ID, 1, rec));

    const size_t length = 60 * 1024;
    const int max_msgs  = 4096;
    mapped_buffer buf(length, *client);
    buf.pattern_fill(7);
    uct_iov_t iov = buf.iov(0, length);
    std::vector<counted_completion> comps(max_msgs);

    /* fill the socket without letting the server read */
    std::vector<bool> in_flight(max_msgs, false);
    int posted = 0, queued = 0;
    ucs_status_t status;
    do {
        status = uct_ep_am_zcopy(ep, GOOD_AM_ID, NULL, 0, &iov, 1, 0,
                                 comps[posted]);
        if (status == UCS_INPROGRESS) {
            in_flight[posted] = true;
            ++queued;
        }
        if (!UCS_STATUS_IS_ERR(status)) {
            ++posted;
        }
    } while ((status != UCS_ERR_NO_RESOURCE) && (posted < max_msgs));
    ASSERT_EQ(UCS_ERR_NO_RESOURCE, status) << "the socket never filled";
    EXPECT_GT(queued, 0) << "no zcopy was left in flight";

    ASSERT_TRUE(wait_for([&] { return rec.count() == (size_t)posted + 1; },
                         "every zcopy message"));
    for (int i = 0; i < posted; ++i) {
        EXPECT_EQ(in_flight[i] ? 1 : 0, comps[i].calls) << "message " << i;
        ASSERT_EQ(length, rec.at(i + 1).data.size());
        ASSERT_EQ(length, mapped_buffer::pattern_mismatch(
                                  rec.at(i + 1).data.data(), length, 7))
                << "message " << i;
    }
}

/* ------------------------------------------------------------------------
 * Connection establishment: retries
 */

class uct_tcp_connect : public uct_tcp {
};

/* An ep to a port nobody listens on yet; the server iface opens there a
 * little later and the AM sent before arrives. */
TEST_F(uct_tcp_connect, retry_until_server_listens)
{
    entity *client = add_entity_with_err();
    uint16_t port  = free_port();
    uct_ep_h ep;

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    ASSERT_EQ(UCS_OK, create_ep_to(*client, client->dev_addr(), htons(port),
                                   &ep));
    ucs_status_t status = uct_ep_am_short(ep, GOOD_AM_ID, 0xabcdef, NULL, 0);
    EXPECT_TRUE((status == UCS_OK) || (status == UCS_ERR_NO_RESOURCE))
            << ucs_status_string(status);

    progress_for(100); /* refused at least once */

    entity *server;
    {
        ucs::scoped_setenv range("UCX_TCP_PORT_RANGE",
                                 (std::to_string(port) + "-" +
                                  std::to_string(port)).c_str());
        server = add_entity();
    }
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    ASSERT_EQ(port, ntohs(sockaddr_port(iface_sockaddr(*server))))
            << "UCX_TCP_PORT_RANGE was not honoured";

    if (status == UCS_ERR_NO_RESOURCE) {
        status = (ucs_status_t)retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_am_short(ep, GOOD_AM_ID, 0xabcdef,
                                                    NULL, 0);
                },
                "uct_ep_am_short");
        EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    }

    wait_for([&] { return rec.count() > 0; }, "the AM sent before listen");
    progress_for(20);
    ASSERT_EQ(1u, rec.count());
    EXPECT_EQ(0xabcdefull, am_header_of(rec.at(0).data));
    EXPECT_EQ(0u, m_errs.count()) << "error handler called: "
                                << ucs_status_string(m_errs.at(0).status);

    /* The ep is an ordinary connected ep now */
    EXPECT_TRUE(send_am_and_wait(ep, GOOD_AM_ID, 7, rec));
    EXPECT_TRUE(log_lines(mark, "error").empty())
            << join(log_lines(mark, "error"));
}

/* Nobody ever listens: after UCX_TCP_MAX_CONN_RETRIES the error handler
 * reports UCS_ERR_UNREACHABLE once, and sends fail. */
TEST_F(uct_tcp_connect, retries_exhausted)
{
    entity *client;
    {
        ucs::scoped_setenv retries("UCX_TCP_MAX_CONN_RETRIES", "2");
        client = add_entity_with_err();
    }
    uint16_t port = free_port();
    uct_ep_h ep;

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    ASSERT_EQ(UCS_OK, create_ep_to(*client, client->dev_addr(), htons(port),
                                   &ep));
    ucs_status_t status = uct_ep_am_short(ep, GOOD_AM_ID, 1, NULL, 0);
    EXPECT_TRUE((status == UCS_OK) || (status == UCS_ERR_NO_RESOURCE))
            << ucs_status_string(status);

    double start = now_sec();
    wait_for([&] { return m_errs.count() > 0; },
             "the error handler after 2 connect retries", 5.0);
    double elapsed = now_sec() - start;
    progress_for(300);

    ASSERT_EQ(1u, m_errs.count());
    EXPECT_EQ(ep, m_errs.at(0).ep);
    EXPECT_EQ(UCS_ERR_UNREACHABLE, m_errs.at(0).status)
            << ucs_status_string(m_errs.at(0).status);
    EXPECT_LT(elapsed, 5.0 * time_scale());

    status = uct_ep_am_short(ep, GOOD_AM_ID, 2, NULL, 0);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);
    uint64_t word = 0;
    status = uct_ep_put_short(ep, &word, sizeof(word), 0x1000,
                              UCT_INVALID_RKEY);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);

    progress_for(50);
    EXPECT_EQ(1u, m_errs.count()) << "error handler called again";
    EXPECT_TRUE(log_lines(mark, "error").empty())
            << join(log_lines(mark, "error"));
}

/* ------------------------------------------------------------------------
 * CONNECT_TO_EP
 */

class uct_tcp_connect_to_ep : public uct_tcp {
protected:
    /* Connects ep @a ea of @a a and ep @a eb of @a b to each other, both
     * at once, or with @a progress_between ms of progress in between. */
    void connect_pair(entity &a, uct_ep_h ea, entity &b, uct_ep_h eb,
                      double progress_between)
    {
        std::vector<char> addr_a(
                std::max<size_t>(a.iface_attr().ep_addr_len, 1));
        std::vector<char> addr_b(
                std::max<size_t>(b.iface_attr().ep_addr_len, 1));

        ASSERT_EQ(UCS_OK, uct_ep_get_address(ea, (uct_ep_addr_t*)
                                                         addr_a.data()));
        ASSERT_EQ(UCS_OK, uct_ep_get_address(eb, (uct_ep_addr_t*)
                                                         addr_b.data()));

        /* The ep address carries the iface's port */
        wire::ep_addr wa;
        memcpy(&wa, addr_a.data(), sizeof(wa));
        uint16_t port = wa.port;
        EXPECT_EQ(sockaddr_port(iface_sockaddr(a)), port);

        ASSERT_EQ(UCS_OK,
                  uct_ep_connect_to_ep(ea, (const uct_device_addr_t*)
                                                   b.dev_addr().data(),
                                       (const uct_ep_addr_t*)addr_b.data()));
        if (progress_between > 0) {
            double deadline = now_sec() + (progress_between / 1000.0);
            do {
                progress();
                sample_sockets();
            } while (now_sec() < deadline);
        }
        ASSERT_EQ(UCS_OK,
                  uct_ep_connect_to_ep(eb, (const uct_device_addr_t*)
                                                   a.dev_addr().data(),
                                       (const uct_ep_addr_t*)addr_a.data()));
    }

    /* Highest socket count seen: a second connection opened and closed
     * again while connecting shows up here. */
    void sample_sockets()
    {
        m_max_sockets = std::max(m_max_sockets, count_sockets());
    }

    /* Two eps connected to each other (on one iface when @a b == @a a)
     * exchange AMs both ways over exactly one TCP connection. */
    void run(bool one_iface, double progress_between)
    {
        entity *a = add_entity();
        entity *b = one_iface ? a : add_entity();

        ASSERT_TRUE(a->has_cap(UCT_IFACE_FLAG_CONNECT_TO_EP));
        ASSERT_GT(a->iface_attr().ep_addr_len, 0u);

        am_recorder &rec_a = install_recorder(*a, GOOD_AM_ID);
        am_recorder &rec_b = one_iface ? rec_a :
                                         install_recorder(*b, GOOD_AM_ID);

        size_t sockets = count_sockets();
        m_max_sockets  = sockets;
        uct_ep_h ea    = create_unconnected_ep(*a);
        uct_ep_h eb    = create_unconnected_ep(*b);
        ASSERT_TRUE((ea != NULL) && (eb != NULL));
        connect_pair(*a, ea, *b, eb, progress_between);
        if (HasFatalFailure()) {
            return;
        }

        const uint64_t num = 10;
        for (uint64_t i = 0; i < num; ++i) {
            for (auto ep_value : {std::make_pair(ea, 1000 + i),
                                  std::make_pair(eb, 2000 + i)}) {
                ssize_t ret = retry_no_resource(
                        [&] {
                            return (ssize_t)uct_ep_am_short(
                                    ep_value.first, GOOD_AM_ID,
                                    ep_value.second, NULL, 0);
                        },
                        "uct_ep_am_short");
                ASSERT_EQ(UCS_OK, ret)
                        << ucs_status_string((ucs_status_t)ret);
            }
        }

        wait_for([&] {
                     sample_sockets();
                     return one_iface ? (rec_a.count() == 2 * num) :
                                        ((rec_a.count() == num) &&
                                         (rec_b.count() == num));
                 },
                 "the AMs of both eps");
        /* A late second connection would show up now */
        double deadline = now_sec() + 0.1;
        do {
            progress();
            sample_sockets();
        } while (now_sec() < deadline);

        /* In order per sender, each exactly once */
        std::vector<uint64_t> from_ea, from_eb;
        for (size_t i = 0; i < rec_a.count(); ++i) {
            uint64_t v = am_header_of(rec_a.at(i).data);
            (v >= 2000 ? from_eb : from_ea).push_back(v);
        }
        if (!one_iface) {
            EXPECT_TRUE(from_ea.empty()) << "AMs of ea came back to a";
            for (size_t i = 0; i < rec_b.count(); ++i) {
                uint64_t v = am_header_of(rec_b.at(i).data);
                EXPECT_LT(v, 2000u) << "an AM of eb came back to b";
                (v >= 2000 ? from_eb : from_ea).push_back(v);
            }
        }
        ASSERT_EQ(num, from_ea.size());
        ASSERT_EQ(num, from_eb.size());
        for (uint64_t i = 0; i < num; ++i) {
            EXPECT_EQ(1000 + i, from_ea[i]);
            EXPECT_EQ(2000 + i, from_eb[i]);
        }

        EXPECT_EQ(sockets + 2, count_sockets())
                << "expected both ends of exactly one connection";
        EXPECT_EQ(sockets + 2, m_max_sockets)
                << "more than one connection was opened for the pair";

        flush_ep(*a, ea);
        flush_ep(*b, eb);
    }

    size_t m_max_sockets = 0;
};

TEST_F(uct_tcp_connect_to_ep, two_ifaces)
{
    run(false, 0);
}

TEST_F(uct_tcp_connect_to_ep, two_ifaces_progress_between)
{
    run(false, 50);
}

TEST_F(uct_tcp_connect_to_ep, one_iface)
{
    run(true, 0);
}

TEST_F(uct_tcp_connect_to_ep, one_iface_progress_between)
{
    run(true, 50);
}

/* ------------------------------------------------------------------------
 * Flush: RMA completes remotely
 */

class uct_tcp_flush : public uct_tcp {
protected:
    void SetUp() override
    {
        uct_tcp::SetUp();
        if (IsSkipped()) {
            return;
        }
        m_sender   = add_entity();
        m_receiver = add_entity();
        m_rec      = &install_recorder(*m_receiver, GOOD_AM_ID);
        m_ep       = m_sender->connect_to(*m_receiver);
        ASSERT_TRUE(m_ep != NULL);
        /* Connected and idle */
        ASSERT_TRUE(send_am_and_wait(m_ep, GOOD_AM_ID, 1, *m_rec));
        flush_ep(*m_sender, m_ep);
    }

    /* Progresses only the sender for @a msec: nothing the receiver must
     * do can happen. */
    void progress_sender_only(double msec)
    {
        double deadline = now_sec() + (msec / 1000.0);
        do {
            m_sender->progress();
        } while (now_sec() < deadline);
    }

    entity      *m_sender   = NULL;
    entity      *m_receiver = NULL;
    am_recorder *m_rec      = NULL;
    uct_ep_h    m_ep        = NULL;
};

TEST_F(uct_tcp_flush, ep_flush_waits_for_put_ack)
{
    mapped_buffer local(64, *m_sender);
    mapped_buffer remote(64, *m_receiver);
    local.pattern_fill(11);

    ssize_t ret = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_put_short(m_ep, local.ptr(), 64,
                                                 remote.addr(),
                                                 remote.rkey());
            },
            "uct_ep_put_short");
    ASSERT_EQ(UCS_OK, ret) << ucs_status_string((ucs_status_t)ret);

    counted_completion &comp = make_comp();
    ucs_status_t status = uct_ep_flush(m_ep, 0, comp);
    ASSERT_EQ(UCS_INPROGRESS, status)
            << "flush after a PUT must wait for the peer: "
            << ucs_status_string(status);

    progress_sender_only(100);
    EXPECT_EQ(0, comp.calls) << "flush completed without the peer";
    EXPECT_FALSE(remote.pattern_matches(11));

    wait_for([&] { return comp.calls > 0; }, "the flush completion");
    /* The data is in place once the flush completed */
    remote.pattern_check(11);
    progress_for(20);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call)
            << ucs_status_string(comp.status_at_call);
    EXPECT_EQ(UCS_OK, uct_ep_flush(m_ep, 0, NULL));
}

TEST_F(uct_tcp_flush, ep_flush_no_comp_after_put)
{
    mapped_buffer local(256, *m_sender);
    mapped_buffer remote(256, *m_receiver);
    local.pattern_fill(12);

    pack_arg pa = {local.ptr(), local.length()};
    ssize_t ret = retry_no_resource(
            [&] {
                return uct_ep_put_bcopy(m_ep, pack_buffer, &pa,
                                        remote.addr(), remote.rkey());
            },
            "uct_ep_put_bcopy");
    ASSERT_EQ((ssize_t)local.length(), ret);

    EXPECT_EQ(UCS_INPROGRESS, uct_ep_flush(m_ep, 0, NULL));
    progress_sender_only(100);
    EXPECT_EQ(UCS_INPROGRESS, uct_ep_flush(m_ep, 0, NULL))
            << "flush done without the peer";

    ucs_status_t status;
    wait_for([&] {
                 status = uct_ep_flush(m_ep, 0, NULL);
                 return status != UCS_INPROGRESS;
             },
             "uct_ep_flush to return UCS_OK");
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    remote.pattern_check(12);
}

TEST_F(uct_tcp_flush, iface_flush_waits_for_put_ack)
{
    mapped_buffer local(1024, *m_sender);
    mapped_buffer remote(1024, *m_receiver);
    local.pattern_fill(13);

    uct_iov_t iov = local.iov(0, local.length());
    counted_completion &put_comp = make_comp();
    ucs_status_t put_status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_put_zcopy(m_ep, &iov, 1, remote.addr(),
                                                 remote.rkey(), put_comp);
            },
            "uct_ep_put_zcopy");
    ASSERT_TRUE((put_status == UCS_OK) || (put_status == UCS_INPROGRESS))
            << ucs_status_string(put_status);

    counted_completion &comp = make_comp();
    ucs_status_t status = uct_iface_flush(m_sender->iface(), 0, comp);
    ASSERT_EQ(UCS_INPROGRESS, status)
            << "iface flush after a PUT must wait for the peer: "
            << ucs_status_string(status);

    progress_sender_only(100);
    EXPECT_EQ(0, comp.calls) << "iface flush completed without the peer";

    wait_for([&] { return comp.calls > 0; }, "the iface flush completion");
    remote.pattern_check(13);
    /* A zcopy in progress completed no later than the iface flush */
    EXPECT_EQ((put_status == UCS_INPROGRESS) ? 1 : 0, put_comp.calls);
    progress_for(20);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call);
}

/* AMs the socket took need no acknowledgement: flush is done or
 * completes, and the AMs arrive. */
TEST_F(uct_tcp_flush, flush_after_am)
{
    for (uint64_t i = 0; i < 8; ++i) {
        ssize_t ret = retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_am_short(m_ep, GOOD_AM_ID, 100 + i,
                                                    NULL, 0);
                },
                "uct_ep_am_short");
        ASSERT_EQ(UCS_OK, ret);
    }

    counted_completion &comp = make_comp();
    ucs_status_t status = uct_ep_flush(m_ep, 0, comp);
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS))
            << ucs_status_string(status);
    wait_completion(status, comp, "uct_ep_flush after AMs");

    wait_for([&] { return m_rec->count() == 9; }, "8 AMs");
    for (uint64_t i = 0; i < 8; ++i) {
        EXPECT_EQ(100 + i, am_header_of(m_rec->at(1 + i).data));
    }
    flush_iface(*m_sender);
}

/* ------------------------------------------------------------------------
 * Out of file descriptors
 */

class uct_tcp_fd_limit : public uct_tcp {
protected:
    /* The soft RLIMIT_NOFILE that leaves exactly @a free descriptor
     * numbers unused below it. */
    static rlim_t limit_leaving(unsigned free)
    {
        std::vector<int> fds = open_fds(false);
        std::set<int> used(fds.begin(), fds.end());
        unsigned unused  = 0;
        rlim_t limit     = 0;

        while (unused < free) {
            if (!used.count((int)limit)) {
                ++unused;
            }
            ++limit;
        }
        return limit;
    }
};

TEST_F(uct_tcp_fd_limit, ep_create_fails_cleanly)
{
    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    std::vector<uct_ep_h> eps;
    ucs_status_t failure = UCS_OK;

    {
        nofile_limit limit;
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();

        /* Each ep takes one descriptor here and one for the accepted
         * socket on the server: room for 3 eps, the 4th must fail. */
        ASSERT_TRUE(limit.set_soft(limit_leaving(6)));
        for (int i = 0; i < 32; ++i) {
            uct_ep_h ep;
            ucs_status_t status = create_ep_to(*client, *server, &ep);
            if (status != UCS_OK) {
                failure = status;
                break;
            }
            eps.push_back(ep);
            if (!send_am_and_wait(ep, GOOD_AM_ID, i, rec, 3.0)) {
                ADD_FAILURE() << "ep " << i << " does not work under the "
                              << "limit (the server may have run out of "
                              << "descriptors accepting it)";
                break;
            }
        }

        EXPECT_EQ(UCS_ERR_NO_RESOURCE, failure)
                << ucs_status_string(failure);
        EXPECT_GE(eps.size(), 1u) << "no ep could be created under the limit";
        std::vector<std::string> errors = log_lines(mark, "error");
        EXPECT_TRUE(std::any_of(errors.begin(), errors.end(),
                                [](const std::string &line) {
                                    return line.find("ulimit -n") !=
                                           std::string::npos;
                                }))
                << "no error line says to raise ulimit -n:" << join(errors)
                << join(log_lines(mark, "warn"));

        /* The eps created before still work, under the limit */
        for (size_t i = 0; i < eps.size(); ++i) {
            EXPECT_TRUE(send_am_and_wait(eps[i], GOOD_AM_ID, 100 + i, rec));
        }
        limit.restore();
        progress_for(20);
    }

    /* With the limit back, new eps work and so do the old ones */
    uct_ep_h ep;
    ASSERT_EQ(UCS_OK, create_ep_to(*client, *server, &ep));
    EXPECT_TRUE(send_am_and_wait(ep, GOOD_AM_ID, 200, rec));
    for (size_t i = 0; i < eps.size(); ++i) {
        EXPECT_TRUE(send_am_and_wait(eps[i], GOOD_AM_ID, 300 + i, rec));
    }
}

/* ------------------------------------------------------------------------
 * Many endpoints
 */

class uct_tcp_scale : public uct_tcp {
};

TEST_F(uct_tcp_scale, eps_2000)
{
    const size_t num_eps = ucs::test_scale(2000);
    nofile_limit limit;

    const struct rlimit &rl = limit.orig();
    if ((rl.rlim_max != RLIM_INFINITY) && (rl.rlim_max < 4200)) {
        GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << rl.rlim_max
                     << " is below the 4,200 descriptors the test needs";
    }
    rlim_t want = 8192;
    if ((rl.rlim_max != RLIM_INFINITY) && (rl.rlim_max < want)) {
        want = rl.rlim_max;
    }
    if (rl.rlim_cur < want) {
        ASSERT_TRUE(limit.set_soft(want));
    }

    entity *server   = add_entity();
    entity *client   = add_entity();
    am_recorder &rec = install_recorder(*server, GOOD_AM_ID);
    size_t sockets   = count_sockets();
    std::vector<uct_ep_h> eps;
    double start = now_sec();

    for (size_t i = 0; i < num_eps; ++i) {
        uct_ep_h ep;
        ucs_status_t status = create_ep_to(*client, *server, &ep);
        ASSERT_EQ(UCS_OK, status) << "ep " << i << ": "
                                  << ucs_status_string(status);
        eps.push_back(ep);
        ssize_t ret = retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_am_short(ep, GOOD_AM_ID, i, NULL,
                                                    0);
                },
                "uct_ep_am_short");
        ASSERT_EQ(UCS_OK, ret) << "ep " << i;
        progress(); /* the server accepts as we go: no backlog overflow */
    }

    wait_for([&] { return rec.count() >= num_eps; },
             "one AM on each of the eps", 20.0);
    progress_for(20);
    EXPECT_EQ(num_eps, rec.count());
    std::vector<unsigned> seen(num_eps, 0);
    for (size_t i = 0; i < rec.count(); ++i) {
        uint64_t v = am_header_of(rec.at(i).data);
        ASSERT_LT(v, num_eps);
        ++seen[v];
    }
    for (size_t i = 0; i < num_eps; ++i) {
        EXPECT_EQ(1u, seen[i]) << "AM of ep " << i;
    }
    EXPECT_EQ(sockets + (2 * num_eps), count_sockets());

    for (uct_ep_h ep : eps) {
        destroy_own_ep(ep);
    }
    wait_for([&] { return count_sockets() == sockets; },
             "the server to close the accepted sockets");
    RecordProperty("seconds", std::to_string(now_sec() - start));
}

/* ------------------------------------------------------------------------
 * Peer failure
 */

class uct_tcp_peer_failure : public uct_tcp {
};

/* The server iface closes while a GET to it is outstanding. */
TEST_F(uct_tcp_peer_failure, server_closed_with_get_outstanding)
{
    entity *client  = add_entity_with_err();
    entity *server  = add_entity();
    entity *third   = add_entity();
    am_recorder &rs = install_recorder(*server, GOOD_AM_ID);
    am_recorder &rt = install_recorder(*third, GOOD_AM_ID);

    uct_ep_h ep1 = client->connect_to(*server);
    uct_ep_h ep2 = client->connect_to(*third);
    ASSERT_TRUE((ep1 != NULL) && (ep2 != NULL));
    ASSERT_TRUE(send_am_and_wait(ep1, GOOD_AM_ID, 1, rs));
    ASSERT_TRUE(send_am_and_wait(ep2, GOOD_AM_ID, 2, rt));

    std::unique_ptr<mapped_buffer> remote(new mapped_buffer(64, *server));
    remote->pattern_fill(21);
    unpack_arg &ua = make_unpack_arg();
    counted_completion &comp = make_comp();
    ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_get_bcopy(ep1, unpack_to_string, &ua,
                                                 64, remote->addr(),
                                                 remote->rkey(), comp);
            },
            "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();

    /* The server goes away before it read the request */
    remote.reset();
    remove_entity(server);

    wait_for([&] { return m_errs.count() > 0; }, "the error handler", 5.0);
    wait_for([&] { return comp.calls > 0; }, "the GET completion", 5.0);
    progress_for(50);

    ASSERT_EQ(1u, m_errs.count());
    EXPECT_EQ(ep1, m_errs.at(0).ep);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, m_errs.at(0).status)
            << ucs_status_string(m_errs.at(0).status);
    EXPECT_EQ(1, comp.calls);
    EXPECT_LT(comp.status_at_call, UCS_OK)
            << ucs_status_string(comp.status_at_call);
    EXPECT_EQ(0u, ua.calls) << "the GET of a failed ep delivered data";

    status = uct_ep_am_short(ep1, GOOD_AM_ID, 3, NULL, 0);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);

    /* The other ep of the client is unaffected */
    EXPECT_TRUE(send_am_and_wait(ep2, GOOD_AM_ID, 4, rt));
    mapped_buffer third_buf(64, *third);
    third_buf.pattern_fill(22);
    unpack_arg &ua2 = make_unpack_arg();
    counted_completion &comp2 = make_comp();
    status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_get_bcopy(ep2, unpack_to_string, &ua2,
                                                 64, third_buf.addr(),
                                                 third_buf.rkey(), comp2);
            },
            "uct_ep_get_bcopy");
    wait_completion(status, comp2, "GET from the third iface");
    EXPECT_EQ(std::string(third_buf.cptr(), 64), ua2.data);
    EXPECT_EQ(1u, m_errs.count());

    EXPECT_TRUE(log_lines(mark, "error").empty())
            << join(log_lines(mark, "error"));
    EXPECT_LE(log_lines(mark, "warn").size(), 1u)
            << join(log_lines(mark, "warn"));
}

/* ------------------------------------------------------------------------
 * A plain socket as the server: what the transport sends
 */

class uct_tcp_raw_server : public uct_tcp {
protected:
    void SetUp() override
    {
        uct_tcp::SetUp();
        if (IsSkipped()) {
            return;
        }
        m_client = add_entity_with_err();

        /* Listen on the client's device address */
        struct sockaddr_storage ss = iface_sockaddr(*m_client);
        ASSERT_FALSE(HasFailure());
        socklen_t len = (ss.ss_family == AF_INET) ?
                                sizeof(struct sockaddr_in) :
                                sizeof(struct sockaddr_in6);
        if (ss.ss_family == AF_INET) {
            ((struct sockaddr_in*)&ss)->sin_port = 0;
        } else {
            ((struct sockaddr_in6*)&ss)->sin6_port = 0;
        }
        m_listen.reset(new raw_socket(socket(ss.ss_family, SOCK_STREAM, 0)));
        ASSERT_GE(m_listen->fd(), 0);
        ASSERT_EQ(0, bind(m_listen->fd(), (struct sockaddr*)&ss, len))
                << strerror(errno);
        ASSERT_EQ(0, listen(m_listen->fd(), 4));

        uint16_t port = sockaddr_port(m_listen->local());
        ASSERT_EQ(UCS_OK, create_ep_to(*m_client, m_client->dev_addr(), port,
                                       &m_ep));
    }

    /* Accepts the client's connection, checks its handshake and replies
     * ACCEPTED. */
    void accept_client()
    {
        double deadline = now_sec() + (5.0 * time_scale());
        int fd;

        while ((fd = accept4(m_listen->fd(), NULL, NULL, SOCK_NONBLOCK)) <
               0) {
            ASSERT_TRUE((errno == EAGAIN) || (errno == EWOULDBLOCK))
                    << strerror(errno);
            ASSERT_LT(now_sec(), deadline) << "the client did not connect";
            progress();
            usleep(100);
        }
        int flags = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        m_conn.reset(new raw_socket(fd));

        wire::handshake hs;
        ASSERT_TRUE(recv_exact(fd, &hs, sizeof(hs)));
        struct sockaddr_storage client_addr = iface_sockaddr(*m_client);
        std::string ip = sockaddr_ip_bytes(client_addr);
        EXPECT_EQ(wire::MAGIC, le64toh(hs.magic));
        EXPECT_EQ(wire::VERSION, le16toh(hs.version));
        EXPECT_EQ(wire::CONN_TO_IFACE, hs.conn_type);
        EXPECT_EQ(client_addr.ss_family, hs.family);
        EXPECT_EQ(sockaddr_port(client_addr), hs.listen_port)
                << "the handshake must carry the client's listening port";
        EXPECT_EQ(ip, std::string((const char*)hs.listen_addr, ip.size()));

        wire::handshake_reply reply;
        memset(&reply, 0, sizeof(reply));
        reply.magic   = htole64(wire::MAGIC);
        reply.version = htole16(wire::VERSION);
        reply.status  = htole16(wire::HS_ACCEPTED);
        ASSERT_TRUE(m_conn->send_obj(reply));
    }

    /* Reads the next message; its payload into @a payload. */
    void recv_msg(wire::hdr *h, std::string *payload)
    {
        ASSERT_TRUE(recv_hdr(m_conn->fd(), h));
        ASSERT_LE(h->length, 1024u * 1024u);
        payload->resize(h->length);
        if (h->length > 0) {
            ASSERT_TRUE(recv_exact(m_conn->fd(), &(*payload)[0], h->length));
        }
    }

    entity                      *m_client = NULL;
    std::unique_ptr<raw_socket> m_listen;
    std::unique_ptr<raw_socket> m_conn;
    uct_ep_h                    m_ep = NULL;
};

/* The handshake fields, and an AM and a PUT as they appear on the wire. */
TEST_F(uct_tcp_raw_server, handshake_and_messages)
{
    ASSERT_NO_FATAL_FAILURE(accept_client());

    const char payload[] = "abcd";
    ssize_t ret = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_short(m_ep, 5, 0x1122334455667788ull,
                                                payload, 4);
            },
            "uct_ep_am_short");
    ASSERT_EQ(UCS_OK, ret);

    wire::hdr h;
    std::string data;
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(5, h.id);
    ASSERT_EQ(12u, h.length);
    EXPECT_EQ(0x1122334455667788ull, le64toh(am_header_of(data)));
    EXPECT_EQ("abcd", data.substr(8));

    uint64_t words[2] = {0x0102030405060708ull, 0x1112131415161718ull};
    ret = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_put_short(m_ep, words, sizeof(words),
                                                 0xdead0000ull,
                                                 UCT_INVALID_RKEY);
            },
            "uct_ep_put_short");
    ASSERT_EQ(UCS_OK, ret);

    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(wire::OP_PUT, h.id);
    ASSERT_EQ(8u + sizeof(words), h.length);
    EXPECT_EQ(0xdead0000ull, le64toh(am_header_of(data)));
    EXPECT_EQ(std::string((const char*)words, sizeof(words)), data.substr(8));
    EXPECT_EQ(0u, m_errs.count());
}

/* Flush after a PUT asks for an acknowledgement (ACK_REQ) and completes
 * only when the ACK comes back. */
TEST_F(uct_tcp_raw_server, flush_completes_on_ack)
{
    ASSERT_NO_FATAL_FAILURE(accept_client());

    uint64_t word = 42;
    ssize_t ret   = retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_put_short(m_ep, &word, sizeof(word),
                                                 0x1000, UCT_INVALID_RKEY);
            },
            "uct_ep_put_short");
    ASSERT_EQ(UCS_OK, ret);

    counted_completion &comp = make_comp();
    ucs_status_t status = uct_ep_flush(m_ep, 0, comp);
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);

    wire::hdr h;
    std::string data;
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(wire::OP_PUT, h.id);
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    EXPECT_EQ(wire::OP_ACK_REQ, h.id);
    EXPECT_EQ(0u, h.length);

    progress_for(100);
    EXPECT_EQ(0, comp.calls) << "flush completed before the ACK";

    ASSERT_TRUE(m_conn->send_obj(wire::make_hdr(wire::OP_ACK, 0)));
    wait_for([&] { return comp.calls > 0; }, "the flush completion");
    progress_for(20);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_OK, comp.status_at_call);
    EXPECT_EQ(0u, m_errs.count());
}

/* A GET is answered; the next one is cut by a reset: the handler reports
 * UCS_ERR_CONNECTION_RESET once and the GET completes with an error. */
TEST_F(uct_tcp_raw_server, reset_with_get_outstanding)
{
    ASSERT_NO_FATAL_FAILURE(accept_client());

    unpack_arg &ua = make_unpack_arg();
    counted_completion &comp = make_comp();
    ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_get_bcopy(m_ep, unpack_to_string, &ua,
                                                 16, 0x2000, UCT_INVALID_RKEY,
                                                 comp);
            },
            "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);

    wire::hdr h;
    std::string data;
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    ASSERT_EQ(wire::OP_GET_REQ, h.id);
    ASSERT_EQ(sizeof(wire::get_req), h.length);
    wire::get_req req;
    memcpy(&req, data.data(), sizeof(req));
    EXPECT_EQ(0x2000u, le64toh(req.remote_addr));
    EXPECT_EQ(16u, le64toh(req.length));

    std::string answer = "0123456789abcdef";
    ASSERT_TRUE(m_conn->send_obj(wire::make_hdr(wire::OP_GET_RESP, 16)));
    ASSERT_TRUE(m_conn->send_all(answer.data(), answer.size()));
    wait_for([&] { return comp.calls > 0; }, "the first GET");
    EXPECT_EQ(UCS_OK, comp.status_at_call);
    EXPECT_EQ(answer, ua.data);

    comp.reset();
    status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_get_bcopy(m_ep, unpack_to_string, &ua,
                                                 16, 0x3000, UCT_INVALID_RKEY,
                                                 comp);
            },
            "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);
    ASSERT_NO_FATAL_FAILURE(recv_msg(&h, &data));
    ASSERT_EQ(wire::OP_GET_REQ, h.id);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();
    m_conn->reset();

    wait_for([&] { return m_errs.count() > 0; }, "the error handler", 5.0);
    wait_for([&] { return comp.calls > 0; }, "the GET completion", 5.0);
    progress_for(50);
    ASSERT_EQ(1u, m_errs.count());
    EXPECT_EQ(m_ep, m_errs.at(0).ep);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, m_errs.at(0).status)
            << ucs_status_string(m_errs.at(0).status);
    EXPECT_EQ(1, comp.calls);
    EXPECT_LT(comp.status_at_call, UCS_OK)
            << ucs_status_string(comp.status_at_call);
    EXPECT_EQ(1u, ua.calls);

    status = uct_ep_am_short(m_ep, GOOD_AM_ID, 0, NULL, 0);
    EXPECT_LT(status, UCS_OK) << ucs_status_string(status);
    EXPECT_NE(UCS_ERR_NO_RESOURCE, status);
    EXPECT_TRUE(log_lines(mark, "error").empty())
            << join(log_lines(mark, "error"));
    EXPECT_LE(log_lines(mark, "warn").size(), 1u)
            << join(log_lines(mark, "warn"));
}

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
    for (const char *name :
         {"SNDBUF", "RCVBUF", "NODELAY", "TX_SEG_SIZE", "RX_SEG_SIZE",
          "MAX_IOV", "SENDV_THRESH", "PUT_ENABLE", "KEEPIDLE", "KEEPINTVL",
          "KEEPCNT", "SYN_CNT", "MAX_CONN_RETRIES", "CONN_TIMEOUT",
          "PORT_RANGE", "BACKLOG", "AF_PRIO"}) {
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
                 {"KEEPIDLE", "1 fortnight"}}) {
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
    ASSERT_EQ(UCS_OK, uct_config_get(config, "MAX_CONN_RETRIES", value,
                                     sizeof(value)));
    EXPECT_STREQ("7", value);
    ASSERT_EQ(UCS_OK, uct_config_get(config, "MAX_IOV", value, sizeof(value)));
    EXPECT_STREQ("3", value);
    uct_config_release(config);
}
