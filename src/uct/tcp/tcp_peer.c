/*
 * Remote hosts and their share of the interface's receive buffers.
 *
 * A receive buffer is taken from the pool shared by all connections of
 * an iface only while a message is partial, and then it is "held" by the
 * connection's peer: the remote host, keyed by its IPv4 address or the
 * /64 prefix of its IPv6 address. A peer may hold at most
 * UCX_TCP_PEER_MAX_BUFS buffers, and the pool keeps one buffer free for
 * the next read of anyone. A hold that would break either bound drops
 * the connection that was read least recently among those of the peer
 * over its share (the peer holding the most when the pool runs low):
 * the peer that takes too much is the one that loses, never the
 * connection that asks next, and a connection that keeps its data
 * flowing is the last of its peer to go.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_ep.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

/* The key of the host at @a addr (see uct_tcp_peer_t). IPv4-mapped IPv6
 * addresses count as their IPv4 address. */
static uint64_t uct_tcp_peer_key(const uct_tcp_sockaddr_t *addr)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0,    0,
                                         0, 0, 0, 0, 0xff, 0xff};
    const uint8_t *a;
    uint64_t key;
    uint32_t v4;

    if (addr->sa.sa_family == AF_INET) {
        return ntohl(addr->in.sin_addr.s_addr);
    }
    a = addr->in6.sin6_addr.s6_addr;
    if (!memcmp(a, v4mapped, sizeof(v4mapped))) {
        memcpy(&v4, a + 12, sizeof(v4));
        return ntohl(v4);
    }
    /* the prefixes below 2^32 are not routable, so they never meet an
     * IPv4 key in practice */
    memcpy(&key, a, sizeof(key));
    return key;
}

ucs_status_t uct_tcp_peer_table_init(uct_tcp_peer_table_t *table)
{
    ucs_status_t status;

    status = ucs_hash_init(&table->by_key, 16);
    if (status != UCS_OK) {
        return status;
    }
    ucs_ptr_array_init(&table->by_index, "tcp peers");
    ucs_list_head_init(&table->busy);
    return UCS_OK;
}

void uct_tcp_peer_table_cleanup(uct_tcp_peer_table_t *table)
{
    uct_tcp_peer_t *peer;
    unsigned i;

    /* every ep is gone: anything left is a leak, reported and freed */
    for (i = ucs_ptr_array_next_used(&table->by_index, 0);
         i < table->by_index.size;
         i = ucs_ptr_array_next_used(&table->by_index, i + 1)) {
        if (ucs_ptr_array_lookup(&table->by_index, i, (void **)&peer)) {
            ucs_warn("tcp: peer 0x%" PRIx64 " still has %u references",
                     peer->key, peer->refs);
            free(peer);
        }
    }
    ucs_ptr_array_cleanup(&table->by_index, 0);
    ucs_hash_cleanup(&table->by_key);
}

uint32_t uct_tcp_peer_get(uct_tcp_iface_t *iface,
                          const uct_tcp_sockaddr_t *addr)
{
    uct_tcp_peer_table_t *table = &iface->peers;
    uint64_t key                = uct_tcp_peer_key(addr);
    uct_tcp_peer_t *peer;
    unsigned index;

    if (ucs_hash_get(&table->by_key, key, (void **)&peer) == UCS_OK) {
        ++peer->refs;
        return peer->index;
    }

    peer = calloc(1, sizeof(*peer));
    if (peer == NULL) {
        goto err;
    }
    if (ucs_ptr_array_insert(&table->by_index, peer, &index) != UCS_OK) {
        goto err_free;
    }
    if (ucs_hash_put(&table->by_key, key, peer) != UCS_OK) {
        ucs_ptr_array_remove(&table->by_index, index, NULL);
        goto err_free;
    }
    peer->key   = key;
    peer->index = index;
    peer->refs  = 1;
    ucs_list_head_init(&peer->holders);
    ucs_list_head_init(&peer->list);
    return index;

err_free:
    free(peer);
err:
    ucs_error("tcp iface %p: no memory to account for a peer's receive "
              "buffers; close connections or raise the memory limit",
              (void *)iface);
    return UCT_TCP_PEER_NONE;
}

void uct_tcp_peer_put(uct_tcp_iface_t *iface, uint32_t index)
{
    uct_tcp_peer_t *peer = uct_tcp_peer_of(iface, index);

    if ((peer == NULL) || (--peer->refs > 0)) {
        return;
    }
    ucs_assert(peer->held == 0);
    ucs_hash_remove(&iface->peers.by_key, peer->key, NULL);
    ucs_ptr_array_remove(&iface->peers.by_index, index, NULL);
    free(peer);
}

ucs_status_t uct_tcp_ep_set_peer(uct_tcp_ep_t *ep,
                                 const uct_tcp_sockaddr_t *addr)
{
    if (ep->peer == UCT_TCP_PEER_NONE) {
        ep->peer = uct_tcp_peer_get(uct_tcp_ep_iface(ep), addr);
        if (ep->peer == UCT_TCP_PEER_NONE) {
            return UCS_ERR_NO_MEMORY;
        }
    }
    return UCS_OK;
}

/* The holder read least recently of the peer that holds the most
 * buffers (the first such peer of the busy list on a tie), never @a
 * spare; NULL when only @a spare holds anything. */
static uct_tcp_rx_t *uct_tcp_peer_largest_holder(uct_tcp_iface_t *iface,
                                                 const uct_tcp_rx_t *spare)
{
    uct_tcp_peer_t *peer, *best = NULL;
    uct_tcp_rx_t *rx;

    ucs_list_for_each(peer, &iface->peers.busy, list) {
        rx = ucs_list_head(&peer->holders, uct_tcp_rx_t, list);
        if ((rx == spare) && (peer->held == 1)) {
            continue;
        }
        if ((best == NULL) || (peer->held > best->held)) {
            best = peer;
        }
    }
    if (best == NULL) {
        return NULL;
    }
    rx = ucs_list_head(&best->holders, uct_tcp_rx_t, list);
    return (rx != spare) ? rx : ucs_list_next(&rx->list, uct_tcp_rx_t, list);
}

/* Drops the connection that holds @a rx. */
static void uct_tcp_iface_rx_evict(uct_tcp_iface_t *iface, uct_tcp_rx_t *rx,
                                   int pool_low)
{
    uct_tcp_ep_t *ep = rx->ep;
    char str[UCS_SOCKADDR_STRING_LEN];

    ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_SHARE],
                     "tcp iface %p: %s holds %u receive buffers with "
                     "partial messages (%s); closing the connection of it "
                     "read least recently (raise UCX_TCP_PEER_MAX_BUFS=%u "
                     "or UCX_TCP_MAX_BUFS=%u if it is legitimate)",
                     (void *)iface, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                     rx->peer->held,
                     pool_low ? "the most of any peer, and the pool is low"
                              : "over its share",
                     iface->config.peer_max_bufs, iface->config.max_bufs);
    ++iface->rx_evicted;
    uct_tcp_ep_fail(ep, UCS_ERR_EXCEEDS_LIMIT);
}

/* An eviction released nothing (a bug): the asker goes instead of a
 * loop that never ends */
static int uct_tcp_ep_rx_hold_stuck(uct_tcp_ep_t *ep)
{
    ucs_error("tcp ep %p: dropping a connection released no receive "
              "buffer; dropping this one instead",
              (void *)ep);
    uct_tcp_ep_fail(ep, UCS_ERR_EXCEEDS_LIMIT);
    return 0;
}

int uct_tcp_ep_rx_hold(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_peer_t *peer   = uct_tcp_peer_of(iface, ep->peer);
    uct_tcp_rx_t *rx       = ep->rx;
    uct_tcp_rx_t *victim;
    unsigned held;

    if (peer == NULL) {
        return 1; /* no socket, so nothing more will be read */
    }
    rx->ep   = ep;
    rx->peer = peer;
    ucs_list_add_tail(&peer->holders, &rx->list);
    if (peer->held++ == 0) {
        ucs_list_add_tail(&iface->peers.busy, &peer->list);
    }

    /* rx is the newest holder of its peer, so never the first of a peer
     * holding more than one; each eviction releases one buffer */
    while (peer->held > iface->config.peer_max_bufs) {
        held   = peer->held;
        victim = ucs_list_head(&peer->holders, uct_tcp_rx_t, list);
        uct_tcp_iface_rx_evict(iface, victim, 0);
        if (peer->held >= held) {
            return uct_tcp_ep_rx_hold_stuck(ep);
        }
    }
    /* one buffer stays free for the next read, whoever it is */
    while ((iface->config.max_bufs != UINT_MAX) &&
           (iface->rx_held >= iface->config.max_bufs)) {
        held   = iface->rx_held;
        victim = uct_tcp_peer_largest_holder(iface, rx);
        if (victim == NULL) {
            uct_tcp_iface_rx_evict(iface, rx, 1);
            return 0;
        }
        uct_tcp_iface_rx_evict(iface, victim, 1);
        if (iface->rx_held >= held) {
            return uct_tcp_ep_rx_hold_stuck(ep);
        }
    }
    return 1;
}

void uct_tcp_rx_unhold(uct_tcp_rx_t *rx)
{
    uct_tcp_peer_t *peer = rx->peer;

    ucs_list_del(&rx->list);
    rx->peer = NULL;
    rx->ep   = NULL;
    if (--peer->held == 0) {
        ucs_list_del(&peer->list);
    }
}

void uct_tcp_rx_touch(uct_tcp_rx_t *rx)
{
    ucs_list_del(&rx->list);
    ucs_list_add_tail(&rx->peer->holders, &rx->list);
}
