/*
 * The second process of the suites that need one (peer_process.h).
 */
#include "peer_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace test_peer {

namespace {

struct registered_main {
    std::string fd_env_name;
    main_func_t main;
};

/* Built on first use: registrations come from static constructors of
 * other files, which may run before this file's. */
std::vector<registered_main> &registry()
{
    static std::vector<registered_main> mains;
    return mains;
}

bool is_registered(const char *fd_env_name)
{
    for (const registered_main &m : registry()) {
        if (m.fd_env_name == fd_env_name) {
            return true;
        }
    }
    return false;
}

} // namespace

bool fd_write_blob(int fd, const void *data, uint32_t length)
{
    std::vector<char> buf(sizeof(length) + length);

    memcpy(buf.data(), &length, sizeof(length));
    memcpy(buf.data() + sizeof(length), data, length);
    for (size_t done = 0; done < buf.size();) {
        /* a peer that died is an error here, not SIGPIPE */
        ssize_t ret =
            send(fd, buf.data() + done, buf.size() - done, MSG_NOSIGNAL);
        if (ret <= 0) {
            return false;
        }
        done += (size_t)ret;
    }
    return true;
}

bool fd_read_exact(int fd, void *data, size_t length, int timeout_ms)
{
    char *p = static_cast<char *>(data);

    for (size_t done = 0; done < length;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (::poll(&pfd, 1, timeout_ms) <= 0) {
            return false;
        }
        ssize_t ret = read(fd, p + done, length - done);
        if (ret <= 0) {
            return false;
        }
        done += (size_t)ret;
    }
    return true;
}

bool fd_read_blob(int fd, std::vector<char> &out, int timeout_ms)
{
    uint32_t length;

    if (!fd_read_exact(fd, &length, sizeof(length), timeout_ms) ||
        (length > 65536)) {
        return false;
    }
    out.resize(std::max<uint32_t>(length, 1));
    return fd_read_exact(fd, out.data(), length, timeout_ms);
}

void register_main(const char *fd_env_name, main_func_t main)
{
    registry().push_back({fd_env_name, main});

    const char *fd = getenv(fd_env_name);
    if (fd != NULL) {
        _exit(main(atoi(fd)));
    }
}

uct_component_h find_component(const char *name)
{
    uct_component_h *components, found = NULL;
    unsigned count;

    if (uct_query_components(&components, &count) != UCS_OK) {
        return NULL;
    }
    for (unsigned i = 0; i < count; ++i) {
        uct_component_attr_t attr;
        memset(&attr, 0, sizeof(attr));
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, name)) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    return found;
}

bool start(const char *fd_env_name, const std::vector<std::string> &extra_env,
           process &peer, std::string &error)
{
    char exe[4096];
    int sv[2];

    if (!is_registered(fd_env_name)) {
        error = std::string("no peer main is registered under ") + fd_env_name;
        return false;
    }
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0) {
        error = std::string("readlink /proc/self/exe: ") + strerror(errno);
        return false;
    }
    exe[len] = '\0';
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        error = std::string("socketpair: ") + strerror(errno);
        return false;
    }

    /* everything the child needs is built before the fork */
    std::vector<std::string> env_strings;
    for (char **env = environ; *env != NULL; ++env) {
        env_strings.push_back(*env);
    }
    env_strings.push_back(std::string(fd_env_name) + "=" +
                          std::to_string(sv[1]));
    env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
    std::vector<char *> envp;
    for (std::string &s : env_strings) {
        envp.push_back(&s[0]);
    }
    envp.push_back(NULL);
    char *argv[] = {exe, NULL};

    pid_t pid = fork();
    if (pid < 0) {
        error = std::string("fork: ") + strerror(errno);
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    if (pid == 0) {
        close(sv[0]);
        execve(exe, argv, envp.data());
        _exit(127);
    }
    close(sv[1]);
    peer.pid  = pid;
    peer.sock = sv[0];
    return true;
}

void kill_and_wait(process &peer)
{
    if (peer.pid > 0) {
        kill(peer.pid, SIGKILL);
        waitpid(peer.pid, NULL, 0);
        peer.pid = -1;
    }
}

void stop(process &peer)
{
    kill_and_wait(peer);
    if (peer.sock >= 0) {
        close(peer.sock);
        peer.sock = -1;
    }
}

} // namespace test_peer
