/*
 * What every harness of test/fuzz defines, and what the replay driver
 * (replay.c) or libFuzzer calls.
 */
#ifndef OPENUCT_TEST_FUZZ_H_
#define OPENUCT_TEST_FUZZ_H_

#include <stddef.h>
#include <stdint.h>

/**
 * Run one input. Anything wrong must crash the process (a sanitizer report
 * or abort() after a line on stderr saying what); bad input is not wrong.
 * Returns 0.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/**
 * Optional: called once before the first input. Returns 0.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/**
 * Abort with a message naming the harness's broken rule. For rules the
 * code under test must keep; the input is saved by libFuzzer.
 */
#define fuzz_check(_cond, _fmt, ...)                                    \
    do {                                                                \
        if (!(_cond)) {                                                 \
            fuzz_fail(__FILE__, __LINE__, #_cond, _fmt, ##__VA_ARGS__); \
        }                                                               \
    } while (0)

void fuzz_fail(const char *file, unsigned line, const char *cond,
               const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/**
 * Push a log handler that formats every message up to @a level (so a bad
 * format argument is caught) and drops it; fatal ones are printed.
 * FUZZ_VERBOSE=1 in the environment lets the messages through instead, to
 * debug one input.
 */
void fuzz_log_silence(int level);

#endif
