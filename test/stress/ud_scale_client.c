/*
 * uct_ud_scale: a client process. It takes its share of the endpoints,
 * waits for the run directory's "go", and connects them to the server's
 * interface a window (-w) at a time: per endpoint uct_ep_create(), one AM
 * (client id, ep index, round, pattern; ep 0 adds the client's addresses
 * in round 1), a flush, one PUT into the endpoint's slot of the server's
 * buffer, a flush. Its connect time runs from uct_ep_create() to the
 * completion of the first flush (UCT has no "connected" callback). Then
 * DONE to the server, whose VERIFIED answer and own AM and PUT into this
 * process end the round; the idle heap and the interface's counters go
 * to its result file. Further rounds run on the same endpoints when the
 * server asks (ROUND) until FIN.
 */
#define _GNU_SOURCE

#include "ud_scale.h"

#include <common/hex_line.h>
#include <ucs/sys/sys.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Server -> client: the pattern stands for this ep index */
#define US_SERVER_EP 0xffffffu

/* Checks the start of a server message; 0, or -1 (reported) */
static int us_ctrl_parse(us_ctx_t *ctx, const char *what, const void *data,
                         size_t length, size_t expected, us_ctrl_msg_t *msg)
{
    if (length != expected) {
        us_error(ctx, "%s of %zu bytes, expected %zu", what, length, expected);
        return -1;
    }
    memcpy(msg, data, sizeof(*msg));
    if ((msg->magic != US_MAGIC) || (msg->client != (unsigned)ctx->client_id)) {
        us_error(ctx, "%s with magic 0x%x for client %u", what, msg->magic,
                 msg->client);
        return -1;
    }
    return 0;
}

/* Where @a length bytes hold something else than the pattern of @a key:
 * 0 when they all match, else -1 (reported as @a what's) */
static int us_check_pattern(us_ctx_t *ctx, const char *what, const void *data,
                            size_t length, uint64_t key)
{
    uint8_t got, expected;
    size_t bad;

    bad = sc_check(data, length, key, 0, &got, &expected);
    if (bad == length) {
        return 0;
    }
    us_error(ctx, "%s: byte %zu is 0x%02x, expected 0x%02x", what, bad, got,
             expected);
    return -1;
}

/* The server's AM, after its PUT into our buffer: both must hold the
 * pattern of the round */
static ucs_status_t us_am_data(void *arg, void *data, size_t length,
                               unsigned flags)
{
    us_ctx_t *ctx = arg;
    us_ctrl_msg_t msg;

    if ((us_ctrl_parse(ctx, "DATA", data, length, sizeof(msg) + US_PATTERN,
                       &msg) == 0) &&
        (us_check_pattern(
             ctx, "the server's AM", (char *)data + sizeof(msg), US_PATTERN,
             us_key(msg.client, US_SERVER_EP, msg.round, 0)) == 0) &&
        (us_check_pattern(ctx, "the server's PUT", ctx->buf, US_SLOT,
                          us_key(msg.client, US_SERVER_EP, msg.round, 1)) ==
         0)) {
        ctx->data_ok = (int)msg.round;
    }
    return UCS_OK;
}

/* VERIFIED, ROUND or FIN */
static ucs_status_t us_am_ctrl(void *arg, void *data, size_t length,
                               unsigned flags)
{
    us_ctx_t *ctx = arg;
    us_ctrl_msg_t msg;

    if (us_ctrl_parse(ctx, "a control message", data, length, sizeof(msg),
                      &msg) != 0) {
        return UCS_OK;
    }
    switch (msg.type) {
    case US_CTRL_VERIFIED:
        if (msg.value != 0) {
            us_error(ctx, "the server found %u errors in round %u", msg.value,
                     msg.round);
        }
        ctx->verified_round = (int)msg.round;
        break;
    case US_CTRL_ROUND:
        ctx->round_wanted = (int)msg.round;
        break;
    case US_CTRL_FIN:
        ctx->fin = 1;
        break;
    default:
        us_error(ctx, "a control message of type %u", msg.type);
        break;
    }
    return UCS_OK;
}

static void us_queue_push(us_ctx_t *ctx, unsigned index)
{
    ctx->queue[(ctx->q_head + ctx->q_count++) % ctx->my_eps] = index;
}

/* A flush of an ep completed: the AM's (it is connected) or the PUT's */
static void us_cep_flushed(us_cep_t *cep, ucs_status_t status)
{
    us_ctx_t *ctx = cep->ctx;

    if (status != UCS_OK) {
        us_error(ctx, "a flush of ep %u failed: %s",
                 (unsigned)(cep - ctx->ceps), ucs_status_string(status));
    }
    if (cep->state == US_CEP_AM_WAIT) {
        if (cep->round == 1) {
            ctx->t_last     = sc_now();
            cep->connect_us = (float)((ctx->t_last - cep->t_create) * 1e6);
        }
        cep->state = US_CEP_PUT;
        us_queue_push(ctx, (unsigned)(cep - ctx->ceps));
    } else {
        cep->state = US_CEP_DONE;
        ++ctx->done_eps;
        --ctx->in_flight;
    }
}

static void us_cep_comp(uct_completion_t *self)
{
    us_cep_flushed(ucs_container_of(self, us_cep_t, comp), self->status);
}

/* The AM of ep @a i in round @a round: header, pattern, and on ep 0 in
 * round 1 our addresses. Its length, or 0 when it does not fit. */
static size_t us_ep_msg(us_ctx_t *ctx, unsigned i, unsigned round, uint8_t *out,
                        size_t max)
{
    us_ep_msg_t *hdr = (us_ep_msg_t *)out;
    size_t length    = sizeof(*hdr) + US_PATTERN;
    us_hello_t hello;
    uint8_t *p;

    memset(hdr, 0, sizeof(*hdr));
    hdr->magic  = US_MAGIC;
    hdr->client = (uint32_t)ctx->client_id;
    hdr->ep     = i;
    hdr->round  = round;
    sc_fill(out + sizeof(*hdr), US_PATTERN,
            us_key(hdr->client, ctx->my_base + i, round, 0), 0);
    if ((i != 0) || (round != 1)) {
        return length;
    }
    hello.buf       = (uintptr_t)ctx->buf;
    hello.dev_len   = (uint16_t)ctx->uct.attr.device_addr_len;
    hello.iface_len = (uint16_t)ctx->uct.attr.iface_addr_len;
    hello.rkey_len  = (uint16_t)ctx->rkey_len;
    hello.reserved  = 0;
    hdr->hello_len  = (uint32_t)(sizeof(hello) + hello.dev_len +
                                hello.iface_len + hello.rkey_len);
    if (length + hdr->hello_len > max) {
        return 0;
    }
    p = out + length;
    memcpy(p, &hello, sizeof(hello));
    p += sizeof(hello);
    if ((uct_iface_get_device_address(ctx->uct.iface, (uct_device_addr_t *)p) !=
         UCS_OK) ||
        (uct_iface_get_address(ctx->uct.iface,
                               (uct_iface_addr_t *)(p + hello.dev_len)) !=
         UCS_OK)) {
        return 0;
    }
    memcpy(p + hello.dev_len + hello.iface_len, ctx->rkey_buf, ctx->rkey_len);
    return length + hdr->hello_len;
}

static size_t us_pack_put(void *dest, void *arg)
{
    sc_fill(dest, US_SLOT, *(const uint64_t *)arg, 0);
    return US_SLOT;
}

/* Starts the flush of @a cep's AM or PUT (US_CEP_*_FLUSH); 1 when it
 * went (or completed), 0 when the transport had no resources */
static int us_cep_flush(us_ctx_t *ctx, us_cep_t *cep)
{
    ucs_status_t status;

    cep->comp.func   = us_cep_comp;
    cep->comp.count  = 1;
    cep->comp.status = UCS_OK;
    status           = uct_ep_flush(cep->ep, UCT_FLUSH_FLAG_LOCAL, &cep->comp);
    if (status == UCS_ERR_NO_RESOURCE) {
        return 0;
    }
    ++cep->state; /* US_CEP_*_WAIT */
    if (status != UCS_INPROGRESS) {
        us_cep_flushed(cep, status);
    }
    return 1;
}

/* The AM of ep @a i (US_CEP_AM) or its PUT (US_CEP_PUT) */
static ssize_t us_cep_send(us_ctx_t *ctx, unsigned i)
{
    us_cep_t *cep = &ctx->ceps[i];
    uint8_t msg[2048];
    us_pack_t pack;
    uint64_t key;

    if (cep->state == US_CEP_PUT) {
        key = us_key((unsigned)ctx->client_id, ctx->my_base + i, cep->round, 1);
        return uct_ep_put_bcopy(cep->ep, us_pack_put, &key,
                                ctx->server_buf +
                                    (uint64_t)(ctx->my_base + i) * US_SLOT,
                                ctx->rkey.rkey);
    }
    pack.data = msg;
    pack.length =
        us_ep_msg(ctx, i, cep->round, msg,
                  (ctx->max_msg < sizeof(msg)) ? ctx->max_msg : sizeof(msg));
    if (pack.length == 0) {
        us_error(ctx, "our addresses do not fit an AM of %zu bytes",
                 ctx->max_msg);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return uct_ep_am_bcopy(cep->ep, US_AM_EP, us_pack, &pack, 0);
}

/* The next action of ep @a i; 0 when the transport had no resources */
static int us_cep_step(us_ctx_t *ctx, unsigned i)
{
    us_cep_t *cep = &ctx->ceps[i];
    ssize_t ret;

    while ((cep->state == US_CEP_AM) || (cep->state == US_CEP_PUT)) {
        ret = us_cep_send(ctx, i);
        if (ret == UCS_ERR_NO_RESOURCE) {
            return 0;
        } else if (ret < 0) {
            us_error(ctx, "%s on ep %u failed: %s",
                     (cep->state == US_CEP_AM) ? "am_bcopy" : "put_bcopy", i,
                     ucs_status_string((ucs_status_t)ret));
        }
        /* after round 1 (connect times) one flush covers AM and PUT */
        cep->state = ((cep->state == US_CEP_AM) && (cep->round > 1))
                         ? US_CEP_PUT
                         : (uint8_t)(cep->state + 1); /* US_CEP_*_FLUSH */
    }
    if ((cep->state == US_CEP_AM_FLUSH) || (cep->state == US_CEP_PUT_FLUSH)) {
        return us_cep_flush(ctx, cep);
    }
    return 1;
}

/* Starts ep @a i on round @a round (creating it in round 1) */
static int us_cep_start(us_ctx_t *ctx, unsigned i, unsigned round)
{
    us_cep_t *cep = &ctx->ceps[i];

    cep->ctx   = ctx;
    cep->round = (uint8_t)round;
    if (cep->ep == NULL) {
        cep->t_create = sc_now();
        if (us_ep_create(ctx, ctx->server_dev, ctx->server_iface, &cep->ep) !=
            0) {
            return -1;
        }
    }
    cep->state = US_CEP_AM;
    ++ctx->in_flight;
    us_queue_push(ctx, i);
    return 0;
}

/* One round on every ep, -w at a time; 0, or -1 (reported) */
static int us_client_round(us_ctx_t *ctx, unsigned round)
{
    double deadline = sc_now() + ctx->limit;
    unsigned next   = 0, n, i;

    ctx->round    = round;
    ctx->done_eps = 0;
    if (round == 1) {
        ctx->t_first = sc_now();
    }
    while (ctx->done_eps < ctx->my_eps) {
        while ((ctx->in_flight < ctx->window) && (next < ctx->my_eps)) {
            if (us_cep_start(ctx, next++, round) != 0) {
                return -1;
            }
        }
        for (n = ctx->q_count; n > 0; --n) {
            i = ctx->queue[ctx->q_head];
            if (!us_cep_step(ctx, i)) {
                break; /* no resources: the same ep first next time */
            }
            ctx->q_head = (ctx->q_head + 1) % ctx->my_eps;
            --ctx->q_count;
        }
        us_wait(ctx, 10);
        if (ctx->failed) {
            return -1;
        }
        if (sc_now() > deadline) {
            us_error(ctx, "round %u: %u of %u eps done after %.0f s (-T)",
                     round, ctx->done_eps, ctx->my_eps, ctx->limit);
            return -1;
        }
    }
    return 0;
}

/* Progress until *@a flag reaches @a value, up to -T; 0 or -1 */
static int us_wait_for(us_ctx_t *ctx, const int *flag, int value,
                       const char *what)
{
    double deadline = sc_now() + ctx->limit;

    while ((*flag < value) && !ctx->failed) {
        if (sc_now() > deadline) {
            us_error(ctx, "no %s from the server in %.0f s (-T)", what,
                     ctx->limit);
            return -1;
        }
        us_wait(ctx, 50);
    }
    return ctx->failed ? -1 : 0;
}

/* Tells the server the round is complete and waits for its verdict */
static int us_client_done(us_ctx_t *ctx, unsigned round)
{
    us_ctrl_msg_t msg = {.magic  = US_MAGIC,
                         .client = (uint32_t)ctx->client_id,
                         .round  = round,
                         .value  = ctx->my_eps};

    if ((us_send(ctx, ctx->ceps[0].ep, US_AM_DONE, &msg, sizeof(msg)) != 0) ||
        (us_flush(ctx, ctx->ceps[0].ep) != 0) ||
        (us_wait_for(ctx, &ctx->verified_round, (int)round, "VERIFIED") != 0)) {
        return -1;
    }
    return (round == 1) ? us_wait_for(ctx, &ctx->data_ok, 1, "AM and PUT") : 0;
}

static int us_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

/* The result file of round 1: what the server's report needs of us */
static int us_client_results(us_ctx_t *ctx, size_t heap_base,
                             const us_counters_t *before)
{
    size_t heap_idle = ucs_sys_heap_in_use();
    size_t text_len, i;
    us_counters_t c;
    char path[4096];
    char *text;
    float *sorted;
    FILE *out;
    int ret;

    us_counters(ctx, &c);
    sorted = malloc(ctx->my_eps * sizeof(*sorted));
    out    = open_memstream(&text, &text_len);
    if ((sorted == NULL) || (out == NULL)) {
        free(sorted);
        us_error(ctx, "out of memory for the results");
        return -1;
    }
    fprintf(out, "dev %s\neps %u\nt_first %.6f\nt_last %.6f\n", ctx->dev_name,
            ctx->my_eps, ctx->t_first, ctx->t_last);
    fprintf(out, "heap_base %zu\nheap_idle %zu\nahs %u\n", heap_base, heap_idle,
            c.ahs);
    for (i = 0; i < US_STAT_LAST; ++i) {
        fprintf(out, "%s %llu\n", us_stat_name(i),
                (unsigned long long)(c.stats[i] - before->stats[i]));
    }
    for (i = 0; i < ctx->my_eps; ++i) {
        sorted[i] = ctx->ceps[i].connect_us;
        fprintf(out, "t %.1f\n", ctx->ceps[i].connect_us);
    }
    fclose(out);
    us_path(ctx, path, sizeof(path), "client.%d", ctx->client_id);
    ret = us_file_write(ctx, path, text);
    free(text);

    qsort(sorted, ctx->my_eps, sizeof(*sorted), us_cmp_float);
    printf("%s: round 1: %u eps on %s connected in %.2f s (connect time "
           "median %.1f ms, p99 %.1f ms), AM and PUT verified both ways; "
           "heap per idle ep %.0f B; %u AH; CREQ resent %llu, queued %llu\n",
           us_side(ctx), ctx->my_eps, ctx->dev_name, ctx->t_last - ctx->t_first,
           sorted[ctx->my_eps / 2] / 1e3,
           sorted[(size_t)((ctx->my_eps - 1) * 0.99)] / 1e3,
           ucs_sys_heap_per_object(heap_base, heap_idle, ctx->my_eps), c.ahs,
           (unsigned long long)(c.stats[US_STAT_CREQ_RESENT] -
                                before->stats[US_STAT_CREQ_RESENT]),
           (unsigned long long)(c.stats[US_STAT_CREQ_QUEUED] -
                                before->stats[US_STAT_CREQ_QUEUED]));
    fflush(stdout);
    free(sorted);
    return ret;
}

/* The server's address file: device, interface, buffer, key */
static int us_read_server(us_ctx_t *ctx)
{
    double deadline = sc_now() + ctx->limit;
    char path[4096];
    int rkey_len;

    us_path(ctx, path, sizeof(path), "server.addr");
    while (!us_file_exists(path)) {
        if (sc_now() > deadline) {
            us_error(ctx, "no %s after %.0f s: is the server running?", path,
                     ctx->limit);
            return -1;
        }
        usleep(US_FILE_POLL_SEC * 1e6);
    }
    rkey_len = test_hex_line_read(path, "rkey", ctx->server_rkey,
                                  sizeof(ctx->server_rkey));
    if ((test_hex_line_read(path, "dev", ctx->server_dev,
                            sizeof(ctx->server_dev)) !=
         (int)ctx->uct.attr.device_addr_len) ||
        (test_hex_line_read(path, "iface", ctx->server_iface,
                            sizeof(ctx->server_iface)) !=
         (int)ctx->uct.attr.iface_addr_len) ||
        (test_hex_line_read(path, "buf", &ctx->server_buf,
                            sizeof(ctx->server_buf)) !=
         sizeof(ctx->server_buf)) ||
        (rkey_len < 0)) {
        us_error(ctx,
                 "%s: lines dev, iface, buf or rkey missing or of the "
                 "wrong length (another build's server?)",
                 path);
        return -1;
    }
    return us_rkey_unpack(ctx, ctx->server_rkey, "the server", &ctx->rkey,
                          &ctx->have_rkey);
}

/* Tells the driver we are ready, and waits for its "go" */
static int us_client_barrier(us_ctx_t *ctx)
{
    double deadline = sc_now() + ctx->limit;
    char path[4096], text[64];

    us_path(ctx, path, sizeof(path), "ready.%d", ctx->client_id);
    snprintf(text, sizeof(text), "%d\n", (int)getpid());
    if (us_file_write(ctx, path, text) != 0) {
        return -1;
    }
    us_path(ctx, path, sizeof(path), "go");
    while (!us_file_exists(path)) {
        if (sc_now() > deadline) {
            us_error(ctx, "no %s after %.0f s", path, ctx->limit);
            return -1;
        }
        usleep(US_FILE_POLL_SEC * 1e6);
    }
    return 0;
}

static int us_client_setup(us_ctx_t *ctx)
{
    us_client_share(ctx, (unsigned)ctx->client_id, &ctx->my_eps, &ctx->my_base);
    ctx->ceps  = us_calloc(ctx, ctx->my_eps, sizeof(*ctx->ceps));
    ctx->queue = us_calloc(ctx, ctx->my_eps, sizeof(*ctx->queue));
    if (ctx->failed) {
        return -1;
    }
    if ((us_open(ctx, US_CLIENT_BUF) != 0) ||
        (us_set_handler(ctx, US_AM_DATA, us_am_data) != 0) ||
        (us_set_handler(ctx, US_AM_CTRL, us_am_ctrl) != 0)) {
        return -1;
    }
    return us_read_server(ctx);
}

static void us_client_cleanup(us_ctx_t *ctx)
{
    unsigned i;

    for (i = 0; (ctx->ceps != NULL) && (i < ctx->my_eps); ++i) {
        if (ctx->ceps[i].ep != NULL) {
            uct_ep_destroy(ctx->ceps[i].ep);
        }
    }
    if (ctx->have_rkey) {
        uct_rkey_release(ctx->component, &ctx->rkey);
    }
    us_close(ctx);
    free(ctx->ceps);
    free(ctx->queue);
}

int us_client_run(us_ctx_t *ctx)
{
    us_counters_t before;
    size_t heap_base;
    double deadline;
    unsigned round;

    if (us_client_setup(ctx) != 0) {
        goto out;
    }
    heap_base = ucs_sys_heap_in_use();
    us_counters(ctx, &before);
    if ((us_client_barrier(ctx) != 0) || (us_client_round(ctx, 1) != 0) ||
        (us_client_done(ctx, 1) != 0)) {
        goto out;
    }
    for (deadline = sc_now() + US_SETTLE_SEC; sc_now() < deadline;) {
        us_wait(ctx, 10);
    }
    if (us_client_results(ctx, heap_base, &before) != 0) {
        goto out;
    }

    /* the rounds the server asks for, until FIN */
    for (round = 2; !ctx->failed;) {
        deadline = sc_now() + ctx->limit;
        while ((ctx->round_wanted < (int)round) && !ctx->fin && !ctx->failed) {
            if (sc_now() > deadline) {
                us_error(ctx,
                         "no ROUND or FIN from the server in %.0f s "
                         "(-T)",
                         ctx->limit);
                break;
            }
            us_wait(ctx, 100);
        }
        if (ctx->fin || ctx->failed) {
            break;
        }
        if ((us_client_round(ctx, round) != 0) ||
            (us_client_done(ctx, round) != 0)) {
            break;
        }
        printf("%s: round %u: AM and PUT on all %u eps verified\n",
               us_side(ctx), round, ctx->my_eps);
        fflush(stdout);
        ++round;
    }
out:
    us_client_cleanup(ctx);
    if (!ctx->failed) {
        printf("%s: OK\n", us_side(ctx));
    }
    return ctx->failed ? 1 : 0;
}
