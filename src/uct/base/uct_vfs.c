/*
 * UCT objects in the object tree: the directories of components, memory
 * domains, workers, interfaces and endpoints, their generic files, and the
 * helpers transports use for their own files (see uct_vfs.h).
 *
 * Attributes that are fixed once an object is open (flags, limits, costs)
 * are queried here, on the setup path, and handed to the show callbacks
 * through arg_u64 or a small snapshot; what changes (counters, state) is
 * read from the object's plain fields when a file is read.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Memory domains of one name open at once: "<name>", "<name>.1", ... */
#define UCT_VFS_MD_MAX_SAME_NAME 1024

/* "/uct/worker/<id>/iface/<id>" with two 64-bit ids */
#define UCT_VFS_IFACE_PATH_MAX 64

/* What the reg_cost file of a memory domain shows */
struct uct_md_vfs {
    ucs_linear_func_t reg_cost;
};

/* What the generic files of an interface need beyond its plain fields */
struct uct_iface_vfs {
    uint64_t id;
    char path[UCT_VFS_IFACE_PATH_MAX]; /* of its directory */
    size_t dev_addr_len;
    size_t iface_addr_len;
    uint8_t addr[]; /* device address, then interface address */
};

/* A flag and its name in the files that spell flags out */
typedef struct {
    uint64_t bit;
    const char *name;
} uct_vfs_flag_name_t;

/* Names are the flag macros' suffixes in lower case */
static const uct_vfs_flag_name_t uct_vfs_component_flags[] = {
    {UCT_COMPONENT_FLAG_CM, "cm"},
    {UCT_COMPONENT_FLAG_RKEY_PTR, "rkey_ptr"},
    {0, NULL}};

static const uct_vfs_flag_name_t uct_vfs_md_flags[] = {
    {UCT_MD_FLAG_ALLOC, "alloc"},
    {UCT_MD_FLAG_REG, "reg"},
    {UCT_MD_FLAG_NEED_MEMH, "need_memh"},
    {UCT_MD_FLAG_NEED_RKEY, "need_rkey"},
    {UCT_MD_FLAG_ADVISE, "advise"},
    {UCT_MD_FLAG_FIXED, "fixed"},
    {UCT_MD_FLAG_RKEY_PTR, "rkey_ptr"},
    {UCT_MD_FLAG_SOCKADDR, "sockaddr"},
    {UCT_MD_FLAG_INVALIDATE, "invalidate"},
    {UCT_MD_FLAG_EXPORTED_MKEY, "exported_mkey"},
    {UCT_MD_FLAG_REG_DMABUF, "reg_dmabuf"},
    {0, NULL}};

static const uct_vfs_flag_name_t uct_vfs_iface_flags[] = {
    {UCT_IFACE_FLAG_AM_SHORT, "am_short"},
    {UCT_IFACE_FLAG_AM_BCOPY, "am_bcopy"},
    {UCT_IFACE_FLAG_AM_ZCOPY, "am_zcopy"},
    {UCT_IFACE_FLAG_PENDING, "pending"},
    {UCT_IFACE_FLAG_PUT_SHORT, "put_short"},
    {UCT_IFACE_FLAG_PUT_BCOPY, "put_bcopy"},
    {UCT_IFACE_FLAG_PUT_ZCOPY, "put_zcopy"},
    {UCT_IFACE_FLAG_GET_SHORT, "get_short"},
    {UCT_IFACE_FLAG_GET_BCOPY, "get_bcopy"},
    {UCT_IFACE_FLAG_GET_ZCOPY, "get_zcopy"},
    {UCT_IFACE_FLAG_ATOMIC_CPU, "atomic_cpu"},
    {UCT_IFACE_FLAG_ATOMIC_DEVICE, "atomic_device"},
    {UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF, "errhandle_short_buf"},
    {UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF, "errhandle_bcopy_buf"},
    {UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF, "errhandle_zcopy_buf"},
    {UCT_IFACE_FLAG_ERRHANDLE_AM_ID, "errhandle_am_id"},
    {UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM, "errhandle_remote_mem"},
    {UCT_IFACE_FLAG_ERRHANDLE_BCOPY_LEN, "errhandle_bcopy_len"},
    {UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE, "errhandle_peer_failure"},
    {UCT_IFACE_FLAG_EP_CHECK, "ep_check"},
    {UCT_IFACE_FLAG_CONNECT_TO_IFACE, "connect_to_iface"},
    {UCT_IFACE_FLAG_CONNECT_TO_EP, "connect_to_ep"},
    {UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR, "connect_to_sockaddr"},
    {UCT_IFACE_FLAG_AM_DUP, "am_dup"},
    {UCT_IFACE_FLAG_CB_SYNC, "cb_sync"},
    {UCT_IFACE_FLAG_CB_ASYNC, "cb_async"},
    {UCT_IFACE_FLAG_EP_KEEPALIVE, "ep_keepalive"},
    {UCT_IFACE_FLAG_TAG_EAGER_SHORT, "tag_eager_short"},
    {UCT_IFACE_FLAG_TAG_EAGER_BCOPY, "tag_eager_bcopy"},
    {UCT_IFACE_FLAG_TAG_EAGER_ZCOPY, "tag_eager_zcopy"},
    {UCT_IFACE_FLAG_TAG_RNDV_ZCOPY, "tag_rndv_zcopy"},
    {UCT_IFACE_FLAG_INTER_NODE, "inter_node"},
    {0, NULL}};

static const uct_vfs_flag_name_t uct_vfs_iface_event_flags[] = {
    {UCT_IFACE_FLAG_EVENT_SEND_COMP, "event_send_comp"},
    {UCT_IFACE_FLAG_EVENT_RECV, "event_recv"},
    {UCT_IFACE_FLAG_EVENT_RECV_SIG, "event_recv_sig"},
    {UCT_IFACE_FLAG_EVENT_FD, "event_fd"},
    {UCT_IFACE_FLAG_EVENT_ASYNC_CB, "event_async_cb"},
    {0, NULL}};

/* Limits of one operation kind: the file and the flag that makes it apply */
typedef struct {
    const char *name;
    uint64_t flags; /* any of them */
    size_t offset;  /* in uct_iface_attr_t */
} uct_vfs_limit_t;

#define UCT_VFS_LIMIT(_name, _flags, _field)                      \
    {                                                             \
        _name, _flags, ucs_offsetof(uct_iface_attr_t, cap._field) \
    }

static const uct_vfs_limit_t uct_vfs_iface_limits[] = {
    UCT_VFS_LIMIT("am/max_short", UCT_IFACE_FLAG_AM_SHORT, am.max_short),
    UCT_VFS_LIMIT("am/max_bcopy", UCT_IFACE_FLAG_AM_BCOPY, am.max_bcopy),
    UCT_VFS_LIMIT("am/max_zcopy", UCT_IFACE_FLAG_AM_ZCOPY, am.max_zcopy),
    UCT_VFS_LIMIT("am/max_hdr", UCT_IFACE_FLAG_AM_ZCOPY, am.max_hdr),
    UCT_VFS_LIMIT("am/max_iov", UCT_IFACE_FLAG_AM_ZCOPY, am.max_iov),
    UCT_VFS_LIMIT("put/max_short", UCT_IFACE_FLAG_PUT_SHORT, put.max_short),
    UCT_VFS_LIMIT("put/max_bcopy", UCT_IFACE_FLAG_PUT_BCOPY, put.max_bcopy),
    UCT_VFS_LIMIT("put/max_zcopy", UCT_IFACE_FLAG_PUT_ZCOPY, put.max_zcopy),
    UCT_VFS_LIMIT("put/max_iov", UCT_IFACE_FLAG_PUT_ZCOPY, put.max_iov),
    UCT_VFS_LIMIT("get/max_short", UCT_IFACE_FLAG_GET_SHORT, get.max_short),
    UCT_VFS_LIMIT("get/max_bcopy", UCT_IFACE_FLAG_GET_BCOPY, get.max_bcopy),
    UCT_VFS_LIMIT("get/max_zcopy", UCT_IFACE_FLAG_GET_ZCOPY, get.max_zcopy),
    UCT_VFS_LIMIT("get/max_iov", UCT_IFACE_FLAG_GET_ZCOPY, get.max_iov),
    {NULL, 0, 0}};

/* Interface and endpoint ids; taken on the setup path only */
static uint64_t uct_vfs_next_iface_id = 0;
static uint64_t uct_vfs_next_ep_id    = 0;

/* Serializes choosing a free name for a memory domain and taking it */
static pthread_mutex_t uct_md_vfs_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------------
 * Helpers
 */

static void uct_vfs_add_failed(void *obj, const char *what, ucs_status_t status)
{
    ucs_debug("object %p: '%s' was not added to the object tree: %s (the "
              "object works without it; uct_vfs does not show the entry)",
              obj, what, ucs_status_string(status));
}

void uct_vfs_add_file(void *obj, ucs_vfs_file_show_cb_t cb, void *arg_ptr,
                      uint64_t arg_u64, const char *name)
{
    ucs_status_t status;

    status = ucs_vfs_obj_add_ro_file(obj, cb, arg_ptr, arg_u64, "%s", name);
    if (status != UCS_OK) {
        uct_vfs_add_failed(obj, name, status);
    }
}

void uct_vfs_add_uint(void *obj, const void *field, size_t size,
                      const char *name)
{
    ucs_assert((size == 1) || (size == 2) || (size == 4) || (size == 8));
    uct_vfs_add_file(obj, uct_vfs_show_uint, (void *)field, size, name);
}

void uct_vfs_add_value(void *obj, uint64_t value, const char *name)
{
    uct_vfs_add_file(obj, uct_vfs_show_value, NULL, value, name);
}

void uct_vfs_add_string(void *obj, const char *str, const char *name)
{
    uct_vfs_add_file(obj, uct_vfs_show_string, (void *)str, 0, name);
}

/* Whether the tree has an entry at "<dir>/<name>" */
static int uct_vfs_path_exists(const char *dir, const char *name)
{
    char path[UCS_VFS_PATH_MAX];
    ucs_vfs_path_info_t info;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return ucs_vfs_path_get_info(path, &info) != UCS_ERR_NO_ELEM;
}

/* Counters and fields written by another thread: one relaxed load each (a
 * plain aligned load), so a value is whole but may be a little old */
static inline uint64_t uct_vfs_load_u64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void uct_vfs_show_uint(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                       uint64_t arg_u64)
{
    uint64_t value;

    switch (arg_u64) {
    case 1:
        value = __atomic_load_n((const uint8_t *)arg_ptr, __ATOMIC_RELAXED);
        break;
    case 2:
        value = __atomic_load_n((const uint16_t *)arg_ptr, __ATOMIC_RELAXED);
        break;
    case 4:
        value = __atomic_load_n((const uint32_t *)arg_ptr, __ATOMIC_RELAXED);
        break;
    default:
        value = uct_vfs_load_u64((const uint64_t *)arg_ptr);
        break;
    }
    ucs_string_buffer_appendf(strb, "%" PRIu64 "\n", value);
}

void uct_vfs_show_value(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                        uint64_t arg_u64)
{
    ucs_string_buffer_appendf(strb, "%" PRIu64 "\n", arg_u64);
}

void uct_vfs_show_string(void *obj, ucs_string_buffer_t *strb, void *arg_ptr,
                         uint64_t arg_u64)
{
    ucs_string_buffer_appendf(strb, "%s\n", (const char *)arg_ptr);
}

void uct_vfs_append_status(ucs_string_buffer_t *strb, ucs_status_t status)
{
    ucs_string_buffer_appendf(
        strb, "%s\n", (status == UCS_OK) ? "none" : ucs_status_string(status));
}

/* A size limit: "unlimited" for the largest value */
static void uct_vfs_show_size(void *obj, ucs_string_buffer_t *strb,
                              void *arg_ptr, uint64_t arg_u64)
{
    if ((arg_u64 == UINT64_MAX) || (arg_u64 == SIZE_MAX)) {
        ucs_string_buffer_appendf(strb, "unlimited\n");
    } else {
        ucs_string_buffer_appendf(strb, "%" PRIu64 "\n", arg_u64);
    }
}

/* The flags arg_u64 spelled out, one per line, by the table arg_ptr */
static void uct_vfs_show_flags(void *obj, ucs_string_buffer_t *strb,
                               void *arg_ptr, uint64_t arg_u64)
{
    const uct_vfs_flag_name_t *names = arg_ptr;
    uint64_t unnamed                 = arg_u64;
    unsigned bit;

    for (; names->name != NULL; ++names) {
        if (arg_u64 & names->bit) {
            ucs_string_buffer_appendf(strb, "%s\n", names->name);
            unnamed &= ~names->bit;
        }
    }
    for (bit = 0; bit < 64; ++bit) {
        if (unnamed & UCS_BIT(bit)) {
            ucs_string_buffer_appendf(strb, "bit_%u\n", bit);
        }
    }
}

static void uct_vfs_add_flags(void *obj, const uct_vfs_flag_name_t *names,
                              uint64_t flags, const char *name)
{
    uct_vfs_add_file(obj, uct_vfs_show_flags, (void *)names, flags, name);
}

/* ------------------------------------------------------------------------
 * Components
 */

void uct_component_vfs_init(uct_component_t *component)
{
    uct_md_resource_desc_t *resources = NULL;
    unsigned num_resources            = 0;
    ucs_status_t status;

    status = ucs_vfs_obj_add_dir(NULL, component, "uct/component/%s",
                                 component->name);
    if (status != UCS_OK) {
        uct_vfs_add_failed(component, component->name, status);
        return;
    }

    uct_vfs_add_string(component, component->name, "name");
    uct_vfs_add_flags(component, uct_vfs_component_flags, component->flags,
                      "flags");
    /* the count when the component registered: a later query may differ
     * if devices come or go */
    if (component->query_md_resources(component, &resources, &num_resources) ==
        UCS_OK) {
        free(resources);
        uct_vfs_add_value(component, num_resources, "md_resources");
    }
}

/* ------------------------------------------------------------------------
 * Memory domains
 */

static void uct_md_vfs_show_reg_cost(void *obj, ucs_string_buffer_t *strb,
                                     void *arg_ptr, uint64_t arg_u64)
{
    const struct uct_md_vfs *vfs = arg_ptr;

    ucs_string_buffer_appendf(strb, "%g + %g * bytes (seconds)\n",
                              vfs->reg_cost.c, vfs->reg_cost.m);
}

/* The directory of @a md: "<name>", or "<name>.<n>" with the smallest n
 * free while other domains of that name are open */
static ucs_status_t uct_md_vfs_add_dir(uct_md_h md, const char *md_name)
{
    char name[UCS_VFS_NAME_MAX + 1];
    ucs_status_t status;
    unsigned i;

    pthread_mutex_lock(&uct_md_vfs_lock);
    for (i = 0; i < UCT_VFS_MD_MAX_SAME_NAME; ++i) {
        if (i == 0) {
            snprintf(name, sizeof(name), "%s", md_name);
        } else {
            snprintf(name, sizeof(name), "%s.%u", md_name, i);
        }
        if (!uct_vfs_path_exists("/uct/md", name)) {
            break;
        }
    }
    status = (i < UCT_VFS_MD_MAX_SAME_NAME)
                 ? ucs_vfs_obj_add_dir(NULL, md, "uct/md/%s", name)
                 : UCS_ERR_EXCEEDS_LIMIT;
    pthread_mutex_unlock(&uct_md_vfs_lock);
    return status;
}

void uct_md_vfs_init(uct_md_h md, const char *md_name)
{
    struct uct_md_vfs *vfs;
    uct_md_attr_t attr;
    ucs_status_t status;

    if (!ucs_vfs_is_enabled()) {
        return;
    }

    status = md->ops->query(md, &attr);
    if (status != UCS_OK) {
        uct_vfs_add_failed(md, md_name, status);
        return;
    }

    vfs = malloc(sizeof(*vfs));
    if (vfs == NULL) {
        uct_vfs_add_failed(md, md_name, UCS_ERR_NO_MEMORY);
        return;
    }
    vfs->reg_cost = attr.reg_cost;

    status = uct_md_vfs_add_dir(md, md_name);
    if (status != UCS_OK) {
        uct_vfs_add_failed(md, md_name, status);
        free(vfs);
        return;
    }
    md->vfs = vfs;

    uct_vfs_add_flags(md, uct_vfs_md_flags, attr.cap.flags, "flags");
    uct_vfs_add_file(md, uct_md_vfs_show_reg_cost, vfs, 0, "reg_cost");
    uct_vfs_add_file(md, uct_vfs_show_size, NULL, attr.cap.max_alloc,
                     "max_alloc");
    uct_vfs_add_file(md, uct_vfs_show_size, NULL, attr.cap.max_reg, "max_reg");
    uct_vfs_add_value(md, attr.rkey_packed_size, "rkey_packed_size");

    status = ucs_vfs_obj_add_sym_link(md, md->component, "component");
    if (status != UCS_OK) {
        uct_vfs_add_failed(md, "component", status);
    }

    if (md->ops->vfs_init != NULL) {
        md->ops->vfs_init(md);
    }
}

void uct_md_vfs_cleanup(uct_md_h md)
{
    if (md->vfs == NULL) {
        return;
    }

    ucs_vfs_obj_remove(md);
    free(md->vfs);
    md->vfs = NULL;
}

/* ------------------------------------------------------------------------
 * Workers
 */

void uct_worker_vfs_init(uct_priv_worker_t *worker)
{
    ucs_status_t status;

    status =
        ucs_vfs_obj_add_dir(NULL, worker, "uct/worker/%" PRIu64, worker->id);
    if (status != UCS_OK) {
        uct_vfs_add_failed(worker, "worker", status);
        return;
    }

    uct_vfs_add_string(worker, ucs_thread_mode_names[worker->thread_mode],
                       "thread_mode");
    uct_vfs_add_uint(worker, &worker->num_ifaces, sizeof(worker->num_ifaces),
                     "num_ifaces");
}

/* ------------------------------------------------------------------------
 * Interfaces
 */

static void uct_vfs_append_hex(ucs_string_buffer_t *strb, const uint8_t *p,
                               size_t length)
{
    size_t i;

    if (length == 0) {
        ucs_string_buffer_appendf(strb, "none");
    }
    for (i = 0; i < length; ++i) {
        ucs_string_buffer_appendf(strb, "%02x", p[i]);
    }
}

/* Generic: the packed addresses in hex. Transports replace it with a
 * readable form. */
static void uct_iface_vfs_show_address(void *obj, ucs_string_buffer_t *strb,
                                       void *arg_ptr, uint64_t arg_u64)
{
    const struct uct_iface_vfs *vfs = arg_ptr;

    ucs_string_buffer_appendf(strb, "device ");
    uct_vfs_append_hex(strb, vfs->addr, vfs->dev_addr_len);
    ucs_string_buffer_appendf(strb, "\niface ");
    uct_vfs_append_hex(strb, vfs->addr + vfs->dev_addr_len,
                       vfs->iface_addr_len);
    ucs_string_buffer_appendf(strb, "\n");
}

static void uct_iface_vfs_show_am_handlers(void *obj, ucs_string_buffer_t *strb,
                                           void *arg_ptr, uint64_t arg_u64)
{
    const uct_base_iface_t *iface = obj;
    unsigned id;

    for (id = 0; id < UCT_AM_ID_MAX; ++id) {
        if (uct_iface_am_handler_is_set(iface, id)) {
            ucs_string_buffer_appendf(
                strb, "%u %s\n", id,
                (iface->am[id].flags & UCT_CB_FLAG_ASYNC) ? "async" : "sync");
        }
    }
}

#ifdef ENABLE_STATS
static void uct_vfs_append_counter(ucs_string_buffer_t *strb, const char *name,
                                   const uint64_t *counter)
{
    ucs_string_buffer_appendf(strb, "%s %" PRIu64 "\n", name,
                              uct_vfs_load_u64(counter));
}

static void uct_iface_vfs_append_am_counters(ucs_string_buffer_t *strb,
                                             const uct_base_iface_t *iface,
                                             unsigned id)
{
    const uct_iface_am_stats_t *am = &iface->am[id].stats;
    uint64_t tx_msgs               = uct_vfs_load_u64(&am->tx_msgs);
    uint64_t tx_bytes              = uct_vfs_load_u64(&am->tx_bytes);
    uint64_t rx_msgs               = uct_vfs_load_u64(&am->rx_msgs);
    uint64_t rx_bytes              = uct_vfs_load_u64(&am->rx_bytes);

    if ((tx_msgs == 0) && (rx_msgs == 0) &&
        !uct_iface_am_handler_is_set(iface, id)) {
        return;
    }
    ucs_string_buffer_appendf(strb,
                              "am.%u.tx_msgs %" PRIu64 "\n"
                              "am.%u.tx_bytes %" PRIu64 "\n"
                              "am.%u.rx_msgs %" PRIu64 "\n"
                              "am.%u.rx_bytes %" PRIu64 "\n",
                              id, tx_msgs, id, tx_bytes, id, rx_msgs, id,
                              rx_bytes);
}
#endif

/* One "name value" line per counter; active message ids that carried
 * traffic or have a handler */
static void uct_iface_vfs_show_counters(void *obj, ucs_string_buffer_t *strb,
                                        void *arg_ptr, uint64_t arg_u64)
{
#ifdef ENABLE_STATS
    const uct_base_iface_t *iface  = obj;
    const uct_iface_stats_t *stats = &iface->stats;
    unsigned id;

    for (id = 0; id < UCT_AM_ID_MAX; ++id) {
        uct_iface_vfs_append_am_counters(strb, iface, id);
    }
    uct_vfs_append_counter(strb, "put.msgs", &stats->put_msgs);
    uct_vfs_append_counter(strb, "put.bytes", &stats->put_bytes);
    uct_vfs_append_counter(strb, "get.msgs", &stats->get_msgs);
    uct_vfs_append_counter(strb, "get.bytes", &stats->get_bytes);
    uct_vfs_append_counter(strb, "tx_no_resource", &stats->tx_no_resource);
    uct_vfs_append_counter(strb, "tx_retries", &stats->tx_retries);
    uct_vfs_append_counter(strb, "conn_retries", &stats->conn_retries);
    uct_vfs_append_counter(strb, "tx_errors", &stats->tx_errors);
    uct_vfs_append_counter(strb, "peer_failures", &stats->peer_failures);
#else
    ucs_string_buffer_appendf(strb, "disabled (configure --disable-stats)\n");
#endif
}

/* The packed addresses, taken once: they do not change while open */
static struct uct_iface_vfs *uct_iface_vfs_alloc(uct_base_iface_t *iface,
                                                 const uct_iface_attr_t *attr)
{
    uct_iface_h tl_iface = &iface->super;
    size_t iface_addr_len;
    struct uct_iface_vfs *vfs;

    iface_addr_len = (attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE)
                         ? attr->iface_addr_len
                         : 0;
    vfs = calloc(1, sizeof(*vfs) + attr->device_addr_len + iface_addr_len);
    if (vfs == NULL) {
        return NULL;
    }

    vfs->id = __atomic_fetch_add(&uct_vfs_next_iface_id, 1, __ATOMIC_RELAXED);
    if ((attr->device_addr_len > 0) &&
        (uct_iface_get_device_address(
             tl_iface, (uct_device_addr_t *)vfs->addr) == UCS_OK)) {
        vfs->dev_addr_len = attr->device_addr_len;
    }
    if ((iface_addr_len > 0) &&
        (uct_iface_get_address(
             tl_iface, (uct_iface_addr_t *)(vfs->addr + vfs->dev_addr_len)) ==
         UCS_OK)) {
        vfs->iface_addr_len = iface_addr_len;
    }
    return vfs;
}

/* A generic file of an interface, unless the transport added its own
 * file of that name */
static void uct_iface_vfs_add_generic(uct_base_iface_t *iface,
                                      ucs_vfs_file_show_cb_t cb, void *arg_ptr,
                                      uint64_t arg_u64, const char *name)
{
    if (!uct_vfs_path_exists(iface->vfs->path, name)) {
        uct_vfs_add_file(iface, cb, arg_ptr, arg_u64, name);
    }
}

static void uct_iface_vfs_add_limits(uct_base_iface_t *iface,
                                     const uct_iface_attr_t *attr)
{
    const uct_vfs_limit_t *limit;
    size_t value;

    for (limit = uct_vfs_iface_limits; limit->name != NULL; ++limit) {
        if (attr->cap.flags & limit->flags) {
            memcpy(&value, (const char *)attr + limit->offset, sizeof(value));
            uct_iface_vfs_add_generic(iface, uct_vfs_show_size, NULL, value,
                                      limit->name);
        }
    }
}

static void uct_iface_vfs_add_files(uct_base_iface_t *iface,
                                    const uct_iface_attr_t *attr)
{
    ucs_status_t status;

    if (iface->tl != NULL) {
        uct_iface_vfs_add_generic(iface, uct_vfs_show_string, iface->tl->name,
                                  0, "transport");
    }
    uct_iface_vfs_add_generic(iface, uct_vfs_show_string, iface->dev_name, 0,
                              "device");
    uct_iface_vfs_add_generic(iface, uct_vfs_show_flags,
                              (void *)uct_vfs_iface_flags, attr->cap.flags,
                              "capabilities");
    uct_iface_vfs_add_generic(iface, uct_vfs_show_flags,
                              (void *)uct_vfs_iface_event_flags,
                              attr->cap.event_flags, "event_capabilities");
    uct_iface_vfs_add_limits(iface, attr);
    uct_iface_vfs_add_generic(iface, uct_iface_vfs_show_address, iface->vfs, 0,
                              "address");
    uct_iface_vfs_add_generic(iface, uct_iface_vfs_show_am_handlers, NULL, 0,
                              "am_handlers");
    uct_iface_vfs_add_generic(iface, uct_iface_vfs_show_counters, NULL, 0,
                              "counters");
    uct_iface_vfs_add_generic(iface, uct_vfs_show_uint, &iface->num_eps,
                              sizeof(iface->num_eps), "num_eps");

    if (iface->md->vfs != NULL) {
        status = ucs_vfs_obj_add_sym_link(iface, iface->md, "memory_domain");
        if (status != UCS_OK) {
            uct_vfs_add_failed(iface, "memory_domain", status);
        }
    }
}

void uct_iface_vfs_init(uct_base_iface_t *iface)
{
    struct uct_iface_vfs *vfs;
    uct_iface_attr_t attr;
    ucs_status_t status;

    /* without the tree, the iface and its eps spend nothing on it */
    if ((iface->vfs != NULL) || !ucs_vfs_is_enabled()) {
        return;
    }

    status = uct_iface_query(&iface->super, &attr);
    if (status != UCS_OK) {
        uct_vfs_add_failed(iface, "iface", status);
        return;
    }

    vfs = uct_iface_vfs_alloc(iface, &attr);
    if (vfs == NULL) {
        uct_vfs_add_failed(iface, "iface", UCS_ERR_NO_MEMORY);
        return;
    }

    status =
        ucs_vfs_obj_add_dir(iface->worker, iface, "iface/%" PRIu64, vfs->id);
    if (status != UCS_OK) {
        uct_vfs_add_failed(iface, "iface", status);
        free(vfs);
        return;
    }
    /* where uct_worker_vfs_init put the worker */
    snprintf(vfs->path, sizeof(vfs->path),
             "/uct/worker/%" PRIu64 "/iface/%" PRIu64, iface->worker->id,
             vfs->id);
    iface->vfs = vfs;

    /* the transport first: its files replace generic ones of the name */
    if ((iface->tl != NULL) && (iface->tl->iface_vfs_init != NULL)) {
        iface->tl->iface_vfs_init(&iface->super);
    }
    uct_iface_vfs_add_files(iface, &attr);
}

void uct_iface_vfs_cleanup(uct_base_iface_t *iface)
{
    if (iface->vfs == NULL) {
        return;
    }

    /* waits for a show callback of the iface or its eps that runs now */
    ucs_vfs_obj_remove(iface);
    free(iface->vfs);
    iface->vfs = NULL;
}

/* ------------------------------------------------------------------------
 * Endpoints
 */

void uct_ep_vfs_init(uct_base_ep_t *ep, uct_base_iface_t *iface)
{
    ucs_status_t status;
    uint64_t id;

    if (iface->vfs == NULL) {
        return;
    }

    id     = __atomic_fetch_add(&uct_vfs_next_ep_id, 1, __ATOMIC_RELAXED);
    status = ucs_vfs_obj_add_dir(iface, ep, "ep/%" PRIu64, id);
    if (status != UCS_OK) {
        uct_vfs_add_failed(ep, "ep", status);
        return;
    }

    if ((iface->tl != NULL) && (iface->tl->ep_vfs_init != NULL)) {
        iface->tl->ep_vfs_init(&ep->super);
    }
}

void uct_ep_vfs_cleanup(uct_base_ep_t *ep)
{
    /* once the iface left the tree, its eps are gone from it too */
    if (uct_base_iface(ep->super.iface)->vfs != NULL) {
        ucs_vfs_obj_remove(ep);
    }
}
