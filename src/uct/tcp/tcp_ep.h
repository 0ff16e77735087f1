/*
 * What the files of a tcp endpoint share: tcp_ep.c (life cycle, failure,
 * pending, flush), tcp_conn.c (connection set-up, handshake, accept),
 * tcp_tx.c (send queue, coalescing, AM operations), tcp_rma.c (PUT and
 * GET operations), tcp_rx.c (receive path), tcp_ep_vfs.c (object tree).
 * Internal to the module.
 */
#ifndef UCT_TCP_EP_H_
#define UCT_TCP_EP_H_

#include "tcp.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sock.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#define UCT_TCP_SEND_FLAGS (MSG_NOSIGNAL | MSG_DONTWAIT)

/* Magic and version, the part every protocol version shares */
#define UCT_TCP_HS_PREFIX_LEN (sizeof(uint64_t) + sizeof(uint16_t))

/* The peer's address (while connecting, the one connected to; later the
 * socket's peer); 0 when unknown. Rare paths only: may ask the socket. */
int uct_tcp_ep_peer_addr(const uct_tcp_ep_t *ep, uct_tcp_sockaddr_t *addr);
/* The peer's address as text, for messages. */
const char *uct_tcp_ep_peer_str(const uct_tcp_ep_t *ep, char *buf, size_t max);

/* Compares secrets, cookies and nonces in a time that does not depend on
 * where they differ */
static inline int uct_tcp_secret_equal(uint64_t a, uint64_t b)
{
    volatile uint64_t diff = a ^ b;

    return diff == 0;
}

static inline int uct_tcp_ep_is_internal(const uct_tcp_ep_t *ep)
{
    return ep->flags & UCT_TCP_EP_FLAG_INTERNAL;
}

static inline int uct_tcp_ep_can_send_now(const uct_tcp_ep_t *ep)
{
    return (ep->state == UCT_TCP_EP_CONNECTED) &&
           ucs_list_is_empty(&ep->tx_list);
}

static inline void uct_tcp_ep_tx_commit(uct_tcp_ep_t *ep, uct_tcp_tx_t *tx,
                                        size_t n)
{
    tx->length += n;
    ep->tx_queued += (uint32_t)n;
    uct_tcp_ep_iface(ep)->tx_queued += n;
}

static inline void uct_tcp_hdr_init(uct_tcp_hdr_t *hdr, uint8_t id,
                                    size_t length, uint8_t flags)
{
    hdr->id       = id;
    hdr->flags    = flags;
    hdr->reserved = 0;
    hdr->length   = (uint32_t)length;
}

/* Writes a header at @a dest, which need not be aligned. */
static inline void uct_tcp_hdr_write(void *dest, uint8_t id, size_t length,
                                     uint8_t flags)
{
    uct_tcp_hdr_t hdr;

    uct_tcp_hdr_init(&hdr, id, length, flags);
    memcpy(dest, &hdr, sizeof(hdr));
}

/* Whether an application send of the largest size would be taken now
 * (a GET included). */
static inline int uct_tcp_ep_has_room(const uct_tcp_ep_t *ep)
{
    const uct_tcp_iface_t *iface = uct_tcp_iface(ep->super.super.iface);

    return (ep->tx_ops == 0) &&
           (ep->tx_queued + sizeof(uct_tcp_hdr_t) + iface->config.max_bcopy <=
            iface->config.tx_buf_size) &&
           ((ep->ext == NULL) || (ep->ext->get_budget + UCT_TCP_REPLY_OP_COST <=
                                  UCT_TCP_REPLY_BUDGET));
}

/* What a GET of @a length bytes costs its target in replies */
static inline uint32_t uct_tcp_get_reply_cost(size_t length)
{
    return (length <= UCT_TCP_GET_COPY_MAX)
               ? (uint32_t)(sizeof(uct_tcp_hdr_t) + length)
               : UCT_TCP_REPLY_OP_COST;
}

/* Whether @a ep's send queue holds more replies than a compliant peer
 * can have asked for (on top of what our own sends may queue): then the
 * peer is not read until it drains. */
static inline int uct_tcp_ep_rx_over_budget(const uct_tcp_ep_t *ep)
{
    const uct_tcp_iface_t *iface = uct_tcp_iface(ep->super.super.iface);

    return ((size_t)ep->tx_queued +
            ((size_t)ep->tx_ops * UCT_TCP_REPLY_OP_COST)) >
           iface->config.reply_limit;
}

/* Checks that an application send may be queued. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_tcp_ep_check_state(const uct_tcp_ep_t *ep)
{
    if (ucs_unlikely(ep->state == UCT_TCP_EP_FAILED)) {
        return (ucs_status_t)ep->err_status;
    }
    return UCS_OK;
}

/* tcp_rx.c */
void uct_tcp_ep_rx_resume(uct_tcp_ep_t *ep);

/* tcp_ep.c: events, failure, life cycle */
ucs_status_t uct_tcp_errno_status(int err);
void uct_tcp_ep_update_events(uct_tcp_ep_t *ep);
ucs_status_t uct_tcp_ep_register(uct_tcp_ep_t *ep);
void uct_tcp_ep_close_socket(uct_tcp_ep_t *ep);
void uct_tcp_ep_release_rx(uct_tcp_ep_t *ep);
void uct_tcp_ep_fail(uct_tcp_ep_t *ep, ucs_status_t status);
void uct_tcp_ep_protocol_error(uct_tcp_ep_t *ep, const char *what);
uct_tcp_ep_t *uct_tcp_ep_alloc(uct_tcp_iface_t *iface);
/* The side state of @a ep, allocated if it has none; NULL (and an error
 * message) when out of memory. */
uct_tcp_ep_ext_t *uct_tcp_ep_ext_alloc(uct_tcp_ep_t *ep);
/* Frees the side state of @a ep if nothing in it is needed any more. */
void uct_tcp_ep_ext_release_idle(uct_tcp_ep_t *ep);

static inline uct_tcp_ep_ext_t *uct_tcp_ep_ext_get(uct_tcp_ep_t *ep)
{
    return (ep->ext != NULL) ? ep->ext : uct_tcp_ep_ext_alloc(ep);
}

/* tcp_conn.c: connection set-up and handshake */
void uct_tcp_ep_connect_progress(uct_tcp_ep_t *ep);
uct_tcp_ep_t *uct_tcp_ep_rx_handshake(uct_tcp_ep_t *ep);
uct_tcp_ep_t *uct_tcp_ep_rx_reply(uct_tcp_ep_t *ep);
ucs_status_t uct_tcp_ep_create_to_iface(uct_tcp_iface_t *iface,
                                        const uct_ep_params_t *params,
                                        uct_ep_h *ep_p);
ucs_status_t uct_tcp_ep_create_for_ep(uct_tcp_iface_t *iface, uct_ep_h *ep_p);

/* tcp_pair.c: one connection per pair of CONNECT_TO_IFACE eps */
uint32_t uct_tcp_pair_key(const uct_tcp_sockaddr_t *addr);
int uct_tcp_pair_side(const uct_tcp_iface_t *iface,
                      const uct_tcp_sockaddr_t *peer);
/* A user ep to the iface at @a peer joins the pairing: the nonce its
 * handshake carries (0: none) */
ucs_status_t uct_tcp_pair_user_init(uct_tcp_ep_t *ep,
                                    const uct_tcp_sockaddr_t *peer,
                                    uint64_t *nonce_p);
/* An accepted CONNECT_TO_IFACE connection from the iface at @a from */
void uct_tcp_pair_accepted(uct_tcp_ep_t *ep, const uct_tcp_handshake_t *hs,
                           const uct_tcp_sockaddr_t *from);
/* Takes @a ep out of the pairing tables */
void uct_tcp_pair_forget(uct_tcp_ep_t *ep);
/* The user destroys @a ep: 1 if it became internal because the peer's
 * user ep still uses its connection */
int uct_tcp_pair_ep_release(uct_tcp_ep_t *ep);
ucs_status_t uct_tcp_ep_rx_switch(uct_tcp_ep_t *ep, const uct_tcp_hdr_t *hdr,
                                  char *payload, size_t avail);
ucs_status_t uct_tcp_ep_rx_switch_ack(uct_tcp_ep_t *ep,
                                      const uct_tcp_hdr_t *hdr, char *payload,
                                      size_t avail);
ucs_status_t uct_tcp_ep_rx_unpair(uct_tcp_ep_t *ep, const uct_tcp_hdr_t *hdr,
                                  char *payload, size_t avail);

/* Whether the send queue may be written: connected, and while a switch is
 * under way only up to its SWITCH */
static inline int uct_tcp_ep_can_write(const uct_tcp_ep_t *ep)
{
    return (ep->state == UCT_TCP_EP_CONNECTED) ||
           ((ep->state == UCT_TCP_EP_SWITCHING) &&
            (ep->flags & UCT_TCP_EP_FLAG_SWITCH_QUEUED));
}

/* tcp_tx.c: the send queue, coalescing, AM operations */
void uct_tcp_ep_tx_purge(uct_tcp_ep_t *ep, ucs_status_t status);
uct_tcp_tx_t *uct_tcp_ep_tx_buf_get(uct_tcp_ep_t *ep);
char *uct_tcp_ep_tx_reserve(uct_tcp_ep_t *ep, size_t n, int user,
                            uct_tcp_tx_t **tx_p);
void uct_tcp_ep_defer_stop(uct_tcp_ep_t *ep);
ucs_status_t uct_tcp_ep_ctrl_send(uct_tcp_ep_t *ep, const void *data, size_t n);
void uct_tcp_ep_check_flush(uct_tcp_ep_t *ep, ucs_status_t status);
void uct_tcp_ep_tx_progress(uct_tcp_ep_t *ep);
void uct_tcp_ep_tx_kick(uct_tcp_ep_t *ep);
ucs_status_t uct_tcp_ep_sendv(uct_tcp_ep_t *ep, const struct iovec *iov,
                              size_t iovcnt, size_t total);
ucs_status_t uct_tcp_ep_send_zcopy(uct_tcp_ep_t *ep, uint8_t id,
                                   const void *prefix, size_t prefix_len,
                                   const uct_iov_t *uiov, size_t iovcnt,
                                   uct_completion_t *comp);
ssize_t uct_tcp_ep_send_packed(uct_tcp_ep_t *ep, uint8_t id, const void *prefix,
                               size_t prefix_len, uct_pack_callback_t pack_cb,
                               void *arg, const char *what);

#endif
