/*
 * Base fixture of the transport-parametrized UCT suites: resource
 * enumeration, entities, registered buffers, progress helpers.
 */
#include "uct_test.h"
#include "uct_test_peer.h"

#include <algorithm>
#include <cerrno>
#include <poll.h>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>

namespace {

/* Throws with the call text and status when a setup step fails. */
#define UCT_TEST_CALL(_expr)                                             \
    do {                                                                 \
        ucs_status_t _status = (_expr);                                  \
        if (_status != UCS_OK) {                                         \
            throw std::runtime_error(std::string(#_expr) + " failed: " + \
                                     ucs_status_string(_status));        \
        }                                                                \
    } while (0)

std::string sanitize(const std::string &s)
{
    std::string out;
    for (char c : s) {
        out += std::isalnum((unsigned char)c) ? c : '_';
    }
    return out;
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep)) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

double now_sec()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double timeout_scale()
{
    return ucs::running_on_valgrind() ? 5.0 : 1.0;
}

std::vector<resource> query_resources()
{
    std::vector<resource> out;
    uct_component_h *components;
    unsigned num_components;

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        return out;
    }

    for (unsigned c = 0; c < num_components; ++c) {
        uct_component_attr_t cattr;
        memset(&cattr, 0, sizeof(cattr));
        cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                           UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &cattr) != UCS_OK) {
            continue;
        }

        std::vector<uct_md_resource_desc_t> mds(cattr.md_resource_count);
        if (!mds.empty()) {
            cattr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
            cattr.md_resources = mds.data();
            if (uct_component_query(components[c], &cattr) != UCS_OK) {
                continue;
            }
        }

        for (const uct_md_resource_desc_t &mdr : mds) {
            uct_md_config_t *md_config;
            if (uct_md_config_read(components[c], NULL, NULL, &md_config) !=
                UCS_OK) {
                continue;
            }

            uct_md_h md;
            ucs_status_t status =
                uct_md_open(components[c], mdr.md_name, md_config, &md);
            uct_config_release(md_config);
            if (status != UCS_OK) {
                continue;
            }

            uct_tl_resource_desc_t *tls;
            unsigned num_tls;
            if (uct_md_query_tl_resources(md, &tls, &num_tls) == UCS_OK) {
                for (unsigned t = 0; t < num_tls; ++t) {
                    resource r;
                    r.component_name = cattr.name;
                    r.md_name        = mdr.md_name;
                    r.tl_name        = tls[t].tl_name;
                    r.dev_name       = tls[t].dev_name;
                    r.dev_type       = tls[t].dev_type;
                    out.push_back(r);
                }
                uct_release_tl_resource_list(tls);
            }
            uct_md_close(md);
        }
    }
    uct_release_component_list(components);

    /* Readable, unique gtest parameter names */
    std::set<std::string> used;
    for (resource &r : out) {
        std::string name = sanitize(r.tl_name + "_" + r.dev_name);
        if (used.count(name)) {
            name += "_" + sanitize(r.md_name);
        }
        for (unsigned i = 2; used.count(name); ++i) {
            name = sanitize(r.tl_name + "_" + r.dev_name) + "_" +
                   std::to_string(i);
        }
        used.insert(name);
        r.test_name = name;
    }
    return out;
}

bool resource_selected(const resource &r,
                       const std::vector<std::string> &filter)
{
    if (filter.empty()) {
        return true;
    }
    for (const std::string &f : filter) {
        if ((f == r.tl_name) || (f == r.tl_name + "/" + r.dev_name) ||
            (f == r.test_name)) {
            return true;
        }
    }
    return false;
}

/* poll()s the event fd of @a iface; true once it is readable */
bool wait_fd_readable(uct_iface_h iface, int timeout_ms)
{
    struct pollfd pfd;
    int ret;

    if (uct_iface_event_fd_get(iface, &pfd.fd) != UCS_OK) {
        return false;
    }
    pfd.events  = POLLIN;
    pfd.revents = 0;
    do {
        ret = poll(&pfd, 1, timeout_ms);
    } while ((ret < 0) && (errno == EINTR));
    return (ret > 0) && (pfd.revents & POLLIN);
}

void completion_cb(uct_completion_t *self)
{
    counted_completion *comp = reinterpret_cast<counted_completion *>(self);
    ++comp->calls;
    comp->status_at_call = self->status;
}

} // namespace

std::ostream &operator<<(std::ostream &os, const resource &r)
{
    return os << r.component_name << "/" << r.md_name << "/" << r.tl_name << "/"
              << r.dev_name;
}

counted_completion::counted_completion(int count)
{
    reset(count);
}

void counted_completion::reset(int count)
{
    uct.func       = completion_cb;
    uct.count      = count;
    uct.status     = UCS_OK;
    initial        = count;
    calls          = 0;
    status_at_call = UCS_OK;
}

/* ------------------------------------------------------------------------
 * Resources
 */

const std::vector<resource> &uct_test::all_resources()
{
    static std::vector<resource> resources = query_resources();
    return resources;
}

const std::vector<resource> &uct_test::enum_resources()
{
    static std::vector<resource> selected = [] {
        std::vector<resource> out;
        const char *env = getenv("OPENUCT_TEST_TLS");
        std::vector<std::string> filter;
        if (env != NULL) {
            filter = split(env, ',');
        }
        for (const resource &r : all_resources()) {
            if (resource_selected(r, filter)) {
                out.push_back(r);
            }
        }
        return out;
    }();
    return selected;
}

std::string
uct_test::resource_name(const testing::TestParamInfo<resource> &info)
{
    return info.param.test_name;
}

resource uct_test::sender_resource(const resource &r)
{
    const char *env = getenv("OPENUCT_TEST_PEER_DEVS");
    if (env == NULL) {
        return r;
    }

    for (const std::string &entry : split(env, ',')) {
        size_t eq = entry.find('=');
        if ((eq == std::string::npos) || (eq == 0) ||
            (eq + 1 == entry.size())) {
            throw std::runtime_error("OPENUCT_TEST_PEER_DEVS: '" + entry +
                                     "' is not DEV=PEERDEV");
        }
        if (entry.compare(0, eq, r.dev_name) != 0) {
            continue;
        }

        std::string peer_dev  = entry.substr(eq + 1);
        std::string md_prefix = peer_dev.substr(0, peer_dev.find(':'));
        const resource *found = NULL;
        for (const resource &c : all_resources()) {
            if ((c.component_name == r.component_name) &&
                (c.tl_name == r.tl_name) && (c.dev_name == peer_dev) &&
                ((found == NULL) || (c.md_name == md_prefix))) {
                found = &c;
            }
        }
        if (found == NULL) {
            throw std::runtime_error(
                "OPENUCT_TEST_PEER_DEVS pairs " + r.dev_name + " with " +
                peer_dev + ", which has no " + r.component_name + "/" +
                r.tl_name + " resource (see uct_info -d)");
        }
        return *found;
    }
    return r;
}

uct_component_h uct_test::find_component(const std::string &name)
{
    uct_component_h *components, found = NULL;
    unsigned num_components;

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        return NULL;
    }
    for (unsigned i = 0; i < num_components; ++i) {
        uct_component_attr_t attr;
        memset(&attr, 0, sizeof(attr));
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            (name == attr.name)) {
            found = components[i];
            break;
        }
    }
    uct_release_component_list(components);
    return found;
}

/* ------------------------------------------------------------------------
 * Entity
 */

uct_test::entity::entity(const resource &res, const entity_params &params)
    : entity(res, params, false)
{}

uct_test::entity::entity(const resource &res, const entity_params &params,
                         bool in_peer_process)
    : m_res(res), m_params(params), m_component(NULL), m_md(NULL),
      m_async(NULL), m_worker(NULL), m_iface(NULL)
{
    memset(&m_md_attr, 0, sizeof(m_md_attr));
    memset(&m_iface_attr, 0, sizeof(m_iface_attr));

    m_component = find_component(res.component_name);
    if (m_component == NULL) {
        throw std::runtime_error("component '" + res.component_name +
                                 "' is not loaded");
    }

    if (!in_peer_process) {
        open_local();
        return;
    }

    /* The peer's addresses and attributes stand for its interface here */
    m_peer.reset(new uct_test_peer_link(res, params));
    m_md_attr    = m_peer->md_attr();
    m_iface_attr = m_peer->iface_attr();
    m_dev_addr   = m_peer->dev_addr();
    m_iface_addr = m_peer->iface_addr();
}

void uct_test::entity::require_local(const char *what) const
{
    if (m_peer) {
        throw std::logic_error(std::string("entity::") + what + " of " +
                               m_res.tl_name +
                               ": the interface is in a peer process "
                               "(set entity_params::local_only)");
    }
}

void uct_test::entity::open_local()
{
    const resource &res         = m_res;
    const entity_params &params = m_params;

    try {

        uct_md_config_t *md_config;
        UCT_TEST_CALL(uct_md_config_read(m_component, NULL, NULL, &md_config));
        ucs_status_t status =
            uct_md_open(m_component, res.md_name.c_str(), md_config, &m_md);
        uct_config_release(md_config);
        UCT_TEST_CALL(status);
        UCT_TEST_CALL(uct_md_query(m_md, &m_md_attr));

        UCT_TEST_CALL(
            ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &m_async));
        UCT_TEST_CALL(
            uct_worker_create(m_async, UCS_THREAD_MODE_SINGLE, &m_worker));

        uct_iface_config_t *iface_config;
        UCT_TEST_CALL(uct_md_iface_config_read(m_md, res.tl_name.c_str(), NULL,
                                               NULL, &iface_config));
        for (const auto &kv : params.config) {
            status = uct_config_modify(iface_config, kv.first.c_str(),
                                       kv.second.c_str());
            if (status != UCS_OK) {
                uct_config_release(iface_config);
                UCT_TEST_CALL(status);
            }
        }

        uct_iface_params_t iface_params;
        memset(&iface_params, 0, sizeof(iface_params));
        iface_params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
            UCT_IFACE_PARAM_FIELD_RX_HEADROOM | UCT_IFACE_PARAM_FIELD_FEATURES;
        iface_params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        iface_params.mode.device.tl_name  = m_res.tl_name.c_str();
        iface_params.mode.device.dev_name = m_res.dev_name.c_str();
        iface_params.rx_headroom          = params.rx_headroom;
        iface_params.features =
            UCT_IFACE_FEATURE_AM | UCT_IFACE_FEATURE_PUT |
            UCT_IFACE_FEATURE_GET | UCT_IFACE_FEATURE_AMO32 |
            UCT_IFACE_FEATURE_AMO64 | UCT_IFACE_FEATURE_FLUSH_REMOTE;
        if (params.err_handler != nullptr) {
            iface_params.field_mask |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                       UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                       UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
            iface_params.err_handler       = params.err_handler;
            iface_params.err_handler_arg   = params.err_handler_arg;
            iface_params.err_handler_flags = 0;
        }
        if (params.set_am_alignment) {
            iface_params.field_mask |= UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
                                       UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET;
            iface_params.am_alignment    = params.am_alignment;
            iface_params.am_align_offset = params.am_align_offset;
        }
        iface_params.field_mask |= params.extra_field_mask;

        status = uct_iface_open(m_md, m_worker, &iface_params, iface_config,
                                &m_iface);
        uct_config_release(iface_config);
        UCT_TEST_CALL(status);
        UCT_TEST_CALL(uct_iface_query(m_iface, &m_iface_attr));

        /* Buffers of at least one byte: the API rejects NULL */
        m_dev_addr.resize(std::max<size_t>(m_iface_attr.device_addr_len, 1));
        m_iface_addr.resize(std::max<size_t>(m_iface_attr.iface_addr_len, 1));
        UCT_TEST_CALL(uct_iface_get_device_address(
            m_iface, (uct_device_addr_t *)m_dev_addr.data()));
        if (m_iface_attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
            UCT_TEST_CALL(uct_iface_get_address(
                m_iface, (uct_iface_addr_t *)m_iface_addr.data()));
        }

        uct_iface_progress_enable(m_iface,
                                  UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    } catch (...) {
        cleanup();
        throw;
    }
}

uct_test::entity::~entity()
{
    cleanup();
}

void uct_test::entity::cleanup()
{
    if (m_peer) {
        m_peer->close();
        return;
    }
    destroy_eps();
    if (m_iface != NULL) {
        uct_iface_close(m_iface);
        m_iface = NULL;
    }
    if (m_worker != NULL) {
        uct_worker_destroy(m_worker);
        m_worker = NULL;
    }
    if (m_async != NULL) {
        ucs_async_context_destroy(m_async);
        m_async = NULL;
    }
    if (m_md != NULL) {
        uct_md_close(m_md);
        m_md = NULL;
    }
}

bool uct_test::entity::can_connect() const
{
    return has_cap(UCT_IFACE_FLAG_CONNECT_TO_IFACE) ||
           has_cap(UCT_IFACE_FLAG_CONNECT_TO_EP);
}

bool uct_test::entity::is_reachable(const entity &other) const
{
    const uct_iface_addr_t *iface_addr = NULL;

    require_local("is_reachable()");
    if (other.m_iface_attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
        iface_addr = (const uct_iface_addr_t *)other.m_iface_addr.data();
    }
    return uct_iface_is_reachable(
        m_iface, (const uct_device_addr_t *)other.m_dev_addr.data(),
        iface_addr);
}

uct_ep_h uct_test::entity::create_ep(const uct_ep_params_t &params)
{
    uct_ep_h ep;

    UCT_TEST_CALL(uct_ep_create(&params, &ep));
    m_eps.push_back(ep);
    return ep;
}

uct_ep_h uct_test::entity::create_ep_for_ep()
{
    uct_ep_params_t params;

    require_local("create_ep_for_ep()");
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = m_iface;
    return create_ep(params);
}

ucs_status_t uct_test::entity::connect_ep_to(uct_ep_h ep, const entity &peer,
                                             uct_ep_h peer_ep) const
{
    std::vector<char> addr(std::max<size_t>(peer.iface_attr().ep_addr_len, 1));
    ucs_status_t status;

    status = uct_ep_get_address(peer_ep, (uct_ep_addr_t *)addr.data());
    if (status != UCS_OK) {
        return status;
    }
    return uct_ep_connect_to_ep(
        ep, (const uct_device_addr_t *)peer.dev_addr().data(),
        (const uct_ep_addr_t *)addr.data());
}

uct_ep_h uct_test::entity::connect_to(entity &other, uint64_t extra_field_mask)
{
    uct_ep_params_t params;

    require_local("connect_to()");
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | extra_field_mask;
    params.iface      = m_iface;

    if (has_cap(UCT_IFACE_FLAG_CONNECT_TO_IFACE)) {
        if (!is_reachable(other)) {
            return NULL;
        }
        params.field_mask |=
            UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.dev_addr   = (const uct_device_addr_t *)other.m_dev_addr.data();
        params.iface_addr = (const uct_iface_addr_t *)other.m_iface_addr.data();
        return create_ep(params);
    }

    if (has_cap(UCT_IFACE_FLAG_CONNECT_TO_EP)) {
        other.require_local("connect_to() an ep");
        if (!is_reachable(other)) {
            return NULL;
        }
        uct_ep_h ep = create_ep(params);

        uct_ep_params_t other_params = params;
        other_params.iface           = other.m_iface;
        uct_ep_h other_ep            = other.create_ep(other_params);

        UCT_TEST_CALL(connect_ep_to(ep, other, other_ep));
        UCT_TEST_CALL(other.connect_ep_to(other_ep, *this, ep));
        return ep;
    }

    return NULL;
}

void uct_test::entity::destroy_ep(uct_ep_h ep)
{
    auto it = std::find(m_eps.begin(), m_eps.end(), ep);
    if (it != m_eps.end()) {
        uct_ep_destroy(ep);
        m_eps.erase(it);
    }
}

void uct_test::entity::destroy_eps()
{
    for (uct_ep_h ep : m_eps) {
        uct_ep_destroy(ep);
    }
    m_eps.clear();
}

ucs_status_t uct_test::entity::set_am_handler(uint8_t id, uct_am_callback_t cb,
                                              void *arg)
{
    require_local("set_am_handler()");
    uint32_t flags =
        has_cap(UCT_IFACE_FLAG_CB_SYNC) ? UCT_CB_FLAG_SYNC : UCT_CB_FLAG_ASYNC;
    return uct_iface_set_am_handler(m_iface, id, cb, arg, flags);
}

unsigned uct_test::entity::progress()
{
    if (m_peer) {
        return m_peer->progress();
    }
    ucs_async_check_miss(m_async);
    return uct_worker_progress(m_worker);
}

ucs_status_t uct_test::entity::event_fd_get(int *fd)
{
    if (m_peer) {
        return m_peer->event_fd_get(fd);
    }
    return uct_iface_event_fd_get(m_iface, fd);
}

ucs_status_t uct_test::entity::event_arm(unsigned events)
{
    if (m_peer) {
        return m_peer->event_arm(events);
    }
    return uct_iface_event_arm(m_iface, events);
}

bool uct_test::entity::event_wait(int timeout_ms)
{
    if (m_peer) {
        return m_peer->event_wait(timeout_ms);
    }
    return wait_fd_readable(m_iface, timeout_ms);
}

/* ------------------------------------------------------------------------
 * Registered buffer
 */

uct_test::mapped_buffer::mapped_buffer(size_t length, const entity &e,
                                       size_t offset)
    : m_entity(e), m_alloc(NULL), m_ptr(NULL), m_length(length),
      m_memh(UCT_MEM_HANDLE_NULL), m_registered(false), m_md_alloc(false),
      m_rkey_unpacked(false), m_remote(e.peer()), m_remote_id(0),
      m_remote_addr(0)
{
    const uct_md_attr_t &attr = e.md_attr();
    size_t total              = offset + length + GUARD;

    m_rkey.rkey   = UCT_INVALID_RKEY;
    m_rkey.handle = NULL;
    m_rkey.type   = NULL;

    if (m_remote) {
        /* The peer's buffer; m_alloc holds a copy of it and its guard */
        std::vector<char> packed;
        m_remote->buffer_alloc(length, offset, m_remote_id, m_remote_addr,
                               packed);
        m_alloc = calloc(1, length + GUARD);
        if (m_alloc == NULL) {
            m_remote->buffer_free(m_remote_id);
            throw std::runtime_error("calloc(" + std::to_string(total) +
                                     ") failed");
        }
        m_ptr = m_alloc;
        if (!packed.empty()) {
            ucs_status_t status =
                uct_rkey_unpack(e.component(), packed.data(), &m_rkey);
            if (status != UCS_OK) {
                free(m_alloc);
                m_remote->buffer_free(m_remote_id);
                UCT_TEST_CALL(status);
            }
            m_rkey_unpacked = true;
        }
        return;
    }

    if (!(attr.cap.flags & UCT_MD_FLAG_REG) &&
        (attr.cap.flags & UCT_MD_FLAG_ALLOC)) {
        /* remote access only to memory the md allocates (posix, sysv) */
        uct_mem_alloc_params_t params;
        uct_allocated_memory_t mem;
        uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
        uct_md_h md               = e.md();

        ::memset(&params, 0, sizeof(params));
        params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_FLAGS |
                            UCT_MEM_ALLOC_PARAM_FIELD_MDS |
                            UCT_MEM_ALLOC_PARAM_FIELD_NAME;
        params.flags     = UCT_MD_MEM_ACCESS_ALL;
        params.mds.mds   = &md;
        params.mds.count = 1;
        params.name      = "gtest mapped_buffer";
        UCT_TEST_CALL(uct_mem_alloc(total, &method, 1, &params, &mem));
        m_md_mem   = mem;
        m_md_alloc = true;
        m_alloc    = mem.address;
        m_memh     = mem.memh;
    } else if (posix_memalign(&m_alloc, 64, total) != 0) {
        throw std::runtime_error("posix_memalign(" + std::to_string(total) +
                                 ") failed");
    }
    m_ptr = static_cast<char *>(m_alloc) + offset;
    ::memset(m_alloc, 0, offset + length);
    ::memset(cptr() + length, 0xa5, GUARD);

    try {
        if (attr.cap.flags & UCT_MD_FLAG_REG) {
            UCT_TEST_CALL(uct_md_mem_reg(e.md(), m_ptr,
                                         std::max<size_t>(length, 1),
                                         UCT_MD_MEM_ACCESS_ALL, &m_memh));
            m_registered = true;
        }
        if (attr.cap.flags & UCT_MD_FLAG_NEED_RKEY) {
            std::vector<char> packed(
                std::max<size_t>(attr.rkey_packed_size, 1));
            UCT_TEST_CALL(uct_md_mkey_pack(e.md(), m_memh, packed.data()));
            UCT_TEST_CALL(
                uct_rkey_unpack(e.component(), packed.data(), &m_rkey));
            m_rkey_unpacked = true;
        }
    } catch (...) {
        if (m_registered) {
            uct_md_mem_dereg(e.md(), m_memh);
        }
        release_memory();
        throw;
    }
}

void uct_test::mapped_buffer::release_memory()
{
    if (m_remote) {
        free(m_alloc);
        /* Freed with the peer's interface when the entity went first */
        if (m_remote->is_open()) {
            m_remote->buffer_free(m_remote_id);
        }
    } else if (m_md_alloc) {
        EXPECT_EQ(UCS_OK, uct_mem_free(&m_md_mem));
    } else {
        free(m_alloc);
    }
}

uct_test::mapped_buffer::~mapped_buffer()
{
    if (m_rkey_unpacked) {
        EXPECT_EQ(UCS_OK, uct_rkey_release(m_entity.component(), &m_rkey));
    }
    if (m_registered) {
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_entity.md(), m_memh));
    }
    release_memory();
}

void uct_test::mapped_buffer::require_local(const char *what) const
{
    if (m_remote) {
        throw std::logic_error(std::string("mapped_buffer::") + what +
                               ": the buffer is in a peer process (use "
                               "load(), store() or the pattern calls)");
    }
}

void uct_test::mapped_buffer::pull() const
{
    if (m_remote) {
        std::string bytes = m_remote->read(m_remote_addr, m_length + GUARD);
        ::memcpy(m_alloc, bytes.data(), bytes.size());
    }
}

void uct_test::mapped_buffer::push()
{
    if (m_remote) {
        m_remote->write(m_remote_addr, m_ptr, m_length);
    }
}

void uct_test::mapped_buffer::read(void *value, size_t size) const
{
    if (size > m_length) {
        throw std::logic_error("mapped_buffer::load() past the end");
    }
    if (m_remote) {
        std::string bytes = m_remote->read(m_remote_addr, size);
        ::memcpy(value, bytes.data(), size);
        return;
    }
    /* One access of the word's size: the target of atomic operations */
    switch (size) {
    case sizeof(uint32_t):
        *(uint32_t *)value = *(volatile uint32_t *)m_ptr;
        break;
    case sizeof(uint64_t):
        *(uint64_t *)value = *(volatile uint64_t *)m_ptr;
        break;
    default:
        ::memcpy(value, m_ptr, size);
        break;
    }
}

void uct_test::mapped_buffer::write(const void *value, size_t size)
{
    if (size > m_length) {
        throw std::logic_error("mapped_buffer::store() past the end");
    }
    if (m_remote) {
        m_remote->write(m_remote_addr, value, size);
        return;
    }
    switch (size) {
    case sizeof(uint32_t):
        *(volatile uint32_t *)m_ptr = *(const uint32_t *)value;
        break;
    case sizeof(uint64_t):
        *(volatile uint64_t *)m_ptr = *(const uint64_t *)value;
        break;
    default:
        ::memcpy(m_ptr, value, size);
        break;
    }
}

uct_iov_t uct_test::mapped_buffer::iov(size_t offset, size_t length) const
{
    uct_iov_t iov;
    iov.buffer = cptr() + offset;
    iov.length = length;
    iov.memh   = m_memh;
    iov.stride = 0;
    iov.count  = 1;
    return iov;
}

std::vector<uct_iov_t> uct_test::mapped_buffer::split_iov(size_t iovcnt) const
{
    std::vector<uct_iov_t> iovs;
    size_t base   = m_length / iovcnt;
    size_t offset = 0;

    for (size_t i = 0; i < iovcnt; ++i) {
        size_t len = (i == iovcnt - 1) ? (m_length - offset) : base;
        iovs.push_back(iov(offset, len));
        offset += len;
    }
    return iovs;
}

namespace {

/* 8 pattern bytes: byte i of the pattern is byte (i % 8) of word i / 8 */
inline uint64_t pattern_word(uint64_t seed, size_t word)
{
    uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull +
                 (uint64_t)word * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 29);
}

} // namespace

uint8_t uct_test::mapped_buffer::pattern_byte(uint64_t seed, size_t i)
{
    return (uint8_t)(pattern_word(seed, i / 8) >> (8 * (i % 8)));
}

void uct_test::mapped_buffer::pattern_fill(void *buffer, size_t length,
                                           uint64_t seed)
{
    uint8_t *p = static_cast<uint8_t *>(buffer);
    size_t i   = 0;

    for (; i + 8 <= length; i += 8) {
        uint64_t w = pattern_word(seed, i / 8);
        for (size_t b = 0; b < 8; ++b) {
            p[i + b] = (uint8_t)(w >> (8 * b));
        }
    }
    for (; i < length; ++i) {
        p[i] = pattern_byte(seed, i);
    }
}

size_t uct_test::mapped_buffer::pattern_mismatch(const void *buffer,
                                                 size_t length, uint64_t seed)
{
    const uint8_t *p = static_cast<const uint8_t *>(buffer);
    size_t i         = 0;

    for (; i + 8 <= length; i += 8) {
        uint64_t w = pattern_word(seed, i / 8);
        for (size_t b = 0; b < 8; ++b) {
            if (p[i + b] != (uint8_t)(w >> (8 * b))) {
                return i + b;
            }
        }
    }
    for (; i < length; ++i) {
        if (p[i] != pattern_byte(seed, i)) {
            return i;
        }
    }
    return length;
}

void uct_test::mapped_buffer::pattern_fill(uint64_t seed)
{
    pattern_fill(m_ptr, m_length, seed);
    push();
}

bool uct_test::mapped_buffer::pattern_matches(uint64_t seed) const
{
    pull();
    return pattern_mismatch(m_ptr, m_length, seed) == m_length;
}

void uct_test::mapped_buffer::pattern_check(uint64_t seed) const
{
    pull();
    size_t i = pattern_mismatch(m_ptr, m_length, seed);
    if (i != m_length) {
        ADD_FAILURE() << "buffer of " << m_length << " bytes differs at byte "
                      << i << ": got 0x" << std::hex
                      << (unsigned)((uint8_t *)m_ptr)[i] << " expected 0x"
                      << (unsigned)pattern_byte(seed, i);
    }
    check_guard();
}

void uct_test::mapped_buffer::memset(int c)
{
    ::memset(m_ptr, c, m_length);
    push();
}

void uct_test::mapped_buffer::check_guard() const
{
    pull();
    for (size_t i = 0; i < GUARD; ++i) {
        if ((uint8_t) static_cast<char *>(m_ptr)[m_length + i] != 0xa5) {
            ADD_FAILURE() << "byte " << i << " past the end of a " << m_length
                          << "-byte buffer was overwritten";
            return;
        }
    }
}

/* ------------------------------------------------------------------------
 * AM recorder
 */

void uct_test::am_recorder::install(entity &e, uint8_t id)
{
    if (e.is_remote()) {
        m_remote    = e.peer();
        m_remote_id = m_remote->recorder_install(id);
        return;
    }

    ucs_status_t status = e.set_am_handler(id, cb, this);
    if (status != UCS_OK) {
        throw std::runtime_error(std::string("uct_iface_set_am_handler: ") +
                                 ucs_status_string(status));
    }
}

void uct_test::am_recorder::keep_descriptors(size_t headroom)
{
    if (m_remote) {
        m_remote->recorder_keep(m_remote_id, headroom);
        return;
    }

    std::lock_guard<std::mutex> guard(m_lock);
    m_keep_desc = true;
    m_headroom  = headroom;
}

void uct_test::am_recorder::release_kept()
{
    if (m_remote) {
        m_remote->recorder_release(m_remote_id);
        return;
    }

    std::vector<void *> kept;
    {
        std::lock_guard<std::mutex> guard(m_lock);
        kept.swap(m_kept);
    }
    for (void *data : kept) {
        uct_iface_release_desc(static_cast<char *>(data) - m_headroom);
    }
}

size_t uct_test::am_recorder::count() const
{
    if (m_remote) {
        return m_remote->recorder_count(m_remote_id);
    }

    std::lock_guard<std::mutex> guard(m_lock);
    return m_msgs.size();
}

uct_test::am_recorder::message uct_test::am_recorder::at(size_t i) const
{
    if (m_remote) {
        return m_remote->recorder_at(m_remote_id, i);
    }

    std::lock_guard<std::mutex> guard(m_lock);
    return m_msgs.at(i);
}

std::vector<void *> uct_test::am_recorder::kept() const
{
    if (m_remote) {
        return m_remote->recorder_kept(m_remote_id);
    }

    std::lock_guard<std::mutex> guard(m_lock);
    return m_kept;
}

std::string uct_test::am_recorder::read(const void *ptr, ssize_t offset,
                                        size_t length) const
{
    const char *p = static_cast<const char *>(ptr) + offset;

    if (m_remote) {
        return m_remote->read((uintptr_t)p, length);
    }
    return std::string(p, length);
}

ucs_status_t uct_test::am_recorder::cb(void *arg, void *data, size_t length,
                                       unsigned flags)
{
    am_recorder *self = static_cast<am_recorder *>(arg);
    std::lock_guard<std::mutex> guard(self->m_lock);
    message msg;

    msg.data =
        (length > 0) ? std::string((const char *)data, length) : std::string();
    msg.flags = flags;
    msg.ptr   = data;
    self->m_msgs.push_back(msg);

    if (self->m_keep_desc && (flags & UCT_CB_PARAM_FLAG_DESC)) {
        /* The headroom belongs to the user: it must be writable */
        ::memset(static_cast<char *>(data) - self->m_headroom, 0xcc,
                 self->m_headroom);
        self->m_kept.push_back(data);
        return UCS_INPROGRESS;
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Fixture
 */

void uct_test::SetUp()
{
    ucs::test::SetUp();
}

void uct_test::TearDown()
{
    reset_entities();
    m_recorders.clear();
    ucs::test::TearDown();
}

void uct_test::reset_entities()
{
    m_pairs.clear();
    /* Every ep first: an ep may point at another entity's iface */
    for (auto &e : m_entities) {
        e->destroy_eps();
    }
    m_entities.clear();
}

uct_test::entity *uct_test::create_entity(const entity_params &params)
{
    return create_entity(res(), params);
}

uct_test::entity *uct_test::create_entity(const resource &r,
                                          const entity_params &params)
{
    m_entities.emplace_back(new entity(r, params));
    return m_entities.back().get();
}

bool uct_test::create_pairs(const entity_params &recv_params, bool loopback)
{
    entity *receiver = create_entity(recv_params);
    if (!receiver->can_connect()) {
        return false;
    }

    resource sender_res = sender_resource(res());
    entity *sender      = create_entity(sender_res, entity_params());
    if (sender_res.dev_name == res().dev_name) {
        if (sender->is_reachable(*receiver)) {
            uct_ep_h ep = sender->connect_to(*receiver);
            if (ep != NULL) {
                m_pairs.push_back({"two-ifaces", sender, receiver, ep});
            }
        }
    } else {
        /* Asked for explicitly: not crossing is a failure, not a skip */
        std::string name = "two-devices (" + sender_res.dev_name + " -> " +
                           res().dev_name + ")";
        uct_ep_h ep = sender->is_reachable(*receiver)
                          ? sender->connect_to(*receiver)
                          : NULL;
        if (ep == NULL) {
            throw std::runtime_error(name + ": " + res().tl_name + " on " +
                                     res().dev_name +
                                     " is not reachable "
                                     "from " +
                                     sender_res.dev_name);
        }
        m_pairs.push_back({name, sender, receiver, ep});
    }

    if (loopback && receiver->is_reachable(*receiver)) {
        uct_ep_h ep = receiver->connect_to(*receiver);
        if (ep != NULL) {
            m_pairs.push_back({"loopback", receiver, receiver, ep});
        }
    }

    if (two_processes(recv_params) && (sender_res.dev_name == res().dev_name)) {
        /* A sender of its own, so that the pairs stay independent */
        entity *remote = create_entity_in_peer(recv_params);
        entity *local  = create_entity(sender_res, entity_params());
        if (!local->is_reachable(*remote)) {
            throw std::runtime_error(res().tl_name + " on " + res().dev_name +
                                     " is not reachable from another "
                                     "process");
        }
        uct_ep_h ep = local->connect_to(*remote);
        if (ep == NULL) {
            throw std::runtime_error("cannot connect to " + res().tl_name +
                                     " in another process");
        }
        m_pairs.push_back({"two-processes", local, remote, ep});
    }
    return !m_pairs.empty();
}

bool uct_test::two_processes(const entity_params &recv_params) const
{
    const char *env = getenv("OPENUCT_TEST_TWO_PROCESS_TLS");
    std::string tls = (env != NULL) ? env : "posix,sysv,cma,tcp";

    if (recv_params.local_only || (recv_params.err_handler != nullptr)) {
        return false;
    }
    for (const std::string &tl : split(tls, ',')) {
        if (tl == res().tl_name) {
            return true;
        }
    }
    return false;
}

uct_test::entity *uct_test::create_entity_in_peer(const entity_params &params)
{
    m_entities.emplace_back(new entity(res(), params, true));
    entity *e = m_entities.back().get();
    if (!e->has_cap(UCT_IFACE_FLAG_CONNECT_TO_IFACE)) {
        throw std::runtime_error(res().tl_name +
                                 " cannot connect to an "
                                 "interface: not testable in two processes "
                                 "(leave it out of "
                                 "OPENUCT_TEST_TWO_PROCESS_TLS)");
    }
    return e;
}

uct_test::am_recorder &uct_test::install_recorder(entity &e, uint8_t id)
{
    m_recorders.emplace_back(new am_recorder());
    m_recorders.back()->install(e, id);
    return *m_recorders.back();
}

unsigned uct_test::progress()
{
    unsigned count = 0;
    for (auto &e : m_entities) {
        count += e->progress();
    }
    return count;
}

bool uct_test::wait_for(const std::function<bool()> &cond,
                        const std::string &what, double timeout)
{
    double deadline = now_sec() + (timeout * timeout_scale());

    while (!cond()) {
        if (now_sec() > deadline) {
            ADD_FAILURE() << "timed out after " << timeout << " s waiting for "
                          << what;
            return false;
        }
        progress();
    }
    return true;
}

void uct_test::progress_for(double msec)
{
    double deadline = now_sec() + (msec / 1000.0);
    do {
        progress();
    } while (now_sec() < deadline);
}

ssize_t uct_test::retry_no_resource(const std::function<ssize_t()> &op,
                                    const std::string &what)
{
    double deadline = now_sec() + (DEFAULT_TIMEOUT * timeout_scale());
    ssize_t ret;

    while ((ret = op()) == UCS_ERR_NO_RESOURCE) {
        if (now_sec() > deadline) {
            ADD_FAILURE() << what << " kept returning UCS_ERR_NO_RESOURCE "
                          << "for " << DEFAULT_TIMEOUT << " s";
            break;
        }
        progress();
    }
    return ret;
}

void uct_test::wait_completion(ucs_status_t status, counted_completion &comp,
                               const std::string &what)
{
    if (status == UCS_OK) {
        EXPECT_EQ(0, comp.calls)
            << what << " returned UCS_OK but also ran the completion";
        EXPECT_EQ(comp.initial, comp.uct.count)
            << what << " returned UCS_OK but changed comp->count";
    } else if (status == UCS_INPROGRESS) {
        wait_for([&comp] { return comp.calls > 0; },
                 what + " completion callback");
        /* A few more rounds: the callback must not run again */
        for (int i = 0; i < 10; ++i) {
            progress();
        }
        EXPECT_EQ(1, comp.calls)
            << what << ": completion called " << comp.calls << " times";
        EXPECT_EQ(0, comp.uct.count) << what;
        EXPECT_EQ(UCS_OK, comp.uct.status)
            << what << ": " << ucs_status_string(comp.uct.status);
    } else {
        ADD_FAILURE() << what << " failed: " << ucs_status_string(status);
    }
}

void uct_test::flush_ep(entity &e, uct_ep_h ep)
{
    counted_completion comp;
    ucs_status_t status = (ucs_status_t)retry_no_resource(
        [&] { return (ssize_t)uct_ep_flush(ep, 0, comp); }, "uct_ep_flush");
    wait_completion(status, comp, "uct_ep_flush");
}

void uct_test::flush_iface(entity &e)
{
    counted_completion comp;
    ucs_status_t status = (ucs_status_t)retry_no_resource(
        [&] { return (ssize_t)uct_iface_flush(e.iface(), 0, comp); },
        "uct_iface_flush");
    wait_completion(status, comp, "uct_iface_flush");
}
