/*
 * Compiled as C: a program written for UCX includes the public ucs headers
 * by their UCX paths together with uct.h, and uses the string, arithmetic
 * and profiling helpers. test_string_math.cc runs it.
 */
#include "ucx_headers_c.h"

#include <uct/api/uct.h>
#include <ucs/async/async_fwd.h>
#include <ucs/config/types.h>
#include <ucs/datastruct/callbackq.h>
#include <ucs/datastruct/linear_func.h>
#include <ucs/datastruct/list.h>
#include <ucs/memory/memory_type.h>
#include <ucs/profile/profile_on.h>
#include <ucs/stats/stats_fwd.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/event_set.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/time/time_def.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/status.h>
#include <ucs/type/thread_mode.h>

static int ucx_headers_c_calls;

static UCS_PROFILE_FUNC(int, ucx_headers_c_add, (a, b), int a, int b)
{
    ++ucx_headers_c_calls;
    return a + b;
}

static UCS_PROFILE_FUNC_VOID(ucx_headers_c_bump, (n), int n)
{
    ucx_headers_c_calls += n;
}

int ucs_test_ucx_headers_c(char *buf, size_t max)
{
    ucs_stats_node_t *stats_root = NULL;
    ucs_linear_func_t func       = ucs_linear_func_make(1.0, 2.0);
    ucs_sys_device_t sys_dev     = UCS_SYS_DEVICE_ID_UNKNOWN;
    size_t size;
    int sum;

    ucx_headers_c_calls = 0;
    UCS_PROFILE_SCOPE_BEGIN();
    sum = UCS_PROFILE_CALL(ucx_headers_c_add, 40, 2);
    UCS_PROFILE_SCOPE_END("add");
    UCS_PROFILE_CALL_VOID(ucx_headers_c_bump, 10);
    UCS_PROFILE_CODE("block")
    {
        ucx_headers_c_calls += 100;
    }
    UCS_PROFILE_SAMPLE("sample");
    UCS_PROFILE_REQUEST_NEW(&sum, "request", 0);
    UCS_PROFILE_REQUEST_FREE(&sum);

    if ((sum != 42) || (ucx_headers_c_calls != 111) || (stats_root != NULL) ||
        (ucs_linear_func_apply(func, 3.0) != 7.0) ||
        (sys_dev != UCS_SYS_DEVICE_ID_UNKNOWN) ||
        (ucs_str_to_memunits("2m", &size) != UCS_OK) ||
        (size != 2 * UCS_MBYTE) || (ucs_ilog2(size) != 21) ||
        (ucs_div_round_up(7, 2) != 4) || !ucs_is_pow2(size)) {
        return -1;
    }

    ucs_memunits_to_str(size, buf, max);
    return sum;
}
