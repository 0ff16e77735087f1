/*
 * UCT objects in the object tree of ucs/vfs/vfs.h (browsed with the
 * uct_vfs daemon):
 *
 *   uct/component/<name>/                component: name flags md_resources
 *   uct/md/<name>[.<n>]/                 open memory domain; ".<n>" when a
 *                                        domain of that name is open already
 *   uct/worker/<id>/                     worker: thread_mode num_ifaces
 *   uct/worker/<id>/iface/<id>/          its interfaces
 *   uct/worker/<id>/iface/<id>/ep/<id>/  their endpoints
 *
 * Worker ids are uct_priv_worker_t::id; interface and endpoint ids come from
 * process-wide counters, so an id names one object of its kind in the
 * process. libuct adds a directory when its object is created or opened and
 * removes it before the object is torn down; transports add their own files
 * through uct_tl_t::iface_vfs_init/ep_vfs_init, memory domains through
 * uct_md_ops_t::vfs_init. All of it runs on setup and teardown paths only,
 * and a node that cannot be added is logged at debug level: the object
 * works without it.
 *
 * Show callbacks run on the thread that serves the tree, with the tree's
 * lock held (ucs/vfs/vfs.h): they read plain fields of their object, never
 * walk lists or follow pointers that the owner may change or free, and take
 * no lock. Counters are read without synchronization and may be a few
 * messages behind.
 */
#ifndef UCT_BASE_VFS_H_
#define UCT_BASE_VFS_H_

#include <uct/base/uct_iface.h>
#include <uct/base/uct_worker.h>
#include <ucs/vfs/vfs.h>

BEGIN_C_DECLS

/* ---- helpers for transports (and libuct) ------------------------------- */

/** Adds the file @a name under @a obj's directory; reading it calls
 *  @a cb(obj, strb, arg_ptr, arg_u64). A failure is logged (debug). */
void uct_vfs_add_file(void *obj, ucs_vfs_file_show_cb_t cb, void *arg_ptr,
                      uint64_t arg_u64, const char *name);

/** Adds a file showing the unsigned integer of @a size bytes (1, 2, 4 or
 *  8) at @a field, a member of @a obj, as it is when the file is read. */
void uct_vfs_add_uint(void *obj, const void *field, size_t size,
                      const char *name);

/** Adds a file showing @a value, fixed when the file is added. */
void uct_vfs_add_value(void *obj, uint64_t value, const char *name);

/** Adds a file showing the string @a str, which must outlive @a obj (a
 *  literal, a name inside @a obj, or a static table). */
void uct_vfs_add_string(void *obj, const char *str, const char *name);

/** Show callbacks of the files above: an integer of arg_u64 bytes at
 *  arg_ptr; arg_u64 itself; the string arg_ptr. Each ends with '\n'. */
void uct_vfs_show_uint(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                       uint64_t arg_u64);
void uct_vfs_show_value(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                        uint64_t arg_u64);
void uct_vfs_show_string(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                         uint64_t arg_u64);

/** Appends "none" for UCS_OK, else the status string, and '\n'. */
void uct_vfs_append_status(ucs_string_buffer_t *strb, ucs_status_t status);

/* ---- libuct: one pair per object kind ----------------------------------- */

/** Adds uct/component/<name>/ (uct_component_register). */
void uct_component_vfs_init(uct_component_t *component);

/** Adds uct/md/<name>/ for a memory domain just opened as @a md_name;
 *  uct_md_vfs_cleanup() removes it (before the domain closes). */
void uct_md_vfs_init(uct_md_h md, const char *md_name);
void uct_md_vfs_cleanup(uct_md_h md);

/** Adds uct/worker/<id>/ (uct_worker_create). */
void uct_worker_vfs_init(uct_priv_worker_t *worker);

/**
 * Adds the directory of an interface the transport has finished opening
 * (uct_iface_open), with the transport's files and the generic ones;
 * uct_iface_vfs_cleanup() removes it with its endpoints (uct_iface_close,
 * and uct_base_iface_cleanup for any other path). Both may run twice.
 */
void uct_iface_vfs_init(uct_base_iface_t *iface);
void uct_iface_vfs_cleanup(uct_base_iface_t *iface);

/** Adds the directory of a new endpoint of @a iface (uct_base_ep_init);
 *  nothing when the interface is not in the tree. uct_ep_vfs_cleanup()
 *  removes it (uct_base_ep_cleanup, and uct_ep_destroy for transports that
 *  do not call that); it may run twice. */
void uct_ep_vfs_init(uct_base_ep_t *ep, uct_base_iface_t *iface);
void uct_ep_vfs_cleanup(uct_base_ep_t *ep);

END_C_DECLS

#endif
