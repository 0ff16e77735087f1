/*
 * uct_info: reports what the library offers on this machine. The option
 * letters are those of UCX's ucx_info where the meaning is the same:
 *
 *   -v  version and loaded modules
 *   -b  build configuration
 *   -c  configuration variables with their current values
 *   -f  the same, with the documentation of each variable
 *   -a  with -c or -f, also the variables that have no documentation
 *   -C  with -c or -f, comment out the variables left at their default
 *   -d  components, memory domains, transports and their capabilities
 *   -t  limit -d to one transport
 *   -D  limit -d to one type of device
 *   -y  sizes of structures, heap of workers, interfaces and endpoints
 *   -s  processor, memory, clock, kernel
 *   -T  topology: NUMA nodes, devices and their distances
 *   -M  memcpy bandwidth
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "uct_info.h"

#include <uct/api/uct.h>
#include <ucs/config/parser.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Options of ucx_info that print UCP objects, which openuct does not have;
 * the ones followed by ':' take an argument */
#define UCT_INFO_UCP_OPTIONS "pwem:u:n:N:P:A:6"

enum {
    UCT_INFO_VERSION    = 1 << 0,
    UCT_INFO_BUILD      = 1 << 1,
    UCT_INFO_CONFIG     = 1 << 2,
    UCT_INFO_CONFIG_DOC = 1 << 3,
    UCT_INFO_DEVICES    = 1 << 4,
    UCT_INFO_TYPES      = 1 << 5,
    UCT_INFO_SYSTEM     = 1 << 6,
    UCT_INFO_TOPOLOGY   = 1 << 7,
    UCT_INFO_MEMCPY     = 1 << 8
};

/* Modifiers of -c and -f */
enum { UCT_INFO_CONFIG_HIDDEN = 1 << 0, UCT_INFO_CONFIG_COMMENT = 1 << 1 };

/* -D names, as ucx_info spells them, and the device types they select */
static const struct {
    const char *name;
    unsigned dev_types;
} uct_info_dev_type_names[] = {{"all", UCS_MASK(UCT_DEVICE_TYPE_LAST)},
                               {"net", UCS_BIT(UCT_DEVICE_TYPE_NET)},
                               {"shm", UCS_BIT(UCT_DEVICE_TYPE_SHM)},
                               {"self", UCS_BIT(UCT_DEVICE_TYPE_SELF)},
                               {"acc", UCS_BIT(UCT_DEVICE_TYPE_ACC)},
                               {NULL, 0}};

static void uct_info_usage(FILE *stream, const char *prog)
{
    fprintf(stream,
            "Usage: %s [options]\n"
            "Reports the transports and settings of the openuct library.\n"
            "\n"
            "  -v        print the version and the loaded modules\n"
            "  -b        print the build configuration\n"
            "  -c        print every configuration variable and its value\n"
            "  -f        like -c, with the documentation of each variable\n"
            "  -a        with -c or -f, also the undocumented variables\n"
            "  -C        with -c or -f, comment out the variables left at\n"
            "            their default\n"
            "  -d        print components, memory domains and transports\n"
            "  -t TL     with -d, show only the transport TL (implies -d)\n"
            "  -D TYPE   with -d, show only devices of TYPE: all, net, shm,\n"
            "            self or acc (implies -d)\n"
            "  -y        print the sizes of the main structures and the heap\n"
            "            of a worker, an interface and an endpoint\n"
            "  -s        print the processor, memory, clock and kernel\n"
            "  -T        print the NUMA nodes, the devices transports use\n"
            "            and the distances between them\n"
            "  -M        measure memcpy bandwidth\n"
            "  -h        print this help\n"
            "\n"
            "ucx_info's UCP options (-p -w -e -m -u -n -N -P -A -6) are\n"
            "refused: openuct implements UCT only.\n"
            "\n"
            "Example: %s -d -t self\n",
            prog, prog);
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

/* Prints the configuration to @a stream; UCS_OK or the parser's error */
static ucs_status_t uct_info_config_print(FILE *stream, unsigned flags)
{
    return ucs_config_parser_print_all_opts(stream, NULL, flags, NULL);
}

/* The configuration as it would be with no UCX_ variable and no
 * configuration file, in a string the caller frees; NULL on failure.
 * The environment is restored before returning. */
static char *uct_info_config_defaults(unsigned flags)
{
    extern char **environ;
    char **saved, **env, *text = NULL, *eq;
    size_t count = 0, i, text_size;
    FILE *stream;

    for (env = environ; *env != NULL; ++env) {
        count += !strncmp(*env, UCS_DEFAULT_ENV_PREFIX,
                          strlen(UCS_DEFAULT_ENV_PREFIX));
    }
    saved = calloc(count + 1, sizeof(*saved));
    if (saved == NULL) {
        return NULL;
    }

    /* Copy first: unsetenv() changes environ */
    count = 0;
    for (env = environ; *env != NULL; ++env) {
        if (!strncmp(*env, UCS_DEFAULT_ENV_PREFIX,
                     strlen(UCS_DEFAULT_ENV_PREFIX)) &&
            ((saved[count] = strdup(*env)) != NULL)) {
            ++count;
        }
    }
    for (i = 0; i < count; ++i) {
        eq  = strchr(saved[i], '=');
        *eq = '\0';
        unsetenv(saved[i]);
        *eq = '=';
    }
    setenv(UCS_DEFAULT_ENV_PREFIX "CONFIG_FILE", "", 1);
    ucs_config_parser_reload_file();

    stream = open_memstream(&text, &text_size);
    if (stream != NULL) {
        if (uct_info_config_print(stream, flags) != UCS_OK) {
            fclose(stream);
            free(text);
            text   = NULL;
            stream = NULL;
        } else {
            fclose(stream);
        }
    }

    unsetenv(UCS_DEFAULT_ENV_PREFIX "CONFIG_FILE");
    for (i = 0; i < count; ++i) {
        eq  = strchr(saved[i], '=');
        *eq = '\0';
        setenv(saved[i], eq + 1, 1);
        free(saved[i]);
    }
    free(saved);
    ucs_config_parser_reload_file();
    return text;
}

/* Prints @a current, commenting out each NAME=value line that is also in
 * @a defaults at the same place */
static void uct_info_print_commented(const char *current, const char *defaults)
{
    const char *cur = current, *dfl = defaults;
    size_t cur_len, dfl_len;

    while (*cur != '\0') {
        cur_len = strcspn(cur, "\n");
        dfl_len = (dfl != NULL) ? strcspn(dfl, "\n") : 0;
        if ((dfl != NULL) && (cur[0] != '#') && (cur_len > 0) &&
            (cur_len == dfl_len) && !strncmp(cur, dfl, cur_len)) {
            printf("# ");
        }
        printf("%.*s\n", (int)cur_len, cur);

        cur += cur_len + (cur[cur_len] == '\n');
        if (dfl != NULL) {
            dfl += dfl_len + (dfl[dfl_len] == '\n');
            if (*dfl == '\0') {
                dfl = NULL;
            }
        }
    }
}

/* Returns 0, or 1 when a value is invalid (reported by the parser) */
static int uct_info_print_config(int with_doc, unsigned modifiers)
{
    unsigned flags = UCS_CONFIG_PRINT_CONFIG;
    char *current  = NULL, *defaults;
    ucs_status_t status;
    size_t current_size;
    FILE *stream;

    if (with_doc) {
        flags |= UCS_CONFIG_PRINT_DOC | UCS_CONFIG_PRINT_HEADER;
    }
    if (modifiers & UCT_INFO_CONFIG_HIDDEN) {
        flags |= UCS_CONFIG_PRINT_HIDDEN;
    }

    uct_info_load_modules();
    if (!(modifiers & UCT_INFO_CONFIG_COMMENT)) {
        status = uct_info_config_print(stdout, flags);
    } else {
        stream = open_memstream(&current, &current_size);
        if (stream == NULL) {
            fprintf(stderr, "uct_info: no memory for -C\n");
            return 1;
        }
        status = uct_info_config_print(stream, flags);
        fclose(stream);

        defaults = uct_info_config_defaults(flags);
        printf("# Variables at their default value are commented out\n");
        uct_info_print_commented(current, defaults);
        free(defaults);
        free(current);
    }

    if (status != UCS_OK) {
        fprintf(stderr,
                "uct_info: the configuration is invalid (the error "
                "above names the variable; its default is printed); fix or "
                "unset it\n");
        return 1;
    }
    return 0;
}

/* The device types named by a -D argument, or 0 if it names none */
static unsigned uct_info_parse_dev_type(const char *name)
{
    unsigned i;

    for (i = 0; uct_info_dev_type_names[i].name != NULL; ++i) {
        if (!strcmp(name, uct_info_dev_type_names[i].name)) {
            return uct_info_dev_type_names[i].dev_types;
        }
    }
    return 0;
}

/* One line for an option of ucx_info that prints UCP objects */
static void uct_info_refuse_ucp(const char *prog, int option)
{
    fprintf(stderr,
            "%s: -%c is a UCP option of ucx_info; openuct "
            "implements UCT only and has no UCP context, worker or "
            "endpoint to show\n",
            prog, option);
}

int main(int argc, char **argv)
{
    const char *tl_filter = NULL;
    unsigned dev_types    = UCS_MASK(UCT_DEVICE_TYPE_LAST);
    unsigned what         = 0;
    unsigned modifiers    = 0;
    int ret               = 0;
    const char *prog      = basename(argv[0]);
    int c;

    opterr = 0; /* our own one-line messages */
    while ((c = getopt(argc, argv, ":vbcfaCdt:D:ysTMh" UCT_INFO_UCP_OPTIONS)) !=
           -1) {
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
        case 'a':
            modifiers |= UCT_INFO_CONFIG_HIDDEN;
            break;
        case 'C':
            modifiers |= UCT_INFO_CONFIG_COMMENT;
            break;
        case 'd':
            what |= UCT_INFO_DEVICES;
            break;
        case 't':
            what |= UCT_INFO_DEVICES;
            tl_filter = optarg;
            break;
        case 'D':
            what |= UCT_INFO_DEVICES;
            dev_types = uct_info_parse_dev_type(optarg);
            if (dev_types == 0) {
                fprintf(stderr,
                        "%s: unknown device type '%s' for -D; "
                        "expected all, net, shm, self or acc\n",
                        prog, optarg);
                return 2;
            }
            break;
        case 'y':
            what |= UCT_INFO_TYPES;
            break;
        case 's':
            what |= UCT_INFO_SYSTEM;
            break;
        case 'T':
            what |= UCT_INFO_TOPOLOGY;
            break;
        case 'M':
            what |= UCT_INFO_MEMCPY;
            break;
        case 'h':
            uct_info_usage(stdout, prog);
            return 0;
        case ':':
            fprintf(stderr,
                    "%s: option -%c needs an argument; %s -h lists "
                    "the options\n",
                    prog, optopt, prog);
            return 2;
        case '?':
            fprintf(stderr,
                    "%s: unknown option -%c; %s -h lists the "
                    "options\n",
                    prog, optopt, prog);
            return 2;
        default:
            uct_info_refuse_ucp(prog, c);
            return 2;
        }
    }

    if (optind < argc) {
        fprintf(stderr,
                "%s: unexpected argument '%s'; %s -h lists the "
                "options\n",
                prog, argv[optind], prog);
        return 2;
    }

    /* -a and -C alone print the configuration they modify */
    if ((modifiers != 0) && !(what & (UCT_INFO_CONFIG | UCT_INFO_CONFIG_DOC))) {
        what |= UCT_INFO_CONFIG;
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
    if (what & UCT_INFO_SYSTEM) {
        uct_info_print_system();
    }
    if (what & UCT_INFO_TYPES) {
        ret |= uct_info_print_types();
    }
    if (what & (UCT_INFO_CONFIG | UCT_INFO_CONFIG_DOC)) {
        ret |= uct_info_print_config(!!(what & UCT_INFO_CONFIG_DOC), modifiers);
    }
    if (what & UCT_INFO_DEVICES) {
        ret |= uct_info_print_devices(tl_filter, dev_types);
    }
    if (what & UCT_INFO_TOPOLOGY) {
        uct_info_print_topology();
    }
    if (what & UCT_INFO_MEMCPY) {
        ret |= uct_info_print_memcpy();
    }

    return ret;
}
