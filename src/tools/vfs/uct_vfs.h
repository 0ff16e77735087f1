/*
 * uct_vfs: shared state of the daemon.
 *
 * Three kinds of threads touch it: the main thread (setup, then the FUSE
 * loop, then teardown), the FUSE worker threads (uct_vfs_fuse.c), and the
 * connection thread (uct_vfs_conn.c), which accepts processes, reads their
 * HELLO, and notices when they go away. Only the connection thread adds
 * connections to or removes them from the list; FUSE threads take a
 * reference to the connection they send a request on.
 */
#ifndef UCT_VFS_H_
#define UCT_VFS_H_

#include <ucs/datastruct/list.h>
#include <ucs/type/status.h>

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* How long a FUSE request waits for a process's answer */
#define UCT_VFS_REQUEST_TIMEOUT_MS 2000

/* How long the process may take to finish a message it started sending */
#define UCT_VFS_RECV_TIMEOUT_MS 1000

#define UCT_VFS_PROG_NAME_MAX 64

/* One connected process */
typedef struct uct_vfs_conn {
    ucs_list_link_t list; /* in uct_vfs_daemon_t::conns */
    int fd;
    pid_t pid;                        /* of the peer, from SO_PEERCRED */
    char prog[UCT_VFS_PROG_NAME_MAX]; /* from HELLO */
    time_t since;                     /* when it connected */
    int attached;                     /* HELLO received: shown in the root */
    int closing;                      /* broken or replaced: hidden, and the
                                         connection thread drops it soon */
    int refcount;                     /* under the daemon's lock; the list holds
                                         one while the connection is listed */
    pthread_mutex_t req_lock;         /* one request at a time */
    uint32_t seq;                     /* last request number, under req_lock */
} uct_vfs_conn_t;

typedef struct {
    /* Set up by the main thread before the other threads start */
    char sock_dir[PATH_MAX];
    char sock_path[PATH_MAX];
    char mount_dir[PATH_MAX];
    int created_mount_dir; /* remove it again at exit */
    int listen_fd;
    int wakeup_fd[2]; /* pipe: stops the connection thread */
    pthread_t thread;
    int thread_started;
    uid_t uid;
    gid_t gid;
    time_t start_time;

    /* Connected processes */
    pthread_mutex_t lock;
    ucs_list_link_t conns;
} uct_vfs_daemon_t;

/* ---- uct_vfs_conn.c ---------------------------------------------------- */

/* Creates the listening socket in d->sock_dir; refuses when another
 * daemon answers there, removes a stale socket file. */
ucs_status_t uct_vfs_listen(uct_vfs_daemon_t *d);

/* Starts and stops the thread that accepts and watches the connections.
 * Stopping also closes every connection. */
ucs_status_t uct_vfs_conn_thread_start(uct_vfs_daemon_t *d);
void uct_vfs_conn_thread_stop(uct_vfs_daemon_t *d);

/* Closes the listening socket and removes its file. */
void uct_vfs_unlisten(uct_vfs_daemon_t *d);

/* The attached connection of process @a pid with a reference taken, or
 * NULL. */
uct_vfs_conn_t *uct_vfs_conn_get(uct_vfs_daemon_t *d, pid_t pid);
void uct_vfs_conn_put(uct_vfs_daemon_t *d, uct_vfs_conn_t *conn);

/* The pids of the attached processes, in a malloc()ed array. */
ucs_status_t uct_vfs_conn_list_pids(uct_vfs_daemon_t *d, pid_t **pids_p,
                                    size_t *count_p);

/*
 * Sends request @a op for the tree path @a path to the process and waits
 * for its answer. On success, *payload_p is the answer's payload (malloc,
 * with one extra NUL byte after it) and *length_p its length.
 * @return 0, or a negative errno for FUSE: -ENOENT when the process has no
 *         such node, -EIO for other failures (timeouts, a broken
 *         connection, which is then dropped).
 */
int uct_vfs_conn_request(uct_vfs_daemon_t *d, uct_vfs_conn_t *conn, uint16_t op,
                         const char *path, char **payload_p, size_t *length_p);

/* ---- uct_vfs_fuse.c ---------------------------------------------------- */

struct fuse_operations;

/* The FUSE operations of the mount */
extern const struct fuse_operations uct_vfs_fuse_ops;

#endif
