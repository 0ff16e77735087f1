/*
 * The tcp transport (module libuct_tcp.so, component "tcp"): one stream
 * socket per endpoint, driven from uct_worker_progress through an epoll
 * set owned by the interface.
 *
 * Wire format: a connecting endpoint first sends uct_tcp_handshake_t, then
 * a sequence of messages, each a uct_tcp_hdr_t followed by hdr.length
 * payload bytes. hdr.id < UCT_AM_ID_MAX is an active message; the ids
 * from UCT_TCP_OP_PUT up are RMA operations.
 */
#ifndef UCT_TCP_H_
#define UCT_TCP_H_

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/base/uct_pending.h>
#include <ucs/datastruct/arbiter.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/event_set.h>

#include <netinet/in.h>
#include <stdint.h>

#define UCT_TCP_NAME       "tcp"
#define UCT_TCP_MAGIC      0x706374756e65706full /* "openuctp", LE */
#define UCT_TCP_VERSION    1

/* Message ids past the AM range */
enum {
    UCT_TCP_OP_PUT      = 0x40, /* uint64 remote address, then data */
    UCT_TCP_OP_GET_REQ  = 0x41, /* uct_tcp_get_req_t */
    UCT_TCP_OP_GET_RESP = 0x42  /* data of the oldest outstanding GET */
};

/* Header of every message on the stream (8 bytes keeps payloads of
 * consecutive messages 8-byte aligned relative to each other). */
typedef struct uct_tcp_hdr {
    uint8_t  id;
    uint8_t  reserved[3];
    uint32_t length;     /* payload bytes after the header */
} uct_tcp_hdr_t;

/* First bytes a connecting endpoint sends. */
typedef struct uct_tcp_handshake {
    uint64_t magic;
    uint32_t version;
    uint32_t reserved;
    uint32_t listen_ip;    /* connecting iface's address, network order */
    uint16_t listen_port;  /* network order */
    uint16_t reserved2;
} uct_tcp_handshake_t;

typedef struct uct_tcp_get_req {
    uint64_t remote_addr;
    uint64_t length;
} uct_tcp_get_req_t;

/* Device address: the IPv4 address; iface address: the listening port. */
typedef struct in_addr uct_tcp_device_addr_t;
typedef uint16_t       uct_tcp_iface_addr_t;

typedef struct uct_tcp_iface_config {
    uct_iface_config_t super;
    size_t             sndbuf;
    size_t             rcvbuf;
    int                nodelay;
    size_t             tx_seg_size;
    size_t             rx_seg_size;
    unsigned           max_iov;
    ucs_range_spec_t   port_range;
    unsigned           backlog;
} uct_tcp_iface_config_t;

typedef struct uct_tcp_iface {
    uct_base_iface_t      super;
    ucs_sys_event_set_t   *event_set;
    int                   listen_fd;
    struct sockaddr_in    listen_addr;   /* bound address and port */
    int                   is_loopback;
    ucs_arbiter_t         arbiter;       /* pending requests of all eps */
    ucs_list_link_t       ep_list;       /* every ep, active and passive */
    ucs_list_link_t       flush_list;    /* uct_tcp_flush_req_t */
    unsigned              armed_read;    /* scratch of event_arm */
    char                  *align_buf;    /* for aligned AM delivery */
    struct {
        size_t            sndbuf;
        size_t            rcvbuf;
        int               nodelay;
        size_t            tx_seg_size;
        size_t            rx_seg_size;
        unsigned          max_iov;
        size_t            max_msg;       /* payload limit of one message */
    } config;
} uct_tcp_iface_t;

typedef enum {
    UCT_TCP_EP_CONNECTING,   /* non-blocking connect under way */
    UCT_TCP_EP_HANDSHAKE,    /* accepted, waiting for the handshake */
    UCT_TCP_EP_CONNECTED,
    UCT_TCP_EP_FAILED        /* socket closed; sends return an error */
} uct_tcp_ep_state_t;

/* Bytes waiting for the socket: [offset, length) of buf. */
typedef struct uct_tcp_buf {
    char   *buf;
    size_t offset;
    size_t length;
    size_t size;
} uct_tcp_buf_t;

typedef struct uct_tcp_ep {
    uct_base_ep_t         super;
    uct_tcp_ep_state_t    state;
    int                   fd;
    int                   passive;       /* created by accept: not the
                                            user's, freed on close */
    unsigned              events;        /* registered with the event set */
    struct sockaddr_in    peer_addr;     /* connected (or accepted) peer */
    struct sockaddr_in    peer_listen;   /* peer's iface (handshake) */
    uct_tcp_buf_t         tx;
    uct_tcp_buf_t         rx;
    ucs_arbiter_group_t   arb_group;
    ucs_list_link_t       get_list;      /* uct_tcp_get_op_t, in order */
    ucs_list_link_t       flush_list;    /* uct_tcp_flush_req_t */
    ucs_list_link_t       list;          /* in iface->ep_list */
} uct_tcp_ep_t;

/* An outstanding GET, completed by the next GET_RESP. */
typedef struct uct_tcp_get_op {
    ucs_list_link_t       list;
    size_t                length;
    uct_unpack_callback_t unpack_cb;     /* bcopy; NULL for zcopy */
    void                  *arg;
    size_t                iovcnt;
    uct_completion_t      *comp;
    uct_iov_t             iov[];
} uct_tcp_get_op_t;

/* A flush waiting for an ep (or every ep of the iface) to drain. */
typedef struct uct_tcp_flush_req {
    ucs_list_link_t  list;
    uct_completion_t *comp;
} uct_tcp_flush_req_t;

extern uct_tl_t           uct_tcp_tl;
extern ucs_config_field_t uct_tcp_iface_config_table[];

static inline uct_tcp_iface_t *uct_tcp_iface(uct_iface_h iface)
{
    return (uct_tcp_iface_t*)iface;
}

static inline uct_tcp_ep_t *uct_tcp_ep(uct_ep_h ep)
{
    return (uct_tcp_ep_t*)ep;
}

static inline uct_tcp_iface_t *uct_tcp_ep_iface(uct_tcp_ep_t *ep)
{
    return uct_tcp_iface(ep->super.super.iface);
}

/* tcp_iface.c */
ucs_status_t uct_tcp_query_devices(uct_md_h md,
                                   uct_tl_device_resource_t **devices_p,
                                   unsigned *num_devices_p);
ucs_status_t uct_tcp_iface_open(uct_md_h md, uct_worker_h worker,
                                const uct_iface_params_t *params,
                                const uct_iface_config_t *tl_config,
                                uct_iface_h *iface_p);
/* Applies the socket options of the iface config to @a fd. */
ucs_status_t uct_tcp_iface_set_sockopts(uct_tcp_iface_t *iface, int fd);
/* Completes iface flushes once no ep has anything outstanding. */
void uct_tcp_iface_check_flush(uct_tcp_iface_t *iface);

/* tcp_ep.c */
ucs_status_t uct_tcp_ep_create(const uct_ep_params_t *params,
                               uct_ep_h *ep_p);
void uct_tcp_ep_destroy(uct_ep_h tl_ep);
/* An ep for a socket accepted on the listening socket. */
ucs_status_t uct_tcp_ep_accept(uct_tcp_iface_t *iface, int fd,
                               const struct sockaddr_in *peer);
/* Frees an ep and its socket, failing what is outstanding. */
void uct_tcp_ep_free(uct_tcp_ep_t *ep);
/* Event set handler of an ep's socket. */
void uct_tcp_ep_handle_events(uct_tcp_ep_t *ep, ucs_event_set_types_t events);
int uct_tcp_ep_is_idle(const uct_tcp_ep_t *ep);

ucs_status_t uct_tcp_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                 const void *payload, unsigned length);
ucs_status_t uct_tcp_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                     const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_tcp_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                            uct_pack_callback_t pack_cb, void *arg,
                            unsigned flags);
ucs_status_t uct_tcp_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                 const void *header, unsigned header_length,
                                 const uct_iov_t *iov, size_t iovcnt,
                                 unsigned flags, uct_completion_t *comp);
ucs_status_t uct_tcp_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                  unsigned length, uint64_t remote_addr,
                                  uct_rkey_t rkey);
ssize_t uct_tcp_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                             void *arg, uint64_t remote_addr,
                             uct_rkey_t rkey);
ucs_status_t uct_tcp_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_tcp_ep_get_bcopy(uct_ep_h tl_ep,
                                  uct_unpack_callback_t unpack_cb, void *arg,
                                  size_t length, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_tcp_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_tcp_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                    unsigned flags);
void uct_tcp_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg);
ucs_status_t uct_tcp_ep_flush(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp);

#endif
