#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/datastruct/ptr_array.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

#include <stdlib.h>

#define UCS_PTR_ARRAY_INITIAL_SIZE 8

/* Largest slot count: the next-free index must fit beside the free tag and
 * must differ from UCS_PTR_ARRAY_NO_INDEX. */
#define UCS_PTR_ARRAY_MAX_SIZE (UCS_PTR_ARRAY_NO_INDEX / 2)

static uintptr_t ucs_ptr_array_free_slot(unsigned next_free)
{
    return ((uintptr_t)next_free << 1) | UCS_PTR_ARRAY_FLAG_FREE;
}

static unsigned ucs_ptr_array_slot_next_free(uintptr_t slot)
{
    uintptr_t next_free = slot >> 1;

    /* The end marker loses its top bit where uintptr_t is 32 bits wide. */
    return (next_free >= UCS_PTR_ARRAY_MAX_SIZE) ? UCS_PTR_ARRAY_NO_INDEX
                                                 : (unsigned)next_free;
}

void ucs_ptr_array_init(ucs_ptr_array_t *ptr_array, const char *name)
{
    ptr_array->slots     = NULL;
    ptr_array->size      = 0;
    ptr_array->count     = 0;
    ptr_array->free_head = UCS_PTR_ARRAY_NO_INDEX;
    ptr_array->name      = (name != NULL) ? name : "";
}

void ucs_ptr_array_cleanup(ucs_ptr_array_t *ptr_array, int leak_check)
{
    if (leak_check && (ptr_array->count > 0)) {
        ucs_warn("ptr_array '%s': %u value(s) were not removed before cleanup",
                 ptr_array->name, ptr_array->count);
    }

    free(ptr_array->slots);
    ptr_array->slots     = NULL;
    ptr_array->size      = 0;
    ptr_array->count     = 0;
    ptr_array->free_head = UCS_PTR_ARRAY_NO_INDEX;
}

/* Double the array; the new slots become the free list. Called only when the
 * free list is empty. */
static ucs_status_t ucs_ptr_array_grow(ucs_ptr_array_t *ptr_array)
{
    unsigned new_size, index;
    uintptr_t *slots;

    ucs_assert(ptr_array->free_head == UCS_PTR_ARRAY_NO_INDEX);

    if (ptr_array->size >= UCS_PTR_ARRAY_MAX_SIZE) {
        ucs_error("ptr_array '%s' is full (%u slots)", ptr_array->name,
                  ptr_array->size);
        return UCS_ERR_NO_MEMORY;
    }

    new_size = (ptr_array->size == 0)
                   ? UCS_PTR_ARRAY_INITIAL_SIZE
                   : ucs_min(ptr_array->size * 2, UCS_PTR_ARRAY_MAX_SIZE);
    slots    = realloc(ptr_array->slots, new_size * sizeof(*slots));
    if (slots == NULL) {
        ucs_error("ptr_array '%s': failed to grow to %u slots: out of memory",
                  ptr_array->name, new_size);
        return UCS_ERR_NO_MEMORY;
    }

    for (index = ptr_array->size; index < new_size - 1; ++index) {
        slots[index] = ucs_ptr_array_free_slot(index + 1);
    }
    slots[new_size - 1] = ucs_ptr_array_free_slot(UCS_PTR_ARRAY_NO_INDEX);

    ptr_array->free_head = ptr_array->size;
    ptr_array->slots     = slots;
    ptr_array->size      = new_size;
    return UCS_OK;
}

ucs_status_t ucs_ptr_array_insert(ucs_ptr_array_t *ptr_array, void *value,
                                  unsigned *index_p)
{
    ucs_status_t status;
    unsigned index;

    if ((uintptr_t)value & UCS_PTR_ARRAY_FLAG_FREE) {
        ucs_error("ptr_array '%s': cannot store %p, the low bit of a value "
                  "must be clear",
                  ptr_array->name, value);
        return UCS_ERR_INVALID_PARAM;
    }

    if (ptr_array->free_head == UCS_PTR_ARRAY_NO_INDEX) {
        status = ucs_ptr_array_grow(ptr_array);
        if (status != UCS_OK) {
            return status;
        }
    }

    index = ptr_array->free_head;
    ptr_array->free_head =
        ucs_ptr_array_slot_next_free(ptr_array->slots[index]);
    ptr_array->slots[index] = (uintptr_t)value;
    ++ptr_array->count;

    *index_p = index;
    return UCS_OK;
}

ucs_status_t ucs_ptr_array_remove(ucs_ptr_array_t *ptr_array, unsigned index,
                                  void **value_p)
{
    void *value;

    if (!ucs_ptr_array_lookup(ptr_array, index, &value)) {
        return UCS_ERR_NO_ELEM;
    }

    ptr_array->slots[index] = ucs_ptr_array_free_slot(ptr_array->free_head);
    ptr_array->free_head    = index;
    --ptr_array->count;

    if (value_p != NULL) {
        *value_p = value;
    }
    return UCS_OK;
}

ucs_status_t ucs_ptr_array_replace(ucs_ptr_array_t *ptr_array, unsigned index,
                                   void *value, void **old_value_p)
{
    void *old_value;

    if ((uintptr_t)value & UCS_PTR_ARRAY_FLAG_FREE) {
        ucs_error("ptr_array '%s': cannot store %p, the low bit of a value "
                  "must be clear",
                  ptr_array->name, value);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!ucs_ptr_array_lookup(ptr_array, index, &old_value)) {
        return UCS_ERR_NO_ELEM;
    }

    ptr_array->slots[index] = (uintptr_t)value;
    if (old_value_p != NULL) {
        *old_value_p = old_value;
    }
    return UCS_OK;
}
