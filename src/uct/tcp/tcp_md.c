/*
 * The tcp memory domain (keyed regions, see tcp_md.h), the component with
 * its remote keys, and the module entry point.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp.h"
#include "tcp_md.h"
#include "tcp_cm.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Draws of a random key before a registration gives up. A sound random
 * source draws 0, all ones or a live key with probability
 * (regions + 2) / 2^64: more than one redraw means it is broken. */
#define UCT_TCP_MD_KEY_DRAWS 16

/* Seconds per registration: a calloc() and a table insert under the
 * write lock, and a getrandom() system call every 32nd time */
#define UCT_TCP_MD_REG_COST 2e-6

/* The unpacked remote key is the region's key itself */
UCS_STATIC_ASSERT(sizeof(uct_rkey_t) >= sizeof(uint64_t));

static void uct_tcp_md_write_lock(uct_tcp_md_t *md)
{
    int ret = pthread_rwlock_wrlock(&md->lock);

    if (ret != 0) {
        /* EDEADLK: this thread is inside an access of this md */
        ucs_fatal("tcp md %p: pthread_rwlock_wrlock() failed: %s", md,
                  strerror(ret));
    }
}

static void uct_tcp_md_unlock(uct_tcp_md_t *md)
{
    pthread_rwlock_unlock(&md->lock);
}

/* The remote rights of a registration with UCT_MD_MEM_* @a flags: those
 * named, or all of them when no access right at all is named (flags 0) */
static unsigned uct_tcp_md_region_access(unsigned flags)
{
    if (!(flags & UCT_MD_MEM_ACCESS_ALL)) {
        return UCT_TCP_MD_ACCESS_REMOTE;
    }
    return flags & UCT_TCP_MD_ACCESS_REMOTE;
}

/* Records @a region (address, length and access set) under a fresh key */
static ucs_status_t uct_tcp_md_region_insert(uct_tcp_md_t *md,
                                             uct_tcp_region_t *region)
{
    ucs_status_t status;
    unsigned draw;
    uint64_t key;

    for (draw = 0; draw < UCT_TCP_MD_KEY_DRAWS; ++draw) {
        uct_tcp_md_write_lock(md);
        if (md->num_keys == 0) {
            status = ucs_sys_random_bytes(md->keys, sizeof(md->keys));
            if (status != UCS_OK) {
                uct_tcp_md_unlock(md);
                return status;
            }
            md->num_keys = UCT_TCP_MD_KEY_BATCH;
        }
        key                    = md->keys[--md->num_keys];
        md->keys[md->num_keys] = 0; /* a key is never handed out twice */
        if ((key == 0) || (key == UINT64_MAX)) {
            /* never valid keys (UCT_INVALID_RKEY is all ones) */
            uct_tcp_md_unlock(md);
            continue;
        }

        region->key = key;
        status      = ucs_hash_put(&md->regions, key, region);
        if (status == UCS_OK) {
            __atomic_fetch_add(&md->num_regions, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&md->reg_bytes, region->length,
                               __ATOMIC_RELAXED);
        }
        uct_tcp_md_unlock(md);

        if (status == UCS_OK) {
            return UCS_OK;
        }
        if (status != UCS_ERR_ALREADY_EXISTS) {
            ucs_error("tcp md %p: no memory to record the region %p length "
                      "%zu (%" PRIu64 " regions registered)",
                      md, (void *)region->address, region->length,
                      __atomic_load_n(&md->num_regions, __ATOMIC_RELAXED));
            return status;
        }
    }

    ucs_error("tcp md %p: %u random keys in a row were 0, all ones or in "
              "use; the system's random source (getrandom, /dev/urandom) is "
              "not random",
              md, UCT_TCP_MD_KEY_DRAWS);
    return UCS_ERR_IO_ERROR;
}

/* Takes @a region out of the table: once this returns, no access is
 * granted with its key, and none granted before is still copying */
static ucs_status_t uct_tcp_md_region_remove(uct_tcp_md_t *md,
                                             uct_tcp_region_t *region)
{
    void *found = NULL;

    uct_tcp_md_write_lock(md);
    if ((ucs_hash_get(&md->regions, region->key, &found) == UCS_OK) &&
        (found == region)) {
        ucs_hash_remove(&md->regions, region->key, NULL);
        __atomic_fetch_sub(&md->num_regions, 1, __ATOMIC_RELAXED);
        __atomic_fetch_sub(&md->reg_bytes, region->length, __ATOMIC_RELAXED);
    } else {
        found = NULL;
    }
    uct_tcp_md_unlock(md);

    if (found == NULL) {
        ucs_error("tcp md %p: memory handle %p is not registered with it; "
                  "was it released twice, or does it belong to another md?",
                  md, (void *)region);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Registration and allocation
 */

static ucs_status_t uct_tcp_md_mem_reg(uct_md_h uct_md, void *address,
                                       size_t length, unsigned flags,
                                       uct_mem_h *memh_p)
{
    uct_tcp_md_t *md = uct_tcp_md(uct_md);
    uct_tcp_region_t *region;
    ucs_status_t status;

    if ((address == NULL) || (length == 0) ||
        ((uintptr_t)address > UINTPTR_MAX - length)) {
        ucs_error("tcp md %p: cannot register %p length %zu: the region is "
                  "empty, NULL or wraps around the address space",
                  md, address, length);
        return UCS_ERR_INVALID_PARAM;
    }

    region = calloc(1, sizeof(*region));
    if (region == NULL) {
        ucs_error("tcp md %p: failed to allocate a region for %p length %zu",
                  md, address, length);
        return UCS_ERR_NO_MEMORY;
    }

    region->address   = (uintptr_t)address;
    region->length    = length;
    region->access    = uct_tcp_md_region_access(flags);
    region->allocated = 0;

    status = uct_tcp_md_region_insert(md, region);
    if (status != UCS_OK) {
        free(region);
        return status;
    }

    ucs_trace("tcp md %p: registered %p..%p access 0x%x", md, address,
              (char *)address + length, region->access);
    *memh_p = region;
    return UCS_OK;
}

static ucs_status_t uct_tcp_md_mem_dereg(uct_md_h uct_md, uct_mem_h memh)
{
    uct_tcp_md_t *md         = uct_tcp_md(uct_md);
    uct_tcp_region_t *region = memh;
    ucs_status_t status;

    if (region->allocated) {
        ucs_error("tcp md %p: memory handle %p belongs to memory the md "
                  "allocated; release it with uct_mem_free()",
                  md, memh);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_tcp_md_region_remove(md, region);
    if (status != UCS_OK) {
        return status;
    }

    ucs_trace("tcp md %p: deregistered %p length %zu", md,
              (void *)region->address, region->length);
    free(region);
    return UCS_OK;
}

/* Anonymous pages, registered like uct_md_mem_reg() would with @a flags */
static ucs_status_t uct_tcp_md_mem_alloc(uct_md_h uct_md, size_t *length_p,
                                         void **address_p,
                                         ucs_memory_type_t mem_type,
                                         unsigned flags, const char *alloc_name,
                                         uct_mem_h *memh_p)
{
    uct_tcp_md_t *md      = uct_tcp_md(uct_md);
    size_t page_size      = ucs_get_page_size();
    const char *name      = (alloc_name != NULL) ? alloc_name : "?";
    ucs_log_level_t level = (flags & UCT_MD_MEM_FLAG_HIDE_ERRORS)
                                ? UCS_LOG_LEVEL_DEBUG
                                : UCS_LOG_LEVEL_ERROR;
    uct_tcp_region_t *region;
    ucs_status_t status;
    size_t length;
    void *address;

    if (mem_type != UCS_MEMORY_TYPE_HOST) {
        ucs_debug("tcp md %p: cannot allocate '%s' in %s memory", md, name,
                  ucs_memory_type_names[mem_type]);
        return UCS_ERR_UNSUPPORTED;
    }
    if (flags & UCT_MD_MEM_FLAG_FIXED) {
        ucs_debug("tcp md %p: cannot allocate '%s' at a fixed address", md,
                  name);
        return UCS_ERR_UNSUPPORTED;
    }
    if ((*length_p == 0) || (*length_p > SIZE_MAX - page_size + 1)) {
        ucs_error("tcp md %p: cannot allocate %zu bytes for '%s'", md,
                  *length_p, name);
        return UCS_ERR_INVALID_PARAM;
    }

    length = ucs_align_up(*length_p, page_size);
    region = calloc(1, sizeof(*region));
    if (region == NULL) {
        ucs_error("tcp md %p: failed to allocate a region for '%s'", md, name);
        return UCS_ERR_NO_MEMORY;
    }

    /* *address_p is a hint (uct_mem_alloc's address parameter) or NULL */
    address = mmap(*address_p, length, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (address == MAP_FAILED) {
        ucs_log(level,
                "tcp md %p: mmap(%zu bytes) for '%s' failed: %m; "
                "check the memory limits (ulimit -v) and free memory",
                md, length, name);
        status = UCS_ERR_NO_MEMORY;
        goto err_free_region;
    }

    region->address   = (uintptr_t)address;
    region->length    = length;
    region->access    = uct_tcp_md_region_access(flags);
    region->allocated = 1;

    status = uct_tcp_md_region_insert(md, region);
    if (status != UCS_OK) {
        goto err_munmap;
    }

    ucs_debug("tcp md %p: allocated %zu bytes at %p for '%s'", md, length,
              address, name);
    *length_p  = length;
    *address_p = address;
    *memh_p    = region;
    return UCS_OK;

err_munmap:
    munmap(address, length);
err_free_region:
    free(region);
    return status;
}

static ucs_status_t uct_tcp_md_mem_free(uct_md_h uct_md, uct_mem_h memh)
{
    uct_tcp_md_t *md         = uct_tcp_md(uct_md);
    uct_tcp_region_t *region = memh;
    ucs_status_t status;

    if ((region == NULL) || !region->allocated) {
        ucs_error("tcp md %p: memory handle %p is not memory the md "
                  "allocated; release a registration with "
                  "uct_md_mem_dereg()",
                  md, memh);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_tcp_md_region_remove(md, region);
    if (status != UCS_OK) {
        return status;
    }

    if (munmap((void *)region->address, region->length) != 0) {
        ucs_warn("tcp md %p: munmap(%p, %zu) failed: %m; the memory stays "
                 "mapped",
                 md, (void *)region->address, region->length);
    }
    free(region);
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Queries and remote keys
 */

static ucs_status_t uct_tcp_md_query(uct_md_h uct_md, uct_md_attr_t *md_attr)
{
    uct_md_base_attr_init(uct_md, md_attr);
    /* no NEED_MEMH: zero-copy sends read local memory through the socket,
     * which needs no registration */
    md_attr->cap.flags =
        UCT_MD_FLAG_REG | UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_NEED_RKEY;
    md_attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.alloc_mem_types  = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.detect_mem_types = 0;
    md_attr->cap.max_alloc        = SIZE_MAX;
    md_attr->cap.max_reg          = SIZE_MAX;
    md_attr->rkey_packed_size     = UCT_TCP_MD_RKEY_SIZE;
    md_attr->reg_cost = ucs_linear_func_make(UCT_TCP_MD_REG_COST, 0);
    return UCS_OK;
}

static ucs_status_t uct_tcp_md_mkey_pack(uct_md_h uct_md, uct_mem_h memh,
                                         void *rkey_buffer)
{
    const uct_tcp_region_t *region = memh;
    uint8_t *p                     = rkey_buffer;
    unsigned i;

    if (region == NULL) {
        ucs_error("tcp md %p: cannot pack the remote key of a NULL memory "
                  "handle; register the memory first",
                  uct_tcp_md(uct_md));
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < UCT_TCP_MD_RKEY_SIZE; ++i) {
        p[i] = (uint8_t)(region->key >> (8 * i));
    }
    return UCS_OK;
}

static ucs_status_t uct_tcp_rkey_unpack(uct_component_t *component,
                                        const void *rkey_buffer,
                                        uct_rkey_t *rkey_p, void **handle_p)
{
    const uint8_t *p = rkey_buffer;
    uint64_t key     = 0;
    unsigned i;

    for (i = 0; i < UCT_TCP_MD_RKEY_SIZE; ++i) {
        key |= (uint64_t)p[i] << (8 * i);
    }

    if ((key == 0) || (key == UINT64_MAX)) {
        ucs_error("tcp: the remote key buffer holds the invalid key 0x%" PRIx64
                  "; it was not packed by uct_md_mkey_pack() of a tcp md, or "
                  "was damaged on the way",
                  key);
        return UCS_ERR_INVALID_PARAM;
    }

    *rkey_p   = (uct_rkey_t)key;
    *handle_p = NULL;
    return UCS_OK;
}

static ucs_status_t uct_tcp_rkey_release(uct_component_t *component,
                                         uct_rkey_t rkey, void *handle)
{
    return UCS_OK; /* the key is the whole rkey: nothing was allocated */
}

/*
 * The md's "regions" file in the object tree: live registrations and the
 * bytes they cover ("count N\nbytes M\n"), allocations included.
 */
static void uct_tcp_md_vfs_show_regions(void *obj, ucs_string_buffer_t *strb,
                                        void *arg_ptr, uint64_t arg_u64)
{
    uct_tcp_md_t *md = uct_tcp_md((uct_md_h)obj);

    ucs_string_buffer_appendf(
        strb, "count %" PRIu64 "\nbytes %" PRIu64 "\n",
        __atomic_load_n(&md->num_regions, __ATOMIC_RELAXED),
        __atomic_load_n(&md->reg_bytes, __ATOMIC_RELAXED));
}

static void uct_tcp_md_vfs_init(uct_md_h uct_md)
{
    uct_vfs_add_file(uct_md, uct_tcp_md_vfs_show_regions, NULL, 0, "regions");
}

/* ------------------------------------------------------------------------
 * Open and close
 */

static void uct_tcp_md_close(uct_md_h uct_md)
{
    uct_tcp_md_t *md     = uct_tcp_md(uct_md);
    size_t num_left      = 0;
    size_t num_allocated = 0;
    size_t bytes         = 0;
    uct_tcp_region_t *region;
    ucs_hash_iter_t iter;
    uint64_t key;
    void *value;

    ucs_hash_for_each(key, value, iter, &md->regions) {
        region = value;
        bytes += region->length;
        num_allocated += region->allocated;
        ++num_left;
        free(region);
    }

    if (num_left > 0) {
        /* memory the md allocated stays mapped: the user may still use it */
        ucs_warn("tcp md %p closed with %zu regions (%zu bytes) still "
                 "registered, %zu of them allocated by the md and left "
                 "mapped; release them with uct_md_mem_dereg() or "
                 "uct_mem_free() before uct_md_close()",
                 md, num_left, bytes, num_allocated);
    }

    ucs_hash_cleanup(&md->regions);
    pthread_rwlock_destroy(&md->lock);
    free(md);
}

static const uct_md_ops_t uct_tcp_md_ops = {.close     = uct_tcp_md_close,
                                            .query     = uct_tcp_md_query,
                                            .mem_alloc = uct_tcp_md_mem_alloc,
                                            .mem_free  = uct_tcp_md_mem_free,
                                            .mem_reg   = uct_tcp_md_mem_reg,
                                            .mem_dereg = uct_tcp_md_mem_dereg,
                                            .mem_query = uct_host_md_mem_query,
                                            .mkey_pack = uct_tcp_md_mkey_pack,
                                            .detect_memory_type =
                                                uct_host_md_detect_memory_type,
                                            .vfs_init = uct_tcp_md_vfs_init};

static ucs_status_t uct_tcp_md_lock_init(uct_tcp_md_t *md, const char *md_name)
{
    pthread_rwlockattr_t attr;
    int ret;

    ret = pthread_rwlockattr_init(&attr);
    if (ret == 0) {
#ifdef __GLIBC__
        /* a waiting writer stops new readers (see tcp_md.h) */
        pthread_rwlockattr_setkind_np(
            &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
        ret = pthread_rwlock_init(&md->lock, &attr);
        pthread_rwlockattr_destroy(&attr);
    }

    if (ret != 0) {
        ucs_error("memory domain '%s': pthread_rwlock_init() failed: %s",
                  md_name, strerror(ret));
        return UCS_ERR_NO_RESOURCE;
    }
    return UCS_OK;
}

static ucs_status_t uct_tcp_md_open(uct_component_t *component,
                                    const char *md_name,
                                    const uct_md_config_t *config,
                                    uct_md_h *md_p)
{
    ucs_status_t status;
    uct_tcp_md_t *md;

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("failed to allocate memory domain '%s'", md_name);
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_tcp_md_lock_init(md, md_name);
    if (status != UCS_OK) {
        goto err_free_md;
    }

    status = ucs_hash_init(&md->regions, 0);
    if (status != UCS_OK) {
        goto err_destroy_lock; /* logged by the table */
    }

    uct_md_base_init(&md->super, &uct_tcp_md_ops, component);
    *md_p = &md->super;
    return UCS_OK;

err_destroy_lock:
    pthread_rwlock_destroy(&md->lock);
err_free_md:
    free(md);
    return status;
}

/* ------------------------------------------------------------------------
 * Component, transport and module
 */

uct_tl_t uct_tcp_tl = {.name           = UCT_TCP_NAME,
                       .query_devices  = uct_tcp_device_query_all,
                       .iface_open     = uct_tcp_iface_open,
                       .config         = {.name   = "TCP sockets transport",
                                          .prefix = "TCP_",
                                          .table  = uct_tcp_iface_config_table,
                                          .size   = sizeof(uct_tcp_iface_config_t)},
                       .iface_vfs_init = uct_tcp_iface_vfs_init,
                       .ep_vfs_init    = uct_tcp_ep_vfs_init};

static uct_component_t uct_tcp_component = {
    .name               = UCT_TCP_NAME,
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_tcp_md_open,
    .rkey_unpack        = uct_tcp_rkey_unpack,
    .rkey_ptr           = NULL,
    .rkey_release       = uct_tcp_rkey_release,
    .md_config          = {.name   = "TCP memory domain",
                           .prefix = "TCP_",
                           .table  = uct_md_config_table,
                           .size   = sizeof(uct_md_config_t)},
    .cm_open            = uct_tcp_cm_open,
    .cm_config          = {.name   = "TCP connection manager",
                           .prefix = "TCP_CM_",
                           .table  = uct_tcp_cm_config_table,
                           .size   = sizeof(uct_tcp_cm_config_t)},
    .flags              = 0};

static ucs_status_t uct_tcp_init(void)
{
    uct_component_register(&uct_tcp_component);
    uct_tl_register(&uct_tcp_component, &uct_tcp_tl);
    return UCS_OK;
}

UCT_MODULE_DEFINE(uct_tcp_init)
