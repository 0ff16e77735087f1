/*
 * The posix and sysv transports: one receive FIFO per interface in a
 * shared segment (mm_fifo.h), over two ways of making a segment another
 * process can map (mappers, mm_seg.c). Everything above the mapper is
 * shared by both transports.
 *
 * Trust: a segment is created readable and writable by our user only, and
 * a peer's segment is attached only when the system says our user owns it.
 * Within that, a peer is untrusted: every number read from a shared
 * segment or from a peer's address is checked before use and none is ever
 * used as a pointer.
 */
#ifndef UCT_MM_H_
#define UCT_MM_H_

#include "mm_fifo.h"

#include <uct/base/uct_desc.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/base/uct_pending.h>
#include <uct/sm/base/sm_sys.h>
#include <ucs/datastruct/arbiter.h>
#include <ucs/datastruct/hash.h>
#include <ucs/memory/mpool.h>
#include <ucs/time/time.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#define UCT_MM_POSIX_NAME "posix"
#define UCT_MM_SYSV_NAME  "sysv"

/* Largest segment a peer may ask us to map (a checked address field) */
#define UCT_MM_SEG_MAX_LENGTH (1ull << 40)

/**
 * A segment as a peer names it, in an interface address or a packed remote
 * key (32 bytes). Attaching checks every field against what the system
 * reports of the segment.
 */
typedef struct uct_mm_seg_ref {
    uint64_t id;     /* posix: descriptor number in the owner; sysv: shmid */
    uint64_t check;  /* posix: inode of the file; sysv: 0 */
    uint64_t length; /* bytes, a multiple of the page size */
    uint32_t pid;    /* owner process */
    uint32_t reserved;
} uct_mm_seg_ref_t;

/** A segment mapped into this process, ours or a peer's. */
typedef struct uct_mm_seg {
    void *address;
    size_t length; /* mapped at address (an interface's own segment: the
                      part its descriptors did not move away from) */
    int fd;        /* posix owner: the file, kept open so peers can open it
                      through /proc; -1 otherwise */
    uct_mm_seg_ref_t ref;
} uct_mm_seg_t;

struct uct_mm_md;

/** How segments are made and mapped: posix files or System V segments. */
typedef struct uct_mm_mapper {
    const char *name;
    /** Creates and maps a segment of @a length bytes that nobody can find
     *  by name; @a what names it in messages. */
    ucs_status_t (*create)(struct uct_mm_md *md, size_t length,
                           const char *what, uct_mm_seg_t *seg);
    void (*destroy)(uct_mm_seg_t *seg);
    /** Maps a peer's segment after checking that our user owns it and
     *  that it is as long as @a ref says. */
    ucs_status_t (*attach)(const uct_mm_seg_ref_t *ref, uct_mm_seg_t *seg);
    void (*detach)(uct_mm_seg_t *seg);
    /** Whether the mapper works here; when not, one line in @a why. */
    int (*usable)(struct uct_mm_md *md, char *why, size_t max);
} uct_mm_mapper_t;

extern const uct_mm_mapper_t uct_mm_posix_mapper;
extern const uct_mm_mapper_t uct_mm_sysv_mapper;

/** A component of a mapper ("posix" or "sysv"). */
typedef struct uct_mm_component {
    uct_component_t super;
    const uct_mm_mapper_t *mapper;
} uct_mm_component_t;

typedef struct uct_mm_md_config {
    uct_md_config_t super;
    char *dir; /* posix: where segment files are created */
} uct_mm_md_config_t;

typedef struct uct_mm_md {
    uct_md_t super;
    const uct_mm_mapper_t *mapper;
    char *dir;        /* posix directory (a tmpfs) */
    uint64_t seg_seq; /* names temporary files (posix fallback) */
} uct_mm_md_t;

static inline uct_mm_md_t *uct_mm_md(uct_md_h md)
{
    return ucs_container_of(md, uct_mm_md_t, super);
}

/** Memory the md allocated: a segment peers attach through the rkey. */
typedef struct uct_mm_memh {
    uct_mm_seg_t seg;
} uct_mm_memh_t;

/** Packed remote key: the segment and where it starts in its owner. */
typedef struct uct_mm_packed_rkey {
    uct_mm_seg_ref_t ref;
    uint64_t remote_address;
} uct_mm_packed_rkey_t;

/** Unpacked remote key (uct_rkey_t points to it). */
typedef struct uct_mm_rkey {
    uint64_t remote_address; /* of the segment in its owner */
    char *local_address;     /* where it is mapped here */
    uint64_t length;
    const uct_mm_mapper_t *mapper;
    uct_mm_seg_t seg;
} uct_mm_rkey_t;

/* ------------------------------------------------------------------------
 * Interface
 */

typedef struct uct_mm_iface_config {
    uct_iface_config_t super;
    unsigned fifo_size;
    unsigned fifo_elem_size;
    size_t seg_size;
    double release_factor;
    int rx_max_bufs; /* receive descriptors; -1: twice the FIFO */
    unsigned long max_poll;
} uct_mm_iface_config_t;

/** A peer interface that endpoints of this interface send to: shared by
 *  every endpoint to it. */
typedef struct uct_mm_remote {
    uct_mm_fifo_view_t fifo; /* its FIFO, mapped here */
    uct_mm_seg_t seg;
    uct_sm_proc_t proc;      /* the owner, for liveness */
    struct sockaddr_un sock; /* wakes it when it sleeps */
    socklen_t sock_len;
    unsigned refcount;
    ucs_status_t status;   /* UCS_OK until it is found dead */
    uint64_t key;          /* in the iface's remotes hash */
    struct uct_mm_ep *eps; /* endpoints to it */
} uct_mm_remote_t;

struct uct_mm_ep;

/** The receive side of our FIFO (private to the receiving process). */
typedef struct uct_mm_fifo_rx {
    uct_mm_fifo_view_t view; /* our segment, descriptors as created */
    uint64_t read_index;     /* next element to read */
    uint64_t published;      /* tail last stored */
    uint32_t release_batch;  /* elements between tail stores */
    uint32_t num_free;
    uint32_t *elem_desc;  /* descriptor of each element */
    uint32_t *free_descs; /* descriptors nobody holds */
    char *desc_va;        /* in-place descriptors, or NULL */
    size_t desc_va_len;
    size_t desc_va_stride;  /* private bytes + desc_stride */
    size_t priv_len;        /* private bytes before each descriptor */
    ucs_time_t stall_check; /* next look for a stalled element */
    ucs_time_t stall_since; /* when read_index was seen stalled, or 0 */
    uint64_t stall_index;
    unsigned idle_polls; /* progress calls that found nothing */
} uct_mm_fifo_rx_t;

typedef struct uct_mm_iface {
    uct_base_iface_t super;
    const uct_mm_mapper_t *mapper;
    uct_mm_fifo_rx_t rx; /* our receive FIFO */
    uct_mm_seg_t seg;    /* its segment */
    unsigned max_poll;
    size_t seg_size;
    /* receive descriptors kept by handlers: the private copies */
    uct_rx_desc_layout_t copy_layout;
    ucs_mpool_t copy_mp;
    uct_rx_desc_release_t copy_release;
    uct_recv_desc_t shared_release; /* returns a shared descriptor */
    ucs_arbiter_t arbiter;          /* endpoints with pending requests */
    ucs_hash_t remotes;             /* key -> uct_mm_remote_t* */
    unsigned num_remotes;
    int inline_copy;  /* short payloads are copied to be aligned */
    void *put_bounce; /* put_bcopy near a segment's end packs here */
    int sock;         /* our wake-up socket (abstract name) */
    char sock_name[UCT_MM_SOCK_NAME_LEN];
    int tx_sock;           /* sends wake-ups to peers, -1 until needed */
    ucs_time_t check_time; /* next liveness check of pending peers */
    ucs_log_limit_t bad_log;
    uint64_t rx_bad;     /* elements dropped as malformed */
    uint64_t rx_copied;  /* descriptors delivered as private copies */
    uint64_t tx_signals; /* wake-ups sent */
    unsigned failures;   /* dead peers whose endpoints are to be
                            reported to the error handler */
} uct_mm_iface_t;

/* An endpoint: 56 bytes of heap, whatever its traffic */
typedef struct uct_mm_ep {
    uct_base_ep_t super;
    struct uct_mm_remote *remote;
    ucs_arbiter_group_t pending;
    struct uct_mm_ep *next; /* in remote->eps */
    uint32_t pending_count; /* requests in pending */
    uint8_t fail_reported;  /* the error handler was called */
} uct_mm_ep_t;

static inline uct_mm_iface_t *uct_mm_iface(uct_iface_h iface)
{
    return ucs_container_of(iface, uct_mm_iface_t, super.super);
}

static inline uct_mm_ep_t *uct_mm_ep(uct_ep_h ep)
{
    return ucs_container_of(ep, uct_mm_ep_t, super.super);
}

static inline uct_mm_iface_t *uct_mm_ep_iface(uct_mm_ep_t *ep)
{
    return uct_mm_iface(ep->super.super.iface);
}

/** The interface address (64 bytes): what a sender needs to map our FIFO
 *  and to wake us. */
typedef struct uct_mm_iface_addr {
    uct_mm_seg_ref_t seg;
    uint64_t start_time; /* of the owner process (seg.pid) */
    uct_mm_fifo_params_t fifo;
    char sock_name[UCT_MM_SOCK_NAME_LEN];
} uct_mm_iface_addr_t;

extern ucs_config_field_t uct_mm_iface_config_table[];
extern uct_mm_component_t uct_mm_posix_component;
extern uct_mm_component_t uct_mm_sysv_component;

/** Registers the posix and sysv components and transports. */
void uct_mm_register(void);

ucs_status_t uct_mm_query_devices(uct_md_h md,
                                  uct_tl_device_resource_t **devs_p,
                                  unsigned *num_devices_p);
ucs_status_t uct_mm_iface_open(uct_md_h md, uct_worker_h worker,
                               const uct_iface_params_t *params,
                               const uct_iface_config_t *tl_config,
                               uct_iface_h *iface_p);
void uct_mm_iface_vfs_init(uct_iface_h tl_iface);
void uct_mm_ep_vfs_init(uct_ep_h tl_ep);

/* Remote peers (mm_ep.c) */
ucs_status_t uct_mm_remote_get(uct_mm_iface_t *iface,
                               const uct_mm_iface_addr_t *addr,
                               uct_mm_remote_t **remote_p);
void uct_mm_remote_put(uct_mm_iface_t *iface, uct_mm_remote_t *remote);
void uct_mm_iface_remotes_cleanup(uct_mm_iface_t *iface);
/** Checks peers of endpoints with pending requests; fails dead ones. */
void uct_mm_iface_check_peers(uct_mm_iface_t *iface);
/** Reports the endpoints of dead peers to the error handler, once each
 *  (from progress). */
unsigned uct_mm_iface_report_failures(uct_mm_iface_t *iface);
/** Marks @a remote dead; its endpoints are reported from progress. */
void uct_mm_remote_fail(uct_mm_iface_t *iface, uct_mm_remote_t *remote,
                        ucs_status_t status);

/* Endpoint operations (mm_ep.c) */
ucs_status_t uct_mm_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_mm_ep_destroy(uct_ep_h tl_ep);
ucs_status_t uct_mm_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length);
ucs_status_t uct_mm_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_mm_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                           uct_pack_callback_t pack_cb, void *arg,
                           unsigned flags);
ucs_status_t uct_mm_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey);
ssize_t uct_mm_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey);
ucs_status_t uct_mm_ep_get_short(uct_ep_h tl_ep, void *buffer, unsigned length,
                                 uint64_t remote_addr, uct_rkey_t rkey);
ucs_status_t uct_mm_ep_get_bcopy(uct_ep_h tl_ep,
                                 uct_unpack_callback_t unpack_cb, void *arg,
                                 size_t length, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_mm_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint64_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey);
ucs_status_t uct_mm_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint32_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey);
ucs_status_t uct_mm_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint64_t value, uint64_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp);
ucs_status_t uct_mm_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint32_t value, uint32_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp);
ucs_status_t uct_mm_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                      uint64_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint64_t *result,
                                      uct_completion_t *comp);
ucs_status_t uct_mm_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                      uint32_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint32_t *result,
                                      uct_completion_t *comp);
ucs_status_t uct_mm_ep_pending_add(uct_ep_h ep, uct_pending_req_t *req,
                                   unsigned flags);
void uct_mm_ep_pending_purge(uct_ep_h ep, uct_pending_purge_callback_t cb,
                             void *arg);
ucs_status_t uct_mm_ep_flush(uct_ep_h ep, unsigned flags,
                             uct_completion_t *comp);
ucs_status_t uct_mm_ep_check(uct_ep_h ep, unsigned flags,
                             uct_completion_t *comp);
/** Runs a pending request of an endpoint (the iface's arbiter callback);
 *  an endpoint whose peer is full lets the next one go. */
ucs_arbiter_cb_result_t uct_mm_ep_dispatch_cb(ucs_arbiter_t *arbiter,
                                              ucs_arbiter_group_t *group,
                                              ucs_arbiter_elem_t *elem,
                                              void *arg);

#define UCT_MM_ATOMIC_OPS                                      \
    (UCS_BIT(UCT_ATOMIC_OP_ADD) | UCS_BIT(UCT_ATOMIC_OP_AND) | \
     UCS_BIT(UCT_ATOMIC_OP_OR) | UCS_BIT(UCT_ATOMIC_OP_XOR))
#define UCT_MM_ATOMIC_FOPS                             \
    (UCT_MM_ATOMIC_OPS | UCS_BIT(UCT_ATOMIC_OP_SWAP) | \
     UCS_BIT(UCT_ATOMIC_OP_CSWAP))

#endif
