/*
 * uct_ud_scale: the server. One interface, a registered buffer with a
 * slot per endpoint of every client, an AM handler that checks each
 * endpoint's AM as it comes, the PUT slots checked when a client says its
 * round is done; one ep of its own per client (to the client's interface,
 * from the address in the client's first AM), with one PUT and one AM on
 * it. After round 1 it measures the idle heap and kernel objects, waits
 * for the driver to kill some clients (the "killed" file), times the
 * reclaim of their peer endpoints while the others run round 2, keeps the
 * survivors idle for 2.5 UD_TIMEOUT, ends the run (FIN) and prints the
 * report.
 */
#define _GNU_SOURCE

#include "ud_scale.h"

#include <common/hex_line.h>
#include <common/rdma_qp_count.h>
#include <ucs/sys/sys.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Server -> client: the pattern stands for this ep index */
#define US_SERVER_EP 0xffffffu

/* What the report needs, measured along the run */
typedef struct {
    size_t heap_base, heap_idle;
    long qps_base, qps_idle;
    us_counters_t c_base, c_idle, c_end;
    long hw_rcvd_base, hw_rcvd_idle, hw_rcvd_end;
    long hw_recvs_base, hw_recvs_end; /* receives completed */
    unsigned rx_low;                  /* lowest rx_posted sampled */
    double t_kill;                    /* realtime of the SIGKILL */
    double reclaim_sec;
    unsigned killed, killed_eps;
    unsigned private_before, private_expected, private_after_hold;
    unsigned remote_ports;
    unsigned long am_rx_r1, put_ok_r1;
    double hold_sec;
    double next_status;  /* of the next status line (sc_now()) */
    double flush_us;     /* idle iface flush, median; < 0: not idle */
    unsigned flush_busy; /* of the flushes, those that found work */
} us_server_stats_t;

/* Times uct_iface_flush() of the idle server iface (every peer's ep
 * connected, nothing outstanding): the median of US_FLUSH_RUNS calls, in
 * us; the calls that did not return UCS_OK are counted in @a busy */
#define US_FLUSH_RUNS 101u

static int us_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double us_idle_flush_us(us_ctx_t *ctx, unsigned *busy)
{
    double times[US_FLUSH_RUNS], t0;
    ucs_status_t status;
    unsigned i;

    *busy = 0;
    for (i = 0; i < US_FLUSH_RUNS; ++i) {
        t0       = sc_now();
        status   = uct_iface_flush(ctx->uct.iface, 0, NULL);
        times[i] = (sc_now() - t0) * 1e6;
        *busy += (status != UCS_OK);
    }
    qsort(times, US_FLUSH_RUNS, sizeof(times[0]), us_cmp_double);
    return times[US_FLUSH_RUNS / 2];
}

static ucs_status_t us_am_ep(void *arg, void *data, size_t length,
                             unsigned flags)
{
    us_ctx_t *ctx = arg;
    uint8_t *p    = data, got, expected;
    us_hello_t hello;
    us_ep_msg_t hdr;
    us_peer_t *peer;
    unsigned gidx;
    size_t bad;

    if (length < sizeof(hdr) + US_PATTERN) {
        us_error(ctx, "an ep's AM of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&hdr, data, sizeof(hdr));
    if ((hdr.magic != US_MAGIC) || (hdr.client >= ctx->num_clients) ||
        (hdr.ep >= ctx->peers[hdr.client].eps) || (hdr.round < 1) ||
        (hdr.round > US_ROUNDS) ||
        (hdr.hello_len != length - sizeof(hdr) - US_PATTERN)) {
        us_error(ctx,
                 "an ep's AM with magic 0x%x, client %u, ep %u, round %u, "
                 "%zu bytes",
                 hdr.magic, hdr.client, hdr.ep, hdr.round, length);
        return UCS_OK;
    }
    peer = &ctx->peers[hdr.client];
    gidx = peer->base + hdr.ep;
    if (peer->dead || (ctx->am_round[gidx] != hdr.round - 1)) {
        ++peer->errors;
        us_error(ctx,
                 "client %u ep %u: the AM of round %u after one of round "
                 "%u%s",
                 hdr.client, hdr.ep, hdr.round, ctx->am_round[gidx],
                 peer->dead ? ", from a killed client" : "");
        return UCS_OK;
    }
    bad = sc_check(p + sizeof(hdr), US_PATTERN,
                   us_key(hdr.client, gidx, hdr.round, 0), 0, &got, &expected);
    if (bad < US_PATTERN) {
        ++peer->errors;
        us_error(ctx,
                 "client %u ep %u round %u: AM byte %zu is 0x%02x, expected "
                 "0x%02x",
                 hdr.client, hdr.ep, hdr.round, bad, got, expected);
        return UCS_OK;
    }
    ctx->am_round[gidx] = (uint8_t)hdr.round;
    ++ctx->am_rx;
    if (hdr.hello_len == 0) {
        return UCS_OK;
    }

    /* the client's addresses, in its ep 0's first AM */
    p += sizeof(hdr) + US_PATTERN;
    memset(&hello, 0, sizeof(hello));
    if (hdr.hello_len >= sizeof(hello)) {
        memcpy(&hello, p, sizeof(hello));
    }
    if ((hdr.ep != 0) || (hdr.round != 1) || peer->hello ||
        (hdr.hello_len < sizeof(hello)) ||
        (hello.dev_len != ctx->uct.attr.device_addr_len) ||
        (hello.iface_len != ctx->uct.attr.iface_addr_len) ||
        (hello.rkey_len > sizeof(peer->rkey_buf)) ||
        (hdr.hello_len !=
         sizeof(hello) + hello.dev_len + hello.iface_len + hello.rkey_len)) {
        ++peer->errors;
        us_error(ctx, "client %u: a malformed address in its AM", hdr.client);
        return UCS_OK;
    }
    p += sizeof(hello);
    memcpy(peer->dev_addr, p, hello.dev_len);
    memcpy(peer->iface_addr, p + hello.dev_len, hello.iface_len);
    memcpy(peer->rkey_buf, p + hello.dev_len + hello.iface_len, hello.rkey_len);
    peer->buf   = hello.buf;
    peer->hello = 1;
    return UCS_OK;
}

static ucs_status_t us_am_done(void *arg, void *data, size_t length,
                               unsigned flags)
{
    us_ctx_t *ctx = arg;
    us_ctrl_msg_t msg;

    if (length != sizeof(msg)) {
        us_error(ctx, "DONE of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&msg, data, sizeof(msg));
    if ((msg.magic != US_MAGIC) || (msg.client >= ctx->num_clients) ||
        (msg.value != ctx->peers[msg.client].eps) ||
        ((int)msg.round != ctx->peers[msg.client].done_round + 1)) {
        us_error(ctx, "DONE with magic 0x%x, client %u, round %u, %u eps",
                 msg.magic, msg.client, msg.round, msg.value);
        return UCS_OK;
    }
    ctx->peers[msg.client].done_round = (int)msg.round;
    return UCS_OK;
}

/* A US_AM_CTRL message of @a type to client @a client */
static int us_send_ctrl(us_ctx_t *ctx, unsigned client, uint16_t type,
                        unsigned round, unsigned value)
{
    us_ctrl_msg_t msg = {.magic  = US_MAGIC,
                         .client = client,
                         .round  = round,
                         .type   = type,
                         .value  = value};

    return us_send(ctx, ctx->peers[client].ep, US_AM_CTRL, &msg, sizeof(msg));
}

/* Our ep to client @a client (the pair of its ep 0: the n-th ep either
 * side creates towards the other is one connection), then one PUT into
 * its buffer and one AM, which it checks */
static int us_peer_connect(us_ctx_t *ctx, unsigned client)
{
    us_peer_t *peer = &ctx->peers[client];
    uint8_t msg[sizeof(us_ctrl_msg_t) + US_PATTERN];
    us_ctrl_msg_t hdr = {.magic = US_MAGIC, .client = client, .round = 1};
    uint8_t put[US_SLOT];
    char whose[32];
    ssize_t ret;

    snprintf(whose, sizeof(whose), "client %u", client);
    if ((us_ep_create(ctx, peer->dev_addr, peer->iface_addr, &peer->ep) != 0) ||
        (us_rkey_unpack(ctx, peer->rkey_buf, whose, &peer->rkey,
                        &peer->have_rkey) != 0)) {
        return -1;
    }

    sc_fill(put, sizeof(put), us_key(client, US_SERVER_EP, 1, 1), 0);
    do {
        ret = uct_ep_put_bcopy(peer->ep, us_pack,
                               &(us_pack_t){.data = put, .length = US_SLOT},
                               peer->buf, peer->rkey.rkey);
        if (ret == UCS_ERR_NO_RESOURCE) {
            us_wait(ctx, 0);
        }
    } while (ret == UCS_ERR_NO_RESOURCE);
    if (ret < 0) {
        us_error(ctx, "put_bcopy to client %u failed: %s", client,
                 ucs_status_string((ucs_status_t)ret));
        return -1;
    }
    memcpy(msg, &hdr, sizeof(hdr));
    sc_fill(msg + sizeof(hdr), US_PATTERN, us_key(client, US_SERVER_EP, 1, 0),
            0);
    if ((us_flush(ctx, peer->ep) != 0) ||
        (us_send(ctx, peer->ep, US_AM_DATA, msg, sizeof(msg)) != 0) ||
        (us_flush(ctx, peer->ep) != 0)) {
        return -1;
    }
    peer->data_sent = 1;
    return 0;
}

/* After DONE of @a round: every ep's AM of the round arrived, and every
 * PUT slot holds its pattern; VERIFIED tells the client */
static int us_peer_check(us_ctx_t *ctx, unsigned client, unsigned round)
{
    us_peer_t *peer = &ctx->peers[client];
    unsigned before = peer->errors, i, gidx;
    uint8_t got, expected;
    size_t bad;

    for (i = 0; i < peer->eps; ++i) {
        gidx = peer->base + i;
        if (ctx->am_round[gidx] != round) {
            ++peer->errors;
            us_error(ctx,
                     "client %u ep %u: DONE of round %u, but the last AM "
                     "of the ep was of round %u",
                     client, i, round, ctx->am_round[gidx]);
        }
        bad = sc_check((char *)ctx->buf + (size_t)gidx * US_SLOT, US_SLOT,
                       us_key(client, gidx, round, 1), 0, &got, &expected);
        if (bad < US_SLOT) {
            ++peer->errors;
            us_error(ctx,
                     "client %u ep %u round %u: PUT byte %zu is 0x%02x, "
                     "expected 0x%02x",
                     client, i, round, bad, got, expected);
        } else {
            ++ctx->put_ok;
        }
    }
    peer->checked = (int)round;
    return us_send_ctrl(ctx, client, US_CTRL_VERIFIED, round,
                        peer->errors - before);
}

/* What the clients' messages call for: our ep to a client that sent its
 * addresses, the check of a round a client finished */
static int us_serve_peers(us_ctx_t *ctx)
{
    us_peer_t *peer;
    unsigned i;

    for (i = 0; i < ctx->num_clients; ++i) {
        peer = &ctx->peers[i];
        if (peer->hello && (peer->ep == NULL) &&
            (us_peer_connect(ctx, i) != 0)) {
            return -1;
        }
        if (peer->done_round > peer->checked) {
            if (peer->ep == NULL) {
                us_error(ctx,
                         "client %u finished round %d without sending "
                         "its addresses",
                         i, peer->done_round);
                return -1;
            }
            if (us_peer_check(ctx, i, (unsigned)peer->checked + 1) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* Whether every live client's round @a round is checked (and, in round
 * 1, our AM and PUT to it sent) */
static int us_round_checked(const us_ctx_t *ctx, unsigned round)
{
    unsigned i;

    for (i = 0; i < ctx->num_clients; ++i) {
        if (!ctx->peers[i].dead && ((ctx->peers[i].checked < (int)round) ||
                                    !ctx->peers[i].data_sent)) {
            return 0;
        }
    }
    return 1;
}

/* One turn of the server's loop: progress (sleeping up to @a max_ms when
 * idle), the clients' requests, the receive queue's low water */
static int us_server_turn(us_ctx_t *ctx, us_server_stats_t *st, int max_ms)
{
    double now = sc_now();
    unsigned rx_posted;
    us_counters_t c;

    /* not every counter: they count the active eps on a list */
    rx_posted = us_rx_posted(ctx);
    if (rx_posted < st->rx_low) {
        st->rx_low = rx_posted;
    }
    if (now >= st->next_status) {
        /* a line every US_STATUS_SEC: where a long run stands */
        st->next_status = now + US_STATUS_SEC;
        us_counters(ctx, &c);
        fprintf(stderr,
                "uct_ud_scale server: at %.1f s: %lu AMs, %u eps (%u "
                "private), %u active, %u owed an ACK; rx %u of %u "
                "posted, %d send slots free; CREQs sent again %lu, "
                "packets %lu, duplicates %lu, probes %lu, reclaimed %lu, "
                "stale %lu, dropped %lu\n",
                now, ctx->am_rx, c.eps, c.private_eps, c.active, c.acks_owed,
                c.rx_posted, c.rx_queue_len, c.tx_available,
                (unsigned long)c.stats[US_STAT_CREQ_RESENT],
                (unsigned long)c.stats[US_STAT_TX_RESENT],
                (unsigned long)c.stats[US_STAT_RX_DUP],
                (unsigned long)c.stats[US_STAT_IDLE_PROBES],
                (unsigned long)c.stats[US_STAT_PEER_RECLAIMED],
                (unsigned long)c.stats[US_STAT_RX_STALE],
                (unsigned long)c.stats[US_STAT_RX_DROPPED]);
    }
    us_wait(ctx, max_ms);
    /* a failure found goes into the report; the run goes on */
    return us_serve_peers(ctx);
}

/* Serves until @a done (called each turn) says so; -1 after -T */
static int us_serve_until(us_ctx_t *ctx, us_server_stats_t *st,
                          int (*done)(us_ctx_t *ctx, void *arg), void *arg,
                          const char *what)
{
    double deadline = sc_now() + ctx->limit;

    while (!done(ctx, arg)) {
        if (us_server_turn(ctx, st, 10) != 0) {
            return -1;
        }
        if (sc_now() > deadline) {
            us_error(ctx, "%s did not happen in %.0f s (-T)", what, ctx->limit);
            return -1;
        }
    }
    return 0;
}

static int us_done_file(us_ctx_t *ctx, void *arg)
{
    char path[4096];

    us_path(ctx, path, sizeof(path), "%s", (const char *)arg);
    return us_file_exists(path);
}

static int us_done_round(us_ctx_t *ctx, void *arg)
{
    return us_round_checked(ctx, *(const unsigned *)arg);
}

static int us_done_time(us_ctx_t *ctx, void *arg)
{
    return sc_now() > *(const double *)arg;
}

/* The "killed" file: "SECONDS ID..." (realtime of the SIGKILL, the ids);
 * marks those clients dead */
static int us_read_killed(us_ctx_t *ctx, us_server_stats_t *st)
{
    char path[4096], line[4096], *p, *end;
    unsigned long id;
    FILE *file;

    us_path(ctx, path, sizeof(path), "killed");
    file = fopen(path, "r");
    if ((file == NULL) || (fgets(line, sizeof(line), file) == NULL)) {
        if (file != NULL) {
            fclose(file);
        }
        us_error(ctx, "cannot read %s", path);
        return -1;
    }
    fclose(file);
    st->t_kill = strtod(line, &p);
    for (;;) {
        id = strtoul(p, &end, 10);
        if (end == p) {
            break;
        }
        p = end;
        if ((id >= ctx->num_clients) || ctx->peers[id].dead) {
            us_error(ctx, "%s names client %lu", path, id);
            return -1;
        }
        ctx->peers[id].dead = 1;
        ++st->killed;
        st->killed_eps += ctx->peers[id].eps;
    }
    if ((st->t_kill <= 0) || (st->killed == 0) ||
        (st->killed == ctx->num_clients)) {
        us_error(ctx,
                 "%s: \"%s\" should be the time of the kill and the "
                 "ids of some clients",
                 path, line);
        return -1;
    }
    return 0;
}

/* Asks every live client for round @a round */
static int us_start_round(us_ctx_t *ctx, unsigned round)
{
    unsigned i;

    for (i = 0; i < ctx->num_clients; ++i) {
        if (!ctx->peers[i].dead &&
            (us_send_ctrl(ctx, i, US_CTRL_ROUND, round, 0) != 0)) {
            return -1;
        }
    }
    return 0;
}

/* After the kill: round 2 while the killed clients' peer eps must go */
static int us_after_kill(us_ctx_t *ctx, us_server_stats_t *st)
{
    double limit_rt = st->t_kill + 2 * st->c_idle.timeout;
    double deadline = sc_now() + ctx->limit;
    unsigned round = 2, reported = 0;
    int reclaimed = 0, late = 0;
    us_counters_t c;

    us_counters(ctx, &c);
    st->private_before = c.private_eps;
    /* our ep to a client took over the peer ep of its ep 0 */
    st->private_expected = st->private_before - st->killed_eps + st->killed;
    if (st->private_before != ctx->num_eps - ctx->num_clients) {
        printf("server: %u peer eps before the kill, expected %u (one per "
               "client ep but for the one our ep took over)\n",
               st->private_before, ctx->num_eps - ctx->num_clients);
        st->private_expected = st->private_before - st->killed_eps;
    }
    if (us_start_round(ctx, round) != 0) {
        return -1;
    }
    /* the reclaim is watched for up to 4 x UD_TIMEOUT */
    while (!us_round_checked(ctx, round) ||
           (!reclaimed && (us_realtime() < limit_rt * 2 - st->t_kill))) {
        if (us_server_turn(ctx, st, 5) != 0) {
            return -1;
        }
        us_counters(ctx, &c);
        if (!reclaimed && (c.private_eps <= st->private_expected)) {
            reclaimed       = 1;
            st->reclaim_sec = us_realtime() - st->t_kill;
        }
        if ((c.private_eps < st->private_expected) && !reported) {
            reported = 1;
            us_error(ctx,
                     "%u peer eps left after the kill, fewer than the "
                     "survivors' %u",
                     c.private_eps, st->private_expected);
        }
        if (!reclaimed && !late && (us_realtime() > limit_rt)) {
            late = 1; /* the run goes on: the report shows when */
            us_error(ctx,
                     "%u of the killed clients' %u peer eps still there "
                     "%.1f s after the kill (2 x UD_TIMEOUT is %.1f s)",
                     c.private_eps - st->private_expected,
                     st->private_before - st->private_expected,
                     us_realtime() - st->t_kill, 2 * st->c_idle.timeout);
        }
        if (sc_now() > deadline) {
            us_error(ctx, "round 2 not done in %.0f s (-T)", ctx->limit);
            return -1;
        }
    }
    if (!late && (st->reclaim_sec > 2 * st->c_idle.timeout)) {
        us_error(ctx,
                 "the killed clients' peer eps went %.2f s after the "
                 "kill, later than 2 x UD_TIMEOUT (%.1f s)",
                 st->reclaim_sec, 2 * st->c_idle.timeout);
    }
    return 0;
}

/* The survivors idle for 2.5 UD_TIMEOUT, longer than the 1.625 in which
 * the idle sweep frees the ep of a peer that answers none of its probes:
 * each of their peer eps is probed and must stay */
static int us_hold(us_ctx_t *ctx, us_server_stats_t *st)
{
    us_counters_t c;
    double until;

    st->hold_sec = 2.5 * st->c_idle.timeout;
    until        = sc_now() + st->hold_sec;
    if (us_serve_until(ctx, st, us_done_time, &until, "the idle hold") != 0) {
        return -1;
    }
    us_counters(ctx, &c);
    st->private_after_hold = c.private_eps;
    if (c.private_eps != st->private_expected) {
        us_error(ctx,
                 "%u peer eps after %.1f s idle, expected the "
                 "survivors' %u",
                 c.private_eps, st->hold_sec, st->private_expected);
    }
    return 0;
}

/* FIN to every live client */
static void us_finish(us_ctx_t *ctx)
{
    unsigned i;

    for (i = 0; i < ctx->num_clients; ++i) {
        if (!ctx->peers[i].dead && (ctx->peers[i].ep != NULL) &&
            (us_send_ctrl(ctx, i, US_CTRL_FIN, 0, 0) == 0)) {
            us_flush(ctx, ctx->peers[i].ep);
        }
    }
}

/* What the clients' result files hold together */
typedef struct {
    double *times; /* connect time per ep, us */
    size_t num_times;
    double t_first, t_last;
    double heap_sum;           /* heap growth of all clients */
    double heap_min, heap_max; /* per ep, per client */
    unsigned long long stats[US_STAT_LAST];
    unsigned ahs_max;
    char devs[256]; /* "3 on rxe_v1:1, 2 on rxe_v0:1" */
} us_client_sum_t;

/* Adds one client's result file to @a sum */
static int us_read_client(us_ctx_t *ctx, unsigned id, us_client_sum_t *sum,
                          char (*devs)[64], unsigned *dev_count,
                          unsigned *num_devs)
{
    size_t heap_base = 0, heap_idle = 0;
    char path[4096], key[32], value[64];
    unsigned eps = 0, i, ahs = 0;
    unsigned long long n;
    double t;
    FILE *file;
    int found;

    us_path(ctx, path, sizeof(path), "client.%u", id);
    file = fopen(path, "r");
    if (file == NULL) {
        us_error(ctx, "no result file %s from client %u", path, id);
        return -1;
    }
    while (fscanf(file, "%31s %63s", key, value) == 2) {
        n = strtoull(value, NULL, 10);
        t = strtod(value, NULL);
        if (!strcmp(key, "t") && (sum->num_times < ctx->num_eps)) {
            sum->times[sum->num_times++] = t;
        } else if (!strcmp(key, "dev")) {
            for (i = 0, found = 0; (i < *num_devs) && !found; ++i) {
                found = !strcmp(devs[i], value);
                dev_count[i] += found;
            }
            if (!found && (*num_devs < ctx->num_clients)) {
                snprintf(devs[*num_devs], sizeof(devs[0]), "%s", value);
                dev_count[(*num_devs)++] = 1;
            }
        } else if (!strcmp(key, "eps")) {
            eps = (unsigned)n;
        } else if (!strcmp(key, "t_first")) {
            sum->t_first = (sum->t_first == 0)  ? t
                           : (t < sum->t_first) ? t
                                                : sum->t_first;
        } else if (!strcmp(key, "t_last")) {
            sum->t_last = (t > sum->t_last) ? t : sum->t_last;
        } else if (!strcmp(key, "heap_base")) {
            heap_base = (size_t)n;
        } else if (!strcmp(key, "heap_idle")) {
            heap_idle = (size_t)n;
        } else if (!strcmp(key, "ahs")) {
            ahs = (unsigned)n;
        }
        for (i = 0; i < US_STAT_LAST; ++i) {
            if (!strcmp(key, us_stat_name(i))) {
                sum->stats[i] += n;
            }
        }
    }
    fclose(file);
    if (eps != ctx->peers[id].eps) {
        us_error(ctx, "%s: %u eps, expected %u", path, eps, ctx->peers[id].eps);
        return -1;
    }
    t = ucs_sys_heap_per_object(heap_base, heap_idle, eps);
    sum->heap_sum += (double)heap_idle - (double)heap_base;
    sum->heap_min = ((id == 0) || (t < sum->heap_min)) ? t : sum->heap_min;
    sum->heap_max = ((id == 0) || (t > sum->heap_max)) ? t : sum->heap_max;
    sum->ahs_max  = (ahs > sum->ahs_max) ? ahs : sum->ahs_max;
    return 0;
}

static int us_read_clients(us_ctx_t *ctx, us_client_sum_t *sum)
{
    char(*devs)[64]     = calloc(ctx->num_clients, sizeof(*devs));
    unsigned *dev_count = calloc(ctx->num_clients, sizeof(*dev_count));
    unsigned i, num_devs = 0;
    size_t len = 0;
    int ret    = 0;

    memset(sum, 0, sizeof(*sum));
    sum->times = calloc(ctx->num_eps, sizeof(*sum->times));
    if ((devs == NULL) || (dev_count == NULL) || (sum->times == NULL)) {
        us_error(ctx, "out of memory for the report");
        ret = -1;
    }
    for (i = 0; (ret == 0) && (i < ctx->num_clients); ++i) {
        ret = us_read_client(ctx, i, sum, devs, dev_count, &num_devs);
    }
    for (i = 0; (ret == 0) && (i < num_devs); ++i) {
        len += (size_t)snprintf(
            sum->devs + len,
            (len < sizeof(sum->devs)) ? sizeof(sum->devs) - len : 0,
            "%s%u on %s", (i > 0) ? ", " : "", dev_count[i], devs[i]);
    }
    free(devs);
    free(dev_count);
    if ((ret == 0) && (sum->num_times != ctx->num_eps)) {
        us_error(ctx,
                 "the clients' files hold %zu connect times, expected "
                 "%u",
                 sum->num_times, ctx->num_eps);
        ret = -1;
    }
    if (ret == 0) {
        qsort(sum->times, sum->num_times, sizeof(*sum->times), us_cmp_double);
    }
    return ret;
}

/* The distinct device addresses of the clients: the remote ports */
static unsigned us_remote_ports(const us_ctx_t *ctx)
{
    unsigned i, j, count = 0;

    for (i = 0; i < ctx->num_clients; ++i) {
        for (j = 0; j < i; ++j) {
            if (!memcmp(ctx->peers[i].dev_addr, ctx->peers[j].dev_addr,
                        ctx->uct.attr.device_addr_len)) {
                break;
            }
        }
        count += (j == i);
    }
    return count;
}

/* One row of the report's table */
static void us_row(const char *what, const char *target, const char *verdict,
                   const char *fmt, ...)
{
    char value[128];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    printf("| %-48s | %-40s | %-15s | %-7s |\n", what, value, target, verdict);
}

static const char us_dashes[] =
    "--------------------------------------------------";

static const char *us_verdict(int pass)
{
    return pass ? "pass" : "FAIL";
}

static void us_report(us_ctx_t *ctx, us_server_stats_t *st,
                      const us_client_sum_t *cs)
{
    double span = cs->t_last - cs->t_first, median, p99, server_heap;
    double client_heap, qps_per_peer, rate;
    unsigned long long server_resent;
    unsigned survivors         = ctx->num_clients - st->killed;
    unsigned long survivor_eps = ctx->num_eps - st->killed_eps;

    median = cs->times[cs->num_times / 2] / 1e3;
    p99    = cs->times[(size_t)((cs->num_times - 1) * 0.99)] / 1e3;
    rate   = ctx->num_eps / span;
    server_heap =
        ucs_sys_heap_per_object(st->heap_base, st->heap_idle, ctx->num_eps);
    client_heap   = cs->heap_sum / ctx->num_eps;
    qps_per_peer  = (double)(st->qps_idle - st->qps_base) / ctx->num_eps;
    server_resent = st->c_idle.stats[US_STAT_TX_RESENT] -
                    st->c_base.stats[US_STAT_TX_RESENT];

    printf("\n%s: %u endpoints from %u client processes (%s) to one %s "
           "interface on %s; UD_TIMEOUT %.1f s on the server; %u eps "
           "connecting at once per client (-w)\n\n",
           US_PROG, ctx->num_eps, ctx->num_clients, cs->devs, US_TL,
           ctx->dev_name, st->c_idle.timeout, ctx->window);
    printf("| %-48s | %-40s | %-15s | %-7s |\n", "measure", "value", "target",
           "verdict");
    printf("|%.50s|%.42s|%.17s|%.9s|\n", us_dashes, us_dashes, us_dashes,
           us_dashes);
    us_row("connect time per ep, median (1)", "", "", "%.1f ms", median);
    us_row("connect time per ep, p99 (1)", "", "", "%.1f ms", p99);
    us_row("all eps connected (first create to last)", "50,000 in 60 s",
           (ctx->num_eps >= 50000) ? us_verdict(span <= 60) : "-",
           "%.2f s, %.0f eps/s", span, rate);
    us_row("CREQ resends while connecting (clients)", "0",
           us_verdict(cs->stats[US_STAT_CREQ_RESENT] == 0),
           "%llu (%llu waited for window)", cs->stats[US_STAT_CREQ_RESENT],
           cs->stats[US_STAT_CREQ_QUEUED]);
    us_row("packets sent again (clients / server) (4)", "", "", "%llu / %llu",
           cs->stats[US_STAT_TX_RESENT], server_resent);
    us_row("control packets without a send slot (clients / server)", "", "",
           "%llu / %llu", cs->stats[US_STAT_TX_NO_SLOT],
           (unsigned long long)(st->c_end.stats[US_STAT_TX_NO_SLOT] -
                                st->c_base.stats[US_STAT_TX_NO_SLOT]));
    us_row("server heap per peer ep, idle (2)", "<= 160 B",
           us_verdict(server_heap <= 160), "%.1f B", server_heap);
    us_row("client heap per ep, idle (2)", "<= 160 B",
           us_verdict(client_heap <= 160), "%.1f B (clients %.0f-%.0f B)",
           client_heap, cs->heap_min, cs->heap_max);
    us_row("idle flush of the server iface (5)", "< 1 ms",
           us_verdict((st->flush_us < 1000) && (st->flush_busy == 0)),
           "%.1f us (%u of %u found work)", st->flush_us, st->flush_busy,
           US_FLUSH_RUNS);
    if ((st->qps_base >= 0) && (st->qps_idle >= 0)) {
        us_row("kernel QPs per peer (rdma resource show)", "0",
               us_verdict(st->qps_idle == st->qps_base),
               "%.4f (%ld QPs before, %ld after)", qps_per_peer, st->qps_base,
               st->qps_idle);
    } else {
        us_row("kernel QPs per peer (rdma resource show)", "0", "-",
               "not measured: no rdma tool");
    }
    us_row(
        "AHs: server (remote ports) / per client", "<= 1 per port",
        us_verdict((st->c_idle.ahs <= st->remote_ports) && (cs->ahs_max <= 1)),
        "%u (%u ports) / %u at most", st->c_idle.ahs, st->remote_ports,
        cs->ahs_max);
    if ((st->hw_rcvd_base >= 0) && (st->hw_rcvd_end >= 0) &&
        (st->hw_recvs_base >= 0) && (st->hw_recvs_end >= 0)) {
        us_row("receive-queue drops, server's device (3)", "", "",
               "%ld of %ld packets received",
               (st->hw_rcvd_end - st->hw_rcvd_base) -
                   (st->hw_recvs_end - st->hw_recvs_base),
               st->hw_rcvd_end - st->hw_rcvd_base);
    } else {
        us_row("receive-queue drops, server's device (3)", "", "",
               "no rxe hw_counters");
    }
    us_row("server receive queue, lowest sampled", "", "", "%u of %u posted",
           st->rx_low, st->c_idle.rx_queue_len);
    us_row("rx_dropped, duplicates: server / clients", "", "",
           "%llu, %llu / %llu, %llu",
           (unsigned long long)(st->c_end.stats[US_STAT_RX_DROPPED] -
                                st->c_base.stats[US_STAT_RX_DROPPED]),
           (unsigned long long)(st->c_end.stats[US_STAT_RX_DUP] -
                                st->c_base.stats[US_STAT_RX_DUP]),
           cs->stats[US_STAT_RX_DROPPED], cs->stats[US_STAT_RX_DUP]);
    us_row("killed clients' peer eps gone after SIGKILL", "<= 2 UD_TIMEOUT",
           us_verdict((st->reclaim_sec > 0) &&
                      (st->reclaim_sec <= 2 * st->c_idle.timeout)),
           "%s%.2f s (%u clients, %u eps)",
           (st->reclaim_sec > 0) ? "" : "over ",
           (st->reclaim_sec > 0) ? st->reclaim_sec : 4 * st->c_idle.timeout,
           st->killed, st->killed_eps);
    us_row("peer eps reclaimed (of the killed clients')", "equal",
           us_verdict(st->c_end.stats[US_STAT_PEER_RECLAIMED] -
                          st->c_base.stats[US_STAT_PEER_RECLAIMED] ==
                      st->private_before - st->private_expected),
           "%llu (%u); %llu probes, %llu stale packets",
           (unsigned long long)(st->c_end.stats[US_STAT_PEER_RECLAIMED] -
                                st->c_base.stats[US_STAT_PEER_RECLAIMED]),
           st->private_before - st->private_expected,
           (unsigned long long)(st->c_end.stats[US_STAT_IDLE_PROBES] -
                                st->c_base.stats[US_STAT_IDLE_PROBES]),
           (unsigned long long)(st->c_end.stats[US_STAT_RX_STALE] -
                                st->c_base.stats[US_STAT_RX_STALE]));
    us_row("survivors' peer eps kept while idle", "all",
           us_verdict(st->private_after_hold == st->private_expected),
           "%u of %u after %.1f s", st->private_after_hold,
           st->private_expected, st->hold_sec);
    us_row("AMs / PUTs verified, round 1", "all",
           us_verdict((st->am_rx_r1 == ctx->num_eps) &&
                      (st->put_ok_r1 == ctx->num_eps)),
           "%lu / %lu of %u", st->am_rx_r1, st->put_ok_r1, ctx->num_eps);
    us_row("AMs / PUTs verified, round 2 (survivors)", "all",
           us_verdict((ctx->am_rx - st->am_rx_r1 == survivor_eps) &&
                      (ctx->put_ok - st->put_ok_r1 == survivor_eps)),
           "%lu / %lu of %lu", ctx->am_rx - st->am_rx_r1,
           ctx->put_ok - st->put_ok_r1, survivor_eps);
    /* a client writes its result file only once it checked both */
    us_row("server -> client AM + PUT verified", "all", us_verdict(1),
           "%u + %u", ctx->num_clients, ctx->num_clients);
    us_row("error handler calls on surviving eps", "0",
           us_verdict(ctx->handler_calls == 0), "%u (%u surviving clients)",
           ctx->handler_calls, survivors);
    printf("\n(1) from uct_ep_create() to the completion of a flush of the "
           "ep's first AM: UCT has no connected callback\n"
           "(2) %s; after round 1, %.1f s idle; the server's covers its peer "
           "eps (one per client ep) and its own ep per client\n"
           "(3) rxe drops a UD packet for an empty receive queue without "
           "counting it as such (class D in rxe_resp.c): the device's "
           "received packets (rcvd_pkts) that completed no receive "
           "(rdma_recvs), from round 1 to the end, on every QP of the "
           "device (clients on it too); %ld packets in round 1\n"
           "(4) the ud iface's tx_resent: every packet sent again, the "
           "first send of an AM or PUT that waited for the CREP included\n"
           "(5) uct_iface_flush(iface, 0, NULL) with every peer ep "
           "connected and idle, after round 1: the median of %u calls; "
           "UCS_OK expected\n",
           UCS_SYS_HEAP_DEFINITION, US_SETTLE_SEC,
           ((st->hw_rcvd_idle >= 0) && (st->hw_rcvd_base >= 0))
               ? st->hw_rcvd_idle - st->hw_rcvd_base
               : -1L,
           US_FLUSH_RUNS);
    printf("\n%s: %s\n", US_PROG,
           ctx->failed ? "FAILED (see the errors above)"
                       : "OK: every AM and PUT verified, no error handler "
                         "call on surviving eps, the killed clients' peer "
                         "eps reclaimed in time");
    fflush(stdout);
}

static int us_server_setup(us_ctx_t *ctx)
{
    char path[4096], text[4096];
    uint64_t buf;
    uint8_t addr[US_ADDR_MAX];
    size_t len = 0;
    unsigned i;
    FILE *out;

    ctx->peers    = us_calloc(ctx, ctx->num_clients, sizeof(*ctx->peers));
    ctx->am_round = us_calloc(ctx, ctx->num_eps, sizeof(*ctx->am_round));
    if (ctx->failed) {
        return -1;
    }
    for (i = 0; i < ctx->num_clients; ++i) {
        us_client_share(ctx, i, &ctx->peers[i].eps, &ctx->peers[i].base);
    }
    if ((us_open(ctx, (size_t)ctx->num_eps * US_SLOT) != 0) ||
        (us_set_handler(ctx, US_AM_EP, us_am_ep) != 0) ||
        (us_set_handler(ctx, US_AM_DONE, us_am_done) != 0)) {
        return -1;
    }

    out = fmemopen(text, sizeof(text), "w");
    if (out == NULL) {
        us_error(ctx, "out of memory for the address file");
        return -1;
    }
    if (uct_iface_get_device_address(ctx->uct.iface,
                                     (uct_device_addr_t *)addr) == UCS_OK) {
        test_hex_line_write(out, "dev", addr, ctx->uct.attr.device_addr_len);
    }
    if (uct_iface_get_address(ctx->uct.iface, (uct_iface_addr_t *)addr) ==
        UCS_OK) {
        test_hex_line_write(out, "iface", addr, ctx->uct.attr.iface_addr_len);
    }
    buf = (uintptr_t)ctx->buf;
    test_hex_line_write(out, "buf", &buf, sizeof(buf));
    test_hex_line_write(out, "rkey", ctx->rkey_buf, ctx->rkey_len);
    len = (size_t)ftell(out);
    fclose(out);
    text[(len < sizeof(text)) ? len : sizeof(text) - 1] = '\0';
    us_path(ctx, path, sizeof(path), "server.addr");
    return us_file_write(ctx, path, text);
}

static void us_server_cleanup(us_ctx_t *ctx)
{
    unsigned i;

    for (i = 0; (ctx->peers != NULL) && (i < ctx->num_clients); ++i) {
        if (ctx->peers[i].ep != NULL) {
            uct_ep_destroy(ctx->peers[i].ep);
        }
        if (ctx->peers[i].have_rkey) {
            uct_rkey_release(ctx->component, &ctx->peers[i].rkey);
        }
    }
    us_close(ctx);
    free(ctx->peers);
    free(ctx->am_round);
}

int us_server_run(us_ctx_t *ctx)
{
    us_server_stats_t st;
    us_client_sum_t cs = {.times = NULL};
    unsigned round     = 1;
    char path[4096];
    double until;

    memset(&st, 0, sizeof(st));
    st.rx_low = ~0u;
    if (us_server_setup(ctx) != 0) {
        goto out;
    }
    st.heap_base = ucs_sys_heap_in_use();
    us_counters(ctx, &st.c_base);
    printf("server: %s on %s waits for %u eps from %u clients (run "
           "directory %s)\n",
           US_TL, ctx->dev_name, ctx->num_eps, ctx->num_clients, ctx->dir);
    fflush(stdout);
    if (us_serve_until(ctx, &st, us_done_file, "go", "the driver's go") != 0) {
        goto out;
    }
    st.qps_base      = test_rdma_qp_count();
    st.hw_rcvd_base  = us_hw_counter(ctx->dev_name, "rcvd_pkts");
    st.hw_recvs_base = us_hw_counter(ctx->dev_name, "rdma_recvs");

    /* round 1: every client connects, sends, is checked */
    if (us_serve_until(ctx, &st, us_done_round, &round, "round 1") != 0) {
        goto out;
    }
    until = sc_now() + US_SETTLE_SEC;
    if (us_serve_until(ctx, &st, us_done_time, &until, "settling") != 0) {
        goto out;
    }
    st.heap_idle    = ucs_sys_heap_in_use();
    st.flush_us     = us_idle_flush_us(ctx, &st.flush_busy);
    st.qps_idle     = test_rdma_qp_count();
    st.hw_rcvd_idle = us_hw_counter(ctx->dev_name, "rcvd_pkts");
    us_counters(ctx, &st.c_idle);
    st.remote_ports = us_remote_ports(ctx);
    st.am_rx_r1     = ctx->am_rx;
    st.put_ok_r1    = ctx->put_ok;
    printf("server: round 1 complete: %lu AMs and %lu PUTs verified, %u peer "
           "eps, %u AHs; heap per peer ep %.1f B\n",
           ctx->am_rx, ctx->put_ok, st.c_idle.private_eps, st.c_idle.ahs,
           ucs_sys_heap_per_object(st.heap_base, st.heap_idle, ctx->num_eps));
    fflush(stdout);
    /* the driver waits for this file, which a shell tests without a
     * process of its own */
    us_path(ctx, path, sizeof(path), "round1");
    if (us_file_write(ctx, path, "complete\n") != 0) {
        goto out;
    }

    /* the kill, round 2 and the reclaim, the idle hold */
    if ((us_serve_until(ctx, &st, us_done_file, "killed",
                        "the driver's kill") != 0) ||
        (us_read_killed(ctx, &st) != 0) || (us_after_kill(ctx, &st) != 0) ||
        (us_hold(ctx, &st) != 0)) {
        goto out;
    }
    us_counters(ctx, &st.c_end);
    st.hw_rcvd_end  = us_hw_counter(ctx->dev_name, "rcvd_pkts");
    st.hw_recvs_end = us_hw_counter(ctx->dev_name, "rdma_recvs");
    us_finish(ctx);
    if (us_read_clients(ctx, &cs) == 0) {
        us_report(ctx, &st, &cs);
    }
out:
    free(cs.times);
    us_server_cleanup(ctx);
    return ctx->failed ? 1 : 0;
}
