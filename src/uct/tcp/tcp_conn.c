/*
 * Connection set-up of tcp endpoints: non-blocking connect with retries,
 * the handshake a connecting ep sends and the reply it waits for, accepted
 * connections and their handshake, CONNECT_TO_IFACE and CONNECT_TO_EP (one
 * connection per ep pair, however the two sides race).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_ep.h"

#include <ucs/sys/sys.h>
#include <ucs/time/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Puts @a n bytes at the head of the send queue, before anything the
 * user sent while there was no connection. */
static ucs_status_t uct_tcp_ep_queue_first(uct_tcp_ep_t *ep, const void *data,
                                           size_t n)
{
    uct_tcp_tx_t *tx;

    tx = uct_tcp_ep_tx_buf_get(ep);
    if (tx == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(tx->data, data, n);
    tx->length = n;
    ep->tx_queued += (uint32_t)n;
    uct_tcp_ep_iface(ep)->tx_queued += n;
    ucs_list_add_head(&ep->tx_list, &tx->list);
    return UCS_OK;
}

static void uct_tcp_handshake_reply_init(uct_tcp_handshake_reply_t *reply,
                                         uint16_t hs_status)
{
    memset(reply, 0, sizeof(*reply));
    reply->magic   = UCT_TCP_MAGIC;
    reply->version = UCT_TCP_VERSION;
    reply->status  = hs_status;
}

/* Queues the handshake of a connecting ep, with the @a secret of the
 * address it connects to and its pairing @a nonce (CONN_TO_IFACE). */
static ucs_status_t uct_tcp_ep_queue_handshake(uct_tcp_ep_t *ep,
                                               uint8_t conn_type,
                                               uint64_t secret, uint64_t nonce)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_handshake_t hs;
    ucs_status_t status;

    memset(&hs, 0, sizeof(hs));
    hs.magic     = UCT_TCP_MAGIC;
    hs.version   = UCT_TCP_VERSION;
    hs.conn_type = conn_type;
    hs.family    = (uint8_t)iface->listen_addr.sa.sa_family;
    if (iface->listen_addr.sa.sa_family == AF_INET6) {
        hs.listen_port = iface->listen_addr.in6.sin6_port;
        memcpy(hs.listen_addr, &iface->listen_addr.in6.sin6_addr, 16);
    } else {
        hs.listen_port = iface->listen_addr.in.sin_port;
        memcpy(hs.listen_addr, &iface->listen_addr.in.sin_addr, 4);
    }
    if (conn_type == UCT_TCP_CONN_TO_EP) {
        hs.dst_ep_id     = ep->ext->peer_id;
        hs.dst_ep_cookie = ep->ext->peer_cookie;
        hs.src_ep_id     = ep->id;
        hs.src_ep_cookie = ep->cookie;
    }
    hs.secret    = secret;
    hs.src_nonce = nonce;

    status = uct_tcp_ep_queue_first(ep, &hs, sizeof(hs));
    if (status == UCS_OK) {
        ep->flags |= UCT_TCP_EP_FLAG_CONNECTOR;
        ep->rx_phase = UCT_TCP_RX_REPLY;
    }
    return status;
}

/* The state of a connector whose socket just connected */
static uint8_t uct_tcp_ep_connected_state(const uct_tcp_ep_t *ep)
{
    return (ep->flags & UCT_TCP_EP_FLAG_SWITCH) ? UCT_TCP_EP_SWITCHING
                                                : UCT_TCP_EP_CONNECTED;
}

static ucs_time_t uct_tcp_ep_retry_delay(unsigned attempt)
{
    double delay = 0.01 * (double)(1u << ucs_min(attempt, 7u));

    return ucs_time_from_sec(ucs_min(delay, 1.0));
}

/* Connect failed with @a err: try again later if allowed, else fail. */
static ucs_status_t uct_tcp_ep_connect_failed(uct_tcp_ep_t *ep, int err)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status    = uct_tcp_errno_status(err);
    ucs_time_t now         = ucs_get_time();
    uct_tcp_ep_ext_t *ext  = ep->ext; /* kept while connecting */
    char str[UCS_SOCKADDR_STRING_LEN];

    uct_tcp_ep_close_socket(ep);
    if (((err == ECONNREFUSED) || (err == ETIMEDOUT) ||
         (err == EHOSTUNREACH)) &&
        (ext->conn_retries < iface->config.max_conn_retries) &&
        (now < ext->conn_deadline)) {
        ucs_debug("tcp ep %p: connect to %s failed (%s), retry %u of %u",
                  (void *)ep, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                  strerror(err), ext->conn_retries + 1,
                  iface->config.max_conn_retries);
        ep->retry_time = now + uct_tcp_ep_retry_delay(ext->conn_retries);
        ++ext->conn_retries;
        uct_iface_stat_conn_retry(&iface->super);
        ep->state = UCT_TCP_EP_RETRY_WAIT;
        ucs_list_add_tail(&iface->retry_list, &ep->retry_list);
        return UCS_OK;
    }

    ucs_debug("tcp ep %p: connect to %s failed: %s (after %u retries)",
              (void *)ep, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
              strerror(err), ext->conn_retries);
    return (status == UCS_ERR_CONNECTION_RESET) ? UCS_ERR_UNREACHABLE : status;
}

/* Opens the socket and starts a non-blocking connect to peer_addr.
 * UCS_OK also when the attempt was refused and a retry is scheduled. */
static ucs_status_t uct_tcp_ep_connect_start(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface         = uct_tcp_ep_iface(ep);
    const uct_tcp_sockaddr_t *peer = &ep->ext->peer_addr;
    socklen_t addrlen;
    ucs_status_t status;
    int fd, ret;

    status = uct_tcp_ep_set_peer(ep, peer);
    if (status != UCS_OK) {
        return status;
    }
    status = ucs_socket_create(peer->sa.sa_family, SOCK_STREAM, &fd);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_iface_set_sockopts(iface, fd, 1);
    if (status != UCS_OK) {
        close(fd);
        return status;
    }

    addrlen = (peer->sa.sa_family == AF_INET6) ? sizeof(struct sockaddr_in6)
                                               : sizeof(struct sockaddr_in);
    ep->fd  = fd;
    ret     = connect(fd, &peer->sa, addrlen);
    if (ret == 0) {
        ep->state = uct_tcp_ep_connected_state(ep);
    } else if (errno == EINPROGRESS) {
        ep->state = UCT_TCP_EP_CONNECTING;
    } else {
        return uct_tcp_ep_connect_failed(ep, errno);
    }

    status = uct_tcp_ep_register(ep);
    if (status != UCS_OK) {
        close(fd);
        ep->fd = -1;
        return status;
    }

    uct_tcp_ep_tx_kick(ep);
    return UCS_OK;
}

/* A non-blocking connect finished. */
void uct_tcp_ep_connect_progress(uct_tcp_ep_t *ep)
{
    socklen_t len = sizeof(int);
    ucs_status_t status;
    int err = 0;

    if (getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
        err = errno;
    }
    if (err == EINPROGRESS) {
        return;
    }
    if (err != 0) {
        status = uct_tcp_ep_connect_failed(ep, err);
        if (status != UCS_OK) {
            uct_tcp_ep_fail(ep, status);
        }
        return;
    }

    ep->state = uct_tcp_ep_connected_state(ep);
    uct_tcp_ep_tx_progress(ep);
}

void uct_tcp_ep_retry_progress(uct_tcp_iface_t *iface)
{
    ucs_time_t now = ucs_get_time();
    char str[UCS_SOCKADDR_STRING_LEN];
    uct_tcp_ep_t *ep, *tmp;
    ucs_status_t status;

    ucs_list_for_each_safe(ep, tmp, &iface->retry_list, retry_list) {
        if (now < ep->retry_time) {
            continue;
        }
        if (ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED) {
            ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_PROTOCOL],
                             "tcp iface %p: %s does not read the replies "
                             "to its requests (over its budget for "
                             "UCX_TCP_PEER_TIMEOUT); closing the connection",
                             (void *)iface,
                             uct_tcp_ep_peer_str(ep, str, sizeof(str)));
            uct_tcp_ep_fail(ep, UCS_ERR_ENDPOINT_TIMEOUT);
            continue;
        }
        if (ep->state == UCT_TCP_EP_ACCEPTED) {
            ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_REFUSED],
                             "tcp iface %p: no handshake from %s within "
                             "UCX_TCP_CONN_TIMEOUT; closing the connection",
                             (void *)iface,
                             uct_tcp_ep_peer_str(ep, str, sizeof(str)));
            uct_tcp_ep_free(ep);
            continue;
        }
        ucs_list_del(&ep->retry_list);
        ep->state = UCT_TCP_EP_CONNECTING;
        status    = uct_tcp_ep_connect_start(ep);
        if (status != UCS_OK) {
            uct_tcp_ep_fail(ep, status);
        }
    }
}

static void uct_tcp_ep_send_reply_now(int fd, uint16_t hs_status)
{
    uct_tcp_handshake_reply_t reply;
    ssize_t ret;

    uct_tcp_handshake_reply_init(&reply, hs_status);
    /* Best effort: the connection is closed right after */
    ret = send(fd, &reply, sizeof(reply), UCT_TCP_SEND_FLAGS);
    (void)ret;
}

/* Refuses the connection of an internal ep: reply, one (rate-limited)
 * warning, close. */
static void uct_tcp_ep_refuse(uct_tcp_ep_t *ep, uint16_t hs_status,
                              const char *why)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    if (hs_status != UCT_TCP_HS_ACCEPTED) {
        uct_tcp_ep_send_reply_now(ep->fd, hs_status);
    }
    ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_REFUSED],
                     "tcp iface %p: refused the connection from %s: %s",
                     (void *)iface, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                     why);
    uct_tcp_ep_free(ep);
}

static ucs_status_t uct_tcp_ep_queue_reply(uct_tcp_ep_t *ep)
{
    uct_tcp_handshake_reply_t reply;

    uct_tcp_handshake_reply_init(&reply, UCT_TCP_HS_ACCEPTED);
    return uct_tcp_ep_queue_first(ep, &reply, sizeof(reply));
}

/* Moves the accepted socket of internal @a ep to the user's @a target. */
static uct_tcp_ep_t *uct_tcp_ep_attach(uct_tcp_ep_t *ep, uct_tcp_ep_t *target,
                                       const uct_tcp_handshake_t *hs)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    if (uct_tcp_ep_queue_reply(target) != UCS_OK) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, "out of memory");
        return NULL;
    }
    if (ucs_event_set_mod(iface->event_set, ep->fd,
                          (ucs_event_set_types_t)ep->events,
                          target) != UCS_OK) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, "event set error");
        return NULL;
    }

    /* the connection's peer and its receive buffer go with it */
    uct_tcp_peer_put(iface, target->peer);
    target->peer     = ep->peer;
    target->fd       = ep->fd;
    target->events   = ep->events;
    target->rx       = ep->rx;
    target->state    = UCT_TCP_EP_CONNECTED;
    target->rx_phase = UCT_TCP_RX_MESSAGES;
    ep->peer         = UCT_TCP_PEER_NONE;
    ep->fd           = -1;
    ep->events       = 0;
    ep->rx           = NULL;
    if ((target->rx != NULL) && (target->rx->peer != NULL)) {
        target->rx->ep = target;
    }
    uct_tcp_ep_free(ep);
    uct_tcp_ep_ext_release_idle(target);

    uct_tcp_ep_update_events(target); /* the reply goes out when writable */
    return target;
}

static int uct_tcp_handshake_prefix_ok(const char *data)
{
    uint64_t magic;
    uint16_t version;

    memcpy(&magic, data, sizeof(magic));
    memcpy(&version, data + sizeof(magic), sizeof(version));
    return (magic == UCT_TCP_MAGIC) && (version == UCT_TCP_VERSION);
}

/* Whether the @a n bytes at @a p are all zero */
static int uct_tcp_is_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint8_t acc      = 0;
    size_t i;

    for (i = 0; i < n; ++i) {
        acc |= b[i];
    }
    return acc == 0;
}

/* What is wrong with a handshake of our version, or NULL. */
static const char *uct_tcp_handshake_check(const uct_tcp_iface_t *iface,
                                           const uct_tcp_handshake_t *hs,
                                           uint16_t *hs_status_p)
{
    if (!uct_tcp_secret_equal(hs->secret, iface->secret)) {
        /* checked first: nothing else of an unauthenticated peer is used */
        *hs_status_p = UCT_TCP_HS_BAD_SECRET;
        return "it does not know this interface's address secret (a stale "
               "or forged address?)";
    }
    *hs_status_p = UCT_TCP_HS_BAD_REQUEST;
    if ((hs->family != AF_INET) && (hs->family != AF_INET6)) {
        return "malformed handshake (unknown address family)";
    }
    if ((hs->conn_type != UCT_TCP_CONN_TO_IFACE) &&
        (hs->conn_type != UCT_TCP_CONN_TO_EP)) {
        return "malformed handshake (unknown connection type)";
    }
    if (hs->reserved != 0) {
        return "malformed handshake (reserved field not zero)";
    }
    if ((hs->family == AF_INET) &&
        !uct_tcp_is_zero(hs->listen_addr + 4, sizeof(hs->listen_addr) - 4)) {
        return "malformed handshake (IPv4 address with bytes past it)";
    }
    if ((hs->conn_type == UCT_TCP_CONN_TO_IFACE) &&
        ((hs->dst_ep_id | hs->src_ep_id) != 0 ||
         (hs->dst_ep_cookie | hs->src_ep_cookie) != 0)) {
        return "malformed handshake (endpoint fields in a connection to "
               "an interface)";
    }
    if ((hs->conn_type == UCT_TCP_CONN_TO_EP) && (hs->src_nonce != 0)) {
        return "malformed handshake (pairing nonce in a connection to an "
               "endpoint)";
    }
    return NULL;
}

/* A CONNECT_TO_EP handshake: the connection goes to the user's ep it
 * names. Returns that ep, or NULL if refused. */
static uct_tcp_ep_t *uct_tcp_ep_handshake_to_ep(uct_tcp_ep_t *ep,
                                                const uct_tcp_handshake_t *hs)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_t *target;
    char why[128];
    int cookie_ok;
    void *value;

    /* the cookie is checked whether or not the id exists, so that the
     * answer and its time tell nothing about which ids are in use */
    if (!ucs_ptr_array_lookup(&iface->ep_ids, hs->dst_ep_id, &value)) {
        value = NULL;
    }
    cookie_ok = uct_tcp_secret_equal(
        (value != NULL) ? ((uct_tcp_ep_t *)value)->cookie : 0,
        hs->dst_ep_cookie);
    if (!cookie_ok || (value == NULL)) {
        snprintf(why, sizeof(why),
                 "it names endpoint %u with a cookie that is not that "
                 "endpoint's (a destroyed endpoint, or a guess)",
                 hs->dst_ep_id);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, why);
        return NULL;
    }
    target = value;
    if (!(target->flags & UCT_TCP_EP_FLAG_TO_EP)) {
        /* a slot a pairing nonce holds, not an endpoint address */
        snprintf(why, sizeof(why),
                 "it names endpoint %u, which has no endpoint address",
                 hs->dst_ep_id);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, why);
        return NULL;
    }
    if ((target->state != UCT_TCP_EP_WAIT_PEER) ||
        (target->flags & UCT_TCP_EP_FLAG_CONNECTOR)) {
        snprintf(why, sizeof(why), "endpoint %u already has a connection",
                 hs->dst_ep_id);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_DUPLICATE, why);
        return NULL;
    }
    /* waiting for its peer: the side state holds the peer's address once
     * the user connected it */
    if ((target->flags & UCT_TCP_EP_FLAG_PEER_KNOWN) && (target->ext != NULL) &&
        ((hs->src_ep_id != target->ext->peer_id) ||
         !uct_tcp_secret_equal(hs->src_ep_cookie, target->ext->peer_cookie))) {
        /* the user connected it to another endpoint than the one this
         * connection comes from */
        snprintf(why, sizeof(why),
                 "it comes from endpoint %u, not the one endpoint %u was "
                 "connected to",
                 hs->src_ep_id, hs->dst_ep_id);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, why);
        return NULL;
    }
    return uct_tcp_ep_attach(ep, target, hs);
}

/* The listening address the connecting iface of @a hs names */
static void uct_tcp_ep_handshake_from(const uct_tcp_handshake_t *hs,
                                      uct_tcp_sockaddr_t *from)
{
    memset(from, 0, sizeof(*from));
    if (hs->family == AF_INET6) {
        from->in6.sin6_family = AF_INET6;
        from->in6.sin6_port   = hs->listen_port;
        memcpy(&from->in6.sin6_addr, hs->listen_addr, 16);
    } else {
        from->in.sin_family = AF_INET;
        from->in.sin_port   = hs->listen_port;
        memcpy(&from->in.sin_addr, hs->listen_addr, 4);
    }
}

/* Receive handler of an accepted connection: its handshake. A peer of
 * another version (or not ours at all) is refused as soon as the first
 * bytes show it, whatever it sends next; one of ours must present the
 * secret of our address before anything else it says is looked at.
 * Returns the ep that owns the connection from now on (@a ep itself while
 * bytes are missing), or NULL if it was refused. */
uct_tcp_ep_t *uct_tcp_ep_rx_handshake(uct_tcp_ep_t *ep)
{
    const char *data = ep->rx->data + ep->rx->offset;
    size_t avail     = ep->rx->length - ep->rx->offset;
    uct_tcp_sockaddr_t from;
    uct_tcp_handshake_t hs;
    uint16_t hs_status;
    const char *why;
    char text[128];

    if ((avail < UCT_TCP_HS_PREFIX_LEN) ||
        ((avail < sizeof(hs)) && uct_tcp_handshake_prefix_ok(data))) {
        return ep;
    }

    memset(&hs, 0, sizeof(hs));
    memcpy(&hs, data, ucs_min(sizeof(hs), avail));
    if (hs.magic != UCT_TCP_MAGIC) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_ACCEPTED,
                          "wrong magic number (not an openuct tcp peer?)");
        return NULL;
    }
    if (hs.version != UCT_TCP_VERSION) {
        snprintf(text, sizeof(text),
                 "it speaks protocol version %u, this "
                 "side version %u",
                 hs.version, (unsigned)UCT_TCP_VERSION);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_BAD_VERSION, text);
        return NULL;
    }
    why = uct_tcp_handshake_check(uct_tcp_ep_iface(ep), &hs, &hs_status);
    if (why != NULL) {
        uct_tcp_ep_refuse(ep, hs_status, why);
        return NULL;
    }
    ep->rx->offset += sizeof(hs);

    if (hs.conn_type == UCT_TCP_CONN_TO_EP) {
        return uct_tcp_ep_handshake_to_ep(ep, &hs);
    }

    if (uct_tcp_ep_queue_reply(ep) != UCS_OK) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, "out of memory");
        return NULL;
    }
    ucs_list_del(&ep->retry_list); /* no handshake timeout now */
    ep->state    = UCT_TCP_EP_CONNECTED;
    ep->rx_phase = UCT_TCP_RX_MESSAGES;
    uct_tcp_ep_handshake_from(&hs, &from);
    uct_tcp_pair_accepted(ep, &hs, &from);
    uct_tcp_ep_update_events(ep); /* the reply goes out when writable */
    return ep;
}

static const char *uct_tcp_hs_status_str(uint16_t status)
{
    switch (status) {
    case UCT_TCP_HS_BAD_VERSION:
        return "protocol version mismatch";
    case UCT_TCP_HS_NO_EP:
        return "no such endpoint";
    case UCT_TCP_HS_DUPLICATE:
        return "endpoint already connected";
    case UCT_TCP_HS_BAD_SECRET:
        return "the address secret does not match (is the address stale?)";
    case UCT_TCP_HS_BAD_REQUEST:
        return "malformed handshake";
    default:
        return "unknown reason";
    }
}

/* Receive handler of a connecting ep: the peer's answer to our
 * handshake. Returns @a ep, or NULL if it was refused (the ep failed). */
uct_tcp_ep_t *uct_tcp_ep_rx_reply(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];
    uct_tcp_handshake_reply_t reply;

    if (ep->rx->length - ep->rx->offset < sizeof(reply)) {
        return ep;
    }
    memcpy(&reply, ep->rx->data + ep->rx->offset, sizeof(reply));
    if (reply.magic != UCT_TCP_MAGIC) {
        uct_tcp_ep_protocol_error(ep, "handshake reply with a wrong magic "
                                      "number (not an openuct tcp peer?)");
        return NULL;
    }
    if ((reply.reserved != 0) || ((reply.status == UCT_TCP_HS_ACCEPTED) &&
                                  (reply.version != UCT_TCP_VERSION))) {
        uct_tcp_ep_protocol_error(ep, "malformed handshake reply (reserved "
                                      "field or version)");
        return NULL;
    }
    if (reply.status != UCT_TCP_HS_ACCEPTED) {
        ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_REFUSED],
                         "tcp ep %p: %s refused the connection: %s (its "
                         "protocol version %u, ours %u)",
                         (void *)ep, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                         uct_tcp_hs_status_str(reply.status), reply.version,
                         UCT_TCP_VERSION);
        uct_tcp_ep_fail(ep, UCS_ERR_UNREACHABLE);
        return NULL;
    }
    ep->rx->offset += sizeof(reply);
    ep->rx_phase = UCT_TCP_RX_MESSAGES;
    uct_tcp_ep_ext_release_idle(ep); /* connected: the peer is known */
    return ep;
}

ucs_status_t uct_tcp_ep_accept(uct_tcp_iface_t *iface, int fd,
                               const uct_tcp_sockaddr_t *peer)
{
    uct_tcp_ep_t *ep;
    ucs_status_t status;

    ep = uct_tcp_ep_alloc(iface);
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ep->flags    = UCT_TCP_EP_FLAG_INTERNAL;
    ep->state    = UCT_TCP_EP_ACCEPTED;
    ep->rx_phase = UCT_TCP_RX_HANDSHAKE;
    if (uct_tcp_ep_set_peer(ep, peer) != UCS_OK) {
        uct_tcp_ep_free(ep);
        return UCS_ERR_NO_MEMORY;
    }
    ep->fd = fd;
    /* a peer that never sends its handshake is dropped after this */
    ep->retry_time = ucs_get_time() + iface->config.conn_timeout;
    ucs_list_add_tail(&iface->retry_list, &ep->retry_list);

    status = uct_tcp_ep_register(ep);
    if (status != UCS_OK) {
        ep->fd = -1; /* the caller closes it */
        uct_tcp_ep_free(ep);
        return status;
    }
    return UCS_OK;
}

/* Fills a socket address from a device address and a port. */
static ucs_status_t uct_tcp_sockaddr_from_dev(const uct_device_addr_t *dev,
                                              uint16_t port_nbo,
                                              uct_tcp_sockaddr_t *sa)
{
    const uct_tcp_device_addr_t *addr = (const uct_tcp_device_addr_t *)dev;

    memset(sa, 0, sizeof(*sa));
    if (addr->family == AF_INET) {
        sa->in.sin_family = AF_INET;
        sa->in.sin_port   = port_nbo;
        memcpy(&sa->in.sin_addr, addr->addr, 4);
    } else if (addr->family == AF_INET6) {
        sa->in6.sin6_family = AF_INET6;
        sa->in6.sin6_port   = port_nbo;
        memcpy(&sa->in6.sin6_addr, addr->addr, 16);
    } else {
        ucs_error("tcp: device address of unknown family %u; is it a tcp "
                  "address?",
                  addr->family);
        return UCS_ERR_INVALID_ADDR;
    }
    return UCS_OK;
}

ucs_status_t uct_tcp_ep_create_to_iface(uct_tcp_iface_t *iface,
                                        const uct_ep_params_t *params,
                                        uct_ep_h *ep_p)
{
    uct_tcp_iface_addr_t addr;
    uct_tcp_ep_t *ep;
    ucs_status_t status;
    uint64_t nonce;

    memcpy(&addr, params->iface_addr, sizeof(addr));
    ep = uct_tcp_ep_alloc(iface);
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ++iface->num_user_eps;

    if (uct_tcp_ep_ext_get(ep) == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    status = uct_tcp_sockaddr_from_dev(params->dev_addr, addr.port,
                                       &ep->ext->peer_addr);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_tcp_pair_user_init(ep, &ep->ext->peer_addr, &nonce);
    if (status != UCS_OK) {
        goto err_free;
    }
    status = uct_tcp_ep_queue_handshake(ep, UCT_TCP_CONN_TO_IFACE, addr.secret,
                                        nonce);
    if (status != UCS_OK) {
        goto err_free;
    }

    ep->state              = UCT_TCP_EP_CONNECTING;
    ep->ext->conn_deadline = ucs_get_time() + iface->config.conn_timeout;
    status                 = uct_tcp_ep_connect_start(ep);
    if (status != UCS_OK) {
        goto err_free;
    }

    *ep_p = &ep->super.super;
    return UCS_OK;

err_free:
    uct_tcp_ep_free(ep);
    return status;
}

/* An ep to be connected with uct_ep_connect_to_ep(). */
ucs_status_t uct_tcp_ep_create_for_ep(uct_tcp_iface_t *iface, uct_ep_h *ep_p)
{
    uct_tcp_ep_t *ep;
    ucs_status_t status;
    unsigned id;

    ep = uct_tcp_ep_alloc(iface);
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ++iface->num_user_eps;

    /* unguessable, and not derived from anything another ep shows */
    status = ucs_sys_random_bytes(&ep->cookie, sizeof(ep->cookie));
    if (status != UCS_OK) {
        ucs_error("tcp iface %p: no random bytes for an endpoint address "
                  "cookie (is getrandom or /dev/urandom available?)",
                  (void *)iface);
        uct_tcp_ep_free(ep);
        return status;
    }
    status = ucs_ptr_array_insert(&iface->ep_ids, ep, &id);
    if (status != UCS_OK) {
        uct_tcp_ep_free(ep);
        return status;
    }
    ep->id = id;
    ep->flags |= UCT_TCP_EP_FLAG_TO_EP | UCT_TCP_EP_FLAG_IN_IDS;
    ep->state = UCT_TCP_EP_WAIT_PEER;
    *ep_p     = &ep->super.super;
    return UCS_OK;
}

ucs_status_t uct_tcp_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_addr_t ep_addr;

    if (!(ep->flags & UCT_TCP_EP_FLAG_TO_EP)) {
        ucs_error("tcp ep %p: only an endpoint created without a peer "
                  "address has an endpoint address",
                  (void *)ep);
        return UCS_ERR_INVALID_PARAM;
    }
    ep_addr.port   = (iface->listen_addr.sa.sa_family == AF_INET6)
                         ? iface->listen_addr.in6.sin6_port
                         : iface->listen_addr.in.sin_port;
    ep_addr.ep_id  = ep->id;
    ep_addr.cookie = ep->cookie;
    ep_addr.secret = iface->secret;
    memcpy(addr, &ep_addr, sizeof(ep_addr));
    return UCS_OK;
}

/* Orders two (address, port, ep id) triples: the smaller one connects. */
static int uct_tcp_ep_is_connector(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface          = uct_tcp_ep_iface(ep);
    const uct_tcp_sockaddr_t *local = &iface->listen_addr;
    const uct_tcp_sockaddr_t *peer  = &ep->ext->peer_addr;
    int cmp;

    /* both sides see the same two triples, so they agree */
    cmp = ucs_sockaddr_cmp(&local->sa, &peer->sa, NULL);
    if (cmp != 0) {
        return cmp < 0;
    }
    return ep->id < ep->ext->peer_id;
}

ucs_status_t uct_tcp_ep_connect_to_ep(uct_ep_h tl_ep,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_ep_addr_t *ep_addr)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_ext_t *ext;
    uct_tcp_ep_addr_t addr;
    ucs_status_t status;

    if (!(ep->flags & UCT_TCP_EP_FLAG_TO_EP) ||
        (ep->flags & UCT_TCP_EP_FLAG_PEER_KNOWN)) {
        ucs_error("tcp ep %p: uct_ep_connect_to_ep needs an endpoint "
                  "created without a peer address, connected once",
                  (void *)ep);
        return UCS_ERR_INVALID_PARAM;
    }

    memcpy(&addr, ep_addr, sizeof(addr));
    if (ep->state != UCT_TCP_EP_WAIT_PEER) {
        /* the peer connected first: the connection exists */
        ep->flags |= UCT_TCP_EP_FLAG_PEER_KNOWN;
        return UCS_OK;
    }

    ext = uct_tcp_ep_ext_get(ep);
    if (ext == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    status = uct_tcp_sockaddr_from_dev(dev_addr, addr.port, &ext->peer_addr);
    if (status != UCS_OK) {
        return status;
    }
    ext->peer_id     = addr.ep_id;
    ext->peer_cookie = addr.cookie;
    ep->flags |= UCT_TCP_EP_FLAG_PEER_KNOWN;

    if (!uct_tcp_ep_is_connector(ep)) {
        return UCS_OK; /* the peer connects to us */
    }

    status = uct_tcp_ep_queue_handshake(ep, UCT_TCP_CONN_TO_EP, addr.secret, 0);
    if (status != UCS_OK) {
        return status;
    }
    ep->state          = UCT_TCP_EP_CONNECTING;
    ext->conn_deadline = ucs_get_time() + iface->config.conn_timeout;
    return uct_tcp_ep_connect_start(ep);
}
