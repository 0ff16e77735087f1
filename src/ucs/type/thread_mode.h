/**
 * @file
 * How many threads may call into an object, as promised by its creator.
 * Included by uct.h: a worker is created with a thread mode, and every
 * interface and endpoint on it inherits the promise.
 */
#ifndef UCS_TYPE_THREAD_MODE_H_
#define UCS_TYPE_THREAD_MODE_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/** Thread mode: who may call into an object. */
typedef enum {
    UCS_THREAD_MODE_SINGLE,     /**< One thread, always the same one. */
    UCS_THREAD_MODE_SERIALIZED, /**< Any thread, one at a time (the caller
                                     serializes). */
    UCS_THREAD_MODE_MULTI,      /**< Several threads at once. */
    UCS_THREAD_MODE_LAST        /**< Number of modes; not a mode. */
} ucs_thread_mode_t;

/** "single", "serialized", "multi"; indexed by ucs_thread_mode_t. */
extern const char *ucs_thread_mode_names[];

END_C_DECLS

#endif
