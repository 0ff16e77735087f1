#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/memory/mpool.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Start of every chunk (aligned up from what chunk_alloc returned). */
typedef struct ucs_mpool_chunk {
    struct ucs_mpool_chunk *next;
    void *mem;               /* as returned by chunk_alloc */
    ucs_mpool_elem_t *elems; /* header of the first object */
    unsigned num_elems;
} ucs_mpool_chunk_t;

#define UCS_MPOOL_CHUNK_ALIGN _Alignof(ucs_mpool_chunk_t)

struct ucs_mpool_data {
    size_t elem_size;
    size_t alignment;
    size_t align_offset; /* reduced modulo alignment */
    size_t stride;       /* distance between objects */
    unsigned elems_per_chunk;
    unsigned max_elems; /* UINT_MAX: no limit */
    unsigned num_elems; /* objects in all chunks */
    unsigned num_chunks;
    ucs_mpool_chunk_t *chunks;
    const ucs_mpool_ops_t *ops;
    void *priv; /* inside this allocation */
    char *name; /* inside this allocation */
};

/* Bookkeeping used by ucs_mpool_release_idle(); the address range is kept
 * here so that searching never reads a chunk that was already released. */
typedef struct ucs_mpool_chunk_usage {
    ucs_mpool_chunk_t *chunk;
    uintptr_t start; /* first object header */
    uintptr_t end;   /* past the last object */
    unsigned num_elems;
    unsigned num_free;
} ucs_mpool_chunk_usage_t;

#define UCS_MPOOL_PRIV_ALIGN    16
#define UCS_MPOOL_MMAP_HDR_SIZE 16

const ucs_mpool_ops_t ucs_mpool_ops_malloc = {
    .chunk_alloc   = ucs_mpool_chunk_malloc,
    .chunk_release = ucs_mpool_chunk_free,
    .obj_init      = NULL,
    .obj_cleanup   = NULL};

const ucs_mpool_ops_t ucs_mpool_ops_mmap = {.chunk_alloc = ucs_mpool_chunk_mmap,
                                            .chunk_release =
                                                ucs_mpool_chunk_munmap,
                                            .obj_init    = NULL,
                                            .obj_cleanup = NULL};

void ucs_mpool_params_reset(ucs_mpool_params_t *params)
{
    memset(params, 0, sizeof(*params));
    params->alignment       = 1;
    params->elems_per_chunk = 64;
    params->max_elems       = UINT_MAX;
    params->ops             = &ucs_mpool_ops_malloc;
    params->name            = "mpool";
}

static ucs_status_t ucs_mpool_check_params(const ucs_mpool_params_t *params,
                                           const char *name)
{
    const ucs_mpool_ops_t *ops = params->ops;
    size_t stride_max;

    if (params->elem_size == 0) {
        ucs_error("mpool '%s': elem_size must be > 0", name);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!ucs_is_pow2(params->alignment)) {
        ucs_error("mpool '%s': alignment %zu is not a power of two", name,
                  params->alignment);
        return UCS_ERR_INVALID_PARAM;
    }

    if (params->elems_per_chunk == 0) {
        ucs_error("mpool '%s': elems_per_chunk must be > 0", name);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((ops != NULL) &&
        ((ops->chunk_alloc == NULL) || (ops->chunk_release == NULL))) {
        ucs_error("mpool '%s': ops must provide chunk_alloc and "
                  "chunk_release",
                  name);
        return UCS_ERR_INVALID_PARAM;
    }

    /* Keep every chunk size computation far from overflowing. */
    stride_max = (SIZE_MAX / 4) / params->elems_per_chunk;
    if ((params->elem_size > stride_max) || (params->alignment > stride_max) ||
        ((params->elem_size + params->alignment) > stride_max)) {
        ucs_error("mpool '%s': %u objects of %zu bytes aligned to %zu do not "
                  "fit in a chunk",
                  name, params->elems_per_chunk, params->elem_size,
                  params->alignment);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

ucs_status_t ucs_mpool_init(ucs_mpool_t *mp, const ucs_mpool_params_t *params)
{
    const char *name = (params->name != NULL) ? params->name : "mpool";
    size_t priv_offset, name_offset;
    ucs_mpool_data_t *data;
    ucs_status_t status;

    status = ucs_mpool_check_params(params, name);
    if (status != UCS_OK) {
        return status;
    }

    priv_offset =
        ucs_align_up_pow2(sizeof(*data), (size_t)UCS_MPOOL_PRIV_ALIGN);
    name_offset = priv_offset + params->priv_size;
    data        = malloc(name_offset + strlen(name) + 1);
    if (data == NULL) {
        ucs_error("mpool '%s': failed to allocate the pool descriptor", name);
        return UCS_ERR_NO_MEMORY;
    }

    data->elem_size    = params->elem_size;
    data->alignment    = params->alignment;
    data->align_offset = params->align_offset & (params->alignment - 1);
    data->stride       = ucs_align_up_pow2(
              params->elem_size + sizeof(ucs_mpool_elem_t), params->alignment);
    data->elems_per_chunk = params->elems_per_chunk;
    data->max_elems  = (params->max_elems == 0) ? UINT_MAX : params->max_elems;
    data->num_elems  = 0;
    data->num_chunks = 0;
    data->chunks     = NULL;
    data->ops  = (params->ops != NULL) ? params->ops : &ucs_mpool_ops_malloc;
    data->priv = UCS_PTR_BYTE_OFFSET(data, priv_offset);
    data->name = UCS_PTR_BYTE_OFFSET(data, name_offset);
    memset(data->priv, 0, params->priv_size);
    strcpy(data->name, name);

    mp->freelist = NULL;
    mp->data     = data;
    ucs_debug("mpool '%s': created, object size %zu stride %zu alignment %zu "
              "offset %zu",
              name, data->elem_size, data->stride, data->alignment,
              data->align_offset);
    return UCS_OK;
}

void *ucs_mpool_priv(ucs_mpool_t *mp)
{
    return mp->data->priv;
}

const char *ucs_mpool_name(ucs_mpool_t *mp)
{
    return mp->data->name;
}

/* Where the chunk header goes in memory returned by chunk_alloc. */
static ucs_mpool_chunk_t *ucs_mpool_chunk_hdr(void *mem)
{
    return (ucs_mpool_chunk_t *)ucs_align_up_pow2(
        (uintptr_t)mem, (uintptr_t)UCS_MPOOL_CHUNK_ALIGN);
}

/* First object of a chunk: the lowest address after the chunk header and
 * one object header that meets the alignment rule. */
static char *ucs_mpool_chunk_first_obj(const ucs_mpool_data_t *data,
                                       ucs_mpool_chunk_t *chunk)
{
    uintptr_t start = (uintptr_t)(chunk + 1) + sizeof(ucs_mpool_elem_t);

    return (char *)(ucs_align_up_pow2(start + data->align_offset,
                                      (uintptr_t)data->alignment) -
                    data->align_offset);
}

/* Chunk size that holds @a num_elems objects wherever the chunk starts. */
static size_t ucs_mpool_chunk_size(const ucs_mpool_data_t *data,
                                   unsigned num_elems)
{
    return (UCS_MPOOL_CHUNK_ALIGN - 1) + sizeof(ucs_mpool_chunk_t) +
           sizeof(ucs_mpool_elem_t) + (data->alignment - 1) +
           ((size_t)(num_elems - 1) * data->stride) + data->elem_size;
}

/* Allocate one chunk and put its objects at the head of the free list. */
static ucs_status_t ucs_mpool_add_chunk(ucs_mpool_t *mp)
{
    ucs_mpool_data_t *data = mp->data;
    ucs_mpool_elem_t *elem;
    size_t size, requested, num_fit;
    unsigned quota, num_elems, i;
    ucs_mpool_chunk_t *chunk;
    ucs_status_t status;
    char *first, *end;
    void *mem;

    quota = data->max_elems - data->num_elems;
    if (quota == 0) {
        ucs_trace("mpool '%s': limit of %u objects reached", data->name,
                  data->max_elems);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    num_elems = ucs_min(data->elems_per_chunk, quota);
    requested = ucs_mpool_chunk_size(data, num_elems);
    size      = requested;
    status    = data->ops->chunk_alloc(mp, &size, &mem);
    if (status != UCS_OK) {
        ucs_debug("mpool '%s': chunk allocation of %zu bytes failed: %s",
                  data->name, requested, ucs_status_string(status));
        return status;
    }

    if (size < requested) {
        ucs_error("mpool '%s': chunk_alloc returned %zu bytes, fewer than the "
                  "%zu requested",
                  data->name, size, requested);
        data->ops->chunk_release(mp, mem);
        return UCS_ERR_NO_MEMORY;
    }

    /* Use the whole chunk if the allocator gave more than asked. */
    chunk   = ucs_mpool_chunk_hdr(mem);
    first   = ucs_mpool_chunk_first_obj(data, chunk);
    end     = (char *)mem + size;
    num_fit = ((size_t)(end - first) - data->elem_size) / data->stride + 1;
    ucs_assert(num_fit >= num_elems);
    num_elems = (unsigned)ucs_min(num_fit, (size_t)quota);

    /* Objects go to the free list in address order, ahead of the others. */
    chunk->mem       = mem;
    chunk->elems     = (ucs_mpool_elem_t *)first - 1;
    chunk->num_elems = num_elems;
    for (i = 0; i < num_elems; ++i) {
        elem = (ucs_mpool_elem_t *)(first + ((size_t)i * data->stride)) - 1;
        if (data->ops->obj_init != NULL) {
            data->ops->obj_init(mp, elem + 1, mem);
        }
        if (i + 1 < num_elems) {
            elem->next =
                (ucs_mpool_elem_t *)(first + ((size_t)(i + 1) * data->stride)) -
                1;
        } else {
            elem->next = mp->freelist;
        }
    }
    mp->freelist = chunk->elems;

    chunk->next  = data->chunks;
    data->chunks = chunk;
    data->num_elems += num_elems;
    ++data->num_chunks;

    ucs_trace("mpool '%s': added chunk %p of %zu bytes with %u objects",
              data->name, mem, size, num_elems);
    return UCS_OK;
}

void *ucs_mpool_get_grow(ucs_mpool_t *mp)
{
    if (ucs_mpool_add_chunk(mp) != UCS_OK) {
        return NULL;
    }
    return ucs_mpool_get(mp);
}

ucs_status_t ucs_mpool_grow(ucs_mpool_t *mp, unsigned num_elems)
{
    unsigned added = 0;
    unsigned before;
    ucs_status_t status;

    while (added < num_elems) {
        before = mp->data->num_elems;
        status = ucs_mpool_add_chunk(mp);
        if (status != UCS_OK) {
            return status;
        }
        added += mp->data->num_elems - before;
    }
    return UCS_OK;
}

static int ucs_mpool_usage_compare(const void *a, const void *b)
{
    const ucs_mpool_chunk_usage_t *ua = (const ucs_mpool_chunk_usage_t *)a;
    const ucs_mpool_chunk_usage_t *ub = (const ucs_mpool_chunk_usage_t *)b;

    return (ua->start < ub->start) ? -1 : (ua->start > ub->start);
}

/* The entry whose chunk holds @a elem (binary search by address). */
static ucs_mpool_chunk_usage_t *
ucs_mpool_find_usage(const ucs_mpool_data_t *data,
                     ucs_mpool_chunk_usage_t *usage, unsigned num,
                     const void *elem)
{
    uintptr_t addr = (uintptr_t)elem;
    unsigned low   = 0;
    unsigned high  = num;
    unsigned mid;

    while (low < high) {
        mid = low + (high - low) / 2;
        if (addr < usage[mid].start) {
            high = mid;
        } else if (addr >= usage[mid].end) {
            low = mid + 1;
        } else {
            return &usage[mid];
        }
    }

    ucs_fatal("mpool '%s': free object header %p belongs to no chunk; was a "
              "foreign object put to this pool?",
              data->name, elem);
}

static int ucs_mpool_usage_is_idle(const ucs_mpool_chunk_usage_t *usage)
{
    return usage->num_free == usage->num_elems;
}

unsigned ucs_mpool_release_idle(ucs_mpool_t *mp)
{
    ucs_mpool_data_t *data = mp->data;
    unsigned num_chunks    = data->num_chunks;
    ucs_mpool_chunk_usage_t *usage, *u;
    ucs_mpool_elem_t *elem, *next, *last;
    ucs_mpool_chunk_t *chunk, **chunk_p;
    unsigned i, num_idle;

    if (num_chunks == 0) {
        return 0;
    }

    usage = malloc(num_chunks * sizeof(*usage));
    if (usage == NULL) {
        ucs_warn("mpool '%s': cannot release idle chunks: out of memory",
                 data->name);
        return 0;
    }

    i = 0;
    for (chunk = data->chunks; chunk != NULL; chunk = chunk->next) {
        usage[i].chunk = chunk;
        usage[i].start = (uintptr_t)chunk->elems;
        usage[i].end =
            usage[i].start + ((size_t)chunk->num_elems * data->stride);
        usage[i].num_elems = chunk->num_elems;
        usage[i].num_free  = 0;
        ++i;
    }
    qsort(usage, num_chunks, sizeof(*usage), ucs_mpool_usage_compare);

    for (elem = mp->freelist; elem != NULL; elem = elem->next) {
        ++ucs_mpool_find_usage(data, usage, num_chunks, elem)->num_free;
    }

    num_idle = 0;
    for (i = 0; i < num_chunks; ++i) {
        num_idle += ucs_mpool_usage_is_idle(&usage[i]);
    }
    if (num_idle == 0) {
        goto out;
    }

    /* Drop the objects of idle chunks from the free list, keeping the order
     * of the others. */
    last = NULL;
    for (elem = mp->freelist; elem != NULL; elem = next) {
        next = elem->next;
        u    = ucs_mpool_find_usage(data, usage, num_chunks, elem);
        if (!ucs_mpool_usage_is_idle(u)) {
            if (last == NULL) {
                mp->freelist = elem;
            } else {
                last->next = elem;
            }
            last = elem;
        } else if (data->ops->obj_cleanup != NULL) {
            data->ops->obj_cleanup(mp, elem + 1);
        }
    }
    if (last == NULL) {
        mp->freelist = NULL;
    } else {
        last->next = NULL;
    }

    /* Unlink and release the idle chunks. */
    chunk_p = &data->chunks;
    while (*chunk_p != NULL) {
        chunk = *chunk_p;
        u     = ucs_mpool_find_usage(data, usage, num_chunks, chunk->elems);
        if (!ucs_mpool_usage_is_idle(u)) {
            chunk_p = &chunk->next;
            continue;
        }

        *chunk_p = chunk->next;
        data->num_elems -= chunk->num_elems;
        --data->num_chunks;
        ucs_trace("mpool '%s': releasing idle chunk %p", data->name,
                  chunk->mem);
        data->ops->chunk_release(mp, chunk->mem);
    }

out:
    free(usage);
    return num_idle;
}

void ucs_mpool_cleanup(ucs_mpool_t *mp, int leak_check)
{
    ucs_mpool_data_t *data = mp->data;
    ucs_mpool_elem_t *elem, *next;
    ucs_mpool_chunk_t *chunk;
    unsigned num_free = 0;

    for (elem = mp->freelist; elem != NULL; elem = next) {
        next = elem->next;
        if (data->ops->obj_cleanup != NULL) {
            data->ops->obj_cleanup(mp, elem + 1);
        }
        ++num_free;
    }

    if (num_free > data->num_elems) {
        ucs_error("mpool '%s': %u objects on the free list but only %u "
                  "allocated; an object was put twice",
                  data->name, num_free, data->num_elems);
    } else if (leak_check && (num_free < data->num_elems)) {
        ucs_warn("mpool '%s': %u of %u objects were not returned to the pool",
                 data->name, data->num_elems - num_free, data->num_elems);
    }

    while (data->chunks != NULL) {
        chunk        = data->chunks;
        data->chunks = chunk->next;
        data->ops->chunk_release(mp, chunk->mem);
    }

    ucs_debug("mpool '%s': destroyed", data->name);
    free(data);
    mp->freelist = NULL;
    mp->data     = NULL;
}

ucs_status_t ucs_mpool_chunk_malloc(ucs_mpool_t *mp, size_t *size_p,
                                    void **chunk_p)
{
    void *chunk = malloc(*size_p);

    if (chunk == NULL) {
        ucs_error("mpool '%s': failed to allocate a chunk of %zu bytes: out "
                  "of memory",
                  ucs_mpool_name(mp), *size_p);
        return UCS_ERR_NO_MEMORY;
    }

    *chunk_p = chunk;
    return UCS_OK;
}

void ucs_mpool_chunk_free(ucs_mpool_t *mp, void *chunk)
{
    free(chunk);
}

ucs_status_t ucs_mpool_chunk_mmap(ucs_mpool_t *mp, size_t *size_p,
                                  void **chunk_p)
{
    size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
    size_t length;
    void *ptr;

    length = ucs_align_up(*size_p + UCS_MPOOL_MMAP_HDR_SIZE, page_size);
    ptr    = mmap(NULL, length, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ptr == MAP_FAILED) {
        ucs_error("mpool '%s': mmap of %zu bytes failed: %m",
                  ucs_mpool_name(mp), length);
        return UCS_ERR_NO_MEMORY;
    }

    /* The mapping length is kept in front of the chunk for munmap. */
    *(size_t *)ptr = length;
    *chunk_p       = UCS_PTR_BYTE_OFFSET(ptr, UCS_MPOOL_MMAP_HDR_SIZE);
    *size_p        = length - UCS_MPOOL_MMAP_HDR_SIZE;
    return UCS_OK;
}

void ucs_mpool_chunk_munmap(ucs_mpool_t *mp, void *chunk)
{
    void *ptr     = UCS_PTR_BYTE_OFFSET(chunk, -UCS_MPOOL_MMAP_HDR_SIZE);
    size_t length = *(size_t *)ptr;

    if (munmap(ptr, length) != 0) {
        ucs_warn("mpool '%s': munmap(%p, %zu) failed: %m", ucs_mpool_name(mp),
                 ptr, length);
    }
}
