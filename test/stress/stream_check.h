/*
 * uct_stream_check: what its files share. The program is described in
 * uct_stream_check.c; each file's header says what it holds.
 */
#ifndef TEST_STRESS_STREAM_CHECK_H_
#define TEST_STRESS_STREAM_CHECK_H_

#include <uct/api/uct.h>
#include <ucs/async/async.h>

#include <stddef.h>
#include <stdint.h>

#define SC_PROG             "uct_stream_check"
#define SC_DEFAULT_TL       "tcp"
#define SC_DEFAULT_TCP_DEV  "lo"
#define SC_DEFAULT_PORT     13373
#define SC_DEFAULT_BYTES    (200ull * 1024 * 1024)
#define SC_DEFAULT_MAX_SIZE (64 * 1024)
#define SC_DEFAULT_STALL                          \
    60.0 /* -T: seconds without any progress, and \
          * for the error handler to confirm a    \
          * failure */
#define SC_MAX_EPS          1024
#define SC_PUT_AREA         (32u * 1024 * 1024) /* all endpoints' halves */
#define SC_PUT_HALF_MAX     (4u * 1024 * 1024)
#define SC_PUT_HALF_MIN     (16u * 1024)
#define SC_MAX_SIZE_LIMIT   SC_PUT_HALF_MAX /* -s */
#define SC_SLOTS_PER_EP     2
#define SC_SLOTS_MIN        16
#define SC_SLOTS_MAX        256
#define SC_MAX_IOV          8    /* most iov entries a zcopy uses */
#define SC_CONNECT_TIMEOUT  30.0 /* seconds the client retries */
#define SC_OOB_CHECK_SEC    0.01
#define SC_EP_CHECK_IDLE    1.0         /* -e: probe the endpoints when idle */
#define SC_OOB_MAGIC        0x6b636874u /* control connection, version 2 */
#define SC_MSG_MAGIC        0x5354u     /* "ST" in every data AM */
#define SC_EXIT_ERROR       1
#define SC_EXIT_PEER_FAILED 3

/* Active message ids */
enum {
    SC_AM_DATA  = 1, /* client -> server: sc_msg_hdr_t + pattern */
    SC_AM_ROUND = 2, /* client -> server: sc_round_msg_t */
    SC_AM_FIN   = 3, /* client -> server: sc_fin_msg_t */
    SC_AM_HELLO = 4, /* both ways: sc_ack_msg_t, round unused */
    SC_AM_ACK   = 5  /* server -> client: sc_ack_msg_t, round verified */
};

typedef enum { SC_MODE_AM, SC_MODE_PUT, SC_MODE_BOTH } sc_mode_t;

typedef enum {
    SC_CONNECT_AUTO, /* ep when the transport can, else iface */
    SC_CONNECT_IFACE,
    SC_CONNECT_EP
} sc_connect_t;

typedef enum {
    SC_OP_AM_SHORT,
    SC_OP_AM_BCOPY,
    SC_OP_AM_ZCOPY,
    SC_OP_PUT_SHORT,
    SC_OP_PUT_BCOPY,
    SC_OP_PUT_ZCOPY,
    SC_OP_LAST
} sc_op_t;

/* What a sending endpoint does next */
typedef enum {
    SC_ST_SEND,       /* data operations */
    SC_ST_FLUSH,      /* uct_ep_flush to be started */
    SC_ST_FLUSH_WAIT, /* the flush is in progress */
    SC_ST_ROUND,      /* the ROUND message to be sent */
    SC_ST_FIN,        /* the FIN message to be sent */
    SC_ST_DONE
} sc_state_t;

extern const char *sc_mode_names[];
extern const char *sc_connect_names[];
extern const char *sc_op_names[];

/* ------------------------------------------------------------------------
 * Wire formats (both sides run the same program on the same machine type)
 */

/* Start of every data AM; the pattern of (ep, seq) follows */
typedef struct {
    uint64_t seq;    /* per endpoint, from 0 */
    uint32_t length; /* whole message, this header included */
    uint16_t ep;     /* the sender's endpoint index */
    uint16_t magic;
} sc_msg_hdr_t;

/* Totals of one endpoint: sent (client) or verified (server) */
typedef struct {
    uint64_t am_msgs;
    uint64_t am_bytes;
    uint64_t put_msgs;
    uint64_t put_bytes;
    uint64_t rounds;
} sc_totals_t;

typedef struct {
    uint32_t ep;
    uint32_t reserved;
    uint64_t round;
    uint64_t bytes; /* filled from the start of the half */
    uint64_t puts;
    uint64_t am_seq; /* data AMs sent on the endpoint before it */
} sc_round_msg_t;

typedef struct {
    uint32_t ep;
    uint32_t reserved;
    sc_totals_t totals;
} sc_fin_msg_t;

typedef struct {
    uint32_t ep;
    uint32_t reserved;
    uint64_t round;
} sc_ack_msg_t;

/* Control connection: the client's parameters */
typedef struct {
    uint32_t magic;
    uint32_t mode;
    uint32_t connect; /* SC_CONNECT_IFACE or SC_CONNECT_EP */
    uint32_t num_eps;
    uint64_t bytes; /* per endpoint; 0: no limit */
    uint64_t msgs;  /* per endpoint; 0: no limit */
    uint64_t max_size;
    int64_t seconds; /* < 0: stop after bytes/msgs */
    char tl_name[32];
} sc_wire_params_t;

/* Control connection: start of an address; the device address, the
 * interface address, num_eps endpoint addresses and the remote key
 * follow */
typedef struct {
    uint32_t magic;
    uint32_t dev_addr_len;
    uint32_t iface_addr_len;
    uint32_t ep_addr_len;
    uint32_t num_eps;
    uint32_t rkey_len;
    uint64_t buf_addr; /* server: the PUT area */
    uint64_t half;     /* server: bytes of each half of an endpoint's */
} sc_addr_hdr_t;

/* ------------------------------------------------------------------------
 * State
 */

typedef struct sc_ctx sc_ctx_t;

/* A registered send buffer lent to a zcopy operation until it completes */
typedef struct {
    uct_completion_t super;
    sc_ctx_t *ctx;
    char *buf;
    unsigned index;
    unsigned ep; /* the endpoint that used it last */
} sc_slot_t;

/* What a data operation sends: message header and pattern position */
typedef struct {
    uint64_t key;  /* pattern key */
    uint64_t word; /* pattern index of the first word */
    uint64_t seq;  /* AM: sequence number */
    size_t length;
    uint16_t ep;
    int with_hdr; /* AM: sc_msg_hdr_t first */
} sc_pack_t;

/* Size limits of one operation kind, from -s and the interface */
typedef struct {
    int enabled;
    size_t min;
    size_t max;
    size_t max_iov;    /* zcopy */
    int hdr_in_header; /* am_zcopy: our header as the AM header */
} sc_op_limits_t;

/* One endpoint and its independent stream */
typedef struct {
    sc_ctx_t *ctx;
    unsigned index;
    uct_ep_h ep;
    uint64_t rng;
    sc_totals_t count; /* sent (client), verified (server) */
    int hello_rx;

    /* client */
    sc_state_t state;
    sc_state_t after_flush;
    int final_round; /* FIN follows the ROUND */
    int queued;      /* pending request on the ep */
    uct_pending_req_t pending;
    uct_completion_t flush_comp;
    unsigned next_op;
    int staged; /* the next data operation is ready */
    sc_op_t op;
    sc_pack_t pack;
    sc_slot_t *slot;
    uint64_t remote_addr;
    uint64_t msgs; /* data operations posted */
    uint64_t round;
    uint64_t round_used;
    uint64_t round_puts;
    int64_t acked_round;
    uint64_t put_addr; /* the server's area for this ep */

    /* server */
    char *put_area;
    int64_t ack_to_send; /* last verified round */
    int64_t ack_sent;
    int hello_tx;
    int fin_rx;
} sc_stream_t;

struct sc_ctx {
    /* options */
    const char *tl_name;
    const char *dev_name;
    const char *server; /* NULL: we are the server */
    uint16_t port;
    sc_mode_t mode;
    sc_connect_t connect;
    unsigned num_eps;
    uint64_t bytes; /* in all; 0: no limit */
    uint64_t msgs;  /* per endpoint; 0: no limit */
    size_t max_size;
    int64_t seconds;
    double stall_limit;
    int err_handler;
    int verbose;
    const char *addr_file; /* -a: where to write our addresses */
    int linger;            /* -L: serve on after the client, until a
                              signal */

    /* transport */
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_component_h component;
    uct_md_h md;
    uct_md_attr_t md_attr;
    uct_iface_h iface;
    uct_iface_attr_t attr;
    sc_stream_t *streams;
    void *buf; /* server: PUT area; client: slots */
    size_t buf_size;
    uct_mem_h memh;
    uct_rkey_bundle_t rkey;
    int have_rkey;
    uint64_t remote_buf;
    size_t half;
    int use_pending;

    /* control connection */
    int sock;
    double next_oob_check;
    double oob_closed_at; /* > 0: the peer closed it */
    char verdict;         /* client: 'K' or 'F' from the server */

    /* run state */
    int stopped;
    int exit_code;
    int finishing;            /* failures past this are expected */
    ucs_status_t peer_status; /* from the error handler */
    ucs_status_t op_status;   /* first failed operation */
    const char *op_name;
    unsigned op_ep;
    double op_failed_at;
    double last_activity;
    int moved; /* something moved since the check */
    double next_ep_check;
    unsigned spins;

    /* client */
    int ops[SC_OP_LAST];
    unsigned num_ops;
    sc_op_limits_t limits[SC_OP_LAST];
    sc_slot_t *slots;
    unsigned num_slots;
    unsigned *free_slots; /* stack of free slot indices */
    unsigned num_free_slots;
    char *short_buf;   /* am_short/put_short messages */
    uint64_t ep_bytes; /* per endpoint; 0: no limit */
    int time_up;
    unsigned hellos;       /* endpoints the server answered */
    uint64_t pending_adds; /* actions queued on an endpoint */
    uint64_t retries;      /* refused, retried after progress */

    /* server */
    unsigned fins;
    int replies_due; /* a HELLO or ACK to send */
};

/* ------------------------------------------------------------------------
 * stream_util.c: time, errors, patterns, sizes
 */

double sc_now(void);
const char *sc_side(const sc_ctx_t *ctx);
int sc_is_client(const sc_ctx_t *ctx);
void sc_stop(sc_ctx_t *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sc_fail(sc_ctx_t *ctx, const char *what, ucs_status_t status);
uint64_t sc_am_key(unsigned ep, uint64_t seq);
uint64_t sc_put_key(unsigned ep, uint64_t round);
void sc_fill(void *dest, size_t length, uint64_t key, uint64_t word);
size_t sc_check(const void *src, size_t length, uint64_t key, uint64_t word,
                uint8_t *got, uint8_t *expected);
size_t sc_pack_data(void *dest, void *arg);
size_t sc_pick_size(uint64_t *rng, size_t min, size_t max);
uint64_t sc_rand(uint64_t *rng);
int sc_parse_size(const char *str, uint64_t *value_p);

/* ------------------------------------------------------------------------
 * stream_progress.c: progress, failures, control messages
 */

ucs_status_t sc_err_handler(void *arg, uct_ep_h ep, ucs_status_t status);
int sc_op_failed(sc_ctx_t *ctx, unsigned ep, const char *what,
                 ucs_status_t status);
int sc_progress(sc_ctx_t *ctx);
void sc_comp_cb(uct_completion_t *self);
/* From now on SIGTERM and SIGINT end sc_serve() rather than the process
 * (-L, from the verdict on) */
void sc_catch_signals(void);
/* Serves the interface (progress, sleeping on its event fd when nothing
 * happens) until @a fd is readable (if >= 0), sc_catch_signals() caught a
 * signal, or @a deadline (sc_now(), if > 0) passed. 0, or -1 if the run
 * stopped. */
int sc_serve(sc_ctx_t *ctx, int fd, double deadline);
ucs_status_t sc_post_ctrl(uct_ep_h ep, uint8_t id, const void *data,
                          size_t length);
int sc_send_ctrl(sc_ctx_t *ctx, sc_stream_t *stream, uint8_t id,
                 const void *data, size_t length, int wait);

/* ------------------------------------------------------------------------
 * stream_oob.c: control connection, addresses, endpoints
 */

int sc_addr_write(sc_ctx_t *ctx);
int sc_oob_accept(sc_ctx_t *ctx);
int sc_oob_connect(sc_ctx_t *ctx);
int sc_oob_send(sc_ctx_t *ctx, const void *data, size_t length);
void sc_oob_check(sc_ctx_t *ctx, double now);
int sc_exchange(sc_ctx_t *ctx);

/* ------------------------------------------------------------------------
 * stream_setup.c: memory domain, interface, buffers, cleanup
 */

int sc_md_open(sc_ctx_t *ctx);
int sc_iface_open(sc_ctx_t *ctx);
int sc_streams_alloc(sc_ctx_t *ctx);
int sc_server_buffers_alloc(sc_ctx_t *ctx);
int sc_client_buffers_alloc(sc_ctx_t *ctx);
void sc_cleanup(sc_ctx_t *ctx);

/* ------------------------------------------------------------------------
 * stream_client.c and stream_server.c
 */

int sc_client_run(sc_ctx_t *ctx);
int sc_server_run(sc_ctx_t *ctx);
ucs_status_t sc_am_hello(void *arg, void *data, size_t length, unsigned flags);
ucs_status_t sc_am_ack(void *arg, void *data, size_t length, unsigned flags);
ucs_status_t sc_am_data(void *arg, void *data, size_t length, unsigned flags);
ucs_status_t sc_am_round(void *arg, void *data, size_t length, unsigned flags);
ucs_status_t sc_am_fin(void *arg, void *data, size_t length, unsigned flags);

#endif
