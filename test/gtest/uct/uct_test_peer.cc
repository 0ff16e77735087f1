/*
 * A receiver of the transport-parametrized suites in a peer process
 * (uct_test_peer.h): the test's link and the peer's request loop.
 */
#include "uct_test_peer.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

const char PEER_FD_ENV[]      = "OPENUCT_TEST_RECEIVER_PEER_FD";
const uint32_t MAX_FRAME      = 256u << 20;
const int REPLY_TIMEOUT_MS    = 60000;
const int EXIT_TIMEOUT_MS     = 10000;
const unsigned PROGRESS_ROUND = 8; /* worker progress calls per request */

enum op_t : uint32_t {
    OP_OPEN = 1,
    OP_PROGRESS,
    OP_REC_INSTALL,
    OP_REC_KEEP,
    OP_REC_RELEASE,
    OP_REC_COUNT,
    OP_REC_AT,
    OP_REC_KEPT,
    OP_BUF_ALLOC,
    OP_BUF_FREE,
    OP_READ,
    OP_WRITE,
    OP_EVENT_FD,
    OP_EVENT_ARM,
    OP_EVENT_WAIT,
    OP_LOG,
    OP_EXIT
};

/* ------------------------------------------------------------------------
 * Encoding: values in host order (both ends are this binary), strings
 * with a 32-bit length
 */

struct writer {
    std::string out;

    template <typename T> writer &put(const T &value)
    {
        out.append(reinterpret_cast<const char *>(&value), sizeof(value));
        return *this;
    }
    writer &put_bytes(const void *data, size_t length)
    {
        put<uint32_t>((uint32_t)length);
        out.append(static_cast<const char *>(data), length);
        return *this;
    }
    writer &put_str(const std::string &s)
    {
        return put_bytes(s.data(), s.size());
    }
};

struct reader {
    const std::string &in;
    size_t pos = 0;

    explicit reader(const std::string &s) : in(s)
    {}

    const char *take(size_t length)
    {
        if (length > in.size() - pos) {
            throw std::runtime_error("truncated message from the other "
                                     "process of the test");
        }
        const char *p = in.data() + pos;
        pos += length;
        return p;
    }
    template <typename T> T get()
    {
        T value;
        memcpy(&value, take(sizeof(value)), sizeof(value));
        return value;
    }
    std::string get_str()
    {
        uint32_t length = get<uint32_t>();
        return std::string(take(length), length);
    }
};

bool send_frame(int fd, const std::string &data)
{
    return test_peer::fd_write_blob(fd, data.data(), (uint32_t)data.size());
}

/* False on a timeout, the end of the stream, or a frame over MAX_FRAME */
bool recv_frame(int fd, std::string &data, int timeout_ms)
{
    uint32_t length;

    if (!test_peer::fd_read_exact(fd, &length, sizeof(length), timeout_ms) ||
        (length > MAX_FRAME)) {
        return false;
    }
    data.resize(length);
    return (length == 0) ||
           test_peer::fd_read_exact(fd, &data[0], length, timeout_ms);
}

/* ------------------------------------------------------------------------
 * The peer
 */

/* Warnings and errors the peer logged since the test last asked: a test
 * fails on them as on its own (common/test.cc) */
std::vector<std::string> peer_log_lines;

ucs_log_func_rc_t peer_log_handler(const char *file, unsigned line,
                                   const char *function, ucs_log_level_t level,
                                   const char *fmt, va_list ap)
{
    char buf[1024];
    const char *base = strrchr(file, '/');

    if (level <= UCS_LOG_LEVEL_WARN) {
        vsnprintf(buf, sizeof(buf), fmt, ap);
        peer_log_lines.push_back(std::string(ucs_log_level_names[level]) + " " +
                                 (base ? base + 1 : file) + ":" +
                                 std::to_string(line) + " " + buf);
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

struct peer_state {
    std::unique_ptr<uct_test::entity> entity;
    std::vector<std::unique_ptr<uct_test::am_recorder>> recorders;
    std::map<uint32_t, std::unique_ptr<uct_test::mapped_buffer>> buffers;
    uint32_t next_buffer = 0;

    uct_test::entity &e()
    {
        if (!entity) {
            throw std::runtime_error("no interface is open in the peer");
        }
        return *entity;
    }

    uct_test::am_recorder &recorder(uint32_t rec)
    {
        if (rec >= recorders.size()) {
            throw std::runtime_error("no AM recorder " + std::to_string(rec));
        }
        return *recorders[rec];
    }

    void open(reader &r, writer &w)
    {
        resource res;
        uct_entity_params params;

        res.component_name      = r.get_str();
        res.md_name             = r.get_str();
        res.tl_name             = r.get_str();
        res.dev_name            = r.get_str();
        res.dev_type            = r.get<uct_device_type_t>();
        res.test_name           = r.get_str();
        params.rx_headroom      = r.get<size_t>();
        params.set_am_alignment = r.get<uint8_t>() != 0;
        params.am_alignment     = r.get<size_t>();
        params.am_align_offset  = r.get<size_t>();
        params.extra_field_mask = r.get<uint64_t>();
        for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
            std::string name = r.get_str();
            params.config.emplace_back(name, r.get_str());
        }

        entity.reset(new uct_test::entity(res, params));
        w.put(entity->md_attr()).put(entity->iface_attr());
        w.put_bytes(entity->dev_addr().data(), entity->dev_addr().size());
        w.put_bytes(entity->iface_addr().data(), entity->iface_addr().size());
    }

    void buffer_alloc(reader &r, writer &w)
    {
        size_t length = r.get<size_t>();
        size_t offset = r.get<size_t>();
        uint32_t id   = next_buffer++;
        auto *buf     = new uct_test::mapped_buffer(length, e(), offset);

        buffers[id].reset(buf);
        w.put(id).put<uint64_t>(buf->addr());
        const uct_md_attr_t &attr = e().md_attr();
        if (attr.cap.flags & UCT_MD_FLAG_NEED_RKEY) {
            std::vector<char> packed(
                std::max<size_t>(attr.rkey_packed_size, 1));
            ucs_status_t status =
                uct_md_mkey_pack(e().md(), buf->memh(), packed.data());
            if (status != UCS_OK) {
                throw std::runtime_error(
                    std::string("uct_md_mkey_pack in the peer: ") +
                    ucs_status_string(status));
            }
            w.put_bytes(packed.data(), attr.rkey_packed_size);
        } else {
            w.put_bytes("", 0);
        }
    }

    /* Returns false for OP_EXIT */
    bool handle(uint32_t op, reader &r, writer &w)
    {
        switch (op) {
        case OP_OPEN:
            open(r, w);
            break;
        case OP_PROGRESS: {
            unsigned count = 0;
            for (unsigned i = 0; i < PROGRESS_ROUND; ++i) {
                count += e().progress();
            }
            w.put(count);
            break;
        }
        case OP_REC_INSTALL: {
            uint8_t id = r.get<uint8_t>();
            recorders.emplace_back(new uct_test::am_recorder());
            recorders.back()->install(e(), id);
            w.put<uint32_t>((uint32_t)recorders.size() - 1);
            break;
        }
        case OP_REC_KEEP: {
            uint32_t rec = r.get<uint32_t>();
            recorder(rec).keep_descriptors(r.get<size_t>());
            break;
        }
        case OP_REC_RELEASE:
            recorder(r.get<uint32_t>()).release_kept();
            break;
        case OP_REC_COUNT:
            w.put<uint64_t>(recorder(r.get<uint32_t>()).count());
            break;
        case OP_REC_AT: {
            uint32_t rec = r.get<uint32_t>();
            uct_test::am_recorder::message m =
                recorder(rec).at(r.get<uint64_t>());
            w.put_str(m.data).put(m.flags).put<uint64_t>((uintptr_t)m.ptr);
            break;
        }
        case OP_REC_KEPT: {
            std::vector<void *> kept = recorder(r.get<uint32_t>()).kept();
            w.put<uint32_t>((uint32_t)kept.size());
            for (void *p : kept) {
                w.put<uint64_t>((uintptr_t)p);
            }
            break;
        }
        case OP_BUF_ALLOC:
            buffer_alloc(r, w);
            break;
        case OP_BUF_FREE:
            buffers.erase(r.get<uint32_t>());
            break;
        case OP_READ: {
            /* Trusted: the test names its own buffers and AM data */
            uint64_t addr = r.get<uint64_t>();
            w.put_bytes((const void *)(uintptr_t)addr, r.get<uint64_t>());
            break;
        }
        case OP_WRITE: {
            uint64_t addr    = r.get<uint64_t>();
            std::string data = r.get_str();
            memcpy((void *)(uintptr_t)addr, data.data(), data.size());
            break;
        }
        case OP_EVENT_FD: {
            int fd              = -1;
            ucs_status_t status = e().event_fd_get(&fd);
            w.put(status).put(fd);
            break;
        }
        case OP_EVENT_ARM:
            w.put(e().event_arm(r.get<unsigned>()));
            break;
        case OP_EVENT_WAIT:
            w.put<uint8_t>(e().event_wait(r.get<int>()));
            break;
        case OP_LOG:
            w.put<uint32_t>((uint32_t)peer_log_lines.size());
            for (const std::string &line : peer_log_lines) {
                w.put_str(line);
            }
            peer_log_lines.clear();
            break;
        case OP_EXIT:
            return false;
        default:
            throw std::runtime_error("unknown request " + std::to_string(op));
        }
        return true;
    }

    void close()
    {
        buffers.clear();
        /* Kept descriptors go back before the interface closes */
        for (auto &rec : recorders) {
            rec->release_kept();
        }
        entity.reset();
        recorders.clear();
    }
};

int peer_main(int fd)
{
    peer_state state;
    std::string request;
    bool running = true;

    ucs_log_push_handler(peer_log_handler);

    /* The test waits for every reply: no timeout here, the end of the
     * stream (the test exited) ends the loop */
    while (running && recv_frame(fd, request, -1)) {
        reader r(request);
        writer w;
        w.put<uint8_t>(1);
        try {
            running = state.handle(r.get<uint32_t>(), r, w);
        } catch (const std::exception &e) {
            w.out.clear();
            w.put<uint8_t>(0);
            w.out += e.what();
        }
        if (!send_frame(fd, w.out)) {
            break;
        }
    }
    state.close();
    return 0;
}

const test_peer::main_registrar peer_registrar(PEER_FD_ENV, peer_main);

} // namespace

/* ------------------------------------------------------------------------
 * The test's link
 */

uct_test_peer_link::uct_test_peer_link(const resource &res,
                                       const uct_entity_params &params)
{
    std::string error;

    if (params.err_handler != nullptr) {
        throw std::logic_error("an error handler cannot be set on an "
                               "interface in a peer process");
    }
    if (!test_peer::start(PEER_FD_ENV, {}, m_proc, error)) {
        throw std::runtime_error("cannot start the peer process: " + error);
    }

    try {
        writer w;
        w.put_str(res.component_name)
            .put_str(res.md_name)
            .put_str(res.tl_name)
            .put_str(res.dev_name)
            .put(res.dev_type)
            .put_str(res.test_name)
            .put(params.rx_headroom)
            .put<uint8_t>(params.set_am_alignment)
            .put(params.am_alignment)
            .put(params.am_align_offset)
            .put(params.extra_field_mask)
            .put<uint32_t>((uint32_t)params.config.size());
        for (const auto &kv : params.config) {
            w.put_str(kv.first).put_str(kv.second);
        }

        std::string reply = call(OP_OPEN, w.out);
        reader r(reply);
        m_md_attr        = r.get<uct_md_attr_t>();
        m_iface_attr     = r.get<uct_iface_attr_t>();
        std::string dev  = r.get_str();
        std::string addr = r.get_str();
        m_dev_addr.assign(dev.begin(), dev.end());
        m_iface_addr.assign(addr.begin(), addr.end());
    } catch (...) {
        close();
        throw;
    }
}

uct_test_peer_link::~uct_test_peer_link()
{
    close();
}

std::string uct_test_peer_link::call(uint32_t op, const std::string &args)
{
    if (m_proc.sock < 0) {
        throw std::runtime_error("the peer process of the receiver is gone");
    }

    std::string request, reply;
    request.append(reinterpret_cast<const char *>(&op), sizeof(op));
    request += args;
    if (!send_frame(m_proc.sock, request) ||
        !recv_frame(m_proc.sock, reply, REPLY_TIMEOUT_MS)) {
        int status      = 0;
        std::string why = (waitpid(m_proc.pid, &status, WNOHANG) == m_proc.pid)
                              ? (WIFSIGNALED(status)
                                     ? "it was killed by signal " +
                                           std::to_string(WTERMSIG(status))
                                     : "it exited with " +
                                           std::to_string(WEXITSTATUS(status)))
                              : "no reply within " +
                                    std::to_string(REPLY_TIMEOUT_MS / 1000) +
                                    " s";
        if (why[0] != 'n') {
            m_proc.pid = -1; /* reaped */
        }
        test_peer::stop(m_proc);
        throw std::runtime_error("the peer process of the receiver failed "
                                 "request " +
                                 std::to_string(op) + ": " + why);
    }
    if (reply.empty() || (reply[0] != 1)) {
        throw std::runtime_error(
            "in the peer process of the receiver: " +
            (reply.empty() ? std::string("empty reply") : reply.substr(1)));
    }
    return reply.substr(1);
}

unsigned uct_test_peer_link::progress()
{
    std::string reply = call(OP_PROGRESS, "");
    reader r(reply);
    return r.get<unsigned>();
}

ucs_status_t uct_test_peer_link::event_fd_get(int *fd)
{
    std::string reply = call(OP_EVENT_FD, "");
    reader r(reply);
    ucs_status_t status = r.get<ucs_status_t>();
    int value           = r.get<int>();
    if (status == UCS_OK) {
        *fd = value;
    }
    return status;
}

ucs_status_t uct_test_peer_link::event_arm(unsigned events)
{
    std::string reply = call(OP_EVENT_ARM, writer().put(events).out);
    reader r(reply);
    return r.get<ucs_status_t>();
}

bool uct_test_peer_link::event_wait(int timeout_ms)
{
    std::string reply = call(OP_EVENT_WAIT, writer().put(timeout_ms).out);
    reader r(reply);
    return r.get<uint8_t>() != 0;
}

uint32_t uct_test_peer_link::recorder_install(uint8_t am_id)
{
    std::string reply = call(OP_REC_INSTALL, writer().put(am_id).out);
    reader r(reply);
    return r.get<uint32_t>();
}

void uct_test_peer_link::recorder_keep(uint32_t rec, size_t headroom)
{
    call(OP_REC_KEEP, writer().put(rec).put(headroom).out);
}

void uct_test_peer_link::recorder_release(uint32_t rec)
{
    call(OP_REC_RELEASE, writer().put(rec).out);
}

size_t uct_test_peer_link::recorder_count(uint32_t rec)
{
    std::string reply = call(OP_REC_COUNT, writer().put(rec).out);
    reader r(reply);
    return r.get<uint64_t>();
}

uct_test::am_recorder::message uct_test_peer_link::recorder_at(uint32_t rec,
                                                               size_t i)
{
    std::string reply = call(OP_REC_AT, writer().put(rec).put<uint64_t>(i).out);
    reader r(reply);
    uct_test::am_recorder::message m;
    m.data  = r.get_str();
    m.flags = r.get<unsigned>();
    m.ptr   = (void *)(uintptr_t)r.get<uint64_t>();
    return m;
}

std::vector<void *> uct_test_peer_link::recorder_kept(uint32_t rec)
{
    std::string reply = call(OP_REC_KEPT, writer().put(rec).out);
    reader r(reply);
    std::vector<void *> kept(r.get<uint32_t>());
    for (void *&p : kept) {
        p = (void *)(uintptr_t)r.get<uint64_t>();
    }
    return kept;
}

void uct_test_peer_link::buffer_alloc(size_t length, size_t offset,
                                      uint32_t &id, uint64_t &addr,
                                      std::vector<char> &packed_rkey)
{
    std::string reply =
        call(OP_BUF_ALLOC, writer().put(length).put(offset).out);
    reader r(reply);
    id              = r.get<uint32_t>();
    addr            = r.get<uint64_t>();
    std::string key = r.get_str();
    packed_rkey.assign(key.begin(), key.end());
}

void uct_test_peer_link::buffer_free(uint32_t id)
{
    call(OP_BUF_FREE, writer().put(id).out);
}

std::string uct_test_peer_link::read(uint64_t addr, size_t length)
{
    std::string reply =
        call(OP_READ, writer().put(addr).put<uint64_t>(length).out);
    reader r(reply);
    return r.get_str();
}

void uct_test_peer_link::write(uint64_t addr, const void *data, size_t length)
{
    call(OP_WRITE, writer().put(addr).put_bytes(data, length).out);
}

void uct_test_peer_link::close()
{
    if (m_proc.sock < 0) {
        return;
    }

    /* What the peer logged fails the test, as in this process */
    try {
        std::string lines = call(OP_LOG, "");
        reader r(lines);
        for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
            ADD_FAILURE() << "unexpected log line in the receiver's process: "
                          << r.get_str();
        }
    } catch (const std::exception &e) {
        ADD_FAILURE() << e.what();
        if (m_proc.sock < 0) {
            return;
        }
    }

    std::string reply;
    uint32_t op = OP_EXIT;
    if (send_frame(m_proc.sock, std::string(reinterpret_cast<const char *>(&op),
                                            sizeof(op))) &&
        recv_frame(m_proc.sock, reply, EXIT_TIMEOUT_MS)) {
        /* It closes its interface, then exits */
        auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(EXIT_TIMEOUT_MS);
        while (std::chrono::steady_clock::now() < deadline) {
            if (waitpid(m_proc.pid, NULL, WNOHANG) == m_proc.pid) {
                m_proc.pid = -1;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    test_peer::stop(m_proc); /* kills it if it did not exit */
}
