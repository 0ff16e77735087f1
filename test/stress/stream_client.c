/*
 * uct_stream_check client: every endpoint streams on its own, as a small
 * state machine that never blocks:
 *
 *   SEND -> (a PUT half full, or the budget spent) FLUSH -> FLUSH_WAIT
 *        -> ROUND -> SEND ... -> FIN -> FLUSH -> FLUSH_WAIT -> DONE
 *
 * In SEND the data operations rotate among the kinds in use (AM short,
 * bcopy, zcopy; PUT short, bcopy, zcopy). An action the transport refuses
 * with UCS_ERR_NO_RESOURCE is queued with uct_ep_pending_add() when the
 * interface has pending queues, and the pending callback performs it;
 * else it is retried after progress. One pass of the main loop advances
 * every endpoint a few actions, then progresses the worker.
 */
#include "stream_check.h"

#include <stdio.h>
#include <string.h>

#define SC_ACTIONS_PER_PASS 16 /* per endpoint, before progress */

static sc_slot_t *sc_slot_get(sc_ctx_t *ctx)
{
    if (ctx->num_free_slots == 0) {
        return NULL;
    }
    return &ctx->slots[ctx->free_slots[--ctx->num_free_slots]];
}

static void sc_slot_put(sc_ctx_t *ctx, sc_slot_t *slot)
{
    ctx->free_slots[ctx->num_free_slots++] = slot->index;
}

static void sc_slot_done(uct_completion_t *self)
{
    sc_slot_t *slot = (sc_slot_t *)self;
    sc_ctx_t *ctx   = slot->ctx;

    sc_slot_put(ctx, slot);
    ctx->moved = 1;
    if (self->status != UCS_OK) {
        sc_op_failed(ctx, slot->ep, "zcopy completion", self->status);
    }
}

static int sc_is_put(sc_op_t op)
{
    return op >= SC_OP_PUT_SHORT;
}

static int sc_is_zcopy(sc_op_t op)
{
    return (op == SC_OP_AM_ZCOPY) || (op == SC_OP_PUT_ZCOPY);
}

/* Whether the stream has sent what it was asked to */
static int sc_stream_budget_spent(const sc_stream_t *s)
{
    const sc_ctx_t *ctx = s->ctx;

    if (ctx->seconds >= 0) {
        return ctx->time_up;
    }
    if ((ctx->msgs > 0) && (s->msgs >= ctx->msgs)) {
        return 1;
    }
    return (ctx->ep_bytes > 0) &&
           (s->count.am_bytes + s->count.put_bytes + s->round_used >=
            ctx->ep_bytes);
}

static void sc_stream_flush(sc_stream_t *s, sc_state_t after)
{
    s->state       = SC_ST_FLUSH;
    s->after_flush = after;
}

/*
 * Prepares the next data operation: kind, size, pattern, a zcopy slot.
 * Returns 1 when the stream has an action to try, 0 when it waits (for
 * the server to verify a half, or for a zcopy slot).
 */
static int sc_stream_stage(sc_stream_t *s)
{
    sc_ctx_t *ctx           = s->ctx;
    sc_op_t op              = ctx->ops[s->next_op % ctx->num_ops];
    const sc_op_limits_t *l = &ctx->limits[op];
    size_t left, max;

    memset(&s->pack, 0, sizeof(s->pack));
    if (sc_is_put(op)) {
        left = ctx->half - s->round_used;
        if (left < l->min) {
            s->final_round = 0;
            sc_stream_flush(s, SC_ST_ROUND);
            return 1;
        }
        /* The half this round writes must have been verified */
        if (s->acked_round + 2 < (int64_t)s->round) {
            return 0;
        }
        max          = (l->max < left) ? l->max : left;
        s->pack.key  = sc_put_key(s->index, s->round);
        s->pack.word = s->round_used / sizeof(uint64_t);
        s->pack.length =
            sc_pick_size(&s->rng, l->min, max) & ~(sizeof(uint64_t) - 1);
        s->remote_addr =
            s->put_addr + (s->round % 2) * ctx->half + s->round_used;
    } else {
        s->pack.key      = sc_am_key(s->index, s->count.am_msgs);
        s->pack.seq      = s->count.am_msgs;
        s->pack.length   = sc_pick_size(&s->rng, l->min, l->max);
        s->pack.with_hdr = 1;
    }
    s->pack.ep = (uint16_t)s->index;

    if (sc_is_zcopy(op)) {
        s->slot = sc_slot_get(ctx);
        if (s->slot == NULL) {
            return 0;
        }
        s->slot->ep = s->index;
        sc_pack_data(s->slot->buf, &s->pack);
    }
    s->op     = op;
    s->staged = 1;
    return 1;
}

/* Splits @a length bytes at @a buf into 1 to @a max_iov entries */
static size_t sc_iov_split(sc_stream_t *s, uct_iov_t *iov, char *buf,
                           size_t length, size_t max_iov)
{
    size_t count = 1 + (sc_rand(&s->rng) % max_iov);
    size_t piece, i;

    if (count > length) {
        count = length;
    }
    piece = length / count;
    for (i = 0; i < count; ++i) {
        iov[i].buffer = buf + i * piece;
        iov[i].length = (i == count - 1) ? (length - i * piece) : piece;
        iov[i].memh   = s->ctx->memh;
        iov[i].stride = 0;
        iov[i].count  = 1;
    }
    return count;
}

/* Posts the staged data operation once */
static ucs_status_t sc_stream_post(sc_stream_t *s)
{
    sc_ctx_t *ctx   = s->ctx;
    size_t length   = s->pack.length;
    uct_rkey_t rkey = ctx->rkey.rkey;
    sc_slot_t *slot = s->slot;
    size_t hdr_len  = 0;
    uct_iov_t iov[SC_MAX_IOV];
    uint64_t first;
    size_t iovcnt;
    ssize_t ret;

    switch (s->op) {
    case SC_OP_AM_SHORT:
        sc_pack_data(ctx->short_buf, &s->pack);
        memcpy(&first, ctx->short_buf, sizeof(first));
        return uct_ep_am_short(s->ep, SC_AM_DATA, first,
                               ctx->short_buf + sizeof(first),
                               (unsigned)(length - sizeof(first)));
    case SC_OP_AM_BCOPY:
        ret = uct_ep_am_bcopy(s->ep, SC_AM_DATA, sc_pack_data, &s->pack, 0);
        return (ret < 0) ? (ucs_status_t)ret : UCS_OK;
    case SC_OP_AM_ZCOPY:
        if (ctx->limits[SC_OP_AM_ZCOPY].hdr_in_header) {
            hdr_len = sizeof(sc_msg_hdr_t);
        }
        iovcnt = sc_iov_split(s, iov, slot->buf + hdr_len, length - hdr_len,
                              ctx->limits[s->op].max_iov);
        slot->super.func   = sc_slot_done;
        slot->super.count  = 1;
        slot->super.status = UCS_OK;
        return uct_ep_am_zcopy(s->ep, SC_AM_DATA, slot->buf, (unsigned)hdr_len,
                               iov, iovcnt, 0, &slot->super);
    case SC_OP_PUT_SHORT:
        sc_pack_data(ctx->short_buf, &s->pack);
        return uct_ep_put_short(s->ep, ctx->short_buf, (unsigned)length,
                                s->remote_addr, rkey);
    case SC_OP_PUT_BCOPY:
        ret = uct_ep_put_bcopy(s->ep, sc_pack_data, &s->pack, s->remote_addr,
                               rkey);
        return (ret < 0) ? (ucs_status_t)ret : UCS_OK;
    default:
        iovcnt =
            sc_iov_split(s, iov, slot->buf, length, ctx->limits[s->op].max_iov);
        slot->super.func   = sc_slot_done;
        slot->super.count  = 1;
        slot->super.status = UCS_OK;
        return uct_ep_put_zcopy(s->ep, iov, iovcnt, s->remote_addr, rkey,
                                &slot->super);
    }
}

/* The staged operation was taken (@a status UCS_OK or UCS_INPROGRESS) */
static void sc_stream_commit(sc_stream_t *s, ucs_status_t status)
{
    sc_ctx_t *ctx = s->ctx;

    if ((s->slot != NULL) && (status == UCS_OK)) {
        sc_slot_put(ctx, s->slot); /* done already, no completion */
    }
    s->slot = NULL;
    if (sc_is_put(s->op)) {
        s->round_used += s->pack.length;
        ++s->round_puts;
    } else {
        ++s->count.am_msgs;
        s->count.am_bytes += s->pack.length;
    }
    ++s->msgs;
    ++s->next_op;
    s->staged  = 0;
    ctx->moved = 1;
}

static void sc_stream_failed(sc_stream_t *s, const char *what,
                             ucs_status_t status)
{
    if (s->slot != NULL) {
        sc_slot_put(s->ctx, s->slot);
        s->slot = NULL;
    }
    s->staged = 0;
    sc_op_failed(s->ctx, s->index, what, status);
}

static ucs_status_t sc_stream_send_round(sc_stream_t *s)
{
    sc_round_msg_t msg;
    ucs_status_t status;

    memset(&msg, 0, sizeof(msg));
    msg.ep     = s->index;
    msg.round  = s->round;
    msg.bytes  = s->round_used;
    msg.puts   = s->round_puts;
    msg.am_seq = s->count.am_msgs;
    status     = sc_post_ctrl(s->ep, SC_AM_ROUND, &msg, sizeof(msg));
    if (status == UCS_OK) {
        s->count.put_msgs += s->round_puts;
        s->count.put_bytes += s->round_used;
        s->count.rounds = ++s->round;
        s->round_used   = 0;
        s->round_puts   = 0;
        s->state        = s->final_round ? SC_ST_FIN : SC_ST_SEND;
    }
    return status;
}

static ucs_status_t sc_stream_send_fin(sc_stream_t *s)
{
    sc_fin_msg_t msg;
    ucs_status_t status;

    memset(&msg, 0, sizeof(msg));
    msg.ep     = s->index;
    msg.totals = s->count;
    status     = sc_post_ctrl(s->ep, SC_AM_FIN, &msg, sizeof(msg));
    if (status == UCS_OK) {
        /* done once the FIN, and all before it, surely arrived */
        sc_stream_flush(s, SC_ST_DONE);
    }
    return status;
}

/*
 * Performs the stream's current action once. Returns UCS_OK when it was
 * done, UCS_ERR_NO_RESOURCE to try again later, another status when it
 * failed (reported).
 */
static ucs_status_t sc_stream_try(sc_stream_t *s)
{
    ucs_status_t status;
    const char *what;

    switch (s->state) {
    case SC_ST_SEND:
        what   = sc_op_names[s->op];
        status = sc_stream_post(s);
        if ((status == UCS_OK) || (status == UCS_INPROGRESS)) {
            sc_stream_commit(s, status);
            return UCS_OK;
        }
        break;
    case SC_ST_FLUSH:
        what                 = "uct_ep_flush";
        s->flush_comp.count  = 1;
        s->flush_comp.status = UCS_OK;
        status               = uct_ep_flush(s->ep, 0, &s->flush_comp);
        if (status == UCS_OK) {
            s->state = s->after_flush;
            return UCS_OK;
        } else if (status == UCS_INPROGRESS) {
            s->state = SC_ST_FLUSH_WAIT;
            return UCS_OK;
        }
        break;
    case SC_ST_ROUND:
        what   = "am_bcopy (ROUND)";
        status = sc_stream_send_round(s);
        break;
    case SC_ST_FIN:
        what   = "am_bcopy (FIN)";
        status = sc_stream_send_fin(s);
        break;
    default:
        return UCS_OK;
    }
    if ((status != UCS_OK) && (status != UCS_ERR_NO_RESOURCE)) {
        sc_stream_failed(s, what, status);
    }
    return status;
}

/* Called by the transport when the endpoint may take our action */
static ucs_status_t sc_stream_pending_cb(uct_pending_req_t *req)
{
    sc_stream_t *s =
        (sc_stream_t *)((char *)req - offsetof(sc_stream_t, pending));

    if (sc_stream_try(s) == UCS_ERR_NO_RESOURCE) {
        return UCS_ERR_NO_RESOURCE; /* stays queued */
    }
    s->queued = 0;
    return UCS_OK;
}

/* Whether the stream has an action to try now (it may move on first) */
static int sc_stream_next(sc_stream_t *s)
{
    for (;;) {
        switch (s->state) {
        case SC_ST_SEND:
            if (s->staged) {
                return 1;
            }
            if (sc_stream_budget_spent(s)) {
                s->final_round = 1;
                if (s->round_used > 0) {
                    sc_stream_flush(s, SC_ST_ROUND);
                } else {
                    s->state = SC_ST_FIN;
                }
                continue;
            }
            return sc_stream_stage(s);
        case SC_ST_FLUSH_WAIT:
            if (s->flush_comp.count > 0) {
                return 0;
            }
            if (s->flush_comp.status != UCS_OK) {
                sc_stream_failed(s, "uct_ep_flush completion",
                                 s->flush_comp.status);
                return 0;
            }
            s->state      = s->after_flush;
            s->ctx->moved = 1;
            continue;
        case SC_ST_DONE:
            return 0;
        default:
            return 1;
        }
    }
}

static void sc_stream_advance(sc_stream_t *s)
{
    sc_ctx_t *ctx = s->ctx;
    ucs_status_t status;
    unsigned n;

    for (n = 0; n < SC_ACTIONS_PER_PASS; ++n) {
        if (s->queued || ctx->stopped || (ctx->op_status != UCS_OK) ||
            !sc_stream_next(s)) {
            return;
        }
        status = sc_stream_try(s);
        if (status == UCS_OK) {
            continue;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return; /* failed */
        } else if (!ctx->use_pending) {
            ++ctx->retries;
            return; /* retried after progress */
        }
        status = uct_ep_pending_add(s->ep, &s->pending, 0);
        if (status == UCS_OK) {
            s->queued = 1;
            ++ctx->pending_adds;
            return;
        } else if (status != UCS_ERR_BUSY) {
            sc_stream_failed(s, "uct_ep_pending_add", status);
            return;
        }
        /* UCS_ERR_BUSY: the endpoint has resources again, try now */
    }
}

/* Keeps progressing after a failed operation until sc_progress decides */
static int sc_client_linger(sc_ctx_t *ctx)
{
    while (sc_progress(ctx) == 0) {
    }
    return -1;
}

/* A HELLO on every endpoint; the server answers each on its own */
static int sc_client_hello(sc_ctx_t *ctx)
{
    sc_ack_msg_t msg;
    unsigned i;
    int ret;

    memset(&msg, 0, sizeof(msg));
    for (i = 0; i < ctx->num_eps; ++i) {
        msg.ep = i;
        ret    = sc_send_ctrl(ctx, &ctx->streams[i], SC_AM_HELLO, &msg,
                              sizeof(msg), 1);
        if (ret <= 0) {
            return (ret < 0) ? -1 : 0;
        }
    }
    while ((ctx->hellos < ctx->num_eps) && (ctx->op_status == UCS_OK)) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }
    return 0;
}

static void sc_client_announce(sc_ctx_t *ctx)
{
    char what[64];

    if (ctx->seconds > 0) {
        snprintf(what, sizeof(what), "for %lld s", (long long)ctx->seconds);
    } else if (ctx->seconds == 0) {
        snprintf(what, sizeof(what), "until stopped");
    } else if (ctx->msgs > 0) {
        snprintf(what, sizeof(what), "%llu messages per endpoint",
                 (unsigned long long)ctx->msgs);
    } else {
        snprintf(what, sizeof(what), "%llu bytes",
                 (unsigned long long)ctx->bytes);
    }
    printf("client: streaming %s (mode %s) to %s over %s/%s, %u "
           "endpoint%s\n",
           what, sc_mode_names[ctx->mode], ctx->server, ctx->tl_name,
           ctx->dev_name, ctx->num_eps, (ctx->num_eps == 1) ? "" : "s");
}

/* Sends until every endpoint is done; the seconds it took, < 0 if the
 * run stopped or an operation failed */
static double sc_client_stream(sc_ctx_t *ctx)
{
    double start = sc_now(), end = start + ctx->seconds, now;
    double next_report = start + 1;
    uint64_t sent;
    unsigned i, done, pass;

    for (pass = 1;; ++pass) {
        for (i = 0, done = 0; i < ctx->num_eps; ++i) {
            sc_stream_advance(&ctx->streams[i]);
            done += (ctx->streams[i].state == SC_ST_DONE);
        }
        if (ctx->stopped || (ctx->op_status != UCS_OK)) {
            return -1;
        }
        if (done == ctx->num_eps) {
            return sc_now() - start;
        }
        if (sc_progress(ctx) != 0) {
            return -1;
        }
        if ((ctx->seconds < 0) || ((pass % 64) != 0)) {
            continue;
        }
        now = sc_now();
        if ((ctx->seconds > 0) && (now >= end)) {
            ctx->time_up = 1;
        }
        if (now >= next_report) {
            for (i = 0, sent = 0; i < ctx->num_eps; ++i) {
                sent += ctx->streams[i].count.am_bytes +
                        ctx->streams[i].count.put_bytes;
            }
            printf("client: %llu bytes sent\n", (unsigned long long)sent);
            next_report += 1;
        }
    }
}

int sc_client_run(sc_ctx_t *ctx)
{
    sc_totals_t total;
    sc_stream_t *s;
    double elapsed;
    unsigned i;

    if (sc_client_buffers_alloc(ctx) != 0) {
        return -1;
    }
    for (i = 0; i < ctx->num_eps; ++i) {
        s               = &ctx->streams[i];
        s->put_addr     = ctx->remote_buf + 2 * ctx->half * i;
        s->pending.func = sc_stream_pending_cb;
    }
    if ((sc_client_hello(ctx) != 0) || (ctx->op_status != UCS_OK)) {
        return ctx->stopped ? -1 : sc_client_linger(ctx);
    }

    sc_client_announce(ctx);
    elapsed = sc_client_stream(ctx);
    if (elapsed < 0) {
        return ctx->stopped ? -1 : sc_client_linger(ctx);
    }
    while (ctx->num_free_slots < ctx->num_slots) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }

    /* The verdict comes over the control connection */
    ctx->finishing = 1;
    while ((ctx->verdict == 0) && (ctx->oob_closed_at == 0)) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }

    memset(&total, 0, sizeof(total));
    for (i = 0; i < ctx->num_eps; ++i) {
        total.am_msgs += ctx->streams[i].count.am_msgs;
        total.am_bytes += ctx->streams[i].count.am_bytes;
        total.put_msgs += ctx->streams[i].count.put_msgs;
        total.put_bytes += ctx->streams[i].count.put_bytes;
    }
    printf("client: sent %llu bytes in %llu messages over %u endpoint%s in "
           "%.2f s, %.0f messages/s, %.1f MB/s\n",
           (unsigned long long)(total.am_bytes + total.put_bytes),
           (unsigned long long)(total.am_msgs + total.put_msgs), ctx->num_eps,
           (ctx->num_eps == 1) ? "" : "s", elapsed,
           (total.am_msgs + total.put_msgs) / elapsed,
           (total.am_bytes + total.put_bytes) / elapsed / 1e6);
    if (ctx->verdict != 'K') {
        sc_stop(ctx, SC_EXIT_ERROR, "the server %s",
                (ctx->verdict == 0)
                    ? "closed the control connection without a verdict"
                    : "found missing or corrupt data (see its output)");
        return -1;
    }
    if (ctx->verbose) {
        printf("client: %llu sends or flushes waited in a pending queue, "
               "%llu were retried after progress\n",
               (unsigned long long)ctx->pending_adds,
               (unsigned long long)ctx->retries);
    }
    printf("client: the server verified everything\n");
    return 0;
}

/* The server verified a PUT round of one endpoint */
ucs_status_t sc_am_ack(void *arg, void *data, size_t length, unsigned flags)
{
    sc_ctx_t *ctx = arg;
    sc_ack_msg_t msg;
    sc_stream_t *s;

    if (length != sizeof(msg)) {
        sc_stop(ctx, SC_EXIT_ERROR, "ACK message of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&msg, data, sizeof(msg));
    if (msg.ep >= ctx->num_eps) {
        sc_stop(ctx, SC_EXIT_ERROR, "ACK for endpoint %u of %u", msg.ep,
                ctx->num_eps);
        return UCS_OK;
    }
    s = &ctx->streams[msg.ep];
    if ((int64_t)msg.round > s->acked_round) {
        s->acked_round = (int64_t)msg.round;
        ctx->moved     = 1;
    }
    return UCS_OK;
}
