/*
 * uct_info -v and -b: version, loaded modules and build configuration.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "uct_info.h"

#include <uct/api/uct.h>
#include <uct/api/version.h>
#include <ucs/sys/module.h>

#include <stdio.h>

#ifndef UCT_BUILD_CONFIGURE_ARGS
#define UCT_BUILD_CONFIGURE_ARGS ""
#endif

#ifndef UCT_INFO_MODULE_DIR
#define UCT_INFO_MODULE_DIR ""
#endif

/* Set by Makefile.am from configure's results */
#ifndef UCT_INFO_CC
#define UCT_INFO_CC ""
#endif
#ifndef UCT_INFO_CFLAGS
#define UCT_INFO_CFLAGS ""
#endif
#ifndef UCT_INFO_MODULES
#define UCT_INFO_MODULES ""
#endif
#ifndef UCT_INFO_TOOLS
#define UCT_INFO_TOOLS ""
#endif

static void uct_info_print_module(const char *name, const char *path, void *arg)
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
           "%d.%d\n",
           OPENUCT_VERSION_STRING, UCT_VERNO_MAJOR, UCT_VERNO_MINOR,
           UCT_VERNO_PATCH, UCT_MODULE_API_MAJOR, UCT_MODULE_API_MINOR);
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

/* "#define NAME value", aligned as config.h lists them */
static void uct_info_print_define(const char *name, const char *value)
{
    printf("#define %-28s %s\n", name, value);
}

static void uct_info_print_str_define(const char *name, const char *value)
{
    printf("#define %-28s \"%s\"\n", name, value);
}

static void uct_info_print_undef(const char *name)
{
    printf("/* #undef %s */\n", name);
}

#define UCT_INFO_STR_(_x) #_x
#define UCT_INFO_STR(_x)  UCT_INFO_STR_(_x)

/* A config.h flag: its value when defined (value != NULL), the #undef
 * line otherwise */
static void uct_info_print_flag(const char *name, const char *value)
{
    if (value != NULL) {
        uct_info_print_define(name, value);
    } else {
        uct_info_print_undef(name);
    }
}

void uct_info_print_build_config(void)
{
    char api[32];

    uct_info_print_str_define("OPENUCT_VERSION_STRING", OPENUCT_VERSION_STRING);
    uct_info_print_str_define("UCT_VERNO_STRING", UCT_VERNO_STRING);
    snprintf(api, sizeof(api), "0x%lx", (unsigned long)UCT_API);
    uct_info_print_define("UCT_API", api);
    uct_info_print_define("UCT_MODULE_API_MAJOR",
                          UCT_INFO_STR(UCT_MODULE_API_MAJOR));
    uct_info_print_define("UCT_MODULE_API_MINOR",
                          UCT_INFO_STR(UCT_MODULE_API_MINOR));

#ifdef ENABLE_DEBUG
    uct_info_print_flag("ENABLE_DEBUG", UCT_INFO_STR(ENABLE_DEBUG));
#else
    uct_info_print_flag("ENABLE_DEBUG", NULL);
#endif
#ifdef ENABLE_ASSERT
    uct_info_print_flag("ENABLE_ASSERT", UCT_INFO_STR(ENABLE_ASSERT));
#else
    uct_info_print_flag("ENABLE_ASSERT", NULL);
#endif
#ifdef ENABLE_ASAN
    uct_info_print_flag("ENABLE_ASAN", UCT_INFO_STR(ENABLE_ASAN));
#else
    uct_info_print_flag("ENABLE_ASAN", NULL);
#endif
#ifdef ENABLE_STATS
    uct_info_print_flag("ENABLE_STATS", UCT_INFO_STR(ENABLE_STATS));
#else
    uct_info_print_flag("ENABLE_STATS", NULL);
#endif
#ifdef ENABLE_FUZZ
    uct_info_print_flag("ENABLE_FUZZ", UCT_INFO_STR(ENABLE_FUZZ));
#else
    uct_info_print_flag("ENABLE_FUZZ", NULL);
#endif
#ifdef HAVE_HWLOC
    uct_info_print_flag("HAVE_HWLOC", UCT_INFO_STR(HAVE_HWLOC));
#else
    uct_info_print_flag("HAVE_HWLOC", NULL);
#endif
#ifdef HAVE_VERBS
    uct_info_print_flag("HAVE_VERBS", UCT_INFO_STR(HAVE_VERBS));
#else
    uct_info_print_flag("HAVE_VERBS", NULL);
#endif
#ifdef UCT_INFO_HAVE_FUSE3
    uct_info_print_flag("HAVE_FUSE3", "1");
#else
    uct_info_print_flag("HAVE_FUSE3", NULL);
#endif
#ifdef HAVE_VALGRIND_VALGRIND_H
    uct_info_print_flag("HAVE_VALGRIND_VALGRIND_H",
                        UCT_INFO_STR(HAVE_VALGRIND_VALGRIND_H));
#else
    uct_info_print_flag("HAVE_VALGRIND_VALGRIND_H", NULL);
#endif

    uct_info_print_str_define("UCT_BUILD_CONFIGURE_ARGS",
                              UCT_BUILD_CONFIGURE_ARGS);
    uct_info_print_str_define("UCT_BUILD_CC", UCT_INFO_CC);
    uct_info_print_str_define("UCT_BUILD_COMPILER", __VERSION__);
    uct_info_print_str_define("UCT_BUILD_CFLAGS", UCT_INFO_CFLAGS);
    uct_info_print_str_define("UCT_BUILD_MODULES", UCT_INFO_MODULES);
    uct_info_print_str_define("UCT_BUILD_TOOLS", UCT_INFO_TOOLS);
    uct_info_print_str_define("UCT_MODULE_DIR", UCT_INFO_MODULE_DIR);
}
