dnl googletest from Debian's googletest package, compiled by our make.

AC_ARG_WITH([gtest],
    [AS_HELP_STRING([--with-gtest=DIR],
                    [googletest source tree (default: /usr/src/googletest/googletest)])],
    [], [with_gtest=/usr/src/googletest/googletest])

have_gtest=no
AS_IF([test "x$with_gtest" = xno],
      [have_gtest_summary="no (disabled with --without-gtest)"],
      [AS_IF([test -f "$with_gtest/src/gtest-all.cc"],
             [have_gtest=yes
              have_gtest_summary="yes ($with_gtest)"
              GTEST_DIR="$with_gtest"],
             [have_gtest_summary="no ($with_gtest/src/gtest-all.cc not found: apt-get install googletest)"])])
AC_SUBST([GTEST_DIR])
AM_CONDITIONAL([HAVE_GTEST], [test "x$have_gtest" = xyes])
