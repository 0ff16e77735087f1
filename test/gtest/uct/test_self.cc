/*
 * The self transport's am_short: the paths its fast check sends elsewhere
 * (a closed receiver, a tracer, an alignment above what a call's stack
 * gives for free) deliver or fail exactly as the plain path did.
 */
#include "uct_test.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace {

typedef uct_test::entity entity;
typedef uct_test::entity_params entity_params;

const uint8_t AM_ID = 3;

struct delivery {
    uintptr_t addr;
    size_t length;
    uint64_t header;
    std::vector<uint8_t> payload;
};

ucs_status_t record_am_cb(void *arg, void *data, size_t length, unsigned flags)
{
    delivery d;

    d.addr   = (uintptr_t)data;
    d.length = length;
    memcpy(&d.header, data, sizeof(d.header));
    d.payload.assign((const uint8_t *)data + sizeof(d.header),
                     (const uint8_t *)data + length);
    static_cast<std::vector<delivery> *>(arg)->push_back(d);
    return UCS_OK;
}

struct trace_record {
    uct_am_trace_type_t type;
    uint8_t id;
    size_t length;
};

void record_tracer(void *arg, uct_am_trace_type_t type, uint8_t id,
                   const void *data, size_t length, char *buffer, size_t max)
{
    static_cast<std::vector<trace_record> *>(arg)->push_back(
        {type, id, length});
    if (max > 0) {
        buffer[0] = '\0';
    }
}

} // namespace

class uct_self : public ucs::test {
protected:
    const resource *self_resource()
    {
        for (const resource &r : uct_test::all_resources()) {
            if (r.tl_name == "self") {
                return &r;
            }
        }
        return NULL;
    }
};

#define UCT_SELF_REQUIRE(_r)                 \
    const resource *_r = self_resource();    \
    if (_r == NULL) {                        \
        GTEST_SKIP() << "no self transport"; \
    }

/* An endpoint whose receiver was closed fails every message, header-only
 * or not, and the handler of nobody runs. */
TEST_F(uct_self, am_short_to_closed_iface_is_unreachable)
{
    UCT_SELF_REQUIRE(r);
    entity sender(*r, entity_params());
    std::unique_ptr<entity> receiver(new entity(*r, entity_params()));
    std::vector<delivery> got;
    const char payload[16] = "payload";

    uct_ep_h ep = sender.connect_to(*receiver);
    ASSERT_NE(nullptr, ep);
    ASSERT_EQ(UCS_OK, receiver->set_am_handler(AM_ID, record_am_cb, &got));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, 1, NULL, 0));
    ASSERT_EQ(1u, got.size());

    receiver.reset();
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_UNREACHABLE, uct_ep_am_short(ep, AM_ID, 2, NULL, 0));
        EXPECT_EQ(UCS_ERR_UNREACHABLE,
                  uct_ep_am_short(ep, AM_ID, 3, payload, sizeof(payload)));
        EXPECT_TRUE(cap.contains("receiving interface was closed"));
    }
    EXPECT_EQ(1u, got.size());
    sender.destroy_eps();
}

/* A tracer on the receiver sees every short message with its length, and
 * the handler still gets each once. */
TEST_F(uct_self, am_short_tracer_sees_every_message)
{
    UCT_SELF_REQUIRE(r);
    entity sender(*r, entity_params());
    entity receiver(*r, entity_params());
    std::vector<trace_record> traced;
    std::vector<delivery> got;
    const char payload[24] = "twenty-four bytes";

    uct_ep_h ep = sender.connect_to(receiver);
    ASSERT_NE(nullptr, ep);
    ASSERT_EQ(UCS_OK, receiver.set_am_handler(AM_ID, record_am_cb, &got));
    ASSERT_EQ(UCS_OK, uct_iface_set_am_tracer(receiver.iface(), record_tracer,
                                              &traced));

    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, 10, NULL, 0));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, 11, payload, sizeof(payload)));
    ASSERT_EQ(2u, traced.size());
    EXPECT_EQ(UCT_AM_TRACE_TYPE_RECV, traced[0].type);
    EXPECT_EQ(AM_ID, traced[0].id);
    EXPECT_EQ(sizeof(uint64_t), traced[0].length);
    EXPECT_EQ(sizeof(uint64_t) + sizeof(payload), traced[1].length);
    ASSERT_EQ(2u, got.size());
    EXPECT_EQ(10u, got[0].header);
    EXPECT_EQ(11u, got[1].header);

    /* Without the tracer the messages still arrive, untraced */
    ASSERT_EQ(UCS_OK, uct_iface_set_am_tracer(receiver.iface(), NULL, NULL));
    ASSERT_EQ(UCS_OK, uct_ep_am_short(ep, AM_ID, 12, NULL, 0));
    EXPECT_EQ(2u, traced.size());
    ASSERT_EQ(3u, got.size());
    EXPECT_EQ(12u, got[2].header);
    sender.destroy_eps();
}

/* Alignments up to the stack's 16 bytes take the fast path, larger ones
 * and offsets the checked one: all deliver aligned data and the header
 * and payload intact. */
TEST_F(uct_self, am_short_alignment_on_both_paths)
{
    UCT_SELF_REQUIRE(r);
    const size_t cases[][2] = {{1, 0},  {8, 0},  {16, 0}, {32, 0},
                               {16, 4}, {64, 0}, {128, 3}};
    uint8_t payload[56];

    for (size_t i = 0; i < sizeof(payload); ++i) {
        payload[i] = (uint8_t)(i * 7 + 1);
    }

    for (const auto &c : cases) {
        SCOPED_TRACE("am_alignment " + std::to_string(c[0]) +
                     " am_align_offset " + std::to_string(c[1]));
        entity_params params;
        params.set_am_alignment = true;
        params.am_alignment     = c[0];
        params.am_align_offset  = c[1];
        entity sender(*r, entity_params());
        entity receiver(*r, params);
        std::vector<delivery> got;

        uct_ep_h ep = sender.connect_to(receiver);
        ASSERT_NE(nullptr, ep);
        ASSERT_EQ(UCS_OK, receiver.set_am_handler(AM_ID, record_am_cb, &got));
        for (unsigned length : {0u, 1u, 20u, 56u, 100u}) {
            ASSERT_EQ(UCS_OK,
                      uct_ep_am_short(ep, AM_ID, length, payload,
                                      ucs_min(length, sizeof(payload))));
        }
        ASSERT_EQ(5u, got.size());
        for (const delivery &d : got) {
            EXPECT_EQ(0u, (d.addr + c[1]) % c[0]) << "length " << d.length;
            EXPECT_EQ(sizeof(uint64_t) + ucs_min(d.header, sizeof(payload)),
                      d.length);
            EXPECT_TRUE(std::equal(d.payload.begin(), d.payload.end(), payload))
                << "length " << d.length;
        }
        sender.destroy_eps();
    }
}
