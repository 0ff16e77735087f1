#!/bin/bash
# Builds a program that calls the memory event API (ucm/api/ucm.h) with
# "-luct -lucs" only, as a UCT client links, and runs it: its munmap() must
# reach the handler. Usage: check-ucm-link.sh INCLUDEDIR LIBDIR
set -eu
inc=${1:?usage: $0 INCLUDEDIR LIBDIR}
lib=${2:?usage: $0 INCLUDEDIR LIBDIR}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/t.c" <<'PROG'
#include <ucm/api/ucm.h>
#include <uct/api/uct.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static void *seen_addr;
static size_t seen_size;

static void on_unmap(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    (void)arg;
    if (type == UCM_EVENT_VM_UNMAPPED) {
        seen_addr = event->vm_unmapped.address;
        seen_size = event->vm_unmapped.size;
    }
}

int main(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    ucs_status_t status;
    void *ptr;

    status = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, on_unmap, NULL);
    if (status != UCS_OK) {
        printf("ucm_set_event_handler: %s\n", ucs_status_string(status));
        return 1;
    }
    ptr = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if ((ptr == MAP_FAILED) || (munmap(ptr, page) != 0)) {
        perror("mmap/munmap");
        return 1;
    }
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmap, NULL);
    if ((seen_addr != ptr) || (seen_size != page)) {
        printf("munmap(%p, %zu) not reported (saw %p, %zu)\n", ptr, page,
               seen_addr, seen_size);
        return 1;
    }
    return 0;
}
PROG

if ! "$cc" -std=gnu11 -Wall -Werror -I"$inc" "$tmp/t.c" -o "$tmp/t" \
        -L"$lib" -luct -lucs 2> "$tmp/err"; then
    echo "check-ucm-link: a ucm_* caller does not link with -luct -lucs:"
    head -5 "$tmp/err"
    exit 1
fi
if ! LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/t"; then
    echo "check-ucm-link: the handler did not see the program's munmap"
    exit 1
fi
echo "check-ucm-link: linked with -luct -lucs; munmap reached the handler"
