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

#include "tcp_device.h"
#include "tcp_md.h"

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/base/uct_pending.h>
#include <ucs/datastruct/arbiter.h>
#include <ucs/datastruct/hash.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/ptr_array.h>
#include <ucs/debug/log_limit.h>
#include <ucs/memory/mpool.h>
#include <ucs/time/time.h>
#include <ucs/sys/event_set.h>

#include <netinet/in.h>
#include <stdint.h>

#define UCT_TCP_NAME    "tcp"
#define UCT_TCP_MAGIC   0x706374756e65706full /* "openuctp", LE */
#define UCT_TCP_VERSION 5

/* Gather limit of one send (header, prefix and the user's pieces) */
#define UCT_TCP_MAX_SEND_IOV 64
/* Largest UCX_TCP_SENDV_THRESH: messages up to it are copied to the stack
 * and sent with one send() */
#define UCT_TCP_SENDV_THRESH_MAX 4096
/* Largest am_short message (header included) built on the stack and sent
 * with one send() without a gather */
#define UCT_TCP_AM_SHORT_INLINE 256
/* Largest PUT/GET, streamed to and from the user's memory */
#define UCT_TCP_MAX_STREAM_MSG ((size_t)UINT32_MAX - 64)
/* Zero-copy sends an ep may have queued behind the socket */
#define UCT_TCP_EP_MAX_ZCOPY_OPS 2
/* Progress asks epoll at least once in this many calls; the period
 * doubles, up to UCT_TCP_EPOLL_PERIOD_MAX, while epoll reports no socket
 * but the one progress reads directly */
#define UCT_TCP_EPOLL_PERIOD     8
#define UCT_TCP_EPOLL_PERIOD_MAX 64
/* Largest user header of am_zcopy (kept in the operation) */
#define UCT_TCP_MAX_AM_HDR 128
/* Out of file descriptors, the listening socket is not polled for this
 * long */
#define UCT_TCP_ACCEPT_BACKOFF_SEC 0.1
/*
 * Replies made on a peer's behalf are budgeted. An initiator keeps the
 * replies its outstanding GETs will cost the target within
 * UCT_TCP_REPLY_BUDGET (a GET response up to UCT_TCP_GET_COPY_MAX counts
 * its bytes, a larger one, sent from memory, UCT_TCP_REPLY_OP_COST) and
 * its unanswered ACK_REQs within UCT_TCP_MAX_ACK_REQS; past that its GET
 * or flush returns UCS_ERR_NO_RESOURCE. A target whose send queue holds
 * more than that on top of what its own sends may queue stops reading
 * the peer until it drains (see uct_tcp_ep_rx_over_budget()), and drops
 * it after UCX_TCP_PEER_TIMEOUT. A compliant peer is never stopped.
 */
#define UCT_TCP_REPLY_BUDGET  (256 * 1024)
#define UCT_TCP_REPLY_OP_COST (16 * 1024)
#define UCT_TCP_MAX_ACK_REQS  16
/* How often progress looks for stalled peers and idle pool chunks */
#define UCT_TCP_HOUSEKEEPING_SEC 1.0
/* GET responses up to this size are copied when the request arrives;
 * larger ones are sent from the registered memory */
#define UCT_TCP_GET_COPY_MAX 8192

/* Message ids past the AM range */
enum {
    UCT_TCP_OP_PUT      = 0x40,   /* uct_tcp_put_hdr_t, then data */
    UCT_TCP_OP_GET_REQ  = 0x41,   /* uct_tcp_get_req_t */
    UCT_TCP_OP_GET_RESP = 0x42,   /* data of the oldest outstanding GET, or
                                     nothing with UCT_TCP_HDR_FLAG_DENIED */
    UCT_TCP_OP_ACK_REQ = 0x43,    /* no payload: answer with one ACK */
    UCT_TCP_OP_ACK     = 0x44,    /* no payload: everything sent before the
                                     matching ACK_REQ was handled; with
                                     UCT_TCP_HDR_FLAG_DENIED, some PUT since
                                     the previous ACK was refused */
    UCT_TCP_OP_SWITCH = 0x45,     /* 8-byte nonce: the sender's ep moves to
                                     the connection our ep of that nonce
                                     opened to it (see tcp_pair.c) */
    UCT_TCP_OP_SWITCH_ACK = 0x46, /* no payload: the SWITCH before it was
                                     handled; with UCT_TCP_HDR_FLAG_DENIED,
                                     refused (stay on this connection) */
    UCT_TCP_OP_UNPAIR = 0x47,     /* no payload: the sender's user ep on
                                     this connection was destroyed */
    UCT_TCP_OP_LAST
};

/* Header flags */
enum {
    /* GET_RESP, ACK: a remote access was refused (key, range or right) */
    UCT_TCP_HDR_FLAG_DENIED = UCS_BIT(0)
};

/* Header of every message on the stream (8 bytes keeps payloads of
 * consecutive messages 8-byte aligned relative to each other). */
typedef struct uct_tcp_hdr {
    uint8_t id;
    uint8_t flags;     /* UCT_TCP_HDR_FLAG_*; 0 where none applies */
    uint16_t reserved; /* 0 */
    uint32_t length;   /* payload bytes after the header */
} uct_tcp_hdr_t;

/* Start of a PUT's payload: where, under which key; the data follows. */
typedef struct uct_tcp_put_hdr {
    uint64_t remote_addr;
    uint64_t rkey;
} uct_tcp_put_hdr_t;

/* Kinds of connection a handshake opens */
enum {
    UCT_TCP_CONN_TO_IFACE = 1, /* served by an internal endpoint */
    UCT_TCP_CONN_TO_EP    = 2  /* attached to the user's endpoint
                                  dst_ep_id/dst_ep_cookie */
};

/* First bytes a connecting endpoint sends; all fields little-endian
 * except the address and port, which are in network order. Every field
 * that does not apply is zero: the ep fields of CONN_TO_IFACE, the last 12
 * address bytes of AF_INET, the reserved field. */
typedef struct uct_tcp_handshake {
    uint64_t magic;       /* UCT_TCP_MAGIC */
    uint16_t version;     /* UCT_TCP_VERSION */
    uint8_t conn_type;    /* UCT_TCP_CONN_TO_* */
    uint8_t family;       /* AF_INET or AF_INET6 of listen_addr */
    uint16_t listen_port; /* connecting iface's port */
    uint16_t reserved;
    uint32_t dst_ep_id;      /* CONN_TO_EP: the accepting side's ep */
    uint32_t src_ep_id;      /* CONN_TO_EP: the connecting side's ep */
    uint64_t dst_ep_cookie;  /* random, from dst's endpoint address */
    uint64_t src_ep_cookie;  /* random, in src's endpoint address */
    uint8_t listen_addr[16]; /* connecting iface's address (4 or 16) */
    uint64_t secret;         /* the accepting iface's, from its address */
    uint64_t src_nonce;      /* CONN_TO_IFACE from the lower of two ifaces:
                                random, names the connection in a SWITCH;
                                else 0 */
} uct_tcp_handshake_t;

/* Handshake results */
enum {
    UCT_TCP_HS_ACCEPTED    = 0,
    UCT_TCP_HS_BAD_VERSION = 1, /* the reply carries our version */
    UCT_TCP_HS_NO_EP       = 2, /* CONN_TO_EP: no such endpoint */
    UCT_TCP_HS_DUPLICATE   = 3, /* CONN_TO_EP: endpoint already connected */
    UCT_TCP_HS_BAD_SECRET  = 4, /* not the secret of this iface's address */
    UCT_TCP_HS_BAD_REQUEST = 5  /* malformed handshake */
};

/* First bytes the accepting side sends back. A refusal is followed by
 * close. */
typedef struct uct_tcp_handshake_reply {
    uint64_t magic;   /* UCT_TCP_MAGIC */
    uint16_t version; /* the accepting side's version */
    uint16_t status;  /* UCT_TCP_HS_* */
    uint32_t reserved;
} uct_tcp_handshake_reply_t;

typedef struct uct_tcp_get_req {
    uint64_t remote_addr;
    uint64_t length;
    uint64_t rkey;
} uct_tcp_get_req_t;

/* Device address: family byte then the 4 or 16 address bytes. */
typedef struct UCS_S_PACKED uct_tcp_device_addr {
    uint8_t family;   /* AF_INET or AF_INET6 */
    uint8_t addr[16]; /* only 4 used for AF_INET */
} uct_tcp_device_addr_t;

/* Iface address: the listening port and the secret a connection must
 * present; only peers that were given the address can connect. */
typedef struct UCS_S_PACKED uct_tcp_iface_addr {
    uint16_t port; /* network order */
    uint64_t secret;
} uct_tcp_iface_addr_t;

/* Endpoint address (CONNECT_TO_EP): iface port and secret + ep id and
 * cookie. The cookie is 64 random bits drawn for each ep, so that the
 * address of one ep tells nothing about the cookie of another. */
typedef struct UCS_S_PACKED uct_tcp_ep_addr {
    uint16_t port; /* network order */
    uint32_t ep_id;
    uint64_t cookie;
    uint64_t secret;
} uct_tcp_ep_addr_t;

/* Length of a device address of @a family. */
static inline size_t uct_tcp_device_addr_length(int family)
{
    return 1 + ((family == AF_INET6) ? 16 : 4);
}

/* A socket address of either family, kept small (no sockaddr_storage in
 * every endpoint). */
typedef union uct_tcp_sockaddr {
    struct sockaddr sa;
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
} uct_tcp_sockaddr_t;

/*
 * A remote host, as the receive buffer shares see it: an IPv4 address, or
 * the /64 prefix of an IPv6 address (a host may send from any address of
 * its prefix). Every ep with a socket refers to the peer at the other
 * end; the peer counts the receive buffers its eps hold with partial
 * messages, which may not exceed UCX_TCP_PEER_MAX_BUFS (tcp_peer.c).
 */
typedef struct uct_tcp_peer {
    uint64_t key;
    uint32_t index;          /* in uct_tcp_peer_table_t::by_index */
    uint32_t refs;           /* eps referring to it */
    uint32_t held;           /* receive buffers its eps hold */
    ucs_list_link_t holders; /* uct_tcp_rx_t, least recently read
                                first */
    ucs_list_link_t list;    /* in the table's busy list while held */
} uct_tcp_peer_t;

/* No peer (an ep without a socket) */
#define UCT_TCP_PEER_NONE UINT32_MAX

typedef struct uct_tcp_peer_table {
    ucs_hash_t by_key;        /* key -> uct_tcp_peer_t */
    ucs_ptr_array_t by_index; /* what eps refer to */
    ucs_list_link_t busy;     /* peers holding receive buffers */
} uct_tcp_peer_table_t;

typedef struct uct_tcp_iface_config {
    uct_iface_config_t super;
    size_t sndbuf;
    size_t rcvbuf;
    int nodelay;
    size_t tx_seg_size;
    size_t rx_seg_size;
    unsigned max_iov;
    size_t sendv_thresh;
    int put_enable;
    double keepidle;
    double keepintvl;
    unsigned keepcnt;
    unsigned syn_cnt;
    unsigned max_conn_retries;
    double conn_timeout;
    double coalesce_time;
    ucs_range_spec_t port_range;
    unsigned backlog;
    uct_tcp_af_prio_t af_prio;
    double peer_timeout;
    unsigned max_bufs;
    unsigned long peer_max_bufs;
} uct_tcp_iface_config_t;

/* Causes of the log lines a peer can trigger, each rate-limited per
 * iface (ucs/debug/log_limit.h) */
enum {
    UCT_TCP_LOG_PROTOCOL,   /* malformed input: the connection is closed */
    UCT_TCP_LOG_REFUSED,    /* handshake refused */
    UCT_TCP_LOG_RMA_DENIED, /* PUT or GET outside a registered region */
    UCT_TCP_LOG_ACCEPT,     /* cannot accept: out of file descriptors */
    UCT_TCP_LOG_SHARE,      /* a peer over its share of receive buffers */
    UCT_TCP_LOG_LAST
};

typedef struct uct_tcp_iface {
    uct_base_iface_t super;
    ucs_sys_event_set_t *event_set;
    int listen_fd;
    int listen_paused; /* out of fds: not polled until
                          accept_resume */
    ucs_time_t accept_resume;
    uint64_t secret; /* in our addresses; a handshake
                        must present it */
    ucs_log_limit_t log_limit[UCT_TCP_LOG_LAST];
    uct_tcp_sockaddr_t listen_addr; /* bound address and port */
    int is_loopback;
    ucs_arbiter_t arbiter;      /* pending requests of all eps */
    ucs_list_link_t ep_list;    /* every ep, user and internal */
    ucs_list_link_t flush_list; /* uct_tcp_flush_req_t */
    ucs_list_link_t retry_list; /* eps waiting to reconnect */
    ucs_list_link_t free_list;  /* eps freed during progress */
    ucs_list_link_t defer_list; /* eps holding small writes */
    ucs_list_link_t ext_list;   /* uct_tcp_ep_ext_t in use */
    int in_progress;
    struct uct_tcp_ep *hot_ep;  /* last ep that received data */
    unsigned poll_count;        /* direct polls until epoll */
    unsigned poll_period;       /* UCT_TCP_EPOLL_PERIOD.._MAX */
    int poll_other;             /* epoll reported another socket */
    unsigned rx_asks;           /* messages received that a peer
                                   may wait for an answer to */
    unsigned rx_asks_seen;      /* rx_asks at the last send that
                                   was not held back */
    ucs_ptr_array_t ep_ids;     /* eps reachable by ep address */
    ucs_mpool_t tx_mp;          /* send buffers */
    ucs_mpool_t rx_mp;          /* receive buffers */
    ucs_mpool_t op_mp;          /* zcopy sends, GETs, flushes */
    uct_tcp_peer_table_t peers; /* remote hosts: receive buffer shares */
    ucs_hash_t pair_peers;      /* pair key of a lower peer iface -> our
                                   ep that may use the connection from it:
                                   an internal ep (a connection it opened)
                                   or a user ep (waiting for one) */
    uint32_t pair_switched;     /* eps moved to their peer's connection */
    uint32_t pair_unpaired;     /* user eps destroyed while the peer's
                                   ep kept using their connection */
    unsigned num_user_eps;
    size_t tx_queued;            /* bytes queued on all eps */
    unsigned rx_held;            /* receive buffers held: eps with
                                    a partial message */
    uint32_t rx_evicted;         /* connections dropped for being
                                    over their peer's share */
    struct uct_tcp_rx *rx_spare; /* an ep with nothing partial
                                    reads into it */
    ucs_time_t next_housekeeping;
    uint32_t rma_denied;  /* our PUTs/GETs a peer refused */
    uint32_t rma_refused; /* peers' PUTs/GETs we refused */
    unsigned armed_read;  /* scratch of event_arm */
    int armed;            /* event_arm was called and
                             progress not since: nothing
                             may be held back */
    char *align_buf;      /* for aligned AM delivery */
    struct {
        size_t sndbuf;
        size_t rcvbuf;
        int nodelay;
        size_t tx_buf_size; /* bytes one send buffer holds */
        size_t rx_seg_size;
        unsigned max_iov;
        size_t sendv_thresh;
        int put_enable;
        size_t max_am;    /* AM payload limit (header incl) */
        size_t max_bcopy; /* bcopy limit incl. prefix */
        size_t max_hdr;   /* am_zcopy user header limit */
        int keepalive;
        int keepidle; /* seconds */
        int keepintvl;
        int keepcnt;
        unsigned user_timeout_ms;
        unsigned syn_cnt;
        unsigned max_conn_retries;
        ucs_time_t conn_timeout;
        ucs_time_t peer_timeout;
        size_t reply_limit;     /* send queue that stops reading */
        unsigned max_bufs;      /* per pool; UINT_MAX: none */
        unsigned peer_max_bufs; /* receive buffers of one peer */
        ucs_time_t coalesce_time;
        double latency; /* estimates of the device */
        double bandwidth;
    } config;
} uct_tcp_iface_t;

typedef enum {
    UCT_TCP_EP_CONNECTING, /* non-blocking connect under way */
    UCT_TCP_EP_RETRY_WAIT, /* connect refused; retried from progress */
    UCT_TCP_EP_WAIT_PEER,  /* CONNECT_TO_EP: the peer connects to us */
    UCT_TCP_EP_ACCEPTED,   /* internal: waiting for the handshake */
    UCT_TCP_EP_CONNECTED,
    UCT_TCP_EP_SWITCHING, /* connected; what follows the SWITCH is held
                             until its answer */
    UCT_TCP_EP_FAILED,    /* socket closed; sends return an error */
    UCT_TCP_EP_DESTROYED  /* freed at the end of this progress pass */
} uct_tcp_ep_state_t;

enum {
    UCT_TCP_EP_FLAG_INTERNAL    = UCS_BIT(0), /* created by accept */
    UCT_TCP_EP_FLAG_PUT_UNACKED = UCS_BIT(1), /* PUTs since the last ACK_REQ */
    UCT_TCP_EP_FLAG_TO_EP       = UCS_BIT(2), /* CONNECT_TO_EP endpoint */
    UCT_TCP_EP_FLAG_CONNECTOR   = UCS_BIT(3), /* opened the connection */
    UCT_TCP_EP_FLAG_PEER_KNOWN  = UCS_BIT(4), /* connect_to_ep was called */
    UCT_TCP_EP_FLAG_IN_IDS      = UCS_BIT(5), /* holds a slot of ep_ids */
    UCT_TCP_EP_FLAG_DEFERRED    = UCS_BIT(6), /* on iface->defer_list */
    UCT_TCP_EP_FLAG_PUT_DENIED  = UCS_BIT(7), /* a PUT of the peer was refused
                                                 since our last ACK */
    UCT_TCP_EP_FLAG_RX_STOPPED = UCS_BIT(8),  /* over the reply budget: not
                                                 reading, on retry_list */
    UCT_TCP_EP_FLAG_BURST = UCS_BIT(9), /* the last send not held came within
                                           UCX_TCP_COALESCE_TIME of the
                                           write before it */
    UCT_TCP_EP_FLAG_IN_PAIRS = UCS_BIT(10),     /* in iface->pair_peers under
                                                   the key in ep->id */
    UCT_TCP_EP_FLAG_IN_NONCES = UCS_BIT(11),    /* in iface->ep_ids (IN_IDS too)
                                                   as the ep a SWITCH with the
                                                   nonce in ep->cookie names */
    UCT_TCP_EP_FLAG_PEER_USER = UCS_BIT(12),    /* the other end is a user ep */
    UCT_TCP_EP_FLAG_SWITCH    = UCS_BIT(13),    /* a SWITCH is sent or queued;
                                                   its answer is awaited */
    UCT_TCP_EP_FLAG_SWITCH_QUEUED = UCS_BIT(14) /* the SWITCH is still in
                                                   the send queue */
};

/* Something waiting for the socket, in order: bytes copied into a send
 * buffer, or a zero-copy send that still points at the user's memory. */
typedef struct uct_tcp_tx {
    ucs_list_link_t list;
    uct_completion_t *comp; /* zcopy: completed when all is sent */
    uint64_t rkey;          /* zcopy GET response: the region it is
                               sent from, checked per write; else 0 */
    uint8_t is_buf;
    uint8_t is_switch;  /* holds a SWITCH: nothing after it is written
                           before the answer */
    uint32_t iov_index; /* zcopy: first entry not fully sent */
    uint32_t iovcnt;
    size_t length; /* buffer: bytes written */
    size_t offset; /* buffer: bytes sent */
    /* buffer: the data; zcopy: struct iovec[iovcnt] then the header
     * bytes the first entries point to */
    char data[];
} uct_tcp_tx_t;

/* Bytes already received and not yet handled. A buffer held for a
 * partial message is on its peer's holders list (peer != NULL). */
typedef struct uct_tcp_rx {
    ucs_list_link_t list;  /* in peer->holders */
    struct uct_tcp_ep *ep; /* held: the owner */
    uct_tcp_peer_t *peer;  /* held: its peer; else NULL */
    ucs_time_t since;      /* the last time a message was completed */
    size_t offset;
    size_t length;
    char data[];
} uct_tcp_rx_t;

/* What the bytes at the head of the receive buffer are: the receive
 * handler is chosen when this changes, not tested per message */
enum {
    UCT_TCP_RX_MESSAGES,  /* uct_tcp_hdr_t and payload, one after another */
    UCT_TCP_RX_HANDSHAKE, /* accepted: the peer's uct_tcp_handshake_t */
    UCT_TCP_RX_REPLY,     /* connector: the uct_tcp_handshake_reply_t */
    UCT_TCP_RX_LAST
};

/*
 * State an endpoint needs only now and then: while it connects, while
 * GETs, flushes or acknowledgements are outstanding, and while a large
 * PUT is streamed into memory. Allocated on first use (uct_tcp_ep_ext_get)
 * and freed by the iface housekeeping once the ep is idle again, so an
 * idle connected ep carries none of it. Kept to 152 bytes like the ep:
 * glibc then gives both the same 160-byte block, and an ep made later in
 * the block of a freed ext does not take a larger one whole.
 */
typedef struct uct_tcp_ep_ext {
    ucs_list_link_t list; /* in iface->ext_list */
    struct uct_tcp_ep *ep;
    ucs_list_link_t get_list;   /* uct_tcp_get_op_t, in order */
    ucs_list_link_t flush_list; /* uct_tcp_flush_req_t */
    uint32_t get_budget;        /* replies our outstanding GETs
                                   cost the peer */
    uint32_t ack_reqs_sent;
    uint32_t acks_received;
    uint32_t peer_id; /* CONNECT_TO_EP peer */
    uint64_t peer_cookie;
    ucs_time_t conn_deadline;     /* no connect retry after it */
    uint64_t rx_stream_left;      /* bytes of the PUT or GET_RESP
                                     being streamed still to come */
    ucs_time_t rx_stream_time;    /* when its last bytes came */
    char *rx_stream_dest;         /* PUT target; NULL: the data
                                     of a refused PUT, dropped */
    uint64_t rx_stream_key;       /* PUT: checked per chunk */
    uct_tcp_sockaddr_t peer_addr; /* peer being connected to */
    uint8_t conn_retries;         /* UCX_TCP_MAX_CONN_RETRIES <= 255 */
} uct_tcp_ep_ext_t;

/* Kept to 152 bytes (a 160-byte heap block): what is not needed by an
 * idle connected ep lives in uct_tcp_ep_ext_t. */
typedef struct uct_tcp_ep {
    uct_base_ep_t super;
    uint8_t state;        /* uct_tcp_ep_state_t */
    uint8_t rx_phase;     /* UCT_TCP_RX_* */
    uint16_t flags;       /* UCT_TCP_EP_FLAG_* */
    uint8_t rx_stream_id; /* PUT/GET_RESP being streamed, 0: none */
    int8_t err_status;    /* FAILED: what sends return */
    uint8_t events;       /* registered with the event set */
    uint8_t tx_ops;       /* zero-copy sends queued */
    int fd;
    uint32_t tx_queued;          /* bytes in send buffers */
    uint32_t id;                 /* slot in iface->ep_ids; or the pair key
                                    (IN_PAIRS) */
    uint32_t peer;               /* in iface->peers, or UCT_TCP_PEER_NONE */
    uint64_t cookie;             /* CONNECT_TO_EP: random, in the ep address;
                                    CONNECT_TO_IFACE: the pairing nonce */
    ucs_time_t retry_time;       /* RETRY_WAIT: next attempt;
                                    ACCEPTED: handshake deadline;
                                    RX_STOPPED: drop deadline;
                                    DEFERRED: oldest held write */
    ucs_time_t last_write;       /* for coalescing */
    uct_tcp_rx_t *rx;            /* NULL when nothing is partial */
    uct_tcp_ep_ext_t *ext;       /* NULL when idle */
    ucs_list_link_t tx_list;     /* uct_tcp_tx_t */
    uct_pending_group_t pending; /* on iface->arbiter */
    ucs_list_link_t list;        /* in iface->ep_list */
    ucs_list_link_t retry_list;  /* in iface->retry_list, or
                                    iface->defer_list */
} uct_tcp_ep_t;

/* An outstanding GET, completed by the next GET_RESP. */
typedef struct uct_tcp_get_op {
    ucs_list_link_t list;
    size_t length;
    size_t offset;                   /* bytes received (streaming) */
    uct_unpack_callback_t unpack_cb; /* bcopy; NULL for zcopy */
    void *arg;
    size_t iovcnt;
    uct_completion_t *comp;
    uct_iov_t iov[];
} uct_tcp_get_op_t;

/* A flush waiting for an ep (or every ep of the iface) to drain. */
typedef struct uct_tcp_flush_req {
    ucs_list_link_t list;
    uct_completion_t *comp;
    uint32_t ack_seq; /* ep: acks_received that ends it;
                         iface: rma_denied when posted */
} uct_tcp_flush_req_t;

extern uct_tl_t uct_tcp_tl;
extern ucs_config_field_t uct_tcp_iface_config_table[];

static inline uct_tcp_iface_t *uct_tcp_iface(uct_iface_h iface)
{
    return (uct_tcp_iface_t *)iface;
}

static inline uct_tcp_ep_t *uct_tcp_ep(uct_ep_h ep)
{
    return (uct_tcp_ep_t *)ep;
}

static inline uct_tcp_iface_t *uct_tcp_ep_iface(uct_tcp_ep_t *ep)
{
    return uct_tcp_iface(ep->super.super.iface);
}

/* tcp_iface.c */
ucs_status_t uct_tcp_iface_open(uct_md_h md, uct_worker_h worker,
                                const uct_iface_params_t *params,
                                const uct_iface_config_t *tl_config,
                                uct_iface_h *iface_p);
/* Applies the socket options of the iface config to @a fd (@a connector:
 * the side that calls connect()). */
ucs_status_t uct_tcp_iface_set_sockopts(uct_tcp_iface_t *iface, int fd,
                                        int connector);

/* Files of the object tree (uct_tl_t::iface_vfs_init/ep_vfs_init) */
void uct_tcp_iface_vfs_init(uct_iface_h tl_iface);
void uct_tcp_ep_vfs_init(uct_ep_h tl_ep);

/* tcp_peer.c: remote hosts and their share of the receive buffers */
ucs_status_t uct_tcp_peer_table_init(uct_tcp_peer_table_t *table);
void uct_tcp_peer_table_cleanup(uct_tcp_peer_table_t *table);
/* A reference to the peer of @a addr (created on first use), or
 * UCT_TCP_PEER_NONE when out of memory (logged). */
uint32_t uct_tcp_peer_get(uct_tcp_iface_t *iface,
                          const uct_tcp_sockaddr_t *addr);
/* Drops a reference taken by uct_tcp_peer_get(). */
void uct_tcp_peer_put(uct_tcp_iface_t *iface, uint32_t index);
/* Gives @a ep a reference to the peer of @a addr unless it has one. */
ucs_status_t uct_tcp_ep_set_peer(struct uct_tcp_ep *ep,
                                 const uct_tcp_sockaddr_t *addr);
/* @a ep's receive buffer now holds a partial message: accounts it to the
 * ep's peer and enforces the share and the pool, dropping other
 * connections (see tcp_peer.c). 0 if @a ep itself had to be dropped. */
int uct_tcp_ep_rx_hold(struct uct_tcp_ep *ep);
/* The buffer no longer holds anything (it is released or handed on). */
void uct_tcp_rx_unhold(uct_tcp_rx_t *rx);
/* Bytes came into the held buffer @a rx: its connection was read most
 * recently. */
void uct_tcp_rx_touch(uct_tcp_rx_t *rx);

static inline uct_tcp_peer_t *uct_tcp_peer_of(uct_tcp_iface_t *iface,
                                              uint32_t index)
{
    void *peer;

    return ucs_ptr_array_lookup(&iface->peers.by_index, index, &peer)
               ? (uct_tcp_peer_t *)peer
               : NULL;
}

/* tcp_ep.c */
ucs_status_t uct_tcp_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_tcp_ep_destroy(uct_ep_h tl_ep);
/* An internal ep for a socket accepted on the listening socket. */
ucs_status_t uct_tcp_ep_accept(uct_tcp_iface_t *iface, int fd,
                               const uct_tcp_sockaddr_t *peer);
/* Frees the side state (uct_tcp_ep_ext_t) of the eps that no longer
 * need it (housekeeping). */
void uct_tcp_iface_release_idle_ext(uct_tcp_iface_t *iface);
/* Frees an ep and its socket, cancelling what is outstanding. */
void uct_tcp_ep_free(uct_tcp_ep_t *ep);
/* Reads the socket of a connected ep once and handles what came;
 * nonzero if anything was read. */
unsigned uct_tcp_ep_rx_progress(struct uct_tcp_ep *ep);
/* Event set handler of an ep's socket. */
void uct_tcp_ep_handle_events(uct_tcp_ep_t *ep, ucs_event_set_types_t events);
/* Writes what deferred eps hold: those whose window has passed, or all. */
void uct_tcp_ep_defer_progress(uct_tcp_iface_t *iface, int force);
/* Drops the connections whose partly received message has not moved for
 * UCX_TCP_PEER_TIMEOUT. */
void uct_tcp_iface_rx_check_stale(uct_tcp_iface_t *iface, ucs_time_t now);
/* Reconnects eps whose retry time has come (and drops those that stayed
 * over their reply budget, or sent no handshake, too long). */
void uct_tcp_ep_retry_progress(uct_tcp_iface_t *iface);
/* Flush support for the iface: ask for an acknowledgement if needed;
 * whether every acknowledgement asked for has come. */
ucs_status_t uct_tcp_ep_flush_request_ack(uct_tcp_ep_t *ep);
int uct_tcp_ep_is_flushed(const uct_tcp_ep_t *ep);

ucs_status_t uct_tcp_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr);
ucs_status_t uct_tcp_ep_connect_to_ep(uct_ep_h tl_ep,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_ep_addr_t *ep_addr);
ucs_status_t uct_tcp_ep_fence(uct_ep_h tl_ep, unsigned flags);
ucs_status_t uct_tcp_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                 const void *payload, unsigned length);
ucs_status_t uct_tcp_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                     const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_tcp_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                            uct_pack_callback_t pack_cb, void *arg,
                            unsigned flags);
ucs_status_t uct_tcp_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                 unsigned header_length, const uct_iov_t *iov,
                                 size_t iovcnt, unsigned flags,
                                 uct_completion_t *comp);
ucs_status_t uct_tcp_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                  unsigned length, uint64_t remote_addr,
                                  uct_rkey_t rkey);
ssize_t uct_tcp_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                             void *arg, uint64_t remote_addr, uct_rkey_t rkey);
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
