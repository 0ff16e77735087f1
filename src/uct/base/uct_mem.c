/*
 * Memory allocation with a list of methods tried in order, and
 * interface memory (allocated and registered with the interface's md).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif

static size_t uct_mem_page_size(void)
{
    return ucs_get_page_size();
}

static ucs_status_t uct_mem_alloc_md(size_t length, unsigned flags,
                                     const uct_mem_alloc_params_t *params,
                                     const char *name,
                                     uct_allocated_memory_t *mem)
{
    uct_md_attr_t md_attr;
    ucs_status_t status;
    size_t alloc_length;
    void *address;
    uct_mem_h memh;
    unsigned i;
    uct_md_h md;

    if (!(params->field_mask & UCT_MEM_ALLOC_PARAM_FIELD_MDS)) {
        return UCS_ERR_UNSUPPORTED;
    }

    for (i = 0; i < params->mds.count; ++i) {
        md = params->mds.mds[i];
        if ((md == NULL) || (md->ops->mem_alloc == NULL)) {
            continue;
        }
        status = uct_md_query(md, &md_attr);
        if ((status != UCS_OK) || !(md_attr.cap.flags & UCT_MD_FLAG_ALLOC)) {
            continue;
        }

        alloc_length = length;
        address      = (params->field_mask & UCT_MEM_ALLOC_PARAM_FIELD_ADDRESS)
                           ? params->address
                           : NULL;
        status       = md->ops->mem_alloc(md, &alloc_length, &address,
                                          UCS_MEMORY_TYPE_HOST, flags, name, &memh);
        if (status != UCS_OK) {
            ucs_debug("md %s failed to allocate %zu bytes for '%s': %s",
                      md->component->name, length, name,
                      ucs_status_string(status));
            continue;
        }

        mem->address = address;
        mem->length  = alloc_length;
        mem->md      = md;
        mem->memh    = memh;
        return UCS_OK;
    }

    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_t uct_mem_alloc_mmap(size_t length, int extra_flags,
                                       size_t align, void *hint, unsigned flags,
                                       uct_allocated_memory_t *mem)
{
    size_t alloc_length = ucs_align_up(length, align);
    int mmap_flags      = MAP_PRIVATE | MAP_ANONYMOUS | extra_flags;
    void *address;

    if (flags & UCT_MD_MEM_FLAG_FIXED) {
        mmap_flags |= MAP_FIXED;
    }

    address =
        mmap(hint, alloc_length, PROT_READ | PROT_WRITE, mmap_flags, -1, 0);
    if (address == MAP_FAILED) {
        ucs_debug("mmap(length=%zu flags=0x%x) failed: %m", alloc_length,
                  mmap_flags);
        return UCS_ERR_NO_MEMORY;
    }

    mem->address = address;
    mem->length  = alloc_length;
    return UCS_OK;
}

static ucs_status_t uct_mem_alloc_thp(size_t length, unsigned flags,
                                      uct_allocated_memory_t *mem)
{
    const size_t thp_size = 2ul * 1024 * 1024;
    size_t alloc_length;
    void *address;
    int ret;

    /* Worth it only for large buffers; smaller ones fall through */
    if ((length < thp_size) || (flags & UCT_MD_MEM_FLAG_FIXED)) {
        return UCS_ERR_UNSUPPORTED;
    }

    alloc_length = ucs_align_up(length, thp_size);
    ret          = posix_memalign(&address, thp_size, alloc_length);
    if (ret != 0) {
        ucs_debug("posix_memalign(%zu) failed: %s", alloc_length,
                  strerror(ret));
        return UCS_ERR_NO_MEMORY;
    }

    if (madvise(address, alloc_length, MADV_HUGEPAGE) != 0) {
        ucs_debug("madvise(MADV_HUGEPAGE) failed: %m");
        free(address);
        return UCS_ERR_UNSUPPORTED;
    }

    mem->address = address;
    mem->length  = alloc_length;
    return UCS_OK;
}

static ucs_status_t uct_mem_alloc_heap(size_t length, unsigned flags,
                                       uct_allocated_memory_t *mem)
{
    size_t align = uct_mem_page_size();
    void *address;
    int ret;

    if (flags & UCT_MD_MEM_FLAG_FIXED) {
        return UCS_ERR_UNSUPPORTED;
    }

    ret = posix_memalign(&address, align, ucs_align_up(length, align));
    if (ret != 0) {
        ucs_debug("posix_memalign(%zu) failed: %s", length, strerror(ret));
        return UCS_ERR_NO_MEMORY;
    }

    mem->address = address;
    mem->length  = length;
    return UCS_OK;
}

ucs_status_t uct_mem_alloc(size_t length, const uct_alloc_method_t *methods,
                           unsigned num_methods,
                           const uct_mem_alloc_params_t *params,
                           uct_allocated_memory_t *mem)
{
    const char *name = "user";
    unsigned flags   = 0;
    void *hint       = NULL;
    uct_allocated_memory_t result;
    ucs_status_t status;
    size_t huge_size;
    unsigned i;

    if ((methods == NULL) || (num_methods == 0) || (params == NULL) ||
        (mem == NULL)) {
        ucs_error("uct_mem_alloc: %s", (methods == NULL || num_methods == 0)
                                           ? "no allocation methods given"
                                       : (params == NULL) ? "NULL params"
                                                          : "NULL mem");
        return UCS_ERR_INVALID_PARAM;
    }
    if (length == 0) {
        ucs_error("uct_mem_alloc: zero length");
        return UCS_ERR_INVALID_PARAM;
    }

    if (params->field_mask & UCT_MEM_ALLOC_PARAM_FIELD_FLAGS) {
        flags = params->flags;
    }
    if (params->field_mask & UCT_MEM_ALLOC_PARAM_FIELD_NAME) {
        name = (params->name != NULL) ? params->name : name;
    }
    if (params->field_mask & UCT_MEM_ALLOC_PARAM_FIELD_ADDRESS) {
        hint = params->address;
    }
    if ((params->field_mask & UCT_MEM_ALLOC_PARAM_FIELD_MEM_TYPE) &&
        (params->mem_type != UCS_MEMORY_TYPE_HOST)) {
        ucs_error("uct_mem_alloc('%s'): memory type %s is not supported; "
                  "only host memory can be allocated here",
                  name, ucs_memory_type_names[params->mem_type]);
        return UCS_ERR_UNSUPPORTED;
    }
    if ((flags & UCT_MD_MEM_FLAG_FIXED) &&
        ((hint == NULL) || ((uintptr_t)hint % uct_mem_page_size()))) {
        ucs_error("uct_mem_alloc('%s'): UCT_MD_MEM_FLAG_FIXED needs a "
                  "page-aligned address",
                  name);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < num_methods; ++i) {
        memset(&result, 0, sizeof(result));
        result.memh     = UCT_MEM_HANDLE_NULL;
        result.mem_type = UCS_MEMORY_TYPE_HOST;

        switch (methods[i]) {
        case UCT_ALLOC_METHOD_MD:
            status = uct_mem_alloc_md(length, flags, params, name, &result);
            break;
        case UCT_ALLOC_METHOD_THP:
            status = uct_mem_alloc_thp(length, flags, &result);
            break;
        case UCT_ALLOC_METHOD_HEAP:
            status = uct_mem_alloc_heap(length, flags, &result);
            break;
        case UCT_ALLOC_METHOD_MMAP:
            status = uct_mem_alloc_mmap(length, 0, uct_mem_page_size(), hint,
                                        flags, &result);
            break;
        case UCT_ALLOC_METHOD_HUGE:
            huge_size = ucs_get_huge_page_size();
            status    = (huge_size == 0)
                            ? UCS_ERR_UNSUPPORTED
                            : uct_mem_alloc_mmap(length, MAP_HUGETLB, huge_size,
                                                 hint, flags, &result);
            break;
        default:
            ucs_error("uct_mem_alloc('%s'): invalid allocation method %d", name,
                      (int)methods[i]);
            return UCS_ERR_INVALID_PARAM;
        }

        if (status == UCS_OK) {
            result.method = methods[i];
            ucs_debug("allocated %zu bytes at %p for '%s' with %s",
                      result.length, result.address, name,
                      uct_alloc_method_names[methods[i]]);
            *mem = result;
            return UCS_OK;
        }
    }

    if (!(flags & UCT_MD_MEM_FLAG_HIDE_ERRORS)) {
        ucs_error("failed to allocate %zu bytes for '%s' with any of the "
                  "%u methods given; check memory limits (ulimit -l/-v) or "
                  "UCX_*_ALLOC",
                  length, name, num_methods);
    }
    return UCS_ERR_NO_MEMORY;
}

ucs_status_t uct_mem_free(const uct_allocated_memory_t *mem)
{
    if (mem == NULL) {
        ucs_error("uct_mem_free: NULL mem");
        return UCS_ERR_INVALID_PARAM;
    }

    switch (mem->method) {
    case UCT_ALLOC_METHOD_MD:
        if ((mem->md == NULL) || (mem->md->ops->mem_free == NULL)) {
            ucs_error("uct_mem_free: memory from method 'md' has no md");
            return UCS_ERR_INVALID_PARAM;
        }
        return mem->md->ops->mem_free(mem->md, mem->memh);
    case UCT_ALLOC_METHOD_THP:
    case UCT_ALLOC_METHOD_HEAP:
        free(mem->address);
        return UCS_OK;
    case UCT_ALLOC_METHOD_MMAP:
    case UCT_ALLOC_METHOD_HUGE:
        if (munmap(mem->address, mem->length) != 0) {
            ucs_error("munmap(%p, %zu) failed: %m", mem->address, mem->length);
            return UCS_ERR_INVALID_PARAM;
        }
        return UCS_OK;
    default:
        ucs_error("uct_mem_free: invalid allocation method %d",
                  (int)mem->method);
        return UCS_ERR_INVALID_PARAM;
    }
}

ucs_status_t uct_iface_mem_alloc(uct_iface_h tl_iface, size_t length,
                                 unsigned flags, const char *name,
                                 uct_allocated_memory_t *mem)
{
    uct_base_iface_t *iface = uct_base_iface(tl_iface);
    uct_mem_alloc_params_t params;
    uct_md_attr_t md_attr;
    ucs_status_t status;

    if ((tl_iface == NULL) || (mem == NULL)) {
        ucs_error("uct_iface_mem_alloc: NULL %s",
                  (tl_iface == NULL) ? "iface" : "mem");
        return UCS_ERR_INVALID_PARAM;
    }

    params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_FLAGS |
                        UCT_MEM_ALLOC_PARAM_FIELD_MDS |
                        UCT_MEM_ALLOC_PARAM_FIELD_NAME;
    params.flags     = flags;
    params.mds.mds   = &iface->md;
    params.mds.count = 1;
    params.name      = name;

    status = uct_mem_alloc(length, iface->config.alloc_methods,
                           iface->config.num_alloc_methods, &params, mem);
    if (status != UCS_OK) {
        return status;
    }

    if (mem->method == UCT_ALLOC_METHOD_MD) {
        return UCS_OK;
    }

    /* Register memory from the other methods with the iface's md */
    status = uct_md_query(iface->md, &md_attr);
    if (status != UCS_OK) {
        goto err_free;
    }

    if (md_attr.cap.flags & UCT_MD_FLAG_REG) {
        status = uct_md_mem_reg(iface->md, mem->address, mem->length,
                                flags | UCT_MD_MEM_ACCESS_ALL, &mem->memh);
        if (status != UCS_OK) {
            goto err_free;
        }
        mem->md = iface->md;
    } else {
        mem->memh = UCT_MEM_HANDLE_NULL;
        mem->md   = NULL;
    }
    return UCS_OK;

err_free:
    uct_mem_free(mem);
    return status;
}

void uct_iface_mem_free(const uct_allocated_memory_t *mem)
{
    if (mem == NULL) {
        return;
    }
    if ((mem->method != UCT_ALLOC_METHOD_MD) &&
        (mem->memh != UCT_MEM_HANDLE_NULL) && (mem->md != NULL)) {
        uct_md_mem_dereg(mem->md, mem->memh);
    }
    uct_mem_free(mem);
}
