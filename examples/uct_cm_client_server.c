/*
 * The shortest correct program that connects by IP address and port with
 * a UCT connection manager. The server listens; the client connects. Each
 * side packs the addresses of its transport endpoint (tcp, rc_verbs, ...)
 * into the private data of the handshake, and connects that endpoint to
 * the peer's with uct_ep_connect_to_ep(). The client then sends one active
 * message, the server answers it, both check what they got, the client
 * disconnects and both see the connection end.
 *
 *   server: uct_cm_client_server -t tcp -d lo
 *   client: uct_cm_client_server -t tcp -d lo -a 127.0.0.1
 *
 * The connection manager's callbacks run from the worker's async context,
 * so they only copy what they are told; the main thread acts on it.
 */
#include <uct/api/uct.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CS_AM_REQUEST  1
#define CS_AM_ANSWER   2
#define CS_PRIV_MAGIC  0x43534550u /* "CSEP" */
#define CS_MAX_PRIV    1024
#define CS_MAX_MESSAGE 256

/* The private data: the sender's transport endpoint and device addresses */
typedef struct {
    uint32_t magic;
    uint16_t dev_addr_len;
    uint16_t ep_addr_len;
    /* then the device address, then the endpoint address */
} cs_priv_hdr_t;

typedef struct {
    /* options */
    const char *tl, *dev, *cm_name, *server, *text;
    uint16_t port;
    double timeout, pause;
    /* resources */
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_cm_h cm;
    uct_listener_h listener;
    uct_md_h md;
    uct_iface_h iface;
    uct_iface_attr_t attr;
    uct_ep_h tl_ep, cm_ep;
    uint8_t local_priv[CS_MAX_PRIV];
    size_t local_priv_len;
    /* what the cm's callbacks saw (async context) */
    volatile int requested, connected, notified, disconnected;
    volatile ucs_status_t status;
    uct_conn_request_h request;
    uint8_t remote_priv[CS_MAX_PRIV];
    volatile size_t remote_priv_len;
    /* what the transport delivered (progress) */
    char message[CS_MAX_MESSAGE + 1];
    volatile size_t message_len;
    volatile int message_id;
} cs_ctx_t;

static double cs_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cs_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "uct_cm_client_server: %s: %s\n", what,
            ucs_status_string(status));
    return -1;
}

/* Progress until *@a flag is set, or the timeout; 0 when set */
static int cs_wait(cs_ctx_t *ctx, volatile int *flag, const char *what)
{
    double deadline = cs_now() + ctx->timeout;

    while (!*flag) {
        if (cs_now() > deadline) {
            fprintf(stderr, "uct_cm_client_server: no %s within %.0f s\n", what,
                    ctx->timeout);
            return -1;
        } else if (ctx->disconnected && (flag != &ctx->disconnected)) {
            fprintf(stderr,
                    "uct_cm_client_server: the peer went away while "
                    "waiting for the %s\n",
                    what);
            return -1;
        }
        uct_worker_progress(ctx->worker);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * The transport: one interface on tl/dev, one endpoint to the peer's
 */

static ucs_status_t cs_am_cb(void *arg, void *data, size_t length,
                             unsigned flags)
{
    cs_ctx_t *ctx = arg;

    if (length > CS_MAX_MESSAGE) {
        length = CS_MAX_MESSAGE; /* checked against the text later */
    }
    memcpy(ctx->message, data, length);
    ctx->message[length] = '\0';
    ctx->message_len     = length;
    return UCS_OK;
}

static ucs_status_t cs_request_cb(void *arg, void *data, size_t length,
                                  unsigned flags)
{
    ((cs_ctx_t *)arg)->message_id = CS_AM_REQUEST;
    return cs_am_cb(arg, data, length, flags);
}

static ucs_status_t cs_answer_cb(void *arg, void *data, size_t length,
                                 unsigned flags)
{
    ((cs_ctx_t *)arg)->message_id = CS_AM_ANSWER;
    return cs_am_cb(arg, data, length, flags);
}

/* Opens the memory domain that has tl/dev, and an interface on it */
static int cs_iface_open(cs_ctx_t *ctx, uct_component_h *components,
                         unsigned num_components)
{
    uct_iface_params_t params = {0};
    uct_component_attr_t cattr;
    uct_tl_resource_desc_t *tls;
    uct_iface_config_t *iface_config;
    uct_md_config_t *md_config;
    unsigned c, m, t, num_tls;
    ucs_status_t status;

    for (c = 0; (c < num_components) && (ctx->md == NULL); ++c) {
        cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &cattr) != UCS_OK) {
            continue;
        }
        cattr.md_resources =
            calloc(cattr.md_resource_count + 1, sizeof(*cattr.md_resources));
        cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        if ((cattr.md_resources == NULL) ||
            (uct_component_query(components[c], &cattr) != UCS_OK)) {
            free(cattr.md_resources);
            continue;
        }
        for (m = 0; (m < cattr.md_resource_count) && (ctx->md == NULL); ++m) {
            if (uct_md_config_read(components[c], NULL, NULL, &md_config) !=
                UCS_OK) {
                continue;
            }
            status = uct_md_open(components[c], cattr.md_resources[m].md_name,
                                 md_config, &ctx->md);
            uct_config_release(md_config);
            if ((status != UCS_OK) ||
                (uct_md_query_tl_resources(ctx->md, &tls, &num_tls) !=
                 UCS_OK)) {
                ctx->md = NULL;
                continue;
            }
            for (t = 0; t < num_tls; ++t) {
                if (!strcmp(tls[t].tl_name, ctx->tl) &&
                    !strcmp(tls[t].dev_name, ctx->dev)) {
                    break;
                }
            }
            uct_release_tl_resource_list(tls);
            if (t == num_tls) {
                uct_md_close(ctx->md);
                ctx->md = NULL;
            }
        }
        free(cattr.md_resources);
    }
    if (ctx->md == NULL) {
        fprintf(stderr,
                "uct_cm_client_server: no transport %s on device %s; "
                "uct_info -d lists them\n",
                ctx->tl, ctx->dev);
        return -1;
    }

    status =
        uct_md_iface_config_read(ctx->md, ctx->tl, NULL, NULL, &iface_config);
    if (status != UCS_OK) {
        return cs_fail("reading the transport's configuration", status);
    }
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = ctx->tl;
    params.mode.device.dev_name = ctx->dev;
    status = uct_iface_open(ctx->md, ctx->worker, &params, iface_config,
                            &ctx->iface);
    uct_config_release(iface_config);
    if (status != UCS_OK) {
        return cs_fail("uct_iface_open", status);
    }
    status = uct_iface_query(ctx->iface, &ctx->attr);
    if (status != UCS_OK) {
        return cs_fail("uct_iface_query", status);
    }
    if (!(ctx->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP) ||
        !(ctx->attr.cap.flags & UCT_IFACE_FLAG_AM_BCOPY)) {
        fprintf(stderr,
                "uct_cm_client_server: %s/%s cannot connect "
                "endpoint to endpoint with am_bcopy\n",
                ctx->tl, ctx->dev);
        return -1;
    }
    uct_iface_set_am_handler(ctx->iface, CS_AM_REQUEST, cs_request_cb, ctx, 0);
    uct_iface_set_am_handler(ctx->iface, CS_AM_ANSWER, cs_answer_cb, ctx, 0);
    uct_iface_progress_enable(ctx->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

/* An endpoint waiting for the peer's address, and the private data that
 * carries its own */
static int cs_tl_ep_create(cs_ctx_t *ctx)
{
    cs_priv_hdr_t hdr = {CS_PRIV_MAGIC, (uint16_t)ctx->attr.device_addr_len,
                         (uint16_t)ctx->attr.ep_addr_len};
    uct_ep_params_t params = {0};
    uint8_t *p             = ctx->local_priv + sizeof(hdr);
    ucs_status_t status;

    ctx->local_priv_len = sizeof(hdr) + hdr.dev_addr_len + hdr.ep_addr_len;
    if (ctx->local_priv_len > CS_MAX_PRIV) {
        fprintf(stderr,
                "uct_cm_client_server: %s addresses take %zu bytes, "
                "more than %d\n",
                ctx->tl, ctx->local_priv_len, CS_MAX_PRIV);
        return -1;
    }
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = ctx->iface;
    status            = uct_ep_create(&params, &ctx->tl_ep);
    if (status != UCS_OK) {
        return cs_fail("uct_ep_create", status);
    }
    memcpy(ctx->local_priv, &hdr, sizeof(hdr));
    status = uct_iface_get_device_address(ctx->iface, (uct_device_addr_t *)p);
    if (status == UCS_OK) {
        status = uct_ep_get_address(ctx->tl_ep,
                                    (uct_ep_addr_t *)(p + hdr.dev_addr_len));
    }
    return (status == UCS_OK) ? 0 : cs_fail("the endpoint's address", status);
}

/* Connects the transport endpoint to the one the peer's private data
 * names, after checking its lengths against ours */
static int cs_tl_ep_connect(cs_ctx_t *ctx)
{
    const uint8_t *p = ctx->remote_priv + sizeof(cs_priv_hdr_t);
    cs_priv_hdr_t hdr;
    ucs_status_t status;

    if (ctx->remote_priv_len < sizeof(hdr)) {
        fprintf(stderr,
                "uct_cm_client_server: the peer sent %zu bytes of "
                "private data, too few\n",
                (size_t)ctx->remote_priv_len);
        return -1;
    }
    memcpy(&hdr, ctx->remote_priv, sizeof(hdr));
    if ((hdr.magic != CS_PRIV_MAGIC) ||
        (hdr.dev_addr_len != ctx->attr.device_addr_len) ||
        (hdr.ep_addr_len != ctx->attr.ep_addr_len) ||
        (ctx->remote_priv_len <
         sizeof(hdr) + hdr.dev_addr_len + hdr.ep_addr_len)) {
        fprintf(stderr,
                "uct_cm_client_server: the peer's private data is "
                "not a %s endpoint address (is it running the same "
                "transport?)\n",
                ctx->tl);
        return -1;
    }
    status =
        uct_ep_connect_to_ep(ctx->tl_ep, (const uct_device_addr_t *)p,
                             (const uct_ep_addr_t *)(p + hdr.dev_addr_len));
    return (status == UCS_OK) ? 0 : cs_fail("uct_ep_connect_to_ep", status);
}

static size_t cs_pack_text(void *dest, void *arg)
{
    size_t length = strlen(arg);

    memcpy(dest, arg, length);
    return length;
}

/* Sends @a text with active message @a id, waiting for send resources */
static int cs_send(cs_ctx_t *ctx, uint8_t id, const char *text)
{
    double deadline = cs_now() + ctx->timeout;
    ssize_t ret;

    for (;;) {
        ret = uct_ep_am_bcopy(ctx->tl_ep, id, cs_pack_text, (void *)text, 0);
        if (ret >= 0) {
            break;
        } else if ((ret != UCS_ERR_NO_RESOURCE) || (cs_now() > deadline)) {
            return cs_fail("uct_ep_am_bcopy", (ucs_status_t)ret);
        }
        uct_worker_progress(ctx->worker);
    }
    while (uct_ep_flush(ctx->tl_ep, 0, NULL) == UCS_INPROGRESS) {
        uct_worker_progress(ctx->worker);
    }
    return 0;
}

/* Waits for active message @a id and, unless @a text is NULL, checks that
 * it says @a text */
static int cs_receive(cs_ctx_t *ctx, int id, const char *text)
{
    volatile int got = 0;
    double deadline  = cs_now() + ctx->timeout;

    while (!got) {
        if (cs_now() > deadline) {
            fprintf(stderr,
                    "uct_cm_client_server: no message within %.0f "
                    "s\n",
                    ctx->timeout);
            return -1;
        } else if (ctx->disconnected) {
            fprintf(stderr, "uct_cm_client_server: the peer went away before "
                            "its message\n");
            return -1;
        }
        uct_worker_progress(ctx->worker);
        got = (ctx->message_id == id);
    }
    if ((text != NULL) &&
        ((ctx->message_len != strlen(text)) || strcmp(ctx->message, text))) {
        fprintf(stderr,
                "uct_cm_client_server: received '%s', expected "
                "'%s'\n",
                ctx->message, text);
        return -1;
    }
    printf("received '%s'\n", ctx->message);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------------
 * The connection manager's callbacks (async context)
 */

static void cs_copy_remote(cs_ctx_t *ctx, const uct_cm_remote_data_t *remote)
{
    size_t length = remote->conn_priv_data_length;

    if (length > CS_MAX_PRIV) {
        length = 0; /* refused later as too short */
    }
    memcpy(ctx->remote_priv, remote->conn_priv_data, length);
    ctx->remote_priv_len = length;
}

static ssize_t cs_pack_priv(void *arg,
                            const uct_cm_ep_priv_data_pack_args_t *args,
                            void *priv_data)
{
    cs_ctx_t *ctx = arg;

    memcpy(priv_data, ctx->local_priv, ctx->local_priv_len);
    return (ssize_t)ctx->local_priv_len;
}

static void cs_conn_request(uct_listener_h listener, void *arg,
                            const uct_cm_listener_conn_request_args_t *args)
{
    cs_ctx_t *ctx = arg;

    if (ctx->requested) { /* one client per run */
        uct_listener_reject(listener, args->conn_request);
        return;
    }
    cs_copy_remote(ctx, args->remote_data);
    ctx->request   = args->conn_request;
    ctx->requested = 1;
}

static void cs_client_connected(uct_ep_h ep, void *arg,
                                const uct_cm_ep_client_connect_args_t *args)
{
    cs_ctx_t *ctx = arg;

    if (args->status == UCS_OK) {
        cs_copy_remote(ctx, args->remote_data);
    }
    ctx->status    = args->status;
    ctx->connected = 1;
}

static void cs_server_notified(uct_ep_h ep, void *arg,
                               const uct_cm_ep_server_conn_notify_args_t *args)
{
    cs_ctx_t *ctx = arg;

    ctx->status   = args->status;
    ctx->notified = 1;
}

static void cs_disconnected(uct_ep_h ep, void *arg)
{
    ((cs_ctx_t *)arg)->disconnected = 1;
}

/* ------------------------------------------------------------------------
 * Server and client
 */

static int cs_run_server(cs_ctx_t *ctx)
{
    uct_listener_params_t lparams = {0};
    uct_ep_params_t params        = {0};
    uct_listener_attr_t lattr;
    struct sockaddr_in sin = {0};
    char answer[CS_MAX_MESSAGE + 32];
    ucs_status_t status;

    sin.sin_family      = AF_INET;
    sin.sin_port        = htons(ctx->port);
    sin.sin_addr.s_addr = htonl(INADDR_ANY);
    lparams.field_mask  = UCT_LISTENER_PARAM_FIELD_CONN_REQUEST_CB |
                         UCT_LISTENER_PARAM_FIELD_USER_DATA;
    lparams.conn_request_cb = cs_conn_request;
    lparams.user_data       = ctx;
    status = uct_listener_create(ctx->cm, (struct sockaddr *)&sin, sizeof(sin),
                                 &lparams, &ctx->listener);
    if (status != UCS_OK) {
        return cs_fail("uct_listener_create", status);
    }
    lattr.field_mask = UCT_LISTENER_ATTR_FIELD_SOCKADDR;
    if (uct_listener_query(ctx->listener, &lattr) == UCS_OK) {
        printf("listening on port %u\n",
               ntohs(((struct sockaddr_in *)&lattr.sockaddr)->sin_port));
        fflush(stdout);
    }

    ctx->timeout *= 6; /* the client may start later */
    if (cs_wait(ctx, &ctx->requested, "connection request") != 0) {
        return -1;
    }
    ctx->timeout /= 6;
    if (cs_tl_ep_connect(ctx) != 0) {
        uct_listener_reject(ctx->listener, ctx->request);
        return -1;
    }
    params.field_mask =
        UCT_EP_PARAM_FIELD_CM | UCT_EP_PARAM_FIELD_CONN_REQUEST |
        UCT_EP_PARAM_FIELD_USER_DATA | UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB |
        UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER |
        UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB;
    params.cm                 = ctx->cm;
    params.conn_request       = ctx->request;
    params.user_data          = ctx;
    params.sockaddr_pack_cb   = cs_pack_priv;
    params.sockaddr_cb_server = cs_server_notified;
    params.disconnect_cb      = cs_disconnected;
    status                    = uct_ep_create(&params, &ctx->cm_ep);
    if (status != UCS_OK) {
        return cs_fail("uct_ep_create from the request", status);
    }
    if (cs_wait(ctx, &ctx->notified, "confirmation from the client") != 0) {
        return -1;
    } else if (ctx->status != UCS_OK) {
        return cs_fail("the client's confirmation", ctx->status);
    }
    printf("connected to the client\n");

    if (cs_receive(ctx, CS_AM_REQUEST, NULL) != 0) {
        return -1;
    }
    snprintf(answer, sizeof(answer), "server got: %s", ctx->message);
    if (cs_send(ctx, CS_AM_ANSWER, answer) != 0) {
        return -1;
    }
    if (cs_wait(ctx, &ctx->disconnected, "disconnect from the client") != 0) {
        return -1;
    }
    printf("the client disconnected\n");
    return 0;
}

static int cs_run_client(cs_ctx_t *ctx)
{
    uct_ep_params_t params = {0};
    struct sockaddr_in sin = {0};
    ucs_sock_addr_t saddr  = {(struct sockaddr *)&sin, sizeof(sin)};
    char answer[CS_MAX_MESSAGE + 32];
    ucs_status_t status;
    double deadline;

    sin.sin_family = AF_INET;
    sin.sin_port   = htons(ctx->port);
    if (inet_pton(AF_INET, ctx->server, &sin.sin_addr) != 1) {
        fprintf(stderr,
                "uct_cm_client_server: '%s' is not an IPv4 "
                "address\n",
                ctx->server);
        return -1;
    }
    params.field_mask = UCT_EP_PARAM_FIELD_CM | UCT_EP_PARAM_FIELD_SOCKADDR |
                        UCT_EP_PARAM_FIELD_USER_DATA |
                        UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB |
                        UCT_EP_PARAM_FIELD_SOCKADDR_CONNECT_CB_CLIENT |
                        UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB;
    params.cm                 = ctx->cm;
    params.sockaddr           = &saddr;
    params.user_data          = ctx;
    params.sockaddr_pack_cb   = cs_pack_priv;
    params.sockaddr_cb_client = cs_client_connected;
    params.disconnect_cb      = cs_disconnected;
    status                    = uct_ep_create(&params, &ctx->cm_ep);
    if (status != UCS_OK) {
        return cs_fail("uct_ep_create to the server", status);
    }
    if (cs_wait(ctx, &ctx->connected, "answer from the server") != 0) {
        return -1;
    } else if (ctx->status != UCS_OK) {
        return cs_fail("connecting to the server", ctx->status);
    }
    if (cs_tl_ep_connect(ctx) != 0) {
        return -1;
    }
    status = uct_cm_client_ep_conn_notify(ctx->cm_ep);
    if (status != UCS_OK) {
        return cs_fail("uct_cm_client_ep_conn_notify", status);
    }
    printf("connected to the server\n");
    fflush(stdout);
    if (ctx->pause > 0) { /* progressing, so a peer's death is seen */
        deadline = cs_now() + ctx->pause;
        while ((cs_now() < deadline) && !ctx->disconnected) {
            uct_worker_progress(ctx->worker);
        }
    }

    if (cs_send(ctx, CS_AM_REQUEST, ctx->text) != 0) {
        return -1;
    }
    snprintf(answer, sizeof(answer), "server got: %s", ctx->text);
    if (cs_receive(ctx, CS_AM_ANSWER, answer) != 0) {
        return -1;
    }
    status = uct_ep_disconnect(ctx->cm_ep, 0);
    if (status != UCS_OK) {
        return cs_fail("uct_ep_disconnect", status);
    }
    if (cs_wait(ctx, &ctx->disconnected, "end of the connection") != 0) {
        return -1;
    }
    printf("disconnected\n");
    return 0;
}

/* ------------------------------------------------------------------------
 * Setup and teardown
 */

static int cs_open(cs_ctx_t *ctx)
{
    uct_component_h *components;
    uct_component_attr_t cattr;
    uct_cm_config_t *config;
    unsigned i, count;
    ucs_status_t status;
    int ret = -1;

    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &ctx->async);
    if (status == UCS_OK) {
        status =
            uct_worker_create(ctx->async, UCS_THREAD_MODE_SINGLE, &ctx->worker);
    }
    if (status == UCS_OK) {
        status = uct_query_components(&components, &count);
    }
    if (status != UCS_OK) {
        return cs_fail("creating the worker", status);
    }
    for (i = 0; i < count; ++i) {
        cattr.field_mask =
            UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_FLAGS;
        if ((uct_component_query(components[i], &cattr) != UCS_OK) ||
            strcmp(cattr.name, ctx->cm_name)) {
            continue;
        }
        if (!(cattr.flags & UCT_COMPONENT_FLAG_CM)) {
            fprintf(stderr,
                    "uct_cm_client_server: component %s has no "
                    "connection manager\n",
                    ctx->cm_name);
            goto out;
        }
        status = uct_cm_config_read(components[i], NULL, NULL, &config);
        if (status == UCS_OK) {
            status = uct_cm_open(components[i], ctx->worker, config, &ctx->cm);
            uct_config_release(config);
        }
        if (status != UCS_OK) {
            cs_fail("opening the connection manager", status);
            goto out;
        }
        break;
    }
    if (ctx->cm == NULL) {
        fprintf(stderr,
                "uct_cm_client_server: no component named %s; "
                "uct_info -d lists the connection managers\n",
                ctx->cm_name);
        goto out;
    }
    if ((cs_iface_open(ctx, components, count) == 0) &&
        (cs_tl_ep_create(ctx) == 0)) {
        ret = 0;
    }
out:
    uct_release_component_list(components);
    return ret;
}

static void cs_close(cs_ctx_t *ctx)
{
    if (ctx->cm_ep != NULL) {
        uct_ep_destroy(ctx->cm_ep);
    }
    if (ctx->listener != NULL) {
        uct_listener_destroy(ctx->listener);
    }
    if (ctx->tl_ep != NULL) {
        uct_ep_destroy(ctx->tl_ep);
    }
    if (ctx->iface != NULL) {
        uct_iface_close(ctx->iface);
    }
    if (ctx->md != NULL) {
        uct_md_close(ctx->md);
    }
    if (ctx->cm != NULL) {
        uct_cm_close(ctx->cm);
    }
    if (ctx->worker != NULL) {
        uct_worker_destroy(ctx->worker);
    }
    if (ctx->async != NULL) {
        ucs_async_context_destroy(ctx->async);
    }
}

static void cs_usage(void)
{
    printf(
        "usage: uct_cm_client_server [-t TL] [-d DEV] [-c CM] [-p PORT] "
        "[-a SERVER] [-m TEXT] [-T SECONDS] [-W SECONDS]\n"
        "  -t TL       transport of the data (default tcp)\n"
        "  -d DEV      its device (default lo)\n"
        "  -c CM       component whose connection manager connects "
        "(default tcp)\n"
        "  -p PORT     the server's port (default 13337; 0 lets the "
        "server take a free one, which it prints)\n"
        "  -a SERVER   run as a client of the server at this IPv4 "
        "address\n"
        "  -m TEXT     the message the client sends (default \"hello\"); the "
        "server answers \"server got: TEXT\"\n"
        "  -T SECONDS  limit of every wait (default 10)\n"
        "  -W SECONDS  client: pause this long after connecting, before "
        "the message (to try a peer's death)\n"
        "  -h          this help\n");
}

int main(int argc, char **argv)
{
    cs_ctx_t ctx = {.tl      = "tcp",
                    .dev     = "lo",
                    .cm_name = "tcp",
                    .text    = "hello",
                    .port    = 13337,
                    .timeout = 10};
    char *end;
    int c, ret;

    while ((c = getopt(argc, argv, "t:d:c:p:a:m:T:W:h")) != -1) {
        switch (c) {
        case 't':
            ctx.tl = optarg;
            break;
        case 'd':
            ctx.dev = optarg;
            break;
        case 'c':
            ctx.cm_name = optarg;
            break;
        case 'a':
            ctx.server = optarg;
            break;
        case 'm':
            ctx.text = optarg;
            break;
        case 'p':
            ctx.port = (uint16_t)strtoul(optarg, &end, 10);
            if ((*end != '\0') || (strtoul(optarg, NULL, 10) > 65535)) {
                fprintf(stderr, "uct_cm_client_server: bad port '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'T':
            ctx.timeout = strtod(optarg, &end);
            if ((*end != '\0') || !(ctx.timeout > 0)) {
                fprintf(stderr, "uct_cm_client_server: bad time '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'W':
            ctx.pause = strtod(optarg, &end);
            if ((*end != '\0') || !(ctx.pause >= 0)) {
                fprintf(stderr, "uct_cm_client_server: bad time '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'h':
            cs_usage();
            return 0;
        default:
            cs_usage();
            return 2;
        }
    }
    if (strlen(ctx.text) > CS_MAX_MESSAGE - 16) {
        fprintf(stderr,
                "uct_cm_client_server: the message is longer than "
                "%d bytes\n",
                CS_MAX_MESSAGE - 16);
        return 2;
    }

    ret = cs_open(&ctx);
    if (ret == 0) {
        ret = (ctx.server != NULL) ? cs_run_client(&ctx) : cs_run_server(&ctx);
    }
    cs_close(&ctx);
    if (ret == 0) {
        printf("TEST SUCCESS\n");
    }
    return (ret == 0) ? 0 : 1;
}
