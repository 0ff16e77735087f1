/**
 * @file
 * Registration cache: keeps memory registrations (ibv_reg_mr and the like)
 * alive after use, so that registering a buffer inside an already
 * registered region costs a lookup instead of a registration.
 *
 * Regions: a region is a registration of a range aligned to
 * params.alignment (the page size by default). The regions in the cache
 * never overlap; they live in a balanced search tree keyed by start
 * address, so a lookup is O(log n) with no allocation and no system call.
 *
 * ucs_rcache_get() returns a region that covers the whole request with at
 * least the requested protection, and takes a reference to it:
 *  - hit:   an existing region does; its reference count grows.
 *  - miss:  nothing covers it. The regions that overlap the aligned request
 *           are merged into it (the new region spans all of them, with the
 *           union of their protections) and leave the cache; regions that
 *           only touch the request (adjacent, no common page) stay as they
 *           are and a new region is registered next to them. If registering
 *           the merged range fails, the request alone is registered.
 * A region that leaves the cache (merged, invalidated, unmapped, evicted)
 * is never returned again. While it is still referenced it stays
 * registered, and it is deregistered by the last ucs_rcache_region_put().
 *
 * Limits: params.max_size / max_regions, or UCX_RCACHE_MAX_SIZE /
 * UCX_RCACHE_MAX_REGIONS. They count every registration the cache owns.
 * Before a new registration, unreferenced regions are evicted in least
 * recently used order (the time of their last put) until the new one fits;
 * referenced regions are never evicted, so a cache whose regions are all in
 * use may exceed its limits until they are put.
 *
 * Freed and reused memory: the cache subscribes to memory release events
 * (memevents.h): munmap, mremap, madvise(DONTNEED/FREE/REMOVE), shmdt,
 * brk/sbrk shrinking, mmap(MAP_FIXED) and free()/realloc() of glibc's
 * mmapped chunks invalidate the regions they touch, before the pages go
 * away. Creation fails with UCS_ERR_UNSUPPORTED when these events cannot
 * be seen (see README.md), unless UCS_RCACHE_FLAG_NO_MEMEVENTS says the
 * owner invalidates by itself.
 *
 * Threads: every call may be made from any thread. A mutex protects the
 * tree (a mutex rather than a spinlock: it is held across mem_reg, which
 * can take milliseconds); a hit takes it once, uncontended. Memory events
 * arrive from any thread: they are queued, and applied either at once (when
 * the lock is free) or by the next operation on the cache, which applies
 * them before its lookup, so a region whose memory was released is never
 * returned.
 *
 * Callbacks: mem_reg and mem_dereg run with the cache lock held. They may
 * allocate and free memory but must not call the cache. mem_dereg may run
 * inside a munmap()/free() of any thread, so it must not wait for a lock
 * that the owner holds while it registers memory.
 *
 * Included by memory domains that register memory with a device (the
 * verbs transports) and by anyone who wants the same caching.
 */
#ifndef UCS_MEMORY_RCACHE_H_
#define UCS_MEMORY_RCACHE_H_

#include <ucs/config/parser.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

BEGIN_C_DECLS

/** A registration cache; opaque, created by ucs_rcache_create(). */
typedef struct ucs_rcache ucs_rcache_t;

/**
 * A registered region. A transport's region structure starts with this one
 * and adds its handle (for example the ibv_mr) after it.
 */
typedef struct ucs_rcache_region {
    uintptr_t start; /**< Start of the registered range, aligned to
                          params.alignment; read-only for the owner. */
    uintptr_t end;   /**< End (exclusive) of the registered range,
                          aligned to params.alignment. */
    unsigned prot;   /**< PROT_READ | PROT_WRITE the registration
                          allows. */

    /* The fields below are private to the cache. */
    unsigned refcount;               /**< Users: gets not yet put. */
    unsigned flags;                  /**< UCS_RCACHE_REGION_FLAG_*. */
    int height;                      /**< Height of the subtree, 1 for a
                                          leaf. */
    struct ucs_rcache_region *left;  /**< Tree: smaller start
                                          addresses. */
    struct ucs_rcache_region *right; /**< Tree: larger start
                                          addresses. */
    ucs_list_link_t lru;             /**< In the LRU list when
                                          unused. */
} ucs_rcache_region_t;

/** ucs_rcache_region_t::flags; maintained by the cache. */
enum {
    UCS_RCACHE_REGION_FLAG_IN_TREE = UCS_BIT(0), /**< In the cache: can be
                                                      found by a get. */
    UCS_RCACHE_REGION_FLAG_IN_LRU = UCS_BIT(1)   /**< Unused and
                                                      evictable. */
};

/**
 * Registration callbacks of the cache owner. The table is referenced, not
 * copied: it must outlive the cache. Both run with the cache lock held
 * (see the file description for what they may do).
 */
typedef struct ucs_rcache_ops {
    /**
     * Register [region->start, region->end) with at least region->prot and
     * fill the owner's part of the region. @a context is params.context
     * and @a arg the one given to ucs_rcache_get(). A status other than
     * UCS_OK is returned by ucs_rcache_get() (after one retry with the
     * request alone if the range was a merge).
     */
    ucs_status_t (*mem_reg)(void *context, ucs_rcache_t *rcache, void *arg,
                            ucs_rcache_region_t *region);

    /** Deregister a region that mem_reg registered; the cache frees the
     *  region structure afterwards. */
    void (*mem_dereg)(void *context, ucs_rcache_t *rcache,
                      ucs_rcache_region_t *region);
} ucs_rcache_ops_t;

/** ucs_rcache_params_t::flags */
enum {
    /** Do not subscribe to memory release events: the owner calls
     *  ucs_rcache_invalidate() whenever registered memory is released. */
    UCS_RCACHE_FLAG_NO_MEMEVENTS = UCS_BIT(0)
};

/** Parameters of ucs_rcache_create(); read during the call only. */
typedef struct ucs_rcache_params {
    size_t region_struct_size;   /**< Size of the owner's
                                      region structure,
                                      >= sizeof(region_t). */
    size_t alignment;            /**< Power of 2; 0: the page
                                      size. */
    const ucs_rcache_ops_t *ops; /**< Registration callbacks;
                                      required. */
    void *context;               /**< Passed to the ops. */
    size_t max_size;             /**< Byte limit; 0:
                                      UCX_RCACHE_MAX_SIZE. */
    unsigned long max_regions;   /**< Region limit; 0:
                                      UCX_RCACHE_MAX_REGIONS. */
    unsigned flags;              /**< UCS_RCACHE_FLAG_*. */
} ucs_rcache_params_t;

/** Counters since creation and current usage; see ucs_rcache_get_stats(). */
typedef struct ucs_rcache_stats {
    unsigned long hits;          /**< Gets served by an existing region. */
    unsigned long misses;        /**< Gets that registered a new region. */
    unsigned long merges;        /**< Regions merged into a new one. */
    unsigned long evictions;     /**< Regions evicted by the limits. */
    unsigned long invalidations; /**< Regions removed by
                                      ucs_rcache_invalidate(). */
    unsigned long unmap_events;  /**< Regions removed by memory release. */
    size_t bytes;                /**< Bytes registered now (in the cache or
                                      in use). */
    unsigned long regions;       /**< Registrations now. */
} ucs_rcache_stats_t;

/** UCX_RCACHE_* options, as parsed with ucs_rcache_config_table. */
typedef struct ucs_rcache_config {
    size_t max_size;           /**< UCX_RCACHE_MAX_SIZE. */
    unsigned long max_regions; /**< UCX_RCACHE_MAX_REGIONS. */
} ucs_rcache_config_t;

/** Parser table of ucs_rcache_config_t (prefix "RCACHE_"), for tools. */
extern const ucs_config_field_t ucs_rcache_config_table[];

/**
 * Create a cache.
 *
 * @param [in]  params    Parameters; read during the call only.
 * @param [in]  name      Copied and used in messages and statistics;
 *                        NULL: "rcache".
 * @param [out] rcache_p  The new cache, set on success only; release it
 *                        with ucs_rcache_destroy().
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for NULL @a params or
 *         @a rcache_p, missing ops, a region size below
 *         sizeof(ucs_rcache_region_t) or an alignment that is not a power
 *         of 2; the parser's status for a bad UCX_RCACHE_* value;
 *         UCS_ERR_UNSUPPORTED if memory release events cannot be seen (a
 *         warning says how to fix it); UCS_ERR_NO_MEMORY; another status
 *         of ucs_memevents_subscribe().
 */
ucs_status_t ucs_rcache_create(const ucs_rcache_params_t *params,
                               const char *name, ucs_rcache_t **rcache_p);

/**
 * Deregister every region and free the cache. Regions still referenced are
 * reported with a warning; they must not be put afterwards. No other call
 * on the cache may run concurrently or follow.
 *
 * @param [in] rcache  Cache to destroy; NULL does nothing.
 */
void ucs_rcache_destroy(ucs_rcache_t *rcache);

/**
 * Find or register a region covering [address, address + length) with at
 * least @a prot (PROT_READ and/or PROT_WRITE), and take a reference to it.
 *
 * @param [in]  rcache    The cache.
 * @param [in]  address   Start of the buffer.
 * @param [in]  length    Length of the buffer, > 0.
 * @param [in]  prot      PROT_READ and/or PROT_WRITE.
 * @param [in]  arg       Passed to mem_reg on a miss.
 * @param [out] region_p  The region, set on success only; the caller holds
 *                        one reference and releases it with
 *                        ucs_rcache_region_put().
 *
 * @return UCS_OK and *region_p; UCS_ERR_INVALID_PARAM for a NULL cache,
 *         address or pointer, a zero length, a range that wraps around, or
 *         other protection bits; the status of mem_reg if it fails;
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_rcache_get(ucs_rcache_t *rcache, void *address, size_t length,
                            unsigned prot, void *arg,
                            ucs_rcache_region_t **region_p);

/**
 * Release a reference taken by ucs_rcache_get(). The last put of a region
 * that left the cache deregisters it; otherwise the region becomes the most
 * recently used evictable one (and the limits may evict older ones). A put
 * without a matching get is logged as an error and ignored.
 *
 * @param [in] rcache  The cache the region came from.
 * @param [in] region  The region; must not be used after the last put.
 */
void ucs_rcache_region_put(ucs_rcache_t *rcache, ucs_rcache_region_t *region);

/**
 * Remove every region that overlaps [address, address + length): it is not
 * returned again, and deregistered now or on its last put.
 *
 * @param [in] rcache   The cache; NULL does nothing.
 * @param [in] address  Start of the range.
 * @param [in] length   Length of the range; 0 does nothing, a range that
 *                      wraps around extends to the end of the address
 *                      space.
 */
void ucs_rcache_invalidate(ucs_rcache_t *rcache, void *address, size_t length);

/**
 * Counters and current usage. Applies pending memory events first.
 *
 * @param [in]  rcache  The cache.
 * @param [out] stats   Filled with a consistent snapshot.
 */
void ucs_rcache_get_stats(ucs_rcache_t *rcache, ucs_rcache_stats_t *stats);

/**
 * Print the name, counters and usage on one line.
 *
 * @param [in] rcache  The cache.
 * @param [in] stream  Where to print.
 */
void ucs_rcache_print_stats(ucs_rcache_t *rcache, FILE *stream);

/**
 * The cache's name.
 *
 * @param [in] rcache  The cache.
 *
 * @return The copy of the name given to ucs_rcache_create(), valid until
 *         the cache is destroyed.
 */
const char *ucs_rcache_name(const ucs_rcache_t *rcache);

END_C_DECLS

#endif
