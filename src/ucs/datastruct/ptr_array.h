/*
 * Pointer array: maps a small unsigned index to a pointer, reusing the
 * indexes of removed entries. Used where a compact integer handle must be
 * turned back into an object quickly (for example an endpoint id carried in
 * a packet header).
 *
 * Each slot holds either a value or, when free, the index of the next free
 * slot tagged with the low bit; free slots form a LIFO list, so the most
 * recently removed index is reused first. As a consequence a stored value
 * must have its low bit clear (any pointer to an object of alignment >= 2,
 * or NULL). The array doubles when full; lookup is a bounds check and one
 * load.
 *
 * Not thread-safe: callers serialize access.
 */
#ifndef UCS_DATASTRUCT_PTR_ARRAY_H_
#define UCS_DATASTRUCT_PTR_ARRAY_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS

/** Tag of a free slot. */
#define UCS_PTR_ARRAY_FLAG_FREE ((uintptr_t)1)

/** "No index": end of the free list. */
#define UCS_PTR_ARRAY_NO_INDEX  ((unsigned)-1)

typedef struct ucs_ptr_array {
    uintptr_t  *slots;
    unsigned   size;       /* number of slots */
    unsigned   count;      /* slots holding a value */
    unsigned   free_head;  /* first free slot, or UCS_PTR_ARRAY_NO_INDEX */
    const char *name;
} ucs_ptr_array_t;


/**
 * Initialize an empty array; nothing is allocated until the first insert.
 * @a name (used in messages) must outlive the array, e.g. a string literal.
 */
void ucs_ptr_array_init(ucs_ptr_array_t *ptr_array, const char *name);

/**
 * Release the array. If @a leak_check is set and values remain, warn with
 * their count. The values themselves are not touched.
 */
void ucs_ptr_array_cleanup(ucs_ptr_array_t *ptr_array, int leak_check);

/**
 * Store @a value in a free slot (growing the array if needed) and return the
 * slot index in @a *index_p.
 * @return UCS_OK, UCS_ERR_INVALID_PARAM if the low bit of @a value is set,
 *         or UCS_ERR_NO_MEMORY (array unchanged).
 */
ucs_status_t ucs_ptr_array_insert(ucs_ptr_array_t *ptr_array, void *value,
                                  unsigned *index_p);

/**
 * Free slot @a index, storing its value in @a *value_p unless it is NULL.
 * @return UCS_OK, or UCS_ERR_NO_ELEM if the slot holds no value.
 */
ucs_status_t ucs_ptr_array_remove(ucs_ptr_array_t *ptr_array, unsigned index,
                                  void **value_p);

/**
 * Replace the value of a used slot. The old value goes to @a *old_value_p
 * unless it is NULL.
 * @return UCS_OK, UCS_ERR_NO_ELEM if the slot is free, or
 *         UCS_ERR_INVALID_PARAM if the low bit of @a value is set.
 */
ucs_status_t ucs_ptr_array_replace(ucs_ptr_array_t *ptr_array, unsigned index,
                                   void *value, void **old_value_p);

/**
 * Fetch the value of slot @a index.
 * @return 1 and *value_p set if the slot holds a value, 0 otherwise
 *         (including an index past the end).
 */
static UCS_F_ALWAYS_INLINE int
ucs_ptr_array_lookup(const ucs_ptr_array_t *ptr_array, unsigned index,
                     void **value_p)
{
    uintptr_t slot;

    if (ucs_unlikely(index >= ptr_array->size)) {
        return 0;
    }

    slot = ptr_array->slots[index];
    if (ucs_unlikely(slot & UCS_PTR_ARRAY_FLAG_FREE)) {
        return 0;
    }

    *value_p = (void*)slot;
    return 1;
}

/** Number of slots holding a value. */
static inline unsigned ucs_ptr_array_count(const ucs_ptr_array_t *ptr_array)
{
    return ptr_array->count;
}

/** Index of the first used slot at or after @a index, or the array size. */
static inline unsigned ucs_ptr_array_next_used(const ucs_ptr_array_t *ptr_array,
                                               unsigned index)
{
    while ((index < ptr_array->size) &&
           (ptr_array->slots[index] & UCS_PTR_ARRAY_FLAG_FREE)) {
        ++index;
    }
    return index;
}

/**
 * Iterate over the used slots in index order: @a _value (any pointer type)
 * receives the value and @a _index (unsigned) its index. The body may remove
 * the current or any other slot; a value inserted during the walk may or may
 * not be visited.
 */
#define ucs_ptr_array_for_each(_value, _index, _ptr_array) \
    for (_index = ucs_ptr_array_next_used(_ptr_array, 0); \
         ((_index) < (_ptr_array)->size) && \
         ((_value = (__typeof__(_value))(_ptr_array)->slots[_index]), 1); \
         _index = ucs_ptr_array_next_used(_ptr_array, (_index) + 1))

END_C_DECLS

#endif
