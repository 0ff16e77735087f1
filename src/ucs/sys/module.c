/*
 * Module loader: finds lib<framework>_<name>.so files along the search path
 * and dlopen()s them, once per framework.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr1, dlinfo */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/module.h>
#include <ucs/config/global_opts.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/debug/log.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef UCS_MODULE_BUILD_DIR
#define UCS_MODULE_BUILD_DIR ""
#endif
#ifndef UCS_MODULE_INSTALL_DIR
#define UCS_MODULE_INSTALL_DIR ""
#endif

#define UCS_MODULE_SUBDIR "openuct" /* next to the anchor library */

typedef struct {
    char *name;
    char *path;
    void *handle;
    ucs_module_cleanup_func_t cleanup;
} ucs_module_t;

typedef struct ucs_module_framework {
    struct ucs_module_framework *next;
    char *name;
    ucs_module_t *modules;
    unsigned count;
} ucs_module_framework_t;

/* A file found on the search path */
typedef struct {
    char *name;
    char *path;
} ucs_module_file_t;

typedef struct {
    ucs_module_file_t *files;
    unsigned count;
} ucs_module_files_t;

static struct {
    pthread_once_t once;
    pthread_mutex_t lock; /* recursive: an init may load modules */
    ucs_module_framework_t *frameworks;
    int atexit_done;
} ucs_module_ctx = {.once = PTHREAD_ONCE_INIT};

static void ucs_module_ctx_init(void)
{
    pthread_mutexattr_t attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&ucs_module_ctx.lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

static void ucs_module_lock(void)
{
    pthread_once(&ucs_module_ctx.once, ucs_module_ctx_init);
    pthread_mutex_lock(&ucs_module_ctx.lock);
}

static void ucs_module_unlock(void)
{
    pthread_mutex_unlock(&ucs_module_ctx.lock);
}

static ucs_module_framework_t *ucs_module_framework_find(const char *name)
{
    ucs_module_framework_t *fw;

    for (fw = ucs_module_ctx.frameworks; fw != NULL; fw = fw->next) {
        if (!strcmp(fw->name, name)) {
            return fw;
        }
    }
    return NULL;
}

/* Run the modules' cleanup functions at exit, last loaded first */
static void ucs_module_atexit(void)
{
    ucs_module_framework_t *fw;
    unsigned i;

    ucs_module_lock();
    for (fw = ucs_module_ctx.frameworks; fw != NULL; fw = fw->next) {
        for (i = fw->count; i > 0; --i) {
            if (fw->modules[i - 1].cleanup != NULL) {
                fw->modules[i - 1].cleanup();
            }
        }
    }
    ucs_module_unlock();
}

/* ---- search path --------------------------------------------------------- */

static void ucs_module_files_release(ucs_module_files_t *files)
{
    unsigned i;

    for (i = 0; i < files->count; ++i) {
        free(files->files[i].name);
        free(files->files[i].path);
    }
    free(files->files);
    files->files = NULL;
    files->count = 0;
}

static int ucs_module_files_has(const ucs_module_files_t *files,
                                const char *name)
{
    unsigned i;

    for (i = 0; i < files->count; ++i) {
        if (!strcmp(files->files[i].name, name)) {
            return 1;
        }
    }
    return 0;
}

static ucs_status_t ucs_module_files_add(ucs_module_files_t *files,
                                         const char *dir, const char *name,
                                         const char *file_name)
{
    ucs_module_file_t *array;
    ucs_module_file_t file;
    size_t len;

    len       = strlen(dir) + strlen(file_name) + 2;
    file.name = strdup(name);
    file.path = malloc(len);
    if ((file.name == NULL) || (file.path == NULL)) {
        goto err_free;
    }

    snprintf(file.path, len, "%s/%s", dir, file_name);
    array = realloc(files->files, sizeof(*array) * (files->count + 1));
    if (array == NULL) {
        goto err_free;
    }

    array[files->count++] = file;
    files->files          = array;
    return UCS_OK;

err_free:
    free(file.path);
    free(file.name);
    return UCS_ERR_NO_MEMORY;
}

static int ucs_module_dirent_compare(const struct dirent **a,
                                     const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/*
 * Add the modules of @a framework found in @a dir whose names were not
 * found in an earlier directory. Module names contain no '_', so that
 * lib<fw>_<sub>_<name>.so belongs to framework "<fw>_<sub>" only.
 */
static void ucs_module_dir_scan(const char *framework, const char *dir,
                                int user_dir, ucs_module_files_t *files)
{
    char prefix[NAME_MAX + 1], name[NAME_MAX + 1];
    struct dirent **entries;
    size_t prefix_len, len;
    const char *file_name;
    int i, count, err;

    count = scandir(dir, &entries, NULL, ucs_module_dirent_compare);
    if (count < 0) {
        err = errno;
        if (user_dir) {
            ucs_warn("UCX_MODULE_DIR: cannot read directory %s: %s; fix the "
                     "path",
                     dir, strerror(err));
        } else {
            ucs_debug("module directory %s: %s", dir, strerror(err));
        }
        return;
    }

    snprintf(prefix, sizeof(prefix), "lib%s_", framework);
    prefix_len = strlen(prefix);
    for (i = 0; i < count; ++i) {
        file_name = entries[i]->d_name;
        len       = strlen(file_name);
        if ((len <= prefix_len + 3) || strncmp(file_name, prefix, prefix_len) ||
            strcmp(file_name + len - 3, ".so")) {
            continue;
        }

        snprintf(name, sizeof(name), "%.*s", (int)(len - prefix_len - 3),
                 file_name + prefix_len);
        if (strchr(name, '_') != NULL) {
            continue;
        }

        if (ucs_module_files_has(files, name)) {
            ucs_debug("module %s/%s is shadowed by an earlier one", dir,
                      file_name);
            continue;
        }

        if (ucs_module_files_add(files, dir, name, file_name) != UCS_OK) {
            ucs_error("no memory to list module %s/%s", dir, file_name);
        }
    }

    for (i = 0; i < count; ++i) {
        free(entries[i]);
    }
    free(entries);
}

/* Whether @a path lies below the directory holding UCS_MODULE_BUILD_DIR */
static int ucs_module_in_build_tree(const char *path)
{
    char build_top[PATH_MAX], real_top[PATH_MAX], real_path[PATH_MAX];
    char *slash;
    size_t len;

    snprintf(build_top, sizeof(build_top), "%s", UCS_MODULE_BUILD_DIR);
    slash = strrchr(build_top, '/');
    if ((slash == NULL) || (slash == build_top)) {
        return 0;
    }
    *slash = '\0';

    if ((realpath(build_top, real_top) == NULL) ||
        (realpath(path, real_path) == NULL)) {
        return 0;
    }

    len = strlen(real_top);
    return !strncmp(real_path, real_top, len) && (real_path[len] == '/');
}

static void ucs_module_find_all(const char *framework, const void *anchor,
                                ucs_module_files_t *files)
{
    const char *module_dir = ucs_global_opts.module_dir;
    char dir[PATH_MAX];
    const char *start, *end;
    Dl_info info;
    char *slash;
    size_t len;

    /* 1. UCX_MODULE_DIR */
    for (start = (module_dir != NULL) ? module_dir : ""; *start != '\0';
         start = (*end != '\0') ? end + 1 : end) {
        end = strchr(start, ':');
        if (end == NULL) {
            end = start + strlen(start);
        }

        len = (size_t)(end - start);
        if ((len > 0) && (len < sizeof(dir))) {
            snprintf(dir, sizeof(dir), "%.*s", (int)len, start);
            ucs_module_dir_scan(framework, dir, 1, files);
        }
    }

    /* 2, 3. next to the anchor library, and the build tree */
    if ((anchor != NULL) && dladdr(anchor, &info) && (info.dli_fname != NULL) &&
        (strchr(info.dli_fname, '/') != NULL)) {
        snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        slash = strrchr(dir, '/');
        snprintf(slash + 1, sizeof(dir) - (size_t)(slash + 1 - dir), "%s",
                 UCS_MODULE_SUBDIR);
        ucs_module_dir_scan(framework, dir, 0, files);

        if ((UCS_MODULE_BUILD_DIR[0] != '\0') &&
            ucs_module_in_build_tree(info.dli_fname)) {
            ucs_module_dir_scan(framework, UCS_MODULE_BUILD_DIR, 0, files);
        }
    }

    /* 4. installed modules */
    if (UCS_MODULE_INSTALL_DIR[0] != '\0') {
        ucs_module_dir_scan(framework, UCS_MODULE_INSTALL_DIR, 0, files);
    }
}

/* ---- loading ------------------------------------------------------------- */

/* @a symbol of the module itself, not of a library it depends on */
static void *ucs_module_symbol(void *handle, const char *symbol)
{
    struct link_map *module_map, *symbol_map;
    Dl_info info;
    void *addr;

    addr = dlsym(handle, symbol);
    if (addr == NULL) {
        return NULL;
    }

    if ((dlinfo(handle, RTLD_DI_LINKMAP, &module_map) != 0) ||
        !dladdr1(addr, &info, (void **)&symbol_map, RTLD_DL_LINKMAP) ||
        (symbol_map != module_map)) {
        return NULL;
    }

    return addr;
}

static void ucs_module_load_one(ucs_module_framework_t *fw,
                                const ucs_module_file_t *file,
                                uint32_t api_version)
{
    ucs_module_cleanup_func_t cleanup;
    ucs_module_init_func_t init;
    const uint32_t *version_p;
    ucs_module_t *modules;
    ucs_module_t module;
    ucs_status_t status;
    const char *error;
    void *handle;

    dlerror();
    handle = dlopen(file->path, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        error = dlerror();
        ucs_warn("module %s: cannot load: %s; not loaded", file->path,
                 (error != NULL) ? error : "unknown error");
        return;
    }

    version_p = ucs_module_symbol(handle, UCS_MODULE_API_VERSION_SYMBOL);
    if (version_p == NULL) {
        ucs_warn("module %s: missing " UCS_MODULE_API_VERSION_SYMBOL
                 " (not an openuct module?); not loaded",
                 file->path);
        goto err_close;
    }

    if (UCS_MODULE_API_MAJOR(*version_p) != UCS_MODULE_API_MAJOR(api_version)) {
        ucs_warn("module %s: built for API version %u.%u, this library has "
                 "%u.%u; rebuild the module against this version; not loaded",
                 file->path, UCS_MODULE_API_MAJOR(*version_p),
                 UCS_MODULE_API_MINOR(*version_p),
                 UCS_MODULE_API_MAJOR(api_version),
                 UCS_MODULE_API_MINOR(api_version));
        goto err_close;
    }

    *(void **)&init = ucs_module_symbol(handle, UCS_MODULE_INIT_SYMBOL);
    if (init == NULL) {
        ucs_warn("module %s: missing " UCS_MODULE_INIT_SYMBOL
                 " (not an openuct module?); not loaded",
                 file->path);
        goto err_close;
    }

    *(void **)&cleanup = ucs_module_symbol(handle, UCS_MODULE_CLEANUP_SYMBOL);

    module.name    = strdup(file->name);
    module.path    = strdup(file->path);
    module.handle  = handle;
    module.cleanup = cleanup;
    modules        = realloc(fw->modules, sizeof(*modules) * (fw->count + 1));
    if ((module.name == NULL) || (module.path == NULL) || (modules == NULL)) {
        ucs_error("module %s: no memory to record it; not loaded", file->path);
        goto err_free;
    }
    fw->modules = modules;

    status = init();
    if (status != UCS_OK) {
        ucs_warn("module %s: " UCS_MODULE_INIT_SYMBOL "() failed: %s; not "
                 "loaded",
                 file->path, ucs_status_string(status));
        goto err_free;
    }

    fw->modules[fw->count++] = module;
    if ((cleanup != NULL) && !ucs_module_ctx.atexit_done) {
        ucs_module_ctx.atexit_done = 1;
        atexit(ucs_module_atexit);
    }

    ucs_debug("loaded module %s (%s, API version %u.%u)", file->path,
              file->name, UCS_MODULE_API_MAJOR(*version_p),
              UCS_MODULE_API_MINOR(*version_p));
    return;

err_free:
    free(module.path);
    free(module.name);
err_close:
    dlclose(handle);
}

/*
 * Warn about the names of UCX_MODULES that no module of @a framework on the
 * search path has: "UCX_MODULES=tpc" would otherwise load nothing, and
 * "UCX_MODULES=^ibb" everything, without a word.
 */
static void ucs_module_check_allow_list(const char *framework,
                                        const ucs_module_files_t *files)
{
    const ucs_config_allow_list_t *list = &ucs_global_opts.modules;
    ucs_string_buffer_t value, unknown, available;
    unsigned i, num_unknown = 0;

    if (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW_ALL) {
        return;
    }

    ucs_string_buffer_init(&value);
    ucs_string_buffer_init(&unknown);
    ucs_string_buffer_init(&available);

    for (i = 0; i < list->array.count; ++i) {
        ucs_string_buffer_appendf(&value, "%s%s", (i == 0) ? "" : ",",
                                  list->array.names[i]);
        if (!ucs_module_files_has(files, list->array.names[i])) {
            ucs_string_buffer_appendf(&unknown, "%s'%s'",
                                      (num_unknown == 0) ? "" : ", ",
                                      list->array.names[i]);
            ++num_unknown;
        }
    }

    if (list->array.count == 0) {
        if (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW) {
            ucs_warn("UCX_MODULES is empty: no %s module is loaded; unset "
                     "it or set it to 'all'",
                     framework);
        }
        goto out;
    }

    if (num_unknown == 0) {
        goto out;
    }

    for (i = 0; i < files->count; ++i) {
        ucs_string_buffer_appendf(&available, "%s%s", (i == 0) ? "" : ", ",
                                  files->files[i].name);
    }
    ucs_warn("UCX_MODULES=%s%s: no %s module named %s; available %s "
             "modules: %s (search path: UCX_MODULE_DIR, then the "
             "directories next to the library)",
             (list->mode == UCS_CONFIG_ALLOW_LIST_NEGATE) ? "^" : "",
             ucs_string_buffer_cstr(&value), framework,
             ucs_string_buffer_cstr(&unknown), framework,
             (files->count > 0) ? ucs_string_buffer_cstr(&available) : "none");

out:
    ucs_string_buffer_cleanup(&available);
    ucs_string_buffer_cleanup(&unknown);
    ucs_string_buffer_cleanup(&value);
}

void ucs_modules_load(const char *framework, uint32_t api_version,
                      const void *anchor)
{
    ucs_module_files_t files = {NULL, 0};
    ucs_module_framework_t *fw;
    unsigned i;

    ucs_module_lock();
    if (ucs_module_framework_find(framework) != NULL) {
        goto out_unlock;
    }

    fw = calloc(1, sizeof(*fw));
    if (fw != NULL) {
        fw->name = strdup(framework);
    }
    if ((fw == NULL) || (fw->name == NULL)) {
        ucs_error("no memory to load the modules of %s", framework);
        free(fw);
        goto out_unlock;
    }

    /* Listed first, so that a nested call for the same framework returns */
    fw->next                  = ucs_module_ctx.frameworks;
    ucs_module_ctx.frameworks = fw;

    ucs_module_find_all(framework, anchor, &files);
    ucs_module_check_allow_list(framework, &files);
    for (i = 0; i < files.count; ++i) {
        if (!ucs_config_allow_list_is_allowed(&ucs_global_opts.modules,
                                              files.files[i].name)) {
            ucs_debug("module %s: excluded by UCX_MODULES",
                      files.files[i].path);
            continue;
        }

        ucs_module_load_one(fw, &files.files[i], api_version);
    }

    ucs_debug("framework %s: %u of %u modules loaded", framework, fw->count,
              files.count);
    ucs_module_files_release(&files);

out_unlock:
    ucs_module_unlock();
}

unsigned ucs_modules_loaded_count(const char *framework)
{
    ucs_module_framework_t *fw;
    unsigned count;

    ucs_module_lock();
    fw    = ucs_module_framework_find(framework);
    count = (fw != NULL) ? fw->count : 0;
    ucs_module_unlock();
    return count;
}

void ucs_modules_for_each(const char *framework, ucs_module_for_each_cb_t cb,
                          void *arg)
{
    ucs_module_framework_t *fw;
    unsigned i;

    ucs_module_lock();
    fw = ucs_module_framework_find(framework);
    for (i = 0; (fw != NULL) && (i < fw->count); ++i) {
        cb(fw->modules[i].name, fw->modules[i].path, arg);
    }
    ucs_module_unlock();
}
