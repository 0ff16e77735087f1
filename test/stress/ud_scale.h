/*
 * uct_ud_scale: what its files share. The program is described in
 * uct_ud_scale.c; each file's header says what it holds.
 */
#ifndef TEST_STRESS_UD_SCALE_H_
#define TEST_STRESS_UD_SCALE_H_

#include "stream_check.h" /* sc_now(), sc_fill(), sc_check(): the clock
                             and the data pattern of stream_util.c */

#include <common/uct_iface_open.h>
#include <uct/api/uct.h>
#include <ucs/async/async.h>

#include <stddef.h>
#include <stdint.h>

#define US_PROG          "uct_ud_scale"
#define US_TL            "ud_verbs"
#define US_SLOT          64          /* bytes of the server's PUT area per ep */
#define US_PATTERN       32          /* pattern bytes in an ep's AM */
#define US_ADDR_MAX      128         /* a device, interface or packed key */
#define US_CLIENT_BUF    4096        /* the client's registered buffer */
#define US_MAGIC         0x55445343u /* "UDSC" in every message */
#define US_ROUNDS        2           /* round 1, then one after the kill */
#define US_SETTLE_SEC    0.5         /* idle before the heap is measured */
#define US_FILE_POLL_SEC 0.02
#define US_MAX_ERRORS    10 /* error lines printed; all are counted */

#define US_DEFAULT_EPS     1000u
#define US_DEFAULT_CLIENTS 5u
#define US_DEFAULT_WINDOW  64u
#define US_DEFAULT_LIMIT   120u /* -T, seconds */

/* Active message ids */
enum {
    US_AM_EP   = 1, /* client -> server, on every ep: us_ep_msg_t */
    US_AM_DONE = 2, /* client -> server: us_ctrl_msg_t, value = the
                       client's eps: the round's operations completed */
    US_AM_DATA = 3, /* server -> client: us_ctrl_msg_t + pattern, after
                       the server's PUT into the client */
    US_AM_CTRL = 4  /* server -> client: us_ctrl_msg_t of a US_CTRL_* */
};

/* us_ctrl_msg_t::type of US_AM_CTRL */
enum {
    US_CTRL_VERIFIED = 1, /* the server checked the round: value errors */
    US_CTRL_ROUND    = 2, /* start the round */
    US_CTRL_FIN      = 3  /* the run ended */
};

/* Start of every AM on a client's eps; US_PATTERN bytes of the pattern
 * of (client, ep, round) follow, then on ep 0 in round 1 the client's
 * us_hello_t */
typedef struct {
    uint32_t magic;
    uint32_t client;
    uint32_t ep; /* the client's index of the ep */
    uint32_t round;
    uint32_t hello_len; /* bytes after the pattern */
    uint32_t reserved;
} us_ep_msg_t;

/* The client's addresses: the server connects an ep to its interface and
 * PUTs into its buffer. dev_len + iface_len + rkey_len bytes follow. */
typedef struct {
    uint64_t buf;
    uint16_t dev_len;
    uint16_t iface_len;
    uint16_t rkey_len;
    uint16_t reserved;
} us_hello_t;

/* Every other message */
typedef struct {
    uint32_t magic;
    uint32_t client;
    uint32_t round;
    uint16_t type; /* US_AM_CTRL: US_CTRL_* */
    uint16_t reserved;
    uint32_t value;
} us_ctrl_msg_t;

/* The ud_verbs interface's 64-bit counters that uct_ud_scale reads */
enum {
    US_STAT_CREQ_RESENT,
    US_STAT_CREQ_QUEUED,
    US_STAT_TX_RESENT, /* also the first send of what waited for a CREP */
    US_STAT_RX_DROPPED,
    US_STAT_RX_DUP,
    US_STAT_RX_STALE, /* for eps gone from here */
    US_STAT_IDLE_PROBES,
    US_STAT_PEER_RECLAIMED,
    US_STAT_TX_NO_SLOT, /* control packets that found no send slot */
    US_STAT_LAST
};

/* Seconds between status lines (server, clients) */
#define US_STATUS_SEC 10.0

/* The ud_verbs interface's own counters (ud_scale_iface.c) */
typedef struct {
    unsigned eps;         /* every ep of the interface */
    unsigned private_eps; /* made by peers' connection requests */
    unsigned ahs;         /* address handles */
    unsigned rx_posted;   /* receive buffers in the queue */
    unsigned rx_queue_len;
    int tx_available;   /* send queue slots free */
    unsigned active;    /* eps with unacknowledged packets or a request */
    unsigned acks_owed; /* eps owed an acknowledgement */
    unsigned creq_cwnd; /* CREQs outstanding at most now (0: no cut yet) */
    uint64_t creq_cuts; /* halvings of that window */
    double timeout;     /* UD_TIMEOUT, seconds */
    uint64_t stats[US_STAT_LAST];
} us_counters_t;

/* A client's endpoint */
typedef struct us_cep {
    uct_completion_t comp; /* of its flushes */
    struct us_ctx *ctx;
    uct_ep_h ep;
    double t_create;
    float connect_us; /* uct_ep_create() to its first AM flushed */
    uint8_t state;    /* US_CEP_* */
    uint8_t round;    /* of the AM and PUT in flight */
} us_cep_t;

/* Server: what it knows of a client process */
typedef struct {
    unsigned eps;  /* the client's eps */
    unsigned base; /* global index of its ep 0 */
    int hello;     /* addresses received */
    uint8_t dev_addr[US_ADDR_MAX];
    uint8_t iface_addr[US_ADDR_MAX];
    uint8_t rkey_buf[US_ADDR_MAX];
    uint64_t buf;
    uct_ep_h ep; /* the server's one ep to the client */
    uct_rkey_bundle_t rkey;
    int have_rkey;
    int data_sent;   /* the server's AM and PUT sent, flushed */
    int done_round;  /* last DONE received */
    int checked;     /* last round whose DONE was checked */
    int dead;        /* killed (the killed file says) */
    unsigned errors; /* found in its messages */
    unsigned failed; /* error handler calls on its ep */
} us_peer_t;

typedef struct us_ctx {
    /* options */
    const char *dev_name;
    const char *dir;
    int client_id;    /* -1: server */
    unsigned num_eps; /* in all */
    unsigned num_clients;
    unsigned window;
    double limit;

    /* transport */
    uct_component_h component;
    uct_md_h md;
    test_uct_open_t uct; /* async context, worker, interface */
    int event_fd;        /* -1: none */
    void *buf;
    size_t buf_size;
    uct_mem_h memh;
    uint8_t rkey_buf[US_ADDR_MAX];
    size_t rkey_len;
    size_t max_msg; /* largest AM */

    /* run state */
    int failed; /* an error was found: exit 1 */
    unsigned errors;
    unsigned handler_calls; /* error handler */
    int idle_spins;
    unsigned wait_calls; /* of us_wait(): a client's status line */
    double next_status;  /* of a client's next status line (sc_now()) */

    /* client */
    unsigned my_eps;
    unsigned my_base;
    us_cep_t *ceps;
    unsigned *queue; /* ring of ep indices with an action due */
    unsigned q_head, q_count;
    unsigned next_create;
    unsigned in_flight;
    unsigned done_eps;
    uint8_t server_dev[US_ADDR_MAX];
    uint8_t server_iface[US_ADDR_MAX];
    uint8_t server_rkey[US_ADDR_MAX];
    uint64_t server_buf;
    uct_rkey_bundle_t rkey;
    int have_rkey;
    unsigned round;     /* in progress or last */
    int round_wanted;   /* US_AM_ROUND received: that round */
    int verified_round; /* US_AM_VERIFIED received: that round */
    int data_ok;        /* the server's AM and PUT checked */
    int fin;
    double t_first, t_last; /* first create, last ep connected */

    /* server */
    us_peer_t *peers;
    uint8_t *am_round; /* per global ep: round of its last AM */
    unsigned long am_rx;
    unsigned long put_ok;
    unsigned long data_rx; /* server -> client AMs that clients checked */
} us_ctx_t;

/* us_cep_t::state: each send state is followed by its flush's two */
enum {
    US_CEP_IDLE,     /* nothing in flight */
    US_CEP_AM,       /* the round's AM to send */
    US_CEP_AM_FLUSH, /* its flush to start */
    US_CEP_AM_WAIT,  /* the flush is in flight */
    US_CEP_PUT,      /* the PUT to send */
    US_CEP_PUT_FLUSH,
    US_CEP_PUT_WAIT,
    US_CEP_DONE /* the round is complete on the ep */
};

/* ------------------------------------------------------------------------
 * ud_scale_iface.c: interface, memory, waiting, files, counters
 */

void us_error(us_ctx_t *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *us_side(const us_ctx_t *ctx);
int us_open(us_ctx_t *ctx, size_t buf_size);
void us_close(us_ctx_t *ctx);
int us_set_handler(us_ctx_t *ctx, uint8_t id, uct_am_callback_t cb);
/* calloc() of @a count objects of @a size, NULL (reported) when out of
 * memory */
void *us_calloc(us_ctx_t *ctx, size_t count, size_t size);
/* An ep connected to the interface of @a dev_addr and @a iface_addr;
 * 0 or -1 (reported) */
int us_ep_create(us_ctx_t *ctx, const void *dev_addr, const void *iface_addr,
                 uct_ep_h *ep_p);
/* Unpacks the remote key at @a buf; 0 or -1 (reported with @a whose) */
int us_rkey_unpack(us_ctx_t *ctx, const void *buf, const char *whose,
                   uct_rkey_bundle_t *rkey, int *have_p);
/* What an am_bcopy sends: @a length bytes at @a data (us_pack()) */
typedef struct {
    const void *data;
    size_t length;
} us_pack_t;
size_t us_pack(void *dest, void *arg);
/* Progress; after a few calls that found nothing, sleep on the event fd
 * up to @a max_ms. Returns what progress did. */
unsigned us_wait(us_ctx_t *ctx, int max_ms);
/* An AM of @a length bytes at @a data, retried while the transport has no
 * resources, up to -T; 0 or -1 (reported) */
int us_send(us_ctx_t *ctx, uct_ep_h ep, uint8_t id, const void *data,
            size_t length);
/* Flushes @a ep and waits for it, up to -T; 0 or -1 (reported) */
int us_flush(us_ctx_t *ctx, uct_ep_h ep);
void us_counters(us_ctx_t *ctx, us_counters_t *c);
/* The receive buffers posted now (cheaper than us_counters()) */
unsigned us_rx_posted(us_ctx_t *ctx);
/* The name of counter @a stat (US_STAT_*) in result files */
const char *us_stat_name(unsigned stat);
/* The key of a pattern: an AM or PUT of (client, global ep, round) */
uint64_t us_key(unsigned client, unsigned gidx, unsigned round, int put);
/* CLOCK_REALTIME in seconds: the driver's clock (date +%s.%N) */
double us_realtime(void);
/* A path in the run directory */
void us_path(const us_ctx_t *ctx, char *path, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int us_file_exists(const char *path);
/* Writes @a text to @a path atomically (a temporary file, then rename) */
int us_file_write(us_ctx_t *ctx, const char *path, const char *text);
/* The share of client @a id of the eps: its count and first index */
void us_client_share(const us_ctx_t *ctx, unsigned id, unsigned *eps_p,
                     unsigned *base_p);
/* The figure of one rxe hw counter of the device of @a dev ("rxe_v0:1"),
 * or -1 */
long us_hw_counter(const char *dev, const char *name);

/* ------------------------------------------------------------------------
 * ud_scale_client.c and ud_scale_server.c
 */

int us_client_run(us_ctx_t *ctx);
int us_server_run(us_ctx_t *ctx);

#endif
