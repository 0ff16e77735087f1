/*
 * libucs load and unload: read the global options, apply logging, and
 * release them again.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/config/global_opts.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>

/* Runs before the other constructors of libucs, so that they log with the
 * configured level */
static void __attribute__((constructor(101))) ucs_init(void)
{
    /* A bad value is reported and its default kept: nothing else to do */
    ucs_global_opts_init();
}

/* Runs after the other destructors of libucs */
static void __attribute__((destructor(101))) ucs_cleanup(void)
{
    ucs_global_opts_release();
    ucs_log_cleanup();
}
