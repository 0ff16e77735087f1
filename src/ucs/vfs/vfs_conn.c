/*
 * The process side of the uct_vfs daemon connection: one service thread
 * that connects, says HELLO, and answers the daemon's requests from the
 * object tree, retrying while the daemon is absent. See vfs_conn.h for
 * the life cycle and vfs_sock.h for the protocol.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name, pthread_setname_np */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/vfs/vfs_conn.h>
#include <ucs/vfs/vfs.h>
#include <ucs/vfs/vfs_sock.h>
#include <ucs/config/global_opts.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Longest a send or receive of one message may block: a daemon that stops
 * reading costs the service thread this much, then the connection */
#define UCS_VFS_CONN_IO_TIMEOUT_SEC 1

#define UCS_VFS_CONN_SOCK_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

static struct {
    pthread_mutex_t life_lock; /* start/stop; the three fields below */
    int running;               /* the thread exists and is not joined */
    pthread_t thread;
    int wakeup_fd; /* eventfd: the thread stops when set */

    pthread_mutex_t lock; /* fd, and every close of it */
    int fd;               /* connection, -1 when none */

    int autostarted; /* atomic; UCX_VFS_ENABLE start done */

    /* set by ucs_vfs_conn_start(), read by the thread */
    char dir[256];
    char path[UCS_VFS_CONN_SOCK_PATH_MAX];
    int retry_ms;

    /* the thread only */
    int absent_logged; /* "no daemon" already said */
    int unsafe_valid;  /* unsafe_st holds an unsafe directory */
    struct stat unsafe_st;
} ucs_vfs_conn = {.life_lock = PTHREAD_MUTEX_INITIALIZER,
                  .wakeup_fd = -1,
                  .lock      = PTHREAD_MUTEX_INITIALIZER,
                  .fd        = -1};

/* ---- connecting ------------------------------------------------------- */

static void ucs_vfs_conn_set_fd(int fd)
{
    pthread_mutex_lock(&ucs_vfs_conn.lock);
    ucs_vfs_conn.fd = fd;
    pthread_mutex_unlock(&ucs_vfs_conn.lock);
}

/* Closes the connection; under the lock, so that the stop request never
 * shuts down a reused fd number. */
static void ucs_vfs_conn_close(void)
{
    pthread_mutex_lock(&ucs_vfs_conn.lock);
    if (ucs_vfs_conn.fd >= 0) {
        close(ucs_vfs_conn.fd);
        ucs_vfs_conn.fd = -1;
    }
    pthread_mutex_unlock(&ucs_vfs_conn.lock);
}

static inline int ucs_vfs_conn_same_dir(const struct stat *a,
                                        const struct stat *b)
{
    return (a->st_dev == b->st_dev) && (a->st_ino == b->st_ino) &&
           (a->st_mode == b->st_mode) && (a->st_uid == b->st_uid);
}

/*
 * Whether the socket's directory may be used. A missing directory means
 * no daemon (silently); an unsafe one is reported by
 * ucs_vfs_sock_check_dir() once, and again only after it changed.
 */
static ucs_status_t ucs_vfs_conn_check_dir(void)
{
    ucs_status_t status;
    struct stat st;

    if (lstat(ucs_vfs_conn.dir, &st) != 0) {
        return UCS_ERR_NO_ELEM;
    }

    if (ucs_vfs_conn.unsafe_valid &&
        ucs_vfs_conn_same_dir(&st, &ucs_vfs_conn.unsafe_st)) {
        return UCS_ERR_IO_ERROR;
    }

    status = ucs_vfs_sock_check_dir(ucs_vfs_conn.dir, 0);
    if (status == UCS_ERR_IO_ERROR) {
        ucs_vfs_conn.unsafe_st    = st;
        ucs_vfs_conn.unsafe_valid = 1;
    } else {
        ucs_vfs_conn.unsafe_valid = 0;
    }
    return status;
}

/* The program's name, for the daemon's listing */
static void ucs_vfs_conn_prog_name(char *buf, size_t max)
{
    FILE *file;
    size_t len;

    file = fopen("/proc/self/comm", "re");
    if ((file == NULL) || (fgets(buf, (int)max, file) == NULL)) {
        snprintf(buf, max, "%s", program_invocation_short_name);
    }
    if (file != NULL) {
        fclose(file);
    }

    len      = strcspn(buf, "\n");
    buf[len] = '\0';
}

static ucs_status_t ucs_vfs_conn_send_hello(int fd)
{
    struct {
        ucs_vfs_sock_hello_t hello;
        char name[64];
    } msg;

    memset(&msg, 0, sizeof(msg));
    msg.hello.pid = (uint32_t)getpid();
    ucs_vfs_conn_prog_name(msg.name, sizeof(msg.name));
    return ucs_vfs_sock_send(fd, UCS_VFS_SOCK_OP_HELLO, 0, 0, &msg,
                             sizeof(msg.hello) + strlen(msg.name) + 1);
}

/* Blocking from now on, each send and receive bounded in time. */
static ucs_status_t ucs_vfs_conn_setup_fd(int fd)
{
    struct timeval tv = {.tv_sec = UCS_VFS_CONN_IO_TIMEOUT_SEC};
    int flags;

    flags = fcntl(fd, F_GETFL);
    if ((flags < 0) || (fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) ||
        (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) ||
        (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)) {
        ucs_debug("vfs: failed to set up the daemon socket: %m");
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

static void ucs_vfs_conn_log_absent(const char *reason)
{
    if (!ucs_vfs_conn.absent_logged) {
        ucs_debug("vfs: no uct_vfs daemon at %s (%s); looking again every "
                  "%d ms",
                  ucs_vfs_conn.path, reason, ucs_vfs_conn.retry_ms);
        ucs_vfs_conn.absent_logged = 1;
    }
}

/* One attempt; on success the connection is in ucs_vfs_conn.fd. The
 * socket is non-blocking during connect(), so a daemon that does not
 * accept cannot hold the thread. */
static void ucs_vfs_conn_connect(void)
{
    struct sockaddr_un addr;
    int fd;

    if (ucs_vfs_conn_check_dir() != UCS_OK) {
        ucs_vfs_conn_log_absent("no usable socket directory");
        return;
    }

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        ucs_vfs_conn_log_absent(strerror(errno));
        return;
    }
    ucs_vfs_conn_set_fd(fd); /* from now on a forked child closes it */

    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, ucs_vfs_conn.path, sizeof(addr.sun_path));
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        ucs_vfs_conn_log_absent(strerror(errno));
        goto err_close;
    }

    if ((ucs_vfs_conn_setup_fd(fd) != UCS_OK) ||
        (ucs_vfs_conn_send_hello(fd) != UCS_OK)) {
        ucs_vfs_conn_log_absent("HELLO not sent");
        goto err_close;
    }

    ucs_debug("vfs: connected to the uct_vfs daemon at %s", ucs_vfs_conn.path);
    ucs_vfs_conn.absent_logged = 0;
    return;

err_close:
    ucs_vfs_conn_close();
}

/* ---- serving ---------------------------------------------------------- */

/* Entry names each followed by '/', turned into NUL before sending: a
 * name never holds a '/' */
static void ucs_vfs_conn_list_cb(const char *name, void *arg)
{
    ucs_string_buffer_t *strb = arg;

    /* a failed append shows as a missing name; the length limit is checked
     * afterwards */
    ucs_string_buffer_appendf(strb, "%s/", name);
}

static ucs_status_t ucs_vfs_conn_list(const char *path,
                                      ucs_string_buffer_t *strb)
{
    ucs_status_t status;
    size_t i;

    status = ucs_vfs_path_list_dir(path, ucs_vfs_conn_list_cb, strb);
    if ((status != UCS_OK) || (strb->buffer == NULL)) {
        return status;
    }

    for (i = 0; i < strb->length; ++i) {
        if (strb->buffer[i] == '/') {
            strb->buffer[i] = '\0';
        }
    }
    return UCS_OK;
}

static ucs_status_t ucs_vfs_conn_reply(int fd, const ucs_vfs_sock_hdr_t *req,
                                       ucs_status_t status, const void *payload,
                                       size_t length)
{
    if ((status == UCS_OK) && (length > UCS_VFS_SOCK_MAX_PAYLOAD)) {
        status = UCS_ERR_EXCEEDS_LIMIT;
    }
    if (status != UCS_OK) {
        length = 0;
    }
    return ucs_vfs_sock_send(fd, req->op, req->seq, status, payload, length);
}

/* Answers a request whose path was received in full. */
static ucs_status_t ucs_vfs_conn_answer(int fd, const ucs_vfs_sock_hdr_t *req,
                                        const char *path)
{
    ucs_vfs_sock_info_t info_msg;
    ucs_vfs_path_info_t info;
    ucs_string_buffer_t strb;
    ucs_status_t status;
    size_t length;

    if (req->op == UCS_VFS_SOCK_OP_GET_INFO) {
        status = ucs_vfs_path_get_info(path, &info);
        memset(&info_msg, 0, sizeof(info_msg));
        info_msg.type = (status == UCS_OK) ? (uint32_t)info.type : 0;
        info_msg.size = (status == UCS_OK) ? (uint64_t)info.size : 0;
        return ucs_vfs_conn_reply(fd, req, status, &info_msg, sizeof(info_msg));
    }

    ucs_string_buffer_init(&strb);
    switch (req->op) {
    case UCS_VFS_SOCK_OP_LIST:
        status = ucs_vfs_conn_list(path, &strb);
        length = ucs_string_buffer_length(&strb);
        break;
    case UCS_VFS_SOCK_OP_READ:
        status = ucs_vfs_path_read_file(path, &strb);
        length = ucs_string_buffer_length(&strb);
        break;
    case UCS_VFS_SOCK_OP_READLINK:
        status = ucs_vfs_path_get_link(path, &strb);
        length = ucs_string_buffer_length(&strb) + 1; /* with the NUL */
        break;
    default:
        ucs_debug("vfs: request %u has unknown op %u", req->seq, req->op);
        status = UCS_ERR_UNSUPPORTED;
        length = 0;
        break;
    }

    status = ucs_vfs_conn_reply(fd, req, status, ucs_string_buffer_cstr(&strb),
                                length);
    ucs_string_buffer_cleanup(&strb);
    return status;
}

/* Reads and drops @a length payload bytes that cannot be used. */
static ucs_status_t ucs_vfs_conn_discard(int fd, size_t length)
{
    char buf[4096];
    ucs_status_t status;
    size_t chunk;

    while (length > 0) {
        chunk  = (length < sizeof(buf)) ? length : sizeof(buf);
        status = ucs_vfs_sock_recv_all(fd, buf, chunk);
        if (status != UCS_OK) {
            return status;
        }
        length -= chunk;
    }
    return UCS_OK;
}

/* Serves one request. An error return means the stream is broken. */
static ucs_status_t ucs_vfs_conn_serve(int fd)
{
    char path[UCS_VFS_PATH_MAX];
    ucs_vfs_sock_hdr_t req;
    ucs_status_t status;

    status = ucs_vfs_sock_recv_hdr(fd, &req);
    if (status != UCS_OK) {
        return status;
    }

    if (req.length > sizeof(path)) {
        status = ucs_vfs_conn_discard(fd, req.length);
        if (status != UCS_OK) {
            return status;
        }
        ucs_debug("vfs: request %u carries %u bytes, more than a path", req.seq,
                  req.length);
        return ucs_vfs_conn_reply(fd, &req, UCS_ERR_EXCEEDS_LIMIT, NULL, 0);
    }

    status = ucs_vfs_sock_recv_all(fd, path, req.length);
    if (status != UCS_OK) {
        return status;
    }

    if ((req.length == 0) || (path[req.length - 1] != '\0') ||
        (strlen(path) != (req.length - 1)) || (path[0] != '/')) {
        ucs_debug("vfs: request %u has no absolute NUL-terminated path",
                  req.seq);
        return ucs_vfs_conn_reply(fd, &req, UCS_ERR_INVALID_PARAM, NULL, 0);
    }

    return ucs_vfs_conn_answer(fd, &req, path);
}

/* ---- the service thread ----------------------------------------------- */

static void *ucs_vfs_conn_thread(void *arg)
{
    struct pollfd pfds[2];
    ucs_status_t status;
    nfds_t nfds;
    int ret;

    ucs_debug("vfs: service thread started for %s", ucs_vfs_conn.path);
    ucs_vfs_conn.absent_logged = 0;

    for (;;) {
        if (ucs_vfs_conn.fd < 0) {
            ucs_vfs_conn_connect();
        }

        pfds[0].fd     = ucs_vfs_conn.wakeup_fd;
        pfds[0].events = POLLIN;
        pfds[1].fd     = ucs_vfs_conn.fd;
        pfds[1].events = POLLIN;
        nfds           = (ucs_vfs_conn.fd < 0) ? 1 : 2;

        ret = poll(pfds, nfds, (nfds == 1) ? ucs_vfs_conn.retry_ms : -1);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            ucs_error("vfs: poll() failed: %m; the uct_vfs daemon is no "
                      "longer served by this process");
            break;
        }

        if (pfds[0].revents != 0) {
            break; /* stop request */
        }

        if ((nfds == 2) && (pfds[1].revents != 0)) {
            status = ucs_vfs_conn_serve(ucs_vfs_conn.fd);
            if (status != UCS_OK) {
                ucs_debug("vfs: disconnected from the uct_vfs daemon (%s); "
                          "looking for it again every %d ms",
                          ucs_status_string(status), ucs_vfs_conn.retry_ms);
                ucs_vfs_conn_close();
                ucs_vfs_conn.absent_logged = 1;
            }
        }
    }

    ucs_vfs_conn_close();
    ucs_debug("vfs: service thread stopped");
    return NULL;
}

/* Life lock held. */
static ucs_status_t ucs_vfs_conn_read_config(void)
{
    double retry_ms = ucs_global_opts.vfs_retry_interval * 1e3;

    if ((ucs_vfs_sock_dir(ucs_vfs_conn.dir, sizeof(ucs_vfs_conn.dir)) !=
         UCS_OK) ||
        (ucs_vfs_sock_path(ucs_vfs_conn.path, sizeof(ucs_vfs_conn.path)) !=
         UCS_OK)) {
        ucs_error("vfs: the uct_vfs socket path is too long for a unix "
                  "socket (at most %zu characters); set UCX_VFS_SOCK_DIR to "
                  "a shorter directory",
                  UCS_VFS_CONN_SOCK_PATH_MAX - 1);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    if (!(retry_ms >= 1.0)) {
        retry_ms = 1.0;
    } else if (retry_ms > INT_MAX) {
        retry_ms = INT_MAX;
    }
    ucs_vfs_conn.retry_ms = (int)retry_ms;
    return UCS_OK;
}

ucs_status_t ucs_vfs_conn_start(void)
{
    sigset_t all_signals, old_signals;
    ucs_status_t status;
    int ret;

    pthread_mutex_lock(&ucs_vfs_conn.life_lock);
    if (ucs_vfs_conn.running) {
        status = UCS_OK;
        goto out_unlock;
    }

    status = ucs_vfs_conn_read_config();
    if (status != UCS_OK) {
        goto out_unlock;
    }

    ucs_vfs_conn.wakeup_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ucs_vfs_conn.wakeup_fd < 0) {
        ucs_error("vfs: eventfd() failed: %m; check the open files limit "
                  "(ulimit -n)");
        status = UCS_ERR_IO_ERROR;
        goto out_unlock;
    }

    /* signals are for the application's threads */
    sigfillset(&all_signals);
    pthread_sigmask(SIG_SETMASK, &all_signals, &old_signals);
    ret = pthread_create(&ucs_vfs_conn.thread, NULL, ucs_vfs_conn_thread, NULL);
    pthread_sigmask(SIG_SETMASK, &old_signals, NULL);
    if (ret != 0) {
        ucs_error("vfs: failed to start the service thread: %s; check the "
                  "process and thread limits (ulimit -u)",
                  strerror(ret));
        status = UCS_ERR_IO_ERROR;
        goto err_close_wakeup;
    }

    pthread_setname_np(ucs_vfs_conn.thread, "ucs-vfs");
    ucs_vfs_conn.running = 1;
    status               = UCS_OK;
    goto out_unlock;

err_close_wakeup:
    close(ucs_vfs_conn.wakeup_fd);
    ucs_vfs_conn.wakeup_fd = -1;
out_unlock:
    pthread_mutex_unlock(&ucs_vfs_conn.life_lock);
    return status;
}

void ucs_vfs_conn_stop(void)
{
    uint64_t one = 1;
    int ret;

    pthread_mutex_lock(&ucs_vfs_conn.life_lock);
    if (!ucs_vfs_conn.running ||
        pthread_equal(ucs_vfs_conn.thread, pthread_self())) {
        /* not running, or exit() from a show callback: nothing to wait */
        pthread_mutex_unlock(&ucs_vfs_conn.life_lock);
        return;
    }

    if (write(ucs_vfs_conn.wakeup_fd, &one, sizeof(one)) < 0) {
        ucs_error("vfs: waking the service thread up failed: %m");
    }

    /* a send or receive in progress ends now rather than at its timeout */
    pthread_mutex_lock(&ucs_vfs_conn.lock);
    if (ucs_vfs_conn.fd >= 0) {
        shutdown(ucs_vfs_conn.fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&ucs_vfs_conn.lock);

    ret = pthread_join(ucs_vfs_conn.thread, NULL);
    if (ret != 0) {
        ucs_error("vfs: pthread_join() of the service thread failed: %s",
                  strerror(ret));
    }

    close(ucs_vfs_conn.wakeup_fd);
    ucs_vfs_conn.wakeup_fd = -1;
    ucs_vfs_conn.running   = 0;
    pthread_mutex_unlock(&ucs_vfs_conn.life_lock);
}

void ucs_vfs_conn_autostart(void)
{
    if (!ucs_global_opts.vfs_enable ||
        __atomic_load_n(&ucs_vfs_conn.autostarted, __ATOMIC_ACQUIRE) ||
        __atomic_exchange_n(&ucs_vfs_conn.autostarted, 1, __ATOMIC_ACQ_REL)) {
        return;
    }

    /* errors are logged; the process runs on without the daemon */
    ucs_vfs_conn_start();
}

/* ---- fork and unload -------------------------------------------------- */

void ucs_vfs_conn_fork_prepare(void)
{
    pthread_mutex_lock(&ucs_vfs_conn.life_lock);
    pthread_mutex_lock(&ucs_vfs_conn.lock);
}

void ucs_vfs_conn_fork_parent(void)
{
    pthread_mutex_unlock(&ucs_vfs_conn.lock);
    pthread_mutex_unlock(&ucs_vfs_conn.life_lock);
}

/* The thread does not exist in the child, and the connection is the
 * parent's: drop both. The child's first object starts its own. */
void ucs_vfs_conn_fork_child(void)
{
    pthread_mutex_init(&ucs_vfs_conn.life_lock, NULL);
    pthread_mutex_init(&ucs_vfs_conn.lock, NULL);

    if (ucs_vfs_conn.fd >= 0) {
        close(ucs_vfs_conn.fd);
        ucs_vfs_conn.fd = -1;
    }
    if (ucs_vfs_conn.wakeup_fd >= 0) {
        close(ucs_vfs_conn.wakeup_fd);
        ucs_vfs_conn.wakeup_fd = -1;
    }
    ucs_vfs_conn.running      = 0;
    ucs_vfs_conn.autostarted  = 0;
    ucs_vfs_conn.unsafe_valid = 0;
}

static void UCS_F_DTOR ucs_vfs_conn_cleanup(void)
{
    ucs_vfs_conn_stop();
}
