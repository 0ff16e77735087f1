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
 * one transport name. Returns 0, or 1 when nothing matched the filter,
 * the components cannot be listed, or a configuration value is invalid
 * (the parser logged which).
 */
int uct_info_print_devices(const char *tl_filter);

#endif
