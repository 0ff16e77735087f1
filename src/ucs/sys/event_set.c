#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/event_set.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Most events handled by one ucs_event_set_wait() call. */
#define UCS_EVENT_SET_MAX_EVENTS 64

struct ucs_sys_event_set {
    int epfd;
};

static uint32_t ucs_event_set_to_epoll(ucs_event_set_types_t events)
{
    uint32_t ep_events = 0;

    if (events & UCS_EVENT_SET_EVREAD) {
        ep_events |= EPOLLIN;
    }
    if (events & UCS_EVENT_SET_EVWRITE) {
        ep_events |= EPOLLOUT;
    }
    if (events & UCS_EVENT_SET_EVERR) {
        ep_events |= EPOLLERR;
    }
    if (events & UCS_EVENT_SET_EDGE_TRIGGERED) {
        ep_events |= EPOLLET;
    }
    return ep_events;
}

static ucs_event_set_types_t ucs_event_set_from_epoll(uint32_t ep_events)
{
    int events = 0;

    if (ep_events & EPOLLIN) {
        events |= UCS_EVENT_SET_EVREAD;
    }
    if (ep_events & EPOLLOUT) {
        events |= UCS_EVENT_SET_EVWRITE;
    }
    if (ep_events & (EPOLLERR | EPOLLHUP)) {
        events |= UCS_EVENT_SET_EVERR;
    }
    return (ucs_event_set_types_t)events;
}

ucs_status_t ucs_event_set_create(ucs_sys_event_set_t **event_set_p)
{
    ucs_sys_event_set_t *event_set;

    event_set = malloc(sizeof(*event_set));
    if (event_set == NULL) {
        ucs_error("failed to allocate an event set");
        return UCS_ERR_NO_MEMORY;
    }

    event_set->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (event_set->epfd < 0) {
        ucs_error("epoll_create1() failed: %m; check the open files limit "
                  "(ulimit -n) and fs.epoll.max_user_watches");
        free(event_set);
        return UCS_ERR_IO_ERROR;
    }

    *event_set_p = event_set;
    return UCS_OK;
}

void ucs_event_set_cleanup(ucs_sys_event_set_t *event_set)
{
    close(event_set->epfd);
    free(event_set);
}

static ucs_status_t ucs_event_set_ctl(ucs_sys_event_set_t *event_set, int op,
                                      const char *op_name, int fd,
                                      ucs_event_set_types_t events,
                                      void *callback_data)
{
    struct epoll_event ev;

    ev.events   = ucs_event_set_to_epoll(events);
    ev.data.ptr = callback_data;
    if (epoll_ctl(event_set->epfd, op, fd, &ev) < 0) {
        if ((op == EPOLL_CTL_ADD) && (errno == EEXIST)) {
            ucs_debug("fd %d is already in event set %d", fd, event_set->epfd);
            return UCS_ERR_ALREADY_EXISTS;
        }
        ucs_error("epoll_ctl(epfd=%d, %s, fd=%d, events=0x%x) failed: %m%s",
                  event_set->epfd, op_name, fd, (unsigned)events,
                  (errno == EBADF) ? "; was the fd closed first?" : "");
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t ucs_event_set_add(ucs_sys_event_set_t *event_set, int fd,
                               ucs_event_set_types_t events,
                               void *callback_data)
{
    return ucs_event_set_ctl(event_set, EPOLL_CTL_ADD, "ADD", fd, events,
                             callback_data);
}

ucs_status_t ucs_event_set_mod(ucs_sys_event_set_t *event_set, int fd,
                               ucs_event_set_types_t events,
                               void *callback_data)
{
    return ucs_event_set_ctl(event_set, EPOLL_CTL_MOD, "MOD", fd, events,
                             callback_data);
}

ucs_status_t ucs_event_set_del(ucs_sys_event_set_t *event_set, int fd)
{
    return ucs_event_set_ctl(event_set, EPOLL_CTL_DEL, "DEL", fd,
                             (ucs_event_set_types_t)0, NULL);
}

ucs_status_t ucs_event_set_wait(ucs_sys_event_set_t *event_set,
                                unsigned *num_events, int timeout_ms,
                                ucs_event_set_handler_t handler, void *arg)
{
    struct epoll_event events[UCS_EVENT_SET_MAX_EVENTS];
    int max_events, count, i;

    max_events = (int)ucs_min(*num_events, UCS_EVENT_SET_MAX_EVENTS);
    if (max_events == 0) {
        return UCS_OK;
    }

    count = epoll_wait(event_set->epfd, events, max_events, timeout_ms);
    if (count < 0) {
        *num_events = 0;
        if (errno == EINTR) {
            return UCS_OK;
        }
        ucs_error("epoll_wait(epfd=%d, timeout=%d) failed: %m", event_set->epfd,
                  timeout_ms);
        return UCS_ERR_IO_ERROR;
    }

    for (i = 0; i < count; ++i) {
        handler(events[i].data.ptr, ucs_event_set_from_epoll(events[i].events),
                arg);
    }

    *num_events = (unsigned)count;
    return UCS_OK;
}

int ucs_event_set_fd(const ucs_sys_event_set_t *event_set)
{
    return event_set->epfd;
}
