/*
 * Small system helpers: page sizes, host and executable names, file
 * reading, resource limits, mmap with error reporting, random bytes.
 */
#ifndef UCS_SYS_SYS_H_
#define UCS_SYS_SYS_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

BEGIN_C_DECLS

/** Longest host name ucs_get_host_name() returns, with the terminator. */
#define UCS_HOST_NAME_MAX 256

/** The system page size (cached after the first call). */
size_t ucs_get_page_size(void);

/**
 * The default huge page size from /proc/meminfo ("Hugepagesize"), or 0 if
 * the system has no huge pages. Cached after the first call.
 */
size_t ucs_get_huge_page_size(void);

/** This host's name; never NULL. */
const char *ucs_get_host_name(void);

/** Full path of the running executable, or "" if it cannot be found. */
const char *ucs_get_exe(void);

/** The kernel's id of the calling thread. */
pid_t ucs_get_tid(void);

/** Number of configured CPUs (including offline ones); at least 1. */
long ucs_sys_get_num_cpus(void);

/**
 * Set the file status flags @a add and clear @a rem (O_NONBLOCK, ...) on
 * @a fd.
 */
ucs_status_t ucs_sys_fcntl_modfl(int fd, int add, int rem);

/**
 * Read up to @a max - 1 bytes of the file whose name is @a filename_fmt
 * formatted, and terminate them with '\0'. Returns the number of bytes read,
 * or -1 on failure, which is logged as an error unless @a silent is set
 * (then as debug).
 */
ssize_t ucs_read_file(char *buffer, size_t max, int silent,
                      const char *filename_fmt, ...) UCS_F_PRINTF(4, 5);

/**
 * Like ucs_read_file(), with trailing white space (the newline of a sysfs
 * attribute) removed.
 */
ssize_t ucs_read_file_str(char *buffer, size_t max, int silent,
                          const char *filename_fmt, ...) UCS_F_PRINTF(4, 5);

/**
 * Read a file holding one integer (decimal, or hexadecimal with "0x") into
 * @a value_p. UCS_ERR_IO_ERROR if the file cannot be read or does not hold
 * a number; logged unless @a silent.
 */
ucs_status_t ucs_read_file_number(long *value_p, int silent,
                                  const char *filename_fmt, ...)
    UCS_F_PRINTF(3, 4);

/** getrlimit() that logs failures. */
ucs_status_t ucs_sys_getrlimit(int resource, struct rlimit *rlim_p);

/** The soft limit on open files (RLIMIT_NOFILE), or 1024 if unknown. */
int ucs_sys_max_open_files(void);

/**
 * mmap() that logs failures with @a name (what the mapping is for).
 * @a addr_p is set only on success; UCS_ERR_NO_MEMORY on failure.
 */
ucs_status_t ucs_sys_mmap(void *addr, size_t length, int prot, int flags,
                          int fd, off_t offset, const char *name,
                          void **addr_p);

/** munmap() that logs failures with @a name; UCS_ERR_INVALID_PARAM then. */
ucs_status_t ucs_sys_munmap(void *addr, size_t length, const char *name);

/**
 * Fill @a buf with @a length cryptographically random bytes: getrandom(2),
 * or /dev/urandom where the kernel or a sandbox refuses that system call.
 * Blocks only while the kernel's entropy pool is still being seeded at
 * boot. A failure is logged (with the cause) and returns UCS_ERR_IO_ERROR;
 * @a buf may then hold some random bytes already. Thread-safe.
 */
ucs_status_t ucs_sys_random_bytes(void *buf, size_t length);

END_C_DECLS

#endif
