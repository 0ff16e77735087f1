/*
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

typedef struct ucs_rcache ucs_rcache_t;

/**
 * A registered region. A transport's region structure starts with this one
 * and adds its handle (for example the ibv_mr) after it.
 */
typedef struct ucs_rcache_region {
    uintptr_t start; /* [start, end) registered, aligned to params.alignment */
    uintptr_t end;
    unsigned  prot;  /* PROT_READ | PROT_WRITE the registration allows */

    /* private to the cache */
    unsigned                 refcount; /* users: gets not yet put */
    unsigned                 flags;    /* UCS_RCACHE_REGION_FLAG_* */
    int                      height;   /* of the subtree, 1 for a leaf */
    struct ucs_rcache_region *left;    /* tree: smaller start addresses */
    struct ucs_rcache_region *right;
    ucs_list_link_t          lru;      /* in the LRU list when unused */
} ucs_rcache_region_t;

/** ucs_rcache_region_t::flags */
enum {
    UCS_RCACHE_REGION_FLAG_IN_TREE = UCS_BIT(0), /* can be found */
    UCS_RCACHE_REGION_FLAG_IN_LRU  = UCS_BIT(1)  /* unused, evictable */
};

/** Registration callbacks of the cache owner. */
typedef struct ucs_rcache_ops {
    /**
     * Register [region->start, region->end) with at least region->prot and
     * fill the owner's part of the region. @a arg is the one given to
     * ucs_rcache_get().
     */
    ucs_status_t (*mem_reg)(void *context, ucs_rcache_t *rcache, void *arg,
                            ucs_rcache_region_t *region);

    /** Deregister a region that mem_reg registered. */
    void         (*mem_dereg)(void *context, ucs_rcache_t *rcache,
                              ucs_rcache_region_t *region);
} ucs_rcache_ops_t;

/** ucs_rcache_params_t::flags */
enum {
    /* Do not subscribe to memory release events: the owner calls
     * ucs_rcache_invalidate() whenever registered memory is released */
    UCS_RCACHE_FLAG_NO_MEMEVENTS = UCS_BIT(0)
};

typedef struct ucs_rcache_params {
    size_t                 region_struct_size; /* >= sizeof(region_t) */
    size_t                 alignment;   /* power of 2; 0: the page size */
    const ucs_rcache_ops_t *ops;
    void                   *context;    /* passed to the ops */
    size_t                 max_size;    /* 0: UCX_RCACHE_MAX_SIZE */
    unsigned long          max_regions; /* 0: UCX_RCACHE_MAX_REGIONS */
    unsigned               flags;       /* UCS_RCACHE_FLAG_* */
} ucs_rcache_params_t;

typedef struct ucs_rcache_stats {
    unsigned long hits;          /* gets served by an existing region */
    unsigned long misses;        /* gets that registered a new region */
    unsigned long merges;        /* regions merged into a new one */
    unsigned long evictions;     /* regions evicted by the limits */
    unsigned long invalidations; /* regions removed by ucs_rcache_invalidate */
    unsigned long unmap_events;  /* regions removed by memory release */
    size_t        bytes;         /* registered now (in the cache or in use) */
    unsigned long regions;       /* registrations now */
} ucs_rcache_stats_t;

/** UCX_RCACHE_* options */
typedef struct ucs_rcache_config {
    size_t        max_size;    /* UCX_RCACHE_MAX_SIZE */
    unsigned long max_regions; /* UCX_RCACHE_MAX_REGIONS */
} ucs_rcache_config_t;

extern const ucs_config_field_t ucs_rcache_config_table[];

/**
 * Create a cache. @a name is copied and used in messages and statistics.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for missing ops, a region size
 *         below sizeof(ucs_rcache_region_t) or an alignment that is not a
 *         power of 2; the parser's status for a bad UCX_RCACHE_* value;
 *         UCS_ERR_UNSUPPORTED if memory release events cannot be seen;
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_rcache_create(const ucs_rcache_params_t *params,
                               const char *name, ucs_rcache_t **rcache_p);

/**
 * Deregister every region and free the cache. Regions still referenced are
 * reported with a warning; they must not be put afterwards.
 */
void ucs_rcache_destroy(ucs_rcache_t *rcache);

/**
 * Find or register a region covering [address, address + length) with at
 * least @a prot (PROT_READ and/or PROT_WRITE), and take a reference to it.
 * @a arg is passed to mem_reg on a miss.
 * @return UCS_OK and *region_p; UCS_ERR_INVALID_PARAM for a NULL address or
 *         pointer, a zero length, a range that wraps around, or other
 *         protection bits; the status of mem_reg if it fails;
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_rcache_get(ucs_rcache_t *rcache, void *address,
                            size_t length, unsigned prot, void *arg,
                            ucs_rcache_region_t **region_p);

/**
 * Release a reference taken by ucs_rcache_get(). The last put of a region
 * that left the cache deregisters it; otherwise the region becomes the most
 * recently used evictable one.
 */
void ucs_rcache_region_put(ucs_rcache_t *rcache, ucs_rcache_region_t *region);

/**
 * Remove every region that overlaps [address, address + length): it is not
 * returned again, and deregistered now or on its last put.
 */
void ucs_rcache_invalidate(ucs_rcache_t *rcache, void *address,
                           size_t length);

/** Counters and current usage. Applies pending memory events first. */
void ucs_rcache_get_stats(ucs_rcache_t *rcache, ucs_rcache_stats_t *stats);

/** Print the name, counters and usage on one line. */
void ucs_rcache_print_stats(ucs_rcache_t *rcache, FILE *stream);

/** The name given to ucs_rcache_create(). */
const char *ucs_rcache_name(const ucs_rcache_t *rcache);

END_C_DECLS

#endif
