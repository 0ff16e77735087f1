/**
 * @file
 * Forward declarations of UCX's statistics types, which UCT interfaces
 * name (uct_iface_params_t::stats_root in UCX). openuct keeps no
 * statistics tree: these types are declared so that programs written for
 * UCX compile, and no openuct function creates or accepts a statistics
 * node. Included by applications written for UCX.
 */
#ifndef UCS_STATS_STATS_FWD_H_
#define UCS_STATS_STATS_FWD_H_

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/** A statistics counter. */
typedef uint64_t ucs_stats_counter_t;

/** Description of a kind of statistics node; only declared. */
typedef struct ucs_stats_class ucs_stats_class_t;

/** A node of a statistics tree; only declared, never created. */
typedef struct ucs_stats_node ucs_stats_node_t;

/** A node of a statistics report filter; only declared. */
typedef struct ucs_stats_filter_node ucs_stats_filter_node_t;

/** Report formats a statistics tree may be written in. */
typedef enum {
    UCS_STATS_FULL,     /**< Every counter of every node */
    UCS_STATS_FULL_AGG, /**< Every counter, nodes of a kind added up */
    UCS_STATS_SUMMARY,  /**< One line per node kind */
    UCS_STATS_LAST      /**< Number of formats */
} ucs_stats_formats_t;

END_C_DECLS

#endif
