/*
 * uct_info -v and -b: version, loaded modules and build configuration.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "uct_info.h"

#include <uct/api/uct.h>
#include <uct/api/version.h>
#include <ucs/sys/module.h>

#include <stdio.h>

#ifndef UCT_BUILD_CONFIGURE_ARGS
#  define UCT_BUILD_CONFIGURE_ARGS ""
#endif

#ifndef UCT_INFO_MODULE_DIR
#  define UCT_INFO_MODULE_DIR ""
#endif

static void uct_info_print_module(const char *name, const char *path,
                                  void *arg)
{
    unsigned *count = arg;

    printf("#   %-12s %s\n", name, path);
    ++(*count);
}

void uct_info_print_version(void)
{
    uct_component_h *components;
    unsigned num_components;
    unsigned count = 0;

    printf("# openuct version %s, UCT API %d.%d.%d (UCX's), module API "
           "%d.%d\n", OPENUCT_VERSION_STRING, UCT_VERNO_MAJOR,
           UCT_VERNO_MINOR, UCT_VERNO_PATCH, UCT_MODULE_API_MAJOR,
           UCT_MODULE_API_MINOR);
    printf("# configured with: %s\n", UCT_BUILD_CONFIGURE_ARGS);
    printf("# installed module directory: %s\n", UCT_INFO_MODULE_DIR);

    /* Listing the components loads the transport modules */
    if (uct_query_components(&components, &num_components) == UCS_OK) {
        uct_release_component_list(components);
    }

    printf("# loaded modules:\n");
    ucs_modules_for_each("uct", uct_info_print_module, &count);
    if (count == 0) {
        printf("#   (none; check UCX_MODULE_DIR and UCX_MODULES)\n");
    }
}

static void uct_info_print_define(const char *name, int defined,
                                  const char *value)
{
    if (defined) {
        printf("#define %s %s\n", name, value);
    } else {
        printf("/* #undef %s */\n", name);
    }
}

#define UCT_INFO_STR_(_x) #_x
#define UCT_INFO_STR(_x)  UCT_INFO_STR_(_x)

void uct_info_print_build_config(void)
{
    printf("#define OPENUCT_VERSION_STRING \"%s\"\n",
           OPENUCT_VERSION_STRING);
    printf("#define UCT_VERNO_STRING \"%s\"\n", UCT_VERNO_STRING);
    printf("#define UCT_API 0x%lx\n", (unsigned long)UCT_API);
    printf("#define UCT_MODULE_API_MAJOR %d\n", UCT_MODULE_API_MAJOR);
    printf("#define UCT_MODULE_API_MINOR %d\n", UCT_MODULE_API_MINOR);

#ifdef ENABLE_DEBUG
    uct_info_print_define("ENABLE_DEBUG", 1, UCT_INFO_STR(ENABLE_DEBUG));
#else
    uct_info_print_define("ENABLE_DEBUG", 0, NULL);
#endif
#ifdef ENABLE_ASSERT
    uct_info_print_define("ENABLE_ASSERT", 1, UCT_INFO_STR(ENABLE_ASSERT));
#else
    uct_info_print_define("ENABLE_ASSERT", 0, NULL);
#endif
#ifdef ENABLE_ASAN
    uct_info_print_define("ENABLE_ASAN", 1, UCT_INFO_STR(ENABLE_ASAN));
#else
    uct_info_print_define("ENABLE_ASAN", 0, NULL);
#endif
#ifdef HAVE_HWLOC
    uct_info_print_define("HAVE_HWLOC", 1, UCT_INFO_STR(HAVE_HWLOC));
#else
    uct_info_print_define("HAVE_HWLOC", 0, NULL);
#endif
#ifdef HAVE_VERBS
    uct_info_print_define("HAVE_VERBS", 1, UCT_INFO_STR(HAVE_VERBS));
#else
    uct_info_print_define("HAVE_VERBS", 0, NULL);
#endif
#ifdef HAVE_FUSE3
    uct_info_print_define("HAVE_FUSE3", 1, UCT_INFO_STR(HAVE_FUSE3));
#else
    uct_info_print_define("HAVE_FUSE3", 0, NULL);
#endif

    printf("#define UCT_BUILD_CONFIGURE_ARGS \"%s\"\n",
           UCT_BUILD_CONFIGURE_ARGS);
    printf("#define UCT_MODULE_DIR \"%s\"\n", UCT_INFO_MODULE_DIR);
}
