/*
 * How many threads may call into an object, as promised by its creator.
 */
#ifndef UCS_TYPE_THREAD_MODE_H_
#define UCS_TYPE_THREAD_MODE_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

typedef enum {
    UCS_THREAD_MODE_SINGLE,     /* one thread, always the same one */
    UCS_THREAD_MODE_SERIALIZED, /* any thread, one at a time */
    UCS_THREAD_MODE_MULTI,      /* several threads at once */
    UCS_THREAD_MODE_LAST
} ucs_thread_mode_t;

/** "single", "serialized", "multi"; indexed by ucs_thread_mode_t. */
extern const char *ucs_thread_mode_names[];

END_C_DECLS

#endif
