/*
 * uct_info: the parts of the tool, one per kind of report.
 */
#ifndef UCT_INFO_H_
#define UCT_INFO_H_

/** Version of the library and the API, and the loaded modules (-v). */
void uct_info_print_version(void);

/** The configure-time settings the library was built with (-b). */
void uct_info_print_build_config(void);

/**
 * Every component, memory domain and transport resource with its
 * attributes (-d). @a tl_filter, when not NULL, limits the listing to
 * one transport name; @a dev_types is a mask of UCS_BIT(uct_device_type_t)
 * the listed devices must be in. Returns 0, or 1 when nothing matched the
 * filters, the components cannot be listed, or a configuration value is
 * invalid (the parser logged which).
 */
int uct_info_print_devices(const char *tl_filter, unsigned dev_types);

/**
 * Sizes of the structures of the installed headers, and the heap a worker,
 * an interface and an endpoint of each transport take (-y). Returns 0, or
 * 1 when the components cannot be listed.
 */
int uct_info_print_types(void);

/** Processor, memory, clock, kernel and limits of this machine (-s). */
void uct_info_print_system(void);

/** NUMA nodes, the devices transports run on and their distances (-T). */
void uct_info_print_topology(void);

/** memcpy bandwidth for sizes from 4 KiB to 64 MiB (-M). Returns 0, or 1
 * when the buffers cannot be allocated. */
int uct_info_print_memcpy(void);

#endif
