dnl libFuzzer harnesses (test/fuzz).
dnl
dnl --enable-fuzz needs a compiler that links -fsanitize=fuzzer (clang with
dnl its runtime: apt-get install clang libclang-rt-14-dev). It instruments
dnl the libraries and modules for coverage and with ASan and UBSan, and
dnl links the harnesses with libFuzzer. Meant for its own build directory:
dnl   ../../configure CC=clang CXX=clang++ --enable-fuzz --enable-assertions
dnl Without it, the harnesses are linked with a replay driver that runs
dnl them once over their seed corpus and regression inputs in `make check`.

AC_ARG_ENABLE([fuzz],
    [AS_HELP_STRING([--enable-fuzz],
                    [build the libFuzzer harnesses; needs CC=clang
                     (default: no)])],
    [], [enable_fuzz=no])

have_fuzz_summary="no (replay of the seed corpus in make check)"
AS_IF([test "x$enable_fuzz" = xyes],
      [FUZZ_SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
       AC_MSG_CHECKING([whether $CC links -fsanitize=fuzzer])
       fuzz_save_CFLAGS="$CFLAGS"
       fuzz_save_LDFLAGS="$LDFLAGS"
       CFLAGS="$CFLAGS -fsanitize=fuzzer $FUZZ_SAN_FLAGS"
       LDFLAGS="$LDFLAGS -fsanitize=fuzzer $FUZZ_SAN_FLAGS"
       AC_LINK_IFELSE(
           [AC_LANG_SOURCE([[
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return (size > 0) && (data[0] == 0);
}
]])],
           [AC_MSG_RESULT([yes])],
           [AC_MSG_RESULT([no])
            AC_MSG_ERROR([--enable-fuzz: $CC cannot link -fsanitize=fuzzer; configure with CC=clang CXX=clang++ (apt-get install clang libclang-rt-14-dev)])])
       CFLAGS="$fuzz_save_CFLAGS"
       LDFLAGS="$fuzz_save_LDFLAGS"

       dnl coverage instrumentation everywhere, libFuzzer's main only in
       dnl the harnesses (FUZZ_LDFLAGS)
       BASE_CFLAGS="$BASE_CFLAGS -fsanitize=fuzzer-no-link $FUZZ_SAN_FLAGS"
       BASE_CXXFLAGS="$BASE_CXXFLAGS -fsanitize=fuzzer-no-link $FUZZ_SAN_FLAGS"
       BASE_LDFLAGS="$BASE_LDFLAGS $FUZZ_SAN_FLAGS"
       FUZZ_LDFLAGS="-fsanitize=fuzzer"
       AC_DEFINE([ENABLE_FUZZ], [1], [Built for libFuzzer])
       have_fuzz_summary="yes (make fuzz)"])
AC_SUBST([FUZZ_LDFLAGS])
AM_CONDITIONAL([ENABLE_FUZZ], [test "x$enable_fuzz" = xyes])
