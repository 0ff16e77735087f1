/*
 * Heap footprint of idle connected tcp endpoints on loopback. One process
 * opens a client and a server tcp interface on a loopback device, then
 * connects N client endpoints to the server interface and sends one
 * active message on each, progressing until the server has received all
 * of them: every connection is then established and idle.
 *
 * Heap in use is ucs_sys_heap_in_use(): glibc's mallinfo2() uordblks +
 * hblkhd (kernel socket buffers are not counted), the definition every
 * openuct program uses, which ../common/heap_in_use.h writes out when
 * this program is built against UCX. It is read at five points:
 *   base      interfaces open, one warm-up connection made and torn down
 *   idle      N connections established (handshakes answered) and idle
 *   client-   after destroying the N client endpoints, before the server
 *   destroyed side has seen the closes (nothing progressed in between)
 *   end       after progressing until the server side let go too
 *   released  after progressing past the interfaces' idle deadline
 *             (MEM_IDLE_DEADLINE_SEC), when idle pool chunks go back
 * idle - client-destroyed is what the client endpoints held;
 * client-destroyed - end is what the server side kept per accepted
 * connection; end - base is what stayed behind (pool growth, or a leak);
 * released - base is what stays once the interfaces idled.
 * The whole round runs twice: growth that repeats in the second round is
 * lost memory, growth that does not is kept for reuse. The heap the
 * process holds from the system (arena + hblkhd: in use, plus freed
 * memory glibc did not give back) is printed beside the last figure.
 *
 * With -t self (device memory) the same is measured for the self
 * transport, whose endpoints have no server side; the targets are tcp's
 * and are checked for tcp only. The last line, "ep-memory: ...", is the
 * summary test/bench/ep_memory_table.sh collects.
 *
 * Usage: tcp_ep_memory [-t TL] [-n EPS] [-d DEV]
 */
#define _GNU_SOURCE

#include <uct/api/uct.h>
#include <common/uct_md_find.h>
#include "../common/heap_in_use.h"

#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MEM_DEFAULT_EPS   1000
#define MEM_TARGET_BYTES  160         /* per idle endpoint, each side */
#define MEM_RELEASE_SLACK (64 * 1024) /* kept after the idle deadline */
/* The tcp interface's housekeeping period (UCT_TCP_HOUSEKEEPING_SEC)
 * plus a margin for the pass that notices it */
#define MEM_IDLE_DEADLINE_SEC 1.2
#define MEM_BATCH             64 /* connects in flight at once */
#define MEM_AM_ID             5
#define MEM_FDS_RESERVED      64   /* descriptors left for everything else */
#define MEM_TIMEOUT_SEC       60.0 /* bound on every wait */
#define MEM_SETTLE_SEC        0.2  /* progress after the closes */

typedef struct {
    uct_iface_h iface;
    uct_iface_attr_t attr;
    void *dev_addr;
    void *iface_addr;
} mem_iface_t;

typedef struct {
    const char *tl_name;
    const char *dev_name;
    unsigned num_eps;
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_md_h md;
    mem_iface_t client;
    mem_iface_t server;
    uct_ep_h *eps;
    unsigned long received;
} mem_ctx_t;

static double mem_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

/* What the heap holds from the system: in use or not */
static size_t mem_heap_held(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.arena + mi.hblkhd;
}

static int mem_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "tcp_ep_memory: %s failed: %s\n", what,
            ucs_status_string(status));
    return -1;
}

static ucs_status_t mem_am_handler(void *arg, void *data, size_t length,
                                   unsigned flags)
{
    mem_ctx_t *ctx = arg;

    ++ctx->received;
    return UCS_OK;
}

/* Every connection takes two descriptors here: the client's socket and
 * the one the server accepts. */
static void mem_raise_fd_limit(mem_ctx_t *ctx)
{
    struct rlimit rl;
    unsigned max_eps;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            getrlimit(RLIMIT_NOFILE, &rl);
        }
    }
    if (rl.rlim_cur == RLIM_INFINITY) {
        return;
    }
    max_eps = (rl.rlim_cur > 2 * MEM_FDS_RESERVED)
                  ? (unsigned)((rl.rlim_cur - MEM_FDS_RESERVED) / 2)
                  : 1;
    if (ctx->num_eps > max_eps) {
        printf("open file limit %llu allows %u connections in one "
               "process: measuring %u endpoints instead of %u (raise "
               "ulimit -n for more)\n",
               (unsigned long long)rl.rlim_cur, max_eps, max_eps, ctx->num_eps);
        ctx->num_eps = max_eps;
    }
}

/* Opens the tcp memory domain that lists ctx->dev_name */
static int mem_md_open(mem_ctx_t *ctx)
{
    ucs_status_t status;

    status = test_uct_md_find(ctx->tl_name, ctx->dev_name, &ctx->md, NULL);
    if (status == UCS_ERR_NO_DEVICE) {
        fprintf(stderr,
                "tcp_ep_memory: transport %s on device %s not "
                "found (is it built? uct_info -d lists the devices)\n",
                ctx->tl_name, ctx->dev_name);
        return -1;
    } else if (status != UCS_OK) {
        return mem_fail("uct_query_components", status);
    }
    return 0;
}

static int mem_iface_open(mem_ctx_t *ctx, mem_iface_t *mi)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    ucs_status_t status;

    status =
        uct_md_iface_config_read(ctx->md, ctx->tl_name, NULL, NULL, &config);
    if (status != UCS_OK) {
        return mem_fail("uct_md_iface_config_read", status);
    }

    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = ctx->tl_name;
    params.mode.device.dev_name = ctx->dev_name;

    status = uct_iface_open(ctx->md, ctx->worker, &params, config, &mi->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        mi->iface = NULL;
        return mem_fail("uct_iface_open", status);
    }

    status = uct_iface_query(mi->iface, &mi->attr);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_query", status);
    }
    if (!(mi->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) ||
        !(mi->attr.cap.flags & UCT_IFACE_FLAG_AM_SHORT)) {
        fprintf(stderr,
                "tcp_ep_memory: %s/%s cannot connect to an "
                "interface or lacks am_short\n",
                ctx->tl_name, ctx->dev_name);
        return -1;
    }

    mi->dev_addr   = calloc(1, mi->attr.device_addr_len + 1);
    mi->iface_addr = calloc(1, mi->attr.iface_addr_len + 1);
    if ((mi->dev_addr == NULL) || (mi->iface_addr == NULL)) {
        fprintf(stderr, "tcp_ep_memory: out of memory for addresses\n");
        return -1;
    }
    status = uct_iface_get_device_address(mi->iface, mi->dev_addr);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_get_device_address", status);
    }
    status = uct_iface_get_address(mi->iface, mi->iface_addr);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_get_address", status);
    }

    status =
        uct_iface_set_am_handler(mi->iface, MEM_AM_ID, mem_am_handler, ctx, 0);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_set_am_handler", status);
    }
    uct_iface_progress_enable(mi->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

static void mem_iface_close(mem_iface_t *mi)
{
    if (mi->iface != NULL) {
        uct_iface_close(mi->iface);
    }
    free(mi->dev_addr);
    free(mi->iface_addr);
}

static int mem_ep_create(mem_ctx_t *ctx, uct_ep_h *ep_p)
{
    uct_ep_params_t params;
    ucs_status_t status;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = ctx->client.iface;
    params.dev_addr   = ctx->server.dev_addr;
    params.iface_addr = ctx->server.iface_addr;

    status = uct_ep_create(&params, ep_p);
    if (status != UCS_OK) {
        return mem_fail("uct_ep_create", status);
    }
    return 0;
}

/* One 8-byte AM on @a ep, retried while the transport has no room */
static int mem_ep_send(mem_ctx_t *ctx, uct_ep_h ep, uint64_t value)
{
    double deadline = mem_now() + MEM_TIMEOUT_SEC;
    ucs_status_t status;

    for (;;) {
        status = uct_ep_am_short(ep, MEM_AM_ID, value, NULL, 0);
        if (status == UCS_OK) {
            return 0;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return mem_fail("uct_ep_am_short", status);
        } else if (mem_now() > deadline) {
            fprintf(stderr,
                    "tcp_ep_memory: an endpoint had no send "
                    "resources for %.0f s\n",
                    MEM_TIMEOUT_SEC);
            return -1;
        }
        uct_worker_progress(ctx->worker);
    }
}

static int mem_wait_received(mem_ctx_t *ctx, unsigned long count)
{
    double deadline = mem_now() + MEM_TIMEOUT_SEC;

    while (ctx->received < count) {
        if (mem_now() > deadline) {
            fprintf(stderr,
                    "tcp_ep_memory: the server received %lu of %lu "
                    "messages in %.0f s\n",
                    ctx->received, count, MEM_TIMEOUT_SEC);
            return -1;
        }
        uct_worker_progress(ctx->worker);
    }
    return 0;
}

/* Waits until the client interface has nothing outstanding */
static int mem_flush(mem_ctx_t *ctx)
{
    double deadline = mem_now() + MEM_TIMEOUT_SEC;
    ucs_status_t status;

    /* polled without a completion, which UCX's tcp requires too */
    for (;;) {
        status = uct_iface_flush(ctx->client.iface, 0, NULL);
        if (((status != UCS_ERR_NO_RESOURCE) && (status != UCS_INPROGRESS)) ||
            (mem_now() >= deadline)) {
            break;
        }
        uct_worker_progress(ctx->worker);
    }
    if (status != UCS_OK) {
        return mem_fail("uct_iface_flush", status);
    }
    return 0;
}

static void mem_progress_for(mem_ctx_t *ctx, double seconds)
{
    double deadline = mem_now() + seconds;

    while (mem_now() < deadline) {
        uct_worker_progress(ctx->worker);
    }
}

/* Connects eps[first .. first+count) and waits for one AM from each */
static int mem_connect(mem_ctx_t *ctx, uct_ep_h *eps, unsigned count)
{
    unsigned long expected = ctx->received;
    unsigned i, n;

    for (i = 0; i < count; i += n) {
        n = ((count - i) < MEM_BATCH) ? (count - i) : MEM_BATCH;
        for (unsigned j = i; j < i + n; ++j) {
            if (mem_ep_create(ctx, &eps[j]) != 0) {
                return -1;
            }
        }
        for (unsigned j = i; j < i + n; ++j) {
            if (mem_ep_send(ctx, eps[j], j) != 0) {
                return -1;
            }
        }
        expected += n;
        if (mem_wait_received(ctx, expected) != 0) {
            return -1;
        }
    }
    return mem_flush(ctx);
}

static void mem_destroy_eps(uct_ep_h *eps, unsigned count)
{
    unsigned i;

    for (i = 0; i < count; ++i) {
        if (eps[i] != NULL) {
            uct_ep_destroy(eps[i]);
            eps[i] = NULL;
        }
    }
}

/* Heap in use at the points of one round (see the top of the file) */
typedef struct {
    size_t base;
    size_t idle;
    size_t client_gone;
    size_t end;
    size_t released;
    size_t base_held;
    size_t released_held;
} mem_sample_t;

static int mem_round(mem_ctx_t *ctx, mem_sample_t *sample)
{
    unsigned n = ctx->num_eps;

    sample->base      = ucs_sys_heap_in_use();
    sample->base_held = mem_heap_held();
    if (mem_connect(ctx, ctx->eps, n) != 0) {
        return -1;
    }
    /* the last connections' handshake replies may still be on the way */
    mem_progress_for(ctx, MEM_SETTLE_SEC);
    sample->idle = ucs_sys_heap_in_use();
    mem_destroy_eps(ctx->eps, n);
    sample->client_gone = ucs_sys_heap_in_use();
    mem_progress_for(ctx, MEM_SETTLE_SEC);
    sample->end = ucs_sys_heap_in_use();
    mem_progress_for(ctx, MEM_IDLE_DEADLINE_SEC);
    sample->released      = ucs_sys_heap_in_use();
    sample->released_held = mem_heap_held();
    return 0;
}

static void mem_print_round(const char *name, const mem_sample_t *s, unsigned n)
{
    printf("  %-6s %10zu %10zu %10zu %10zu %10zu  %+6.0f %6.0f %6.0f "
           "%+6.0f %+6.0f\n",
           name, s->base, s->idle, s->client_gone, s->end, s->released,
           ucs_sys_heap_per_object(s->base, s->idle, n),
           ucs_sys_heap_per_object(s->client_gone, s->idle, n),
           ucs_sys_heap_per_object(s->end, s->client_gone, n),
           ucs_sys_heap_per_object(s->base, s->end, n),
           ucs_sys_heap_per_object(s->base, s->released, n));
}

/* One figure against its target: the ratio and PASS or FAIL */
static void mem_report(const char *what, double value, double target,
                       const char *unit)
{
    /* judged in whole bytes, as printed: a cost per remote host (the
     * 64-byte tcp peer entry) adds a fraction of a byte per ep */
    printf("%s: %.0f %s (target <= %.0f, ratio %.2f) %s\n", what, value, unit,
           target, value / target, (round(value) <= target) ? "PASS" : "FAIL");
}

static int mem_run(mem_ctx_t *ctx)
{
    mem_sample_t first, second;
    double client, server;
    uct_ep_h warmup = NULL;
    unsigned n      = ctx->num_eps;

    /* One connection first, so lazily created shared state is not
     * charged to the measured endpoints */
    if (mem_connect(ctx, &warmup, 1) != 0) {
        return -1;
    }
    mem_destroy_eps(&warmup, 1);
    mem_progress_for(ctx, MEM_SETTLE_SEC);

    /* The second round shows whether what the first left behind is kept
     * for reuse (pools: no new growth) or lost (grows again) */
    if ((mem_round(ctx, &first) != 0) || (mem_round(ctx, &second) != 0)) {
        return -1;
    }
    if (first.idle == 0) {
        printf("tcp_ep_memory: no heap in use reported (no mallinfo2(), "
               "another allocator, or valgrind?): no figure\n");
        return 0;
    }

    printf("%s\n", UCS_SYS_HEAP_DEFINITION);
    printf("heap in use (bytes), %u idle connections on %s/%s:\n", n,
           ctx->tl_name, ctx->dev_name);
    printf("  %-6s %10s %10s %10s %10s %10s  %6s %6s %6s %6s %6s\n", "round",
           "base", "idle", "cl-gone", "end", "released", "conn", "client",
           "server", "left", "kept");
    mem_print_round("first", &first, n);
    mem_print_round("second", &second, n);
    printf("  cl-gone: client eps destroyed, server side not yet "
           "progressed; end: it let go;\n"
           "  released: %.1f s of idle progress later (pool housekeeping)\n"
           "  per ep: conn = idle-base, client = idle-cl-gone, "
           "server = cl-gone-end,\n"
           "          left = end-base, kept = released-base\n",
           MEM_IDLE_DEADLINE_SEC);
    printf("heap held from the system (arena+hblkhd): %zu before the first "
           "round, %zu after it idled, %zu after the second\n",
           first.base_held, first.released_held, second.released_held);
    client = ucs_sys_heap_per_object(second.client_gone, second.idle, n);
    server = ucs_sys_heap_per_object(second.end, second.client_gone, n);
    printf("%s idle connection memory (client ep + server side, second "
           "round): %.0f bytes/ep\n",
           ctx->tl_name, ucs_sys_heap_per_object(second.base, second.idle, n));
    if (!strcmp(ctx->tl_name, "tcp")) {
        mem_report("tcp idle ep memory, client side", client, MEM_TARGET_BYTES,
                   "bytes/ep");
        mem_report("tcp idle ep memory, server side", server, MEM_TARGET_BYTES,
                   "bytes/ep");
        mem_report("heap kept after the idle deadline (first round)",
                   (double)first.released - (double)first.base,
                   MEM_RELEASE_SLACK, "bytes");
        mem_report("heap kept after the idle deadline (second round)",
                   (double)second.released - (double)second.base,
                   MEM_RELEASE_SLACK, "bytes");
    }
    printf("ep-memory: tl=%s eps=%u client=%.0f server=%.0f "
           "kept_first=%.0f kept_second=%.0f\n",
           ctx->tl_name, n, client, server,
           (double)first.released - (double)first.base,
           (double)second.released - (double)second.base);
    return 0;
}

static void mem_usage(void)
{
    printf("usage: tcp_ep_memory [-t TL] [-n EPS] [-d DEV]\n"
           "  -t TL    tcp (default) or self\n"
           "  -n EPS   idle endpoints to measure (default %d)\n"
           "  -d DEV   device (default lo for tcp, memory for self)\n",
           MEM_DEFAULT_EPS);
}

int main(int argc, char **argv)
{
    mem_ctx_t ctx;
    ucs_status_t status;
    char *end;
    int c, ret = 1;

    memset(&ctx, 0, sizeof(ctx));
    ctx.tl_name  = "tcp";
    ctx.dev_name = NULL;
    ctx.num_eps  = MEM_DEFAULT_EPS;

    while ((c = getopt(argc, argv, "t:n:d:h")) != -1) {
        switch (c) {
        case 't':
            ctx.tl_name = optarg;
            break;
        case 'n':
            ctx.num_eps = strtoul(optarg, &end, 10);
            if ((*end != '\0') || (ctx.num_eps == 0)) {
                fprintf(stderr,
                        "tcp_ep_memory: -n wants a positive "
                        "number, not '%s'\n",
                        optarg);
                return 1;
            }
            break;
        case 'd':
            ctx.dev_name = optarg;
            break;
        case 'h':
            mem_usage();
            return 0;
        default:
            mem_usage();
            return 1;
        }
    }

    if (ctx.dev_name == NULL) {
        ctx.dev_name = strcmp(ctx.tl_name, "tcp") ? "memory" : "lo";
    }
    mem_raise_fd_limit(&ctx);
    ctx.eps = calloc(ctx.num_eps, sizeof(*ctx.eps));
    if (ctx.eps == NULL) {
        fprintf(stderr,
                "tcp_ep_memory: out of memory for %u endpoint "
                "handles\n",
                ctx.num_eps);
        return 1;
    }

    if (mem_md_open(&ctx) != 0) {
        goto out;
    }
    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &ctx.async);
    if (status != UCS_OK) {
        ctx.async = NULL;
        mem_fail("ucs_async_context_create", status);
        goto out;
    }
    status = uct_worker_create(ctx.async, UCS_THREAD_MODE_SINGLE, &ctx.worker);
    if (status != UCS_OK) {
        ctx.worker = NULL;
        mem_fail("uct_worker_create", status);
        goto out;
    }
    if ((mem_iface_open(&ctx, &ctx.server) != 0) ||
        (mem_iface_open(&ctx, &ctx.client) != 0)) {
        goto out;
    }

    ret = (mem_run(&ctx) == 0) ? 0 : 1;

out:
    mem_destroy_eps(ctx.eps, ctx.num_eps);
    mem_iface_close(&ctx.client);
    mem_iface_close(&ctx.server);
    if (ctx.worker != NULL) {
        uct_worker_destroy(ctx.worker);
    }
    if (ctx.async != NULL) {
        ucs_async_context_destroy(ctx.async);
    }
    if (ctx.md != NULL) {
        uct_md_close(ctx.md);
    }
    free(ctx.eps);
    return ret;
}
