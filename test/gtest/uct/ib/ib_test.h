/*
 * The base of the rc_verbs and ud_verbs fixtures (rc_test.h, ud_test.h):
 * what both do the same way. Helpers on recorded active messages and
 * captured log lines, a record of the error handler's calls, and the
 * uct_ib_test fixture: entity parameters, am_short with retries, eps of
 * the test's own, many eps and one message on each, and the peer process
 * (ib_peer.h).
 */
#ifndef OPENUCT_TEST_UCT_IB_IB_TEST_H_
#define OPENUCT_TEST_UCT_IB_IB_TEST_H_

#include "ib_peer.h"
#include "../uct_test.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ib_test {

/* Seconds on the steady clock */
double now_sec();

/* The 64-bit AM header of a recorded am_short (UINT64_MAX if shorter) */
uint64_t am_header(const uct_test::am_recorder::message &msg);

/* The headers of every recorded message, in order */
std::vector<uint64_t> headers(const uct_test::am_recorder &rec);

/* first, first + 1, ..., first + n - 1 */
std::vector<uint64_t> iota(uint64_t first, uint64_t n);

/* Number of captured lines (since @a from) that contain @a text */
size_t lines_with(const ucs::scoped_log_capture &cap, size_t from,
                  const std::string &text);

/* The resources of transport @a tl_name: a suite's parameters */
std::vector<resource> resources_of(const std::string &tl_name);

/* Error handler calls of an interface, and when they came */
struct err_log {
    std::vector<std::pair<uct_ep_h, ucs_status_t>> calls;
    std::vector<double> times;

    size_t count(uct_ep_h ep) const
    {
        return std::count_if(calls.begin(), calls.end(),
                             [ep](const std::pair<uct_ep_h, ucs_status_t> &c) {
                                 return c.first == ep;
                             });
    }

    /* The status of @a ep's first call, UCS_OK if none */
    ucs_status_t status(uct_ep_h ep) const
    {
        for (const auto &c : calls) {
            if (c.first == ep) {
                return c.second;
            }
        }
        return UCS_OK;
    }
};

/* An error handler that records in the err_log @a arg */
ucs_status_t err_cb(void *arg, uct_ep_h ep, ucs_status_t status);

} // namespace ib_test

/* The fixtures and the suites use these names unqualified. */
using namespace ib_test;

class uct_ib_test : public uct_test {
protected:
    typedef std::vector<std::pair<std::string, std::string>> config_list;

    /* @a am_id: the id send_short() and send_one_on_each() send with */
    explicit uct_ib_test(uint8_t am_id) : m_am_id(am_id)
    {}

    /* Destroys the test's own eps, stops the peer process */
    void TearDown() override;

    /* Entity parameters with @a config; with @a err_handler, the handler
     * records in m_errs */
    entity_params params(const config_list &config = {},
                         bool err_handler          = false);

    /* Sends am_short @a value on @a ep (retrying on NO_RESOURCE); false
     * (and a failure) when it did not go */
    bool send_short(uct_ep_h ep, uint64_t value);

    /* Connects @a n eps of @a from to @a to (connect_to), appended to
     * @a eps. False (and a failure naming the ep) when one could not. */
    bool connect_eps(entity &from, entity &to, unsigned n,
                     std::vector<uct_ep_h> &eps);

    /* Sends header i on eps[i] for each ep, waits until @a rec has them
     * all (in any order) and flushes @a sender: the sorted headers must be
     * 0 .. eps.size() - 1. False (and a failure) when a send failed.
     * With @a batch, sends that many at a time and waits for them (a
     * receive queue shorter than the eps would drop the rest, and the
     * resend waits would make the time). */
    bool send_one_on_each(entity &sender, const std::vector<uct_ep_h> &eps,
                          const am_recorder &rec, size_t batch = SIZE_MAX);

    /* An ep of @a e not connected to anything, destroyed at the end */
    uct_ep_h raw_ep(const entity &e);

    /* Destroys an ep raw_ep() made now */
    void destroy_raw_ep(uct_ep_h ep);

    /* An ep of @a e to the interface at @a dev / @a iface_addr, destroyed
     * at the end */
    uct_ep_h connect_iface(const entity &e, const std::vector<char> &dev,
                           const std::vector<char> &iface_addr);

    /* Destroys the test's own eps and closes every iface now (a test that
     * expects log lines at close) */
    void close_all();

    /* Starts m_peer, a peer process with an interface of the test's
     * resource (ib_peer.h). False (and a failure) when it did not come
     * up. */
    bool start_peer(const ib_peer::options &opts);

    /* The peer makes an ep connected to @a ep of @a e, and @a ep is
     * connected to it. False (and a failure) when either side failed. */
    bool connect_with_peer(const entity &e, uct_ep_h ep);

    /* The peer makes an ep to @a e's interface (its echoes go there).
     * False (and a failure) when it did not. */
    bool peer_connects_to(const entity &e);

    err_log m_errs;
    ib_peer::process m_peer;

private:
    uct_ep_h own_ep(const uct_ep_params_t &params);

    const uint8_t m_am_id;
    std::vector<uct_ep_h> m_own_eps;
};

#endif
