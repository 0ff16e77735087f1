/*
 * The posix and sysv transports beyond the shared suites: many sender
 * processes into one FIFO, a full FIFO and the pending queue, descriptors
 * kept by handlers beyond the spare ones, the owner bit over many wraps
 * and across 2^32 element numbers, hostile writers of the FIFO, a peer
 * killed with messages pending, nothing left behind by killed processes,
 * a tmpfs too small, reachability checks and the heap of an endpoint.
 *
 * Peer processes are this binary started again (test_peer::start) with
 * OPENUCT_MM_PEER_FD set; they open their own interface with the raw API.
 */
#include "../uct_test.h"
#include "../peer_process.h"

extern "C" {
#include <uct/sm/mm/mm.h>
#include <ucs/sys/sys.h>
#include <ucs/vfs/vfs.h>
}

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <poll.h>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

const char *PEER_FD_ENV = "OPENUCT_MM_PEER_FD";
const uint8_t AM_ID     = 7;

/* What a sender process puts in each message */
struct seq_msg {
    uint32_t sender;
    uint32_t seq;
};

/* ------------------------------------------------------------------------
 * The peer process: its own md, worker and interface of one transport
 */

struct raw_iface {
    uct_component_h component  = nullptr;
    uct_md_h md                = nullptr;
    ucs_async_context_t *async = nullptr;
    uct_worker_h worker        = nullptr;
    uct_iface_h iface          = nullptr;

    bool open(const std::string &tl)
    {
        uct_md_config_t *md_config;
        uct_iface_config_t *config;
        uct_iface_params_t params;

        component = test_peer::find_component(tl.c_str());
        if ((component == nullptr) ||
            (uct_md_config_read(component, NULL, NULL, &md_config) != UCS_OK)) {
            return false;
        }
        ucs_status_t status =
            uct_md_open(component, tl.c_str(), md_config, &md);
        uct_config_release(md_config);
        if ((status != UCS_OK) ||
            (ucs_async_context_create(UCS_ASYNC_MODE_POLL, &async) != UCS_OK) ||
            (uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) !=
             UCS_OK) ||
            (uct_md_iface_config_read(md, tl.c_str(), NULL, NULL, &config) !=
             UCS_OK)) {
            return false;
        }
        memset(&params, 0, sizeof(params));
        params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = tl.c_str();
        params.mode.device.dev_name = "memory";
        status = uct_iface_open(md, worker, &params, config, &iface);
        uct_config_release(config);
        if (status != UCS_OK) {
            return false;
        }
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
        return true;
    }

    uct_ep_h connect(const std::vector<char> &dev,
                     const std::vector<char> &addr)
    {
        uct_ep_params_t params;
        uct_ep_h ep;

        memset(&params, 0, sizeof(params));
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                            UCT_EP_PARAM_FIELD_DEV_ADDR |
                            UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.iface      = iface;
        params.dev_addr   = (const uct_device_addr_t *)dev.data();
        params.iface_addr = (const uct_iface_addr_t *)addr.data();
        return (uct_ep_create(&params, &ep) == UCS_OK) ? ep : nullptr;
    }

    bool send_addresses(int fd)
    {
        uct_iface_attr_t attr;

        if (uct_iface_query(iface, &attr) != UCS_OK) {
            return false;
        }
        std::vector<char> dev(attr.device_addr_len), addr(attr.iface_addr_len);
        return (uct_iface_get_device_address(
                    iface, (uct_device_addr_t *)dev.data()) == UCS_OK) &&
               (uct_iface_get_address(iface, (uct_iface_addr_t *)addr.data()) ==
                UCS_OK) &&
               test_peer::fd_write_blob(fd, dev.data(), dev.size()) &&
               test_peer::fd_write_blob(fd, addr.data(), addr.size());
    }
};

size_t pack_seq(void *dest, void *arg)
{
    memcpy(dest, arg, sizeof(seq_msg));
    return sizeof(seq_msg);
}

/* Sends @a count messages {id, seq} to the peer whose addresses follow */
int peer_sender(raw_iface &r, int fd, uint32_t id, uint32_t count)
{
    std::vector<char> dev, addr;

    if (!test_peer::fd_read_blob(fd, dev, 10000) ||
        !test_peer::fd_read_blob(fd, addr, 10000)) {
        return 2;
    }
    uct_ep_h ep = r.connect(dev, addr);
    if (ep == nullptr) {
        return 3;
    }
    for (uint32_t seq = 0; seq < count;) {
        seq_msg msg = {id, seq};
        ucs_status_t status;
        if (seq % 4 == 3) {
            ssize_t len = uct_ep_am_bcopy(ep, AM_ID, pack_seq, &msg, 0);
            status      = (len < 0) ? (ucs_status_t)len : UCS_OK;
        } else {
            uint64_t header;
            memcpy(&header, &msg, sizeof(header));
            status = uct_ep_am_short(ep, AM_ID, header, NULL, 0);
        }
        if (status == UCS_OK) {
            ++seq;
        } else if (status == UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(r.worker);
        } else {
            return 4;
        }
    }
    char done = 'd';
    return (write(fd, &done, 1) == 1) ? 0 : 5;
}

/* Writes into the FIFO of the peer whose addresses follow, as a process
 * of the same user can: @a kind says what */
int peer_hostile(raw_iface &r, int fd, const std::string &kind)
{
    std::vector<char> dev, addr;

    if (!test_peer::fd_read_blob(fd, dev, 10000) ||
        !test_peer::fd_read_blob(fd, addr, 10000)) {
        return 2;
    }
    uct_ep_h ep = r.connect(dev, addr);
    if (ep == nullptr) {
        return 3;
    }

    uct_mm_fifo_view_t *fifo =
        &ucs_container_of(ep, uct_mm_ep_t, super.super)->remote->fifo;
    std::mt19937_64 rng(getpid());
    if (kind == "random") {
        /* every byte of every element, many times over */
        for (int round = 0; round < 200; ++round) {
            for (uint32_t i = 0; i <= fifo->mask; ++i) {
                uint64_t *p = (uint64_t *)uct_mm_fifo_elem(fifo, i);
                for (size_t w = 0; w < fifo->elem_size / 8; ++w) {
                    p[w] = rng();
                }
            }
        }
    } else if (kind == "claim") {
        /* dies between claiming an element and writing it */
        uint64_t index;
        int wake;
        if (!uct_mm_fifo_claim(fifo, &index, &wake)) {
            return 6;
        }
        char done = 'd';
        if (write(fd, &done, 1) != 1) {
            return 5;
        }
        for (;;) {
            pause();
        }
    } else {
        /* well-formed claims with a bad field: a huge length, an AM id
         * out of range, a descriptor number out of range */
        for (int n = 0; n < 3; ++n) {
            uint64_t index;
            int wake;
            if (!uct_mm_fifo_claim(fifo, &index, &wake)) {
                return 6;
            }
            uct_mm_fifo_elem_t *elem = uct_mm_fifo_elem(fifo, index);
            elem->am_id              = AM_ID;
            elem->length             = 32;
            uint8_t flags            = UCT_MM_FIFO_ELEM_INLINE;
            if (kind == "length") {
                elem->length = (n == 0) ? UINT32_MAX : (1u << 20);
                flags =
                    (n == 2) ? UCT_MM_FIFO_ELEM_DESC : UCT_MM_FIFO_ELEM_INLINE;
            } else if (kind == "am_id") {
                elem->am_id = 200 + n;
            } else if (kind == "desc") {
                flags = 0; /* nothing to deliver */
                /* the next sender to claim each element reads this */
                for (uint32_t i = 0; i <= fifo->mask; ++i) {
                    uct_mm_fifo_elem(fifo, i)->desc = 0xfffffff0u + n;
                }
            }
            uct_mm_fifo_publish(fifo, elem, index, flags);
        }
    }
    char done = 'd';
    return (write(fd, &done, 1) == 1) ? 0 : 5;
}

int peer_main(int fd)
{
    const char *tl   = getenv("OPENUCT_MM_PEER_TL");
    const char *mode = getenv("OPENUCT_MM_PEER_MODE");
    raw_iface r;

    if ((tl == nullptr) || (mode == nullptr) || !r.open(tl)) {
        return 1;
    }

    std::string m(mode);
    if (m == "receiver") {
        /* announces itself and waits to be killed, never reading */
        if (!r.send_addresses(fd)) {
            return 2;
        }
        for (;;) {
            pause();
        }
    } else if (m.rfind("sender:", 0) == 0) {
        unsigned id, count;
        if (sscanf(m.c_str(), "sender:%u:%u", &id, &count) != 2) {
            return 1;
        }
        return peer_sender(r, fd, id, count);
    } else if (m.rfind("hostile:", 0) == 0) {
        return peer_hostile(r, fd, m.substr(8));
    }
    return 1;
}

test_peer::main_registrar peer_registrar(PEER_FD_ENV, peer_main);

/* Process-wide error handler calls of the test */
struct err_record {
    unsigned calls      = 0;
    ucs_status_t status = UCS_OK;
    uct_ep_h ep         = nullptr;
};

ucs_status_t record_error(void *arg, uct_ep_h ep, ucs_status_t status)
{
    err_record *rec = static_cast<err_record *>(arg);
    ++rec->calls;
    rec->status = status;
    rec->ep     = ep;
    return UCS_OK;
}

std::vector<resource> mm_resources()
{
    std::vector<resource> v;
    for (const resource &r : uct_test::enum_resources()) {
        if ((r.tl_name == "posix") || (r.tl_name == "sysv")) {
            v.push_back(r);
        }
    }
    return v;
}

} // namespace

class test_mm : public uct_test {
protected:
    struct received {
        std::vector<uint32_t> next; /* per sender */
        uint64_t total  = 0;
        uint64_t errors = 0;
        std::vector<void *> kept;
        bool keep = false;
    };

    static ucs_status_t seq_handler(void *arg, void *data, size_t length,
                                    unsigned flags)
    {
        received *rx = static_cast<received *>(arg);
        seq_msg msg;

        if (length != sizeof(msg)) {
            ++rx->errors;
            return UCS_OK;
        }
        memcpy(&msg, data, sizeof(msg));
        if ((msg.sender >= rx->next.size()) ||
            (msg.seq != rx->next[msg.sender])) {
            ++rx->errors;
        } else {
            ++rx->next[msg.sender];
        }
        ++rx->total;
        if (rx->keep && (flags & UCT_CB_PARAM_FLAG_DESC)) {
            rx->kept.push_back(data);
            return UCS_INPROGRESS;
        }
        return UCS_OK;
    }

    entity_params
    config(std::vector<std::pair<std::string, std::string>> cfg = {}) const
    {
        entity_params p;
        p.config = cfg;
        return p;
    }

    std::vector<char> iface_address(const entity &e) const
    {
        std::vector<char> addr(e.iface_attr().iface_addr_len);
        EXPECT_EQ(UCS_OK, uct_iface_get_address(
                              e.iface(), (uct_iface_addr_t *)addr.data()));
        return addr;
    }

    std::vector<char> device_address(const entity &e) const
    {
        std::vector<char> dev(e.iface_attr().device_addr_len);
        EXPECT_EQ(UCS_OK, uct_iface_get_device_address(
                              e.iface(), (uct_device_addr_t *)dev.data()));
        return dev;
    }

    bool start_peer(const std::string &mode, test_peer::process &peer)
    {
        std::string error;
        bool ok = test_peer::start(PEER_FD_ENV,
                                   {"OPENUCT_MM_PEER_TL=" + GetParam().tl_name,
                                    "OPENUCT_MM_PEER_MODE=" + mode},
                                   peer, error);
        EXPECT_TRUE(ok) << error;
        return ok;
    }

    void send_addresses(const entity &e, const test_peer::process &peer)
    {
        std::vector<char> dev = device_address(e), addr = iface_address(e);
        ASSERT_TRUE(
            test_peer::fd_write_blob(peer.sock, dev.data(), dev.size()));
        ASSERT_TRUE(
            test_peer::fd_write_blob(peer.sock, addr.data(), addr.size()));
    }

    /* Waits for the one-byte "done" of a peer while progressing @a e */
    bool wait_peer_done(entity &e, const test_peer::process &peer,
                        double timeout = DEFAULT_TIMEOUT)
    {
        bool done = false;
        wait_for(
            [&] {
                e.progress();
                struct pollfd pfd = {peer.sock, POLLIN, 0};
                if (poll(&pfd, 1, 0) == 1) {
                    char c;
                    done = (read(peer.sock, &c, 1) == 1) && (c == 'd');
                    return true;
                }
                return false;
            },
            "the peer process", timeout);
        return done;
    }

    uct_mm_iface_t *mm_iface(const entity &e) const
    {
        return uct_mm_iface(e.iface());
    }

    void hostile_fields_dropped(const char *kind);
};

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(test_mm);
INSTANTIATE_TEST_SUITE_P(, test_mm, testing::ValuesIn(mm_resources()),
                         uct_test::resource_name);

/* 16 processes send into one FIFO at once: every message arrives once
 * and in order per sender */
TEST_P(test_mm, sixteen_sender_processes)
{
    const unsigned senders = 16, count = 3000;
    entity &rx_e = *create_entity(config());
    received rx;
    rx.next.resize(senders, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));

    std::vector<test_peer::process> peers(senders);
    for (unsigned i = 0; i < senders; ++i) {
        ASSERT_TRUE(start_peer("sender:" + std::to_string(i) + ":" +
                                   std::to_string(count),
                               peers[i]));
        send_addresses(rx_e, peers[i]);
    }

    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= senders * count;
        },
        "messages of 16 senders", 60.0);
    EXPECT_EQ(0u, rx.errors);
    for (unsigned i = 0; i < senders; ++i) {
        EXPECT_EQ(count, rx.next[i]) << "sender " << i;
        test_peer::stop(peers[i]);
    }
    EXPECT_EQ(0u, mm_iface(rx_e)->rx_bad);
}

/* A FIFO of two elements run 100000 times round: the owner bit flips on
 * every wrap, and nothing is lost or repeated */
TEST_P(test_mm, small_fifo_wraps_many_times)
{
    entity &rx_e = *create_entity(config({{"FIFO_SIZE", "2"}}));
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));
    uct_ep_h ep = tx_e.connect_to(rx_e);

    const uint32_t count = 100000;
    unsigned full        = 0;
    for (uint32_t seq = 0; seq < count;) {
        seq_msg msg = {0, seq};
        uint64_t header;
        memcpy(&header, &msg, sizeof(header));
        ucs_status_t status = uct_ep_am_short(ep, AM_ID, header, NULL, 0);
        if (status == UCS_OK) {
            ++seq;
        } else {
            ASSERT_EQ(UCS_ERR_NO_RESOURCE, status);
            ++full;
            rx_e.progress();
        }
    }
    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= count;
        },
        "messages");
    EXPECT_EQ(count, rx.next[0]);
    EXPECT_EQ(0u, rx.errors);
    EXPECT_GT(full, 0u) << "the FIFO of 2 never filled";
    EXPECT_EQ(count, mm_iface(rx_e)->rx.read_index);
}

/* Element numbers cross 2^32 (the seq field wraps, the owner bit goes
 * on): a fresh FIFO is moved to just below it */
TEST_P(test_mm, element_numbers_cross_2_pow_32)
{
    entity &rx_e = *create_entity(config({{"FIFO_SIZE", "8"}}));
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));

    /* as if 2^32 - 20 messages had gone through */
    uct_mm_fifo_rx_t *frx = &mm_iface(rx_e)->rx;
    uint64_t start        = (1ull << 32) - 20;
    for (uint64_t i = start - 8; i < start; ++i) {
        uct_mm_fifo_elem_t *elem = uct_mm_fifo_elem(&frx->view, i);
        elem->flags              = uct_mm_fifo_owner(&frx->view, i);
        elem->seq                = (uint32_t)i;
    }
    frx->view.ctl->head = frx->view.ctl->tail = start;
    frx->read_index = frx->published = start;

    uct_ep_h ep = tx_e.connect_to(rx_e);
    for (uint32_t seq = 0; seq < 1000;) {
        seq_msg msg = {0, seq};
        ssize_t len = uct_ep_am_bcopy(ep, AM_ID, pack_seq, &msg, 0);
        if (len == (ssize_t)sizeof(msg)) {
            ++seq;
        } else {
            ASSERT_EQ((ssize_t)UCS_ERR_NO_RESOURCE, len);
            rx_e.progress();
        }
    }
    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= 1000;
        },
        "messages");
    EXPECT_EQ(1000u, rx.next[0]);
    EXPECT_EQ(0u, rx.errors);
    EXPECT_EQ(start + 1000, frx->read_index);
}

/* A full FIFO refuses sends; the pending request runs once the receiver
 * frees elements, in order */
TEST_P(test_mm, full_fifo_pending_resumes)
{
    entity &rx_e = *create_entity(config({{"FIFO_SIZE", "4"}}));
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));
    uct_ep_h ep = tx_e.connect_to(rx_e);

    struct pending_send {
        uct_pending_req_t req;
        uct_ep_h ep;
        uint32_t seq;
        unsigned runs;
    };
    static auto send_cb = [](uct_pending_req_t *self) -> ucs_status_t {
        pending_send *p = ucs_container_of(self, pending_send, req);
        seq_msg msg     = {0, p->seq};
        uint64_t header;
        memcpy(&header, &msg, sizeof(header));
        ++p->runs;
        return uct_ep_am_short(p->ep, AM_ID, header, NULL, 0);
    };

    uint32_t seq = 0;
    while (true) {
        seq_msg msg = {0, seq};
        uint64_t header;
        memcpy(&header, &msg, sizeof(header));
        ucs_status_t status = uct_ep_am_short(ep, AM_ID, header, NULL, 0);
        if (status == UCS_ERR_NO_RESOURCE) {
            break;
        }
        ASSERT_EQ(UCS_OK, status);
        ++seq;
    }
    EXPECT_EQ(4u, seq);

    pending_send p;
    p.req.func = send_cb;
    p.ep       = ep;
    p.seq      = seq;
    p.runs     = 0;
    ASSERT_EQ(UCS_OK, uct_ep_pending_add(ep, &p.req, 0));
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, uct_ep_flush(ep, 0, NULL));

    /* the sender's progress alone cannot free room */
    for (int i = 0; i < 100; ++i) {
        tx_e.progress();
    }
    EXPECT_EQ(0u, rx.total);

    wait_for(
        [&] {
            rx_e.progress();
            tx_e.progress();
            return rx.total >= seq + 1;
        },
        "the pending message");
    EXPECT_EQ(seq + 1, rx.next[0]);
    EXPECT_EQ(0u, rx.errors);
    EXPECT_GE(p.runs, 1u);
    EXPECT_EQ(UCS_OK, uct_ep_flush(ep, 0, NULL));
}

/* Handlers keep more descriptors than there are spares: the rest arrive
 * as private copies, every byte right, and the spares come back */
TEST_P(test_mm, kept_descriptors_beyond_spares)
{
    entity &rx_e =
        *create_entity(config({{"FIFO_SIZE", "4"}, {"RX_MAX_BUFS", "6"}}));
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    rx.keep = true;
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));
    uct_ep_h ep = tx_e.connect_to(rx_e);

    auto send_bcopy = [&](uint32_t from, uint32_t to) {
        for (uint32_t seq = from; seq < to;) {
            seq_msg msg = {0, seq};
            ssize_t len = uct_ep_am_bcopy(ep, AM_ID, pack_seq, &msg, 0);
            if (len == (ssize_t)sizeof(msg)) {
                ++seq;
            } else {
                ASSERT_EQ((ssize_t)UCS_ERR_NO_RESOURCE, len);
                rx_e.progress();
            }
        }
        wait_for(
            [&] {
                rx_e.progress();
                return rx.total >= to;
            },
            "messages");
    };

    send_bcopy(0, 20);
    EXPECT_EQ(20u, rx.next[0]);
    EXPECT_EQ(0u, rx.errors);
    EXPECT_EQ(20u, rx.kept.size());
    EXPECT_EQ(0u, mm_iface(rx_e)->rx.num_free) << "spares left";
    EXPECT_GE(mm_iface(rx_e)->rx_copied, 20u - 2u);

    /* every kept descriptor still holds its message */
    for (size_t i = 0; i < rx.kept.size(); ++i) {
        seq_msg msg;
        memcpy(&msg, rx.kept[i], sizeof(msg));
        EXPECT_EQ(i, msg.seq);
        uct_iface_release_desc((char *)rx.kept[i] - rx_e.rx_headroom());
    }
    rx.kept.clear();
    EXPECT_EQ(2u, mm_iface(rx_e)->rx.num_free);

    uint64_t copied = mm_iface(rx_e)->rx_copied;
    rx.keep         = false;
    send_bcopy(20, 40);
    EXPECT_EQ(40u, rx.next[0]);
    EXPECT_EQ(copied, mm_iface(rx_e)->rx_copied) << "copies after release";
}

/* A process that writes random bytes over every element while the
 * receiver runs: nothing of it is delivered and later messages are */
TEST_P(test_mm, hostile_random_bytes)
{
    ucs::scoped_log_capture cap;
    entity &rx_e = *create_entity(config());
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));

    test_peer::process peer;
    ASSERT_TRUE(start_peer("hostile:random", peer));
    send_addresses(rx_e, peer);
    EXPECT_TRUE(wait_peer_done(rx_e, peer));
    test_peer::stop(peer);

    /* the descriptor numbers were overwritten too: a sender refuses
     * those (at most once per element: the receiver rewrites them) */
    uct_ep_h ep     = tx_e.connect_to(rx_e);
    unsigned errors = 0;
    for (uint32_t seq = 0; seq < 500;) {
        seq_msg msg = {0, seq};
        ssize_t len = uct_ep_am_bcopy(ep, AM_ID, pack_seq, &msg, 0);
        if (len == (ssize_t)sizeof(msg)) {
            ++seq;
        } else if (len == (ssize_t)UCS_ERR_IO_ERROR) {
            ++errors;
        } else {
            ASSERT_EQ((ssize_t)UCS_ERR_NO_RESOURCE, len);
        }
        rx_e.progress();
    }
    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= 500;
        },
        "messages");
    EXPECT_EQ(500u, rx.next[0]);
    EXPECT_EQ(0u, rx.errors) << "garbage was delivered";
    EXPECT_LE(errors, mm_iface(rx_e)->rx.view.mask + 1);
    m_entities.clear();
}

/* Well-formed claims with a bad field: dropped with a rate-limited
 * warning, the receiver alive, good messages delivered after them */
void test_mm::hostile_fields_dropped(const char *kind)
{
    {
        entity &rx_e = *create_entity(config());
        entity &tx_e = *create_entity(config());
        received rx;
        rx.next.resize(1, 0);
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID,
                                                   seq_handler, &rx, 0));

        ucs::scoped_log_capture cap;
        test_peer::process peer;
        ASSERT_TRUE(start_peer(std::string("hostile:") + kind, peer));
        send_addresses(rx_e, peer);
        EXPECT_TRUE(wait_peer_done(rx_e, peer));
        test_peer::stop(peer);
        wait_for(
            [&] {
                rx_e.progress();
                return mm_iface(rx_e)->rx_bad >= 3;
            },
            "the bad elements");

        uct_ep_h ep = tx_e.connect_to(rx_e);
        for (uint32_t seq = 0; seq < 100;) {
            seq_msg msg = {0, seq};
            uint64_t header;
            memcpy(&header, &msg, sizeof(header));
            if (uct_ep_am_short(ep, AM_ID, header, NULL, 0) == UCS_OK) {
                ++seq;
            }
            rx_e.progress();
        }
        wait_for(
            [&] {
                rx_e.progress();
                return rx.total >= 100;
            },
            "messages");
        EXPECT_EQ(100u, rx.next[0]);
        EXPECT_EQ(0u, rx.errors);
        EXPECT_EQ(3u, mm_iface(rx_e)->rx_bad);
        size_t lines = std::count_if(
            cap.messages().begin(), cap.messages().end(),
            [](const std::string &m) {
                return m.find("malformed FIFO element") != std::string::npos;
            });
        std::string all;
        for (const std::string &m : cap.messages()) {
            all += m + "\n";
        }
        EXPECT_EQ(1u, lines) << "the warning is rate limited:\n" << all;
        m_entities.clear();
    }
}

TEST_P(test_mm, hostile_huge_length_dropped)
{
    hostile_fields_dropped("length");
}

TEST_P(test_mm, hostile_am_id_dropped)
{
    hostile_fields_dropped("am_id");
}

/* A descriptor number out of range in the elements: a sender refuses to
 * write where it points, and the receiver rewrites the right one */
TEST_P(test_mm, hostile_descriptor_number)
{
    entity &rx_e = *create_entity(config({{"FIFO_SIZE", "8"}}));
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));

    ucs::scoped_log_capture cap;
    test_peer::process peer;
    ASSERT_TRUE(start_peer("hostile:desc", peer));
    send_addresses(rx_e, peer);
    EXPECT_TRUE(wait_peer_done(rx_e, peer));
    test_peer::stop(peer);

    uct_ep_h ep     = tx_e.connect_to(rx_e);
    unsigned errors = 0;
    for (uint32_t seq = 0; seq < 200;) {
        seq_msg msg = {0, seq};
        ssize_t len = uct_ep_am_bcopy(ep, AM_ID, pack_seq, &msg, 0);
        if (len == (ssize_t)sizeof(msg)) {
            ++seq;
        } else if (len == (ssize_t)UCS_ERR_IO_ERROR) {
            ++errors;
        } else {
            ASSERT_EQ((ssize_t)UCS_ERR_NO_RESOURCE, len);
        }
        rx_e.progress();
    }
    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= 200;
        },
        "messages");
    EXPECT_EQ(200u, rx.next[0]);
    EXPECT_EQ(0u, rx.errors);
    EXPECT_GT(errors, 0u) << "no sender saw the bad descriptor numbers";
    EXPECT_LE(errors, 8u) << "the receiver did not rewrite them";
    EXPECT_TRUE(cap.contains("names descriptor"));
    m_entities.clear();
}

/* The receiver process is killed while messages wait in the pending
 * queue: the error handler runs once, and sends fail after it */
TEST_P(test_mm, peer_killed_with_pending)
{
    err_record err;
    entity_params params   = config();
    params.err_handler     = record_error;
    params.err_handler_arg = &err;
    entity &tx_e           = *create_entity(params);

    test_peer::process peer;
    ASSERT_TRUE(start_peer("receiver", peer));
    std::vector<char> dev, addr;
    ASSERT_TRUE(test_peer::fd_read_blob(peer.sock, dev, 10000));
    ASSERT_TRUE(test_peer::fd_read_blob(peer.sock, addr, 10000));

    uct_ep_params_t ep_params;
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = tx_e.iface();
    ep_params.dev_addr   = (const uct_device_addr_t *)dev.data();
    ep_params.iface_addr = (const uct_iface_addr_t *)addr.data();
    uct_ep_h ep;
    ASSERT_EQ(UCS_OK, uct_ep_create(&ep_params, &ep));

    /* fill its FIFO: it never reads */
    while (uct_ep_am_short(ep, AM_ID, 0, NULL, 0) == UCS_OK) {
    }
    uct_pending_req_t req;
    req.func = [](uct_pending_req_t *) { return UCS_ERR_NO_RESOURCE; };
    ASSERT_EQ(UCS_OK, uct_ep_pending_add(ep, &req, 0));

    test_peer::kill_and_wait(peer);
    wait_for(
        [&] {
            tx_e.progress();
            return err.calls > 0;
        },
        "the error handler");
    for (int i = 0; i < 1000; ++i) {
        tx_e.progress();
    }
    EXPECT_EQ(1u, err.calls);
    EXPECT_EQ(ep, err.ep);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, err.status);
    EXPECT_EQ(UCS_ERR_CONNECTION_RESET, uct_ep_am_short(ep, AM_ID, 0, NULL, 0));
    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    unsigned purged = 0;
    uct_ep_pending_purge(
        ep, [](uct_pending_req_t *, void *arg) { ++*(unsigned *)arg; },
        &purged);
    EXPECT_EQ(1u, purged);
    uct_ep_destroy(ep);
    test_peer::stop(peer);
}

/* uct_ep_check finds a killed peer with nothing outstanding */
TEST_P(test_mm, ep_check_finds_killed_peer)
{
    err_record err;
    entity_params params   = config();
    params.err_handler     = record_error;
    params.err_handler_arg = &err;
    entity &tx_e           = *create_entity(params);

    test_peer::process peer;
    ASSERT_TRUE(start_peer("receiver", peer));
    std::vector<char> dev, addr;
    ASSERT_TRUE(test_peer::fd_read_blob(peer.sock, dev, 10000));
    ASSERT_TRUE(test_peer::fd_read_blob(peer.sock, addr, 10000));

    uct_ep_params_t ep_params;
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = tx_e.iface();
    ep_params.dev_addr   = (const uct_device_addr_t *)dev.data();
    ep_params.iface_addr = (const uct_iface_addr_t *)addr.data();
    uct_ep_h ep;
    ASSERT_EQ(UCS_OK, uct_ep_create(&ep_params, &ep));

    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    for (int i = 0; i < 100; ++i) {
        tx_e.progress();
    }
    EXPECT_EQ(0u, err.calls) << "a live peer was reported";

    test_peer::kill_and_wait(peer);
    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    wait_for(
        [&] {
            tx_e.progress();
            return err.calls > 0;
        },
        "the error handler");
    EXPECT_EQ(UCS_OK, uct_ep_check(ep, 0, NULL));
    for (int i = 0; i < 100; ++i) {
        tx_e.progress();
    }
    EXPECT_EQ(1u, err.calls);

    /* an address of the dead process is refused: its pid may be reused */
    uct_ep_h ep2;
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_UNREACHABLE, uct_ep_create(&ep_params, &ep2));
    }
    uct_ep_destroy(ep);
    test_peer::stop(peer);
}

namespace {

std::set<std::string> dev_shm_entries()
{
    std::set<std::string> names;
    DIR *dir = opendir("/dev/shm");
    if (dir != nullptr) {
        while (struct dirent *d = readdir(dir)) {
            names.insert(d->d_name);
        }
        closedir(dir);
    }
    return names;
}

/* SysV segments whose creator is @a pid (/proc/sysvipc/shm) */
unsigned sysv_segments_of(pid_t pid)
{
    std::ifstream in("/proc/sysvipc/shm");
    std::string line;
    unsigned count = 0;

    std::getline(in, line); /* header */
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        long key, id, perms, size, cpid;
        if (fields >> key >> id >> perms >> size >> cpid) {
            count += (cpid == pid);
        }
    }
    return count;
}

} // namespace

/* Both processes killed in the middle of a transfer leave nothing in
 * /dev/shm or in the System V segment table */
TEST_P(test_mm, killed_processes_leave_nothing)
{
    std::set<std::string> before = dev_shm_entries();
    test_peer::process rx_peer, tx_peer;

    ASSERT_TRUE(start_peer("receiver", rx_peer));
    std::vector<char> dev, addr;
    ASSERT_TRUE(test_peer::fd_read_blob(rx_peer.sock, dev, 10000));
    ASSERT_TRUE(test_peer::fd_read_blob(rx_peer.sock, addr, 10000));
    ASSERT_TRUE(start_peer("sender:0:1000000000", tx_peer));
    ASSERT_TRUE(test_peer::fd_write_blob(tx_peer.sock, dev.data(), dev.size()));
    ASSERT_TRUE(
        test_peer::fd_write_blob(tx_peer.sock, addr.data(), addr.size()));
    usleep(200000);

    pid_t rx_pid = rx_peer.pid, tx_pid = tx_peer.pid;
    if (GetParam().tl_name == "sysv") {
        EXPECT_GT(sysv_segments_of(rx_pid), 0u) << "no segment to check";
    }
    test_peer::stop(tx_peer);
    test_peer::stop(rx_peer);

    EXPECT_EQ(0u, sysv_segments_of(rx_pid));
    EXPECT_EQ(0u, sysv_segments_of(tx_pid));
    std::set<std::string> after = dev_shm_entries();
    for (const std::string &name : after) {
        EXPECT_TRUE(before.count(name)) << "/dev/shm/" << name << " is new";
    }
}

/* A tmpfs too small for the FIFO: the iface open fails with one line
 * naming the directory and how to make room */
TEST_P(test_mm, tiny_tmpfs_gives_clear_error)
{
    if (GetParam().tl_name != "posix") {
        GTEST_SKIP() << "UCX_POSIX_DIR is a posix setting";
    }
    char dir[] = "/tmp/openuct-tiny-shm-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") != 0) {
        int err = errno;
        rmdir(dir);
        GTEST_SKIP() << "cannot mount a tmpfs here (" << strerror(err)
                     << "): needs root";
    }

    {
        ucs::scoped_setenv env("UCX_POSIX_DIR", dir);
        ucs::scoped_log_capture cap;
        entity_params p = config({{"FIFO_SIZE", "1024"}});
        bool opened     = true;
        try {
            create_entity(p);
        } catch (...) {
            opened = false;
        }
        EXPECT_FALSE(opened) << "a FIFO larger than the tmpfs was created";
        EXPECT_TRUE(cap.contains(dir)) << "the error does not name " << dir;
        EXPECT_TRUE(cap.contains("UCX_POSIX_DIR"));
    }
    umount(dir);
    rmdir(dir);
}

/* Reachability: another boot, user or namespace is not reachable, and a
 * malformed address is neither reachable nor accepted */
TEST_P(test_mm, reachability_checks)
{
    entity &a             = *create_entity(config());
    entity &b             = *create_entity(config());
    std::vector<char> dev = device_address(b), addr = iface_address(b);
    uct_sm_dev_addr_t d;

    ASSERT_EQ(sizeof(d), dev.size());
    EXPECT_TRUE(uct_iface_is_reachable(a.iface(),
                                       (uct_device_addr_t *)dev.data(),
                                       (uct_iface_addr_t *)addr.data()));

    for (int field = 0; field < 4; ++field) {
        memcpy(&d, dev.data(), sizeof(d));
        switch (field) {
        case 0:
            d.boot_id[1] ^= 1;
            break;
        case 1:
            d.uid += 1;
            break;
        case 2:
            d.ipc_ns += 1;
            break;
        case 3:
            d.pid_ns += 1;
            break;
        }
        bool reachable =
            uct_iface_is_reachable(a.iface(), (uct_device_addr_t *)&d,
                                   (uct_iface_addr_t *)addr.data());
        if ((field == 3) && (GetParam().tl_name == "sysv")) {
            EXPECT_TRUE(reachable) << "sysv needs no shared /proc";
        } else {
            EXPECT_FALSE(reachable) << "field " << field;
        }
    }

    uct_mm_iface_addr_t bad;
    memcpy(&bad, addr.data(), sizeof(bad));
    bad.fifo.fifo_size = 3;
    EXPECT_FALSE(uct_iface_is_reachable(
        a.iface(), (uct_device_addr_t *)dev.data(), (uct_iface_addr_t *)&bad));
    uct_ep_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = a.iface();
    params.iface_addr = (uct_iface_addr_t *)&bad;
    uct_ep_h ep;
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_INVALID_ADDR, uct_ep_create(&params, &ep));
        EXPECT_TRUE(cap.contains("malformed"));
    }

    memcpy(&bad, addr.data(), sizeof(bad));
    bad.start_time += 1;
    params.iface_addr = (uct_iface_addr_t *)&bad;
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_UNREACHABLE, uct_ep_create(&params, &ep));
    }
}

/* An idle endpoint takes at most 64 bytes of heap (measured with the
 * object tree off, as by default) */
TEST_P(test_mm, heap_per_idle_ep)
{
    entity &a              = *create_entity(config());
    entity &b              = *create_entity(config());
    const unsigned num_eps = 2000;
    std::vector<char> dev = device_address(b), addr = iface_address(b);
    std::vector<uct_ep_h> eps(num_eps);
    uct_ep_params_t params;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = a.iface();
    params.dev_addr   = (const uct_device_addr_t *)dev.data();
    params.iface_addr = (const uct_iface_addr_t *)addr.data();

    ucs_vfs_set_enabled(0);
    /* the peer's mapping and table entry come with the first */
    ASSERT_EQ(UCS_OK, uct_ep_create(&params, &eps[0]));
    size_t before = ucs_sys_heap_in_use();
    for (unsigned i = 1; i < num_eps; ++i) {
        ASSERT_EQ(UCS_OK, uct_ep_create(&params, &eps[i]));
    }
    size_t after = ucs_sys_heap_in_use();
    ucs_vfs_set_enabled(1);
    for (uct_ep_h ep : eps) {
        uct_ep_destroy(ep);
    }

    double per_ep = ucs_sys_heap_per_object(before, after, num_eps - 1);
    ucs::print_heap_definition();
    printf("heap per idle %s endpoint: %.1f bytes (struct %zu, malloc "
           "chunk included)\n",
           GetParam().tl_name.c_str(), per_ep, sizeof(uct_mm_ep_t));
    EXPECT_LE(sizeof(uct_mm_ep_t), 64u);
    EXPECT_LE(per_ep, 64.0 + 16.0) << "bytes of heap per endpoint";
}

/* A receiver asleep on its event fd wakes for a message another process
 * sends after it armed; a sender makes no system call to a receiver that
 * is not asleep */
TEST_P(test_mm, sleeping_receiver_wakes)
{
    entity &rx_e = *create_entity(config());
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));
    int fd;
    ASSERT_EQ(UCS_OK, uct_iface_event_fd_get(rx_e.iface(), &fd));

    /* awake receiver: no wake-ups sent */
    uct_ep_h ep = tx_e.connect_to(rx_e);
    for (uint32_t seq = 0; seq < 100;) {
        seq_msg msg = {0, seq};
        uint64_t header;
        memcpy(&header, &msg, sizeof(header));
        if (uct_ep_am_short(ep, AM_ID, header, NULL, 0) == UCS_OK) {
            ++seq;
        }
        rx_e.progress();
    }
    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= 100;
        },
        "messages");
    EXPECT_EQ(0u, mm_iface(tx_e)->tx_signals);

    /* asleep: a message sent before the arm makes it busy */
    rx.next[0]        = 0;
    rx.total          = 0;
    struct pollfd pfd = {fd, POLLIN, 0};
    ASSERT_EQ(UCS_OK, uct_iface_event_arm(rx_e.iface(), UCT_EVENT_RECV));
    EXPECT_EQ(0, poll(&pfd, 1, 0)) << "readable with nothing sent";

    test_peer::process peer;
    ASSERT_TRUE(start_peer("sender:0:1", peer));
    send_addresses(rx_e, peer);
    EXPECT_EQ(1, poll(&pfd, 1, 10000)) << "the sleeping receiver was not "
                                          "woken";
    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= 1;
        },
        "the message");
    EXPECT_EQ(1u, rx.next[0]);
    test_peer::stop(peer);

    /* armed again, then a message already claimed: busy, not asleep */
    ASSERT_EQ(UCS_OK, uct_iface_event_arm(rx_e.iface(), UCT_EVENT_RECV));
    EXPECT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, 0, NULL, 0));
    EXPECT_EQ(1u, mm_iface(tx_e)->tx_signals) << "one wake-up per sleep";
    EXPECT_EQ(UCS_ERR_BUSY, uct_iface_event_arm(rx_e.iface(), UCT_EVENT_RECV));
}

/* A sender killed between claiming an element and writing it: the
 * receiver gives the element up after a second and goes on */
TEST_P(test_mm, sender_killed_mid_message)
{
    ucs::scoped_log_capture cap;
    entity &rx_e = *create_entity(config());
    entity &tx_e = *create_entity(config());
    received rx;
    rx.next.resize(1, 0);
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(rx_e.iface(), AM_ID, seq_handler,
                                               &rx, 0));

    test_peer::process peer;
    ASSERT_TRUE(start_peer("hostile:claim", peer));
    send_addresses(rx_e, peer);
    EXPECT_TRUE(wait_peer_done(rx_e, peer));
    test_peer::kill_and_wait(peer);

    uct_ep_h ep = tx_e.connect_to(rx_e);
    for (uint32_t seq = 0; seq < 10; ++seq) {
        seq_msg msg = {0, seq};
        uint64_t header;
        memcpy(&header, &msg, sizeof(header));
        ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, header, NULL, 0));
    }
    /* blocked behind the element the dead sender claimed */
    for (int i = 0; i < 1000; ++i) {
        rx_e.progress();
    }
    EXPECT_EQ(0u, rx.total);

    ucs_time_t start = ucs_get_time();
    wait_for(
        [&] {
            rx_e.progress();
            return rx.total >= 10;
        },
        "messages");
    double waited = ucs_time_to_sec(ucs_get_time() - start);
    EXPECT_EQ(10u, rx.next[0]);
    EXPECT_EQ(0u, rx.errors);
    EXPECT_GT(waited, 0.5) << "skipped a claimed element too early";
    EXPECT_TRUE(cap.contains("claimed and not written"));
    test_peer::stop(peer);
    m_entities.clear();
}

/* The range the descriptors left when they moved behind private pages
 * may hold another mapping by the time the interface closes: closing
 * unmaps only what is still the segment's */
TEST_P(test_mm, close_keeps_mappings_in_moved_range)
{
    entity *e           = create_entity(config());
    uct_mm_iface_t *mmi = mm_iface(*e);
    if (mmi->rx.desc_va == nullptr) {
        GTEST_SKIP() << "descriptors not moved";
    }
    /* where the descriptors were: after the control page and the
     * elements (mm_fifo.h) */
    uct_mm_iface_addr_t addr;
    std::vector<char> packed = iface_address(*e);
    memcpy(&addr, packed.data(), sizeof(addr));
    size_t page = getpagesize();
    size_t elems =
        ((size_t)addr.fifo.fifo_size * addr.fifo.elem_size + page - 1) / page *
        page;
    char *hole       = (char *)mmi->seg.address + page + elems;
    size_t hole_size = addr.seg.length - page - elems;
    ASSERT_GT(hole_size, 0u);

    /* every page there is mapped by now: by someone else already, or by
     * us here */
    std::vector<char *> ours;
    unsigned char vec;
    for (size_t off = 0; off < hole_size; off += page) {
        if (mincore(hole + off, page, &vec) == 0) {
            continue;
        }
        void *p =
            mmap(hole + off, page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        ASSERT_EQ((void *)(hole + off), p) << strerror(errno);
        ours.push_back(hole + off);
    }

    m_entities.clear();
    for (size_t off = 0; off < hole_size; off += page) {
        EXPECT_EQ(0, mincore(hole + off, page, &vec))
            << "closing the interface unmapped a page it does not own, at "
            << off << " of " << hole_size;
    }
    for (char *p : ours) {
        munmap(p, page);
    }
}

/* A put_bcopy at the end of a remote segment: a packer that stays inside
 * it lands, one that goes past is refused and nothing past the end (or
 * before it) is written */
TEST_P(test_mm, put_bcopy_at_segment_end)
{
    entity &rx_e = *create_entity(config());
    entity &tx_e = *create_entity(config());
    uct_ep_h ep  = tx_e.connect_to(rx_e);
    mapped_buffer buf(1000, rx_e);

    const uct_mm_rkey_t *key = (const uct_mm_rkey_t *)buf.rkey();
    uint64_t remote_end      = key->remote_address + key->length;
    char *local_end          = (char *)(uintptr_t)remote_end;
    struct packer {
        size_t length;
        static size_t pack(void *dest, void *arg)
        {
            packer *p = static_cast<packer *>(arg);
            memset(dest, 0x7e, p->length);
            return p->length;
        }
    };

    memset(local_end - 64, 0, 64);
    packer fits = {16};
    EXPECT_EQ(16, uct_ep_put_bcopy(ep, packer::pack, &fits, remote_end - 16,
                                   buf.rkey()));
    EXPECT_EQ(0x7e, local_end[-1]);
    EXPECT_EQ(0x7e, local_end[-16]);
    EXPECT_EQ(0, local_end[-17]);

    memset(local_end - 64, 0, 64);
    packer too_long = {32};
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ((ssize_t)UCS_ERR_INVALID_ADDR,
                  uct_ep_put_bcopy(ep, packer::pack, &too_long, remote_end - 16,
                                   buf.rkey()));
        EXPECT_TRUE(cap.contains("passes the end"));
    }
    for (int i = 1; i <= 64; ++i) {
        EXPECT_EQ(0, local_end[-i]) << "byte " << i << " before the end";
    }
}
