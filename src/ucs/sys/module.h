/*
 * Loadable modules: lib<framework>_<name>.so files that are dlopen()ed on
 * demand, such as libuct_tcp.so for framework "uct".
 *
 * A module exports
 *   const uint32_t ucs_module_api_version;       (UCS_MODULE_API_VERSION())
 *   ucs_status_t   ucs_module_init(void);
 * and optionally "ucs_module_cleanup" (void (*)(void)), which is called at
 * process exit. A module built for another major API version is refused
 * before its init runs. Register components from ucs_module_init(): a
 * refused module's constructors have already run when it is unloaded, so
 * whatever a constructor registers must be unregistered by a destructor
 * (UCS_CONFIG_REGISTER_TABLE does so).
 *
 * Search path, a name found earlier shadowing later ones:
 *   1. each directory of UCX_MODULE_DIR (colon-separated);
 *   2. <directory of the library holding the anchor>/openuct;
 *   3. the build tree's module directory, when that library lies in the
 *      build tree;
 *   4. the installed module directory ($libdir/openuct).
 * UCX_MODULES filters by name ("self,tcp", "^ib"); a listed name that no
 * module of the framework has, or an empty value, draws one warning with the
 * available modules. Loaded modules stay loaded until the process exits.
 */
#ifndef UCS_SYS_MODULE_H_
#define UCS_SYS_MODULE_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS

#define UCS_MODULE_API_VERSION_SYMBOL "ucs_module_api_version"
#define UCS_MODULE_INIT_SYMBOL        "ucs_module_init"
#define UCS_MODULE_CLEANUP_SYMBOL     "ucs_module_cleanup"

#define UCS_MODULE_API_VERSION(_major, _minor) \
    ((uint32_t)(((uint32_t)(_major) << 16) | ((uint32_t)(_minor) & 0xffff)))
#define UCS_MODULE_API_MAJOR(_version) ((uint32_t)(_version) >> 16)
#define UCS_MODULE_API_MINOR(_version) ((uint32_t)(_version) & 0xffff)

typedef ucs_status_t (*ucs_module_init_func_t)(void);
typedef void (*ucs_module_cleanup_func_t)(void);

/** Called for each loaded module: its name ("tcp") and file path. */
typedef void (*ucs_module_for_each_cb_t)(const char *name, const char *path,
                                         void *arg);

/**
 * Load every lib<framework>_<name>.so of the search path, once per
 * framework (later calls return at once; concurrent callers wait for the
 * first). A module that cannot be loaded draws a warning naming its file and
 * the others still load.
 *
 * @param framework    e.g. "uct".
 * @param api_version  UCS_MODULE_API_VERSION(major, minor) of the caller;
 *                     modules must match its major number.
 * @param anchor       an address inside the calling library (a function of
 *                     it), to find the modules next to it; may be NULL.
 */
void ucs_modules_load(const char *framework, uint32_t api_version,
                      const void *anchor);

/** Number of modules of @a framework loaded so far. */
unsigned ucs_modules_loaded_count(const char *framework);

/** Call @a cb for each loaded module of @a framework, in load order. */
void ucs_modules_for_each(const char *framework, ucs_module_for_each_cb_t cb,
                          void *arg);

END_C_DECLS

#endif
