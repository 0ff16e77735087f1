/*
 * uct_ud_scale: the ud_verbs interface of -d with its registered buffer,
 * progress that sleeps on the event fd when nothing happens, blocking
 * sends and flushes for the few control messages, the interface's own
 * counters (read from the transport's internal structure, which the
 * object tree also shows: turning the tree on would add its files to
 * every endpoint's heap), the run directory's files and rxe's counters.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ud_scale.h"

#include <common/uct_iface_open.h>
#include <common/uct_md_find.h>
#include <uct/ib/ud/ud.h>
#include <ucs/time/time.h>

#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Progress calls that find nothing before us_wait() sleeps */
#define US_SPINS_BEFORE_SLEEP 8

const char *us_side(const us_ctx_t *ctx)
{
    static char name[32];

    if (ctx->client_id < 0) {
        return "server";
    }
    snprintf(name, sizeof(name), "client %d", ctx->client_id);
    return name;
}

void us_error(us_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;

    ctx->failed = 1;
    if (++ctx->errors > US_MAX_ERRORS) {
        return;
    }
    fflush(stdout);
    va_start(ap, fmt);
    fprintf(stderr, "%s %s: error at %.3f: ", US_PROG, us_side(ctx), sc_now());
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static int us_fail(us_ctx_t *ctx, const char *what, ucs_status_t status)
{
    us_error(ctx, "%s failed: %s", what, ucs_status_string(status));
    return -1;
}

static ucs_status_t us_err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
{
    us_ctx_t *ctx = arg;
    unsigned i;

    ++ctx->handler_calls;
    if (ctx->client_id >= 0) {
        us_error(ctx, "the error handler was called: %s",
                 ucs_status_string(status));
        return UCS_OK;
    }
    for (i = 0; i < ctx->num_clients; ++i) {
        if (ctx->peers[i].ep == ep) {
            ++ctx->peers[i].failed;
            if (!ctx->peers[i].dead) {
                us_error(ctx,
                         "the error handler was called for the ep of "
                         "client %u, which is alive: %s",
                         i, ucs_status_string(status));
            }
            return UCS_OK;
        }
    }
    us_error(ctx, "the error handler was called for an ep of no client: %s",
             ucs_status_string(status));
    return UCS_OK;
}

static int us_iface_open(us_ctx_t *ctx)
{
    const char *what;
    ucs_status_t status;

    status = test_uct_open(ctx->md, US_TL, ctx->dev_name, us_err_handler, ctx,
                           &ctx->uct, &what);
    if (status != UCS_OK) {
        return us_fail(ctx, what, status);
    }
    if (!(ctx->uct.attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) ||
        !(ctx->uct.attr.cap.flags & UCT_IFACE_FLAG_AM_BCOPY) ||
        !(ctx->uct.attr.cap.flags & UCT_IFACE_FLAG_PUT_BCOPY) ||
        (ctx->uct.attr.cap.put.max_bcopy < US_SLOT)) {
        us_error(ctx,
                 "%s/%s cannot connect to an interface, or has no "
                 "am_bcopy, or no put_bcopy of %u bytes",
                 US_TL, ctx->dev_name, US_SLOT);
        return -1;
    }
    if ((ctx->uct.attr.device_addr_len > US_ADDR_MAX) ||
        (ctx->uct.attr.iface_addr_len > US_ADDR_MAX)) {
        us_error(ctx, "addresses of %zu and %zu bytes; at most %u fit",
                 ctx->uct.attr.device_addr_len, ctx->uct.attr.iface_addr_len,
                 US_ADDR_MAX);
        return -1;
    }
    ctx->max_msg  = ctx->uct.attr.cap.am.max_bcopy;
    ctx->event_fd = -1;
    if ((ctx->uct.attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) &&
        (uct_iface_event_fd_get(ctx->uct.iface, &ctx->event_fd) != UCS_OK)) {
        ctx->event_fd = -1;
    }
    uct_iface_progress_enable(ctx->uct.iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

/* @a size bytes, zeroed, registered for remote access, its key packed */
static int us_buf_alloc(us_ctx_t *ctx, size_t size)
{
    uct_md_attr_t md_attr;
    ucs_status_t status;

    status = uct_md_query(ctx->md, &md_attr);
    if (status != UCS_OK) {
        return us_fail(ctx, "uct_md_query", status);
    }
    if (md_attr.rkey_packed_size > sizeof(ctx->rkey_buf)) {
        us_error(ctx, "packed remote keys of %zu bytes; at most %zu fit",
                 md_attr.rkey_packed_size, sizeof(ctx->rkey_buf));
        return -1;
    }
    if (posix_memalign(&ctx->buf, 4096, size) != 0) {
        ctx->buf = NULL;
        us_error(ctx, "cannot allocate %zu bytes", size);
        return -1;
    }
    memset(ctx->buf, 0, size);
    ctx->buf_size = size;
    status = uct_md_mem_reg(ctx->md, ctx->buf, size, UCT_MD_MEM_ACCESS_ALL,
                            &ctx->memh);
    if (status != UCS_OK) {
        ctx->memh = UCT_MEM_HANDLE_NULL;
        return us_fail(ctx, "uct_md_mem_reg", status);
    }
    status = uct_md_mkey_pack(ctx->md, ctx->memh, ctx->rkey_buf);
    if (status != UCS_OK) {
        return us_fail(ctx, "uct_md_mkey_pack", status);
    }
    ctx->rkey_len = md_attr.rkey_packed_size;
    return 0;
}

int us_open(us_ctx_t *ctx, size_t buf_size)
{
    ucs_status_t status;

    ctx->memh = UCT_MEM_HANDLE_NULL;
    status = test_uct_md_find(US_TL, ctx->dev_name, &ctx->md, &ctx->component);
    if (status == UCS_ERR_NO_DEVICE) {
        us_error(ctx, "%s on device %s not found (uct_info -d lists them)",
                 US_TL, ctx->dev_name);
        return -1;
    } else if (status != UCS_OK) {
        ctx->md = NULL;
        return us_fail(ctx, "uct_query_components", status);
    }
    if (us_iface_open(ctx) != 0) {
        return -1;
    }
    return us_buf_alloc(ctx, buf_size);
}

void us_close(us_ctx_t *ctx)
{
    if (ctx->memh != UCT_MEM_HANDLE_NULL) {
        uct_md_mem_dereg(ctx->md, ctx->memh);
    }
    test_uct_close(ctx->uct.iface, ctx->uct.worker, ctx->uct.async, ctx->md);
    free(ctx->buf);
}

int us_set_handler(us_ctx_t *ctx, uint8_t id, uct_am_callback_t cb)
{
    ucs_status_t status;

    status =
        uct_iface_set_am_handler(ctx->uct.iface, id, cb, ctx, UCT_CB_FLAG_SYNC);
    return (status == UCS_OK)
               ? 0
               : us_fail(ctx, "uct_iface_set_am_handler", status);
}

void *us_calloc(us_ctx_t *ctx, size_t count, size_t size)
{
    void *p = calloc(count, size);

    if (p == NULL) {
        us_error(ctx, "out of memory for %zu objects of %zu bytes", count,
                 size);
    }
    return p;
}

int us_ep_create(us_ctx_t *ctx, const void *dev_addr, const void *iface_addr,
                 uct_ep_h *ep_p)
{
    uct_ep_params_t params;
    ucs_status_t status;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = ctx->uct.iface;
    params.dev_addr   = dev_addr;
    params.iface_addr = iface_addr;
    status            = uct_ep_create(&params, ep_p);
    if (status != UCS_OK) {
        *ep_p = NULL;
        return us_fail(ctx, "uct_ep_create", status);
    }
    return 0;
}

int us_rkey_unpack(us_ctx_t *ctx, const void *buf, const char *whose,
                   uct_rkey_bundle_t *rkey, int *have_p)
{
    if (uct_rkey_unpack(ctx->component, buf, rkey) != UCS_OK) {
        us_error(ctx, "the rkey of %s does not unpack", whose);
        return -1;
    }
    *have_p = 1;
    return 0;
}

/* A client's line every US_STATUS_SEC (where a long run stands; the
 * server prints its own): looked at every 1024 waits, a clock read is a
 * system call in some guests */
static void us_client_status(us_ctx_t *ctx)
{
    us_counters_t c;
    double now;

    if ((ctx->client_id < 0) || ((++ctx->wait_calls & 1023) != 0)) {
        return;
    }
    now = sc_now();
    if (now < ctx->next_status) {
        return;
    }
    ctx->next_status = now + US_STATUS_SEC;
    us_counters(ctx, &c);
    fprintf(stderr,
            "%s %s: at %.1f s: round %u, %u of %u eps done, %u in flight; "
            "%u eps, %u active, %u owed an ACK; rx %u of %u posted, %d "
            "send slots free; CREQs sent again %lu, packets %lu, "
            "duplicates %lu, stale %lu, dropped %lu; CREQ window %u "
            "(0: never cut), cut %lu times\n",
            US_PROG, us_side(ctx), now, ctx->round, ctx->done_eps, ctx->my_eps,
            ctx->in_flight, c.eps, c.active, c.acks_owed, c.rx_posted,
            c.rx_queue_len, c.tx_available,
            (unsigned long)c.stats[US_STAT_CREQ_RESENT],
            (unsigned long)c.stats[US_STAT_TX_RESENT],
            (unsigned long)c.stats[US_STAT_RX_DUP],
            (unsigned long)c.stats[US_STAT_RX_STALE],
            (unsigned long)c.stats[US_STAT_RX_DROPPED], c.creq_cwnd,
            (unsigned long)c.creq_cuts);
}

unsigned us_wait(us_ctx_t *ctx, int max_ms)
{
    struct pollfd pfd = {.fd = ctx->event_fd, .events = POLLIN};
    unsigned count;

    us_client_status(ctx);
    count = uct_worker_progress(ctx->uct.worker);
    if (count > 0) {
        ctx->idle_spins = 0;
        return count;
    }
    if ((max_ms <= 0) || (++ctx->idle_spins < US_SPINS_BEFORE_SLEEP)) {
        return 0;
    }
    ctx->idle_spins = 0;
    if (ctx->event_fd < 0) {
        usleep(1000);
    } else if (uct_iface_event_arm(ctx->uct.iface,
                                   UCT_EVENT_SEND_COMP | UCT_EVENT_RECV) ==
               UCS_OK) {
        if ((poll(&pfd, 1, max_ms) < 0) && (errno != EINTR)) {
            us_error(ctx, "poll failed: %s", strerror(errno));
        }
    }
    return 0;
}

size_t us_pack(void *dest, void *arg)
{
    const us_pack_t *pack = arg;

    memcpy(dest, pack->data, pack->length);
    return pack->length;
}

int us_send(us_ctx_t *ctx, uct_ep_h ep, uint8_t id, const void *data,
            size_t length)
{
    us_pack_t pack  = {.data = data, .length = length};
    double deadline = sc_now() + ctx->limit;
    ssize_t ret;

    for (;;) {
        ret = uct_ep_am_bcopy(ep, id, us_pack, &pack, 0);
        if (ret >= 0) {
            return 0;
        } else if (ret != UCS_ERR_NO_RESOURCE) {
            return us_fail(ctx, "am_bcopy", (ucs_status_t)ret);
        } else if (sc_now() > deadline) {
            us_error(ctx, "no send resources for %.0f s (-T)", ctx->limit);
            return -1;
        }
        us_wait(ctx, 0);
    }
}

static void us_flush_done(uct_completion_t *self)
{}

int us_flush(us_ctx_t *ctx, uct_ep_h ep)
{
    uct_completion_t comp = {.func = us_flush_done, .count = 1};
    double deadline       = sc_now() + ctx->limit;
    ucs_status_t status;

    for (;;) {
        status = uct_ep_flush(ep, UCT_FLUSH_FLAG_LOCAL, &comp);
        if (status == UCS_OK) {
            return 0;
        } else if (status == UCS_INPROGRESS) {
            break;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return us_fail(ctx, "uct_ep_flush", status);
        } else if (sc_now() > deadline) {
            us_error(ctx, "no resources to flush for %.0f s (-T)", ctx->limit);
            return -1;
        }
        us_wait(ctx, 1);
    }
    while (comp.count > 0) {
        if (sc_now() > deadline) {
            us_error(ctx, "a flush did not complete in %.0f s (-T)",
                     ctx->limit);
            return -1;
        }
        us_wait(ctx, 10);
    }
    return (comp.status == UCS_OK) ? 0 : us_fail(ctx, "a flush", comp.status);
}

/* Where the interface keeps the counters of us_counters_t::stats, and
 * their names, by US_STAT_* */
#define US_UD_STAT(_name)                             \
    {                                                 \
#_name, offsetof(uct_ud_iface_t, stats._name) \
    }
static const struct {
    const char *name;
    size_t offset;
} us_ud_stats[US_STAT_LAST] = {
    US_UD_STAT(creq_resent), US_UD_STAT(creq_queued),
    US_UD_STAT(tx_resent),   US_UD_STAT(rx_dropped),
    US_UD_STAT(rx_dup),      US_UD_STAT(rx_stale),
    US_UD_STAT(idle_probes), US_UD_STAT(peer_reclaimed),
    US_UD_STAT(tx_no_slot)};

const char *us_stat_name(unsigned stat)
{
    return us_ud_stats[stat].name;
}

void us_counters(us_ctx_t *ctx, us_counters_t *c)
{
    uct_ud_iface_t *iface = uct_ud_iface(ctx->uct.iface);
    unsigned i;

    uct_ud_enter(iface);
    for (i = 0; i < US_STAT_LAST; ++i) {
        memcpy(&c->stats[i], (char *)iface + us_ud_stats[i].offset,
               sizeof(c->stats[i]));
    }
    c->eps          = iface->eps.count;
    c->private_eps  = iface->eps.num_private;
    c->ahs          = iface->ahs.count;
    c->rx_posted    = iface->rx.posted;
    c->rx_queue_len = iface->rx.max;
    c->tx_available = iface->tx.available;
    c->active       = (unsigned)ucs_list_length(&iface->active);
    c->acks_owed    = iface->acks.count;
    c->creq_cwnd    = (iface->creq.cut_time == 0) ? 0 : iface->creq.cwnd;
    c->creq_cuts    = iface->stats.creq_cwnd_cuts;
    c->timeout      = ucs_time_to_sec(iface->config.timeout);
    uct_ud_leave(iface);
}

unsigned us_rx_posted(us_ctx_t *ctx)
{
    uct_ud_iface_t *iface = uct_ud_iface(ctx->uct.iface);
    unsigned posted;

    uct_ud_enter(iface);
    posted = iface->rx.posted;
    uct_ud_leave(iface);
    return posted;
}

uint64_t us_key(unsigned client, unsigned gidx, unsigned round, int put)
{
    return ((uint64_t)gidx << 32) ^ ((uint64_t)client << 12) ^
           ((uint64_t)round << 4) ^ (put ? 1 : 0);
}

double us_realtime(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

void us_path(const us_ctx_t *ctx, char *path, size_t size, const char *fmt, ...)
{
    size_t len;
    va_list ap;

    len = (size_t)snprintf(path, size, "%s/", ctx->dir);
    if (len >= size) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(path + len, size - len, fmt, ap);
    va_end(ap);
}

int us_file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

int us_file_write(us_ctx_t *ctx, const char *path, const char *text)
{
    char tmp[4096];
    FILE *file;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    file = fopen(tmp, "w");
    if ((file == NULL) || (fputs(text, file) < 0) || (fclose(file) != 0) ||
        (rename(tmp, path) != 0)) {
        us_error(ctx, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void us_client_share(const us_ctx_t *ctx, unsigned id, unsigned *eps_p,
                     unsigned *base_p)
{
    unsigned each = ctx->num_eps / ctx->num_clients;
    unsigned rest = ctx->num_eps % ctx->num_clients;

    *eps_p  = each + (id < rest);
    *base_p = id * each + ((id < rest) ? id : rest);
}

long us_hw_counter(const char *dev, const char *name)
{
    char path[512], ibdev[64];
    unsigned port = 1;
    long value    = -1;
    const char *colon;
    FILE *file;

    colon = strchr(dev, ':');
    snprintf(ibdev, sizeof(ibdev), "%.*s",
             (int)((colon != NULL) ? (size_t)(colon - dev) : strlen(dev)), dev);
    if (colon != NULL) {
        port = (unsigned)strtoul(colon + 1, NULL, 10);
    }
    snprintf(path, sizeof(path),
             "/sys/class/infiniband/%s/ports/%u/hw_counters/%s", ibdev, port,
             name);
    file = fopen(path, "r");
    if (file == NULL) {
        return -1;
    }
    if (fscanf(file, "%ld", &value) != 1) {
        value = -1;
    }
    fclose(file);
    return value;
}
