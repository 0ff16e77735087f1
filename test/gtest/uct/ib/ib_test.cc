/*
 * The base of the rc_verbs and ud_verbs fixtures (ib_test.h).
 */
#include "ib_test.h"

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace ib_test {

double now_sec()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t am_header(const uct_test::am_recorder::message &msg)
{
    uint64_t value = UINT64_MAX;

    if (msg.data.size() >= sizeof(value)) {
        memcpy(&value, msg.data.data(), sizeof(value));
    }
    return value;
}

std::vector<uint64_t> headers(const uct_test::am_recorder &rec)
{
    std::vector<uint64_t> out;

    for (size_t i = 0; i < rec.count(); ++i) {
        out.push_back(am_header(rec.at(i)));
    }
    return out;
}

std::vector<uint64_t> iota(uint64_t first, uint64_t n)
{
    std::vector<uint64_t> out;

    for (uint64_t i = 0; i < n; ++i) {
        out.push_back(first + i);
    }
    return out;
}

size_t lines_with(const ucs::scoped_log_capture &cap, size_t from,
                  const std::string &text)
{
    const std::vector<std::string> &msgs = cap.messages();
    size_t count                         = 0;

    for (size_t i = from; i < msgs.size(); ++i) {
        if (msgs[i].find(text) != std::string::npos) {
            ++count;
        }
    }
    return count;
}

std::vector<resource> resources_of(const std::string &tl_name)
{
    std::vector<resource> out;

    for (const resource &r : uct_test::enum_resources()) {
        if (r.tl_name == tl_name) {
            out.push_back(r);
        }
    }
    return out;
}

ucs_status_t err_cb(void *arg, uct_ep_h ep, ucs_status_t status)
{
    err_log *log = static_cast<err_log *>(arg);

    log->calls.emplace_back(ep, status);
    log->times.push_back(now_sec());
    return UCS_OK;
}

} // namespace ib_test

void uct_ib_test::TearDown()
{
    for (uct_ep_h ep : m_own_eps) {
        uct_ep_destroy(ep);
    }
    m_own_eps.clear();
    test_peer::stop(m_peer);
    uct_test::TearDown();
}

uct_ib_test::entity_params uct_ib_test::params(const config_list &config,
                                               bool err_handler)
{
    entity_params p;
    p.config = config;
    if (err_handler) {
        p.err_handler     = err_cb;
        p.err_handler_arg = &m_errs;
    }
    return p;
}

bool uct_ib_test::send_short(uct_ep_h ep, uint64_t value)
{
    ssize_t ret = retry_no_resource(
        [&] { return (ssize_t)uct_ep_am_short(ep, m_am_id, value, NULL, 0); },
        "uct_ep_am_short");
    EXPECT_EQ(UCS_OK, ret) << ucs_status_string((ucs_status_t)ret);
    return ret == UCS_OK;
}

bool uct_ib_test::connect_eps(entity &from, entity &to, unsigned n,
                              std::vector<uct_ep_h> &eps)
{
    for (unsigned i = 0; i < n; ++i) {
        uct_ep_h ep = from.connect_to(to);
        if (ep == NULL) {
            ADD_FAILURE() << "connect_to failed for ep " << i;
            return false;
        }
        eps.push_back(ep);
    }
    return true;
}

bool uct_ib_test::send_one_on_each(entity &sender,
                                   const std::vector<uct_ep_h> &eps,
                                   const am_recorder &rec, size_t batch)
{
    size_t first = rec.count(), end;

    for (size_t i = 0; i < eps.size(); i = end) {
        end = i + ucs_min(batch, eps.size() - i);
        for (size_t j = i; j < end; ++j) {
            if (!send_short(eps[j], j)) {
                return false;
            }
        }
        wait_for([&] { return rec.count() == first + end; },
                 "a message on every ep", 60);
    }
    flush_iface(sender);

    std::vector<uint64_t> got = headers(rec);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(iota(0, eps.size()), got);
    return true;
}

uct_ep_h uct_ib_test::own_ep(const uct_ep_params_t &params)
{
    uct_ep_h ep;

    ucs_status_t status = uct_ep_create(&params, &ep);
    if (status != UCS_OK) {
        throw std::runtime_error(std::string("uct_ep_create: ") +
                                 ucs_status_string(status));
    }
    m_own_eps.push_back(ep);
    return ep;
}

uct_ep_h uct_ib_test::raw_ep(const entity &e)
{
    uct_ep_params_t p;

    memset(&p, 0, sizeof(p));
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    p.iface      = e.iface();
    return own_ep(p);
}

void uct_ib_test::destroy_raw_ep(uct_ep_h ep)
{
    auto it = std::find(m_own_eps.begin(), m_own_eps.end(), ep);
    ASSERT_TRUE(it != m_own_eps.end());
    m_own_eps.erase(it);
    uct_ep_destroy(ep);
}

uct_ep_h uct_ib_test::connect_iface(const entity &e,
                                    const std::vector<char> &dev,
                                    const std::vector<char> &iface_addr)
{
    uct_ep_params_t p;

    memset(&p, 0, sizeof(p));
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                   UCT_EP_PARAM_FIELD_IFACE_ADDR;
    p.iface      = e.iface();
    p.dev_addr   = (const uct_device_addr_t *)dev.data();
    p.iface_addr = (const uct_iface_addr_t *)iface_addr.data();
    return own_ep(p);
}

void uct_ib_test::close_all()
{
    for (uct_ep_h ep : m_own_eps) {
        uct_ep_destroy(ep);
    }
    m_own_eps.clear();
    reset_entities();
}

bool uct_ib_test::start_peer(const ib_peer::options &opts)
{
    std::string error;

    if (!ib_peer::start(res(), opts, m_peer, error)) {
        ADD_FAILURE() << error;
        return false;
    }
    return true;
}

bool uct_ib_test::connect_with_peer(const entity &e, uct_ep_h ep)
{
    std::vector<char> ep_addr(e.iface_attr().ep_addr_len), peer_ep_addr;
    std::string error;

    EXPECT_EQ(UCS_OK, uct_ep_get_address(ep, (uct_ep_addr_t *)ep_addr.data()));
    if (!ib_peer::connect_ep(m_peer, e.dev_addr(), ep_addr, peer_ep_addr,
                             error)) {
        ADD_FAILURE() << error;
        return false;
    }
    ucs_status_t status = uct_ep_connect_to_ep(
        ep, (const uct_device_addr_t *)m_peer.dev_addr.data(),
        (const uct_ep_addr_t *)peer_ep_addr.data());
    EXPECT_EQ(UCS_OK, status) << "could not connect to the peer process: "
                              << ucs_status_string(status);
    return status == UCS_OK;
}

bool uct_ib_test::peer_connects_to(const entity &e)
{
    std::string error;

    if (!ib_peer::connect_iface(m_peer, e.dev_addr(), e.iface_addr(), error)) {
        ADD_FAILURE() << error;
        return false;
    }
    return true;
}
