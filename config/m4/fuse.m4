dnl libfuse3 for the uct_vfs daemon (optional).

AC_ARG_WITH([fuse3],
    [AS_HELP_STRING([--with-fuse3], [build uct_vfs (default: auto)])],
    [], [with_fuse3=auto])

have_fuse3=no
have_fuse3_summary="no (disabled with --without-fuse3)"
AS_IF([test "x$with_fuse3" != xno],
      [PKG_CHECK_MODULES([FUSE3], [fuse3],
                         [have_fuse3=yes
                          have_fuse3_summary="no (fuse3 found; the uct_vfs daemon is not part of this release yet)"],
                         [have_fuse3_summary="no (fuse3 not found: apt-get install libfuse3-dev)"])])
AM_CONDITIONAL([HAVE_FUSE3], [false])
