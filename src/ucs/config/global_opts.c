/*
 * The global options table and its reader.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/config/global_opts.h>

#include <pthread.h>
#include <stdio.h>

ucs_global_opts_t ucs_global_opts = {
    .log_level            = UCS_LOG_LEVEL_WARN,
    .modules              = {{NULL, 0}, UCS_CONFIG_ALLOW_LIST_ALLOW_ALL},
    .warn_unused_env_vars = 1,
    .vfs_retry_interval   = 1.0};

static pthread_mutex_t ucs_global_opts_lock = PTHREAD_MUTEX_INITIALIZER;
static int ucs_global_opts_filled           = 0;

/* Log levels also accept "warning", like ucs_log_level_parse() */
static ucs_status_t ucs_global_opts_log_level_read(const char *buf, void *dest,
                                                   const void *arg)
{
    ucs_log_level_t level;

    if (ucs_log_level_parse(buf, &level) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(ucs_log_level_t *)dest = level;
    return UCS_OK;
}

#define UCS_GLOBAL_OPTS_TYPE_LOG_LEVEL                                     \
    {                                                                      \
        ucs_global_opts_log_level_read, ucs_config_enum_write, NULL, NULL, \
            ucs_config_enum_help, ucs_log_level_names,                     \
            sizeof(ucs_log_level_t), 0                                     \
    }

const ucs_config_field_t ucs_global_opts_table[] = {
    {"LOG_LEVEL", "warn",
     "Logging level: messages of this level and more severe are printed.",
     ucs_offsetof(ucs_global_opts_t, log_level),
     UCS_GLOBAL_OPTS_TYPE_LOG_LEVEL},

    {"LOG_FILE", "",
     "Destination of log messages: empty or \"stderr\", \"stdout\", or a\n"
     "file name in which %p expands to the process id and %h to the host.",
     ucs_offsetof(ucs_global_opts_t, log_file), UCS_CONFIG_TYPE_STRING},

    {"MODULE_DIR", "",
     "Colon-separated directories searched for modules before the default\n"
     "ones (next to the library, then the installed module directory).",
     ucs_offsetof(ucs_global_opts_t, module_dir), UCS_CONFIG_TYPE_STRING},

    {"MODULES", "all",
     "Modules to load, by name: \"all\", a list such as \"self,tcp\", or\n"
     "\"^ib\" for all but the listed ones.",
     ucs_offsetof(ucs_global_opts_t, modules), UCS_CONFIG_TYPE_ALLOW_LIST},

    {"WARN_UNUSED_ENV_VARS", "y",
     "Warn once about UCX_ environment variables that no component uses,\n"
     "which usually are misspelled names.",
     ucs_offsetof(ucs_global_opts_t, warn_unused_env_vars),
     UCS_CONFIG_TYPE_BOOL},

    {"VFS_ENABLE", "n",
     "Connect to the uct_vfs daemon so that this process's objects can be\n"
     "browsed. The connection starts with the first object the process\n"
     "creates and is retried while the daemon is not running.",
     ucs_offsetof(ucs_global_opts_t, vfs_enable), UCS_CONFIG_TYPE_BOOL},

    {"VFS_RETRY_INTERVAL", "1s",
     "How often to look for the uct_vfs daemon when it is not there.",
     ucs_offsetof(ucs_global_opts_t, vfs_retry_interval), UCS_CONFIG_TYPE_TIME},

    {"VFS_SOCK_DIR", "",
     "Directory of the uct_vfs daemon's socket; it must belong to the user\n"
     "and be closed to others (mode 0700). Empty: $XDG_RUNTIME_DIR/openuct,\n"
     "or /tmp/openuct-<uid> without XDG_RUNTIME_DIR. Read from the\n"
     "environment when the connection starts.",
     ucs_offsetof(ucs_global_opts_t, vfs_sock_dir), UCS_CONFIG_TYPE_STRING},

    {"VFS_MOUNT_DIR", "",
     "Where the uct_vfs daemon mounts the tree of every connected process\n"
     "(read by uct_vfs only). Empty: $XDG_RUNTIME_DIR/openuct-vfs, or\n"
     "/tmp/openuct-vfs-<uid> without XDG_RUNTIME_DIR.",
     ucs_offsetof(ucs_global_opts_t, vfs_mount_dir), UCS_CONFIG_TYPE_STRING},

    {NULL}};

UCS_CONFIG_REGISTER_TABLE(ucs_global_opts_table, "Global", "",
                          ucs_global_opts_t)

ucs_status_t ucs_global_opts_init(void)
{
    ucs_global_opts_t opts;
    ucs_status_t status;

    status = ucs_config_parser_fill_opts(&opts, ucs_global_opts_table,
                                         UCS_DEFAULT_ENV_PREFIX, NULL, 1);
    if (status != UCS_OK) {
        ucs_error("failed to read the global options: %s; using defaults",
                  ucs_status_string(status));
        return status;
    }

    pthread_mutex_lock(&ucs_global_opts_lock);
    if (ucs_global_opts_filled) {
        ucs_config_parser_release_opts(&ucs_global_opts, ucs_global_opts_table);
    }
    ucs_global_opts        = opts;
    ucs_global_opts_filled = 1;
    pthread_mutex_unlock(&ucs_global_opts_lock);

    ucs_log_set_level(ucs_global_opts.log_level);
    /* ucs_log_set_file() reports its own failure and keeps stderr */
    ucs_log_set_file(ucs_global_opts.log_file);
    return UCS_OK;
}

void ucs_global_opts_release(void)
{
    pthread_mutex_lock(&ucs_global_opts_lock);
    if (ucs_global_opts_filled) {
        ucs_config_parser_release_opts(&ucs_global_opts, ucs_global_opts_table);
        ucs_global_opts_filled = 0;
    }
    pthread_mutex_unlock(&ucs_global_opts_lock);
}
