/*
 * uct_vfs: the connections to the processes.
 *
 * The connection thread polls the listening socket, the connections that
 * have not sent their HELLO yet (for input), and the attached ones (only
 * for hang-up: their answers are read by the FUSE thread that asked).
 * It is the only thread that removes a connection from the list; a FUSE
 * thread that finds a connection broken shuts the socket down, which the
 * connection thread then sees as a hang-up.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* SO_PEERCRED, struct ucred, POLLRDHUP, accept4 */
#endif

#include "uct_vfs.h"

#include <ucs/debug/log.h>
#include <ucs/vfs/vfs_sock.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The longest program name a HELLO may carry; longer ones are cut */
#define UCT_VFS_HELLO_MAX (sizeof(ucs_vfs_sock_hello_t) + 4096)

static const char *uct_vfs_op_name(uint16_t op)
{
    switch (op) {
    case UCS_VFS_SOCK_OP_GET_INFO:
        return "GET_INFO";
    case UCS_VFS_SOCK_OP_LIST:
        return "LIST";
    case UCS_VFS_SOCK_OP_READ:
        return "READ";
    case UCS_VFS_SOCK_OP_READLINK:
        return "READLINK";
    default:
        return "?";
    }
}

static void uct_vfs_make_addr(const char *path, struct sockaddr_un *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    memcpy(addr->sun_path, path, strlen(path) + 1);
}

/*
 * A socket file is already there: if a daemon answers on it, refuse to
 * start; otherwise it was left by a daemon that did not exit cleanly.
 */
static ucs_status_t uct_vfs_remove_stale_socket(const char *path,
                                                const struct stat *st)
{
    struct sockaddr_un addr;
    struct ucred cred;
    socklen_t len = sizeof(cred);
    int fd;

    if (!S_ISSOCK(st->st_mode)) {
        ucs_error("uct_vfs: %s exists and is not a socket; remove it or "
                  "choose another socket directory with -s",
                  path);
        return UCS_ERR_ALREADY_EXISTS;
    }

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ucs_error("uct_vfs: cannot create a unix socket: %m");
        return UCS_ERR_IO_ERROR;
    }
    uct_vfs_make_addr(path, &addr);
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
            cred.pid = 0;
        }
        close(fd);
        ucs_error("uct_vfs: another uct_vfs (pid %d) is already serving "
                  "%s; stop it first, or give this one another socket "
                  "directory with -s",
                  (int)cred.pid, path);
        return UCS_ERR_BUSY;
    }
    if (errno != ECONNREFUSED) {
        ucs_error("uct_vfs: cannot tell whether %s is in use: %m; remove "
                  "it if no uct_vfs is running",
                  path);
        close(fd);
        return UCS_ERR_IO_ERROR;
    }
    close(fd);

    ucs_info("uct_vfs: removing the stale socket %s of a daemon that did "
             "not exit cleanly",
             path);
    if ((unlink(path) != 0) && (errno != ENOENT)) {
        ucs_error("uct_vfs: cannot remove the stale socket %s: %m", path);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t uct_vfs_listen(uct_vfs_daemon_t *d)
{
    struct sockaddr_un addr;
    struct stat st;
    ucs_status_t status;
    mode_t old_umask;
    int fd, ret;

    if (strlen(d->sock_path) >= sizeof(addr.sun_path)) {
        ucs_error("uct_vfs: the socket path %s is longer than a unix "
                  "socket allows (%zu bytes); choose a shorter socket "
                  "directory with -s",
                  d->sock_path, sizeof(addr.sun_path) - 1);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    if (lstat(d->sock_path, &st) == 0) {
        status = uct_vfs_remove_stale_socket(d->sock_path, &st);
        if (status != UCS_OK) {
            return status;
        }
    } else if (errno != ENOENT) {
        ucs_error("uct_vfs: cannot check %s: %m", d->sock_path);
        return UCS_ERR_IO_ERROR;
    }

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        ucs_error("uct_vfs: cannot create a unix socket: %m");
        return UCS_ERR_IO_ERROR;
    }

    /* The directory is private already; the socket is too */
    uct_vfs_make_addr(d->sock_path, &addr);
    old_umask = umask(0077);
    ret       = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
    umask(old_umask);
    if (ret != 0) {
        ucs_error("uct_vfs: cannot bind the socket %s: %m", d->sock_path);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    if (listen(fd, 128) != 0) {
        ucs_error("uct_vfs: cannot listen on %s: %m", d->sock_path);
        status = UCS_ERR_IO_ERROR;
        goto err_unlink;
    }

    d->listen_fd = fd;
    return UCS_OK;

err_unlink:
    unlink(d->sock_path);
err_close:
    close(fd);
    return status;
}

void uct_vfs_unlisten(uct_vfs_daemon_t *d)
{
    if (d->listen_fd < 0) {
        return;
    }
    close(d->listen_fd);
    d->listen_fd = -1;
    if ((unlink(d->sock_path) != 0) && (errno != ENOENT)) {
        ucs_warn("uct_vfs: cannot remove the socket %s: %m", d->sock_path);
    }
}

uct_vfs_conn_t *uct_vfs_conn_get(uct_vfs_daemon_t *d, pid_t pid)
{
    uct_vfs_conn_t *conn;

    pthread_mutex_lock(&d->lock);
    ucs_list_for_each(conn, &d->conns, list) {
        if (conn->attached && !conn->closing && (conn->pid == pid)) {
            ++conn->refcount;
            pthread_mutex_unlock(&d->lock);
            return conn;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

void uct_vfs_conn_put(uct_vfs_daemon_t *d, uct_vfs_conn_t *conn)
{
    int last;

    pthread_mutex_lock(&d->lock);
    last = (--conn->refcount == 0);
    pthread_mutex_unlock(&d->lock);
    if (!last) {
        return;
    }

    close(conn->fd);
    pthread_mutex_destroy(&conn->req_lock);
    free(conn);
}

ucs_status_t uct_vfs_conn_list_pids(uct_vfs_daemon_t *d, pid_t **pids_p,
                                    size_t *count_p)
{
    uct_vfs_conn_t *conn;
    size_t count = 0;
    pid_t *pids;

    pthread_mutex_lock(&d->lock);
    pids = malloc(sizeof(*pids) * (ucs_list_length(&d->conns) + 1));
    if (pids == NULL) {
        pthread_mutex_unlock(&d->lock);
        return UCS_ERR_NO_MEMORY;
    }
    ucs_list_for_each(conn, &d->conns, list) {
        if (conn->attached && !conn->closing) {
            pids[count++] = conn->pid;
        }
    }
    pthread_mutex_unlock(&d->lock);

    *pids_p  = pids;
    *count_p = count;
    return UCS_OK;
}

/* Makes the connection thread drop @a conn: it sees the hang-up */
static void uct_vfs_conn_close_soon(uct_vfs_daemon_t *d, uct_vfs_conn_t *conn)
{
    pthread_mutex_lock(&d->lock);
    conn->closing = 1;
    pthread_mutex_unlock(&d->lock);
    shutdown(conn->fd, SHUT_RDWR);
}

/* Connection thread only: unlists @a conn and drops the list's reference */
static void uct_vfs_conn_drop(uct_vfs_daemon_t *d, uct_vfs_conn_t *conn)
{
    pthread_mutex_lock(&d->lock);
    ucs_list_del(&conn->list);
    pthread_mutex_unlock(&d->lock);

    if (conn->attached) {
        ucs_info("uct_vfs: pid %d (%s) detached", (int)conn->pid, conn->prog);
    }
    /* Wakes a FUSE thread that still waits on it */
    shutdown(conn->fd, SHUT_RDWR);
    uct_vfs_conn_put(d, conn);
}

static void uct_vfs_set_timeout(int fd, int optname, int msec)
{
    struct timeval tv;

    tv.tv_sec  = msec / 1000;
    tv.tv_usec = (msec % 1000) * 1000;
    if (setsockopt(fd, SOL_SOCKET, optname, &tv, sizeof(tv)) != 0) {
        ucs_debug("uct_vfs: cannot set a socket timeout: %m");
    }
}

static void uct_vfs_accept(uct_vfs_daemon_t *d)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    uct_vfs_conn_t *conn;
    int fd;

    fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
        if ((errno != EAGAIN) && (errno != EINTR) && (errno != ECONNABORTED)) {
            ucs_error("uct_vfs: cannot accept a connection: %m");
            if ((errno == EMFILE) || (errno == ENFILE)) {
                /* Do not spin on a connection we cannot take yet */
                usleep(100000);
            }
        }
        return;
    }

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        ucs_error("uct_vfs: cannot tell who connected (SO_PEERCRED: %m); "
                  "closing the connection");
        close(fd);
        return;
    }
    if (cred.uid != d->uid) {
        ucs_warn("uct_vfs: refusing pid %d of uid %u: only processes of "
                 "uid %u may attach to this daemon",
                 (int)cred.pid, (unsigned)cred.uid, (unsigned)d->uid);
        close(fd);
        return;
    }

    conn = calloc(1, sizeof(*conn));
    if (conn == NULL) {
        ucs_error("uct_vfs: out of memory for the connection of pid %d",
                  (int)cred.pid);
        close(fd);
        return;
    }

    /* A message, once started, must arrive in full soon */
    uct_vfs_set_timeout(fd, SO_RCVTIMEO, UCT_VFS_RECV_TIMEOUT_MS);
    uct_vfs_set_timeout(fd, SO_SNDTIMEO, UCT_VFS_REQUEST_TIMEOUT_MS);

    conn->fd       = fd;
    conn->pid      = cred.pid;
    conn->since    = time(NULL);
    conn->refcount = 1;
    snprintf(conn->prog, sizeof(conn->prog), "?");
    pthread_mutex_init(&conn->req_lock, NULL);

    pthread_mutex_lock(&d->lock);
    ucs_list_add_tail(&d->conns, &conn->list);
    pthread_mutex_unlock(&d->lock);
    ucs_debug("uct_vfs: pid %d connected; waiting for its HELLO",
              (int)conn->pid);
}

/* Reads the HELLO of a new connection; drops the connection when it is
 * not one */
static void uct_vfs_conn_hello(uct_vfs_daemon_t *d, uct_vfs_conn_t *conn)
{
    ucs_vfs_sock_hello_t hello;
    uct_vfs_conn_t *other, *old = NULL;
    ucs_vfs_sock_hdr_t hdr;
    ucs_status_t status;
    char *buf;

    status = ucs_vfs_sock_recv_hdr(conn->fd, &hdr);
    if (status == UCS_ERR_CONNECTION_RESET) {
        ucs_debug("uct_vfs: pid %d closed its connection before HELLO",
                  (int)conn->pid);
        goto err_drop;
    } else if (status != UCS_OK) {
        ucs_warn("uct_vfs: pid %d sent no valid HELLO (%s); is it built "
                 "with another openuct version?",
                 (int)conn->pid, ucs_status_string(status));
        goto err_drop;
    }
    if ((hdr.op != UCS_VFS_SOCK_OP_HELLO) || (hdr.length < sizeof(hello)) ||
        (hdr.length > UCT_VFS_HELLO_MAX)) {
        ucs_warn("uct_vfs: pid %d sent message %u of %u bytes instead of "
                 "HELLO; closing its connection",
                 (int)conn->pid, (unsigned)hdr.op, (unsigned)hdr.length);
        goto err_drop;
    }

    buf = malloc(hdr.length + 1);
    if (buf == NULL) {
        ucs_error("uct_vfs: out of memory for the HELLO of pid %d",
                  (int)conn->pid);
        goto err_drop;
    }
    status = ucs_vfs_sock_recv_all(conn->fd, buf, hdr.length);
    if (status != UCS_OK) {
        ucs_warn("uct_vfs: pid %d sent an incomplete HELLO (%s)",
                 (int)conn->pid, ucs_status_string(status));
        free(buf);
        goto err_drop;
    }
    buf[hdr.length] = '\0';
    memcpy(&hello, buf, sizeof(hello));
    if (buf[sizeof(hello)] != '\0') {
        snprintf(conn->prog, sizeof(conn->prog), "%s", buf + sizeof(hello));
    }
    free(buf);

    if ((pid_t)hello.pid != conn->pid) {
        ucs_debug("uct_vfs: pid %d calls itself pid %u (another pid "
                  "namespace?); showing it as %d",
                  (int)conn->pid, (unsigned)hello.pid, (int)conn->pid);
    }

    /* A process that connects again replaces its previous connection */
    pthread_mutex_lock(&d->lock);
    ucs_list_for_each(other, &d->conns, list) {
        if ((other != conn) && other->attached && !other->closing &&
            (other->pid == conn->pid)) {
            old = other;
        }
    }
    conn->attached = 1;
    pthread_mutex_unlock(&d->lock);

    if (old != NULL) {
        ucs_info("uct_vfs: pid %d connected again; closing its previous "
                 "connection",
                 (int)conn->pid);
        uct_vfs_conn_close_soon(d, old);
    }
    ucs_info("uct_vfs: pid %d (%s) attached", (int)conn->pid, conn->prog);
    return;

err_drop:
    uct_vfs_conn_drop(d, conn);
}

typedef struct {
    struct pollfd *pfds;
    uct_vfs_conn_t **conns; /* conns[i] is polled by pfds[i]; NULL below
                               UCT_VFS_POLL_FIRST_CONN */
    size_t capacity;
} uct_vfs_poll_set_t;

enum { UCT_VFS_POLL_WAKEUP, UCT_VFS_POLL_LISTEN, UCT_VFS_POLL_FIRST_CONN };

/* Fills @a set from the connection list; returns the number of entries,
 * 0 when there is no memory even for the first ones */
static size_t uct_vfs_poll_set_fill(uct_vfs_daemon_t *d,
                                    uct_vfs_poll_set_t *set)
{
    size_t needed, n = UCT_VFS_POLL_FIRST_CONN;
    uct_vfs_conn_t **conns;
    struct pollfd *pfds;
    uct_vfs_conn_t *conn;

    pthread_mutex_lock(&d->lock);
    needed = UCT_VFS_POLL_FIRST_CONN + ucs_list_length(&d->conns);
    if (needed > set->capacity) {
        pfds = realloc(set->pfds, sizeof(*pfds) * needed);
        if (pfds != NULL) {
            set->pfds = pfds;
            conns     = realloc(set->conns, sizeof(*conns) * needed);
            if (conns != NULL) {
                set->conns    = conns;
                set->capacity = needed;
            }
        }
        if (set->capacity < needed) {
            /* Watch what fits; the others wait for memory */
            ucs_error("uct_vfs: out of memory for %zu connections",
                      needed - UCT_VFS_POLL_FIRST_CONN);
        }
        if (set->capacity < UCT_VFS_POLL_FIRST_CONN) {
            pthread_mutex_unlock(&d->lock);
            return 0;
        }
    }

    set->pfds[UCT_VFS_POLL_WAKEUP].fd     = d->wakeup_fd[0];
    set->pfds[UCT_VFS_POLL_WAKEUP].events = POLLIN;
    set->pfds[UCT_VFS_POLL_LISTEN].fd     = d->listen_fd;
    set->pfds[UCT_VFS_POLL_LISTEN].events = POLLIN;
    ucs_list_for_each(conn, &d->conns, list) {
        if (n == set->capacity) {
            break;
        }
        set->pfds[n].fd = conn->fd;
        /* An attached process speaks only when asked: watch for the end */
        set->pfds[n].events = conn->attached ? POLLRDHUP : POLLIN;
        set->conns[n]       = conn;
        ++n;
    }
    pthread_mutex_unlock(&d->lock);
    return n;
}

static void *uct_vfs_conn_thread(void *arg)
{
    uct_vfs_daemon_t *d    = arg;
    uct_vfs_poll_set_t set = {NULL, NULL, 0};
    uct_vfs_conn_t *conn;
    size_t i, n;
    short revents;

    for (;;) {
        n = uct_vfs_poll_set_fill(d, &set);
        if (n == 0) {
            usleep(100000);
            continue;
        }
        if (poll(set.pfds, n, -1) < 0) {
            if (errno != EINTR) {
                ucs_error("uct_vfs: poll failed: %m");
                usleep(100000);
            }
            continue;
        }

        if (set.pfds[UCT_VFS_POLL_WAKEUP].revents != 0) {
            break;
        }

        /* The connections first: the accept may add to the list */
        for (i = UCT_VFS_POLL_FIRST_CONN; i < n; ++i) {
            conn    = set.conns[i];
            revents = set.pfds[i].revents;
            if (revents == 0) {
                continue;
            }
            if (!conn->attached && (revents & POLLIN)) {
                uct_vfs_conn_hello(d, conn);
            } else {
                uct_vfs_conn_drop(d, conn);
            }
        }

        if (set.pfds[UCT_VFS_POLL_LISTEN].revents & POLLIN) {
            uct_vfs_accept(d);
        }
    }

    while (!ucs_list_is_empty(&d->conns)) {
        uct_vfs_conn_drop(d, ucs_list_head(&d->conns, uct_vfs_conn_t, list));
    }
    free(set.conns);
    free(set.pfds);
    return NULL;
}

ucs_status_t uct_vfs_conn_thread_start(uct_vfs_daemon_t *d)
{
    sigset_t all, old;
    int ret;

    if (pipe2(d->wakeup_fd, O_CLOEXEC) != 0) {
        ucs_error("uct_vfs: cannot create a pipe: %m");
        return UCS_ERR_IO_ERROR;
    }

    /* Signals go to the main thread, which runs the FUSE loop */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    ret = pthread_create(&d->thread, NULL, uct_vfs_conn_thread, d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ret != 0) {
        ucs_error("uct_vfs: cannot start the connection thread: %s",
                  strerror(ret));
        close(d->wakeup_fd[0]);
        close(d->wakeup_fd[1]);
        return UCS_ERR_IO_ERROR;
    }

    d->thread_started = 1;
    return UCS_OK;
}

void uct_vfs_conn_thread_stop(uct_vfs_daemon_t *d)
{
    ssize_t ret;

    if (!d->thread_started) {
        return;
    }

    do {
        ret = write(d->wakeup_fd[1], "x", 1);
    } while ((ret < 0) && (errno == EINTR));
    pthread_join(d->thread, NULL);
    close(d->wakeup_fd[0]);
    close(d->wakeup_fd[1]);
    d->thread_started = 0;
}

static double uct_vfs_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

/* Waits for request @a seq's answer; 0, -EIO, or 1 when the stream is
 * broken */
static int uct_vfs_conn_wait_reply(uct_vfs_conn_t *conn, uint16_t op,
                                   uint32_t seq, double deadline,
                                   ucs_vfs_sock_hdr_t *hdr, char **payload_p)
{
    ucs_status_t status = UCS_OK;
    struct pollfd pfd;
    double remaining;
    char *payload;
    int ret;

    for (;;) {
        remaining = deadline - uct_vfs_now();
        if (remaining <= 0) {
            return -EIO;
        }

        pfd.fd     = conn->fd;
        pfd.events = POLLIN;
        ret        = poll(&pfd, 1, (int)(remaining * 1000.0) + 1);
        if ((ret < 0) && (errno != EINTR)) {
            ucs_warn("uct_vfs: pid %d: poll failed: %m", (int)conn->pid);
            return 1;
        }
        if (ret <= 0) {
            continue;
        }

        status = ucs_vfs_sock_recv_hdr(conn->fd, hdr);
        if (status != UCS_OK) {
            goto err_broken;
        }
        payload = malloc(hdr->length + 1);
        if (payload == NULL) {
            ucs_error("uct_vfs: out of memory for an answer of %u bytes "
                      "from pid %d",
                      (unsigned)hdr->length, (int)conn->pid);
            return 1;
        }
        status = ucs_vfs_sock_recv_all(conn->fd, payload, hdr->length);
        if (status != UCS_OK) {
            free(payload);
            goto err_broken;
        }
        payload[hdr->length] = '\0';

        if ((hdr->seq == seq) && (hdr->op == op)) {
            *payload_p = payload;
            return 0;
        }
        free(payload);
        if ((int32_t)(hdr->seq - seq) >= 0) {
            ucs_warn("uct_vfs: pid %d answered request %u with %u (op %u); "
                     "closing its connection",
                     (int)conn->pid, (unsigned)seq, (unsigned)hdr->seq,
                     (unsigned)hdr->op);
            return 1;
        }
        ucs_debug("uct_vfs: pid %d: dropping the late answer to request %u",
                  (int)conn->pid, (unsigned)hdr->seq);
    }

err_broken:
    if (status == UCS_ERR_CONNECTION_RESET) {
        ucs_debug("uct_vfs: pid %d closed its connection", (int)conn->pid);
    } else {
        ucs_warn("uct_vfs: pid %d: receiving an answer failed (%s); "
                 "closing its connection",
                 (int)conn->pid, ucs_status_string(status));
    }
    return 1;
}

int uct_vfs_conn_request(uct_vfs_daemon_t *d, uct_vfs_conn_t *conn, uint16_t op,
                         const char *path, char **payload_p, size_t *length_p)
{
    double deadline = uct_vfs_now() + (UCT_VFS_REQUEST_TIMEOUT_MS / 1000.0);
    ucs_vfs_sock_hdr_t hdr;
    struct timespec abs;
    ucs_status_t status;
    char *payload;
    uint32_t seq;
    int ret;

    /* Behind a request that waits for a stuck process: as long as one */
    clock_gettime(CLOCK_REALTIME, &abs);
    abs.tv_sec += UCT_VFS_REQUEST_TIMEOUT_MS / 1000;
    abs.tv_nsec += (UCT_VFS_REQUEST_TIMEOUT_MS % 1000) * 1000000L;
    if (abs.tv_nsec >= 1000000000L) {
        abs.tv_nsec -= 1000000000L;
        ++abs.tv_sec;
    }
    ret = pthread_mutex_timedlock(&conn->req_lock, &abs);
    if (ret != 0) {
        ucs_debug("uct_vfs: pid %d is busy with an earlier request; %s %s "
                  "gives up",
                  (int)conn->pid, uct_vfs_op_name(op), path);
        return -EIO;
    }

    seq = ++conn->seq;
    ucs_trace("uct_vfs: pid %d: request %u %s %s", (int)conn->pid,
              (unsigned)seq, uct_vfs_op_name(op), path);
    status = ucs_vfs_sock_send(conn->fd, op, seq, 0, path, strlen(path) + 1);
    if (status != UCS_OK) {
        ucs_debug("uct_vfs: pid %d: sending %s %s failed (%s)", (int)conn->pid,
                  uct_vfs_op_name(op), path, ucs_status_string(status));
        ret = 1;
    } else {
        ret = uct_vfs_conn_wait_reply(conn, op, seq, deadline, &hdr, &payload);
    }
    pthread_mutex_unlock(&conn->req_lock);

    if (ret == 1) {
        uct_vfs_conn_close_soon(d, conn);
        return -EIO;
    } else if (ret < 0) {
        ucs_warn("uct_vfs: pid %d did not answer %s %s within %d ms",
                 (int)conn->pid, uct_vfs_op_name(op), path,
                 UCT_VFS_REQUEST_TIMEOUT_MS);
        return ret;
    }

    if (hdr.status != UCS_OK) {
        free(payload);
        if (hdr.status == UCS_ERR_NO_ELEM) {
            return -ENOENT;
        }
        ucs_debug("uct_vfs: pid %d: %s %s failed: %s", (int)conn->pid,
                  uct_vfs_op_name(op), path,
                  ucs_status_string((ucs_status_t)hdr.status));
        return -EIO;
    }

    *payload_p = payload;
    *length_p  = hdr.length;
    return 0;
}
