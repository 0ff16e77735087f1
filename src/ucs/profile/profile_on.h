/**
 * @file
 * UCX's profiling macros as a program asks for them when it wants
 * profiling. openuct has no built-in profiler, so this header gives the
 * definitions of ucs/profile/profile_off.h: every UCS_PROFILE_* macro
 * expands to the code it wraps, with its value and effects unchanged and
 * no time or event recorded. Programs written for UCX include it
 * unmodified; profile them with perf(1) or valgrind's callgrind instead.
 */
#ifndef UCS_PROFILE_PROFILE_ON_H_
#define UCS_PROFILE_PROFILE_ON_H_

#include <ucs/profile/profile_off.h>

#endif
