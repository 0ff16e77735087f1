/*
 * What anyone who can reach a tcp connection manager's listener may send
 * it: the input is written into a fresh TCP connection to a listener on
 * 127.0.0.1, then the write side is shut. The listener must report a
 * request only for a whole, valid REQUEST (the private data it reports is
 * the payload the header announced, within max_conn_priv), must close
 * every connection it did not report, and must hold no socket afterwards.
 * Input: the bytes of the stream. If their number is odd, a request that
 * reaches the listener is accepted (an ep is created, which sends ACCEPT,
 * and destroyed), otherwise it is rejected.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"

#include <ucs/async/async.h>
#include <ucs/debug/log.h>
#include <uct/api/uct.h>
#include <uct/tcp/tcp_cm.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FUZZ_MAX_INPUT (64 * 1024)

static struct {
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_cm_h cm;
    uct_listener_h listener;
    struct sockaddr_in addr;
    size_t max_priv;
    unsigned fds;      /* open fds when the input starts */
    int accept;        /* this input's choice */
    unsigned requests; /* reported by the listener, this input */
    size_t reported;   /* private data bytes of the last request */
} fz;

static void fuzz_die(const char *what, ucs_status_t status)
{
    fprintf(stderr, "fuzz_tcp_cm: %s failed: %s\n", what,
            ucs_status_string(status));
    abort();
}

static unsigned fuzz_open_fds(void)
{
    DIR *dir       = opendir("/proc/self/fd");
    unsigned count = 0;

    while ((dir != NULL) && (readdir(dir) != NULL)) {
        ++count;
    }
    if (dir != NULL) {
        closedir(dir);
    }
    return count;
}

static ssize_t fuzz_pack(void *arg, const uct_cm_ep_priv_data_pack_args_t *args,
                         void *priv_data)
{
    memcpy(priv_data, "server", 6);
    return 6;
}

static void fuzz_notify(uct_ep_h ep, void *arg,
                        const uct_cm_ep_server_conn_notify_args_t *args)
{}

static void fuzz_disconnect(uct_ep_h ep, void *arg)
{}

static void fuzz_conn_request(uct_listener_h listener, void *arg,
                              const uct_cm_listener_conn_request_args_t *args)
{
    const uct_cm_remote_data_t *remote = args->remote_data;
    volatile char sum                  = 0;
    uct_ep_params_t params;
    uct_ep_h ep;
    size_t i;

    fuzz_check(remote->conn_priv_data_length <= fz.max_priv,
               "%zu bytes of private data reported, max_conn_priv %zu",
               remote->conn_priv_data_length, fz.max_priv);
    for (i = 0; i < remote->conn_priv_data_length; ++i) { /* all readable */
        sum += ((const char *)remote->conn_priv_data)[i];
    }
    (void)sum;
    ++fz.requests;
    fz.reported = remote->conn_priv_data_length;

    if (!fz.accept) {
        fuzz_check(uct_listener_reject(listener, args->conn_request) == UCS_OK,
                   "uct_listener_reject failed");
        return;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_CM |
                        UCT_EP_PARAM_FIELD_CONN_REQUEST |
                        UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB |
                        UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER |
                        UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB;
    params.cm                 = fz.cm;
    params.conn_request       = args->conn_request;
    params.sockaddr_pack_cb   = fuzz_pack;
    params.sockaddr_cb_server = fuzz_notify;
    params.disconnect_cb      = fuzz_disconnect;
    fuzz_check(uct_ep_create(&params, &ep) == UCS_OK,
               "uct_ep_create from a request failed");
    uct_ep_destroy(ep);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    uct_listener_params_t params;
    uct_listener_attr_t attr;
    uct_component_h *components;
    uct_component_attr_t cattr;
    uct_cm_config_t *config;
    uct_cm_attr_t cm_attr;
    unsigned i, count;
    ucs_status_t status;

    fuzz_log_silence(UCS_LOG_LEVEL_DEBUG);
    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &fz.async);
    if (status == UCS_OK) {
        status =
            uct_worker_create(fz.async, UCS_THREAD_MODE_SINGLE, &fz.worker);
    }
    if (status == UCS_OK) {
        status = uct_query_components(&components, &count);
    }
    if (status != UCS_OK) {
        fuzz_die("the async context, worker and components", status);
    }
    status = UCS_ERR_NO_DEVICE;
    for (i = 0; (i < count) && (status == UCS_ERR_NO_DEVICE); ++i) {
        cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &cattr) != UCS_OK) ||
            strcmp(cattr.name, "tcp")) {
            continue;
        }
        status = uct_cm_config_read(components[i], NULL, NULL, &config);
        if (status == UCS_OK) {
            status = uct_cm_open(components[i], fz.worker, config, &fz.cm);
            uct_config_release(config);
        }
    }
    uct_release_component_list(components);
    if (status != UCS_OK) {
        fuzz_die("opening the tcp cm (is the tcp module built?)", status);
    }

    cm_attr.field_mask = UCT_CM_ATTR_FIELD_MAX_CONN_PRIV;
    if (uct_cm_query(fz.cm, &cm_attr) != UCS_OK) {
        fuzz_die("uct_cm_query", UCS_ERR_IO_ERROR);
    }
    fz.max_priv = cm_attr.max_conn_priv;

    memset(&fz.addr, 0, sizeof(fz.addr));
    fz.addr.sin_family      = AF_INET;
    fz.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    memset(&params, 0, sizeof(params));
    params.field_mask      = UCT_LISTENER_PARAM_FIELD_CONN_REQUEST_CB;
    params.conn_request_cb = fuzz_conn_request;
    status = uct_listener_create(fz.cm, (struct sockaddr *)&fz.addr,
                                 sizeof(fz.addr), &params, &fz.listener);
    if (status != UCS_OK) {
        fuzz_die("uct_listener_create(127.0.0.1:0)", status);
    }
    attr.field_mask = UCT_LISTENER_ATTR_FIELD_SOCKADDR;
    if (uct_listener_query(fz.listener, &attr) != UCS_OK) {
        fuzz_die("uct_listener_query", UCS_ERR_IO_ERROR);
    }
    memcpy(&fz.addr, &attr.sockaddr, sizeof(fz.addr));
    return 0;
}

/* Whether what the listener sent back, @a got bytes at @a buf, is a sane
 * answer: nothing, a REJECT, or an ACCEPT with our 6 bytes */
static void fuzz_check_answer(const uint8_t *buf, size_t got)
{
    uct_tcp_cm_hdr_t hdr;
    size_t length;

    if (got == 0) {
        return;
    }
    fuzz_check(fz.requests == 1,
               "the listener answered %zu bytes without "
               "reporting a request",
               got);
    fuzz_check(got >= sizeof(hdr), "a partial answer of %zu bytes", got);
    memcpy(&hdr, buf, sizeof(hdr));
    length = ntohl(hdr.length);
    fuzz_check(ntohl(hdr.magic) == UCT_TCP_CM_MAGIC, "answer magic");
    if (fz.accept) {
        fuzz_check((hdr.type == UCT_TCP_CM_MSG_ACCEPT) && (length == 6) &&
                       (got == sizeof(hdr) + 6) &&
                       !memcmp(buf + sizeof(hdr), "server", 6),
                   "an accepted request got type %u, %zu bytes", hdr.type, got);
    } else {
        fuzz_check((hdr.type == UCT_TCP_CM_MSG_REJECT) && (length == 0) &&
                       (got == sizeof(hdr)),
                   "a rejected request got type %u, %zu bytes", hdr.type, got);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t answer[256];
    size_t sent = 0, got = 0;
    uct_tcp_cm_hdr_t hdr;
    struct pollfd pfd;
    unsigned rounds;
    ssize_t ret;
    int fd, valid, closed = 0;

    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    fz.accept   = size & 1;
    fz.fds      = fuzz_open_fds(); /* the driver may hold the input open */
    fz.requests = 0;
    fz.reported = 0;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    fuzz_check(fd >= 0, "socket: %m");
    ret = connect(fd, (struct sockaddr *)&fz.addr, sizeof(fz.addr));
    fuzz_check((ret == 0) || (errno == EINPROGRESS), "connect: %m");

    /* write it all, reading what comes back; then wait for the close */
    for (rounds = 0; !closed && (rounds < 20000); ++rounds) {
        if (sent < size) {
            ret = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (ret > 0) {
                sent += ret;
            } else if ((ret < 0) && (errno != EAGAIN) &&
                       (errno != EINPROGRESS) && (errno != ENOTCONN)) {
                sent = size; /* the listener closed: stop writing */
            }
            if (sent == size) {
                shutdown(fd, SHUT_WR);
            }
        } else if (sent == 0) {
            shutdown(fd, SHUT_WR);
            sent = 1; /* an empty input: shut once */
            size = 1;
        }
        uct_worker_progress(fz.worker);
        pfd.fd     = fd;
        pfd.events = POLLIN;
        if (poll(&pfd, 1, 1) > 0) {
            ret = recv(fd, answer + got, sizeof(answer) - got, 0);
            if (ret > 0) {
                got += ret;
                fuzz_check(got < sizeof(answer), "answer too long");
            } else if ((ret == 0) || (errno != EAGAIN)) {
                closed = 1;
            }
        }
    }
    fuzz_check(closed,
               "the listener kept the connection after the input "
               "ended (%zu bytes, %u requests)",
               size, fz.requests);
    close(fd);

    /* a request is reported exactly when the stream starts with a whole,
     * valid REQUEST, and with the private data its header announced */
    fuzz_check(fz.requests <= 1, "%u requests from one stream", fz.requests);
    memset(&hdr, 0, sizeof(hdr));
    memcpy(&hdr, data, (size < sizeof(hdr)) ? size : sizeof(hdr));
    valid = (size >= sizeof(hdr)) && (ntohl(hdr.magic) == UCT_TCP_CM_MAGIC) &&
            (hdr.version == UCT_TCP_CM_VERSION) && (hdr.reserved == 0) &&
            (hdr.type == UCT_TCP_CM_MSG_REQUEST) &&
            (ntohl(hdr.length) <= fz.max_priv) &&
            (size >= sizeof(hdr) + ntohl(hdr.length));
    fuzz_check(fz.requests == (unsigned)valid,
               "%u requests reported for %s stream of %zu bytes", fz.requests,
               valid ? "a valid" : "an invalid", size);
    fuzz_check(!valid || (fz.reported == ntohl(hdr.length)),
               "reported %zu bytes for a header of length %u", fz.reported,
               ntohl(hdr.length));
    fuzz_check_answer(answer, got);

    /* the listener's side of it is gone too */
    for (rounds = 0; (fuzz_open_fds() != fz.fds) && (rounds < 1000); ++rounds) {
        uct_worker_progress(fz.worker);
        usleep(100);
    }
    fuzz_check(fuzz_open_fds() == fz.fds, "%u fds open, %u before",
               fuzz_open_fds(), fz.fds);
    return 0;
}
