/*
 * uct_stream_check server: verifies every endpoint's stream on its own as
 * it arrives. Data AMs must come exactly once and in order (the sequence
 * number of their endpoint), whole, with every byte of the pattern; a
 * ROUND must follow exactly the AMs sent before it, and the PUT half it
 * names must hold the pattern of the round; a FIN must match the totals
 * verified. The server answers HELLOs and acknowledges verified rounds on
 * its endpoint of the same index.
 */
#include "stream_check.h"

#include <stdio.h>
#include <string.h>

/* The stream of endpoint @a ep, NULL (the run stopped) if there is none
 * or it ended */
static sc_stream_t *sc_server_stream(sc_ctx_t *ctx, uint32_t ep,
                                     const char *what)
{
    sc_stream_t *s;

    if ((ctx->streams == NULL) || (ep >= ctx->num_eps)) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "%s for endpoint %u, but the client "
                "has %u",
                what, ep, ctx->num_eps);
        return NULL;
    }
    s = &ctx->streams[ep];
    if (s->fin_rx) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "endpoint %u: %s after its FIN "
                "(duplicated or late)",
                ep, what);
        return NULL;
    }
    return s;
}

ucs_status_t sc_am_data(void *arg, void *data, size_t length, unsigned flags)
{
    sc_ctx_t *ctx = arg;
    uint8_t got, expected;
    sc_msg_hdr_t hdr;
    sc_stream_t *s;
    size_t bad;

    if (ctx->stopped) {
        return UCS_OK;
    }
    if (length < sizeof(hdr)) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "a data message of %zu bytes, shorter "
                "than its header",
                length);
        return UCS_OK;
    }
    memcpy(&hdr, data, sizeof(hdr));
    if (hdr.magic != SC_MSG_MAGIC) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "a data message of %zu bytes with a "
                "garbled header (magic 0x%04x)",
                length, hdr.magic);
        return UCS_OK;
    }
    s = sc_server_stream(ctx, hdr.ep, "a data message");
    if (s == NULL) {
        return UCS_OK;
    }
    if (hdr.seq != s->count.am_msgs) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "endpoint %u: message out of order: got "
                "sequence %llu, expected %llu (%s)",
                hdr.ep, (unsigned long long)hdr.seq,
                (unsigned long long)s->count.am_msgs,
                (hdr.seq < s->count.am_msgs) ? "a duplicate"
                                             : "messages lost or reordered");
    } else if (hdr.length != length) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "endpoint %u: message %llu: %zu bytes "
                "arrived, %u were sent",
                hdr.ep, (unsigned long long)hdr.seq, length, hdr.length);
    } else {
        bad = sc_check((char *)data + sizeof(hdr), length - sizeof(hdr),
                       sc_am_key(hdr.ep, hdr.seq), 0, &got, &expected);
        if (bad < length - sizeof(hdr)) {
            sc_stop(ctx, SC_EXIT_ERROR,
                    "endpoint %u: message %llu: byte "
                    "%zu of %zu is 0x%02x, expected 0x%02x",
                    hdr.ep, (unsigned long long)hdr.seq, bad + sizeof(hdr),
                    length, got, expected);
        } else {
            ++s->count.am_msgs;
            s->count.am_bytes += length;
            ctx->moved = 1;
        }
    }
    return UCS_OK;
}

ucs_status_t sc_am_round(void *arg, void *data, size_t length, unsigned flags)
{
    sc_ctx_t *ctx = arg;
    uint8_t got, expected;
    sc_round_msg_t round;
    sc_stream_t *s;
    size_t bad;
    char *half;

    if (ctx->stopped) {
        return UCS_OK;
    }
    if (length != sizeof(round)) {
        sc_stop(ctx, SC_EXIT_ERROR, "a ROUND message of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&round, data, sizeof(round));
    s = sc_server_stream(ctx, round.ep, "a ROUND message");
    if (s == NULL) {
        return UCS_OK;
    }
    if ((round.round != s->count.rounds) || (round.bytes > ctx->half)) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "endpoint %u: PUT round %llu (%llu "
                "bytes) announced, expected round %llu (a duplicate or a "
                "loss)",
                round.ep, (unsigned long long)round.round,
                (unsigned long long)round.bytes,
                (unsigned long long)s->count.rounds);
        return UCS_OK;
    }
    if (round.am_seq != s->count.am_msgs) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "endpoint %u: PUT round %llu was sent "
                "after %llu data messages, but %llu arrived before it "
                "(reordered)",
                round.ep, (unsigned long long)round.round,
                (unsigned long long)round.am_seq,
                (unsigned long long)s->count.am_msgs);
        return UCS_OK;
    }

    half = s->put_area + (round.round % 2) * ctx->half;
    bad  = sc_check(half, round.bytes, sc_put_key(round.ep, round.round), 0,
                    &got, &expected);
    if (bad < round.bytes) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "endpoint %u: PUT round %llu: byte %zu "
                "of %llu is 0x%02x, expected 0x%02x (a PUT missing, "
                "misplaced or not complete at the flush)",
                round.ep, (unsigned long long)round.round, bad,
                (unsigned long long)round.bytes, got, expected);
        return UCS_OK;
    }
    /* A later round must not pass on stale data */
    memset(half, 0, round.bytes);

    s->count.put_msgs += round.puts;
    s->count.put_bytes += round.bytes;
    ++s->count.rounds;
    s->ack_to_send   = (int64_t)round.round;
    ctx->replies_due = 1;
    ctx->moved       = 1;
    return UCS_OK;
}

ucs_status_t sc_am_fin(void *arg, void *data, size_t length, unsigned flags)
{
    sc_ctx_t *ctx = arg;
    const sc_totals_t *c;
    sc_fin_msg_t fin;
    sc_stream_t *s;

    if (ctx->stopped) {
        return UCS_OK;
    }
    if (length != sizeof(fin)) {
        sc_stop(ctx, SC_EXIT_ERROR, "a FIN message of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&fin, data, sizeof(fin));
    s = sc_server_stream(ctx, fin.ep, "a FIN message");
    if (s == NULL) {
        return UCS_OK;
    }
    c = &s->count;
    if (memcmp(&fin.totals, c, sizeof(*c)) != 0) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "endpoint %u: the client sent %llu AMs "
                "(%llu bytes) and %llu PUTs (%llu bytes) in %llu rounds, "
                "%llu AMs (%llu bytes) and %llu PUTs (%llu bytes) in %llu "
                "rounds arrived",
                fin.ep, (unsigned long long)fin.totals.am_msgs,
                (unsigned long long)fin.totals.am_bytes,
                (unsigned long long)fin.totals.put_msgs,
                (unsigned long long)fin.totals.put_bytes,
                (unsigned long long)fin.totals.rounds,
                (unsigned long long)c->am_msgs, (unsigned long long)c->am_bytes,
                (unsigned long long)c->put_msgs,
                (unsigned long long)c->put_bytes,
                (unsigned long long)c->rounds);
        return UCS_OK;
    }
    s->fin_rx  = 1;
    ctx->moved = 1;
    ++ctx->fins;
    return UCS_OK;
}

/* HELLO answers and round acknowledgements; what the transport cannot
 * take now waits for the next call */
static int sc_server_reply(sc_ctx_t *ctx)
{
    sc_ack_msg_t msg;
    sc_stream_t *s;
    unsigned i;
    int ret;

    ctx->replies_due = 0;
    memset(&msg, 0, sizeof(msg));
    for (i = 0; i < ctx->num_eps; ++i) {
        s      = &ctx->streams[i];
        msg.ep = i;
        if (s->hello_rx && !s->hello_tx) {
            msg.round = 0;
            ret       = sc_send_ctrl(ctx, s, SC_AM_HELLO, &msg, sizeof(msg), 0);
            if (ret < 0) {
                return -1;
            }
            s->hello_tx = ret;
            ctx->replies_due |= !ret;
        }
        if (s->hello_tx && (s->ack_to_send > s->ack_sent)) {
            msg.round = (uint64_t)s->ack_to_send;
            ret       = sc_send_ctrl(ctx, s, SC_AM_ACK, &msg, sizeof(msg), 0);
            if (ret < 0) {
                return -1;
            }
            if (ret > 0) {
                s->ack_sent = (int64_t)msg.round;
            }
            ctx->replies_due |= !ret;
        }
    }
    return 0;
}

/* After the verdict: keep the transport going (acknowledgements, a last
 * flush of the client) until the client closes the control connection */
static void sc_server_linger(sc_ctx_t *ctx)
{
    double deadline = sc_now() + ctx->stall_limit, now;
    unsigned spins  = 0;

    ctx->finishing = 1;
    while ((ctx->oob_closed_at == 0) && !ctx->stopped) {
        uct_worker_progress(ctx->worker);
        if ((++spins & 255) != 0) {
            continue;
        }
        now = sc_now();
        sc_oob_check(ctx, now);
        if (now > deadline) {
            printf("server: the client did not close the control "
                   "connection within %.0f s\n",
                   ctx->stall_limit);
            return;
        }
    }
}

int sc_server_run(sc_ctx_t *ctx)
{
    double start = 0, elapsed;
    sc_totals_t t;
    uint64_t bytes, msgs;
    unsigned i;

    while (ctx->fins < ctx->num_eps) {
        if (sc_progress(ctx) != 0) {
            return -1;
        }
        if ((start == 0) && (ctx->hellos > 0)) {
            start = sc_now();
        }
        if (ctx->replies_due && (sc_server_reply(ctx) != 0)) {
            return -1;
        }
    }
    elapsed = sc_now() - start;

    memset(&t, 0, sizeof(t));
    for (i = 0; i < ctx->num_eps; ++i) {
        t.am_msgs += ctx->streams[i].count.am_msgs;
        t.am_bytes += ctx->streams[i].count.am_bytes;
        t.put_msgs += ctx->streams[i].count.put_msgs;
        t.put_bytes += ctx->streams[i].count.put_bytes;
        t.rounds += ctx->streams[i].count.rounds;
    }
    bytes = t.am_bytes + t.put_bytes;
    msgs  = t.am_msgs + t.put_msgs;
    printf("server: %llu AMs (%llu bytes), %llu PUTs (%llu bytes) in %llu "
           "rounds verified in %.2f s, %.0f messages/s, %.1f MB/s\n",
           (unsigned long long)t.am_msgs, (unsigned long long)t.am_bytes,
           (unsigned long long)t.put_msgs, (unsigned long long)t.put_bytes,
           (unsigned long long)t.rounds, elapsed,
           (elapsed > 0) ? (msgs / elapsed) : 0.0,
           (elapsed > 0) ? (bytes / elapsed / 1e6) : 0.0);
    printf("OK %llu bytes %llu messages %u endpoints\n",
           (unsigned long long)bytes, (unsigned long long)msgs, ctx->num_eps);
    if (ctx->linger) {
        /* from the verdict on, a signal ends the serving below, not the
         * process */
        sc_catch_signals();
    }
    if (sc_oob_send(ctx, "K", 1) != 0) {
        return -1;
    }
    sc_server_linger(ctx);
    if (ctx->linger && !ctx->stopped) {
        printf("server: the client has gone; serving the interface until "
               "SIGTERM or SIGINT, at most %.0f s (-L, -T)\n",
               ctx->stall_limit);
        return sc_serve(ctx, -1, sc_now() + ctx->stall_limit);
    }
    return 0;
}
