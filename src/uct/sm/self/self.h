/*
 * The self transport: endpoints deliver to interfaces of the same process
 * by calling the receiver's handler directly from the send call.
 */
#ifndef UCT_SELF_H_
#define UCT_SELF_H_

#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <ucs/datastruct/list.h>
#include <ucs/memory/mpool.h>

#define UCT_SELF_NAME     "self"
#define UCT_SELF_DEV_NAME "memory"
#define UCT_SELF_MAX_IOV  16

typedef uint64_t uct_self_iface_addr_t;

typedef struct uct_self_iface_config {
    uct_iface_config_t super;
    size_t             seg_size;  /* largest bcopy/zcopy message */
} uct_self_iface_config_t;

typedef struct uct_self_iface {
    uct_base_iface_t      super;
    uct_self_iface_addr_t id;          /* address other ifaces connect to */
    size_t                seg_size;
    size_t                desc_offset; /* obj start to data */
    ucs_mpool_t           msg_mp;      /* descriptors for bcopy/zcopy */
    uct_recv_desc_t       release_desc;
    ucs_list_link_t       peers;       /* eps that deliver to this iface */
    ucs_list_link_t       list;        /* in the process-wide iface list */
    int                   event_fd;    /* -1 until event_fd_get */
    int                   armed;       /* signal event_fd on next recv */
    unsigned              armed_events;
} uct_self_iface_t;

typedef struct uct_self_ep {
    uct_base_ep_t    super;
    uct_self_iface_t *peer;       /* receiving iface, NULL once closed */
    ucs_list_link_t  peer_list;   /* in peer->peers */
} uct_self_ep_t;

#endif
