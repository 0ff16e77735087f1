/*
 * Directories that nobody but their owner can change (dir.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/dir.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Splits @a path, copied to @a buf, into the directory that holds it
 * (*dir_p) and its last component (*name_p), which must be a name.
 */
static ucs_status_t ucs_sys_dir_split(const char *path,
                                      const ucs_sys_dir_check_t *check,
                                      char *buf, const char **dir_p,
                                      const char **name_p)
{
    size_t len = strlen(path);
    char *slash;

    if (len >= PATH_MAX) {
        ucs_error("%s %s is too long; %s", check->what, path, check->hint);
        return UCS_ERR_IO_ERROR;
    }
    memcpy(buf, path, len + 1);
    while ((len > 1) && (buf[len - 1] == '/')) {
        buf[--len] = '\0';
    }

    slash   = strrchr(buf, '/');
    *name_p = (slash == NULL) ? buf : (slash + 1);
    if (((*name_p)[0] == '\0') || !strcmp(*name_p, ".") ||
        !strcmp(*name_p, "..")) {
        ucs_error("%s '%s' does not end with a directory name; name the "
                  "directory itself, or %s",
                  check->what, path, check->hint);
        return UCS_ERR_IO_ERROR;
    }

    if (slash == NULL) {
        *dir_p = ".";
    } else if (slash == buf) {
        *dir_p = "/";
    } else {
        *slash = '\0';
        *dir_p = buf;
    }
    return UCS_OK;
}

/*
 * Sets @a real (PATH_MAX bytes) to @a path with its parent resolved by
 * realpath() and its last component as given.
 */
static ucs_status_t ucs_sys_dir_resolve(const char *path,
                                        const ucs_sys_dir_check_t *check,
                                        char *real)
{
    char buf[PATH_MAX], rparent[PATH_MAX];
    const char *dir, *name;
    ucs_status_t status;
    int n;

    status = ucs_sys_dir_split(path, check, buf, &dir, &name);
    if (status != UCS_OK) {
        return status;
    }

    if (realpath(dir, rparent) == NULL) {
        if ((errno == ENOENT) && !check->create) {
            return UCS_ERR_NO_ELEM;
        }
        ucs_error("%s %s: cannot resolve its parent directory: %m; create "
                  "it, or %s",
                  check->what, path, check->hint);
        return UCS_ERR_IO_ERROR;
    }

    n = snprintf(real, PATH_MAX, "%s/%s", strcmp(rparent, "/") ? rparent : "",
                 name);
    if ((n < 0) || (n >= PATH_MAX)) {
        ucs_error("%s %s is too long once resolved; %s", check->what, path,
                  check->hint);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

/* Whether only root or the caller can rename or replace entries of @a dir,
 * a directory above @a path */
static ucs_status_t ucs_sys_dir_check_above(const char *path, const char *dir,
                                            const ucs_sys_dir_check_t *check)
{
    struct stat st;

    if (lstat(dir, &st) != 0) {
        ucs_error("%s %s: cannot check %s: %m; %s", check->what, path, dir,
                  check->hint);
        return UCS_ERR_IO_ERROR;
    }
    if ((st.st_uid != 0) && (st.st_uid != geteuid())) {
        ucs_error("%s %s is inside %s, which belongs to uid %u, who could "
                  "replace it; %s",
                  check->what, path, dir, (unsigned)st.st_uid, check->hint);
        return UCS_ERR_IO_ERROR;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
        ucs_error("%s %s is inside %s, which other users may write to (mode "
                  "%04o, no sticky bit) and so replace it; %s",
                  check->what, path, dir, (unsigned)(st.st_mode & 07777),
                  check->hint);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

/* Checks every directory above @a real (resolved), from its parent to / */
static ucs_status_t ucs_sys_dir_check_parents(const char *path,
                                              const char *real,
                                              const ucs_sys_dir_check_t *check)
{
    char dir[PATH_MAX];
    ucs_status_t status;
    char *slash;

    memcpy(dir, real, strlen(real) + 1);
    do {
        slash                         = strrchr(dir, '/');
        slash[(slash == dir) ? 1 : 0] = '\0';
        status = ucs_sys_dir_check_above(path, dir, check);
    } while ((status == UCS_OK) && strcmp(dir, "/"));
    return status;
}

/* Makes @a real with mode 0700 whatever the umask. Someone else's entry
 * in its place is left for the checks that follow (*created_p = 0). */
static ucs_status_t ucs_sys_dir_make(const char *path, const char *real,
                                     const ucs_sys_dir_check_t *check,
                                     int *created_p)
{
    if (mkdir(real, 0700) != 0) {
        if (errno == EEXIST) {
            *created_p = 0;
            return UCS_OK;
        }
        ucs_error("%s %s: cannot create it: %m; check its parent's "
                  "permissions, or %s",
                  check->what, path, check->hint);
        return UCS_ERR_IO_ERROR;
    }

    /* The parents are safe: nobody can have replaced it meanwhile */
    if (chmod(real, 0700) != 0) {
        ucs_error("%s %s: cannot set its mode to 0700: %m; %s", check->what,
                  path, check->hint);
        rmdir(real);
        return UCS_ERR_IO_ERROR;
    }
    *created_p = 1;
    return UCS_OK;
}

/* The directory itself, as lstat() describes it in @a st */
static ucs_status_t ucs_sys_dir_check_leaf(const char *path,
                                           const struct stat *st,
                                           const ucs_sys_dir_check_t *check)
{
    mode_t bad = st->st_mode & check->forbidden;

    if (S_ISLNK(st->st_mode)) {
        ucs_error("%s %s is a symbolic link; remove it, or %s", check->what,
                  path, check->hint);
    } else if (!S_ISDIR(st->st_mode)) {
        ucs_error("%s %s is not a directory; remove it, or %s", check->what,
                  path, check->hint);
    } else if (st->st_uid != geteuid()) {
        ucs_error("%s %s belongs to uid %u, not to this user (uid %u); "
                  "remove it, or %s",
                  check->what, path, (unsigned)st->st_uid, (unsigned)geteuid(),
                  check->hint);
    } else if (bad != 0) {
        ucs_error("%s %s is %s other users (mode %04o); run 'chmod 700 %s', "
                  "or %s",
                  check->what, path,
                  (bad & (S_IWGRP | S_IWOTH)) ? "writable by" : "open to",
                  (unsigned)(st->st_mode & 07777), path, check->hint);
    } else {
        return UCS_OK;
    }
    return UCS_ERR_IO_ERROR;
}

/* lstat() of @a real, made first when missing and allowed */
static ucs_status_t ucs_sys_dir_lstat(const char *path, const char *real,
                                      const ucs_sys_dir_check_t *check,
                                      struct stat *st, int *created_p)
{
    ucs_status_t status;

    *created_p = 0;
    if (lstat(real, st) == 0) {
        return UCS_OK;
    }
    if ((errno == ENOENT) && !check->create) {
        return UCS_ERR_NO_ELEM;
    }
    if (errno == ENOENT) {
        status = ucs_sys_dir_make(path, real, check, created_p);
        if (status != UCS_OK) {
            return status;
        }
        if (lstat(real, st) == 0) {
            return UCS_OK;
        }
    }

    ucs_error("%s %s: cannot check it: %m; %s", check->what, path, check->hint);
    if (*created_p) {
        rmdir(real);
    }
    return UCS_ERR_IO_ERROR;
}

ucs_status_t ucs_sys_dir_check_private(const char *path,
                                       const ucs_sys_dir_check_t *check,
                                       char *buf, size_t max, int *created_p)
{
    char real[PATH_MAX];
    ucs_status_t status;
    struct stat st;
    int created;

    status = ucs_sys_dir_resolve(path, check, real);
    if (status != UCS_OK) {
        return status;
    }
    status = ucs_sys_dir_check_parents(path, real, check);
    if (status != UCS_OK) {
        return status;
    }
    status = ucs_sys_dir_lstat(path, real, check, &st, &created);
    if (status != UCS_OK) {
        return status;
    }

    status = ucs_sys_dir_check_leaf(path, &st, check);
    if ((status == UCS_OK) && (strlen(real) >= max)) {
        ucs_error("%s %s is too long once resolved; %s", check->what, path,
                  check->hint);
        status = UCS_ERR_IO_ERROR;
    }
    if (status != UCS_OK) {
        if (created) {
            rmdir(real);
        }
        return status;
    }

    memcpy(buf, real, strlen(real) + 1);
    if (created_p != NULL) {
        *created_p = created;
    }
    return UCS_OK;
}
