/*
 * A second process for the suites that need one (the ib, sm and shared
 * suites): the test binary started again, which opens its own interface
 * and talks to the test over a socket pair.
 *
 * A test file registers its peer main under the name of an environment
 * variable (a static test_peer::main_registrar). test_peer::start() runs
 * /proc/self/exe with that variable set to the child's end of the socket
 * pair; in the child, the registration finds the variable set, runs the
 * peer main and exits with its return value, so the child never reaches
 * the tests. What goes over the socket is up to each test file; the blob
 * helpers below send and receive length-prefixed byte strings.
 */
#ifndef OPENUCT_TEST_UCT_PEER_PROCESS_H_
#define OPENUCT_TEST_UCT_PEER_PROCESS_H_

extern "C" {
#include <uct/api/uct.h>
}

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace test_peer {

/* ------------------------------------------------------------------------
 * Blobs over a socket: a 32-bit length in host order, then the bytes
 */

/* Writes @a length bytes of @a data as one blob. False when the socket
 * fails or is closed. */
bool fd_write_blob(int fd, const void *data, uint32_t length);

/* Reads exactly @a length bytes into @a data, waiting at most
 * @a timeout_ms for each read. False on a timeout, an error or the end of
 * the stream. */
bool fd_read_exact(int fd, void *data, size_t length, int timeout_ms);

/* Reads one blob into @a out (at least one byte long even for an empty
 * blob, so that out.data() can be passed on). False as fd_read_exact(),
 * and for a blob longer than 64 KiB. */
bool fd_read_blob(int fd, std::vector<char> &out, int timeout_ms);

/* ------------------------------------------------------------------------
 * In the peer process
 */

/* The main function of a peer process: gets the socket to the test and
 * returns the exit status of the process. */
typedef int (*main_func_t)(int fd);

/* Registers @a main under the environment variable @a fd_env_name. When
 * this process was started with that variable set, runs @a main with the
 * socket it names and exits (_exit) with its return value at once: the
 * order of static constructors across files is unspecified, so each
 * registration is its own start-up check. */
void register_main(const char *fd_env_name, main_func_t main);

/* Calls register_main() from a static constructor: one object at file
 * scope in each test file that has a peer process. */
struct main_registrar {
    main_registrar(const char *fd_env_name, main_func_t main)
    {
        register_main(fd_env_name, main);
    }
};

/* The component named @a name, or NULL */
uct_component_h find_component(const char *name);

/* ------------------------------------------------------------------------
 * In the test
 */

/* A started peer process and the test's end of its socket */
struct process {
    pid_t pid = -1;
    int sock  = -1;
};

/* Starts this binary again with the environment of this process, then
 * @a fd_env_name set to the number of the child's end of a new socket
 * pair, then @a extra_env ("NAME=value" strings). @a fd_env_name must be
 * registered with register_main(). On success sets @a peer and returns
 * true; otherwise returns false with the reason in @a error. */
bool start(const char *fd_env_name, const std::vector<std::string> &extra_env,
           process &peer, std::string &error);

/* Kills the process with SIGKILL and waits for it; the socket stays open.
 * Does nothing when no process runs. */
void kill_and_wait(process &peer);

/* kill_and_wait(), then closes the socket. Safe to call again. */
void stop(process &peer);

} // namespace test_peer

#endif
