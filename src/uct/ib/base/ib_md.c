/*
 * The ib memory domain and the ib component.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ib_md.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Registration cost when nothing better is known: a system call, pinning
 * and a page table update (seconds, seconds per byte) */
#define UCT_IB_MD_REG_COST_OVERHEAD 16e-6
#define UCT_IB_MD_REG_COST_GROWTH   0.06e-9

ucs_config_field_t uct_ib_md_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_ib_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"FORK_INIT", "try",
     "Make registered memory safe across fork() with ibv_fork_init():\n"
     "\"yes\" fails the memory domain when that is not possible, \"try\"\n"
     "goes on without it, \"no\" does not ask. Done once per process.",
     ucs_offsetof(uct_ib_md_config_t, fork_init), UCS_CONFIG_TYPE_TERNARY},

    {"RCACHE", "try",
     "Keep registrations in a cache so registering memory again (or a\n"
     "part of registered memory) costs no new memory region: \"yes\"\n"
     "fails the memory domain when the cache cannot be created, \"try\"\n"
     "goes on without it, \"no\" registers every request directly.",
     ucs_offsetof(uct_ib_md_config_t, rcache), UCS_CONFIG_TYPE_TERNARY},

    {"RCACHE_MAX_SIZE", "auto",
     "Largest number of bytes the registration cache keeps registered;\n"
     "beyond it unused regions are deregistered, least recently used\n"
     "first. \"auto\" takes UCX_RCACHE_MAX_SIZE.",
     ucs_offsetof(uct_ib_md_config_t, rcache_max_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"RCACHE_MAX_REGIONS", "auto",
     "Largest number of regions the registration cache keeps. \"auto\"\n"
     "takes UCX_RCACHE_MAX_REGIONS.",
     ucs_offsetof(uct_ib_md_config_t, rcache_max_regions),
     UCS_CONFIG_TYPE_ULUNITS},

    {"GID_INDEX", "auto",
     "GID table index of the ports: \"auto\" takes index 0 on InfiniBand\n"
     "and, on RoCE, the first RoCE v2 GID with an IPv4-mapped address\n"
     "(::ffff:a.b.c.d), else the first RoCE v2 GID. uct_info -d lists the\n"
     "table of each port.",
     ucs_offsetof(uct_ib_md_config_t, gid_index), UCS_CONFIG_TYPE_ULUNITS},

    {"ASYNC_EVENTS", "y",
     "Watch the asynchronous events of the device (port up/down, fatal\n"
     "errors) from the async thread.",
     ucs_offsetof(uct_ib_md_config_t, async_events), UCS_CONFIG_TYPE_BOOL},

    {NULL}};

/* ------------------------------------------------------------------------
 * Fork safety
 */

static ucs_status_t uct_ib_md_fork_init(ucs_ternary_auto_value_t mode)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int done, result;

    if (mode == UCS_NO) {
        ucs_debug("ibv_fork_init() not called: UCX_IB_FORK_INIT=no");
        return UCS_OK;
    }

    pthread_mutex_lock(&lock);
    if (!done) {
        result = ibv_fork_init();
        done   = 1;
    }
    pthread_mutex_unlock(&lock);

    if (result == 0) {
        return UCS_OK;
    }

    errno = result;
    if (mode == UCS_YES) {
        ucs_error("ibv_fork_init() failed: %m; memory registered before a "
                  "fork() is not safe in the child. Set "
                  "UCX_IB_FORK_INIT=try to go on without it");
        return UCS_ERR_IO_ERROR;
    }

    ucs_debug("ibv_fork_init() failed: %m; going on (UCX_IB_FORK_INIT=try)");
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * The table of live memory regions (see ib_md.h)
 */

static void uct_ib_md_write_lock(uct_ib_md_t *md)
{
    int ret = pthread_rwlock_wrlock(&md->lock);

    if (ret != 0) {
        /* EDEADLK: this thread already holds the lock as a writer */
        ucs_fatal("%s: pthread_rwlock_wrlock() failed: %s", md->dev.name,
                  strerror(ret));
    }
}

static void uct_ib_md_unlock(uct_ib_md_t *md)
{
    pthread_rwlock_unlock(&md->lock);
}

/* Whether one more entry makes ucs_hash_put() rebuild @a table (the rule
 * hash.h states: used plus removed buckets above 3/4 of the table) */
static int uct_ib_md_table_full(const ucs_hash_t *table)
{
    return (table->count + table->num_removed + 1) * 4 > table->num_buckets * 3;
}

/*
 * Enters @a mr in the table with @a memh as its value, and fills @a memh
 * (left untouched on failure). A rebuild inside ucs_hash_put() would free
 * the old buckets with the write lock held, and a free() can make the
 * registration cache deregister a region in this very thread, which would
 * then wait for the lock forever. So a full table is replaced by a larger
 * one allocated without the lock, and the old one is freed after the lock
 * is released. Nothing is logged here.
 */
static ucs_status_t uct_ib_md_table_insert(uct_ib_md_t *md, struct ibv_mr *mr,
                                           int access, unsigned memh_flags,
                                           uct_ib_mem_t *memh)
{
    int have_larger = 0;
    int have_old    = 0;
    size_t capacity = 0;
    ucs_hash_t larger, old;
    ucs_hash_iter_t iter;
    ucs_status_t status;
    uint64_t key;
    void *value;

    uct_ib_md_write_lock(md);
    while (uct_ib_md_table_full(&md->regions)) {
        if (have_larger && (md->regions.count < capacity)) {
            /* the entries and the new one fit in @a larger: no rebuild */
            ucs_hash_for_each(key, value, iter, &md->regions) {
                status = ucs_hash_put(&larger, key, value);
                ucs_assert(status == UCS_OK);
            }
            old         = md->regions;
            md->regions = larger;
            have_larger = 0;
            have_old    = 1;
            break;
        }

        /* room for twice the entries; others may register meanwhile */
        capacity = (md->regions.count + 1) * 2;
        uct_ib_md_unlock(md);
        if (have_larger) {
            ucs_hash_cleanup(&larger);
            have_larger = 0;
        }
        status = ucs_hash_init(&larger, capacity);
        if (status != UCS_OK) {
            return status;
        }
        have_larger = 1;
        uct_ib_md_write_lock(md);
    }

    status = ucs_hash_put(&md->regions, mr->rkey, memh);
    if (status == UCS_OK) {
        /* under the lock: an access sees the handle complete */
        memh->mr     = mr;
        memh->lkey   = mr->lkey;
        memh->rkey   = mr->rkey;
        memh->flags  = memh_flags;
        memh->access = access;
    }
    uct_ib_md_unlock(md);

    if (have_larger) {
        ucs_hash_cleanup(&larger); /* another registration grew the table */
    }
    if (have_old) {
        ucs_hash_cleanup(&old);
    }
    return status;
}

/* Takes @a memh out of the table: once this returns, no access is granted
 * with its rkey, and none granted before is still copying. 0 if the table
 * does not hold it (a bug) */
static int uct_ib_md_table_remove(uct_ib_md_t *md, const uct_ib_mem_t *memh)
{
    void *found = NULL;

    uct_ib_md_write_lock(md);
    if ((ucs_hash_get(&md->regions, memh->rkey, &found) == UCS_OK) &&
        (found == memh)) {
        ucs_hash_remove(&md->regions, memh->rkey, NULL);
    } else {
        found = NULL;
    }
    uct_ib_md_unlock(md);
    return found != NULL;
}

static ucs_status_t uct_ib_md_table_init(uct_ib_md_t *md, const char *md_name)
{
    pthread_rwlockattr_t attr;
    ucs_status_t status;
    int ret;

    ret = pthread_rwlockattr_init(&attr);
    if (ret == 0) {
#ifdef __GLIBC__
        /* a waiting writer stops new readers (see ib_md.h) */
        pthread_rwlockattr_setkind_np(
            &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
        ret = pthread_rwlock_init(&md->lock, &attr);
        pthread_rwlockattr_destroy(&attr);
    }
    if (ret != 0) {
        ucs_error("%s: pthread_rwlock_init() failed: %s", md_name,
                  strerror(ret));
        return UCS_ERR_NO_RESOURCE;
    }

    status = ucs_hash_init(&md->regions, 0);
    if (status != UCS_OK) {
        pthread_rwlock_destroy(&md->lock); /* the table logged why */
        return status;
    }
    return UCS_OK;
}

static void uct_ib_md_table_cleanup(uct_ib_md_t *md)
{
    if (ucs_hash_size(&md->regions) != 0) {
        ucs_debug("%s: %zu memory regions still registered at close",
                  md->dev.name, ucs_hash_size(&md->regions));
    }
    ucs_hash_cleanup(&md->regions);
    pthread_rwlock_destroy(&md->lock);
}

/* ------------------------------------------------------------------------
 * Registration
 */

int uct_ib_md_access_flags(unsigned flags)
{
    int access = 0;

    if (!(flags & UCT_MD_MEM_ACCESS_ALL)) {
        return UCT_IB_MEM_ACCESS_ALL;
    }

    /* verbs wants local write with any remote write or atomic */
    if (flags & UCT_MD_MEM_ACCESS_LOCAL_WRITE) {
        access |= IBV_ACCESS_LOCAL_WRITE;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_PUT) {
        access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_GET) {
        access |= IBV_ACCESS_REMOTE_READ;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_ATOMIC) {
        access |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
    }
    return access;
}

/* The status and hint of a failed ibv_reg_mr() with @a err */
static ucs_status_t uct_ib_md_reg_error(int err, const char **hint_p)
{
    switch (err) {
    case EFAULT:
        *hint_p = "the range is not mapped, or is read-only while write "
                  "access was asked";
        return UCS_ERR_INVALID_ADDR;
    case EINVAL:
        *hint_p = "invalid range or access flags";
        return UCS_ERR_INVALID_PARAM;
    case ENOMEM:
    case EAGAIN:
        *hint_p = "raise the locked memory limit (ulimit -l) or lower "
                  "UCX_IB_RCACHE_MAX_SIZE";
        return UCS_ERR_NO_MEMORY;
    default:
        *hint_p = "check dmesg for the driver's reason";
        return UCS_ERR_IO_ERROR;
    }
}

/*
 * The cause of a failed ibv_reg_mr(): with fork safety on, libibverbs
 * first marks the range MADV_DONTFORK, which fails with ENOMEM for memory
 * that is not mapped; tell that apart from a real lack of memory.
 */
static int uct_ib_md_reg_errno(void *address, size_t length)
{
    int err          = errno;
    size_t page_size = ucs_get_page_size();
    uintptr_t start  = (uintptr_t)address & ~(page_size - 1);
    uintptr_t end    = ucs_align_up((uintptr_t)address + length, page_size);

    if ((err == ENOMEM) && (msync((void *)start, end - start, MS_ASYNC) != 0) &&
        (errno == ENOMEM)) {
        err = EFAULT;
    }

    errno = err;
    return err;
}

/*
 * ibv_reg_mr(), and the region entered in the md's table with @a memh,
 * which is filled (flags @a memh_flags) on success only. A failed
 * registration is logged unless @a silent; a failed table insert always.
 */
static ucs_status_t uct_ib_md_reg_mr(uct_ib_md_t *md, void *address,
                                     size_t length, int access, int silent,
                                     unsigned memh_flags, uct_ib_mem_t *memh)
{
    const char *hint;
    ucs_status_t status;
    struct ibv_mr *mr;
    int ret;

    mr = ibv_reg_mr(md->pd, address, length, access);
    if (mr == NULL) {
        status =
            uct_ib_md_reg_error(uct_ib_md_reg_errno(address, length), &hint);
        ucs_log(silent ? UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_ERROR,
                "%s: ibv_reg_mr(address %p, length %zu, access 0x%x) "
                "failed: %m; %s",
                md->dev.name, address, length, access, hint);
        return status;
    }

    status = uct_ib_md_table_insert(md, mr, access, memh_flags, memh);
    if (status != UCS_OK) {
        ucs_error("%s: cannot enter the memory region %p length %zu rkey "
                  "0x%x in the table of remote access checks: %s; the "
                  "registration is undone",
                  md->dev.name, address, length, mr->rkey,
                  ucs_status_string(status));
        ret = ibv_dereg_mr(mr);
        if (ret != 0) {
            ucs_debug("%s: ibv_dereg_mr(%p) failed: %s", md->dev.name, address,
                      strerror(ret));
        }
        return status;
    }

    __atomic_fetch_add(&md->num_reg, 1, __ATOMIC_RELAXED);
    ucs_trace("%s: registered %p..%p access 0x%x lkey 0x%x rkey 0x%x",
              md->dev.name, address, (char *)address + length, access, mr->lkey,
              mr->rkey);
    return UCS_OK;
}

/*
 * Takes the region of @a memh out of the md's table, then ibv_dereg_mr().
 * When the latter fails the memory stays registered but no longer
 * accessible through uct_ib_md_access_begin().
 */
static ucs_status_t uct_ib_md_dereg_mr(uct_ib_md_t *md, uct_ib_mem_t *memh)
{
    struct ibv_mr *mr = memh->mr;
    void *address     = mr->addr;
    size_t length     = mr->length;
    int ret;

    if (!uct_ib_md_table_remove(md, memh)) {
        /* deregistered all the same: the device must let the memory go */
        ucs_error("%s: memory region %p length %zu rkey 0x%x is not in the "
                  "md's table: registered with another md, or its "
                  "deregistration failed before",
                  md->dev.name, address, length, memh->rkey);
    }

    ret = ibv_dereg_mr(mr);
    if (ret != 0) {
        errno = ret;
        ucs_error("%s: ibv_dereg_mr(%p, length %zu) failed: %m; the memory "
                  "stays registered",
                  md->dev.name, address, length);
        return UCS_ERR_IO_ERROR;
    }

    __atomic_fetch_add(&md->num_dereg, 1, __ATOMIC_RELAXED);
    return UCS_OK;
}

static ucs_status_t uct_ib_md_mem_reg_direct(uct_ib_md_t *md, void *address,
                                             size_t length, unsigned flags,
                                             uct_mem_h *memh_p)
{
    uct_ib_mem_t *memh;
    ucs_status_t status;

    memh = calloc(1, sizeof(*memh));
    if (memh == NULL) {
        ucs_error("%s: failed to allocate a memory handle", md->dev.name);
        return UCS_ERR_NO_MEMORY;
    }

    status =
        uct_ib_md_reg_mr(md, address, length, uct_ib_md_access_flags(flags),
                         flags & UCT_MD_MEM_FLAG_HIDE_ERRORS, 0, memh);
    if (status != UCS_OK) {
        free(memh);
        return status;
    }

    *memh_p = memh;
    return UCS_OK;
}

/*
 * A region of the registration cache. Its protection says what it was
 * registered for: PROT_WRITE regions have every access right, PROT_READ
 * ones only remote read (so read-only memory can be registered too). The
 * cache returns a region with at least the protection a request needs and
 * merges protections when regions merge.
 */
typedef struct uct_ib_rcache_region {
    ucs_rcache_region_t super;
    uct_ib_mem_t memh;
} uct_ib_rcache_region_t;

/* The protection a request with UCT_MD_MEM_* @a flags needs */
static unsigned uct_ib_md_access_prot(unsigned flags)
{
    int write_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                       IBV_ACCESS_REMOTE_ATOMIC;

    return (uct_ib_md_access_flags(flags) & write_access)
               ? (PROT_READ | PROT_WRITE)
               : PROT_READ;
}

/* The verbs access rights of a cache region of protection @a prot */
static int uct_ib_md_prot_access(unsigned prot)
{
    return (prot & PROT_WRITE) ? UCT_IB_MEM_ACCESS_ALL : IBV_ACCESS_REMOTE_READ;
}

static ucs_status_t uct_ib_rcache_mem_reg(void *context, ucs_rcache_t *rcache,
                                          void *arg,
                                          ucs_rcache_region_t *rregion)
{
    uct_ib_rcache_region_t *region = (uct_ib_rcache_region_t *)rregion;
    const unsigned *flags          = arg;
    uct_ib_md_t *md                = context;

    return uct_ib_md_reg_mr(md, (void *)rregion->start,
                            rregion->end - rregion->start,
                            uct_ib_md_prot_access(rregion->prot),
                            *flags & UCT_MD_MEM_FLAG_HIDE_ERRORS,
                            UCT_IB_MEM_FLAG_RCACHE, &region->memh);
}

static void uct_ib_rcache_mem_dereg(void *context, ucs_rcache_t *rcache,
                                    ucs_rcache_region_t *rregion)
{
    uct_ib_rcache_region_t *region = (uct_ib_rcache_region_t *)rregion;

    uct_ib_md_dereg_mr(context, &region->memh);
}

static const ucs_rcache_ops_t uct_ib_rcache_ops = {
    .mem_reg = uct_ib_rcache_mem_reg, .mem_dereg = uct_ib_rcache_mem_dereg};

static ucs_status_t uct_ib_md_rcache_init(uct_ib_md_t *md,
                                          const uct_ib_md_config_t *config)
{
    ucs_rcache_params_t params;
    ucs_status_t status;
    char name[64];

    memset(&params, 0, sizeof(params));
    params.region_struct_size = sizeof(uct_ib_rcache_region_t);
    params.alignment          = ucs_get_page_size();
    params.ops                = &uct_ib_rcache_ops;
    params.context            = md;
    /* 0 lets the cache take UCX_RCACHE_MAX_SIZE / _MAX_REGIONS */
    params.max_size    = (config->rcache_max_size == UCS_MEMUNITS_AUTO)
                             ? 0
                             : config->rcache_max_size;
    params.max_regions = (config->rcache_max_regions == UCS_ULUNITS_AUTO)
                             ? 0
                             : config->rcache_max_regions;

    snprintf(name, sizeof(name), "ib_%s", md->dev.name);
    status = ucs_rcache_create(&params, name, &md->rcache);
    if (status != UCS_OK) {
        md->rcache = NULL;
    }
    return status;
}

static void uct_ib_md_rcache_cleanup(uct_ib_md_t *md)
{
    ucs_rcache_destroy(md->rcache);
}

static ucs_status_t uct_ib_md_mem_reg_cached(uct_ib_md_t *md, void *address,
                                             size_t length, unsigned flags,
                                             uct_mem_h *memh_p)
{
    ucs_rcache_region_t *rregion;
    ucs_status_t status;

    status = ucs_rcache_get(md->rcache, address, length,
                            uct_ib_md_access_prot(flags), &flags, &rregion);
    if (status != UCS_OK) {
        return status;
    }

    *memh_p = &((uct_ib_rcache_region_t *)rregion)->memh;
    return UCS_OK;
}

static void uct_ib_md_mem_dereg_cached(uct_ib_md_t *md, uct_ib_mem_t *memh)
{
    ucs_rcache_region_put(
        md->rcache,
        &ucs_container_of(memh, uct_ib_rcache_region_t, memh)->super);
}

static ucs_status_t uct_ib_md_mem_reg(uct_md_h uct_md, void *address,
                                      size_t length, unsigned flags,
                                      uct_mem_h *memh_p)
{
    uct_ib_md_t *md = uct_ib_md_from(uct_md);

    if (md->rcache != NULL) {
        return uct_ib_md_mem_reg_cached(md, address, length, flags, memh_p);
    }
    return uct_ib_md_mem_reg_direct(md, address, length, flags, memh_p);
}

static ucs_status_t uct_ib_md_mem_dereg(uct_md_h uct_md, uct_mem_h uct_memh)
{
    uct_ib_md_t *md    = uct_ib_md_from(uct_md);
    uct_ib_mem_t *memh = uct_memh;
    ucs_status_t status;

    if (memh->flags & UCT_IB_MEM_FLAG_ALLOC) {
        ucs_error("%s: memory handle %p belongs to memory the md allocated; "
                  "release it with uct_mem_free()",
                  md->dev.name, uct_memh);
        return UCS_ERR_INVALID_PARAM;
    }

    if (memh->flags & UCT_IB_MEM_FLAG_RCACHE) {
        uct_ib_md_mem_dereg_cached(md, memh);
        return UCS_OK;
    }

    status = uct_ib_md_dereg_mr(md, memh);
    if (status != UCS_OK) {
        return status;
    }

    free(memh);
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Allocation: anonymous pages, registered directly (not through the cache:
 * the memory lives exactly as long as its handle)
 */

static ucs_status_t uct_ib_md_mem_alloc(uct_md_h uct_md, size_t *length_p,
                                        void **address_p,
                                        ucs_memory_type_t mem_type,
                                        unsigned flags, const char *alloc_name,
                                        uct_mem_h *memh_p)
{
    uct_ib_md_t *md = uct_ib_md_from(uct_md);
    uct_ib_mem_t *memh;
    ucs_status_t status;
    size_t length;
    void *address;

    if (mem_type != UCS_MEMORY_TYPE_HOST) {
        return UCS_ERR_UNSUPPORTED;
    }
    if (flags & UCT_MD_MEM_FLAG_FIXED) {
        ucs_debug("%s: cannot allocate '%s' at a fixed address", md->dev.name,
                  alloc_name);
        return UCS_ERR_UNSUPPORTED;
    }
    if (*length_p == 0) {
        ucs_error("%s: allocation of zero bytes for '%s'", md->dev.name,
                  alloc_name);
        return UCS_ERR_INVALID_PARAM;
    }

    length = ucs_align_up(*length_p, ucs_get_page_size());
    memh   = calloc(1, sizeof(*memh));
    if (memh == NULL) {
        ucs_error("%s: failed to allocate a memory handle for '%s'",
                  md->dev.name, alloc_name);
        return UCS_ERR_NO_MEMORY;
    }

    address = mmap(NULL, length, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (address == MAP_FAILED) {
        ucs_error("%s: mmap(%zu) for '%s' failed: %m", md->dev.name, length,
                  alloc_name);
        status = UCS_ERR_NO_MEMORY;
        goto err_free_memh;
    }

    status = uct_ib_md_reg_mr(
        md, address, length, uct_ib_md_access_flags(flags),
        flags & UCT_MD_MEM_FLAG_HIDE_ERRORS, UCT_IB_MEM_FLAG_ALLOC, memh);
    if (status != UCS_OK) {
        goto err_munmap;
    }

    memh->alloc_length = length;
    ucs_debug("%s: allocated %zu bytes at %p for '%s'", md->dev.name, length,
              address, alloc_name);
    *length_p  = length;
    *address_p = address;
    *memh_p    = memh;
    return UCS_OK;

err_munmap:
    munmap(address, length);
err_free_memh:
    free(memh);
    return status;
}

static ucs_status_t uct_ib_md_mem_free(uct_md_h uct_md, uct_mem_h uct_memh)
{
    uct_ib_md_t *md    = uct_ib_md_from(uct_md);
    uct_ib_mem_t *memh = uct_memh;
    void *address      = memh->mr->addr;
    ucs_status_t status;

    if (!(memh->flags & UCT_IB_MEM_FLAG_ALLOC)) {
        ucs_error("%s: memory handle %p is a registration, not an "
                  "allocation; release it with uct_md_mem_dereg()",
                  md->dev.name, uct_memh);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_ib_md_dereg_mr(md, memh);
    if (status != UCS_OK) {
        return status;
    }

    if (munmap(address, memh->alloc_length) != 0) {
        ucs_warn("%s: munmap(%p, %zu) failed: %m", md->dev.name, address,
                 memh->alloc_length);
    }
    free(memh);
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Queries and keys
 */

static ucs_status_t uct_ib_md_query(uct_md_h uct_md, uct_md_attr_t *md_attr)
{
    uct_ib_md_t *md = uct_ib_md_from(uct_md);
    unsigned cpu;

    uct_md_base_attr_init(uct_md, md_attr);
    md_attr->cap.flags = UCT_MD_FLAG_REG | UCT_MD_FLAG_ALLOC |
                         UCT_MD_FLAG_NEED_MEMH | UCT_MD_FLAG_NEED_RKEY;
    md_attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.alloc_mem_types  = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.detect_mem_types = 0;
    md_attr->cap.max_alloc        = md->dev.dev_attr.max_mr_size;
    md_attr->cap.max_reg          = md->dev.dev_attr.max_mr_size;
    md_attr->rkey_packed_size     = UCT_IB_MD_PACKED_RKEY_SIZE;
    md_attr->reg_cost             = md->reg_cost;

    if ((md->dev.numa_node == UCS_NUMA_NODE_UNDEFINED) ||
        (ucs_topo_numa_node_cpus(md->dev.numa_node, &md_attr->local_cpus) !=
         UCS_OK)) {
        for (cpu = 0; cpu < ucs_min(ucs_topo_num_cpus(), UCS_CPU_SETSIZE);
             ++cpu) {
            UCS_CPU_SET(cpu, &md_attr->local_cpus);
        }
    }
    return UCS_OK;
}

static ucs_status_t uct_ib_md_mem_query(uct_md_h uct_md, const void *address,
                                        size_t length,
                                        uct_md_mem_attr_t *mem_attr)
{
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_MEM_TYPE) {
        mem_attr->mem_type = UCS_MEMORY_TYPE_HOST;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_SYS_DEV) {
        mem_attr->sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS) {
        mem_attr->base_address = (void *)address;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH) {
        mem_attr->alloc_length = length;
    }
    return UCS_OK;
}

static ucs_status_t uct_ib_md_mkey_pack(uct_md_h uct_md, uct_mem_h uct_memh,
                                        void *rkey_buffer)
{
    const uct_ib_mem_t *memh = uct_memh;

    if (memh == UCT_MEM_HANDLE_NULL) {
        ucs_error("%s: cannot pack the remote key of a NULL memory handle",
                  uct_ib_md_from(uct_md)->dev.name);
        return UCS_ERR_INVALID_PARAM;
    }

    memcpy(rkey_buffer, &memh->rkey, sizeof(memh->rkey));
    return UCS_OK;
}

static ucs_status_t uct_ib_rkey_unpack(uct_component_t *component,
                                       const void *rkey_buffer,
                                       uct_rkey_t *rkey_p, void **handle_p)
{
    uint32_t rkey;

    memcpy(&rkey, rkey_buffer, sizeof(rkey));
    *rkey_p   = rkey;
    *handle_p = NULL;
    return UCS_OK;
}

static ucs_status_t uct_ib_rkey_release(uct_component_t *component,
                                        uct_rkey_t rkey, void *handle)
{
    return UCS_OK;
}

static void uct_ib_md_print_info(uct_md_h uct_md, FILE *stream)
{
    uct_ib_md_t *md = uct_ib_md_from(uct_md);

    uct_ib_device_print_info(&md->dev, md->gid_index, stream);
    if (md->rcache == NULL) {
        fprintf(stream, "#   registrations: direct (no cache)\n");
        return;
    }
    fprintf(stream, "#   registrations: cached, ");
    ucs_rcache_print_stats(md->rcache, stream);
}

/*
 * The md's "rcache" file in the object tree: the cache's counters and
 * usage, one "name value" per line. ucs_rcache_get_stats() takes the
 * cache's own mutex: an exception to "show callbacks take no lock" that
 * cannot deadlock, since nothing holding that mutex calls into the tree;
 * a read may wait for a registration in progress.
 */
static void uct_ib_md_vfs_show_rcache(void *obj, ucs_string_buffer_t *strb,
                                      void *arg_ptr, uint64_t arg_u64)
{
    uct_ib_md_t *md = uct_ib_md_from((uct_md_h)obj);
    ucs_rcache_stats_t stats;

    ucs_rcache_get_stats(md->rcache, &stats);
    ucs_string_buffer_appendf(strb,
                              "hits %lu\nmisses %lu\nmerges %lu\n"
                              "evictions %lu\ninvalidations %lu\n"
                              "unmap_events %lu\nregions %lu\nbytes %zu\n",
                              stats.hits, stats.misses, stats.merges,
                              stats.evictions, stats.invalidations,
                              stats.unmap_events, stats.regions, stats.bytes);
}

static void uct_ib_md_vfs_init(uct_md_h uct_md)
{
    if (uct_ib_md_from(uct_md)->rcache != NULL) {
        uct_vfs_add_file(uct_md, uct_ib_md_vfs_show_rcache, NULL, 0, "rcache");
    }
}

/* ------------------------------------------------------------------------
 * Open and close
 */

static void uct_ib_md_close(uct_md_h uct_md)
{
    uct_ib_md_t *md = uct_ib_md_from(uct_md);

    if (md->rcache != NULL) {
        uct_ib_md_rcache_cleanup(md); /* deregisters the cache's regions */
    }
    uct_ib_md_table_cleanup(md);
    if (ibv_dealloc_pd(md->pd) != 0) {
        ucs_warn("%s: ibv_dealloc_pd() failed: %m; memory regions are still "
                 "registered",
                 md->dev.name);
    }
    uct_ib_device_cleanup(&md->dev);
    free(md);
}

static const uct_md_ops_t uct_ib_md_ops = {.close     = uct_ib_md_close,
                                           .query     = uct_ib_md_query,
                                           .mem_alloc = uct_ib_md_mem_alloc,
                                           .mem_free  = uct_ib_md_mem_free,
                                           .mem_reg   = uct_ib_md_mem_reg,
                                           .mem_dereg = uct_ib_md_mem_dereg,
                                           .mem_query = uct_ib_md_mem_query,
                                           .mkey_pack = uct_ib_md_mkey_pack,
                                           .detect_memory_type = NULL,
                                           .print_info = uct_ib_md_print_info,
                                           .vfs_init   = uct_ib_md_vfs_init};

/* The verbs device named @a md_name, opened into @a md->dev */
static ucs_status_t uct_ib_md_open_device(uct_ib_md_t *md, const char *md_name,
                                          int async_events)
{
    struct ibv_device **devices;
    ucs_status_t status;
    int i, num_devices;

    devices = ibv_get_device_list(&num_devices);
    if (devices == NULL) {
        ucs_error("ibv_get_device_list() failed: %m; is the rdma-core "
                  "provider of the device installed?");
        return UCS_ERR_NO_DEVICE;
    }

    status = UCS_ERR_NO_DEVICE;
    for (i = 0; i < num_devices; ++i) {
        if (!strcmp(ibv_get_device_name(devices[i]), md_name)) {
            status = uct_ib_device_init(&md->dev, devices[i], async_events);
            break;
        }
    }
    if (i == num_devices) {
        ucs_error("verbs device '%s' not found; ibv_devices lists them",
                  md_name);
    }

    ibv_free_device_list(devices);
    return status;
}

static ucs_status_t uct_ib_md_open(uct_component_t *component,
                                   const char *md_name,
                                   const uct_md_config_t *uct_config,
                                   uct_md_h *md_p)
{
    const uct_ib_md_config_t *config = (const uct_ib_md_config_t *)uct_config;
    ucs_status_t status;
    uct_ib_md_t *md;

    if (config == NULL) {
        ucs_error("ib md '%s': no configuration; read it with "
                  "uct_md_config_read()",
                  md_name);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_ib_md_fork_init(config->fork_init);
    if (status != UCS_OK) {
        return status;
    }

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("failed to allocate ib memory domain '%s'", md_name);
        return UCS_ERR_NO_MEMORY;
    }

    uct_md_base_init(&md->super, &uct_ib_md_ops, component);
    md->gid_index = config->gid_index;
    md->reg_cost  = ucs_linear_func_make(UCT_IB_MD_REG_COST_OVERHEAD,
                                         UCT_IB_MD_REG_COST_GROWTH);

    status = uct_ib_md_table_init(md, md_name);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_ib_md_open_device(md, md_name, config->async_events);
    if (status != UCS_OK) {
        goto err_cleanup_table;
    }

    md->pd = ibv_alloc_pd(md->dev.ibv_context);
    if (md->pd == NULL) {
        ucs_error("%s: ibv_alloc_pd() failed: %m", md_name);
        status = UCS_ERR_NO_RESOURCE;
        goto err_cleanup_dev;
    }

    if (config->rcache != UCS_NO) {
        status = uct_ib_md_rcache_init(md, config);
        if (status != UCS_OK) {
            if (config->rcache == UCS_YES) {
                ucs_error("%s: registration cache not available: %s; set "
                          "UCX_IB_RCACHE=try or no to register directly",
                          md_name, ucs_status_string(status));
                goto err_dealloc_pd;
            }
            ucs_debug("%s: registration cache not available: %s; "
                      "registering directly",
                      md_name, ucs_status_string(status));
        }
    }

    ucs_debug("%s: memory domain opened (registration cache %s)", md_name,
              (md->rcache != NULL) ? "on" : "off");
    *md_p = &md->super;
    return UCS_OK;

err_dealloc_pd:
    ibv_dealloc_pd(md->pd);
err_cleanup_dev:
    uct_ib_device_cleanup(&md->dev);
err_cleanup_table:
    ucs_hash_cleanup(&md->regions);
    pthread_rwlock_destroy(&md->lock);
err_free:
    free(md);
    return status;
}

/* One memory domain per verbs device, named like the device */
static ucs_status_t uct_ib_query_md_resources(uct_component_t *component,
                                              uct_md_resource_desc_t **res_p,
                                              unsigned *num_resources_p)
{
    uct_md_resource_desc_t *resources;
    struct ibv_device **devices;
    int i, num_devices;

    devices = ibv_get_device_list(&num_devices);
    if ((devices == NULL) || (num_devices == 0)) {
        if (devices == NULL) {
            ucs_debug("ibv_get_device_list() failed: %m; the ib component "
                      "offers no memory domains");
        } else {
            ucs_debug("no verbs devices (ibv_devices lists none); the ib "
                      "component offers no memory domains");
            ibv_free_device_list(devices);
        }
        *res_p           = NULL;
        *num_resources_p = 0;
        return UCS_OK;
    }

    resources = calloc(num_devices, sizeof(*resources));
    if (resources == NULL) {
        ucs_error("failed to allocate %d ib memory domain resources",
                  num_devices);
        ibv_free_device_list(devices);
        return UCS_ERR_NO_MEMORY;
    }

    for (i = 0; i < num_devices; ++i) {
        snprintf(resources[i].md_name, sizeof(resources[i].md_name), "%s",
                 ibv_get_device_name(devices[i]));
    }

    ibv_free_device_list(devices);
    *res_p           = resources;
    *num_resources_p = (unsigned)num_devices;
    return UCS_OK;
}

uct_component_t uct_ib_component = {
    .name               = UCT_IB_COMPONENT_NAME,
    .query_md_resources = uct_ib_query_md_resources,
    .md_open            = uct_ib_md_open,
    .rkey_unpack        = uct_ib_rkey_unpack,
    .rkey_ptr           = NULL,
    .rkey_release       = uct_ib_rkey_release,
    .md_config          = {.name   = "IB memory domain",
                           .prefix = UCT_IB_CONFIG_PREFIX,
                           .table  = uct_ib_md_config_table,
                           .size   = sizeof(uct_ib_md_config_t)},
    .flags              = 0};
