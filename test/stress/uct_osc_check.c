/*
 * uct_osc_check: the access pattern of an MPI one-sided library, in
 * separate processes, every byte and every lock transition checked.
 *
 *   uct_osc_check [-x TL] [-d DEV] [-C iface|ep] [-p PORT] [-o ORIGINS]
 *                                                           (target)
 *   uct_osc_check [-x TL] [-d DEV] [-C iface|ep] -p PORT [-n ITERS]
 *                 [-S MAX] [-T SEC] TARGET-HOST                (origin)
 *
 * The target exposes a registered window: a lock word, a counter and a
 * data area. Each of ORIGINS origin processes, at the same time, ITERS
 * times:
 *   1. takes the lock with a 64-bit compare-and-swap (0 -> its id),
 *      retrying while another origin holds it; any other value than 0 or
 *      a valid id fails;
 *   2. GETs the counter and the data area's header, then the data the
 *      last writer left (its size named by the header), and checks it
 *      against the header's seed and the counter against the header;
 *   3. PUTs new data of the next size (64 B .. MAX, default 4 MiB) with a
 *      header naming it, and the counter + 1;
 *   4. GETs the data back and checks it (a GET after a flushed PUT must
 *      see the PUT);
 *   5. releases the lock with a fetch-and-add of -id, which must return
 *      its id.
 * Each operation, or batch of them, is followed at once by uct_ep_flush or
 * uct_iface_flush (in turn), without waiting for the operations' own
 * completions: when the flush completes, every completion must have run
 * with UCS_OK and every GET's and atomic's data must be in place. GETs
 * alternate between bcopy and zcopy where bcopy fits. When the transport
 * has no 64-bit atomics (tcp), the two atomics are emulated with active
 * messages as MPI libraries do: the target applies them in its progress
 * and answers on its own endpoint to the origin (CONNECT_TO_IFACE: another
 * connection than the request came on).
 *
 * At the end the target checks that the counter equals the sum of every
 * origin's iterations and that the lock is free, prints "OK ..." and exits
 * 0; an origin exits 0 when its checks held and the target's verdict is
 * good. A failure prints one line saying what did not hold, exit code 1;
 * a transport that cannot run the check (no GET zcopy, or not the -C
 * connection mode) exits 2.
 */
#define _GNU_SOURCE

#include <common/uct_md_find.h>
#include <uct/api/uct.h>
#include <ucs/async/async.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/vfs/vfs.h>

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OSC_PROG        "uct_osc_check"
#define OSC_MAGIC       0x6f736331u /* "osc1" */
#define OSC_MAX_ORIGINS 16
#define OSC_ADDR_MAX    1024 /* sanity bound of an address part */
#define OSC_DATA_OFFSET 4096 /* window: lock, counter, then data */
#define OSC_MIN_SIZE    64
#define OSC_AM_ATOMIC   11 /* origin -> target: osc_atomic_req_t */
#define OSC_AM_REPLY    12 /* target -> origin: osc_atomic_rep_t */

enum { OSC_OP_CSWAP = 1, OSC_OP_FADD = 2 };

/* Start of the data area, written by the lock holder with its data */
typedef struct {
    uint64_t writer; /* origin id, 0 before the first write */
    uint64_t iter;
    uint64_t size; /* bytes written, this header included */
    uint64_t seed;
    uint64_t counter; /* the counter's value before this write */
} osc_data_hdr_t;

typedef struct {
    uint32_t op; /* OSC_OP_* */
    uint32_t origin;
    uint64_t req;
    uint64_t compare; /* cswap */
    uint64_t value;   /* cswap: the new value; fadd: the addend */
} osc_atomic_req_t;

typedef struct {
    uint64_t req;
    uint64_t old;
} osc_atomic_rep_t;

/* Control connection: origin -> target, then its address parts */
typedef struct {
    uint32_t magic;
    uint32_t to_ep;
    uint32_t dev_len;
    uint32_t addr_len; /* iface address, or endpoint address */
} osc_hello_t;

/* Control connection: target -> origin, then its address parts and the
 * window's packed rkey */
typedef struct {
    uint32_t magic;
    uint32_t id;
    uint32_t dev_len;
    uint32_t addr_len;
    uint32_t rkey_len;
    uint32_t reserved;
    uint64_t window;
    uint64_t window_len;
} osc_welcome_t;

/* Control connection: origin -> target at the end */
typedef struct {
    uint32_t magic;
    uint32_t ok;
    uint64_t iters;
    uint64_t contended; /* lock attempts that found it taken */
} osc_done_t;

typedef struct {
    /* command line */
    const char *tl, *dev, *host;
    int to_ep;
    unsigned port, origins;
    unsigned long iters;
    size_t max_size;
    double stall_sec;

    /* transport */
    uct_component_h component;
    uct_md_h md;
    uct_md_attr_t md_attr;
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_iface_h iface;
    uct_iface_attr_t attr;
    int hw_atomics;

    /* origin */
    unsigned id;
    uct_ep_h ep;
    uint64_t window;
    uct_rkey_bundle_t rkey;
    char *buf; /* [GET landing area | PUT source], registered */
    size_t buf_half;
    uct_mem_h buf_memh;
    uint64_t result; /* fetching atomics land here */
    volatile int reply_in;
    uint64_t reply_req, reply_old;
    uint64_t next_req;
    unsigned long flushes, contended;

    /* target */
    char *win;
    size_t win_len;
    uct_mem_h win_memh;
    uct_ep_h eps[OSC_MAX_ORIGINS + 1]; /* by origin id */
    int socks[OSC_MAX_ORIGINS + 1];
    int finished[OSC_MAX_ORIGINS + 1];
    osc_atomic_req_t queue[OSC_MAX_ORIGINS * 4];
    unsigned queued;
    int overflow;

    int sock; /* origin: control connection */
} osc_ctx_t;

/* Prints the line "uct_osc_check: <message>" */
static void osc_print_line(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", OSC_PROG);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/* A check failed, or the peer did: exit code 1 */
static void osc_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    osc_print_line(fmt, ap);
    va_end(ap);
    exit(1);
}

/* The transport cannot run the check: exit code 2 */
static void osc_unsupported(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    osc_print_line(fmt, ap);
    va_end(ap);
    exit(2);
}

static double osc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The 64-bit words of data seeded @a seed: word k of the payload */
static inline uint64_t osc_word(uint64_t seed, size_t k)
{
    uint64_t x = seed ^ ((k + 1) * 0x9e3779b97f4a7c15ull);

    x ^= x >> 31;
    return x * 0xbf58476d1ce4e5b9ull;
}

static void osc_fill(char *p, const osc_data_hdr_t *hdr)
{
    size_t k, words = (hdr->size - sizeof(*hdr)) / 8;
    uint64_t w;

    memcpy(p, hdr, sizeof(*hdr));
    for (k = 0; k < words; ++k) {
        w = osc_word(hdr->seed, k);
        memcpy(p + sizeof(*hdr) + k * 8, &w, 8);
    }
}

/* Index of the first wrong byte of data with header @a hdr at @a p, or
 * the size when all are right */
static size_t osc_check(const char *p, const osc_data_hdr_t *hdr)
{
    size_t k, words = (hdr->size - sizeof(*hdr)) / 8;
    uint64_t w;

    if (memcmp(p, hdr, sizeof(*hdr)) != 0) {
        return 0;
    }
    for (k = 0; k < words; ++k) {
        w = osc_word(hdr->seed, k);
        if (memcmp(p + sizeof(*hdr) + k * 8, &w, 8) != 0) {
            return sizeof(*hdr) + k * 8;
        }
    }
    return hdr->size;
}

/* ------------------------------------------------------------------------
 * Control connection
 */

static void osc_send_all(int sock, const void *data, size_t len)
{
    const char *p = data;
    ssize_t ret;

    while (len > 0) {
        ret = send(sock, p, len, MSG_NOSIGNAL);
        if ((ret < 0) && (errno == EINTR)) {
            continue;
        } else if (ret <= 0) {
            osc_fail("control connection: send failed: %s", strerror(errno));
        }
        p += ret;
        len -= (size_t)ret;
    }
}

static void osc_recv_all(int sock, void *data, size_t len)
{
    char *p = data;
    ssize_t ret;

    while (len > 0) {
        ret = recv(sock, p, len, 0);
        if ((ret < 0) && (errno == EINTR)) {
            continue;
        } else if (ret == 0) {
            osc_fail("control connection closed by the peer (see its "
                     "output)");
        } else if (ret < 0) {
            osc_fail("control connection: receive failed: %s", strerror(errno));
        }
        p += ret;
        len -= (size_t)ret;
    }
}

static char *osc_recv_part(int sock, uint32_t len, const char *what)
{
    char *p;

    if (len > OSC_ADDR_MAX) {
        osc_fail("the peer's %s is %u bytes, over %u: not an %s peer", what,
                 len, OSC_ADDR_MAX, OSC_PROG);
    }
    p = calloc(1, len + 1);
    if (p == NULL) {
        osc_fail("out of memory");
    }
    osc_recv_all(sock, p, len);
    return p;
}

/* ------------------------------------------------------------------------
 * Transport
 */

static void osc_check_status(ucs_status_t status, const char *what)
{
    if (status != UCS_OK) {
        osc_fail("%s failed: %s", what, ucs_status_string(status));
    }
}

static ucs_status_t osc_err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
{
    osc_ctx_t *ctx = arg;
    unsigned id;

    /* the target names the origin, whether the transport or the control
     * connection notices first that it is gone */
    for (id = 1; (ep != NULL) && (id <= ctx->origins); ++id) {
        if (ctx->eps[id] == ep) {
            osc_fail("target: origin %u went away (the transport reports: "
                     "%s)",
                     id, ucs_status_string(status));
        }
    }
    osc_fail("the transport reports the peer failed: %s",
             ucs_status_string(status));
    return UCS_OK;
}

static ucs_status_t osc_am_atomic(void *arg, void *data, size_t length,
                                  unsigned flags);
static ucs_status_t osc_am_reply(void *arg, void *data, size_t length,
                                 unsigned flags);

static void osc_open(osc_ctx_t *ctx)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uint64_t need_fop;

    osc_check_status(
        test_uct_md_find(ctx->tl, ctx->dev, &ctx->md, &ctx->component),
        "finding the transport (uct_info -d lists them)");
    osc_check_status(uct_md_query(ctx->md, &ctx->md_attr), "uct_md_query");
    osc_check_status(
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &ctx->async),
        "ucs_async_context_create");
    osc_check_status(
        uct_worker_create(ctx->async, UCS_THREAD_MODE_SINGLE, &ctx->worker),
        "uct_worker_create");
    osc_check_status(
        uct_md_iface_config_read(ctx->md, ctx->tl, NULL, NULL, &config),
        "uct_md_iface_config_read");

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = ctx->tl;
    params.mode.device.dev_name = ctx->dev;
    params.err_handler          = osc_err_handler;
    params.err_handler_arg      = ctx;
    osc_check_status(
        uct_iface_open(ctx->md, ctx->worker, &params, config, &ctx->iface),
        "uct_iface_open");
    uct_config_release(config);
    osc_check_status(uct_iface_query(ctx->iface, &ctx->attr),
                     "uct_iface_query");
    uct_iface_progress_enable(ctx->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    if (!(ctx->attr.cap.flags &
          (ctx->to_ep ? UCT_IFACE_FLAG_CONNECT_TO_EP
                      : UCT_IFACE_FLAG_CONNECT_TO_IFACE))) {
        osc_unsupported("%s/%s cannot connect to %s; try -C %s", ctx->tl,
                        ctx->dev, ctx->to_ep ? "an endpoint" : "an interface",
                        ctx->to_ep ? "iface" : "ep");
    }
    if ((ctx->attr.cap.flags &
         (UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
          UCT_IFACE_FLAG_AM_SHORT)) !=
            (UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
             UCT_IFACE_FLAG_AM_SHORT) ||
        !(ctx->md_attr.cap.flags & UCT_MD_FLAG_REG)) {
        osc_unsupported("%s/%s lacks put zcopy, get zcopy, am short or "
                        "memory registration",
                        ctx->tl, ctx->dev);
    }
    need_fop = UCS_BIT(UCT_ATOMIC_OP_CSWAP) | UCS_BIT(UCT_ATOMIC_OP_ADD);
    ctx->hw_atomics =
        ((ctx->attr.cap.atomic64.fop_flags & need_fop) == need_fop);

    osc_check_status(uct_iface_set_am_handler(ctx->iface, OSC_AM_ATOMIC,
                                              osc_am_atomic, ctx, 0),
                     "uct_iface_set_am_handler");
    osc_check_status(uct_iface_set_am_handler(ctx->iface, OSC_AM_REPLY,
                                              osc_am_reply, ctx, 0),
                     "uct_iface_set_am_handler");
}

/* Names of a directory of the object tree (at most 8) */
typedef struct {
    char names[8][64];
    unsigned count;
} osc_dir_t;

static void osc_dir_add(const char *name, void *arg)
{
    osc_dir_t *dir = arg;

    if (dir->count < 8) {
        snprintf(dir->names[dir->count++], sizeof(dir->names[0]), "%s", name);
    }
}

/* Prints how many endpoints of this process's tcp interfaces moved to the
 * connection their peer opened (pair_switched_eps in the object tree), so
 * the check can tell that each pair shares one connection. */
static void osc_report_pairs(const char *role)
{
    osc_dir_t workers = {.count = 0}, ifaces;
    ucs_string_buffer_t strb;
    unsigned long moved = 0;
    char path[256];
    int found = 0;
    unsigned w, i;

    ucs_vfs_path_list_dir("/uct/worker", osc_dir_add, &workers);
    for (w = 0; w < workers.count; ++w) {
        ifaces.count = 0;
        snprintf(path, sizeof(path), "/uct/worker/%s/iface", workers.names[w]);
        ucs_vfs_path_list_dir(path, osc_dir_add, &ifaces);
        for (i = 0; i < ifaces.count; ++i) {
            snprintf(path, sizeof(path),
                     "/uct/worker/%s/iface/%s/pair_switched_eps",
                     workers.names[w], ifaces.names[i]);
            ucs_string_buffer_init(&strb);
            if (ucs_vfs_path_read_file(path, &strb) == UCS_OK) {
                moved += strtoul(ucs_string_buffer_cstr(&strb), NULL, 10);
                found = 1;
            }
            ucs_string_buffer_cleanup(&strb);
        }
    }
    if (found) {
        printf("%s: endpoints moved to their peer's connection: %lu\n", role,
               moved);
    }
}

static uct_ep_h osc_ep_create(osc_ctx_t *ctx, const char *dev_addr,
                              const char *iface_addr)
{
    uct_ep_params_t params;
    uct_ep_h ep;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = ctx->iface;
    if (iface_addr != NULL) {
        params.field_mask |=
            UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.dev_addr   = (const uct_device_addr_t *)dev_addr;
        params.iface_addr = (const uct_iface_addr_t *)iface_addr;
    }
    osc_check_status(uct_ep_create(&params, &ep), "uct_ep_create");
    return ep;
}

/* Our address for the peer: device, then iface or @a ep's address */
static char *osc_my_addr(osc_ctx_t *ctx, uct_ep_h ep, uint32_t *dev_len,
                         uint32_t *addr_len)
{
    size_t alen = ctx->to_ep ? ctx->attr.ep_addr_len : ctx->attr.iface_addr_len;
    char *p     = calloc(1, ctx->attr.device_addr_len + alen + 1);

    if (p == NULL) {
        osc_fail("out of memory");
    }
    osc_check_status(
        uct_iface_get_device_address(ctx->iface, (uct_device_addr_t *)p),
        "uct_iface_get_device_address");
    if (ctx->to_ep) {
        osc_check_status(
            uct_ep_get_address(
                ep, (uct_ep_addr_t *)(p + ctx->attr.device_addr_len)),
            "uct_ep_get_address");
    } else {
        osc_check_status(
            uct_iface_get_address(
                ctx->iface,
                (uct_iface_addr_t *)(p + ctx->attr.device_addr_len)),
            "uct_iface_get_address");
    }
    *dev_len  = (uint32_t)ctx->attr.device_addr_len;
    *addr_len = (uint32_t)alen;
    return p;
}

/* ------------------------------------------------------------------------
 * Active-message atomics (transports without 64-bit atomics)
 */

/* Target: queue the request; the main loop applies and answers it */
static ucs_status_t osc_am_atomic(void *arg, void *data, size_t length,
                                  unsigned flags)
{
    osc_ctx_t *ctx = arg;

    /* an am_short: its 8-byte header (unused), then the request */
    if ((length != sizeof(uint64_t) + sizeof(osc_atomic_req_t)) ||
        (ctx->win == NULL)) {
        ctx->overflow = 2;
    } else if (ctx->queued == sizeof(ctx->queue) / sizeof(ctx->queue[0])) {
        ctx->overflow = 1;
    } else {
        memcpy(&ctx->queue[ctx->queued++], (const char *)data + 8,
               sizeof(osc_atomic_req_t));
    }
    return UCS_OK;
}

/* Origin: the answer to our request */
static ucs_status_t osc_am_reply(void *arg, void *data, size_t length,
                                 unsigned flags)
{
    osc_ctx_t *ctx = arg;
    osc_atomic_rep_t rep;

    if ((length != sizeof(uint64_t) + sizeof(rep)) || ctx->reply_in) {
        osc_fail("origin %u: a malformed or unexpected atomic reply", ctx->id);
    }
    memcpy(&rep, (const char *)data + 8, sizeof(rep));
    ctx->reply_req = rep.req;
    ctx->reply_old = rep.old;
    ctx->reply_in  = 1;
    return UCS_OK;
}

/* Target: applies and answers the queued requests */
static void osc_target_serve(osc_ctx_t *ctx)
{
    uint64_t *lock = (uint64_t *)ctx->win;
    osc_atomic_req_t *req;
    osc_atomic_rep_t rep;
    ucs_status_t status;
    unsigned i;

    if (ctx->overflow) {
        osc_fail("target: %s", (ctx->overflow == 1)
                                   ? "more atomic requests than origins "
                                     "may have outstanding"
                                   : "a malformed atomic request");
    }
    for (i = 0; i < ctx->queued; ++i) {
        req = &ctx->queue[i];
        if ((req->origin == 0) || (req->origin > ctx->origins)) {
            osc_fail("target: an atomic request from origin %u", req->origin);
        }
        rep.req = req->req;
        rep.old = *lock;
        if (req->op == OSC_OP_CSWAP) {
            if (*lock == req->compare) {
                *lock = req->value;
            }
        } else if (req->op == OSC_OP_FADD) {
            *lock += req->value;
        } else {
            osc_fail("target: atomic request of unknown op %u", req->op);
        }
        do {
            status = uct_ep_am_short(ctx->eps[req->origin], OSC_AM_REPLY, 0,
                                     &rep, sizeof(rep));
            if (status == UCS_ERR_NO_RESOURCE) {
                uct_worker_progress(ctx->worker);
            }
        } while (status == UCS_ERR_NO_RESOURCE);
        osc_check_status(status, "target: the atomic reply");
    }
    ctx->queued = 0;
}

/* ------------------------------------------------------------------------
 * Origin: operations followed at once by a flush
 */

/* A completion; for a GET whose data is known, it checks the data when
 * it runs: a completion must never run before its data is in place */
typedef struct {
    uct_completion_t super; /* first: the callback casts back */
    volatile int done;
    const osc_data_hdr_t *expect; /* NULL: not checked */
    const char *dest;
    size_t bad; /* osc_check() when the callback ran */
} osc_comp_t;

static void osc_comp_cb(uct_completion_t *self)
{
    osc_comp_t *comp = (osc_comp_t *)self;

    if (comp->expect != NULL) {
        comp->bad = osc_check(comp->dest, comp->expect);
    }
    comp->done = 1;
}

static void osc_comp_init(osc_comp_t *comp)
{
    comp->super.func   = osc_comp_cb;
    comp->super.count  = 1;
    comp->super.status = UCS_OK;
    comp->done         = 0;
    comp->expect       = NULL;
    comp->dest         = NULL;
    comp->bad          = 0;
}

/* Waits for @a cond(ctx) with progress, failing after -T seconds */
static void osc_wait(osc_ctx_t *ctx, volatile int *flag, const char *what)
{
    double deadline = osc_now() + ctx->stall_sec;
    unsigned spins  = 0;

    while (!*flag) {
        uct_worker_progress(ctx->worker);
        if ((++spins & 1023) == 0) {
            if (osc_now() > deadline) {
                osc_fail("origin %u: no %s within %.0f s (-T)", ctx->id, what,
                         ctx->stall_sec);
            }
        }
    }
}

/* The flush that follows an operation at once: ep and iface in turn.
 * Returns once it completed; its status must be UCS_OK. */
static void osc_flush(osc_ctx_t *ctx, const char *after)
{
    int iface = (ctx->flushes++ & 1);
    osc_comp_t comp;
    ucs_status_t status;

    osc_comp_init(&comp);
    while ((status = iface ? uct_iface_flush(ctx->iface, 0, &comp.super)
                           : uct_ep_flush(ctx->ep, 0, &comp.super)) ==
           UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(ctx->worker);
    }
    if (status == UCS_OK) {
        return;
    } else if (status != UCS_INPROGRESS) {
        osc_fail("origin %u: %s flush after %s: %s", ctx->id,
                 iface ? "iface" : "ep", after, ucs_status_string(status));
    }
    osc_wait(ctx, &comp.done, "flush completion");
    if (comp.super.status != UCS_OK) {
        osc_fail("origin %u: %s flush after %s completed with %s", ctx->id,
                 iface ? "iface" : "ep", after,
                 ucs_status_string(comp.super.status));
    }
}

/* An operation's completion must have run by the time the flush did */
static void osc_expect_done(osc_ctx_t *ctx, ucs_status_t posted,
                            const osc_comp_t *comp, const char *what)
{
    if (posted == UCS_OK) {
        return; /* completed at once */
    }
    if (!comp->done) {
        osc_fail("origin %u: the flush after %s completed before %s's "
                 "completion ran",
                 ctx->id, what, what);
    }
    if (comp->super.status != UCS_OK) {
        osc_fail("origin %u: %s completed with %s", ctx->id, what,
                 ucs_status_string(comp->super.status));
    }
}

/* A 64-bit fetching atomic on the lock word, followed at once by a flush
 * (transport atomics) or answered by the target (emulated) */
static uint64_t osc_atomic(osc_ctx_t *ctx, int op, uint64_t compare,
                           uint64_t value)
{
    const char *what = (op == OSC_OP_CSWAP) ? "the lock's compare-and-swap"
                                            : "the unlock's fetch-and-add";
    osc_atomic_req_t req;
    ucs_status_t status;
    osc_comp_t comp;

    if (ctx->hw_atomics) {
        osc_comp_init(&comp);
        ctx->result = 0xdeadbeefdeadbeefull;
        if (op == OSC_OP_CSWAP) {
            while ((status = uct_ep_atomic_cswap64(
                        ctx->ep, compare, value, ctx->window, ctx->rkey.rkey,
                        &ctx->result, &comp.super)) == UCS_ERR_NO_RESOURCE) {
                uct_worker_progress(ctx->worker);
            }
        } else {
            while ((status = uct_ep_atomic64_fetch(
                        ctx->ep, UCT_ATOMIC_OP_ADD, value, &ctx->result,
                        ctx->window, ctx->rkey.rkey, &comp.super)) ==
                   UCS_ERR_NO_RESOURCE) {
                uct_worker_progress(ctx->worker);
            }
        }
        if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
            osc_fail("origin %u: %s: %s", ctx->id, what,
                     ucs_status_string(status));
        }
        osc_flush(ctx, what);
        osc_expect_done(ctx, status, &comp, what);
        return ctx->result;
    }

    req.op        = (uint32_t)op;
    req.origin    = ctx->id;
    req.req       = ++ctx->next_req;
    req.compare   = compare;
    req.value     = value;
    ctx->reply_in = 0;
    while ((status = uct_ep_am_short(ctx->ep, OSC_AM_ATOMIC, 0, &req,
                                     sizeof(req))) == UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(ctx->worker);
    }
    osc_check_status(status, "the atomic request");
    osc_wait(ctx, &ctx->reply_in, "atomic reply");
    if (ctx->reply_req != req.req) {
        osc_fail("origin %u: the reply to atomic request %" PRIu64
                 " answers %" PRIu64,
                 ctx->id, req.req, ctx->reply_req);
    }
    return ctx->reply_old;
}

static void osc_unpack(void *arg, const void *data, size_t length)
{
    memcpy(arg, data, length);
}

/* GET of @a length bytes at window offset @a offset into @a dest (inside
 * the registered buffer), bcopy or zcopy in turn, then a flush at once */
static void osc_get(osc_ctx_t *ctx, char *dest, uint64_t offset, size_t length,
                    const osc_data_hdr_t *expect, const char *what)
{
    static unsigned turn;
    int bcopy = ((turn++ & 1) != 0) &&
                (ctx->attr.cap.flags & UCT_IFACE_FLAG_GET_BCOPY) &&
                (length <= ctx->attr.cap.get.max_bcopy);
    ucs_status_t status;
    osc_comp_t comp;
    uct_iov_t iov;

    osc_comp_init(&comp);
    comp.expect = expect;
    comp.dest   = dest;
    memset(dest, 0xee, length); /* what a stale GET would leave */
    if (bcopy) {
        while ((status = uct_ep_get_bcopy(
                    ctx->ep, osc_unpack, dest, length, ctx->window + offset,
                    ctx->rkey.rkey, &comp.super)) == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        }
    } else {
        iov.buffer = dest;
        iov.length = length;
        iov.memh   = ctx->buf_memh;
        iov.stride = 0;
        iov.count  = 1;
        while ((status = uct_ep_get_zcopy(
                    ctx->ep, &iov, 1, ctx->window + offset, ctx->rkey.rkey,
                    &comp.super)) == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        }
    }
    if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
        osc_fail("origin %u: GET %s of %zu bytes (%s): %s", ctx->id,
                 bcopy ? "bcopy" : "zcopy", length, what,
                 ucs_status_string(status));
    }
    osc_flush(ctx, what);
    osc_expect_done(ctx, status, &comp, what);
    if ((status == UCS_INPROGRESS) && (expect != NULL) &&
        (comp.bad != expect->size)) {
        osc_fail("origin %u: %s completed with byte %zu of %zu not yet in "
                 "place",
                 ctx->id, what, comp.bad, length);
    }
}

/* PUT of @a length bytes from @a src (registered) to window offset
 * @a offset; the caller flushes */
static void osc_put(osc_ctx_t *ctx, const char *src, uint64_t offset,
                    size_t length, osc_comp_t *comp, ucs_status_t *status_p)
{
    ucs_status_t status;
    uct_iov_t iov;

    osc_comp_init(comp);
    if (length <= ctx->attr.cap.put.max_short) {
        while ((status = uct_ep_put_short(
                    ctx->ep, src, (unsigned)length, ctx->window + offset,
                    ctx->rkey.rkey)) == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        }
    } else {
        iov.buffer = (void *)src;
        iov.length = length;
        iov.memh   = ctx->buf_memh;
        iov.stride = 0;
        iov.count  = 1;
        while ((status = uct_ep_put_zcopy(
                    ctx->ep, &iov, 1, ctx->window + offset, ctx->rkey.rkey,
                    &comp->super)) == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        }
    }
    if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
        osc_fail("origin %u: PUT of %zu bytes: %s", ctx->id, length,
                 ucs_status_string(status));
    }
    *status_p = status;
}

static void osc_origin_run(osc_ctx_t *ctx)
{
    static const size_t sizes[] = {64,          512,     4096, 8192, 65536,
                                   1024 * 1024, 4 << 20, 100,  8184};
    size_t num_sizes            = sizeof(sizes) / sizeof(sizes[0]);
    char *land                  = ctx->buf;
    char *src                   = ctx->buf + ctx->buf_half;
    uint64_t *counter_src       = (uint64_t *)(ctx->buf + ctx->buf_half - 64);
    osc_data_hdr_t hdr, mine;
    ucs_status_t st_data, st_count;
    osc_comp_t c_data, c_count;
    uint64_t old, counter;
    unsigned long i;
    size_t size, bad;
    unsigned k = 0;

    for (i = 0; i < ctx->iters; ++i) {
        /* 1. the lock */
        for (;;) {
            old = osc_atomic(ctx, OSC_OP_CSWAP, 0, ctx->id);
            if (old == 0) {
                break;
            }
            if ((old > ctx->origins) || (old == ctx->id)) {
                osc_fail("origin %u, iteration %lu: the lock word holds "
                         "%" PRIu64 ", neither free nor another origin",
                         ctx->id, i, old);
            }
            ++ctx->contended;
        }

        /* 2. the counter and the last writer's data */
        osc_get(ctx, land, 8, 8, NULL, "the counter's GET");
        memcpy(&counter, land, 8);
        osc_get(ctx, land, OSC_DATA_OFFSET, sizeof(hdr), NULL,
                "the header's GET");
        memcpy(&hdr, land, sizeof(hdr));
        if (hdr.writer == 0) {
            if (counter != 0) {
                osc_fail("origin %u: the counter is %" PRIu64 " but the data "
                         "area was never written",
                         ctx->id, counter);
            }
        } else {
            if ((hdr.writer > ctx->origins) || (hdr.size < sizeof(hdr)) ||
                (hdr.size > ctx->max_size) || (hdr.counter + 1 != counter)) {
                osc_fail("origin %u, iteration %lu: the counter (%" PRIu64
                         ") and the data header (writer %" PRIu64
                         ", size %" PRIu64 ", counter %" PRIu64
                         ") disagree: a GET returned stale data or the "
                         "lock did not exclude",
                         ctx->id, i, counter, hdr.writer, hdr.size,
                         hdr.counter);
            }
            osc_get(ctx, land, OSC_DATA_OFFSET, hdr.size, &hdr,
                    "the last writer's data GET");
            bad = osc_check(land, &hdr);
            if (bad != hdr.size) {
                osc_fail("origin %u, iteration %lu: byte %zu of the %" PRIu64
                         " bytes origin %" PRIu64 " wrote in its iteration "
                         "%" PRIu64 " is wrong after GET",
                         ctx->id, i, bad, hdr.size, hdr.writer, hdr.iter);
            }
        }

        /* 3. new data and the counter + 1, flushed together */
        do {
            size = sizes[(i + ctx->id + k++) % num_sizes];
        } while (size > ctx->max_size);
        mine.writer  = ctx->id;
        mine.iter    = i;
        mine.size    = size & ~(size_t)7;
        mine.seed    = ((uint64_t)ctx->id << 40) ^ (i * 0x100000001b3ull);
        mine.counter = counter;
        osc_fill(src, &mine);
        osc_put(ctx, src, OSC_DATA_OFFSET, mine.size, &c_data, &st_data);
        *counter_src = counter + 1;
        osc_put(ctx, (const char *)counter_src, 8, 8, &c_count, &st_count);
        osc_flush(ctx, "the PUTs");
        osc_expect_done(ctx, st_data, &c_data, "the data PUT");
        osc_expect_done(ctx, st_count, &c_count, "the counter PUT");

        /* 4. read back */
        osc_get(ctx, land, OSC_DATA_OFFSET, mine.size, &mine,
                "the read-back GET");
        bad = osc_check(land, &mine);
        if (bad != mine.size) {
            osc_fail("origin %u, iteration %lu: byte %zu of the %" PRIu64
                     " bytes just PUT and flushed is wrong after GET (a "
                     "stale GET)",
                     ctx->id, i, bad, mine.size);
        }

        /* 5. the unlock */
        old = osc_atomic(ctx, OSC_OP_FADD, 0, (uint64_t) - (int64_t)ctx->id);
        if (old != ctx->id) {
            osc_fail("origin %u, iteration %lu: the unlock found the lock "
                     "word at %" PRIu64 ", not our id",
                     ctx->id, i, old);
        }
    }
}

/* ------------------------------------------------------------------------
 * Set-up
 */

static int osc_connect_sock(const char *host, unsigned port)
{
    struct addrinfo hints, *res, *ai;
    char service[16];
    double deadline = osc_now() + 30;
    int sock        = -1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%u", port);
    if (getaddrinfo(host, service, &hints, &res) != 0) {
        osc_fail("cannot resolve '%s'", host);
    }
    while (sock < 0) {
        for (ai = res; (ai != NULL) && (sock < 0); ai = ai->ai_next) {
            sock = socket(ai->ai_family, ai->ai_socktype, 0);
            if ((sock >= 0) &&
                (connect(sock, ai->ai_addr, ai->ai_addrlen) != 0)) {
                close(sock);
                sock = -1;
            }
        }
        if ((sock < 0) && (osc_now() > deadline)) {
            osc_fail("cannot reach the target at %s port %u: %s", host, port,
                     strerror(errno));
        }
        if (sock < 0) {
            usleep(100000);
        }
    }
    freeaddrinfo(res);
    return sock;
}

static void osc_origin(osc_ctx_t *ctx)
{
    uint32_t dev_len, addr_len;
    osc_welcome_t wel;
    osc_hello_t hello;
    osc_done_t done;
    char *my, *dev, *addr, *rkey;
    uint8_t verdict;

    osc_open(ctx);
    ctx->buf_half = ctx->max_size + 4096;
    if (posix_memalign((void **)&ctx->buf, 4096, 2 * ctx->buf_half) != 0) {
        osc_fail("out of memory for %zu bytes", 2 * ctx->buf_half);
    }
    memset(ctx->buf, 0, 2 * ctx->buf_half);
    osc_check_status(uct_md_mem_reg(ctx->md, ctx->buf, 2 * ctx->buf_half,
                                    UCT_MD_MEM_ACCESS_ALL, &ctx->buf_memh),
                     "uct_md_mem_reg");

    if (ctx->to_ep) {
        ctx->ep = osc_ep_create(ctx, NULL, NULL);
    }
    ctx->sock      = osc_connect_sock(ctx->host, ctx->port);
    my             = osc_my_addr(ctx, ctx->ep, &dev_len, &addr_len);
    hello.magic    = OSC_MAGIC;
    hello.to_ep    = (uint32_t)ctx->to_ep;
    hello.dev_len  = dev_len;
    hello.addr_len = addr_len;
    osc_send_all(ctx->sock, &hello, sizeof(hello));
    osc_send_all(ctx->sock, my, dev_len + addr_len);
    free(my);

    osc_recv_all(ctx->sock, &wel, sizeof(wel));
    if (wel.magic != OSC_MAGIC) {
        osc_fail("the target is not an %s of this version", OSC_PROG);
    }
    dev         = osc_recv_part(ctx->sock, wel.dev_len, "device address");
    addr        = osc_recv_part(ctx->sock, wel.addr_len, "address");
    rkey        = osc_recv_part(ctx->sock, wel.rkey_len, "remote key");
    ctx->id     = wel.id;
    ctx->window = wel.window;
    if ((wel.window_len < OSC_DATA_OFFSET + ctx->max_size) || (ctx->id == 0) ||
        (ctx->id > ctx->origins)) {
        osc_fail("the target's window (%" PRIu64 " bytes) or our id (%u of "
                 "%u) does not fit -S %zu / -o %u",
                 wel.window_len, ctx->id, ctx->origins, ctx->max_size,
                 ctx->origins);
    }
    osc_check_status(uct_rkey_unpack(ctx->component, rkey, &ctx->rkey),
                     "uct_rkey_unpack");
    if (ctx->to_ep) {
        osc_check_status(uct_ep_connect_to_ep(ctx->ep,
                                              (const uct_device_addr_t *)dev,
                                              (const uct_ep_addr_t *)addr),
                         "uct_ep_connect_to_ep");
    } else {
        ctx->ep = osc_ep_create(ctx, dev, addr);
    }
    free(dev);
    free(addr);
    free(rkey);

    printf("origin %u of %u: %lu iterations over %s/%s, connected to %s, "
           "%s atomics\n",
           ctx->id, ctx->origins, ctx->iters, ctx->tl, ctx->dev,
           ctx->to_ep ? "ep" : "iface",
           ctx->hw_atomics ? "transport" : "active-message");
    fflush(stdout);

    osc_origin_run(ctx);

    done.magic     = OSC_MAGIC;
    done.ok        = 1;
    done.iters     = ctx->iters;
    done.contended = ctx->contended;
    osc_send_all(ctx->sock, &done, sizeof(done));
    /* progress while the others finish: the target may need us */
    for (;;) {
        struct pollfd pfd = {.fd = ctx->sock, .events = POLLIN};
        uct_worker_progress(ctx->worker);
        if (poll(&pfd, 1, 0) > 0) {
            break;
        }
    }
    osc_recv_all(ctx->sock, &verdict, 1);
    printf("origin %u: %lu iterations checked, the lock found taken %lu "
           "times; target: %s\n",
           ctx->id, ctx->iters, ctx->contended, verdict ? "OK" : "FAILED");
    osc_report_pairs("origin");
    uct_ep_destroy(ctx->ep);
    uct_rkey_release(ctx->component, &ctx->rkey);
    uct_md_mem_dereg(ctx->md, ctx->buf_memh);
    exit(verdict ? 0 : 1);
}

static void osc_target(osc_ctx_t *ctx)
{
    char *parts[OSC_MAX_ORIGINS + 1][2];
    uint64_t total = 0, contended = 0;
    struct sockaddr_in sin;
    osc_welcome_t wel;
    osc_hello_t hello;
    osc_done_t done;
    socklen_t len;
    uint32_t dev_len, addr_len;
    unsigned id, finished = 0;
    int lsock, one        = 1;
    uint8_t verdict;
    char *my, *rkey;

    osc_open(ctx);
    ctx->win_len = OSC_DATA_OFFSET + ctx->max_size;
    if (posix_memalign((void **)&ctx->win, 4096, ctx->win_len) != 0) {
        osc_fail("out of memory for the %zu-byte window", ctx->win_len);
    }
    memset(ctx->win, 0, ctx->win_len);
    osc_check_status(uct_md_mem_reg(ctx->md, ctx->win, ctx->win_len,
                                    UCT_MD_MEM_ACCESS_ALL, &ctx->win_memh),
                     "uct_md_mem_reg");
    rkey = calloc(1, ctx->md_attr.rkey_packed_size + 1);
    osc_check_status(uct_md_mkey_pack(ctx->md, ctx->win_memh, rkey),
                     "uct_md_mkey_pack");

    lsock = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family      = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_ANY);
    sin.sin_port        = htons((uint16_t)ctx->port);
    setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((lsock < 0) || (bind(lsock, (struct sockaddr *)&sin, sizeof(sin))) ||
        listen(lsock, OSC_MAX_ORIGINS)) {
        osc_fail("cannot listen on port %u: %s; pick another with -p",
                 ctx->port, strerror(errno));
    }
    len = sizeof(sin);
    getsockname(lsock, (struct sockaddr *)&sin, &len);
    printf("target: waiting for %u origins on port %u\n", ctx->origins,
           ntohs(sin.sin_port));
    fflush(stdout);

    /* every origin's address first, then the endpoints */
    for (id = 1; id <= ctx->origins; ++id) {
        ctx->socks[id] = accept(lsock, NULL, NULL);
        if (ctx->socks[id] < 0) {
            osc_fail("accept failed: %s", strerror(errno));
        }
        osc_recv_all(ctx->socks[id], &hello, sizeof(hello));
        if ((hello.magic != OSC_MAGIC) ||
            (hello.to_ep != (uint32_t)ctx->to_ep)) {
            osc_fail("origin %u is not an %s of this version or has another "
                     "-C",
                     id, OSC_PROG);
        }
        parts[id][0] =
            osc_recv_part(ctx->socks[id], hello.dev_len, "device address");
        parts[id][1] = osc_recv_part(ctx->socks[id], hello.addr_len, "address");
    }
    close(lsock);

    for (id = 1; id <= ctx->origins; ++id) {
        if (ctx->to_ep) {
            ctx->eps[id] = osc_ep_create(ctx, NULL, NULL);
        } else {
            ctx->eps[id] = osc_ep_create(ctx, parts[id][0], parts[id][1]);
        }
        my = osc_my_addr(ctx, ctx->eps[id], &dev_len, &addr_len);
        if (ctx->to_ep) {
            osc_check_status(
                uct_ep_connect_to_ep(ctx->eps[id],
                                     (const uct_device_addr_t *)parts[id][0],
                                     (const uct_ep_addr_t *)parts[id][1]),
                "uct_ep_connect_to_ep");
        }
        memset(&wel, 0, sizeof(wel));
        wel.magic      = OSC_MAGIC;
        wel.id         = id;
        wel.dev_len    = dev_len;
        wel.addr_len   = addr_len;
        wel.rkey_len   = (uint32_t)ctx->md_attr.rkey_packed_size;
        wel.window     = (uintptr_t)ctx->win;
        wel.window_len = ctx->win_len;
        osc_send_all(ctx->socks[id], &wel, sizeof(wel));
        osc_send_all(ctx->socks[id], my, dev_len + addr_len);
        osc_send_all(ctx->socks[id], rkey, wel.rkey_len);
        free(my);
        free(parts[id][0]);
        free(parts[id][1]);
    }

    /* serve emulated atomics until every origin reported */
    while (finished < ctx->origins) {
        uct_worker_progress(ctx->worker);
        if (ctx->queued > 0) {
            osc_target_serve(ctx);
        }
        for (id = 1; id <= ctx->origins; ++id) {
            struct pollfd pfd = {.fd = ctx->socks[id], .events = POLLIN};
            if (ctx->finished[id] || (poll(&pfd, 1, 0) <= 0)) {
                continue;
            }
            if (recv(ctx->socks[id], &done, sizeof(done), MSG_WAITALL) !=
                (ssize_t)sizeof(done)) {
                osc_fail("target: origin %u went away before it reported "
                         "(killed? see its output)",
                         id);
            }
            if ((done.magic != OSC_MAGIC) || !done.ok) {
                osc_fail("target: origin %u reported a failure", id);
            }
            total += done.iters;
            contended += done.contended;
            ctx->finished[id] = 1;
            ++finished;
        }
    }

    {
        uint64_t lock, counter;
        memcpy(&lock, ctx->win, 8);
        memcpy(&counter, ctx->win + 8, 8);
        verdict = (lock == 0) && (counter == total);
        if (verdict) {
            printf("OK %u origins, %" PRIu64 " lock-protected iterations, "
                   "counter %" PRIu64 ", lock free, taken %" PRIu64 " times "
                   "by another origin when asked\n",
                   ctx->origins, total, counter, contended);
        } else {
            printf("FAILED: counter %" PRIu64 " after %" PRIu64
                   " iterations, lock word %" PRIu64 "\n",
                   counter, total, lock);
        }
        osc_report_pairs("target");
        fflush(stdout);
    }
    for (id = 1; id <= ctx->origins; ++id) {
        osc_send_all(ctx->socks[id], &verdict, 1);
    }
    /* the origins destroy their endpoints first */
    for (id = 1; id <= ctx->origins; ++id) {
        char c;
        while (recv(ctx->socks[id], &c, 1, 0) > 0) {
        }
    }
    for (id = 1; id <= ctx->origins; ++id) {
        uct_ep_destroy(ctx->eps[id]);
    }
    uct_md_mem_dereg(ctx->md, ctx->win_memh);
    exit(verdict ? 0 : 1);
}

static void osc_usage(void)
{
    fprintf(stderr,
            "Usage: %s [-x TL] [-d DEV] [-C iface|ep] [-p PORT] [-o ORIGINS] "
            "[-S MAX]             (target)\n"
            "       %s [-x TL] [-d DEV] [-C iface|ep] -p PORT [-o ORIGINS] "
            "[-n ITERS] [-S MAX] [-T SEC] TARGET-HOST  (origin)\n"
            "  -x TL       transport (default tcp)\n"
            "  -d DEV      device (default lo)\n"
            "  -C MODE     connect to the peer's interface (default) or "
            "endpoint\n"
            "  -p PORT     control port (target: 0 picks one, printed)\n"
            "  -o ORIGINS  origin processes, 1..%d (default 2); the same on "
            "every side\n"
            "  -n ITERS    lock-protected iterations per origin (default "
            "1000)\n"
            "  -S MAX      largest PUT/GET, 64 B .. 64 MiB (default 4m); "
            "the same on every side\n"
            "  -T SEC      give up when a flush or reply takes longer "
            "(default 60)\n",
            OSC_PROG, OSC_PROG, OSC_MAX_ORIGINS);
    exit(2);
}

static unsigned long osc_parse_num(const char *arg, const char *opt,
                                   unsigned long min, unsigned long max)
{
    unsigned long mult = 1, v;
    char *end;

    errno = 0;
    v     = strtoul(arg, &end, 10);
    if ((*end == 'k') || (*end == 'K')) {
        mult = 1024, ++end;
    } else if ((*end == 'm') || (*end == 'M')) {
        mult = 1024 * 1024, ++end;
    }
    if ((errno != 0) || (end == arg) || (*end != '\0') || (v > max / mult) ||
        (v * mult < min)) {
        fprintf(stderr, "%s: invalid %s '%s': give %lu..%lu\n", OSC_PROG, opt,
                arg, min, max);
        exit(2);
    }
    return v * mult;
}

int main(int argc, char **argv)
{
    osc_ctx_t ctx;
    int c;

    /* the object tree, in this process only (no daemon): the pairing
     * report reads it */
    ucs_vfs_set_enabled(1);
    memset(&ctx, 0, sizeof(ctx));
    ctx.tl        = "tcp";
    ctx.dev       = "lo";
    ctx.origins   = 2;
    ctx.iters     = 1000;
    ctx.max_size  = 4 << 20;
    ctx.stall_sec = 60;
    ctx.port      = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);

    while ((c = getopt(argc, argv, "x:d:C:p:o:n:S:T:h")) != -1) {
        switch (c) {
        case 'x':
            ctx.tl = optarg;
            break;
        case 'd':
            ctx.dev = optarg;
            break;
        case 'C':
            if (!strcmp(optarg, "ep")) {
                ctx.to_ep = 1;
            } else if (strcmp(optarg, "iface")) {
                fprintf(stderr, "%s: invalid -C '%s': iface or ep\n", OSC_PROG,
                        optarg);
                return 2;
            }
            break;
        case 'p':
            ctx.port = (unsigned)osc_parse_num(optarg, "-p", 0, 65535);
            break;
        case 'o':
            ctx.origins =
                (unsigned)osc_parse_num(optarg, "-o", 1, OSC_MAX_ORIGINS);
            break;
        case 'n':
            ctx.iters = osc_parse_num(optarg, "-n", 1, 100000000);
            break;
        case 'S':
            ctx.max_size =
                osc_parse_num(optarg, "-S", OSC_MIN_SIZE, 64ul << 20);
            break;
        case 'T':
            ctx.stall_sec = (double)osc_parse_num(optarg, "-T", 1, 86400);
            break;
        default:
            osc_usage();
        }
    }
    if (optind < argc - 1) {
        osc_usage();
    }
    if (optind == argc - 1) {
        if (ctx.port == 0) {
            fprintf(stderr, "%s: an origin needs the target's -p PORT\n",
                    OSC_PROG);
            return 2;
        }
        ctx.host = argv[optind];
        osc_origin(&ctx);
    } else {
        osc_target(&ctx);
    }
    return 0;
}
