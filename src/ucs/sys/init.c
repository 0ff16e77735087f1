/*
 * libucs load and unload: read the global options, apply logging, and
 * release them again.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <ucs/config/global_opts.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>

static void UCS_F_CTOR ucs_init(void)
{
    /* A bad value is reported and its default kept: nothing else to do */
    ucs_global_opts_init();
}

static void UCS_F_DTOR ucs_cleanup(void)
{
    ucs_global_opts_release();
    ucs_log_cleanup();
}
