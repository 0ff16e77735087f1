/*
 * ud_verbs interface tables: endpoint ids, address handles (one per remote
 * port, shared), connections (address handle, remote QP, connection number
 * -> ep) and the packets held after a gap until the missing ones arrive.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ud.h"

#include <ucs/datastruct/hash.h>

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Endpoint ids
 */

ucs_status_t uct_ud_iface_add_ep(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    unsigned size, i, id;
    uct_ud_ep_t **slots;

    if (iface->eps.count >= iface->eps.size / 4 * 3) {
        /* grow at three quarters full, by half: a free id is found
         * within a few looks, and the table costs 10.7-16 bytes per ep */
        size = ucs_max(64, iface->eps.size + iface->eps.size / 2);
        if (size > UCT_UD_EP_ID_MAX + 1) {
            size = UCT_UD_EP_ID_MAX + 1;
        }
        if (iface->eps.count >= size) {
            ucs_error("ud_verbs iface %s: all %u endpoint ids are in use; "
                      "destroy endpoints or open another interface",
                      iface->super.super.dev_name, size);
            return UCS_ERR_NO_RESOURCE;
        }
        if (size != iface->eps.size) {
            slots = realloc(iface->eps.slots, size * sizeof(*slots));
            if (slots == NULL) {
                ucs_error("ud_verbs iface %s: no memory for %u endpoint "
                          "ids",
                          iface->super.super.dev_name, size);
                return UCS_ERR_NO_MEMORY;
            }
            memset(slots + iface->eps.size, 0,
                   (size - iface->eps.size) * sizeof(*slots));
            iface->eps.slots = slots;
            iface->eps.size  = size;
        }
    }

    /* ids are not reused at once: a late packet of a destroyed ep must not
     * reach a new one */
    for (i = 0; i < iface->eps.size; ++i) {
        id = (iface->eps.next + i) % iface->eps.size;
        if (iface->eps.slots[id] == NULL) {
            iface->eps.slots[id] = ep;
            iface->eps.next      = (id + 1) % iface->eps.size;
            ++iface->eps.count;
            iface->eps.used = ucs_max(iface->eps.used, id + 1);
            ep->id          = id;
            return UCS_OK;
        }
    }
    return UCS_ERR_NO_RESOURCE; /* not reached: never full */
}

void uct_ud_iface_remove_ep(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    if ((ep->id < iface->eps.size) && (iface->eps.slots[ep->id] == ep)) {
        iface->eps.slots[ep->id] = NULL;
        --iface->eps.count;
    }
}

/* ------------------------------------------------------------------------
 * Address handles: one per remote port, shared
 */

static unsigned uct_ud_ah_hash(const uint8_t *gid, uint16_t lid)
{
    uint64_t a, b;

    memcpy(&a, gid, sizeof(a));
    memcpy(&b, gid + 8, sizeof(b));
    return (unsigned)ucs_hash_u64(a ^ ucs_hash_u64(b ^ lid));
}

static ucs_status_t uct_ud_iface_ah_grow(uct_ud_iface_t *iface)
{
    unsigned size = (iface->ahs.mask + 1) * 2, i, b;
    uct_ud_ah_t **buckets, *ah, *next;

    buckets = calloc(size, sizeof(*buckets));
    if (buckets == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i <= iface->ahs.mask; ++i) {
        for (ah = iface->ahs.buckets[i]; ah != NULL; ah = next) {
            next       = ah->next;
            b          = uct_ud_ah_hash(ah->gid, ah->lid) & (size - 1);
            ah->next   = buckets[b];
            buckets[b] = ah;
        }
    }
    free(iface->ahs.buckets);
    iface->ahs.buckets = buckets;
    iface->ahs.mask    = size - 1;
    return UCS_OK;
}

ucs_status_t uct_ud_iface_get_ah(uct_ud_iface_t *iface,
                                 const uct_ib_device_addr_t *addr,
                                 uct_ud_ah_t **ah_p)
{
    uint16_t lid;
    unsigned b;
    uct_ud_ah_t *ah;
    struct ibv_ah_attr ah_attr;

    memcpy(&lid, &addr->lid, sizeof(lid));
    b = uct_ud_ah_hash(addr->gid, lid) & iface->ahs.mask;
    for (ah = iface->ahs.buckets[b]; ah != NULL; ah = ah->next) {
        if ((ah->lid == lid) && !memcmp(ah->gid, addr->gid, 16)) {
            *ah_p = ah;
            return UCS_OK;
        }
    }

    if ((iface->ahs.count >= iface->ahs.mask + 1) &&
        (uct_ud_iface_ah_grow(iface) == UCS_OK)) {
        b = uct_ud_ah_hash(addr->gid, lid) & iface->ahs.mask;
    }

    ah = calloc(1, sizeof(*ah));
    if (ah == NULL) {
        ucs_error("ud_verbs iface %s: no memory for an address handle",
                  iface->super.super.dev_name);
        return UCS_ERR_NO_MEMORY;
    }
    uct_ib_iface_fill_ah_attr(&iface->super, addr, &ah_attr);
    ah->ah = ibv_create_ah(uct_ib_iface_md(&iface->super)->pd, &ah_attr);
    if (ah->ah == NULL) {
        ucs_error("ud_verbs iface %s: ibv_create_ah failed: %m; the "
                  "device may be out of address handles (max_ah)",
                  iface->super.super.dev_name);
        free(ah);
        return UCS_ERR_NO_RESOURCE;
    }
    memcpy(ah->gid, addr->gid, 16);
    ah->lid               = lid;
    ah->path_mtu          = (uint8_t)uct_ib_iface_peer_mtu(&iface->super, addr);
    ah->next              = iface->ahs.buckets[b];
    iface->ahs.buckets[b] = ah;
    ++iface->ahs.count;
    *ah_p = ah;
    return UCS_OK;
}

uct_ud_ah_peer_t *uct_ud_ah_peer(uct_ud_ah_t *ah, uint32_t qp_num, int add)
{
    uct_ud_ah_peer_t *peers;
    unsigned i;

    for (i = 0; i < ah->num_peers; ++i) {
        if (ah->peers[i].qp_num == qp_num) {
            return &ah->peers[i];
        }
    }
    if (!add) {
        return NULL;
    }
    peers = realloc(ah->peers, (ah->num_peers + 1) * sizeof(*ah->peers));
    if (peers == NULL) {
        return NULL;
    }
    ah->peers = peers;
    memset(&peers[ah->num_peers], 0, sizeof(*peers));
    peers[ah->num_peers].qp_num = qp_num;
    return &peers[ah->num_peers++];
}

ucs_status_t uct_ud_ah_next_conn_sn(uct_ud_ah_t *ah, uint32_t qp_num,
                                    uint32_t *conn_sn_p)
{
    uct_ud_ah_peer_t *peer = uct_ud_ah_peer(ah, qp_num, 1);

    if (peer == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    *conn_sn_p = peer->next_conn_sn++;
    return UCS_OK;
}

void uct_ud_iface_ahs_cleanup(uct_ud_iface_t *iface)
{
    uct_ud_ah_t *ah, *next;
    unsigned i;

    for (i = 0; i <= iface->ahs.mask; ++i) {
        for (ah = iface->ahs.buckets[i]; ah != NULL; ah = next) {
            next = ah->next;
            if (ibv_destroy_ah(ah->ah) != 0) {
                ucs_warn("ud_verbs iface %s: ibv_destroy_ah failed: %m",
                         iface->super.super.dev_name);
            }
            free(ah->peers);
            free(ah->secrets);
            free(ah);
        }
    }
    free(iface->ahs.buckets);
}

/* ------------------------------------------------------------------------
 * Connections: (address handle, remote QP, connection number) -> ep
 */

static unsigned uct_ud_conn_hash(const uct_ud_ah_t *ah, uint32_t qp_num,
                                 uint32_t conn_sn)
{
    return (unsigned)ucs_hash_u64(
        (uintptr_t)ah ^ ucs_hash_u64(((uint64_t)qp_num << 32) | conn_sn));
}

/* The ep of id @a id in the connection table (every ep there has its id) */
static UCS_F_ALWAYS_INLINE uct_ud_ep_t *
uct_ud_conn_ep(const uct_ud_iface_t *iface, uint32_t id)
{
    uct_ud_ep_t *ep = uct_ud_iface_ep(iface, id);

    ucs_assert((ep != NULL) && (ep->flags & UCT_UD_EP_FLAG_IN_CONN));
    return ep;
}

uct_ud_ep_t *uct_ud_iface_conn_find(const uct_ud_iface_t *iface,
                                    const uct_ud_ah_t *ah, uint32_t qp_num,
                                    uint32_t conn_sn)
{
    uint32_t id;
    uct_ud_ep_t *ep;

    id =
        iface->conns
            .buckets[uct_ud_conn_hash(ah, qp_num, conn_sn) & iface->conns.mask];
    for (; id != UCT_UD_CONN_NONE; id = ep->conn_next) {
        ep = uct_ud_conn_ep(iface, id);
        if ((ep->ah == ah) && (ep->dest_qpn == qp_num) &&
            (ep->conn_sn == conn_sn)) {
            return ep;
        }
    }
    return NULL;
}

/* Doubles the buckets (keeping the old ones when there is no memory) */
static void uct_ud_iface_conn_grow(uct_ud_iface_t *iface)
{
    unsigned size = (iface->conns.mask + 1) * 2, i, b;
    uint32_t *buckets, id, next;
    uct_ud_ep_t *e;

    buckets = malloc(size * sizeof(*buckets));
    if (buckets == NULL) {
        return;
    }
    memset(buckets, 0xff, size * sizeof(*buckets)); /* UCT_UD_CONN_NONE */
    for (i = 0; i <= iface->conns.mask; ++i) {
        for (id = iface->conns.buckets[i]; id != UCT_UD_CONN_NONE; id = next) {
            e    = uct_ud_conn_ep(iface, id);
            next = e->conn_next;
            b = uct_ud_conn_hash(e->ah, e->dest_qpn, e->conn_sn) & (size - 1);
            e->conn_next = buckets[b];
            buckets[b]   = id;
        }
    }
    free(iface->conns.buckets);
    iface->conns.buckets = buckets;
    iface->conns.mask    = size - 1;
}

ucs_status_t uct_ud_iface_conn_add(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    unsigned b;

    /* two eps a bucket on average at most: 2-4 bytes per ep, and a CREQ
     * (the only lookup) looks at a few */
    if (iface->conns.count >= 2 * (iface->conns.mask + 1)) {
        uct_ud_iface_conn_grow(iface);
    }
    b = uct_ud_conn_hash(ep->ah, ep->dest_qpn, ep->conn_sn) & iface->conns.mask;
    ep->conn_next           = iface->conns.buckets[b];
    iface->conns.buckets[b] = ep->id;
    ++iface->conns.count;
    ep->flags |= UCT_UD_EP_FLAG_IN_CONN;
    return UCS_OK;
}

void uct_ud_iface_conn_remove(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    uint32_t *idp;

    if (!(ep->flags & UCT_UD_EP_FLAG_IN_CONN)) {
        return;
    }
    idp = &iface->conns
               .buckets[uct_ud_conn_hash(ep->ah, ep->dest_qpn, ep->conn_sn) &
                        iface->conns.mask];
    for (; *idp != UCT_UD_CONN_NONE;
         idp = &uct_ud_conn_ep(iface, *idp)->conn_next) {
        if (*idp == ep->id) {
            *idp = ep->conn_next;
            --iface->conns.count;
            break;
        }
    }
    ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_IN_CONN;
}

/* ------------------------------------------------------------------------
 * Packets held after a gap: open addressing over (ep id, psn), removals
 * shift the entries after them back (no tombstones). Beside them, what
 * each peer (remote QP) holds, in the same kind of table keyed by
 * (address handle, QP number), with an entry only while it holds
 * something: at most ooo.max entries.
 */

static UCS_F_ALWAYS_INLINE unsigned
uct_ud_ooo_home(const uct_ud_iface_t *iface, uint32_t ep_id, uint16_t psn)
{
    return (unsigned)ucs_hash_u64(((uint64_t)ep_id << 16) | psn) &
           iface->ooo.mask;
}

static UCS_F_ALWAYS_INLINE int uct_ud_ooo_find(const uct_ud_iface_t *iface,
                                               uint32_t ep_id, uint16_t psn)
{
    unsigned i = uct_ud_ooo_home(iface, ep_id, psn);
    uct_ud_rx_desc_t *r;

    while ((r = iface->ooo.slots[i]) != NULL) {
        if ((r->ep_id == ep_id) && (r->psn == psn)) {
            return (int)i;
        }
        i = (i + 1) & iface->ooo.mask;
    }
    return -1;
}

static unsigned uct_ud_ooo_peer_home(const uct_ud_iface_t *iface,
                                     const uct_ud_ah_t *ah, uint32_t qp_num)
{
    return (unsigned)ucs_hash_u64((uintptr_t)ah ^ ucs_hash_u64(qp_num)) &
           iface->ooo.peers_mask;
}

/* The entry of peer (@a ah, @a qp_num), or NULL when it holds nothing */
static uct_ud_ooo_peer_t *uct_ud_ooo_peer_find(const uct_ud_iface_t *iface,
                                               const uct_ud_ah_t *ah,
                                               uint32_t qp_num)
{
    unsigned i = uct_ud_ooo_peer_home(iface, ah, qp_num);
    uct_ud_ooo_peer_t *peer;

    for (;;) {
        peer = &iface->ooo.peers[i];
        if (peer->ah == NULL) {
            return NULL;
        }
        if ((peer->ah == ah) && (peer->qp_num == qp_num)) {
            return peer;
        }
        i = (i + 1) & iface->ooo.peers_mask;
    }
}

/* One more packet held by @a ep's peer (an entry is free: there are more
 * than ooo.max, and each holder holds one packet at least) */
static void uct_ud_ooo_peer_hold(uct_ud_iface_t *iface, const uct_ud_ep_t *ep)
{
    unsigned i = uct_ud_ooo_peer_home(iface, ep->ah, ep->dest_qpn);
    uct_ud_ooo_peer_t *peer;

    for (;;) {
        peer = &iface->ooo.peers[i];
        if (peer->ah == NULL) {
            peer->ah     = ep->ah;
            peer->qp_num = ep->dest_qpn;
            peer->held   = 1;
            ++iface->ooo.num_peers;
            return;
        }
        if ((peer->ah == ep->ah) && (peer->qp_num == ep->dest_qpn)) {
            ++peer->held;
            return;
        }
        i = (i + 1) & iface->ooo.peers_mask;
    }
}

/* One packet less held by @a ep's peer; its entry goes at zero */
static void uct_ud_ooo_peer_release(uct_ud_iface_t *iface,
                                    const uct_ud_ep_t *ep)
{
    uct_ud_ooo_peer_t *peers = iface->ooo.peers;
    unsigned mask            = iface->ooo.peers_mask;
    uct_ud_ooo_peer_t *peer = uct_ud_ooo_peer_find(iface, ep->ah, ep->dest_qpn);
    unsigned i, j, home;

    if ((peer == NULL) || (--peer->held != 0)) {
        return;
    }
    /* remove: the entries after it move back where their probe allows */
    i = (unsigned)(peer - peers);
    memset(&peers[i], 0, sizeof(peers[i]));
    --iface->ooo.num_peers;
    for (j = (i + 1) & mask; peers[j].ah != NULL; j = (j + 1) & mask) {
        home = uct_ud_ooo_peer_home(iface, peers[j].ah, peers[j].qp_num);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            peers[i] = peers[j];
            memset(&peers[j], 0, sizeof(peers[j]));
            i = j;
        }
    }
}

int uct_ud_iface_ooo_has(const uct_ud_iface_t *iface, uint32_t ep_id,
                         uint16_t psn)
{
    return (iface->ooo.count != 0) && (uct_ud_ooo_find(iface, ep_id, psn) >= 0);
}

static void uct_ud_ooo_remove_at(uct_ud_iface_t *iface, unsigned i)
{
    unsigned j = i, home;

    iface->ooo.slots[i] = NULL;
    for (;;) {
        j = (j + 1) & iface->ooo.mask;
        if (iface->ooo.slots[j] == NULL) {
            break;
        }
        home = uct_ud_ooo_home(iface, iface->ooo.slots[j]->ep_id,
                               iface->ooo.slots[j]->psn);
        if (((j - home) & iface->ooo.mask) >= ((j - i) & iface->ooo.mask)) {
            iface->ooo.slots[i] = iface->ooo.slots[j];
            iface->ooo.slots[j] = NULL;
            i                   = j;
        }
    }
    --iface->ooo.count;
}

/* Whether held packet @a rdesc is of @a only, or when NULL of an ep of
 * peer (@a ah, @a qp_num); its ep in @a ep_p */
static int uct_ud_ooo_match(uct_ud_iface_t *iface,
                            const uct_ud_rx_desc_t *rdesc,
                            const uct_ud_ah_t *ah, uint32_t qp_num,
                            const uct_ud_ep_t *only, uct_ud_ep_t **ep_p)
{
    uct_ud_ep_t *ep = uct_ud_iface_ep(iface, rdesc->ep_id);

    *ep_p = ep;
    if (ep == NULL) {
        return 0;
    }
    if (only != NULL) {
        return ep == only;
    }
    return (ep->ah == ah) && (ep->dest_qpn == qp_num);
}

/*
 * Releases every held packet of @a only, or when NULL of every ep of
 * peer (@a ah, @a qp_num); returns how many. A removal moves later
 * entries back, possibly to a slot the walk has passed (past the end of
 * the table they wrap to its start), so walks repeat while a packet of
 * theirs is left.
 */
static unsigned uct_ud_ooo_release(uct_ud_iface_t *iface, const uct_ud_ah_t *ah,
                                   uint32_t qp_num, const uct_ud_ep_t *only)
{
    unsigned i, n, count = 0;
    uct_ud_rx_desc_t *rdesc;
    uct_ud_ep_t *ep;

    do {
        n = 0;
        for (i = 0; i <= iface->ooo.mask; ++i) {
            /* the slot again after a removal: another may move here */
            while (((rdesc = iface->ooo.slots[i]) != NULL) &&
                   uct_ud_ooo_match(iface, rdesc, ah, qp_num, only, &ep)) {
                uct_ud_ooo_remove_at(iface, i);
                uct_ud_ooo_peer_release(iface, ep);
                --ep->rx.ooo;
                ucs_mpool_put(rdesc);
                ++n;
            }
        }
        count += n;
    } while ((n != 0) &&
             ((only != NULL)
                  ? (only->rx.ooo != 0)
                  : (uct_ud_ooo_peer_find(iface, ah, qp_num) != NULL)));
    return count;
}

/* The table is full: every packet of a peer that holds its whole share
 * goes. Returns how many (0: every peer is under its share). */
static unsigned uct_ud_ooo_evict(uct_ud_iface_t *iface)
{
    const uct_ud_ooo_peer_t *peer;
    unsigned i, count;

    for (i = 0; i <= iface->ooo.peers_mask; ++i) {
        peer = &iface->ooo.peers[i];
        if ((peer->ah != NULL) && (peer->held >= iface->ooo.share)) {
            count = uct_ud_ooo_release(iface, peer->ah, peer->qp_num, NULL);
            iface->stats.rx_evicted += count;
            return count;
        }
    }
    return 0;
}

ucs_status_t uct_ud_iface_ooo_add(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                  uct_ud_rx_desc_t *rdesc)
{
    const uct_ud_ooo_peer_t *peer;
    unsigned i;

    if ((iface->ooo.count != 0) &&
        (uct_ud_ooo_find(iface, rdesc->ep_id, rdesc->psn) >= 0)) {
        return UCS_ERR_ALREADY_EXISTS;
    }
    peer = (iface->ooo.count != 0)
               ? uct_ud_ooo_peer_find(iface, ep->ah, ep->dest_qpn)
               : NULL;
    if ((peer != NULL) && (peer->held >= iface->ooo.share)) {
        ++iface->stats.rx_over_share;
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if ((iface->ooo.count >= iface->ooo.max) &&
        ((iface->ooo.max == 0) || (uct_ud_ooo_evict(iface) == 0))) {
        ++iface->stats.rx_ooo_full;
        return UCS_ERR_NO_RESOURCE;
    }

    i = uct_ud_ooo_home(iface, rdesc->ep_id, rdesc->psn);
    while (iface->ooo.slots[i] != NULL) {
        i = (i + 1) & iface->ooo.mask;
    }
    iface->ooo.slots[i] = rdesc;
    ++iface->ooo.count;
    ++ep->rx.ooo;
    uct_ud_ooo_peer_hold(iface, ep);
    return UCS_OK;
}

uct_ud_rx_desc_t *uct_ud_iface_ooo_take(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                        uint16_t psn)
{
    uct_ud_rx_desc_t *rdesc;
    int i;

    if (iface->ooo.count == 0) {
        return NULL;
    }
    i = uct_ud_ooo_find(iface, ep->id, psn);
    if (i < 0) {
        return NULL;
    }
    rdesc = iface->ooo.slots[i];
    uct_ud_ooo_remove_at(iface, (unsigned)i);
    uct_ud_ooo_peer_release(iface, ep);
    --ep->rx.ooo;
    return rdesc;
}

void uct_ud_iface_ooo_drop_ep(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    if (ep->rx.ooo != 0) {
        (void)uct_ud_ooo_release(iface, NULL, 0, ep);
    }
    ep->rx.ooo = 0;
}
