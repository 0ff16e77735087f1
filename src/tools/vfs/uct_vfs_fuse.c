/*
 * uct_vfs: the file system. The root holds one directory per attached
 * process, named by its pid; everything below /<pid> is asked from that
 * process with the /<pid> prefix taken off ("/" for the directory itself).
 *
 * Nothing is cached: the kernel is told not to keep names or attributes
 * (timeouts 0), and a file's content is read from the process when the
 * file is opened and served from that copy until it is closed, so one
 * read of a file sees one consistent snapshot. Its size in stat() is the
 * process's estimate at that moment; reads bypass the page cache
 * (direct_io), so content longer than that size is still read in full.
 */
#define FUSE_USE_VERSION 31

#include "uct_vfs.h"

#include <ucs/debug/log.h>
#include <ucs/vfs/vfs.h>
#include <ucs/vfs/vfs_sock.h>

#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A file's content, read at open */
typedef struct {
    char *data;
    size_t length;
} uct_vfs_fuse_file_t;

static uct_vfs_daemon_t *uct_vfs_fuse_daemon(void)
{
    return fuse_get_context()->private_data;
}

/*
 * Splits "/<pid>/rest" into the pid and the path to ask the process for.
 * @return 1 for the root, 0 for a path of a process, -ENOENT or
 *         -ENAMETOOLONG.
 */
static int uct_vfs_fuse_split(const char *path, pid_t *pid_p,
                              const char **rest_p)
{
    const char *p = path + 1;
    long pid      = 0;

    if (p[0] == '\0') {
        return 1;
    }
    if ((p[0] < '1') || (p[0] > '9')) {
        return -ENOENT;
    }
    for (; (*p >= '0') && (*p <= '9'); ++p) {
        pid = (pid * 10) + (*p - '0');
        if (pid > INT32_MAX) {
            return -ENOENT;
        }
    }
    if ((*p != '\0') && (*p != '/')) {
        return -ENOENT;
    }
    if (strlen(p) >= UCS_VFS_PATH_MAX) {
        return -ENAMETOOLONG;
    }

    *pid_p  = (pid_t)pid;
    *rest_p = (*p == '\0') ? "/" : p;
    return 0;
}

/* Asks the process that owns @a path; see uct_vfs_conn_request() */
static int uct_vfs_fuse_ask(const char *path, uint16_t op, char **payload_p,
                            size_t *length_p, time_t *since_p)
{
    uct_vfs_daemon_t *d = uct_vfs_fuse_daemon();
    uct_vfs_conn_t *conn;
    const char *rest;
    pid_t pid;
    int ret;

    ret = uct_vfs_fuse_split(path, &pid, &rest);
    if (ret != 0) {
        return (ret > 0) ? -EISDIR : ret;
    }

    conn = uct_vfs_conn_get(d, pid);
    if (conn == NULL) {
        return -ENOENT;
    }
    if (since_p != NULL) {
        *since_p = conn->since;
    }
    ret = uct_vfs_conn_request(d, conn, op, rest, payload_p, length_p);
    uct_vfs_conn_put(d, conn);
    return ret;
}

static void uct_vfs_fuse_stat_init(struct stat *st, mode_t mode, time_t when)
{
    uct_vfs_daemon_t *d = uct_vfs_fuse_daemon();

    memset(st, 0, sizeof(*st));
    st->st_mode  = mode;
    st->st_nlink = S_ISDIR(mode) ? 2 : 1;
    st->st_uid   = d->uid;
    st->st_gid   = d->gid;
    st->st_atime = when;
    st->st_mtime = when;
    st->st_ctime = when;
}

static int uct_vfs_fuse_getattr(const char *path, struct stat *st,
                                struct fuse_file_info *fi)
{
    ucs_vfs_sock_info_t info;
    size_t length;
    char *payload;
    time_t since;
    int ret;

    if (!strcmp(path, "/")) {
        uct_vfs_fuse_stat_init(st, S_IFDIR | 0555,
                               uct_vfs_fuse_daemon()->start_time);
        return 0;
    }

    ret = uct_vfs_fuse_ask(path, UCS_VFS_SOCK_OP_GET_INFO, &payload, &length,
                           &since);
    if (ret != 0) {
        return ret;
    }
    if (length != sizeof(info)) {
        ucs_warn("uct_vfs: %s: the process answered GET_INFO with %zu "
                 "bytes instead of %zu",
                 path, length, sizeof(info));
        free(payload);
        return -EIO;
    }
    memcpy(&info, payload, sizeof(info));
    free(payload);

    switch (info.type) {
    case UCS_VFS_NODE_TYPE_DIR:
        uct_vfs_fuse_stat_init(st, S_IFDIR | 0555, since);
        break;
    case UCS_VFS_NODE_TYPE_RO_FILE:
        /* Content is made when it is read: it is always new */
        uct_vfs_fuse_stat_init(st, S_IFREG | 0444, time(NULL));
        st->st_size = (off_t)info.size;
        break;
    case UCS_VFS_NODE_TYPE_SYM_LINK:
        uct_vfs_fuse_stat_init(st, S_IFLNK | 0777, since);
        st->st_size = (off_t)info.size;
        break;
    default:
        ucs_warn("uct_vfs: %s: unknown node type %u", path,
                 (unsigned)info.type);
        return -EIO;
    }
    return 0;
}

static int uct_vfs_fuse_readdir_root(void *buf, fuse_fill_dir_t filler)
{
    char name[16];
    size_t i, count;
    pid_t *pids;

    if (uct_vfs_conn_list_pids(uct_vfs_fuse_daemon(), &pids, &count) !=
        UCS_OK) {
        return -ENOMEM;
    }
    for (i = 0; i < count; ++i) {
        snprintf(name, sizeof(name), "%d", (int)pids[i]);
        if (filler(buf, name, NULL, 0, 0) != 0) {
            break;
        }
    }
    free(pids);
    return 0;
}

static int uct_vfs_fuse_readdir(const char *path, void *buf,
                                fuse_fill_dir_t filler, off_t offset,
                                struct fuse_file_info *fi,
                                enum fuse_readdir_flags flags)
{
    char *payload, *name, *end;
    size_t length, name_len;
    int ret;

    filler(buf, ".", NULL, 0, 0);
    filler(buf, "..", NULL, 0, 0);
    if (!strcmp(path, "/")) {
        return uct_vfs_fuse_readdir_root(buf, filler);
    }

    ret = uct_vfs_fuse_ask(path, UCS_VFS_SOCK_OP_LIST, &payload, &length, NULL);
    if (ret != 0) {
        return ret;
    }

    /* NUL-terminated names, one after the other */
    end = payload + length;
    for (name = payload; name < end; name += name_len + 1) {
        name_len = strnlen(name, end - name);
        if (name_len == (size_t)(end - name)) {
            ucs_warn("uct_vfs: %s: the process's list of entries does not "
                     "end with a NUL",
                     path);
            break;
        }
        if ((name_len == 0) || (strchr(name, '/') != NULL) ||
            !strcmp(name, ".") || !strcmp(name, "..")) {
            ucs_debug("uct_vfs: %s: skipping the entry '%s'", path, name);
            continue;
        }
        if (filler(buf, name, NULL, 0, 0) != 0) {
            break;
        }
    }
    free(payload);
    return 0;
}

static int uct_vfs_fuse_open(const char *path, struct fuse_file_info *fi)
{
    uct_vfs_fuse_file_t *file;
    size_t length;
    char *payload;
    int ret;

    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
        return -EACCES;
    }

    file = malloc(sizeof(*file));
    if (file == NULL) {
        return -ENOMEM;
    }
    ret = uct_vfs_fuse_ask(path, UCS_VFS_SOCK_OP_READ, &payload, &length, NULL);
    if (ret != 0) {
        free(file);
        return ret;
    }

    file->data    = payload;
    file->length  = length;
    fi->fh        = (uintptr_t)file;
    fi->direct_io = 1;
    return 0;
}

static int uct_vfs_fuse_read(const char *path, char *buf, size_t size,
                             off_t offset, struct fuse_file_info *fi)
{
    uct_vfs_fuse_file_t *file = (uct_vfs_fuse_file_t *)(uintptr_t)fi->fh;
    size_t n;

    if ((offset < 0) || ((size_t)offset >= file->length)) {
        return 0;
    }
    n = file->length - (size_t)offset;
    if (n > size) {
        n = size;
    }
    memcpy(buf, file->data + offset, n);
    return (int)n;
}

static int uct_vfs_fuse_release(const char *path, struct fuse_file_info *fi)
{
    uct_vfs_fuse_file_t *file = (uct_vfs_fuse_file_t *)(uintptr_t)fi->fh;

    free(file->data);
    free(file);
    return 0;
}

static int uct_vfs_fuse_readlink(const char *path, char *buf, size_t size)
{
    size_t length, n;
    char *payload;
    int ret;

    if (size == 0) {
        return -EINVAL;
    }

    ret = uct_vfs_fuse_ask(path, UCS_VFS_SOCK_OP_READLINK, &payload, &length,
                           NULL);
    if (ret != 0) {
        return ret;
    }

    /* The answer is NUL-terminated, and one more NUL follows it */
    n = strlen(payload);
    if (n >= size) {
        n = size - 1;
    }
    memcpy(buf, payload, n);
    buf[n] = '\0';
    free(payload);
    return 0;
}

static void *uct_vfs_fuse_init(struct fuse_conn_info *conn,
                               struct fuse_config *cfg)
{
    /* The tree changes at any time: let the kernel keep nothing */
    cfg->entry_timeout    = 0;
    cfg->negative_timeout = 0;
    cfg->attr_timeout     = 0;
    cfg->kernel_cache     = 0;
    cfg->direct_io        = 1;
    cfg->use_ino          = 0;
    return fuse_get_context()->private_data;
}

const struct fuse_operations uct_vfs_fuse_ops = {
    .init     = uct_vfs_fuse_init,
    .getattr  = uct_vfs_fuse_getattr,
    .readdir  = uct_vfs_fuse_readdir,
    .open     = uct_vfs_fuse_open,
    .read     = uct_vfs_fuse_read,
    .release  = uct_vfs_fuse_release,
    .readlink = uct_vfs_fuse_readlink};
