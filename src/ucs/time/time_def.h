/**
 * @file
 * The time type alone, for headers that store times but do not read the
 * clock (async_fwd.h, log_limit.h). Programs include <ucs/time/time.h>
 * instead, which includes this one.
 */
#ifndef UCS_TIME_TIME_DEF_H_
#define UCS_TIME_TIME_DEF_H_

#include <stdint.h>

/**
 * A point in time or an interval, in ticks of the clock behind
 * ucs_get_time(); convert with the helpers in <ucs/time/time.h>.
 */
typedef uint64_t ucs_time_t;

/** "Never" / "no limit". */
#define UCS_TIME_INFINITY ((ucs_time_t)UINT64_MAX)

/** "Let the library choose", for configuration values. */
#define UCS_TIME_AUTO ((ucs_time_t)(UINT64_MAX - 1))

#endif
