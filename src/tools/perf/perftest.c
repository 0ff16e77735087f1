/*
 * uct_perftest: latency and bandwidth of UCT operations.
 *
 *   loopback: uct_perftest -x TL -d DEV -l -t TEST [options]
 *   server:   uct_perftest -x TL -d DEV [-p PORT]
 *   client:   uct_perftest -x TL -d DEV [-p PORT] -t TEST [options] SERVER
 *
 * This file holds the command line, the run's outline and the output;
 * perftest_setup.c the transport objects, perftest_oob.c the socket of
 * client/server mode, perftest_tests.c the measured loops.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const perf_test_desc_t perf_tests[PERF_TEST_LAST] = {
    [PERF_TEST_AM_LAT]  = {"am_lat", PERF_OP_AM, 1,
                           "active message ping-pong latency"},
    [PERF_TEST_AM_BW]   = {"am_bw", PERF_OP_AM, 0, "active message bandwidth"},
    [PERF_TEST_PUT_LAT] = {"put_lat", PERF_OP_PUT, 1, "put ping-pong latency"},
    [PERF_TEST_PUT_BW]  = {"put_bw", PERF_OP_PUT, 0, "put bandwidth"},
    [PERF_TEST_GET_LAT] = {"get_lat", PERF_OP_GET, 1,
                           "get latency, one get at a time"},
    [PERF_TEST_GET_BW]  = {"get_bw", PERF_OP_GET, 0, "get bandwidth"},
    [PERF_TEST_ATOMIC_ADD_LAT] = {"atomic_add_lat", PERF_OP_ATOMIC_ADD, 1,
                                  "atomic add ping-pong latency"},
    [PERF_TEST_RNDV_LAT]       = {"rndv_lat", PERF_OP_RNDV, 1,
                                  "rendezvous ping-pong latency (-D zcopy)"}};

const char *perf_conn_names[PERF_CONN_LAST] = {[PERF_CONN_AUTO]  = "auto",
                                               [PERF_CONN_EP]    = "ep",
                                               [PERF_CONN_IFACE] = "iface"};

const char *perf_mode_names[PERF_MODE_LAST] = {[PERF_MODE_SHORT] = "short",
                                               [PERF_MODE_BCOPY] = "bcopy",
                                               [PERF_MODE_ZCOPY] = "zcopy"};

static void perf_usage(FILE *stream)
{
    int i;

    fprintf(
        stream,
        "Usage: uct_perftest -x TL -d DEV -l -t TEST [options]   (loopback)\n"
        "       uct_perftest -x TL -d DEV [-p PORT]               (server)\n"
        "       uct_perftest -x TL -d DEV [-p PORT] -t TEST [options] "
        "SERVER (client)\n"
        "\n"
        "  -x TL      transport (uct_info -d lists them)\n"
        "  -d DEV     device\n"
        "  -t TEST    test to run:\n");
    for (i = 0; i < PERF_TEST_LAST; ++i) {
        fprintf(stream, "               %-15s %s\n", perf_tests[i].name,
                perf_tests[i].desc);
    }
    fprintf(
        stream,
        "  -D MODE    data mode: short (default), bcopy, zcopy\n"
        "  -s SIZES   message sizes in bytes, comma separated, k/m suffixes "
        "(default %d)\n"
        "  -n ITERS   measured iterations (default %lu)\n"
        "  -w WARMUP  iterations before measuring (default %lu)\n"
        "  -W CREDITS am_bw: messages the sender may have ahead of what the "
        "receiver\n"
        "             reported received; the receiver reports every "
        "CREDITS/2 (default\n"
        "             %u, as ucx_perftest; 0: no limit)\n"
        "  -O COUNT   operations with a completion (zcopy, get bcopy) in "
        "flight at once\n"
        "             (default %u)\n"
        "  -C HOW     connect the endpoints to the peer's endpoint (ep) or "
        "interface\n"
        "             (iface); default: ep when the transport can, as "
        "ucx_perftest does\n"
        "  -l         loopback: both sides in this process\n"
        "  -B N       with -l -t am_lat -D short: read the clock every N "
        "iterations;\n"
        "             the percentiles are then those of N-iteration means "
        "(default 1)\n"
        "  -1         with -l -t am_lat -D short: one message per "
        "iteration, to the\n"
        "             initiator's own interface, halved, as ucx_perftest "
        "-l reports its\n"
        "             loopback latency (for comparing with its figures)\n"
        "  -p PORT    out-of-band TCP port of client/server mode "
        "(default %d)\n"
        "  -f csv     print the results as CSV\n"
        "  -T SECONDS give up when the peer shows no progress for this "
        "long; 0 waits\n"
        "             forever (default %d; each side uses its own)\n"
        "  -h         this help\n"
        "\n"
        "What is measured. The initiator (the client, or the first side "
        "of a loopback\n"
        "run) times the ITERS iterations that follow WARMUP ones, with the "
        "time stamp\n"
        "counter when it is invariant, else CLOCK_MONOTONIC (PERF_CLOCK="
        "monotonic\n"
        "forces it).\n"
        "  am_lat, put_lat, atomic_add_lat: ping-pong. The initiator sends, "
        "the responder\n"
        "    sends back when it sees the message (am: its handler ran; put: "
        "the last\n"
        "    byte landed; atomic: the counter moved), and an iteration ends "
        "when the\n"
        "    initiator sees the reply the same way. Latency is half of a "
        "round trip.\n"
        "  get_lat: one get at a time; an iteration is a whole get, from "
        "the call to\n"
        "    its completion (the data is here). Not halved.\n"
        "  rndv_lat: ping-pong of rendezvous messages, as an MPI library "
        "sends large\n"
        "    ones: the sender registers its buffer, packs the rkey and sends "
        "it in an\n"
        "    active message; the receiver unpacks it, registers its buffer, "
        "gets the\n"
        "    data with get zcopy, checks it, sends a small active message "
        "back and\n"
        "    deregisters; the sender deregisters on that message. Halved.\n"
        "  Latency tests print the minimum, p50 (the typical value), p99 "
        "and the\n"
        "    average of the iterations; the average is the total time "
        "over ITERS.\n"
        "  am_bw, put_bw, get_bw: the initiator posts back to back, "
        "retrying while the\n"
        "    transport has no resources. The clock starts at the first "
        "measured post\n"
        "    and stops when the receiver has every message: for am_bw when "
        "the\n"
        "    responder's report of the last message arrives, for put and "
        "get when\n"
        "    the flush of the endpoint completed (remote completion) and "
        "every\n"
        "    operation's completion ran. Time per operation is that "
        "interval over\n"
        "    ITERS; rate and bandwidth are its inverse.\n"
        "Loopback over a transport that reaches only its own interface "
        "(self) runs both\n"
        "sides on one interface, each with its own endpoint and "
        "buffers.\n"
        "\n"
        "The server runs the test the client asks for. A peer that fails "
        "(exits, is\nkilled, resets the connection) or stops progressing "
        "for -T seconds ends the\nrun with one line on stderr. Exit codes: "
        "0 done, 1 failed, 2 bad command line\nor a test the transport "
        "cannot run.\n",
        PERF_DEFAULT_SIZE, PERF_DEFAULT_ITERS, PERF_DEFAULT_WARMUP,
        PERF_DEFAULT_FC_WINDOW, PERF_DEFAULT_OUTSTANDING, PERF_DEFAULT_PORT,
        PERF_DEFAULT_TIMEOUT);
}

static int perf_parse_ulong(const char *str, unsigned long min,
                            unsigned long max, unsigned long *value_p)
{
    unsigned long value;
    char *end;

    errno = 0;
    value = strtoul(str, &end, 10);
    if ((errno != 0) || (end == str) || (*end != '\0') || (str[0] == '-') ||
        (value < min) || (value > max)) {
        return -1;
    }
    *value_p = value;
    return 0;
}

/* "8,1k,4m": sizes with optional binary suffixes */
static int perf_parse_sizes(const char *str, perf_params_t *params)
{
    unsigned long long value;
    const char *p = str;
    unsigned shift;
    char *end;

    params->num_sizes = 0;
    for (;;) {
        if (params->num_sizes == PERF_MAX_SIZES) {
            fprintf(stderr, "at most %d sizes in -s\n", PERF_MAX_SIZES);
            return -1;
        }
        if ((*p < '0') || (*p > '9')) {
            goto bad;
        }
        errno = 0;
        value = strtoull(p, &end, 10);
        if (errno != 0) {
            goto bad;
        }
        shift = 0;
        switch (*end) {
        case 'k':
        case 'K':
            shift = 10;
            ++end;
            break;
        case 'm':
        case 'M':
            shift = 20;
            ++end;
            break;
        case 'g':
        case 'G':
            shift = 30;
            ++end;
            break;
        default:
            break;
        }
        if ((value == 0) || (value > (SIZE_MAX >> 31))) {
            goto bad;
        }
        params->sizes[params->num_sizes++] = (size_t)(value << shift);
        if (*end == '\0') {
            return 0;
        } else if (*end != ',') {
            goto bad;
        }
        p = end + 1;
    }

bad:
    fprintf(stderr,
            "invalid size list '%s': give positive sizes such as "
            "8,1k,1m\n",
            str);
    return -1;
}

static int perf_parse_args(int argc, char **argv, perf_params_t *params,
                           int *help)
{
    int have_test = 0, have_port = 0;
    unsigned long value;
    int c, i;

    memset(params, 0, sizeof(*params));
    params->test        = PERF_TEST_AM_LAT;
    params->mode        = PERF_MODE_SHORT;
    params->sizes[0]    = PERF_DEFAULT_SIZE;
    params->num_sizes   = 1;
    params->iters       = PERF_DEFAULT_ITERS;
    params->warmup      = PERF_DEFAULT_WARMUP;
    params->outstanding = PERF_DEFAULT_OUTSTANDING;
    params->fc_window   = PERF_DEFAULT_FC_WINDOW;
    params->clock_batch = 1;
    params->port        = PERF_DEFAULT_PORT;
    params->timeout     = PERF_DEFAULT_TIMEOUT;

    opterr = 0;
    while ((c = getopt(argc, argv, "t:D:s:n:w:W:O:C:x:d:l1B:p:f:T:h")) != -1) {
        switch (c) {
        case 't':
            for (i = 0; i < PERF_TEST_LAST; ++i) {
                if (!strcmp(optarg, perf_tests[i].name)) {
                    break;
                }
            }
            if (i == PERF_TEST_LAST) {
                fprintf(stderr, "unknown test '%s'\n", optarg);
                return -1;
            }
            params->test = (perf_test_t)i;
            have_test    = 1;
            break;
        case 'D':
            for (i = 0; i < PERF_MODE_LAST; ++i) {
                if (!strcmp(optarg, perf_mode_names[i])) {
                    break;
                }
            }
            if (i == PERF_MODE_LAST) {
                fprintf(stderr, "unknown data mode '%s'\n", optarg);
                return -1;
            }
            params->mode = (perf_mode_t)i;
            break;
        case 's':
            if (perf_parse_sizes(optarg, params) != 0) {
                return -1;
            }
            break;
        case 'n':
        case 'w':
            if (perf_parse_ulong(optarg, (c == 'n') ? 1 : 0, 1UL << 40,
                                 &value) != 0) {
                fprintf(stderr, "invalid -%c '%s'\n", c, optarg);
                return -1;
            }
            *((c == 'n') ? &params->iters : &params->warmup) = value;
            break;
        case 'W':
            if (perf_parse_ulong(optarg, 0, 1U << 20, &value) != 0) {
                fprintf(stderr,
                        "invalid -W '%s': give a number of "
                        "messages, 0 for no limit\n",
                        optarg);
                return -1;
            }
            params->fc_window = (unsigned)value;
            break;
        case 'C':
            for (i = 0; i < PERF_CONN_LAST; ++i) {
                if (!strcmp(optarg, perf_conn_names[i])) {
                    break;
                }
            }
            if (i == PERF_CONN_LAST) {
                fprintf(stderr, "invalid -C '%s': give ep or iface\n", optarg);
                return -1;
            }
            params->conn = (perf_conn_t)i;
            break;
        case 'O':
            if (perf_parse_ulong(optarg, 1, 1U << 20, &value) != 0) {
                fprintf(stderr, "invalid -O '%s': give 1..%u\n", optarg,
                        1U << 20);
                return -1;
            }
            params->outstanding = (unsigned)value;
            break;
        case 'x':
            params->tl_name = optarg;
            break;
        case 'd':
            params->dev_name = optarg;
            break;
        case 'l':
            params->loopback = 1;
            break;
        case '1':
            params->one_message = 1;
            break;
        case 'B':
            if (perf_parse_ulong(optarg, 1, 4096, &value) != 0) {
                fprintf(stderr,
                        "invalid -B '%s': give 1..4096 "
                        "iterations\n",
                        optarg);
                return -1;
            }
            params->clock_batch = (unsigned)value;
            break;
        case 'p':
            if (perf_parse_ulong(optarg, 1, 65535, &value) != 0) {
                fprintf(stderr, "invalid port '%s'\n", optarg);
                return -1;
            }
            params->port = (uint16_t)value;
            have_port    = 1;
            break;
        case 'f':
            if (strcmp(optarg, "csv")) {
                fprintf(stderr, "unknown output format '%s'\n", optarg);
                return -1;
            }
            params->csv = 1;
            break;
        case 'T':
            if (perf_parse_ulong(optarg, 0, PERF_MAX_TIMEOUT, &value) != 0) {
                fprintf(stderr,
                        "invalid -T '%s': give whole seconds "
                        "0..%d, 0 for no limit\n",
                        optarg, PERF_MAX_TIMEOUT);
                return -1;
            }
            params->timeout = (unsigned)value;
            break;
        case 'h':
            *help = 1;
            return 0;
        default:
            fprintf(stderr, "invalid option or missing argument: -%c\n",
                    optopt);
            return -1;
        }
    }

    if (optind < argc) {
        params->server = argv[optind++];
    }
    if (optind < argc) {
        fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
        return -1;
    }

    if ((params->tl_name == NULL) || (params->dev_name == NULL)) {
        fprintf(stderr, "give the transport and device with -x and -d\n");
        return -1;
    }
    if (params->loopback && (have_port || (params->server != NULL))) {
        fprintf(stderr, "-l runs both sides here; it takes neither -p nor "
                        "a server name\n");
        return -1;
    }
    if ((params->one_message || (params->clock_batch > 1)) &&
        (!params->loopback || (params->test != PERF_TEST_AM_LAT) ||
         (params->mode != PERF_MODE_SHORT))) {
        fprintf(stderr, "-1 and -B go with -l -t am_lat -D short only\n");
        return -1;
    }
    if (params->loopback && !have_test) {
        fprintf(stderr, "choose a test with -t\n");
        return -1;
    }
    if ((params->server != NULL) && !have_test) {
        fprintf(stderr, "the client chooses the test: give -t\n");
        return -1;
    }
    if (perf_tests[params->test].op == PERF_OP_ATOMIC_ADD &&
        (params->num_sizes == 1) && (params->sizes[0] == PERF_DEFAULT_SIZE)) {
        params->sizes[0] = sizeof(uint64_t);
    }
    params->client_server = !params->loopback;
    return 0;
}

/* "am_lat (8 bytes, warm-up)", or "setup" before the first size */
static void perf_where(const perf_ctx_t *ctx, char *buf, size_t max)
{
    if (ctx->size == 0) {
        snprintf(buf, max, "setup");
    } else {
        snprintf(buf, max, "%s (%zu bytes, %s)",
                 perf_tests[ctx->params.test].name, ctx->size,
                 (ctx->phase != NULL) ? ctx->phase : "running");
    }
}

/*
 * The one line a run that lost its peer prints: what we were doing, the
 * transport, the status and how it showed (@a how, may be NULL). Only
 * the first failure is reported; what follows from it stays quiet.
 */
void perf_report_peer_failure(perf_ctx_t *ctx, ucs_status_t status,
                              const char *how)
{
    char where[128];

    if (ctx->reported) {
        return;
    }
    ctx->reported = 1;
    perf_where(ctx, where, sizeof(where));
    fprintf(stderr,
            "uct_perftest: peer failed during %s over %s/%s: %s%s%s"
            "%s\n",
            where, ctx->params.tl_name, ctx->params.dev_name,
            ucs_status_string(status), (how != NULL) ? " (" : "",
            (how != NULL) ? how : "", (how != NULL) ? ")" : "");
}

void perf_report_no_progress(perf_ctx_t *ctx)
{
    char where[128];

    if (ctx->reported) {
        return;
    }
    ctx->reported = 1;
    perf_where(ctx, where, sizeof(where));
    fprintf(stderr,
            "uct_perftest: no progress from the peer for %u s "
            "during %s over %s/%s; is it alive? (-T)\n",
            ctx->params.timeout, where, ctx->params.tl_name,
            ctx->params.dev_name);
}

void perf_print_progress(const perf_ctx_t *ctx, size_t size, unsigned long done,
                         unsigned long total, double elapsed_sec)
{
    fprintf(stderr,
            "uct_perftest: %s %s %zu bytes: %lu/%lu operations, "
            "%.1f s\n",
            perf_tests[ctx->params.test].name,
            perf_mode_names[ctx->params.mode], size, done, total, elapsed_sec);
}

static void perf_print_header(const perf_ctx_t *ctx)
{
    const perf_params_t *p = &ctx->params;
    int is_latency         = perf_tests[p->test].is_latency;

    if (p->csv) {
        printf("test,mode,size,iterations,typical_lat_usec,avg_lat_usec,"
               "bw_mib_s,msg_rate,min_lat_usec,p99_lat_usec\n");
        return;
    }

    printf("# uct_perftest: %s over %s/%s, %s, connected to %s, %lu "
           "iterations after %lu warmup, clock %s\n",
           perf_tests[p->test].name, p->tl_name, p->dev_name,
           p->loopback ? "loopback" : "client/server",
           ctx->conn_to_ep ? "ep" : "iface", p->iters, p->warmup,
           perf_clock.name);
    if (!is_latency && (perf_tests[p->test].op == PERF_OP_AM)) {
        printf("# receiver credits %u, completions in flight %u\n",
               p->fc_window, p->outstanding);
    } else if (!is_latency) {
        printf("# completions in flight %u\n", p->outstanding);
    }
    if (p->clock_batch > 1) {
        printf("# clock read every %u iterations: percentiles of "
               "%u-iteration means\n",
               p->clock_batch, p->clock_batch);
    }
    if (p->one_message) {
        printf("# latency: half of one message to the initiator's own "
               "interface (as ucx_perftest -l)\n");
    } else if (perf_tests[p->test].op == PERF_OP_GET) {
        printf("# %s\n",
               is_latency ? "latency: one whole get" : "time per operation");
    } else {
        printf("# %s\n", is_latency ? "latency: half a round trip"
                                    : "time per operation");
    }
    printf("#\n");
    printf("# %-14s %-5s %10s %11s %10s %10s %10s %10s %12s %12s\n", "test",
           "mode", "size", "iterations", "min", "p50", "p99", "average",
           "bw[MiB/s]", "rate[msg/s]");
    printf("# %-14s %-5s %10s %11s %10s %10s %10s %10s\n", "", "", "", "",
           "[usec]", "[usec]", "[usec]", "[usec]");
    fflush(stdout);
}

static void perf_print_result(const perf_ctx_t *ctx, const perf_result_t *r)
{
    const perf_params_t *p = &ctx->params;
    int is_latency         = perf_tests[p->test].is_latency;
    char min[32], p99[32];

    if (p->csv) {
        if (is_latency) {
            snprintf(min, sizeof(min), "%.3f", r->min_usec);
            snprintf(p99, sizeof(p99), "%.3f", r->p99_usec);
        } else {
            min[0] = p99[0] = '\0';
        }
        printf("%s,%s,%zu,%lu,%.3f,%.3f,%.2f,%.0f,%s,%s\n",
               perf_tests[p->test].name, perf_mode_names[p->mode], r->size,
               r->iters, r->typical_usec, r->avg_usec, r->bw_mibs, r->msg_rate,
               min, p99);
    } else {
        if (is_latency) {
            snprintf(min, sizeof(min), "%.3f", r->min_usec);
            snprintf(p99, sizeof(p99), "%.3f", r->p99_usec);
        } else {
            snprintf(min, sizeof(min), "-");
            snprintf(p99, sizeof(p99), "-");
        }
        printf("  %-14s %-5s %10zu %11lu %10s %10.3f %10s %10.3f %12.2f "
               "%12.0f\n",
               perf_tests[p->test].name, perf_mode_names[p->mode], r->size,
               r->iters, min, r->typical_usec, p99, r->avg_usec, r->bw_mibs,
               r->msg_rate);
    }
    fflush(stdout);
}

/* Client/server: the socket, and the server learns the run */
static int perf_oob_setup(perf_ctx_t *ctx)
{
    if (ctx->params.server == NULL) {
        ctx->is_server = 1;
        ctx->sock      = perf_oob_accept(ctx->params.port);
        if (ctx->sock < 0) {
            return -1;
        }
        return perf_oob_recv_params(ctx, &ctx->params);
    }

    ctx->sock = perf_oob_connect(ctx->params.server, ctx->params.port);
    if (ctx->sock < 0) {
        return -1;
    }
    return perf_oob_send_params(ctx, &ctx->params);
}

/* Opens the local sides and checks the test fits; returns an exit code */
static int perf_open(perf_ctx_t *ctx)
{
    const uct_iface_attr_t *attr;
    unsigned i;

    ctx->num_sides = ctx->params.loopback ? 2 : 1;
    for (i = 0; i < ctx->num_sides; ++i) {
        if ((i > 0) && (ctx->dev_type == UCT_DEVICE_TYPE_SELF)) {
            /* self reaches only its own interface, in UCX too: both sides
             * run on it, each with its endpoint, buffers and AM ids */
            perf_side_borrow(&ctx->sides[i], &ctx->sides[0]);
        } else if (perf_side_open(ctx, &ctx->sides[i]) != 0) {
            return PERF_EXIT_FAIL;
        }
    }
    ctx->sides[0].initiator = ctx->params.loopback || !ctx->is_server;
    for (i = 0; i < ctx->num_sides; ++i) {
        ctx->sides[i].am_id      = PERF_AM_ID + !ctx->sides[i].initiator;
        ctx->sides[i].peer_am_id = PERF_AM_ID + ctx->sides[i].initiator;
    }

    attr = &ctx->sides[0].attr;
    switch (ctx->params.conn) {
    case PERF_CONN_EP:
        if (!(attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP)) {
            fprintf(stderr,
                    "%s/%s cannot connect to an endpoint (-C ep); "
                    "use -C iface\n",
                    ctx->params.tl_name, ctx->params.dev_name);
            return PERF_EXIT_UNSUPPORTED;
        }
        ctx->conn_to_ep = 1;
        break;
    case PERF_CONN_IFACE:
        if (!(attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE)) {
            fprintf(stderr,
                    "%s/%s cannot connect to an interface (-C "
                    "iface); use -C ep\n",
                    ctx->params.tl_name, ctx->params.dev_name);
            return PERF_EXIT_UNSUPPORTED;
        }
        ctx->conn_to_ep = 0;
        break;
    default:
        ctx->conn_to_ep = !!(attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP);
        break;
    }
    if (perf_check_caps(ctx, attr) != 0) {
        return PERF_EXIT_UNSUPPORTED;
    }
    return PERF_EXIT_OK;
}

/* Trades addresses and connects every local side to its peer */
static int perf_connect(perf_ctx_t *ctx)
{
    perf_blob_t blobs[2] = {{NULL, 0}, {NULL, 0}};
    perf_blob_t peer     = {NULL, 0};
    size_t max_size      = 0;
    int ret              = -1;
    unsigned i;

    for (i = 0; i < ctx->params.num_sizes; ++i) {
        max_size = perf_max(max_size, ctx->params.sizes[i]);
    }

    for (i = 0; i < ctx->num_sides; ++i) {
        if (perf_side_prepare(ctx, &ctx->sides[i], max_size, &blobs[i]) != 0) {
            goto out;
        }
    }

    if (ctx->params.loopback) {
        if ((perf_side_connect(ctx, &ctx->sides[0], &blobs[1]) != 0) ||
            (perf_side_connect(ctx, &ctx->sides[1], &blobs[0]) != 0)) {
            goto out;
        }
    } else {
        if ((perf_oob_send_blob(ctx, &blobs[0]) != 0) ||
            (perf_oob_recv_blob(ctx, &peer) != 0) ||
            (perf_side_connect(ctx, &ctx->sides[0], &peer) != 0)) {
            goto out;
        }
    }
    ret = 0;

out:
    free(blobs[0].data);
    free(blobs[1].data);
    free(peer.data);
    return ret;
}

static int perf_run(perf_ctx_t *ctx)
{
    perf_result_t result;
    int ret;
    unsigned i;

    if (perf_md_find(ctx) != 0) {
        return PERF_EXIT_UNSUPPORTED;
    }

    if (ctx->params.client_server && (ctx->dev_type == UCT_DEVICE_TYPE_SELF)) {
        fprintf(stderr,
                "%s/%s reaches only its own process and cannot run "
                "client/server; use -l for loopback\n",
                ctx->params.tl_name, ctx->params.dev_name);
        return PERF_EXIT_UNSUPPORTED;
    }

    if (ctx->params.client_server && (perf_oob_setup(ctx) != 0)) {
        return PERF_EXIT_FAIL;
    }

    ret = perf_open(ctx);
    if (ret != PERF_EXIT_OK) {
        return ret;
    }

    if (perf_connect(ctx) != 0) {
        return PERF_EXIT_FAIL;
    }

    if (ctx->sides[0].initiator) {
        perf_print_header(ctx);
    }
    for (i = 0; i < ctx->params.num_sizes; ++i) {
        if (perf_run_size(ctx, ctx->params.sizes[i], &result) != 0) {
            return PERF_EXIT_FAIL;
        }
        if (ctx->sides[0].initiator) {
            perf_print_result(ctx, &result);
        }
    }
    return PERF_EXIT_OK;
}

int main(int argc, char **argv)
{
    perf_ctx_t ctx;
    int help = 0;
    unsigned i;
    int ret;

    memset(&ctx, 0, sizeof(ctx));
    ctx.sock = -1;

    if (perf_parse_args(argc, argv, &ctx.params, &help) != 0) {
        perf_usage(stderr);
        return PERF_EXIT_UNSUPPORTED;
    }
    if (help) {
        perf_usage(stdout);
        return PERF_EXIT_OK;
    }

    perf_clock_init();
    ret = perf_run(&ctx);

    /* the second side may run on the first one's interface */
    for (i = 2; i-- > 0;) {
        perf_side_close(&ctx, &ctx.sides[i]);
    }
    perf_md_close(&ctx);
    if (ctx.sock >= 0) {
        close(ctx.sock);
    }
    return ret;
}
