dnl rdma-core libibverbs for the ib module (rc_verbs, ud_verbs).

AC_ARG_WITH([verbs],
    [AS_HELP_STRING([--with-verbs], [build the ib module (default: auto)])],
    [], [with_verbs=auto])

have_verbs=no
have_verbs_summary="no (disabled with --without-verbs)"
AS_IF([test "x$with_verbs" != xno],
      [AC_CHECK_HEADER([infiniband/verbs.h],
          [AC_CHECK_LIB([ibverbs], [ibv_get_device_list],
              [have_verbs=yes],
              [have_verbs_summary="no (libibverbs not found: apt-get install libibverbs-dev)"])],
          [have_verbs_summary="no (infiniband/verbs.h not found: apt-get install libibverbs-dev)"])])
AS_IF([test "x$have_verbs" = xyes],
      [have_verbs_summary="no (rdma-core found; the ib module is not part of this release yet)"])
AS_IF([test "x$with_verbs" = xyes && test "x$have_verbs" != xyes],
      [AC_MSG_ERROR([verbs requested but rdma-core was not found])])
AM_CONDITIONAL([HAVE_VERBS], [false])
