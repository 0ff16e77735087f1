/*
 * Memory and connection time of connected verbs endpoints (rc_verbs or
 * ud_verbs). One process opens two interfaces of the transport on one
 * device, A and B, and connects N endpoints in N/2 connections:
 *   ep     (CONNECT_TO_EP) an endpoint on A and one on B per connection,
 *          connected to each other with uct_ep_connect_to_ep() both ways;
 *   iface  (CONNECT_TO_IFACE, ud_verbs) an endpoint on A created with B's
 *          interface address; B makes its own private endpoint when the
 *          connection request arrives, so again two endpoints.
 * Then it sends one active message on every endpoint of A and waits until
 * B received them all: every endpoint is connected, used and idle. Both
 * sides' endpoints are counted: every per-endpoint figure is a total
 * divided by N, so a connection costs twice the figure.
 *
 * Per endpoint:
 *   heap     ucs_sys_heap_in_use() (UCS_SYS_HEAP_DEFINITION): glibc's
 *            mallinfo2() uordblks + hblkhd, every arena, so this includes
 *            what the async thread allocates (ud_verbs creates B's
 *            private endpoints there). M_ARENA_MAX is set to 1 first, as
 *            in the runs contrib/bench/README.md records: the async thread
 *            shares the main arena instead of bringing one of its own
 *            into the figures. It holds the endpoint structs,
 *            the interfaces' tables, and what libibverbs and its provider
 *            allocate per QP or address handle. Queues a provider maps
 *            from the kernel are not heap.
 *   kernel   /proc/meminfo deltas: Slab (the kernel's QP objects, their
 *            sockets, uverbs objects), VmallocUsed (send queues: rxe
 *            allocates them with vmalloc_user and maps them into the
 *            process), PageTables, and MemFree, which holds them all.
 *            Kernel memory per QP (MEM_KERNEL_QP_DEFINITION): the Slab
 *            and VmallocUsed growth divided by the QPs added (rc_verbs:
 *            one per endpoint); rxe's send slot size by its formula
 *            (MEM_RXE_WQE_HDR) next to it.
 *   objects  QPs the kernel holds (`rdma resource show`, when the tool is
 *            there) and address handles (ud_verbs' shared table).
 *   connect  per connection, from just before its endpoints were created
 *            until the first active message on it was received; made in
 *            batches (-B) of connections created together, then sent to.
 *   traffic  with every endpoint connected (first round): the time from
 *            uct_ep_am_short() to B's handler for one AM at a time on
 *            endpoints spread over all of them, and the rate of AMs sent
 *            round-robin over all of them. One thread polls both sides:
 *            compare transports, not with a two-process benchmark.
 * Samples: base (interfaces open, one connection made and destroyed),
 * connected (N endpoints idle), and after destroying the user's endpoints.
 * The round runs twice; the second one is the figure (the first includes
 * the growth of pools and tables that do not shrink).
 *
 * A third phase (-v, rc_verbs) creates N bare RC QPs with libibverbs
 * alone, with the same capabilities, and reports their heap per QP: the
 * part of the heap figure that belongs to the provider.
 *
 * Usage: verbs_ep_memory [-t rc_verbs|ud_verbs] [-m ep|iface] [-n EPS]
 *                        [-d DEV:PORT] [-B BATCH] [-v] [-q]
 */
#define _GNU_SOURCE

#include <uct/api/uct.h>
#include <uct/ib/rc/rc.h>
#include <uct/ib/ud/ud.h>
#include <common/rdma_qp_count.h>
#include <common/uct_md_find.h>
#include <ucs/async/async.h>
#include <ucs/sys/sys.h>

#include <infiniband/verbs.h>

#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEM_DEFAULT_EPS  1000
#define MEM_TARGET_BYTES 128 /* heap per rc_verbs endpoint */
#define MEM_BATCH        64  /* connections created, then sent to */
#define MEM_AM_ID        7
#define MEM_TIMEOUT_SEC  120.0 /* bound on every wait */
#define MEM_SETTLE_SEC   0.2
#define MEM_STALL_SEC    10.0 /* traffic: one send's longest wait */

/* rxe: sizeof(struct rxe_send_wqe) of <rdma/rdma_user_rxe.h>, the header
 * of a send slot; the slot adds max(16 * SGEs, inline) bytes and is
 * rounded up to a power of two, the queue to a power of two slots */
#define MEM_RXE_WQE_HDR 208

#define MEM_KERNEL_QP_DEFINITION                                           \
    "kernel memory per QP: (Slab + VmallocUsed) growth in /proc/meminfo, " \
    "connected minus base, divided by the kernel QPs added (rdma "         \
    "resource show; the endpoints when unknown); rxe's send queue is "     \
    "VmallocUsed (vmalloc_user pages), its QP objects are Slab"

typedef enum { MEM_TL_RC, MEM_TL_UD } mem_tl_t;

typedef enum { MEM_CONNECT_EP, MEM_CONNECT_IFACE } mem_connect_mode_t;

typedef struct {
    uct_iface_h iface;
    uct_iface_attr_t attr;
    void *dev_addr;
    void *iface_addr;
} mem_iface_t;

typedef struct {
    const char *tl_name;
    mem_tl_t tl;
    mem_connect_mode_t mode;
    const char *dev_name;
    unsigned num_eps; /* both interfaces together */
    unsigned batch;   /* connections per batch */
    int quiet;
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_md_h md;
    mem_iface_t a;
    mem_iface_t b;
    uct_ep_h *eps_a;
    uct_ep_h *eps_b;    /* NULL entries: B's eps are private */
    double *t_create;   /* per connection */
    double *t_recv;     /* first AM received, 0 before */
    char *sent;         /* the AM of the connection went out */
    unsigned max_index; /* t_* entries */
    unsigned long received;
    double loop_sec; /* of mem_connect(), without flushes */
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
    [MEMINFO_FREE] = "MemFree",        [MEMINFO_AVAILABLE] = "MemAvailable",
    [MEMINFO_SLAB] = "Slab",           [MEMINFO_SUNRECLAIM] = "SUnreclaim",
    [MEMINFO_VMALLOC] = "VmallocUsed", [MEMINFO_PAGETABLES] = "PageTables"};

typedef struct {
    size_t heap;
    long rss;                   /* VmRSS, bytes */
    long meminfo[MEMINFO_LAST]; /* bytes; -1 when not read */
    long qps;                   /* kernel QPs; -1 when not read */
} mem_sample_t;

static double mem_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
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

    s->heap = ucs_sys_heap_in_use();
    s->rss  = mem_kb_field("/proc/self/status", "VmRSS");
    for (i = 0; i < MEMINFO_LAST; ++i) {
        s->meminfo[i] = mem_kb_field("/proc/meminfo", meminfo_names[i]);
    }
    s->qps = test_rdma_qp_count();
}

static int mem_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "verbs_ep_memory: %s failed: %s\n", what,
            ucs_status_string(status));
    return -1;
}

static ucs_status_t mem_am_handler(void *arg, void *data, size_t length,
                                   unsigned flags)
{
    mem_ctx_t *ctx = arg;
    uint64_t index;

    ++ctx->received;
    if (length >= sizeof(index)) {
        memcpy(&index, data, sizeof(index));
        if ((index < ctx->max_index) && (ctx->t_recv[index] == 0)) {
            ctx->t_recv[index] = mem_now();
        }
    }
    return UCS_OK;
}

static int mem_iface_open(mem_ctx_t *ctx, mem_iface_t *mi)
{
    uint64_t cap = (ctx->mode == MEM_CONNECT_EP)
                       ? UCT_IFACE_FLAG_CONNECT_TO_EP
                       : UCT_IFACE_FLAG_CONNECT_TO_IFACE;
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
    if (!(mi->attr.cap.flags & cap) ||
        !(mi->attr.cap.flags & UCT_IFACE_FLAG_AM_SHORT)) {
        fprintf(stderr,
                "verbs_ep_memory: %s/%s cannot connect to %s or "
                "lacks am_short\n",
                ctx->tl_name, ctx->dev_name,
                (ctx->mode == MEM_CONNECT_EP) ? "an endpoint" : "an interface");
        return -1;
    }

    mi->dev_addr   = calloc(1, mi->attr.device_addr_len + 1);
    mi->iface_addr = calloc(1, mi->attr.iface_addr_len + 1);
    if ((mi->dev_addr == NULL) || (mi->iface_addr == NULL)) {
        fprintf(stderr, "verbs_ep_memory: out of memory for an address\n");
        return -1;
    }
    status = uct_iface_get_device_address(mi->iface, mi->dev_addr);
    if (status != UCS_OK) {
        return mem_fail("uct_iface_get_device_address", status);
    }
    if (mi->attr.iface_addr_len > 0) {
        status = uct_iface_get_address(mi->iface, mi->iface_addr);
        if (status != UCS_OK) {
            return mem_fail("uct_iface_get_address", status);
        }
    }

    status = uct_iface_set_am_handler(mi->iface, MEM_AM_ID, mem_am_handler, ctx,
                                      UCT_CB_FLAG_SYNC);
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

/* Creates one connection: an endpoint on A and, CONNECT_TO_EP, one on B
 * connected to each other. The address buffers are the caller's, so the
 * heap holds only what the endpoints keep. */
static int mem_pair_create(mem_ctx_t *ctx, uct_ep_h *ep_a, uct_ep_h *ep_b,
                           void *addr_a, void *addr_b)
{
    uct_ep_params_t params;
    ucs_status_t status;

    *ep_b = NULL;
    if (ctx->mode == MEM_CONNECT_IFACE) {
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                            UCT_EP_PARAM_FIELD_DEV_ADDR |
                            UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.iface      = ctx->a.iface;
        params.dev_addr   = ctx->b.dev_addr;
        params.iface_addr = ctx->b.iface_addr;
        status            = uct_ep_create(&params, ep_a);
        if (status != UCS_OK) {
            *ep_a = NULL;
            return mem_fail("uct_ep_create (to an interface)", status);
        }
        return 0;
    }

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = ctx->a.iface;
    status            = uct_ep_create(&params, ep_a);
    if (status != UCS_OK) {
        *ep_a = NULL;
        return mem_fail("uct_ep_create", status);
    }
    params.iface = ctx->b.iface;
    status       = uct_ep_create(&params, ep_b);
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

/* One 8-byte AM (the connection's index) on each of @a count endpoints,
 * each retried while the transport has no room or the endpoint is still
 * connecting */
static int mem_batch_send(mem_ctx_t *ctx, uct_ep_h *eps, unsigned first,
                          unsigned count)
{
    double deadline = mem_now() + MEM_TIMEOUT_SEC;
    unsigned left   = count, i;
    ucs_status_t status;

    memset(ctx->sent + first, 0, count);
    for (;;) {
        for (i = first; i < first + count; ++i) {
            if (ctx->sent[i]) {
                continue;
            }
            status = uct_ep_am_short(eps[i], MEM_AM_ID, i, NULL, 0);
            if (status == UCS_OK) {
                ctx->sent[i] = 1;
                --left;
            } else if (status != UCS_ERR_NO_RESOURCE) {
                return mem_fail("uct_ep_am_short", status);
            }
        }
        if (left == 0) {
            return 0;
        }
        if (mem_now() > deadline) {
            fprintf(stderr,
                    "verbs_ep_memory: %u of %u endpoints had no "
                    "send resources (or no connection) for %.0f s\n",
                    left, count, MEM_TIMEOUT_SEC);
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
                    "verbs_ep_memory: received %lu of %lu messages "
                    "in %.0f s\n",
                    ctx->received, count, MEM_TIMEOUT_SEC);
            return -1;
        }
        uct_worker_progress(ctx->worker);
    }
    return 0;
}

static void mem_comp_cb(uct_completion_t *self)
{}

static int mem_flush(mem_ctx_t *ctx, uct_iface_h iface)
{
    double deadline       = mem_now() + MEM_TIMEOUT_SEC;
    uct_completion_t comp = {.func = mem_comp_cb, .count = 1, .status = UCS_OK};
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

/* Endpoints left on both interfaces: ud_verbs' private ones, rc_verbs'
 * destroyed ones whose requests are not all done yet (with their QPs) */
static unsigned mem_ep_count(mem_ctx_t *ctx)
{
    uct_ud_iface_t *a, *b;
    unsigned count;

    if (ctx->tl == MEM_TL_RC) {
        return uct_rc_iface(ctx->a.iface)->eps.count +
               uct_rc_iface(ctx->b.iface)->eps.count;
    }
    a = uct_ud_iface(ctx->a.iface);
    b = uct_ud_iface(ctx->b.iface);

    uct_ud_enter(a);
    count = a->eps.count;
    uct_ud_leave(a);
    uct_ud_enter(b);
    count += b->eps.count;
    uct_ud_leave(b);
    return count;
}

/* After the user's endpoints were destroyed: ud_verbs' zombies tell the
 * peer, which frees the private endpoints; rc_verbs' endpoints with
 * requests in flight stay until their flush completes (the next round's
 * base must not hold them); waits until no endpoint is left on either
 * side. Returns the seconds that took, or -1. */
static double mem_wait_eps_gone(mem_ctx_t *ctx)
{
    double start = mem_now();

    while (mem_ep_count(ctx) != 0) {
        if (mem_now() > start + MEM_TIMEOUT_SEC) {
            fprintf(stderr,
                    "verbs_ep_memory: %u endpoints still there "
                    "%.0f s after destroying them all\n",
                    mem_ep_count(ctx), MEM_TIMEOUT_SEC);
            return -1;
        }
        uct_worker_progress(ctx->worker);
    }
    return mem_now() - start;
}

/* Makes @a pairs connections in batches: creates a batch, sends one AM on
 * each of its A endpoints, waits until B received them */
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
        fprintf(stderr, "verbs_ep_memory: out of memory for addresses\n");
        goto out;
    }

    memset(ctx->t_recv, 0, pairs * sizeof(*ctx->t_recv));
    ctx->loop_sec = mem_now();
    for (i = 0; i < pairs; i += n) {
        n = ucs_min(pairs - i, ctx->batch);
        for (j = i; j < i + n; ++j) {
            ctx->t_create[j] = mem_now();
            if (mem_pair_create(ctx, &eps_a[j], &eps_b[j], addr_a, addr_b) !=
                0) {
                goto out;
            }
        }
        if (mem_batch_send(ctx, eps_a, i, n) != 0) {
            goto out;
        }
        expected += n;
        if (mem_wait_received(ctx, expected) != 0) {
            goto out;
        }
    }
    ctx->loop_sec = mem_now() - ctx->loop_sec;
    ret           = ((mem_flush(ctx, ctx->a.iface) == 0) &&
           (mem_flush(ctx, ctx->b.iface) == 0))
                        ? 0
                        : -1;
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
    double connect_sec;
    double gone_sec; /* destroy until no ep left, or -1 */
    double loop_sec; /* the same without the final flush */
    double am_p50;   /* traffic: one AM's delivery, seconds */
    double am_rate;  /* traffic: AMs per second */
    double lat_p50;  /* connection time, seconds */
    double lat_p99;
    double lat_max;
    size_t table_bytes; /* both ifaces' tables of ep pointers */
    unsigned ahs;       /* both ifaces' address handles */
} mem_round_t;

/* The interfaces' tables that grow with the endpoints: rc_verbs' qp_num
 * index; ud_verbs' ep id table and connection hash */
static size_t mem_table_bytes(mem_ctx_t *ctx)
{
    const uct_rc_ep_table_t *ra, *rb;
    const uct_ud_iface_t *ua, *ub;

    if (ctx->tl == MEM_TL_RC) {
        ra = &uct_rc_iface(ctx->a.iface)->eps;
        rb = &uct_rc_iface(ctx->b.iface)->eps;
        return ((size_t)ra->mask + 1 + rb->mask + 1) * sizeof(*ra->slots);
    }
    ua = uct_ud_iface(ctx->a.iface);
    ub = uct_ud_iface(ctx->b.iface);
    return ((size_t)ua->eps.size + ub->eps.size) * sizeof(*ua->eps.slots) +
           ((size_t)ua->conns.mask + 1 + ub->conns.mask + 1) *
               sizeof(*ua->conns.buckets);
}

static unsigned mem_ah_count(mem_ctx_t *ctx)
{
    if (ctx->tl != MEM_TL_UD) {
        return 0;
    }
    return uct_ud_iface(ctx->a.iface)->ahs.count +
           uct_ud_iface(ctx->b.iface)->ahs.count;
}

static int mem_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Percentiles of the connection times of @a pairs connections */
static int mem_latencies(mem_ctx_t *ctx, unsigned pairs, mem_round_t *r)
{
    double *lat;
    unsigned i;

    lat = malloc(pairs * sizeof(*lat));
    if (lat == NULL) {
        return -1;
    }
    for (i = 0; i < pairs; ++i) {
        lat[i] = ctx->t_recv[i] - ctx->t_create[i];
    }
    qsort(lat, pairs, sizeof(*lat), mem_cmp_double);
    r->lat_p50 = lat[pairs / 2];
    r->lat_p99 = lat[(size_t)pairs * 99 / 100];
    r->lat_max = lat[pairs - 1];
    free(lat);
    return 0;
}

/* One AM on A's endpoint @a i, retried while there is no room */
static int mem_send_one(mem_ctx_t *ctx, unsigned i)
{
    double deadline = mem_now() + MEM_STALL_SEC;
    ucs_status_t status;

    for (;;) {
        /* an index past max_index: no connection time is recorded */
        status = uct_ep_am_short(ctx->eps_a[i], MEM_AM_ID,
                                 (uint64_t)ctx->max_index + i, NULL, 0);
        if (status == UCS_OK) {
            return 0;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return mem_fail("uct_ep_am_short", status);
        } else if (mem_now() > deadline) {
            fprintf(stderr,
                    "verbs_ep_memory: endpoint %u of A had no send "
                    "resources for %.0f s\n",
                    i, MEM_STALL_SEC);
            return -1;
        }
        uct_worker_progress(ctx->worker);
    }
}

/* Traffic over the @a pairs connected endpoints, both sides polled by
 * this thread: the time from uct_ep_am_short() to the handler for one AM
 * at a time on endpoints spread over all of them, and the rate of AMs
 * sent round-robin over every endpoint */
static int mem_traffic(mem_ctx_t *ctx, unsigned pairs, mem_round_t *r)
{
    unsigned lat_count = ucs_min(pairs, 1000), msgs, k;
    unsigned long base = ctx->received, expected;
    double *lat, t0;

    lat = malloc(lat_count * sizeof(*lat));
    if (lat == NULL) {
        return -1;
    }
    for (k = 0; k < lat_count; ++k) {
        expected = ctx->received + 1;
        t0       = mem_now();
        if ((mem_send_one(ctx, (unsigned)((uint64_t)k * pairs / lat_count)) !=
             0) ||
            (mem_wait_received(ctx, expected) != 0)) {
            free(lat);
            return -1;
        }
        lat[k] = mem_now() - t0;
    }
    qsort(lat, lat_count, sizeof(*lat), mem_cmp_double);
    r->am_p50 = lat[lat_count / 2];
    free(lat);

    msgs     = ucs_max(10000, 2 * pairs);
    expected = ctx->received + msgs;
    t0       = mem_now();
    for (k = 0; k < msgs; ++k) {
        if (mem_send_one(ctx, k % pairs) != 0) {
            fprintf(stderr,
                    "verbs_ep_memory: the round-robin stalled "
                    "after %u of %u messages\n",
                    k, msgs);
            /* what went out must arrive before the next round counts */
            (void)mem_wait_received(ctx, base + lat_count + k);
            return -1;
        }
        if ((k % 16) == 15) {
            /* the receiver shares this thread: let it keep up */
            uct_worker_progress(ctx->worker);
        }
    }
    if (mem_wait_received(ctx, expected) != 0) {
        return -1;
    }
    r->am_rate = msgs / (mem_now() - t0);
    return 0;
}

/* Until the kernel's QP count holds still for 0.2 s (QPs destroyed by an
 * earlier round may be freed late), 10 s at most */
static void mem_wait_kernel_qps(mem_ctx_t *ctx)
{
    double deadline = mem_now() + 10;
    long last       = test_rdma_qp_count(), qps;

    while ((last >= 0) && (mem_now() < deadline)) {
        mem_settle(ctx);
        qps = test_rdma_qp_count();
        if (qps == last) {
            return;
        }
        last = qps;
    }
}

static int mem_round(mem_ctx_t *ctx, mem_round_t *r, int traffic)
{
    unsigned pairs = ctx->num_eps / 2;
    double t0;

    mem_wait_kernel_qps(ctx);
    mem_sample(&r->base);
    t0 = mem_now();
    if (mem_connect(ctx, ctx->eps_a, ctx->eps_b, pairs) != 0) {
        return -1;
    }
    r->connect_sec = mem_now() - t0;
    r->loop_sec    = ctx->loop_sec;
    mem_sample(&r->conn);
    r->table_bytes = mem_table_bytes(ctx);
    r->ahs         = mem_ah_count(ctx);
    /* after the connected sample, in the round whose heap is not the
     * figure: pools it grows are warm for the next round */
    r->am_p50  = -1;
    r->am_rate = -1;
    if (traffic && (mem_traffic(ctx, pairs, r) != 0)) {
        /* reported as "stall"; the memory figures go on */
        r->am_rate = -2;
    }
    mem_destroy_eps(ctx->eps_a, pairs);
    mem_destroy_eps(ctx->eps_b, pairs);
    r->gone_sec = mem_wait_eps_gone(ctx);
    if (r->gone_sec < 0) {
        return -1;
    }
    mem_settle(ctx);
    mem_sample(&r->gone);
    /* after the samples: its buffer must not count */
    return mem_latencies(ctx, pairs, r);
}

static void mem_print_round(const char *name, const mem_round_t *r, unsigned n)
{
    int i;

    printf("  %-6s %8.0f %8.0f", name,
           ucs_sys_heap_per_object(r->base.heap, r->conn.heap, n),
           ucs_sys_heap_per_object(r->gone.heap, r->conn.heap, n));
    for (i = 0; i < MEMINFO_LAST; ++i) {
        /* memory taken is what MemFree/MemAvailable lost */
        if ((i == MEMINFO_FREE) || (i == MEMINFO_AVAILABLE)) {
            printf(" %9.0f",
                   mem_per(r->base.meminfo[i], r->conn.meminfo[i], n));
        } else {
            printf(" %9.0f",
                   mem_per(r->conn.meminfo[i], r->base.meminfo[i], n));
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
    int num, ret  = -1;

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
        fprintf(stderr,
                "verbs_ep_memory: cannot open %s with "
                "libibverbs\n",
                dev);
        goto out;
    }
    pd = ibv_alloc_pd(ibctx);
    cq = (pd != NULL) ? ibv_create_cq(ibctx, 1024, NULL, NULL, 0) : NULL;
    memset(&srq_attr, 0, sizeof(srq_attr));
    srq_attr.attr.max_wr  = 64;
    srq_attr.attr.max_sge = 1;
    srq                   = (cq != NULL) ? ibv_create_srq(pd, &srq_attr) : NULL;
    if (srq == NULL) {
        fprintf(stderr, "verbs_ep_memory: pd/cq/srq on %s failed: %m\n", dev);
        goto out;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_type             = IBV_QPT_RC;
    attr.send_cq             = cq;
    attr.recv_cq             = cq;
    attr.srq                 = srq;
    attr.cap.max_send_wr     = rc->config.tx_queue_len;
    attr.cap.max_send_sge    = rc->config.max_iov;
    attr.cap.max_inline_data = (uint32_t)rc->config.max_inline;

    before = ucs_sys_heap_in_use();
    for (i = 0; i < n; ++i) {
        qps[i] = ibv_create_qp(pd, &attr);
        if (qps[i] == NULL) {
            fprintf(stderr,
                    "verbs_ep_memory: bare QP %u of %u failed: "
                    "%m\n",
                    i + 1, n);
            goto out;
        }
    }
    after        = ucs_sys_heap_in_use();
    *heap_per_qp = ucs_sys_heap_per_object(before, after, n);
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

static size_t mem_ep_struct(const mem_ctx_t *ctx)
{
    return (ctx->tl == MEM_TL_RC) ? sizeof(uct_rc_ep_t) : sizeof(uct_ud_ep_t);
}

/* Send queue length, SGEs and inline size of interface A */
static void mem_tx_config(const mem_ctx_t *ctx, unsigned *txq, unsigned *sges,
                          size_t *inl)
{
    const uct_rc_iface_t *rc;
    const uct_ud_iface_t *ud;

    if (ctx->tl == MEM_TL_RC) {
        rc    = uct_rc_iface(ctx->a.iface);
        *txq  = rc->config.tx_queue_len;
        *sges = rc->config.max_iov;
        *inl  = rc->config.max_inline;
    } else {
        ud    = uct_ud_iface(ctx->a.iface);
        *txq  = ud->config.tx_queue_len;
        *sges = ud->config.max_iov;
        *inl  = ud->config.max_inline;
    }
}

/* Difference of two kernel QP counts, "-1" when either is unknown */
static long mem_qp_delta(const mem_sample_t *after, const mem_sample_t *before)
{
    if ((after->qps < 0) || (before->qps < 0)) {
        return -1;
    }
    return after->qps - before->qps;
}

/* MEM_KERNEL_QP_DEFINITION of round @a r; -1 without QPs (ud_verbs) */
static double mem_kernel_per_qp(const mem_ctx_t *ctx, const mem_round_t *r)
{
    long qps = mem_qp_delta(&r->conn, &r->base);
    long bytes =
        (r->conn.meminfo[MEMINFO_SLAB] - r->base.meminfo[MEMINFO_SLAB]) +
        (r->conn.meminfo[MEMINFO_VMALLOC] - r->base.meminfo[MEMINFO_VMALLOC]);

    if (ctx->tl != MEM_TL_RC) {
        return -1;
    }
    if (qps <= 0) {
        qps = ctx->num_eps; /* one QP per rc_verbs endpoint */
    }
    return (double)bytes / (double)qps;
}

/* rxe's send slot for @a sges SGEs and @a inl bytes inline */
static size_t mem_rxe_slot(unsigned sges, size_t inl)
{
    size_t need = MEM_RXE_WQE_HDR + ucs_max((size_t)sges * 16, inl);
    size_t slot = 64;

    while (slot < need) {
        slot *= 2;
    }
    return slot;
}

static void mem_print_human(const mem_ctx_t *ctx, const mem_round_t *first,
                            const mem_round_t *second, double raw_heap,
                            unsigned txq, unsigned sges, size_t inl)
{
    unsigned n = ctx->num_eps;
    int i;

    printf("%s/%s: %u connected endpoints (%u connections between two "
           "interfaces, %s), send queue %u (TX_QUEUE_LEN), %u SGEs, inline "
           "%zu\n",
           ctx->tl_name, ctx->dev_name, n, n / 2,
           (ctx->mode == MEM_CONNECT_EP)
               ? "CONNECT_TO_EP"
               : "CONNECT_TO_IFACE, B's endpoints private",
           txq, sges, inl);
    printf("%s\n", UCS_SYS_HEAP_DEFINITION);
    printf("per endpoint, both sides counted, bytes (heap: conn = "
           "connected - base,\n  ep = connected - destroyed; kernel: "
           "/proc/meminfo deltas; rss: VmRSS delta;\n  s: seconds to "
           "connect them all):\n");
    printf("  %-6s %8s %8s", "round", "heap", "heap-ep");
    for (i = 0; i < MEMINFO_LAST; ++i) {
        printf(" %9.9s", meminfo_names[i]);
    }
    printf(" %8s %7s\n", "rss", "s");
    mem_print_round("first", first, n);
    mem_print_round("second", second, n);
    printf("breakdown: sizeof(%s) %zu (malloc chunk %zu); ep tables %zu "
           "bytes in all = %.1f per ep",
           (ctx->tl == MEM_TL_RC) ? "uct_rc_ep_t" : "uct_ud_ep_t",
           mem_ep_struct(ctx), mem_chunk(mem_ep_struct(ctx)),
           second->table_bytes, (double)second->table_bytes / n);
    if (raw_heap >= 0) {
        printf("; a bare ibv_create_qp() %.0f", raw_heap);
    }
    printf("\n");
    printf("kernel objects: %ld QPs more when connected (rdma resource "
           "show; -1: unknown), %u address handles in both interfaces\n",
           mem_qp_delta(&second->conn, &second->base), second->ahs);
    if (ctx->tl == MEM_TL_RC) {
        printf("%s:\n  %.0f bytes per QP (send queue %u, %u SGEs, %zu bytes "
               "inline: a %zu-byte send slot on rxe)\n",
               MEM_KERNEL_QP_DEFINITION, mem_kernel_per_qp(ctx, second), txq,
               sges, inl, mem_rxe_slot(sges, inl));
    }
    printf("connection time (create to first AM received, batches of "
           "%u): median %.2f ms, p99 %.2f ms, max %.2f ms; %.0f us per "
           "connection in all\n",
           ctx->batch, second->lat_p50 * 1e3, second->lat_p99 * 1e3,
           second->lat_max * 1e3, second->loop_sec * 1e6 / (n / 2));
    printf("traffic over all %u connections (first round, one thread "
           "polling both sides):\n  one AM send to handler, median %.1f "
           "us; %.0f AMs per second round-robin%s\n",
           n / 2, first->am_p50 * 1e6, first->am_rate,
           (first->am_rate == -2) ? " (-2: stalled, see above)" : "");
    if (second->gone.heap > second->base.heap + n) {
        printf(
            "after destroying the user's endpoints, %.0f bytes per ep "
            "are still in use (tables and pools keep their size)\n",
            ucs_sys_heap_per_object(second->base.heap, second->gone.heap, n));
    }
    if (ctx->tl == MEM_TL_UD) {
        printf("no endpoint left on either side %.2f s after destroying "
               "the user's\n",
               second->gone_sec);
    }
}

static int mem_run(mem_ctx_t *ctx, int raw_verbs)
{
    uct_ep_h warm_a = NULL, warm_b = NULL;
    mem_round_t first, second;
    double raw_heap = -1;
    unsigned n      = ctx->num_eps;
    unsigned txq, sges;
    size_t inl;

    mem_tx_config(ctx, &txq, &sges, &inl);

    /* One connection first, so lazily created shared state (address
     * handles, pools) is not charged to the measured endpoints */
    if (mem_connect(ctx, &warm_a, &warm_b, 1) != 0) {
        return -1;
    }
    mem_destroy_eps(&warm_a, 1);
    mem_destroy_eps(&warm_b, 1);
    mem_settle(ctx);

    if ((mem_round(ctx, &first, 1) != 0) || (mem_round(ctx, &second, 0) != 0)) {
        return -1;
    }
    if (raw_verbs && (ctx->tl == MEM_TL_RC) &&
        (mem_raw_verbs(ctx, uct_rc_iface(ctx->a.iface), &raw_heap) != 0)) {
        return -1;
    }
    if (second.conn.heap == 0) {
        printf("verbs_ep_memory: no heap in use reported (no mallinfo2(), "
               "or another allocator?): no figure\n");
        return 0;
    }

    if (!ctx->quiet) {
        mem_print_human(ctx, &first, &second, raw_heap, txq, sges, inl);
    }

    /* One machine-readable line for scripts */
    printf("result tl=%s mode=%s eps=%u txq=%u heap=%.0f heap_ep=%.0f",
           ctx->tl_name, (ctx->mode == MEM_CONNECT_EP) ? "ep" : "iface", n, txq,
           ucs_sys_heap_per_object(second.base.heap, second.conn.heap, n),
           ucs_sys_heap_per_object(second.gone.heap, second.conn.heap, n));
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
    printf(" kernel_qp=%.0f sges=%u inline=%zu rxe_slot=%zu rc_own=%.0f",
           mem_kernel_per_qp(ctx, &second), sges, inl, mem_rxe_slot(sges, inl),
           (raw_heap >= 0) ? ucs_sys_heap_per_object(second.base.heap,
                                                     second.conn.heap, n) -
                                 raw_heap
                           : -1);
    printf(" slab1=%.0f vmalloc1=%.0f ep_struct=%zu ep_chunk=%zu "
           "index=%.1f raw_qp_heap=%.0f connect_s=%.1f gone_s=%.2f",
           mem_per(first.conn.meminfo[MEMINFO_SLAB],
                   first.base.meminfo[MEMINFO_SLAB], n),
           mem_per(first.conn.meminfo[MEMINFO_VMALLOC],
                   first.base.meminfo[MEMINFO_VMALLOC], n),
           mem_ep_struct(ctx), mem_chunk(mem_ep_struct(ctx)),
           (double)second.table_bytes / n, raw_heap, second.connect_sec,
           second.gone_sec);
    printf(" qps=%ld ahs=%u kept=%.0f conn_p50_ms=%.2f conn_p99_ms=%.2f "
           "conn_max_ms=%.2f conn_us=%.0f batch=%u am_us=%.1f am_rate=%.0f\n",
           mem_qp_delta(&second.conn, &second.base), second.ahs,
           ucs_sys_heap_per_object(second.base.heap, second.gone.heap, n),
           second.lat_p50 * 1e3, second.lat_p99 * 1e3, second.lat_max * 1e3,
           second.loop_sec * 1e6 / (n / 2), ctx->batch, first.am_p50 * 1e6,
           first.am_rate);
    if (!ctx->quiet && (ctx->tl == MEM_TL_RC)) {
        printf("rc_verbs heap per connected ep: %.0f bytes",
               ucs_sys_heap_per_object(second.base.heap, second.conn.heap, n));
        if (raw_heap >= 0) {
            /* the provider's share is what a bare QP takes */
            printf(
                ", of which the provider's (a bare QP) %.0f and rc's "
                "own %.0f (target <= %d)",
                raw_heap,
                ucs_sys_heap_per_object(second.base.heap, second.conn.heap, n) -
                    raw_heap,
                MEM_TARGET_BYTES);
        }
        printf("\n");
    }
    return 0;
}

static void mem_usage(void)
{
    printf("usage: verbs_ep_memory [-t TL] [-m ep|iface] [-n EPS] "
           "[-d DEV:PORT] [-B BATCH]\n"
           "                       [-v] [-q]\n"
           "  -t TL        rc_verbs (default) or ud_verbs\n"
           "  -m MODE      ep: CONNECT_TO_EP (default); iface: "
           "CONNECT_TO_IFACE (ud_verbs)\n"
           "  -n EPS       connected endpoints, both interfaces together, "
           "an even number\n"
           "               (default %d)\n"
           "  -d DEV:PORT  device (default rxe_lo:1)\n"
           "  -B BATCH     connections created before sending on them "
           "(default %d)\n"
           "  -v           rc_verbs: also create EPS bare QPs with "
           "libibverbs: the provider's\n"
           "               heap\n"
           "  -q           only the machine-readable result line\n"
           "UCX_IB_TX_QUEUE_LEN and the other UCX_RC_*/UCX_UD_*/UCX_IB_* "
           "variables apply.\n",
           MEM_DEFAULT_EPS, MEM_BATCH);
}

static int mem_parse_args(mem_ctx_t *ctx, int argc, char **argv, int *raw_verbs)
{
    char *end;
    int c;

    while ((c = getopt(argc, argv, "t:m:n:d:B:vqh")) != -1) {
        switch (c) {
        case 't':
            if (!strcmp(optarg, UCT_RC_VERBS_NAME)) {
                ctx->tl = MEM_TL_RC;
            } else if (!strcmp(optarg, UCT_UD_VERBS_NAME)) {
                ctx->tl = MEM_TL_UD;
            } else {
                fprintf(stderr,
                        "verbs_ep_memory: -t wants rc_verbs or "
                        "ud_verbs, not '%s'\n",
                        optarg);
                return 1;
            }
            ctx->tl_name = optarg;
            break;
        case 'm':
            if (!strcmp(optarg, "ep")) {
                ctx->mode = MEM_CONNECT_EP;
            } else if (!strcmp(optarg, "iface")) {
                ctx->mode = MEM_CONNECT_IFACE;
            } else {
                fprintf(stderr,
                        "verbs_ep_memory: -m wants ep or iface, "
                        "not '%s'\n",
                        optarg);
                return 1;
            }
            break;
        case 'n':
            ctx->num_eps = strtoul(optarg, &end, 10);
            if ((*end != '\0') || (ctx->num_eps < 2) ||
                (ctx->num_eps % 2 != 0)) {
                fprintf(stderr,
                        "verbs_ep_memory: -n wants an even number "
                        "of at least 2, not '%s'\n",
                        optarg);
                return 1;
            }
            break;
        case 'd':
            ctx->dev_name = optarg;
            break;
        case 'B':
            ctx->batch = strtoul(optarg, &end, 10);
            if ((*end != '\0') || (ctx->batch == 0)) {
                fprintf(stderr,
                        "verbs_ep_memory: -B wants a positive "
                        "number, not '%s'\n",
                        optarg);
                return 1;
            }
            break;
        case 'v':
            *raw_verbs = 1;
            break;
        case 'q':
            ctx->quiet = 1;
            break;
        case 'h':
            mem_usage();
            exit(0);
        default:
            mem_usage();
            return 1;
        }
    }
    if ((ctx->tl == MEM_TL_RC) && (ctx->mode == MEM_CONNECT_IFACE)) {
        fprintf(stderr, "verbs_ep_memory: rc_verbs connects endpoints to "
                        "endpoints only (-m ep)\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    mem_ctx_t ctx;
    ucs_status_t status;
    int raw_verbs = 0;
    unsigned pairs;
    int ret = 1;

    /* ud_verbs' async thread creates endpoints too: it allocates from
     * the main arena, as in the recorded runs, and brings no arena of its
     * own into the figures (ucs_sys_heap_in_use() counts every arena) */
    mallopt(M_ARENA_MAX, 1);

    memset(&ctx, 0, sizeof(ctx));
    ctx.tl_name  = UCT_RC_VERBS_NAME;
    ctx.tl       = MEM_TL_RC;
    ctx.mode     = MEM_CONNECT_EP;
    ctx.dev_name = "rxe_lo:1";
    ctx.num_eps  = MEM_DEFAULT_EPS;
    ctx.batch    = MEM_BATCH;
    if (mem_parse_args(&ctx, argc, argv, &raw_verbs) != 0) {
        return 1;
    }

    pairs         = ctx.num_eps / 2;
    ctx.max_index = pairs;
    ctx.eps_a     = calloc(pairs, sizeof(*ctx.eps_a));
    ctx.eps_b     = calloc(pairs, sizeof(*ctx.eps_b));
    ctx.t_create  = calloc(pairs, sizeof(*ctx.t_create));
    ctx.t_recv    = calloc(pairs, sizeof(*ctx.t_recv));
    ctx.sent      = calloc(pairs, 1);
    if ((ctx.eps_a == NULL) || (ctx.eps_b == NULL) || (ctx.t_create == NULL) ||
        (ctx.t_recv == NULL) || (ctx.sent == NULL)) {
        fprintf(stderr,
                "verbs_ep_memory: out of memory for %u endpoint "
                "handles\n",
                ctx.num_eps);
        goto out;
    }

    status = test_uct_md_find(ctx.tl_name, ctx.dev_name, &ctx.md, NULL);
    if (status == UCS_ERR_NO_DEVICE) {
        fprintf(stderr,
                "verbs_ep_memory: %s on %s not found (run it where "
                "an RDMA device is, e.g. contrib/bench/verbs_ep_memory.sh; "
                "uct_info -d lists the devices)\n",
                ctx.tl_name, ctx.dev_name);
        goto out;
    } else if (status != UCS_OK) {
        mem_fail("uct_query_components", status);
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
    if ((mem_iface_open(&ctx, &ctx.a) != 0) ||
        (mem_iface_open(&ctx, &ctx.b) != 0)) {
        goto out;
    }

    ret = (mem_run(&ctx, raw_verbs) == 0) ? 0 : 1;

out:
    if (ctx.eps_a != NULL) {
        mem_destroy_eps(ctx.eps_a, pairs);
    }
    if (ctx.eps_b != NULL) {
        mem_destroy_eps(ctx.eps_b, pairs);
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
    free(ctx.t_create);
    free(ctx.t_recv);
    free(ctx.sent);
    return ret;
}
