/**
 * @file
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
 *   2. (directory of the library holding the anchor)/openuct;
 *   3. the build tree's module directory, when that library lies in the
 *      build tree;
 *   4. the installed module directory ($libdir/openuct).
 * UCX_MODULES filters by name ("self,tcp", "^ib"); a listed name that no
 * module of the framework has, or an empty value, draws one warning with the
 * available modules. Loaded modules stay loaded until the process exits.
 *
 * Included by libuct (which loads the "uct" framework) and by every module,
 * for the symbol names and the version macros. All functions are
 * thread-safe; a module's init may itself load modules.
 */
#ifndef UCS_SYS_MODULE_H_
#define UCS_SYS_MODULE_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS

/** Name of the uint32_t a module exports with its API version. */
#define UCS_MODULE_API_VERSION_SYMBOL "ucs_module_api_version"
/** Name of the module's ucs_module_init_func_t. */
#define UCS_MODULE_INIT_SYMBOL "ucs_module_init"
/** Name of the module's optional ucs_module_cleanup_func_t. */
#define UCS_MODULE_CLEANUP_SYMBOL "ucs_module_cleanup"

/**
 * The module ABI version number of a (major, minor) pair. This is the
 * loader's own version, unrelated to UCT_API.
 * @param _major  Major number; modules of another major are refused.
 * @param _minor  Minor number, 0 to 65535.
 */
#define UCS_MODULE_API_VERSION(_major, _minor) \
    ((uint32_t)(((uint32_t)(_major) << 16) | ((uint32_t)(_minor)&0xffff)))
/**
 * The major number of a module API version.
 * @param _version  A value of UCS_MODULE_API_VERSION().
 */
#define UCS_MODULE_API_MAJOR(_version) ((uint32_t)(_version) >> 16)
/**
 * The minor number of a module API version.
 * @param _version  A value of UCS_MODULE_API_VERSION().
 */
#define UCS_MODULE_API_MINOR(_version) ((uint32_t)(_version)&0xffff)

/**
 * A module's init function, called once after the module is loaded and its
 * version accepted. A status other than UCS_OK is reported as a warning and
 * the module is unloaded.
 *
 * @return UCS_OK, or an error status of the module's choice.
 */
typedef ucs_status_t (*ucs_module_init_func_t)(void);
/** A module's optional cleanup function, called at process exit. */
typedef void (*ucs_module_cleanup_func_t)(void);

/**
 * Callback of ucs_modules_for_each(), run with the module registry locked.
 *
 * @param [in] name  The module's name ("tcp"); valid during the call.
 * @param [in] path  The module's file path; valid during the call.
 * @param [in] arg   The argument given to ucs_modules_for_each().
 */
typedef void (*ucs_module_for_each_cb_t)(const char *name, const char *path,
                                         void *arg);

/**
 * Load every lib<framework>_<name>.so of the search path, once per
 * framework (later calls return at once; concurrent callers wait for the
 * first). A module that cannot be loaded draws a warning naming its file and
 * the others still load. Errors are only logged; there is no status.
 *
 * @param [in] framework    e.g. "uct".
 * @param [in] api_version  UCS_MODULE_API_VERSION(major, minor) of the
 *                          caller; modules must match its major number.
 * @param [in] anchor       An address inside the calling library (a
 *                          function of it), to find the modules next to it;
 *                          may be NULL.
 */
void ucs_modules_load(const char *framework, uint32_t api_version,
                      const void *anchor);

/**
 * Number of modules of @a framework loaded so far.
 *
 * @param [in] framework  Framework name, e.g. "uct".
 *
 * @return The count; 0 if the framework was never loaded.
 */
unsigned ucs_modules_loaded_count(const char *framework);

/**
 * Call @a cb for each loaded module of @a framework, in load order, in the
 * calling thread.
 *
 * @param [in] framework  Framework name, e.g. "uct".
 * @param [in] cb         Callback.
 * @param [in] arg        Passed to @a cb.
 */
void ucs_modules_for_each(const char *framework, ucs_module_for_each_cb_t cb,
                          void *arg);

END_C_DECLS

#endif
