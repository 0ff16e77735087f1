/*
 * Registration cache: an AVL tree of non-overlapping regions keyed by start
 * address, an LRU list of the unused ones, and a queue of memory release
 * events waiting for the lock. See rcache.h for the semantics.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/memory/rcache.h>
#include <ucs/memory/memevents.h>
#include <ucs/config/types.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>
#include <ucs/type/spinlock.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Release events queued while the lock is busy; when full, the last entry
 * grows to cover the new range (invalidating more is always safe) */
#define UCS_RCACHE_EVENT_QUEUE_LEN 64

typedef struct ucs_rcache_range {
    uintptr_t start;
    uintptr_t end;
} ucs_rcache_range_t;

/* Why a region leaves the tree, for the statistics */
typedef enum {
    UCS_RCACHE_REMOVE_MERGE,
    UCS_RCACHE_REMOVE_EVICT,
    UCS_RCACHE_REMOVE_INVALIDATE,
    UCS_RCACHE_REMOVE_UNMAP
} ucs_rcache_remove_reason_t;

struct ucs_rcache {
    pthread_mutex_t lock;     /* tree, LRU, statistics */
    ucs_list_link_t all_list; /* in ucs_rcache_all.list */
    int events_pending;       /* event queue not empty */
    ucs_rcache_region_t *root;
    ucs_list_link_t lru; /* head: least recently used */
    ucs_rcache_stats_t stats;
    uintptr_t align_mask; /* alignment - 1 */
    size_t max_size;
    unsigned long max_regions;
    size_t region_struct_size;
    const ucs_rcache_ops_t *ops;
    void *context;
    unsigned flags;
    char *name;

    ucs_spinlock_t event_lock; /* the queue below */
    unsigned event_count;
    ucs_rcache_range_t events[UCS_RCACHE_EVENT_QUEUE_LEN];
};

const ucs_config_field_t ucs_rcache_config_table[] = {
    {"MAX_SIZE", "inf",
     "Most bytes a registration cache keeps registered. Beyond it, unused\n"
     "regions are deregistered, least recently used first.",
     ucs_offsetof(ucs_rcache_config_t, max_size), UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_REGIONS", "inf",
     "Most regions a registration cache keeps registered. Beyond it, unused\n"
     "regions are deregistered, least recently used first.",
     ucs_offsetof(ucs_rcache_config_t, max_regions), UCS_CONFIG_TYPE_ULUNITS},

    {NULL}};

UCS_CONFIG_REGISTER_TABLE(ucs_rcache_config_table, "Registration cache",
                          "RCACHE_", ucs_rcache_config_t)

/* ---- AVL tree ----------------------------------------------------------- */

static UCS_F_ALWAYS_INLINE int ucs_rcache_tree_height(ucs_rcache_region_t *r)
{
    return (r == NULL) ? 0 : r->height;
}

static void ucs_rcache_tree_update(ucs_rcache_region_t *r)
{
    r->height = 1 + ucs_max(ucs_rcache_tree_height(r->left),
                            ucs_rcache_tree_height(r->right));
}

static ucs_rcache_region_t *ucs_rcache_tree_rotate_right(ucs_rcache_region_t *r)
{
    ucs_rcache_region_t *l = r->left;

    r->left  = l->right;
    l->right = r;
    ucs_rcache_tree_update(r);
    ucs_rcache_tree_update(l);
    return l;
}

static ucs_rcache_region_t *ucs_rcache_tree_rotate_left(ucs_rcache_region_t *r)
{
    ucs_rcache_region_t *rr = r->right;

    r->right = rr->left;
    rr->left = r;
    ucs_rcache_tree_update(r);
    ucs_rcache_tree_update(rr);
    return rr;
}

/* Restore the AVL property at @a r, whose subtrees are balanced and differ
 * in height by at most 2. Returns the new subtree root. */
static ucs_rcache_region_t *ucs_rcache_tree_balance(ucs_rcache_region_t *r)
{
    int diff;

    ucs_rcache_tree_update(r);
    diff = ucs_rcache_tree_height(r->right) - ucs_rcache_tree_height(r->left);
    if (diff > 1) {
        if (ucs_rcache_tree_height(r->right->left) >
            ucs_rcache_tree_height(r->right->right)) {
            r->right = ucs_rcache_tree_rotate_right(r->right);
        }
        return ucs_rcache_tree_rotate_left(r);
    } else if (diff < -1) {
        if (ucs_rcache_tree_height(r->left->right) >
            ucs_rcache_tree_height(r->left->left)) {
            r->left = ucs_rcache_tree_rotate_left(r->left);
        }
        return ucs_rcache_tree_rotate_right(r);
    }

    return r;
}

static ucs_rcache_region_t *ucs_rcache_tree_insert(ucs_rcache_region_t *root,
                                                   ucs_rcache_region_t *node)
{
    if (root == NULL) {
        node->left   = NULL;
        node->right  = NULL;
        node->height = 1;
        return node;
    }

    if (node->start < root->start) {
        root->left = ucs_rcache_tree_insert(root->left, node);
    } else {
        root->right = ucs_rcache_tree_insert(root->right, node);
    }
    return ucs_rcache_tree_balance(root);
}

/* Detach the leftmost node of @a root into *min_p; returns the new root */
static ucs_rcache_region_t *
ucs_rcache_tree_remove_min(ucs_rcache_region_t *root,
                           ucs_rcache_region_t **min_p)
{
    if (root->left == NULL) {
        *min_p = root;
        return root->right;
    }

    root->left = ucs_rcache_tree_remove_min(root->left, min_p);
    return ucs_rcache_tree_balance(root);
}

static ucs_rcache_region_t *ucs_rcache_tree_remove(ucs_rcache_region_t *root,
                                                   ucs_rcache_region_t *node)
{
    ucs_rcache_region_t *min;

    ucs_assert(root != NULL);
    if (node->start < root->start) {
        root->left = ucs_rcache_tree_remove(root->left, node);
    } else if (node->start > root->start) {
        root->right = ucs_rcache_tree_remove(root->right, node);
    } else {
        ucs_assert(root == node);
        if (node->right == NULL) {
            return node->left;
        }
        node->right = ucs_rcache_tree_remove_min(node->right, &min);
        min->left   = node->left;
        min->right  = node->right;
        return ucs_rcache_tree_balance(min);
    }

    return ucs_rcache_tree_balance(root);
}

/* The region with the greatest start <= @a address, or NULL */
static UCS_F_ALWAYS_INLINE ucs_rcache_region_t *
ucs_rcache_tree_find_le(ucs_rcache_region_t *node, uintptr_t address)
{
    ucs_rcache_region_t *found = NULL;

    while (node != NULL) {
        if (node->start <= address) {
            found = node;
            node  = node->right;
        } else {
            node = node->left;
        }
    }
    return found;
}

/* The region with the smallest start > @a address, or NULL */
static ucs_rcache_region_t *ucs_rcache_tree_find_gt(ucs_rcache_region_t *node,
                                                    uintptr_t address)
{
    ucs_rcache_region_t *found = NULL;

    while (node != NULL) {
        if (node->start > address) {
            found = node;
            node  = node->left;
        } else {
            node = node->right;
        }
    }
    return found;
}

/* The first region that overlaps [start, ...), or NULL */
static ucs_rcache_region_t *ucs_rcache_tree_first_from(ucs_rcache_t *rcache,
                                                       uintptr_t start)
{
    ucs_rcache_region_t *region = ucs_rcache_tree_find_le(rcache->root, start);

    if ((region != NULL) && (region->end > start)) {
        return region;
    }
    return ucs_rcache_tree_find_gt(rcache->root, start);
}

/* ---- regions (lock held) ----------------------------------------------- */

static void ucs_rcache_region_destroy(ucs_rcache_t *rcache,
                                      ucs_rcache_region_t *region)
{
    ucs_trace("rcache '%s': deregister [0x%lx, 0x%lx)", rcache->name,
              (unsigned long)region->start, (unsigned long)region->end);
    rcache->ops->mem_dereg(rcache->context, rcache, region);
    rcache->stats.bytes -= region->end - region->start;
    --rcache->stats.regions;
    free(region);
}

/* Take @a region out of the tree: it is never returned again, and it is
 * deregistered now if unused, else by its last put */
static void ucs_rcache_region_remove(ucs_rcache_t *rcache,
                                     ucs_rcache_region_t *region,
                                     ucs_rcache_remove_reason_t reason)
{
    ucs_assert(region->flags & UCS_RCACHE_REGION_FLAG_IN_TREE);
    rcache->root = ucs_rcache_tree_remove(rcache->root, region);
    region->flags &= ~UCS_RCACHE_REGION_FLAG_IN_TREE;

    switch (reason) {
    case UCS_RCACHE_REMOVE_MERGE:
        ++rcache->stats.merges;
        break;
    case UCS_RCACHE_REMOVE_EVICT:
        ++rcache->stats.evictions;
        break;
    case UCS_RCACHE_REMOVE_INVALIDATE:
        ++rcache->stats.invalidations;
        break;
    case UCS_RCACHE_REMOVE_UNMAP:
        ++rcache->stats.unmap_events;
        break;
    }

    if (region->flags & UCS_RCACHE_REGION_FLAG_IN_LRU) {
        ucs_list_del(&region->lru);
        region->flags &= ~UCS_RCACHE_REGION_FLAG_IN_LRU;
    }

    if (region->refcount == 0) {
        ucs_rcache_region_destroy(rcache, region);
    }
}

static void ucs_rcache_remove_range(ucs_rcache_t *rcache, uintptr_t start,
                                    uintptr_t end,
                                    ucs_rcache_remove_reason_t reason)
{
    ucs_rcache_region_t *region, *next;

    region = ucs_rcache_tree_first_from(rcache, start);
    while ((region != NULL) && (region->start < end)) {
        next = ucs_rcache_tree_find_gt(rcache->root, region->start);
        ucs_rcache_region_remove(rcache, region, reason);
        region = next;
    }
}

/* Deregister unused regions, least recently used first, until
 * @a add_bytes more bytes and @a add_regions more regions fit the limits */
static void ucs_rcache_evict(ucs_rcache_t *rcache, size_t add_bytes,
                             unsigned long add_regions)
{
    ucs_rcache_region_t *region;

    while (!ucs_list_is_empty(&rcache->lru) &&
           ((rcache->stats.bytes + add_bytes > rcache->max_size) ||
            (rcache->stats.regions + add_regions > rcache->max_regions))) {
        region = ucs_list_head(&rcache->lru, ucs_rcache_region_t, lru);
        ucs_rcache_region_remove(rcache, region, UCS_RCACHE_REMOVE_EVICT);
    }
}

/* ---- memory release events ---------------------------------------------- */

/* Apply the queued events; the cache lock is held. Deregistrations may free
 * memory and queue more events, hence the loop. */
static UCS_F_NOINLINE void ucs_rcache_apply_events(ucs_rcache_t *rcache)
{
    ucs_rcache_range_t ranges[UCS_RCACHE_EVENT_QUEUE_LEN];
    unsigned i, count;

    while (__atomic_load_n(&rcache->events_pending, __ATOMIC_RELAXED)) {
        ucs_spin_lock(&rcache->event_lock);
        count = rcache->event_count;
        memcpy(ranges, rcache->events, count * sizeof(ranges[0]));
        rcache->event_count = 0;
        __atomic_store_n(&rcache->events_pending, 0, __ATOMIC_RELAXED);
        ucs_spin_unlock(&rcache->event_lock);

        for (i = 0; i < count; ++i) {
            ucs_rcache_remove_range(rcache, ranges[i].start, ranges[i].end,
                                    UCS_RCACHE_REMOVE_UNMAP);
        }
    }
}

static UCS_F_ALWAYS_INLINE void ucs_rcache_lock(ucs_rcache_t *rcache)
{
    pthread_mutex_lock(&rcache->lock);
    if (ucs_unlikely(
            __atomic_load_n(&rcache->events_pending, __ATOMIC_RELAXED))) {
        ucs_rcache_apply_events(rcache);
    }
}

static UCS_F_ALWAYS_INLINE void ucs_rcache_unlock(ucs_rcache_t *rcache)
{
    if (ucs_unlikely(
            __atomic_load_n(&rcache->events_pending, __ATOMIC_RELAXED))) {
        ucs_rcache_apply_events(rcache);
    }
    pthread_mutex_unlock(&rcache->lock);
}

/* Any thread, possibly inside free() or inside one of our own
 * deregistrations (which hold the cache lock): queue, then apply if the
 * lock is free */
static void ucs_rcache_memevent(void *arg, uintptr_t start, uintptr_t end)
{
    ucs_rcache_t *rcache = arg;
    ucs_rcache_range_t *last;

    ucs_spin_lock(&rcache->event_lock);
    if (rcache->event_count < UCS_RCACHE_EVENT_QUEUE_LEN) {
        rcache->events[rcache->event_count].start = start;
        rcache->events[rcache->event_count].end   = end;
        ++rcache->event_count;
    } else {
        last        = &rcache->events[UCS_RCACHE_EVENT_QUEUE_LEN - 1];
        last->start = ucs_min(last->start, start);
        last->end   = ucs_max(last->end, end);
    }
    __atomic_store_n(&rcache->events_pending, 1, __ATOMIC_RELAXED);
    ucs_spin_unlock(&rcache->event_lock);

    if (pthread_mutex_trylock(&rcache->lock) == 0) {
        ucs_rcache_apply_events(rcache);
        ucs_rcache_unlock(rcache);
    }
}

/* ---- fork --------------------------------------------------------------- */

/*
 * Every cache of the process. Before fork() the prepare handler takes the
 * lock of each, so that no other thread is inside a cache (halfway through
 * a tree update, or holding the lock for a registration) when the process
 * is copied; the child starts with fresh, free locks over consistent
 * caches. The handlers are installed at the first ucs_rcache_create(),
 * after those of memevents, so they run first before fork(): a thread that
 * holds a cache's lock and frees memory still gets the memevents lock.
 */
static struct {
    pthread_mutex_t lock;
    ucs_list_link_t list;
    pthread_once_t once;
} ucs_rcache_all = {.lock = PTHREAD_MUTEX_INITIALIZER,
                    .list = UCS_LIST_INITIALIZER(ucs_rcache_all.list),
                    .once = PTHREAD_ONCE_INIT};

static void ucs_rcache_fork_prepare(void)
{
    ucs_rcache_t *rcache;

    pthread_mutex_lock(&ucs_rcache_all.lock);
    ucs_list_for_each(rcache, &ucs_rcache_all.list, all_list) {
        pthread_mutex_lock(&rcache->lock);
    }
}

static void ucs_rcache_fork_parent(void)
{
    ucs_rcache_t *rcache;

    ucs_list_for_each(rcache, &ucs_rcache_all.list, all_list) {
        pthread_mutex_unlock(&rcache->lock);
    }
    pthread_mutex_unlock(&ucs_rcache_all.lock);
}

/* The child's thread has another id than the one that took the locks */
static void ucs_rcache_fork_child(void)
{
    ucs_rcache_t *rcache;

    ucs_list_for_each(rcache, &ucs_rcache_all.list, all_list) {
        pthread_mutex_init(&rcache->lock, NULL);
    }
    pthread_mutex_init(&ucs_rcache_all.lock, NULL);
}

static void ucs_rcache_install_fork_handlers(void)
{
    pthread_atfork(ucs_rcache_fork_prepare, ucs_rcache_fork_parent,
                   ucs_rcache_fork_child);
}

/* ---- API ---------------------------------------------------------------- */

static ucs_status_t ucs_rcache_check_params(const ucs_rcache_params_t *params,
                                            const char *name)
{
    if ((params->ops == NULL) || (params->ops->mem_reg == NULL) ||
        (params->ops->mem_dereg == NULL)) {
        ucs_error("rcache '%s': no registration callbacks; set params.ops "
                  "with mem_reg and mem_dereg",
                  name);
        return UCS_ERR_INVALID_PARAM;
    }

    if (params->region_struct_size < sizeof(ucs_rcache_region_t)) {
        ucs_error("rcache '%s': region_struct_size %zu is below %zu; start "
                  "the region structure with ucs_rcache_region_t",
                  name, params->region_struct_size,
                  sizeof(ucs_rcache_region_t));
        return UCS_ERR_INVALID_PARAM;
    }

    if ((params->alignment & (params->alignment - 1)) != 0) {
        ucs_error("rcache '%s': alignment %zu is not a power of 2; use 0 for "
                  "the page size",
                  name, params->alignment);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

ucs_status_t ucs_rcache_create(const ucs_rcache_params_t *params,
                               const char *name, ucs_rcache_t **rcache_p)
{
    ucs_rcache_config_t config;
    ucs_rcache_t *rcache;
    ucs_status_t status;

    if (name == NULL) {
        name = "rcache";
    }

    if ((params == NULL) || (rcache_p == NULL)) {
        ucs_error("rcache '%s': params and rcache_p must not be NULL", name);
        return UCS_ERR_INVALID_PARAM;
    }

    status = ucs_rcache_check_params(params, name);
    if (status != UCS_OK) {
        return status;
    }

    rcache = calloc(1, sizeof(*rcache));
    if (rcache == NULL) {
        ucs_error("rcache '%s': out of memory for the cache", name);
        return UCS_ERR_NO_MEMORY;
    }

    rcache->name = malloc(strlen(name) + 1);
    if (rcache->name == NULL) {
        ucs_error("rcache '%s': out of memory for the name", name);
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    strcpy(rcache->name, name);

    rcache->max_size    = params->max_size;
    rcache->max_regions = params->max_regions;
    if ((rcache->max_size == 0) || (rcache->max_regions == 0)) {
        status = ucs_config_parser_fill_opts(&config, ucs_rcache_config_table,
                                             NULL, "RCACHE_", 0);
        if (status != UCS_OK) {
            goto err_free_name;
        }
        if (rcache->max_size == 0) {
            rcache->max_size = config.max_size;
        }
        if (rcache->max_regions == 0) {
            rcache->max_regions = config.max_regions;
        }
        ucs_config_parser_release_opts(&config, ucs_rcache_config_table);
    }

    rcache->align_mask =
        ((params->alignment != 0) ? params->alignment : ucs_get_page_size()) -
        1;
    rcache->region_struct_size = params->region_struct_size;
    rcache->ops                = params->ops;
    rcache->context            = params->context;
    rcache->flags              = params->flags;
    rcache->root               = NULL;
    ucs_list_head_init(&rcache->lru);
    pthread_mutex_init(&rcache->lock, NULL);
    ucs_spinlock_init(&rcache->event_lock, 0);

    if (!(rcache->flags & UCS_RCACHE_FLAG_NO_MEMEVENTS)) {
        status = ucs_memevents_subscribe(ucs_rcache_memevent, rcache);
        if (status == UCS_ERR_UNSUPPORTED) {
            ucs_warn("rcache '%s': munmap() calls do not reach libucs, so "
                     "released memory cannot be detected; link the program "
                     "with -lucs, or set LD_PRELOAD=libucs.so, or disable "
                     "the registration cache",
                     name);
            goto err_destroy_locks;
        } else if (status != UCS_OK) {
            ucs_error("rcache '%s': failed to subscribe to memory events: %s",
                      name, ucs_status_string(status));
            goto err_destroy_locks;
        }
    }

    pthread_once(&ucs_rcache_all.once, ucs_rcache_install_fork_handlers);
    pthread_mutex_lock(&ucs_rcache_all.lock);
    ucs_list_add_tail(&ucs_rcache_all.list, &rcache->all_list);
    pthread_mutex_unlock(&ucs_rcache_all.lock);

    ucs_debug("rcache '%s': created, max_size %zu max_regions %lu", name,
              rcache->max_size, rcache->max_regions);
    *rcache_p = rcache;
    return UCS_OK;

err_destroy_locks:
    ucs_spinlock_destroy(&rcache->event_lock);
    pthread_mutex_destroy(&rcache->lock);
err_free_name:
    free(rcache->name);
err_free:
    free(rcache);
    return status;
}

void ucs_rcache_destroy(ucs_rcache_t *rcache)
{
    ucs_rcache_region_t *region;
    unsigned long in_use = 0;

    if (rcache == NULL) {
        return;
    }

    if (!(rcache->flags & UCS_RCACHE_FLAG_NO_MEMEVENTS)) {
        ucs_memevents_unsubscribe(ucs_rcache_memevent, rcache);
    }

    pthread_mutex_lock(&ucs_rcache_all.lock);
    ucs_list_del(&rcache->all_list);
    pthread_mutex_unlock(&ucs_rcache_all.lock);

    ucs_rcache_lock(rcache);
    while (rcache->root != NULL) {
        region       = rcache->root;
        rcache->root = ucs_rcache_tree_remove(rcache->root, region);
        if (region->flags & UCS_RCACHE_REGION_FLAG_IN_LRU) {
            ucs_list_del(&region->lru);
        }
        if (region->refcount != 0) {
            ++in_use;
        }
        ucs_rcache_region_destroy(rcache, region);
    }
    /* regions that left the tree while in use */
    in_use += rcache->stats.regions;
    pthread_mutex_unlock(&rcache->lock);

    if (in_use != 0) {
        ucs_warn("rcache '%s': destroyed with %lu regions still in use; put "
                 "every region before destroying the cache",
                 rcache->name, in_use);
    }

    ucs_spinlock_destroy(&rcache->event_lock);
    pthread_mutex_destroy(&rcache->lock);
    free(rcache->name);
    free(rcache);
}

/* Miss: register a region for [start, end) (aligned), merged with the
 * regions it overlaps. Lock held. */
static UCS_F_NOINLINE ucs_status_t ucs_rcache_region_create(
    ucs_rcache_t *rcache, uintptr_t start, uintptr_t end, unsigned prot,
    void *arg, ucs_rcache_region_t **region_p)
{
    uintptr_t merged_start      = start;
    uintptr_t merged_end        = end;
    unsigned merged_prot        = prot;
    ucs_rcache_region_t *region = ucs_rcache_tree_first_from(rcache, start);
    ucs_rcache_region_t *next;
    ucs_status_t status;

    while ((region != NULL) && (region->start < end)) {
        next         = ucs_rcache_tree_find_gt(rcache->root, region->start);
        merged_start = ucs_min(merged_start, region->start);
        merged_end   = ucs_max(merged_end, region->end);
        merged_prot |= region->prot;
        ucs_rcache_region_remove(rcache, region, UCS_RCACHE_REMOVE_MERGE);
        region = next;
    }

    ucs_rcache_evict(rcache, merged_end - merged_start, 1);

    region = calloc(1, rcache->region_struct_size);
    if (region == NULL) {
        ucs_error("rcache '%s': out of memory for a region", rcache->name);
        return UCS_ERR_NO_MEMORY;
    }

    region->start = merged_start;
    region->end   = merged_end;
    region->prot  = merged_prot;
    status        = rcache->ops->mem_reg(rcache->context, rcache, arg, region);
    if ((status != UCS_OK) && ((merged_start != start) || (merged_end != end) ||
                               (merged_prot != prot))) {
        /* the merged range or protection may be what failed */
        region->start = start;
        region->end   = end;
        region->prot  = prot;
        status = rcache->ops->mem_reg(rcache->context, rcache, arg, region);
    }
    if (status != UCS_OK) {
        ucs_debug("rcache '%s': registering [0x%lx, 0x%lx) failed: %s",
                  rcache->name, (unsigned long)start, (unsigned long)end,
                  ucs_status_string(status));
        free(region);
        return status;
    }

    ucs_trace("rcache '%s': registered [0x%lx, 0x%lx) prot 0x%x", rcache->name,
              (unsigned long)region->start, (unsigned long)region->end,
              region->prot);
    region->refcount = 1;
    region->flags    = UCS_RCACHE_REGION_FLAG_IN_TREE;
    rcache->root     = ucs_rcache_tree_insert(rcache->root, region);
    rcache->stats.bytes += region->end - region->start;
    ++rcache->stats.regions;
    ++rcache->stats.misses;
    *region_p = region;
    return UCS_OK;
}

ucs_status_t ucs_rcache_get(ucs_rcache_t *rcache, void *address, size_t length,
                            unsigned prot, void *arg,
                            ucs_rcache_region_t **region_p)
{
    uintptr_t start = (uintptr_t)address;
    uintptr_t end   = start + length;
    ucs_rcache_region_t *region;
    uintptr_t aligned_end;
    ucs_status_t status;

    if ((rcache == NULL) || (address == NULL) || (length == 0) ||
        (region_p == NULL) || (end < start) ||
        (prot & ~(unsigned)(PROT_READ | PROT_WRITE))) {
        return UCS_ERR_INVALID_PARAM;
    }

    aligned_end = (end + rcache->align_mask) & ~rcache->align_mask;
    if (aligned_end < end) {
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_rcache_lock(rcache);
    region = ucs_rcache_tree_find_le(rcache->root, start);
    if (ucs_likely((region != NULL) && (region->end >= end) &&
                   ((region->prot & prot) == prot))) {
        if (region->flags & UCS_RCACHE_REGION_FLAG_IN_LRU) {
            ucs_list_del(&region->lru);
            region->flags &= ~UCS_RCACHE_REGION_FLAG_IN_LRU;
        }
        ++region->refcount;
        ++rcache->stats.hits;
        status = UCS_OK;
    } else {
        status = ucs_rcache_region_create(rcache, start & ~rcache->align_mask,
                                          aligned_end, prot, arg, &region);
    }
    ucs_rcache_unlock(rcache);

    if (status == UCS_OK) {
        *region_p = region;
    }
    return status;
}

void ucs_rcache_region_put(ucs_rcache_t *rcache, ucs_rcache_region_t *region)
{
    ucs_rcache_lock(rcache);
    if (ucs_unlikely(region->refcount == 0)) {
        ucs_rcache_unlock(rcache);
        ucs_error("rcache '%s': region [0x%lx, 0x%lx) put more often than "
                  "taken; put each region once per get",
                  rcache->name, (unsigned long)region->start,
                  (unsigned long)region->end);
        return;
    }

    if (--region->refcount == 0) {
        if (region->flags & UCS_RCACHE_REGION_FLAG_IN_TREE) {
            ucs_list_add_tail(&rcache->lru, &region->lru);
            region->flags |= UCS_RCACHE_REGION_FLAG_IN_LRU;
            ucs_rcache_evict(rcache, 0, 0);
        } else {
            ucs_rcache_region_destroy(rcache, region);
        }
    }
    ucs_rcache_unlock(rcache);
}

void ucs_rcache_invalidate(ucs_rcache_t *rcache, void *address, size_t length)
{
    uintptr_t start = (uintptr_t)address;
    uintptr_t end   = start + length;

    if ((rcache == NULL) || (length == 0)) {
        return;
    }

    ucs_rcache_lock(rcache);
    ucs_rcache_remove_range(rcache, start, (end < start) ? UINTPTR_MAX : end,
                            UCS_RCACHE_REMOVE_INVALIDATE);
    ucs_rcache_unlock(rcache);
}

void ucs_rcache_get_stats(ucs_rcache_t *rcache, ucs_rcache_stats_t *stats)
{
    ucs_rcache_lock(rcache);
    *stats = rcache->stats;
    ucs_rcache_unlock(rcache);
}

void ucs_rcache_print_stats(ucs_rcache_t *rcache, FILE *stream)
{
    ucs_rcache_stats_t stats;

    ucs_rcache_get_stats(rcache, &stats);
    fprintf(stream,
            "rcache %s: hits %lu misses %lu merges %lu evictions %lu "
            "invalidations %lu unmap_events %lu regions %lu bytes %zu\n",
            rcache->name, stats.hits, stats.misses, stats.merges,
            stats.evictions, stats.invalidations, stats.unmap_events,
            stats.regions, stats.bytes);
}

const char *ucs_rcache_name(const ucs_rcache_t *rcache)
{
    return rcache->name;
}
