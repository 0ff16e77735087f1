/**
 * @file
 * Kinds of memory a buffer may live in. Only host memory is accessed by
 * openuct today, but programs compile code paths for device memory, so
 * every kind has a value and a name. Included by uct.h (memory domain
 * attributes and registration) and by tools that print memory types.
 */
#ifndef UCS_MEMORY_MEMORY_TYPE_H_
#define UCS_MEMORY_MEMORY_TYPE_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/**
 * Where a buffer lives. Values follow UCX's numbering so that masks built
 * with UCS_BIT() mean the same thing to programs written for UCX.
 */
typedef enum ucs_memory_type {
    UCS_MEMORY_TYPE_HOST,         /**< Ordinary system memory; the only
                                       kind openuct transports access. */
    UCS_MEMORY_TYPE_CUDA,         /**< NVIDIA GPU memory. */
    UCS_MEMORY_TYPE_CUDA_MANAGED, /**< NVIDIA unified memory. */
    UCS_MEMORY_TYPE_ROCM,         /**< AMD GPU memory. */
    UCS_MEMORY_TYPE_ROCM_MANAGED, /**< AMD managed memory. */
    UCS_MEMORY_TYPE_RDMA,         /**< RDMA device memory. */
    UCS_MEMORY_TYPE_ZE_HOST,      /**< oneAPI level-zero host memory. */
    UCS_MEMORY_TYPE_ZE_DEVICE,    /**< oneAPI level-zero device memory. */
    UCS_MEMORY_TYPE_ZE_MANAGED,   /**< oneAPI level-zero shared memory. */
    UCS_MEMORY_TYPE_LAST,         /**< Number of known types. */
    UCS_MEMORY_TYPE_UNKNOWN = UCS_MEMORY_TYPE_LAST /**< Type not known or
                                                        not detected. */
} ucs_memory_type_t;

/** Mask of the memory types the CPU can load from and store to. */
#define UCS_MEMORY_TYPES_CPU_ACCESSIBLE                                      \
    (UCS_BIT(UCS_MEMORY_TYPE_HOST) | UCS_BIT(UCS_MEMORY_TYPE_CUDA_MANAGED) | \
     UCS_BIT(UCS_MEMORY_TYPE_ROCM_MANAGED) |                                 \
     UCS_BIT(UCS_MEMORY_TYPE_ZE_HOST) | UCS_BIT(UCS_MEMORY_TYPE_ZE_MANAGED))

/**
 * Short lower-case names ("host", "cuda", "cuda-managed", ...), indexed by
 * ucs_memory_type_t; entry UCS_MEMORY_TYPE_LAST is "unknown".
 */
extern const char *ucs_memory_type_names[];

/** Longer descriptions, for tools; indexed like ucs_memory_type_names. */
extern const char *ucs_memory_type_descs[];

/**
 * Look a memory type up by name.
 *
 * @param [in] str  A name from ucs_memory_type_names (case-insensitive;
 *                  "_" and "-" are the same); may be NULL.
 *
 * @return The memory type called @a str, or UCS_MEMORY_TYPE_UNKNOWN if
 *         @a str is NULL or no type has that name.
 */
ucs_memory_type_t ucs_memory_type_from_str(const char *str);

/**
 * Iterate @a _type over every known memory type, HOST first.
 *
 * @param _type  An lvalue of type ucs_memory_type_t.
 */
#define ucs_memory_type_for_each(_type)                                  \
    for ((_type) = UCS_MEMORY_TYPE_HOST; (_type) < UCS_MEMORY_TYPE_LAST; \
         (_type) = (ucs_memory_type_t)((_type) + 1))

END_C_DECLS

#endif
