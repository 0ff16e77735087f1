/**
 * @file
 * The object tree that operators browse through the uct_vfs daemon: every
 * object (component, md, worker, iface, ep, ...) registers a directory
 * under its parent, read-only files whose content a callback produces at
 * read time, and symbolic links to other objects; it removes itself (and
 * everything under it) when it is destroyed.
 *
 * Objects are identified by their address: the pointer given as @a obj to
 * ucs_vfs_obj_add_dir() is the key for the files, links and children added
 * later. Relative paths may hold several components ("uct/md/tcp"); missing
 * directories in between are created on the way and disappear again when
 * they become empty.
 *
 * Thread safety: every function may be called from any thread. The show
 * callbacks run from the thread that serves the daemon (libucs's own
 * "ucs-vfs" thread, not the async thread), never from
 * uct_worker_progress(), with the tree's lock held: an object
 * cannot be removed while one of its callbacks runs. So a callback must
 * read only its object's plain fields (counters, state, sizes), take no
 * other lock, and not call back into this API.
 *
 * Included by every uct object that shows itself (components, memory
 * domains, interfaces, endpoints) and by the daemon connection that serves
 * the tree.
 */
#ifndef UCS_VFS_VFS_H_
#define UCS_VFS_VFS_H_

#include <ucs/datastruct/string_buffer.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/** The longest path in the tree, with the terminator. */
#define UCS_VFS_PATH_MAX 1024
/** The longest name of one entry, with the terminator. */
#define UCS_VFS_NAME_MAX 128

/**
 * Produces a file's content; runs as described in the file description.
 * @param [in]     obj      The object the file belongs to.
 * @param [in,out] strb     Append the content here.
 * @param [in]     arg_ptr  @a arg_ptr given to ucs_vfs_obj_add_ro_file().
 * @param [in]     arg_u64  @a arg_u64 given to ucs_vfs_obj_add_ro_file().
 */
typedef void (*ucs_vfs_file_show_cb_t)(void *obj, ucs_string_buffer_t *strb,
                                       void *arg_ptr, uint64_t arg_u64);

/** Kind of a node of the tree. */
typedef enum {
    UCS_VFS_NODE_TYPE_DIR,     /**< A directory (an object's, or one made
                                    on the way). */
    UCS_VFS_NODE_TYPE_RO_FILE, /**< A read-only file with a show
                                    callback. */
    UCS_VFS_NODE_TYPE_SYM_LINK /**< A symbolic link to an object's
                                    directory. */
} ucs_vfs_node_type_t;

/** What ucs_vfs_path_get_info() reports about a node. */
typedef struct {
    ucs_vfs_node_type_t type; /**< Kind of the node. */
    size_t size;              /**< File: content length; dir: entries;
                                   link: length of the target path. */
} ucs_vfs_path_info_t;

/**
 * Called once per entry of a directory, in no particular order, with the
 * tree's lock held (do not call this API from it).
 *
 * @param [in] name  Entry name; valid during the call.
 * @param [in] arg   The @a arg given to ucs_vfs_path_list_dir().
 */
typedef void (*ucs_vfs_list_dir_cb_t)(const char *name, void *arg);

/**
 * Adds the directory of @a obj at @a rel_path (printf format) under the
 * directory of @a parent_obj, or under the root when @a parent_obj is NULL.
 * When the tree is disabled (ucs_vfs_is_enabled()), does nothing and
 * returns UCS_OK.
 *
 * @param [in] parent_obj  Parent object, or NULL for the root.
 * @param [in] obj         The object (its address is the key); not NULL.
 * @param [in] rel_path    printf-style relative path; copied.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL @a obj, a bad path
 *         (empty, absolute, "." or ".." components, too long) or an
 *         unknown parent; UCS_ERR_ALREADY_EXISTS when the path or the
 *         object is taken; UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_vfs_obj_add_dir(void *parent_obj, void *obj,
                                 const char *rel_path, ...) UCS_F_PRINTF(3, 4);

/**
 * Adds a read-only file at @a rel_path (printf format) under the
 * directory of @a obj; reading it calls @a cb(obj, strb, arg_ptr, arg_u64).
 *
 * @param [in] obj       An object with a directory.
 * @param [in] cb        Show callback; not NULL.
 * @param [in] arg_ptr   Passed to @a cb; must stay valid while the file
 *                       exists.
 * @param [in] arg_u64   Passed to @a cb.
 * @param [in] rel_path  printf-style relative path; copied.
 *
 * @return As ucs_vfs_obj_add_dir(); UCS_ERR_INVALID_PARAM also for a NULL
 *         @a cb or an @a obj without a directory.
 */
ucs_status_t ucs_vfs_obj_add_ro_file(void *obj, ucs_vfs_file_show_cb_t cb,
                                     void *arg_ptr, uint64_t arg_u64,
                                     const char *rel_path, ...)
    UCS_F_PRINTF(5, 6);

/**
 * Adds a symbolic link at @a rel_path (printf format) under the directory
 * of @a obj, pointing to the directory of @a target_obj. The link goes
 * away when either object is removed.
 *
 * @param [in] obj         An object with a directory.
 * @param [in] target_obj  An object with a directory.
 * @param [in] rel_path    printf-style relative path; copied.
 *
 * @return As ucs_vfs_obj_add_dir(); UCS_ERR_INVALID_PARAM also when
 *         @a target_obj has no directory.
 */
ucs_status_t ucs_vfs_obj_add_sym_link(void *obj, void *target_obj,
                                      const char *rel_path, ...)
    UCS_F_PRINTF(3, 4);

/**
 * Removes the directory of @a obj with its files, links, the directories
 * of objects below it, and every link pointing into what is removed.
 * Waits for a show callback of a removed object that is running. Unknown
 * objects are ignored (an object whose add failed may be removed).
 *
 * @param [in] obj  The object; must not be called from a show callback.
 */
void ucs_vfs_obj_remove(void *obj);

/* ---- serving the tree (the daemon connection, tests) ------------------- */

/**
 * Whether the add functions keep what they are given. Unless set here, it
 * is decided at the first add from UCX_VFS_ENABLE: in a process that no
 * daemon can look into, objects spend no memory and take no lock on the
 * tree (the add functions return UCS_OK and keep nothing, and an
 * interface without a directory gives its endpoints none). Objects added
 * while it is off stay out of the tree when it is switched on.
 *
 * @param [in] enabled  Nonzero to keep objects, 0 to ignore them.
 */
void ucs_vfs_set_enabled(int enabled);

/**
 * Whether the add functions keep what they are given; decides from
 * UCX_VFS_ENABLE on the first call unless ucs_vfs_set_enabled() was
 * called.
 *
 * @return Nonzero if the tree is enabled.
 */
int ucs_vfs_is_enabled(void);

/**
 * Type and size of the node at an absolute @a path ("/" is the root).
 *
 * @param [in]  path  Absolute path in the tree.
 * @param [out] info  Type and size.
 *
 * @return UCS_OK, or UCS_ERR_NO_ELEM when there is no such node.
 */
ucs_status_t ucs_vfs_path_get_info(const char *path, ucs_vfs_path_info_t *info);

/**
 * Appends the content of the file at @a path to @a strb, calling its show
 * callback in the calling thread.
 *
 * @param [in]     path  Absolute path in the tree.
 * @param [in,out] strb  Receives the content.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM, or UCS_ERR_INVALID_PARAM when it is not
 *         a file.
 */
ucs_status_t ucs_vfs_path_read_file(const char *path,
                                    ucs_string_buffer_t *strb);

/**
 * Calls @a cb for each entry of the directory at @a path.
 *
 * @param [in] path  Absolute path in the tree.
 * @param [in] cb    Called once per entry.
 * @param [in] arg   Passed to @a cb.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM, or UCS_ERR_INVALID_PARAM when it is not
 *         a directory.
 */
ucs_status_t ucs_vfs_path_list_dir(const char *path, ucs_vfs_list_dir_cb_t cb,
                                   void *arg);

/**
 * Appends the target of the link at @a path, relative to the link's
 * directory ("../../md/tcp"), to @a strb.
 *
 * @param [in]     path  Absolute path in the tree.
 * @param [in,out] strb  Receives the target.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM, or UCS_ERR_INVALID_PARAM when it is not
 *         a link.
 */
ucs_status_t ucs_vfs_path_get_link(const char *path, ucs_string_buffer_t *strb);

END_C_DECLS

#endif
