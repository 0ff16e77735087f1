#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/sys.h>
#include <ucs/debug/log.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* mallinfo2() came with glibc 2.33 (mallinfo() counts in int) */
#if defined(__GLIBC__) && \
    ((__GLIBC__ > 2) || ((__GLIBC__ == 2) && (__GLIBC_MINOR__ >= 33)))
#define UCS_SYS_HAVE_MALLINFO2 1
#include <malloc.h>
#else
#define UCS_SYS_HAVE_MALLINFO2 0
#endif

#define UCS_SYS_DEFAULT_PAGE_SIZE 4096
#define UCS_SYS_DEFAULT_MAX_FILES 1024

static struct {
    pthread_once_t host_name_once;
    char host_name[UCS_HOST_NAME_MAX];
    pthread_once_t exe_once;
    char exe[PATH_MAX];
    size_t page_size;      /* 0 until read */
    size_t huge_page_size; /* SIZE_MAX until read */
} ucs_sys_ctx = {.host_name_once = PTHREAD_ONCE_INIT,
                 .exe_once       = PTHREAD_ONCE_INIT,
                 .page_size      = 0,
                 .huge_page_size = SIZE_MAX};

size_t ucs_get_page_size(void)
{
    size_t value = __atomic_load_n(&ucs_sys_ctx.page_size, __ATOMIC_RELAXED);
    long ret;

    if (ucs_likely(value != 0)) {
        return value;
    }

    ret = sysconf(_SC_PAGESIZE);
    if (ret <= 0) {
        ucs_warn("sysconf(_SC_PAGESIZE) failed: %m; assuming %d bytes",
                 UCS_SYS_DEFAULT_PAGE_SIZE);
        ret = UCS_SYS_DEFAULT_PAGE_SIZE;
    }

    value = (size_t)ret;
    __atomic_store_n(&ucs_sys_ctx.page_size, value, __ATOMIC_RELAXED);
    return value;
}

/* "Hugepagesize:       2048 kB" -> bytes; 0 when absent. */
static size_t ucs_sys_read_huge_page_size(void)
{
    char line[256];
    unsigned long size_kb;
    size_t size = 0;
    FILE *file;

    file = fopen("/proc/meminfo", "r");
    if (file == NULL) {
        ucs_debug("cannot open /proc/meminfo: %m; assuming no huge pages");
        return 0;
    }

    while (fgets(line, sizeof(line), file) != NULL) {
        if (sscanf(line, "Hugepagesize: %lu kB", &size_kb) == 1) {
            size = (size_t)size_kb * 1024;
            break;
        }
    }

    fclose(file);
    return size;
}

size_t ucs_get_huge_page_size(void)
{
    size_t value =
        __atomic_load_n(&ucs_sys_ctx.huge_page_size, __ATOMIC_RELAXED);

    if (ucs_likely(value != SIZE_MAX)) {
        return value;
    }

    value = ucs_sys_read_huge_page_size();
    __atomic_store_n(&ucs_sys_ctx.huge_page_size, value, __ATOMIC_RELAXED);
    return value;
}

static void ucs_sys_read_host_name(void)
{
    if (gethostname(ucs_sys_ctx.host_name, sizeof(ucs_sys_ctx.host_name) - 1) !=
        0) {
        ucs_warn("gethostname() failed: %m; using \"localhost\"");
        strcpy(ucs_sys_ctx.host_name, "localhost");
    }
    ucs_sys_ctx.host_name[sizeof(ucs_sys_ctx.host_name) - 1] = '\0';
}

const char *ucs_get_host_name(void)
{
    pthread_once(&ucs_sys_ctx.host_name_once, ucs_sys_read_host_name);
    return ucs_sys_ctx.host_name;
}

static void ucs_sys_read_exe(void)
{
    ssize_t len;

    len = readlink("/proc/self/exe", ucs_sys_ctx.exe,
                   sizeof(ucs_sys_ctx.exe) - 1);
    if (len < 0) {
        ucs_debug("readlink(/proc/self/exe) failed: %m");
        len = 0;
    }
    ucs_sys_ctx.exe[len] = '\0';
}

const char *ucs_get_exe(void)
{
    pthread_once(&ucs_sys_ctx.exe_once, ucs_sys_read_exe);
    return ucs_sys_ctx.exe;
}

pid_t ucs_get_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

long ucs_sys_get_num_cpus(void)
{
    long num_cpus = sysconf(_SC_NPROCESSORS_CONF);

    if (num_cpus <= 0) {
        ucs_warn("sysconf(_SC_NPROCESSORS_CONF) failed: %m; assuming 1 CPU");
        return 1;
    }
    return num_cpus;
}

ucs_status_t ucs_sys_fcntl_modfl(int fd, int add, int rem)
{
    int oldfl, newfl;

    oldfl = fcntl(fd, F_GETFL);
    if (oldfl < 0) {
        ucs_error("fcntl(fd=%d, F_GETFL) failed: %m", fd);
        return UCS_ERR_IO_ERROR;
    }

    newfl = (oldfl | add) & ~rem;
    if ((newfl != oldfl) && (fcntl(fd, F_SETFL, newfl) < 0)) {
        ucs_error("fcntl(fd=%d, F_SETFL, 0x%x) failed: %m", fd, newfl);
        return UCS_ERR_IO_ERROR;
    }

    return UCS_OK;
}

static ssize_t ucs_read_file_va(char *buffer, size_t max, int silent,
                                const char *filename_fmt, va_list ap)
{
    ucs_log_level_t level = silent ? UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_ERROR;
    char filename[PATH_MAX];
    size_t offset = 0;
    ssize_t ret;
    int fd;

    if (max == 0) {
        return -1;
    }

    vsnprintf(filename, sizeof(filename), filename_fmt, ap);

    fd = open(filename, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ucs_log(level, "failed to open %s: %m", filename);
        return -1;
    }

    /* sysfs and procfs may return a file in several pieces */
    while (offset < (max - 1)) {
        ret = read(fd, buffer + offset, max - 1 - offset);
        if (ret == 0) {
            break;
        } else if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            ucs_log(level, "failed to read from %s: %m", filename);
            close(fd);
            return -1;
        }
        offset += (size_t)ret;
    }

    buffer[offset] = '\0';
    close(fd);
    return (ssize_t)offset;
}

ssize_t ucs_read_file(char *buffer, size_t max, int silent,
                      const char *filename_fmt, ...)
{
    ssize_t ret;
    va_list ap;

    va_start(ap, filename_fmt);
    ret = ucs_read_file_va(buffer, max, silent, filename_fmt, ap);
    va_end(ap);
    return ret;
}

ssize_t ucs_read_file_str(char *buffer, size_t max, int silent,
                          const char *filename_fmt, ...)
{
    ssize_t ret;
    va_list ap;

    va_start(ap, filename_fmt);
    ret = ucs_read_file_va(buffer, max, silent, filename_fmt, ap);
    va_end(ap);

    while ((ret > 0) && isspace((unsigned char)buffer[ret - 1])) {
        buffer[--ret] = '\0';
    }
    return ret;
}

ucs_status_t ucs_read_file_number(long *value_p, int silent,
                                  const char *filename_fmt, ...)
{
    char buffer[64], filename[PATH_MAX];
    char *end;
    ssize_t ret;
    long value;
    va_list ap;

    va_start(ap, filename_fmt);
    vsnprintf(filename, sizeof(filename), filename_fmt, ap);
    va_end(ap);

    ret = ucs_read_file(buffer, sizeof(buffer), silent, "%s", filename);
    if (ret < 0) {
        return UCS_ERR_IO_ERROR;
    }

    errno = 0;
    value = strtol(buffer, &end, 0);
    while (isspace((unsigned char)*end)) {
        ++end;
    }
    if ((errno != 0) || (end == buffer) || (*end != '\0')) {
        ucs_log(silent ? UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_ERROR,
                "%s does not hold a number: \"%s\"", filename, buffer);
        return UCS_ERR_IO_ERROR;
    }

    *value_p = value;
    return UCS_OK;
}

ucs_status_t ucs_sys_getrlimit(int resource, struct rlimit *rlim_p)
{
    if (getrlimit(resource, rlim_p) != 0) {
        ucs_error("getrlimit(resource=%d) failed: %m", resource);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

int ucs_sys_max_open_files(void)
{
    struct rlimit rlim;

    if (ucs_sys_getrlimit(RLIMIT_NOFILE, &rlim) != UCS_OK) {
        return UCS_SYS_DEFAULT_MAX_FILES;
    }

    if ((rlim.rlim_cur == RLIM_INFINITY) || (rlim.rlim_cur > INT_MAX)) {
        return INT_MAX;
    }
    return (int)rlim.rlim_cur;
}

ucs_status_t ucs_sys_mmap(void *addr, size_t length, int prot, int flags,
                          int fd, off_t offset, const char *name, void **addr_p)
{
    void *ptr;

    ptr = mmap(addr, length, prot, flags, fd, offset);
    if (ptr == MAP_FAILED) {
        ucs_error("mmap(addr=%p, length=%zu, prot=0x%x, flags=0x%x, fd=%d, "
                  "offset=%lld) for %s failed: %m; check the memory limits "
                  "(ulimit -l, ulimit -v) and free memory",
                  addr, length, prot, flags, fd, (long long)offset, name);
        return UCS_ERR_NO_MEMORY;
    }

    ucs_trace("mmap %s: %p length %zu", name, ptr, length);
    *addr_p = ptr;
    return UCS_OK;
}

ucs_status_t ucs_sys_munmap(void *addr, size_t length, const char *name)
{
    if (munmap(addr, length) != 0) {
        ucs_error("munmap(addr=%p, length=%zu) for %s failed: %m", addr, length,
                  name);
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_trace("munmap %s: %p length %zu", name, addr, length);
    return UCS_OK;
}

/* The fallback of ucs_sys_random_bytes(): the same bytes through a file */
static ucs_status_t ucs_sys_random_bytes_urandom(uint8_t *buf, size_t length)
{
    const char *path    = "/dev/urandom";
    ucs_status_t status = UCS_OK;
    size_t done         = 0;
    ssize_t ret;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ucs_error("open(%s) failed: %m; random bytes are needed for keys "
                  "and secrets: is /dev mounted in this container?",
                  path);
        return UCS_ERR_IO_ERROR;
    }

    while (done < length) {
        ret = read(fd, buf + done, length - done);
        if (ret > 0) {
            done += (size_t)ret;
        } else if ((ret < 0) && (errno == EINTR)) {
            continue;
        } else {
            if (ret == 0) {
                errno = EIO; /* a character device has no end of file */
            }
            ucs_error("read(%s, %zu bytes) failed after %zu bytes: %m", path,
                      length - done, done);
            status = UCS_ERR_IO_ERROR;
            break;
        }
    }

    close(fd);
    return status;
}

ucs_status_t ucs_sys_random_bytes(void *buf, size_t length)
{
    uint8_t *p  = buf;
    size_t done = 0;
#ifdef SYS_getrandom
    long ret;

    while (done < length) {
        ret = syscall(SYS_getrandom, p + done, length - done, 0);
        if (ret > 0) {
            done += (size_t)ret;
        } else if ((ret < 0) && (errno == EINTR)) {
            continue;
        } else if ((ret < 0) && ((errno == ENOSYS) || (errno == EPERM))) {
            /* an old kernel (ENOSYS), or a seccomp filter that does not
             * know the call (ENOSYS or EPERM) */
            ucs_debug("getrandom() is not available (%m); reading "
                      "/dev/urandom");
            break;
        } else {
            if (ret == 0) {
                errno = EIO; /* getrandom never returns 0 for length > 0 */
            }
            ucs_error("getrandom(%zu bytes) failed after %zu bytes: %m",
                      length - done, done);
            return UCS_ERR_IO_ERROR;
        }
    }
#endif

    if (done == length) {
        return UCS_OK;
    }
    return ucs_sys_random_bytes_urandom(p + done, length - done);
}

size_t ucs_sys_heap_in_use(void)
{
#if UCS_SYS_HAVE_MALLINFO2
    struct mallinfo2 info = mallinfo2();

    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}

double ucs_sys_heap_per_object(size_t before, size_t after, size_t count)
{
    if (count == 0) {
        return 0;
    }
    return ((double)after - (double)before) / (double)count;
}
