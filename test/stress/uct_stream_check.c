/*
 * uct_stream_check: a stress checker for any UCT transport. A client
 * streams sequence-numbered, pattern-filled active messages and PUTs to a
 * server over N concurrent endpoints, through the public UCT API only,
 * and the server verifies that everything arrived exactly once, in order,
 * with every byte as sent.
 *
 *   server: uct_stream_check [-t TL] [-d DEV] [-p PORT] [-e] [-T SEC] [-v]
 *               [-a FILE] [-L]
 *   client: uct_stream_check [-t TL] [-d DEV] [-p PORT] [-e] [-T SEC] [-v]
 *               [-a FILE] [-c N] [-C iface|ep] [-m am|put|both]
 *               [-n COUNT | -b BYTES] [-s SIZE] [-k SECONDS] SERVER
 *
 * Both sides open the transport's interface on their device and trade
 * addresses over a plain TCP socket (the control connection, see
 * stream_oob.c): with CONNECT_TO_EP (when the interface can, or -C ep)
 * endpoint i of the client is connected to endpoint i of the server;
 * with CONNECT_TO_IFACE each side connects N endpoints to the other's
 * interface. The server serves its interface while it waits for the
 * client, so that whoever else connects to it meanwhile is handled; for
 * tcp_hostile flood, which does, -a writes the device and interface
 * addresses to a file and -L keeps the server serving after the client
 * has gone, until SIGTERM or SIGINT (or -T seconds). Data flows from client to
 * server; the server's endpoint i carries the replies of stream i (HELLO and
 * PUT round ACKs).
 *
 * Each endpoint carries its own stream (stream_client.c): data AMs start
 * with sc_msg_hdr_t (endpoint, sequence, length) and a pattern derived
 * from the endpoint and sequence follows; they rotate among am_short,
 * am_bcopy and am_zcopy (split into several iov entries) as the
 * interface offers them, each size within what the transport allows.
 * PUTs (short, bcopy, zcopy) fill one half of the endpoint's area in the
 * server's registered buffer ("a round"); then the endpoint is flushed
 * and a ROUND message names the bytes to check and the AMs sent before
 * it. Rounds alternate between the two halves; a half is written again
 * only after the server acknowledged the round that last used it.
 * Sends refused with UCS_ERR_NO_RESOURCE wait in the endpoint's pending
 * queue (or are retried after progress).
 *
 * At the end every endpoint sends FIN with its totals and is flushed; the
 * server compares (stream_server.c), prints
 * "OK <bytes> bytes <msgs> messages <eps> endpoints", sends its verdict
 * over the control connection and exits 0 once the client has gone. Any
 * difference is one error line and exit 1; so is a run in which nothing
 * moves for -T seconds. With -e both sides set an interface error
 * handler: a failed peer is reported as "peer failed: <status>" and the
 * exit code is 3.
 */
#include "stream_check.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void sc_usage(FILE *stream)
{
    fprintf(stream,
            "usage: %s [-t TL] [-d DEV] [-p PORT] [-e] [-T SEC] [-v] [-a "
            "FILE] [-L]\n"
            "           [-c N] [-C iface|ep] [-m am|put|both] [-n COUNT | "
            "-b BYTES]\n"
            "           [-s SIZE] [-k SEC] [SERVER]\n"
            "  without SERVER: run the server (receive and verify)\n"
            "  -t TL     transport (default %s)\n"
            "  -d DEV    device (default %s for tcp; uct_info -d lists "
            "them)\n"
            "  -p PORT   control connection port (default %d; server: 0 "
            "picks one)\n"
            "  -e        set an error handler; a failed peer exits 3\n"
            "  -T SEC    fail when nothing moves for SEC seconds (default "
            "%.0f),\n"
            "            or a failure is not confirmed by the error handler "
            "(with -e)\n"
            "  -v        print the connection mode and the size limits\n"
            "  -a FILE   write our device and interface addresses to FILE "
            "(hex)\n"
            "server only:\n"
            "  -L        after the client, serve the interface until SIGTERM "
            "or SIGINT\n"
            "            (at most -T seconds)\n"
            "client only:\n"
            "  -c N      concurrent endpoints, each its own stream (default "
            "1, <= %d)\n"
            "  -C MODE   connect to the peer's iface or ep (default ep if "
            "possible)\n"
            "  -m MODE   am, put or both (default both)\n"
            "  -n COUNT  messages per endpoint (instead of -b)\n"
            "  -b BYTES  bytes in all, split among the endpoints, suffix "
            "k/m/g\n"
            "            (default 200m)\n"
            "  -s SIZE   largest message (default 64k; less where the "
            "transport says)\n"
            "  -k SEC    stream for SEC seconds instead (0: until killed)\n",
            SC_PROG, SC_DEFAULT_TL, SC_DEFAULT_TCP_DEV, SC_DEFAULT_PORT,
            SC_DEFAULT_STALL, SC_MAX_EPS);
}

/* A whole number from @a min to @a max, else -1 with a message */
static int sc_parse_uint(int opt, const char *str, uint64_t min, uint64_t max,
                         const char *what, uint64_t *value_p)
{
    uint64_t value;
    char *end;

    value = strtoull(str, &end, 10);
    if ((*str == '\0') || (*str == '-') || (*end != '\0') || (value < min) ||
        (value > max)) {
        fprintf(stderr, "%s: -%c wants %s from %llu to %llu, not '%s'\n",
                SC_PROG, opt, what, (unsigned long long)min,
                (unsigned long long)max, str);
        return -1;
    }
    *value_p = value;
    return 0;
}

static int sc_parse_choice(int opt, const char *str, const char **names,
                           int count, int *value_p)
{
    int i;

    for (i = 0; i < count; ++i) {
        if ((names[i] != NULL) && !strcmp(str, names[i])) {
            *value_p = i;
            return 0;
        }
    }
    fprintf(stderr, "%s: -%c wants %s, not '%s'\n", SC_PROG, opt,
            (opt == 'm') ? "am, put or both" : "iface or ep", str);
    return -1;
}

static int sc_parse(sc_ctx_t *ctx, int argc, char **argv)
{
    static const char *connect_names[] = {
        [SC_CONNECT_IFACE] = "iface", [SC_CONNECT_EP] = "ep"};
    int bytes_given = 0, c, choice;
    uint64_t value;

    while ((c = getopt(argc, argv, "t:d:p:eT:va:Lc:C:m:n:b:s:k:h")) != -1) {
        switch (c) {
        case 't':
            ctx->tl_name = optarg;
            break;
        case 'd':
            ctx->dev_name = optarg;
            break;
        case 'p':
            if (sc_parse_uint(c, optarg, 0, 65535, "a port", &value) != 0) {
                return -1;
            }
            ctx->port = (uint16_t)value;
            break;
        case 'e':
            ctx->err_handler = 1;
            break;
        case 'T':
            if (sc_parse_uint(c, optarg, 1, 86400, "seconds", &value) != 0) {
                return -1;
            }
            ctx->stall_limit = (double)value;
            break;
        case 'v':
            ctx->verbose = 1;
            break;
        case 'a':
            ctx->addr_file = optarg;
            break;
        case 'L':
            ctx->linger = 1;
            break;
        case 'c':
            if (sc_parse_uint(c, optarg, 1, SC_MAX_EPS, "an endpoint count",
                              &value) != 0) {
                return -1;
            }
            ctx->num_eps = (unsigned)value;
            break;
        case 'C':
            if (sc_parse_choice(c, optarg, connect_names, 3, &choice) != 0) {
                return -1;
            }
            ctx->connect = (sc_connect_t)choice;
            break;
        case 'm':
            if (sc_parse_choice(c, optarg, sc_mode_names, 3, &choice) != 0) {
                return -1;
            }
            ctx->mode = (sc_mode_t)choice;
            break;
        case 'n':
            if (sc_parse_uint(c, optarg, 1, UINT64_MAX / 2, "a message count",
                              &value) != 0) {
                return -1;
            }
            ctx->msgs = value;
            break;
        case 'b':
            if ((sc_parse_size(optarg, &ctx->bytes) != 0) ||
                (ctx->bytes == 0)) {
                fprintf(stderr,
                        "%s: -b wants a byte count such as 200m, "
                        "not '%s'\n",
                        SC_PROG, optarg);
                return -1;
            }
            bytes_given = 1;
            break;
        case 's':
            if ((sc_parse_size(optarg, &value) != 0) ||
                (value < 2 * sizeof(sc_msg_hdr_t)) ||
                (value > SC_MAX_SIZE_LIMIT)) {
                fprintf(stderr,
                        "%s: -s wants a size from %zu to %u, not "
                        "'%s'\n",
                        SC_PROG, 2 * sizeof(sc_msg_hdr_t), SC_MAX_SIZE_LIMIT,
                        optarg);
                return -1;
            }
            ctx->max_size = value;
            break;
        case 'k':
            if (sc_parse_uint(c, optarg, 0, 86400 * 365,
                              "seconds (0: until "
                              "killed)",
                              &value) != 0) {
                return -1;
            }
            ctx->seconds = (int64_t)value;
            break;
        case 'h':
            sc_usage(stdout);
            exit(0);
        default:
            sc_usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        ctx->server = argv[optind++];
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", SC_PROG,
                argv[optind]);
        return -1;
    }

    if (ctx->dev_name == NULL) {
        if (strcmp(ctx->tl_name, "tcp") != 0) {
            fprintf(stderr,
                    "%s: -t %s needs a device: -d DEV (uct_info -d "
                    "lists them)\n",
                    SC_PROG, ctx->tl_name);
            return -1;
        }
        ctx->dev_name = SC_DEFAULT_TCP_DEV;
    }
    if ((ctx->server != NULL) && (ctx->port == 0)) {
        fprintf(stderr, "%s: the client needs the server's port: -p PORT\n",
                SC_PROG);
        return -1;
    }
    /* -n alone counts messages only; -b alone or with -n counts bytes */
    if ((ctx->msgs > 0) && !bytes_given) {
        ctx->bytes = 0;
    }
    if (ctx->bytes > 0) {
        ctx->ep_bytes = (ctx->bytes + ctx->num_eps - 1) / ctx->num_eps;
    }
    return 0;
}

int main(int argc, char **argv)
{
    sc_ctx_t ctx;
    int ret;

    memset(&ctx, 0, sizeof(ctx));
    ctx.tl_name     = SC_DEFAULT_TL;
    ctx.port        = SC_DEFAULT_PORT;
    ctx.mode        = SC_MODE_BOTH;
    ctx.connect     = SC_CONNECT_AUTO;
    ctx.num_eps     = 1;
    ctx.bytes       = SC_DEFAULT_BYTES;
    ctx.max_size    = SC_DEFAULT_MAX_SIZE;
    ctx.seconds     = -1;
    ctx.stall_limit = SC_DEFAULT_STALL;
    ctx.sock        = -1;
    ctx.exit_code   = SC_EXIT_ERROR;
    ctx.memh        = UCT_MEM_HANDLE_NULL;
    ctx.rkey.rkey   = UCT_INVALID_RKEY;

    /* Scripts read the output while the program runs */
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (sc_parse(&ctx, argc, argv) != 0) {
        return SC_EXIT_ERROR;
    }

    if ((sc_md_open(&ctx) != 0) || (sc_iface_open(&ctx) != 0) ||
        ((ctx.addr_file != NULL) && (sc_addr_write(&ctx) != 0))) {
        goto out;
    }
    ret = sc_is_client(&ctx) ? sc_oob_connect(&ctx) : sc_oob_accept(&ctx);
    if ((ret != 0) || (sc_exchange(&ctx) != 0)) {
        goto out;
    }
    ctx.last_activity = sc_now();

    ret = sc_is_client(&ctx) ? sc_client_run(&ctx) : sc_server_run(&ctx);
    if ((ret == 0) && !ctx.stopped) {
        ctx.exit_code = 0;
    }

out:
    if (!sc_is_client(&ctx) && (ctx.sock >= 0) &&
        (ctx.exit_code == SC_EXIT_ERROR)) {
        /* Tell the client, which would otherwise wait for the verdict */
        send(ctx.sock, "F", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    sc_cleanup(&ctx);
    return ctx.exit_code;
}
