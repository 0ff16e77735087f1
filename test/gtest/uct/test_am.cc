/*
 * Active messages over every transport: short, short_iov, bcopy and zcopy
 * at the size limits, descriptors kept by handlers, rx headroom, data
 * alignment, ordering, unhandled ids and argument errors.
 *
 * Size semantics asserted here (as uct.h states them):
 *  - am.max_short is the largest short *payload*; the 8-byte header comes
 *    on top and the handler sees header + payload (length + 8 bytes).
 *    am_short_iov sends up to max_short bytes in all, without a header.
 *  - am.max_bcopy is the largest packed length.
 *  - am.max_zcopy bounds the payload; a transport may bound header +
 *    payload together (as UCX's do), so at max_zcopy the header is empty.
 */
#include "uct_test.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <unistd.h>

namespace {

const uint8_t AM_ID         = 7;
const uint8_t AM_ID_NO_HDLR = 5;
const uint64_t AM_HDR       = 0x0123456789abcdefull;
/* Largest buffer a test allocates: limits above are capped to it */
const size_t MAX_TEST_SIZE = 4ul * 1024 * 1024;

struct pack_arg {
    const void *buffer;
    size_t length; /* bytes copied into dest */
    size_t ret;    /* value returned (length unless testing errors) */
};

size_t pack_cb(void *dest, void *arg)
{
    pack_arg *pa = static_cast<pack_arg *>(arg);
    memcpy(dest, pa->buffer, pa->length);
    return pa->ret;
}

/* Sorted, unique candidates within [min, max]. */
std::vector<size_t> test_sizes(std::initializer_list<size_t> candidates,
                               size_t min, size_t max)
{
    std::vector<size_t> out;
    for (size_t s : candidates) {
        if ((s >= min) && (s <= max)) {
            out.push_back(s);
        }
    }
    if ((min <= max) && (std::find(out.begin(), out.end(), min) == out.end())) {
        out.push_back(min);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

size_t count_lines(const ucs::scoped_log_capture &cap, size_t start,
                   const std::string &text)
{
    const std::vector<std::string> &msgs = cap.messages();
    size_t n                             = 0;
    for (size_t i = start; i < msgs.size(); ++i) {
        if (msgs[i].find(text) != std::string::npos) {
            ++n;
        }
    }
    return n;
}

} // namespace

class uct_am : public uct_test {
protected:
    typedef uct_test::mapped_buffer mapped_buffer;

    /* Checks that @a msg is @a hdr_len bytes of @a hdr, then @a length
     * bytes of the pattern of @a seed. */
    void check_message(const am_recorder::message &msg, const void *hdr,
                       size_t hdr_len, size_t length, uint64_t seed)
    {
        ASSERT_EQ(hdr_len + length, msg.data.size()) << "message length";
        if (hdr_len > 0) {
            EXPECT_EQ(0, memcmp(msg.data.data(), hdr, hdr_len))
                << "header differs";
        }
        size_t i = mapped_buffer::pattern_mismatch(msg.data.data() + hdr_len,
                                                   length, seed);
        EXPECT_EQ(length, i)
            << "payload differs at byte " << i << " of " << length;
    }

    /* Waits until @a rec holds @a count messages. */
    bool wait_messages(const am_recorder &rec, size_t count,
                       const std::string &what)
    {
        return wait_for([&rec, count] { return rec.count() >= count; },
                        std::to_string(count) + " " + what + " message(s)");
    }

    ucs_status_t send_short(uct_ep_h ep, uint8_t id, uint64_t hdr,
                            const void *payload, size_t length)
    {
        return (ucs_status_t)retry_no_resource(
            [=] {
                return (ssize_t)uct_ep_am_short(ep, id, hdr, payload, length);
            },
            "uct_ep_am_short");
    }

    ssize_t send_bcopy(uct_ep_h ep, uint8_t id, const void *buffer,
                       size_t length)
    {
        pack_arg arg = {buffer, length, length};
        return retry_no_resource(
            [&] { return uct_ep_am_bcopy(ep, id, pack_cb, &arg, 0); },
            "uct_ep_am_bcopy");
    }

    /* Sends a small message in every mode the sender supports; returns
     * how many were sent. */
    size_t send_each_mode(const pair &p, uint8_t id, size_t length,
                          uint64_t seed);

    /* @a want, or less if no AM mode of the sender takes that much. */
    static size_t fit_length(const pair &p, size_t want)
    {
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        size_t max                   = 0;
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            max = std::max(max, attr.cap.am.max_short);
        }
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY)) {
            max = std::max(max, attr.cap.am.max_bcopy);
        }
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_ZCOPY)) {
            max = std::max(max, attr.cap.am.max_zcopy);
        }
        return std::min(want, max);
    }

    /* The largest test buffer for a limit. */
    static size_t cap_size(size_t limit)
    {
        return std::min(limit, MAX_TEST_SIZE);
    }
};

size_t uct_am::send_each_mode(const pair &p, uint8_t id, size_t length,
                              uint64_t seed)
{
    const uct_iface_attr_t &attr = p.sender->iface_attr();
    mapped_buffer buf(length, *p.sender);
    size_t sent = 0;

    buf.pattern_fill(seed);
    if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT) &&
        (length <= attr.cap.am.max_short)) {
        EXPECT_EQ(UCS_OK, send_short(p.ep, id, AM_HDR, buf.ptr(), length));
        ++sent;
    }
    if (p.sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY) &&
        (length <= attr.cap.am.max_bcopy)) {
        EXPECT_EQ((ssize_t)length, send_bcopy(p.ep, id, buf.ptr(), length));
        ++sent;
    }
    if (p.sender->has_cap(UCT_IFACE_FLAG_AM_ZCOPY) &&
        (length <= attr.cap.am.max_zcopy) &&
        (length >= attr.cap.am.min_zcopy)) {
        uct_iov_t iov = buf.iov(0, length);
        counted_completion comp;
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_zcopy(p.ep, id, NULL, 0, &iov, 1, 0,
                                                comp);
            },
            "uct_ep_am_zcopy");
        wait_completion(status, comp, "uct_ep_am_zcopy");
        ++sent;
    }
    return sent;
}

/* ------------------------------------------------------------------------
 * Sizes and modes
 */

TEST_P(uct_am, short_sizes)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_SHORT);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        size_t max       = p.sender->iface_attr().cap.am.max_short;
        std::vector<size_t> sizes =
            test_sizes({0, 1, 8, max}, 0, cap_size(max));
        ASSERT_LE(max, MAX_TEST_SIZE) << "max_short is implausibly large";

        for (size_t i = 0; i < sizes.size(); ++i) {
            SCOPED_TRACE("length " + std::to_string(sizes[i]));
            std::vector<char> payload(sizes[i] + 1);
            uint64_t hdr = AM_HDR + i;
            mapped_buffer::pattern_fill(payload.data(), sizes[i], i);

            ASSERT_EQ(UCS_OK,
                      send_short(p.ep, AM_ID, hdr, payload.data(), sizes[i]));
            ASSERT_TRUE(wait_messages(rec, i + 1, "am_short"));
            check_message(rec.at(i), &hdr, sizeof(hdr), sizes[i], i);
        }
        EXPECT_EQ(sizes.size(), rec.count());
    }
}

/* A header-only message may pass no payload pointer at all (as UCX's own
 * users do): nothing may read or copy through it */
TEST_P(uct_am, short_header_only_null_payload)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_SHORT);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        for (uint64_t i = 0; i < 3; ++i) {
            uint64_t hdr = AM_HDR + i;
            ASSERT_EQ(UCS_OK, send_short(p.ep, AM_ID, hdr, NULL, 0));
            ASSERT_TRUE(wait_messages(rec, i + 1, "am_short"));
            check_message(rec.at(i), &hdr, sizeof(hdr), 0, i);
        }
    }
}

TEST_P(uct_am, short_iov)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_SHORT);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec             = install_recorder(*p.receiver, AM_ID);
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        size_t max                   = cap_size(attr.cap.am.max_short);
        size_t max_iov =
            std::max<size_t>(std::min<size_t>(attr.cap.am.max_iov, 16), 1);
        size_t n = 0;

        for (size_t length : test_sizes({0, 1, 8, max}, 0, max)) {
            for (size_t iovcnt :
                 test_sizes({1, 2, 3, max_iov}, 1,
                            std::min(max_iov, std::max<size_t>(length, 1)))) {
                SCOPED_TRACE("length " + std::to_string(length) + " iovcnt " +
                             std::to_string(iovcnt));
                mapped_buffer buf(length, *p.sender);
                buf.pattern_fill(n);
                std::vector<uct_iov_t> iov = buf.split_iov(iovcnt);

                ucs_status_t status = (ucs_status_t)retry_no_resource(
                    [&] {
                        return (ssize_t)uct_ep_am_short_iov(p.ep, AM_ID,
                                                            iov.data(), iovcnt);
                    },
                    "uct_ep_am_short_iov");
                ASSERT_EQ(UCS_OK, status) << ucs_status_string(status);
                ASSERT_TRUE(wait_messages(rec, n + 1, "am_short_iov"));
                check_message(rec.at(n), NULL, 0, length, n);
                ++n;
            }
        }
    }
}

TEST_P(uct_am, bcopy_sizes)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_BCOPY);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        size_t max       = p.sender->iface_attr().cap.am.max_bcopy;
        ASSERT_LE(max, MAX_TEST_SIZE) << "max_bcopy is implausibly large";
        std::vector<size_t> sizes = test_sizes({0, 1, 8, max}, 0, max);

        for (size_t i = 0; i < sizes.size(); ++i) {
            SCOPED_TRACE("length " + std::to_string(sizes[i]));
            std::vector<char> payload(sizes[i] + 1);
            mapped_buffer::pattern_fill(payload.data(), sizes[i], i + 100);

            ssize_t packed = send_bcopy(p.ep, AM_ID, payload.data(), sizes[i]);
            ASSERT_EQ((ssize_t)sizes[i], packed)
                << "am_bcopy must return the packed length";
            ASSERT_TRUE(wait_messages(rec, i + 1, "am_bcopy"));
            check_message(rec.at(i), NULL, 0, sizes[i], i + 100);
        }
    }
}

TEST_P(uct_am, zcopy_sizes_and_iovs)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_ZCOPY);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec             = install_recorder(*p.receiver, AM_ID);
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        size_t max                   = cap_size(attr.cap.am.max_zcopy);
        size_t max_iov = std::min<size_t>(attr.cap.am.max_iov, 16);
        size_t n       = 0;
        ASSERT_GE(attr.cap.am.max_iov, 1u) << "AM_ZCOPY with max_iov 0";

        for (size_t length :
             test_sizes({0, 1, 8, max}, attr.cap.am.min_zcopy, max)) {
            /* At max_zcopy the header is empty (see the top of the file) */
            size_t hdr_len = (length == attr.cap.am.max_zcopy)
                                 ? 0
                                 : std::min<size_t>(attr.cap.am.max_hdr, 8);
            if (hdr_len + length > attr.cap.am.max_zcopy) {
                hdr_len = 0;
            }
            for (size_t iovcnt :
                 test_sizes({1, 2, 3, max_iov}, 1,
                            std::min(max_iov, std::max<size_t>(length, 1)))) {
                SCOPED_TRACE("length " + std::to_string(length) + " iovcnt " +
                             std::to_string(iovcnt) + " header " +
                             std::to_string(hdr_len));
                mapped_buffer buf(length, *p.sender);
                buf.pattern_fill(n);
                std::vector<uct_iov_t> iov = buf.split_iov(iovcnt);
                uint64_t hdr               = AM_HDR ^ n;
                counted_completion comp;

                ucs_status_t status = (ucs_status_t)retry_no_resource(
                    [&] {
                        return (ssize_t)uct_ep_am_zcopy(p.ep, AM_ID, &hdr,
                                                        hdr_len, iov.data(),
                                                        iovcnt, 0, comp);
                    },
                    "uct_ep_am_zcopy");
                wait_completion(status, comp, "uct_ep_am_zcopy");
                ASSERT_TRUE(wait_messages(rec, n + 1, "am_zcopy"));
                check_message(rec.at(n), &hdr, hdr_len, length, n);
                buf.check_guard();
                ++n;
            }
        }
    }
}

TEST_P(uct_am, zcopy_max_header)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_ZCOPY);
    if (m_pairs[0].sender->iface_attr().cap.am.max_hdr == 0) {
        GTEST_SKIP() << res().tl_name << " takes no zcopy header (max_hdr 0)";
    }

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec             = install_recorder(*p.receiver, AM_ID);
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        size_t hdr_len               = attr.cap.am.max_hdr;
        size_t length                = attr.cap.am.min_zcopy;
        ASSERT_LE(hdr_len, MAX_TEST_SIZE) << "max_hdr is implausibly large";

        std::vector<char> hdr(hdr_len);
        mapped_buffer::pattern_fill(hdr.data(), hdr_len, 77);
        mapped_buffer buf(length, *p.sender);
        buf.pattern_fill(78);
        uct_iov_t iov = buf.iov(0, length);
        counted_completion comp;

        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_zcopy(p.ep, AM_ID, hdr.data(),
                                                hdr_len, &iov, 1, 0, comp);
            },
            "uct_ep_am_zcopy");
        wait_completion(status, comp, "uct_ep_am_zcopy with max_hdr");
        ASSERT_TRUE(wait_messages(rec, 1, "am_zcopy"));
        check_message(rec.at(0), hdr.data(), hdr_len, length, 78);
    }
}

/* An iov entry with count > 1 sends count blocks of length bytes, stride
 * bytes apart. A transport that cannot do it must say UCS_ERR_UNSUPPORTED
 * (the test then skips), never send something else. */
TEST_P(uct_am, zcopy_iov_stride)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_ZCOPY);

    const size_t elem = 8, count = 4, stride = 24, tail = 16;
    bool unsupported = false;

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec             = install_recorder(*p.receiver, AM_ID);
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        size_t iovcnt                = (attr.cap.am.max_iov >= 2) ? 2 : 1;
        size_t total = (elem * count) + ((iovcnt == 2) ? tail : 0);
        if ((total > attr.cap.am.max_zcopy) ||
            (total < attr.cap.am.min_zcopy)) {
            GTEST_SKIP() << "zcopy limits exclude " << total << " bytes";
        }

        mapped_buffer buf((stride * count) + tail, *p.sender);
        buf.pattern_fill(5);
        uct_iov_t iov[2];
        iov[0]        = buf.iov(0, elem);
        iov[0].count  = count;
        iov[0].stride = stride;
        iov[1]        = buf.iov(stride * count, tail);

        std::string expected;
        for (size_t c = 0; c < count; ++c) {
            expected.append(buf.cptr() + (c * stride), elem);
        }
        if (iovcnt == 2) {
            expected.append(buf.cptr() + (stride * count), tail);
        }

        counted_completion comp;
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_am_zcopy(p.ep, AM_ID, NULL, 0, iov,
                                                iovcnt, 0, comp);
            },
            "uct_ep_am_zcopy");
        if (status == UCS_ERR_UNSUPPORTED) {
            unsupported = true;
            continue;
        }
        wait_completion(status, comp, "uct_ep_am_zcopy with stride");
        ASSERT_TRUE(wait_messages(rec, 1, "strided am_zcopy"));
        EXPECT_EQ(expected, rec.at(0).data);
    }

    if (unsupported) {
        GTEST_SKIP() << res().tl_name << " does not honour iov count/stride";
    }
}

/* ------------------------------------------------------------------------
 * Descriptors, headroom, alignment
 */

TEST_P(uct_am, keep_descriptor_with_headroom)
{
    const size_t headroom = 64;
    entity_params params;
    params.rx_headroom = headroom;
    UCT_TEST_INIT_PAIRS(params);
    if (!m_pairs[0].sender->has_cap(UCT_IFACE_FLAG_AM_SHORT) &&
        !m_pairs[0].sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY) &&
        !m_pairs[0].sender->has_cap(UCT_IFACE_FLAG_AM_ZCOPY)) {
        GTEST_SKIP() << GetParam().tl_name << " has no active messages";
    }

    size_t kept_total = 0;
    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        rec.keep_descriptors(headroom);

        /* Messages the handler keeps... */
        size_t length = fit_length(p, 100);
        size_t sent   = 0;
        for (uint64_t seed = 0; seed < 4; ++seed) {
            sent += send_each_mode(p, AM_ID, length - (seed % 2), seed);
        }
        ASSERT_GT(sent, 0u) << "no AM mode of the sender";
        ASSERT_TRUE(wait_messages(rec, sent, "kept"));

        std::vector<void *> kept = rec.kept();
        std::vector<am_recorder::message> copies;
        for (size_t i = 0; i < rec.count(); ++i) {
            copies.push_back(rec.at(i));
        }

        /* ...stay intact while more messages come in */
        am_recorder &more = install_recorder(*p.receiver, AM_ID);
        size_t sent_more  = 0;
        for (uint64_t seed = 10; seed < 26; ++seed) {
            sent_more += send_each_mode(p, AM_ID, length, seed);
        }
        ASSERT_TRUE(wait_messages(more, sent_more, "more"));

        for (const am_recorder::message &m : copies) {
            if (!(m.flags & UCT_CB_PARAM_FLAG_DESC)) {
                continue;
            }
            EXPECT_EQ(m.data, rec.read(m.ptr, 0, m.data.size()))
                << "a kept descriptor was overwritten";
            /* The headroom is still what the handler wrote */
            std::string h = rec.read(m.ptr, -(ssize_t)headroom, headroom);
            for (size_t i = 0; i < headroom; ++i) {
                ASSERT_EQ(0xcc, (uint8_t)h[i]) << "headroom byte " << i;
            }
        }

        kept_total += kept.size();
        rec.release_kept();
    }

    if (kept_total == 0) {
        GTEST_SKIP() << res().tl_name << " never passes "
                     << "UCT_CB_PARAM_FLAG_DESC: nothing to keep";
    }
}

/*
 * (data + am_align_offset) must be a multiple of am_alignment for every
 * delivered message (uct.h). Transports listed below only have to accept
 * the parameters (none so far).
 */
TEST_P(uct_am, data_alignment)
{
    static const char *accept_only_tls[] = {NULL};
    bool check                           = true;
    for (const char **tl = accept_only_tls; *tl != NULL; ++tl) {
        check = check && (res().tl_name != *tl);
    }

    const std::vector<std::pair<size_t, size_t>> cases = {
        {1, 0}, {8, 0}, {64, 0}, {64, 8}, {128, 13}, {256, 100}};

    for (const auto &c : cases) {
        SCOPED_TRACE("am_alignment " + std::to_string(c.first) +
                     " am_align_offset " + std::to_string(c.second));
        reset_entities();
        entity_params params;
        params.set_am_alignment = true;
        params.am_alignment     = c.first;
        params.am_align_offset  = c.second;
        params.rx_headroom      = 16;
        UCT_TEST_INIT_PAIRS(params);

        for (const pair &p : m_pairs) {
            SCOPED_TRACE(p.name);
            am_recorder &rec = install_recorder(*p.receiver, AM_ID);
            size_t sent      = 0;
            for (size_t length : {(size_t)1, fit_length(p, 100)}) {
                sent += send_each_mode(p, AM_ID, length, length);
            }
            ASSERT_TRUE(wait_messages(rec, sent, "aligned"));
            for (size_t i = 0; check && (i < rec.count()); ++i) {
                uintptr_t addr = (uintptr_t)rec.at(i).ptr;
                EXPECT_EQ(0u, (addr + c.second) % c.first)
                    << "message " << i << " (flags 0x" << std::hex
                    << rec.at(i).flags << ") delivered at " << std::hex << addr;
            }
        }
    }
}

TEST_P(uct_am, invalid_alignment_params)
{
    entity *e = create_entity();

    struct bad_case {
        uint64_t mask;
        size_t alignment, offset;
        const char *text;
    };
    const bad_case cases[] = {
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT, 3, 0, "am_alignment"},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
             UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET,
         64, 64, "am_align_offset"},
        {UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET, 0, 8, "am_align_offset"}};

    for (const bad_case &bc : cases) {
        SCOPED_TRACE(std::string("expecting a complaint about ") + bc.text);
        uct_iface_params_t params;
        memset(&params, 0, sizeof(params));
        params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                            UCT_IFACE_PARAM_FIELD_DEVICE | bc.mask;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = res().tl_name.c_str();
        params.mode.device.dev_name = res().dev_name.c_str();
        params.am_alignment         = bc.alignment;
        params.am_align_offset      = bc.offset;

        uct_iface_h iface = NULL;
        ucs::scoped_log_capture cap;
        ucs_status_t status =
            uct_iface_open(e->md(), e->worker(), &params, NULL, &iface);
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, status) << ucs_status_string(status);
        EXPECT_TRUE(cap.contains(bc.text));
        if (status == UCS_OK) {
            uct_iface_close(iface);
        }
    }
}

/* ------------------------------------------------------------------------
 * Ordering and unhandled ids
 */

TEST_P(uct_am, many_messages_in_order)
{
    UCT_TEST_INIT_PAIRS();
    const unsigned count = ucs::test_scale(2000);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        bool bcopy       = p.sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY);
        if (!bcopy && !p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            GTEST_SKIP() << "no AM short or bcopy";
        }

        for (uint64_t seq = 0; seq < count; ++seq) {
            if (bcopy) {
                ASSERT_EQ((ssize_t)sizeof(seq),
                          send_bcopy(p.ep, AM_ID, &seq, sizeof(seq)));
            } else {
                ASSERT_EQ(UCS_OK, send_short(p.ep, AM_ID, seq, NULL, 0));
            }
        }
        ASSERT_TRUE(wait_messages(rec, count, "ordered"));
        progress_for(1);
        ASSERT_EQ(count, rec.count()) << "extra messages arrived";
        for (uint64_t seq = 0; seq < count; ++seq) {
            uint64_t got;
            am_recorder::message m = rec.at(seq);
            ASSERT_EQ(sizeof(got), m.data.size());
            memcpy(&got, m.data.data(), sizeof(got));
            ASSERT_EQ(seq, got) << "message " << seq << " out of order";
        }
    }
}

TEST_P(uct_am, no_handler_drops_with_one_warning)
{
    /* The warning is logged in the receiver's process: this one */
    entity_params params;
    params.local_only = true;
    UCT_TEST_INIT_PAIRS(params);

    std::set<const void *> receivers;
    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        uint64_t data    = 42;

        if (!receivers.insert(p.receiver).second) {
            progress_for(1100); /* its warnings are limited to 1/s */
        }
        ucs::scoped_log_capture cap;
        size_t start = cap.messages().size();

        /* The unhandled message, then a handled one behind it */
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            ASSERT_EQ(UCS_OK, send_short(p.ep, AM_ID_NO_HDLR, 1, NULL, 0));
            ASSERT_EQ(UCS_OK, send_short(p.ep, AM_ID, 2, NULL, 0));
        } else if (p.sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY)) {
            size_t length =
                std::min(sizeof(data), p.sender->iface_attr().cap.am.max_bcopy);
            ASSERT_EQ((ssize_t)length,
                      send_bcopy(p.ep, AM_ID_NO_HDLR, &data, length));
            ASSERT_EQ((ssize_t)length, send_bcopy(p.ep, AM_ID, &data, length));
        } else {
            GTEST_SKIP() << "no AM short or bcopy";
        }

        ASSERT_TRUE(wait_messages(rec, 1, "handled"));
        progress_for(1);
        EXPECT_EQ(1u, rec.count());
        std::string id_text = "id " + std::to_string(AM_ID_NO_HDLR);
        EXPECT_EQ(1u, count_lines(cap, start, id_text))
            << "expected exactly one warning naming " << id_text;
    }
}

/* A peer decides how many unhandled messages arrive, not how many lines
 * we write: one per second per interface, then the count of the rest. */
TEST_P(uct_am, no_handler_warnings_are_rate_limited)
{
    /* The warning is logged in the receiver's process: this one */
    entity_params params;
    params.local_only = true;
    UCT_TEST_INIT_PAIRS(params);
    const uint64_t count = 200;

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        if (!p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            GTEST_SKIP() << "no AM short";
        }
        am_recorder &rec    = install_recorder(*p.receiver, AM_ID);
        std::string id_text = "id " + std::to_string(AM_ID_NO_HDLR);

        progress_for(1100); /* a receiver shared with another pair */
        ucs::scoped_log_capture cap;
        size_t start = cap.messages().size();
        for (uint64_t i = 0; i < count; ++i) {
            ucs_status_t status;
            while ((status = send_short(p.ep, AM_ID_NO_HDLR, i, NULL, 0)) ==
                   UCS_ERR_NO_RESOURCE) {
                progress();
            }
            ASSERT_EQ(UCS_OK, status);
        }
        ASSERT_EQ(UCS_OK, send_short(p.ep, AM_ID, 0, NULL, 0));
        ASSERT_TRUE(wait_messages(rec, 1, "handled"));
        EXPECT_EQ(1u, count_lines(cap, start, id_text))
            << "a flood of unhandled messages wrote more than one line";

        /* After the interval the next one passes and counts the others */
        progress_for(1100);
        ASSERT_EQ(UCS_OK, send_short(p.ep, AM_ID_NO_HDLR, 0, NULL, 0));
        ASSERT_EQ(UCS_OK, send_short(p.ep, AM_ID, 1, NULL, 0));
        ASSERT_TRUE(wait_messages(rec, 2, "handled"));
        EXPECT_EQ(2u, count_lines(cap, start, id_text));
        EXPECT_EQ(1u, count_lines(cap, start,
                                  "(" + std::to_string(count - 1) +
                                      " similar lines suppressed)"));
    }
}

/* ------------------------------------------------------------------------
 * Argument errors: UCS_ERR_INVALID_PARAM and a log line, nothing sent
 */

TEST_P(uct_am, invalid_am_id)
{
    UCT_TEST_INIT_PAIRS();
    const uint8_t bad_id      = UCT_AM_ID_MAX;
    const std::string id_text = std::to_string(bad_id);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        uint64_t data = 0;
        mapped_buffer buf(8, *p.sender);
        uct_iov_t iov = buf.iov(0, 8);

        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            ucs::scoped_log_capture cap;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      uct_ep_am_short(p.ep, bad_id, 0, &data, sizeof(data)));
            EXPECT_TRUE(cap.contains(id_text)) << "am_short: no log line";
        }
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            ucs::scoped_log_capture cap;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      uct_ep_am_short_iov(p.ep, bad_id, &iov, 1));
            EXPECT_TRUE(cap.contains(id_text)) << "am_short_iov: no log line";
        }
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY)) {
            ucs::scoped_log_capture cap;
            pack_arg arg = {&data, sizeof(data), sizeof(data)};
            EXPECT_EQ((ssize_t)UCS_ERR_INVALID_PARAM,
                      uct_ep_am_bcopy(p.ep, bad_id, pack_cb, &arg, 0));
            EXPECT_TRUE(cap.contains(id_text)) << "am_bcopy: no log line";
        }
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_ZCOPY) &&
            (p.sender->iface_attr().cap.am.min_zcopy <= 8)) {
            ucs::scoped_log_capture cap;
            counted_completion comp;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      uct_ep_am_zcopy(p.ep, bad_id, NULL, 0, &iov, 1, 0, comp));
            EXPECT_TRUE(cap.contains(id_text)) << "am_zcopy: no log line";
            EXPECT_EQ(0, comp.calls);
        }
        progress_for(1);
    }
}

TEST_P(uct_am, set_handler_invalid_id)
{
    entity *e = create_entity();
    ucs::scoped_log_capture cap;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_iface_set_am_handler(e->iface(), UCT_AM_ID_MAX,
                                       am_recorder::cb, NULL,
                                       UCT_CB_FLAG_SYNC));
    EXPECT_TRUE(cap.contains(std::to_string(UCT_AM_ID_MAX)));
}

TEST_P(uct_am, short_too_long)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_SHORT);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        size_t length    = p.sender->iface_attr().cap.am.max_short + 1;
        ASSERT_LE(length, MAX_TEST_SIZE);
        mapped_buffer buf(length, *p.sender);
        std::vector<uct_iov_t> iov = buf.split_iov(2);

        {
            ucs::scoped_log_capture cap;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      uct_ep_am_short(p.ep, AM_ID, 0, buf.ptr(), length));
            EXPECT_TRUE(cap.contains(std::to_string(length)))
                << "am_short: no log line naming length " << length;
        }
        {
            ucs::scoped_log_capture cap;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      uct_ep_am_short_iov(p.ep, AM_ID, iov.data(), 2));
            EXPECT_TRUE(cap.contains(std::to_string(length)))
                << "am_short_iov: no log line naming length " << length;
        }
        progress_for(1);
        EXPECT_EQ(0u, rec.count()) << "a rejected message was delivered";
    }
}

/*
 * A pack callback that returns more than max_bcopy (it writes only
 * max_bcopy bytes here) must make uct_ep_am_bcopy return
 * UCS_ERR_INVALID_PARAM with an error line, not abort or send.
 */
TEST_P(uct_am, bcopy_pack_too_long)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_BCOPY);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        size_t max       = p.sender->iface_attr().cap.am.max_bcopy;
        ASSERT_LE(max, MAX_TEST_SIZE);
        std::vector<char> payload(max);
        pack_arg arg = {payload.data(), max, max + 1};

        /* pack_cb writes only max bytes but claims max + 1: the
         * transport must refuse the message without sending anything.
         * Runs in this process: a forked child would share the parent's
         * epoll instances and change them from its progress. */
        ucs::scoped_log_capture cap;
        ssize_t ret = uct_ep_am_bcopy(p.ep, AM_ID, pack_cb, &arg, 0);
        EXPECT_EQ((ssize_t)UCS_ERR_INVALID_PARAM, ret);
        EXPECT_TRUE(cap.contains(std::to_string(max + 1)))
            << "no log line naming length " << (max + 1);
        progress_for(1);
        EXPECT_EQ(0u, rec.count()) << "a refused message was delivered";
    }
}

TEST_P(uct_am, zcopy_too_long)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_ZCOPY);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec             = install_recorder(*p.receiver, AM_ID);
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        if (attr.cap.am.max_zcopy >= MAX_TEST_SIZE) {
            GTEST_SKIP() << "max_zcopy " << attr.cap.am.max_zcopy
                         << " is too large to exceed in a test";
        }

        size_t length = attr.cap.am.max_zcopy + 1;
        mapped_buffer buf(length, *p.sender);
        uct_iov_t iov = buf.iov(0, length);
        counted_completion comp;
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_ep_am_zcopy(p.ep, AM_ID, NULL, 0, &iov, 1, 0, comp));
        EXPECT_TRUE(cap.contains(std::to_string(length)))
            << "no log line naming length " << length;
        EXPECT_EQ(0, comp.calls);
        progress_for(1);
        EXPECT_EQ(0u, rec.count()) << "a rejected message was delivered";
    }
}

TEST_P(uct_am, zcopy_header_too_long)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_ZCOPY);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec             = install_recorder(*p.receiver, AM_ID);
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        if (attr.cap.am.max_hdr >= MAX_TEST_SIZE) {
            GTEST_SKIP() << "max_hdr is too large to exceed in a test";
        }

        std::vector<char> hdr(attr.cap.am.max_hdr + 1);
        mapped_buffer buf(attr.cap.am.min_zcopy, *p.sender);
        uct_iov_t iov = buf.iov(0, buf.length());
        counted_completion comp;
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_ep_am_zcopy(p.ep, AM_ID, hdr.data(), hdr.size(), &iov, 1,
                                  0, comp));
        EXPECT_TRUE(cap.contains(std::to_string(hdr.size())))
            << "no log line naming header length " << hdr.size();
        progress_for(1);
        EXPECT_EQ(0u, rec.count()) << "a rejected message was delivered";
    }
}

TEST_P(uct_am, zcopy_too_many_iovs)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_AM_ZCOPY);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec             = install_recorder(*p.receiver, AM_ID);
        const uct_iface_attr_t &attr = p.sender->iface_attr();
        if (attr.cap.am.max_iov >= 4096) {
            GTEST_SKIP() << "max_iov is too large to exceed in a test";
        }

        size_t iovcnt = attr.cap.am.max_iov + 1;
        size_t length = std::max(iovcnt, attr.cap.am.min_zcopy);
        if (length > attr.cap.am.max_zcopy) {
            GTEST_SKIP() << "cannot build " << iovcnt << " entries within "
                         << "max_zcopy";
        }
        mapped_buffer buf(length, *p.sender);
        std::vector<uct_iov_t> iov = buf.split_iov(iovcnt);
        counted_completion comp;
        ucs::scoped_log_capture cap;
        EXPECT_EQ(
            UCS_ERR_INVALID_PARAM,
            uct_ep_am_zcopy(p.ep, AM_ID, NULL, 0, iov.data(), iovcnt, 0, comp));
        EXPECT_TRUE(cap.contains("iov")) << "no log line about the iov count";
        progress_for(1);
        EXPECT_EQ(0u, rec.count()) << "a rejected message was delivered";
    }
}

UCT_INSTANTIATE_TEST_SUITE(uct_am);
