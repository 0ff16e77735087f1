/*
 * tcp_hostile target: the process the checks attack, a UCT program on
 * tcp with two interfaces on one device. X is attacked; Y holds the
 * legitimate peers of X's endpoints. Endpoint i of X is connected to
 * endpoint i of Y on X's side only, so that each X endpoint waits for a
 * connection from its own peer (X's port is the larger: the smaller side
 * connects). The address file (-o) holds X's device and interface
 * address and the address of X's endpoint A (-a), nothing else.
 *
 * Then the target serves its interfaces (sleeping on their event fds)
 * until SIGUSR1. Y's endpoints then connect to their X peers, each sends
 * -n active messages (id 1: sequence number, endpoint index) and is
 * flushed, and X must receive every one exactly once, in order, and no
 * endpoint may fail. It prints
 *   target: N endpoints, K of M AMs from their peers, in order; F
 *   failed; AMs from elsewhere: O (id I: C, ...)
 * and exits 0 when K == M and F == 0. AMs from elsewhere (any other id or
 * size) are counted and shown, not judged: the script knows how many a
 * check should have got through.
 */
#include "hostile.h"

#include <uct/api/uct.h>
#include <common/hex_line.h>
#include <common/uct_iface_open.h>
#include <common/uct_md_find.h>
#include <ucs/async/async.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HX_TGT_AM_ID     1     /* the legitimate peers' messages */
#define HX_TGT_AM_LEN    12    /* sequence number, endpoint index */
#define HX_TGT_WAIT_GO   120.0 /* seconds without SIGUSR1: give up */
#define HX_TGT_RUN_LIMIT 20.0  /* seconds for the legitimate traffic */

typedef struct hx_tgt hx_tgt_t;

typedef struct {
    hx_tgt_t *ctx;
    uint8_t id;
} hx_tgt_am_arg_t;

typedef struct {
    uct_completion_t super;
    hx_tgt_t *ctx;
} hx_tgt_flush_t;

struct hx_tgt {
    const char *dev;
    const char *out;
    unsigned num_eps;
    unsigned ep_a;
    unsigned long msgs;

    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_md_h md;
    uct_iface_h iface[2]; /* X, Y */
    uct_iface_attr_t attr;
    int efd[2];
    uct_ep_h *eps[2];
    unsigned failed[2];

    uint64_t *next_seq; /* per X endpoint */
    uint64_t received;
    uint64_t misordered;
    uint64_t others[HX_AM_ID_MAX];
    hx_tgt_am_arg_t am_args[HX_AM_ID_MAX];
    unsigned flushes;
};

static volatile sig_atomic_t hx_tgt_go;

static void hx_tgt_on_usr1(int sig)
{
    hx_tgt_go = 1;
}

static int hx_tgt_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "target: %s failed: %s\n", what, ucs_status_string(status));
    return -1;
}

static ucs_status_t hx_tgt_am(void *arg, void *data, size_t length,
                              unsigned flags)
{
    hx_tgt_am_arg_t *a = arg;
    hx_tgt_t *ctx      = a->ctx;
    uint64_t seq;
    uint32_t ep;

    if ((a->id != HX_TGT_AM_ID) || (length != HX_TGT_AM_LEN)) {
        ++ctx->others[a->id];
        return UCS_OK;
    }
    memcpy(&seq, data, sizeof(seq));
    memcpy(&ep, (char *)data + sizeof(seq), sizeof(ep));
    if ((ep >= ctx->num_eps) || (seq != ctx->next_seq[ep])) {
        ++ctx->misordered;
    } else {
        ++ctx->next_seq[ep];
        ++ctx->received;
    }
    return UCS_OK;
}

static ucs_status_t hx_tgt_err(void *arg, uct_ep_h ep, ucs_status_t status)
{
    unsigned *failed = arg;

    ++*failed;
    fprintf(stderr, "target: an endpoint failed: %s\n",
            ucs_status_string(status));
    return UCS_OK;
}

static int hx_tgt_iface_open(hx_tgt_t *ctx, int i, uct_iface_h *iface_p)
{
    const char *what;
    ucs_status_t status;

    status = test_uct_iface_open(ctx->md, ctx->worker, "tcp", ctx->dev,
                                 hx_tgt_err, &ctx->failed[i], iface_p, &what);
    return (status == UCS_OK) ? 0 : hx_tgt_fail(what, status);
}

/* The port of an interface address (network order, first) */
static unsigned hx_tgt_port(uct_iface_h iface)
{
    uint8_t addr[HX_IFACE_ADDR_LEN];

    if (uct_iface_get_address(iface, (uct_iface_addr_t *)addr) != UCS_OK) {
        return 0;
    }
    return ((unsigned)addr[0] << 8) | addr[1];
}

/* Opens X and Y; X is the one with the larger port, which waits for its
 * endpoints' peers to connect */
static int hx_tgt_setup(hx_tgt_t *ctx)
{
    const char *what;
    ucs_status_t status;
    uct_iface_h tmp;
    unsigned i;

    status = test_uct_md_find("tcp", ctx->dev, &ctx->md, NULL);
    if (status != UCS_OK) {
        return hx_tgt_fail("finding tcp on the device", status);
    }
    status = test_uct_worker_open(&ctx->async, &ctx->worker, &what);
    if (status != UCS_OK) {
        return hx_tgt_fail(what, status);
    }
    for (i = 0; i < 2; ++i) {
        if (hx_tgt_iface_open(ctx, i, &ctx->iface[i]) != 0) {
            return -1;
        }
    }
    if (hx_tgt_port(ctx->iface[0]) < hx_tgt_port(ctx->iface[1])) {
        tmp           = ctx->iface[0];
        ctx->iface[0] = ctx->iface[1];
        ctx->iface[1] = tmp;
    }

    status = uct_iface_query(ctx->iface[0], &ctx->attr);
    if (status != UCS_OK) {
        return hx_tgt_fail("uct_iface_query", status);
    }
    if (!(ctx->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP) ||
        (ctx->attr.iface_addr_len != HX_IFACE_ADDR_LEN)) {
        fprintf(stderr,
                "target: tcp/%s does not connect to endpoints, or its "
                "interface address is not %d bytes\n",
                ctx->dev, HX_IFACE_ADDR_LEN);
        return -1;
    }
    for (i = 0; i < HX_AM_ID_MAX; ++i) {
        ctx->am_args[i].ctx = ctx;
        ctx->am_args[i].id  = (uint8_t)i;
        status = uct_iface_set_am_handler(ctx->iface[0], (uint8_t)i, hx_tgt_am,
                                          &ctx->am_args[i], UCT_CB_FLAG_SYNC);
        if (status != UCS_OK) {
            return hx_tgt_fail("uct_iface_set_am_handler", status);
        }
    }
    for (i = 0; i < 2; ++i) {
        ctx->efd[i] = -1;
        if ((ctx->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) &&
            (uct_iface_event_fd_get(ctx->iface[i], &ctx->efd[i]) != UCS_OK)) {
            ctx->efd[i] = -1;
        }
        uct_iface_progress_enable(ctx->iface[i],
                                  UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    }
    return 0;
}

/* Progress; when there is nothing to do, sleep on the interfaces' event
 * fds for up to @a timeout_ms (1 ms where there are none) */
static void hx_tgt_wait(hx_tgt_t *ctx, int timeout_ms)
{
    struct timespec nap = {0, 1000 * 1000};
    struct pollfd pfd[2];
    unsigned i;

    if (uct_worker_progress(ctx->worker) != 0) {
        return;
    }
    for (i = 0; i < 2; ++i) {
        if (ctx->efd[i] < 0) {
            nanosleep(&nap, NULL);
            return;
        }
        if (uct_iface_event_arm(ctx->iface[i], UCT_EVENT_RECV) != UCS_OK) {
            return; /* busy: progress again */
        }
        pfd[i].fd     = ctx->efd[i];
        pfd[i].events = POLLIN;
    }
    poll(pfd, 2, timeout_ms);
}

/* X's device, interface and endpoint A addresses; written to a temporary
 * name and renamed, so that whoever waits for the file reads it whole */
static int hx_tgt_write_addr(hx_tgt_t *ctx)
{
    char dev[64], iface[64], ep[64], tmp[4096];
    ucs_status_t status;
    FILE *file;

    if ((ctx->attr.device_addr_len > sizeof(dev)) ||
        (ctx->attr.ep_addr_len > sizeof(ep))) {
        fprintf(stderr, "target: unexpectedly long addresses\n");
        return -1;
    }
    status =
        uct_iface_get_device_address(ctx->iface[0], (uct_device_addr_t *)dev);
    if (status == UCS_OK) {
        status =
            uct_iface_get_address(ctx->iface[0], (uct_iface_addr_t *)iface);
    }
    if (status == UCS_OK) {
        status =
            uct_ep_get_address(ctx->eps[0][ctx->ep_a], (uct_ep_addr_t *)ep);
    }
    if (status != UCS_OK) {
        return hx_tgt_fail("getting the addresses", status);
    }

    snprintf(tmp, sizeof(tmp), "%s.tmp", ctx->out);
    file = fopen(tmp, "w");
    if (file == NULL) {
        fprintf(stderr, "target: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    test_hex_line_write(file, "dev", dev, ctx->attr.device_addr_len);
    test_hex_line_write(file, "iface", iface, ctx->attr.iface_addr_len);
    test_hex_line_write(file, "ep", ep, ctx->attr.ep_addr_len);
    if ((fclose(file) != 0) || (rename(tmp, ctx->out) != 0)) {
        fprintf(stderr, "target: cannot write %s: %s\n", ctx->out,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* Connects the endpoints of @a side to those of the other side */
static int hx_tgt_connect(hx_tgt_t *ctx, unsigned side)
{
    char dev[64], addr[64];
    ucs_status_t status;
    unsigned i;

    status = uct_iface_get_device_address(ctx->iface[!side],
                                          (uct_device_addr_t *)dev);
    for (i = 0; (i < ctx->num_eps) && (status == UCS_OK); ++i) {
        status = uct_ep_get_address(ctx->eps[!side][i], (uct_ep_addr_t *)addr);
        if (status == UCS_OK) {
            status = uct_ep_connect_to_ep(ctx->eps[side][i],
                                          (uct_device_addr_t *)dev,
                                          (uct_ep_addr_t *)addr);
        }
    }
    if (status != UCS_OK) {
        return hx_tgt_fail(side ? "connecting Y's endpoints"
                                : "connecting X's endpoints",
                           status);
    }
    return 0;
}

/* Endpoints of both sides; X's are connected to Y's */
static int hx_tgt_eps_create(hx_tgt_t *ctx)
{
    uct_ep_params_t params;
    ucs_status_t status;
    unsigned side, i;

    for (side = 0; side < 2; ++side) {
        ctx->eps[side] = calloc(ctx->num_eps, sizeof(uct_ep_h));
        if (ctx->eps[side] == NULL) {
            fprintf(stderr, "target: out of memory\n");
            return -1;
        }
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
        params.iface      = ctx->iface[side];
        for (i = 0; i < ctx->num_eps; ++i) {
            status = uct_ep_create(&params, &ctx->eps[side][i]);
            if (status != UCS_OK) {
                ctx->eps[side][i] = NULL;
                return hx_tgt_fail("uct_ep_create", status);
            }
        }
    }
    return hx_tgt_connect(ctx, 0);
}

static void hx_tgt_flush_done(uct_completion_t *self)
{
    ++((hx_tgt_flush_t *)self)->ctx->flushes;
}

/* Y's endpoints connect, each sends its messages and is flushed; X must
 * receive them all. 0, or -1 when the time ran out. */
static int hx_tgt_traffic(hx_tgt_t *ctx)
{
    double deadline = hx_now() + HX_TGT_RUN_LIMIT;
    hx_tgt_flush_t *flush;
    uint64_t total = ctx->msgs * ctx->num_eps, sent = 0;
    uint32_t index;
    ucs_status_t status;
    unsigned i;
    int ret = -1;

    if (hx_tgt_connect(ctx, 1) != 0) {
        return -1;
    }

    /* message k goes on endpoint k % N: the endpoints interleave */
    while ((sent < total) && (hx_now() < deadline)) {
        index  = (uint32_t)(sent % ctx->num_eps);
        status = uct_ep_am_short(ctx->eps[1][index], HX_TGT_AM_ID,
                                 sent / ctx->num_eps, &index, sizeof(index));
        if (status == UCS_OK) {
            ++sent;
        } else if (status == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        } else {
            return hx_tgt_fail("uct_ep_am_short", status);
        }
    }

    flush = calloc(ctx->num_eps, sizeof(*flush));
    if (flush == NULL) {
        fprintf(stderr, "target: out of memory\n");
        return -1;
    }
    for (i = 0; (i < ctx->num_eps) && (hx_now() < deadline);) {
        flush[i].super.func   = hx_tgt_flush_done;
        flush[i].super.count  = 1;
        flush[i].super.status = UCS_OK;
        flush[i].ctx          = ctx;
        status = uct_ep_flush(ctx->eps[1][i], 0, &flush[i].super);
        if (status == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
            continue;
        }
        if (status == UCS_OK) {
            ++ctx->flushes;
        } else if (status != UCS_INPROGRESS) {
            ret = hx_tgt_fail("uct_ep_flush", status);
            goto out;
        }
        ++i;
    }
    while (((ctx->flushes < ctx->num_eps) || (ctx->received < total)) &&
           (hx_now() < deadline)) {
        uct_worker_progress(ctx->worker);
    }
    /* anything more (a duplicate) has a moment to arrive */
    for (deadline = hx_now() + 0.2; hx_now() < deadline;) {
        uct_worker_progress(ctx->worker);
    }
    ret = 0;
out:
    free(flush);
    return ret;
}

static int hx_tgt_report(const hx_tgt_t *ctx)
{
    uint64_t total = ctx->msgs * ctx->num_eps, others = 0;
    char list[HX_AM_ID_MAX * 32] = ""; /* ", id 31: N" each */
    size_t len                   = 0;
    unsigned i;

    for (i = 0; i < HX_AM_ID_MAX; ++i) {
        if ((ctx->others[i] > 0) && (len < sizeof(list))) {
            len += (size_t)snprintf(list + len, sizeof(list) - len,
                                    "%sid %u: %llu", (others > 0) ? ", " : " (",
                                    i, (unsigned long long)ctx->others[i]);
            others += ctx->others[i];
        }
    }
    printf("target: %u endpoint%s, %llu of %llu AMs from their peers, in "
           "order%s; %u failed; AMs from elsewhere: %llu%s%s\n",
           ctx->num_eps, (ctx->num_eps == 1) ? "" : "s",
           (unsigned long long)ctx->received, (unsigned long long)total,
           (ctx->misordered > 0) ? " (and some out of order or duplicated)"
                                 : "",
           ctx->failed[0] + ctx->failed[1], (unsigned long long)others, list,
           (others > 0) ? ")" : "");
    return ((ctx->received == total) && (ctx->misordered == 0) &&
            (ctx->failed[0] + ctx->failed[1] == 0))
               ? HX_EXIT_PASS
               : HX_EXIT_FAIL;
}

static void hx_tgt_cleanup(hx_tgt_t *ctx)
{
    unsigned side, i;

    for (side = 0; side < 2; ++side) {
        for (i = 0; (ctx->eps[side] != NULL) && (i < ctx->num_eps); ++i) {
            if (ctx->eps[side][i] != NULL) {
                uct_ep_destroy(ctx->eps[side][i]);
            }
        }
        free(ctx->eps[side]);
    }
    if (ctx->iface[1] != NULL) {
        uct_iface_close(ctx->iface[1]);
    }
    test_uct_close(ctx->iface[0], ctx->worker, ctx->async, ctx->md);
    free(ctx->next_seq);
}

static int hx_tgt_parse(hx_tgt_t *ctx, int argc, char **argv)
{
    unsigned long value;
    int c;

    optind = 1;
    while ((c = getopt(argc, argv, "o:d:c:a:n:")) != -1) {
        switch (c) {
        case 'o':
            ctx->out = optarg;
            break;
        case 'd':
            ctx->dev = optarg;
            break;
        case 'c':
        case 'a':
        case 'n':
            if (hx_parse_uint(c, optarg, (c == 'a') ? 0 : 1, 100000, &value) !=
                0) {
                return -1;
            }
            if (c == 'c') {
                ctx->num_eps = (unsigned)value;
            } else if (c == 'a') {
                ctx->ep_a = (unsigned)value;
            } else {
                ctx->msgs = value;
            }
            break;
        default:
            return -1;
        }
    }
    if ((ctx->out == NULL) || (optind != argc) || (ctx->ep_a >= ctx->num_eps)) {
        fprintf(stderr, "%s target: wants -o FILE, and -a below -c (see -h)\n",
                HX_PROG);
        return -1;
    }
    return 0;
}

int hx_target_main(int argc, char **argv)
{
    struct sigaction sa;
    hx_tgt_t ctx;
    double give_up;
    int ret = HX_EXIT_SETUP;

    memset(&ctx, 0, sizeof(ctx));
    ctx.dev     = "lo";
    ctx.num_eps = 8;
    ctx.ep_a    = 2;
    ctx.msgs    = 100;
    if (hx_tgt_parse(&ctx, argc, argv) != 0) {
        return HX_EXIT_SETUP;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = hx_tgt_on_usr1;
    sigaction(SIGUSR1, &sa, NULL);

    ctx.next_seq = calloc(ctx.num_eps, sizeof(*ctx.next_seq));
    if ((ctx.next_seq == NULL) || (hx_tgt_setup(&ctx) != 0) ||
        (hx_tgt_eps_create(&ctx) != 0) || (hx_tgt_write_addr(&ctx) != 0)) {
        goto out;
    }
    printf("target: tcp/%s port %u, %u endpoints waiting for their peers, "
           "endpoint A is index %u; SIGUSR1 starts the peers\n",
           ctx.dev, hx_tgt_port(ctx.iface[0]), ctx.num_eps, ctx.ep_a);
    fflush(stdout);

    give_up = hx_now() + HX_TGT_WAIT_GO;
    while (!hx_tgt_go) {
        if (hx_now() > give_up) {
            fprintf(stderr, "target: no SIGUSR1 within %.0f s\n",
                    HX_TGT_WAIT_GO);
            goto out;
        }
        hx_tgt_wait(&ctx, 100);
    }
    ret = (hx_tgt_traffic(&ctx) == 0) ? HX_EXIT_PASS : HX_EXIT_FAIL;
    if (hx_tgt_report(&ctx) != HX_EXIT_PASS) {
        ret = HX_EXIT_FAIL;
    }
out:
    hx_tgt_cleanup(&ctx);
    return ret;
}
