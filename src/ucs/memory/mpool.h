/**
 * @file
 * Memory pool of fixed-size objects, carved from chunks obtained through
 * pluggable operations (plain malloc, mmap, or memory registered with a
 * memory domain).
 *
 * Layout: every object is preceded by a small header. While the object is
 * free the header links it into the pool's free list; while it is in use the
 * header points back to the pool, so ucs_mpool_put() needs only the object.
 * Each chunk starts with the pool's own chunk header, followed by the objects
 * at a fixed stride chosen so that every object satisfies
 *     (object address + align_offset) % alignment == 0
 * A user that reserves a prefix in the object (for example receive headroom
 * before the payload) sets align_offset to the size of that prefix, and the
 * payload is then aligned.
 *
 * get and put are a couple of loads and stores with no locking: a pool is
 * used by one thread at a time (callers serialize). An empty free list makes
 * ucs_mpool_get() call the out-of-line ucs_mpool_get_grow(), which adds a
 * chunk unless the max_elems limit has been reached.
 *
 * Included by transports for their send descriptors and receive buffers,
 * and by anyone needing a fast free list of equal objects.
 */
#ifndef UCS_MEMORY_MPOOL_H_
#define UCS_MEMORY_MPOOL_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>

BEGIN_C_DECLS

/** A memory pool; see struct ucs_mpool. */
typedef struct ucs_mpool ucs_mpool_t;
/** The pool's slow-path state, private to mpool.c. */
typedef struct ucs_mpool_data ucs_mpool_data_t;

/** Header in front of every object; unaligned when the object is. */
typedef union ucs_mpool_elem {
    union ucs_mpool_elem *next; /**< Free: next free object's header. */
    ucs_mpool_t *mpool;         /**< In use: the owning pool. */
} UCS_S_PACKED ucs_mpool_elem_t;

/**
 * How a pool gets and returns memory, and optional per-object hooks. The
 * table is referenced, not copied: it must outlive the pool. The hooks run
 * in the thread that calls ucs_mpool_get()/ucs_mpool_grow()/
 * ucs_mpool_release_idle()/ucs_mpool_cleanup().
 */
typedef struct ucs_mpool_ops {
    /**
     * Allocate a chunk of at least @a *size_p bytes. Store the chunk in
     * @a *chunk_p and its usable size (>= the request) in @a *size_p.
     * The pool may place more objects in the extra space. A status other
     * than UCS_OK fails the growth with that status.
     */
    ucs_status_t (*chunk_alloc)(ucs_mpool_t *mp, size_t *size_p,
                                void **chunk_p);

    /** Release a chunk returned by chunk_alloc. */
    void (*chunk_release)(ucs_mpool_t *mp, void *chunk);

    /** Optional: called once per object when its chunk is added;
     *  @a chunk is the memory chunk_alloc returned. */
    void (*obj_init)(ucs_mpool_t *mp, void *obj, void *chunk);

    /** Optional: called once per free object before its chunk is
     *  released (objects still in use at cleanup are not seen). */
    void (*obj_cleanup)(ucs_mpool_t *mp, void *obj);
} ucs_mpool_ops_t;

/**
 * Parameters of ucs_mpool_init(). Start from ucs_mpool_params_reset(); the
 * structure is read during the call only.
 */
typedef struct ucs_mpool_params {
    size_t priv_size;           /**< Bytes of ucs_mpool_priv(),
                                     zeroed at init. */
    size_t elem_size;           /**< Object size, > 0. */
    size_t align_offset;        /**< Offset in the object that
                                     is aligned; see the file
                                     description. Taken modulo
                                     the alignment. */
    size_t alignment;           /**< A power of two. */
    unsigned elems_per_chunk;   /**< Objects per chunk, > 0. */
    unsigned max_elems;         /**< 0 or UINT_MAX: no limit. */
    const ucs_mpool_ops_t *ops; /**< NULL: ucs_mpool_ops_malloc.
                                     Must outlive the pool. */
    const char *name;           /**< For messages; copied. NULL:
                                     "mpool". */
} ucs_mpool_params_t;

/**
 * A pool. The caller provides the storage (usually embedded in its own
 * object); ucs_mpool_init() fills it and ucs_mpool_cleanup() empties it.
 */
struct ucs_mpool {
    ucs_mpool_elem_t *freelist; /**< Fast path: first free object's
                                     header, NULL when empty. */
    ucs_mpool_data_t *data;     /**< Everything else (chunks, sizes,
                                     ops, name), allocated at init. */
};

/** Operations backed by malloc/free. */
extern const ucs_mpool_ops_t ucs_mpool_ops_malloc;

/** Operations backed by anonymous private mmap/munmap. */
extern const ucs_mpool_ops_t ucs_mpool_ops_mmap;

/**
 * Fill @a params with defaults: no private area, alignment 1, offset 0,
 * 64 objects per chunk, no limit, malloc operations, name "mpool".
 * The caller must still set elem_size.
 *
 * @param [out] params  Parameters to fill.
 */
void ucs_mpool_params_reset(ucs_mpool_params_t *params);

/**
 * Initialize a pool. No chunk is allocated until the first get (or
 * ucs_mpool_grow()).
 *
 * @param [out] mp      Pool storage to fill; untouched on failure.
 * @param [in]  params  Parameters, read during the call only.
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM (zero elem_size or elems_per_chunk,
 *         alignment not a power of two, a chunk too large to compute, or
 *         ops without chunk_alloc/chunk_release; an error is logged), or
 *         UCS_ERR_NO_MEMORY if the pool descriptor cannot be allocated.
 */
ucs_status_t ucs_mpool_init(ucs_mpool_t *mp, const ucs_mpool_params_t *params);

/**
 * Release every chunk and the pool's descriptor (not the storage of @a mp,
 * which belongs to the caller). obj_cleanup runs for the free objects.
 * With @a leak_check, warn with the number of objects that were not
 * returned (they become invalid). An object put twice is reported as an
 * error.
 *
 * @param [in,out] mp          Pool to clean up; must not be used after,
 *                             except to be initialized again.
 * @param [in]     leak_check  Nonzero to warn about objects in use.
 */
void ucs_mpool_cleanup(ucs_mpool_t *mp, int leak_check);

/**
 * The pool's private area of params.priv_size bytes (16-byte aligned),
 * for the chunk_alloc/obj_init hooks to keep their context in.
 *
 * @param [in] mp  An initialized pool.
 *
 * @return The area; valid until ucs_mpool_cleanup().
 */
void *ucs_mpool_priv(ucs_mpool_t *mp);

/**
 * The pool's name.
 *
 * @param [in] mp  An initialized pool.
 *
 * @return The copy of params.name held by the pool, valid until cleanup.
 */
const char *ucs_mpool_name(ucs_mpool_t *mp);

/**
 * Add chunks until at least @a num_elems more free objects exist or the
 * limit is reached. Chunks added before a failure stay in the pool.
 *
 * @param [in,out] mp         Pool to grow.
 * @param [in]     num_elems  Number of objects to add.
 *
 * @return UCS_OK, UCS_ERR_EXCEEDS_LIMIT if the limit stopped the growth
 *         early, or the error of chunk_alloc (UCS_ERR_NO_MEMORY with the
 *         built-in operations, also when chunk_alloc returned too little).
 */
ucs_status_t ucs_mpool_grow(ucs_mpool_t *mp, unsigned num_elems);

/**
 * Slow path of ucs_mpool_get(): add a chunk and return an object from it.
 *
 * @param [in,out] mp  Pool whose free list is empty.
 *
 * @return An object, or NULL if the limit is reached or the allocation
 *         fails.
 */
void *ucs_mpool_get_grow(ucs_mpool_t *mp);

/**
 * Free the chunks none of whose objects is in use, calling obj_cleanup for
 * their objects. Allocates a temporary array; if that fails it warns and
 * releases nothing.
 *
 * @param [in,out] mp  Pool to trim.
 *
 * @return The number of chunks released.
 */
unsigned ucs_mpool_release_idle(ucs_mpool_t *mp);

/**
 * Tell whether the free list is empty.
 *
 * @param [in] mp  An initialized pool.
 *
 * @return Nonzero if no free object is ready (the next get takes the slow
 *         path).
 */
static inline int ucs_mpool_is_empty(const ucs_mpool_t *mp)
{
    return mp->freelist == NULL;
}

/**
 * Take an object from the pool, growing it if needed. Not thread-safe:
 * calls on one pool must be serialized by the caller.
 *
 * @param [in,out] mp  Pool to take from.
 *
 * @return The object (uninitialized beyond what obj_init did, its previous
 *         contents otherwise), or NULL if the limit is reached or allocation
 *         failed.
 */
static UCS_F_ALWAYS_INLINE void *ucs_mpool_get(ucs_mpool_t *mp)
{
    ucs_mpool_elem_t *elem = mp->freelist;

    if (ucs_unlikely(elem == NULL)) {
        return ucs_mpool_get_grow(mp);
    }

    mp->freelist = elem->next;
    elem->mpool  = mp;
    return elem + 1;
}

/**
 * Return an object to the pool it came from. Not thread-safe: must be
 * serialized with every other get/put on that pool.
 *
 * @param [in] obj  An object from ucs_mpool_get(), not yet put.
 */
static UCS_F_ALWAYS_INLINE void ucs_mpool_put(void *obj)
{
    ucs_mpool_elem_t *elem = (ucs_mpool_elem_t *)obj - 1;
    ucs_mpool_t *mp        = elem->mpool;

    elem->next   = mp->freelist;
    mp->freelist = elem;
}

/**
 * The pool an in-use object belongs to.
 *
 * @param [in] obj  An object from ucs_mpool_get(), not yet put.
 *
 * @return Its pool.
 */
static inline ucs_mpool_t *ucs_mpool_obj_owner(void *obj)
{
    return ((ucs_mpool_elem_t *)obj - 1)->mpool;
}

/**
 * chunk_alloc with malloc(); the usable size is the requested size.
 *
 * @param [in]     mp       The pool (for messages).
 * @param [in,out] size_p   Requested size; left unchanged.
 * @param [out]    chunk_p  The chunk.
 *
 * @return UCS_OK, or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_mpool_chunk_malloc(ucs_mpool_t *mp, size_t *size_p,
                                    void **chunk_p);

/**
 * chunk_release with free().
 *
 * @param [in] mp     The pool.
 * @param [in] chunk  A chunk from ucs_mpool_chunk_malloc().
 */
void ucs_mpool_chunk_free(ucs_mpool_t *mp, void *chunk);

/**
 * chunk_alloc with an anonymous private mmap(), rounded up to whole pages.
 *
 * @param [in]     mp       The pool (for messages).
 * @param [in,out] size_p   Requested size; set to the usable size (the
 *                          mapping less a small header of its own).
 * @param [out]    chunk_p  The chunk.
 *
 * @return UCS_OK, or UCS_ERR_NO_MEMORY if mmap() fails.
 */
ucs_status_t ucs_mpool_chunk_mmap(ucs_mpool_t *mp, size_t *size_p,
                                  void **chunk_p);

/**
 * chunk_release for ucs_mpool_chunk_mmap(); a failing munmap() is only
 * warned about.
 *
 * @param [in] mp     The pool.
 * @param [in] chunk  A chunk from ucs_mpool_chunk_mmap().
 */
void ucs_mpool_chunk_munmap(ucs_mpool_t *mp, void *chunk);

END_C_DECLS

#endif
