#ifndef UCS_CONFIG_TYPES_H_
#define UCS_CONFIG_TYPES_H_

/**
 * @file
 * Value types of configuration variables. Applications include this header
 * (usually through <ucs/config/parser.h>) to read the fields of
 * configuration structures (uct_iface_config_t and friends hold values of
 * these types).
 */

#include <ucs/sys/compiler_def.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

BEGIN_C_DECLS

/** A yes/no setting that may also be "try" (use if possible) or "auto". */
typedef enum ucs_ternary_auto_value {
    UCS_NO   = 0,    /**< disabled */
    UCS_YES  = 1,    /**< required: failing to enable it is an error */
    UCS_TRY  = 2,    /**< enabled if possible, silently off otherwise */
    UCS_AUTO = 3,    /**< the library chooses */
    UCS_TERNARY_LAST /**< number of values */
} ucs_ternary_auto_value_t;

/** A socket address and its length (the connection-manager calls of
 *  uct.h take it). */
typedef struct ucs_sock_addr {
    const struct sockaddr *addr; /**< the address (IPv4 or IPv6) */
    socklen_t addrlen;           /**< bytes at @a addr */
} ucs_sock_addr_t;

/** Memory units (size_t): the value of "inf". */
#define UCS_MEMUNITS_INF ((size_t)-1)
/** Memory units (size_t): the value of "auto". */
#define UCS_MEMUNITS_AUTO ((size_t)-2)

/** Unsigned long units: the value of "inf". */
#define UCS_ULUNITS_INF ((unsigned long)-1)
/** Unsigned long units: the value of "auto". */
#define UCS_ULUNITS_AUTO ((unsigned long)-2)

/** Bandwidth (double, bytes per second): "auto" maps to this value. */
#define UCS_CONFIG_BW_AUTO ((double)-2.0)

/** A list of strings, such as "mlx5_0:1,mlx5_1:1". Owned by the options
 *  structure that holds it (freed by ucs_config_parser_release_opts()). */
typedef struct ucs_config_names_array {
    char **names;   /**< the strings, in the order given */
    unsigned count; /**< number of strings */
} ucs_config_names_array_t;

/** How an allow list is to be read. */
typedef enum ucs_config_allow_list_mode {
    UCS_CONFIG_ALLOW_LIST_ALLOW_ALL, /**< "all": every name is allowed */
    UCS_CONFIG_ALLOW_LIST_ALLOW,     /**< "a,b": only the listed names */
    UCS_CONFIG_ALLOW_LIST_NEGATE     /**< "^a,b": all but the listed names */
} ucs_config_allow_list_mode_t;

/** A filter such as UCX_MODULES=self,tcp or UCX_MODULES=^ib. */
typedef struct ucs_config_allow_list {
    ucs_config_names_array_t array;    /**< the listed names */
    ucs_config_allow_list_mode_t mode; /**< how to read them */
} ucs_config_allow_list_t;

/** An inclusive range of unsigned values, such as "1000-2000". */
typedef struct ucs_range_spec {
    unsigned first; /**< lowest value of the range */
    unsigned last;  /**< highest value, >= first */
} ucs_range_spec_t;

END_C_DECLS

#endif
