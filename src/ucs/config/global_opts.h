#ifndef UCS_CONFIG_GLOBAL_OPTS_H_
#define UCS_CONFIG_GLOBAL_OPTS_H_

/**
 * @file
 * Process-wide options of libucs (UCX_LOG_LEVEL, UCX_MODULE_DIR, ...),
 * read when the library is loaded. Tools include it to print or re-read
 * them; the values are read-only for applications.
 */

#include <ucs/config/parser.h>
#include <ucs/config/types.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/** The global options; each field is read from the variable named. */
typedef struct ucs_global_opts {
    ucs_log_level_t log_level;       /**< UCX_LOG_LEVEL */
    char *log_file;                  /**< UCX_LOG_FILE */
    char *module_dir;                /**< UCX_MODULE_DIR */
    ucs_config_allow_list_t modules; /**< UCX_MODULES */
    /** UCX_WARN_UNUSED_ENV_VARS */
    int warn_unused_env_vars;
    int vfs_enable;            /**< UCX_VFS_ENABLE */
    double vfs_retry_interval; /**< UCX_VFS_RETRY_INTERVAL,
                                  seconds */
    char *vfs_sock_dir;        /**< UCX_VFS_SOCK_DIR */
    char *vfs_mount_dir;       /**< UCX_VFS_MOUNT_DIR */
} ucs_global_opts_t;

/** The current values; valid from library load to unload. */
extern ucs_global_opts_t ucs_global_opts;

/** The configuration table of ucs_global_opts_t (registered with an empty
 *  prefix, so its variables are UCX_<NAME>). */
extern const ucs_config_field_t ucs_global_opts_table[];

/**
 * (Re)read the global options from defaults, file and environment and apply
 * the log level and log file. A bad value is reported (variable, value and
 * accepted form) and its default kept. Called when libucs is loaded; not
 * thread-safe with other users of ucs_global_opts.
 *
 * @return UCS_OK, or the error of reading the options (e.g.
 *         UCS_ERR_NO_MEMORY); the previous values are kept on failure.
 */
ucs_status_t ucs_global_opts_init(void);

/** Free the strings of the global options; called when libucs is
 *  unloaded. */
void ucs_global_opts_release(void);

END_C_DECLS

#endif
