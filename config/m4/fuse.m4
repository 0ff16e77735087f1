dnl libfuse3 for the uct_vfs daemon (optional).

AC_ARG_WITH([fuse3],
    [AS_HELP_STRING([--with-fuse3], [build uct_vfs (default: auto)])],
    [], [with_fuse3=auto])

have_fuse3=no
have_fuse3_summary="no (disabled with --without-fuse3)"
AS_IF([test "x$with_fuse3" != xno],
      [PKG_CHECK_MODULES([FUSE3], [fuse3 >= 3.2],
                         [have_fuse3=yes
                          have_fuse3_summary="yes (uct_vfs)"],
                         [have_fuse3_summary="no (fuse3 not found: apt-get install libfuse3-dev)"
                          AS_IF([test "x$with_fuse3" = xyes],
                                [AC_MSG_ERROR([--with-fuse3: libfuse3 not found; apt-get install libfuse3-dev])])])])
AM_CONDITIONAL([HAVE_FUSE3], [test "x$have_fuse3" = xyes])
