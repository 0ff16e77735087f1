/*
 * uct_info: reports what the library offers on this machine.
 *
 *   -v  version and loaded modules
 *   -b  build configuration
 *   -c  configuration variables with their current values
 *   -f  the same, with the documentation of each variable
 *   -d  components, memory domains, transports and their capabilities
 *   -t  limit -d to one transport
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "uct_info.h"

#include <uct/api/uct.h>
#include <ucs/config/parser.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum {
    UCT_INFO_VERSION     = 1 << 0,
    UCT_INFO_BUILD       = 1 << 1,
    UCT_INFO_CONFIG      = 1 << 2,
    UCT_INFO_CONFIG_DOC  = 1 << 3,
    UCT_INFO_DEVICES     = 1 << 4
};

static void uct_info_usage(FILE *stream, const char *prog)
{
    fprintf(stream,
            "Usage: %s [options]\n"
            "Reports the transports and settings of the openuct library.\n"
            "\n"
            "  -v       print the version and the loaded modules\n"
            "  -b       print the build configuration\n"
            "  -c       print every configuration variable and its value\n"
            "  -f       like -c, with the documentation of each variable\n"
            "  -d       print components, memory domains and transports\n"
            "  -t TL    with -d, show only the transport TL (implies -d)\n"
            "  -h       print this help\n"
            "\n"
            "Example: %s -d -t self\n", prog, prog);
}

/* Loads the modules, so their configuration tables are registered too */
static void uct_info_load_modules(void)
{
    uct_component_h *components;
    unsigned num_components;

    if (uct_query_components(&components, &num_components) == UCS_OK) {
        uct_release_component_list(components);
    }
}

/* Returns 0, or 1 when a value is invalid (reported by the parser) */
static int uct_info_print_config(int with_doc)
{
    unsigned flags = UCS_CONFIG_PRINT_CONFIG;
    ucs_status_t status;

    if (with_doc) {
        flags |= UCS_CONFIG_PRINT_DOC | UCS_CONFIG_PRINT_HEADER;
    }

    uct_info_load_modules();
    status = ucs_config_parser_print_all_opts(stdout, NULL, flags, NULL);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_info: the configuration is invalid (the error "
                "above names the variable; its default is printed); fix or "
                "unset it\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *tl_filter = NULL;
    unsigned what         = 0;
    int ret               = 0;
    const char *prog      = basename(argv[0]);
    int c;

    while ((c = getopt(argc, argv, "vbcfdt:h")) != -1) {
        switch (c) {
        case 'v':
            what |= UCT_INFO_VERSION;
            break;
        case 'b':
            what |= UCT_INFO_BUILD;
            break;
        case 'c':
            what |= UCT_INFO_CONFIG;
            break;
        case 'f':
            what |= UCT_INFO_CONFIG_DOC;
            break;
        case 'd':
            what |= UCT_INFO_DEVICES;
            break;
        case 't':
            what     |= UCT_INFO_DEVICES;
            tl_filter = optarg;
            break;
        case 'h':
            uct_info_usage(stdout, prog);
            return 0;
        default:
            uct_info_usage(stderr, prog);
            return 2;
        }
    }

    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
                argv[optind]);
        uct_info_usage(stderr, prog);
        return 2;
    }

    if (what == 0) {
        uct_info_usage(stdout, prog);
        return 0;
    }

    if (what & UCT_INFO_VERSION) {
        uct_info_print_version();
    }
    if (what & UCT_INFO_BUILD) {
        uct_info_print_build_config();
    }
    if (what & (UCT_INFO_CONFIG | UCT_INFO_CONFIG_DOC)) {
        ret |= uct_info_print_config(!!(what & UCT_INFO_CONFIG_DOC));
    }
    if (what & UCT_INFO_DEVICES) {
        ret |= uct_info_print_devices(tl_filter);
    }

    return ret;
}
