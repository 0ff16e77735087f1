/*
 * tcp_hostile hijack: a process given endpoint A's address (the "ep" line
 * of the address file) and nothing else tries to reach the endpoints
 * around it, and A itself: ids A-2 .. A+8, each with the cookies A-16 ..
 * A+16 and HX_HIJACK_RANDOM random ones, each attempt presented as coming
 * from a random endpoint of its own. Every attempt must be answered NO_EP
 * (DUPLICATE is allowed for A's own address, if A is connected already)
 * and closed. A connection that is accepted sends an active message
 * (id HX_HIJACK_AM_ID), which the target then counts as coming from
 * elsewhere, and is kept open until the end, so that the endpoint stays
 * taken from its real peer.
 */
#include "hostile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HX_HIJACK_ID_BELOW 2
#define HX_HIJACK_ID_ABOVE 8
#define HX_HIJACK_COOKIES  16 /* on either side of A's */
#define HX_HIJACK_RANDOM   8  /* random cookies per id */
#define HX_HIJACK_AM_ID    9
#define HX_HIJACK_OPEN_MAX 1024

typedef struct {
    unsigned attempts;
    unsigned status[HX_HS_LAST]; /* replies by status */
    unsigned open;               /* refused but not closed */
    int accepted[HX_HIJACK_OPEN_MAX];
    unsigned num_accepted;
} hx_hijack_t;

/* One attempt at endpoint @a id with @a cookie; the reply's status, or -1
 * for none */
static int hx_hijack_try(const hx_target_t *t, hx_hijack_t *h, uint32_t id,
                         uint64_t cookie)
{
    uint8_t am[HX_HDR_LEN + 8];
    hx_handshake_t hs;
    int fd, status;

    ++h->attempts;
    fd = hx_open(t, 0, HX_CONN_TO_EP, &hs);
    if (fd < 0) {
        return -1;
    }
    hs.dst_ep_id     = id;
    hs.dst_ep_cookie = cookie;
    hs.src_ep_id     = (uint32_t)hx_random64();
    hs.src_ep_cookie = hx_random64();
    status           = hx_handshake(fd, t, &hs, NULL, 0);
    if ((status >= 0) && (status < HX_HS_LAST)) {
        ++h->status[status];
    }

    if ((status == HX_HS_ACCEPTED) && (h->num_accepted < HX_HIJACK_OPEN_MAX)) {
        printf("hijack: endpoint %u with cookie 0x%llx ACCEPTED the "
               "connection\n",
               id, (unsigned long long)cookie);
        hx_hdr_pack(am, HX_HIJACK_AM_ID, 0, 0, 8);
        memcpy(am + HX_HDR_LEN, "hijacked", 8);
        hx_send_all(fd, am, sizeof(am));
        h->accepted[h->num_accepted++] = fd;
        return status;
    }
    if ((status >= 0) && !hx_wait_close(fd, 2000)) {
        ++h->open;
    }
    close(fd);
    return status;
}

int hx_hijack_main(int argc, char **argv)
{
    uint32_t first, id;
    double start, elapsed;
    hx_hijack_t *h;
    hx_target_t t;
    unsigned i, refused, dup_elsewhere = 0;
    int64_t d;
    int ret;

    if (hx_parse_check(argc, argv, "", NULL, NULL, &t) != 0) {
        return HX_EXIT_SETUP;
    }
    if (!t.have_ep) {
        fprintf(stderr, "%s hijack: the address file has no \"ep\" line\n",
                HX_PROG);
        return HX_EXIT_SETUP;
    }
    h = calloc(1, sizeof(*h));
    if (h == NULL) {
        return HX_EXIT_SETUP;
    }

    start = hx_now();
    first = t.ep_id - HX_HIJACK_ID_BELOW;
    for (id = first; id != t.ep_id + HX_HIJACK_ID_ABOVE + 1; ++id) {
        for (d = -HX_HIJACK_COOKIES; d <= HX_HIJACK_COOKIES; ++d) {
            if ((hx_hijack_try(&t, h, id, t.ep_cookie + (uint64_t)d) ==
                 HX_HS_DUPLICATE) &&
                ((id != t.ep_id) || (d != 0))) {
                /* a guessed cookie was right: that endpoint exists */
                ++dup_elsewhere;
            }
        }
        for (i = 0; i < HX_HIJACK_RANDOM; ++i) {
            hx_hijack_try(&t, h, id, hx_random64());
        }
    }
    elapsed = hx_now() - start;

    /* the target delivers what the accepted connections sent */
    usleep(200 * 1000);
    for (i = 0; i < h->num_accepted; ++i) {
        close(h->accepted[i]);
    }

    refused = h->status[HX_HS_NO_EP] + h->status[HX_HS_DUPLICATE];
    printf("hijack: %u attempts at endpoints %u..%u around endpoint A "
           "(id %u), cookies A-%d..A+%d and %d random each, in %.2f s: "
           "%u refused (%u NO_EP, %u DUPLICATE) and %u of those left "
           "open, %u accepted, %u other\n",
           h->attempts, first, t.ep_id + HX_HIJACK_ID_ABOVE, t.ep_id,
           HX_HIJACK_COOKIES, HX_HIJACK_COOKIES, HX_HIJACK_RANDOM, elapsed,
           refused, h->status[HX_HS_NO_EP], h->status[HX_HS_DUPLICATE], h->open,
           h->status[HX_HS_ACCEPTED],
           h->attempts - refused - h->status[HX_HS_ACCEPTED]);
    ret = ((refused == h->attempts) && (dup_elsewhere == 0) && (h->open == 0))
              ? HX_EXIT_PASS
              : HX_EXIT_FAIL;
    free(h);
    return ret;
}
