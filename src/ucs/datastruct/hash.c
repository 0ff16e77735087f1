#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/datastruct/hash.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

#include <stdlib.h>
#include <string.h>

enum {
    UCS_HASH_BUCKET_EMPTY   = 0,
    UCS_HASH_BUCKET_USED    = 1,
    UCS_HASH_BUCKET_REMOVED = 2
};

#define UCS_HASH_MIN_BUCKETS 8

/* Used plus removed buckets allowed before the table is rebuilt. */
static size_t ucs_hash_max_load(size_t num_buckets)
{
    return (num_buckets / 4) * 3;
}

uint64_t ucs_hash_string(const char *str)
{
    const unsigned char *p;
    uint64_t h = 0xcbf29ce484222325ull;

    for (p = (const unsigned char *)str; *p != '\0'; ++p) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

static ucs_status_t ucs_hash_buckets_for(size_t capacity, size_t *num_p)
{
    size_t num = UCS_HASH_MIN_BUCKETS;

    while (ucs_hash_max_load(num) < capacity) {
        if (num > (SIZE_MAX / 2) / sizeof(ucs_hash_bucket_t)) {
            return UCS_ERR_INVALID_PARAM;
        }
        num *= 2;
    }

    *num_p = num;
    return UCS_OK;
}

static int ucs_hash_bucket_matches(const ucs_hash_t *hash, size_t index,
                                   uint64_t key, const char *str)
{
    return (hash->buckets[index].key == key) &&
           (!hash->is_string || !strcmp(hash->str_keys[index], str));
}

/* Find the bucket holding the key; 1 and *index_p if found, else 0. */
static int ucs_hash_find(const ucs_hash_t *hash, uint64_t key, const char *str,
                         size_t *index_p)
{
    size_t mask  = hash->num_buckets - 1;
    size_t index = ucs_hash_u64(key) & mask;

    /* The load limit keeps at least a quarter of the buckets empty, so the
     * probe always ends. */
    while (hash->states[index] != UCS_HASH_BUCKET_EMPTY) {
        if ((hash->states[index] == UCS_HASH_BUCKET_USED) &&
            ucs_hash_bucket_matches(hash, index, key, str)) {
            *index_p = index;
            return 1;
        }
        index = (index + 1) & mask;
    }
    return 0;
}

/* First bucket on the key's probe path that is not in use. */
static size_t ucs_hash_free_bucket(const ucs_hash_t *hash, uint64_t key)
{
    size_t mask  = hash->num_buckets - 1;
    size_t index = ucs_hash_u64(key) & mask;

    while (hash->states[index] == UCS_HASH_BUCKET_USED) {
        index = (index + 1) & mask;
    }
    return index;
}

static ucs_status_t ucs_hash_table_alloc(ucs_hash_t *table, size_t num_buckets,
                                         int is_string)
{
    table->buckets = calloc(num_buckets, sizeof(*table->buckets));
    table->states  = calloc(num_buckets, sizeof(*table->states));
    table->str_keys =
        is_string ? calloc(num_buckets, sizeof(*table->str_keys)) : NULL;
    if ((table->buckets == NULL) || (table->states == NULL) ||
        (is_string && (table->str_keys == NULL))) {
        free(table->str_keys);
        free(table->states);
        free(table->buckets);
        return UCS_ERR_NO_MEMORY;
    }

    table->num_buckets = num_buckets;
    table->count       = 0;
    table->num_removed = 0;
    table->is_string   = is_string;
    return UCS_OK;
}

static void ucs_hash_table_free(ucs_hash_t *table)
{
    free(table->str_keys);
    free(table->states);
    free(table->buckets);
}

/* Move every entry to a fresh table of @a num_buckets buckets. */
static ucs_status_t ucs_hash_rebuild(ucs_hash_t *hash, size_t num_buckets)
{
    ucs_hash_t new_table;
    ucs_status_t status;
    size_t i, index;

    status = ucs_hash_table_alloc(&new_table, num_buckets, hash->is_string);
    if (status != UCS_OK) {
        ucs_error("failed to grow hash table to %zu buckets: out of memory",
                  num_buckets);
        return status;
    }

    for (i = 0; i < hash->num_buckets; ++i) {
        if (hash->states[i] != UCS_HASH_BUCKET_USED) {
            continue;
        }

        index = ucs_hash_free_bucket(&new_table, hash->buckets[i].key);
        new_table.buckets[index] = hash->buckets[i];
        new_table.states[index]  = UCS_HASH_BUCKET_USED;
        if (hash->is_string) {
            new_table.str_keys[index] = hash->str_keys[i];
        }
        ++new_table.count;
    }

    ucs_assert(new_table.count == hash->count);
    ucs_hash_table_free(hash);
    *hash = new_table;
    return UCS_OK;
}

static ucs_status_t ucs_hash_init_common(ucs_hash_t *hash, size_t capacity,
                                         int is_string)
{
    ucs_status_t status;
    size_t num_buckets;

    status = ucs_hash_buckets_for(capacity, &num_buckets);
    if (status != UCS_OK) {
        ucs_error("hash table capacity %zu is too large", capacity);
        return status;
    }

    status = ucs_hash_table_alloc(hash, num_buckets, is_string);
    if (status != UCS_OK) {
        ucs_error("failed to allocate hash table of %zu buckets", num_buckets);
    }
    return status;
}

static void ucs_hash_cleanup_common(ucs_hash_t *hash)
{
    size_t i;

    if (hash->is_string) {
        for (i = 0; i < hash->num_buckets; ++i) {
            free(hash->str_keys[i]);
        }
    }
    ucs_hash_table_free(hash);
    memset(hash, 0, sizeof(*hash));
}

static ucs_status_t ucs_hash_put_common(ucs_hash_t *hash, uint64_t key,
                                        const char *str, void *value)
{
    size_t max_load = ucs_hash_max_load(hash->num_buckets);
    char *key_copy  = NULL;
    ucs_status_t status;
    size_t index, num_buckets;

    if (ucs_hash_find(hash, key, str, &index)) {
        return UCS_ERR_ALREADY_EXISTS;
    }

    if (hash->is_string) {
        key_copy = strdup(str);
        if (key_copy == NULL) {
            ucs_error("failed to copy hash key '%s': out of memory", str);
            return UCS_ERR_NO_MEMORY;
        }
    }

    if ((hash->count + hash->num_removed + 1) > max_load) {
        /* Mostly tombstones: rebuild at the same size to clear them. */
        num_buckets = hash->num_buckets;
        if ((hash->count + 1) > (max_load / 2)) {
            if (num_buckets > (SIZE_MAX / 2) / sizeof(ucs_hash_bucket_t)) {
                ucs_error("hash table of %zu entries cannot grow further",
                          hash->count);
                status = UCS_ERR_NO_MEMORY;
                goto err_free_key;
            }
            num_buckets *= 2;
        }

        status = ucs_hash_rebuild(hash, num_buckets);
        if (status != UCS_OK) {
            goto err_free_key;
        }
    }

    index = ucs_hash_free_bucket(hash, key);
    if (hash->states[index] == UCS_HASH_BUCKET_REMOVED) {
        --hash->num_removed;
    }

    hash->states[index]        = UCS_HASH_BUCKET_USED;
    hash->buckets[index].key   = key;
    hash->buckets[index].value = value;
    if (hash->is_string) {
        hash->str_keys[index] = key_copy;
    }
    ++hash->count;
    return UCS_OK;

err_free_key:
    free(key_copy);
    return status;
}

static ucs_status_t ucs_hash_get_common(const ucs_hash_t *hash, uint64_t key,
                                        const char *str, void **value_p)
{
    size_t index;

    if (!ucs_hash_find(hash, key, str, &index)) {
        return UCS_ERR_NO_ELEM;
    }

    *value_p = hash->buckets[index].value;
    return UCS_OK;
}

static ucs_status_t ucs_hash_remove_common(ucs_hash_t *hash, uint64_t key,
                                           const char *str, void **value_p)
{
    size_t mask = hash->num_buckets - 1;
    size_t index;

    if (!ucs_hash_find(hash, key, str, &index)) {
        return UCS_ERR_NO_ELEM;
    }

    if (value_p != NULL) {
        *value_p = hash->buckets[index].value;
    }

    if (hash->is_string) {
        free(hash->str_keys[index]);
        hash->str_keys[index] = NULL;
    }

    /* A probe that reaches this bucket would stop at the next one if it is
     * empty, so this bucket can become empty too instead of a tombstone. */
    if (hash->states[(index + 1) & mask] == UCS_HASH_BUCKET_EMPTY) {
        hash->states[index] = UCS_HASH_BUCKET_EMPTY;
    } else {
        hash->states[index] = UCS_HASH_BUCKET_REMOVED;
        ++hash->num_removed;
    }
    --hash->count;
    return UCS_OK;
}

/* Index of the next used bucket at or after *iter, advancing the cursor. */
static int ucs_hash_next_index(const ucs_hash_t *hash, ucs_hash_iter_t *iter,
                               size_t *index_p)
{
    size_t index;

    for (index = *iter; index < hash->num_buckets; ++index) {
        if (hash->states[index] == UCS_HASH_BUCKET_USED) {
            *iter    = index + 1;
            *index_p = index;
            return 1;
        }
    }

    *iter = hash->num_buckets;
    return 0;
}

ucs_status_t ucs_hash_init(ucs_hash_t *hash, size_t capacity)
{
    return ucs_hash_init_common(hash, capacity, 0);
}

void ucs_hash_cleanup(ucs_hash_t *hash)
{
    ucs_hash_cleanup_common(hash);
}

ucs_status_t ucs_hash_put(ucs_hash_t *hash, uint64_t key, void *value)
{
    return ucs_hash_put_common(hash, key, NULL, value);
}

ucs_status_t ucs_hash_get(const ucs_hash_t *hash, uint64_t key, void **value_p)
{
    return ucs_hash_get_common(hash, key, NULL, value_p);
}

ucs_status_t ucs_hash_remove(ucs_hash_t *hash, uint64_t key, void **value_p)
{
    return ucs_hash_remove_common(hash, key, NULL, value_p);
}

int ucs_hash_next(const ucs_hash_t *hash, ucs_hash_iter_t *iter,
                  uint64_t *key_p, void **value_p)
{
    size_t index;

    if (!ucs_hash_next_index(hash, iter, &index)) {
        return 0;
    }

    if (key_p != NULL) {
        *key_p = hash->buckets[index].key;
    }
    if (value_p != NULL) {
        *value_p = hash->buckets[index].value;
    }
    return 1;
}

ucs_status_t ucs_hash_str_init(ucs_hash_str_t *hash, size_t capacity)
{
    return ucs_hash_init_common(&hash->hash, capacity, 1);
}

void ucs_hash_str_cleanup(ucs_hash_str_t *hash)
{
    ucs_hash_cleanup_common(&hash->hash);
}

ucs_status_t ucs_hash_str_put(ucs_hash_str_t *hash, const char *key,
                              void *value)
{
    return ucs_hash_put_common(&hash->hash, ucs_hash_string(key), key, value);
}

ucs_status_t ucs_hash_str_get(const ucs_hash_str_t *hash, const char *key,
                              void **value_p)
{
    return ucs_hash_get_common(&hash->hash, ucs_hash_string(key), key, value_p);
}

ucs_status_t ucs_hash_str_remove(ucs_hash_str_t *hash, const char *key,
                                 void **value_p)
{
    return ucs_hash_remove_common(&hash->hash, ucs_hash_string(key), key,
                                  value_p);
}

int ucs_hash_str_next(const ucs_hash_str_t *hash, ucs_hash_iter_t *iter,
                      const char **key_p, void **value_p)
{
    size_t index;

    if (!ucs_hash_next_index(&hash->hash, iter, &index)) {
        return 0;
    }

    if (key_p != NULL) {
        *key_p = hash->hash.str_keys[index];
    }
    if (value_p != NULL) {
        *value_p = hash->hash.buckets[index].value;
    }
    return 1;
}
