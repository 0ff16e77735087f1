/*
 * main() for the harnesses when they are built without libFuzzer: runs
 * LLVMFuzzerTestOneInput() once on each file named on the command line,
 * or on each file of a named directory. Exits non-zero if a file cannot be
 * read; a failing input aborts the process, as under libFuzzer.
 *
 *   fuzz_config corpus/fuzz_config regress/fuzz_config
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int fuzz_replay_file(const char *path)
{
    uint8_t *data = NULL;
    size_t size   = 0;
    struct stat st;
    FILE *stream;
    int ret = 0;

    stream = fopen(path, "rb");
    if (stream == NULL) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }

    if ((fstat(fileno(stream), &st) != 0) || (st.st_size < 0)) {
        fprintf(stderr, "replay: cannot stat %s: %s\n", path, strerror(errno));
        ret = -1;
        goto out;
    }

    /* an exact-size copy, so that reading past the input is caught */
    size = (size_t)st.st_size;
    data = malloc((size > 0) ? size : 1);
    if ((data == NULL) || (fread(data, 1, size, stream) != size)) {
        fprintf(stderr, "replay: cannot read %s (%zu bytes)\n", path, size);
        ret = -1;
        goto out;
    }

    LLVMFuzzerTestOneInput(data, size);

out:
    free(data);
    fclose(stream);
    return ret;
}

static int fuzz_replay_dir(const char *dir, unsigned *count_p)
{
    struct dirent **entries;
    char path[4096];
    int i, count, ret = 0;

    count = scandir(dir, &entries, NULL, alphasort);
    if (count < 0) {
        fprintf(stderr, "replay: cannot read directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }

    for (i = 0; i < count; ++i) {
        if (entries[i]->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name);
            if (fuzz_replay_file(path) != 0) {
                ret = -1;
            }
            ++(*count_p);
        }
        free(entries[i]);
    }

    free(entries);
    return ret;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    struct stat st;
    int i, ret = 0;

    if (argc < 2) {
        fprintf(stderr,
                "usage: %s FILE|DIR...\n"
                "Runs the harness once on each input (this build has no "
                "libFuzzer; configure CC=clang --enable-fuzz to fuzz).\n",
                argv[0]);
        return 2;
    }

    if (LLVMFuzzerInitialize != NULL) {
        LLVMFuzzerInitialize(&argc, &argv);
    }

    for (i = 1; i < argc; ++i) {
        if ((stat(argv[i], &st) == 0) && S_ISDIR(st.st_mode)) {
            if (fuzz_replay_dir(argv[i], &count) != 0) {
                ret = 1;
            }
        } else {
            if (fuzz_replay_file(argv[i]) != 0) {
                ret = 1;
            }
            ++count;
        }
    }

    printf("%s: ran %u inputs\n", argv[0], count);
    return ret;
}
