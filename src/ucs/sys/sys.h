/**
 * @file
 * Small system helpers: page sizes, host and executable names, file
 * reading, resource limits, mmap with error reporting, random bytes, the
 * heap in use.
 * Included by transports, tools and tests. Every function is thread-safe;
 * the cached values are computed once.
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

/**
 * The system page size (cached after the first call).
 *
 * @return The page size in bytes.
 */
size_t ucs_get_page_size(void);

/**
 * The default huge page size from /proc/meminfo ("Hugepagesize"). Cached
 * after the first call.
 *
 * @return The size in bytes, or 0 if the system has no huge pages.
 */
size_t ucs_get_huge_page_size(void);

/**
 * This host's name, read once.
 *
 * @return A static string (never NULL), valid for the life of the process.
 */
const char *ucs_get_host_name(void);

/**
 * Full path of the running executable, read once.
 *
 * @return A static string, "" if the path cannot be found.
 */
const char *ucs_get_exe(void);

/**
 * The kernel's id of the calling thread (gettid()).
 *
 * @return The thread id.
 */
pid_t ucs_get_tid(void);

/**
 * Number of configured CPUs (including offline ones).
 *
 * @return The count, at least 1.
 */
long ucs_sys_get_num_cpus(void);

/**
 * Set the file status flags @a add and clear @a rem (O_NONBLOCK, ...) on
 * @a fd.
 *
 * @param [in] fd   File descriptor.
 * @param [in] add  Flags to set.
 * @param [in] rem  Flags to clear.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR if fcntl() fails (logged).
 */
ucs_status_t ucs_sys_fcntl_modfl(int fd, int add, int rem);

/**
 * Read up to @a max - 1 bytes of the file whose name is @a filename_fmt
 * formatted, and terminate them with '\0'.
 *
 * @param [out] buffer        Receives the contents; at least @a max bytes.
 * @param [in]  max           Size of @a buffer.
 * @param [in]  silent        Log failures at debug level instead of error.
 * @param [in]  filename_fmt  printf-style format of the file name.
 *
 * @return The number of bytes read, or -1 on failure (@a max is 0, or the
 *         file cannot be opened or read), which is logged as an error
 *         unless @a silent is set (then as debug).
 */
ssize_t ucs_read_file(char *buffer, size_t max, int silent,
                      const char *filename_fmt, ...) UCS_F_PRINTF(4, 5);

/**
 * Like ucs_read_file(), with trailing white space (the newline of a sysfs
 * attribute) removed.
 *
 * @param [out] buffer        Receives the contents; at least @a max bytes.
 * @param [in]  max           Size of @a buffer.
 * @param [in]  silent        Log failures at debug level instead of error.
 * @param [in]  filename_fmt  printf-style format of the file name.
 *
 * @return The length of the string left in @a buffer, or -1 on failure.
 */
ssize_t ucs_read_file_str(char *buffer, size_t max, int silent,
                          const char *filename_fmt, ...) UCS_F_PRINTF(4, 5);

/**
 * Read a file holding one integer (decimal, or hexadecimal with "0x").
 *
 * @param [out] value_p       The number, set on success only.
 * @param [in]  silent        Log failures at debug level instead of error.
 * @param [in]  filename_fmt  printf-style format of the file name.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR if the file cannot be read or does not
 *         hold a number; logged unless @a silent.
 */
ucs_status_t ucs_read_file_number(long *value_p, int silent,
                                  const char *filename_fmt, ...)
    UCS_F_PRINTF(3, 4);

/**
 * getrlimit() that logs failures.
 *
 * @param [in]  resource  RLIMIT_* resource.
 * @param [out] rlim_p    The limits.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR if getrlimit() fails (logged).
 */
ucs_status_t ucs_sys_getrlimit(int resource, struct rlimit *rlim_p);

/**
 * The soft limit on open files (RLIMIT_NOFILE).
 *
 * @return The limit, INT_MAX if unlimited (or larger), 1024 if unknown.
 */
int ucs_sys_max_open_files(void);

/**
 * mmap() that logs failures with @a name (what the mapping is for). The
 * caller owns the mapping and releases it with ucs_sys_munmap().
 *
 * @param [in]  addr    Address hint (or fixed address with MAP_FIXED).
 * @param [in]  length  Length in bytes.
 * @param [in]  prot    PROT_* flags.
 * @param [in]  flags   MAP_* flags.
 * @param [in]  fd      File descriptor, or -1 for an anonymous mapping.
 * @param [in]  offset  Offset in the file.
 * @param [in]  name    What the mapping is for, in messages.
 * @param [out] addr_p  The mapping, set only on success.
 *
 * @return UCS_OK, or UCS_ERR_NO_MEMORY on any mmap() failure.
 */
ucs_status_t ucs_sys_mmap(void *addr, size_t length, int prot, int flags,
                          int fd, off_t offset, const char *name,
                          void **addr_p);

/**
 * munmap() that logs failures with @a name.
 *
 * @param [in] addr    Start of the mapping.
 * @param [in] length  Length in bytes.
 * @param [in] name    What the mapping was for, in messages.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM if munmap() fails.
 */
ucs_status_t ucs_sys_munmap(void *addr, size_t length, const char *name);

/**
 * Fill @a buf with @a length cryptographically random bytes: getrandom(2),
 * or /dev/urandom where the kernel or a sandbox refuses that system call.
 * Blocks only while the kernel's entropy pool is still being seeded at
 * boot. Thread-safe.
 *
 * @param [out] buf     Buffer to fill.
 * @param [in]  length  Number of bytes.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR (logged with the cause); @a buf may
 *         then hold some random bytes already.
 */
ucs_status_t ucs_sys_random_bytes(void *buf, size_t length);

/**
 * What ucs_sys_heap_in_use() counts and how a figure per object is made of
 * it, in one line: a program prints it next to its heap per object
 * figures (once per run).
 */
#define UCS_SYS_HEAP_DEFINITION                                              \
    "heap = growth of mallinfo2() uordblks+hblkhd (all arenas and threads, " \
    "libibverbs and provider included) divided by the objects"

/**
 * Bytes of heap the process has in use: glibc's mallinfo2() uordblks +
 * hblkhd. That is every arena (what every thread allocated), the chunks
 * malloc() mapped with mmap(), and what the libraries in the process
 * (libibverbs and its provider among them) allocated; chunks freed into a
 * thread's cache (tcache) still count. Memory of the kernel (socket
 * buffers, queues a provider maps) and shared mappings are not heap.
 * The one measure of heap of every program and test: take it before and
 * after creating objects, and divide with ucs_sys_heap_per_object().
 *
 * @return The byte count, or 0 when it cannot be told: the C library has
 *         no mallinfo2() (glibc before 2.33, another C library), or the
 *         allocator is not glibc's (a sanitizer's, valgrind's).
 */
size_t ucs_sys_heap_in_use(void);

/**
 * The heap per object of @a count objects created between two readings
 * of ucs_sys_heap_in_use() (UCS_SYS_HEAP_DEFINITION).
 *
 * @param [in] before  ucs_sys_heap_in_use() before creating the objects.
 * @param [in] after   ucs_sys_heap_in_use() after.
 * @param [in] count   Number of objects.
 *
 * @return (@a after - @a before) / @a count, negative when the heap
 *         shrank; 0 if @a count is 0.
 */
double ucs_sys_heap_per_object(size_t before, size_t after, size_t count);

END_C_DECLS

#endif
