/**
 * @file
 * Compiler attributes and small helpers shared by every layer: C/C++
 * declaration brackets, function and variable attributes, branch hints,
 * bit masks, alignment and pointer arithmetic, compile-time checks.
 * Included (directly or through another header) by every ucs and uct
 * header; it needs only <stddef.h> and <stdint.h>. Everything here is a
 * macro evaluated at compile time, with no thread or ownership concerns.
 */
#ifndef UCS_SYS_COMPILER_DEF_H_
#define UCS_SYS_COMPILER_DEF_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define BEGIN_C_DECLS extern "C" {
#define END_C_DECLS   }
#else
/** Opens a block of C declarations: `extern "C" {` in C++, empty in C. */
#define BEGIN_C_DECLS
/** Closes the block opened by BEGIN_C_DECLS. */
#define END_C_DECLS
#endif

/** Inline the function wherever it is called (use after `static`). */
#define UCS_F_ALWAYS_INLINE inline __attribute__((always_inline))
/** Never inline the function (keeps slow paths out of fast ones). */
#define UCS_F_NOINLINE __attribute__((noinline))
/** The function does not return. */
#define UCS_F_NORETURN __attribute__((noreturn))
/** The function may be unused without a warning. */
#define UCS_F_MAYBE_UNUSED __attribute__((unused))
/** The variable may be unused without a warning. */
#define UCS_V_UNUSED __attribute__((unused))
/** Run the function when the library or program is loaded. */
#define UCS_F_CTOR __attribute__((constructor))
/** Run the function when the library is unloaded or the program exits. */
#define UCS_F_DTOR __attribute__((destructor))
/**
 * Let the compiler check a printf-style call.
 * @param _fmt  1-based position of the format argument.
 * @param _var  1-based position of the first variable argument.
 */
#define UCS_F_PRINTF(_fmt, _var) __attribute__((format(printf, _fmt, _var)))
/** Every pointer argument of the function must not be NULL. */
#define UCS_F_NON_NULL __attribute__((nonnull))
/** Pack a structure: no padding between or after its fields. */
#define UCS_S_PACKED __attribute__((packed))
/**
 * Align a variable or type to @a _a bytes.
 * @param _a  Alignment, a power of two.
 */
#define UCS_V_ALIGNED(_a) __attribute__((aligned(_a)))
/** Export the symbol from the shared library (default visibility). */
#define UCS_F_API __attribute__((visibility("default")))

/**
 * Hint that @a _x is usually true; evaluates to 0 or 1.
 * @param _x  Condition.
 */
#define ucs_likely(_x) __builtin_expect(!!(_x), 1)
/**
 * Hint that @a _x is usually false; evaluates to 0 or 1.
 * @param _x  Condition.
 */
#define ucs_unlikely(_x) __builtin_expect(!!(_x), 0)

/**
 * A 64-bit mask with only bit @a _i set.
 * @param _i  Bit number, 0 to 63.
 */
#define UCS_BIT(_i) (1ull << (_i))
/**
 * A 64-bit mask with the low @a _n bits set.
 * @param _n  Number of bits, 0 to 64.
 */
#define UCS_MASK(_n) (((_n) >= 64) ? ~0ull : (UCS_BIT(_n) - 1))

/** Cache line size assumed for alignment and padding, in bytes. */
#define UCS_CACHE_LINE_SIZE 64

/**
 * Number of elements of an array (not a pointer).
 * @param _a  An array object.
 */
#define ucs_static_array_size(_a) (sizeof(_a) / sizeof((_a)[0]))

/**
 * offsetof() under the ucs name.
 * @param _type    Structure type.
 * @param _member  Member of @a _type.
 */
#define ucs_offsetof(_type, _member) offsetof(_type, _member)

/**
 * From a pointer to a member back to its enclosing structure.
 * @param _ptr     Pointer to the member.
 * @param _type    Type of the enclosing structure.
 * @param _member  Name of the member in @a _type.
 */
#define ucs_container_of(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr)-offsetof(_type, _member)))

/**
 * @a _ptr advanced by @a _off bytes, as a void pointer.
 * @param _ptr  Pointer.
 * @param _off  Byte offset, may be negative.
 */
#define UCS_PTR_BYTE_OFFSET(_ptr, _off) \
    ((void *)((char *)(_ptr) + (ptrdiff_t)(_off)))
/**
 * Distance in bytes from @a _start to @a _end (a ptrdiff_t).
 * @param _start  First pointer.
 * @param _end    Second pointer.
 */
#define UCS_PTR_BYTE_DIFF(_start, _end) \
    ((ptrdiff_t)((const char *)(_end) - (const char *)(_start)))

/**
 * The smaller of two values; each may be evaluated twice.
 * @param _a  First value.
 * @param _b  Second value.
 */
#define ucs_min(_a, _b) ((_a) < (_b) ? (_a) : (_b))
/**
 * The larger of two values; each may be evaluated twice.
 * @param _a  First value.
 * @param _b  Second value.
 */
#define ucs_max(_a, _b) ((_a) > (_b) ? (_a) : (_b))

/**
 * Round @a _n up to a multiple of @a _a (any positive value).
 * @param _n  Value to round.
 * @param _a  Alignment, > 0.
 */
#define ucs_align_up(_n, _a) ((((_n) + (_a)-1) / (_a)) * (_a))
/**
 * Round @a _n down to a multiple of @a _a (any positive value).
 * @param _n  Value to round.
 * @param _a  Alignment, > 0.
 */
#define ucs_align_down(_n, _a) (((_n) / (_a)) * (_a))
/**
 * Round @a _n up to a multiple of the power of two @a _a; the result has
 * the type of @a _n.
 * @param _n  Value to round.
 * @param _a  Alignment, a power of two.
 */
#define ucs_align_up_pow2(_n, _a) (((_n) + (_a)-1) & ~((__typeof__(_n))(_a)-1))
/**
 * Round @a _n down to a multiple of the power of two @a _a.
 * @param _n  Value to round.
 * @param _a  Alignment, a power of two.
 */
#define ucs_align_down_pow2(_n, _a) ((_n) & ~((__typeof__(_n))(_a)-1))
/**
 * Nonzero if @a _n is a power of two (0 is not).
 * @param _n  Value to test.
 */
#define ucs_is_pow2(_n) (((_n) > 0) && !((_n) & ((_n)-1)))

/* Compile-time checks. */
#ifdef __cplusplus
#define UCS_STATIC_ASSERT(_cond) static_assert(_cond, #_cond)
#else
/**
 * Fail the compilation if the constant expression @a _cond is false;
 * static_assert in C++, _Static_assert in C.
 * @param _cond  Constant expression.
 */
#define UCS_STATIC_ASSERT(_cond) _Static_assert(_cond, #_cond)
#endif
/**
 * Fail the compilation if @a _type is larger than @a _size bytes.
 * @param _type  A type.
 * @param _size  Largest allowed size in bytes.
 */
#define UCS_STATIC_ASSERT_SIZE_LE(_type, _size) \
    UCS_STATIC_ASSERT(sizeof(_type) <= (_size))

/**
 * Compiler barrier: no memory access is moved across it by the compiler.
 * Emits no instruction; it is not a CPU memory barrier.
 */
#define ucs_compiler_fence() __asm__ __volatile__("" ::: "memory")

/**
 * Helper of UCS_PP_QUOTE(): quotes its argument without expanding it.
 * @param _x  Tokens to quote.
 */
#define UCS_PP_QUOTE_(_x) #_x
/**
 * The string literal of @a _x after macro expansion.
 * @param _x  Tokens (or a macro) to quote.
 */
#define UCS_PP_QUOTE(_x) UCS_PP_QUOTE_(_x)

#endif
