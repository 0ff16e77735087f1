/*
 * Directories that nobody but their owner can change: the check behind the
 * uct_vfs socket and mount directories. Internal (not installed).
 */
#ifndef UCS_SYS_DIR_H_
#define UCS_SYS_DIR_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <sys/types.h>

BEGIN_C_DECLS

/* What a directory must be, and how the messages speak of it */
typedef struct {
    const char *what; /* "uct_vfs: the mount directory" */
    const char *hint; /* ends each message: "choose another with -d" */
    mode_t forbidden; /* mode bits it must not have: 022 (nobody else
                         may write to it), 077 (nobody else may enter) */
    int create;       /* make it, mode 0700, when it is missing */
} ucs_sys_dir_check_t;

/**
 * Checks that @a path names a directory that nobody but the caller can
 * change, nor replace before the caller uses it:
 *  - its last component is a name (not "." or ".."; trailing slashes are
 *    dropped) and not a symbolic link (lstat(), never stat());
 *  - it is a directory owned by the effective uid, with none of the
 *    @a check->forbidden mode bits;
 *  - its parent is resolved with realpath() (symbolic links above the last
 *    component are followed), and every directory of the resolved parent,
 *    from / down, belongs to root or the caller and, if group or others may
 *    write to it, has the sticky bit (like /tmp): so no other user can
 *    rename it or put something else in its place afterwards.
 * With @a check->create, a missing directory is made with mode 0700
 * whatever the umask (and removed again if it then fails a check).
 * A refusal logs one error: what is wrong, and what to do.
 *
 * @param [out] buf       the path with its parent resolved, @a max bytes:
 *                        use it rather than @a path, no symbolic link can
 *                        redirect it
 * @param [out] created_p 1 if this call made the directory, else 0; may
 *                        be NULL. Outputs are set only on success.
 * @return UCS_OK; UCS_ERR_NO_ELEM when it or its parent is missing and
 *         @a check->create is not set (not logged); UCS_ERR_IO_ERROR when
 *         it is refused or cannot be checked or made (logged).
 */
ucs_status_t ucs_sys_dir_check_private(const char *path,
                                       const ucs_sys_dir_check_t *check,
                                       char *buf, size_t max, int *created_p);

END_C_DECLS

#endif
