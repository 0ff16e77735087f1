/*
 * One connection per pair of CONNECT_TO_IFACE endpoints.
 *
 * Two processes that each connect an ep to the other's iface would open
 * two connections, one per direction, and a request and its answer could
 * then travel on different streams. Instead the ep of the higher iface
 * (by address and port) moves to the connection the ep of the lower iface
 * opened, so that both eps of the pair share one ordered stream:
 *
 *  - An ep to a higher iface takes a slot of iface->ep_ids and draws a
 *    nonce: the slot in the upper 32 bits, 32 random bits below. It sends
 *    the nonce in its handshake; only the iface it connects to learns it.
 *    The ep keeps the slot until a SWITCH names it (8-16 bytes of the
 *    table per ep, the same as a CONNECT_TO_EP ep's id).
 *  - At the higher iface, the internal ep serving that connection is kept
 *    in iface->pair_peers under a key of the lower iface's address; a
 *    user ep to the lower iface finds it there (or, created first, waits
 *    there for it).
 *  - The user ep then sends SWITCH(nonce) on its own connection, which
 *    reaches the lower iface at the address the user gave, and holds
 *    everything it sends after it. The lower iface answers SWITCH_ACK on
 *    that connection once it handled all that came before (so requests
 *    sent before the switch are answered before it) if the nonce is one
 *    of its eps', else SWITCH_ACK with DENIED.
 *  - On SWITCH_ACK the user ep takes over the internal ep's socket, its
 *    receive buffer and its queued answers, appends what it held, and
 *    closes its own connection. On DENIED it stays where it was.
 *
 * So an ep only ever moves to a connection whose other end proved, over a
 * connection this side opened to the address it was given, that it opened
 * it: a third party that claims a lower iface's address in a handshake
 * does not know the nonce and gets DENIED. The connection an ep moves to
 * keeps its order; what the ep sent before the switch was handled before
 * the answer, what it sends after goes on the new stream.
 *
 * A user ep whose peer's end is a user ep too (UCT_TCP_EP_FLAG_PEER_USER)
 * is not closed when destroyed: it becomes internal and sends UNPAIR, so
 * the peer's ep keeps its connection; a side that is internal when UNPAIR
 * arrives closes it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_ep.h"

#include <ucs/sys/sys.h>

/* Key of an iface address in iface->pair_peers (32 bits: kept in ep->id;
 * two addresses with one key only cost a DENIED switch) */
uint32_t uct_tcp_pair_key(const uct_tcp_sockaddr_t *addr)
{
    uint64_t h, w[2] = {0, 0};

    if (addr->sa.sa_family == AF_INET6) {
        memcpy(w, &addr->in6.sin6_addr, 16);
        h = ucs_hash_u64(((uint64_t)AF_INET6 << 16) | addr->in6.sin6_port);
    } else {
        memcpy(w, &addr->in.sin_addr, 4);
        h = ucs_hash_u64(((uint64_t)AF_INET << 16) | addr->in.sin_port);
    }
    h = ucs_hash_u64(h ^ w[0]);
    h = ucs_hash_u64(h ^ w[1]);
    return (uint32_t)(h ^ (h >> 32));
}

/* Negative when this iface is the lower of the pair, positive when the
 * higher one, 0 when @a peer is this iface itself (no pairing) */
int uct_tcp_pair_side(const uct_tcp_iface_t *iface,
                      const uct_tcp_sockaddr_t *peer)
{
    ucs_status_t status;
    int cmp;

    cmp = ucs_sockaddr_cmp(&iface->listen_addr.sa, &peer->sa, &status);
    return (status == UCS_OK) ? cmp : 0;
}

void uct_tcp_pair_forget(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_t *reserved;
    void *value;

    /* a user ep that goes while its SWITCH is out gives back the internal
     * ep it reserved (another ep may ask for it; a used nonce is DENIED) */
    if (!uct_tcp_ep_is_internal(ep) && (ep->flags & UCT_TCP_EP_FLAG_SWITCH) &&
        (ucs_hash_get(&iface->pair_peers, ep->id, &value) == UCS_OK)) {
        reserved = value;
        if (uct_tcp_ep_is_internal(reserved) &&
            (reserved->cookie == ep->cookie)) {
            reserved->flags &= ~UCT_TCP_EP_FLAG_SWITCH;
        }
    }

    if ((ep->flags & UCT_TCP_EP_FLAG_IN_PAIRS) &&
        (ucs_hash_get(&iface->pair_peers, ep->id, &value) == UCS_OK) &&
        (value == ep)) {
        ucs_hash_remove(&iface->pair_peers, ep->id, NULL);
    }
    if (ep->flags & UCT_TCP_EP_FLAG_IN_NONCES) {
        ucs_ptr_array_remove(&iface->ep_ids, ep->id, NULL);
        ep->flags &= ~UCT_TCP_EP_FLAG_IN_IDS;
    }
    ep->flags &= ~(UCT_TCP_EP_FLAG_IN_PAIRS | UCT_TCP_EP_FLAG_IN_NONCES);
}

/* Queues SWITCH(@a nonce) on @a ep; what is queued after it waits for
 * the answer. 0 if out of send buffers (logged; @a ep stays where it is). */
static int uct_tcp_pair_switch_start(uct_tcp_ep_t *ep, uint64_t nonce)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char msg[sizeof(uct_tcp_hdr_t) + sizeof(uint64_t)];
    uct_tcp_tx_t *tx;

    tx = uct_tcp_ep_tx_buf_get(ep);
    if (tx == NULL) {
        return 0;
    }
    uct_tcp_hdr_write(msg, UCT_TCP_OP_SWITCH, sizeof(nonce), 0);
    memcpy(msg + sizeof(uct_tcp_hdr_t), &nonce, sizeof(nonce));
    memcpy(tx->data, msg, sizeof(msg));
    tx->is_switch = 1;
    ucs_list_add_tail(&ep->tx_list, &tx->list);
    uct_tcp_ep_tx_commit(ep, tx, sizeof(msg));
    uct_tcp_ep_defer_stop(ep);

    ep->cookie = nonce;
    ep->flags |= UCT_TCP_EP_FLAG_SWITCH | UCT_TCP_EP_FLAG_SWITCH_QUEUED;
    if (ep->state == UCT_TCP_EP_CONNECTED) {
        ep->state = UCT_TCP_EP_SWITCHING;
    }
    ucs_debug("tcp iface %p: ep %p asks to move to the connection its peer "
              "opened",
              (void *)iface, (void *)ep);
    uct_tcp_ep_tx_kick(ep);
    return 1;
}

ucs_status_t uct_tcp_pair_user_init(uct_tcp_ep_t *ep,
                                    const uct_tcp_sockaddr_t *peer,
                                    uint64_t *nonce_p)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    int side               = uct_tcp_pair_side(iface, peer);
    uct_tcp_ep_t *other;
    uint32_t key, rnd;
    unsigned id;

    *nonce_p = 0;
    if (side < 0) {
        /* the peer's ep will move to our connection: name it */
        if ((ucs_sys_random_bytes(&rnd, sizeof(rnd)) != UCS_OK) ||
            (ucs_ptr_array_insert(&iface->ep_ids, ep, &id) != UCS_OK)) {
            return UCS_OK; /* not shared; still correct */
        }
        ep->id     = id;
        ep->cookie = ((uint64_t)id << 32) | rnd;
        ep->flags |= UCT_TCP_EP_FLAG_IN_IDS | UCT_TCP_EP_FLAG_IN_NONCES;
        *nonce_p = ep->cookie;
    } else if (side > 0) {
        key = uct_tcp_pair_key(peer);
        if (ucs_hash_get(&iface->pair_peers, key, (void **)&other) != UCS_OK) {
            /* wait for the peer's connection */
            if (ucs_hash_put(&iface->pair_peers, key, ep) == UCS_OK) {
                ep->id = key;
                ep->flags |= UCT_TCP_EP_FLAG_IN_PAIRS;
            }
        } else if (uct_tcp_ep_is_internal(other) &&
                   !(other->flags & UCT_TCP_EP_FLAG_SWITCH)) {
            /* the peer's connection is here: move to it once our own
             * connection confirms it (SWITCH on an internal ep: reserved
             * for the ep that asked) */
            ep->id = key;
            if (uct_tcp_pair_switch_start(ep, other->cookie)) {
                other->flags |= UCT_TCP_EP_FLAG_SWITCH;
            }
        }
    }
    return UCS_OK;
}

void uct_tcp_pair_accepted(uct_tcp_ep_t *ep, const uct_tcp_handshake_t *hs,
                           const uct_tcp_sockaddr_t *from)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_t *other;
    uint32_t key;

    ep->flags |= UCT_TCP_EP_FLAG_PEER_USER; /* the connector is a user ep */
    if ((hs->src_nonce == 0) || (uct_tcp_pair_side(iface, from) <= 0)) {
        return;
    }

    key        = uct_tcp_pair_key(from);
    ep->id     = key;
    ep->cookie = hs->src_nonce;
    if (ucs_hash_get(&iface->pair_peers, key, (void **)&other) == UCS_OK) {
        if (uct_tcp_ep_is_internal(other)) {
            return; /* another connection from there: not shared */
        }
        /* a user ep waits for this connection */
        ucs_hash_remove(&iface->pair_peers, key, NULL);
        other->flags &= ~UCT_TCP_EP_FLAG_IN_PAIRS;
        if (ucs_hash_put(&iface->pair_peers, key, ep) != UCS_OK) {
            return;
        }
        ep->flags |= UCT_TCP_EP_FLAG_IN_PAIRS;
        if (uct_tcp_pair_switch_start(other, hs->src_nonce)) {
            ep->flags |= UCT_TCP_EP_FLAG_SWITCH; /* reserved for it */
        }
        return;
    }
    if (ucs_hash_put(&iface->pair_peers, key, ep) == UCS_OK) {
        ep->flags |= UCT_TCP_EP_FLAG_IN_PAIRS;
    }
}

/* SWITCH: the peer's ep asks to move to the connection our ep of the
 * nonce opened to it. */
ucs_status_t uct_tcp_ep_rx_switch(uct_tcp_ep_t *ep, const uct_tcp_hdr_t *hdr,
                                  char *payload, size_t avail)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uint8_t flags          = UCT_TCP_HDR_FLAG_DENIED;
    uct_tcp_ep_t *target;
    uct_tcp_hdr_t ack;
    uint64_t nonce;
    void *value;

    if (hdr->length != sizeof(nonce)) {
        uct_tcp_ep_protocol_error(ep, "malformed switch request");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (avail < sizeof(nonce)) {
        return UCS_ERR_NO_PROGRESS;
    }
    memcpy(&nonce, payload, sizeof(nonce));
    ep->rx->offset += sizeof(*hdr) + sizeof(nonce);

    /* the slot says where to look, the whole nonce must match */
    if (!ucs_ptr_array_lookup(&iface->ep_ids, (unsigned)(nonce >> 32),
                              &value)) {
        value = NULL;
    }
    target = value;
    if ((target != NULL) && (target->flags & UCT_TCP_EP_FLAG_IN_NONCES) &&
        uct_tcp_secret_equal(target->cookie, nonce) && (target != ep) &&
        (target->state == UCT_TCP_EP_CONNECTED)) {
        /* a nonce names one connection, once */
        uct_tcp_pair_forget(target);
        target->flags |= UCT_TCP_EP_FLAG_PEER_USER;
        flags = 0;
    }

    uct_tcp_hdr_init(&ack, UCT_TCP_OP_SWITCH_ACK, 0, flags);
    if (uct_tcp_ep_ctrl_send(ep, &ack, sizeof(ack)) != UCS_OK) {
        uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
        return UCS_ERR_NO_MEMORY;
    }
    return UCS_OK;
}

/* The switch is over: @a ep sends what it held on its own connection. */
static void uct_tcp_pair_switch_end(uct_tcp_ep_t *ep)
{
    ep->flags &= ~UCT_TCP_EP_FLAG_SWITCH;
    if (ep->state == UCT_TCP_EP_SWITCHING) {
        ep->state = UCT_TCP_EP_CONNECTED;
    }
    uct_tcp_ep_update_events(ep);
}

/* Whether internal @a from can hand its connection over now: handshake
 * done, nothing streamed or stopped, no side state in use. */
static int uct_tcp_pair_can_move(uct_tcp_ep_t *from, uint64_t nonce)
{
    if (!uct_tcp_ep_is_internal(from) || (from->cookie != nonce) ||
        (from->state != UCT_TCP_EP_CONNECTED) ||
        (from->rx_phase != UCT_TCP_RX_MESSAGES) || (from->rx_stream_id != 0) ||
        (from->flags & UCT_TCP_EP_FLAG_RX_STOPPED)) {
        return 0;
    }
    uct_tcp_ep_ext_release_idle(from);
    return from->ext == NULL;
}

/* @a ep takes the connection of internal @a from, whose queued answers go
 * before what @a ep held. */
static int uct_tcp_pair_move(uct_tcp_ep_t *ep, uct_tcp_ep_t *from)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    if (ucs_event_set_mod(iface->event_set, from->fd,
                          (ucs_event_set_types_t)from->events, ep) != UCS_OK) {
        return 0;
    }
    uct_tcp_ep_defer_stop(from);

    /* our own connection: everything on it was answered */
    uct_tcp_ep_close_socket(ep);
    uct_tcp_ep_release_rx(ep);
    uct_tcp_peer_put(iface, ep->peer);

    ep->fd     = from->fd;
    ep->events = from->events;
    ep->rx     = from->rx;
    ep->peer   = from->peer;
    if ((ep->rx != NULL) && (ep->rx->peer != NULL)) {
        ep->rx->ep = ep;
    }
    ucs_list_splice_tail(&from->tx_list, &ep->tx_list);
    ucs_list_splice_tail(&ep->tx_list, &from->tx_list);
    ep->tx_queued += from->tx_queued;
    ep->tx_ops += from->tx_ops;
    ep->flags |=
        from->flags & (UCT_TCP_EP_FLAG_PEER_USER | UCT_TCP_EP_FLAG_PUT_DENIED);
    ep->rx_phase = UCT_TCP_RX_MESSAGES;
    if (iface->hot_ep == from) {
        iface->hot_ep = ep;
    }

    from->fd        = -1;
    from->events    = 0;
    from->rx        = NULL;
    from->peer      = UCT_TCP_PEER_NONE;
    from->tx_queued = 0;
    from->tx_ops    = 0;
    uct_tcp_ep_free(from);

    ep->cookie = 0;
    ++iface->pair_switched;
    uct_tcp_pair_switch_end(ep);
    return 1;
}

/* SWITCH_ACK: the answer to our SWITCH, after everything it sent on this
 * connection before. */
ucs_status_t uct_tcp_ep_rx_switch_ack(uct_tcp_ep_t *ep,
                                      const uct_tcp_hdr_t *hdr, char *payload,
                                      size_t avail)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_t *from     = NULL;
    void *value;

    if ((hdr->length != 0) || uct_tcp_ep_is_internal(ep) ||
        ((ep->flags &
          (UCT_TCP_EP_FLAG_SWITCH | UCT_TCP_EP_FLAG_SWITCH_QUEUED)) !=
         UCT_TCP_EP_FLAG_SWITCH)) {
        uct_tcp_ep_protocol_error(ep, "answer to a switch that was not "
                                      "asked for");
        return UCS_ERR_CONNECTION_RESET;
    }
    ep->rx->offset += sizeof(*hdr);

    if (ucs_hash_get(&iface->pair_peers, ep->id, &value) == UCS_OK) {
        from = value;
    }
    if (hdr->flags & UCT_TCP_HDR_FLAG_DENIED) {
        ucs_debug("tcp ep %p: the peer denied the switch; staying on our "
                  "connection",
                  (void *)ep);
    } else if ((from != NULL) && (ep->rx->offset == ep->rx->length) &&
               uct_tcp_pair_can_move(from, ep->cookie) &&
               uct_tcp_pair_move(ep, from)) {
        return UCS_ERR_NO_PROGRESS; /* the receive buffer changed */
    }
    if ((from != NULL) && (from->cookie == ep->cookie)) {
        uct_tcp_pair_forget(from); /* its nonce is used up */
    }
    ep->cookie = 0;
    uct_tcp_pair_switch_end(ep);
    /* wait for another connection from the peer */
    if (ucs_hash_put(&iface->pair_peers, ep->id, ep) == UCS_OK) {
        ep->flags |= UCT_TCP_EP_FLAG_IN_PAIRS;
    }
    return UCS_OK;
}

/* UNPAIR: the user ep at the other end was destroyed. */
ucs_status_t uct_tcp_ep_rx_unpair(uct_tcp_ep_t *ep, const uct_tcp_hdr_t *hdr,
                                  char *payload, size_t avail)
{
    if (hdr->length != 0) {
        uct_tcp_ep_protocol_error(ep, "malformed unpair message");
        return UCS_ERR_CONNECTION_RESET;
    }
    ep->rx->offset += sizeof(*hdr);
    ep->flags &= ~UCT_TCP_EP_FLAG_PEER_USER;
    if (uct_tcp_ep_is_internal(ep)) {
        /* nobody uses it on either side */
        uct_tcp_ep_fail(ep, UCS_ERR_CANCELED);
        return UCS_ERR_CANCELED;
    }
    return UCS_OK;
}

int uct_tcp_pair_ep_release(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_hdr_t hdr;

    if (!(ep->flags & UCT_TCP_EP_FLAG_PEER_USER) ||
        (ep->state != UCT_TCP_EP_CONNECTED) || (ep->fd < 0) ||
        (ep->rx_phase != UCT_TCP_RX_MESSAGES) || (ep->tx_ops != 0) ||
        (ep->rx_stream_id != 0) || (ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED)) {
        return 0;
    }
    uct_tcp_ep_ext_release_idle(ep);
    if (ep->ext != NULL) {
        return 0; /* GETs or flushes outstanding: closed */
    }

    uct_tcp_hdr_init(&hdr, UCT_TCP_OP_UNPAIR, 0, 0);
    if (uct_tcp_ep_ctrl_send(ep, &hdr, sizeof(hdr)) != UCS_OK) {
        return 0;
    }
    uct_pending_group_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    uct_tcp_pair_forget(ep);
    ep->flags |= UCT_TCP_EP_FLAG_INTERNAL;
    ep->flags &= ~UCT_TCP_EP_FLAG_PUT_UNACKED;
    --iface->num_user_eps;
    ++iface->pair_unpaired;
    uct_tcp_ep_tx_kick(ep);
    return 1;
}
