/*
 * The uct_tcp fixture and the helpers of the tcp suites (tcp_test.h).
 */
#include "tcp_test.h"

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <dirent.h>
#include <unistd.h>

#include <uct/base/uct_worker.h>
#include <ucs/vfs/vfs.h>

namespace uct_tcp_test {

namespace wire {

hdr make_hdr(uint8_t id, uint32_t length, uint8_t flags)
{
    hdr h;
    memset(&h, 0, sizeof(h));
    h.id     = id;
    h.flags  = flags;
    h.length = htole32(length);
    return h;
}

} // namespace wire

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
        const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
        port = ntohs(sin->sin_port);
        return std::string(ip) + ":" + std::to_string(port);
    }
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;
    inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
    port = ntohs(sin6->sin6_port);
    return "[" + std::string(ip) + "]:" + std::to_string(port);
}

uint16_t sockaddr_port(const struct sockaddr_storage &ss)
{
    return (ss.ss_family == AF_INET)
               ? ((const struct sockaddr_in *)&ss)->sin_port
               : ((const struct sockaddr_in6 *)&ss)->sin6_port;
}

/* Address bytes (4 or 16) of an AF_INET/AF_INET6 socket address */
std::string sockaddr_ip_bytes(const struct sockaddr_storage &ss)
{
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;
        return std::string((const char *)&sin->sin_addr, 4);
    }
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;
    return std::string((const char *)&sin6->sin6_addr, 16);
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
            ssize_t len      = readlink(path.c_str(), link, sizeof(link) - 1);
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
    if ((fd < 0) || (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) ||
        (getsockname(fd, (struct sockaddr *)&sin, &len) != 0)) {
        ADD_FAILURE() << "could not find a free port: " << strerror(errno);
    }
    if (fd >= 0) {
        close(fd);
    }
    return ntohs(sin.sin_port);
}

void unpack_to_string(void *arg, const void *data, size_t length)
{
    unpack_arg *ua = static_cast<unpack_arg *>(arg);
    ua->data.assign((const char *)data, length);
    ++ua->calls;
}

size_t pack_buffer(void *dest, void *arg)
{
    pack_arg *pa = static_cast<pack_arg *>(arg);
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

} // namespace uct_tcp_test

bool uct_tcp::raw_socket::connect_to(const struct sockaddr_storage &dest)
{
    socklen_t len = (dest.ss_family == AF_INET) ? sizeof(struct sockaddr_in)
                                                : sizeof(struct sockaddr_in6);
    m_fd          = socket(dest.ss_family, SOCK_STREAM, 0);
    if (m_fd < 0) {
        ADD_FAILURE() << "socket: " << strerror(errno);
        return false;
    }
    if (::connect(m_fd, (const struct sockaddr *)&dest, len) != 0) {
        ADD_FAILURE() << "connect to " << sockaddr_str(dest) << ": "
                      << strerror(errno);
        return false;
    }
    return true;
}

bool uct_tcp::raw_socket::connect_from(const char *ip,
                                       const struct sockaddr_storage &dest)
{
    struct sockaddr_in src;

    if (dest.ss_family != AF_INET) {
        ADD_FAILURE() << "connect_from needs an IPv4 destination";
        return false;
    }
    m_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (m_fd < 0) {
        ADD_FAILURE() << "socket: " << strerror(errno);
        return false;
    }
    memset(&src, 0, sizeof(src));
    src.sin_family = AF_INET;
    if ((inet_pton(AF_INET, ip, &src.sin_addr) != 1) ||
        (bind(m_fd, (const struct sockaddr *)&src, sizeof(src)) != 0)) {
        ADD_FAILURE() << "bind to " << ip << ": " << strerror(errno);
        return false;
    }
    if (::connect(m_fd, (const struct sockaddr *)&dest,
                  sizeof(struct sockaddr_in)) != 0) {
        ADD_FAILURE() << "connect from " << ip << " to " << sockaddr_str(dest)
                      << ": " << strerror(errno);
        return false;
    }
    return true;
}

struct sockaddr_storage uct_tcp::raw_socket::local() const
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    getsockname(m_fd, (struct sockaddr *)&ss, &len);
    return ss;
}

bool uct_tcp::raw_socket::send_all(const void *data, size_t length)
{
    const char *p = static_cast<const char *>(data);
    while (length > 0) {
        ssize_t ret = ::send(m_fd, p, length, MSG_NOSIGNAL);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            ADD_FAILURE() << "send: " << strerror(errno);
            return false;
        }
        p += ret;
        length -= ret;
    }
    return true;
}

void uct_tcp::raw_socket::close()
{
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
}

void uct_tcp::raw_socket::reset()
{
    struct linger lin = {1, 0};
    setsockopt(m_fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
    close();
}

void uct_tcp::SetUp()
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

void uct_tcp::TearDown()
{
    destroy_own_eps();
    uct_test::TearDown();
}

uct_tcp::entity *uct_tcp::add_entity(const entity_params &params)
{
    m_entities.emplace_back(new entity(m_res, params));
    return m_entities.back().get();
}

uct_tcp::entity *uct_tcp::add_entity_with_err()
{
    entity_params params;
    params.err_handler     = err_recorder::cb;
    params.err_handler_arg = &m_errs;
    return add_entity(params);
}

counted_completion &uct_tcp::make_comp(int count)
{
    m_comps.emplace_back(count);
    return m_comps.back();
}

unpack_arg &uct_tcp::make_unpack_arg()
{
    m_unpack_args.emplace_back();
    return m_unpack_args.back();
}

void uct_tcp::remove_entity(entity *e)
{
    for (auto it = m_entities.begin(); it != m_entities.end(); ++it) {
        if (it->get() == e) {
            m_entities.erase(it);
            return;
        }
    }
    ADD_FAILURE() << "entity " << e << " is not the test's";
}

struct sockaddr_storage uct_tcp::iface_sockaddr(const entity &e)
{
    struct sockaddr_storage ss;
    const std::vector<char> &dev = e.dev_addr();
    uint16_t port;

    memset(&ss, 0, sizeof(ss));
    EXPECT_GE(e.iface_addr().size(), sizeof(port));
    memcpy(&port, e.iface_addr().data(), sizeof(port));

    uint8_t family = (uint8_t)dev.at(0);
    if ((family == AF_INET) && (dev.size() >= 5)) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        sin->sin_family         = AF_INET;
        sin->sin_port           = port;
        memcpy(&sin->sin_addr, &dev[1], 4);
    } else if ((family == AF_INET6) && (dev.size() >= 17)) {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
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

uint64_t uct_tcp::iface_secret(const entity &e)
{
    wire::iface_addr addr;

    EXPECT_EQ(sizeof(addr), e.iface_addr().size());
    memset(&addr, 0, sizeof(addr));
    memcpy(&addr, e.iface_addr().data(),
           std::min(sizeof(addr), e.iface_addr().size()));
    return addr.secret;
}

wire::handshake uct_tcp::make_handshake(const raw_socket &sock,
                                        uint8_t conn_type, const entity &to)
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
    hs.secret = iface_secret(to);
    return hs;
}

void uct_tcp::handshake_accepted(raw_socket &sock, const entity &to)
{
    wire::handshake_reply reply;

    ASSERT_TRUE(sock.send_obj(make_handshake(sock, wire::CONN_TO_IFACE, to)));
    ASSERT_TRUE(recv_reply(sock.fd(), &reply));
    ASSERT_EQ(wire::HS_ACCEPTED, reply.status);
}

bool uct_tcp::recv_exact(int fd, void *buffer, size_t length, double timeout)
{
    char *p         = static_cast<char *>(buffer);
    size_t got      = 0;
    double deadline = now_sec() + (timeout * time_scale());

    while (got < length) {
        progress();
        ssize_t ret = ::recv(fd, p + got, length - got, MSG_DONTWAIT);
        if (ret > 0) {
            got += ret;
        } else if (ret == 0) {
            ADD_FAILURE() << "connection closed after " << got << " of "
                          << length << " bytes";
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

bool uct_tcp::recv_hdr(int fd, wire::hdr *h)
{
    if (!recv_exact(fd, h, sizeof(*h))) {
        return false;
    }
    h->length = le32toh(h->length);
    return true;
}

bool uct_tcp::recv_reply(int fd, wire::handshake_reply *reply)
{
    if (!recv_exact(fd, reply, sizeof(*reply))) {
        return false;
    }
    reply->magic   = le64toh(reply->magic);
    reply->version = le16toh(reply->version);
    reply->status  = le16toh(reply->status);
    return true;
}

bool uct_tcp::wait_closed(int fd, std::string *data, double timeout)
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

bool uct_tcp::send_am_and_wait(uct_ep_h ep, uint8_t id, uint64_t value,
                               am_recorder &rec, double timeout)
{
    size_t before = rec.count();
    ssize_t ret   = retry_no_resource(
        [&] { return (ssize_t)uct_ep_am_short(ep, id, value, NULL, 0); },
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

ucs_status_t uct_tcp::create_ep_to(entity &from,
                                   const std::vector<char> &dev_addr,
                                   uint16_t port, uct_ep_h *ep_p,
                                   uint64_t secret)
{
    wire::iface_addr addr;
    uct_ep_params_t params;

    addr.port   = port;
    addr.secret = secret;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface        = from.iface();
    params.dev_addr     = (const uct_device_addr_t *)dev_addr.data();
    params.iface_addr   = (const uct_iface_addr_t *)&addr;
    ucs_status_t status = uct_ep_create(&params, ep_p);
    if (status == UCS_OK) {
        m_own_eps.push_back(*ep_p);
    }
    return status;
}

ucs_status_t uct_tcp::create_ep_to(entity &from, const entity &to,
                                   uct_ep_h *ep_p)
{
    uint16_t port;
    memcpy(&port, to.iface_addr().data(), sizeof(port));
    return create_ep_to(from, to.dev_addr(), port, ep_p, iface_secret(to));
}

uct_ep_h uct_tcp::create_unconnected_ep(entity &e)
{
    uct_ep_params_t params;
    uct_ep_h ep = NULL;

    memset(&params, 0, sizeof(params));
    params.field_mask   = UCT_EP_PARAM_FIELD_IFACE;
    params.iface        = e.iface();
    ucs_status_t status = uct_ep_create(&params, &ep);
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    if (status != UCS_OK) {
        return NULL;
    }
    m_own_eps.push_back(ep);
    return ep;
}

void uct_tcp::destroy_own_ep(uct_ep_h ep)
{
    auto it = std::find(m_own_eps.begin(), m_own_eps.end(), ep);
    ASSERT_TRUE(it != m_own_eps.end());
    uct_ep_destroy(ep);
    m_own_eps.erase(it);
}

void uct_tcp::destroy_own_eps()
{
    for (uct_ep_h ep : m_own_eps) {
        uct_ep_destroy(ep);
    }
    m_own_eps.clear();
}

std::vector<std::string> uct_tcp::log_lines(size_t mark,
                                            const char *level) const
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

std::string uct_tcp::join(const std::vector<std::string> &lines)
{
    std::string out;
    for (const std::string &l : lines) {
        out += "\n    " + l;
    }
    return out;
}

std::string uct_tcp::iface_file(const entity &e, const std::string &name)
{
    std::string dir = "/uct/worker/" +
                      std::to_string(uct_worker_priv(e.worker())->id) +
                      "/iface";
    std::vector<std::string> ifaces;
    ucs_vfs_path_list_dir(
        dir.c_str(),
        [](const char *name, void *arg) {
            static_cast<std::vector<std::string> *>(arg)->push_back(name);
        },
        &ifaces);
    if (ifaces.size() != 1) {
        return "no single iface under " + dir;
    }

    std::string path = dir + "/" + ifaces[0] + "/" + name;
    ucs_string_buffer_t strb;
    ucs_string_buffer_init(&strb);
    ucs_status_t status = ucs_vfs_path_read_file(path.c_str(), &strb);
    std::string text    = (status == UCS_OK)
                              ? ucs_string_buffer_cstr(&strb)
                              : path + ": " + ucs_status_string(status);
    ucs_string_buffer_cleanup(&strb);
    return text;
}
