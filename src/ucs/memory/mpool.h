/*
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
 */
#ifndef UCS_MEMORY_MPOOL_H_
#define UCS_MEMORY_MPOOL_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>

BEGIN_C_DECLS

typedef struct ucs_mpool      ucs_mpool_t;
typedef struct ucs_mpool_data ucs_mpool_data_t;

/** Header in front of every object; unaligned when the object is. */
typedef union ucs_mpool_elem {
    union ucs_mpool_elem *next;   /* free: next free object's header */
    ucs_mpool_t          *mpool;  /* in use: the owning pool */
} UCS_S_PACKED ucs_mpool_elem_t;


/**
 * How a pool gets and returns memory, and optional per-object hooks.
 */
typedef struct ucs_mpool_ops {
    /**
     * Allocate a chunk of at least @a *size_p bytes. Store the chunk in
     * @a *chunk_p and its usable size (>= the request) in @a *size_p.
     * The pool may place more objects in the extra space.
     */
    ucs_status_t (*chunk_alloc)(ucs_mpool_t *mp, size_t *size_p,
                                void **chunk_p);

    /** Release a chunk returned by chunk_alloc. */
    void         (*chunk_release)(ucs_mpool_t *mp, void *chunk);

    /** Optional: called once per object when its chunk is added. */
    void         (*obj_init)(ucs_mpool_t *mp, void *obj, void *chunk);

    /** Optional: called once per free object before its chunk is
     *  released. */
    void         (*obj_cleanup)(ucs_mpool_t *mp, void *obj);
} ucs_mpool_ops_t;


typedef struct ucs_mpool_params {
    size_t                priv_size;       /* bytes of ucs_mpool_priv() */
    size_t                elem_size;       /* object size, > 0 */
    size_t                align_offset;    /* see the top of this file */
    size_t                alignment;       /* a power of two */
    unsigned              elems_per_chunk; /* objects per chunk, > 0 */
    unsigned              max_elems;       /* 0 or UINT_MAX: no limit */
    const ucs_mpool_ops_t *ops;            /* NULL: ucs_mpool_ops_malloc */
    const char            *name;           /* for messages; copied */
} ucs_mpool_params_t;


struct ucs_mpool {
    ucs_mpool_elem_t *freelist;   /* fast path */
    ucs_mpool_data_t *data;       /* everything else */
};


/** Operations backed by malloc/free. */
extern const ucs_mpool_ops_t ucs_mpool_ops_malloc;

/** Operations backed by anonymous private mmap/munmap. */
extern const ucs_mpool_ops_t ucs_mpool_ops_mmap;


/**
 * Fill @a params with defaults: no private area, alignment 1, offset 0,
 * 64 objects per chunk, no limit, malloc operations, name "mpool".
 * The caller must still set elem_size.
 */
void ucs_mpool_params_reset(ucs_mpool_params_t *params);

/**
 * Initialize a pool. No chunk is allocated until the first get (or
 * ucs_mpool_grow()).
 * @return UCS_OK, UCS_ERR_INVALID_PARAM (bad size, alignment, chunk size or
 *         missing ops), or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_mpool_init(ucs_mpool_t *mp, const ucs_mpool_params_t *params);

/**
 * Release every chunk and the pool itself. With @a leak_check, warn with the
 * number of objects that were not returned (they become invalid).
 */
void ucs_mpool_cleanup(ucs_mpool_t *mp, int leak_check);

/** The pool's private area of params.priv_size bytes (16-byte aligned). */
void *ucs_mpool_priv(ucs_mpool_t *mp);

/** The pool's name. */
const char *ucs_mpool_name(ucs_mpool_t *mp);

/**
 * Add chunks until at least @a num_elems more free objects exist or the
 * limit is reached.
 * @return UCS_OK, UCS_ERR_EXCEEDS_LIMIT if the limit stopped the growth
 *         early, or the chunk allocation error.
 */
ucs_status_t ucs_mpool_grow(ucs_mpool_t *mp, unsigned num_elems);

/**
 * Slow path of ucs_mpool_get(): add a chunk and return an object from it, or
 * NULL if the limit is reached or the allocation fails.
 */
void *ucs_mpool_get_grow(ucs_mpool_t *mp);

/**
 * Free the chunks none of whose objects is in use, calling obj_cleanup for
 * their objects.
 * @return the number of chunks released.
 */
unsigned ucs_mpool_release_idle(ucs_mpool_t *mp);

/** Nonzero if no free object is ready (the next get takes the slow path). */
static inline int ucs_mpool_is_empty(const ucs_mpool_t *mp)
{
    return mp->freelist == NULL;
}

/**
 * Take an object from the pool, growing it if needed.
 * @return the object, or NULL if the limit is reached or allocation failed.
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

/** Return an object to the pool it came from. */
static UCS_F_ALWAYS_INLINE void ucs_mpool_put(void *obj)
{
    ucs_mpool_elem_t *elem = (ucs_mpool_elem_t*)obj - 1;
    ucs_mpool_t *mp        = elem->mpool;

    elem->next   = mp->freelist;
    mp->freelist = elem;
}

/** The pool an in-use object belongs to. */
static inline ucs_mpool_t *ucs_mpool_obj_owner(void *obj)
{
    return ((ucs_mpool_elem_t*)obj - 1)->mpool;
}


/** chunk_alloc with malloc(). */
ucs_status_t ucs_mpool_chunk_malloc(ucs_mpool_t *mp, size_t *size_p,
                                    void **chunk_p);

/** chunk_release with free(). */
void ucs_mpool_chunk_free(ucs_mpool_t *mp, void *chunk);

/** chunk_alloc with an anonymous mmap(), rounded up to whole pages. */
ucs_status_t ucs_mpool_chunk_mmap(ucs_mpool_t *mp, size_t *size_p,
                                  void **chunk_p);

/** chunk_release for ucs_mpool_chunk_mmap(). */
void ucs_mpool_chunk_munmap(ucs_mpool_t *mp, void *chunk);

END_C_DECLS

#endif
