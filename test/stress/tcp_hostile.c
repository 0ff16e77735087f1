/*
 * tcp_hostile: a hostile peer of the tcp transport. It attacks a real
 * process over tcp on loopback with plain sockets, speaking the wire
 * protocol (version 4, written out in hostile.h) the way an attacker who
 * knows it would, and checks that one peer can neither reach another
 * peer's endpoint nor starve it (issue 22):
 *
 *   hijack    given endpoint A's address only, tries the ids and cookies
 *             around it: every attempt refused (NO_EP) and closed
 *   flood     thousands of connections from other loopback addresses,
 *             each holding a receive buffer with a partial message, kept
 *             fresh and reopened when dropped, while a legitimate client
 *             streams (uct_stream_check, which verifies it)
 *   stall     PUTs announcing 4 GiB and 1 MiB whose bytes stop coming:
 *             closed after UCX_TCP_PEER_TIMEOUT, not before; one whose
 *             bytes keep trickling in stays open
 *   reserved  handshakes with reserved fields set refused (BAD_REQUEST),
 *             message headers with reserved bits close the connection
 *
 * The attacked process is "tcp_hostile target" (hijack, stall,
 * reserved), which tells the checks its addresses in a file and, on
 * SIGUSR1, verifies that its legitimate peers still get every message, or
 * "uct_stream_check -a FILE" (flood). Each check prints one line with
 * what it measured and exits 0 (passed), 1 (failed) or 2 (could not run).
 * check-hostile.sh runs them all (make check).
 */
#include "hostile.h"

#include <stdio.h>
#include <string.h>

static void hx_usage(FILE *stream)
{
    fprintf(stream,
            "usage: %s target -o FILE [-d DEV] [-c EPS] [-a INDEX] [-n MSGS]\n"
            "       %s hijack [-V 3|4|5] FILE\n"
            "       %s flood [-V 3|4|5] [-c CONNS] [-s SOURCES] [-f FIRST] "
            "[-r SEC]\n"
            "                [-t SEC] FILE\n"
            "       %s stall [-V 3|4|5] [-t SEC] FILE\n"
            "       %s reserved [-V 3|4|5] FILE\n"
            "  target    the attacked process: tcp on DEV (default lo), EPS "
            "endpoints\n"
            "            (default 8) waiting for their peers; writes FILE "
            "(device,\n"
            "            interface and endpoint INDEX's address, default 2); "
            "on\n"
            "            SIGUSR1 the peers send MSGS AMs each (default 100), "
            "verified\n"
            "  hijack    tries the endpoint ids and cookies around FILE's "
            "endpoint\n"
            "  flood     CONNS connections (default 4100) from SOURCES "
            "addresses\n"
            "            (default 5) from 127.0.0.(1+FIRST) on (default 1: "
            "127.0.0.2;\n"
            "            0 includes 127.0.0.1, the legitimate client's "
            "host) holding\n"
            "            partial messages, each\n"
            "            refreshed every SEC s (-r, default 2), until "
            "SIGTERM or -t\n"
            "  stall     silent PUTs of 4 GiB and 1 MiB, closed after the "
            "target's\n"
            "            UCX_TCP_PEER_TIMEOUT (-t, default 2 s); a trickling "
            "one not\n"
            "  reserved  reserved handshake fields and header bits set\n"
            "  -V 3|4    speak protocol version 3 or 4 (builds before version "
            "5)\n"
            "FILE: lines \"dev HEX\", \"iface HEX\", \"ep HEX\" (tcp_hostile "
            "target -o,\n"
            "uct_stream_check -a). Exit: 0 passed, 1 failed, 2 could not "
            "run.\n",
            HX_PROG, HX_PROG, HX_PROG, HX_PROG, HX_PROG);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {{"target", hx_target_main},
                    {"hijack", hx_hijack_main},
                    {"flood", hx_flood_main},
                    {"stall", hx_stall_main},
                    {"reserved", hx_reserved_main}};
    unsigned i;

    /* Scripts read the output while the program runs */
    setvbuf(stdout, NULL, _IOLBF, 0);

    if ((argc >= 2) && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        hx_usage(stdout);
        return HX_EXIT_PASS;
    }
    for (i = 0; (argc >= 2) && (i < sizeof(commands) / sizeof(commands[0]));
         ++i) {
        if (!strcmp(argv[1], commands[i].name)) {
            return commands[i].run(argc - 1, argv + 1);
        }
    }
    hx_usage(stderr);
    return HX_EXIT_SETUP;
}
