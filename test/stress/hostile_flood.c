/*
 * tcp_hostile flood: -c connections to the target's interface (a valid
 * handshake with its secret), spread over -s source addresses
 * 127.0.0.2, 127.0.0.3, ... (each another host to the target), each
 * leaving a message partial so that it holds one of the target's receive
 * buffers. The partial message is the first half of an ACK_REQ header,
 * which the target answers without involving its application; every -r
 * seconds a connection completes it and starts the next one in the same
 * write, so that none is ever stale. Connections the target closes are
 * opened again, at most HX_FLOOD_REOPEN every HX_FLOOD_TICK_MS, so that
 * its pool stays under pressure for the whole run.
 *
 * Connections are opened in batches of HX_FLOOD_BATCH, each batch waiting
 * for its handshake replies, so that the target's listen backlog never
 * overflows. Then the program prints
 *   flood: holding H of C connections from S addresses (...)
 * and keeps going until SIGTERM or SIGINT (or -t seconds), then prints
 * what it saw meanwhile: connections the target closed, connections
 * opened again, refreshes made, acknowledgements received.
 */
#define _GNU_SOURCE

#include "hostile.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HX_FLOOD_BATCH     128
#define HX_FLOOD_TICK_MS   100
#define HX_FLOOD_REOPEN    32   /* connections opened again per tick */
#define HX_FLOOD_SETUP_SEC 60.0 /* the whole setup */
#define HX_FLOOD_HALF      4    /* bytes of the 8-byte header per write */

typedef enum {
    HX_FLOOD_CLOSED,
    HX_FLOOD_OPENING, /* handshake sent, its reply awaited */
    HX_FLOOD_HOLDING
} hx_flood_state_t;

typedef struct {
    int fd;
    uint8_t state;
    uint8_t reply_got;
    uint8_t reply[HX_REPLY_LEN];
    double next_refresh;
} hx_flood_conn_t;

typedef struct {
    hx_target_t t;
    unsigned long conns;
    unsigned long sources;
    unsigned long first_source; /* 127.0.0.(1 + it) is the first */
    unsigned long refresh_sec;
    unsigned long limit_sec;
    hx_flood_conn_t *c;
    struct pollfd *pfd;
    uint8_t header[HX_HDR_LEN]; /* the ACK_REQ header, split in two */

    /* counters of the setup, then of the run */
    unsigned early;  /* closed before the reply, or refused */
    unsigned failed; /* could not connect */
    int error;       /* errno of the last of those */
    unsigned closed; /* by the target, while holding */
    unsigned reopened;
    unsigned long refreshes;
    unsigned long ack_bytes;
} hx_flood_t;

static volatile sig_atomic_t hx_flood_stop;

static void hx_flood_on_signal(int sig)
{
    hx_flood_stop = 1;
}

static int hx_flood_opt(int opt, const char *arg, void *arg_p)
{
    hx_flood_t *f = arg_p;

    switch (opt) {
    case 'c':
        return hx_parse_uint(opt, arg, 1, 1000000, &f->conns);
    case 's':
        return hx_parse_uint(opt, arg, 1, 250, &f->sources);
    case 'f':
        return hx_parse_uint(opt, arg, 0, 250, &f->first_source);
    case 'r':
        return hx_parse_uint(opt, arg, 1, 3600, &f->refresh_sec);
    case 't':
        return hx_parse_uint(opt, arg, 1, 86400, &f->limit_sec);
    default:
        return -1;
    }
}

/* The target closed #i (before its handshake reply, or with a refusal:
 * early) */
static void hx_flood_close(hx_flood_t *f, unsigned i)
{
    if (f->c[i].state == HX_FLOOD_HOLDING) {
        ++f->closed;
    } else {
        ++f->early;
    }
    close(f->c[i].fd);
    f->c[i].fd    = -1;
    f->c[i].state = HX_FLOOD_CLOSED;
    f->pfd[i].fd  = -1;
}

/* Connects #i, sends the handshake and half a header in one write */
static void hx_flood_open(hx_flood_t *f, unsigned i, double now)
{
    uint8_t buf[HX_HS_LEN_V5 + HX_FLOOD_HALF];
    hx_handshake_t hs;
    size_t len;
    int fd;

    fd = hx_connect(&f->t, f->first_source + (i % f->sources));
    if (fd < 0) {
        f->error = errno;
        ++f->failed;
        return;
    }
    hx_handshake_init(&hs, &f->t, fd, HX_CONN_TO_IFACE);
    len = hx_handshake_pack(&f->t, &hs, buf);
    memcpy(buf + len, f->header, HX_FLOOD_HALF);
    if (hx_send_all(fd, buf, len + HX_FLOOD_HALF) != 0) {
        f->error = errno;
        ++f->failed;
        close(fd);
        return;
    }
    f->c[i].fd        = fd;
    f->c[i].state     = HX_FLOOD_OPENING;
    f->c[i].reply_got = 0;
    /* spread the refreshes over the period */
    f->c[i].next_refresh =
        now + (double)f->refresh_sec * (double)(i + 1) / (double)f->conns;
    f->pfd[i].fd     = fd;
    f->pfd[i].events = POLLIN;
}

/* Reads what the target sent on #i: the handshake reply, then ACKs */
static void hx_flood_read(hx_flood_t *f, unsigned i)
{
    hx_flood_conn_t *c = &f->c[i];
    uint8_t buf[512];
    size_t n;
    ssize_t ret;

    ret = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if ((ret < 0) && ((errno == EAGAIN) || (errno == EINTR))) {
        return;
    }
    if (ret <= 0) {
        hx_flood_close(f, i);
        return;
    }
    n = 0;
    if (c->state == HX_FLOOD_OPENING) {
        n = HX_REPLY_LEN - (size_t)c->reply_got;
        if ((size_t)ret < n) {
            n = (size_t)ret;
        }
        memcpy(c->reply + c->reply_got, buf, n);
        c->reply_got += (uint8_t)n;
        if (c->reply_got < HX_REPLY_LEN) {
            return;
        }
        if (hx_reply_status(c->reply) != HX_HS_ACCEPTED) {
            hx_flood_close(f, i);
            return;
        }
        c->state = HX_FLOOD_HOLDING;
    }
    f->ack_bytes += (size_t)ret - n;
}

/* The second half of the held header and the first half of the next */
static void hx_flood_refresh(hx_flood_t *f, unsigned i, double now)
{
    uint8_t buf[HX_HDR_LEN];
    ssize_t ret;

    memcpy(buf, f->header + HX_FLOOD_HALF, HX_FLOOD_HALF);
    memcpy(buf + HX_FLOOD_HALF, f->header, HX_FLOOD_HALF);
    ret = send(f->c[i].fd, buf, sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT);
    if ((ret < 0) && (errno == EAGAIN)) {
        return; /* the target is not reading it: next tick */
    }
    if (ret != (ssize_t)sizeof(buf)) {
        hx_flood_close(f, i); /* reset by the target */
        return;
    }
    ++f->refreshes;
    f->c[i].next_refresh = now + (double)f->refresh_sec;
}

/* One poll of every connection, up to @a timeout_ms */
static void hx_flood_poll(hx_flood_t *f, int timeout_ms)
{
    unsigned i;

    if (poll(f->pfd, f->conns, timeout_ms) <= 0) {
        return;
    }
    for (i = 0; i < f->conns; ++i) {
        if ((f->pfd[i].fd >= 0) && (f->pfd[i].revents != 0)) {
            hx_flood_read(f, i);
        }
    }
}

static unsigned hx_flood_count(const hx_flood_t *f, hx_flood_state_t state)
{
    unsigned i, n = 0;

    for (i = 0; i < f->conns; ++i) {
        n += (f->c[i].state == state);
    }
    return n;
}

/* Opens every connection, a batch at a time; 0, or -1 when the target
 * does not answer */
static int hx_flood_setup(hx_flood_t *f)
{
    double deadline = hx_now() + HX_FLOOD_SETUP_SEC;
    unsigned i, end;

    for (i = 0; i < f->conns; i = end) {
        end = (i + HX_FLOOD_BATCH < f->conns) ? i + HX_FLOOD_BATCH : f->conns;
        for (; i < end; ++i) {
            hx_flood_open(f, i, hx_now());
        }
        while (hx_flood_count(f, HX_FLOOD_OPENING) > 0) {
            if (hx_now() > deadline) {
                fprintf(stderr,
                        "%s flood: handshake replies missing after "
                        "%.0f s\n",
                        HX_PROG, HX_FLOOD_SETUP_SEC);
                return -1;
            }
            hx_flood_poll(f, HX_FLOOD_TICK_MS);
        }
    }
    /* the closes of the last holds' victims arrive */
    hx_flood_poll(f, 300);
    return 0;
}

/* Keeps every connection holding until told to stop: each tick, the
 * refreshes that are due and some of the connections the target closed */
static void hx_flood_run(hx_flood_t *f)
{
    double end = hx_now() + (double)f->limit_sec, tick = 0, now;
    unsigned i, reopen;

    while (!hx_flood_stop && ((now = hx_now()) < end)) {
        if (now >= tick) {
            tick   = now + HX_FLOOD_TICK_MS * 1e-3;
            reopen = 0;
            for (i = 0; i < f->conns; ++i) {
                if ((f->c[i].state == HX_FLOOD_HOLDING) &&
                    (now >= f->c[i].next_refresh)) {
                    hx_flood_refresh(f, i, now);
                } else if ((f->c[i].state == HX_FLOOD_CLOSED) &&
                           (reopen < HX_FLOOD_REOPEN)) {
                    hx_flood_open(f, i, now);
                    ++reopen;
                    ++f->reopened;
                }
            }
        }
        hx_flood_poll(f, (int)((tick - now) * 1e3) + 1);
    }
}

int hx_flood_main(int argc, char **argv)
{
    struct sigaction sa;
    hx_flood_t f;
    double start;
    unsigned i;
    int ret = HX_EXIT_SETUP;

    memset(&f, 0, sizeof(f));
    f.conns        = 4100;
    f.sources      = 5;
    f.first_source = 1;
    f.refresh_sec  = 2;
    f.limit_sec    = 300;
    if ((hx_parse_check(argc, argv, "c:s:f:r:t:", hx_flood_opt, &f, &f.t) !=
         0) ||
        (hx_raise_fd_limit((unsigned)f.conns + 64) != 0)) {
        return HX_EXIT_SETUP;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = hx_flood_on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    f.c   = calloc(f.conns, sizeof(*f.c));
    f.pfd = calloc(f.conns, sizeof(*f.pfd));
    if ((f.c == NULL) || (f.pfd == NULL)) {
        fprintf(stderr, "%s flood: out of memory\n", HX_PROG);
        goto out;
    }
    for (i = 0; i < f.conns; ++i) {
        f.c[i].fd   = -1;
        f.pfd[i].fd = -1;
    }
    hx_hdr_pack(f.header, HX_OP_ACK_REQ, 0, 0, 0);

    start = hx_now();
    if (hx_flood_setup(&f) != 0) {
        goto out;
    }
    printf("flood: holding %u of %lu connections from %lu addresses "
           "(127.0.0.%lu-%lu), each with a partial message, after %.1f s "
           "(the target closed %u holding, %u before the reply; %u could "
           "not connect%s%s)\n",
           hx_flood_count(&f, HX_FLOOD_HOLDING), f.conns, f.sources,
           1 + f.first_source, f.first_source + f.sources, hx_now() - start,
           f.closed, f.early, f.failed, (f.failed > 0) ? ": " : "",
           (f.failed > 0) ? strerror(f.error) : "");
    fflush(stdout);

    f.closed = f.early = f.failed = 0;
    start                         = hx_now();
    hx_flood_run(&f);
    printf("flood: then in %.1f s the target closed %u holding, %u before "
           "the reply; %u opened again (%u could not connect), %lu "
           "refreshes, %lu ACKs, %u holding at the end\n",
           hx_now() - start, f.closed, f.early, f.reopened, f.failed,
           f.refreshes, f.ack_bytes / HX_HDR_LEN,
           hx_flood_count(&f, HX_FLOOD_HOLDING));
    ret = HX_EXIT_PASS;
out:
    for (i = 0; (f.c != NULL) && (i < f.conns); ++i) {
        if (f.c[i].state != HX_FLOOD_CLOSED) {
            close(f.c[i].fd);
        }
    }
    free(f.c);
    free(f.pfd);
    return ret;
}
