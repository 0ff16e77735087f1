/**
 * @file
 * Types and constants of UCX's profiling interface, for programs written
 * against it. openuct has no built-in profiler: the UCS_PROFILE_* macros of
 * ucs/profile/profile_on.h and ucs/profile/profile_off.h expand to the
 * wrapped code alone, and nothing here is ever recorded. Profile code with
 * perf(1) or valgrind's callgrind instead. Included by profile_on.h and
 * profile_off.h.
 */
#ifndef UCS_PROFILE_PROFILE_DEFS_H_
#define UCS_PROFILE_PROFILE_DEFS_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS

/** Deepest nesting of profiled scopes a profiler would track. */
#define UCS_PROFILE_STACK_MAX 64

/**
 * A statement that does nothing, usable wherever a statement is, including
 * as the body of an if without braces.
 */
#ifndef UCS_EMPTY_STATEMENT
#define UCS_EMPTY_STATEMENT ((void)0)
#endif

/** Profiling modes a profiler may be configured with. */
enum {
    UCS_PROFILE_MODE_ACCUM, /**< Sum the time spent at each location */
    UCS_PROFILE_MODE_LOG,   /**< Keep every event in order */
    UCS_PROFILE_MODE_LAST   /**< Number of modes */
};

/** Kinds of profiling events the UCS_PROFILE_* macros describe. */
typedef enum {
    UCS_PROFILE_TYPE_SAMPLE,        /**< A single point in time */
    UCS_PROFILE_TYPE_SCOPE_BEGIN,   /**< Entering a scope or function */
    UCS_PROFILE_TYPE_SCOPE_END,     /**< Leaving a scope or function */
    UCS_PROFILE_TYPE_REQUEST_NEW,   /**< An asynchronous request starts */
    UCS_PROFILE_TYPE_REQUEST_EVENT, /**< An asynchronous request progresses */
    UCS_PROFILE_TYPE_REQUEST_FREE,  /**< An asynchronous request ends */
    UCS_PROFILE_TYPE_LAST           /**< Number of event kinds */
} ucs_profile_type_t;

/**
 * A profiling context; only declared, since openuct never creates one.
 */
typedef struct ucs_profile_context ucs_profile_context_t;

END_C_DECLS

#endif
