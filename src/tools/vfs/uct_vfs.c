/*
 * uct_vfs: mounts the object tree of every process that runs with
 * UCX_VFS_ENABLE=y as a read-only file system, one directory per pid.
 *
 *   uct_vfs [-f] [-v...] [-d MOUNT_DIR] [-s SOCKET_DIR] [-l LOG_FILE]
 *
 * Processes connect to <socket dir>/vfs.sock (ucs/vfs/vfs_sock.h); this
 * file sets up the socket and the mount and runs the FUSE loop, which
 * ends on SIGTERM, SIGINT or SIGHUP. uct_vfs_conn.c keeps the connections,
 * uct_vfs_fuse.c answers the file system requests.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* umount2 flags */
#endif
#define FUSE_USE_VERSION 31

#include "uct_vfs.h"

#include <ucs/debug/log.h>
#include <ucs/sys/dir.h>
#include <ucs/vfs/vfs_sock.h>

#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Exit codes */
enum { UCT_VFS_EXIT_OK = 0, UCT_VFS_EXIT_ERROR = 1, UCT_VFS_EXIT_USAGE = 2 };

typedef struct {
    const char *mount_dir; /* NULL: the default */
    const char *sock_dir;  /* NULL: the default */
    const char *log_file;
    int foreground;
    int verbose;
} uct_vfs_opts_t;

static void uct_vfs_usage(FILE *stream, const char *prog)
{
    fprintf(stream,
            "Usage: %s [options]\n"
            "Shows the objects of every running process that has\n"
            "UCX_VFS_ENABLE=y as a read-only file system: one directory\n"
            "per process id.\n"
            "\n"
            "  -d DIR   mount at DIR (default: $UCX_VFS_MOUNT_DIR, else\n"
            "           $XDG_RUNTIME_DIR/openuct-vfs, else\n"
            "           /tmp/openuct-vfs-<uid>); made 0700 when missing;\n"
            "           refused if it is a symbolic link, not your own or\n"
            "           writable by others\n"
            "  -s DIR   the directory of the socket the processes connect\n"
            "           to (default: $UCX_VFS_SOCK_DIR, else\n"
            "           $XDG_RUNTIME_DIR/openuct, else /tmp/openuct-<uid>);\n"
            "           the processes must see the same UCX_VFS_SOCK_DIR\n"
            "  -f       stay in the foreground (default: run in the\n"
            "           background)\n"
            "  -l FILE  write log messages to FILE (in the background they\n"
            "           are discarded otherwise)\n"
            "  -v       log processes attaching and leaving; repeat for\n"
            "           more detail (-vvvv: every FUSE request too)\n"
            "  -h, --help  print this help\n"
            "\n"
            "It unmounts and exits on SIGTERM or SIGINT (Ctrl-C with -f).\n"
            "Example: %s -f -v -d /tmp/uct-vfs\n",
            prog, prog);
}

static int uct_vfs_parse_opts(int argc, char **argv, uct_vfs_opts_t *opts)
{
    static const struct option long_opts[] = {{"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    const char *prog                       = basename(argv[0]);
    int c;

    memset(opts, 0, sizeof(*opts));
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":d:s:l:fvh", long_opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            opts->mount_dir = optarg;
            break;
        case 's':
            opts->sock_dir = optarg;
            break;
        case 'l':
            opts->log_file = optarg;
            break;
        case 'f':
            opts->foreground = 1;
            break;
        case 'v':
            ++opts->verbose;
            break;
        case 'h':
            uct_vfs_usage(stdout, prog);
            exit(UCT_VFS_EXIT_OK);
        case ':':
            fprintf(stderr, "%s: option -%c needs an argument\n", prog, optopt);
            uct_vfs_usage(stderr, prog);
            return -1;
        default:
            if (optopt != 0) {
                fprintf(stderr, "%s: unknown option -%c\n", prog, optopt);
            } else {
                fprintf(stderr, "%s: unknown option %s\n", prog,
                        argv[optind - 1]);
            }
            uct_vfs_usage(stderr, prog);
            return -1;
        }
    }

    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        uct_vfs_usage(stderr, prog);
        return -1;
    }
    return 0;
}

/* -v: info, -vv: debug, -vvv: trace; never less than UCX_LOG_LEVEL */
static void uct_vfs_setup_log(const uct_vfs_opts_t *opts)
{
    int level;

    if (opts->log_file != NULL) {
        ucs_log_set_file(opts->log_file);
    }
    if (opts->verbose == 0) {
        return;
    }
    level = UCS_LOG_LEVEL_INFO + opts->verbose - 1;
    if (level > UCS_LOG_LEVEL_TRACE) {
        level = UCS_LOG_LEVEL_TRACE;
    }
    if ((ucs_log_level_t)level > ucs_log_level) {
        ucs_log_set_level((ucs_log_level_t)level);
    }
}

/* Copies @a dir to @a buf as an absolute path (the daemon leaves its
 * working directory when it goes to the background) */
static ucs_status_t uct_vfs_absolute(const char *what, const char *dir,
                                     char *buf, size_t max)
{
    char cwd[PATH_MAX];
    int n;

    if (dir[0] == '/') {
        n = snprintf(buf, max, "%s", dir);
    } else if (getcwd(cwd, sizeof(cwd)) == NULL) {
        ucs_error("uct_vfs: cannot get the current directory: %m; give the "
                  "%s directory as an absolute path",
                  what);
        return UCS_ERR_IO_ERROR;
    } else {
        n = snprintf(buf, max, "%s/%s", cwd, dir);
    }
    if ((n < 0) || ((size_t)n >= max)) {
        ucs_error("uct_vfs: the %s directory %s is too long", what, dir);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

static ucs_status_t uct_vfs_default_mount_dir(char *buf, size_t max)
{
    const char *dir = getenv("UCX_VFS_MOUNT_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;

    if ((dir != NULL) && (dir[0] != '\0')) {
        n = snprintf(buf, max, "%s", dir);
    } else if ((xdg != NULL) && (xdg[0] != '\0')) {
        n = snprintf(buf, max, "%s/openuct-vfs", xdg);
    } else {
        n = snprintf(buf, max, "/tmp/openuct-vfs-%u", (unsigned)getuid());
    }
    if ((n < 0) || ((size_t)n >= max)) {
        ucs_error("uct_vfs: the default mount directory is too long; "
                  "choose one with -d");
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

static ucs_status_t uct_vfs_setup_sock_dir(uct_vfs_daemon_t *d,
                                           const uct_vfs_opts_t *opts)
{
    char dir[PATH_MAX];
    ucs_status_t status;
    int n;

    if (opts->sock_dir != NULL) {
        n      = snprintf(dir, sizeof(dir), "%s", opts->sock_dir);
        status = ((n < 0) || ((size_t)n >= sizeof(dir))) ? UCS_ERR_EXCEEDS_LIMIT
                                                         : UCS_OK;
    } else {
        status = ucs_vfs_sock_dir(dir, sizeof(dir));
    }
    if (status != UCS_OK) {
        ucs_error("uct_vfs: the socket directory is too long; choose "
                  "another with -s");
        return status;
    }

    status = uct_vfs_absolute("socket", dir, d->sock_dir, sizeof(d->sock_dir));
    if (status != UCS_OK) {
        return status;
    }

    /* Made 0700 when missing; refused when others could get in */
    status = ucs_vfs_sock_check_dir(d->sock_dir, 1);
    if (status != UCS_OK) {
        ucs_error("uct_vfs: the socket directory %s cannot be used (see "
                  "above)",
                  d->sock_dir);
        return status;
    }

    n = snprintf(d->sock_path, sizeof(d->sock_path), "%s/%s", d->sock_dir,
                 UCS_VFS_SOCK_NAME);
    if ((n < 0) || ((size_t)n >= sizeof(d->sock_path))) {
        ucs_error("uct_vfs: the socket directory %s is too long; choose "
                  "another with -s",
                  d->sock_dir);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

/* Runs "fusermount3 -u -z DIR": how a user who is not root detaches a
 * FUSE mount */
static int uct_vfs_fusermount_detach(const char *dir)
{
    int wstatus;
    pid_t pid;

    pid = fork();
    if (pid < 0) {
        ucs_error("uct_vfs: cannot start fusermount3: %m");
        return -1;
    }
    if (pid == 0) {
        execlp("fusermount3", "fusermount3", "-u", "-z", dir, (char *)NULL);
        fprintf(stderr,
                "uct_vfs: cannot run fusermount3: %s; install the "
                "fuse3 package\n",
                strerror(errno));
        _exit(127);
    }

    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            ucs_error("uct_vfs: waiting for fusermount3 failed: %m");
            return -1;
        }
    }
    return (WIFEXITED(wstatus) && (WEXITSTATUS(wstatus) == 0)) ? 0 : -1;
}

static void uct_vfs_cleanup_mount_dir(uct_vfs_daemon_t *d)
{
    if (d->created_mount_dir && (rmdir(d->mount_dir) != 0)) {
        ucs_debug("uct_vfs: cannot remove %s: %m", d->mount_dir);
    }
}

/* A daemon that was killed leaves its mount behind; every access to it
 * fails with ENOTCONN until it is unmounted */
static ucs_status_t uct_vfs_unmount_stale(const char *dir)
{
    ucs_warn("uct_vfs: %s is the mount of a uct_vfs that did not exit "
             "cleanly (Transport endpoint is not connected); unmounting it",
             dir);

    if (umount2(dir, MNT_DETACH | UMOUNT_NOFOLLOW) == 0) {
        return UCS_OK;
    }
    ucs_debug("uct_vfs: umount2(%s) failed: %m; trying fusermount3", dir);
    if (uct_vfs_fusermount_detach(dir) == 0) {
        return UCS_OK;
    }

    ucs_error("uct_vfs: cannot unmount the stale mount %s; run "
              "'fusermount3 -u -z %s' (as root: 'umount -l %s')",
              dir, dir, dir);
    return UCS_ERR_IO_ERROR;
}

/* Whether @a dir, a directory, is the root of a mount */
static int uct_vfs_is_mount_point(const char *dir)
{
    char parent[PATH_MAX + 4];
    struct stat st, pst;

    snprintf(parent, sizeof(parent), "%s/..", dir);
    if ((lstat(dir, &st) != 0) || (lstat(parent, &pst) != 0)) {
        return 0;
    }
    return (pst.st_dev != st.st_dev) || (pst.st_ino == st.st_ino);
}

/* The mount directory asked for: -d, else the default; made absolute */
static ucs_status_t uct_vfs_mount_dir_path(const uct_vfs_opts_t *opts,
                                           char *buf, size_t max)
{
    char dir[PATH_MAX];
    ucs_status_t status;
    int n;

    if (opts->mount_dir != NULL) {
        n = snprintf(dir, sizeof(dir), "%s", opts->mount_dir);
        if ((n < 0) || ((size_t)n >= sizeof(dir))) {
            ucs_error("uct_vfs: the mount directory is too long");
            return UCS_ERR_EXCEEDS_LIMIT;
        }
    } else {
        status = uct_vfs_default_mount_dir(dir, sizeof(dir));
        if (status != UCS_OK) {
            return status;
        }
    }
    return uct_vfs_absolute("mount", dir, buf, max);
}

/*
 * Finds or makes the mount directory, refusing one that another user could
 * have put there or could change (ucs_sys_dir_check_private(): a symbolic
 * link, not a directory, not the caller's own, writable by group or
 * others, or inside a directory another user controls). Mounting follows
 * the path it checked, with its parent resolved.
 */
static ucs_status_t uct_vfs_setup_mount_dir(uct_vfs_daemon_t *d,
                                            const uct_vfs_opts_t *opts)
{
    ucs_sys_dir_check_t check = {.what      = "uct_vfs: the mount directory",
                                 .hint      = "choose another with -d",
                                 .forbidden = S_IWGRP | S_IWOTH,
                                 .create    = 1};
    char dir[PATH_MAX];
    ucs_status_t status;
    struct stat st;

    status = uct_vfs_mount_dir_path(opts, dir, sizeof(dir));
    if (status != UCS_OK) {
        return status;
    }

    /* lstat(): a stale mount's root answers ENOTCONN, a link's target is
     * never looked at */
    if ((lstat(dir, &st) != 0) && (errno == ENOTCONN)) {
        status = uct_vfs_unmount_stale(dir);
        if (status != UCS_OK) {
            return status;
        }
    }

    status = ucs_sys_dir_check_private(
        dir, &check, d->mount_dir, sizeof(d->mount_dir), &d->created_mount_dir);
    if (status != UCS_OK) {
        return status;
    }

    if (uct_vfs_is_mount_point(d->mount_dir)) {
        ucs_error("uct_vfs: %s is already a mount point (another uct_vfs "
                  "with another socket directory?); unmount it with "
                  "'fusermount3 -u %s', or choose another directory with "
                  "-d",
                  d->mount_dir, d->mount_dir);
        uct_vfs_cleanup_mount_dir(d);
        return UCS_ERR_BUSY;
    }
    return UCS_OK;
}

static struct fuse *uct_vfs_mount(uct_vfs_daemon_t *d,
                                  const uct_vfs_opts_t *opts)
{
    struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
    struct fuse *fuse;

    /* Read-only, permissions checked by the kernel from the modes we
     * report; without allow_other only this user may enter the mount.
     * libfuse's own trace of every request only with -vvvv. */
    if ((fuse_opt_add_arg(&args, "uct_vfs") != 0) ||
        (fuse_opt_add_arg(&args, "-o") != 0) ||
        (fuse_opt_add_arg(&args, "ro,default_permissions,fsname=uct_vfs,"
                                 "subtype=uct_vfs") != 0) ||
        ((opts->verbose >= 4) && (fuse_opt_add_arg(&args, "-odebug") != 0))) {
        ucs_error("uct_vfs: out of memory");
        fuse_opt_free_args(&args);
        return NULL;
    }

    fuse = fuse_new(&args, &uct_vfs_fuse_ops, sizeof(uct_vfs_fuse_ops), d);
    fuse_opt_free_args(&args);
    if (fuse == NULL) {
        ucs_error("uct_vfs: cannot create the FUSE file system (see the "
                  "message above)");
        return NULL;
    }

    if (fuse_mount(fuse, d->mount_dir) != 0) {
        ucs_error("uct_vfs: cannot mount at %s (see the message above); "
                  "FUSE needs /dev/fuse and, for users other than root, "
                  "fusermount3 (Debian package fuse3)",
                  d->mount_dir);
        goto err_destroy;
    }

    if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
        ucs_error("uct_vfs: cannot install the signal handlers");
        goto err_unmount;
    }
    return fuse;

err_unmount:
    fuse_unmount(fuse);
err_destroy:
    fuse_destroy(fuse);
    return NULL;
}

/*
 * Going to the background: the process forks first, and the parent waits
 * until the child reports that it serves (the parent exits 0) or dies
 * (exit 1). So every start-up error reaches the terminal, and the socket
 * is created by the process that keeps it (other daemons see its pid).
 * Returns in the child, with the write end of the report pipe.
 */
static int uct_vfs_background_begin(int *report_fd_p)
{
    int pfd[2], status;
    ssize_t ret;
    char c;
    pid_t pid;

    if (pipe2(pfd, O_CLOEXEC) != 0) {
        ucs_error("uct_vfs: cannot create a pipe: %m; try -f");
        return -1;
    }

    pid = fork();
    if (pid < 0) {
        ucs_error("uct_vfs: cannot go to the background (fork: %m); try -f");
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }

    if (pid > 0) {
        close(pfd[1]);
        do {
            ret = read(pfd[0], &c, 1);
        } while ((ret < 0) && (errno == EINTR));
        if (ret == 1) {
            _exit(UCT_VFS_EXIT_OK);
        }
        /* The child failed and said why */
        waitpid(pid, &status, 0);
        _exit(UCT_VFS_EXIT_ERROR);
    }

    close(pfd[0]);
    if (setsid() < 0) {
        ucs_debug("uct_vfs: setsid failed: %m");
    }
    *report_fd_p = pfd[1];
    return 0;
}

/* The child serves: detach from the terminal and let the parent go */
static void uct_vfs_background_end(int report_fd)
{
    ssize_t ret;
    int fd;

    if (chdir("/") != 0) {
        ucs_debug("uct_vfs: chdir(/) failed: %m");
    }
    fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO) {
            close(fd);
        }
    }

    do {
        ret = write(report_fd, "1", 1);
    } while ((ret < 0) && (errno == EINTR));
    close(report_fd);
}

static void uct_vfs_unmount(struct fuse *fuse)
{
    fuse_remove_signal_handlers(fuse_get_session(fuse));
    fuse_unmount(fuse);
    fuse_destroy(fuse);
}

int main(int argc, char **argv)
{
    uct_vfs_daemon_t *d;
    uct_vfs_opts_t opts;
    struct fuse *fuse;
    int report_fd = -1;
    int loop_ret;
    int ret = UCT_VFS_EXIT_ERROR;

    if (uct_vfs_parse_opts(argc, argv, &opts) != 0) {
        return UCT_VFS_EXIT_USAGE;
    }
    uct_vfs_setup_log(&opts);

    /* Too large for the stack: three paths */
    d = calloc(1, sizeof(*d));
    if (d == NULL) {
        fprintf(stderr, "uct_vfs: out of memory\n");
        return UCT_VFS_EXIT_ERROR;
    }
    d->listen_fd  = -1;
    d->uid        = geteuid();
    d->gid        = getegid();
    d->start_time = time(NULL);
    pthread_mutex_init(&d->lock, NULL);
    ucs_list_head_init(&d->conns);

    if (!opts.foreground && (uct_vfs_background_begin(&report_fd) != 0)) {
        goto out_free;
    }

    /* The socket first: it tells whether another daemon is running */
    if ((uct_vfs_setup_sock_dir(d, &opts) != UCS_OK) ||
        (uct_vfs_listen(d) != UCS_OK)) {
        goto out_free;
    }

    if (uct_vfs_setup_mount_dir(d, &opts) != UCS_OK) {
        goto out_unlisten;
    }

    fuse = uct_vfs_mount(d, &opts);
    if (fuse == NULL) {
        goto out_mount_dir;
    }

    if (uct_vfs_conn_thread_start(d) != UCS_OK) {
        goto out_unmount;
    }

    ucs_info("uct_vfs: mounted at %s; processes attach through %s",
             d->mount_dir, d->sock_path);
    if (!opts.foreground) {
        uct_vfs_background_end(report_fd);
    }

    /* Returns the number of the signal that ended it, or an error */
    loop_ret = fuse_loop_mt(fuse, 0);
    if (loop_ret < 0) {
        ucs_error("uct_vfs: the FUSE loop failed: %s; unmounting",
                  strerror(-loop_ret));
    } else {
        ucs_info("uct_vfs: %s; unmounting %s",
                 (loop_ret > 0) ? strsignal(loop_ret) : "the mount went away",
                 d->mount_dir);
        ret = UCT_VFS_EXIT_OK;
    }

    uct_vfs_conn_thread_stop(d);
out_unmount:
    uct_vfs_unmount(fuse);
out_mount_dir:
    uct_vfs_cleanup_mount_dir(d);
out_unlisten:
    uct_vfs_unlisten(d);
out_free:
    pthread_mutex_destroy(&d->lock);
    free(d);
    return ret;
}
