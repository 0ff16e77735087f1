/*
 * ud_verbs behaviours the transport-parametrized suites cannot see:
 * datagrams from a stranger (a UD QP this test makes with libibverbs on
 * the same device), refused PUTs, connection races, duplicated and lost
 * connection packets, a peer process that dies or stops for a while, the
 * log line of a failure without an error handler, and ten thousand
 * endpoints.
 *
 * The tests read the transport's state through the structs of
 * src/uct/ib/ud/ud.h. They run on the ud_verbs resources only, which exist
 * on the Soft-RoCE devices of test/rxe/run.sh; elsewhere the suite has no
 * instances.
 */
#include "../uct_test.h"
#include "ib_peer_process.h"

extern "C" {
#include <uct/ib/ud/ud.h>
#include <ucs/time/time.h>
}

#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <malloc.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

const uint8_t AM_ID = 5;

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

std::string hex(uint32_t value)
{
    char buf[16];

    snprintf(buf, sizeof(buf), "0x%x", value);
    return buf;
}

/* Error handler calls of an interface */
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
};

ucs_status_t err_cb(void *arg, uct_ep_h ep, ucs_status_t status)
{
    err_log *log = static_cast<err_log *>(arg);

    log->calls.emplace_back(ep, status);
    log->times.push_back(now_sec());
    return UCS_OK;
}

/* A completion that records its calls, their status and their order */
struct order_comp {
    uct_completion_t uct; /* keep first */
    unsigned index;
    unsigned calls;
    ucs_status_t status;
    std::vector<unsigned> *order;

    void init(unsigned i, std::vector<unsigned> *o)
    {
        uct.func   = cb;
        uct.count  = 1;
        uct.status = UCS_OK;
        index      = i;
        calls      = 0;
        status     = UCS_OK;
        order      = o;
    }

    static void cb(uct_completion_t *self)
    {
        order_comp *comp = reinterpret_cast<order_comp *>(self);

        ++comp->calls;
        comp->status = self->status;
        comp->order->push_back(comp->index);
    }
};

/* ------------------------------------------------------------------------
 * Packets as a stranger builds them
 */

std::vector<uint8_t> ud_packet(uint32_t dest_id, uint8_t type, uint16_t psn,
                               uint16_t ack_psn, const void *body = NULL,
                               size_t body_len = 0)
{
    uct_ud_hdr_t hdr;
    std::vector<uint8_t> pkt(sizeof(hdr) + body_len);

    uct_ud_u24_set(hdr.dest_id, dest_id);
    hdr.type = type;
    memcpy(&hdr.psn, &psn, sizeof(psn));
    memcpy(&hdr.ack_psn, &ack_psn, sizeof(ack_psn));
    memcpy(pkt.data(), &hdr, sizeof(hdr));
    if (body_len != 0) {
        memcpy(pkt.data() + sizeof(hdr), body, body_len);
    }
    return pkt;
}

/* An active message for ep @a dest_id with the 64-bit header @a value */
std::vector<uint8_t> am_packet(uint32_t dest_id, uint16_t psn, uint64_t value)
{
    return ud_packet(dest_id, AM_ID, psn, 0, &value, sizeof(value));
}

std::vector<uint8_t> creq_packet(uint64_t secret, uint32_t src_id,
                                 uint32_t conn_sn,
                                 const uct_ib_device_addr_t &dev_addr)
{
    uct_ud_creq_t creq;

    memset(&creq, 0, sizeof(creq));
    memcpy(&creq.secret, &secret, sizeof(secret));
    uct_ud_u24_set(creq.src_id, src_id);
    memcpy(&creq.conn_sn, &conn_sn, sizeof(conn_sn));
    memcpy(&creq.dev_addr, &dev_addr, sizeof(dev_addr));
    return ud_packet(UCT_UD_EP_ID_NONE, UCT_UD_PKT_CREQ, 0, 0, &creq,
                     sizeof(creq));
}

/* What a CREP says */
struct crep_info {
    uint32_t dest_id;
    uint32_t src_id;
    uint32_t conn_sn;
};

bool parse_crep(const std::vector<uint8_t> &pkt, crep_info *info)
{
    uct_ud_hdr_t hdr;
    uct_ud_crep_t crep;

    if (pkt.size() < sizeof(hdr) + sizeof(crep)) {
        return false;
    }
    memcpy(&hdr, pkt.data(), sizeof(hdr));
    memcpy(&crep, pkt.data() + sizeof(hdr), sizeof(crep));
    if ((hdr.type & UCT_UD_PKT_TYPE_MASK) != UCT_UD_PKT_CREP) {
        return false;
    }
    info->dest_id = uct_ud_u24_get(hdr.dest_id);
    info->src_id  = uct_ud_u24_get(crep.src_id);
    memcpy(&info->conn_sn, &crep.conn_sn, sizeof(info->conn_sn));
    return true;
}

/* ------------------------------------------------------------------------
 * A UD QP of our own on the device of an iface: its own context, PD, CQ
 * and address handles, Q_Key UCT_UD_QKEY
 */
class raw_ud_qp {
public:
    static constexpr size_t BUF_SIZE   = UCT_UD_GRH_LEN + 4096;
    static constexpr unsigned NUM_RECV = 16;

    raw_ud_qp(const std::string &dev_name, uint8_t port, unsigned gid_index)
        : m_ctx(NULL), m_pd(NULL), m_cq(NULL), m_qp(NULL), m_mr(NULL),
          m_ah(NULL), m_port(port), m_gid_index(gid_index),
          m_buf((NUM_RECV + 1) * BUF_SIZE)
    {
        int num;
        struct ibv_device **list = ibv_get_device_list(&num);

        if (list == NULL) {
            throw std::runtime_error("ibv_get_device_list failed");
        }
        for (int i = 0; i < num; ++i) {
            if (dev_name == ibv_get_device_name(list[i])) {
                m_ctx = ibv_open_device(list[i]);
            }
        }
        ibv_free_device_list(list);
        if (m_ctx == NULL) {
            throw std::runtime_error("cannot open " + dev_name);
        }
        m_pd = ibv_alloc_pd(m_ctx);
        m_cq = (m_pd != NULL) ? ibv_create_cq(m_ctx, 64, NULL, NULL, 0) : NULL;
        m_mr = (m_cq != NULL) ? ibv_reg_mr(m_pd, m_buf.data(), m_buf.size(),
                                           IBV_ACCESS_LOCAL_WRITE)
                              : NULL;
        if (m_mr == NULL) {
            cleanup();
            throw std::runtime_error("raw QP resources on " + dev_name);
        }

        struct ibv_qp_init_attr init;
        memset(&init, 0, sizeof(init));
        init.qp_type          = IBV_QPT_UD;
        init.send_cq          = m_cq;
        init.recv_cq          = m_cq;
        init.cap.max_send_wr  = 16;
        init.cap.max_recv_wr  = NUM_RECV;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        m_qp                  = ibv_create_qp(m_pd, &init);
        if (m_qp == NULL) {
            cleanup();
            throw std::runtime_error("ibv_create_qp (UD) failed");
        }

        struct ibv_qp_attr attr;
        memset(&attr, 0, sizeof(attr));
        attr.qp_state   = IBV_QPS_INIT;
        attr.pkey_index = 0;
        attr.port_num   = m_port;
        attr.qkey       = UCT_UD_QKEY;
        int ret         = ibv_modify_qp(m_qp, &attr,
                                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                            IBV_QP_QKEY);
        if (ret == 0) {
            attr.qp_state = IBV_QPS_RTR;
            ret           = ibv_modify_qp(m_qp, &attr, IBV_QP_STATE);
        }
        if (ret == 0) {
            attr.qp_state = IBV_QPS_RTS;
            attr.sq_psn   = 0;
            ret = ibv_modify_qp(m_qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
        }
        if (ret != 0) {
            cleanup();
            throw std::runtime_error("raw UD QP to RTS failed");
        }
        for (unsigned i = 0; i < NUM_RECV; ++i) {
            post_recv(i);
        }
    }

    ~raw_ud_qp()
    {
        cleanup();
    }

    uint32_t qp_num() const
    {
        return m_qp->qp_num;
    }

    /* Sends @a pkt to QP @a qpn at @a dest, waits for its completion */
    void send(const uct_ib_device_addr_t &dest, uint32_t qpn,
              const std::vector<uint8_t> &pkt, bool solicited = false)
    {
        struct ibv_send_wr wr, *bad_wr;
        struct ibv_sge sge;
        uint8_t *sbuf = m_buf.data() + NUM_RECV * BUF_SIZE;

        if (pkt.size() > BUF_SIZE) {
            throw std::runtime_error("raw packet too long");
        }
        memcpy(sbuf, pkt.data(), pkt.size());
        sge.addr   = (uintptr_t)sbuf;
        sge.length = (uint32_t)pkt.size();
        sge.lkey   = m_mr->lkey;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id   = SEND_WR_ID;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode  = IBV_WR_SEND;
        wr.send_flags =
            IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0);
        wr.wr.ud.ah          = ah(dest);
        wr.wr.ud.remote_qpn  = qpn;
        wr.wr.ud.remote_qkey = UCT_UD_QKEY;
        if (ibv_post_send(m_qp, &wr, &bad_wr) != 0) {
            throw std::runtime_error("raw ibv_post_send failed");
        }
        double deadline = now_sec() + 10;
        while (!m_send_done) {
            poll(0);
            if (now_sec() > deadline) {
                throw std::runtime_error("raw send did not complete");
            }
        }
        m_send_done = false;
    }

    /* The next datagram (without the GRH area) within @a timeout s */
    bool recv(std::vector<uint8_t> &pkt, double timeout)
    {
        double deadline = now_sec() + timeout;

        while (m_received.empty()) {
            poll(0);
            if (now_sec() > deadline) {
                return false;
            }
            usleep(100);
        }
        pkt = m_received.front();
        m_received.erase(m_received.begin());
        return true;
    }

private:
    static constexpr uint64_t SEND_WR_ID = UINT64_MAX;

    void post_recv(unsigned i)
    {
        struct ibv_recv_wr wr, *bad_wr;
        struct ibv_sge sge;

        sge.addr   = (uintptr_t)(m_buf.data() + i * BUF_SIZE);
        sge.length = BUF_SIZE;
        sge.lkey   = m_mr->lkey;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id   = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_recv(m_qp, &wr, &bad_wr) != 0) {
            throw std::runtime_error("raw ibv_post_recv failed");
        }
    }

    void poll(int)
    {
        struct ibv_wc wc[8];
        int n = ibv_poll_cq(m_cq, 8, wc);

        for (int i = 0; i < n; ++i) {
            if (wc[i].wr_id == SEND_WR_ID) {
                if (wc[i].status != IBV_WC_SUCCESS) {
                    throw std::runtime_error("raw send failed");
                }
                m_send_done = true;
                continue;
            }
            unsigned idx = (unsigned)wc[i].wr_id;
            if ((wc[i].status == IBV_WC_SUCCESS) &&
                (wc[i].byte_len >= UCT_UD_GRH_LEN)) {
                const uint8_t *p = m_buf.data() + idx * BUF_SIZE;
                m_received.emplace_back(p + UCT_UD_GRH_LEN, p + wc[i].byte_len);
            }
            post_recv(idx);
        }
    }

    struct ibv_ah *ah(const uct_ib_device_addr_t &dest)
    {
        if ((m_ah != NULL) && !memcmp(m_ah_gid, dest.gid, 16)) {
            return m_ah;
        }
        if (m_ah != NULL) {
            ibv_destroy_ah(m_ah);
            m_ah = NULL;
        }
        struct ibv_ah_attr attr;
        uint16_t lid;
        memcpy(&lid, &dest.lid, sizeof(lid));
        memset(&attr, 0, sizeof(attr));
        attr.dlid           = lid;
        attr.port_num       = m_port;
        attr.is_global      = 1;
        attr.grh.sgid_index = (uint8_t)m_gid_index;
        attr.grh.hop_limit  = 64;
        memcpy(attr.grh.dgid.raw, dest.gid, 16);
        m_ah = ibv_create_ah(m_pd, &attr);
        if (m_ah == NULL) {
            throw std::runtime_error("raw ibv_create_ah failed");
        }
        memcpy(m_ah_gid, dest.gid, 16);
        return m_ah;
    }

    void cleanup()
    {
        if (m_qp != NULL) {
            ibv_destroy_qp(m_qp);
        }
        if (m_ah != NULL) {
            ibv_destroy_ah(m_ah);
        }
        if (m_mr != NULL) {
            ibv_dereg_mr(m_mr);
        }
        if (m_cq != NULL) {
            ibv_destroy_cq(m_cq);
        }
        if (m_pd != NULL) {
            ibv_dealloc_pd(m_pd);
        }
        if (m_ctx != NULL) {
            ibv_close_device(m_ctx);
        }
        m_qp  = NULL;
        m_ah  = NULL;
        m_mr  = NULL;
        m_cq  = NULL;
        m_pd  = NULL;
        m_ctx = NULL;
    }

    struct ibv_context *m_ctx;
    struct ibv_pd *m_pd;
    struct ibv_cq *m_cq;
    struct ibv_qp *m_qp;
    struct ibv_mr *m_mr;
    struct ibv_ah *m_ah;
    uint8_t m_ah_gid[16];
    uint8_t m_port;
    unsigned m_gid_index;
    std::vector<uint8_t> m_buf;
    std::vector<std::vector<uint8_t>> m_received;
    bool m_send_done = false;
};

/* ------------------------------------------------------------------------
 * The peer process of the peer_process_* tests (see ib_peer_process.h):
 * the test binary started again with OPENUCT_UD_PEER_FD set runs this
 * from a static constructor and exits, never reaching the tests. It opens
 * a ud_verbs iface on the resource named in the environment, swaps
 * interface addresses with the parent over the socket, connects an ep to
 * the parent's iface and sends back the header of every active message it
 * gets, in order, until it is killed or the parent closes the socket.
 */

using ib_peer::fd_read_blob;
using ib_peer::fd_write_blob;

const char PEER_FD_ENV[] = "OPENUCT_UD_PEER_FD";

std::vector<uint64_t> peer_received;

ucs_status_t peer_am_cb(void *arg, void *data, size_t length, unsigned flags)
{
    uint64_t value;

    (void)arg;
    (void)flags;
    if (length >= sizeof(value)) {
        memcpy(&value, data, sizeof(value));
        peer_received.push_back(value);
    }
    return UCS_OK;
}

int peer_process_main(int fd)
{
    const char *component_name = getenv("OPENUCT_UD_PEER_COMPONENT");
    const char *md_name        = getenv("OPENUCT_UD_PEER_MD");
    const char *dev_name       = getenv("OPENUCT_UD_PEER_DEV");
    uct_component_h component;
    uct_md_config_t *md_config;
    uct_iface_config_t *iface_config;
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_iface_params_t params;
    uct_iface_attr_t attr;
    uct_iface_h iface;
    uct_md_h md;
    uct_ep_h ep;

    if ((component_name == NULL) || (md_name == NULL) || (dev_name == NULL)) {
        return 2;
    }
    component = ib_peer::find_component(component_name);
    if ((component == NULL) ||
        (uct_md_config_read(component, NULL, NULL, &md_config) != UCS_OK) ||
        (uct_md_open(component, md_name, md_config, &md) != UCS_OK) ||
        (ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async) !=
         UCS_OK) ||
        (uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) != UCS_OK) ||
        (uct_md_iface_config_read(md, UCT_UD_VERBS_NAME, NULL, NULL,
                                  &iface_config) != UCS_OK)) {
        return 3;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_FEATURES;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = UCT_UD_VERBS_NAME;
    params.mode.device.dev_name = dev_name;
    params.features             = UCT_IFACE_FEATURE_AM;
    if ((uct_iface_open(md, worker, &params, iface_config, &iface) != UCS_OK) ||
        (uct_iface_query(iface, &attr) != UCS_OK) ||
        (uct_iface_set_am_handler(iface, AM_ID, peer_am_cb, NULL,
                                  UCT_CB_FLAG_SYNC) != UCS_OK)) {
        return 4;
    }
    uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    std::vector<char> dev_addr(attr.device_addr_len);
    std::vector<char> iface_addr(attr.iface_addr_len);
    std::vector<char> parent_dev, parent_iface;
    if ((uct_iface_get_device_address(
             iface, (uct_device_addr_t *)dev_addr.data()) != UCS_OK) ||
        (uct_iface_get_address(iface, (uct_iface_addr_t *)iface_addr.data()) !=
         UCS_OK) ||
        !fd_write_blob(fd, dev_addr.data(), (uint32_t)dev_addr.size()) ||
        !fd_write_blob(fd, iface_addr.data(), (uint32_t)iface_addr.size()) ||
        !fd_read_blob(fd, parent_dev, 30000) ||
        !fd_read_blob(fd, parent_iface, 30000)) {
        return 5;
    }

    uct_ep_params_t ep_params;
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = iface;
    ep_params.dev_addr   = (const uct_device_addr_t *)parent_dev.data();
    ep_params.iface_addr = (const uct_iface_addr_t *)parent_iface.data();
    if ((uct_ep_create(&ep_params, &ep) != UCS_OK) ||
        !fd_write_blob(fd, "R", 1)) {
        return 6;
    }

    size_t echoed = 0;
    for (;;) {
        uct_worker_progress(worker);
        while ((echoed < peer_received.size()) &&
               (uct_ep_am_short(ep, AM_ID, peer_received[echoed], NULL, 0) ==
                UCS_OK)) {
            ++echoed;
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        if (::poll(&pfd, 1, (echoed < peer_received.size()) ? 0 : 1) > 0) {
            char c;
            if (read(fd, &c, 1) <= 0) {
                return 0;
            }
        }
    }
}

const ib_peer::main_registrar peer_registrar(PEER_FD_ENV, peer_process_main);

std::vector<resource> ud_verbs_resources()
{
    std::vector<resource> out;

    for (const resource &r : uct_test::enum_resources()) {
        if (r.tl_name == UCT_UD_VERBS_NAME) {
            out.push_back(r);
        }
    }
    return out;
}

} // namespace

class uct_ud : public uct_test {
protected:
    /* The drop counters of an iface */
    struct ud_stats {
        uint64_t rx_dropped, rx_stale, rx_dup, rx_ooo, tx_resent, put_denied,
            creq_denied;
    };

    /* A peer process (see peer_process_main) */
    struct peer_process : ib_peer::process {
        std::vector<char> dev_addr, iface_addr;
    };

    void TearDown() override
    {
        for (uct_ep_h ep : m_own_eps) {
            uct_ep_destroy(ep);
        }
        m_own_eps.clear();
        ib_peer::stop(m_peer);
        m_raw.reset();
        uct_test::TearDown();
    }

    entity_params
    params(const std::vector<std::pair<std::string, std::string>> &config = {},
           bool err_handler = false)
    {
        entity_params p;
        p.config = config;
        if (err_handler) {
            p.err_handler     = err_cb;
            p.err_handler_arg = &m_errs;
        }
        return p;
    }

    static uct_ud_iface_t *ud(const entity &e)
    {
        return uct_ud_iface(e.iface());
    }

    static ud_stats stats(const entity &e)
    {
        uct_ud_iface_t *iface = ud(e);
        ud_stats s;

        uct_ud_enter(iface);
        s.rx_dropped  = iface->stats.rx_dropped;
        s.rx_stale    = iface->stats.rx_stale;
        s.rx_dup      = iface->stats.rx_dup;
        s.rx_ooo      = iface->stats.rx_ooo;
        s.tx_resent   = iface->stats.tx_resent;
        s.put_denied  = iface->stats.put_denied;
        s.creq_denied = iface->stats.creq_denied;
        uct_ud_leave(iface);
        return s;
    }

    static unsigned ep_count(const entity &e)
    {
        uct_ud_iface_t *iface = ud(e);

        uct_ud_enter(iface);
        unsigned count = iface->eps.count;
        uct_ud_leave(iface);
        return count;
    }

    /* Eps of @a e created by a peer's request and not taken by a user */
    static unsigned private_count(const entity &e)
    {
        uct_ud_iface_t *iface = ud(e);
        unsigned count        = 0;

        uct_ud_enter(iface);
        for (unsigned i = 0; i < iface->eps.size; ++i) {
            uct_ud_ep_t *ep = iface->eps.slots[i];
            if ((ep != NULL) && (ep->flags & UCT_UD_EP_FLAG_PRIVATE)) {
                ++count;
            }
        }
        uct_ud_leave(iface);
        return count;
    }

    static uint16_t ep_flags(const entity &e, uct_ep_h ep)
    {
        uct_ud_iface_t *iface = ud(e);

        uct_ud_enter(iface);
        uint16_t flags = uct_ud_ep(ep)->flags;
        uct_ud_leave(iface);
        return flags;
    }

    static bool connected(const entity &e, uct_ep_h ep)
    {
        return ep_flags(e, ep) & UCT_UD_EP_FLAG_CONNECTED;
    }

    static uint32_t iface_qpn(const entity &e)
    {
        const uct_ud_iface_addr_t *addr =
            (const uct_ud_iface_addr_t *)e.iface_addr().data();
        return uct_ud_u24_get(addr->qp_num);
    }

    static uint64_t iface_secret(const entity &e)
    {
        const uct_ud_iface_addr_t *addr =
            (const uct_ud_iface_addr_t *)e.iface_addr().data();
        uint64_t secret;

        memcpy(&secret, &addr->secret, sizeof(secret));
        return secret;
    }

    static uct_ib_device_addr_t dev_addr(const entity &e)
    {
        uct_ib_device_addr_t addr;

        memcpy(&addr, e.dev_addr().data(), sizeof(addr));
        return addr;
    }

    /* A UD QP of the test on @a e's device and GID */
    raw_ud_qp &raw_qp(const entity &e)
    {
        std::string dev = e.res().dev_name;
        size_t colon    = dev.find(':');

        if (colon != std::string::npos) {
            dev = dev.substr(0, colon);
        }
        m_raw.reset(new raw_ud_qp(dev, ud(e)->super.port_num,
                                  ud(e)->super.gid_info.gid_index));
        return *m_raw;
    }

    /* Sends @a pkt from @a raw to @a e's QP; waits until @a e dropped it */
    void send_dropped(entity &e, raw_ud_qp &raw,
                      const std::vector<uint8_t> &pkt, ud_stats *before,
                      ud_stats *after)
    {
        *before = stats(e);
        raw.send(dev_addr(e), iface_qpn(e), pkt);
        wait_for([&] { return stats(e).rx_dropped > before->rx_dropped; },
                 "the packet dropped");
        progress_for(50);
        *after = stats(e);
    }

    /* The counters other than @a changed (member pointers) are equal */
    static void expect_unchanged(const ud_stats &a, const ud_stats &b,
                                 std::vector<uint64_t ud_stats::*> changed)
    {
        static const std::pair<uint64_t ud_stats::*, const char *> all[] = {
            {&ud_stats::rx_dropped, "rx_dropped"},
            {&ud_stats::rx_stale, "rx_stale"},
            {&ud_stats::rx_dup, "rx_dup"},
            {&ud_stats::rx_ooo, "rx_ooo"},
            {&ud_stats::tx_resent, "tx_resent"},
            {&ud_stats::put_denied, "put_denied"},
            {&ud_stats::creq_denied, "creq_denied"}};

        for (const auto &m : all) {
            if (std::find(changed.begin(), changed.end(), m.first) ==
                changed.end()) {
                EXPECT_EQ(a.*m.first, b.*m.first) << m.second;
            }
        }
    }

    /* Number of captured lines (since @a from) that contain @a text */
    static size_t lines_with(const ucs::scoped_log_capture &cap, size_t from,
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

    bool send_short(uct_ep_h ep, uint64_t value)
    {
        ssize_t ret = retry_no_resource(
            [&] { return (ssize_t)uct_ep_am_short(ep, AM_ID, value, NULL, 0); },
            "uct_ep_am_short");
        EXPECT_EQ(UCS_OK, ret) << ucs_status_string((ucs_status_t)ret);
        return ret == UCS_OK;
    }

    /* An ep of @a e to the interface at @a dev / @a iface_addr, destroyed
     * at the end */
    uct_ep_h connect_iface(const entity &e, const std::vector<char> &dev,
                           const std::vector<char> &iface_addr)
    {
        uct_ep_params_t p;
        uct_ep_h ep;

        memset(&p, 0, sizeof(p));
        p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                       UCT_EP_PARAM_FIELD_IFACE_ADDR;
        p.iface             = e.iface();
        p.dev_addr          = (const uct_device_addr_t *)dev.data();
        p.iface_addr        = (const uct_iface_addr_t *)iface_addr.data();
        ucs_status_t status = uct_ep_create(&p, &ep);
        if (status != UCS_OK) {
            throw std::runtime_error(std::string("uct_ep_create: ") +
                                     ucs_status_string(status));
        }
        m_own_eps.push_back(ep);
        return ep;
    }

    /* Destroys every ep and closes every iface now (inside a capture) */
    void close_all()
    {
        for (uct_ep_h ep : m_own_eps) {
            uct_ep_destroy(ep);
        }
        m_own_eps.clear();
        reset_entities();
    }

    /* Starts the peer process on the test's resource; it connects to
     * @a e. False (and a failure) when it did not come up. */
    bool start_peer(const entity &e, peer_process &peer)
    {
        std::string error;

        if (!ib_peer::start(
                PEER_FD_ENV,
                {"OPENUCT_UD_PEER_COMPONENT=" + res().component_name,
                 "OPENUCT_UD_PEER_MD=" + res().md_name,
                 "OPENUCT_UD_PEER_DEV=" + res().dev_name},
                peer, error)) {
            ADD_FAILURE() << "cannot start the peer process: " << error;
            return false;
        }

        std::vector<char> ready;
        bool ok = fd_read_blob(peer.sock, peer.dev_addr, 30000) &&
                  fd_read_blob(peer.sock, peer.iface_addr, 30000) &&
                  fd_write_blob(peer.sock, e.dev_addr().data(),
                                (uint32_t)e.dev_addr().size()) &&
                  fd_write_blob(peer.sock, e.iface_addr().data(),
                                (uint32_t)e.iface_addr().size()) &&
                  fd_read_blob(peer.sock, ready, 30000);
        if (!ok) {
            ADD_FAILURE() << "the peer process did not come up";
            ib_peer::stop(peer);
        }
        return ok;
    }

    void hostile_setup();
    void hostile_check_alive(uint64_t value, size_t expected_count);
    void simultaneous_connect(bool hold_async);

    err_log m_errs;
    std::vector<uct_ep_h> m_own_eps;
    std::unique_ptr<raw_ud_qp> m_raw;
    peer_process m_peer;

    /* hostile_setup(): a sends to b through m_ab; m_rec records b's AMs */
    entity *m_a        = NULL;
    entity *m_b        = NULL;
    uct_ep_h m_ab      = NULL;
    am_recorder *m_rec = NULL;
};

/* ------------------------------------------------------------------------
 * Datagrams from a stranger
 */

void uct_ud::hostile_setup()
{
    m_b  = create_entity(params({}, true));
    m_a  = create_entity(params({}, true));
    m_ab = m_a->connect_to(*m_b);
    ASSERT_TRUE(m_ab != NULL);
    m_rec = &install_recorder(*m_b, AM_ID);
    ASSERT_TRUE(send_short(m_ab, 0));
    ASSERT_TRUE(wait_for([&] { return m_rec->count() == 1; },
                         "a message before the stranger"));
    raw_qp(*m_b);
}

/* After a dropped packet: b got nothing from it, and a message from the
 * real peer still arrives */
void uct_ud::hostile_check_alive(uint64_t value, size_t expected_count)
{
    EXPECT_EQ(expected_count - 1, m_rec->count()) << "something delivered";
    ASSERT_TRUE(send_short(m_ab, value));
    wait_for([&] { return m_rec->count() == expected_count; },
             "a message after the stranger");
    progress_for(20);
    EXPECT_EQ(expected_count, m_rec->count());
    EXPECT_EQ(value, am_header(m_rec->at(m_rec->count() - 1)));
    EXPECT_TRUE(m_errs.calls.empty());
}

/* Shorter than a header, and a header of an unknown type: dropped and
 * counted in rx_dropped only, one warning naming the stranger's QP and
 * why */
TEST_P(uct_ud, stranger_garbage_dropped)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    ud_stats before, after;

    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, std::vector<uint8_t>{1, 2, 3, 4}, &before,
                     &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        expect_unchanged(before, after, {&ud_stats::rx_dropped});
        EXPECT_EQ(1u, lines_with(cap, first, from));
        EXPECT_EQ(1u, lines_with(cap, first,
                                 ucs_status_string(UCS_ERR_MESSAGE_TRUNCATED)));
        hostile_check_alive(1, 2);
    }

    /* the limit lets the next line through a second later */
    usleep(1100000);
    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, ud_packet(0, 50, 1, 0), &before, &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        expect_unchanged(before, after, {&ud_stats::rx_dropped});
        EXPECT_EQ(1u, lines_with(cap, first, from));
        EXPECT_EQ(1u, lines_with(cap, first,
                                 ucs_status_string(UCS_ERR_INVALID_PARAM)));
        hostile_check_alive(2, 3);
        close_all();
    }
}

/* A flood of garbage: every packet is counted, but at most one line per
 * second passes; the lines that did not pass are counted in the next one
 * or, at close, in a line of their own, so none goes unaccounted */
TEST_P(uct_ud, stranger_flood_rate_limited)
{
    const unsigned N = 200;
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    ud_stats before  = stats(*m_b);

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    double start = now_sec();
    for (unsigned i = 0; i < N; ++i) {
        m_raw->send(dev_addr(*m_b), iface_qpn(*m_b), ud_packet(0, 60, i, 0));
    }
    wait_for([&] { return stats(*m_b).rx_dropped == before.rx_dropped + N; },
             "every packet dropped");
    double elapsed = now_sec() - start;
    ud_stats after = stats(*m_b);
    expect_unchanged(before, after, {&ud_stats::rx_dropped});
    size_t passed = lines_with(cap, first, from);
    EXPECT_GE(passed, 1u);
    EXPECT_LE(passed, 2 + (size_t)elapsed) << "in " << elapsed << " s";
    hostile_check_alive(1, 2);

    close_all();
    /* suppressed counts: "(N similar lines suppressed)" on a line that
     * passed, "N more lines like the last one" at close */
    unsigned accounted                   = 0;
    const std::vector<std::string> &msgs = cap.messages();
    for (size_t i = first; i < msgs.size(); ++i) {
        unsigned n;
        size_t pos;
        if ((pos = msgs[i].rfind("(")) != std::string::npos &&
            (sscanf(msgs[i].c_str() + pos, "(%u similar lines", &n) == 1)) {
            accounted += n;
        } else if ((pos = msgs[i].find("suppressed")) != std::string::npos &&
                   (pos = msgs[i].find(": ", msgs[i].find("peers"))) !=
                       std::string::npos &&
                   (sscanf(msgs[i].c_str() + pos + 2, "%u more lines", &n) ==
                    1)) {
            accounted += n;
        }
    }
    EXPECT_EQ(N, passed + accounted);
    std::cout << "[ INFO     ] " << N << " garbage packets in " << elapsed
              << " s: " << passed << " lines" << std::endl;
}

/* A packet for an ep id never given out is dropped with a line; one for
 * an ep destroyed here is a stale packet, counted without a line */
TEST_P(uct_ud, stranger_unknown_and_stale_ep_id)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    ud_stats before, after;

    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, am_packet(UCT_UD_EP_ID_MAX, 1, 99), &before,
                     &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        expect_unchanged(before, after, {&ud_stats::rx_dropped});
        EXPECT_EQ(1u, lines_with(cap, first, "no such endpoint"));
        EXPECT_EQ(1u, lines_with(cap, first, from));
        hostile_check_alive(1, 2);
    }

    /* an ep of b that existed */
    uct_ep_params_t p;
    uct_ep_h gone;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    p.iface      = m_b->iface();
    ASSERT_EQ(UCS_OK, uct_ep_create(&p, &gone));
    uint32_t gone_id = uct_ud_ep(gone)->id;
    uct_ep_destroy(gone);
    ASSERT_LT(gone_id, ud(*m_b)->eps.used);

    usleep(1100000); /* a line would pass the limit now */
    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        send_dropped(*m_b, *m_raw, am_packet(gone_id, 1, 98), &before, &after);
        EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
        EXPECT_EQ(before.rx_stale + 1, after.rx_stale);
        expect_unchanged(before, after,
                         {&ud_stats::rx_dropped, &ud_stats::rx_stale});
        EXPECT_EQ(first, cap.messages().size()) << cap.messages().back();
        hostile_check_alive(2, 3);
    }
}

/* A CREQ with a wrong secret creates no ep and gets no reply; counted in
 * creq_denied */
TEST_P(uct_ud, stranger_creq_wrong_secret)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    unsigned eps     = ep_count(*m_b);
    ud_stats before, after;

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    send_dropped(*m_b, *m_raw,
                 creq_packet(iface_secret(*m_b) ^ 1, 5, 0, dev_addr(*m_b)),
                 &before, &after);
    EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
    EXPECT_EQ(before.creq_denied + 1, after.creq_denied);
    expect_unchanged(before, after,
                     {&ud_stats::rx_dropped, &ud_stats::creq_denied});
    EXPECT_EQ(1u, lines_with(cap, first, "secret"));
    EXPECT_EQ(1u, lines_with(cap, first, from));
    EXPECT_EQ(eps, ep_count(*m_b));
    std::vector<uint8_t> reply;
    EXPECT_FALSE(m_raw->recv(reply, 0.3)) << "a reply to a bad request";
    hostile_check_alive(1, 2);
    close_all();
}

/* A data packet for a real ep, in sequence, from a QP that is not the
 * ep's peer: not delivered, the ep's sequence does not move (the real
 * peer's next packet is taken) */
TEST_P(uct_ud, stranger_data_to_real_ep)
{
    ASSERT_NO_FATAL_FAILURE(hostile_setup());
    std::string from = "from qp " + hex(m_raw->qp_num());
    uint32_t target  = uct_ud_ep(m_ab)->dest_id;
    uct_ud_ep_t *bep = uct_ud_iface_ep(ud(*m_b), target);
    ASSERT_TRUE(bep != NULL);
    uint16_t expected = bep->rx.expected;
    ud_stats before, after;

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    send_dropped(*m_b, *m_raw, am_packet(target, expected, 0xbad), &before,
                 &after);
    EXPECT_EQ(before.rx_dropped + 1, after.rx_dropped);
    expect_unchanged(before, after, {&ud_stats::rx_dropped});
    EXPECT_EQ(1u, lines_with(cap, first, "not from the endpoint's peer"));
    EXPECT_EQ(1u, lines_with(cap, first, from));
    EXPECT_EQ(expected, bep->rx.expected);
    hostile_check_alive(1, 2);
    close_all();
}

/* ------------------------------------------------------------------------
 * Refused PUTs
 */

/* A PUT with a wrong key, and one with the key of another region than the
 * address, are not applied; put_denied counts each; the sender's next
 * flush completes with UCS_ERR_INVALID_ADDR, the one after a good PUT with
 * UCS_OK */
TEST_P(uct_ud, put_refused_flush_invalid_addr)
{
    entity *b   = create_entity();
    entity *a   = create_entity(params({}, true));
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    mapped_buffer rbuf(64, *b);
    mapped_buffer other(1 << 20, *b); /* pages of its own */
    rbuf.pattern_fill(7);
    other.pattern_fill(8);

    /* @a what: flush after a PUT of 8 bytes to @a addr with @a rkey */
    auto put_and_flush = [&](uint64_t addr, uct_rkey_t rkey, const char *what) {
        uint64_t value = 0x1122334455667788ull;
        EXPECT_EQ(UCS_OK, retry_no_resource(
                              [&] {
                                  return (ssize_t)uct_ep_put_short(
                                      ab, &value, sizeof(value), addr, rkey);
                              },
                              what));
        counted_completion comp;
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] { return (ssize_t)uct_ep_flush(ab, 0, comp); }, "uct_ep_flush");
        if (status == UCS_INPROGRESS) {
            wait_for([&] { return comp.calls > 0; }, what);
            EXPECT_EQ(1, comp.calls);
            return comp.status_at_call;
        }
        return status;
    };

    ud_stats before = stats(*b);
    {
        ucs::scoped_log_capture cap;
        size_t first        = cap.messages().size();
        ucs_status_t status = put_and_flush(rbuf.addr(), rbuf.rkey() ^ 0x7fff00,
                                            "a PUT with a wrong key");
        EXPECT_EQ(UCS_ERR_INVALID_ADDR, status) << ucs_status_string(status);
        EXPECT_TRUE(rbuf.pattern_matches(7)) << "the refused PUT was applied";
        EXPECT_EQ(before.put_denied + 1, stats(*b).put_denied);
        EXPECT_EQ(1u, lines_with(cap, first, "refused a 8-byte PUT"));

        /* the key of one region, the address of another */
        usleep(1100000);
        first  = cap.messages().size();
        status = put_and_flush(other.addr() + 64, rbuf.rkey(),
                               "a PUT outside the key's region");
        EXPECT_EQ(UCS_ERR_INVALID_ADDR, status) << ucs_status_string(status);
        EXPECT_TRUE(rbuf.pattern_matches(7)) << "the refused PUT was applied";
        EXPECT_TRUE(other.pattern_matches(8)) << "the refused PUT was applied";
        EXPECT_EQ(before.put_denied + 2, stats(*b).put_denied);
        EXPECT_EQ(1u, lines_with(cap, first, "refused a 8-byte PUT"));
    }

    ucs_status_t status = put_and_flush(rbuf.addr(), rbuf.rkey(), "a good PUT");
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    uint64_t got;
    memcpy(&got, rbuf.ptr(), sizeof(got));
    EXPECT_EQ(0x1122334455667788ull, got);
    EXPECT_EQ(before.put_denied + 2, stats(*b).put_denied);
    EXPECT_TRUE(m_errs.calls.empty());
}

/* ------------------------------------------------------------------------
 * Connections
 */

void uct_ud::simultaneous_connect(bool hold_async)
{
    const unsigned N = 100;
    entity *a        = create_entity(params({}, true));
    entity *b        = create_entity(params({}, true));
    am_recorder &ra  = install_recorder(*a, AM_ID);
    am_recorder &rb  = install_recorder(*b, AM_ID);

    /* with both async contexts held, neither side sees the other's request
     * before it sent its own */
    if (hold_async) {
        uct_ud_enter(ud(*a));
        uct_ud_enter(ud(*b));
    }
    uct_ep_h ab = a->connect_to(*b);
    uct_ep_h ba = b->connect_to(*a);
    if (hold_async) {
        uct_ud_leave(ud(*b));
        uct_ud_leave(ud(*a));
    }
    ASSERT_TRUE((ab != NULL) && (ba != NULL));

    for (unsigned i = 0; i < N; ++i) {
        ASSERT_TRUE(send_short(ab, i));
        ASSERT_TRUE(send_short(ba, 1000 + i));
    }
    wait_for([&] { return (ra.count() >= N) && (rb.count() >= N); },
             "messages both ways");
    progress_for(100);

    EXPECT_EQ(iota(0, N), headers(rb));
    EXPECT_EQ(iota(1000, N), headers(ra));
    EXPECT_EQ(1u, ep_count(*a));
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_EQ(0u, private_count(*a));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_EQ(uct_ud_ep(ab)->dest_id, uct_ud_ep(ba)->id);
    EXPECT_EQ(uct_ud_ep(ba)->dest_id, uct_ud_ep(ab)->id);
    EXPECT_EQ(uct_ud_ep(ab)->conn_sn, uct_ud_ep(ba)->conn_sn);
    EXPECT_TRUE(m_errs.calls.empty());
}

/* Both sides connect to each other's iface while neither progresses: the
 * requests cross, each matches the other's ep, one ep pair, traffic both
 * ways once and in order */
TEST_P(uct_ud, simultaneous_connect_crossing_requests)
{
    simultaneous_connect(true);
}

/* The same when the second side's ep takes the one the first side's
 * request already made */
TEST_P(uct_ud, simultaneous_connect_adopts_private_ep)
{
    simultaneous_connect(false);
}

/* Two eps each way: the n-th ep of one side pairs with the n-th of the
 * other */
TEST_P(uct_ud, connect_numbers_pair_eps)
{
    entity *a       = create_entity();
    entity *b       = create_entity();
    am_recorder &rb = install_recorder(*b, AM_ID);
    uct_ep_h ab0    = a->connect_to(*b);
    uct_ep_h ab1    = a->connect_to(*b);
    ASSERT_TRUE((ab0 != NULL) && (ab1 != NULL));
    ASSERT_TRUE(send_short(ab0, 0));
    ASSERT_TRUE(send_short(ab1, 1));
    wait_for([&] { return rb.count() == 2; }, "a message on each ep");
    EXPECT_EQ(2u, private_count(*b));

    uct_ep_h ba0 = b->connect_to(*a);
    uct_ep_h ba1 = b->connect_to(*a);
    ASSERT_TRUE((ba0 != NULL) && (ba1 != NULL));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_EQ(2u, ep_count(*a));
    EXPECT_EQ(2u, ep_count(*b));
    EXPECT_EQ(uct_ud_ep(ab0)->dest_id, uct_ud_ep(ba0)->id);
    EXPECT_EQ(uct_ud_ep(ab1)->dest_id, uct_ud_ep(ba1)->id);
    EXPECT_EQ(uct_ud_ep(ba0)->dest_id, uct_ud_ep(ab0)->id);
    EXPECT_EQ(uct_ud_ep(ba1)->dest_id, uct_ud_ep(ab1)->id);
}

/* The same CREQ twice (from a stranger that knows the secret): one ep,
 * two identical replies. A CREQ with the same number from another ep id
 * is refused; a new number makes a second ep. The stranger's packets on
 * its ep are taken once, a duplicate is counted and dropped. */
TEST_P(uct_ud, duplicate_creq_one_ep)
{
    entity *b                 = create_entity();
    am_recorder &rec          = install_recorder(*b, AM_ID);
    raw_ud_qp &raw            = raw_qp(*b);
    uct_ib_device_addr_t dest = dev_addr(*b);
    std::vector<uint8_t> creq = creq_packet(iface_secret(*b), 77, 0, dest);
    std::vector<uint8_t> reply;
    crep_info crep[2];

    for (int i = 0; i < 2; ++i) {
        raw.send(dest, iface_qpn(*b), creq, true);
        ASSERT_TRUE(raw.recv(reply, 5)) << "no reply to request " << i;
        ASSERT_TRUE(parse_crep(reply, &crep[i])) << i;
        EXPECT_EQ(77u, crep[i].dest_id);
        EXPECT_EQ(0u, crep[i].conn_sn);
    }
    EXPECT_EQ(crep[0].src_id, crep[1].src_id);
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_EQ(1u, private_count(*b));
    uct_ud_ep_t *bep = uct_ud_iface_ep(ud(*b), crep[0].src_id);
    ASSERT_TRUE(bep != NULL);
    EXPECT_EQ(raw.qp_num(), bep->dest_qpn);
    EXPECT_EQ(77u, bep->dest_id);

    /* data from the stranger on its ep, then the same packet again */
    ud_stats before = stats(*b);
    raw.send(dest, iface_qpn(*b), am_packet(crep[0].src_id, 1, 4242));
    wait_for([&] { return rec.count() == 1; }, "the stranger's message");
    raw.send(dest, iface_qpn(*b), am_packet(crep[0].src_id, 1, 4242));
    wait_for([&] { return stats(*b).rx_dup == before.rx_dup + 1; },
             "the duplicate counted");
    progress_for(50);
    EXPECT_EQ(1u, rec.count());
    EXPECT_EQ(4242u, am_header(rec.at(0)));

    {
        ucs::scoped_log_capture cap;
        size_t first = cap.messages().size();
        before       = stats(*b);
        raw.send(dest, iface_qpn(*b),
                 creq_packet(iface_secret(*b), 78, 0, dest));
        wait_for([&] { return stats(*b).rx_dropped > before.rx_dropped; },
                 "the conflicting request dropped");
        EXPECT_EQ(1u, lines_with(cap, first, "is connected to ep"));
        EXPECT_EQ(1u, ep_count(*b));
    }

    raw.send(dest, iface_qpn(*b), creq_packet(iface_secret(*b), 79, 1, dest));
    crep_info second;
    bool got = false;
    while (!got && raw.recv(reply, 5)) {
        got = parse_crep(reply, &second) && (second.dest_id == 79);
    }
    ASSERT_TRUE(got) << "no reply to a new connection number";
    EXPECT_EQ(1u, second.conn_sn);
    EXPECT_NE(crep[0].src_id, second.src_id);
    EXPECT_EQ(2u, ep_count(*b));
    close_all();
}

/* A DISC is a peer's input: one that names another ep as its sender is
 * dropped with a line and frees nothing; the right one frees the ep the
 * request made and is answered with a DISC_REP naming it */
TEST_P(uct_ud, disconnect_from_wrong_sender_dropped)
{
    entity *b                 = create_entity();
    raw_ud_qp &raw            = raw_qp(*b);
    uct_ib_device_addr_t dest = dev_addr(*b);
    std::vector<uint8_t> reply;
    crep_info crep;

    raw.send(dest, iface_qpn(*b), creq_packet(iface_secret(*b), 77, 0, dest),
             true);
    ASSERT_TRUE(raw.recv(reply, 5)) << "no reply to the request";
    ASSERT_TRUE(parse_crep(reply, &crep));
    ASSERT_EQ(1u, private_count(*b));

    uct_ud_disc_t disc;
    memset(&disc, 0, sizeof(disc));
    uct_ud_u24_set(disc.src_id, 78); /* not the ep b's ep is connected to */
    {
        ucs::scoped_log_capture cap;
        ud_stats before, after;
        send_dropped(
            *b, raw,
            ud_packet(crep.src_id, UCT_UD_PKT_DISC, 0, 0, &disc, sizeof(disc)),
            &before, &after);
        EXPECT_EQ(1u, lines_with(cap, 0, "which is not its peer"));
        EXPECT_EQ(1u, private_count(*b));
    }

    uct_ud_u24_set(disc.src_id, 77);
    raw.send(
        dest, iface_qpn(*b),
        ud_packet(crep.src_id, UCT_UD_PKT_DISC, 0, 0, &disc, sizeof(disc)));
    wait_for([&] { return ep_count(*b) == 0; }, "b's ep freed");
    bool got = false;
    while (!got && raw.recv(reply, 5)) {
        uct_ud_hdr_t hdr;
        uct_ud_disc_t rep;
        if (reply.size() < sizeof(hdr) + sizeof(rep)) {
            continue;
        }
        memcpy(&hdr, reply.data(), sizeof(hdr));
        memcpy(&rep, reply.data() + sizeof(hdr), sizeof(rep));
        got = ((hdr.type & UCT_UD_PKT_TYPE_MASK) == UCT_UD_PKT_DISC_REP) &&
              (uct_ud_u24_get(hdr.dest_id) == 77) &&
              (uct_ud_u24_get(rep.src_id) == crep.src_id);
    }
    EXPECT_TRUE(got) << "no DISC_REP naming the freed ep";
    uct_ud_enter(ud(*b));
    EXPECT_EQ(1u, ud(*b)->stats.disc_rx);
    uct_ud_leave(ud(*b));
    close_all();
}

/* The reply to the first CREQ is lost: a's receive queue is full of a
 * stranger's garbage when it comes (a's async context is held, so nothing
 * drains it). The request is sent again, and the connection completes
 * with one ep on each side. */
TEST_P(uct_ud, lost_crep_connection_completes)
{
    entity *a       = create_entity(params({{"IB_RX_QUEUE_LEN", "128"}}, true));
    entity *b       = create_entity();
    am_recorder &rb = install_recorder(*b, AM_ID);
    am_recorder &ra = install_recorder(*a, AM_ID);
    raw_ud_qp &raw  = raw_qp(*a);
    uct_ud_iface_t *ia = ud(*a);
    ud_stats before    = stats(*a);

    ucs::scoped_log_capture cap;
    uct_ud_enter(ia);
    unsigned posted = ia->rx.posted;
    for (unsigned i = 0; i < posted + 8; ++i) {
        raw.send(dev_addr(*a), iface_qpn(*a), ud_packet(0, 61, i, 0));
    }
    uct_ep_h ab = a->connect_to(*b);
    /* b takes the request (its async context answers at once) */
    double deadline = now_sec() + 10;
    while ((ep_count(*b) == 0) && (now_sec() < deadline)) {
        b->progress();
    }
    usleep(200000); /* the reply reaches a's full queue and is dropped */
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_FALSE(uct_ud_ep(ab)->flags & UCT_UD_EP_FLAG_CONNECTED);
    uct_ud_leave(ia);
    ASSERT_TRUE(ab != NULL);

    wait_for([&] { return connected(*a, ab); }, "the connection");
    ud_stats after = stats(*a);
    EXPECT_EQ(before.rx_dropped + posted, after.rx_dropped)
        << "the queue was not full of garbage when the reply came";
    ASSERT_TRUE(send_short(ab, 1));
    uct_ep_h ba = b->connect_to(*a);
    ASSERT_TRUE(ba != NULL);
    ASSERT_TRUE(send_short(ba, 2));
    wait_for([&] { return (rb.count() == 1) && (ra.count() == 1); },
             "a message each way");
    EXPECT_EQ(1u, ep_count(*a));
    EXPECT_EQ(1u, ep_count(*b));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_EQ(1u, am_header(rb.at(0)));
    EXPECT_EQ(2u, am_header(ra.at(0)));
    EXPECT_TRUE(m_errs.calls.empty());
    std::cout << "[ INFO     ] " << posted << " receive buffers filled, "
              << "the reply lost and the request sent again" << std::endl;
    close_all();
}

/* ------------------------------------------------------------------------
 * Peer failure
 */

/* Peers that connect to b's iface, send, flush and leave, 300 times: each
 * leaves no ep behind on either side (the DISC of a's destroyed ep frees
 * the ep b made for it; the DISC_REP frees a's zombie), and every message
 * arrives once */
TEST_P(uct_ud, peer_disconnect_frees_its_ep)
{
    const unsigned N     = 300;
    entity *a            = create_entity();
    entity *b            = create_entity();
    am_recorder &rb      = install_recorder(*b, AM_ID);
    unsigned max_private = 0;

    for (unsigned i = 0; i < N; ++i) {
        uct_ep_h ab = a->connect_to(*b);
        ASSERT_TRUE(ab != NULL);
        ASSERT_TRUE(send_short(ab, i));
        flush_ep(*a, ab);
        max_private = std::max(max_private, private_count(*b));
        a->destroy_ep(ab);
    }
    wait_for([&] { return rb.count() == N; }, "every message");
    wait_for([&] { return (ep_count(*a) == 0) && (ep_count(*b) == 0); },
             "both sides without eps");
    EXPECT_EQ(iota(0, N), headers(rb));
    EXPECT_EQ(0u, private_count(*b));
    EXPECT_LE(max_private, 2u);
    uct_ud_enter(ud(*b));
    EXPECT_EQ(N, ud(*b)->stats.disc_rx);
    EXPECT_EQ(0u, ud(*b)->eps.num_private);
    uct_ud_leave(ud(*b));
    uct_ud_enter(ud(*a));
    EXPECT_EQ(0u, ud(*a)->eps.num_zombies);
    uct_ud_leave(ud(*a));

    /* a user's ep stays when its peer's goes: d's ep takes c's
     * connection (both are the first towards the other) */
    entity *c       = create_entity();
    entity *d       = create_entity();
    am_recorder &rd = install_recorder(*d, AM_ID);
    uct_ep_h cd     = c->connect_to(*d);
    ASSERT_TRUE(cd != NULL);
    ASSERT_TRUE(send_short(cd, N));
    flush_ep(*c, cd);
    uct_ep_h dc = d->connect_to(*c);
    ASSERT_TRUE(dc != NULL);
    EXPECT_EQ(0u, private_count(*d)) << "d's ep did not take c's connection";
    EXPECT_EQ(1u, ep_count(*d));
    c->destroy_ep(cd);
    wait_for([&] { return ep_count(*c) == 0; }, "c's zombie gone");
    EXPECT_EQ(1u, ep_count(*d));
    EXPECT_EQ(uct_ud_ep(dc), uct_ud_iface_ep(ud(*d), uct_ud_ep(dc)->id));
    EXPECT_EQ(1u, rd.count());
}

/* MAX_PEER_EPS bounds what peers' requests may create: the requests past
 * it are refused with a line that names the variable, and are taken once
 * a peer's ep has gone */
TEST_P(uct_ud, max_peer_eps_refuses_then_recovers)
{
    entity *a       = create_entity();
    entity *b       = create_entity(params({{"UD_MAX_PEER_EPS", "4"}}));
    am_recorder &rb = install_recorder(*b, AM_ID);
    std::vector<uct_ep_h> eps;

    ucs::scoped_log_capture cap;
    for (unsigned i = 0; i < 6; ++i) {
        eps.push_back(a->connect_to(*b));
        ASSERT_TRUE(eps.back() != NULL);
        ASSERT_TRUE(send_short(eps.back(), i));
    }
    wait_for([&] { return rb.count() == 4; }, "four connections");
    uct_ud_enter(ud(*b));
    uint64_t refused = ud(*b)->stats.creq_refused;
    uct_ud_leave(ud(*b));
    progress_for(100); /* the refused requests are repeated */
    EXPECT_GE(refused, 2u);
    EXPECT_EQ(4u, rb.count());
    EXPECT_EQ(4u, private_count(*b));
    EXPECT_FALSE(connected(*a, eps[4]));
    EXPECT_FALSE(connected(*a, eps[5]));
    EXPECT_GE(lines_with(cap, 0, "raise UCX_UD_MAX_PEER_EPS"), 1u);

    a->destroy_ep(eps[0]);
    a->destroy_ep(eps[1]);
    wait_for([&] { return connected(*a, eps[4]) && connected(*a, eps[5]); },
             "the refused eps connected");
    wait_for([&] { return rb.count() == 6; }, "their messages");
    std::vector<uint64_t> got = headers(rb);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(iota(0, 6), got);
    EXPECT_EQ(4u, private_count(*b));
    close_all();
}

/* The DISC_REP is lost (a's receive queue is full of a stranger's
 * garbage while a's async context is held): a repeats the DISC, b no
 * longer has the ep and drops it, and a's zombie gives up after TIMEOUT */
TEST_P(uct_ud, disconnect_reply_lost_zombie_bounded)
{
    entity *a = create_entity(
        params({{"IB_RX_QUEUE_LEN", "128"}, {"UD_TIMEOUT", "1s"}}));
    entity *b          = create_entity();
    am_recorder &rb    = install_recorder(*b, AM_ID);
    uct_ud_iface_t *ia = ud(*a);
    raw_ud_qp &raw     = raw_qp(*a);

    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    ASSERT_TRUE(send_short(ab, 7));
    flush_ep(*a, ab);
    EXPECT_EQ(1u, rb.count());

    ucs::scoped_log_capture cap;
    uct_ud_enter(ia);
    unsigned posted = ia->rx.posted;
    for (unsigned i = 0; i < posted + 8; ++i) {
        raw.send(dev_addr(*a), iface_qpn(*a), ud_packet(0, 61, i, 0));
    }
    a->destroy_ep(ab);
    EXPECT_EQ(1u, ia->eps.num_zombies);
    double start    = now_sec();
    double deadline = start + 10;
    /* only b progresses: it takes the DISC and answers */
    while ((ep_count(*b) != 0) && (now_sec() < deadline)) {
        b->progress();
    }
    EXPECT_EQ(0u, ep_count(*b));
    usleep(200000); /* the reply reaches a's full queue and is dropped */
    uct_ud_leave(ia);

    wait_for([&] { return ep_count(*a) == 0; }, "a's zombie gone", 10);
    double elapsed = now_sec() - start;
    EXPECT_GE(elapsed, 0.9) << "the reply was not lost";
    EXPECT_LE(elapsed, 3.0);
    uct_ud_enter(ud(*b));
    EXPECT_GE(ud(*b)->stats.rx_stale, 1u) << "the DISC was not repeated";
    uct_ud_leave(ud(*b));
    close_all();
}

/* uct_ep_flush(UCT_FLUSH_FLAG_CANCEL) while the peer does not answer (its
 * async context is held): every outstanding zcopy completes once, in
 * order, with UCS_ERR_CANCELED, the flush is done at once, no error
 * handler runs, and the ep then refuses sends and flushes with
 * UCS_ERR_CANCELED; another ep of the iface carries on */
TEST_P(uct_ud, flush_cancel_completes_everything)
{
    entity *a       = create_entity(params({}, true));
    entity *b       = create_entity();
    am_recorder &rb = install_recorder(*b, AM_ID);
    uct_ep_h ab     = a->connect_to(*b);
    uct_ep_h ab2    = a->connect_to(*b);
    ASSERT_TRUE((ab != NULL) && (ab2 != NULL));
    ASSERT_TRUE(send_short(ab, 0));
    flush_ep(*a, ab);

    const unsigned N = 8;
    mapped_buffer sbuf(64, *a);
    uct_iov_t iov = sbuf.iov(0, 64);
    std::vector<unsigned> order;
    order_comp comps[N];
    uct_ud_enter(ud(*b));
    for (unsigned i = 0; i < N; ++i) {
        comps[i].init(i, &order);
        EXPECT_EQ(UCS_INPROGRESS, (ucs_status_t)retry_no_resource(
                                      [&] {
                                          return (ssize_t)uct_ep_am_zcopy(
                                              ab, AM_ID, NULL, 0, &iov, 1, 0,
                                              &comps[i].uct);
                                      },
                                      "am_zcopy"));
    }
    order_comp fcomp;
    fcomp.init(N, &order);
    ucs_status_t status = uct_ep_flush(ab, UCT_FLUSH_FLAG_CANCEL, &fcomp.uct);
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    uct_ud_leave(ud(*b));

    EXPECT_EQ(0u, fcomp.calls) << "an immediate flush touched its comp";
    for (unsigned i = 0; i < N; ++i) {
        EXPECT_EQ(1u, comps[i].calls) << i;
        EXPECT_EQ(UCS_ERR_CANCELED, comps[i].status)
            << i << ": " << ucs_status_string(comps[i].status);
    }
    EXPECT_EQ(std::vector<unsigned>({0, 1, 2, 3, 4, 5, 6, 7}), order);
    EXPECT_EQ(UCS_ERR_CANCELED, uct_ep_am_short(ab, AM_ID, 1, NULL, 0));
    EXPECT_EQ(UCS_ERR_CANCELED, uct_ep_flush(ab, 0, NULL));

    ASSERT_TRUE(send_short(ab2, 2));
    flush_ep(*a, ab2);
    progress_for(100);
    EXPECT_TRUE(m_errs.calls.empty());
    EXPECT_EQ((size_t)N, order.size()) << "a completion ran twice";
    wait_for([&] { return rb.count() >= 2; }, "the other ep's message");
}

/* The acknowledgement of a's zcopies is taken by a's async timer while a
 * does not progress, so their completions wait for progress; a flush
 * then must not say UCS_OK (it is not done for the user until they ran),
 * and its completion runs after theirs. The same for an iface flush. */
TEST_P(uct_ud, flush_after_async_acknowledgement)
{
    entity *a = create_entity();
    entity *b = create_entity();
    install_recorder(*b, AM_ID);
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    ASSERT_TRUE(send_short(ab, 0));
    flush_ep(*a, ab);

    for (int iface_flush = 0; iface_flush < 2; ++iface_flush) {
        const unsigned N = 4;
        mapped_buffer sbuf(64, *a);
        uct_iov_t iov = sbuf.iov(0, 64);
        std::vector<unsigned> order;
        order_comp comps[N + 1];
        for (unsigned i = 0; i < N; ++i) {
            comps[i].init(i, &order);
            ASSERT_EQ(UCS_INPROGRESS, (ucs_status_t)retry_no_resource(
                                          [&] {
                                              return (ssize_t)uct_ep_am_zcopy(
                                                  ab, AM_ID, NULL, 0, &iov, 1,
                                                  0, &comps[i].uct);
                                          },
                                          "am_zcopy"));
        }
        /* b takes them and acknowledges (its timer at the latest); a's
         * timer takes the acknowledgement */
        double deadline = now_sec() + 10;
        bool acked      = false;
        while (!acked && (now_sec() < deadline)) {
            b->progress();
            uct_ud_enter(ud(*a));
            acked = ucs_queue_is_empty(&uct_ud_ep(ab)->unacked);
            uct_ud_leave(ud(*a));
        }
        ASSERT_TRUE(acked) << "a's async context took no acknowledgement";
        EXPECT_TRUE(order.empty()) << "a completion ran without progress";

        comps[N].init(N, &order);
        ucs_status_t status =
            iface_flush ? uct_iface_flush(a->iface(), 0, &comps[N].uct)
                        : uct_ep_flush(ab, 0, &comps[N].uct);
        EXPECT_EQ(UCS_INPROGRESS, status)
            << (iface_flush ? "iface" : "ep")
            << " flush: " << ucs_status_string(status);
        wait_for([&] { return order.size() == N + 1; }, "the completions");
        EXPECT_EQ(std::vector<unsigned>({0, 1, 2, 3, 4}), order)
            << (iface_flush ? "iface" : "ep") << " flush";
    }
}

/* A peer process is killed while it echoes our messages. The ep to it
 * calls the error handler once with UCS_ERR_ENDPOINT_TIMEOUT within
 * TIMEOUT + 1 s; its outstanding zcopy sends and flush complete with that
 * error, in order; new sends are refused; another ep of the iface keeps
 * working. */
TEST_P(uct_ud, peer_process_killed)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    const double TIMEOUT = 1.0;
    entity *a            = create_entity(params({{"UD_TIMEOUT", "1s"}}, true));
    entity *b            = create_entity();
    uct_ep_h ab          = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    am_recorder &rb   = install_recorder(*b, AM_ID);
    am_recorder &echo = install_recorder(*a, AM_ID);
    EXPECT_EQ(ucs_time_from_sec(TIMEOUT), ud(*a)->config.timeout);

    ASSERT_TRUE(start_peer(*a, m_peer));
    uct_ep_h ap = connect_iface(*a, m_peer.dev_addr, m_peer.iface_addr);

    /* live: 100 echoes, then traffic in flight when it dies */
    for (unsigned i = 0; i < 100; ++i) {
        ASSERT_TRUE(send_short(ap, i));
    }
    ASSERT_TRUE(wait_for([&] { return echo.count() == 100; }, "echoes"));
    EXPECT_EQ(iota(0, 100), headers(echo));
    ASSERT_TRUE(send_short(ab, 0));
    EXPECT_EQ(2u, ep_count(*a)) << "one ep to the peer process";

    for (unsigned i = 100; i < 120; ++i) {
        ASSERT_TRUE(send_short(ap, i));
    }
    double killed = now_sec();
    ib_peer::kill_and_wait(m_peer);

    mapped_buffer sbuf(256, *a);
    uct_iov_t iov            = sbuf.iov(0, 256);
    const unsigned NUM_ZCOPY = 4;
    std::vector<unsigned> order;
    order_comp comps[NUM_ZCOPY + 1];
    for (unsigned i = 0; i < NUM_ZCOPY; ++i) {
        comps[i].init(i, &order);
        EXPECT_EQ(UCS_INPROGRESS, (ucs_status_t)retry_no_resource(
                                      [&] {
                                          return (ssize_t)uct_ep_am_zcopy(
                                              ap, AM_ID, NULL, 0, &iov, 1, 0,
                                              &comps[i].uct);
                                      },
                                      "am_zcopy"));
    }
    comps[NUM_ZCOPY].init(NUM_ZCOPY, &order);
    EXPECT_EQ(UCS_INPROGRESS, uct_ep_flush(ap, 0, &comps[NUM_ZCOPY].uct));

    wait_for([&] { return m_errs.count(ap) > 0; }, "the error handler", 30);
    double elapsed = m_errs.times.empty() ? -1 : m_errs.times[0] - killed;
    EXPECT_LE(elapsed, TIMEOUT + 1.0);
    progress_for(1500); /* no second call */
    EXPECT_EQ(1u, m_errs.count(ap));
    EXPECT_EQ(1u, m_errs.calls.size());
    if (UCT_IFACE_STATS_ENABLED) {
        /* counted once, as the handler is called once */
        EXPECT_EQ(1u, uct_base_iface(a->iface())->stats.peer_failures);
    }
    ASSERT_FALSE(m_errs.calls.empty());
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, m_errs.calls[0].second)
        << ucs_status_string(m_errs.calls[0].second);
    for (unsigned i = 0; i <= NUM_ZCOPY; ++i) {
        EXPECT_EQ(1u, comps[i].calls) << i;
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, comps[i].status)
            << i << ": " << ucs_status_string(comps[i].status);
    }
    EXPECT_EQ(std::vector<unsigned>({0, 1, 2, 3, 4}), order);
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_am_short(ap, AM_ID, 0, NULL, 0));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_flush(ap, 0, NULL))
        << "flush of a failed ep";

    ASSERT_TRUE(send_short(ab, 1));
    wait_for([&] { return rb.count() == 2; }, "a message on another ep");
    EXPECT_EQ(iota(0, 2), headers(rb));
    EXPECT_EQ(1u, m_errs.calls.size());
    std::cout << "[ INFO     ] killed peer: error handler after " << elapsed
              << " s (UD_TIMEOUT " << TIMEOUT << " s)" << std::endl;
}

/* A peer process stopped for half of TIMEOUT and continued: no error;
 * every message and every echo arrives once, in order (the messages
 * sent meanwhile are sent again). TIMEOUT is 4 s: the emulated VM of
 * test/rxe can stall a process for a second or more. */
TEST_P(uct_ud, peer_process_stopped_and_continued)
{
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "starts this binary again";
    }
    const double TIMEOUT = 4.0, STOP = TIMEOUT / 2;
    const unsigned N  = 600;
    entity *a         = create_entity(params({{"UD_TIMEOUT", "4s"}}, true));
    am_recorder &echo = install_recorder(*a, AM_ID);

    ASSERT_TRUE(start_peer(*a, m_peer));
    uct_ep_h ap     = connect_iface(*a, m_peer.dev_addr, m_peer.iface_addr);
    ud_stats before = stats(*a);

    /* the peer is continued from a thread, on time even when a progress
     * call takes long */
    unsigned sent     = 0;
    double stopped_at = 0, continued_at = 0;
    pid_t pid = m_peer.pid;
    std::thread waker;
    double deadline = now_sec() + 60;
    while ((echo.count() < N) && (now_sec() < deadline)) {
        if (!waker.joinable() && (sent == N / 3)) {
            kill(pid, SIGSTOP);
            stopped_at = now_sec();
            waker      = std::thread([&continued_at, pid, STOP] {
                usleep((useconds_t)(STOP * 1e6));
                kill(pid, SIGCONT);
                continued_at = now_sec();
            });
        }
        if ((sent < N) &&
            (uct_ep_am_short(ap, AM_ID, sent, NULL, 0) == UCS_OK)) {
            ++sent;
        }
        progress();
    }
    if (waker.joinable()) {
        waker.join();
    }
    double stopped_for = continued_at - stopped_at;
    progress_for(200);
    ud_stats after = stats(*a);

    EXPECT_EQ(N, sent);
    EXPECT_EQ(iota(0, N), headers(echo));
    EXPECT_TRUE(m_errs.calls.empty());
    EXPECT_GE(stopped_for, STOP);
    EXPECT_GT(after.tx_resent, before.tx_resent) << "nothing was sent again";
    std::cout << "[ INFO     ] peer stopped for " << stopped_for
              << " s: " << after.tx_resent - before.tx_resent
              << " packets resent, " << after.rx_dup - before.rx_dup
              << " duplicates here" << std::endl;
}

/* Without an error handler a failed ep is one error line (per ep), not an
 * abort: an ep whose peer iface closed with data outstanding, and one
 * whose connection request is never answered. Both refuse new sends with
 * UCS_ERR_ENDPOINT_TIMEOUT. */
TEST_P(uct_ud, failure_without_handler_one_line)
{
    auto p    = params({{"UD_TIMEOUT", "1s"}, {"FAILURE", "error"}});
    entity *a = create_entity(p);
    std::unique_ptr<entity> b(new entity(res(), entity_params()));
    std::unique_ptr<entity> c(new entity(res(), entity_params()));
    uct_ep_h ab = a->connect_to(*b);
    ASSERT_TRUE(ab != NULL);
    ASSERT_TRUE(wait_for(
        [&] {
            b->progress();
            return connected(*a, ab);
        },
        "the connection"));
    std::vector<char> c_dev = c->dev_addr(), c_iface = c->iface_addr();
    b.reset();
    c.reset();

    ucs::scoped_log_capture cap;
    size_t first = cap.messages().size();
    uct_ep_h ac  = connect_iface(*a, c_dev, c_iface);
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ab, AM_ID, 1, NULL, 0));
    wait_for(
        [&] {
            return (ep_flags(*a, ab) & UCT_UD_EP_FLAG_FAILED) &&
                   (ep_flags(*a, ac) & UCT_UD_EP_FLAG_FAILED);
        },
        "both eps failed");
    progress_for(1500);

    const std::vector<std::string> &msgs = cap.messages();
    std::string timeout = ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT);
    EXPECT_EQ(first + 2, msgs.size());
    char ptr[2][32];
    snprintf(ptr[0], sizeof(ptr[0]), "%p", (void *)ab);
    snprintf(ptr[1], sizeof(ptr[1]), "%p", (void *)ac);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(1u, lines_with(cap, first,
                                 std::string("endpoint ") + ptr[i] + " failed"))
            << ptr[i];
    }
    EXPECT_EQ(2u, lines_with(cap, first, timeout));
    for (size_t i = first; i < msgs.size(); ++i) {
        EXPECT_EQ(0u, msgs[i].find("error ")) << msgs[i];
    }
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_am_short(ab, AM_ID, 2, NULL, 0));
    EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, uct_ep_am_short(ac, AM_ID, 2, NULL, 0));
}

/* ------------------------------------------------------------------------
 * Scale
 */

/* Ten thousand eps of one iface connect to another's iface: every request
 * is answered (one private ep each on the other side), one message on
 * each ep arrives, and once they are destroyed no ep is left on either
 * side. Prints the time per connect and the heap per ep. */
TEST_P(uct_ud, ten_thousand_endpoints)
{
    /* what it measures is the transport's, not the device's: the first
     * ud_verbs device is enough (the VM's devices are all rxe) */
    if (res().dev_name != ud_verbs_resources().front().dev_name) {
        GTEST_SKIP() << "runs on the first ud_verbs device only";
    }
    unsigned N      = ucs::test_scale(10000);
    const char *env = getenv("OPENUCT_TEST_UD_EPS");
    if (env != NULL) {
        N = (unsigned)atoi(env);
    }
    entity *a          = create_entity(params({}, true));
    entity *b          = create_entity(params({}, true));
    am_recorder &rec   = install_recorder(*b, AM_ID);
    uct_ud_iface_t *ia = ud(*a);
    std::vector<uct_ep_h> eps;

    size_t heap_before = mallinfo2().uordblks;
    double t0          = now_sec();
    for (unsigned i = 0; i < N; ++i) {
        eps.push_back(a->connect_to(*b));
        ASSERT_TRUE(eps.back() != NULL) << i;
    }
    double t_create = now_sec() - t0;
    wait_for(
        [&] {
            uct_ud_enter(ia);
            bool done = ucs_list_is_empty(&ia->active);
            uct_ud_leave(ia);
            return done;
        },
        "every connection", 100);
    double t_connect       = now_sec() - t0;
    size_t heap_after      = mallinfo2().uordblks;
    unsigned connected_eps = 0;
    for (uct_ep_h ep : eps) {
        connected_eps += connected(*a, ep);
    }
    EXPECT_EQ(N, connected_eps);
    EXPECT_EQ(N, ep_count(*b));
    EXPECT_EQ(N, private_count(*b));

    t0 = now_sec();
    for (unsigned i = 0; i < N; ++i) {
        ASSERT_TRUE(send_short(eps[i], i));
    }
    wait_for([&] { return rec.count() == N; }, "a message on every ep", 60);
    flush_iface(*a);
    double t_send             = now_sec() - t0;
    std::vector<uint64_t> got = headers(rec);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(iota(0, N), got);
    EXPECT_TRUE(m_errs.calls.empty());

    t0 = now_sec();
    a->destroy_eps();
    double t_destroy = now_sec() - t0;
    /* each destroyed ep tells b, which frees the ep it made for it */
    wait_for([&] { return (ep_count(*a) == 0) && (ep_count(*b) == 0); },
             "every ep gone on both sides", 60);
    double t_disc = now_sec() - t0;
    EXPECT_EQ(0u, ep_count(*a));
    EXPECT_EQ(0u, ep_count(*b));
    std::cout << "[ INFO     ] " << N << " eps: create " << t_create
              << " s, all connected " << t_connect << " s ("
              << t_connect / N * 1e6 << " us per connect), send+flush "
              << t_send << " s, destroy " << t_destroy << " s, gone on "
              << "both sides after " << t_disc << " s; heap "
              << (ssize_t)(heap_after - heap_before) / (ssize_t)N
              << " bytes per ep (both sides), " << stats(*a).tx_resent
              << " resent" << std::endl;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(uct_ud);
INSTANTIATE_TEST_SUITE_P(, uct_ud, testing::ValuesIn(ud_verbs_resources()),
                         uct_test::resource_name);
