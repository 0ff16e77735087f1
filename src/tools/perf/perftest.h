/*
 * uct_perftest: shared types of the benchmark.
 *
 * A run has one or two "sides". A side is one end of the test: an async
 * context, a worker, an interface on TL/DEV, an endpoint to the other
 * side, and a registered buffer [send half | receive half] the peer
 * reaches with RMA. In loopback (-l) the process holds both sides and
 * progresses them alternately; in client/server mode it holds one and
 * the peer process holds the other, and the two trade addresses over an
 * out-of-band TCP socket (perftest_oob.c).
 *
 * Every test is a pair of step functions (perftest_tests.c), one for the
 * initiator and one for the responder. A step does a bounded amount of
 * work and never blocks, so the same code runs both sides of a loopback
 * run in one thread and one side of a client/server run.
 *
 * A peer that dies or stops ends the run with one line on stderr and
 * exit code 1: every loop that waits for it watches the interface's
 * error handler, the status of operations, the out-of-band socket, and
 * the -T limit on time without progress.
 */
#ifndef UCT_PERFTEST_H_
#define UCT_PERFTEST_H_

#include "perftest_clock.h"

#include <uct/api/uct.h>

#include <stddef.h>
#include <stdint.h>

/* The harness uses nothing of a UCT implementation beyond uct.h and what
 * uct.h includes, so it builds against openuct and UCX alike */
#define PERF_CONTAINER_OF(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr)-offsetof(_type, _member)))

static inline size_t perf_max(size_t a, size_t b)
{
    return (a > b) ? a : b;
}

#define PERF_MAX_SIZES 32
/* Active message ids: the initiator receives on PERF_AM_ID (+2 for
 * control), the responder on PERF_AM_ID + 1 (+3 for control). Distinct
 * ids let both sides share one interface (loopback over self). */
#define PERF_AM_ID               1
#define PERF_AM_CTRL_OFFSET      2
#define PERF_DEFAULT_PORT        13338
#define PERF_DEFAULT_ITERS       10000UL
#define PERF_DEFAULT_WARMUP      1000UL
#define PERF_DEFAULT_OUTSTANDING 32U  /* -O: completions in flight */
#define PERF_DEFAULT_FC_WINDOW   127U /* -W: am_bw receiver credits */
#define PERF_DEFAULT_SIZE        8
#define PERF_BUF_ALIGN           4096
#define PERF_DEFAULT_TIMEOUT     60 /* -T: seconds without progress */
#define PERF_MAX_TIMEOUT         86400
#define PERF_RNDV_RKEY_MAX       256 /* rndv_lat: packed rkey bytes */
#define PERF_CLOCK_CHECK_MASK                 \
    0xffUL /* wait loops read the clock every \
              256 passes */

/* Exit codes */
enum {
    PERF_EXIT_OK          = 0,
    PERF_EXIT_FAIL        = 1, /* runtime failure */
    PERF_EXIT_UNSUPPORTED = 2  /* bad command line, or the transport
                                  cannot run the test */
};

typedef enum {
    PERF_TEST_AM_LAT,
    PERF_TEST_AM_BW,
    PERF_TEST_PUT_LAT,
    PERF_TEST_PUT_BW,
    PERF_TEST_GET_LAT,
    PERF_TEST_GET_BW,
    PERF_TEST_ATOMIC_ADD_LAT,
    PERF_TEST_RNDV_LAT,
    PERF_TEST_LAST
} perf_test_t;

/* -C: how the endpoints connect */
typedef enum {
    PERF_CONN_AUTO, /* to the peer's endpoint when the transport can, as
                       ucx_perftest does; else to its interface */
    PERF_CONN_EP,
    PERF_CONN_IFACE,
    PERF_CONN_LAST
} perf_conn_t;

typedef enum {
    PERF_MODE_SHORT,
    PERF_MODE_BCOPY,
    PERF_MODE_ZCOPY,
    PERF_MODE_LAST
} perf_mode_t;

/* What kind of operation a test posts */
typedef enum {
    PERF_OP_AM,
    PERF_OP_PUT,
    PERF_OP_GET,
    PERF_OP_ATOMIC_ADD,
    PERF_OP_RNDV /* an AM with an rkey, a GET zcopy, an AM back */
} perf_op_t;

/* rndv_lat: the active message that offers message @a seq to the peer,
 * followed by the packed rkey of the sender's buffer */
typedef struct {
    uint64_t seq;
    uint64_t addr;     /* where the message starts in the sender */
    uint32_t rkey_len; /* packed rkey bytes that follow */
    uint32_t reserved;
} perf_rts_hdr_t;

/* Static description of a test */
typedef struct {
    const char *name;
    perf_op_t op;
    int is_latency; /* timed per iteration; otherwise bandwidth */
    const char *desc;
} perf_test_desc_t;

extern const perf_test_desc_t perf_tests[PERF_TEST_LAST];
extern const char *perf_mode_names[PERF_MODE_LAST];
extern const char *perf_conn_names[PERF_CONN_LAST];

/* Parameters of a run; the client sends the run part to the server */
typedef struct {
    perf_test_t test;
    perf_mode_t mode;
    size_t sizes[PERF_MAX_SIZES];
    unsigned num_sizes;
    unsigned long iters;
    unsigned long warmup;
    unsigned outstanding; /* -O: operations with a completion
                             in flight */
    unsigned fc_window;   /* -W: am_bw messages the receiver has
                             not acknowledged, 0 for no limit */
    perf_conn_t conn;     /* -C */
    const char *tl_name;
    const char *dev_name;
    const char *server; /* client: the server's host name */
    uint16_t port;
    int loopback;
    unsigned clock_batch; /* -B: loopback am_lat short reads the
                             clock every this many iterations */
    int one_message;      /* -1: loopback am_lat as ucx_perftest
                             -l times it: one message per
                             iteration, halved */
    int client_server;    /* -p or a server name was given */
    int csv;
    unsigned timeout; /* -T: seconds without progress from
                         the peer before giving up, 0 for
                         no limit; each side has its own */
} perf_params_t;

/* A completion for one operation in flight */
typedef struct perf_comp {
    uct_completion_t super;
    struct perf_side *side;
    unsigned index;
} perf_comp_t;

/* What one side tells the other (perftest_setup.c packs it) */
typedef struct {
    void *data;
    size_t length;
} perf_blob_t;

typedef struct perf_side {
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_iface_h iface;
    uct_iface_attr_t attr;
    uct_ep_h ep;
    int initiator;      /* 1: sends first and measures */
    int borrowed;       /* async, worker and iface belong to
                           the other side (loopback over a
                           transport that reaches only its
                           own interface) */
    uint8_t am_id;      /* where this side receives data */
    uint8_t peer_am_id; /* where the peer does */

    /* [send half | receive half], registered when the md can; allocated
     * by the md (mem) when it allocates and does not register */
    char *buf;
    size_t half;
    uct_mem_h memh;
    uct_allocated_memory_t mem;
    int md_allocated;

    /* The peer's buffer */
    uint64_t remote_buf;
    uct_rkey_bundle_t rkey;
    int have_rkey;

    /* Active messages received (the handler counts them) */
    volatile unsigned long am_rx;
    /* Initiator of am_bw: how many of our messages the responder has
     * reported received (control messages) */
    volatile unsigned long peer_rx;

    /* Completions for operations in flight: a stack of free slots */
    perf_comp_t *comps;
    unsigned *free_comps;
    unsigned num_free;
    unsigned num_comps;
    unsigned long completed;  /* completions seen, for -T */
    ucs_status_t comp_status; /* first failed completion */

    /* Set by the interface's error handler when the endpoint failed */
    volatile ucs_status_t peer_status;

    /*
     * rndv_lat. Sending message N: the send half is registered (send_memh)
     * until the peer's FIN for N (a control message, counted in peer_rx)
     * is here. Receiving: the AM handler stores the peer's RTS (rts_*);
     * progress unpacks its rkey, registers the receive half (get_memh),
     * GETs the message, and on completion releases the rkey, sends the
     * FIN and deregisters; completed counts the messages received.
     */
    uct_mem_h send_memh;
    volatile int rts_ready;
    int get_state; /* PERF_RNDV_GET_* */
    uint64_t rts_seq;
    uint64_t rts_addr;
    uint32_t rts_rkey_len;
    uint8_t rts_rkey[PERF_RNDV_RKEY_MAX];
    uct_rkey_bundle_t get_rkey;
    uct_mem_h get_memh;
    uct_completion_t get_comp;
} perf_side_t;

/* perf_side_t::get_state */
enum {
    PERF_RNDV_GET_IDLE,   /* no RTS taken */
    PERF_RNDV_GET_READY,  /* rkey unpacked, receive half registered */
    PERF_RNDV_GET_POSTED, /* the GET is in flight */
    PERF_RNDV_GET_DONE,   /* the GET completed */
    PERF_RNDV_GET_CHECKED /* data checked; the FIN waits for resources */
};

/* Progress of one side through one message size */
typedef struct perf_run {
    struct perf_ctx *ctx;
    perf_side_t *side;
    const perf_params_t *params;
    size_t size;
    unsigned long total;    /* warmup + iters */
    unsigned long posted;   /* operations issued */
    unsigned long received; /* replies seen (latency tests) */
    unsigned long reported; /* am_bw responder: count last sent back */
    int flushing;           /* bandwidth initiator: flush posted */
    int flushed;            /* ... and completed */
    uct_completion_t flush_comp;
    int done;
    perf_time_t t_send;  /* latency: when the current ping left */
    perf_time_t t_start; /* first measured operation */
    perf_time_t t_end;
    perf_time_t *rtt;      /* latency: one round trip per iteration */
    unsigned long samples; /* entries of rtt, when not one per
                              iteration (-B) */
} perf_run_t;

typedef struct {
    size_t size;
    unsigned long iters;
    double typical_usec; /* latency p50 (latency tests) */
    double avg_usec;     /* latency average / time per op */
    double min_usec;     /* latency tests: fastest iteration */
    double p99_usec;     /* latency tests: 99th percentile */
    double bw_mibs;
    double msg_rate;
} perf_result_t;

typedef struct perf_ctx {
    perf_params_t params;
    uct_component_h component;
    uct_md_h md;
    uct_md_attr_t md_attr;
    uct_device_type_t dev_type;
    perf_side_t sides[2];
    unsigned num_sides; /* 2 in loopback, 1 otherwise */
    int sock;           /* out-of-band socket, -1 in loopback */
    int is_server;
    int conn_to_ep;

    /* Where the run is, for the failure report */
    size_t size;       /* 0 while setting up */
    const char *phase; /* "warm-up", "measurement", ... */
    int reported;      /* the failure line is out */

    /* Out-of-band socket: barrier tokens the peer sent that no barrier
     * has taken yet, and when we last sent a heartbeat */
    unsigned oob_barriers;
    perf_time_t oob_heartbeat;
} perf_ctx_t;

/* perftest.c */
void perf_report_peer_failure(perf_ctx_t *ctx, ucs_status_t status,
                              const char *how);
void perf_report_no_progress(perf_ctx_t *ctx);
void perf_print_progress(const perf_ctx_t *ctx, size_t size, unsigned long done,
                         unsigned long total, double elapsed_sec);

/* perftest_setup.c: transport objects */
int perf_md_find(perf_ctx_t *ctx);
int perf_side_open(perf_ctx_t *ctx, perf_side_t *side);
void perf_side_borrow(perf_side_t *side, const perf_side_t *owner);
int perf_check_caps(const perf_ctx_t *ctx, const uct_iface_attr_t *attr);
int perf_side_prepare(perf_ctx_t *ctx, perf_side_t *side, size_t max_size,
                      perf_blob_t *blob);
int perf_side_connect(perf_ctx_t *ctx, perf_side_t *side,
                      const perf_blob_t *peer);
void perf_side_close(perf_ctx_t *ctx, perf_side_t *side);
void perf_md_close(perf_ctx_t *ctx);

/* perftest_oob.c: out-of-band socket */
int perf_oob_accept(uint16_t port);
int perf_oob_connect(const char *server, uint16_t port);
int perf_oob_send(perf_ctx_t *ctx, const void *data, size_t length);
int perf_oob_recv(perf_ctx_t *ctx, void *data, size_t length);
int perf_oob_send_blob(perf_ctx_t *ctx, const perf_blob_t *blob);
int perf_oob_recv_blob(perf_ctx_t *ctx, perf_blob_t *blob);
int perf_oob_barrier(perf_ctx_t *ctx);
int perf_oob_watch(perf_ctx_t *ctx, perf_time_t now);
int perf_oob_send_params(perf_ctx_t *ctx, const perf_params_t *params);
int perf_oob_recv_params(perf_ctx_t *ctx, perf_params_t *params);

/* perftest_tests.c: test loops */
int perf_run_size(perf_ctx_t *ctx, size_t size, perf_result_t *result);

#endif
