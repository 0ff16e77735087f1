/*
 * uct_ud_scale: ud_verbs at tens of thousands of endpoints. One server
 * process and several client processes, which share a run directory
 * (-D) for their addresses and results:
 *
 *   uct_ud_scale -d rxe_v0:1 -D DIR -n 10000 -P 5            # server
 *   uct_ud_scale -d rxe_v1:1 -D DIR -n 10000 -P 5 -i 0 ...   # client 0..4
 *
 * 1. The server opens one ud_verbs interface, registers a buffer of 64
 *    bytes per endpoint (UCT_MD_MEM_ACCESS_ALL) and writes DIR/server.addr
 *    ("dev", "iface", "buf" and "rkey" lines of hex, atomically).
 * 2. Each client takes its share of the -n endpoints (client i: the
 *    endpoints from its base index on), opens its interface, writes
 *    DIR/ready.<i>, and waits for the driver's DIR/go.
 * 3. Round 1: each client connects its endpoints to the server's
 *    interface (CONNECT_TO_IFACE), -w at a time; on each one AM (client
 *    id, ep index, round and a pattern; ep 0 adds the client's device and
 *    interface addresses, buffer and rkey) and one PUT of a pattern into
 *    the endpoint's 64-byte slot of the server's buffer, each flushed.
 *    The server checks every AM as it comes. A client whose endpoints all
 *    completed sends DONE; the server then checks every PUT slot of that
 *    client and answers VERIFIED. From the addresses in a client's first
 *    AM the server creates one ep of its own to that client's interface
 *    (ud_verbs pairs the n-th ep either side creates towards the other, so
 *    it is the pair of the client's ep 0) and sends one PUT into the
 *    client's buffer and one AM, which the client checks.
 * 4. Each client measures its idle heap and the interface's counters and
 *    writes DIR/client.<i> (with every endpoint's connect time); the
 *    server measures its own and prints "server: round 1 complete".
 * 5. The driver SIGKILLs some clients and writes DIR/killed ("SECONDS
 *    ID...": the time of the kill, date +%s.%N, and their ids). The server
 *    runs round 2 with the survivors (ROUND, then the same AM + PUT on
 *    every surviving endpoint, checked) while it waits for the killed
 *    clients' peer endpoints to be reclaimed (UD_TIMEOUT's idle sweep);
 *    then it keeps the survivors idle for 2.5 UD_TIMEOUT (their peer
 *    endpoints must stay), sends FIN and prints the report. After round
 *    1 one flush covers an endpoint's AM and PUT.
 *
 * Every figure is in the server's table; the program exits 0 when every
 * AM and PUT was verified, no error handler ran for a surviving
 * endpoint, and the killed clients' peer endpoints went within twice
 * UD_TIMEOUT (speed and memory targets print pass/fail but do not change
 * the exit status). test/stress/check-ud-scale.sh is the driver.
 *
 * It reads ud_verbs' own counters from the interface structure
 * (uct/ib/ud/ud.h), as test/bench/verbs_ep_memory does: the object tree
 * has them too, but turned on it would add its files to every
 * endpoint's heap.
 */
#include "ud_scale.h"

#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void us_usage(void)
{
    printf("usage: %s -d DEV [-D DIR] [-n EPS] [-P CLIENTS] [-w EPS] "
           "[-T SECONDS]\n"
           "       %s -d DEV -i ID [-D DIR] [-n EPS] [-P CLIENTS] [-w EPS] "
           "[-T SECONDS]\n"
           "  -d DEV      ud_verbs device, e.g. rxe_v0:1\n"
           "  -D DIR      run directory shared with the other processes "
           "(default .)\n"
           "  -n EPS      endpoints of all clients together (default %u)\n"
           "  -P CLIENTS  client processes (default %u)\n"
           "  -i ID       be client ID (0 .. CLIENTS-1); without: the "
           "server\n"
           "  -w EPS      client: endpoints connecting at once (default "
           "%u; the server only prints it)\n"
           "  -T SECONDS  limit of every wait (default %u)\n",
           US_PROG, US_PROG, US_DEFAULT_EPS, US_DEFAULT_CLIENTS,
           US_DEFAULT_WINDOW, US_DEFAULT_LIMIT);
}

/* What the options that take a whole number set */
typedef struct {
    unsigned num_eps, num_clients, window, client_index, limit_sec;
} us_numbers_t;

/* Those options, their ranges and fields */
static const struct {
    int opt;
    unsigned long min, max;
    size_t offset;
} us_number_opts[] = {{'n', 1, 1000000, offsetof(us_numbers_t, num_eps)},
                      {'P', 2, 4096, offsetof(us_numbers_t, num_clients)},
                      {'w', 1, 1000000, offsetof(us_numbers_t, window)},
                      {'i', 0, 4095, offsetof(us_numbers_t, client_index)},
                      {'T', 1, 86400, offsetof(us_numbers_t, limit_sec)}};

/* A whole number option into @a num; 0, or -1 with a message (also for
 * an option that is not one of them) */
static int us_parse_number(us_numbers_t *num, int opt, const char *str)
{
    unsigned long value;
    size_t i;
    char *end;

    for (i = 0; i < sizeof(us_number_opts) / sizeof(us_number_opts[0]); ++i) {
        if (us_number_opts[i].opt != opt) {
            continue;
        }
        value = strtoul(str, &end, 10);
        if ((*str == '\0') || (*end != '\0') || (*str == '-') ||
            (value < us_number_opts[i].min) ||
            (value > us_number_opts[i].max)) {
            fprintf(stderr, "%s: -%c %s: give a whole number from %lu to %lu\n",
                    US_PROG, opt, str, us_number_opts[i].min,
                    us_number_opts[i].max);
            return -1;
        }
        *(unsigned *)((char *)num + us_number_opts[i].offset) = (unsigned)value;
        return 0;
    }
    return -1;
}

static int us_parse(us_ctx_t *ctx, int argc, char **argv)
{
    us_numbers_t num = {.num_eps      = US_DEFAULT_EPS,
                        .num_clients  = US_DEFAULT_CLIENTS,
                        .window       = US_DEFAULT_WINDOW,
                        .client_index = UINT_MAX,
                        .limit_sec    = US_DEFAULT_LIMIT};
    int opt;

    while ((opt = getopt(argc, argv, "d:D:n:P:i:w:T:h")) != -1) {
        if (opt == 'd') {
            ctx->dev_name = optarg;
        } else if (opt == 'D') {
            ctx->dir = optarg;
        } else if (opt == 'h') {
            us_usage();
            exit(0);
        } else if (us_parse_number(&num, opt, optarg) != 0) {
            us_usage();
            return -1;
        }
    }
    ctx->num_eps     = num.num_eps;
    ctx->num_clients = num.num_clients;
    ctx->window      = num.window;
    ctx->limit       = num.limit_sec;
    ctx->client_id =
        (num.client_index == UINT_MAX) ? -1 : (int)num.client_index;
    if ((optind != argc) || (ctx->dev_name == NULL)) {
        fprintf(stderr,
                "%s: give the device with -d (uct_info -d lists "
                "them) and no other arguments\n",
                US_PROG);
        return -1;
    }
    if ((ctx->client_id >= (int)ctx->num_clients) ||
        (ctx->num_eps < ctx->num_clients)) {
        fprintf(stderr, "%s: -i must be below -P (%u), and -n at least -P\n",
                US_PROG, ctx->num_clients);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    us_ctx_t ctx;

    memset(&ctx, 0, sizeof(ctx));
    ctx.dir = ".";
    if (us_parse(&ctx, argc, argv) != 0) {
        return 1;
    }
    /* the async thread (it makes the server's peer eps) shares the main
     * arena, as in verbs_ep_memory, so that no arena of its own comes
     * into the heap figures */
    mallopt(M_ARENA_MAX, 1);
    return (ctx.client_id < 0) ? us_server_run(&ctx) : us_client_run(&ctx);
}
