#ifndef UCS_DATASTRUCT_PTR_ARRAY_H_
#define UCS_DATASTRUCT_PTR_ARRAY_H_

/**
 * @file
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

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS

/** Tag of a free slot. */
#define UCS_PTR_ARRAY_FLAG_FREE ((uintptr_t)1)

/** "No index": end of the free list. */
#define UCS_PTR_ARRAY_NO_INDEX ((unsigned)-1)

/** A pointer array; fields are read by the inline calls only. */
typedef struct ucs_ptr_array {
    uintptr_t *slots;   /**< values, or tagged free-list links */
    unsigned size;      /**< number of slots */
    unsigned count;     /**< slots holding a value */
    unsigned free_head; /**< first free slot, or UCS_PTR_ARRAY_NO_INDEX */
    const char *name;   /**< used in messages */
} ucs_ptr_array_t;

/**
 * Initialize an empty array; nothing is allocated until the first insert.
 *
 * @param [out] ptr_array the array.
 * @param [in]  name      used in messages; must outlive the array, e.g. a
 *                        string literal.
 */
void ucs_ptr_array_init(ucs_ptr_array_t *ptr_array, const char *name);

/**
 * Release the array. The values themselves are not touched.
 *
 * @param [in,out] ptr_array  the array.
 * @param [in]     leak_check if nonzero and values remain, warn with their
 *                            count.
 */
void ucs_ptr_array_cleanup(ucs_ptr_array_t *ptr_array, int leak_check);

/**
 * Store a value in a free slot, growing the array if needed.
 *
 * @param [in,out] ptr_array the array.
 * @param [in]     value     the value; its low bit must be clear.
 * @param [out]    index_p   receives the slot index, set only on success.
 * @return UCS_OK, UCS_ERR_INVALID_PARAM if the low bit of @a value is set,
 *         or UCS_ERR_NO_MEMORY (array unchanged).
 */
ucs_status_t ucs_ptr_array_insert(ucs_ptr_array_t *ptr_array, void *value,
                                  unsigned *index_p);

/**
 * Free a slot; its index may be returned by a later insert.
 *
 * @param [in,out] ptr_array the array.
 * @param [in]     index     the slot.
 * @param [out]    value_p   receives the removed value, or NULL.
 * @return UCS_OK, or UCS_ERR_NO_ELEM if the slot holds no value.
 */
ucs_status_t ucs_ptr_array_remove(ucs_ptr_array_t *ptr_array, unsigned index,
                                  void **value_p);

/**
 * Replace the value of a used slot.
 *
 * @param [in,out] ptr_array   the array.
 * @param [in]     index       the slot.
 * @param [in]     value       the new value; its low bit must be clear.
 * @param [out]    old_value_p receives the old value, or NULL.
 * @return UCS_OK, UCS_ERR_NO_ELEM if the slot is free, or
 *         UCS_ERR_INVALID_PARAM if the low bit of @a value is set.
 */
ucs_status_t ucs_ptr_array_replace(ucs_ptr_array_t *ptr_array, unsigned index,
                                   void *value, void **old_value_p);

/**
 * Fetch the value of a slot (fast path: a bounds check and one load).
 *
 * @param [in]  ptr_array the array.
 * @param [in]  index     the slot; any value is safe.
 * @param [out] value_p   receives the value, set only when 1 is returned.
 * @return 1 if the slot holds a value, 0 otherwise (including an index
 *         past the end).
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

    *value_p = (void *)slot;
    return 1;
}

/** Number of slots holding a value.
 *  @param [in] ptr_array the array.
 *  @return the count. */
static inline unsigned ucs_ptr_array_count(const ucs_ptr_array_t *ptr_array)
{
    return ptr_array->count;
}

/** Index of the first used slot at or after @a index.
 *  @param [in] ptr_array the array.
 *  @param [in] index     where to start.
 *  @return the index, or the array size if there is none. */
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
 * Iterate over the used slots in index order. The body may remove the
 * current or any other slot; a value inserted during the walk may or may
 * not be visited.
 *
 * @param _value      a pointer variable (any pointer type) receiving each
 *                    value.
 * @param _index      an unsigned variable receiving each index.
 * @param _ptr_array  the array (ucs_ptr_array_t *).
 */
#define ucs_ptr_array_for_each(_value, _index, _ptr_array)                \
    for (_index = ucs_ptr_array_next_used(_ptr_array, 0);                 \
         ((_index) < (_ptr_array)->size) &&                               \
         ((_value = (__typeof__(_value))(_ptr_array)->slots[_index]), 1); \
         _index = ucs_ptr_array_next_used(_ptr_array, (_index) + 1))

END_C_DECLS

#endif
