/*
 * tcp_hostile stall: PUTs whose bytes stop coming. Three connections to
 * the target's interface, opened together, each sending a valid
 * handshake, a PUT header and HX_STALL_SENT bytes of its data in one
 * write (the remote key is random: the target refuses the PUT and drops
 * its data, which it must still read to the end):
 *   huge     announces 0xFFFFFFF0 bytes, then goes silent
 *   1 MiB    announces 1 MiB of data, then goes silent
 *   trickle  announces 1 MiB, then sends one more byte every -t/4 s
 * With UCX_TCP_PEER_TIMEOUT=-t seconds on the target (which checks once a
 * second), the two silent ones must be closed no sooner than -t seconds
 * after their last byte and no later than -t + 2; the trickle, whose
 * bytes keep coming, must still be open after 2 * -t + 1 seconds.
 */
#include "hostile.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HX_STALL_SENT  100 /* data bytes after the PUT header */
#define HX_STALL_SLACK 2.0 /* seconds the close may come after the timeout */

enum { HX_STALL_HUGE, HX_STALL_MIB, HX_STALL_TRICKLE, HX_STALL_LAST };

typedef struct {
    const char *name;
    uint32_t length; /* hdr.length: the PUT header and the data */
    int fd;
    double sent_at;   /* the last byte */
    double closed_at; /* 0: open */
} hx_stall_conn_t;

static int hx_stall_opt(int opt, const char *arg, void *arg_p)
{
    return hx_parse_uint(opt, arg, 1, 60, arg_p);
}

/* Connects and sends the handshake, the PUT header and the first data */
static int hx_stall_open(const hx_target_t *t, hx_stall_conn_t *c)
{
    uint8_t msg[HX_HDR_LEN + HX_PUT_HDR_LEN + HX_STALL_SENT];
    hx_handshake_t hs;
    int status;

    memset(msg, 0xa5, sizeof(msg));
    hx_hdr_pack(msg, HX_OP_PUT, 0, 0, c->length);
    hx_put_le(msg + HX_HDR_LEN, 0x10000, 8);           /* remote address */
    hx_put_le(msg + HX_HDR_LEN + 8, hx_random64(), 8); /* rkey */

    c->fd = hx_open(t, 0, HX_CONN_TO_IFACE, &hs);
    if (c->fd < 0) {
        return -1;
    }
    c->sent_at = hx_now();
    status     = hx_handshake(c->fd, t, &hs, msg, sizeof(msg));
    if (status != HX_HS_ACCEPTED) {
        fprintf(stderr, "%s stall: the handshake of the %s PUT got %s\n",
                HX_PROG, c->name, hx_status_name((unsigned)status));
        return -1;
    }
    return 0;
}

/* Notes the connections the target closed */
static void hx_stall_poll(hx_stall_conn_t *conns, int timeout_ms)
{
    struct pollfd pfd[HX_STALL_LAST];
    char scratch[256];
    ssize_t ret;
    unsigned i;

    for (i = 0; i < HX_STALL_LAST; ++i) {
        pfd[i].fd     = (conns[i].closed_at == 0) ? conns[i].fd : -1;
        pfd[i].events = POLLIN;
    }
    if (poll(pfd, HX_STALL_LAST, timeout_ms) <= 0) {
        return;
    }
    for (i = 0; i < HX_STALL_LAST; ++i) {
        if ((pfd[i].fd >= 0) && (pfd[i].revents != 0)) {
            ret = recv(conns[i].fd, scratch, sizeof(scratch), MSG_DONTWAIT);
            if (ret <= 0) {
                conns[i].closed_at = hx_now();
            }
        }
    }
}

/* "closed 3.02 s after its last byte", or why it is wrong */
static int hx_stall_judge(const hx_stall_conn_t *c, double timeout, char *text,
                          size_t max)
{
    double elapsed = c->closed_at - c->sent_at;

    if (c->closed_at == 0) {
        snprintf(text, max,
                 "the %s PUT was still open %.1f s after its last "
                 "byte",
                 c->name, hx_now() - c->sent_at);
        return 0;
    }
    snprintf(text, max, "the %s PUT was closed %.2f s after its last byte%s",
             c->name, elapsed,
             (elapsed < timeout) ? " (before the timeout)" : "");
    return (elapsed >= timeout) && (elapsed <= timeout + HX_STALL_SLACK);
}

int hx_stall_main(int argc, char **argv)
{
    hx_stall_conn_t conns[HX_STALL_LAST] = {
        [HX_STALL_HUGE]    = {"4 GiB", 0xfffffff0u, -1, 0, 0},
        [HX_STALL_MIB]     = {"1 MiB", HX_PUT_HDR_LEN + (1u << 20), -1, 0, 0},
        [HX_STALL_TRICKLE] = {"trickling", HX_PUT_HDR_LEN + (1u << 20), -1, 0,
                              0}};
    hx_stall_conn_t *trickle = &conns[HX_STALL_TRICKLE];
    unsigned long timeout    = 2;
    char text[2][128];
    double start, end, now;
    unsigned i, trickled = 0;
    hx_target_t t;
    int ok, ret = HX_EXIT_SETUP;

    if (hx_parse_check(argc, argv, "t:", hx_stall_opt, &timeout, &t) != 0) {
        return HX_EXIT_SETUP;
    }
    for (i = 0; i < HX_STALL_LAST; ++i) {
        if (hx_stall_open(&t, &conns[i]) != 0) {
            goto out;
        }
    }

    start = hx_now();
    end   = start + 2.0 * (double)timeout + 1.0;
    if (end < start + (double)timeout + HX_STALL_SLACK + 0.5) {
        end = start + (double)timeout + HX_STALL_SLACK + 0.5;
    }
    while ((now = hx_now()) < end) {
        if ((trickle->closed_at == 0) &&
            (now >= trickle->sent_at + (double)timeout / 4) &&
            (send(trickle->fd, "t", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)) {
            trickle->sent_at = now;
            ++trickled;
        }
        hx_stall_poll(conns, 50);
    }

    ok = hx_stall_judge(&conns[HX_STALL_HUGE], (double)timeout, text[0],
                        sizeof(text[0]));
    ok &= hx_stall_judge(&conns[HX_STALL_MIB], (double)timeout, text[1],
                         sizeof(text[1]));
    ok &= (trickle->closed_at == 0);
    printf("stall: UCX_TCP_PEER_TIMEOUT=%lus, %d data bytes sent: %s; %s; "
           "the PUT trickling a byte every %.1f s was %s after %.1f s (%u "
           "bytes)\n",
           timeout, HX_STALL_SENT, text[0], text[1], (double)timeout / 4,
           (trickle->closed_at == 0) ? "still open" : "CLOSED",
           ((trickle->closed_at == 0) ? hx_now() : trickle->closed_at) - start,
           HX_STALL_SENT + trickled);
    ret = ok ? HX_EXIT_PASS : HX_EXIT_FAIL;
out:
    for (i = 0; i < HX_STALL_LAST; ++i) {
        if (conns[i].fd >= 0) {
            close(conns[i].fd);
        }
    }
    return ret;
}
