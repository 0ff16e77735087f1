/*
 * The ib memory domain: one per verbs device. It owns the device (see
 * ib_device.h) and a protection domain, registers memory as verbs memory
 * regions (through the registration cache when it is enabled), allocates
 * registered memory, and packs remote keys.
 *
 * A memory handle is a uct_ib_mem_t. A packed remote key is the 32-bit
 * rkey of the memory region; an unpacked uct_rkey_t holds it in its low 32
 * bits (uct_ib_md_direct_rkey()), so transports post it with no lookup.
 *
 * Keyed access in software: the device checks the rkey, range and rights
 * of an RDMA operation by itself, but a transport that carries PUT and GET
 * as messages (ud_verbs) copies the data on the receiver's CPU, and must
 * make the same check first. So every memory region the md registers
 * (direct registrations, registration cache regions and allocations
 * alike) is entered in a table of the md, rkey -> memory handle, which
 * holds the region's start, length and verbs access flags; a region
 * leaves the table before ibv_dereg_mr(). uct_ib_md_access_begin() checks
 * a peer's access against that table. A cache region that the cache keeps
 * after the user's last uct_md_mem_dereg() stays in the table, just as its
 * rkey stays valid for the device.
 *
 * Locking: one read-write lock per md guards the table. Remote accesses
 * are readers and hold it while they copy, so that copies on several
 * threads run side by side; entering and removing a region are writers, so
 * a deregistration waits for the copies under way and none starts after
 * the region left the table. Writers are preferred (glibc), so a stream of
 * accesses cannot hold a deregistration off. Hence, between
 * uct_ib_md_access_begin() and uct_ib_md_access_end(), a thread must not
 * begin another access of the md, register or deregister memory with it,
 * nor free or unmap memory (a release can make the registration cache
 * deregister a region in the releasing thread). The md never frees or
 * logs while it holds the lock as a writer, for the same reason: a free()
 * there could deregister a cache region in the same thread.
 */
#ifndef UCT_IB_MD_H_
#define UCT_IB_MD_H_

#include "ib_device.h"

#include <uct/base/uct_md.h>
#include <ucs/config/types.h>
#include <ucs/datastruct/hash.h>
#include <ucs/memory/rcache.h>

#include <pthread.h>
#include <stdint.h>

BEGIN_C_DECLS

/** Bytes of a packed remote key. */
#define UCT_IB_MD_PACKED_RKEY_SIZE sizeof(uint32_t)

/** Every verbs access right the md grants (UCT_MD_MEM_ACCESS_ALL). */
#define UCT_IB_MEM_ACCESS_ALL                           \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/** uct_ib_mem_t::flags */
enum {
    UCT_IB_MEM_FLAG_RCACHE = UCS_BIT(0), /* in a cache region */
    UCT_IB_MEM_FLAG_ALLOC  = UCS_BIT(1)  /* memory allocated by the md */
};

/**
 * A memory handle of the ib md; the md's table of regions points to it
 * while its memory region is registered.
 */
typedef struct uct_ib_mem {
    struct ibv_mr *mr; /* the range registered: mr->addr, length */
    uint32_t lkey;
    uint32_t rkey;
    unsigned flags; /* UCT_IB_MEM_FLAG_* */
    int access;     /* IBV_ACCESS_* the region was registered with */
    size_t alloc_length;
} uct_ib_mem_t;

/** Configuration of the ib md (environment prefix UCX_IB_). */
typedef struct uct_ib_md_config {
    uct_md_config_t super;
    ucs_ternary_auto_value_t fork_init; /* FORK_INIT: try|yes|no */
    ucs_ternary_auto_value_t rcache;    /* RCACHE: try|yes|no */
    size_t rcache_max_size;
    unsigned long rcache_max_regions;
    unsigned long gid_index; /* GID_INDEX: auto|N */
    int async_events;        /* ASYNC_EVENTS: y|n */
} uct_ib_md_config_t;

/** The ib memory domain. */
typedef struct uct_ib_md {
    uct_md_t super;
    uct_ib_device_t dev;
    struct ibv_pd *pd;
    ucs_rcache_t *rcache;    /* NULL when the cache is off */
    pthread_rwlock_t lock;   /* guards regions; see the top of file */
    ucs_hash_t regions;      /* rkey -> uct_ib_mem_t* of every live
                                memory region */
    unsigned long gid_index; /* UCX_IB_GID_INDEX */
    ucs_linear_func_t reg_cost;
    unsigned long num_reg;   /* ibv_reg_mr calls that succeeded */
    unsigned long num_dereg; /* ibv_dereg_mr calls */
} uct_ib_md_t;

extern ucs_config_field_t uct_ib_md_config_table[];

/** The ib component (ib_md.c); the module adds its transports to it. */
extern uct_component_t uct_ib_component;

/** The ib md of a uct md handle. */
static inline uct_ib_md_t *uct_ib_md_from(uct_md_h md)
{
    return ucs_container_of(md, uct_ib_md_t, super);
}

/** The 32-bit rkey of an unpacked remote key. */
static inline uint32_t uct_ib_md_direct_rkey(uct_rkey_t uct_rkey)
{
    return (uint32_t)uct_rkey;
}

/** Verbs access flags for UCT_MD_MEM_* @a flags (none given means all). */
int uct_ib_md_access_flags(unsigned flags);

/** The registration cache of @a md, or NULL when it is off. */
static inline ucs_rcache_t *uct_ib_md_rcache(uct_md_h md)
{
    return uct_ib_md_from(md)->rcache;
}

/*
 * Whether the memory region of @a memh grants every bit of @a ibv_access
 * (IBV_ACCESS_*, nonzero) to @a length bytes at @a address. A range of
 * length 0 is granted when its address lies in [region start, region end]:
 * it touches nothing, and a zero-length PUT or GET at the end of a buffer
 * is legitimate. Computed without address + length, so no range can wrap
 * around.
 */
static inline int uct_ib_mem_covers(const uct_ib_mem_t *memh, uint64_t address,
                                    uint64_t length, int ibv_access)
{
    uint64_t start = (uintptr_t)memh->mr->addr;
    uint64_t size  = memh->mr->length;
    uint64_t offset;

    if ((ibv_access == 0) || ((ibv_access & ~memh->access) != 0) ||
        (address < start)) {
        return 0;
    }

    offset = address - start;
    return (offset <= size) && (length <= size - offset);
}

/*
 * Begins a remote access of @a length bytes at @a address under @a rkey,
 * for a transport that copies a peer's PUT or GET itself.
 * UCS_OK: [address, address + length) lies inside a live memory region of
 * @a md with that rkey whose access flags include every bit of
 * @a ibv_access (IBV_ACCESS_REMOTE_WRITE for a PUT, IBV_ACCESS_REMOTE_READ
 * for a GET); the md's lock is held (shared) until uct_ib_md_access_end(),
 * so the region cannot be deregistered while the caller copies.
 * UCS_ERR_INVALID_ADDR (lock not held): anything else (unknown rkey, out of
 * range, address + length past 2^64, a right not granted, @a ibv_access
 * 0). Nothing is logged: the caller reports the peer's bad access with its
 * own context. See the top of this file for what the caller must not do
 * while it holds an access.
 */
static inline ucs_status_t
uct_ib_md_access_begin(uct_ib_md_t *md, uint32_t rkey, uint64_t address,
                       uint64_t length, int ibv_access)
{
    void *memh;

    if (ucs_unlikely(pthread_rwlock_rdlock(&md->lock) != 0)) {
        return UCS_ERR_INVALID_ADDR; /* too many readers: refuse */
    }

    if (ucs_likely((ucs_hash_get(&md->regions, rkey, &memh) == UCS_OK) &&
                   uct_ib_mem_covers((const uct_ib_mem_t *)memh, address,
                                     length, ibv_access))) {
        return UCS_OK;
    }

    pthread_rwlock_unlock(&md->lock);
    return UCS_ERR_INVALID_ADDR;
}

/** Ends an access that uct_ib_md_access_begin() granted. */
static inline void uct_ib_md_access_end(uct_ib_md_t *md)
{
    pthread_rwlock_unlock(&md->lock);
}

END_C_DECLS

#endif
