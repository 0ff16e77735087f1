dnl Build flavours: debug, werror, sanitizers.

AC_ARG_ENABLE([debug],
    [AS_HELP_STRING([--enable-debug],
                    [build with assertions, -O0 -g (default: no)])],
    [], [enable_debug=no])
AC_ARG_ENABLE([assertions],
    [AS_HELP_STRING([--enable-assertions],
                    [keep assertions in an optimized build (default: no)])],
    [], [enable_assertions=no])
AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat warnings as errors])],
    [], [enable_werror=no])
AC_ARG_ENABLE([asan],
    [AS_HELP_STRING([--enable-asan],
                    [build with AddressSanitizer and UBSan (default: no)])],
    [], [enable_asan=no])

BASE_CFLAGS="-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers"
BASE_CXXFLAGS="-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers"

AS_IF([test "x$enable_debug" = xyes],
      [BASE_CFLAGS="$BASE_CFLAGS -O0 -g"
       BASE_CXXFLAGS="$BASE_CXXFLAGS -O0 -g"
       AC_DEFINE([ENABLE_ASSERT], [1], [Compile assertions])
       AC_DEFINE([ENABLE_DEBUG], [1], [Debug build])],
      [BASE_CFLAGS="$BASE_CFLAGS -O3 -g"
       BASE_CXXFLAGS="$BASE_CXXFLAGS -O2 -g"
       AS_IF([test "x$enable_assertions" = xyes],
             [AC_DEFINE([ENABLE_ASSERT], [1], [Compile assertions])])])

AS_IF([test "x$enable_werror" = xyes],
      [BASE_CFLAGS="$BASE_CFLAGS -Werror"
       BASE_CXXFLAGS="$BASE_CXXFLAGS -Werror"])

AS_IF([test "x$enable_asan" = xyes],
      [SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
       BASE_CFLAGS="$BASE_CFLAGS $SAN_FLAGS"
       BASE_CXXFLAGS="$BASE_CXXFLAGS $SAN_FLAGS"
       BASE_LDFLAGS="$SAN_FLAGS"
       AC_DEFINE([ENABLE_ASAN], [1], [Built with sanitizers])])

AC_SUBST([BASE_CFLAGS])
AC_SUBST([BASE_CXXFLAGS])
AC_SUBST([BASE_LDFLAGS])
AC_SUBST([BASE_CPPFLAGS], ['-I$(top_srcdir)/src -I$(top_builddir)/src -I$(top_builddir)'])
AM_CONDITIONAL([ENABLE_ASAN], [test "x$enable_asan" = xyes])
