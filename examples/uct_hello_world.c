/*
 * uct_hello_world: sends one active message between two interfaces.
 *
 *   server:   uct_hello_world -d DEV -t TL [-p PORT] [-m TEXT]
 *   client:   uct_hello_world -d DEV -t TL -n SERVER [-p PORT] [-s SIZE]
 *                             [-m TEXT] [-i | -b | -z]
 *   loopback: uct_hello_world -d DEV -t TL -l [-s SIZE] [-m TEXT]
 *                             [-i | -b | -z]
 *
 * The program walks the objects of the transport API in the order an
 * application creates them: an async context and a worker, the memory
 * domain that offers TL/DEV, an interface on it, the addresses the peer
 * needs, an endpoint, and finally the message. Client and server trade
 * addresses over a plain TCP socket; in loopback mode one process opens
 * two interfaces and sends from one to the other (the only way to run
 * the "self" transport, which does not cross processes).
 *
 * The bytes that arrive are the peer's choice: the receiver checks the
 * lengths against what the transport delivered and prints the text with
 * anything but printable ASCII escaped, so a peer cannot drive our
 * terminal.
 *
 * Build against an installed tree:
 *   cc uct_hello_world.c -o uct_hello_world $(pkg-config --cflags --libs
 *      openuct)
 */
#define _POSIX_C_SOURCE 200809L /* getaddrinfo, nanosleep in strict C11 */

#include <uct/api/uct.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define HELLO_DEFAULT_PORT    13337u
#define HELLO_TEXT            "hello world"
#define HELLO_PRINT_MAX       64 /* bytes of the text printed at most */
#define HELLO_CONNECT_TIMEOUT 10 /* seconds a client retries */
#define HELLO_RECV_TIMEOUT                 \
    10 /* seconds the server waits for the \
          message once the client flushed */

/* Signals on the out-of-band socket, one byte each */
enum {
    HELLO_SIG_READY   = 'r', /* server: the client may send */
    HELLO_SIG_FLUSHED = 'f', /* client: the send completed at the server */
    HELLO_SIG_DONE    = 'd', /* server: message good, both may tear down */
    HELLO_SIG_BAD     = 'x'  /* server: message bad, both may tear down */
};

/* One AM id per send mode, so the receiver knows the layout */
enum {
    HELLO_AM_ID_SHORT = 0, /* 8-byte header (the length), then the text */
    HELLO_AM_ID_BCOPY = 1, /* the text */
    HELLO_AM_ID_ZCOPY = 2  /* the text */
};

typedef enum {
    HELLO_MODE_SHORT,
    HELLO_MODE_BCOPY,
    HELLO_MODE_ZCOPY
} hello_mode_t;

static const char *hello_mode_names[] = {[HELLO_MODE_SHORT] = "am_short",
                                         [HELLO_MODE_BCOPY] = "am_bcopy",
                                         [HELLO_MODE_ZCOPY] = "am_zcopy"};

typedef struct {
    const char *dev_name;
    const char *tl_name;
    const char *server; /* NULL: this process is the server */
    const char *text;   /* sent, or expected, cut or padded to size */
    uint16_t port;      /* 0: the server takes any free port */
    size_t size;
    int size_max; /* -s max: size is the mode's limit */
    hello_mode_t mode;
    int loopback;
    unsigned linger; /* seconds to stay up after the message */
} hello_args_t;

/* What goes over the socket before the address blobs */
typedef struct {
    char tl_name[UCT_TL_NAME_MAX];
    uint32_t conn_to_ep; /* 1: endpoint address, 0: iface address */
    uint32_t dev_addr_len;
    uint32_t iface_addr_len;
    uint32_t ep_addr_len;
} hello_addr_hdr_t;

/* The addresses one side hands to the other */
typedef struct {
    hello_addr_hdr_t hdr;
    void *dev_addr;
    void *iface_addr;
    void *ep_addr;
} hello_addr_t;

/* An interface with its endpoint and its own addresses */
typedef struct {
    uct_iface_h iface;
    uct_iface_attr_t attr;
    uct_ep_h ep;
    hello_addr_t addr;
} hello_iface_t;

/* What the receiver learns from its AM handlers */
typedef struct {
    const char *text; /* what the message should hold */
    volatile int received;
    volatile int valid;
    volatile int extra; /* messages after the first, ignored */
} hello_recv_t;

typedef struct {
    uct_completion_t super;
    volatile int done;
} hello_comp_t;

typedef struct {
    hello_args_t args;
    char *msg; /* the SIZE bytes sent */
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_md_h md;
    uct_md_attr_t md_attr;
    hello_iface_t rx;  /* receiver: server, or loopback */
    hello_iface_t tx;  /* sender: client, or loopback */
    hello_addr_t peer; /* addresses read from the socket */
    int conn_to_ep;
    int sock;
    hello_recv_t recv;
} hello_ctx_t;

/* ------------------------------------------------------------------------
 * The message
 */

/* @a text cut or padded with dots to @a size bytes */
static void hello_msg_fill(char *buf, size_t size, const char *text)
{
    size_t text_len = strlen(text);

    memcpy(buf, text, (size < text_len) ? size : text_len);
    if (size > text_len) {
        memset(buf + text_len, '.', size - text_len);
    }
}

static int hello_msg_check(const char *data, size_t size, const char *text)
{
    size_t text_len = strlen(text);
    size_t i;

    for (i = 0; i < size; ++i) {
        if (data[i] != ((i < text_len) ? text[i] : '.')) {
            return 0;
        }
    }
    return 1;
}

/*
 * Prints at most @a max bytes of @a data, and "..." if there are more.
 * Printable ASCII goes out as is, a backslash doubled, every other byte
 * as \xNN: the bytes come from the peer, and raw they could carry
 * terminal control sequences.
 */
static void hello_print_escaped(FILE *stream, const char *data, size_t size,
                                size_t max)
{
    size_t i, shown = (size > max) ? max : size;
    unsigned char c;

    for (i = 0; i < shown; ++i) {
        c = (unsigned char)data[i];
        if (c == '\\') {
            fputs("\\\\", stream);
        } else if ((c >= 0x20) && (c < 0x7f)) {
            fputc(c, stream);
        } else {
            fprintf(stream, "\\x%02x", c);
        }
    }
    if (size > shown) {
        fputs("...", stream);
    }
}

/* One message is expected: later ones are only counted, so that a peer
 * cannot flood the terminal */
static int hello_msg_is_first(hello_recv_t *recv)
{
    if (recv->received) {
        ++recv->extra;
        return 0;
    }
    return 1;
}

static void hello_msg_received(hello_recv_t *recv, const char *data,
                               size_t size)
{
    printf("received %zu bytes: ", size);
    hello_print_escaped(stdout, data, size, HELLO_PRINT_MAX);
    printf("\n");
    fflush(stdout);

    recv->valid    = hello_msg_check(data, size, recv->text);
    recv->received = 1;
}

/* A message that breaks the layout of its AM id: nothing of it is used */
static void hello_msg_rejected(hello_recv_t *recv)
{
    recv->valid    = 0;
    recv->received = 1;
}

/*
 * AM handlers: they run from uct_worker_progress() on the receiver. The
 * transport delivers @a length bytes at @a data; everything in them,
 * lengths included, is the peer's word and is checked before use.
 */

static ucs_status_t hello_am_short_cb(void *arg, void *data, size_t length,
                                      unsigned flags)
{
    uint64_t header;

    if (!hello_msg_is_first(arg)) {
        return UCS_OK;
    }

    if (length < sizeof(header)) {
        fprintf(stderr,
                "am_short message of %zu bytes has no header; "
                "dropped\n",
                length);
        hello_msg_rejected(arg);
        return UCS_OK;
    }

    /* The header carries the length of the text that follows it: it
     * must agree with what arrived, and only what arrived is read */
    memcpy(&header, data, sizeof(header));
    if (header != length - sizeof(header)) {
        fprintf(stderr,
                "am_short header says %llu bytes of text, %zu "
                "arrived; dropped\n",
                (unsigned long long)header, length - sizeof(header));
        hello_msg_rejected(arg);
        return UCS_OK;
    }
    hello_msg_received(arg, (char *)data + sizeof(header),
                       length - sizeof(header));
    return UCS_OK;
}

static ucs_status_t hello_am_data_cb(void *arg, void *data, size_t length,
                                     unsigned flags)
{
    if (hello_msg_is_first(arg)) {
        hello_msg_received(arg, data, length);
    }
    return UCS_OK;
}

/* bcopy: the transport calls this to copy the text into its buffer */
static size_t hello_pack_cb(void *dest, void *arg)
{
    const hello_ctx_t *ctx = arg;

    memcpy(dest, ctx->msg, ctx->args.size);
    return ctx->args.size;
}

static void hello_comp_cb(uct_completion_t *self)
{
    hello_comp_t *comp = ucs_container_of(self, hello_comp_t, super);

    comp->done = 1;
}

static void hello_comp_init(hello_comp_t *comp)
{
    comp->super.func   = hello_comp_cb;
    comp->super.count  = 1;
    comp->super.status = UCS_OK;
    comp->done         = 0;
}

/* ------------------------------------------------------------------------
 * Out-of-band socket: addresses and one-byte signals
 */

static int hello_sock_send(int sock, const void *data, size_t length)
{
    const char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = send(sock, p, length, MSG_NOSIGNAL);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "socket send failed: %s\n", strerror(errno));
            return -1;
        }
        p += ret;
        length -= ret;
    }
    return 0;
}

static int hello_sock_recv(int sock, void *data, size_t length)
{
    char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = recv(sock, p, length, 0);
        if (ret == 0) {
            fprintf(stderr, "the peer closed the connection\n");
            return -1;
        } else if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "socket receive failed: %s\n", strerror(errno));
            return -1;
        }
        p += ret;
        length -= ret;
    }
    return 0;
}

/* The port @a sock is bound to, 0 if unknown */
static unsigned hello_sock_port(int sock)
{
    struct sockaddr_storage addr;
    socklen_t addr_len = sizeof(addr);

    if (getsockname(sock, (struct sockaddr *)&addr, &addr_len) != 0) {
        return 0;
    }
    if (addr.ss_family == AF_INET6) {
        return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
    } else if (addr.ss_family == AF_INET) {
        return ntohs(((struct sockaddr_in *)&addr)->sin_port);
    }
    return 0;
}

/* Server: waits for one client on any address, IPv6 and IPv4; port 0
 * takes any free port. Says which port it waits on. */
static int hello_sock_accept(uint16_t port)
{
    struct sockaddr_in6 addr6;
    struct sockaddr_in addr4;
    int one = 1, zero = 0;
    int lsock, sock;

    memset(&addr6, 0, sizeof(addr6));
    addr6.sin6_family = AF_INET6;
    addr6.sin6_addr   = in6addr_any;
    addr6.sin6_port   = htons(port);

    lsock = socket(AF_INET6, SOCK_STREAM, 0);
    if (lsock >= 0) {
        setsockopt(lsock, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(lsock, (struct sockaddr *)&addr6, sizeof(addr6)) < 0) {
            close(lsock);
            lsock = -1;
        }
    }

    if (lsock < 0) {
        /* No IPv6 on this host: listen on IPv4 only */
        memset(&addr4, 0, sizeof(addr4));
        addr4.sin_family      = AF_INET;
        addr4.sin_addr.s_addr = htonl(INADDR_ANY);
        addr4.sin_port        = htons(port);

        lsock = socket(AF_INET, SOCK_STREAM, 0);
        if (lsock < 0) {
            fprintf(stderr, "cannot create a socket: %s\n", strerror(errno));
            return -1;
        }
        setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(lsock, (struct sockaddr *)&addr4, sizeof(addr4)) < 0) {
            fprintf(stderr,
                    "cannot listen on port %u: %s; pick another "
                    "with -p\n",
                    port, strerror(errno));
            close(lsock);
            return -1;
        }
    }

    if (listen(lsock, 1) < 0) {
        fprintf(stderr, "cannot listen on port %u: %s\n", port,
                strerror(errno));
        close(lsock);
        return -1;
    }

    printf("waiting for a client on port %u\n", hello_sock_port(lsock));
    fflush(stdout);

    do {
        sock = accept(lsock, NULL, NULL);
    } while ((sock < 0) && (errno == EINTR));
    if (sock < 0) {
        fprintf(stderr, "accept failed: %s\n", strerror(errno));
    }

    close(lsock);
    return sock;
}

/* Client: connects to SERVER:PORT, retrying while the server starts up */
static int hello_sock_connect(const char *server, uint16_t port)
{
    struct addrinfo hints, *res, *ai;
    struct timespec retry_delay = {.tv_sec = 0, .tv_nsec = 100000000};
    time_t deadline             = time(NULL) + HELLO_CONNECT_TIMEOUT;
    char port_str[8];
    int sock, ret, last_errno;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port_str, sizeof(port_str), "%u", port);

    ret = getaddrinfo(server, port_str, &hints, &res);
    if (ret != 0) {
        fprintf(stderr, "cannot resolve '%s': %s\n", server, gai_strerror(ret));
        return -1;
    }

    for (;;) {
        last_errno = 0;
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (sock < 0) {
                last_errno = errno;
                continue;
            }
            if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return sock;
            }
            last_errno = errno;
            close(sock);
        }

        if ((last_errno != ECONNREFUSED) || (time(NULL) >= deadline)) {
            break;
        }
        nanosleep(&retry_delay, NULL);
    }

    fprintf(stderr, "cannot connect to %s:%u: %s; is the server running?\n",
            server, port, strerror(last_errno));
    freeaddrinfo(res);
    return -1;
}

static int hello_addr_send(int sock, const hello_addr_t *addr)
{
    if ((hello_sock_send(sock, &addr->hdr, sizeof(addr->hdr)) != 0) ||
        (hello_sock_send(sock, addr->dev_addr, addr->hdr.dev_addr_len) != 0) ||
        (hello_sock_send(sock, addr->iface_addr, addr->hdr.iface_addr_len) !=
         0) ||
        (hello_sock_send(sock, addr->ep_addr, addr->hdr.ep_addr_len) != 0)) {
        return -1;
    }
    return 0;
}

static void hello_addr_free(hello_addr_t *addr)
{
    free(addr->dev_addr);
    free(addr->iface_addr);
    free(addr->ep_addr);
    memset(addr, 0, sizeof(*addr));
}

/* Allocates the three blobs (at least one byte each, so never NULL) */
static int hello_addr_alloc(hello_addr_t *addr)
{
    addr->dev_addr   = calloc(1, addr->hdr.dev_addr_len + 1);
    addr->iface_addr = calloc(1, addr->hdr.iface_addr_len + 1);
    addr->ep_addr    = calloc(1, addr->hdr.ep_addr_len + 1);
    if ((addr->dev_addr == NULL) || (addr->iface_addr == NULL) ||
        (addr->ep_addr == NULL)) {
        fprintf(stderr, "out of memory for addresses\n");
        return -1;
    }
    return 0;
}

/* Reads the peer's addresses and checks they fit our transport */
static int hello_addr_recv(int sock, const hello_iface_t *local,
                           hello_addr_t *peer)
{
    const hello_addr_hdr_t *ours = &local->addr.hdr;

    if (hello_sock_recv(sock, &peer->hdr, sizeof(peer->hdr)) != 0) {
        return -1;
    }

    peer->hdr.tl_name[UCT_TL_NAME_MAX - 1] = '\0';
    if (strcmp(peer->hdr.tl_name, ours->tl_name) ||
        (peer->hdr.conn_to_ep != ours->conn_to_ep) ||
        (peer->hdr.dev_addr_len != ours->dev_addr_len) ||
        (peer->hdr.iface_addr_len != ours->iface_addr_len) ||
        (peer->hdr.ep_addr_len != ours->ep_addr_len)) {
        /* The name is the peer's: printed escaped */
        fprintf(stderr, "the peer uses transport '");
        hello_print_escaped(stderr, peer->hdr.tl_name,
                            strlen(peer->hdr.tl_name), UCT_TL_NAME_MAX);
        fprintf(stderr,
                "' with other address sizes than our '%s'; run "
                "both sides with the same -t\n",
                ours->tl_name);
        return -1;
    }

    if ((hello_addr_alloc(peer) != 0) ||
        (hello_sock_recv(sock, peer->dev_addr, peer->hdr.dev_addr_len) != 0) ||
        (hello_sock_recv(sock, peer->iface_addr, peer->hdr.iface_addr_len) !=
         0) ||
        (hello_sock_recv(sock, peer->ep_addr, peer->hdr.ep_addr_len) != 0)) {
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Transport objects
 */

static int hello_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "%s failed: %s\n", what, ucs_status_string(status));
    return -1;
}

/* Does memory domain @a md offer the transport and device we want? */
static int hello_md_has_resource(const hello_args_t *args, uct_md_h md)
{
    uct_tl_resource_desc_t *resources;
    unsigned i, num_resources;
    int found = 0;

    if (uct_md_query_tl_resources(md, &resources, &num_resources) != UCS_OK) {
        return 0;
    }
    for (i = 0; i < num_resources; ++i) {
        if (!strcmp(resources[i].tl_name, args->tl_name) &&
            !strcmp(resources[i].dev_name, args->dev_name)) {
            found = 1;
        }
    }
    uct_release_tl_resource_list(resources);
    return found;
}

/* Opens the memory domain of @a md_name and keeps it if it has TL/DEV */
static int hello_md_try(hello_ctx_t *ctx, uct_component_h component,
                        const char *md_name)
{
    uct_md_config_t *md_config;
    ucs_status_t status;
    uct_md_h md;

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        return 0;
    }

    status = uct_md_open(component, md_name, md_config, &md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        return 0;
    }

    if (!hello_md_has_resource(&ctx->args, md)) {
        uct_md_close(md);
        return 0;
    }

    ctx->md = md;
    return 1;
}

/* Walks components -> memory domains -> resources to find TL/DEV */
static int hello_md_find(hello_ctx_t *ctx)
{
    uct_component_h *components;
    uct_component_attr_t attr;
    unsigned c, m, num_components;
    ucs_status_t status;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        return hello_fail("uct_query_components", status);
    }

    for (c = 0; (c < num_components) && (ctx->md == NULL); ++c) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &attr) != UCS_OK) {
            continue;
        }

        attr.md_resources =
            calloc(attr.md_resource_count + 1, sizeof(*attr.md_resources));
        if (attr.md_resources == NULL) {
            break;
        }

        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        if (uct_component_query(components[c], &attr) == UCS_OK) {
            for (m = 0; (m < attr.md_resource_count) && (ctx->md == NULL);
                 ++m) {
                hello_md_try(ctx, components[c], attr.md_resources[m].md_name);
            }
        }
        free(attr.md_resources);
    }

    uct_release_component_list(components);

    if (ctx->md == NULL) {
        fprintf(stderr,
                "transport %s / device %s not found; run uct_info "
                "-d\n",
                ctx->args.tl_name, ctx->args.dev_name);
        return -1;
    }

    status = uct_md_query(ctx->md, &ctx->md_attr);
    if (status != UCS_OK) {
        return hello_fail("uct_md_query", status);
    }
    return 0;
}

static int hello_iface_open(hello_ctx_t *ctx, hello_iface_t *hi)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    ucs_status_t status;

    status = uct_md_iface_config_read(ctx->md, ctx->args.tl_name, NULL, NULL,
                                      &config);
    if (status != UCS_OK) {
        return hello_fail("uct_md_iface_config_read", status);
    }

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = ctx->args.tl_name;
    params.mode.device.dev_name = ctx->args.dev_name;
    params.rx_headroom          = 0;

    status = uct_iface_open(ctx->md, ctx->worker, &params, config, &hi->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        hi->iface = NULL;
        return hello_fail("uct_iface_open", status);
    }

    status = uct_iface_query(hi->iface, &hi->attr);
    if (status != UCS_OK) {
        return hello_fail("uct_iface_query", status);
    }

    /* Let the worker's progress drive this interface */
    uct_iface_progress_enable(hi->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

/* The receiver's handlers: one per send mode */
static int hello_iface_set_handlers(hello_ctx_t *ctx, hello_iface_t *hi)
{
    ucs_status_t status;

    status = uct_iface_set_am_handler(hi->iface, HELLO_AM_ID_SHORT,
                                      hello_am_short_cb, &ctx->recv,
                                      UCT_CB_FLAG_ASYNC);
    if (status == UCS_OK) {
        status = uct_iface_set_am_handler(hi->iface, HELLO_AM_ID_BCOPY,
                                          hello_am_data_cb, &ctx->recv,
                                          UCT_CB_FLAG_ASYNC);
    }
    if (status == UCS_OK) {
        status = uct_iface_set_am_handler(hi->iface, HELLO_AM_ID_ZCOPY,
                                          hello_am_data_cb, &ctx->recv,
                                          UCT_CB_FLAG_ASYNC);
    }
    if (status != UCS_OK) {
        return hello_fail("uct_iface_set_am_handler", status);
    }
    return 0;
}

/* Picks the connection type and checks the chosen mode and size fit;
 * with -s max, the size becomes the mode's limit */
static int hello_check_caps(hello_ctx_t *ctx, const uct_iface_attr_t *attr)
{
    static const uint64_t mode_flags[] = {
        [HELLO_MODE_SHORT] = UCT_IFACE_FLAG_AM_SHORT,
        [HELLO_MODE_BCOPY] = UCT_IFACE_FLAG_AM_BCOPY,
        [HELLO_MODE_ZCOPY] = UCT_IFACE_FLAG_AM_ZCOPY};
    hello_args_t *args    = &ctx->args;
    const char *mode_name = hello_mode_names[args->mode];
    size_t min            = 0, max;

    if (attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
        ctx->conn_to_ep = 0;
    } else if (attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP) {
        ctx->conn_to_ep = 1;
    } else {
        fprintf(stderr,
                "%s/%s connects neither to an interface nor to an "
                "endpoint; pick another transport (uct_info -d)\n",
                args->tl_name, args->dev_name);
        return -1;
    }

    if (!(attr->cap.flags & mode_flags[args->mode])) {
        fprintf(stderr,
                "%s/%s does not support %s; try another of -i, -b, "
                "-z (uct_info -d -t %s)\n",
                args->tl_name, args->dev_name, mode_name, args->tl_name);
        return -1;
    }

    switch (args->mode) {
    case HELLO_MODE_SHORT:
        max = attr->cap.am.max_short;
        break;
    case HELLO_MODE_BCOPY:
        max = attr->cap.am.max_bcopy;
        break;
    default:
        min = attr->cap.am.min_zcopy;
        max = attr->cap.am.max_zcopy;
        if (attr->cap.am.max_iov < 1) {
            fprintf(stderr, "%s/%s takes no iov entries for am_zcopy\n",
                    args->tl_name, args->dev_name);
            return -1;
        }
        break;
    }

    if (args->size_max) {
        args->size = max;
    }
    if ((args->size < min) || (args->size > max)) {
        fprintf(stderr,
                "message size %zu is outside the %s limits of %s/%s "
                "(%zu..%zu bytes); change -s or the mode\n",
                args->size, mode_name, args->tl_name, args->dev_name, min, max);
        return -1;
    }
    return 0;
}

/* Fills @a hi->addr; with connect-to-ep also creates the endpoint */
static int hello_iface_addr(hello_ctx_t *ctx, hello_iface_t *hi)
{
    hello_addr_t *addr = &hi->addr;
    uct_ep_params_t ep_params;
    ucs_status_t status;

    snprintf(addr->hdr.tl_name, sizeof(addr->hdr.tl_name), "%s",
             ctx->args.tl_name);
    addr->hdr.conn_to_ep     = ctx->conn_to_ep;
    addr->hdr.dev_addr_len   = hi->attr.device_addr_len;
    addr->hdr.iface_addr_len = ctx->conn_to_ep ? 0 : hi->attr.iface_addr_len;
    addr->hdr.ep_addr_len    = ctx->conn_to_ep ? hi->attr.ep_addr_len : 0;
    if (hello_addr_alloc(addr) != 0) {
        return -1;
    }

    status = uct_iface_get_device_address(hi->iface, addr->dev_addr);
    if (status != UCS_OK) {
        return hello_fail("uct_iface_get_device_address", status);
    }

    if (!ctx->conn_to_ep) {
        status = uct_iface_get_address(hi->iface, addr->iface_addr);
        if (status != UCS_OK) {
            return hello_fail("uct_iface_get_address", status);
        }
        return 0;
    }

    /* The endpoint exists before the peer is known; it is connected once
     * the peer's endpoint address arrives */
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    ep_params.iface      = hi->iface;
    status               = uct_ep_create(&ep_params, &hi->ep);
    if (status != UCS_OK) {
        hi->ep = NULL;
        return hello_fail("uct_ep_create", status);
    }

    status = uct_ep_get_address(hi->ep, addr->ep_addr);
    if (status != UCS_OK) {
        return hello_fail("uct_ep_get_address", status);
    }
    return 0;
}

/* Connects @a hi to the interface or endpoint described by @a peer */
static int hello_connect(hello_ctx_t *ctx, hello_iface_t *hi,
                         const hello_addr_t *peer)
{
    uct_ep_params_t ep_params;
    ucs_status_t status;

    if (!uct_iface_is_reachable(hi->iface, peer->dev_addr,
                                ctx->conn_to_ep ? NULL : peer->iface_addr)) {
        fprintf(stderr, "the peer is not reachable over %s/%s\n",
                ctx->args.tl_name, ctx->args.dev_name);
        return -1;
    }

    if (ctx->conn_to_ep) {
        status = uct_ep_connect_to_ep(hi->ep, peer->dev_addr, peer->ep_addr);
        if (status != UCS_OK) {
            return hello_fail("uct_ep_connect_to_ep", status);
        }
        return 0;
    }

    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = hi->iface;
    ep_params.dev_addr   = peer->dev_addr;
    ep_params.iface_addr = peer->iface_addr;
    status               = uct_ep_create(&ep_params, &hi->ep);
    if (status != UCS_OK) {
        hi->ep = NULL;
        return hello_fail("uct_ep_create", status);
    }
    return 0;
}

/* Progresses the worker until @a comp completes */
static ucs_status_t hello_wait(hello_ctx_t *ctx, hello_comp_t *comp)
{
    while (!comp->done) {
        uct_worker_progress(ctx->worker);
    }
    return comp->super.status;
}

static ucs_status_t hello_send_zcopy(hello_ctx_t *ctx, uct_ep_h ep)
{
    uct_mem_h memh = UCT_MEM_HANDLE_NULL;
    hello_comp_t comp;
    ucs_status_t status;
    uct_iov_t iov;

    /* Memory domains that need it get the buffer registered */
    if ((ctx->md_attr.cap.flags & UCT_MD_FLAG_NEED_MEMH) &&
        (ctx->args.size > 0)) {
        status = uct_md_mem_reg(ctx->md, ctx->msg, ctx->args.size,
                                UCT_MD_MEM_ACCESS_LOCAL_READ, &memh);
        if (status != UCS_OK) {
            hello_fail("uct_md_mem_reg", status);
            return status;
        }
    }

    iov.buffer = ctx->msg;
    iov.length = ctx->args.size;
    iov.memh   = memh;
    iov.stride = 0;
    iov.count  = 1;

    hello_comp_init(&comp);
    do {
        status = uct_ep_am_zcopy(ep, HELLO_AM_ID_ZCOPY, NULL, 0, &iov, 1, 0,
                                 &comp.super);
        if (status == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        }
    } while (status == UCS_ERR_NO_RESOURCE);

    /* The buffer belongs to the transport until the completion runs */
    if (status == UCS_INPROGRESS) {
        status = hello_wait(ctx, &comp);
    }

    if (memh != UCT_MEM_HANDLE_NULL) {
        uct_md_mem_dereg(ctx->md, memh);
    }
    return status;
}

/* Sends the message with the chosen mode, then flushes the endpoint */
static int hello_send(hello_ctx_t *ctx, uct_ep_h ep)
{
    hello_comp_t comp;
    ucs_status_t status;
    ssize_t packed;

    switch (ctx->args.mode) {
    case HELLO_MODE_SHORT:
        do {
            status = uct_ep_am_short(ep, HELLO_AM_ID_SHORT, ctx->args.size,
                                     ctx->msg, ctx->args.size);
            if (status == UCS_ERR_NO_RESOURCE) {
                uct_worker_progress(ctx->worker);
            }
        } while (status == UCS_ERR_NO_RESOURCE);
        break;
    case HELLO_MODE_BCOPY:
        do {
            packed =
                uct_ep_am_bcopy(ep, HELLO_AM_ID_BCOPY, hello_pack_cb, ctx, 0);
            if (packed == UCS_ERR_NO_RESOURCE) {
                uct_worker_progress(ctx->worker);
            }
        } while (packed == UCS_ERR_NO_RESOURCE);
        status = (packed < 0) ? (ucs_status_t)packed : UCS_OK;
        break;
    default:
        status = hello_send_zcopy(ctx, ep);
        break;
    }

    if (status != UCS_OK) {
        return hello_fail(hello_mode_names[ctx->args.mode], status);
    }

    /* Flush: the message has left this side when the completion runs */
    hello_comp_init(&comp);
    do {
        status = uct_ep_flush(ep, 0, &comp.super);
        if (status == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(ctx->worker);
        }
    } while (status == UCS_ERR_NO_RESOURCE);
    if (status == UCS_INPROGRESS) {
        status = hello_wait(ctx, &comp);
    }
    if (status != UCS_OK) {
        return hello_fail("uct_ep_flush", status);
    }
    return 0;
}

/* Whether @a sock has data or was closed */
static int hello_sock_readable(int sock)
{
    struct pollfd pfd = {.fd = sock, .events = POLLIN};

    return poll(&pfd, 1, 0) > 0;
}

/*
 * Reads the peer's next signal, progressing the worker until it comes:
 * the peer may need this side to answer before it can go on (the tcp
 * transport, for one, completes a flush when the receiver acknowledges).
 */
static int hello_sock_wait(hello_ctx_t *ctx, char *signal)
{
    while (!hello_sock_readable(ctx->sock)) {
        uct_worker_progress(ctx->worker);
    }
    return hello_sock_recv(ctx->sock, signal, 1);
}

/* The message to send, once hello_check_caps() has settled its size */
static int hello_msg_create(hello_ctx_t *ctx)
{
    ctx->msg = malloc((ctx->args.size > 0) ? ctx->args.size : 1);
    if (ctx->msg == NULL) {
        fprintf(stderr,
                "cannot allocate a message of %zu bytes; give a "
                "smaller -s\n",
                ctx->args.size);
        return -1;
    }
    hello_msg_fill(ctx->msg, ctx->args.size, ctx->args.text);
    return 0;
}

/* ------------------------------------------------------------------------
 * The three roles
 *
 * Neither side may destroy its endpoint or interface while the other
 * still needs it: the client's flush completes only once the server has
 * acknowledged the message. So the client says on the socket when its
 * flush is done, and the server, progressing all the while, answers once
 * it has the message; only then do both tear down, neither progressing
 * any more.
 */

static int hello_run_loopback(hello_ctx_t *ctx)
{
    if ((hello_iface_open(ctx, &ctx->rx) != 0) ||
        (hello_iface_open(ctx, &ctx->tx) != 0) ||
        (hello_check_caps(ctx, &ctx->tx.attr) != 0) ||
        (hello_msg_create(ctx) != 0) ||
        (hello_iface_set_handlers(ctx, &ctx->rx) != 0) ||
        (hello_iface_addr(ctx, &ctx->rx) != 0) ||
        (hello_iface_addr(ctx, &ctx->tx) != 0) ||
        (hello_connect(ctx, &ctx->tx, &ctx->rx.addr) != 0)) {
        return -1;
    }

    if (ctx->conn_to_ep && (hello_connect(ctx, &ctx->rx, &ctx->tx.addr) != 0)) {
        return -1;
    }

    /* One worker drives both sides, so the flush in hello_send() also
     * lets the receiver acknowledge */
    if (hello_send(ctx, ctx->tx.ep) != 0) {
        return -1;
    }

    while (!ctx->recv.received) {
        uct_worker_progress(ctx->worker);
    }
    return 0;
}

static int hello_run_server(hello_ctx_t *ctx)
{
    char signal = HELLO_SIG_READY;
    time_t deadline;

    if ((hello_iface_open(ctx, &ctx->rx) != 0) ||
        (hello_check_caps(ctx, &ctx->rx.attr) != 0) ||
        (hello_iface_set_handlers(ctx, &ctx->rx) != 0) ||
        (hello_iface_addr(ctx, &ctx->rx) != 0)) {
        return -1;
    }

    ctx->sock = hello_sock_accept(ctx->args.port);
    if ((ctx->sock < 0) || (hello_addr_send(ctx->sock, &ctx->rx.addr) != 0) ||
        (hello_addr_recv(ctx->sock, &ctx->rx, &ctx->peer) != 0)) {
        return -1;
    }

    if (ctx->conn_to_ep && (hello_connect(ctx, &ctx->rx, &ctx->peer) != 0)) {
        return -1;
    }

    /* Ready: the client may send now */
    if (hello_sock_send(ctx->sock, &signal, 1) != 0) {
        return -1;
    }

    /* The message arrives, and the client's flush is acknowledged, while
     * this side progresses: it does so until the client's word */
    if (hello_sock_wait(ctx, &signal) != 0) {
        fprintf(stderr, "the client left before its send completed\n");
        return -1;
    }
    if (signal != HELLO_SIG_FLUSHED) {
        fprintf(stderr,
                "the client sent signal 0x%02x instead of 0x%02x "
                "(flushed)\n",
                (unsigned char)signal, HELLO_SIG_FLUSHED);
        return -1;
    }

    /* Completed at this side: delivered, or delivered by the next
     * progress on transports that hand messages over only then */
    deadline = time(NULL) + HELLO_RECV_TIMEOUT;
    while (!ctx->recv.received) {
        if ((uct_worker_progress(ctx->worker) == 0) &&
            (time(NULL) > deadline)) {
            fprintf(stderr,
                    "the client reports its send complete, but no "
                    "message arrived within %d s\n",
                    HELLO_RECV_TIMEOUT);
            return -1;
        }
    }
    if (ctx->recv.extra > 0) {
        fprintf(stderr,
                "the client sent %d more messages than one; "
                "ignored them\n",
                ctx->recv.extra);
        ctx->recv.valid = 0;
    }

    /* Done: both sides may tear down now */
    signal = ctx->recv.valid ? HELLO_SIG_DONE : HELLO_SIG_BAD;
    return hello_sock_send(ctx->sock, &signal, 1);
}

static int hello_run_client(hello_ctx_t *ctx)
{
    char signal;

    if ((hello_iface_open(ctx, &ctx->tx) != 0) ||
        (hello_check_caps(ctx, &ctx->tx.attr) != 0) ||
        (hello_msg_create(ctx) != 0) ||
        (hello_iface_addr(ctx, &ctx->tx) != 0)) {
        return -1;
    }

    ctx->sock = hello_sock_connect(ctx->args.server, ctx->args.port);
    if ((ctx->sock < 0) ||
        (hello_addr_recv(ctx->sock, &ctx->tx, &ctx->peer) != 0) ||
        (hello_addr_send(ctx->sock, &ctx->tx.addr) != 0) ||
        (hello_connect(ctx, &ctx->tx, &ctx->peer) != 0) ||
        (hello_sock_recv(ctx->sock, &signal, 1) != 0)) {
        return -1;
    }
    if (signal != HELLO_SIG_READY) {
        fprintf(stderr,
                "the server sent signal 0x%02x instead of 0x%02x "
                "(ready)\n",
                (unsigned char)signal, HELLO_SIG_READY);
        return -1;
    }

    if (hello_send(ctx, ctx->tx.ep) != 0) {
        return -1;
    }

    printf("sent %zu bytes with %s over %s/%s\n", ctx->args.size,
           hello_mode_names[ctx->args.mode], ctx->args.tl_name,
           ctx->args.dev_name);
    fflush(stdout);

    /* Flushed: tell the server, and wait for its verdict before tearing
     * down. Nothing of ours is in flight any more, so the wait needs no
     * progress; without it, this side does not see the server's own
     * teardown as a failure of the connection either. */
    signal = HELLO_SIG_FLUSHED;
    if ((hello_sock_send(ctx->sock, &signal, 1) != 0) ||
        (hello_sock_recv(ctx->sock, &signal, 1) != 0)) {
        fprintf(stderr, "the server left before confirming the message\n");
        return -1;
    }
    if (signal == HELLO_SIG_BAD) {
        fprintf(stderr, "the server reports that the message did not "
                        "arrive as expected; give both sides the same -m\n");
        return -1;
    } else if (signal != HELLO_SIG_DONE) {
        fprintf(stderr,
                "the server sent signal 0x%02x instead of 0x%02x "
                "(done)\n",
                (unsigned char)signal, HELLO_SIG_DONE);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Setup, teardown, command line
 */

static void hello_iface_close(hello_iface_t *hi)
{
    if (hi->ep != NULL) {
        uct_ep_destroy(hi->ep);
    }
    if (hi->iface != NULL) {
        uct_iface_close(hi->iface);
    }
    hello_addr_free(&hi->addr);
    hi->ep    = NULL;
    hi->iface = NULL;
}

static void hello_cleanup(hello_ctx_t *ctx)
{
    hello_iface_close(&ctx->tx);
    hello_iface_close(&ctx->rx);
    hello_addr_free(&ctx->peer);
    if (ctx->sock >= 0) {
        close(ctx->sock);
    }
    if (ctx->md != NULL) {
        uct_md_close(ctx->md);
    }
    if (ctx->worker != NULL) {
        uct_worker_destroy(ctx->worker);
    }
    if (ctx->async != NULL) {
        ucs_async_context_destroy(ctx->async);
    }
    free(ctx->msg);
}

static int hello_run(hello_ctx_t *ctx)
{
    ucs_status_t status;

    /* Timers and fd events of transports run in this context */
    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &ctx->async);
    if (status != UCS_OK) {
        ctx->async = NULL;
        return hello_fail("ucs_async_context_create", status);
    }

    /* The worker is the progress engine of every interface we open */
    status =
        uct_worker_create(ctx->async, UCS_THREAD_MODE_SINGLE, &ctx->worker);
    if (status != UCS_OK) {
        ctx->worker = NULL;
        return hello_fail("uct_worker_create", status);
    }

    if (hello_md_find(ctx) != 0) {
        return -1;
    }

    if (ctx->args.loopback) {
        return hello_run_loopback(ctx);
    } else if (ctx->args.server == NULL) {
        return hello_run_server(ctx);
    } else {
        return hello_run_client(ctx);
    }
}

static void hello_usage(FILE *stream, const char *prog)
{
    fprintf(stream,
            "Usage: %s -d DEV -t TL [options]\n"
            "Sends one active message from a client to a server.\n"
            "\n"
            "  -d DEV     device to use (uct_info -d lists them)\n"
            "  -t TL      transport to use\n"
            "  -n SERVER  run as client and connect to SERVER (default: "
            "run as server)\n"
            "  -p PORT    port of the address exchange (default %u; 0 on\n"
            "             the server: any free port)\n"
            "  -s SIZE    message size in bytes, or 'max' for the mode's\n"
            "             limit (default: the length of the text)\n"
            "  -m TEXT    text to send, cut or padded with dots to SIZE;\n"
            "             the server expects it (default \"%s\")\n"
            "  -i         send with am_short (default)\n"
            "  -b         send with am_bcopy\n"
            "  -z         send with am_zcopy\n"
            "  -l         loopback: client and server in this process\n"
            "  -w SECS    stay up SECS seconds after the message, iface and\n"
            "             endpoints open (to look at them with uct_vfs)\n"
            "  -h         print this help\n"
            "\n"
            "Example: %s -t self -d memory -l\n",
            prog, HELLO_DEFAULT_PORT, HELLO_TEXT, prog);
}

static int hello_parse_args(int argc, char **argv, hello_args_t *args)
{
    unsigned long value;
    char *end;
    int size_set = 0;
    int c;

    memset(args, 0, sizeof(*args));
    args->port = HELLO_DEFAULT_PORT;
    args->text = HELLO_TEXT;
    args->mode = HELLO_MODE_SHORT;

    while ((c = getopt(argc, argv, "d:t:n:p:s:m:w:ibzlh")) != -1) {
        switch (c) {
        case 'd':
            args->dev_name = optarg;
            break;
        case 't':
            args->tl_name = optarg;
            break;
        case 'n':
            args->server = optarg;
            break;
        case 'p':
            errno = 0;
            value = strtoul(optarg, &end, 10);
            if ((errno != 0) || (*end != '\0') || (optarg[0] == '-') ||
                (value > 65535)) {
                fprintf(stderr,
                        "invalid port '%s'; give 1..65535 (0: "
                        "any free port, server only)\n",
                        optarg);
                return -1;
            }
            args->port = (uint16_t)value;
            break;
        case 's':
            size_set = 1;
            if (!strcmp(optarg, "max")) {
                args->size_max = 1;
                break;
            }
            args->size_max = 0;
            errno          = 0;
            value          = strtoul(optarg, &end, 10);
            if ((errno != 0) || (*end != '\0') || (optarg[0] == '-')) {
                fprintf(stderr,
                        "invalid size '%s'; give a number of "
                        "bytes or 'max'\n",
                        optarg);
                return -1;
            }
            args->size = value;
            break;
        case 'm':
            args->text = optarg;
            break;
        case 'w':
            errno = 0;
            value = strtoul(optarg, &end, 10);
            if ((errno != 0) || (*end != '\0') || (optarg[0] == '-') ||
                (value > 86400)) {
                fprintf(stderr,
                        "invalid linger time '%s'; give 0..86400 "
                        "seconds\n",
                        optarg);
                return -1;
            }
            args->linger = (unsigned)value;
            break;
        case 'i':
            args->mode = HELLO_MODE_SHORT;
            break;
        case 'b':
            args->mode = HELLO_MODE_BCOPY;
            break;
        case 'z':
            args->mode = HELLO_MODE_ZCOPY;
            break;
        case 'l':
            args->loopback = 1;
            break;
        case 'h':
            hello_usage(stdout, argv[0]);
            exit(0);
        default:
            hello_usage(stderr, argv[0]);
            return -1;
        }
    }

    if (optind < argc) {
        fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
        hello_usage(stderr, argv[0]);
        return -1;
    }
    if ((args->dev_name == NULL) || (args->tl_name == NULL)) {
        fprintf(stderr, "both -d DEV and -t TL are required; run uct_info "
                        "-d to list them\n");
        hello_usage(stderr, argv[0]);
        return -1;
    }
    if (args->loopback && (args->server != NULL)) {
        fprintf(stderr, "-l and -n exclude each other: loopback runs both "
                        "sides in this process\n");
        return -1;
    }
    if ((args->server != NULL) && (args->port == 0)) {
        fprintf(stderr, "the client needs the server's port: give -p "
                        "1..65535\n");
        return -1;
    }
    if (!size_set) {
        args->size = strlen(args->text);
    }
    return 0;
}

/* Keeps the worker progressing for @a seconds, sleeping while idle */
static void hello_linger(hello_ctx_t *ctx, unsigned seconds)
{
    struct timespec now, end, idle = {.tv_sec = 0, .tv_nsec = 1000000};

    printf("process %d stays up for %u s\n", (int)getpid(), seconds);
    fflush(stdout);
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += seconds;
    do {
        if (uct_worker_progress(ctx->worker) == 0) {
            nanosleep(&idle, NULL);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec < end.tv_sec) ||
             ((now.tv_sec == end.tv_sec) && (now.tv_nsec < end.tv_nsec)));
}

int main(int argc, char **argv)
{
    hello_ctx_t ctx;
    int ret;

    memset(&ctx, 0, sizeof(ctx));
    ctx.sock = -1;

    if (hello_parse_args(argc, argv, &ctx.args) != 0) {
        return 2;
    }
    ctx.recv.text = ctx.args.text;

    ret = hello_run(&ctx);
    if ((ret == 0) && (ctx.recv.received && !ctx.recv.valid)) {
        fprintf(stderr,
                "the message is not the expected text (-m, cut or "
                "padded with dots): corrupted, or the peer sent another\n");
        ret = -1;
    }
    if ((ret == 0) && (ctx.args.linger > 0)) {
        hello_linger(&ctx, ctx.args.linger);
    }

    hello_cleanup(&ctx);
    return (ret == 0) ? 0 : 1;
}
