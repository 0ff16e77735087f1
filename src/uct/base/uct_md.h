/*
 * Memory domain base: the operations a memory domain provides. A NULL
 * operation makes the matching API call return UCS_ERR_UNSUPPORTED.
 */
#ifndef UCT_BASE_MD_H_
#define UCT_BASE_MD_H_

#include <uct/base/uct_component.h>

#include <stdio.h>

BEGIN_C_DECLS

struct uct_md_ops {
    void (*close)(uct_md_h md);
    ucs_status_t (*query)(uct_md_h md, uct_md_attr_t *md_attr);
    ucs_status_t (*mem_alloc)(uct_md_h md, size_t *length_p, void **address_p,
                              ucs_memory_type_t mem_type, unsigned flags,
                              const char *alloc_name, uct_mem_h *memh_p);
    ucs_status_t (*mem_free)(uct_md_h md, uct_mem_h memh);
    ucs_status_t (*mem_advise)(uct_md_h md, uct_mem_h memh, void *addr,
                               size_t length, uct_mem_advice_t advice);
    ucs_status_t (*mem_reg)(uct_md_h md, void *address, size_t length,
                            unsigned flags, uct_mem_h *memh_p);
    ucs_status_t (*mem_dereg)(uct_md_h md, uct_mem_h memh);
    ucs_status_t (*mem_query)(uct_md_h md, const void *address, size_t length,
                              uct_md_mem_attr_t *mem_attr);
    ucs_status_t (*mkey_pack)(uct_md_h md, uct_mem_h memh, void *rkey_buffer);
    ucs_status_t (*detect_memory_type)(uct_md_h md, const void *addr,
                                       size_t length,
                                       ucs_memory_type_t *mem_type_p);
    /** May be NULL. Prints what the md knows of its device beyond
     *  uct_md_attr_t (ports, addresses, locality), as "# " lines. */
    void (*print_info)(uct_md_h md, FILE *stream);
    /** May be NULL. Adds the md's own files to its object tree directory
     *  (uct/base/uct_vfs.h), right after libuct added the generic ones. */
    void (*vfs_init)(uct_md_h md);
};

struct uct_md_vfs;

/** The base of every memory domain. */
struct uct_md {
    const uct_md_ops_t *ops;
    uct_component_t *component;
    struct uct_md_vfs *vfs; /* object tree data, or NULL */
};

/** Base memory domain configuration, embedded first in every md config. */
struct uct_md_config {
    int reserved; /* keeps the struct non-empty */
};

extern ucs_config_field_t uct_md_config_table[];

/**
 * Prints the device details of @a md (its print_info operation) for
 * uct_info -d; prints nothing when the md has none.
 */
void uct_md_print_info(uct_md_h md, FILE *stream);

/** Initializes the base part of a memory domain. */
void uct_md_base_init(uct_md_t *md, const uct_md_ops_t *ops,
                      uct_component_t *component);

/** Fills @a md_attr with neutral values; transports then set theirs. */
void uct_md_base_attr_init(uct_md_h md, uct_md_attr_t *md_attr);

/** A memory handle for mds that need none (the registration is a no-op). */
ucs_status_t uct_md_dummy_mem_reg(uct_md_h md, void *address, size_t length,
                                  unsigned flags, uct_mem_h *memh_p);
ucs_status_t uct_md_dummy_mem_dereg(uct_md_h md, uct_mem_h memh);

/** rkey ops for transports whose remote key is the remote address itself
 *  (in-process: self). */
ucs_status_t uct_md_stub_rkey_unpack(uct_component_t *component,
                                     const void *rkey_buffer,
                                     uct_rkey_t *rkey_p, void **handle_p);
ucs_status_t uct_md_stub_rkey_release(uct_component_t *component,
                                      uct_rkey_t rkey, void *handle);

/**
 * Opens a host memory domain: host memory only, registration is a no-op,
 * remote keys are empty (use with uct_md_stub_rkey_unpack/release; the
 * remote address is a plain pointer on the peer). For transports within
 * one process (self); one that takes accesses from other processes needs
 * keyed registrations instead (as uct/tcp/tcp_md.h does).
 */
ucs_status_t uct_host_md_open(uct_component_t *component, const char *md_name,
                              const uct_md_config_t *config, uct_md_h *md_p);

/** mem_query and detect_memory_type of the host memory domain, for other
 *  mds of host memory: the memory is host memory, on no device, and its
 *  base and length are those asked about. */
ucs_status_t uct_host_md_mem_query(uct_md_h md, const void *address,
                                   size_t length, uct_md_mem_attr_t *mem_attr);
ucs_status_t uct_host_md_detect_memory_type(uct_md_h md, const void *addr,
                                            size_t length,
                                            ucs_memory_type_t *type_p);

END_C_DECLS

#endif
