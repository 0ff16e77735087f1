dnl rdma-core libibverbs for the ib module (libuct_ib.so: the ib memory
dnl domain and device layer; rc_verbs and ud_verbs build on it).
dnl Sets HAVE_VERBS (automake conditional and config.h), VERBS_LIBS, and
dnl have_verbs_summary for the configure summary.

AC_ARG_WITH([verbs],
    [AS_HELP_STRING([--with-verbs], [build the ib module (default: auto)])],
    [], [with_verbs=auto])

have_verbs=no
have_verbs_summary="no (disabled with --without-verbs)"
VERBS_LIBS=
AS_IF([test "x$with_verbs" != xno],
      [AC_CHECK_HEADER([infiniband/verbs.h],
          [AC_CHECK_LIB([ibverbs], [_ibv_query_gid_ex],
              [have_verbs=yes],
              [have_verbs_summary="no (libibverbs >= 1.11 (rdma-core 32) not found: apt-get install libibverbs-dev)"])],
          [have_verbs_summary="no (infiniband/verbs.h not found: apt-get install libibverbs-dev)"])])
AS_IF([test "x$have_verbs" = xyes],
      [VERBS_LIBS=-libverbs
       have_verbs_summary="yes (ib module: memory domain, devices)"
       AC_DEFINE([HAVE_VERBS], [1], [rdma-core libibverbs is available])])
AS_IF([test "x$with_verbs" = xyes && test "x$have_verbs" != xyes],
      [AC_MSG_ERROR([verbs requested but rdma-core was not found])])
AC_SUBST([VERBS_LIBS])
AM_CONDITIONAL([HAVE_VERBS], [test "x$have_verbs" = xyes])
