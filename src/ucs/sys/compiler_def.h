/*
 * Compiler attributes and small helpers shared by every layer.
 */
#ifndef UCS_SYS_COMPILER_DEF_H_
#define UCS_SYS_COMPILER_DEF_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#  define BEGIN_C_DECLS extern "C" {
#  define END_C_DECLS   }
#else
#  define BEGIN_C_DECLS
#  define END_C_DECLS
#endif

#define UCS_F_ALWAYS_INLINE      inline __attribute__((always_inline))
#define UCS_F_NOINLINE           __attribute__((noinline))
#define UCS_F_NORETURN           __attribute__((noreturn))
#define UCS_F_MAYBE_UNUSED       __attribute__((unused))
#define UCS_V_UNUSED             __attribute__((unused))
#define UCS_F_CTOR               __attribute__((constructor))
#define UCS_F_DTOR               __attribute__((destructor))
#define UCS_F_PRINTF(_fmt, _var) __attribute__((format(printf, _fmt, _var)))
#define UCS_F_NON_NULL           __attribute__((nonnull))
#define UCS_S_PACKED             __attribute__((packed))
#define UCS_V_ALIGNED(_a)        __attribute__((aligned(_a)))
#define UCS_F_API                __attribute__((visibility("default")))

#define ucs_likely(_x)   __builtin_expect(!!(_x), 1)
#define ucs_unlikely(_x) __builtin_expect(!!(_x), 0)

/** A 64-bit mask with only bit @a _i set. */
#define UCS_BIT(_i)      (1ull << (_i))
/** A 64-bit mask with the low @a _n bits set (0 <= _n <= 64). */
#define UCS_MASK(_n)     (((_n) >= 64) ? ~0ull : (UCS_BIT(_n) - 1))

#define UCS_CACHE_LINE_SIZE 64

#define ucs_static_array_size(_a) (sizeof(_a) / sizeof((_a)[0]))

#define ucs_offsetof(_type, _member) offsetof(_type, _member)

/** From a pointer to a member back to its enclosing structure. */
#define ucs_container_of(_ptr, _type, _member) \
    ((_type*)((char*)(_ptr) - offsetof(_type, _member)))

#define UCS_PTR_BYTE_OFFSET(_ptr, _off) \
    ((void*)((char*)(_ptr) + (ptrdiff_t)(_off)))
#define UCS_PTR_BYTE_DIFF(_start, _end) \
    ((ptrdiff_t)((const char*)(_end) - (const char*)(_start)))

#define ucs_min(_a, _b) ((_a) < (_b) ? (_a) : (_b))
#define ucs_max(_a, _b) ((_a) > (_b) ? (_a) : (_b))

/** Round @a _n up to a multiple of @a _a (any positive value). */
#define ucs_align_up(_n, _a)   ((((_n) + (_a) - 1) / (_a)) * (_a))
#define ucs_align_down(_n, _a) (((_n) / (_a)) * (_a))
/** Power-of-two alignment helpers. */
#define ucs_align_up_pow2(_n, _a)   (((_n) + (_a) - 1) & ~((__typeof__(_n))(_a) - 1))
#define ucs_align_down_pow2(_n, _a) ((_n) & ~((__typeof__(_n))(_a) - 1))
#define ucs_is_pow2(_n)             (((_n) > 0) && !((_n) & ((_n) - 1)))

/** Compile-time checks. */
#ifdef __cplusplus
#  define UCS_STATIC_ASSERT(_cond) static_assert(_cond, #_cond)
#else
#  define UCS_STATIC_ASSERT(_cond) _Static_assert(_cond, #_cond)
#endif
#define UCS_STATIC_ASSERT_SIZE_LE(_type, _size) \
    UCS_STATIC_ASSERT(sizeof(_type) <= (_size))

#define ucs_compiler_fence() __asm__ __volatile__("" ::: "memory")

#define UCS_PP_QUOTE_(_x) #_x
#define UCS_PP_QUOTE(_x)  UCS_PP_QUOTE_(_x)

#endif
