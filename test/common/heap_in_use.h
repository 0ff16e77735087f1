/*
 * The heap figure of the test programs that also build outside this tree
 * (tcp_ep_memory against UCX, tcp_flood against an older openuct, both
 * without config.h): ucs_sys_heap_in_use(), ucs_sys_heap_per_object() and
 * UCS_SYS_HEAP_DEFINITION of ucs/sys/sys.h in this tree's build
 * (HAVE_CONFIG_H), and the same definition written out here for the other
 * libraries, which do not have it: figures compared between libraries
 * are then measured the same way. Include it as "../common/heap_in_use.h",
 * since the other tree's test/common may come first on the include path.
 */
#ifndef TEST_COMMON_HEAP_IN_USE_H_
#define TEST_COMMON_HEAP_IN_USE_H_

#ifdef HAVE_CONFIG_H

#include <ucs/sys/sys.h>

#else

#include <malloc.h>
#include <stddef.h>

/* As in ucs/sys/sys.h */
#define UCS_SYS_HEAP_DEFINITION                                              \
    "heap = growth of mallinfo2() uordblks+hblkhd (all arenas and threads, " \
    "libibverbs and provider included) divided by the objects"

static inline size_t ucs_sys_heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}

static inline double ucs_sys_heap_per_object(size_t before, size_t after,
                                             size_t count)
{
    return (count == 0) ? 0 : ((double)after - (double)before) / count;
}

#endif

#endif
