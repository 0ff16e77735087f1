/**
 * @file
 * A fixed-size CPU bitmap, independent of the C library's cpu_set_t so that
 * it can travel in public structures (uct_iface_params_t::cpu_mask).
 * Included by uct.h and topo.h. Plain data and inline functions: no locks;
 * a set shared between threads needs the caller's synchronization.
 */
#ifndef UCS_TYPE_CPU_SET_H_
#define UCS_TYPE_CPU_SET_H_

#include <ucs/sys/compiler_def.h>

#include <string.h>

BEGIN_C_DECLS

/** Number of CPUs a set can describe; CPU numbers are 0..UCS_CPU_SETSIZE-1. */
#define UCS_CPU_SETSIZE 1024

/** One word of the bitmap. */
typedef unsigned long ucs_cpu_mask_t;

/** Number of CPUs one ucs_cpu_mask_t word describes. */
#define UCS_CPU_BITS_PER_MASK (8 * sizeof(ucs_cpu_mask_t))

/** A set of CPUs. Plain data: copy it with assignment or memcpy. */
typedef struct {
    /** The bitmap: CPU n is bit n % UCS_CPU_BITS_PER_MASK of word
     *  n / UCS_CPU_BITS_PER_MASK. */
    ucs_cpu_mask_t ucs_bits[UCS_CPU_SETSIZE / (8 * sizeof(unsigned long))];
} ucs_cpu_set_t;

/**
 * Remove every CPU from @a set.
 * @param [out] set  The set.
 */
static inline void ucs_cpu_zero(ucs_cpu_set_t *set)
{
    memset(set, 0, sizeof(*set));
}

/**
 * Add @a cpu to @a set; numbers out of range are ignored.
 * @param [in]     cpu  CPU number.
 * @param [in,out] set  The set.
 */
static inline void ucs_cpu_set(unsigned cpu, ucs_cpu_set_t *set)
{
    if (cpu < UCS_CPU_SETSIZE) {
        set->ucs_bits[cpu / UCS_CPU_BITS_PER_MASK] |=
            (ucs_cpu_mask_t)1 << (cpu % UCS_CPU_BITS_PER_MASK);
    }
}

/**
 * Remove @a cpu from @a set; numbers out of range are ignored.
 * @param [in]     cpu  CPU number.
 * @param [in,out] set  The set.
 */
static inline void ucs_cpu_clr(unsigned cpu, ucs_cpu_set_t *set)
{
    if (cpu < UCS_CPU_SETSIZE) {
        set->ucs_bits[cpu / UCS_CPU_BITS_PER_MASK] &=
            ~((ucs_cpu_mask_t)1 << (cpu % UCS_CPU_BITS_PER_MASK));
    }
}

/**
 * Tell whether @a cpu is in @a set.
 * @param [in] cpu  CPU number.
 * @param [in] set  The set.
 * @return Nonzero if it is; 0 if not or for numbers out of range.
 */
static inline int ucs_cpu_is_set(unsigned cpu, const ucs_cpu_set_t *set)
{
    if (cpu >= UCS_CPU_SETSIZE) {
        return 0;
    }

    return !!(set->ucs_bits[cpu / UCS_CPU_BITS_PER_MASK] &
              ((ucs_cpu_mask_t)1 << (cpu % UCS_CPU_BITS_PER_MASK)));
}

/**
 * Number of CPUs in @a set.
 * @param [in] set  The set.
 * @return The count.
 */
static inline unsigned ucs_cpu_set_count(const ucs_cpu_set_t *set)
{
    unsigned count = 0;
    size_t i;

    for (i = 0; i < ucs_static_array_size(set->ucs_bits); ++i) {
        count += (unsigned)__builtin_popcountl(set->ucs_bits[i]);
    }
    return count;
}

/**
 * Lowest CPU number in @a set.
 * @param [in] set  The set.
 * @return The CPU number, or -1 if the set is empty.
 */
static inline int ucs_cpu_set_first(const ucs_cpu_set_t *set)
{
    size_t i;

    for (i = 0; i < ucs_static_array_size(set->ucs_bits); ++i) {
        if (set->ucs_bits[i] != 0) {
            return (int)(i * UCS_CPU_BITS_PER_MASK) +
                   __builtin_ctzl(set->ucs_bits[i]);
        }
    }
    return -1;
}

/* The spellings programs written for UCT use; all take a pointer to a set. */
/**
 * ucs_cpu_zero().
 * @param _set  Pointer to a ucs_cpu_set_t.
 */
#define UCS_CPU_ZERO(_set) ucs_cpu_zero(_set)
/**
 * ucs_cpu_set().
 * @param _cpu  CPU number.
 * @param _set  Pointer to a ucs_cpu_set_t.
 */
#define UCS_CPU_SET(_cpu, _set) ucs_cpu_set((unsigned)(_cpu), _set)
/**
 * ucs_cpu_clr().
 * @param _cpu  CPU number.
 * @param _set  Pointer to a ucs_cpu_set_t.
 */
#define UCS_CPU_CLR(_cpu, _set) ucs_cpu_clr((unsigned)(_cpu), _set)
/**
 * ucs_cpu_is_set().
 * @param _cpu  CPU number.
 * @param _set  Pointer to a ucs_cpu_set_t.
 */
#define UCS_CPU_ISSET(_cpu, _set) ucs_cpu_is_set((unsigned)(_cpu), _set)

END_C_DECLS

#endif
