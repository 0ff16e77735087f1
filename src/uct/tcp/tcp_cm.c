/*
 * The tcp connection manager. One TCP connection per cm endpoint carries
 * the handshake: the client sends REQUEST with its private data, the
 * server answers ACCEPT with its own (or REJECT), the client confirms with
 * NOTIFY, and either side ends with DISCONNECT or by closing. Every step
 * has a deadline (UCX_TCP_CM_TIMEOUT), connections accepted but not yet
 * taken by the user are bounded (UCX_TCP_CM_MAX_PENDING), and everything a
 * peer sends is checked before a callback sees it. Handlers run from the
 * worker's async context under its lock; the user's calls take the same
 * lock.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_cm.h"

#include <uct/base/uct_worker.h>
#include <ucs/async/async.h>
#include <ucs/config/parser.h>
#include <ucs/debug/log.h>
#include <ucs/debug/log_limit.h>
#include <ucs/sys/sock.h>
#include <ucs/sys/string.h>
#include <ucs/time/time.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

ucs_config_field_t uct_tcp_cm_config_table[] = {
    {"PRIV_DATA_LEN", "2048",
     "Most private data a tcp connection-manager handshake carries each "
     "way (uct_cm_attr_t::max_conn_priv), at most 64k.",
     ucs_offsetof(uct_tcp_cm_config_t, priv_data_len),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"TIMEOUT", "10s",
     "Deadline of each handshake step of the tcp connection manager: "
     "connecting, waiting for the server's answer, for a client's request "
     "and for its confirmation. A peer that misses it is dropped and the "
     "local side's callback gets UCS_ERR_ENDPOINT_TIMEOUT.",
     ucs_offsetof(uct_tcp_cm_config_t, timeout), UCS_CONFIG_TYPE_TIME},

    {"MAX_PENDING", "1024",
     "Most connections a listener holds before the user took them (still "
     "sending their request, or reported and not yet accepted or rejected); "
     "more are closed at once.",
     ucs_offsetof(uct_tcp_cm_config_t, max_pending), UCS_CONFIG_TYPE_UINT},

    {NULL}};

/* States of a connection */
typedef enum {
    UCT_TCP_CM_CONNECTING,   /* client: connect() in progress */
    UCT_TCP_CM_WAIT_ANSWER,  /* client: request sent (or sending) */
    UCT_TCP_CM_WAIT_USER_C,  /* client: accepted, user not notified yet */
    UCT_TCP_CM_RECV_REQUEST, /* server: reading the client's request */
    UCT_TCP_CM_WAIT_USER_S,  /* server: reported, not taken yet */
    UCT_TCP_CM_WAIT_NOTIFY,  /* server: accepted, waiting for NOTIFY */
    UCT_TCP_CM_CONNECTED,    /* both: the handshake is done */
    UCT_TCP_CM_CLOSED        /* both: ended; only destroy remains */
} uct_tcp_cm_state_t;

enum {
    UCT_TCP_CM_F_SERVER     = UCS_BIT(0), /* a server side connection */
    UCT_TCP_CM_F_EP         = UCS_BIT(1), /* the user holds it as an ep */
    UCT_TCP_CM_F_DISC_SENT  = UCS_BIT(2), /* uct_ep_disconnect() was called */
    UCT_TCP_CM_F_DISC_CB    = UCS_BIT(3), /* disconnect_cb ran */
    UCT_TCP_CM_F_PEER_GONE  = UCS_BIT(4), /* the peer closed or failed */
    UCT_TCP_CM_F_IN_CB      = UCS_BIT(5), /* a user callback is running */
    UCT_TCP_CM_F_DESTROYED  = UCS_BIT(6), /* destroyed from its callback */
    UCT_TCP_CM_F_IN_HANDLER = UCS_BIT(7)  /* registered with the async */
};

/* Causes of peer-triggered log lines, each limited on its own */
enum {
    UCT_TCP_CM_LOG_BAD_MSG,  /* a message that failed its checks */
    UCT_TCP_CM_LOG_DEADLINE, /* a handshake step that timed out */
    UCT_TCP_CM_LOG_PENDING,  /* a listener over its bound, or out of fds */
    UCT_TCP_CM_LOG_LAST
};

typedef struct uct_tcp_cm uct_tcp_cm_t;
typedef struct uct_tcp_listener uct_tcp_listener_t;

/* One TCP connection: a client ep, or a server request that becomes an ep */
typedef struct uct_tcp_cm_conn {
    uct_ep_t super; /* iface: the cm's table */
    uct_tcp_cm_t *cm;
    uct_tcp_listener_t *listener; /* server: until taken */
    int fd;
    uct_tcp_cm_state_t state;
    unsigned flags;
    ucs_time_t deadline;      /* 0: none */
    ucs_status_t fail_status; /* reported at the deadline, if not UCS_OK */
    ucs_list_link_t list;     /* in the cm's list of connections */
    /* the user's */
    void *user_data;
    uct_cm_ep_priv_data_pack_callback_t pack_cb;
    const void *priv_data; /* private_data given to uct_ep_create() */
    size_t priv_data_len;
    uct_cm_ep_client_connect_callback_t client_cb;
    uct_cm_ep_server_conn_notify_callback_t server_cb;
    uct_ep_disconnect_cb_t disconnect_cb;
    /* receive: a header, then its payload */
    uct_tcp_cm_hdr_t rx_hdr;
    size_t rx_offset; /* bytes of header + payload received */
    unsigned rx_type;
    size_t rx_length; /* payload length, once the header is in */
    void *rx_data;    /* payload buffer, rx_length bytes */
    /* send: one message at a time */
    void *tx_buf;
    size_t tx_length, tx_offset;
    struct sockaddr_storage peer_addr;
    char dev_name[UCT_DEVICE_NAME_MAX];
} uct_tcp_cm_conn_t;

struct uct_tcp_listener {
    uct_listener_t super;
    int fd;
    uct_cm_listener_conn_request_callback_t conn_request_cb;
    void *user_data;
    unsigned pending; /* connections not yet taken */
    int paused;       /* out of fds: not watched until the next tick */
    ucs_list_link_t list;
};

struct uct_tcp_cm {
    uct_cm_t super;
    ucs_async_context_t *async;
    size_t priv_data_len;
    ucs_time_t timeout;
    unsigned max_pending;
    int timer_id;
    uct_worker_cb_id_t progress_id; /* runs the deferred handlers */
    ucs_list_link_t conns;
    ucs_list_link_t listeners;
    ucs_log_limit_t log_limit[UCT_TCP_CM_LOG_LAST]; /* per cause */
};

/* ------------------------------------------------------------------------
 * Wire format
 */

ucs_status_t uct_tcp_cm_hdr_check(const uct_tcp_cm_hdr_t *hdr, unsigned types,
                                  size_t max_length, unsigned *type_p,
                                  size_t *length_p)
{
    unsigned type = hdr->type;
    size_t length = ntohl(hdr->length);

    if ((ntohl(hdr->magic) != UCT_TCP_CM_MAGIC) ||
        (hdr->version != UCT_TCP_CM_VERSION) || (hdr->reserved != 0) ||
        (type == 0) || (type >= UCT_TCP_CM_MSG_LAST) ||
        !(types & UCS_BIT(type))) {
        return UCS_ERR_INVALID_PARAM;
    }
    if ((type != UCT_TCP_CM_MSG_REQUEST) && (type != UCT_TCP_CM_MSG_ACCEPT)) {
        max_length = 0; /* the others carry nothing */
    }
    if (length > max_length) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    *type_p   = type;
    *length_p = length;
    return UCS_OK;
}

void uct_tcp_cm_hdr_pack(uct_tcp_cm_hdr_t *hdr, unsigned type, size_t length)
{
    hdr->magic    = htonl(UCT_TCP_CM_MAGIC);
    hdr->version  = UCT_TCP_CM_VERSION;
    hdr->type     = (uint8_t)type;
    hdr->reserved = 0;
    hdr->length   = htonl((uint32_t)length);
}

static const char *uct_tcp_cm_peer_str(const uct_tcp_cm_conn_t *conn, char *buf,
                                       size_t max)
{
    const struct sockaddr *sa   = (const struct sockaddr *)&conn->peer_addr;
    char host[INET6_ADDRSTRLEN] = "?";
    uint16_t port               = 0;

    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host,
                  sizeof(host));
    } else if (sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host,
                  sizeof(host));
    }
    (void)ucs_sockaddr_get_port(sa, &port);
    snprintf(buf, max, "%s:%u", host, (unsigned)port);
    return buf;
}

/* Whether two socket addresses have the same IP (ports aside) */
static int uct_tcp_cm_same_ip(const struct sockaddr *a,
                              const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family) {
        return 0;
    } else if (a->sa_family == AF_INET) {
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    } else if (a->sa_family == AF_INET6) {
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)b)->sin6_addr,
                       sizeof(struct in6_addr));
    }
    return 0;
}

/* The network interface that holds the local address of @a fd */
static void uct_tcp_cm_local_dev(int fd, char *name, size_t max)
{
    struct sockaddr_storage local;
    struct ifaddrs *ifa_list, *ifa;
    socklen_t len = sizeof(local);

    ucs_strncpy_zero(name, "unknown", max);
    if ((getsockname(fd, (struct sockaddr *)&local, &len) != 0) ||
        (getifaddrs(&ifa_list) != 0)) {
        return;
    }
    for (ifa = ifa_list; ifa != NULL; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr != NULL) &&
            uct_tcp_cm_same_ip(ifa->ifa_addr, (struct sockaddr *)&local)) {
            ucs_strncpy_zero(name, ifa->ifa_name, max);
            break;
        }
    }
    freeifaddrs(ifa_list);
}

/* ------------------------------------------------------------------------
 * Connections
 */

static uct_tcp_cm_t *uct_tcp_cm(uct_cm_h cm)
{
    return (uct_tcp_cm_t *)cm;
}

static void uct_tcp_cm_conn_set_events(uct_tcp_cm_conn_t *conn,
                                       ucs_event_set_types_t events)
{
    if (conn->flags & UCT_TCP_CM_F_IN_HANDLER) {
        (void)ucs_async_modify_handler(conn->fd, events);
    }
}

/* Stop watching the socket; the lock is held */
static void uct_tcp_cm_conn_unwatch(uct_tcp_cm_conn_t *conn)
{
    if (conn->flags & UCT_TCP_CM_F_IN_HANDLER) {
        ucs_async_remove_handler(conn->fd, 0);
        conn->flags &= ~UCT_TCP_CM_F_IN_HANDLER;
    }
}

static void uct_tcp_cm_conn_free(uct_tcp_cm_conn_t *conn)
{
    uct_tcp_cm_conn_unwatch(conn);
    if (conn->fd >= 0) {
        close(conn->fd);
    }
    if ((conn->listener != NULL) && (conn->listener->pending > 0)) {
        --conn->listener->pending;
    }
    ucs_list_del(&conn->list);
    free(conn->rx_data);
    free(conn->tx_buf);
    free(conn);
}

/* The connection ended: no more events, no deadline */
static void uct_tcp_cm_conn_close(uct_tcp_cm_conn_t *conn)
{
    uct_tcp_cm_conn_unwatch(conn);
    conn->state    = UCT_TCP_CM_CLOSED;
    conn->deadline = 0;
}

/* Around a user callback on @a conn: an ep destroyed in it is freed after
 * it; cb_end returns 0 then */
static void uct_tcp_cm_conn_cb_begin(uct_tcp_cm_conn_t *conn)
{
    conn->flags |= UCT_TCP_CM_F_IN_CB;
}

static int uct_tcp_cm_conn_cb_end(uct_tcp_cm_conn_t *conn)
{
    conn->flags &= ~UCT_TCP_CM_F_IN_CB;
    if (conn->flags & UCT_TCP_CM_F_DESTROYED) {
        uct_tcp_cm_conn_free(conn);
        return 0;
    }
    return 1;
}

/* The handshake failed on @a conn: tell the side's callback once */
static void uct_tcp_cm_conn_fail(uct_tcp_cm_conn_t *conn, ucs_status_t status)
{
    uct_cm_ep_client_connect_args_t cargs;
    uct_cm_ep_server_conn_notify_args_t sargs;
    uct_tcp_cm_state_t state = conn->state;

    uct_tcp_cm_conn_close(conn);
    conn->flags |= UCT_TCP_CM_F_PEER_GONE;
    switch (state) {
    case UCT_TCP_CM_CONNECTING:
    case UCT_TCP_CM_WAIT_ANSWER:
        cargs.field_mask = UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_REMOTE_DATA |
                           UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_STATUS;
        cargs.remote_data = NULL;
        cargs.status      = status;
        uct_tcp_cm_conn_cb_begin(conn);
        conn->client_cb(&conn->super, conn->user_data, &cargs);
        uct_tcp_cm_conn_cb_end(conn);
        break;
    case UCT_TCP_CM_WAIT_NOTIFY:
        sargs.field_mask = UCT_CM_EP_SERVER_CONN_NOTIFY_ARGS_FIELD_STATUS;
        sargs.status     = status;
        uct_tcp_cm_conn_cb_begin(conn);
        conn->server_cb(&conn->super, conn->user_data, &sargs);
        uct_tcp_cm_conn_cb_end(conn);
        break;
    case UCT_TCP_CM_RECV_REQUEST:
        /* nobody saw it: drop it */
        uct_tcp_cm_conn_free(conn);
        break;
    case UCT_TCP_CM_WAIT_USER_S:
        /* reported: the user's uct_ep_create() or reject still takes it,
         * and an ep created from it reports the failure */
        conn->state = UCT_TCP_CM_WAIT_USER_S;
        break;
    case UCT_TCP_CM_WAIT_USER_C:
    case UCT_TCP_CM_CONNECTED:
        if ((conn->flags & UCT_TCP_CM_F_EP) &&
            !(conn->flags & UCT_TCP_CM_F_DISC_CB)) {
            conn->flags |= UCT_TCP_CM_F_DISC_CB;
            uct_tcp_cm_conn_cb_begin(conn);
            conn->disconnect_cb(&conn->super, conn->user_data);
            uct_tcp_cm_conn_cb_end(conn);
        }
        break;
    case UCT_TCP_CM_CLOSED:
        break;
    }
}

/* Send what is queued; UCS_OK when all of it went */
static ucs_status_t uct_tcp_cm_conn_flush_tx(uct_tcp_cm_conn_t *conn)
{
    size_t length;
    ucs_status_t status;

    while (conn->tx_offset < conn->tx_length) {
        length = conn->tx_length - conn->tx_offset;
        status = ucs_socket_send_nb(
            conn->fd, (char *)conn->tx_buf + conn->tx_offset, &length);
        if (status == UCS_ERR_NO_PROGRESS) {
            uct_tcp_cm_conn_set_events(conn, UCS_EVENT_SET_EVREAD |
                                                 UCS_EVENT_SET_EVWRITE);
            return UCS_INPROGRESS;
        } else if (status != UCS_OK) {
            return status;
        }
        conn->tx_offset += length;
    }
    free(conn->tx_buf);
    conn->tx_buf    = NULL;
    conn->tx_length = 0;
    conn->tx_offset = 0;
    uct_tcp_cm_conn_set_events(conn, UCS_EVENT_SET_EVREAD);
    return UCS_OK;
}

/* Queue one message and start sending it */
static ucs_status_t uct_tcp_cm_conn_send(uct_tcp_cm_conn_t *conn, unsigned type,
                                         const void *data, size_t length)
{
    ucs_status_t status;
    char *buf;

    if (conn->tx_buf != NULL) {
        return UCS_ERR_BUSY; /* one message at a time */
    }
    buf = malloc(sizeof(uct_tcp_cm_hdr_t) + length);
    if (buf == NULL) {
        ucs_error("tcp cm: no memory for a %zu-byte message", length);
        return UCS_ERR_NO_MEMORY;
    }
    uct_tcp_cm_hdr_pack((uct_tcp_cm_hdr_t *)buf, type, length);
    if (length > 0) {
        memcpy(buf + sizeof(uct_tcp_cm_hdr_t), data, length);
    }
    conn->tx_buf    = buf;
    conn->tx_length = sizeof(uct_tcp_cm_hdr_t) + length;
    conn->tx_offset = 0;
    status          = uct_tcp_cm_conn_flush_tx(conn);
    return (status == UCS_INPROGRESS) ? UCS_OK : status;
}

/* The private data of this side: packed by the user's callback or given */
static ucs_status_t uct_tcp_cm_conn_priv_data(uct_tcp_cm_conn_t *conn,
                                              void **data_p, size_t *length_p)
{
    uct_cm_ep_priv_data_pack_args_t args;
    void *data;
    ssize_t ret;

    data = calloc(1, conn->cm->priv_data_len ? conn->cm->priv_data_len : 1);
    if (data == NULL) {
        ucs_error("tcp cm: no memory for %zu bytes of private data",
                  conn->cm->priv_data_len);
        return UCS_ERR_NO_MEMORY;
    }
    if (conn->pack_cb != NULL) {
        args.field_mask = UCT_CM_EP_PRIV_DATA_PACK_ARGS_FIELD_DEVICE_NAME;
        ucs_strncpy_zero(args.dev_name, conn->dev_name, sizeof(args.dev_name));
        ret = conn->pack_cb(conn->user_data, &args, data);
        if (ret < 0) {
            free(data);
            return (ucs_status_t)ret;
        }
        if ((size_t)ret > conn->cm->priv_data_len) {
            ucs_error("tcp cm: the pack callback returned %zd bytes, more "
                      "than max_conn_priv %zu; pack less or raise "
                      "UCX_TCP_CM_PRIV_DATA_LEN",
                      ret, conn->cm->priv_data_len);
            free(data);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        *length_p = (size_t)ret;
    } else {
        memcpy(data, conn->priv_data, conn->priv_data_len);
        *length_p = conn->priv_data_len;
    }
    *data_p = data;
    return UCS_OK;
}

/* Read what the socket has toward the next message. UCS_OK: a whole
 * message is in (rx_type, rx_length, rx_data); UCS_INPROGRESS: more to
 * come; otherwise the connection failed or the peer sent garbage. */
static ucs_status_t uct_tcp_cm_conn_recv(uct_tcp_cm_conn_t *conn,
                                         unsigned types)
{
    const size_t hdr_size = sizeof(uct_tcp_cm_hdr_t);
    char peer[64];
    ucs_status_t status;
    size_t length;

    for (;;) {
        if (conn->rx_offset < hdr_size) {
            length = hdr_size - conn->rx_offset;
            status = ucs_socket_recv_nb(
                conn->fd, (char *)&conn->rx_hdr + conn->rx_offset, &length);
        } else if (conn->rx_offset < hdr_size + conn->rx_length) {
            length = hdr_size + conn->rx_length - conn->rx_offset;
            status = ucs_socket_recv_nb(
                conn->fd, (char *)conn->rx_data + (conn->rx_offset - hdr_size),
                &length);
        } else {
            return UCS_OK;
        }
        if (status == UCS_ERR_NO_PROGRESS) {
            return UCS_INPROGRESS;
        } else if (status != UCS_OK) {
            return status;
        }
        conn->rx_offset += length;
        if (conn->rx_offset != hdr_size) {
            continue;
        }
        status =
            uct_tcp_cm_hdr_check(&conn->rx_hdr, types, conn->cm->priv_data_len,
                                 &conn->rx_type, &conn->rx_length);
        if (status != UCS_OK) {
            ucs_warn_limited(&conn->cm->log_limit[UCT_TCP_CM_LOG_BAD_MSG],
                             "tcp cm: %s sent a bad handshake message (%s); "
                             "dropping the connection (is the peer an "
                             "openuct tcp cm of the same version?)",
                             uct_tcp_cm_peer_str(conn, peer, sizeof(peer)),
                             ucs_status_string(status));
            return UCS_ERR_INVALID_PARAM;
        }
        if (conn->rx_length > 0) {
            conn->rx_data = malloc(conn->rx_length);
            if (conn->rx_data == NULL) {
                return UCS_ERR_NO_MEMORY;
            }
        }
    }
}

/* Ready for the next message */
static void uct_tcp_cm_conn_rx_reset(uct_tcp_cm_conn_t *conn)
{
    free(conn->rx_data);
    conn->rx_data   = NULL;
    conn->rx_offset = 0;
    conn->rx_length = 0;
}

static void uct_tcp_cm_remote_data(uct_tcp_cm_conn_t *conn,
                                   uct_cm_remote_data_t *remote)
{
    remote->field_mask = UCT_CM_REMOTE_DATA_FIELD_CONN_PRIV_DATA |
                         UCT_CM_REMOTE_DATA_FIELD_CONN_PRIV_DATA_LENGTH;
    remote->dev_addr              = NULL;
    remote->dev_addr_length       = 0;
    remote->conn_priv_data        = conn->rx_data;
    remote->conn_priv_data_length = conn->rx_length;
}

/* Client: connect() finished; send the request */
static void uct_tcp_cm_client_connected(uct_tcp_cm_conn_t *conn)
{
    ucs_status_t status = ucs_socket_connect_nb_get_status(conn->fd);
    size_t length;
    void *data;

    if (status == UCS_INPROGRESS) {
        return;
    } else if (status != UCS_OK) {
        uct_tcp_cm_conn_fail(conn, status);
        return;
    }
    uct_tcp_cm_local_dev(conn->fd, conn->dev_name, sizeof(conn->dev_name));
    conn->state = UCT_TCP_CM_WAIT_ANSWER;
    status      = uct_tcp_cm_conn_priv_data(conn, &data, &length);
    if (status == UCS_OK) {
        status =
            uct_tcp_cm_conn_send(conn, UCT_TCP_CM_MSG_REQUEST, data, length);
        free(data);
    }
    if (status != UCS_OK) {
        uct_tcp_cm_conn_fail(conn, status);
    }
}

/* Client: the server's answer */
static void uct_tcp_cm_client_answer(uct_tcp_cm_conn_t *conn)
{
    uct_cm_ep_client_connect_args_t args;
    uct_cm_remote_data_t remote;

    args.field_mask = UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_REMOTE_DATA |
                      UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_STATUS;
    if (conn->rx_type == UCT_TCP_CM_MSG_REJECT) {
        uct_tcp_cm_conn_fail(conn, UCS_ERR_REJECTED);
        return;
    }
    conn->state    = UCT_TCP_CM_WAIT_USER_C;
    conn->deadline = 0;
    uct_tcp_cm_remote_data(conn, &remote);
    args.remote_data = &remote;
    args.status      = UCS_OK;
    uct_tcp_cm_conn_cb_begin(conn);
    conn->client_cb(&conn->super, conn->user_data, &args);
    if (uct_tcp_cm_conn_cb_end(conn)) {
        uct_tcp_cm_conn_rx_reset(conn);
    }
}

/* Server: a whole request arrived; report it to the listener's user */
static void uct_tcp_cm_server_request(uct_tcp_cm_conn_t *conn)
{
    uct_cm_listener_conn_request_args_t args;
    uct_tcp_listener_t *listener = conn->listener;
    uct_cm_remote_data_t remote;

    conn->state    = UCT_TCP_CM_WAIT_USER_S;
    conn->deadline = 0;
    uct_tcp_cm_local_dev(conn->fd, conn->dev_name, sizeof(conn->dev_name));
    uct_tcp_cm_remote_data(conn, &remote);
    args.field_mask = UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_DEV_NAME |
                      UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_CONN_REQUEST |
                      UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_REMOTE_DATA |
                      UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_CLIENT_ADDR;
    ucs_strncpy_zero(args.dev_name, conn->dev_name, sizeof(args.dev_name));
    /* nothing more is read until the user takes it: what the client sends
     * meanwhile waits in the socket, and its close is seen after ACCEPT */
    uct_tcp_cm_conn_set_events(conn, 0);
    args.conn_request           = conn;
    args.remote_data            = &remote;
    args.client_address.addr    = (struct sockaddr *)&conn->peer_addr;
    args.client_address.addrlen = sizeof(conn->peer_addr);
    listener->conn_request_cb(&listener->super, listener->user_data, &args);
}

/* Server: the client's confirmation */
static void uct_tcp_cm_server_notify(uct_tcp_cm_conn_t *conn)
{
    uct_cm_ep_server_conn_notify_args_t args;

    conn->state    = UCT_TCP_CM_CONNECTED;
    conn->deadline = 0;
    uct_tcp_cm_conn_rx_reset(conn);
    args.field_mask = UCT_CM_EP_SERVER_CONN_NOTIFY_ARGS_FIELD_STATUS;
    args.status     = UCS_OK;
    uct_tcp_cm_conn_cb_begin(conn);
    conn->server_cb(&conn->super, conn->user_data, &args);
    uct_tcp_cm_conn_cb_end(conn);
}

/* Which messages may come in @a state */
static unsigned uct_tcp_cm_expected(const uct_tcp_cm_conn_t *conn)
{
    switch (conn->state) {
    case UCT_TCP_CM_WAIT_ANSWER:
        return UCS_BIT(UCT_TCP_CM_MSG_ACCEPT) | UCS_BIT(UCT_TCP_CM_MSG_REJECT);
    case UCT_TCP_CM_RECV_REQUEST:
        return UCS_BIT(UCT_TCP_CM_MSG_REQUEST);
    case UCT_TCP_CM_WAIT_NOTIFY:
        return UCS_BIT(UCT_TCP_CM_MSG_NOTIFY) |
               UCS_BIT(UCT_TCP_CM_MSG_DISCONNECT);
    default:
        return UCS_BIT(UCT_TCP_CM_MSG_DISCONNECT);
    }
}

static void uct_tcp_cm_conn_handler(int fd, ucs_event_set_types_t events,
                                    void *arg)
{
    uct_tcp_cm_conn_t *conn = arg;
    ucs_status_t status;

    if (conn->state == UCT_TCP_CM_CONNECTING) {
        uct_tcp_cm_client_connected(conn);
        return;
    } else if (conn->state == UCT_TCP_CM_WAIT_USER_S) {
        /* not read until taken, so only an error or hang-up (which epoll
         * reports whatever was asked) brings it here: stop watching, or
         * the handler would spin until the user takes the request; an ep
         * created from it reports the failure */
        uct_tcp_cm_conn_unwatch(conn);
        conn->flags |= UCT_TCP_CM_F_PEER_GONE;
        return;
    }
    if (conn->tx_buf != NULL) {
        status = uct_tcp_cm_conn_flush_tx(conn);
        if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
            uct_tcp_cm_conn_fail(conn, status);
            return;
        }
    }
    if (!(events & UCS_EVENT_SET_EVREAD) ||
        (conn->state == UCT_TCP_CM_CLOSED)) {
        return;
    }

    status = uct_tcp_cm_conn_recv(conn, uct_tcp_cm_expected(conn));
    if (status == UCS_INPROGRESS) {
        return;
    } else if (status != UCS_OK) {
        /* an orderly close before the answer is a refusal of sorts */
        uct_tcp_cm_conn_fail(conn, (status == UCS_ERR_NOT_CONNECTED)
                                       ? UCS_ERR_CONNECTION_RESET
                                       : status);
        return;
    }

    if (conn->rx_type == UCT_TCP_CM_MSG_DISCONNECT) {
        uct_tcp_cm_conn_rx_reset(conn);
        uct_tcp_cm_conn_fail(conn, UCS_ERR_CONNECTION_RESET);
        return;
    }
    switch (conn->state) {
    case UCT_TCP_CM_WAIT_ANSWER:
        uct_tcp_cm_client_answer(conn);
        break;
    case UCT_TCP_CM_RECV_REQUEST:
        uct_tcp_cm_server_request(conn);
        break;
    case UCT_TCP_CM_WAIT_NOTIFY:
        uct_tcp_cm_server_notify(conn);
        break;
    default:
        break;
    }
}

static ucs_status_t uct_tcp_cm_conn_watch(uct_tcp_cm_conn_t *conn,
                                          ucs_event_set_types_t events)
{
    ucs_status_t status;

    status = ucs_async_set_event_handler(conn->cm->async->mode, conn->fd,
                                         events, uct_tcp_cm_conn_handler, conn,
                                         conn->cm->async);
    if (status != UCS_OK) {
        ucs_error("tcp cm: watching fd %d failed (%s); raise ulimit -n",
                  conn->fd, ucs_status_string(status));
        return status;
    }
    conn->flags |= UCT_TCP_CM_F_IN_HANDLER;
    return UCS_OK;
}

static uct_tcp_cm_conn_t *uct_tcp_cm_conn_new(uct_tcp_cm_t *cm, int fd)
{
    uct_tcp_cm_conn_t *conn = calloc(1, sizeof(*conn));

    if (conn == NULL) {
        ucs_error("tcp cm: no memory for a connection");
        return NULL;
    }
    conn->super.iface = &cm->super.iface;
    conn->cm          = cm;
    conn->fd          = fd;
    ucs_list_add_tail(&cm->conns, &conn->list);
    return conn;
}

/* ------------------------------------------------------------------------
 * Listeners
 */

static void uct_tcp_cm_listener_handler(int fd, ucs_event_set_types_t events,
                                        void *arg)
{
    uct_tcp_listener_t *listener = arg;
    uct_tcp_cm_t *cm             = uct_tcp_cm(listener->super.cm);
    struct sockaddr_storage peer;
    socklen_t peer_len;
    uct_tcp_cm_conn_t *conn;
    ucs_status_t status;
    int conn_fd, i;

    for (i = 0; i < 16; ++i) { /* bounded work per event */
        peer_len = sizeof(peer);
        status   = ucs_socket_accept(fd, (struct sockaddr *)&peer, &peer_len,
                                     &conn_fd);
        if (status == UCS_ERR_NO_RESOURCE) {
            /* the connection stays queued: pause instead of spinning */
            ucs_warn_limited(&cm->log_limit[UCT_TCP_CM_LOG_PENDING],
                             "tcp cm: out of file descriptors accepting on "
                             "fd %d; pausing the listener (raise ulimit -n)",
                             fd);
            listener->paused = 1;
            (void)ucs_async_modify_handler(fd, 0);
            return;
        } else if (status != UCS_OK) {
            return; /* nothing more now, or logged */
        }
        if (listener->pending >= cm->max_pending) {
            ucs_warn_limited(&cm->log_limit[UCT_TCP_CM_LOG_PENDING],
                             "tcp cm: listener fd %d holds %u connections "
                             "the user has not taken; closing a new one "
                             "(raise UCX_TCP_CM_MAX_PENDING, or take "
                             "requests faster)",
                             fd, listener->pending);
            close(conn_fd);
            continue;
        }
        if ((ucs_socket_set_nonblock(conn_fd) != UCS_OK) ||
            ((conn = uct_tcp_cm_conn_new(cm, conn_fd)) == NULL)) {
            close(conn_fd);
            continue;
        }
        conn->flags     = UCT_TCP_CM_F_SERVER;
        conn->state     = UCT_TCP_CM_RECV_REQUEST;
        conn->listener  = listener;
        conn->deadline  = ucs_get_time() + cm->timeout;
        conn->peer_addr = peer;
        ++listener->pending;
        if (uct_tcp_cm_conn_watch(conn, UCS_EVENT_SET_EVREAD) != UCS_OK) {
            uct_tcp_cm_conn_free(conn);
        }
    }
}

static ucs_status_t uct_tcp_cm_listener_create(
    uct_cm_h tl_cm, const struct sockaddr *saddr, socklen_t socklen,
    const uct_listener_params_t *params, uct_listener_h *listener_p)
{
    uct_tcp_cm_t *cm = uct_tcp_cm(tl_cm);
    uct_tcp_listener_t *listener;
    ucs_status_t status;
    int backlog;

    listener = calloc(1, sizeof(*listener));
    if (listener == NULL) {
        ucs_error("tcp cm: no memory for a listener");
        return UCS_ERR_NO_MEMORY;
    }
    listener->super.cm        = tl_cm;
    listener->conn_request_cb = params->conn_request_cb;
    listener->user_data =
        (params->field_mask & UCT_LISTENER_PARAM_FIELD_USER_DATA)
            ? params->user_data
            : NULL;
    backlog = (params->field_mask & UCT_LISTENER_PARAM_FIELD_BACKLOG)
                  ? params->backlog
                  : SOMAXCONN;

    status = ucs_socket_server_init(saddr, backlog, 0, 0, &listener->fd);
    if (status != UCS_OK) {
        goto err_free; /* logged, with the address */
    }
    status = ucs_socket_set_nonblock(listener->fd);
    if (status != UCS_OK) {
        goto err_close;
    }

    UCS_ASYNC_BLOCK(cm->async);
    status = ucs_async_set_event_handler(
        cm->async->mode, listener->fd, UCS_EVENT_SET_EVREAD,
        uct_tcp_cm_listener_handler, listener, cm->async);
    if (status == UCS_OK) {
        ucs_list_add_tail(&cm->listeners, &listener->list);
    }
    UCS_ASYNC_UNBLOCK(cm->async);
    if (status != UCS_OK) {
        ucs_error("tcp cm: watching the listening socket failed (%s)",
                  ucs_status_string(status));
        goto err_close;
    }
    *listener_p = &listener->super;
    return UCS_OK;

err_close:
    close(listener->fd);
err_free:
    free(listener);
    return status;
}

static void uct_tcp_cm_listener_destroy(uct_listener_h tl_listener)
{
    uct_tcp_listener_t *listener = (uct_tcp_listener_t *)tl_listener;
    uct_tcp_cm_t *cm             = uct_tcp_cm(tl_listener->cm);
    uct_tcp_cm_conn_t *conn, *tmp;

    ucs_async_remove_handler(listener->fd, 1);
    UCS_ASYNC_BLOCK(cm->async);
    ucs_list_for_each_safe(conn, tmp, &cm->conns, list) {
        if ((conn->listener == listener) && !(conn->flags & UCT_TCP_CM_F_EP)) {
            /* not taken: the client hears nothing more than a close */
            uct_tcp_cm_conn_free(conn);
        } else if (conn->listener == listener) {
            conn->listener = NULL;
        }
    }
    ucs_list_del(&listener->list);
    UCS_ASYNC_UNBLOCK(cm->async);
    close(listener->fd);
    free(listener);
}

static ucs_status_t uct_tcp_cm_listener_reject(uct_listener_h tl_listener,
                                               uct_conn_request_h request)
{
    uct_tcp_cm_conn_t *conn = request;
    uct_tcp_cm_t *cm        = uct_tcp_cm(tl_listener->cm);
    size_t length           = sizeof(uct_tcp_cm_hdr_t);
    uct_tcp_cm_hdr_t hdr;

    UCS_ASYNC_BLOCK(cm->async);
    if ((conn->listener != (uct_tcp_listener_t *)tl_listener) ||
        (conn->flags & UCT_TCP_CM_F_EP)) {
        UCS_ASYNC_UNBLOCK(cm->async);
        ucs_error("uct_listener_reject: the request is not one this "
                  "listener reported, or it was taken already");
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(conn->flags & UCT_TCP_CM_F_PEER_GONE)) {
        /* one small message on a fresh socket: it fits, or the client
         * sees the close */
        uct_tcp_cm_hdr_pack(&hdr, UCT_TCP_CM_MSG_REJECT, 0);
        (void)ucs_socket_send_nb(conn->fd, &hdr, &length);
    }
    uct_tcp_cm_conn_free(conn);
    UCS_ASYNC_UNBLOCK(cm->async);
    return UCS_OK;
}

static ucs_status_t uct_tcp_cm_listener_query(uct_listener_h tl_listener,
                                              uct_listener_attr_t *attr)
{
    uct_tcp_listener_t *listener = (uct_tcp_listener_t *)tl_listener;
    socklen_t len                = sizeof(attr->sockaddr);

    if (attr->field_mask & UCT_LISTENER_ATTR_FIELD_SOCKADDR) {
        if (getsockname(listener->fd, (struct sockaddr *)&attr->sockaddr,
                        &len) != 0) {
            ucs_error("tcp cm: getsockname(fd %d) failed: %m", listener->fd);
            return UCS_ERR_IO_ERROR;
        }
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Endpoints
 */

static void uct_tcp_cm_ep_take_params(uct_tcp_cm_conn_t *conn,
                                      const uct_ep_params_t *params)
{
    uint64_t mask = params->field_mask;

    conn->user_data =
        (mask & UCT_EP_PARAM_FIELD_USER_DATA) ? params->user_data : NULL;
    conn->pack_cb = (mask & UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB)
                        ? params->sockaddr_pack_cb
                        : NULL;
    if (mask & UCT_EP_PARAM_FIELD_PRIV_DATA) {
        conn->priv_data     = params->private_data;
        conn->priv_data_len = (mask & UCT_EP_PARAM_FIELD_PRIV_DATA_LENGTH)
                                  ? params->private_data_length
                                  : 0;
    }
    conn->client_cb     = params->sockaddr_cb_client;
    conn->server_cb     = params->sockaddr_cb_server;
    conn->disconnect_cb = params->disconnect_cb;
}

static ucs_status_t uct_tcp_cm_ep_check_priv(const uct_tcp_cm_t *cm,
                                             const uct_ep_params_t *params)
{
    if ((params->field_mask & UCT_EP_PARAM_FIELD_PRIV_DATA) &&
        (params->field_mask & UCT_EP_PARAM_FIELD_PRIV_DATA_LENGTH) &&
        (params->private_data_length > cm->priv_data_len)) {
        ucs_error("uct_ep_create: %zu bytes of private data, more than "
                  "max_conn_priv %zu; send less or raise "
                  "UCX_TCP_CM_PRIV_DATA_LEN",
                  params->private_data_length, cm->priv_data_len);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

static ucs_status_t uct_tcp_cm_ep_create_client(uct_tcp_cm_t *cm,
                                                const uct_ep_params_t *params,
                                                uct_ep_h *ep_p)
{
    const struct sockaddr *saddr = params->sockaddr->addr;
    uct_tcp_cm_conn_t *conn;
    ucs_status_t status;
    size_t addr_len;
    int fd;

    status = ucs_sockaddr_sizeof(saddr, &addr_len);
    if (status != UCS_OK) {
        return status;
    }
    status = ucs_socket_create(saddr->sa_family, SOCK_STREAM, &fd);
    if (status != UCS_OK) {
        return status;
    }
    status = ucs_socket_set_nonblock(fd);
    if (status != UCS_OK) {
        goto err_close;
    }

    UCS_ASYNC_BLOCK(cm->async);
    conn = uct_tcp_cm_conn_new(cm, fd);
    if (conn == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_unblock;
    }
    conn->flags    = UCT_TCP_CM_F_EP;
    conn->state    = UCT_TCP_CM_CONNECTING;
    conn->deadline = ucs_get_time() + cm->timeout;
    memcpy(&conn->peer_addr, saddr, addr_len);
    uct_tcp_cm_ep_take_params(conn, params);

    status = ucs_socket_connect(fd, saddr);
    if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
        /* refused at once: the callback says so from the timer, outside
         * the user's call, as it would for a late refusal */
        conn->fail_status = status;
        conn->deadline    = ucs_get_time();
        status            = UCS_OK;
    } else {
        status = uct_tcp_cm_conn_watch(conn, UCS_EVENT_SET_EVWRITE);
    }
    if (status != UCS_OK) {
        conn->fd = -1; /* closed below */
        uct_tcp_cm_conn_free(conn);
        goto err_unblock;
    }
    UCS_ASYNC_UNBLOCK(cm->async);
    *ep_p = &conn->super;
    return UCS_OK;

err_unblock:
    UCS_ASYNC_UNBLOCK(cm->async);
err_close:
    close(fd);
    return status;
}

static ucs_status_t uct_tcp_cm_ep_create_server(uct_tcp_cm_t *cm,
                                                const uct_ep_params_t *params,
                                                uct_ep_h *ep_p)
{
    uct_tcp_cm_conn_t *conn = params->conn_request;
    ucs_status_t status;
    size_t length;
    void *data;

    UCS_ASYNC_BLOCK(cm->async);
    if (!(conn->flags & UCT_TCP_CM_F_SERVER) ||
        (conn->flags & UCT_TCP_CM_F_EP) ||
        (conn->state != UCT_TCP_CM_WAIT_USER_S)) {
        UCS_ASYNC_UNBLOCK(cm->async);
        ucs_error("uct_ep_create: the connection request was taken already "
                  "or is not one of this cm's listeners");
        return UCS_ERR_INVALID_PARAM;
    }
    conn->flags |= UCT_TCP_CM_F_EP;
    if (conn->listener != NULL) {
        --conn->listener->pending;
        conn->listener = NULL;
    }
    uct_tcp_cm_ep_take_params(conn, params);
    uct_tcp_cm_conn_rx_reset(conn);
    conn->state    = UCT_TCP_CM_WAIT_NOTIFY;
    conn->deadline = ucs_get_time() + cm->timeout;
    *ep_p          = &conn->super;

    if (conn->flags & UCT_TCP_CM_F_PEER_GONE) {
        status = UCS_ERR_CONNECTION_RESET;
    } else {
        status = uct_tcp_cm_conn_priv_data(conn, &data, &length);
        if (status == UCS_OK) {
            status =
                uct_tcp_cm_conn_send(conn, UCT_TCP_CM_MSG_ACCEPT, data, length);
            free(data);
        }
    }
    if (status != UCS_OK) {
        /* the ep exists; its notify callback reports the failure from
         * the timer, outside the user's call */
        uct_tcp_cm_conn_unwatch(conn);
        conn->deadline    = ucs_get_time();
        conn->fail_status = status;
    }
    UCS_ASYNC_UNBLOCK(cm->async);
    return UCS_OK;
}

static ucs_status_t uct_tcp_cm_ep_create(const uct_ep_params_t *params,
                                         uct_ep_h *ep_p)
{
    uct_tcp_cm_t *cm = uct_tcp_cm(params->cm);
    ucs_status_t status;

    status = uct_tcp_cm_ep_check_priv(cm, params);
    if (status != UCS_OK) {
        return status;
    }
    if (params->field_mask & UCT_EP_PARAM_FIELD_SOCKADDR) {
        return uct_tcp_cm_ep_create_client(cm, params, ep_p);
    }
    return uct_tcp_cm_ep_create_server(cm, params, ep_p);
}

static void uct_tcp_cm_ep_destroy(uct_ep_h ep)
{
    uct_tcp_cm_conn_t *conn = (uct_tcp_cm_conn_t *)ep;
    uct_tcp_cm_t *cm        = conn->cm;

    UCS_ASYNC_BLOCK(cm->async);
    if (conn->flags & UCT_TCP_CM_F_IN_CB) {
        uct_tcp_cm_conn_unwatch(conn);
        conn->flags |= UCT_TCP_CM_F_DESTROYED; /* freed after the callback */
    } else {
        uct_tcp_cm_conn_free(conn);
    }
    UCS_ASYNC_UNBLOCK(cm->async);
}

static ucs_status_t uct_tcp_cm_ep_conn_notify(uct_ep_h ep)
{
    uct_tcp_cm_conn_t *conn = (uct_tcp_cm_conn_t *)ep;
    uct_tcp_cm_t *cm        = conn->cm;
    ucs_status_t status;

    UCS_ASYNC_BLOCK(cm->async);
    if (conn->flags & UCT_TCP_CM_F_SERVER) {
        status = UCS_ERR_INVALID_PARAM;
        ucs_error("uct_cm_client_ep_conn_notify: called on a server ep");
    } else if (conn->state != UCT_TCP_CM_WAIT_USER_C) {
        status = (conn->state == UCT_TCP_CM_CLOSED) ? UCS_ERR_NOT_CONNECTED
                                                    : UCS_ERR_INVALID_PARAM;
        if (status == UCS_ERR_INVALID_PARAM) {
            ucs_error("uct_cm_client_ep_conn_notify: the server has not "
                      "accepted yet (call it after the connect callback "
                      "said UCS_OK), or it was called already");
        }
    } else {
        conn->state = UCT_TCP_CM_CONNECTED;
        status = uct_tcp_cm_conn_send(conn, UCT_TCP_CM_MSG_NOTIFY, NULL, 0);
        if (status != UCS_OK) {
            uct_tcp_cm_conn_close(conn);
            conn->flags |= UCT_TCP_CM_F_PEER_GONE;
            status = UCS_ERR_NOT_CONNECTED;
        }
    }
    UCS_ASYNC_UNBLOCK(cm->async);
    return status;
}

static ucs_status_t uct_tcp_cm_ep_disconnect(uct_ep_h ep, unsigned flags)
{
    uct_tcp_cm_conn_t *conn = (uct_tcp_cm_conn_t *)ep;
    uct_tcp_cm_t *cm        = conn->cm;
    ucs_status_t status;

    UCS_ASYNC_BLOCK(cm->async);
    if ((conn->state == UCT_TCP_CM_CLOSED) ||
        (conn->flags & UCT_TCP_CM_F_DISC_SENT)) {
        status = UCS_ERR_NOT_CONNECTED;
    } else if ((conn->state != UCT_TCP_CM_CONNECTED) &&
               (conn->state != UCT_TCP_CM_WAIT_USER_C)) {
        status = UCS_ERR_BUSY; /* the handshake is still running */
    } else {
        conn->flags |= UCT_TCP_CM_F_DISC_SENT;
        status = uct_tcp_cm_conn_send(conn, UCT_TCP_CM_MSG_DISCONNECT, NULL, 0);
        if (status == UCS_OK) {
            /* the peer answers by closing: that runs our disconnect_cb */
            (void)shutdown(conn->fd, SHUT_WR);
        } else {
            uct_tcp_cm_conn_close(conn);
            conn->flags |= UCT_TCP_CM_F_PEER_GONE;
            status = UCS_OK; /* it is gone either way */
        }
    }
    UCS_ASYNC_UNBLOCK(cm->async);
    return status;
}

/* ------------------------------------------------------------------------
 * The cm
 */

/* The handlers that found the async context blocked (by a user call, or
 * by a transport of the same worker) run from the worker's progress */
static unsigned uct_tcp_cm_progress(void *arg)
{
    ucs_async_check_miss(((uct_tcp_cm_t *)arg)->async);
    return 0;
}

/* Deadlines: bounded by the connections in a handshake */
static void uct_tcp_cm_timer(int id, ucs_event_set_types_t events, void *arg)
{
    uct_tcp_cm_t *cm = arg;
    ucs_time_t now   = ucs_get_time();
    uct_tcp_cm_conn_t *conn, *tmp;
    char peer[64];

    uct_tcp_listener_t *listener;

    ucs_list_for_each(listener, &cm->listeners, list) {
        if (listener->paused) {
            listener->paused = 0;
            (void)ucs_async_modify_handler(listener->fd, UCS_EVENT_SET_EVREAD);
        }
    }
    ucs_list_for_each_safe(conn, tmp, &cm->conns, list) {
        if ((conn->deadline == 0) || (now < conn->deadline)) {
            continue;
        }
        if (conn->fail_status != UCS_OK) {
            uct_tcp_cm_conn_fail(conn, conn->fail_status);
            continue;
        }
        ucs_warn_limited(&cm->log_limit[UCT_TCP_CM_LOG_DEADLINE],
                         "tcp cm: %s missed the handshake deadline "
                         "(UCX_TCP_CM_TIMEOUT); dropping it",
                         uct_tcp_cm_peer_str(conn, peer, sizeof(peer)));
        uct_tcp_cm_conn_fail(conn, UCS_ERR_ENDPOINT_TIMEOUT);
    }
}

static ucs_status_t uct_tcp_cm_query(uct_cm_h tl_cm, uct_cm_attr_t *attr)
{
    if (attr->field_mask & UCT_CM_ATTR_FIELD_MAX_CONN_PRIV) {
        attr->max_conn_priv = uct_tcp_cm(tl_cm)->priv_data_len;
    }
    return UCS_OK;
}

static void uct_tcp_cm_close(uct_cm_h tl_cm)
{
    uct_tcp_cm_t *cm = uct_tcp_cm(tl_cm);
    uct_tcp_cm_conn_t *conn, *tmp;
    int i;

    ucs_async_remove_handler(cm->timer_id, 1);
    uct_worker_progress_unregister_safe(cm->super.worker, &cm->progress_id);
    if (!ucs_list_is_empty(&cm->listeners)) {
        ucs_warn("uct_cm_close: listeners still open; destroy them first");
    }
    UCS_ASYNC_BLOCK(cm->async);
    ucs_list_for_each_safe(conn, tmp, &cm->conns, list) {
        if (conn->flags & UCT_TCP_CM_F_EP) {
            ucs_warn("uct_cm_close: an endpoint is still alive; destroy "
                     "the cm's endpoints first");
        }
        uct_tcp_cm_conn_free(conn);
    }
    UCS_ASYNC_UNBLOCK(cm->async);
    for (i = 0; i < UCT_TCP_CM_LOG_LAST; ++i) {
        ucs_log_limit_flush(&cm->log_limit[i], UCS_LOG_LEVEL_WARN, "tcp cm");
    }
    free(cm);
}

static const uct_cm_ops_t uct_tcp_cm_ops = {
    .close            = uct_tcp_cm_close,
    .cm_query         = uct_tcp_cm_query,
    .listener_create  = uct_tcp_cm_listener_create,
    .listener_reject  = uct_tcp_cm_listener_reject,
    .listener_query   = uct_tcp_cm_listener_query,
    .listener_destroy = uct_tcp_cm_listener_destroy,
    .ep_create        = uct_tcp_cm_ep_create};

static const uct_iface_ops_t uct_tcp_cm_ep_ops = {
    .ep_destroy        = uct_tcp_cm_ep_destroy,
    .ep_disconnect     = uct_tcp_cm_ep_disconnect,
    .cm_ep_conn_notify = uct_tcp_cm_ep_conn_notify};

ucs_status_t uct_tcp_cm_open(uct_component_t *component, uct_worker_h worker,
                             const uct_cm_config_t *tl_config, uct_cm_h *cm_p)
{
    const uct_tcp_cm_config_t *config = (const uct_tcp_cm_config_t *)tl_config;
    ucs_async_context_t *async        = ((uct_priv_worker_t *)worker)->async;
    ucs_time_t tick;
    ucs_status_t status;
    uct_tcp_cm_t *cm;

    if (async == NULL) {
        ucs_error("uct_cm_open: the worker has no async context; create it "
                  "with one (uct_worker_create(async, ...)), which runs the "
                  "cm's callbacks");
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->priv_data_len > UCT_TCP_CM_PRIV_DATA_MAX) {
        ucs_error("UCX_TCP_CM_PRIV_DATA_LEN=%zu is over the limit %u; set "
                  "it lower",
                  config->priv_data_len, UCT_TCP_CM_PRIV_DATA_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(config->timeout > 0) || (config->max_pending == 0)) {
        ucs_error("UCX_TCP_CM_TIMEOUT and UCX_TCP_CM_MAX_PENDING must be "
                  "positive");
        return UCS_ERR_INVALID_PARAM;
    }

    cm = calloc(1, sizeof(*cm));
    if (cm == NULL) {
        ucs_error("uct_cm_open: no memory for the tcp cm");
        return UCS_ERR_NO_MEMORY;
    }
    uct_cm_base_init(&cm->super, &uct_tcp_cm_ops, &uct_tcp_cm_ep_ops, component,
                     worker);
    cm->async         = async;
    cm->priv_data_len = config->priv_data_len;
    cm->timeout       = ucs_time_from_sec(config->timeout);
    cm->max_pending   = config->max_pending;
    ucs_list_head_init(&cm->conns);
    ucs_list_head_init(&cm->listeners);

    /* deadlines are checked four times per timeout, at least every 100 ms */
    tick   = ucs_min(cm->timeout / 4, ucs_time_from_msec(100));
    status = ucs_async_add_timer(async->mode, ucs_max(tick, 1),
                                 uct_tcp_cm_timer, cm, async, &cm->timer_id);
    if (status != UCS_OK) {
        ucs_error("uct_cm_open: starting the tcp cm's timer failed (%s)",
                  ucs_status_string(status));
        free(cm);
        return status;
    }
    cm->progress_id = UCS_CALLBACKQ_ID_NULL;
    uct_worker_progress_register_safe(worker, uct_tcp_cm_progress, cm, 0,
                                      &cm->progress_id);
    *cm_p = &cm->super;
    return UCS_OK;
}
