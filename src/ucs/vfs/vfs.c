/*
 * The object tree behind ucs/vfs/vfs.h: nodes that know their absolute
 * paths, two hash maps (path -> node, object address -> its directory) and
 * one lock over all of it.
 *
 * Paths are stored as "/uct/md/tcp"; the root's is "". Directories made on
 * the way by a multi-component path are "implicit": they go away as soon
 * as they have no entries. Every object directory keeps the list of links
 * that point to it, so that removing it can find and remove them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/vfs/vfs.h>
#include <ucs/vfs/vfs_conn.h>
#include <ucs/config/global_opts.h>
#include <ucs/datastruct/hash.h>
#include <ucs/datastruct/list.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    UCS_VFS_KIND_DIR,     /* implicit: made on the way, removed when empty */
    UCS_VFS_KIND_OBJ_DIR, /* the directory of an object */
    UCS_VFS_KIND_FILE,
    UCS_VFS_KIND_LINK
} ucs_vfs_kind_t;

typedef struct ucs_vfs_node ucs_vfs_node_t;

struct ucs_vfs_node {
    ucs_vfs_kind_t kind;
    int removing;             /* in a subtree being removed */
    ucs_vfs_node_t *parent;   /* NULL for the root */
    ucs_list_link_t list;     /* entry in parent->children */
    ucs_list_link_t children; /* directories: the entries */
    size_t num_children;
    void *obj;             /* object dir: its object; file,
                              link: the object it was added
                              to */
    ucs_list_link_t links; /* object dir: links to it */

    ucs_vfs_file_show_cb_t show_cb; /* file */
    void *arg_ptr;
    uint64_t arg_u64;

    ucs_vfs_node_t *target;      /* link: an object dir */
    ucs_list_link_t target_list; /* link: entry in target->links */

    const char *name; /* last component, inside path */
    char path[];      /* absolute; "" for the root */
};

static struct {
    pthread_mutex_t lock;
    int initialized;
    ucs_vfs_node_t *root;
    ucs_hash_str_t paths; /* absolute path -> node; the root is not in */
    ucs_hash_t objs;      /* object address -> its directory */
} ucs_vfs_tree = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* -1: not decided yet; UCX_VFS_ENABLE decides at the first add */
static int ucs_vfs_enabled = -1;

/* ---- on or off -------------------------------------------------------- */

void ucs_vfs_set_enabled(int enabled)
{
    __atomic_store_n(&ucs_vfs_enabled, !!enabled, __ATOMIC_RELAXED);
}

int ucs_vfs_is_enabled(void)
{
    int enabled   = __atomic_load_n(&ucs_vfs_enabled, __ATOMIC_RELAXED);
    int undecided = -1;

    if (enabled >= 0) {
        return enabled;
    }

    /* a concurrent ucs_vfs_set_enabled() wins over the option */
    enabled = !!ucs_global_opts.vfs_enable;
    if (!__atomic_compare_exchange_n(&ucs_vfs_enabled, &undecided, enabled, 0,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        enabled = undecided;
    }
    return enabled;
}

/* ---- nodes ------------------------------------------------------------ */

static ucs_vfs_node_t *ucs_vfs_node_alloc(ucs_vfs_kind_t kind, const char *path)
{
    size_t length = strlen(path);
    ucs_vfs_node_t *node;
    const char *slash;

    node = calloc(1, sizeof(*node) + length + 1);
    if (node == NULL) {
        ucs_error("vfs: failed to allocate the node of '%s'", path);
        return NULL;
    }

    node->kind = kind;
    ucs_list_head_init(&node->children);
    ucs_list_head_init(&node->links);
    memcpy(node->path, path, length + 1);
    slash      = strrchr(node->path, '/');
    node->name = (slash == NULL) ? node->path : (slash + 1);
    return node;
}

static inline int ucs_vfs_node_is_dir(const ucs_vfs_node_t *node)
{
    return (node->kind == UCS_VFS_KIND_DIR) ||
           (node->kind == UCS_VFS_KIND_OBJ_DIR);
}

static ucs_vfs_node_type_t ucs_vfs_node_type(const ucs_vfs_node_t *node)
{
    switch (node->kind) {
    case UCS_VFS_KIND_FILE:
        return UCS_VFS_NODE_TYPE_RO_FILE;
    case UCS_VFS_KIND_LINK:
        return UCS_VFS_NODE_TYPE_SYM_LINK;
    default:
        return UCS_VFS_NODE_TYPE_DIR;
    }
}

/* Lock held. Makes @a node visible as an entry of @a parent. */
static ucs_status_t ucs_vfs_node_attach(ucs_vfs_node_t *parent,
                                        ucs_vfs_node_t *node)
{
    ucs_status_t status;

    status = ucs_hash_str_put(&ucs_vfs_tree.paths, node->path, node);
    if (status != UCS_OK) {
        ucs_error("vfs: failed to add '%s' to the path map: %s", node->path,
                  ucs_status_string(status));
        return status;
    }

    node->parent = parent;
    ucs_list_add_tail(&parent->children, &node->list);
    ++parent->num_children;
    return UCS_OK;
}

/* Lock held. Undoes ucs_vfs_node_attach(). */
static void ucs_vfs_node_detach(ucs_vfs_node_t *node)
{
    ucs_hash_str_remove(&ucs_vfs_tree.paths, node->path, NULL);
    ucs_list_del(&node->list);
    --node->parent->num_children;
}

/* Lock held. Removes empty implicit directories from @a dir upwards. */
static void ucs_vfs_dir_prune(ucs_vfs_node_t *dir)
{
    ucs_vfs_node_t *parent;

    while ((dir->kind == UCS_VFS_KIND_DIR) && (dir->parent != NULL) &&
           (dir->num_children == 0)) {
        parent = dir->parent;
        ucs_vfs_node_detach(dir);
        free(dir);
        dir = parent;
    }
}

/* Lock held. Removes a link that lies outside the subtree being removed
 * but points into it. */
static void ucs_vfs_link_drop(ucs_vfs_node_t *link)
{
    ucs_vfs_node_t *parent = link->parent;

    ucs_list_del(&link->target_list);
    ucs_vfs_node_detach(link);
    free(link);
    ucs_vfs_dir_prune(parent);
}

/* Lock held. The root is an implicit directory that is never pruned. */
static ucs_status_t ucs_vfs_tree_init(void)
{
    ucs_status_t status;

    if (ucs_vfs_tree.initialized) {
        return UCS_OK;
    }

    status = ucs_hash_str_init(&ucs_vfs_tree.paths, 0);
    if (status != UCS_OK) {
        ucs_error("vfs: failed to create the path map: %s",
                  ucs_status_string(status));
        return status;
    }

    status = ucs_hash_init(&ucs_vfs_tree.objs, 0);
    if (status != UCS_OK) {
        ucs_error("vfs: failed to create the object map: %s",
                  ucs_status_string(status));
        goto err_paths;
    }

    ucs_vfs_tree.root = ucs_vfs_node_alloc(UCS_VFS_KIND_DIR, "");
    if (ucs_vfs_tree.root == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_objs;
    }

    __atomic_store_n(&ucs_vfs_tree.initialized, 1, __ATOMIC_RELEASE);
    return UCS_OK;

err_objs:
    ucs_hash_cleanup(&ucs_vfs_tree.objs);
err_paths:
    ucs_hash_str_cleanup(&ucs_vfs_tree.paths);
    return status;
}

/* Lock held. The directory of @a obj, or NULL. */
static ucs_vfs_node_t *ucs_vfs_obj_find(void *obj)
{
    void *value;

    if (!ucs_vfs_tree.initialized ||
        (ucs_hash_get(&ucs_vfs_tree.objs, (uintptr_t)obj, &value) != UCS_OK)) {
        return NULL;
    }
    return value;
}

/* Lock held. The node at an absolute path, or NULL. */
static ucs_vfs_node_t *ucs_vfs_path_find(const char *path)
{
    void *value;

    if (!ucs_vfs_tree.initialized || (path[0] != '/')) {
        return NULL;
    }
    if (path[1] == '\0') {
        return ucs_vfs_tree.root;
    }
    if (ucs_hash_str_get(&ucs_vfs_tree.paths, path, &value) != UCS_OK) {
        return NULL;
    }
    return value;
}

/* ---- adding ----------------------------------------------------------- */

/* Why @a rel_path is not acceptable, or NULL when it is. */
static const char *ucs_vfs_rel_path_problem(const char *rel_path)
{
    const char *comp = rel_path;
    const char *end;
    size_t length;

    if (rel_path[0] == '\0') {
        return "it is empty";
    }
    if (rel_path[0] == '/') {
        return "it starts with '/'";
    }

    for (;;) {
        end    = strchr(comp, '/');
        length = (end == NULL) ? strlen(comp) : (size_t)(end - comp);
        if (length == 0) {
            return "it has an empty component";
        }
        if (length > UCS_VFS_NAME_MAX) {
            return "a component is longer than " UCS_PP_QUOTE(
                UCS_VFS_NAME_MAX) " characters";
        }
        if (((length == 1) && (comp[0] == '.')) ||
            ((length == 2) && (comp[0] == '.') && (comp[1] == '.'))) {
            return "it has a '.' or '..' component";
        }
        if (end == NULL) {
            return NULL;
        }
        comp = end + 1;
    }
}

/* Formats and checks a relative path. */
static ucs_status_t ucs_vfs_rel_path_format(char *buf, size_t max,
                                            const char *fmt, va_list ap)
{
    const char *problem;
    int n;

    n = vsnprintf(buf, max, fmt, ap);
    if (n < 0) {
        ucs_error("vfs: cannot format the path '%s'", fmt);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((size_t)n >= max) {
        ucs_error("vfs: path '%.64s...' is longer than %d characters; use "
                  "shorter names",
                  buf, UCS_VFS_PATH_MAX - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    problem = ucs_vfs_rel_path_problem(buf);
    if (problem != NULL) {
        ucs_error("vfs: invalid path '%s': %s; use names of 1 to %d "
                  "characters other than '.' and '..' joined by single '/'",
                  buf, problem, UCS_VFS_NAME_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/*
 * Lock held. Creates @a path (absolute, its components already checked) of
 * @a kind under @a base, with the implicit directories in between; the new
 * node is not yet linked to an object. On failure nothing is left behind.
 */
static ucs_status_t ucs_vfs_node_add(ucs_vfs_node_t *base, ucs_vfs_kind_t kind,
                                     char *path, ucs_vfs_node_t **node_p)
{
    ucs_vfs_node_t *dir = base;
    ucs_vfs_node_t *node;
    ucs_status_t status;
    char *slash;
    void *value;

    /* the directories on the way */
    for (slash = strchr(path + strlen(base->path) + 1, '/'); slash != NULL;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (ucs_hash_str_get(&ucs_vfs_tree.paths, path, &value) == UCS_OK) {
            node = value;
            if (!ucs_vfs_node_is_dir(node)) {
                ucs_error("vfs: cannot create an entry under '%s': it is "
                          "not a directory",
                          path);
                *slash = '/';
                status = UCS_ERR_ALREADY_EXISTS;
                goto err_prune;
            }
        } else {
            node = ucs_vfs_node_alloc(UCS_VFS_KIND_DIR, path);
            if (node == NULL) {
                *slash = '/';
                status = UCS_ERR_NO_MEMORY;
                goto err_prune;
            }
            status = ucs_vfs_node_attach(dir, node);
            if (status != UCS_OK) {
                free(node);
                *slash = '/';
                goto err_prune;
            }
        }
        *slash = '/';
        dir    = node;
    }

    if (ucs_hash_str_get(&ucs_vfs_tree.paths, path, &value) == UCS_OK) {
        ucs_error("vfs: '%s' already exists; give the new entry another "
                  "name",
                  path);
        status = UCS_ERR_ALREADY_EXISTS;
        goto err_prune;
    }

    node = ucs_vfs_node_alloc(kind, path);
    if (node == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_prune;
    }

    status = ucs_vfs_node_attach(dir, node);
    if (status != UCS_OK) {
        goto err_free;
    }

    *node_p = node;
    return UCS_OK;

err_free:
    free(node);
err_prune:
    ucs_vfs_dir_prune(dir);
    return status;
}

/* Lock held. Removes a node just made by ucs_vfs_node_add(). */
static void ucs_vfs_node_add_undo(ucs_vfs_node_t *node)
{
    ucs_vfs_node_t *parent = node->parent;

    ucs_vfs_node_detach(node);
    free(node);
    ucs_vfs_dir_prune(parent);
}

/*
 * Lock held. Finds the directory of @a obj (the root for NULL, when
 * @a allow_root) and builds the absolute path of @a rel_path under it.
 */
static ucs_status_t ucs_vfs_base_find(void *obj, int allow_root,
                                      const char *rel_path, char *path,
                                      size_t max, ucs_vfs_node_t **base_p)
{
    ucs_vfs_node_t *base;
    int n;

    if ((obj == NULL) && allow_root) {
        base = ucs_vfs_tree.root;
    } else {
        base = ucs_vfs_obj_find(obj);
        if (base == NULL) {
            /* usually its own add failed, and that was reported */
            ucs_debug("vfs: cannot add '%s' under object %p: it has no "
                      "directory",
                      rel_path, obj);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    n = snprintf(path, max, "%s/%s", base->path, rel_path);
    if ((n < 0) || ((size_t)n >= max)) {
        ucs_error("vfs: path '%s/%s' is longer than %zu characters; use "
                  "shorter names",
                  base->path, rel_path, max - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    *base_p = base;
    return UCS_OK;
}

ucs_status_t ucs_vfs_obj_add_dir(void *parent_obj, void *obj,
                                 const char *rel_path, ...)
{
    char rel[UCS_VFS_PATH_MAX], path[UCS_VFS_PATH_MAX];
    ucs_vfs_node_t *base, *node;
    ucs_status_t status;
    va_list ap;

    if (!ucs_vfs_is_enabled()) {
        return UCS_OK;
    }

    va_start(ap, rel_path);
    status = ucs_vfs_rel_path_format(rel, sizeof(rel), rel_path, ap);
    va_end(ap);
    if (status != UCS_OK) {
        return status;
    }

    if (obj == NULL) {
        ucs_error("vfs: cannot add directory '%s' for a NULL object", rel);
        return UCS_ERR_INVALID_PARAM;
    }

    pthread_mutex_lock(&ucs_vfs_tree.lock);
    status = ucs_vfs_tree_init();
    if (status != UCS_OK) {
        goto out_unlock;
    }

    node = ucs_vfs_obj_find(obj);
    if (node != NULL) {
        ucs_error("vfs: object %p already has the directory '%s'; remove "
                  "it before adding '%s'",
                  obj, node->path, rel);
        status = UCS_ERR_ALREADY_EXISTS;
        goto out_unlock;
    }

    status = ucs_vfs_base_find(parent_obj, 1, rel, path, sizeof(path), &base);
    if (status != UCS_OK) {
        goto out_unlock;
    }

    status = ucs_vfs_node_add(base, UCS_VFS_KIND_OBJ_DIR, path, &node);
    if (status != UCS_OK) {
        goto out_unlock;
    }

    node->obj = obj;
    status    = ucs_hash_put(&ucs_vfs_tree.objs, (uintptr_t)obj, node);
    if (status != UCS_OK) {
        ucs_error("vfs: failed to add object %p to the object map: %s", obj,
                  ucs_status_string(status));
        ucs_vfs_node_add_undo(node);
    }

out_unlock:
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    if (status == UCS_OK) {
        ucs_vfs_conn_autostart();
    }
    return status;
}

ucs_status_t ucs_vfs_obj_add_ro_file(void *obj, ucs_vfs_file_show_cb_t cb,
                                     void *arg_ptr, uint64_t arg_u64,
                                     const char *rel_path, ...)
{
    char rel[UCS_VFS_PATH_MAX], path[UCS_VFS_PATH_MAX];
    ucs_vfs_node_t *base, *node;
    ucs_status_t status;
    va_list ap;

    if (!ucs_vfs_is_enabled()) {
        return UCS_OK;
    }

    va_start(ap, rel_path);
    status = ucs_vfs_rel_path_format(rel, sizeof(rel), rel_path, ap);
    va_end(ap);
    if (status != UCS_OK) {
        return status;
    }

    if (cb == NULL) {
        ucs_error("vfs: file '%s' of object %p has no show callback", rel, obj);
        return UCS_ERR_INVALID_PARAM;
    }

    pthread_mutex_lock(&ucs_vfs_tree.lock);
    status = ucs_vfs_base_find(obj, 0, rel, path, sizeof(path), &base);
    if (status != UCS_OK) {
        goto out_unlock;
    }

    status = ucs_vfs_node_add(base, UCS_VFS_KIND_FILE, path, &node);
    if (status != UCS_OK) {
        goto out_unlock;
    }

    node->obj     = obj;
    node->show_cb = cb;
    node->arg_ptr = arg_ptr;
    node->arg_u64 = arg_u64;

out_unlock:
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    return status;
}

ucs_status_t ucs_vfs_obj_add_sym_link(void *obj, void *target_obj,
                                      const char *rel_path, ...)
{
    char rel[UCS_VFS_PATH_MAX], path[UCS_VFS_PATH_MAX];
    ucs_vfs_node_t *base, *node, *target;
    ucs_status_t status;
    va_list ap;

    if (!ucs_vfs_is_enabled()) {
        return UCS_OK;
    }

    va_start(ap, rel_path);
    status = ucs_vfs_rel_path_format(rel, sizeof(rel), rel_path, ap);
    va_end(ap);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_lock(&ucs_vfs_tree.lock);
    status = ucs_vfs_base_find(obj, 0, rel, path, sizeof(path), &base);
    if (status != UCS_OK) {
        goto out_unlock;
    }

    target = ucs_vfs_obj_find(target_obj);
    if (target == NULL) {
        ucs_debug("vfs: cannot add link '%s' to object %p: it has no "
                  "directory",
                  path, target_obj);
        status = UCS_ERR_INVALID_PARAM;
        goto out_unlock;
    }

    status = ucs_vfs_node_add(base, UCS_VFS_KIND_LINK, path, &node);
    if (status != UCS_OK) {
        goto out_unlock;
    }

    node->obj    = obj;
    node->target = target;
    ucs_list_add_tail(&target->links, &node->target_list);

out_unlock:
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    return status;
}

/* ---- removing --------------------------------------------------------- */

static void ucs_vfs_subtree_mark(ucs_vfs_node_t *node)
{
    ucs_vfs_node_t *child;

    node->removing = 1;
    ucs_list_for_each(child, &node->children, list) {
        ucs_vfs_subtree_mark(child);
    }
}

/* While every node is still allocated: removes the links from outside
 * the marked subtree into it (pruning after each one touches only unmarked
 * directories), and takes the links inside it off the lists of targets
 * that stay. */
static void ucs_vfs_subtree_drop_links(ucs_vfs_node_t *node)
{
    ucs_vfs_node_t *child, *link, *tmp;

    ucs_list_for_each(child, &node->children, list) {
        ucs_vfs_subtree_drop_links(child);
    }

    ucs_list_for_each_safe(link, tmp, &node->links, target_list) {
        if (!link->removing) {
            ucs_vfs_link_drop(link);
        }
    }

    if (node->kind == UCS_VFS_KIND_LINK) {
        if (!node->target->removing) {
            ucs_list_del(&node->target_list);
        }
        node->target = NULL;
    }
}

/* Frees a marked subtree that is already detached from its parent; no
 * node outside it refers to it any more. */
static void ucs_vfs_subtree_free(ucs_vfs_node_t *node)
{
    ucs_vfs_node_t *child, *tmp;

    ucs_list_for_each_safe(child, tmp, &node->children, list) {
        ucs_hash_str_remove(&ucs_vfs_tree.paths, child->path, NULL);
        ucs_vfs_subtree_free(child);
    }

    if (node->kind == UCS_VFS_KIND_OBJ_DIR) {
        ucs_hash_remove(&ucs_vfs_tree.objs, (uintptr_t)node->obj, NULL);
    }
    free(node);
}

void ucs_vfs_obj_remove(void *obj)
{
    ucs_vfs_node_t *node, *parent;

    /* nothing was ever added: no lock to take */
    if (!__atomic_load_n(&ucs_vfs_tree.initialized, __ATOMIC_ACQUIRE)) {
        return;
    }

    pthread_mutex_lock(&ucs_vfs_tree.lock);
    node = ucs_vfs_obj_find(obj);
    if (node != NULL) {
        parent = node->parent;
        ucs_vfs_subtree_mark(node);
        ucs_vfs_subtree_drop_links(node);
        ucs_vfs_node_detach(node);
        ucs_vfs_subtree_free(node);
        ucs_vfs_dir_prune(parent);
    }
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
}

/* ---- serving ---------------------------------------------------------- */

/* Lock held. Runs the show callback of a file into @a strb. */
static void ucs_vfs_file_show(const ucs_vfs_node_t *file,
                              ucs_string_buffer_t *strb)
{
    file->show_cb(file->obj, strb, file->arg_ptr, file->arg_u64);
}

/* Lock held. The target of @a link relative to the link's directory: as
 * many ".." as the link's directory has components below the deepest
 * common ancestor, then the rest of the target's path. */
static ucs_status_t ucs_vfs_link_show(const ucs_vfs_node_t *link,
                                      ucs_string_buffer_t *strb)
{
    const char *from = link->parent->path;
    const char *to   = link->target->path;
    size_t common    = 0;
    size_t i         = 0;
    const char *sep  = "";
    const char *p;

    while ((from[i] != '\0') && (from[i] == to[i])) {
        if (from[i] == '/') {
            common = i;
        }
        ++i;
    }
    if (((from[i] == '\0') || (from[i] == '/')) &&
        ((to[i] == '\0') || (to[i] == '/'))) {
        common = i;
    }

    for (p = from + common; *p != '\0'; ++p) {
        if (*p != '/') {
            continue;
        }
        if (ucs_string_buffer_appendf(strb, "%s..", sep) != UCS_OK) {
            return UCS_ERR_NO_MEMORY;
        }
        sep = "/";
    }

    p = to + common;
    if (*p == '/') {
        if (ucs_string_buffer_appendf(strb, "%s%s", sep, p + 1) != UCS_OK) {
            return UCS_ERR_NO_MEMORY;
        }
    } else if (*sep == '\0') {
        /* the link's own directory */
        if (ucs_string_buffer_appendf(strb, ".") != UCS_OK) {
            return UCS_ERR_NO_MEMORY;
        }
    }
    return UCS_OK;
}

ucs_status_t ucs_vfs_path_get_info(const char *path, ucs_vfs_path_info_t *info)
{
    ucs_string_buffer_t strb;
    ucs_vfs_node_t *node;
    ucs_status_t status = UCS_OK;
    size_t size         = 0;

    ucs_string_buffer_init(&strb);
    pthread_mutex_lock(&ucs_vfs_tree.lock);
    node = ucs_vfs_path_find(path);
    if (node == NULL) {
        status = UCS_ERR_NO_ELEM;
    } else if (node->kind == UCS_VFS_KIND_FILE) {
        ucs_vfs_file_show(node, &strb);
        size = ucs_string_buffer_length(&strb);
    } else if (node->kind == UCS_VFS_KIND_LINK) {
        status = ucs_vfs_link_show(node, &strb);
        size   = ucs_string_buffer_length(&strb);
    } else {
        size = node->num_children;
    }

    if (status == UCS_OK) {
        info->type = ucs_vfs_node_type(node);
        info->size = size;
    }
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    ucs_string_buffer_cleanup(&strb);
    return status;
}

ucs_status_t ucs_vfs_path_read_file(const char *path, ucs_string_buffer_t *strb)
{
    ucs_vfs_node_t *node;
    ucs_status_t status = UCS_OK;

    pthread_mutex_lock(&ucs_vfs_tree.lock);
    node = ucs_vfs_path_find(path);
    if (node == NULL) {
        status = UCS_ERR_NO_ELEM;
    } else if (node->kind != UCS_VFS_KIND_FILE) {
        status = UCS_ERR_INVALID_PARAM;
    } else {
        ucs_vfs_file_show(node, strb);
    }
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    return status;
}

ucs_status_t ucs_vfs_path_list_dir(const char *path, ucs_vfs_list_dir_cb_t cb,
                                   void *arg)
{
    ucs_vfs_node_t *node, *child;
    ucs_status_t status = UCS_OK;

    pthread_mutex_lock(&ucs_vfs_tree.lock);
    node = ucs_vfs_path_find(path);
    if (node == NULL) {
        status = UCS_ERR_NO_ELEM;
    } else if (!ucs_vfs_node_is_dir(node)) {
        status = UCS_ERR_INVALID_PARAM;
    } else {
        ucs_list_for_each(child, &node->children, list) {
            cb(child->name, arg);
        }
    }
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    return status;
}

ucs_status_t ucs_vfs_path_get_link(const char *path, ucs_string_buffer_t *strb)
{
    ucs_vfs_node_t *node;
    ucs_status_t status;

    pthread_mutex_lock(&ucs_vfs_tree.lock);
    node = ucs_vfs_path_find(path);
    if (node == NULL) {
        status = UCS_ERR_NO_ELEM;
    } else if (node->kind != UCS_VFS_KIND_LINK) {
        status = UCS_ERR_INVALID_PARAM;
    } else {
        status = ucs_vfs_link_show(node, strb);
    }
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    return status;
}

/* ---- fork ------------------------------------------------------------- */

/* The connection's locks come before the tree's (its thread takes the
 * tree's lock while serving, never the other way round). */
static void ucs_vfs_fork_prepare(void)
{
    ucs_vfs_conn_fork_prepare();
    pthread_mutex_lock(&ucs_vfs_tree.lock);
}

static void ucs_vfs_fork_parent(void)
{
    pthread_mutex_unlock(&ucs_vfs_tree.lock);
    ucs_vfs_conn_fork_parent();
}

/* The child's only thread does not own the lock taken before fork(): it
 * gets a fresh one. The tree itself is consistent and stays. */
static void ucs_vfs_fork_child(void)
{
    pthread_mutex_init(&ucs_vfs_tree.lock, NULL);
    ucs_vfs_conn_fork_child();
}

static void UCS_F_CTOR ucs_vfs_init(void)
{
    pthread_atfork(ucs_vfs_fork_prepare, ucs_vfs_fork_parent,
                   ucs_vfs_fork_child);
}
