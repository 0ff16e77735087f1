/*
 * The cma transport: zero-copy PUT and GET between processes of one host
 * with process_vm_writev()/process_vm_readv() on the peer's pid.
 *
 * There is no remote key. The kernel lets a process of the same user
 * that may ptrace us (Yama's ptrace_scope and our dumpable flag decide)
 * read and write our whole address space, so a key could not protect
 * anything: the trust boundary is the user id, which the device address
 * checks. An interface address names one process (pid and start time);
 * an endpoint holds that process (uct_sm_proc_t) and checks that it is
 * still the same one before every system call, so a pid reused by
 * another process is never written to.
 *
 * Operations: a zcopy whose total fits one segment (UCX_CMA_SEG_SIZE)
 * runs inside the call. A larger one, or any operation on an endpoint
 * that has operations queued (they run in order, so fence needs
 * nothing), is queued on its endpoint; the head operation of every
 * endpoint with work sits on the interface's active list, and progress
 * moves each by one segment per turn, round robin. Flush markers wait in
 * the endpoint queues behind the operations they cover.
 */
#ifndef UCT_CMA_H_
#define UCT_CMA_H_

#include <uct/base/uct_iface.h>
#include <ucs/datastruct/hash.h>
#include <uct/base/uct_md.h>
#include <uct/sm/base/sm_sys.h>
#include <ucs/datastruct/list.h>
#include <ucs/debug/log_limit.h>
#include <ucs/memory/mpool.h>

#include <stdio.h>

#define UCT_CMA_NAME "cma"

/* local blocks handed to one system call at most (the kernel's limit is
 * IOV_MAX, 1024; a segment rarely needs more than a few) */
#define UCT_CMA_CALL_IOV 64

/* The interface address: the process, as uct_sm_proc_open() takes it.
 * 12 bytes on the wire: pid (32 bits), then start time (64 bits), host
 * order (both ends are on one host). */
#define UCT_CMA_IFACE_ADDR_LEN 12

typedef struct uct_cma_iface_config {
    uct_iface_config_t super;
    size_t seg_size;  /* bytes of one system call of a queued op */
    unsigned max_iov; /* iov entries of one zcopy */
    double bandwidth; /* bytes per second, for iface_query */
} uct_cma_iface_config_t;

/* What an op's data is and how far it got */
typedef struct uct_cma_cursor {
    const uct_iov_t *iov;
    size_t iovcnt;
    size_t index;         /* entry of iov */
    size_t elem;          /* block of that entry (count) */
    size_t offset;        /* bytes into that block */
    uint64_t remote_addr; /* where the next byte goes (or comes from) */
    size_t remaining;     /* bytes left */
} uct_cma_cursor_t;

enum {
    UCT_CMA_OP_PUT,
    UCT_CMA_OP_GET,
    UCT_CMA_OP_FLUSH,      /* ep flush marker: completes at the head */
    UCT_CMA_OP_FAIL,       /* the ep failed while idle: report it */
    UCT_CMA_OP_IFACE_FLUSH /* on iface->flushes, not in an ep queue */
};

struct uct_cma_ep;

typedef struct uct_cma_op {
    ucs_list_link_t list;    /* iface->active while the head of its ep
                                (PUT, GET, FAIL); iface->flushes */
    struct uct_cma_op *next; /* the ep's queue, circular */
    struct uct_cma_ep *ep;
    uct_completion_t *comp; /* NULL for no completion */
    unsigned type;          /* UCT_CMA_OP_* */
    uct_cma_cursor_t cursor;
    uct_iov_t iov[]; /* max_iov entries: the user's iov, copied */
} uct_cma_op_t;

typedef struct uct_cma_iface {
    uct_base_iface_t super;
    size_t seg_size;
    size_t max_iov;
    double bandwidth;
    ucs_mpool_t op_mp;             /* uct_cma_op_t with max_iov entries */
    ucs_list_link_t active;        /* head ops of the eps with work */
    ucs_list_link_t flushes;       /* iface flushes waiting */
    ucs_hash_t peers;              /* (start << 22 | pid) -> uct_cma_peer_t */
    size_t num_active;             /* ops on the active list */
    size_t num_queued;             /* PUT, GET and FAIL ops in ep queues */
    size_t queued_bytes;           /* bytes those PUTs and GETs have left */
    struct uct_cma_ep *failing_ep; /* reporting its failure; NULL if
                                      destroyed meanwhile */
    int event_fd;                  /* -1 until event_fd_get */
    int armed;                     /* signal event_fd on the next event */
    ucs_log_limit_t err_log;       /* failed system calls */
} uct_cma_iface_t;

/* An endpoint: 56 bytes, nothing else on the heap (see cma_ep.c) */
/* A peer process, shared by the endpoints of an interface to it: one
 * pidfd per peer, not per endpoint */
typedef struct uct_cma_peer {
    uct_sm_proc_t proc;
    uint64_t key; /* in the interface's peers */
    unsigned refcount;
} uct_cma_peer_t;

typedef struct uct_cma_ep {
    uct_base_ep_t super;
    uct_cma_peer_t *peer;
    uct_cma_op_t *tail;      /* last op of the queue (tail->next is the
                                head), NULL when empty */
    uint32_t num_ops;        /* PUTs and GETs queued */
    ucs_status_t status;     /* UCS_OK, or why the peer failed */
    size_t queued_bytes;     /* bytes those PUTs and GETs have left */
    ucs_status_t last_error; /* of the last operation that failed */
} uct_cma_ep_t;

/* Shared by the files of the transport */
extern uct_tl_t uct_cma_tl;
extern ucs_config_field_t uct_cma_iface_config_table[];

static inline uct_cma_iface_t *uct_cma_iface(uct_iface_h iface)
{
    return (uct_cma_iface_t *)iface;
}

static inline uct_cma_ep_t *uct_cma_ep(uct_ep_h ep)
{
    return (uct_cma_ep_t *)ep;
}

static inline uct_cma_iface_t *uct_cma_ep_iface(const uct_cma_ep_t *ep)
{
    return uct_cma_iface(ep->super.super.iface);
}

/** Registers the "cma" component and transport (module init). */
void uct_cma_register(void);

/**
 * Whether process_vm_readv/writev can work between this process and its
 * peers here: the Yama ptrace scope, this process's dumpable flag and a
 * real process_vm_readv() on this process. Cheap enough to run on every
 * query (the dumpable flag can change at any time).
 * @param [out] why  when not usable: the reason and how to fix it.
 * @return 1 when usable.
 */
int uct_cma_usable(char *why, size_t max);

/** The Yama ptrace scope, or -1 without Yama. */
int uct_cma_ptrace_scope(void);

/* Interface (cma_iface.c) */
ucs_status_t uct_cma_iface_open(uct_md_h md, uct_worker_h worker,
                                const uct_iface_params_t *params,
                                const uct_iface_config_t *tl_config,
                                uct_iface_h *iface_p);
void uct_cma_iface_vfs_init(uct_iface_h tl_iface);
/** Wakes a waiter armed on the event fd: queued work or a completion */
void uct_cma_iface_signal(uct_cma_iface_t *iface);
unsigned uct_cma_iface_progress(uct_iface_h tl_iface);
/** Completes the iface flushes once nothing is queued */
void uct_cma_iface_check_flushes(uct_cma_iface_t *iface);

/* Endpoint (cma_ep.c) */
ucs_status_t uct_cma_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_cma_ep_destroy(uct_ep_h tl_ep);
/** Frees the peers still in the table (of endpoints not destroyed). */
void uct_cma_iface_peers_cleanup(uct_cma_iface_t *iface);
void uct_cma_ep_vfs_init(uct_ep_h tl_ep);
ucs_status_t uct_cma_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_cma_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_cma_ep_flush(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp);
ucs_status_t uct_cma_ep_fence(uct_ep_h tl_ep, unsigned flags);
ucs_status_t uct_cma_ep_check(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp);
ucs_status_t uct_cma_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                    unsigned flags);
void uct_cma_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg);
/** Moves @a op, just taken off the active list, by one segment
 *  (progress); returns the number of operations completed */
unsigned uct_cma_ep_progress_one(uct_cma_iface_t *iface, uct_cma_op_t *op);
/** Completes every op of @a ep with UCS_ERR_CANCELED (iface close) */
void uct_cma_ep_cancel_all(uct_cma_ep_t *ep);

#endif
