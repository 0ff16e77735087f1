/*
 * The process side of the uct_vfs daemon connection (internal to libucs
 * and its tests; not installed).
 *
 * A service thread of its own ("ucs-vfs") connects to the daemon's socket,
 * sends HELLO and answers the daemon's requests from the object tree. When
 * the daemon is absent or goes away it retries every
 * UCX_VFS_RETRY_INTERVAL. It is not the async thread: the async thread is
 * shared with transports (a slow reply would delay their timers) and does
 * not survive fork(), while this thread is simply started again by a child
 * that creates objects.
 *
 * With UCX_VFS_ENABLE=y the first ucs_vfs_obj_add_dir() of the process
 * starts it (ucs_vfs_conn_autostart()); tests call ucs_vfs_conn_start()
 * and ucs_vfs_conn_stop() themselves.
 */
#ifndef UCS_VFS_CONN_H_
#define UCS_VFS_CONN_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

/**
 * Starts the service thread unless it runs already. The socket path
 * (UCX_VFS_SOCK_DIR, XDG_RUNTIME_DIR; see ucs_vfs_sock_dir()) and the
 * retry interval (ucs_global_opts.vfs_retry_interval) are read here, so a
 * stop and a new start pick up changed values. The first connection
 * attempt is made by the thread, not by the caller.
 * @return UCS_OK; UCS_ERR_EXCEEDS_LIMIT when the socket path is too long
 *         for a unix socket; UCS_ERR_IO_ERROR when the thread cannot start.
 */
ucs_status_t ucs_vfs_conn_start(void);

/**
 * Stops the service thread and closes the connection; waits for a request
 * being served. Nothing happens when it is not running. Not from a show
 * callback.
 */
void ucs_vfs_conn_stop(void);

/**
 * ucs_vfs_conn_start() once per process if UCX_VFS_ENABLE is set. Called
 * after each successful ucs_vfs_obj_add_dir(), without the tree's lock.
 */
void ucs_vfs_conn_autostart(void);

/** Fork handlers, called by the tree's own handlers (vfs.c) so that the
 *  locks are always taken in one order: connection first, then tree. */
void ucs_vfs_conn_fork_prepare(void);
void ucs_vfs_conn_fork_parent(void);
void ucs_vfs_conn_fork_child(void);

END_C_DECLS

#endif
