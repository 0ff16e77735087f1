/*
 * uct_stream_check: the memory domain and interface of -t/-d, the
 * endpoints' state, the buffers (the server's PUT area, the client's
 * zcopy slots), the size limits of each operation kind, and cleanup.
 */
#include "stream_check.h"

#include <common/uct_iface_open.h>
#include <common/uct_md_find.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sc_md_open(sc_ctx_t *ctx)
{
    ucs_status_t status;

    status = test_uct_md_find(ctx->tl_name, ctx->dev_name, &ctx->md,
                              &ctx->component);
    if (status == UCS_ERR_NO_DEVICE) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "transport %s on device %s not found "
                "(uct_info -d lists the devices)",
                ctx->tl_name, ctx->dev_name);
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

static int sc_set_handlers(sc_ctx_t *ctx)
{
    static const struct {
        uint8_t id;
        uct_am_callback_t cb;
        int client;
    } handlers[] = {
        {SC_AM_DATA, sc_am_data, 0},   {SC_AM_ROUND, sc_am_round, 0},
        {SC_AM_FIN, sc_am_fin, 0},     {SC_AM_HELLO, sc_am_hello, 0},
        {SC_AM_HELLO, sc_am_hello, 1}, {SC_AM_ACK, sc_am_ack, 1}};
    ucs_status_t status;
    unsigned i;

    for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); ++i) {
        if (handlers[i].client != sc_is_client(ctx)) {
            continue;
        }
        status = uct_iface_set_am_handler(
            ctx->iface, handlers[i].id, handlers[i].cb, ctx, UCT_CB_FLAG_SYNC);
        if (status != UCS_OK) {
            return sc_fail(ctx, "uct_iface_set_am_handler", status);
        }
    }
    return 0;
}

int sc_iface_open(sc_ctx_t *ctx)
{
    test_uct_open_t opened;
    const char *what;
    ucs_status_t status;

    status = test_uct_open(ctx->md, ctx->tl_name, ctx->dev_name,
                           ctx->err_handler ? sc_err_handler : NULL, ctx,
                           &opened, &what);
    if (status != UCS_OK) {
        return sc_fail(ctx, what, status);
    }
    ctx->async  = opened.async;
    ctx->worker = opened.worker;
    ctx->iface  = opened.iface;
    ctx->attr   = opened.attr;
    if (!(ctx->attr.cap.flags & UCT_IFACE_FLAG_AM_BCOPY) ||
        (ctx->attr.cap.am.max_bcopy < sizeof(sc_fin_msg_t))) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "%s/%s has no am_bcopy of %zu bytes "
                "for the control messages",
                ctx->tl_name, ctx->dev_name, sizeof(sc_fin_msg_t));
        return -1;
    }
    if (ctx->err_handler &&
        !(ctx->attr.cap.flags & UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE)) {
        printf("%s: %s/%s does not announce ERRHANDLE_PEER_FAILURE\n",
               sc_side(ctx), ctx->tl_name, ctx->dev_name);
    }
    ctx->use_pending = !!(ctx->attr.cap.flags & UCT_IFACE_FLAG_PENDING);

    if (sc_set_handlers(ctx) != 0) {
        return -1;
    }
    uct_iface_progress_enable(ctx->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

int sc_streams_alloc(sc_ctx_t *ctx)
{
    sc_stream_t *s;
    unsigned i;

    ctx->streams = calloc(ctx->num_eps, sizeof(*ctx->streams));
    if (ctx->streams == NULL) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for %u endpoints",
                ctx->num_eps);
        return -1;
    }
    for (i = 0; i < ctx->num_eps; ++i) {
        s                  = &ctx->streams[i];
        s->ctx             = ctx;
        s->index           = i;
        s->rng             = 0x853c49e6748fea9bull ^ ((i + 1) * 0x9e37ull);
        s->state           = SC_ST_SEND;
        s->acked_round     = -1;
        s->ack_to_send     = -1;
        s->ack_sent        = -1;
        s->next_op         = i;
        s->flush_comp.func = sc_comp_cb;
    }
    return 0;
}

/* @a length bytes, 4k aligned and zeroed, registered when the md can */
static int sc_buf_alloc(sc_ctx_t *ctx, size_t length)
{
    ucs_status_t status;

    if (posix_memalign(&ctx->buf, 4096, length) != 0) {
        ctx->buf = NULL;
        sc_stop(ctx, SC_EXIT_ERROR, "cannot allocate %zu bytes", length);
        return -1;
    }
    memset(ctx->buf, 0, length);
    ctx->buf_size = length;

    if (ctx->md_attr.cap.flags & UCT_MD_FLAG_REG) {
        status = uct_md_mem_reg(ctx->md, ctx->buf, length,
                                UCT_MD_MEM_ACCESS_ALL, &ctx->memh);
        if (status != UCS_OK) {
            ctx->memh = UCT_MEM_HANDLE_NULL;
            return sc_fail(ctx, "uct_md_mem_reg", status);
        }
    }
    return 0;
}

/* Server: two halves per endpoint, smaller when there are many */
int sc_server_buffers_alloc(sc_ctx_t *ctx)
{
    const uint64_t put_flags = UCT_IFACE_FLAG_PUT_SHORT |
                               UCT_IFACE_FLAG_PUT_BCOPY |
                               UCT_IFACE_FLAG_PUT_ZCOPY;
    size_t half;
    unsigned i;

    if ((ctx->mode == SC_MODE_AM) || !(ctx->attr.cap.flags & put_flags)) {
        return 0;
    }
    half = SC_PUT_AREA / (2 * ctx->num_eps);
    half = (half > SC_PUT_HALF_MAX)   ? SC_PUT_HALF_MAX
           : (half < SC_PUT_HALF_MIN) ? SC_PUT_HALF_MIN
                                      : half;
    half &= ~(size_t)4095;
    if (sc_buf_alloc(ctx, 2 * half * ctx->num_eps) != 0) {
        return -1;
    }
    ctx->half = half;
    for (i = 0; i < ctx->num_eps; ++i) {
        ctx->streams[i].put_area = (char *)ctx->buf + 2 * half * i;
    }
    return 0;
}

/* The limits of one kind: @a cap_name and @a cap are the transport's
 * limit, @a extra what the operation adds to it (the am_short header) */
static void sc_limit_set(sc_ctx_t *ctx, sc_op_t op, uint64_t flag,
                         const char *cap_name, size_t cap, size_t extra,
                         size_t min, size_t align)
{
    sc_op_limits_t *l = &ctx->limits[op];
    size_t max        = ctx->max_size;
    size_t why_value  = max;
    const char *why   = "-s";

    if (!(ctx->attr.cap.flags & flag)) {
        if (ctx->verbose) {
            printf("client: %-9s not used: %s/%s does not offer it\n",
                   sc_op_names[op], ctx->tl_name, ctx->dev_name);
        }
        return;
    }
    if (cap + extra < max) {
        max       = cap + extra;
        why       = cap_name;
        why_value = cap;
    }
    if ((op >= SC_OP_PUT_SHORT) && (ctx->half < max)) {
        max       = ctx->half;
        why       = "half of the endpoint's PUT area,";
        why_value = ctx->half;
        extra     = 0;
    }
    max &= ~(align - 1);
    if (max < min) {
        if (ctx->verbose) {
            printf("client: %-9s not used: at most %zu bytes (%s %zu), "
                   "the least is %zu\n",
                   sc_op_names[op], max, why, why_value, min);
        }
        return;
    }
    l->enabled = 1;
    l->min     = min;
    l->max     = max;
    if (ctx->verbose) {
        printf("client: %-9s %zu..%zu bytes (%s %zu%s)\n", sc_op_names[op], min,
               max, why, why_value,
               ((extra > 0) && (why == cap_name)) ? " + the 8-byte header"
                                                  : "");
    }
}

/* The largest size of @a op, 0 when it is not used */
static size_t sc_limit_max(const sc_ctx_t *ctx, sc_op_t op)
{
    return ctx->limits[op].enabled ? ctx->limits[op].max : 0;
}

/* Client: what each operation kind may send, after -m, -s and the
 * interface's capabilities */
static int sc_limits_setup(sc_ctx_t *ctx)
{
    const uct_iface_attr_t *a = &ctx->attr;
    const size_t hdr          = sizeof(sc_msg_hdr_t);
    size_t zmin;

    if (ctx->mode != SC_MODE_PUT) {
        sc_limit_set(ctx, SC_OP_AM_SHORT, UCT_IFACE_FLAG_AM_SHORT, "max_short",
                     a->cap.am.max_short, sizeof(uint64_t), hdr, 1);
        sc_limit_set(ctx, SC_OP_AM_BCOPY, UCT_IFACE_FLAG_AM_BCOPY, "max_bcopy",
                     a->cap.am.max_bcopy, 0, hdr, 1);
        ctx->limits[SC_OP_AM_ZCOPY].hdr_in_header = (a->cap.am.max_hdr >= hdr);
        zmin = (a->cap.am.min_zcopy > 1) ? a->cap.am.min_zcopy : 1;
        if (a->cap.am.max_iov > 0) {
            sc_limit_set(ctx, SC_OP_AM_ZCOPY, UCT_IFACE_FLAG_AM_ZCOPY,
                         "max_zcopy", a->cap.am.max_zcopy, 0, hdr + zmin, 1);
        }
        ctx->limits[SC_OP_AM_ZCOPY].max_iov = a->cap.am.max_iov;
    }
    if ((ctx->mode != SC_MODE_AM) && (ctx->half > 0)) {
        sc_limit_set(ctx, SC_OP_PUT_SHORT, UCT_IFACE_FLAG_PUT_SHORT,
                     "max_short", a->cap.put.max_short, 0, 8, 8);
        sc_limit_set(ctx, SC_OP_PUT_BCOPY, UCT_IFACE_FLAG_PUT_BCOPY,
                     "max_bcopy", a->cap.put.max_bcopy, 0, 8, 8);
        zmin = (a->cap.put.min_zcopy + 7) & ~(size_t)7;
        if (a->cap.put.max_iov > 0) {
            sc_limit_set(ctx, SC_OP_PUT_ZCOPY, UCT_IFACE_FLAG_PUT_ZCOPY,
                         "max_zcopy", a->cap.put.max_zcopy, 0,
                         (zmin > 8) ? zmin : 8, 8);
        }
        ctx->limits[SC_OP_PUT_ZCOPY].max_iov = a->cap.put.max_iov;
    } else if (ctx->mode != SC_MODE_AM) {
        printf("client: the server offers no PUT area (%s/%s has no PUT)"
               "\n",
               ctx->tl_name, ctx->dev_name);
    }
    if (ctx->limits[SC_OP_AM_ZCOPY].max_iov > SC_MAX_IOV) {
        ctx->limits[SC_OP_AM_ZCOPY].max_iov = SC_MAX_IOV;
    }
    if (ctx->limits[SC_OP_PUT_ZCOPY].max_iov > SC_MAX_IOV) {
        ctx->limits[SC_OP_PUT_ZCOPY].max_iov = SC_MAX_IOV;
    }
    return 0;
}

/* Client: the operation kinds to rotate among, the zcopy slots and the
 * buffer of short messages */
int sc_client_buffers_alloc(sc_ctx_t *ctx)
{
    size_t slot_size, short_size;
    sc_op_t op;
    unsigned i;

    sc_limits_setup(ctx);
    for (op = 0; op < SC_OP_LAST; ++op) {
        if (ctx->limits[op].enabled) {
            ctx->ops[ctx->num_ops++] = op;
        }
    }
    if (ctx->num_ops == 0) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "%s/%s supports none of the operations "
                "of mode %s (-v says why)",
                ctx->tl_name, ctx->dev_name, sc_mode_names[ctx->mode]);
        return -1;
    }

    slot_size = sc_limit_max(ctx, SC_OP_AM_ZCOPY);
    if (sc_limit_max(ctx, SC_OP_PUT_ZCOPY) > slot_size) {
        slot_size = sc_limit_max(ctx, SC_OP_PUT_ZCOPY);
    }
    short_size = sc_limit_max(ctx, SC_OP_AM_SHORT);
    if (sc_limit_max(ctx, SC_OP_PUT_SHORT) > short_size) {
        short_size = sc_limit_max(ctx, SC_OP_PUT_SHORT);
    }

    ctx->short_buf = malloc(short_size + 8);
    if (ctx->short_buf == NULL) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for the send buffer");
        return -1;
    }
    if (slot_size == 0) {
        return 0;
    }

    slot_size       = (slot_size + 63) & ~(size_t)63;
    ctx->num_slots  = ctx->num_eps * SC_SLOTS_PER_EP;
    ctx->num_slots  = (ctx->num_slots < SC_SLOTS_MIN)   ? SC_SLOTS_MIN
                      : (ctx->num_slots > SC_SLOTS_MAX) ? SC_SLOTS_MAX
                                                        : ctx->num_slots;
    ctx->slots      = calloc(ctx->num_slots, sizeof(*ctx->slots));
    ctx->free_slots = calloc(ctx->num_slots, sizeof(*ctx->free_slots));
    if ((ctx->slots == NULL) || (ctx->free_slots == NULL) ||
        (sc_buf_alloc(ctx, ctx->num_slots * slot_size) != 0)) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for %u zcopy buffers",
                ctx->num_slots);
        return -1;
    }
    for (i = 0; i < ctx->num_slots; ++i) {
        ctx->slots[i].ctx   = ctx;
        ctx->slots[i].buf   = (char *)ctx->buf + i * slot_size;
        ctx->slots[i].index = i;
        ctx->free_slots[i]  = i;
    }
    ctx->num_free_slots = ctx->num_slots;
    return 0;
}

static void sc_pending_purge_cb(uct_pending_req_t *req, void *arg)
{}

void sc_cleanup(sc_ctx_t *ctx)
{
    unsigned i;

    for (i = 0; (ctx->streams != NULL) && (i < ctx->num_eps); ++i) {
        if (ctx->streams[i].ep != NULL) {
            uct_ep_pending_purge(ctx->streams[i].ep, sc_pending_purge_cb, NULL);
            uct_ep_destroy(ctx->streams[i].ep);
        }
    }
    if (ctx->have_rkey) {
        uct_rkey_release(ctx->component, &ctx->rkey);
    }
    if (ctx->memh != UCT_MEM_HANDLE_NULL) {
        uct_md_mem_dereg(ctx->md, ctx->memh);
    }
    test_uct_close(ctx->iface, ctx->worker, ctx->async, ctx->md);
    if (ctx->sock >= 0) {
        close(ctx->sock);
    }
    free(ctx->streams);
    free(ctx->slots);
    free(ctx->free_slots);
    free(ctx->short_buf);
    free(ctx->buf);
}
