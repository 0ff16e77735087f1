/*
 * The base of the tcp transport suites (test_tcp_*.cc in this folder):
 * the wire format, plain-socket and system helpers, and the uct_tcp
 * fixture (entities on tcp/lo, plain sockets to and from them, log line
 * counting).
 *
 * Several tests talk to the transport through plain sockets. They build
 * the messages from the wire format written out below, on purpose not
 * taken from the transport's header: a change of the format on either
 * side makes a test fail instead of silently following along.
 */
#ifndef OPENUCT_TEST_UCT_TCP_TEST_H_
#define OPENUCT_TEST_UCT_TCP_TEST_H_

#include "uct/uct_test.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <endian.h>
#include <list>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <vector>

namespace uct_tcp_test {

/* ------------------------------------------------------------------------
 * Wire format, version 5. Integers are little-endian on the wire except
 * ports and addresses, which are in network order.
 */
namespace wire {

const uint64_t MAGIC   = 0x706374756e65706full; /* "openuctp" */
const uint16_t VERSION = 5;

enum {
    OP_PUT        = 0x40,
    OP_GET_REQ    = 0x41,
    OP_GET_RESP   = 0x42,
    OP_ACK_REQ    = 0x43,
    OP_ACK        = 0x44,
    OP_SWITCH     = 0x45,
    OP_SWITCH_ACK = 0x46,
    OP_UNPAIR     = 0x47
};

enum { CONN_TO_IFACE = 1, CONN_TO_EP = 2 };

enum {
    HS_ACCEPTED    = 0,
    HS_BAD_VERSION = 1,
    HS_NO_EP       = 2,
    HS_DUPLICATE   = 3,
    HS_BAD_SECRET  = 4,
    HS_BAD_REQUEST = 5
};

enum { FLAG_DENIED = 1 };

struct hdr {
    uint8_t id;
    uint8_t flags;
    uint16_t reserved;
    uint32_t length;
};

struct put_hdr {
    uint64_t remote_addr;
    uint64_t rkey;
};

struct handshake {
    uint64_t magic;
    uint16_t version;
    uint8_t conn_type;
    uint8_t family;
    uint16_t listen_port;
    uint16_t reserved;
    uint32_t dst_ep_id;
    uint32_t src_ep_id;
    uint64_t dst_ep_cookie;
    uint64_t src_ep_cookie;
    uint8_t listen_addr[16];
    uint64_t secret;
    uint64_t src_nonce;
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
    uint64_t rkey;
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
struct iface_addr {
    uint16_t port;
    uint64_t secret;
};

struct ep_addr {
    uint16_t port;
    uint32_t ep_id;
    uint64_t cookie;
    uint64_t secret;
};
#pragma pack(pop)

static_assert(sizeof(hdr) == 8, "message header is 8 bytes");
static_assert(sizeof(handshake) == 72, "handshake is 72 bytes");
static_assert(offsetof(handshake, listen_addr) == 40, "handshake layout");
static_assert(sizeof(handshake_reply) == 16, "handshake reply is 16 bytes");
static_assert(sizeof(get_req) == 24, "GET request is 24 bytes");
static_assert(sizeof(put_hdr) == 16, "PUT header is 16 bytes");
static_assert(sizeof(handshake_v1) == 24, "version 1 handshake is 24 bytes");
static_assert(sizeof(iface_addr) == 10, "iface address is 10 bytes");
static_assert(sizeof(ep_addr) == 22, "ep address is 22 bytes");

hdr make_hdr(uint8_t id, uint32_t length, uint8_t flags = 0);

} // namespace wire

const uint8_t GOOD_AM_ID = 2;

double now_sec();

double time_scale();

std::string sockaddr_str(const struct sockaddr_storage &ss);

uint16_t sockaddr_port(const struct sockaddr_storage &ss);

/* Address bytes (4 or 16) of an AF_INET/AF_INET6 socket address */
std::string sockaddr_ip_bytes(const struct sockaddr_storage &ss);

/* Entries of /proc/self/fd: every descriptor, or only sockets. */
std::vector<int> open_fds(bool sockets_only);

size_t count_sockets();

/* A port on the loopback address nobody listens on (right now). */
uint16_t free_port();

/* Restores RLIMIT_NOFILE when it goes out of scope. */
class nofile_limit {
public:
    nofile_limit()
    {
        m_saved = (getrlimit(RLIMIT_NOFILE, &m_orig) == 0);
        EXPECT_TRUE(m_saved) << "getrlimit: " << strerror(errno);
    }

    ~nofile_limit()
    {
        restore();
    }

    const struct rlimit &orig() const
    {
        return m_orig;
    }

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
            EXPECT_EQ(0, setrlimit(RLIMIT_NOFILE, &m_orig)) << strerror(errno);
            m_changed = false;
        }
    }

private:
    struct rlimit m_orig;
    bool m_saved   = false;
    bool m_changed = false;
};

/* Records the calls of an iface error handler. */
struct err_recorder {
    struct call {
        uct_ep_h ep;
        ucs_status_t status;
    };

    std::mutex lock;
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
        err_recorder *self = static_cast<err_recorder *>(arg);
        std::lock_guard<std::mutex> guard(self->lock);
        self->calls.push_back({ep, status});
        return UCS_OK;
    }
};

struct unpack_arg {
    std::string data;
    unsigned calls = 0;
};

void unpack_to_string(void *arg, const void *data, size_t length);

struct pack_arg {
    const void *buffer;
    size_t length;
};

size_t pack_buffer(void *dest, void *arg);

uint64_t am_header_of(const std::string &data);

} // namespace uct_tcp_test

/* The fixture and the suites use these names unqualified. */
using namespace uct_tcp_test;

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
        raw_socket() : m_fd(-1)
        {}
        explicit raw_socket(int fd) : m_fd(fd)
        {}
        ~raw_socket()
        {
            close();
        }

        raw_socket(const raw_socket &)            = delete;
        raw_socket &operator=(const raw_socket &) = delete;

        int fd() const
        {
            return m_fd;
        }

        /* Blocking connect: the listening socket's backlog completes it
         * without the transport progressing. */
        bool connect_to(const struct sockaddr_storage &dest);

        struct sockaddr_storage local() const;

        std::string local_str() const
        {
            return sockaddr_str(local());
        }

        /* The same from a chosen local IPv4 address (any of 127/8 is
         * lo's): another host, as far as the server can tell. */
        bool connect_from(const char *ip, const struct sockaddr_storage &dest);

        bool send_all(const void *data, size_t length);

        template <typename T> bool send_obj(const T &obj)
        {
            return send_all(&obj, sizeof(obj));
        }

        void close();

        /* Closes with a reset (RST) instead of an orderly shutdown. */
        void reset();

    private:
        int m_fd;
    };

    void SetUp() override;

    void TearDown() override;

    entity *add_entity(const entity_params &params = entity_params());

    /* An entity whose iface reports ep failures to m_errs. */
    entity *add_entity_with_err();

    /* Completions and GET targets owned by the fixture: they outlive the
     * endpoints, which may complete what is outstanding when destroyed
     * after a failed test. */
    counted_completion &make_comp(int count = 1);

    unpack_arg &make_unpack_arg();

    /* Closes @a e (its iface and everything under it) now. */
    void remove_entity(entity *e);

    /* The socket address the iface of @a e listens on, from its device
     * address (family byte + address bytes) and iface address (port). */
    static struct sockaddr_storage iface_sockaddr(const entity &e);

    /* A valid handshake from @a sock to the iface of @a to (its own
     * address as the listening address, for lack of one). */
    static wire::handshake make_handshake(const raw_socket &sock,
                                          uint8_t conn_type, const entity &to);

    /* A file of @a e's one iface in the object tree ("name\n" values) */
    static std::string iface_file(const entity &e, const std::string &name);

    /* Sends a valid CONN_TO_IFACE handshake on @a sock to @a to and
     * checks it is accepted. */
    void handshake_accepted(raw_socket &sock, const entity &to);

    /* The secret in the iface address of @a e */
    static uint64_t iface_secret(const entity &e);

    /* Reads exactly @a length bytes from @a fd while progressing. */
    bool recv_exact(int fd, void *buffer, size_t length, double timeout = 5.0);

    bool recv_hdr(int fd, wire::hdr *h);

    bool recv_reply(int fd, wire::handshake_reply *reply);

    /* Progresses until the transport closes @a fd's connection (EOF or
     * reset); bytes read on the way are appended to @a data. */
    bool wait_closed(int fd, std::string *data = NULL, double timeout = 5.0);

    /* Sends an AM (retrying UCS_ERR_NO_RESOURCE) with @a value as header
     * and waits for @a rec to record it. */
    bool send_am_and_wait(uct_ep_h ep, uint8_t id, uint64_t value,
                          am_recorder &rec, double timeout = DEFAULT_TIMEOUT);

    /* An ep of @a from to the iface at @a dev_addr/@a port (network
     * order) with @a secret, destroyed by the fixture. */
    ucs_status_t create_ep_to(entity &from, const std::vector<char> &dev_addr,
                              uint16_t port, uct_ep_h *ep_p,
                              uint64_t secret = 0);

    ucs_status_t create_ep_to(entity &from, const entity &to, uct_ep_h *ep_p);

    /* An unconnected ep (for CONNECT_TO_EP), destroyed by the fixture. */
    uct_ep_h create_unconnected_ep(entity &e);

    void destroy_own_ep(uct_ep_h ep);

    void destroy_own_eps();

    /* Position in the captured log lines, for log_lines(). */
    size_t log_mark() const
    {
        return captured().size();
    }

    /* Captured lines since @a mark of @a level ("warn", "error"). */
    std::vector<std::string> log_lines(size_t mark, const char *level) const;

    static std::string join(const std::vector<std::string> &lines);

    resource m_res;
    bool m_found = false;
    std::vector<uct_ep_h> m_own_eps;
    err_recorder m_errs;
    std::list<counted_completion> m_comps;
    std::list<unpack_arg> m_unpack_args;
};

#endif
