/*
 * The ib memory domain: one per verbs device. It owns the device (see
 * ib_device.h) and a protection domain, registers memory as verbs memory
 * regions (through the registration cache when it is enabled), allocates
 * registered memory, and packs remote keys.
 *
 * A memory handle is a uct_ib_mem_t. A packed remote key is the 32-bit
 * rkey of the memory region; an unpacked uct_rkey_t holds it in its low 32
 * bits (uct_ib_md_direct_rkey()), so transports post it with no lookup.
 */
#ifndef UCT_IB_MD_H_
#define UCT_IB_MD_H_

#include "ib_device.h"

#include <uct/base/uct_md.h>
#include <ucs/config/types.h>

#include <ucs/memory/rcache.h>

BEGIN_C_DECLS

/** Bytes of a packed remote key. */
#define UCT_IB_MD_PACKED_RKEY_SIZE sizeof(uint32_t)

/** Every verbs access right the md grants (UCT_MD_MEM_ACCESS_ALL). */
#define UCT_IB_MEM_ACCESS_ALL \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/** uct_ib_mem_t::flags */
enum {
    UCT_IB_MEM_FLAG_RCACHE = UCS_BIT(0), /* in a cache region */
    UCT_IB_MEM_FLAG_ALLOC  = UCS_BIT(1)  /* memory allocated by the md */
};

/** A memory handle of the ib md. */
typedef struct uct_ib_mem {
    struct ibv_mr *mr;
    uint32_t      lkey;
    uint32_t      rkey;
    unsigned      flags;     /* UCT_IB_MEM_FLAG_* */
    size_t        alloc_length;
} uct_ib_mem_t;

/** Configuration of the ib md (environment prefix UCX_IB_). */
typedef struct uct_ib_md_config {
    uct_md_config_t          super;
    ucs_ternary_auto_value_t fork_init;      /* FORK_INIT: try|yes|no */
    ucs_ternary_auto_value_t rcache;         /* RCACHE: try|yes|no */
    size_t                   rcache_max_size;
    unsigned long            rcache_max_regions;
    unsigned long            gid_index;      /* GID_INDEX: auto|N */
    int                      async_events;   /* ASYNC_EVENTS: y|n */
} uct_ib_md_config_t;

/** The ib memory domain. */
typedef struct uct_ib_md {
    uct_md_t          super;
    uct_ib_device_t   dev;
    struct ibv_pd     *pd;
    ucs_rcache_t      *rcache;     /* NULL when the cache is off */
    unsigned long     gid_index;   /* UCX_IB_GID_INDEX */
    ucs_linear_func_t reg_cost;
    unsigned long     num_reg;     /* ibv_reg_mr calls that succeeded */
    unsigned long     num_dereg;   /* ibv_dereg_mr calls */
} uct_ib_md_t;

extern ucs_config_field_t uct_ib_md_config_table[];

/** The ib component (ib_md.c); the module adds its transports to it. */
extern uct_component_t    uct_ib_component;

/** The ib md of a uct md handle. */
static inline uct_ib_md_t *uct_ib_md_from(uct_md_h md)
{
    return ucs_container_of(md, uct_ib_md_t, super);
}

/** The 32-bit rkey of an unpacked remote key. */
static inline uint32_t uct_ib_md_direct_rkey(uct_rkey_t uct_rkey)
{
    return (uint32_t)uct_rkey;
}

/** Verbs access flags for UCT_MD_MEM_* @a flags (none given means all). */
int uct_ib_md_access_flags(unsigned flags);

/** The registration cache of @a md, or NULL when it is off. */
static inline ucs_rcache_t *uct_ib_md_rcache(uct_md_h md)
{
    return uct_ib_md_from(md)->rcache;
}

END_C_DECLS

#endif
