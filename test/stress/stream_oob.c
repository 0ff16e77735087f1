/*
 * uct_stream_check: the control connection, a plain TCP socket on which
 * the client sends its parameters and both sides trade their transport
 * addresses (device, interface, one address per endpoint, the server's
 * PUT area and remote key); then the endpoints are created and connected.
 * During the stream only the server's verdict travels on it. With -a the
 * device and interface addresses are also written to a file.
 */
#define _GNU_SOURCE

#include "stream_check.h"

#include <common/hex_line.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SC_ADDR_PART_MAX 4096 /* sanity limit of each address part */

int sc_oob_send(sc_ctx_t *ctx, const void *data, size_t length)
{
    const char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = send(ctx->sock, p, length, MSG_NOSIGNAL);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            sc_stop(ctx, SC_EXIT_ERROR, "control connection send failed: %s",
                    strerror(errno));
            return -1;
        }
        p += ret;
        length -= (size_t)ret;
    }
    return 0;
}

static int sc_oob_recv(sc_ctx_t *ctx, void *data, size_t length)
{
    char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = recv(ctx->sock, p, length, 0);
        if (ret == 0) {
            sc_stop(ctx, SC_EXIT_ERROR,
                    "the peer closed the control "
                    "connection during setup (see its output)");
            return -1;
        } else if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            sc_stop(ctx, SC_EXIT_ERROR,
                    "control connection receive "
                    "failed: %s",
                    strerror(errno));
            return -1;
        }
        p += ret;
        length -= (size_t)ret;
    }
    return 0;
}

static int sc_oob_listen(sc_ctx_t *ctx, int family)
{
    struct sockaddr_storage ss;
    int one = 1, zero = 0;
    socklen_t len;
    int sock;

    memset(&ss, 0, sizeof(ss));
    if (family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        a6->sin6_family         = AF_INET6;
        a6->sin6_addr           = in6addr_any;
        a6->sin6_port           = htons(ctx->port);
        len                     = sizeof(*a6);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        a4->sin_family         = AF_INET;
        a4->sin_addr.s_addr    = htonl(INADDR_ANY);
        a4->sin_port           = htons(ctx->port);
        len                    = sizeof(*a4);
    }

    sock = socket(family, SOCK_STREAM, 0);
    if (sock < 0) {
        return -1;
    }
    if (family == AF_INET6) {
        setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((bind(sock, (struct sockaddr *)&ss, len) < 0) ||
        (listen(sock, 1) < 0)) {
        close(sock);
        return -1;
    }
    return sock;
}

/* The port a listening socket got (for -p 0) */
static uint16_t sc_oob_local_port(int sock)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (getsockname(sock, (struct sockaddr *)&ss, &len) != 0) {
        return 0;
    }
    return ntohs((ss.ss_family == AF_INET6)
                     ? ((struct sockaddr_in6 *)&ss)->sin6_port
                     : ((struct sockaddr_in *)&ss)->sin_port);
}

/* -a: our device and interface addresses, written to a temporary name and
 * renamed, so that whoever waits for the file reads it whole */
int sc_addr_write(sc_ctx_t *ctx)
{
    size_t length = ctx->attr.device_addr_len + ctx->attr.iface_addr_len;
    ucs_status_t status;
    char tmp[4096];
    FILE *file;
    char *addr;

    addr = calloc(1, length + 1);
    if (addr == NULL) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for the address");
        return -1;
    }
    status =
        uct_iface_get_device_address(ctx->iface, (uct_device_addr_t *)addr);
    if ((status == UCS_OK) && (ctx->attr.iface_addr_len > 0)) {
        status = uct_iface_get_address(
            ctx->iface, (uct_iface_addr_t *)(addr + ctx->attr.device_addr_len));
    }
    if (status != UCS_OK) {
        free(addr);
        return sc_fail(ctx, "getting our transport address", status);
    }

    snprintf(tmp, sizeof(tmp), "%s.tmp", ctx->addr_file);
    file = fopen(tmp, "w");
    if (file != NULL) {
        test_hex_line_write(file, "dev", addr, ctx->attr.device_addr_len);
        test_hex_line_write(file, "iface", addr + ctx->attr.device_addr_len,
                            ctx->attr.iface_addr_len);
    }
    free(addr);
    if ((file == NULL) || (fclose(file) != 0) ||
        (rename(tmp, ctx->addr_file) != 0)) {
        sc_stop(ctx, SC_EXIT_ERROR, "cannot write the address file %s: %s",
                ctx->addr_file, strerror(errno));
        return -1;
    }
    return 0;
}

int sc_oob_accept(sc_ctx_t *ctx)
{
    int lsock;

    lsock = sc_oob_listen(ctx, AF_INET6);
    if (lsock < 0) {
        lsock = sc_oob_listen(ctx, AF_INET);
    }
    if (lsock < 0) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "cannot listen on port %u: %s; pick "
                "another with -p",
                ctx->port, strerror(errno));
        return -1;
    }
    printf("server: %s/%s, waiting for a client on port %u\n", ctx->tl_name,
           ctx->dev_name, sc_oob_local_port(lsock));
    /* a peer that connects to the interface before the client (tcp_hostile
     * flood does) is served, not left in its listen backlog */
    if (sc_serve(ctx, lsock, 0) != 0) {
        close(lsock);
        return -1;
    }

    do {
        ctx->sock = accept(lsock, NULL, NULL);
    } while ((ctx->sock < 0) && (errno == EINTR));
    close(lsock);
    if (ctx->sock < 0) {
        sc_stop(ctx, SC_EXIT_ERROR, "accept on port %u failed: %s", ctx->port,
                strerror(errno));
        return -1;
    }
    return 0;
}

int sc_oob_connect(sc_ctx_t *ctx)
{
    struct timespec delay = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    double deadline       = sc_now() + SC_CONNECT_TIMEOUT;
    struct addrinfo hints, *res, *ai;
    int sock, ret, err = 0;
    char port_str[8];

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port_str, sizeof(port_str), "%u", ctx->port);

    ret = getaddrinfo(ctx->server, port_str, &hints, &res);
    if (ret != 0) {
        sc_stop(ctx, SC_EXIT_ERROR, "cannot resolve server '%s': %s",
                ctx->server, gai_strerror(ret));
        return -1;
    }

    /* The server may still be starting: retry refused connections */
    for (;;) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (sock < 0) {
                err = errno;
                continue;
            }
            if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                ctx->sock = sock;
                return 0;
            }
            err = errno;
            close(sock);
        }
        if (((err != ECONNREFUSED) && (err != ENETUNREACH)) ||
            (sc_now() >= deadline)) {
            break;
        }
        nanosleep(&delay, NULL);
    }

    freeaddrinfo(res);
    sc_stop(ctx, SC_EXIT_ERROR,
            "cannot connect to %s:%u: %s; is the "
            "server running?",
            ctx->server, ctx->port, strerror(err));
    return -1;
}

/*
 * Watches the control connection. Nothing travels on it during the
 * stream, so readable means the peer closed it (it exited or died) or,
 * on the client, that the server sent its verdict.
 */
void sc_oob_check(sc_ctx_t *ctx, double now)
{
    struct pollfd pfd = {.fd = ctx->sock, .events = POLLIN};
    char verdict;
    ssize_t ret;

    if ((ctx->sock < 0) || (ctx->oob_closed_at > 0) ||
        (poll(&pfd, 1, 0) <= 0)) {
        return;
    }
    ret = recv(ctx->sock, &verdict, 1, MSG_DONTWAIT);
    if (ret == 1) {
        ctx->verdict = verdict;
    } else if ((ret == 0) || ((errno != EAGAIN) && (errno != EINTR))) {
        ctx->oob_closed_at = now;
    }
}

/* Endpoints without a peer, whose addresses we send (CONNECT_TO_EP) */
static int sc_eps_create_unconnected(sc_ctx_t *ctx)
{
    uct_ep_params_t params;
    ucs_status_t status;
    unsigned i;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = ctx->iface;
    for (i = 0; i < ctx->num_eps; ++i) {
        status = uct_ep_create(&params, &ctx->streams[i].ep);
        if (status != UCS_OK) {
            ctx->streams[i].ep = NULL;
            return sc_fail(ctx, "uct_ep_create", status);
        }
    }
    return 0;
}

/* Sends our addresses (and the PUT area, on the server) */
static int sc_oob_send_addr(sc_ctx_t *ctx)
{
    ucs_status_t status = UCS_OK;
    sc_addr_hdr_t hdr;
    size_t length;
    char *blob, *p;
    unsigned i;
    int ret;

    memset(&hdr, 0, sizeof(hdr));
    hdr.magic          = SC_OOB_MAGIC;
    hdr.dev_addr_len   = ctx->attr.device_addr_len;
    hdr.iface_addr_len = ctx->attr.iface_addr_len;
    hdr.ep_addr_len =
        (ctx->connect == SC_CONNECT_EP) ? ctx->attr.ep_addr_len : 0;
    hdr.num_eps = ctx->num_eps;
    if (!sc_is_client(ctx) && (ctx->memh != UCT_MEM_HANDLE_NULL)) {
        hdr.rkey_len = ctx->md_attr.rkey_packed_size;
    }
    if (!sc_is_client(ctx)) {
        hdr.buf_addr = (uintptr_t)ctx->buf;
        hdr.half     = ctx->half;
    }

    length = sizeof(hdr) + hdr.dev_addr_len + hdr.iface_addr_len +
             (size_t)hdr.num_eps * hdr.ep_addr_len + hdr.rkey_len;
    blob = calloc(1, length);
    if (blob == NULL) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for the address");
        return -1;
    }
    memcpy(blob, &hdr, sizeof(hdr));
    p = blob + sizeof(hdr);

    status = uct_iface_get_device_address(ctx->iface, (uct_device_addr_t *)p);
    p += hdr.dev_addr_len;
    if ((status == UCS_OK) && (hdr.iface_addr_len > 0)) {
        status = uct_iface_get_address(ctx->iface, (uct_iface_addr_t *)p);
        p += hdr.iface_addr_len;
    }
    for (i = 0;
         (i < hdr.num_eps) && (hdr.ep_addr_len > 0) && (status == UCS_OK);
         ++i) {
        status = uct_ep_get_address(ctx->streams[i].ep, (uct_ep_addr_t *)p);
        p += hdr.ep_addr_len;
    }
    if ((status == UCS_OK) && (hdr.rkey_len > 0)) {
        status = uct_md_mkey_pack(ctx->md, ctx->memh, p);
    }
    if (status != UCS_OK) {
        free(blob);
        return sc_fail(ctx, "getting our transport address", status);
    }

    ret = sc_oob_send(ctx, blob, length);
    free(blob);
    return ret;
}

/* Connects our endpoints to the peer's interface or endpoints */
static int sc_eps_connect(sc_ctx_t *ctx, const char *dev, const char *iface,
                          const char *ep_addrs, size_t ep_addr_len)
{
    uct_ep_params_t params;
    ucs_status_t status;
    unsigned i;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = ctx->iface;
    params.dev_addr   = (const uct_device_addr_t *)dev;
    params.iface_addr = (const uct_iface_addr_t *)iface;
    for (i = 0; i < ctx->num_eps; ++i) {
        if (ctx->connect == SC_CONNECT_EP) {
            status = uct_ep_connect_to_ep(
                ctx->streams[i].ep, (const uct_device_addr_t *)dev,
                (const uct_ep_addr_t *)(ep_addrs + i * ep_addr_len));
            if (status != UCS_OK) {
                return sc_fail(ctx, "uct_ep_connect_to_ep", status);
            }
        } else {
            status = uct_ep_create(&params, &ctx->streams[i].ep);
            if (status != UCS_OK) {
                ctx->streams[i].ep = NULL;
                return sc_fail(ctx, "uct_ep_create", status);
            }
        }
    }
    return 0;
}

/* Receives the peer's addresses and connects our endpoints to them */
static int sc_oob_recv_addr(sc_ctx_t *ctx)
{
    size_t ep_addr_len =
        (ctx->connect == SC_CONNECT_EP) ? ctx->attr.ep_addr_len : 0;
    char *blob, *dev, *iface, *ep_addrs, *rkey;
    ucs_status_t status;
    sc_addr_hdr_t hdr;
    size_t length;
    int ret;

    if (sc_oob_recv(ctx, &hdr, sizeof(hdr)) != 0) {
        return -1;
    }
    if ((hdr.magic != SC_OOB_MAGIC) || (hdr.dev_addr_len > SC_ADDR_PART_MAX) ||
        (hdr.iface_addr_len > SC_ADDR_PART_MAX) ||
        (hdr.ep_addr_len != ep_addr_len) || (hdr.num_eps != ctx->num_eps) ||
        (hdr.rkey_len > SC_ADDR_PART_MAX)) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "the peer sent a malformed address; "
                "do both sides run %s of the same version with the same "
                "-t?",
                SC_PROG);
        return -1;
    }
    length = hdr.dev_addr_len + hdr.iface_addr_len +
             (size_t)hdr.num_eps * hdr.ep_addr_len + hdr.rkey_len;
    blob = calloc(1, length + 1);
    if (blob == NULL) {
        sc_stop(ctx, SC_EXIT_ERROR, "out of memory for the peer's address");
        return -1;
    }
    if (sc_oob_recv(ctx, blob, length) != 0) {
        free(blob);
        return -1;
    }
    dev      = blob;
    iface    = dev + hdr.dev_addr_len;
    ep_addrs = iface + hdr.iface_addr_len;
    rkey     = ep_addrs + (size_t)hdr.num_eps * hdr.ep_addr_len;

    if (!uct_iface_is_reachable(ctx->iface, (uct_device_addr_t *)dev,
                                (uct_iface_addr_t *)iface)) {
        free(blob);
        sc_stop(ctx, SC_EXIT_ERROR,
                "the peer's %s address is not "
                "reachable from device %s (another subnet or fabric?)",
                ctx->tl_name, ctx->dev_name);
        return -1;
    }
    ret = sc_eps_connect(ctx, dev, iface, ep_addrs, hdr.ep_addr_len);

    if ((ret == 0) && sc_is_client(ctx)) {
        ctx->remote_buf = hdr.buf_addr;
        ctx->half       = hdr.half;
        ctx->rkey.rkey  = UCT_INVALID_RKEY;
        if (hdr.rkey_len > 0) {
            status = uct_rkey_unpack(ctx->component, rkey, &ctx->rkey);
            if (status != UCS_OK) {
                ret = sc_fail(ctx, "uct_rkey_unpack", status);
            } else {
                ctx->have_rkey = 1;
            }
        }
    }
    free(blob);
    return ret;
}

/* Client: the connection mode from -C and what the transport offers */
static int sc_connect_mode(sc_ctx_t *ctx)
{
    uint64_t flags = ctx->attr.cap.flags;

    if (ctx->connect == SC_CONNECT_AUTO) {
        ctx->connect = (flags & UCT_IFACE_FLAG_CONNECT_TO_EP)
                           ? SC_CONNECT_EP
                           : SC_CONNECT_IFACE;
    }
    if (((ctx->connect == SC_CONNECT_EP) &&
         !(flags & UCT_IFACE_FLAG_CONNECT_TO_EP)) ||
        ((ctx->connect == SC_CONNECT_IFACE) &&
         !(flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE))) {
        sc_stop(ctx, SC_EXIT_ERROR, "%s/%s cannot connect to %s; try -C %s",
                ctx->tl_name, ctx->dev_name,
                (ctx->connect == SC_CONNECT_EP) ? "an endpoint"
                                                : "an interface",
                (ctx->connect == SC_CONNECT_EP) ? "iface" : "ep");
        return -1;
    }
    return 0;
}

static int sc_client_send_params(sc_ctx_t *ctx)
{
    sc_wire_params_t wire;

    memset(&wire, 0, sizeof(wire));
    wire.magic    = SC_OOB_MAGIC;
    wire.mode     = ctx->mode;
    wire.connect  = ctx->connect;
    wire.num_eps  = ctx->num_eps;
    wire.bytes    = ctx->ep_bytes;
    wire.msgs     = ctx->msgs;
    wire.max_size = ctx->max_size;
    wire.seconds  = ctx->seconds;
    snprintf(wire.tl_name, sizeof(wire.tl_name), "%s", ctx->tl_name);
    return sc_oob_send(ctx, &wire, sizeof(wire));
}

static int sc_server_recv_params(sc_ctx_t *ctx)
{
    sc_wire_params_t wire;

    if (sc_oob_recv(ctx, &wire, sizeof(wire)) != 0) {
        return -1;
    }
    if ((wire.magic != SC_OOB_MAGIC) || (wire.mode > SC_MODE_BOTH) ||
        ((wire.connect != SC_CONNECT_IFACE) &&
         (wire.connect != SC_CONNECT_EP)) ||
        (wire.num_eps == 0) || (wire.num_eps > SC_MAX_EPS) ||
        (wire.max_size > SC_MAX_SIZE_LIMIT)) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "the client sent invalid parameters; "
                "is it %s of the same version?",
                SC_PROG);
        return -1;
    }
    wire.tl_name[sizeof(wire.tl_name) - 1] = '\0';
    if (strcmp(wire.tl_name, ctx->tl_name) != 0) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "the client uses transport %s, this "
                "server %s; give both the same -t",
                wire.tl_name, ctx->tl_name);
        return -1;
    }
    ctx->mode     = (sc_mode_t)wire.mode;
    ctx->connect  = (sc_connect_t)wire.connect;
    ctx->num_eps  = wire.num_eps;
    ctx->ep_bytes = wire.bytes;
    ctx->msgs     = wire.msgs;
    ctx->max_size = wire.max_size;
    ctx->seconds  = wire.seconds;
    if (sc_connect_mode(ctx) != 0) {
        return -1;
    }
    printf("server: client connected: %u endpoint%s (connect to %s), "
           "mode %s\n",
           ctx->num_eps, (ctx->num_eps == 1) ? "" : "s",
           sc_connect_names[ctx->connect], sc_mode_names[ctx->mode]);
    return 0;
}

/*
 * Parameters, then addresses. The client sends first; the server
 * allocates its streams and PUT area once it knows how many endpoints.
 * With CONNECT_TO_EP the endpoints exist before their addresses are
 * sent; with CONNECT_TO_IFACE they are created from the peer's address.
 */
int sc_exchange(sc_ctx_t *ctx)
{
    if (sc_is_client(ctx)) {
        if ((sc_connect_mode(ctx) != 0) || (sc_client_send_params(ctx) != 0) ||
            (sc_streams_alloc(ctx) != 0)) {
            return -1;
        }
    } else if ((sc_server_recv_params(ctx) != 0) ||
               (sc_streams_alloc(ctx) != 0) ||
               (sc_server_buffers_alloc(ctx) != 0)) {
        return -1;
    }

    if ((ctx->connect == SC_CONNECT_EP) &&
        (sc_eps_create_unconnected(ctx) != 0)) {
        return -1;
    }
    if ((sc_oob_send_addr(ctx) != 0) || (sc_oob_recv_addr(ctx) != 0)) {
        return -1;
    }
    if (ctx->verbose) {
        printf("%s: %u endpoint%s connected to the peer's %s\n", sc_side(ctx),
               ctx->num_eps, (ctx->num_eps == 1) ? "" : "s",
               (ctx->connect == SC_CONNECT_EP) ? "endpoints" : "interface");
    }
    return 0;
}
