/*
 * tcp_stream_check: streams sequence-numbered, pattern-filled active
 * messages (bcopy and zcopy) and PUTs from a client to a server over the
 * tcp transport, and verifies at the server that everything arrived
 * complete and in order.
 *
 *   server: tcp_stream_check [-d DEV] [-p PORT] [-e]
 *   client: tcp_stream_check [-d DEV] [-p PORT] [-e] [-m am|put|both]
 *                            [-b BYTES] [-s SIZE] [-k SECONDS] SERVER
 *
 * Both sides open a tcp interface, trade addresses and the run parameters
 * over a plain TCP socket (the "control connection"), and each connects
 * an endpoint to the other's interface. Data flows from client to server;
 * the server's endpoint carries the replies (hello and PUT round acks).
 *
 * Active messages: each starts with sc_msg_hdr_t (sequence number, length)
 * followed by a pattern derived from the sequence number. The server
 * checks every message as it arrives.
 *
 * PUTs fill one half of a registered buffer on the server in chunks of
 * varying size ("a round"); then the client flushes the endpoint and sends
 * a ROUND message, on which the server verifies the whole half. Rounds
 * alternate between the two halves; the client writes a half again only
 * after the server acknowledged the round that last used it.
 *
 * At the end the client sends FIN with its totals; the server compares,
 * prints "OK <bytes> bytes <msgs> messages", answers over the control
 * connection and exits 0. Any difference is one error line and exit 1.
 *
 * With -e both sides set an interface error handler: a failed peer is
 * reported as "peer failed: <status>" with exit code 3.
 */
#define _GNU_SOURCE

#include <uct/api/uct.h>
#include <common/uct_md_find.h>
#include <ucs/async/async.h>

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SC_DEFAULT_PORT      13373
#define SC_DEFAULT_BYTES     (200ull * 1024 * 1024)
#define SC_DEFAULT_MAX_SIZE  (64 * 1024)
#define SC_PUT_HALF          (4 * 1024 * 1024)
#define SC_ZCOPY_SLOTS       16
#define SC_CONNECT_TIMEOUT   30.0  /* seconds the client retries */
#define SC_HELLO_TIMEOUT     30.0
#define SC_STALL_TIMEOUT     60.0  /* no progress at all: give up */
#define SC_FAIL_WAIT         10.0  /* for the error handler after a failure */
#define SC_OOB_CHECK_SEC     0.01
#define SC_OOB_MAGIC         0x6b636873u /* "schk" */
#define SC_MSG_MAGIC         0x4d525453u /* "STRM" */
#define SC_EXIT_ERROR        1
#define SC_EXIT_PEER_FAILED  3

/* Pattern: word k of a message (or of a PUT half) with key K */
#define SC_PATTERN_MUL       0x9e3779b97f4a7c15ull
#define SC_PATTERN_STEP      0xd1b54a32d192ed03ull

enum {
    SC_AM_DATA  = 1,  /* client -> server: sc_msg_hdr_t + pattern */
    SC_AM_ROUND = 2,  /* client -> server: sc_round_t */
    SC_AM_FIN   = 3,  /* client -> server: sc_fin_t */
    SC_AM_HELLO = 4,  /* both ways, no payload */
    SC_AM_ACK   = 5   /* server -> client: uint64 round verified */
};

typedef enum {
    SC_MODE_AM,
    SC_MODE_PUT,
    SC_MODE_BOTH
} sc_mode_t;

static const char *sc_mode_names[] = {
    [SC_MODE_AM]   = "am",
    [SC_MODE_PUT]  = "put",
    [SC_MODE_BOTH] = "both"
};

typedef enum {
    SC_OP_AM_BCOPY,
    SC_OP_AM_ZCOPY,
    SC_OP_PUT_BCOPY,
    SC_OP_PUT_ZCOPY,
    SC_OP_LAST
} sc_op_t;

static const char *sc_op_names[] = {
    [SC_OP_AM_BCOPY]  = "am_bcopy",
    [SC_OP_AM_ZCOPY]  = "am_zcopy",
    [SC_OP_PUT_BCOPY] = "put_bcopy",
    [SC_OP_PUT_ZCOPY] = "put_zcopy"
};

typedef struct {
    uint64_t seq;
    uint32_t length;      /* whole message, this header included */
    uint32_t magic;
} sc_msg_hdr_t;

typedef struct {
    uint64_t round;
    uint64_t bytes;       /* filled from the start of the half */
    uint64_t puts;
} sc_round_t;

typedef struct {
    uint64_t am_msgs;
    uint64_t am_bytes;
    uint64_t put_msgs;
    uint64_t put_bytes;
    uint64_t rounds;
} sc_fin_t;

/* Control connection: the client's parameters */
typedef struct {
    uint32_t magic;
    uint32_t mode;
    uint64_t bytes;
    uint64_t max_size;
    int64_t  seconds;     /* < 0: stop after bytes */
} sc_wire_params_t;

/* Control connection: start of an address; dev, iface addr, rkey follow */
typedef struct {
    uint32_t magic;
    uint32_t dev_addr_len;
    uint32_t iface_addr_len;
    uint32_t rkey_len;
    uint64_t buf_addr;
    uint64_t half;
} sc_addr_hdr_t;

typedef struct sc_ctx sc_ctx_t;

/* A send buffer lent to a zcopy operation until it completes */
typedef struct {
    uct_completion_t super;
    sc_ctx_t         *ctx;
    char             *buf;
    int              busy;
} sc_slot_t;

typedef struct {
    sc_ctx_t *ctx;
    uint64_t key;
    uint64_t word;        /* pattern index of the first word */
    size_t   length;
    int      with_hdr;    /* AM: sc_msg_hdr_t first */
} sc_pack_t;

struct sc_ctx {
    /* options */
    const char          *dev_name;
    const char          *server;
    uint16_t            port;
    sc_mode_t           mode;
    uint64_t            bytes;
    size_t              max_size;
    int64_t             seconds;
    int                 err_handler;

    /* transport */
    ucs_async_context_t *async;
    uct_worker_h        worker;
    uct_component_h     component;
    uct_md_h            md;
    uct_md_attr_t       md_attr;
    uct_iface_h         iface;
    uct_iface_attr_t    attr;
    uct_ep_h            ep;
    void                *buf;         /* server: PUT target; client: slots */
    size_t              buf_size;
    uct_mem_h           memh;
    uct_rkey_bundle_t   rkey;
    int                 have_rkey;
    uint64_t            remote_buf;
    size_t              half;

    /* control connection */
    int                 sock;
    double              next_oob_check;
    double              oob_closed_at;  /* > 0: peer closed it */

    /* state */
    int                 stopped;
    int                 exit_code;
    int                 finishing;      /* failures past this are expected */
    ucs_status_t        peer_status;    /* from the error handler */
    double              peer_failed_at;
    ucs_status_t        op_status;      /* first failed operation */
    const char          *op_name;
    double              op_failed_at;
    double              last_activity;
    unsigned            spins;
    int                 hello_rx;
    int                 hello_tx;

    /* client */
    int                 ops[SC_OP_LAST];
    unsigned            num_ops;
    sc_slot_t           slots[SC_ZCOPY_SLOTS];
    uint64_t            rng;
    uint64_t            posted;        /* operations the transport took */
    uint64_t            round;
    uint64_t            round_used;
    uint64_t            round_puts;
    int64_t             acked_round;

    /* both: counters of the data sent (client) or verified (server) */
    sc_fin_t            count;
    uint64_t            rx_seq;
    uint64_t            rx_round;
    int64_t             ack_to_send;   /* server: last verified round */
    int64_t             ack_sent;
    int                 fin_rx;
    char                verdict;
};

/* ------------------------------------------------------------------------
 * Helpers
 */

static double sc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static const char *sc_side(const sc_ctx_t *ctx)
{
    return (ctx->server == NULL) ? "server" : "client";
}

/* Prints one error line and stops the run with @a code. The first stop
 * wins. */
static void sc_stop(sc_ctx_t *ctx, int code, const char *fmt, ...)
{
    va_list ap;

    if (ctx->stopped) {
        return;
    }
    ctx->stopped   = 1;
    ctx->exit_code = code;
    if (fmt == NULL) {
        return;
    }
    va_start(ap, fmt);
    if (code == SC_EXIT_PEER_FAILED) {
        printf("%s: ", sc_side(ctx));
        vprintf(fmt, ap);
        printf("\n");
    } else {
        fprintf(stderr, "%s: error: ", sc_side(ctx));
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
    }
    va_end(ap);
}

static int sc_fail(sc_ctx_t *ctx, const char *what, ucs_status_t status)
{
    sc_stop(ctx, SC_EXIT_ERROR, "%s failed: %s", what,
            ucs_status_string(status));
    return -1;
}

static uint64_t sc_pattern_word(uint64_t key, uint64_t index)
{
    return ((key + 1) * SC_PATTERN_MUL) ^ (index * SC_PATTERN_STEP) ^ index;
}

/* Writes @a length pattern bytes: word @a word onward of key @a key */
static void sc_fill(void *dest, size_t length, uint64_t key, uint64_t word)
{
    char *p = dest;
    uint64_t w;

    for (; length >= sizeof(w); length -= sizeof(w), p += sizeof(w)) {
        w = sc_pattern_word(key, word++);
        memcpy(p, &w, sizeof(w));
    }
    if (length > 0) {
        w = sc_pattern_word(key, word);
        memcpy(p, &w, length);
    }
}

/* Offset of the first byte that differs from the pattern, or @a length */
static size_t sc_check(const void *src, size_t length, uint64_t key,
                       uint64_t word, uint8_t *got, uint8_t *expected)
{
    const char *p = src;
    size_t offset, i, n;
    uint64_t w;

    for (offset = 0; offset < length; offset += n) {
        n = ((length - offset) < sizeof(w)) ? (length - offset) : sizeof(w);
        w = sc_pattern_word(key, word++);
        if (memcmp(p + offset, &w, n) == 0) {
            continue;
        }
        for (i = 0; i < n; ++i) {
            if (p[offset + i] != ((char*)&w)[i]) {
                *got      = (uint8_t)p[offset + i];
                *expected = ((uint8_t*)&w)[i];
                return offset + i;
            }
        }
    }
    return length;
}

static uint64_t sc_rand(sc_ctx_t *ctx)
{
    /* xorshift64*: sizes only, not a secret */
    ctx->rng ^= ctx->rng >> 12;
    ctx->rng ^= ctx->rng << 25;
    ctx->rng ^= ctx->rng >> 27;
    return ctx->rng * 0x2545f4914f6cdd1dull;
}

/* A size in [min, max]: mostly spread over the range, sometimes an edge */
static size_t sc_pick_size(sc_ctx_t *ctx, size_t min, size_t max)
{
    uint64_t r = sc_rand(ctx);

    if (max <= min) {
        return max;
    }
    switch (r % 8) {
    case 0:
        return min;
    case 1:
        return max;
    default:
        return min + ((r >> 8) % (max - min + 1));
    }
}

/* ------------------------------------------------------------------------
 * Control connection
 */

static int sc_oob_send(sc_ctx_t *ctx, const void *data, size_t length)
{
    const char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = send(ctx->sock, p, length, MSG_NOSIGNAL);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            sc_stop(ctx, SC_EXIT_ERROR, "control connection send failed: %s",
                    strerror(errno));
            return -1;
        }
        p      += ret;
        length -= (size_t)ret;
    }
    return 0;
}

static int sc_oob_recv(sc_ctx_t *ctx, void *data, size_t length)
{
    char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = recv(ctx->sock, p, length, 0);
        if (ret == 0) {
            sc_stop(ctx, SC_EXIT_ERROR, "the peer closed the control "
                    "connection during setup");
            return -1;
        } else if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            sc_stop(ctx, SC_EXIT_ERROR, "control connection receive "
                    "failed: %s", strerror(errno));
            return -1;
        }
        p      += ret;
        length -= (size_t)ret;
    }
    return 0;
}

static int sc_oob_listen(sc_ctx_t *ctx, int family)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int one = 1, zero = 0;
    int sock;

    memset(&ss, 0, sizeof(ss));
    if (family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6*)&ss;
        a6->sin6_family = AF_INET6;
        a6->sin6_addr   = in6addr_any;
        a6->sin6_port   = htons(ctx->port);
        len             = sizeof(*a6);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in*)&ss;
        a4->sin_family      = AF_INET;
        a4->sin_addr.s_addr = htonl(INADDR_ANY);
        a4->sin_port        = htons(ctx->port);
        len                 = sizeof(*a4);
    }

    sock = socket(family, SOCK_STREAM, 0);
    if (sock < 0) {
        return -1;
    }
    if (family == AF_INET6) {
        setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((bind(sock, (struct sockaddr*)&ss, len) < 0) ||
        (listen(sock, 1) < 0)) {
        close(sock);
        return -1;
    }
    return sock;
}

static int sc_oob_accept(sc_ctx_t *ctx)
{
    int lsock;

    lsock = sc_oob_listen(ctx, AF_INET6);
    if (lsock < 0) {
        lsock = sc_oob_listen(ctx, AF_INET);
    }
    if (lsock < 0) {
        sc_stop(ctx, SC_EXIT_ERROR, "cannot listen on port %u: %s; pick "
                "another with -p", ctx->port, strerror(errno));
        return -1;
    }
    printf("server: tcp/%s, waiting for a client on port %u\n",
           ctx->dev_name, ctx->port);

    do {
        ctx->sock = accept(lsock, NULL, NULL);
    } while ((ctx->sock < 0) && (errno == EINTR));
    close(lsock);
    if (ctx->sock < 0) {
        sc_stop(ctx, SC_EXIT_ERROR, "accept on port %u failed: %s",
                ctx->port, strerror(errno));
        return -1;
    }
    return 0;
}

static int sc_oob_connect(sc_ctx_t *ctx)
{
    struct timespec delay = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    double deadline       = sc_now() + SC_CONNECT_TIMEOUT;
    struct addrinfo hints, *res, *ai;
    char port_str[8];
    int sock, ret, err = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port_str, sizeof(port_str), "%u", ctx->port);

    ret = getaddrinfo(ctx->server, port_str, &hints, &res);
    if (ret != 0) {
        sc_stop(ctx, SC_EXIT_ERROR, "cannot resolve server '%s': %s",
                ctx->server, gai_strerror(ret));
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
                ctx->sock = sock;
                return 0;
            }
            err = errno;
            close(sock);
        }
        if (((err != ECONNREFUSED) && (err != ENETUNREACH)) ||
            (sc_now() >= deadline)) {
            break;
        }
        nanosleep(&delay, NULL);
    }

    freeaddrinfo(res);
    sc_stop(ctx, SC_EXIT_ERROR, "cannot connect to %s:%u: %s; is the "
            "server running?", ctx->server, ctx->port, strerror(err));
    return -1;
}

/* Sends our address (and the PUT target, on the server) */
static int sc_oob_send_addr(sc_ctx_t *ctx)
{
    sc_addr_hdr_t hdr;
    ucs_status_t status;
    size_t length;
    char *blob, *p;
    int ret;

    memset(&hdr, 0, sizeof(hdr));
    hdr.magic          = SC_OOB_MAGIC;
    hdr.dev_addr_len   = ctx->attr.device_addr_len;
    hdr.iface_addr_len = ctx->attr.iface_addr_len;
    if (ctx->server == NULL) {
        hdr.rkey_len = (ctx->memh != UCT_MEM_HANDLE_NULL) ?
                       ctx->md_attr.rkey_packed_size : 0;
        hdr.buf_addr = (uintptr_t)ctx->buf;
        hdr.half     = ctx->half;
    }

    length = sizeof(hdr) + hdr.dev_addr_len + hdr.iface_addr_len +
             hdr.rkey_len;
    blob   = calloc(1, length);
    if (blob == NULL) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for the address");
        return -1;
    }
    memcpy(blob, &hdr, sizeof(hdr));
    p = blob + sizeof(hdr);

    status = uct_iface_get_device_address(ctx->iface, (uct_device_addr_t*)p);
    if (status != UCS_OK) {
        free(blob);
        return sc_fail(ctx, "uct_iface_get_device_address", status);
    }
    p     += hdr.dev_addr_len;
    status = uct_iface_get_address(ctx->iface, (uct_iface_addr_t*)p);
    if (status != UCS_OK) {
        free(blob);
        return sc_fail(ctx, "uct_iface_get_address", status);
    }
    p += hdr.iface_addr_len;
    if (hdr.rkey_len > 0) {
        status = uct_md_mkey_pack(ctx->md, ctx->memh, p);
        if (status != UCS_OK) {
            free(blob);
            return sc_fail(ctx, "uct_md_mkey_pack", status);
        }
    }

    ret = sc_oob_send(ctx, blob, length);
    free(blob);
    return ret;
}

/* Receives the peer's address and connects our endpoint to it */
static int sc_oob_recv_addr(sc_ctx_t *ctx)
{
    uct_ep_params_t params;
    sc_addr_hdr_t hdr;
    ucs_status_t status;
    size_t length;
    char *blob, *dev, *iface;

    if (sc_oob_recv(ctx, &hdr, sizeof(hdr)) != 0) {
        return -1;
    }
    if ((hdr.magic != SC_OOB_MAGIC) || (hdr.dev_addr_len > 4096) ||
        (hdr.iface_addr_len > 4096) || (hdr.rkey_len > 4096)) {
        sc_stop(ctx, SC_EXIT_ERROR, "the peer sent a malformed address; "
                "is it tcp_stream_check of the same version?");
        return -1;
    }
    length = hdr.dev_addr_len + hdr.iface_addr_len + hdr.rkey_len;
    blob   = calloc(1, length + 1);
    if (blob == NULL) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for the peer's address");
        return -1;
    }
    if (sc_oob_recv(ctx, blob, length) != 0) {
        free(blob);
        return -1;
    }
    dev   = blob;
    iface = blob + hdr.dev_addr_len;

    if (!uct_iface_is_reachable(ctx->iface, (uct_device_addr_t*)dev,
                                (uct_iface_addr_t*)iface)) {
        free(blob);
        sc_stop(ctx, SC_EXIT_ERROR, "the peer's tcp address is not "
                "reachable from device %s", ctx->dev_name);
        return -1;
    }

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                        UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = ctx->iface;
    params.dev_addr   = (uct_device_addr_t*)dev;
    params.iface_addr = (uct_iface_addr_t*)iface;
    status            = uct_ep_create(&params, &ctx->ep);
    if (status != UCS_OK) {
        ctx->ep = NULL;
        free(blob);
        return sc_fail(ctx, "uct_ep_create", status);
    }

    if (ctx->server != NULL) {
        ctx->remote_buf = hdr.buf_addr;
        ctx->half       = hdr.half;
        ctx->rkey.rkey  = UCT_INVALID_RKEY;
        if (hdr.rkey_len > 0) {
            status = uct_rkey_unpack(ctx->component, iface +
                                     hdr.iface_addr_len, &ctx->rkey);
            if (status != UCS_OK) {
                free(blob);
                return sc_fail(ctx, "uct_rkey_unpack", status);
            }
            ctx->have_rkey = 1;
        }
    }
    free(blob);
    return 0;
}

/*
 * Watches the control connection. Nothing travels on it during the
 * stream, so readable means the peer closed it (it exited or died) or,
 * on the client, that the server sent its verdict.
 */
static void sc_oob_check(sc_ctx_t *ctx, double now)
{
    struct pollfd pfd = {.fd = ctx->sock, .events = POLLIN};
    char verdict;
    ssize_t ret;

    if ((ctx->oob_closed_at > 0) || (poll(&pfd, 1, 0) <= 0)) {
        return;
    }
    ret = recv(ctx->sock, &verdict, 1, MSG_DONTWAIT);
    if (ret == 1) {
        ctx->verdict = verdict;
    } else if ((ret == 0) || ((errno != EAGAIN) && (errno != EINTR))) {
        ctx->oob_closed_at = now;
    }
}

/* ------------------------------------------------------------------------
 * Progress and failure handling
 */

static ucs_status_t sc_err_handler(void *arg, uct_ep_h ep,
                                   ucs_status_t status)
{
    sc_ctx_t *ctx = arg;

    if (ctx->peer_status == UCS_OK) {
        ctx->peer_status    = status;
        ctx->peer_failed_at = sc_now();
    }
    return UCS_OK;
}

/* An operation failed with @a status: a peer failure when -e is given
 * and the error handler confirms it (see sc_progress). */
static int sc_op_failed(sc_ctx_t *ctx, const char *what, ucs_status_t status)
{
    struct pollfd pfd = {.fd = ctx->sock, .events = POLLIN};

    if (!ctx->err_handler) {
        /* A server that found bad data says so before it closes */
        if ((ctx->server != NULL) && (poll(&pfd, 1, 200) > 0)) {
            sc_oob_check(ctx, sc_now());
        }
        if (ctx->verdict == 'F') {
            sc_stop(ctx, SC_EXIT_ERROR, "the server found missing or "
                    "corrupt data (see its output)");
            return -1;
        }
        return sc_fail(ctx, what, status);
    }
    if (ctx->op_status == UCS_OK) {
        ctx->op_status    = status;
        ctx->op_name      = what;
        ctx->op_failed_at = sc_now();
    }
    return 0;
}

/*
 * Progresses the worker once and decides whether the run goes on.
 * Returns 0 to go on, -1 once the run stopped (message printed).
 */
static int sc_progress(sc_ctx_t *ctx)
{
    double now;

    if (ctx->stopped) {
        return -1;
    }
    uct_worker_progress(ctx->worker);
    if (ctx->stopped) {
        return -1;
    }
    if (ctx->finishing) {
        /* Past the stream only the control connection tells */
        if ((++ctx->spins & 255) == 0) {
            now = sc_now();
            if (now >= ctx->next_oob_check) {
                sc_oob_check(ctx, now);
                ctx->next_oob_check = now + SC_OOB_CHECK_SEC;
            }
        }
        return 0;
    }

    if (ctx->peer_status != UCS_OK) {
        if (ctx->server != NULL) {
            /* The server closes after finding bad data: say that */
            sc_oob_check(ctx, sc_now());
            if (ctx->verdict == 'F') {
                sc_stop(ctx, SC_EXIT_ERROR, "the server found missing or "
                        "corrupt data (see its output)");
                return -1;
            }
        }
        sc_stop(ctx, SC_EXIT_PEER_FAILED, "peer failed: %s",
                ucs_status_string(ctx->peer_status));
        return -1;
    }
    if (((++ctx->spins & 255) != 0) && (ctx->op_status == UCS_OK)) {
        return 0;
    }

    now = sc_now();
    if (now >= ctx->next_oob_check) {
        sc_oob_check(ctx, now);
        ctx->next_oob_check = now + SC_OOB_CHECK_SEC;
    }
    if ((ctx->server != NULL) && (ctx->verdict != 0)) {
        sc_stop(ctx, SC_EXIT_ERROR, "the server found missing or "
                "corrupt data (see its output)");
        return -1;
    }
    if ((ctx->op_status != UCS_OK) &&
        (now - ctx->op_failed_at > SC_FAIL_WAIT)) {
        sc_stop(ctx, SC_EXIT_ERROR, "%s failed: %s, but the error "
                "handler was not called within %.0f s", ctx->op_name,
                ucs_status_string(ctx->op_status), SC_FAIL_WAIT);
        return -1;
    }
    if (ctx->oob_closed_at > 0) {
        if (!ctx->err_handler) {
            sc_stop(ctx, SC_EXIT_ERROR, "the peer closed the control "
                    "connection (did it exit or crash?)");
            return -1;
        } else if (now - ctx->oob_closed_at > SC_FAIL_WAIT) {
            sc_stop(ctx, SC_EXIT_ERROR, "the peer closed the control "
                    "connection, and the transport reported no failure "
                    "within %.0f s", SC_FAIL_WAIT);
            return -1;
        }
    }
    if (now - ctx->last_activity > SC_STALL_TIMEOUT) {
        sc_stop(ctx, SC_EXIT_ERROR, "no data moved for %.0f s; the "
                "connection is stuck", SC_STALL_TIMEOUT);
        return -1;
    }
    return 0;
}

static void sc_comp_cb(uct_completion_t *self)
{
}

/* Waits for @a comp after an operation returned UCS_INPROGRESS */
static int sc_wait_comp(sc_ctx_t *ctx, uct_completion_t *comp,
                        const char *what)
{
    while (comp->count > 0) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }
    if (comp->status != UCS_OK) {
        return sc_op_failed(ctx, what, comp->status);
    }
    return 0;
}

static int sc_flush(sc_ctx_t *ctx)
{
    uct_completion_t comp = {.func = sc_comp_cb, .count = 1,
                             .status = UCS_OK};
    ucs_status_t status;

    for (;;) {
        status = uct_ep_flush(ctx->ep, 0, &comp);
        if (status == UCS_OK) {
            return 0;
        } else if (status == UCS_INPROGRESS) {
            return sc_wait_comp(ctx, &comp, "uct_ep_flush");
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return sc_op_failed(ctx, "uct_ep_flush", status);
        }
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }
}

typedef struct {
    const void *data;
    size_t     length;
} sc_ctrl_t;

static size_t sc_pack_ctrl(void *dest, void *arg)
{
    const sc_ctrl_t *ctrl = arg;

    if (ctrl->length > 0) {
        memcpy(dest, ctrl->data, ctrl->length);
    }
    return ctrl->length;
}

/* A control message; with @a wait, retried until the transport takes it */
static int sc_send_ctrl(sc_ctx_t *ctx, uint8_t id, const void *data,
                        size_t length, int wait)
{
    sc_ctrl_t ctrl = {.data = data, .length = length};
    ssize_t ret;

    for (;;) {
        ret = uct_ep_am_bcopy(ctx->ep, id, sc_pack_ctrl, &ctrl, 0);
        if (ret >= 0) {
            return 1;
        } else if (ret != UCS_ERR_NO_RESOURCE) {
            sc_op_failed(ctx, "uct_ep_am_bcopy", (ucs_status_t)ret);
            return ctx->stopped ? -1 : 0;
        } else if (!wait) {
            return 0;
        }
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }
}

/* ------------------------------------------------------------------------
 * Server: receive and verify
 */

static ucs_status_t sc_am_data(void *arg, void *data, size_t length,
                               unsigned flags)
{
    sc_ctx_t *ctx = arg;
    uint8_t got, expected;
    sc_msg_hdr_t hdr;
    size_t bad;

    if (ctx->stopped) {
        return UCS_OK;
    }
    if (length < sizeof(hdr)) {
        sc_stop(ctx, SC_EXIT_ERROR, "message %llu: %zu bytes, shorter than "
                "its header", (unsigned long long)ctx->rx_seq, length);
        return UCS_OK;
    }
    memcpy(&hdr, data, sizeof(hdr));
    if (hdr.magic != SC_MSG_MAGIC) {
        sc_stop(ctx, SC_EXIT_ERROR, "message %llu: header garbled (magic "
                "0x%08x)", (unsigned long long)ctx->rx_seq, hdr.magic);
    } else if (hdr.seq != ctx->rx_seq) {
        sc_stop(ctx, SC_EXIT_ERROR, "message out of order: got sequence "
                "%llu, expected %llu", (unsigned long long)hdr.seq,
                (unsigned long long)ctx->rx_seq);
    } else if (hdr.length != length) {
        sc_stop(ctx, SC_EXIT_ERROR, "message %llu: %zu bytes arrived, %u "
                "were sent", (unsigned long long)hdr.seq, length,
                hdr.length);
    } else {
        bad = sc_check((char*)data + sizeof(hdr), length - sizeof(hdr),
                       hdr.seq, 0, &got, &expected);
        if (bad < length - sizeof(hdr)) {
            sc_stop(ctx, SC_EXIT_ERROR, "message %llu: byte %zu of %zu is "
                    "0x%02x, expected 0x%02x", (unsigned long long)hdr.seq,
                    bad + sizeof(hdr), length, got, expected);
        } else {
            ++ctx->rx_seq;
            ++ctx->count.am_msgs;
            ctx->count.am_bytes += length;
            if ((ctx->rx_seq & 255) == 0) {
                ctx->last_activity = sc_now();
            }
        }
    }
    return UCS_OK;
}

static ucs_status_t sc_am_round(void *arg, void *data, size_t length,
                                unsigned flags)
{
    sc_ctx_t *ctx = arg;
    uint8_t got, expected;
    sc_round_t round;
    size_t bad;
    char *half;

    if (ctx->stopped) {
        return UCS_OK;
    }
    if (length != sizeof(round)) {
        sc_stop(ctx, SC_EXIT_ERROR, "ROUND message of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&round, data, sizeof(round));
    if ((round.round != ctx->rx_round) || (round.bytes > ctx->half)) {
        sc_stop(ctx, SC_EXIT_ERROR, "PUT round %llu (%llu bytes) announced, "
                "expected round %llu", (unsigned long long)round.round,
                (unsigned long long)round.bytes,
                (unsigned long long)ctx->rx_round);
        return UCS_OK;
    }

    half = (char*)ctx->buf + (round.round % 2) * ctx->half;
    bad  = sc_check(half, round.bytes, round.round, 0, &got, &expected);
    if (bad < round.bytes) {
        sc_stop(ctx, SC_EXIT_ERROR, "PUT round %llu: byte %zu of %llu is "
                "0x%02x, expected 0x%02x (missing or misplaced PUT)",
                (unsigned long long)round.round, bad,
                (unsigned long long)round.bytes, got, expected);
        return UCS_OK;
    }
    /* A later round must not pass on stale data */
    memset(half, 0, round.bytes);

    ++ctx->rx_round;
    ctx->count.put_msgs  += round.puts;
    ctx->count.put_bytes += round.bytes;
    ctx->count.rounds     = ctx->rx_round;
    ctx->ack_to_send      = (int64_t)round.round;
    ctx->last_activity    = sc_now();
    return UCS_OK;
}

static ucs_status_t sc_am_fin(void *arg, void *data, size_t length,
                              unsigned flags)
{
    sc_ctx_t *ctx = arg;
    sc_fin_t fin;

    if (ctx->stopped) {
        return UCS_OK;
    }
    if (length != sizeof(fin)) {
        sc_stop(ctx, SC_EXIT_ERROR, "FIN message of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&fin, data, sizeof(fin));
    if ((fin.am_msgs != ctx->count.am_msgs) ||
        (fin.am_bytes != ctx->count.am_bytes) ||
        (fin.rounds != ctx->count.rounds) ||
        (fin.put_msgs != ctx->count.put_msgs) ||
        (fin.put_bytes != ctx->count.put_bytes)) {
        sc_stop(ctx, SC_EXIT_ERROR, "the client sent %llu AMs (%llu bytes) "
                "and %llu PUTs (%llu bytes) in %llu rounds, %llu AMs "
                "(%llu bytes) and %llu PUTs (%llu bytes) in %llu rounds "
                "arrived", (unsigned long long)fin.am_msgs,
                (unsigned long long)fin.am_bytes,
                (unsigned long long)fin.put_msgs,
                (unsigned long long)fin.put_bytes,
                (unsigned long long)fin.rounds,
                (unsigned long long)ctx->count.am_msgs,
                (unsigned long long)ctx->count.am_bytes,
                (unsigned long long)ctx->count.put_msgs,
                (unsigned long long)ctx->count.put_bytes,
                (unsigned long long)ctx->count.rounds);
        return UCS_OK;
    }
    ctx->fin_rx    = 1;
    ctx->finishing = 1;
    return UCS_OK;
}

static ucs_status_t sc_am_hello(void *arg, void *data, size_t length,
                                unsigned flags)
{
    sc_ctx_t *ctx = arg;

    ctx->hello_rx = 1;
    return UCS_OK;
}

static ucs_status_t sc_am_ack(void *arg, void *data, size_t length,
                              unsigned flags)
{
    sc_ctx_t *ctx = arg;
    uint64_t round;

    if (length != sizeof(round)) {
        sc_stop(ctx, SC_EXIT_ERROR, "ACK message of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&round, data, sizeof(round));
    if ((int64_t)round > ctx->acked_round) {
        ctx->acked_round   = (int64_t)round;
        ctx->last_activity = sc_now();
    }
    return UCS_OK;
}

static int sc_server_run(sc_ctx_t *ctx)
{
    uint64_t total_bytes, total_msgs;
    double start = 0, elapsed;
    uint64_t round;
    int ret;

    while (!ctx->fin_rx) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
        if (ctx->hello_rx && !ctx->hello_tx) {
            ret = sc_send_ctrl(ctx, SC_AM_HELLO, NULL, 0, 0);
            if (ret < 0) {
                return -1;
            }
            ctx->hello_tx = ret;
            start         = sc_now();
        }
        if (ctx->ack_to_send > ctx->ack_sent) {
            round = (uint64_t)ctx->ack_to_send;
            ret   = sc_send_ctrl(ctx, SC_AM_ACK, &round, sizeof(round), 0);
            if (ret < 0) {
                return -1;
            }
            if (ret > 0) {
                ctx->ack_sent = (int64_t)round;
            }
        }
    }

    elapsed     = sc_now() - start;
    total_bytes = ctx->count.am_bytes + ctx->count.put_bytes;
    total_msgs  = ctx->count.am_msgs + ctx->count.put_msgs;
    printf("server: %llu AMs (%llu bytes), %llu PUTs (%llu bytes) in %llu "
           "rounds verified, %.1f MB/s\n",
           (unsigned long long)ctx->count.am_msgs,
           (unsigned long long)ctx->count.am_bytes,
           (unsigned long long)ctx->count.put_msgs,
           (unsigned long long)ctx->count.put_bytes,
           (unsigned long long)ctx->count.rounds,
           (elapsed > 0) ? (total_bytes / elapsed / 1e6) : 0.0);
    printf("OK %llu bytes %llu messages\n", (unsigned long long)total_bytes,
           (unsigned long long)total_msgs);
    return sc_oob_send(ctx, "K", 1);
}

/* ------------------------------------------------------------------------
 * Client: send
 */

static size_t sc_pack_data(void *dest, void *arg)
{
    sc_pack_t *pack = arg;
    sc_msg_hdr_t hdr;
    char *p = dest;
    size_t length = pack->length;

    if (pack->with_hdr) {
        hdr.seq    = pack->key;
        hdr.length = (uint32_t)pack->length;
        hdr.magic  = SC_MSG_MAGIC;
        memcpy(p, &hdr, sizeof(hdr));
        p      += sizeof(hdr);
        length -= sizeof(hdr);
    }
    sc_fill(p, length, pack->key, pack->word);
    return pack->length;
}

static void sc_slot_done(uct_completion_t *self)
{
    sc_slot_t *slot = (sc_slot_t*)self;

    slot->busy = 0;
    if ((self->status != UCS_OK) && (slot->ctx->op_status == UCS_OK)) {
        sc_op_failed(slot->ctx, "zcopy completion", self->status);
    }
}

static sc_slot_t *sc_slot_get(sc_ctx_t *ctx)
{
    unsigned i;

    for (;;) {
        for (i = 0; i < SC_ZCOPY_SLOTS; ++i) {
            if (!ctx->slots[i].busy) {
                return &ctx->slots[i];
            }
        }
        if (sc_progress(ctx) != 0) {
            return NULL;
        }
    }
}

/*
 * Posts @a op until the transport takes it. Returns 1 when sent, 0 when
 * it failed with -e (the caller keeps progressing for the handler), -1
 * when the run stopped.
 */
static int sc_post(sc_ctx_t *ctx, sc_op_t op, sc_pack_t *pack,
                   uint64_t remote_addr)
{
    uct_iov_t iov;
    sc_slot_t *slot = NULL;
    ucs_status_t status;
    ssize_t ret;

    if ((op == SC_OP_AM_ZCOPY) || (op == SC_OP_PUT_ZCOPY)) {
        slot = sc_slot_get(ctx);
        if (slot == NULL) {
            return -1;
        }
        sc_pack_data(slot->buf, pack);
        iov.buffer = slot->buf;
        iov.length = pack->length;
        iov.memh   = ctx->memh;
        iov.stride = 0;
        iov.count  = 1;
    }

    for (;;) {
        if (slot != NULL) {
            slot->super.count  = 1;
            slot->super.status = UCS_OK;
        }
        switch (op) {
        case SC_OP_AM_BCOPY:
            ret    = uct_ep_am_bcopy(ctx->ep, SC_AM_DATA, sc_pack_data, pack,
                                     0);
            status = (ret < 0) ? (ucs_status_t)ret : UCS_OK;
            break;
        case SC_OP_AM_ZCOPY:
            status = uct_ep_am_zcopy(ctx->ep, SC_AM_DATA, NULL, 0, &iov, 1,
                                     0, &slot->super);
            break;
        case SC_OP_PUT_BCOPY:
            ret    = uct_ep_put_bcopy(ctx->ep, sc_pack_data, pack,
                                      remote_addr, ctx->rkey.rkey);
            status = (ret < 0) ? (ucs_status_t)ret : UCS_OK;
            break;
        default:
            status = uct_ep_put_zcopy(ctx->ep, &iov, 1, remote_addr,
                                      ctx->rkey.rkey, &slot->super);
            break;
        }

        if (status == UCS_INPROGRESS) {
            slot->busy = 1;
            return 1;
        } else if (status == UCS_OK) {
            return 1;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            sc_op_failed(ctx, sc_op_names[op], status);
            return ctx->stopped ? -1 : 0;
        }
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }
}

static int sc_send_am(sc_ctx_t *ctx, sc_op_t op)
{
    size_t max = (op == SC_OP_AM_BCOPY) ? ctx->attr.cap.am.max_bcopy :
                                          ctx->attr.cap.am.max_zcopy;
    sc_pack_t pack;
    int ret;

    if (max > ctx->max_size) {
        max = ctx->max_size;
    }
    pack.ctx      = ctx;
    pack.key      = ctx->count.am_msgs;
    pack.word     = 0;
    pack.length   = sc_pick_size(ctx, sizeof(sc_msg_hdr_t), max);
    pack.with_hdr = 1;

    ret = sc_post(ctx, op, &pack, 0);
    if (ret > 0) {
        ++ctx->count.am_msgs;
        ctx->count.am_bytes += pack.length;
    }
    return ret;
}

/* Ends the current PUT round: flush, then tell the server what to check */
static int sc_end_round(sc_ctx_t *ctx)
{
    sc_round_t round;
    int ret;

    if (ctx->round_used == 0) {
        return 1;
    }
    if (sc_flush(ctx) != 0) {
        return -1;
    }
    if (ctx->op_status != UCS_OK) {
        return 0;
    }

    round.round = ctx->round;
    round.bytes = ctx->round_used;
    round.puts  = ctx->round_puts;
    ret         = sc_send_ctrl(ctx, SC_AM_ROUND, &round, sizeof(round), 1);
    if (ret <= 0) {
        return ret;
    }
    ctx->count.put_msgs  += ctx->round_puts;
    ctx->count.put_bytes += ctx->round_used;
    ctx->count.rounds     = ++ctx->round;
    ctx->round_used       = 0;
    ctx->round_puts       = 0;
    return 1;
}

static int sc_send_put(sc_ctx_t *ctx, sc_op_t op)
{
    size_t max = (op == SC_OP_PUT_BCOPY) ? ctx->attr.cap.put.max_bcopy :
                                           ctx->attr.cap.put.max_zcopy;
    sc_pack_t pack;
    int ret;

    if (ctx->round_used == ctx->half) {
        ret = sc_end_round(ctx);
        if (ret <= 0) {
            return ret;
        }
    }
    /* The half this round writes must have been verified last time */
    while (ctx->acked_round + 2 < (int64_t)ctx->round) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
        if (ctx->op_status != UCS_OK) {
            return 0;
        }
    }

    if (max > ctx->max_size) {
        max = ctx->max_size;
    }
    if (max > ctx->half - ctx->round_used) {
        max = ctx->half - ctx->round_used;
    }
    pack.ctx      = ctx;
    pack.key      = ctx->round;
    pack.word     = ctx->round_used / sizeof(uint64_t);
    pack.length   = sc_pick_size(ctx, sizeof(uint64_t), max) &
                    ~(sizeof(uint64_t) - 1);
    pack.with_hdr = 0;

    ret = sc_post(ctx, op, &pack, ctx->remote_buf +
                  (ctx->round % 2) * ctx->half + ctx->round_used);
    if (ret > 0) {
        ctx->round_used += pack.length;
        ++ctx->round_puts;
    }
    return ret;
}

static int sc_client_setup_ops(sc_ctx_t *ctx)
{
    const uint64_t flags = ctx->attr.cap.flags;
    static const uint64_t op_flags[] = {
        [SC_OP_AM_BCOPY]  = UCT_IFACE_FLAG_AM_BCOPY,
        [SC_OP_AM_ZCOPY]  = UCT_IFACE_FLAG_AM_ZCOPY,
        [SC_OP_PUT_BCOPY] = UCT_IFACE_FLAG_PUT_BCOPY,
        [SC_OP_PUT_ZCOPY] = UCT_IFACE_FLAG_PUT_ZCOPY
    };
    int op, is_put;

    ctx->num_ops = 0;
    for (op = 0; op < SC_OP_LAST; ++op) {
        is_put = (op == SC_OP_PUT_BCOPY) || (op == SC_OP_PUT_ZCOPY);
        if ((is_put && (ctx->mode == SC_MODE_AM)) ||
            (!is_put && (ctx->mode == SC_MODE_PUT))) {
            continue;
        }
        if (!(flags & op_flags[op])) {
            printf("client: tcp/%s has no %s; not sending it\n",
                   ctx->dev_name, sc_op_names[op]);
            continue;
        }
        ctx->ops[ctx->num_ops++] = op;
    }
    if (ctx->num_ops == 0) {
        sc_stop(ctx, SC_EXIT_ERROR, "tcp/%s supports none of the "
                "operations of mode %s", ctx->dev_name,
                sc_mode_names[ctx->mode]);
        return -1;
    }
    return 0;
}

static int sc_client_wait_hello(sc_ctx_t *ctx)
{
    double deadline = sc_now() + SC_HELLO_TIMEOUT;
    int ret;

    ret = sc_send_ctrl(ctx, SC_AM_HELLO, NULL, 0, 1);
    if (ret <= 0) {
        return (ret < 0) ? -1 : 0;
    }
    while (!ctx->hello_rx) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
        if (sc_now() > deadline) {
            sc_stop(ctx, SC_EXIT_ERROR, "the server did not answer over "
                    "tcp within %.0f s (firewall? wrong device?)",
                    SC_HELLO_TIMEOUT);
            return -1;
        }
    }
    return 0;
}

/* Keeps progressing after a failed operation until sc_progress decides */
static int sc_client_linger(sc_ctx_t *ctx)
{
    while (sc_progress(ctx) == 0) {
    }
    return -1;
}

static int sc_client_run(sc_ctx_t *ctx)
{
    double start, end, elapsed, next_report;
    uint64_t sent, total_msgs;
    unsigned next_op = 0;
    unsigned i;
    int timed_out;
    sc_fin_t fin;
    sc_op_t op;
    int ret;

    if (sc_client_setup_ops(ctx) != 0) {
        return -1;
    }
    if ((sc_client_wait_hello(ctx) != 0) || (ctx->op_status != UCS_OK)) {
        return sc_client_linger(ctx);
    }

    if (ctx->seconds < 0) {
        printf("client: streaming %llu bytes (mode %s) to %s\n",
               (unsigned long long)ctx->bytes, sc_mode_names[ctx->mode],
               ctx->server);
    } else if (ctx->seconds == 0) {
        printf("client: streaming (mode %s) to %s until stopped\n",
               sc_mode_names[ctx->mode], ctx->server);
    } else {
        printf("client: streaming (mode %s) to %s for %lld s\n",
               sc_mode_names[ctx->mode], ctx->server,
               (long long)ctx->seconds);
    }

    start       = sc_now();
    end         = start + ((ctx->seconds > 0) ? ctx->seconds : 0);
    next_report = start + 1;
    for (;;) {
        sent = ctx->count.am_bytes + ctx->count.put_bytes + ctx->round_used;
        if ((ctx->posted & 63) == 0) {
            ctx->last_activity = sc_now();
            timed_out          = (ctx->seconds > 0) &&
                                 (ctx->last_activity >= end);
        } else {
            timed_out = 0;
        }
        if (((ctx->seconds < 0) && (sent >= ctx->bytes)) || timed_out) {
            break;
        }

        op = (sc_op_t)ctx->ops[next_op];
        ret = ((op == SC_OP_AM_BCOPY) || (op == SC_OP_AM_ZCOPY)) ?
              sc_send_am(ctx, op) : sc_send_put(ctx, op);
        if (ret < 0) {
            return -1;
        } else if (ret == 0) {
            return sc_client_linger(ctx);
        }
        ++ctx->posted;
        next_op = (next_op + 1) % ctx->num_ops;

        if ((ctx->seconds >= 0) && ((ctx->posted & 63) == 0) &&
            (ctx->last_activity >= next_report)) {
            printf("client: %llu bytes sent\n", (unsigned long long)sent);
            next_report += 1;
        }
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }

    /* Last partial round, outstanding zcopy, then the totals */
    ret = sc_end_round(ctx);
    if (ret <= 0) {
        return (ret < 0) ? -1 : sc_client_linger(ctx);
    }
    for (i = 0; i < SC_ZCOPY_SLOTS; ++i) {
        while (ctx->slots[i].busy) {
            if (sc_progress(ctx) != 0) {
                return -1;
            }
        }
    }
    if ((sc_flush(ctx) != 0) || (ctx->op_status != UCS_OK)) {
        return ctx->stopped ? -1 : sc_client_linger(ctx);
    }
    fin = ctx->count;
    ret = sc_send_ctrl(ctx, SC_AM_FIN, &fin, sizeof(fin), 1);
    if (ret <= 0) {
        return (ret < 0) ? -1 : sc_client_linger(ctx);
    }
    if ((sc_flush(ctx) != 0) || (ctx->op_status != UCS_OK)) {
        return ctx->stopped ? -1 : sc_client_linger(ctx);
    }
    elapsed = sc_now() - start;

    /* The verdict comes over the control connection */
    ctx->finishing = 1;
    while ((ctx->verdict == 0) && (ctx->oob_closed_at == 0)) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }

    sent       = ctx->count.am_bytes + ctx->count.put_bytes;
    total_msgs = ctx->count.am_msgs + ctx->count.put_msgs;
    printf("client: sent %llu bytes in %llu messages, %.1f MB/s\n",
           (unsigned long long)sent, (unsigned long long)total_msgs,
           (elapsed > 0) ? (sent / elapsed / 1e6) : 0.0);
    if (ctx->verdict != 'K') {
        sc_stop(ctx, SC_EXIT_ERROR, "the server %s", (ctx->verdict == 0) ?
                "closed the control connection without a verdict" :
                "found missing or corrupt data (see its output)");
        return -1;
    }
    printf("client: the server verified everything\n");
    return 0;
}

/* ------------------------------------------------------------------------
 * Setup
 */

static int sc_md_open(sc_ctx_t *ctx)
{
    ucs_status_t status;

    status = test_uct_md_find("tcp", ctx->dev_name, &ctx->md,
                              &ctx->component);
    if (status == UCS_ERR_NO_DEVICE) {
        sc_stop(ctx, SC_EXIT_ERROR, "transport tcp on device %s not found "
                "(uct_info -d lists the devices)", ctx->dev_name);
        return -1;
    } else if (status != UCS_OK) {
        return sc_fail(ctx, "uct_query_components", status);
    }

    status = uct_md_query(ctx->md, &ctx->md_attr);
    if (status != UCS_OK) {
        return sc_fail(ctx, "uct_md_query", status);
    }
    return 0;
}

static int sc_iface_open(sc_ctx_t *ctx)
{
    static const struct {
        uint8_t            id;
        uct_am_callback_t  cb;
    } handlers[] = {
        {SC_AM_DATA,  sc_am_data},
        {SC_AM_ROUND, sc_am_round},
        {SC_AM_FIN,   sc_am_fin},
        {SC_AM_HELLO, sc_am_hello},
        {SC_AM_ACK,   sc_am_ack}
    };
    uct_iface_config_t *config;
    uct_iface_params_t params;
    ucs_status_t status;
    unsigned i;

    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                      &ctx->async);
    if (status != UCS_OK) {
        ctx->async = NULL;
        return sc_fail(ctx, "ucs_async_context_create", status);
    }
    status = uct_worker_create(ctx->async, UCS_THREAD_MODE_SINGLE,
                               &ctx->worker);
    if (status != UCS_OK) {
        ctx->worker = NULL;
        return sc_fail(ctx, "uct_worker_create", status);
    }

    status = uct_md_iface_config_read(ctx->md, "tcp", NULL, NULL, &config);
    if (status != UCS_OK) {
        return sc_fail(ctx, "uct_md_iface_config_read", status);
    }
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "tcp";
    params.mode.device.dev_name = ctx->dev_name;
    if (ctx->err_handler) {
        params.field_mask       |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                   UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                   UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
        params.err_handler       = sc_err_handler;
        params.err_handler_arg   = ctx;
        params.err_handler_flags = UCT_CB_FLAG_SYNC;
    }
    status = uct_iface_open(ctx->md, ctx->worker, &params, config,
                            &ctx->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        ctx->iface = NULL;
        return sc_fail(ctx, "uct_iface_open", status);
    }

    status = uct_iface_query(ctx->iface, &ctx->attr);
    if (status != UCS_OK) {
        return sc_fail(ctx, "uct_iface_query", status);
    }
    if (!(ctx->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) ||
        !(ctx->attr.cap.flags & UCT_IFACE_FLAG_AM_BCOPY)) {
        sc_stop(ctx, SC_EXIT_ERROR, "tcp/%s cannot connect to an interface "
                "or lacks am_bcopy", ctx->dev_name);
        return -1;
    }
    if (ctx->attr.cap.am.max_bcopy < sizeof(sc_fin_t)) {
        sc_stop(ctx, SC_EXIT_ERROR, "tcp/%s am_bcopy carries %zu bytes, "
                "fewer than %zu", ctx->dev_name, ctx->attr.cap.am.max_bcopy,
                sizeof(sc_fin_t));
        return -1;
    }
    if (ctx->err_handler &&
        !(ctx->attr.cap.flags & UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE)) {
        printf("%s: tcp/%s does not announce ERRHANDLE_PEER_FAILURE\n",
               sc_side(ctx), ctx->dev_name);
    }

    for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); ++i) {
        status = uct_iface_set_am_handler(ctx->iface, handlers[i].id,
                                          handlers[i].cb, ctx,
                                          UCT_CB_FLAG_SYNC);
        if (status != UCS_OK) {
            return sc_fail(ctx, "uct_iface_set_am_handler", status);
        }
    }
    uct_iface_progress_enable(ctx->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

/* Server: the PUT target; client: the zcopy send slots */
static int sc_buffers_alloc(sc_ctx_t *ctx)
{
    ucs_status_t status;
    size_t slot_size = 0;
    unsigned i;

    if (ctx->server == NULL) {
        ctx->half     = SC_PUT_HALF;
        ctx->buf_size = 2 * ctx->half;
    } else {
        slot_size     = (ctx->max_size + 63) & ~(size_t)63;
        ctx->buf_size = SC_ZCOPY_SLOTS * slot_size;
    }
    if (posix_memalign(&ctx->buf, 64, ctx->buf_size) != 0) {
        ctx->buf = NULL;
        sc_stop(ctx, SC_EXIT_ERROR, "cannot allocate %zu bytes",
                ctx->buf_size);
        return -1;
    }
    memset(ctx->buf, 0, ctx->buf_size);

    if (ctx->md_attr.cap.flags & UCT_MD_FLAG_REG) {
        status = uct_md_mem_reg(ctx->md, ctx->buf, ctx->buf_size,
                                UCT_MD_MEM_ACCESS_ALL, &ctx->memh);
        if (status != UCS_OK) {
            ctx->memh = UCT_MEM_HANDLE_NULL;
            return sc_fail(ctx, "uct_md_mem_reg", status);
        }
    }

    if (ctx->server != NULL) {
        for (i = 0; i < SC_ZCOPY_SLOTS; ++i) {
            ctx->slots[i].super.func = sc_slot_done;
            ctx->slots[i].ctx        = ctx;
            ctx->slots[i].buf        = (char*)ctx->buf + i * slot_size;
        }
    }
    return 0;
}

static int sc_exchange(sc_ctx_t *ctx)
{
    sc_wire_params_t wire;

    if (ctx->server != NULL) {
        memset(&wire, 0, sizeof(wire));
        wire.magic    = SC_OOB_MAGIC;
        wire.mode     = ctx->mode;
        wire.bytes    = ctx->bytes;
        wire.max_size = ctx->max_size;
        wire.seconds  = ctx->seconds;
        if ((sc_oob_send(ctx, &wire, sizeof(wire)) != 0) ||
            (sc_oob_send_addr(ctx) != 0) || (sc_oob_recv_addr(ctx) != 0)) {
            return -1;
        }
        return 0;
    }

    if (sc_oob_recv(ctx, &wire, sizeof(wire)) != 0) {
        return -1;
    }
    if ((wire.magic != SC_OOB_MAGIC) || (wire.mode > SC_MODE_BOTH)) {
        sc_stop(ctx, SC_EXIT_ERROR, "the client sent invalid parameters; "
                "is it tcp_stream_check of the same version?");
        return -1;
    }
    ctx->mode     = (sc_mode_t)wire.mode;
    ctx->bytes    = wire.bytes;
    ctx->max_size = wire.max_size;
    ctx->seconds  = wire.seconds;
    if ((sc_oob_send_addr(ctx) != 0) || (sc_oob_recv_addr(ctx) != 0)) {
        return -1;
    }
    if (ctx->seconds < 0) {
        printf("server: client connected, mode %s, %llu bytes\n",
               sc_mode_names[ctx->mode], (unsigned long long)ctx->bytes);
    } else {
        printf("server: client connected, mode %s, timed run\n",
               sc_mode_names[ctx->mode]);
    }
    return 0;
}

static void sc_cleanup(sc_ctx_t *ctx)
{
    if (ctx->ep != NULL) {
        uct_ep_destroy(ctx->ep);
    }
    if (ctx->have_rkey) {
        uct_rkey_release(ctx->component, &ctx->rkey);
    }
    if (ctx->memh != UCT_MEM_HANDLE_NULL) {
        uct_md_mem_dereg(ctx->md, ctx->memh);
    }
    if (ctx->iface != NULL) {
        uct_iface_close(ctx->iface);
    }
    if (ctx->worker != NULL) {
        uct_worker_destroy(ctx->worker);
    }
    if (ctx->async != NULL) {
        ucs_async_context_destroy(ctx->async);
    }
    if (ctx->md != NULL) {
        uct_md_close(ctx->md);
    }
    if (ctx->sock >= 0) {
        close(ctx->sock);
    }
    free(ctx->buf);
}

/* ------------------------------------------------------------------------
 * Options
 */

static int sc_parse_size(const char *str, uint64_t *value_p)
{
    char *end;
    unsigned long long value;

    errno = 0;
    value = strtoull(str, &end, 10);
    if ((errno != 0) || (end == str)) {
        return -1;
    }
    switch (*end) {
    case 'k': case 'K': value <<= 10; ++end; break;
    case 'm': case 'M': value <<= 20; ++end; break;
    case 'g': case 'G': value <<= 30; ++end; break;
    default: break;
    }
    if (*end != '\0') {
        return -1;
    }
    *value_p = value;
    return 0;
}

static void sc_usage(void)
{
    printf("usage: tcp_stream_check [options] [SERVER]\n"
           "  without SERVER: run the server (receive and verify)\n"
           "  -d DEV      tcp device (interface name; default lo)\n"
           "  -p PORT     control connection port (default %d)\n"
           "  -e          set an error handler; a failed peer exits 3\n"
           "client only:\n"
           "  -m MODE     am, put or both (default both)\n"
           "  -b BYTES    bytes to stream, suffix k/m/g (default 200m)\n"
           "  -s SIZE     largest message (default 64k)\n"
           "  -k SECONDS  stream for SECONDS instead of BYTES (0: until "
           "killed)\n", SC_DEFAULT_PORT);
}

static int sc_parse(sc_ctx_t *ctx, int argc, char **argv)
{
    uint64_t value;
    char *end;
    long l;
    int c;

    while ((c = getopt(argc, argv, "d:p:m:b:s:k:eh")) != -1) {
        switch (c) {
        case 'd':
            ctx->dev_name = optarg;
            break;
        case 'p':
            l = strtol(optarg, &end, 10);
            if ((*end != '\0') || (l <= 0) || (l > 65535)) {
                fprintf(stderr, "tcp_stream_check: -p wants a port number, "
                        "not '%s'\n", optarg);
                return -1;
            }
            ctx->port = (uint16_t)l;
            break;
        case 'm':
            if (!strcmp(optarg, "am")) {
                ctx->mode = SC_MODE_AM;
            } else if (!strcmp(optarg, "put")) {
                ctx->mode = SC_MODE_PUT;
            } else if (!strcmp(optarg, "both")) {
                ctx->mode = SC_MODE_BOTH;
            } else {
                fprintf(stderr, "tcp_stream_check: -m wants am, put or "
                        "both, not '%s'\n", optarg);
                return -1;
            }
            break;
        case 'b':
            if ((sc_parse_size(optarg, &ctx->bytes) != 0) ||
                (ctx->bytes == 0)) {
                fprintf(stderr, "tcp_stream_check: -b wants a byte count "
                        "such as 200m, not '%s'\n", optarg);
                return -1;
            }
            break;
        case 's':
            if ((sc_parse_size(optarg, &value) != 0) ||
                (value < 2 * sizeof(sc_msg_hdr_t)) ||
                (value > SC_PUT_HALF)) {
                fprintf(stderr, "tcp_stream_check: -s wants a size from "
                        "%zu to %d, not '%s'\n", 2 * sizeof(sc_msg_hdr_t),
                        SC_PUT_HALF, optarg);
                return -1;
            }
            ctx->max_size = value;
            break;
        case 'k':
            l = strtol(optarg, &end, 10);
            if ((*end != '\0') || (l < 0)) {
                fprintf(stderr, "tcp_stream_check: -k wants seconds (0: "
                        "until killed), not '%s'\n", optarg);
                return -1;
            }
            ctx->seconds = l;
            break;
        case 'e':
            ctx->err_handler = 1;
            break;
        case 'h':
            sc_usage();
            exit(0);
        default:
            sc_usage();
            return -1;
        }
    }
    if (optind < argc) {
        ctx->server = argv[optind++];
    }
    if (optind < argc) {
        fprintf(stderr, "tcp_stream_check: unexpected argument '%s'\n",
                argv[optind]);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    sc_ctx_t ctx;
    int ret;

    memset(&ctx, 0, sizeof(ctx));
    ctx.dev_name    = "lo";
    ctx.port        = SC_DEFAULT_PORT;
    ctx.mode        = SC_MODE_BOTH;
    ctx.bytes       = SC_DEFAULT_BYTES;
    ctx.max_size    = SC_DEFAULT_MAX_SIZE;
    ctx.seconds     = -1;
    ctx.sock        = -1;
    ctx.exit_code   = SC_EXIT_ERROR;
    ctx.memh        = UCT_MEM_HANDLE_NULL;
    ctx.rkey.rkey   = UCT_INVALID_RKEY;
    ctx.acked_round = -1;
    ctx.ack_to_send = -1;
    ctx.ack_sent    = -1;
    ctx.rng         = 0x853c49e6748fea9bull;

    /* Scripts read the output while the program runs */
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (sc_parse(&ctx, argc, argv) != 0) {
        return SC_EXIT_ERROR;
    }

    if ((sc_md_open(&ctx) != 0) || (sc_iface_open(&ctx) != 0) ||
        (sc_buffers_alloc(&ctx) != 0)) {
        goto out;
    }
    ret = (ctx.server != NULL) ? sc_oob_connect(&ctx) : sc_oob_accept(&ctx);
    if ((ret != 0) || (sc_exchange(&ctx) != 0)) {
        goto out;
    }
    ctx.last_activity = sc_now();

    ret = (ctx.server != NULL) ? sc_client_run(&ctx) : sc_server_run(&ctx);
    if ((ret == 0) && !ctx.stopped) {
        ctx.exit_code = 0;
    }

out:
    if ((ctx.server == NULL) && (ctx.sock >= 0) &&
        (ctx.exit_code == SC_EXIT_ERROR)) {
        /* Tell the client, which would otherwise wait for the verdict */
        send(ctx.sock, "F", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    sc_cleanup(&ctx);
    return ctx.exit_code;
}
