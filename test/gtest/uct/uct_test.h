/*
 * Base fixture of the transport-parametrized UCT suites.
 *
 * Every suite derived from uct_test runs once per transport resource found
 * at run time (component -> memory domain -> transport/device), so a new
 * transport is tested by the same code as soon as its module loads.
 * OPENUCT_TEST_TLS=self,tcp limits the transports (by transport name,
 * "tl/dev", or test name such as "self_memory").
 *
 * OPENUCT_TEST_PEER_DEVS=DEV=PEERDEV[,DEV=PEERDEV...] sends across two
 * devices: for a resource on device DEV, the sender of create_pairs()'s
 * two-interface pair is opened on PEERDEV (same component and transport;
 * the memory domain that offers it, the one named like the device's
 * prefix before ':' first) while the receiver stays on DEV. The pair is
 * then named "two-devices (PEERDEV -> DEV)"; loopback pairs and entities
 * made with create_entity() keep DEV. A PEERDEV without the transport,
 * or unreachable from DEV, fails the test. On the rxe VM,
 * "rxe_v0:1=rxe_v1:1" makes the packets cross the veth pair.
 *
 * Helpers:
 *  - entity: md + async context + worker + iface (+ endpoints) of one
 *    resource; connects to another entity (or to itself) choosing
 *    CONNECT_TO_IFACE or CONNECT_TO_EP from the capabilities.
 *  - mapped_buffer: host memory registered with an entity's md, with a
 *    remote key when the md needs one, and pattern fill/check helpers.
 *  - wait_for(): progresses every entity until a condition holds, failing
 *    the test after a timeout (10 s).
 *  - pairs: the sender->receiver paths of a test: two interfaces when the
 *    receiver is reachable from another interface, loopback (an
 *    interface sending to itself) when that is possible, and two
 *    processes (see below).
 *
 * Two processes: for the transports OPENUCT_TEST_TWO_PROCESS_TLS names
 * (default "posix,sysv,cma,tcp"; "none" turns it off) that connect to an
 * interface, create_pairs() adds a pair "two-processes" whose receiver
 * lives in a peer process (this binary started again, uct_test_peer.cc).
 * The test reaches that receiver through the same entity, mapped_buffer
 * and am_recorder calls as a local one; each call becomes a request to
 * the peer. What only exists in the receiver's process (its uct handles,
 * raw pointers into its memory) throws std::logic_error naming the call;
 * a test that needs it sets entity_params::local_only for its receiver.
 */
#ifndef OPENUCT_TEST_UCT_TEST_H_
#define OPENUCT_TEST_UCT_TEST_H_

#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
#include <ucs/async/async.h>
}

#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

/* One transport resource: what a parametrized test runs on. */
struct resource {
    std::string component_name;
    std::string md_name;
    std::string tl_name;
    std::string dev_name;
    uct_device_type_t dev_type;
    std::string test_name; /* "self_memory": gtest parameter name */
};

std::ostream &operator<<(std::ostream &os, const resource &r);

/* A uct_completion_t that counts how often its callback ran. */
struct counted_completion {
    uct_completion_t uct; /* keep first: the callback casts back */
    int initial;          /* count it was armed with */
    int calls;            /* how many times func ran */
    ucs_status_t status_at_call;

    explicit counted_completion(int count = 1);
    void reset(int count = 1);
    operator uct_completion_t *()
    {
        return &uct;
    }
};

/* A completion that records its calls, their status and their order */
struct order_comp {
    uct_completion_t uct; /* keep first */
    unsigned index;
    unsigned calls;
    ucs_status_t status;
    std::vector<unsigned> *order;

    void init(unsigned i, std::vector<unsigned> *o)
    {
        uct.func   = cb;
        uct.count  = 1;
        uct.status = UCS_OK;
        index      = i;
        calls      = 0;
        status     = UCS_OK;
        order      = o;
    }

    static void cb(uct_completion_t *self)
    {
        order_comp *comp = reinterpret_cast<order_comp *>(self);

        ++comp->calls;
        comp->status = self->status;
        comp->order->push_back(comp->index);
    }
};

/* What an entity's interface is opened with. */
struct uct_entity_params {
    size_t rx_headroom              = 0;
    bool set_am_alignment           = false;
    size_t am_alignment             = 1;
    size_t am_align_offset          = 0;
    uct_error_handler_t err_handler = nullptr;
    void *err_handler_arg           = nullptr;
    /* bits or-ed into uct_iface_params_t::field_mask (e.g. unknown
     * ones that must be ignored) */
    uint64_t extra_field_mask = 0;
    /* uct_config_modify() calls on the iface config before opening */
    std::vector<std::pair<std::string, std::string>> config;
    /* create_pairs(): the receiver must be in the test's process (the
     * test uses its uct handles or memory directly) */
    bool local_only = false;
};

/* The test's end of a peer process that holds a receiver (uct_test_peer) */
class uct_test_peer_link;

class uct_test : public ucs::test,
                 public testing::WithParamInterface<resource> {
public:
    static constexpr double DEFAULT_TIMEOUT = 10.0; /* seconds */

    /* Every resource of every loaded module, filtered by OPENUCT_TEST_TLS. */
    static const std::vector<resource> &enum_resources();
    /* Every resource, ignoring the filter. */
    static const std::vector<resource> &all_resources();
    static std::string
    resource_name(const testing::TestParamInfo<resource> &info);

    /*
     * The resource the sender of create_pairs() uses for tests on @a r:
     * @a r itself, or its transport on the device OPENUCT_TEST_PEER_DEVS
     * pairs with r's device. Throws std::runtime_error if the variable is
     * malformed or that device does not offer the transport.
     */
    static resource sender_resource(const resource &r);

    /* Component handle by name (NULL if not loaded). */
    static uct_component_h find_component(const std::string &name);

    typedef uct_entity_params entity_params;

    /*
     * An interface of the test's resource with its own md, async context
     * and worker. Throws std::runtime_error when a step fails (gtest
     * reports it as a test failure).
     */
    class entity {
    public:
        entity(const resource &res, const entity_params &params);
        /* An entity whose interface is opened in a new peer process */
        entity(const resource &res, const entity_params &params,
               bool in_peer_process);
        ~entity();

        entity(const entity &)            = delete;
        entity &operator=(const entity &) = delete;

        const resource &res() const
        {
            return m_res;
        }
        uct_component_h component() const
        {
            return m_component;
        }
        uct_md_h md() const
        {
            require_local("md()");
            return m_md;
        }
        const uct_md_attr_t &md_attr() const
        {
            return m_md_attr;
        }
        uct_worker_h worker() const
        {
            require_local("worker()");
            return m_worker;
        }
        uct_iface_h iface() const
        {
            require_local("iface()");
            return m_iface;
        }
        /* Is the interface in a peer process? */
        bool is_remote() const
        {
            return m_peer != nullptr;
        }
        const std::shared_ptr<uct_test_peer_link> &peer() const
        {
            return m_peer;
        }
        const uct_iface_attr_t &iface_attr() const
        {
            return m_iface_attr;
        }
        size_t rx_headroom() const
        {
            return m_params.rx_headroom;
        }

        bool has_cap(uint64_t flag) const
        {
            return (m_iface_attr.cap.flags & flag) == flag;
        }
        bool has_event_cap(uint64_t flag) const
        {
            return (m_iface_attr.cap.event_flags & flag) == flag;
        }

        /* Can this entity connect to anything at all? */
        bool can_connect() const;

        /* Is @a other's interface reachable from this one? */
        bool is_reachable(const entity &other) const;

        /*
         * Creates an endpoint that sends to @a other (which may be this
         * entity: loopback). CONNECT_TO_IFACE: one ep with the remote
         * device and iface addresses. CONNECT_TO_EP: an ep here and one on
         * @a other, connected to each other. Returns NULL if @a other is
         * not reachable.
         */
        uct_ep_h connect_to(entity &other, uint64_t extra_field_mask = 0);

        /* An endpoint to be connected with uct_ep_connect_to_ep(),
         * destroyed with the entity. */
        uct_ep_h create_ep_for_ep();

        /* Connects @a ep of this entity to @a peer_ep of @a peer
         * (uct_ep_connect_to_ep on this side only); the status. */
        ucs_status_t connect_ep_to(uct_ep_h ep, const entity &peer,
                                   uct_ep_h peer_ep) const;

        /* Destroys an endpoint created by connect_to(). */
        void destroy_ep(uct_ep_h ep);
        void destroy_eps();
        /* Every ep made on this entity, including those connect_to()
         * made here for another entity (CONNECT_TO_EP), in creation
         * order. */
        const std::vector<uct_ep_h> &eps() const
        {
            return m_eps;
        }

        /* Installs an AM handler, SYNC if the iface allows it. */
        ucs_status_t set_am_handler(uint8_t id, uct_am_callback_t cb,
                                    void *arg);

        unsigned progress();

        /* uct_iface_event_fd_get() (a descriptor of the interface's
         * process) and uct_iface_event_arm() */
        ucs_status_t event_fd_get(int *fd);
        ucs_status_t event_arm(unsigned events);
        /* Waits up to @a timeout_ms for the event fd to be readable, in
         * the interface's process; false on a timeout */
        bool event_wait(int timeout_ms);

        /* The packed device and interface addresses. */
        const std::vector<char> &dev_addr() const
        {
            return m_dev_addr;
        }
        const std::vector<char> &iface_addr() const
        {
            return m_iface_addr;
        }

    private:
        uct_ep_h create_ep(const uct_ep_params_t &params);
        void cleanup();
        void open_local();
        /* Throws std::logic_error if the interface is in a peer process */
        void require_local(const char *what) const;

        resource m_res;
        entity_params m_params;
        uct_component_h m_component;
        uct_md_h m_md;
        uct_md_attr_t m_md_attr;
        ucs_async_context_t *m_async;
        uct_worker_h m_worker;
        uct_iface_h m_iface;
        uct_iface_attr_t m_iface_attr;
        std::vector<char> m_dev_addr;
        std::vector<char> m_iface_addr;
        std::vector<uct_ep_h> m_eps;
        std::shared_ptr<uct_test_peer_link> m_peer;
    };

    /*
     * Host memory of @a length bytes at @a offset from a 64-byte aligned
     * allocation, registered with the entity's md (UCT_MD_FLAG_REG), with
     * a packed and unpacked remote key (UCT_MD_FLAG_NEED_RKEY). Guard
     * bytes after the buffer catch overruns (check_guard()).
     *
     * On an entity in a peer process the memory is the peer's: addr() is
     * its address there and the rkey is unpacked here from what the peer
     * packed. The pattern, memset, load and store calls read or write it
     * through the peer; ptr(), cptr(), iov() and split_iov() throw.
     */
    class mapped_buffer {
    public:
        mapped_buffer(size_t length, const entity &e, size_t offset = 0);
        ~mapped_buffer();

        mapped_buffer(const mapped_buffer &)            = delete;
        mapped_buffer &operator=(const mapped_buffer &) = delete;

        void *ptr() const
        {
            require_local("ptr()");
            return m_ptr;
        }
        char *cptr() const
        {
            return static_cast<char *>(ptr());
        }
        uint64_t addr() const
        {
            return m_remote ? m_remote_addr : (uintptr_t)m_ptr;
        }
        size_t length() const
        {
            return m_length;
        }
        uct_mem_h memh() const
        {
            return m_memh;
        }
        uct_rkey_t rkey() const
        {
            return m_rkey.rkey;
        }
        const uct_rkey_bundle_t &rkey_bundle() const
        {
            return m_rkey;
        }

        /* One iov entry covering [offset, offset + length). */
        uct_iov_t iov(size_t offset, size_t length) const;
        /* @a iovcnt entries splitting the whole buffer (the last entry
         * takes the remainder). */
        std::vector<uct_iov_t> split_iov(size_t iovcnt) const;

        void pattern_fill(uint64_t seed);
        /* True if the buffer holds the pattern of @a seed. */
        bool pattern_matches(uint64_t seed) const;
        /* Adds a failure naming the first differing byte. */
        void pattern_check(uint64_t seed) const;
        void memset(int c);
        /* Adds a failure if a byte past the end was written. */
        void check_guard() const;

        /* The first sizeof(T) bytes, read or written as one access */
        template <typename T> T load() const
        {
            T value;
            read(&value, sizeof(value));
            return value;
        }
        template <typename T> void store(T value)
        {
            write(&value, sizeof(value));
        }

        static void pattern_fill(void *buffer, size_t length, uint64_t seed);
        static uint8_t pattern_byte(uint64_t seed, size_t i);
        /* Index of the first byte not matching, or length. */
        static size_t pattern_mismatch(const void *buffer, size_t length,
                                       uint64_t seed);

    private:
        static constexpr size_t GUARD = 64;

        void require_local(const char *what) const;
        /* Copies the peer's buffer and guard into the local copy */
        void pull() const;
        /* Copies the local copy of the buffer to the peer */
        void push();
        void read(void *value, size_t size) const;
        void write(const void *value, size_t size);
        void pack_and_unpack_rkey(const entity &e);

        const entity &m_entity;
        void *m_alloc;
        void *m_ptr; /* the buffer, or the local copy of the peer's */
        size_t m_length;
        uct_mem_h m_memh;
        bool m_registered;
        bool m_md_alloc; /* m_md_mem holds the memory */
        uct_allocated_memory_t m_md_mem;
        uct_rkey_bundle_t m_rkey;
        bool m_rkey_unpacked;
        /* In a peer process: the link, the peer's buffer number and the
         * address of the buffer there */
        std::shared_ptr<uct_test_peer_link> m_remote;
        uint32_t m_remote_id;
        uint64_t m_remote_addr;

        void release_memory();
    };

    /*
     * Records the active messages delivered to one handler id. Can keep
     * descriptors (UCT_CB_PARAM_FLAG_DESC -> UCS_INPROGRESS) and write the
     * user headroom in front of them. Installed on an entity in a peer
     * process, the recording happens there and every call asks the peer.
     */
    class am_recorder {
    public:
        struct message {
            std::string data;
            unsigned flags;
            void *ptr; /* where the data was delivered (in the
                        * receiver's process) */
        };

        am_recorder() : m_keep_desc(false), m_headroom(0), m_remote_id(0)
        {}

        /* Registers the recorder as @a e's handler for @a id. */
        void install(entity &e, uint8_t id);
        /* Keep descriptors; write @a headroom bytes before kept data. */
        void keep_descriptors(size_t headroom);
        /* Releases every kept descriptor (uct_iface_release_desc). */
        void release_kept();

        size_t count() const;
        message at(size_t i) const;
        std::vector<void *> kept() const;
        /* @a length bytes at @a ptr, an address delivered to the handler
         * (or @a offset bytes before it: negative offsets read the
         * headroom) */
        std::string read(const void *ptr, ssize_t offset, size_t length) const;

        static ucs_status_t cb(void *arg, void *data, size_t length,
                               unsigned flags);

    private:
        mutable std::mutex m_lock;
        std::vector<message> m_msgs;
        std::vector<void *> m_kept;
        bool m_keep_desc;
        size_t m_headroom;
        std::shared_ptr<uct_test_peer_link> m_remote;
        uint32_t m_remote_id;
    };

    /* A path a message takes in a test. */
    struct pair {
        std::string name; /* "two-ifaces" or "loopback" */
        entity *sender;
        entity *receiver;
        uct_ep_h ep; /* on sender, delivers to receiver */
    };

protected:
    void SetUp() override;
    void TearDown() override;

    const resource &res() const
    {
        return GetParam();
    }

    entity *create_entity(const entity_params &params = entity_params());
    /* An entity on another resource than the test's (see
     * sender_resource()). */
    entity *create_entity(const resource &r, const entity_params &params);

    /*
     * Builds the test's pairs: a receiver with @a recv_params, and
     *  - "two-ifaces": a separate sender entity, when the receiver is
     *    reachable from it ("two-devices (PEERDEV -> DEV)" when
     *    OPENUCT_TEST_PEER_DEVS puts the sender on another device; then
     *    an unreachable receiver is an error);
     *  - "loopback": the receiver sending to itself, when reachable;
     *  - "two-processes": a sender here and a receiver with
     *    @a recv_params in a peer process, for the transports
     *    OPENUCT_TEST_TWO_PROCESS_TLS names (see the top of this file).
     * Skips the test (returns false) if the transport cannot connect.
     */
    bool create_pairs(const entity_params &recv_params = entity_params(),
                      bool loopback                    = true);

    /* Does create_pairs() add a "two-processes" pair for this receiver? */
    bool two_processes(const entity_params &recv_params) const;
    /* An entity on the test's resource opened in a new peer process */
    entity *create_entity_in_peer(const entity_params &params);

    /* Progresses every entity once; returns the event count. */
    unsigned progress();

    /* Progresses until @a cond or the timeout (adds a failure). */
    bool wait_for(const std::function<bool()> &cond, const std::string &what,
                  double timeout = DEFAULT_TIMEOUT);

    /* Progresses for @a msec milliseconds (to let stray events arrive). */
    void progress_for(double msec);

    /* Calls @a op until it returns something else than
     * UCS_ERR_NO_RESOURCE, progressing in between (timeout: failure). */
    ssize_t retry_no_resource(const std::function<ssize_t()> &op,
                              const std::string &what);

    /* For a zcopy/flush status: UCS_OK leaves @a comp untouched,
     * UCS_INPROGRESS calls it exactly once. Adds failures otherwise. */
    void wait_completion(ucs_status_t status, counted_completion &comp,
                         const std::string &what);

    /* Flushes the ep until done (UCS_OK, or UCS_INPROGRESS + callback). */
    void flush_ep(entity &e, uct_ep_h ep);
    void flush_iface(entity &e);

    /* A recorder installed as @a e's handler for @a id; it lives until
     * the end of the test (after the entities are gone). */
    am_recorder &install_recorder(entity &e, uint8_t id);

    /* Destroys every pair, entity and recorder of the test. */
    void reset_entities();

    std::vector<std::unique_ptr<entity>> m_entities;
    std::vector<pair> m_pairs;
    std::vector<std::unique_ptr<am_recorder>> m_recorders;
};

/*
 * Instantiates a uct_test-derived suite over every resource. Test names
 * are "<suite>.<test>/<tl>_<dev>", e.g. "uct_am.short_sizes/self_memory".
 */
#define UCT_INSTANTIATE_TEST_SUITE(_suite)                                  \
    GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(_suite);                  \
    INSTANTIATE_TEST_SUITE_P(, _suite,                                      \
                             testing::ValuesIn(uct_test::enum_resources()), \
                             uct_test::resource_name)

/* Builds m_pairs (see uct_test::create_pairs) or skips the test. */
#define UCT_TEST_INIT_PAIRS(...)                                       \
    do {                                                               \
        if (!create_pairs(__VA_ARGS__)) {                              \
            GTEST_SKIP() << res().tl_name << " cannot connect: no "    \
                         << "CONNECT_TO_IFACE/EP or peer unreachable"; \
        }                                                              \
    } while (0)

/* Skips the test unless the interface of @a _e has capability @a _flag. */
#define UCT_TEST_REQUIRE_CAP(_e, _flag)                         \
    do {                                                        \
        if (!(_e)->has_cap(_flag)) {                            \
            GTEST_SKIP() << res().tl_name << " has no " #_flag; \
        }                                                       \
    } while (0)

#endif
