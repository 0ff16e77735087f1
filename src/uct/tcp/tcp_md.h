/*
 * The tcp memory domain: keyed registrations that a peer's PUT and GET
 * are checked against.
 *
 * Every registration (uct_md_mem_reg, or memory the md allocates) is a
 * region with a random 64-bit key, never 0 or UCT_INVALID_RKEY, unique
 * among the md's live regions. The packed remote key is that key (8 bytes,
 * little-endian); the unpacked rkey is the key itself. A remote access
 * names a key, an address and a length, and is applied only inside a live
 * region with that key that grants the access (uct_tcp_md_access_begin);
 * the memory handle given to the user is the region.
 *
 * Locking: one read-write lock per md guards the region table. Remote
 * accesses are readers and hold it while they copy, so that copies on
 * several worker threads run side by side; registration and
 * deregistration are writers, so a deregistration waits for the copies
 * under way with its key and none starts after it returns. Writers are
 * preferred (glibc), so a stream of accesses cannot hold a deregistration
 * off. A thread therefore must not take the lock twice: no access inside
 * another one, and uct_tcp_md_access_check() not between
 * uct_tcp_md_access_begin() and uct_tcp_md_access_end().
 */
#ifndef UCT_TCP_MD_H_
#define UCT_TCP_MD_H_

#include <uct/base/uct_md.h>
#include <ucs/datastruct/hash.h>
#include <ucs/sys/compiler_def.h>

#include <pthread.h>
#include <stdint.h>

BEGIN_C_DECLS

/* Size of a packed remote key: the region's key, little-endian */
#define UCT_TCP_MD_RKEY_SIZE 8

/* The remote access rights a region can grant */
#define UCT_TCP_MD_ACCESS_REMOTE                                   \
    (UCT_MD_MEM_ACCESS_REMOTE_PUT | UCT_MD_MEM_ACCESS_REMOTE_GET | \
     UCT_MD_MEM_ACCESS_REMOTE_ATOMIC)

/** A registered region; the user's memory handle points to it. */
typedef struct uct_tcp_region {
    uint64_t key;      /* the remote key */
    uintptr_t address; /* first byte */
    size_t length;     /* bytes, > 0 */
    unsigned access;   /* granted: bits of UCT_TCP_MD_ACCESS_REMOTE */
    int allocated;     /* mapped by the md's mem_alloc: mem_free
                          unmaps [address, address + length) */
} uct_tcp_region_t;

/* Region keys one getrandom() call draws */
#define UCT_TCP_MD_KEY_BATCH 32

typedef struct uct_tcp_md {
    uct_md_t super;
    pthread_rwlock_t lock; /* guards regions; see the top of file */
    ucs_hash_t regions;    /* key -> uct_tcp_region_t* */
    uint64_t num_regions;  /* for the object tree: written under the */
    uint64_t reg_bytes;    /* lock, read without it (relaxed) */
    /* Keys drawn ahead from the system's random source, a batch per
     * system call, so that a registration makes none; used once each,
     * taken under the lock */
    uint64_t keys[UCT_TCP_MD_KEY_BATCH];
    unsigned num_keys;
} uct_tcp_md_t;

/* The tcp md behind a uct md handle opened by the tcp component */
static inline uct_tcp_md_t *uct_tcp_md(uct_md_h md)
{
    return ucs_container_of(md, uct_tcp_md_t, super);
}

/*
 * Whether @a region grants @a access (nonzero) to @a length bytes at
 * @a address. A range of length 0 is granted when its address lies in
 * [region start, region end]: it touches nothing, and a zero-length PUT or
 * GET at the end of a buffer is legitimate. Computed without address +
 * length, so no range can wrap around.
 */
static inline int uct_tcp_region_covers(const uct_tcp_region_t *region,
                                        uint64_t address, uint64_t length,
                                        unsigned access)
{
    uint64_t offset;

    if ((access == 0) || ((access & ~region->access) != 0) ||
        (address < region->address)) {
        return 0;
    }

    offset = address - region->address;
    return (offset <= region->length) && (length <= region->length - offset);
}

/*
 * Begins a remote access of @a length bytes at @a address under @a key.
 * UCS_OK: [address, address + length) lies inside a live region with that
 * key that grants @a access (UCT_MD_MEM_ACCESS_REMOTE_PUT or _REMOTE_GET);
 * the md's lock is held (shared) until uct_tcp_md_access_end(), so the
 * region cannot be deregistered while the caller copies.
 * UCS_ERR_INVALID_ADDR (lock not held): anything else (unknown key, out of
 * range, address + length past 2^64, access not granted). Nothing is
 * logged: the caller reports the peer's bad access with its own context.
 */
static inline ucs_status_t
uct_tcp_md_access_begin(uct_tcp_md_t *md, uint64_t key, uint64_t address,
                        uint64_t length, unsigned access)
{
    void *region;

    if (ucs_unlikely(pthread_rwlock_rdlock(&md->lock) != 0)) {
        return UCS_ERR_INVALID_ADDR; /* too many readers: refuse */
    }

    if (ucs_likely((ucs_hash_get(&md->regions, key, &region) == UCS_OK) &&
                   uct_tcp_region_covers((const uct_tcp_region_t *)region,
                                         address, length, access))) {
        return UCS_OK;
    }

    pthread_rwlock_unlock(&md->lock);
    return UCS_ERR_INVALID_ADDR;
}

/** Ends an access that uct_tcp_md_access_begin() granted. */
static inline void uct_tcp_md_access_end(uct_tcp_md_t *md)
{
    pthread_rwlock_unlock(&md->lock);
}

/*
 * Whether a live region with @a key grants @a access to the range, as
 * uct_tcp_md_access_begin() decides, without keeping the lock: for long
 * streamed accesses checked again per chunk. The region may be
 * deregistered right after the answer.
 */
static inline int uct_tcp_md_access_check(uct_tcp_md_t *md, uint64_t key,
                                          uint64_t address, uint64_t length,
                                          unsigned access)
{
    if (uct_tcp_md_access_begin(md, key, address, length, access) != UCS_OK) {
        return 0;
    }

    uct_tcp_md_access_end(md);
    return 1;
}

END_C_DECLS

#endif
