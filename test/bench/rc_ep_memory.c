/*
 * Memory of connected rc_verbs endpoints. One process opens two rc_verbs
 * interfaces on one device and connects N endpoints in N/2 pairs, each
 * endpoint of interface A to one of interface B (uct_ep_connect_to_ep both
 * ways), then sends one active message on every endpoint of A and waits
 * until B received them all: every QP is then connected, used and idle.
 *
 * Two figures per endpoint (one endpoint is one RC QP):
 *   heap     glibc's mallinfo2() uordblks + hblkhd of the main arena, i.e.
 *            what this thread malloc()s: the uct_rc_ep_t, the iface's
 *            qp_num index, and what libibverbs and its provider allocate
 *            per QP (the provider's QP object). The queues a provider maps
 *            from the kernel are not heap.
 *   kernel   /proc/meminfo deltas: Slab (the kernel's QP object, its
 *            socket, the uverbs object), VmallocUsed (the send queue rxe
 *            allocates with vmalloc_user and maps into the process),
 *            PageTables, and MemFree, which holds them all plus the heap.
 * Samples: base (interfaces open, one pair made and destroyed), connected
 * (N endpoints idle), and after destroying them. The round runs twice;
 * the second one is the figure (the first includes pool growth).
 *
 * A third phase (-v) creates N bare RC QPs with libibverbs alone, with the
 * same capabilities, and reports their heap per QP: the part of the heap
 * figure that belongs to the provider.
 *
 * Usage: rc_ep_memory [-n EPS] [-d DEV:PORT] [-v] [-q]
 */
#define _GNU_SOURCE

#include <uct/api/uct.h>
#include <uct/ib/rc/rc.h>
#include <common/uct_md_find.h>
#include <ucs/async/async.h>

#include <infiniband/verbs.h>

#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEM_DEFAULT_EPS     1000
#define MEM_TARGET_BYTES    128   /* heap per endpoint */
#define MEM_BATCH           64    /* endpoints sent to at once */
#define MEM_AM_ID           7
#define MEM_TIMEOUT_SEC     120.0 /* bound on every wait */
#define MEM_SETTLE_SEC      0.2

typedef struct {
    uct_iface_h      iface;
    uct_iface_attr_t attr;
    void             *dev_addr;
} mem_iface_t;

typedef struct {
    const char          *dev_name;
    unsigned            num_eps;   /* both interfaces together */
    int                 quiet;
    ucs_async_context_t *async;
    uct_worker_h        worker;
    uct_md_h            md;
    mem_iface_t         a;
    mem_iface_t         b;
    uct_ep_h            *eps_a;
    uct_ep_h            *eps_b;
    unsigned long       received;
} mem_ctx_t;

/* /proc/meminfo fields, in bytes */
enum {
    MEMINFO_FREE,
    MEMINFO_AVAILABLE,
    MEMINFO_SLAB,
    MEMINFO_SUNRECLAIM,
    MEMINFO_VMALLOC,
    MEMINFO_PAGETABLES,
    MEMINFO_LAST
};

static const char *meminfo_names[MEMINFO_LAST] = {
    [MEMINFO_FREE]       = "MemFree",
    [MEMINFO_AVAILABLE]  = "MemAvailable",
    [MEMINFO_SLAB]       = "Slab",
    [MEMINFO_SUNRECLAIM] = "SUnreclaim",
    [MEMINFO_VMALLOC]    = "VmallocUsed",
    [MEMINFO_PAGETABLES] = "PageTables"
};

typedef struct {
    size_t heap;
    long   rss;                      /* VmRSS, bytes */
    long   meminfo[MEMINFO_LAST];    /* bytes; -1 when not read */
} mem_sample_t;

static double mem_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static size_t mem_heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}

/* "Name:   1234 kB" lines of @a path: the value of @a name in bytes */
static long mem_kb_field(const char *path, const char *name)
{
    size_t len = strlen(name);
    char line[256];
    long value = -1;
    FILE *f;

    f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if ((strncmp(line, name, len) == 0) && (line[len] == ':')) {
            value = strtol(line + len + 1, NULL, 10) * 1024;
            break;
        }
    }
    fclose(f);
    return value;
}

static void mem_sample(mem_sample_t *s)
{
    int i;

    s->heap = mem_heap_in_use();
    s->rss  = mem_kb_field("/proc/self/status", "VmRSS");
    for (i = 0; i < MEMINFO_LAST; ++i) {
        s->meminfo[i] = mem_kb_field("/proc/meminfo", meminfo_names[i]);
    }
}

static int mem_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "rc_ep_memory: %s failed: %s\n", what,
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

static int mem_iface_open(mem_ctx_t *ctx, mem_iface_t *mi)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    ucs_status_t status;

    status = uct_md_iface_config_read(ctx->md, UCT_RC_VERBS_NAME, NULL, NULL,
                                      &config);
    if (status != UCS_OK) {
        return mem_fail("uct_md_iface_config_read", status);
    }

    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = UCT_RC_VERBS_NAME;
    params.mode.device.dev_name = ctx->dev_name;

    status = uct_iface_open(ctx->md, ctx->worker, &params, config,
                            &mi->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        mi->iface = NULL;
        return mem_fail("uct_iface_open", status);
    }

    status = uct_iface_query(mi->iface, &mi->attr);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_query", status);
    }
    if (!(mi->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP) ||
        !(mi->attr.cap.flags & UCT_IFACE_FLAG_AM_SHORT)) {
        fprintf(stderr, "rc_ep_memory: rc_verbs/%s cannot connect to an "
                "endpoint or lacks am_short\n", ctx->dev_name);
        return -1;
    }

    mi->dev_addr = calloc(1, mi->attr.device_addr_len + 1);
    if (mi->dev_addr == NULL) {
        fprintf(stderr, "rc_ep_memory: out of memory for an address\n");
        return -1;
    }
    status = uct_iface_get_device_address(mi->iface, mi->dev_addr);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_get_device_address", status);
    }

    status = uct_iface_set_am_handler(mi->iface, MEM_AM_ID, mem_am_handler,
                                      ctx, UCT_CB_FLAG_SYNC);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_set_am_handler", status);
    }
    uct_iface_progress_enable(mi->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

static void mem_iface_close(mem_iface_t *mi)
{
    if (mi->iface != NULL) {
        uct_iface_close(mi->iface);
    }
    free(mi->dev_addr);
}

/* Creates one endpoint on each interface and connects them to each other.
 * The address buffers are the caller's, so the heap holds only what the
 * endpoints keep. */
static int mem_pair_create(mem_ctx_t *ctx, uct_ep_h *ep_a, uct_ep_h *ep_b,
                           void *addr_a, void *addr_b)
{
    uct_ep_params_t params;
    ucs_status_t status;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = ctx->a.iface;
    status = uct_ep_create(&params, ep_a);
    if (status != UCS_OK) {
        *ep_a = NULL;
        return mem_fail("uct_ep_create", status);
    }
    params.iface = ctx->b.iface;
    status = uct_ep_create(&params, ep_b);
    if (status != UCS_OK) {
        *ep_b = NULL;
        return mem_fail("uct_ep_create", status);
    }

    status = uct_ep_get_address(*ep_a, addr_a);
    if (status == UCS_OK) {
        status = uct_ep_get_address(*ep_b, addr_b);
    }
    if (status != UCS_OK) {
        return mem_fail("uct_ep_get_address", status);
    }
    status = uct_ep_connect_to_ep(*ep_a, ctx->b.dev_addr, addr_b);
    if (status == UCS_OK) {
        status = uct_ep_connect_to_ep(*ep_b, ctx->a.dev_addr, addr_a);
    }
    if (status != UCS_OK) {
        return mem_fail("uct_ep_connect_to_ep", status);
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
            fprintf(stderr, "rc_ep_memory: an endpoint had no send "
                    "resources for %.0f s\n", MEM_TIMEOUT_SEC);
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
            fprintf(stderr, "rc_ep_memory: received %lu of %lu messages in "
                    "%.0f s\n", ctx->received, count, MEM_TIMEOUT_SEC);
            return -1;
        }
        uct_worker_progress(ctx->worker);
    }
    return 0;
}

static void mem_comp_cb(uct_completion_t *self)
{
}

static int mem_flush(mem_ctx_t *ctx, uct_iface_h iface)
{
    double deadline       = mem_now() + MEM_TIMEOUT_SEC;
    uct_completion_t comp = {.func = mem_comp_cb, .count = 1,
                             .status = UCS_OK};
    ucs_status_t status;

    do {
        status = uct_iface_flush(iface, 0, &comp);
        if (status == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        }
    } while ((status == UCS_ERR_NO_RESOURCE) && (mem_now() < deadline));

    if (status == UCS_INPROGRESS) {
        while ((comp.count > 0) && (mem_now() < deadline)) {
            uct_worker_progress(ctx->worker);
        }
        status = (comp.count > 0) ? UCS_ERR_TIMED_OUT : comp.status;
    }
    if (status != UCS_OK) {
        return mem_fail("uct_iface_flush", status);
    }
    return 0;
}

static void mem_settle(mem_ctx_t *ctx)
{
    double deadline = mem_now() + MEM_SETTLE_SEC;

    while (mem_now() < deadline) {
        uct_worker_progress(ctx->worker);
    }
}

/* Connects @a pairs pairs and sends one AM on each A endpoint */
static int mem_connect(mem_ctx_t *ctx, uct_ep_h *eps_a, uct_ep_h *eps_b,
                       unsigned pairs)
{
    unsigned long expected = ctx->received;
    void *addr_a, *addr_b;
    unsigned i, j, n;
    int ret = -1;

    addr_a = calloc(1, ctx->a.attr.ep_addr_len + 1);
    addr_b = calloc(1, ctx->b.attr.ep_addr_len + 1);
    if ((addr_a == NULL) || (addr_b == NULL)) {
        fprintf(stderr, "rc_ep_memory: out of memory for addresses\n");
        goto out;
    }

    for (i = 0; i < pairs; ++i) {
        if (mem_pair_create(ctx, &eps_a[i], &eps_b[i], addr_a,
                            addr_b) != 0) {
            goto out;
        }
    }
    for (i = 0; i < pairs; i += n) {
        n = ucs_min(pairs - i, MEM_BATCH);
        for (j = i; j < i + n; ++j) {
            if (mem_ep_send(ctx, eps_a[j], j) != 0) {
                goto out;
            }
        }
        expected += n;
        if (mem_wait_received(ctx, expected) != 0) {
            goto out;
        }
    }
    ret = ((mem_flush(ctx, ctx->a.iface) == 0) &&
           (mem_flush(ctx, ctx->b.iface) == 0)) ? 0 : -1;
    mem_settle(ctx);

out:
    free(addr_a);
    free(addr_b);
    return ret;
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

static double mem_per(long after, long before, unsigned count)
{
    return ((double)after - (double)before) / count;
}

/* Samples of one round: base, connected, destroyed */
typedef struct {
    mem_sample_t base;
    mem_sample_t conn;
    mem_sample_t gone;
    double       connect_sec;
    size_t       index_bytes;   /* both ifaces' qp_num index tables */
} mem_round_t;

static size_t mem_index_bytes(mem_ctx_t *ctx)
{
    const uct_rc_ep_table_t *a = &uct_rc_iface(ctx->a.iface)->eps;
    const uct_rc_ep_table_t *b = &uct_rc_iface(ctx->b.iface)->eps;

    return ((size_t)a->mask + 1 + b->mask + 1) * sizeof(*a->slots);
}

static int mem_round(mem_ctx_t *ctx, mem_round_t *r)
{
    unsigned pairs = ctx->num_eps / 2;
    double t0;

    mem_sample(&r->base);
    t0 = mem_now();
    if (mem_connect(ctx, ctx->eps_a, ctx->eps_b, pairs) != 0) {
        return -1;
    }
    r->connect_sec = mem_now() - t0;
    mem_sample(&r->conn);
    r->index_bytes = mem_index_bytes(ctx);
    mem_destroy_eps(ctx->eps_a, pairs);
    mem_destroy_eps(ctx->eps_b, pairs);
    mem_settle(ctx);
    mem_sample(&r->gone);
    return 0;
}

static void mem_print_round(const char *name, const mem_round_t *r,
                            unsigned n)
{
    int i;

    printf("  %-6s %8.0f %8.0f", name,
           mem_per(r->conn.heap, r->base.heap, n),
           mem_per(r->conn.heap, r->gone.heap, n));
    for (i = 0; i < MEMINFO_LAST; ++i) {
        /* memory taken is what MemFree/MemAvailable lost */
        if ((i == MEMINFO_FREE) || (i == MEMINFO_AVAILABLE)) {
            printf(" %9.0f", mem_per(r->base.meminfo[i], r->conn.meminfo[i],
                                     n));
        } else {
            printf(" %9.0f", mem_per(r->conn.meminfo[i], r->base.meminfo[i],
                                     n));
        }
    }
    printf(" %8.0f %7.1f\n", mem_per(r->conn.rss, r->base.rss, n),
           r->connect_sec);
}

/* ------------------------------------------------------------------------
 * Bare QPs with libibverbs alone: the provider's heap per QP
 */
static int mem_raw_verbs(mem_ctx_t *ctx, const uct_rc_iface_t *rc,
                         double *heap_per_qp)
{
    struct ibv_device **list;
    struct ibv_context *ibctx = NULL;
    struct ibv_pd *pd         = NULL;
    struct ibv_cq *cq         = NULL;
    struct ibv_srq *srq       = NULL;
    struct ibv_qp **qps;
    struct ibv_qp_init_attr attr;
    struct ibv_srq_init_attr srq_attr;
    char dev[64];
    size_t before, after;
    unsigned i, n = ctx->num_eps;
    int num, ret = -1;

    snprintf(dev, sizeof(dev), "%s", ctx->dev_name);
    dev[strcspn(dev, ":")] = '\0';

    qps = calloc(n, sizeof(*qps));
    if (qps == NULL) {
        return -1;
    }
    list = ibv_get_device_list(&num);
    for (i = 0; (list != NULL) && (i < (unsigned)num); ++i) {
        if (!strcmp(ibv_get_device_name(list[i]), dev)) {
            ibctx = ibv_open_device(list[i]);
            break;
        }
    }
    if (list != NULL) {
        ibv_free_device_list(list);
    }
    if (ibctx == NULL) {
        fprintf(stderr, "rc_ep_memory: cannot open %s with libibverbs\n",
                dev);
        goto out;
    }
    pd = ibv_alloc_pd(ibctx);
    cq = (pd != NULL) ? ibv_create_cq(ibctx, 1024, NULL, NULL, 0) : NULL;
    memset(&srq_attr, 0, sizeof(srq_attr));
    srq_attr.attr.max_wr  = 64;
    srq_attr.attr.max_sge = 1;
    srq = (cq != NULL) ? ibv_create_srq(pd, &srq_attr) : NULL;
    if (srq == NULL) {
        fprintf(stderr, "rc_ep_memory: pd/cq/srq on %s failed: %m\n", dev);
        goto out;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_type             = IBV_QPT_RC;
    attr.send_cq             = cq;
    attr.recv_cq             = cq;
    attr.srq                 = srq;
    attr.cap.max_send_wr     = rc->config.tx_queue_len;
    attr.cap.max_send_sge    = rc->config.max_iov + 1;
    attr.cap.max_inline_data = (uint32_t)rc->config.max_inline;

    before = mem_heap_in_use();
    for (i = 0; i < n; ++i) {
        qps[i] = ibv_create_qp(pd, &attr);
        if (qps[i] == NULL) {
            fprintf(stderr, "rc_ep_memory: bare QP %u of %u failed: %m\n",
                    i + 1, n);
            goto out;
        }
    }
    after        = mem_heap_in_use();
    *heap_per_qp = mem_per(after, before, n);
    ret          = 0;

out:
    for (i = 0; i < n; ++i) {
        if (qps[i] != NULL) {
            ibv_destroy_qp(qps[i]);
        }
    }
    free(qps);
    if (srq != NULL) {
        ibv_destroy_srq(srq);
    }
    if (cq != NULL) {
        ibv_destroy_cq(cq);
    }
    if (pd != NULL) {
        ibv_dealloc_pd(pd);
    }
    if (ibctx != NULL) {
        ibv_close_device(ibctx);
    }
    return ret;
}

/* glibc's chunk for a malloc of @a size: the size plus its 8-byte header,
 * rounded up to 16, at least 32 */
static size_t mem_chunk(size_t size)
{
    size_t chunk = (size + 8 + 15) & ~(size_t)15;

    return (chunk < 32) ? 32 : chunk;
}

static int mem_run(mem_ctx_t *ctx, int raw_verbs)
{
    const uct_rc_iface_t *rc = uct_rc_iface(ctx->a.iface);
    uct_ep_h warm_a = NULL, warm_b = NULL;
    mem_round_t first, second;
    double raw_heap = -1;
    unsigned n      = ctx->num_eps;
    int i;

    /* One pair first, so lazily created shared state is not charged to
     * the measured endpoints */
    if (mem_connect(ctx, &warm_a, &warm_b, 1) != 0) {
        return -1;
    }
    mem_destroy_eps(&warm_a, 1);
    mem_destroy_eps(&warm_b, 1);
    mem_settle(ctx);

    if ((mem_round(ctx, &first) != 0) || (mem_round(ctx, &second) != 0)) {
        return -1;
    }
    if (raw_verbs && (mem_raw_verbs(ctx, rc, &raw_heap) != 0)) {
        return -1;
    }
    if (second.conn.heap == 0) {
        printf("rc_ep_memory: mallinfo2() reports no heap in use (another "
               "allocator?): no figure\n");
        return 0;
    }

    if (!ctx->quiet) {
        printf("rc_verbs/%s: %u connected endpoints (%u pairs between two "
               "interfaces), send queue %u (TX_QUEUE_LEN), %u SGEs, inline "
               "%zu\n", ctx->dev_name, n, n / 2, rc->config.tx_queue_len,
               rc->config.max_iov + 1, rc->config.max_inline);
        printf("per endpoint, bytes (heap: conn = connected - base, ep = "
               "connected - destroyed;\n  kernel: /proc/meminfo deltas; rss: "
               "VmRSS delta; s: seconds to connect):\n");
        printf("  %-6s %8s %8s", "round", "heap", "heap-ep");
        for (i = 0; i < MEMINFO_LAST; ++i) {
            printf(" %9.9s", meminfo_names[i]);
        }
        printf(" %8s %7s\n", "rss", "s");
        mem_print_round("first", &first, n);
        mem_print_round("second", &second, n);
        printf("breakdown: sizeof(uct_rc_ep_t) %zu (malloc chunk %zu); "
               "qp_num index %zu bytes in all = %.1f per ep",
               sizeof(uct_rc_ep_t), mem_chunk(sizeof(uct_rc_ep_t)),
               second.index_bytes, (double)second.index_bytes / n);
        if (raw_heap >= 0) {
            printf("; a bare ibv_create_qp() %.0f", raw_heap);
        }
        printf("\n");
    }

    /* One machine-readable line for scripts */
    printf("result eps=%u txq=%u heap=%.0f heap_ep=%.0f", n,
           rc->config.tx_queue_len,
           mem_per(second.conn.heap, second.base.heap, n),
           mem_per(second.conn.heap, second.gone.heap, n));
    printf(" memfree=%.0f slab=%.0f sunreclaim=%.0f vmalloc=%.0f "
           "pagetables=%.0f rss=%.0f",
           mem_per(second.base.meminfo[MEMINFO_FREE],
                   second.conn.meminfo[MEMINFO_FREE], n),
           mem_per(second.conn.meminfo[MEMINFO_SLAB],
                   second.base.meminfo[MEMINFO_SLAB], n),
           mem_per(second.conn.meminfo[MEMINFO_SUNRECLAIM],
                   second.base.meminfo[MEMINFO_SUNRECLAIM], n),
           mem_per(second.conn.meminfo[MEMINFO_VMALLOC],
                   second.base.meminfo[MEMINFO_VMALLOC], n),
           mem_per(second.conn.meminfo[MEMINFO_PAGETABLES],
                   second.base.meminfo[MEMINFO_PAGETABLES], n),
           mem_per(second.conn.rss, second.base.rss, n));
    printf(" slab1=%.0f vmalloc1=%.0f ep_struct=%zu ep_chunk=%zu "
           "index=%.1f raw_qp_heap=%.0f connect_s=%.1f\n",
           mem_per(first.conn.meminfo[MEMINFO_SLAB],
                   first.base.meminfo[MEMINFO_SLAB], n),
           mem_per(first.conn.meminfo[MEMINFO_VMALLOC],
                   first.base.meminfo[MEMINFO_VMALLOC], n),
           sizeof(uct_rc_ep_t), mem_chunk(sizeof(uct_rc_ep_t)),
           (double)second.index_bytes / n, raw_heap, second.connect_sec);
    if (!ctx->quiet) {
        printf("rc_verbs heap per connected ep: %.0f bytes (target <= %d)\n",
               mem_per(second.conn.heap, second.base.heap, n),
               MEM_TARGET_BYTES);
    }
    return 0;
}

static void mem_usage(void)
{
    printf("usage: rc_ep_memory [-n EPS] [-d DEV:PORT] [-v] [-q]\n"
           "  -n EPS       connected endpoints, both interfaces together, "
           "an even number\n"
           "               (default %d)\n"
           "  -d DEV:PORT  rc_verbs device (default rxe_lo:1)\n"
           "  -v           also create EPS bare QPs with libibverbs: the "
           "provider's heap\n"
           "  -q           only the machine-readable result line\n"
           "UCX_IB_TX_QUEUE_LEN and the other UCX_RC_VERBS_*/UCX_RC_*/UCX_IB_* "
           "variables apply.\n", MEM_DEFAULT_EPS);
}

int main(int argc, char **argv)
{
    mem_ctx_t ctx;
    ucs_status_t status;
    int raw_verbs = 0;
    char *end;
    int c, ret = 1;

    memset(&ctx, 0, sizeof(ctx));
    ctx.dev_name = "rxe_lo:1";
    ctx.num_eps  = MEM_DEFAULT_EPS;

    while ((c = getopt(argc, argv, "n:d:vqh")) != -1) {
        switch (c) {
        case 'n':
            ctx.num_eps = strtoul(optarg, &end, 10);
            if ((*end != '\0') || (ctx.num_eps < 2) ||
                (ctx.num_eps % 2 != 0)) {
                fprintf(stderr, "rc_ep_memory: -n wants an even number of "
                        "at least 2, not '%s'\n", optarg);
                return 1;
            }
            break;
        case 'd':
            ctx.dev_name = optarg;
            break;
        case 'v':
            raw_verbs = 1;
            break;
        case 'q':
            ctx.quiet = 1;
            break;
        case 'h':
            mem_usage();
            return 0;
        default:
            mem_usage();
            return 1;
        }
    }

    ctx.eps_a = calloc(ctx.num_eps / 2, sizeof(*ctx.eps_a));
    ctx.eps_b = calloc(ctx.num_eps / 2, sizeof(*ctx.eps_b));
    if ((ctx.eps_a == NULL) || (ctx.eps_b == NULL)) {
        fprintf(stderr, "rc_ep_memory: out of memory for %u endpoint "
                "handles\n", ctx.num_eps);
        goto out;
    }

    status = test_uct_md_find(UCT_RC_VERBS_NAME, ctx.dev_name, &ctx.md,
                              NULL);
    if (status == UCS_ERR_NO_DEVICE) {
        fprintf(stderr, "rc_ep_memory: rc_verbs on %s not found (run it "
                "where an RDMA device is, e.g. contrib/bench/"
                "rc_ep_memory.sh; uct_info -d lists the devices)\n",
                ctx.dev_name);
        goto out;
    } else if (status != UCS_OK) {
        mem_fail("uct_query_components", status);
        goto out;
    }
    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                      &ctx.async);
    if (status != UCS_OK) {
        ctx.async = NULL;
        mem_fail("ucs_async_context_create", status);
        goto out;
    }
    status = uct_worker_create(ctx.async, UCS_THREAD_MODE_SINGLE,
                               &ctx.worker);
    if (status != UCS_OK) {
        ctx.worker = NULL;
        mem_fail("uct_worker_create", status);
        goto out;
    }
    if ((mem_iface_open(&ctx, &ctx.a) != 0) ||
        (mem_iface_open(&ctx, &ctx.b) != 0)) {
        goto out;
    }

    ret = (mem_run(&ctx, raw_verbs) == 0) ? 0 : 1;

out:
    if (ctx.eps_a != NULL) {
        mem_destroy_eps(ctx.eps_a, ctx.num_eps / 2);
    }
    if (ctx.eps_b != NULL) {
        mem_destroy_eps(ctx.eps_b, ctx.num_eps / 2);
    }
    mem_iface_close(&ctx.a);
    mem_iface_close(&ctx.b);
    if (ctx.worker != NULL) {
        uct_worker_destroy(ctx.worker);
    }
    if (ctx.async != NULL) {
        ucs_async_context_destroy(ctx.async);
    }
    if (ctx.md != NULL) {
        uct_md_close(ctx.md);
    }
    free(ctx.eps_a);
    free(ctx.eps_b);
    return ret;
}
