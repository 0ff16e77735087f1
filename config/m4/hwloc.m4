dnl hwloc: CPU and NUMA topology, PCI device locality (optional).

AC_ARG_WITH([hwloc],
    [AS_HELP_STRING([--with-hwloc], [use hwloc for topology (default: auto)])],
    [], [with_hwloc=auto])

have_hwloc=no
have_hwloc_summary="no (disabled with --without-hwloc)"
AS_IF([test "x$with_hwloc" != xno],
      [PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0],
                         [have_hwloc=yes
                          have_hwloc_summary="yes"
                          AC_DEFINE([HAVE_HWLOC], [1], [hwloc is available])],
                         [have_hwloc_summary="no (hwloc >= 2.0 not found: apt-get install libhwloc-dev)"
                          AS_IF([test "x$with_hwloc" = xyes],
                                [AC_MSG_ERROR([hwloc requested but not found])])])])
AM_CONDITIONAL([HAVE_HWLOC], [test "x$have_hwloc" = xyes])
