/*
 * uct_perftest: the out-of-band TCP socket of client/server mode. It
 * carries the run parameters (client to server), each side's addresses
 * and remote key, and one-byte barriers around every measured size.
 * While it measures, a side sends a one-byte heartbeat every 250 ms and
 * takes the peer's, so a peer waiting in a barrier knows it is alive and
 * either side notices the other's socket closing. Every wait here ends
 * when the socket closes or after -T seconds without a byte.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PERF_OOB_CONNECT_TIMEOUT 30 /* seconds a client keeps retrying */
#define PERF_OOB_MAX_BLOB        (1024 * 1024)
#define PERF_OOB_BARRIER         'b'
#define PERF_OOB_HEARTBEAT       'h'
#define PERF_OOB_HEARTBEAT_MSEC  250 /* well below any -T */

/* The run parameters as they travel; fixed-width fields */
typedef struct {
    uint32_t test;
    uint32_t mode;
    uint32_t num_sizes;
    uint32_t outstanding;
    uint32_t fc_window;
    uint32_t conn;
    uint64_t iters;
    uint64_t warmup;
    uint64_t sizes[PERF_MAX_SIZES];
} perf_wire_params_t;

/*
 * The socket failed or closed while the peer should be there: errno @a err
 * (0 for an orderly close) of @a op. Reports it as the peer's failure.
 */
static int perf_oob_failed(perf_ctx_t *ctx, int err, const char *op)
{
    ucs_status_t status;
    char how[128];

    if (err == 0) {
        status = UCS_ERR_CONNECTION_RESET;
        snprintf(how, sizeof(how), "the out-of-band connection closed");
    } else {
        if ((err == ECONNRESET) || (err == EPIPE)) {
            status = UCS_ERR_CONNECTION_RESET;
        } else if (err == ETIMEDOUT) {
            status = UCS_ERR_ENDPOINT_TIMEOUT;
        } else {
            status = UCS_ERR_IO_ERROR;
        }
        snprintf(how, sizeof(how), "out-of-band %s: %s", op, strerror(err));
    }
    perf_report_peer_failure(ctx, status, how);
    return -1;
}

/* poll() on the socket for @a events, at most -T seconds; 1 when ready */
static int perf_oob_wait(perf_ctx_t *ctx, short events)
{
    struct pollfd pfd = {.fd = ctx->sock, .events = events};
    int timeout_ms =
        (ctx->params.timeout > 0) ? (int)ctx->params.timeout * 1000 : -1;
    int ret;

    do {
        ret = poll(&pfd, 1, timeout_ms);
    } while ((ret < 0) && (errno == EINTR));

    if (ret < 0) {
        fprintf(stderr,
                "uct_perftest: poll on the out-of-band socket "
                "failed: %s\n",
                strerror(errno));
        return -1;
    } else if (ret == 0) {
        perf_report_no_progress(ctx);
        return -1;
    }
    return 1;
}

int perf_oob_send(perf_ctx_t *ctx, const void *data, size_t length)
{
    const char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = send(ctx->sock, p, length, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            } else if ((errno == EAGAIN) || (errno == EWOULDBLOCK)) {
                /* The peer does not read: it may be stopped */
                if (perf_oob_wait(ctx, POLLOUT) < 0) {
                    return -1;
                }
                continue;
            }
            return perf_oob_failed(ctx, errno, "send");
        }
        p += ret;
        length -= (size_t)ret;
    }
    return 0;
}

/* Waits for @a length bytes; each arrival restarts the -T clock */
int perf_oob_recv(perf_ctx_t *ctx, void *data, size_t length)
{
    char *p = data;
    ssize_t ret;

    while (length > 0) {
        if (perf_oob_wait(ctx, POLLIN) < 0) {
            return -1;
        }
        ret = recv(ctx->sock, p, length, MSG_DONTWAIT);
        if (ret == 0) {
            return perf_oob_failed(ctx, 0, "receive");
        } else if (ret < 0) {
            if ((errno == EINTR) || (errno == EAGAIN) ||
                (errno == EWOULDBLOCK)) {
                continue;
            }
            return perf_oob_failed(ctx, errno, "receive");
        }
        p += ret;
        length -= (size_t)ret;
    }
    return 0;
}

static int perf_oob_listen(int family, uint16_t port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int one = 1, zero = 0;
    int sock;

    memset(&ss, 0, sizeof(ss));
    if (family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        a6->sin6_family         = AF_INET6;
        a6->sin6_addr           = in6addr_any;
        a6->sin6_port           = htons(port);
        len                     = sizeof(*a6);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        a4->sin_family         = AF_INET;
        a4->sin_addr.s_addr    = htonl(INADDR_ANY);
        a4->sin_port           = htons(port);
        len                    = sizeof(*a4);
    }

    sock = socket(family, SOCK_STREAM, 0);
    if (sock < 0) {
        return -1;
    }
    if (family == AF_INET6) {
        /* Accept IPv4 clients too */
        setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((bind(sock, (struct sockaddr *)&ss, len) < 0) ||
        (listen(sock, 1) < 0)) {
        close(sock);
        return -1;
    }
    return sock;
}

int perf_oob_accept(uint16_t port)
{
    int lsock, sock;

    lsock = perf_oob_listen(AF_INET6, port);
    if (lsock < 0) {
        lsock = perf_oob_listen(AF_INET, port);
    }
    if (lsock < 0) {
        fprintf(stderr,
                "cannot listen on port %u: %s; pick another with "
                "-p\n",
                port, strerror(errno));
        return -1;
    }

    do {
        sock = accept(lsock, NULL, NULL);
    } while ((sock < 0) && (errno == EINTR));
    if (sock < 0) {
        fprintf(stderr, "accept on port %u failed: %s\n", port,
                strerror(errno));
    }
    close(lsock);
    return sock;
}

int perf_oob_connect(const char *server, uint16_t port)
{
    struct timespec delay = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    time_t deadline       = time(NULL) + PERF_OOB_CONNECT_TIMEOUT;
    struct addrinfo hints, *res, *ai;
    char port_str[8];
    int sock, ret, err = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port_str, sizeof(port_str), "%u", port);

    ret = getaddrinfo(server, port_str, &hints, &res);
    if (ret != 0) {
        fprintf(stderr, "cannot resolve server '%s': %s\n", server,
                gai_strerror(ret));
        return -1;
    }

    /* The server may still be starting: retry refused connections */
    for (;;) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (sock < 0) {
                err = errno;
                continue;
            }
            if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return sock;
            }
            err = errno;
            close(sock);
        }
        if ((err != ECONNREFUSED) || (time(NULL) >= deadline)) {
            break;
        }
        nanosleep(&delay, NULL);
    }

    freeaddrinfo(res);
    fprintf(stderr, "cannot connect to %s:%u: %s; is the server running?\n",
            server, port, strerror(err));
    return -1;
}

int perf_oob_send_blob(perf_ctx_t *ctx, const perf_blob_t *blob)
{
    uint64_t length = blob->length;

    if ((perf_oob_send(ctx, &length, sizeof(length)) != 0) ||
        (perf_oob_send(ctx, blob->data, blob->length) != 0)) {
        return -1;
    }
    return 0;
}

int perf_oob_recv_blob(perf_ctx_t *ctx, perf_blob_t *blob)
{
    uint64_t length;

    if (perf_oob_recv(ctx, &length, sizeof(length)) != 0) {
        return -1;
    }
    if (length > PERF_OOB_MAX_BLOB) {
        fprintf(stderr,
                "the peer sent a %llu-byte address; is it "
                "uct_perftest of the same version?\n",
                (unsigned long long)length);
        return -1;
    }

    blob->length = length;
    blob->data   = malloc(length + 1);
    if (blob->data == NULL) {
        fprintf(stderr, "out of memory for the peer's address\n");
        return -1;
    }
    return perf_oob_recv(ctx, blob->data, blob->length);
}

/*
 * Takes what the peer sent without waiting: heartbeats, which only show
 * it is alive, and barrier tokens, which wait in ctx->oob_barriers for
 * the barrier that takes them. 1 when something arrived, 0 when nothing
 * did, -1 when the socket closed or failed (reported).
 */
static int perf_oob_take_tokens(perf_ctx_t *ctx)
{
    char tokens[64];
    int arrived = 0;
    ssize_t ret, i;

    for (;;) {
        ret = recv(ctx->sock, tokens, sizeof(tokens), MSG_DONTWAIT);
        if (ret == 0) {
            return perf_oob_failed(ctx, 0, "receive");
        } else if (ret < 0) {
            if (errno == EINTR) {
                continue;
            } else if ((errno == EAGAIN) || (errno == EWOULDBLOCK)) {
                return arrived;
            }
            return perf_oob_failed(ctx, errno, "receive");
        }

        arrived = 1;
        for (i = 0; i < ret; ++i) {
            if (tokens[i] == PERF_OOB_BARRIER) {
                ++ctx->oob_barriers;
            } else if (tokens[i] != PERF_OOB_HEARTBEAT) {
                fprintf(stderr,
                        "uct_perftest: out-of-band protocol error: "
                        "unexpected token 0x%02x; is the peer uct_perftest "
                        "of the same version?\n",
                        (unsigned char)tokens[i]);
                return -1;
            }
        }
        if ((size_t)ret < sizeof(tokens)) {
            return arrived;
        }
    }
}

/*
 * Both sides send a barrier token and wait for the peer's, progressing
 * the worker meanwhile: the peer may need our progress to finish its
 * part. The socket is the sign of life here: it closing fails the
 * barrier, and so does -T seconds without a token or heartbeat (the
 * peer sends those while it measures).
 */
int perf_oob_barrier(perf_ctx_t *ctx)
{
    uct_worker_h worker = ctx->sides[0].worker;
    perf_time_t limit   = perf_time_from_sec(ctx->params.timeout);
    char token          = PERF_OOB_BARRIER;
    unsigned long loops = 0;
    perf_time_t last;
    int ret;

    if (perf_oob_send(ctx, &token, 1) != 0) {
        return -1;
    }

    last = perf_time_now();
    while (ctx->oob_barriers == 0) {
        ret = perf_oob_take_tokens(ctx);
        if (ret < 0) {
            return -1;
        } else if (ret > 0) {
            last = perf_time_now();
            continue;
        }

        if (worker != NULL) {
            uct_worker_progress(worker);
        }
        if ((ctx->params.timeout > 0) &&
            ((++loops & PERF_CLOCK_CHECK_MASK) == 0) &&
            ((perf_time_now() - last) > limit)) {
            perf_report_no_progress(ctx);
            return -1;
        }
    }

    --ctx->oob_barriers;
    return 0;
}

/*
 * Called from the measured loop every time it reads the clock: every
 * PERF_OOB_HEARTBEAT_MSEC, tells the peer we are alive (it may wait in a
 * barrier) and notices the peer's socket closing, the fastest sign of
 * its death on transports that report it late or never.
 */
int perf_oob_watch(perf_ctx_t *ctx, perf_time_t now)
{
    char token = PERF_OOB_HEARTBEAT;
    ssize_t ret;

    if ((now - ctx->oob_heartbeat) <
        perf_time_from_sec(PERF_OOB_HEARTBEAT_MSEC / 1000.0)) {
        return 0;
    }
    ctx->oob_heartbeat = now;

    /* A full socket means the peer is not reading; -T will tell */
    ret = send(ctx->sock, &token, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if ((ret < 0) && (errno != EAGAIN) && (errno != EWOULDBLOCK) &&
        (errno != EINTR)) {
        return perf_oob_failed(ctx, errno, "send");
    }
    return (perf_oob_take_tokens(ctx) < 0) ? -1 : 0;
}

int perf_oob_send_params(perf_ctx_t *ctx, const perf_params_t *params)
{
    perf_wire_params_t wire;
    unsigned i;

    memset(&wire, 0, sizeof(wire));
    wire.test        = params->test;
    wire.mode        = params->mode;
    wire.num_sizes   = params->num_sizes;
    wire.outstanding = params->outstanding;
    wire.fc_window   = params->fc_window;
    wire.conn        = params->conn;
    wire.iters       = params->iters;
    wire.warmup      = params->warmup;
    for (i = 0; i < params->num_sizes; ++i) {
        wire.sizes[i] = params->sizes[i];
    }
    return perf_oob_send(ctx, &wire, sizeof(wire));
}

/* The server runs what the client asks for */
int perf_oob_recv_params(perf_ctx_t *ctx, perf_params_t *params)
{
    perf_wire_params_t wire;
    unsigned i;

    if (perf_oob_recv(ctx, &wire, sizeof(wire)) != 0) {
        return -1;
    }
    if ((wire.test >= PERF_TEST_LAST) || (wire.mode >= PERF_MODE_LAST) ||
        (wire.num_sizes == 0) || (wire.num_sizes > PERF_MAX_SIZES) ||
        (wire.outstanding == 0) || (wire.outstanding > (1U << 20)) ||
        (wire.fc_window > (1U << 20)) || (wire.conn >= PERF_CONN_LAST)) {
        fprintf(stderr, "the client sent invalid parameters; is it "
                        "uct_perftest of the same version?\n");
        return -1;
    }

    params->test        = (perf_test_t)wire.test;
    params->mode        = (perf_mode_t)wire.mode;
    params->num_sizes   = wire.num_sizes;
    params->outstanding = wire.outstanding;
    params->fc_window   = wire.fc_window;
    params->conn        = (perf_conn_t)wire.conn;
    params->iters       = wire.iters;
    params->warmup      = wire.warmup;
    for (i = 0; i < wire.num_sizes; ++i) {
        params->sizes[i] = wire.sizes[i];
    }
    return 0;
}
