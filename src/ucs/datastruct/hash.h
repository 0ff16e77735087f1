#ifndef UCS_DATASTRUCT_HASH_H_
#define UCS_DATASTRUCT_HASH_H_

/**
 * @file
 * Open-addressing hash maps from a key to a void* value.
 *
 * Two flavours share one implementation:
 *  - ucs_hash_t      keys are uint64_t;
 *  - ucs_hash_str_t  keys are NUL-terminated strings; the map keeps its own
 *                    copy of every key.
 *
 * Layout: a power-of-two array of buckets probed linearly from the mixed
 * hash of the key. A removed entry leaves a tombstone, so removal never moves
 * other entries. The table is rebuilt (twice as large, or the same size when
 * mostly tombstones) before the used plus removed buckets would exceed 3/4 of
 * the table. A lookup is one hash and a short probe; nothing allocates except
 * a put that triggers a rebuild.
 *
 * Iteration uses a cursor (ucs_hash_iter_t, start at UCS_HASH_ITER_INIT).
 * Removing entries while iterating is allowed (every remaining entry is still
 * visited exactly once); a put during iteration may rebuild the table, after
 * which the walk may skip or repeat entries.
 *
 * Not thread-safe: callers serialize access.
 */

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/** One bucket of the table (private to hash.c). */
typedef struct ucs_hash_bucket {
    uint64_t key; /**< integer key, or the hash of a string key */
    void *value;  /**< the value stored with the key */
} ucs_hash_bucket_t;

/** An integer-keyed map; its fields are private to hash.c. */
typedef struct ucs_hash {
    ucs_hash_bucket_t *buckets; /**< the table */
    uint8_t *states;            /**< per bucket: empty, used or removed */
    char **str_keys;            /**< string maps only: owned key copies */
    size_t num_buckets;         /**< a power of two */
    size_t count;               /**< used buckets */
    size_t num_removed;         /**< tombstones */
    int is_string;              /**< nonzero for a string map */
} ucs_hash_t;

/** String-keyed map; a distinct type so that keys cannot be mixed up. */
typedef struct ucs_hash_str {
    ucs_hash_t hash; /**< the underlying map, keyed by string hashes */
} ucs_hash_str_t;

/** Iteration cursor. */
typedef size_t ucs_hash_iter_t;

/** Value of a cursor before the first ucs_hash_next() call. */
#define UCS_HASH_ITER_INIT ((ucs_hash_iter_t)0)

/** Mix the bits of a 64-bit integer (a bijection with good avalanche).
 *  @param [in] key the integer.
 *  @return the mixed value. */
static inline uint64_t ucs_hash_u64(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return key;
}

/** 64-bit hash of a NUL-terminated string (FNV-1a).
 *  @param [in] str the string.
 *  @return the hash. */
uint64_t ucs_hash_string(const char *str);

/**
 * Initialize an integer-keyed map.
 *
 * @param [out] hash     the map; release with ucs_hash_cleanup().
 * @param [in]  capacity entries it holds before it first grows (0 picks a
 *                       small default).
 * @return UCS_OK, UCS_ERR_NO_MEMORY, or UCS_ERR_INVALID_PARAM if the capacity
 *         is too large to represent.
 */
ucs_status_t ucs_hash_init(ucs_hash_t *hash, size_t capacity);

/** Release the table. Values are not touched (free them first if the map
 *  owns them).
 *  @param [in,out] hash the map. */
void ucs_hash_cleanup(ucs_hash_t *hash);

/**
 * Add @a key -> @a value.
 *
 * @param [in,out] hash  the map.
 * @param [in]     key   the key.
 * @param [in]     value stored as is; the map does not own it.
 * @return UCS_OK, UCS_ERR_ALREADY_EXISTS (map unchanged), or
 *         UCS_ERR_NO_MEMORY if growing failed (map unchanged).
 */
ucs_status_t ucs_hash_put(ucs_hash_t *hash, uint64_t key, void *value);

/**
 * Look up a key.
 *
 * @param [in]  hash    the map.
 * @param [in]  key     the key.
 * @param [out] value_p receives the value, set only on success.
 * @return UCS_OK or UCS_ERR_NO_ELEM.
 */
ucs_status_t ucs_hash_get(const ucs_hash_t *hash, uint64_t key, void **value_p);

/**
 * Remove a key.
 *
 * @param [in,out] hash    the map.
 * @param [in]     key     the key.
 * @param [out]    value_p receives the removed value, or NULL.
 * @return UCS_OK or UCS_ERR_NO_ELEM.
 */
ucs_status_t ucs_hash_remove(ucs_hash_t *hash, uint64_t key, void **value_p);

/** Number of entries.
 *  @param [in] hash the map.
 *  @return the number of entries. */
static inline size_t ucs_hash_size(const ucs_hash_t *hash)
{
    return hash->count;
}

/**
 * Advance the cursor to the next entry and return it.
 *
 * @param [in]     hash    the map.
 * @param [in,out] iter    the cursor, UCS_HASH_ITER_INIT at the start.
 * @param [out]    key_p   receives the key, or NULL.
 * @param [out]    value_p receives the value, or NULL.
 * @return 1 if an entry was returned, 0 at the end.
 */
int ucs_hash_next(const ucs_hash_t *hash, ucs_hash_iter_t *iter,
                  uint64_t *key_p, void **value_p);

/** Iterate over every entry of an integer map (see ucs_hash_next()).
 *  @param _key   a uint64_t variable receiving each key.
 *  @param _value a void* variable receiving each value.
 *  @param _iter  a ucs_hash_iter_t variable.
 *  @param _hash  the map (ucs_hash_t *). */
#define ucs_hash_for_each(_key, _value, _iter, _hash) \
    for (_iter = UCS_HASH_ITER_INIT;                  \
         ucs_hash_next(_hash, &(_iter), &(_key), &(_value));)

/** Like ucs_hash_init(), for a string-keyed map.
 *  @param [out] hash     the map; release with ucs_hash_str_cleanup().
 *  @param [in]  capacity as for ucs_hash_init().
 *  @return as ucs_hash_init(). */
ucs_status_t ucs_hash_str_init(ucs_hash_str_t *hash, size_t capacity);

/** Release the table and the key copies. Values are not touched.
 *  @param [in,out] hash the map. */
void ucs_hash_str_cleanup(ucs_hash_str_t *hash);

/**
 * Add @a key -> @a value; the map stores a copy of @a key.
 *
 * @param [in,out] hash  the map.
 * @param [in]     key   the key; the caller keeps ownership.
 * @param [in]     value stored as is.
 * @return UCS_OK, UCS_ERR_ALREADY_EXISTS, or UCS_ERR_NO_MEMORY (map
 *         unchanged on error).
 */
ucs_status_t ucs_hash_str_put(ucs_hash_str_t *hash, const char *key,
                              void *value);

/** Look up a key.
 *  @param [in]  hash    the map.
 *  @param [in]  key     the key.
 *  @param [out] value_p receives the value, set only on success.
 *  @return UCS_OK or UCS_ERR_NO_ELEM. */
ucs_status_t ucs_hash_str_get(const ucs_hash_str_t *hash, const char *key,
                              void **value_p);

/**
 * Remove a key and free the map's copy of it.
 *
 * @param [in,out] hash    the map.
 * @param [in]     key     the key.
 * @param [out]    value_p receives the removed value, or NULL.
 * @return UCS_OK or UCS_ERR_NO_ELEM.
 */
ucs_status_t ucs_hash_str_remove(ucs_hash_str_t *hash, const char *key,
                                 void **value_p);

/** Number of entries.
 *  @param [in] hash the map.
 *  @return the number of entries. */
static inline size_t ucs_hash_str_size(const ucs_hash_str_t *hash)
{
    return hash->hash.count;
}

/**
 * Like ucs_hash_next(), for a string map.
 *
 * @param [in]     hash    the map.
 * @param [in,out] iter    the cursor, UCS_HASH_ITER_INIT at the start.
 * @param [out]    key_p   receives the map's copy of the key (valid until
 *                         that entry is removed or the map is cleaned up),
 *                         or NULL.
 * @param [out]    value_p receives the value, or NULL.
 * @return 1 if an entry was returned, 0 at the end.
 */
int ucs_hash_str_next(const ucs_hash_str_t *hash, ucs_hash_iter_t *iter,
                      const char **key_p, void **value_p);

/** Iterate over every entry of a string map (see ucs_hash_str_next()).
 *  @param _key   a const char* variable receiving each key.
 *  @param _value a void* variable receiving each value.
 *  @param _iter  a ucs_hash_iter_t variable.
 *  @param _hash  the map (ucs_hash_str_t *). */
#define ucs_hash_str_for_each(_key, _value, _iter, _hash) \
    for (_iter = UCS_HASH_ITER_INIT;                      \
         ucs_hash_str_next(_hash, &(_iter), &(_key), &(_value));)

END_C_DECLS

#endif
