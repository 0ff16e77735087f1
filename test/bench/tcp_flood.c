/*
 * Resident memory of a tcp server interface under a hostile peer's
 * floods. A server process opens a tcp interface on lo, registers a 1 MiB
 * buffer and forks an attacker that connects with a raw socket, sends the
 * handshake, then floods requests that make the server reply, and never
 * reads a byte of the replies:
 *   ack  ACK_REQ headers, up to 64 MiB (each asks for an 8-byte ACK)
 *   get  GET requests of 4000 bytes each at the registered buffer (with
 *        its key), up to 480 KiB of requests
 *   partial  100 connections, each leaving a 60,000-byte active message
 *        unfinished after 50,000 bytes (each holds a receive buffer)
 * The attacker writes without blocking and stops when all went out, or
 * when the socket took nothing for 2 s (the server stopped reading), holds
 * the connection(s) for -t seconds, then closes. Meanwhile the server
 * progresses its worker and samples its RSS (/proc/self/statm):
 *   base   interface open and warmed up (one connection that asked for an
 *          ACK and a GET and read the replies), before the flood
 *   peak   highest sample from the start of the flood to the end
 *   after  attacker closed, then 3 s of idle progress (idle pool chunks
 *          are given back once a second)
 * It also prints what the attacker saw (bytes its socket took, when it
 * stopped taking them, when the server closed or reset the connection),
 * the most bytes left unread in the server's socket (/proc/net/tcp: the
 * server applying back-pressure) and the heap in use after minus at base
 * (ucs_sys_heap_in_use(): memory the server still holds, as opposed to
 * freed memory glibc did not give back to the system).
 * Every scenario runs in a fresh server process, so one flood's leftovers
 * are not the next one's baseline.
 *
 * The attacker speaks protocol version 4 (-p 4: the 64-byte handshake),
 * 3 (-p 3: the 56-byte handshake with the address secret, keyed GET) or
 * 2 (-p 2: the older build; no secret, GET without a key). The program
 * uses the UCT API only, so it builds against any version of the
 * library.
 *
 * Usage: tcp_flood [-p 2|3|4] [-s ack|get|partial|all] [-t SECONDS]
 */
#define _GNU_SOURCE

#include <uct/api/uct.h>
#include <common/uct_md_find.h>
#include "../common/heap_in_use.h"
#include <ucs/async/async.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLOOD_DEV            "lo"
#define FLOOD_MAGIC          0x706374756e65706full
#define FLOOD_HS_MAX_LEN     64 /* v4; v3: 56, v2: 48 (no secret) */
#define FLOOD_HS_REPLY_LEN   16
#define FLOOD_HDR_LEN        8
#define FLOOD_CONN_TO_IFACE  1
#define FLOOD_OP_GET_REQ     0x41
#define FLOOD_OP_ACK_REQ     0x43
#define FLOOD_ACK_LEN        8 /* an ACK: header only */
#define FLOOD_ACK_BYTES      (64ul << 20)
#define FLOOD_GET_BYTES      (480ul << 10)
#define FLOOD_GET_SIZE       4000 /* bytes each GET asks for */
#define FLOOD_GET_SLOTS      256  /* GETs cycle over the buffer */
#define FLOOD_BUF_SIZE       (1ul << 20)
#define FLOOD_WRITE_BYTES    (256ul << 10) /* one write of requests */
#define FLOOD_STALL_SEC      2.0  /* nothing accepted: server stopped */
#define FLOOD_MAX_SEC        15.0 /* bound on one flood */
#define FLOOD_WARMUP_MAX_SEC 5.0  /* bound on the warm-up exchange */
#define FLOOD_IDLE_SEC       1.5  /* progress before the baseline */
#define FLOOD_AFTER_SEC      3.0  /* progress after the close */
#define FLOOD_SAMPLE_SEC     0.01 /* RSS sampling period */
#define FLOOD_HOLD_DEFAULT   5.0
#define FLOOD_HOLD_MAX       20.0
#define FLOOD_MARGIN_SEC     5.0
#define FLOOD_PARTIAL_CONNS  100
#define FLOOD_PARTIAL_MSG    60000 /* announced AM length */
#define FLOOD_PARTIAL_SENT   50000 /* bytes of it sent */
#define FLOOD_AM_ID          1
#define FLOOD_RUN_MAX_SEC    58.0 /* bound on the whole run */

typedef enum { FLOOD_ACK, FLOOD_GET, FLOOD_PARTIAL, FLOOD_LAST } flood_kind_t;

static const char *flood_names[FLOOD_LAST] = {"ack", "get", "partial"};

/* What the attacker needs to know about its target */
typedef struct {
    int proto;                    /* 2, 3 or 4 */
    struct sockaddr_storage addr; /* server's listening address */
    socklen_t addr_len;
    uint64_t secret;   /* from the iface address (v3) */
    uint64_t buf_addr; /* registered buffer */
    uint64_t rkey;     /* its key (v3) */
    double hold_sec;
} flood_target_t;

/* What the attacker reports back through a pipe */
typedef struct {
    int error;       /* errno of a failed connect, else 0 */
    uint64_t sent;   /* request bytes the socket accepted */
    double stop_sec; /* flood start to the last byte accepted, when the
                        socket stalled; < 0 when everything went out */
    double drop_sec; /* last byte accepted to the server's close or
                        reset; < 0 when the server kept the
                        connection */
} flood_report_t;

typedef struct {
    flood_target_t target;
    uct_md_h md;
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_iface_h iface;
    void *buf;
    uct_mem_h memh;
    size_t rss_peak;
    size_t unread_peak; /* most bytes left unread in the
                           server's socket */
} flood_server_t;

static double flood_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static double flood_mib(size_t bytes)
{
    return bytes / (double)(1ul << 20);
}

/* Resident set size in bytes, 0 if /proc cannot tell */
static size_t flood_rss(void)
{
    unsigned long size, resident;
    char text[128];
    ssize_t n;
    int fd;

    fd = open("/proc/self/statm", O_RDONLY);
    if (fd < 0) {
        return 0;
    }
    n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    text[n] = '\0';
    if (sscanf(text, "%lu %lu", &size, &resident) != 2) {
        return 0;
    }
    return resident * (size_t)sysconf(_SC_PAGESIZE);
}

static int flood_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "tcp_flood: %s failed: %s\n", what,
            ucs_status_string(status));
    return -1;
}

/* --- wire encoding (little-endian fields) --- */

static uint8_t *flood_put_le(uint8_t *p, uint64_t value, unsigned bytes)
{
    unsigned i;

    for (i = 0; i < bytes; ++i) {
        p[i] = (uint8_t)(value >> (8 * i));
    }
    return p + bytes;
}

static uint64_t flood_get_le(const uint8_t *p, unsigned bytes)
{
    uint64_t value = 0;
    unsigned i;

    for (i = 0; i < bytes; ++i) {
        value |= (uint64_t)p[i] << (8 * i);
    }
    return value;
}

/* A handshake that asks for a connection to the interface; returns its
 * length. The listening address it claims is the server's own: the
 * attacker has none. */
static size_t flood_pack_handshake(const flood_target_t *t, uint8_t *hs)
{
    const struct sockaddr_in *in   = (const void *)&t->addr;
    const struct sockaddr_in6 *in6 = (const void *)&t->addr;
    int is_v6                      = (t->addr.ss_family == AF_INET6);
    uint8_t *p                     = hs;

    memset(hs, 0, FLOOD_HS_MAX_LEN);
    p    = flood_put_le(p, FLOOD_MAGIC, 8);
    p    = flood_put_le(p, t->proto, 2);
    *p++ = FLOOD_CONN_TO_IFACE;
    *p++ = (uint8_t)t->addr.ss_family;
    /* listen_port, network order as it is in the sockaddr */
    memcpy(p,
           is_v6 ? (const void *)&in6->sin6_port : (const void *)&in->sin_port,
           2);
    /* port, reserved, ep ids (and in v4 their 64-bit cookies) */
    p += 4 + ((t->proto >= 4) ? 24 : 16);
    memcpy(p,
           is_v6 ? (const void *)&in6->sin6_addr : (const void *)&in->sin_addr,
           is_v6 ? 16 : 4);
    p += 16;
    if (t->proto >= 3) {
        p = flood_put_le(p, t->secret, 8);
    }
    return p - hs;
}

static uint8_t *flood_pack_hdr(uint8_t *p, uint8_t id, uint32_t length)
{
    p = flood_put_le(p, id, 1);
    p = flood_put_le(p, 0, 3); /* flags (v3), reserved */
    return flood_put_le(p, length, 4);
}

static size_t flood_get_req_len(int proto)
{
    return (proto >= 3) ? 24 : 16; /* + rkey in v3 */
}

/* GET request number @a i (header and payload); returns its end */
static uint8_t *flood_pack_get(const flood_target_t *t, uint8_t *p, size_t i)
{
    uint64_t addr = t->buf_addr + ((i % FLOOD_GET_SLOTS) * FLOOD_GET_SIZE);

    p = flood_pack_hdr(p, FLOOD_OP_GET_REQ, flood_get_req_len(t->proto));
    p = flood_put_le(p, addr, 8);
    p = flood_put_le(p, FLOOD_GET_SIZE, 8);
    if (t->proto >= 3) {
        p = flood_put_le(p, t->rkey, 8);
    }
    return p;
}

static size_t flood_msg_len(const flood_target_t *t, flood_kind_t kind)
{
    switch (kind) {
    case FLOOD_GET:
        return FLOOD_HDR_LEN + flood_get_req_len(t->proto);
    case FLOOD_PARTIAL:
        return FLOOD_HDR_LEN + FLOOD_PARTIAL_SENT;
    default:
        return FLOOD_HDR_LEN;
    }
}

/* Fills @a buf (a whole number of messages) with requests of @a kind */
static void flood_fill(const flood_target_t *t, flood_kind_t kind, uint8_t *buf,
                       size_t len)
{
    size_t msg_len = flood_msg_len(t, kind);
    uint8_t *p     = buf;
    size_t i;

    if (kind == FLOOD_PARTIAL) {
        /* one unfinished message, the same on every connection */
        p = flood_pack_hdr(p, FLOOD_AM_ID, FLOOD_PARTIAL_MSG);
        memset(p, 'p', FLOOD_PARTIAL_SENT);
        return;
    }
    for (i = 0; i < len / msg_len; ++i) {
        if (kind == FLOOD_GET) {
            p = flood_pack_get(t, p, i);
        } else {
            p = flood_pack_hdr(p, FLOOD_OP_ACK_REQ, 0);
        }
    }
}

/* --- the attacker (forked child: no malloc, no stdio) --- */

static int flood_connect(const flood_target_t *t)
{
    int fd = socket(t->addr.ss_family, SOCK_STREAM, 0);

    if (fd < 0) {
        return -1;
    }
    if (connect(fd, (const struct sockaddr *)&t->addr, t->addr_len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Waits up to @a sec for @a events; returns revents, 0 on timeout */
static short flood_poll(int fd, short events, double sec)
{
    struct pollfd pfd = {.fd = fd, .events = events};

    if (poll(&pfd, 1, (int)(sec * 1000)) <= 0) {
        return 0;
    }
    return pfd.revents;
}

/* Sends @a total bytes of the repeating @a pattern without blocking,
 * until all went out, the socket took nothing for FLOOD_STALL_SEC, or
 * the connection failed; fills the report's sent, stop and drop. Returns
 * when the socket took its last byte. */
static double flood_send(int fd, const uint8_t *pattern, size_t pattern_len,
                         size_t total, flood_report_t *report)
{
    double start = flood_now();
    double last  = start;
    size_t off, len;
    ssize_t n;
    short revents;

    while (report->sent < total) {
        off = report->sent % pattern_len;
        len = pattern_len - off;
        if (len > total - report->sent) {
            len = total - report->sent;
        }
        n = send(fd, pattern + off, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            report->sent += n;
            last = flood_now();
            continue;
        }
        if ((n < 0) && (errno != EAGAIN) && (errno != EWOULDBLOCK) &&
            (errno != EINTR)) {
            report->drop_sec = flood_now() - last; /* reset or closed */
            break;
        }
        if ((flood_now() - last) >= FLOOD_STALL_SEC) {
            report->stop_sec = last - start;
            break;
        }
        if ((flood_now() - start) >= FLOOD_MAX_SEC) {
            break;
        }
        revents = flood_poll(fd, POLLOUT | POLLRDHUP, 0.05);
        if (revents & (POLLERR | POLLHUP | POLLRDHUP)) {
            report->drop_sec = flood_now() - last;
            break;
        }
    }
    if ((report->sent < total) && (report->stop_sec < 0)) {
        report->stop_sec = last - start;
    }
    return last;
}

/* Keeps the connection for @a sec without reading; notes when the server
 * closed or reset it, counted from @a since */
static void flood_hold(int fd, double sec, double since, flood_report_t *report)
{
    double deadline = flood_now() + sec;
    double left;

    while ((left = deadline - flood_now()) > 0) {
        if (flood_poll(fd, POLLRDHUP, left) & (POLLERR | POLLHUP | POLLRDHUP)) {
            report->drop_sec = flood_now() - since;
            return;
        }
    }
}

/* Opens FLOOD_PARTIAL_CONNS connections that each leave the message of
 * @a pattern unfinished, keeps them @a t->hold_sec, then closes them all;
 * drop_sec: when the server closed the first one (its peer timeout) */
static void flood_partial(const flood_target_t *t, const uint8_t *pattern,
                          size_t pattern_len, flood_report_t *report)
{
    static int fds[FLOOD_PARTIAL_CONNS];
    uint8_t hs[FLOOD_HS_MAX_LEN];
    size_t hs_len = flood_pack_handshake(t, hs);
    double start, deadline, left;
    unsigned i, n;

    for (n = 0; n < FLOOD_PARTIAL_CONNS; ++n) {
        fds[n] = flood_connect(t);
        if (fds[n] < 0) {
            report->error = errno;
            break;
        }
        if ((send(fds[n], hs, hs_len, MSG_NOSIGNAL) != (ssize_t)hs_len) ||
            (send(fds[n], pattern, pattern_len, MSG_NOSIGNAL) !=
             (ssize_t)pattern_len)) {
            report->error = errno;
            close(fds[n]);
            break;
        }
        report->sent += pattern_len;
    }
    start    = flood_now();
    deadline = start + t->hold_sec;
    while ((n > 0) && ((left = deadline - flood_now()) > 0)) {
        if (flood_poll(fds[0], POLLRDHUP, left) &
            (POLLERR | POLLHUP | POLLRDHUP)) {
            report->drop_sec = flood_now() - start;
            break;
        }
    }
    for (i = 0; i < n; ++i) {
        close(fds[i]);
    }
}

static void flood_attacker(const flood_target_t *t, flood_kind_t kind,
                           const uint8_t *pattern, size_t pattern_len,
                           int report_fd)
{
    flood_report_t report = {.stop_sec = -1, .drop_sec = -1};
    size_t msg_len        = flood_msg_len(t, kind);
    size_t total;
    uint8_t hs[FLOOD_HS_MAX_LEN];
    size_t hs_len;
    double last;
    int fd;

    if (kind == FLOOD_PARTIAL) {
        flood_partial(t, pattern, pattern_len, &report);
        goto out;
    }

    total = (kind == FLOOD_GET) ? FLOOD_GET_BYTES : FLOOD_ACK_BYTES;
    total = (total / msg_len) * msg_len;

    fd = flood_connect(t);
    if (fd < 0) {
        report.error = errno;
        goto out;
    }
    hs_len = flood_pack_handshake(t, hs);
    if (send(fd, hs, hs_len, MSG_NOSIGNAL) != (ssize_t)hs_len) {
        report.error = errno;
        close(fd);
        goto out;
    }

    last = flood_send(fd, pattern, pattern_len, total, &report);
    if (report.drop_sec < 0) {
        flood_hold(fd, t->hold_sec, last, &report);
    }
    close(fd);
out:
    if (write(report_fd, &report, sizeof(report)) != sizeof(report)) {
        _exit(1);
    }
    _exit(0);
}

/* --- the server --- */

static uint16_t flood_port(const flood_target_t *t)
{
    const struct sockaddr_in *in   = (const void *)&t->addr;
    const struct sockaddr_in6 *in6 = (const void *)&t->addr;

    return ntohs((t->addr.ss_family == AF_INET6) ? in6->sin6_port
                                                 : in->sin_port);
}

/* Bytes received and not yet read in the server's accepted sockets (the
 * receive queues of /proc/net/tcp entries on its port, but the listening
 * one): how much the server leaves unread while it applies back-pressure */
static size_t flood_unread(const flood_target_t *t)
{
    unsigned port, state;
    unsigned long rx_queue;
    size_t unread = 0;
    char line[256];
    FILE *f;

    f = fopen((t->addr.ss_family == AF_INET6) ? "/proc/net/tcp6"
                                              : "/proc/net/tcp",
              "r");
    if (f == NULL) {
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if ((sscanf(line,
                    " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x "
                    "%*x:%lx",
                    &port, &state, &rx_queue) == 3) &&
            (port == flood_port(t)) && (state != 0x0a /* LISTEN */)) {
            unread += rx_queue;
        }
    }
    fclose(f);
    return unread;
}

static void flood_progress_for(flood_server_t *s, double sec)
{
    double deadline = flood_now() + sec;

    while (flood_now() < deadline) {
        uct_worker_progress(s->worker);
    }
}

static int flood_server_open(flood_server_t *s)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    ucs_status_t status;

    status = test_uct_md_find("tcp", FLOOD_DEV, &s->md, NULL);
    if (status == UCS_ERR_NO_DEVICE) {
        fprintf(stderr,
                "tcp_flood: transport tcp on device %s not found "
                "(is libuct_tcp.so built? UCX_MODULE_DIR?)\n",
                FLOOD_DEV);
        return -1;
    } else if (status != UCS_OK) {
        return flood_fail("uct_query_components", status);
    }
    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &s->async);
    if (status != UCS_OK) {
        s->async = NULL;
        return flood_fail("ucs_async_context_create", status);
    }
    status = uct_worker_create(s->async, UCS_THREAD_MODE_SINGLE, &s->worker);
    if (status != UCS_OK) {
        s->worker = NULL;
        return flood_fail("uct_worker_create", status);
    }

    status = uct_md_iface_config_read(s->md, "tcp", NULL, NULL, &config);
    if (status != UCS_OK) {
        return flood_fail("uct_md_iface_config_read", status);
    }
    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "tcp";
    params.mode.device.dev_name = FLOOD_DEV;
    status = uct_iface_open(s->md, s->worker, &params, config, &s->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        s->iface = NULL;
        return flood_fail("uct_iface_open", status);
    }
    uct_iface_progress_enable(s->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

/* Where the attacker connects, and the secret (v3 addresses carry it) */
static int flood_server_address(flood_server_t *s)
{
    flood_target_t *t = &s->target;
    uint8_t dev[64], addr[64];
    uct_iface_attr_t attr;
    ucs_status_t status;
    uint16_t port;

    status = uct_iface_query(s->iface, &attr);
    if (status != UCS_OK) {
        return flood_fail("uct_iface_query", status);
    }
    if ((attr.device_addr_len > sizeof(dev)) ||
        (attr.iface_addr_len > sizeof(addr)) || (attr.iface_addr_len < 2)) {
        fprintf(stderr,
                "tcp_flood: unexpected tcp address lengths %zu, "
                "%zu\n",
                attr.device_addr_len, attr.iface_addr_len);
        return -1;
    }
    status = uct_iface_get_device_address(s->iface, (uct_device_addr_t *)dev);
    if (status == UCS_OK) {
        status = uct_iface_get_address(s->iface, (uct_iface_addr_t *)addr);
    }
    if (status != UCS_OK) {
        return flood_fail("uct_iface_get_address", status);
    }

    memcpy(&port, addr, sizeof(port)); /* network order */
    if (attr.iface_addr_len >= 2 + sizeof(uint64_t)) {
        memcpy(&t->secret, addr + 2, sizeof(t->secret));
    }
    if ((t->proto >= 3) != (attr.iface_addr_len > 2)) {
        fprintf(stderr,
                "tcp_flood: warning: speaking protocol %d to a "
                "build whose iface address is %zu bytes (v2: 2, v3: 10); "
                "the handshake will be refused\n",
                t->proto, attr.iface_addr_len);
    }

    memset(&t->addr, 0, sizeof(t->addr));
    if (dev[0] == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&t->addr;

        in->sin_family = AF_INET;
        in->sin_port   = port;
        memcpy(&in->sin_addr, dev + 1, 4);
        t->addr_len = sizeof(*in);
    } else if (dev[0] == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&t->addr;

        in6->sin6_family = AF_INET6;
        in6->sin6_port   = port;
        memcpy(&in6->sin6_addr, dev + 1, 16);
        t->addr_len = sizeof(*in6);
    } else {
        fprintf(stderr, "tcp_flood: device address of unknown family %u\n",
                dev[0]);
        return -1;
    }
    return 0;
}

/* The buffer the GETs read, and its key (none in v2) */
static int flood_server_register(flood_server_t *s)
{
    uint8_t packed[64] = {0};
    uct_md_attr_t md_attr;
    ucs_status_t status;

    s->buf = aligned_alloc(4096, FLOOD_BUF_SIZE);
    if (s->buf == NULL) {
        fprintf(stderr, "tcp_flood: out of memory for the buffer\n");
        return -1;
    }
    memset(s->buf, 0x5a, FLOOD_BUF_SIZE);
    status = uct_md_query(s->md, &md_attr);
    if (status != UCS_OK) {
        return flood_fail("uct_md_query", status);
    }
    if (md_attr.rkey_packed_size > sizeof(packed)) {
        fprintf(stderr, "tcp_flood: packed rkey of %zu bytes\n",
                md_attr.rkey_packed_size);
        return -1;
    }
    status = uct_md_mem_reg(s->md, s->buf, FLOOD_BUF_SIZE,
                            UCT_MD_MEM_ACCESS_ALL, &s->memh);
    if (status != UCS_OK) {
        s->memh = NULL;
        return flood_fail("uct_md_mem_reg", status);
    }
    status = uct_md_mkey_pack(s->md, s->memh, packed);
    if (status != UCS_OK) {
        return flood_fail("uct_md_mkey_pack", status);
    }
    s->target.buf_addr = (uintptr_t)s->buf;
    s->target.rkey =
        (md_attr.rkey_packed_size >= 8) ? flood_get_le(packed, 8) : 0;
    return 0;
}

static void flood_server_close(flood_server_t *s)
{
    if (s->memh != NULL) {
        uct_md_mem_dereg(s->md, s->memh);
    }
    if (s->iface != NULL) {
        uct_iface_close(s->iface);
    }
    if (s->worker != NULL) {
        uct_worker_destroy(s->worker);
    }
    if (s->async != NULL) {
        ucs_async_context_destroy(s->async);
    }
    if (s->md != NULL) {
        uct_md_close(s->md);
    }
    free(s->buf);
}

/* A well-behaved exchange first, so that what the first connection, ACK
 * and GET allocate for good is in the baseline: one ACK_REQ and one GET,
 * replies read, then close. */
static int flood_warmup(flood_server_t *s)
{
    size_t expect =
        FLOOD_HS_REPLY_LEN + FLOOD_ACK_LEN + FLOOD_HDR_LEN + FLOOD_GET_SIZE;
    double deadline = flood_now() + FLOOD_WARMUP_MAX_SEC;
    uint8_t out[FLOOD_HS_MAX_LEN + 64], in[8192];
    size_t len, got = 0;
    ssize_t n;
    int fd, ret = -1;

    fd = socket(s->target.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        perror("tcp_flood: socket");
        return -1;
    }
    if ((connect(fd, (struct sockaddr *)&s->target.addr, s->target.addr_len) !=
         0) &&
        (errno != EINPROGRESS)) {
        perror("tcp_flood: warm-up connect");
        goto out;
    }
    while (!(flood_poll(fd, POLLOUT, 0) & POLLOUT)) {
        if (flood_now() > deadline) {
            goto timeout;
        }
        uct_worker_progress(s->worker);
    }
    len = flood_pack_handshake(&s->target, out);
    len += flood_pack_hdr(out + len, FLOOD_OP_ACK_REQ, 0) - (out + len);
    len += flood_pack_get(&s->target, out + len, 0) - (out + len);
    if (send(fd, out, len, MSG_NOSIGNAL) != (ssize_t)len) {
        perror("tcp_flood: warm-up send");
        goto out;
    }
    while (got < expect) {
        n = recv(fd, in, sizeof(in), MSG_DONTWAIT);
        if (n > 0) {
            got += n;
        } else if (n == 0) {
            fprintf(stderr,
                    "tcp_flood: the server closed the warm-up "
                    "connection after %zu of %zu bytes (protocol "
                    "mismatch?)\n",
                    got, expect);
            goto out;
        } else if (flood_now() > deadline) {
            goto timeout;
        } else {
            uct_worker_progress(s->worker);
        }
    }
    ret = 0;
    goto out;
timeout:
    fprintf(stderr,
            "tcp_flood: no answer to the warm-up exchange in "
            "%.0f s\n",
            FLOOD_WARMUP_MAX_SEC);
out:
    close(fd);
    return ret;
}

static void flood_sample(flood_server_t *s)
{
    size_t rss    = flood_rss();
    size_t unread = flood_unread(&s->target);

    if (rss > s->rss_peak) {
        s->rss_peak = rss;
    }
    if (unread > s->unread_peak) {
        s->unread_peak = unread;
    }
}

/* Progresses for @a sec, sampling the peaks */
static void flood_progress_sampled(flood_server_t *s, double sec)
{
    double deadline    = flood_now() + sec;
    double next_sample = 0, now;

    while ((now = flood_now()) < deadline) {
        uct_worker_progress(s->worker);
        if (now >= next_sample) {
            next_sample = now + FLOOD_SAMPLE_SEC;
            flood_sample(s);
        }
    }
}

/* Progresses and samples the peaks until the attacker reports on
 * @a report_fd or @a deadline passes; 0 with the report, -1 without */
static int flood_watch(flood_server_t *s, int report_fd, double deadline,
                       flood_report_t *report)
{
    double next_sample = 0, now;
    ssize_t n;

    for (;;) {
        uct_worker_progress(s->worker);
        now = flood_now();
        if (now < next_sample) {
            continue;
        }
        next_sample = now + FLOOD_SAMPLE_SEC;
        flood_sample(s);
        n = read(report_fd, report, sizeof(*report));
        if (n == sizeof(*report)) {
            return 0;
        } else if ((n == 0) || ((n < 0) && (errno != EAGAIN))) {
            fprintf(stderr, "tcp_flood: the attacker ended without a "
                            "report\n");
            return -1;
        } else if (now > deadline) {
            fprintf(stderr, "tcp_flood: the attacker did not finish in "
                            "time: killed\n");
            return -1;
        }
    }
}

static void flood_print(flood_kind_t kind, const flood_report_t *r,
                        const flood_server_t *s, size_t base, size_t after,
                        double heap_kept)
{
    char stop[16] = "-", drop[16] = "-";

    if (r->stop_sec >= 0) {
        snprintf(stop, sizeof(stop), "%.2f", r->stop_sec);
    }
    if (r->drop_sec >= 0) {
        snprintf(drop, sizeof(drop), "%.2f", r->drop_sec);
    }
    printf("%-5s  %8.3f  %12.1f  %12.1f  %13.1f  %10.2f  %6s  %6s  "
           "%10.0f  %9.1f\n",
           flood_names[kind], flood_mib(r->sent), flood_mib(base),
           flood_mib(s->rss_peak), flood_mib(after),
           (base > 0) ? (double)after / base : 0.0, stop, drop,
           s->unread_peak / 1024.0, heap_kept / (1ul << 20));
    fflush(stdout);
}

/* One scenario in this (fresh) process; returns the exit code */
static int flood_scenario(flood_target_t *target, flood_kind_t kind)
{
    flood_server_t s      = {.target = *target};
    flood_report_t report = {.stop_sec = -1, .drop_sec = -1};
    uint8_t *pattern      = NULL;
    int pipe_fds[2]       = {-1, -1};
    pid_t child           = -1;
    size_t msg_len, pattern_len, base, after, heap_base;
    double deadline;
    int ret = 1;

    if ((flood_server_open(&s) != 0) || (flood_server_address(&s) != 0) ||
        (flood_server_register(&s) != 0) || (flood_warmup(&s) != 0)) {
        goto out;
    }

    /* built before the fork: the attacker allocates nothing */
    msg_len     = flood_msg_len(&s.target, kind);
    pattern_len = (kind == FLOOD_PARTIAL)
                      ? msg_len
                      : (FLOOD_WRITE_BYTES / msg_len) * msg_len;
    pattern     = malloc(pattern_len);
    if ((pattern == NULL) || (pipe(pipe_fds) != 0)) {
        perror("tcp_flood: attacker set-up");
        goto out;
    }
    flood_fill(&s.target, kind, pattern, pattern_len);

    flood_progress_for(&s, FLOOD_IDLE_SEC);
    base       = flood_rss();
    heap_base  = ucs_sys_heap_in_use();
    s.rss_peak = base;

    child = fork();
    if (child < 0) {
        perror("tcp_flood: fork");
        goto out;
    } else if (child == 0) {
        close(pipe_fds[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm((unsigned)(FLOOD_MAX_SEC + s.target.hold_sec + FLOOD_MARGIN_SEC));
        flood_attacker(&s.target, kind, pattern, pattern_len, pipe_fds[1]);
    }
    close(pipe_fds[1]);
    pipe_fds[1] = -1;
    fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);

    deadline =
        flood_now() + FLOOD_MAX_SEC + s.target.hold_sec + FLOOD_MARGIN_SEC;
    if (flood_watch(&s, pipe_fds[0], deadline, &report) != 0) {
        goto out;
    }
    if (report.error != 0) {
        fprintf(stderr, "tcp_flood: the attacker could not connect: %s\n",
                strerror(report.error));
        goto out;
    }
    flood_progress_sampled(&s, FLOOD_AFTER_SEC);
    after = flood_rss();
    flood_print(kind, &report, &s, base, after,
                (double)ucs_sys_heap_in_use() - (double)heap_base);
    ret = 0;

out:
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    if (pipe_fds[0] >= 0) {
        close(pipe_fds[0]);
    }
    if (pipe_fds[1] >= 0) {
        close(pipe_fds[1]);
    }
    free(pattern);
    flood_server_close(&s);
    return ret;
}

/* Runs one scenario in a child process, killed if it runs past its own
 * bound or @a run_deadline */
static int flood_run(flood_target_t *target, flood_kind_t kind,
                     double run_deadline)
{
    double deadline = flood_now() + FLOOD_WARMUP_MAX_SEC + FLOOD_IDLE_SEC +
                      FLOOD_MAX_SEC + target->hold_sec + FLOOD_AFTER_SEC +
                      2 * FLOOD_MARGIN_SEC;
    struct timespec nap = {.tv_nsec = 50 * 1000 * 1000};

    if (deadline > run_deadline) {
        deadline = run_deadline;
    }
    int wstatus;
    pid_t pid, done;

    pid = fork();
    if (pid < 0) {
        perror("tcp_flood: fork");
        return 1;
    } else if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        exit(flood_scenario(target, kind));
    }
    while ((done = waitpid(pid, &wstatus, WNOHANG)) == 0) {
        if (flood_now() > deadline) {
            fprintf(stderr, "tcp_flood: scenario %s overran: killed\n",
                    flood_names[kind]);
            kill(pid, SIGKILL);
            waitpid(pid, &wstatus, 0);
            return 1;
        }
        nanosleep(&nap, NULL);
    }
    if ((done < 0) || !WIFEXITED(wstatus) || (WEXITSTATUS(wstatus) != 0)) {
        return 1;
    }
    return 0;
}

static void flood_usage(void)
{
    printf("usage: tcp_flood [-p 2|3|4] [-s ack|get|partial|all] "
           "[-t SECONDS]\n"
           "  -p 2|3|4   protocol version the attacker speaks (default 4; "
           "3 and 2 for\n"
           "             older builds)\n"
           "  -s FLOOD   ack, get, partial or all (default all)\n"
           "  -t SECONDS how long the attacker keeps the connection after "
           "its flood\n"
           "             (default %.0f, at most %.0f)\n"
           "A scenario takes about 7 s plus the flood and the hold time; "
           "the run is\nstopped after %.0f s.\n",
           FLOOD_HOLD_DEFAULT, FLOOD_HOLD_MAX, FLOOD_RUN_MAX_SEC);
}

int main(int argc, char **argv)
{
    flood_target_t target = {.proto = 4, .hold_sec = FLOOD_HOLD_DEFAULT};
    double run_deadline   = flood_now() + FLOOD_RUN_MAX_SEC;
    int first = FLOOD_ACK, last = FLOOD_PARTIAL;
    const char *timeout;
    int c, kind, ret = 0;
    char *end;

    while ((c = getopt(argc, argv, "p:s:t:h")) != -1) {
        switch (c) {
        case 'p':
            target.proto = atoi(optarg);
            if ((target.proto < 2) || (target.proto > 4)) {
                fprintf(stderr, "tcp_flood: -p wants 2, 3 or 4\n");
                return 1;
            }
            break;
        case 's':
            if (!strcmp(optarg, "ack")) {
                first = last = FLOOD_ACK;
            } else if (!strcmp(optarg, "get")) {
                first = last = FLOOD_GET;
            } else if (!strcmp(optarg, "partial")) {
                first = last = FLOOD_PARTIAL;
            } else if (strcmp(optarg, "all")) {
                fprintf(stderr,
                        "tcp_flood: -s wants ack, get, partial or all\n");
                return 1;
            }
            break;
        case 't':
            target.hold_sec = strtod(optarg, &end);
            if ((*end != '\0') || !(target.hold_sec >= 0) ||
                (target.hold_sec > FLOOD_HOLD_MAX)) {
                fprintf(stderr, "tcp_flood: -t wants 0 to %.0f seconds\n",
                        FLOOD_HOLD_MAX);
                return 1;
            }
            break;
        case 'h':
            flood_usage();
            return 0;
        default:
            flood_usage();
            return 1;
        }
    }

    timeout = getenv("UCX_TCP_PEER_TIMEOUT");
    printf("# tcp_flood: attacker speaks protocol %d on %s, holds %.1f s; "
           "UCX_TCP_PEER_TIMEOUT=%s\n",
           target.proto, FLOOD_DEV, target.hold_sec,
           (timeout != NULL) ? timeout : "(default)");
    printf("# stop_s: flood start to the last byte the socket took (- : "
           "took all)\n"
           "# drop_s: last byte taken to the server's close or reset (- : "
           "none seen)\n"
           "# unread_KiB: most bytes waiting unread in the server's socket "
           "(back-pressure)\n"
           "# heap_kept_MiB: heap in use after - at base (kept by the "
           "server; mallinfo2() uordblks+hblkhd)\n");
    printf("%-5s  %8s  %12s  %12s  %13s  %10s  %6s  %6s  %10s  %9s\n", "flood",
           "sent_MiB", "rss_base_MiB", "rss_peak_MiB", "rss_after_MiB",
           "after/base", "stop_s", "drop_s", "unread_KiB", "heap_kept_MiB");
    fflush(stdout);

    for (kind = first; kind <= last; ++kind) {
        ret |= flood_run(&target, kind, run_deadline);
    }
    return ret;
}
