/*
 * The peer process of the verbs suites (ib_peer.h): its main, which runs
 * in the peer, and the calls of the test that start it and send it
 * requests.
 */
#include "ib_peer.h"
#include "ib_lookup.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ib_peer {

namespace {

using test_peer::fd_read_blob;
using test_peer::fd_write_blob;

const char FD_ENV[]       = "OPENUCT_IB_PEER_FD";
const char MD_ENV[]       = "OPENUCT_IB_PEER_MD";
const char TL_ENV[]       = "OPENUCT_IB_PEER_TL";
const char DEV_ENV[]      = "OPENUCT_IB_PEER_DEV";
const char FEATURES_ENV[] = "OPENUCT_IB_PEER_FEATURES";
const char ECHO_ENV[]     = "OPENUCT_IB_PEER_ECHO_AM_ID";
const int TIMEOUT_MS      = 30000;

/* Request opcodes */
const char OP_CONNECT_EP    = 'E';
const char OP_CONNECT_IFACE = 'I';

/* Exit statuses of the peer: the step that failed */
enum peer_exit {
    EXIT_DONE    = 0, /* the test closed the socket */
    EXIT_ENV     = 2,
    EXIT_IFACE   = 3,
    EXIT_BUFFER  = 4,
    EXIT_HELLO   = 5,
    EXIT_REQUEST = 6,
    EXIT_EP      = 7,
    EXIT_BAD_OP  = 8
};

const char *exit_step(int status)
{
    switch (status) {
    case EXIT_ENV:
        return "its environment does not name an md, transport and device";
    case EXIT_IFACE:
        return "it could not open the md, worker or interface";
    case EXIT_BUFFER:
        return "it could not register or pack its buffer";
    case EXIT_HELLO:
        return "it could not send its addresses";
    case EXIT_REQUEST:
        return "a request was cut short or could not be answered";
    case EXIT_EP:
        return "it could not create, connect or address an ep";
    case EXIT_BAD_OP:
        return "it got an unknown request";
    case 127:
        return "this binary could not be started again (execve)";
    default:
        return "unknown status";
    }
}

/* What the peer sends first; its device address, interface address and
 * rkey follow as blobs of these lengths (a blob read back is at least one
 * byte long, an empty address is not) */
struct hello {
    uint32_t dev_addr_len;
    uint32_t iface_addr_len;
    uint32_t rkey_len;
    uint64_t buffer_addr;
};

/* ------------------------------------------------------------------------
 * In the peer
 */

struct peer_state {
    uct_worker_h worker = NULL;
    uct_iface_h iface   = NULL;
    uct_iface_attr_t attr;
    int echo_am_id   = -1;
    uct_ep_h echo_ep = NULL;
    std::vector<uint64_t> received;
    size_t echoed = 0;
};

ucs_status_t echo_am_cb(void *arg, void *data, size_t length, unsigned flags)
{
    peer_state *state = static_cast<peer_state *>(arg);
    uint64_t value;

    (void)flags;
    if (length >= sizeof(value)) {
        memcpy(&value, data, sizeof(value));
        state->received.push_back(value);
    }
    return UCS_OK;
}

/* Opens the md, worker and interface the environment names; false when a
 * step fails */
bool open_iface(peer_state &state, const char *md_name, const char *tl_name,
                const char *dev_name, uint64_t features, uct_md_h *md_p)
{
    uct_iface_config_t *iface_config;
    ucs_async_context_t *async;
    uct_iface_params_t params;

    if ((ib_lookup::open_md(md_name, md_p) != UCS_OK) ||
        (ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async) !=
         UCS_OK) ||
        (uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &state.worker) !=
         UCS_OK) ||
        (uct_md_iface_config_read(*md_p, tl_name, NULL, NULL, &iface_config) !=
         UCS_OK)) {
        return false;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_FEATURES;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl_name;
    params.mode.device.dev_name = dev_name;
    params.features             = features;
    if ((uct_iface_open(*md_p, state.worker, &params, iface_config,
                        &state.iface) != UCS_OK) ||
        (uct_iface_query(state.iface, &state.attr) != UCS_OK)) {
        return false;
    }
    if ((state.echo_am_id >= 0) &&
        (uct_iface_set_am_handler(state.iface, (uint8_t)state.echo_am_id,
                                  echo_am_cb, &state,
                                  UCT_CB_FLAG_SYNC) != UCS_OK)) {
        return false;
    }
    uct_iface_progress_enable(state.iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return true;
}

/* Registers the buffer and sends the hello, the addresses and the rkey */
int send_hello(peer_state &state, uct_md_h md, int fd)
{
    static char buffer[BUFFER_SIZE];
    uct_md_attr_t md_attr;
    uct_mem_h memh;

    if ((uct_md_query(md, &md_attr) != UCS_OK) ||
        (uct_md_mem_reg(md, buffer, sizeof(buffer), UCT_MD_MEM_ACCESS_ALL,
                        &memh) != UCS_OK)) {
        return EXIT_BUFFER;
    }
    std::vector<char> rkey(std::max<size_t>(md_attr.rkey_packed_size, 1));
    if (uct_md_mkey_pack(md, memh, rkey.data()) != UCS_OK) {
        return EXIT_BUFFER;
    }

    std::vector<char> dev_addr(state.attr.device_addr_len);
    std::vector<char> iface_addr(state.attr.iface_addr_len);
    if ((uct_iface_get_device_address(
             state.iface, (uct_device_addr_t *)dev_addr.data()) != UCS_OK) ||
        ((state.attr.iface_addr_len > 0) &&
         (uct_iface_get_address(
              state.iface, (uct_iface_addr_t *)iface_addr.data()) != UCS_OK))) {
        return EXIT_IFACE;
    }

    hello h;
    memset(&h, 0, sizeof(h));
    h.dev_addr_len   = (uint32_t)dev_addr.size();
    h.iface_addr_len = (uint32_t)iface_addr.size();
    h.rkey_len       = (uint32_t)md_attr.rkey_packed_size;
    h.buffer_addr    = (uintptr_t)buffer;
    if (!fd_write_blob(fd, &h, sizeof(h)) ||
        !fd_write_blob(fd, dev_addr.data(), h.dev_addr_len) ||
        !fd_write_blob(fd, iface_addr.data(), h.iface_addr_len) ||
        !fd_write_blob(fd, rkey.data(), h.rkey_len)) {
        return EXIT_HELLO;
    }
    return EXIT_DONE;
}

/* OP_CONNECT_EP: (device address, ep address) -> the new ep's address */
int serve_connect_ep(peer_state &state, int fd)
{
    std::vector<char> dev, remote_ep, ep_addr(state.attr.ep_addr_len);
    uct_ep_params_t ep_params;
    uct_ep_h ep;

    if (!fd_read_blob(fd, dev, TIMEOUT_MS) ||
        !fd_read_blob(fd, remote_ep, TIMEOUT_MS)) {
        return EXIT_REQUEST;
    }
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    ep_params.iface      = state.iface;
    if ((uct_ep_create(&ep_params, &ep) != UCS_OK) ||
        (uct_ep_get_address(ep, (uct_ep_addr_t *)ep_addr.data()) != UCS_OK) ||
        (uct_ep_connect_to_ep(ep, (const uct_device_addr_t *)dev.data(),
                              (const uct_ep_addr_t *)remote_ep.data()) !=
         UCS_OK)) {
        return EXIT_EP;
    }
    if (!fd_write_blob(fd, ep_addr.data(), (uint32_t)ep_addr.size())) {
        return EXIT_REQUEST;
    }
    return EXIT_DONE;
}

/* OP_CONNECT_IFACE: (device address, interface address) -> "R" */
int serve_connect_iface(peer_state &state, int fd)
{
    std::vector<char> dev, iface_addr;
    uct_ep_params_t ep_params;

    if (!fd_read_blob(fd, dev, TIMEOUT_MS) ||
        !fd_read_blob(fd, iface_addr, TIMEOUT_MS)) {
        return EXIT_REQUEST;
    }
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = state.iface;
    ep_params.dev_addr   = (const uct_device_addr_t *)dev.data();
    ep_params.iface_addr = (const uct_iface_addr_t *)iface_addr.data();
    if (uct_ep_create(&ep_params, &state.echo_ep) != UCS_OK) {
        return EXIT_EP;
    }
    if (!fd_write_blob(fd, "R", 1)) {
        return EXIT_REQUEST;
    }
    return EXIT_DONE;
}

/* Sends the echoes that are due; true when some are still held */
bool echo(peer_state &state)
{
    while ((state.echo_ep != NULL) && (state.echoed < state.received.size()) &&
           (uct_ep_am_short(state.echo_ep, (uint8_t)state.echo_am_id,
                            state.received[state.echoed], NULL, 0) == UCS_OK)) {
        ++state.echoed;
    }
    return state.echoed < state.received.size();
}

int peer_main(int fd)
{
    const char *md_name  = getenv(MD_ENV);
    const char *tl_name  = getenv(TL_ENV);
    const char *dev_name = getenv(DEV_ENV);
    const char *features = getenv(FEATURES_ENV);
    const char *echo_id  = getenv(ECHO_ENV);
    peer_state state;
    uct_md_h md;

    if ((md_name == NULL) || (tl_name == NULL) || (dev_name == NULL) ||
        (features == NULL) || (echo_id == NULL)) {
        return EXIT_ENV;
    }
    state.echo_am_id = atoi(echo_id);
    if (!open_iface(state, md_name, tl_name, dev_name,
                    strtoull(features, NULL, 0), &md)) {
        return EXIT_IFACE;
    }
    int ret = send_hello(state, md, fd);
    if (ret != EXIT_DONE) {
        return ret;
    }

    /* serve until killed, or until the test goes away */
    for (;;) {
        uct_worker_progress(state.worker);
        bool held         = echo(state);
        struct pollfd pfd = {fd, POLLIN, 0};
        if (::poll(&pfd, 1, held ? 0 : 1) <= 0) {
            continue;
        }
        std::vector<char> op;
        if (!fd_read_blob(fd, op, TIMEOUT_MS)) {
            return EXIT_DONE;
        }
        switch (op[0]) {
        case OP_CONNECT_EP:
            ret = serve_connect_ep(state, fd);
            break;
        case OP_CONNECT_IFACE:
            ret = serve_connect_iface(state, fd);
            break;
        default:
            ret = EXIT_BAD_OP;
            break;
        }
        if (ret != EXIT_DONE) {
            return ret;
        }
    }
}

const test_peer::main_registrar registrar(FD_ENV, peer_main);

/* ------------------------------------------------------------------------
 * In the test
 */

/* Why @a peer did not answer: its exit status and the step that failed
 * when it exited (within a second), else that it did not answer */
std::string why(process &peer)
{
    int status;

    for (int i = 0; (i < 100) && (peer.pid > 0); ++i) {
        if (waitpid(peer.pid, &status, WNOHANG) == peer.pid) {
            peer.pid = -1;
            if (WIFEXITED(status)) {
                return "the peer process exited with status " +
                       std::to_string(WEXITSTATUS(status)) + ": " +
                       exit_step(WEXITSTATUS(status));
            }
            return "the peer process was killed by signal " +
                   std::to_string(WTERMSIG(status));
        }
        usleep(10000);
    }
    return "the peer process did not answer within " +
           std::to_string(TIMEOUT_MS / 1000) + " s";
}

/* Reads a blob announced as @a length bytes long */
bool read_sized(int fd, std::vector<char> &out, uint32_t length)
{
    if (!fd_read_blob(fd, out, TIMEOUT_MS)) {
        return false;
    }
    out.resize(length);
    return true;
}

bool write_vector(int fd, const std::vector<char> &data)
{
    return fd_write_blob(fd, data.data(), (uint32_t)data.size());
}

} // namespace

bool start(const resource &res, const options &opts, process &peer,
           std::string &error)
{
    std::vector<char> h_blob;
    hello h;

    if (!test_peer::start(
            FD_ENV,
            {std::string(MD_ENV) + "=" + res.md_name,
             std::string(TL_ENV) + "=" + res.tl_name,
             std::string(DEV_ENV) + "=" + res.dev_name,
             std::string(FEATURES_ENV) + "=" + std::to_string(opts.features),
             std::string(ECHO_ENV) + "=" + std::to_string(opts.echo_am_id)},
            peer, error)) {
        error = "cannot start the peer process: " + error;
        return false;
    }
    if (!fd_read_blob(peer.sock, h_blob, TIMEOUT_MS) ||
        (h_blob.size() != sizeof(h))) {
        error = "no addresses from the peer process: " + why(peer);
        test_peer::stop(peer);
        return false;
    }
    memcpy(&h, h_blob.data(), sizeof(h));
    if (!read_sized(peer.sock, peer.dev_addr, h.dev_addr_len) ||
        !read_sized(peer.sock, peer.iface_addr, h.iface_addr_len) ||
        !read_sized(peer.sock, peer.rkey, h.rkey_len)) {
        error =
            "the addresses of the peer process were cut short: " + why(peer);
        test_peer::stop(peer);
        return false;
    }
    peer.buffer_addr = h.buffer_addr;
    return true;
}

bool connect_ep(process &peer, const std::vector<char> &dev_addr,
                const std::vector<char> &ep_addr,
                std::vector<char> &peer_ep_addr, std::string &error)
{
    if (!fd_write_blob(peer.sock, &OP_CONNECT_EP, 1) ||
        !write_vector(peer.sock, dev_addr) ||
        !write_vector(peer.sock, ep_addr) ||
        !fd_read_blob(peer.sock, peer_ep_addr, TIMEOUT_MS)) {
        error = "the peer process did not connect an ep: " + why(peer);
        return false;
    }
    return true;
}

bool connect_iface(process &peer, const std::vector<char> &dev_addr,
                   const std::vector<char> &iface_addr, std::string &error)
{
    std::vector<char> ready;

    if (!fd_write_blob(peer.sock, &OP_CONNECT_IFACE, 1) ||
        !write_vector(peer.sock, dev_addr) ||
        !write_vector(peer.sock, iface_addr) ||
        !fd_read_blob(peer.sock, ready, TIMEOUT_MS)) {
        error =
            "the peer process did not connect to the interface: " + why(peer);
        return false;
    }
    return true;
}

} // namespace ib_peer
