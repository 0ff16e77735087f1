/**
 * @file
 * Integer and bit arithmetic helpers under the names UCX programs use:
 * size constants, rounding and alignment, powers of two, bit scans, flag
 * tests and wrap-around sequence comparison.
 *
 * ucs_min(), ucs_max(), ucs_align_up(), ucs_align_down(), their _pow2
 * forms and ucs_is_pow2() come from ucs/sys/compiler_def.h, which this
 * header includes. Everything here is a macro or a static inline function:
 * nothing needs linking except ucs_log2(), which calls the C library's
 * log2() (-lm). Included by ucs/sys/string.h and by applications; the
 * library itself does not depend on it.
 */
#ifndef UCS_SYS_MATH_H_
#define UCS_SYS_MATH_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/** One kibibyte, 2^10 bytes (unsigned long long). */
#define UCS_KBYTE (1ull << 10)
/** One mebibyte, 2^20 bytes (unsigned long long). */
#define UCS_MBYTE (1ull << 20)
/** One gibibyte, 2^30 bytes (unsigned long long). */
#define UCS_GBYTE (1ull << 30)
/** One tebibyte, 2^40 bytes (unsigned long long). */
#define UCS_TBYTE (1ull << 40)
/** One pebibyte, 2^50 bytes (unsigned long long). */
#define UCS_PBYTE (1ull << 50)

/**
 * Whether an unsigned value is zero or a power of two.
 *
 * @param _n  Value; evaluated more than once.
 */
#define ucs_is_pow2_or_zero(_n) (!((_n) & ((_n)-1)))

/**
 * How many units must be added to a value to reach the next multiple of
 * an alignment (0 when already aligned).
 *
 * @param _n          Value.
 * @param _alignment  Alignment, any positive value.
 */
#define ucs_padding(_n, _alignment) \
    (((_alignment) - ((_n) % (_alignment))) % (_alignment))

/**
 * The remainder of a value modulo a power-of-two alignment: non-zero
 * exactly when the value is not aligned.
 *
 * @param _n  Value.
 * @param _p  Alignment, a power of two.
 */
#define ucs_check_if_align_pow2(_n, _p) ((_n) & ((_p)-1))

/**
 * The remainder of a value modulo a power-of-two alignment (same as
 * ucs_check_if_align_pow2()).
 *
 * @param _n  Value.
 * @param _p  Alignment, a power of two.
 */
#define ucs_padding_pow2(_n, _p) ucs_check_if_align_pow2(_n, _p)

/**
 * Round a pointer down to a power-of-two alignment.
 *
 * @param _ptr        Pointer.
 * @param _alignment  Alignment, a power of two.
 * @return The pointer, of the same type, rounded down.
 */
#define ucs_align_down_pow2_ptr(_ptr, _alignment) \
    ((__typeof__(_ptr))ucs_align_down_pow2((uintptr_t)(_ptr), (_alignment)))

/**
 * Round a pointer up to a power-of-two alignment.
 *
 * @param _ptr        Pointer.
 * @param _alignment  Alignment, a power of two.
 * @return The pointer, of the same type, rounded up.
 */
#define ucs_align_up_pow2_ptr(_ptr, _alignment) \
    ((__typeof__(_ptr))ucs_align_up_pow2((uintptr_t)(_ptr), (_alignment)))

/**
 * A 64-bit mask of the low @a _i bits, all ones when @a _i is 64 or more.
 *
 * @param _i  Number of bits.
 */
#define UCS_MASK_SAFE(_i) UCS_MASK(_i)

/**
 * Integer division rounded up, without the overflow of (n + d - 1) / d.
 *
 * @param _n  Dividend, non-negative.
 * @param _d  Divisor, positive.
 */
#define ucs_div_round_up(_n, _d) (((_n) / (_d)) + (((_n) % (_d)) != 0))

/**
 * Sign of a value: -1, 0 or 1.
 *
 * @param _n  Value of any arithmetic type.
 */
#define ucs_signum(_n) (((_n) > 0) - ((_n) < 0))

/**
 * Index of the lowest set bit of a 32-bit value.
 *
 * @param [in] n  Value, must not be 0.
 * @return The bit index, 0 to 31.
 */
static inline unsigned ucs_ffs32(uint32_t n)
{
    return (unsigned)__builtin_ctz(n);
}

/**
 * Index of the lowest set bit of a 64-bit value.
 *
 * @param [in] n  Value, must not be 0.
 * @return The bit index, 0 to 63.
 */
static inline unsigned ucs_ffs64(uint64_t n)
{
    return (unsigned)__builtin_ctzll(n);
}

/**
 * Index of the lowest set bit, or 64 when the value is 0.
 *
 * @param _val  64-bit value.
 */
#define ucs_ffs64_safe(_val) ((_val) ? ucs_ffs64(_val) : 64u)

/**
 * Floor of the base-2 logarithm of a 64-bit value (index of its highest
 * set bit).
 *
 * @param [in] n  Value, must not be 0.
 * @return 0 to 63.
 */
static inline unsigned ucs_ilog2_u64(uint64_t n)
{
    return 63u - (unsigned)__builtin_clzll(n);
}

/**
 * Floor of the base-2 logarithm of an integer: the index of its highest
 * set bit.
 *
 * @param _n  Positive integer value (the result for 0 is meaningless).
 * @return The index as unsigned.
 */
#define ucs_ilog2(_n) ucs_ilog2_u64((uint64_t)(_n))

/**
 * Like ucs_ilog2(), but 0 for 0.
 *
 * @param _n  Non-negative integer value.
 */
#define ucs_ilog2_or0(_n) (((_n) == 0) ? 0u : ucs_ilog2(_n))

/**
 * Number of set bits of an integer value (converted to 64 bits).
 *
 * @param _n  Value.
 */
#define ucs_popcount(_n) ((unsigned)__builtin_popcountll((uint64_t)(_n)))

/**
 * Number of zero bits below the lowest set bit.
 *
 * @param _n  Value, must not be 0.
 */
#define ucs_count_trailing_zero_bits(_n) ucs_ffs64((uint64_t)(_n))

/**
 * Number of zero bits above the highest set bit, counted in the width of
 * the value's type (32 bits for types of 4 bytes or less, 64 otherwise).
 *
 * @param _n  Value, must not be 0.
 */
#define ucs_count_leading_zero_bits(_n)                          \
    ((sizeof(_n) <= 4) ? (unsigned)__builtin_clz((uint32_t)(_n)) \
                       : (unsigned)__builtin_clzll((uint64_t)(_n)))

/**
 * Smallest power of two that is at least @a n, for 64-bit values.
 *
 * @param [in] n  Value; 0 and 1 both give 1. Values above 2^63 have no
 *                64-bit answer and give 0.
 * @return The power of two.
 */
static inline uint64_t ucs_roundup_pow2_u64(uint64_t n)
{
    if (n <= 1) {
        return 1;
    }

    if (n > (1ull << 63)) {
        return 0;
    }

    return 1ull << (64 - __builtin_clzll(n - 1));
}

/**
 * Smallest power of two that is at least the value, in the value's type
 * (1 for 0 and 1).
 *
 * @param _n  Non-negative integer value.
 */
#define ucs_roundup_pow2(_n) \
    ((__typeof__(_n))ucs_roundup_pow2_u64((uint64_t)(_n)))

/**
 * Like ucs_roundup_pow2(), but 0 for 0.
 *
 * @param _n  Non-negative integer value.
 */
#define ucs_roundup_pow2_or0(_n) \
    (((_n) == 0) ? (__typeof__(_n))0 : ucs_roundup_pow2(_n))

/**
 * Largest power of two that is at most the value, in the value's type.
 *
 * @param _n  Positive integer value.
 */
#define ucs_rounddown_pow2(_n) ((__typeof__(_n))(1ull << ucs_ilog2(_n)))

/**
 * Base-2 logarithm of a floating-point value.
 *
 * @param [in] x  Positive value.
 * @return log2(x); calling it needs the math library (-lm).
 */
static inline double ucs_log2(double x)
{
    return log2(x);
}

/**
 * Round a non-negative double to the nearest size_t, capped at a maximum.
 *
 * @param [in] value  Value to convert; negative values give 0.
 * @param [in] max    Result for values at or above @a max (and for NaN).
 * @return The rounded value, at most @a max.
 */
static inline size_t ucs_double_to_sizet(double value, size_t max)
{
    double rounded = value + 0.5;

    if (!(rounded < (double)max)) {
        return max;
    }

    return (rounded < 1.0) ? 0 : (size_t)rounded;
}

/**
 * Translate one flag between two encodings: @a _newflag if @a _value has
 * @a _oldflag set, otherwise 0.
 *
 * @param _value    Flags in the old encoding.
 * @param _oldflag  Flag to test in @a _value.
 * @param _newflag  Flag to produce.
 */
#define ucs_convert_flag(_value, _oldflag, _newflag) \
    (((_value) & (_oldflag)) ? (_newflag) : 0)

/**
 * Whether any of the given flags (one to nine of them) is set.
 *
 * @param _value  Flags to test.
 * @param ...     Flags to look for; they are OR-ed together.
 */
#define ucs_test_flags(_value, ...) \
    (((_value) & (ucs_flags_or_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0, 0))) != 0)

/** @cond PRIVATE */
#define ucs_flags_or_(_f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, ...) \
    ((_f1) | (_f2) | (_f3) | (_f4) | (_f5) | (_f6) | (_f7) | (_f8) | (_f9))
/** @endcond */

/**
 * Whether every flag of a mask is set.
 *
 * @param _value  Flags to test.
 * @param _mask   Flags that must all be present.
 */
#define ucs_test_all_flags(_value, _mask) (((_value) & (_mask)) == (_mask))

/**
 * Compare two sequence numbers that wrap around, through the signed
 * difference in the given type: a is "less" than b when it is at most
 * half the range behind.
 *
 * @param _a     First sequence number.
 * @param _op    Comparison operator: <, <=, >, >=, == or !=.
 * @param _b     Second sequence number.
 * @param _type  Signed type as wide as the sequence numbers.
 */
#define UCS_CIRCULAR_COMPARE(_a, _op, _b, _type) ((_type)((_a) - (_b)) _op 0)

/** UCS_CIRCULAR_COMPARE() for 8-bit sequence numbers.
 *  @param _a First. @param _op Operator. @param _b Second. */
#define UCS_CIRCULAR_COMPARE8(_a, _op, _b) \
    UCS_CIRCULAR_COMPARE(_a, _op, _b, int8_t)
/** UCS_CIRCULAR_COMPARE() for 16-bit sequence numbers.
 *  @param _a First. @param _op Operator. @param _b Second. */
#define UCS_CIRCULAR_COMPARE16(_a, _op, _b) \
    UCS_CIRCULAR_COMPARE(_a, _op, _b, int16_t)
/** UCS_CIRCULAR_COMPARE() for 32-bit sequence numbers.
 *  @param _a First. @param _op Operator. @param _b Second. */
#define UCS_CIRCULAR_COMPARE32(_a, _op, _b) \
    UCS_CIRCULAR_COMPARE(_a, _op, _b, int32_t)
/** UCS_CIRCULAR_COMPARE() for 64-bit sequence numbers.
 *  @param _a First. @param _op Operator. @param _b Second. */
#define UCS_CIRCULAR_COMPARE64(_a, _op, _b) \
    UCS_CIRCULAR_COMPARE(_a, _op, _b, int64_t)

/**
 * Loop over the indexes of the set bits of a 64-bit map, lowest first.
 *
 * @param _index  Integer variable that receives each index.
 * @param _map    64-bit map; evaluated on every iteration.
 */
#define ucs_for_each_bit(_index, _map)                   \
    for ((_index) = ucs_ffs64_safe(_map); (_index) < 64; \
         (_index) =                                      \
             ucs_ffs64_safe((uint64_t)(_map) & ~UCS_MASK((_index) + 1)))

/**
 * Loop over every subset of a mask, starting with 0 and ending with the
 * mask itself.
 *
 * @param _submask  Integer variable that receives each subset.
 * @param _mask     Mask; evaluated on every iteration.
 */
#define ucs_for_each_submask(_submask, _mask)                                 \
    for (uint64_t ucs_submask_state_[2] = {0, 0};                             \
         !ucs_submask_state_[1] && (((_submask) = ucs_submask_state_[0]), 1); \
         ucs_submask_state_[1] = ((uint64_t)(_submask) == (uint64_t)(_mask)), \
                  ucs_submask_state_[0] =                                     \
                      (ucs_submask_state_[0] - (uint64_t)(_mask)) &           \
                      (uint64_t)(_mask))

END_C_DECLS

#endif
