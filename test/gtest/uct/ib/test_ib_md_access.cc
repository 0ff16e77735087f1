/*
 * The software check of remote accesses in the ib md
 * (uct_ib_md_access_begin/end): every memory region the md registers is
 * found by its rkey with its range and verbs access flags; ranges are
 * checked at the edges and against wrap-around; a region leaves the table
 * before it is deregistered, and a deregistration waits for an access
 * under way.
 *
 * Every test runs with the registration cache off (RCACHE=n in the md
 * config) and on; tests that need one of the two skip in the other. They
 * run on rxe_lo, as set up by test/rxe/run.sh, and skip without it.
 */
#include "ib_lookup.h"

#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
#include <uct/base/uct_component.h>
#include <uct/ib/base/ib_md.h>
#include <ucs/sys/sys.h>
}

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <vector>

namespace {

const char *const ACCESS_TEST_DEVICE = "rxe_lo";

const int PUT = IBV_ACCESS_REMOTE_WRITE;
const int GET = IBV_ACCESS_REMOTE_READ;

} // namespace

/* Parameter: the md config's RCACHE value */
class ib_md_access : public ib_md_fixture {
protected:
    ib_md_access() : ib_md_fixture(ACCESS_TEST_DEVICE)
    {}

    void SetUp() override
    {
        ib_md_fixture::SetUp();
        if (stopped()) {
            return;
        }

        /* "try" for the cached variant, so a build without the cache
         * skips instead of failing */
        ASSERT_EQ(UCS_OK,
                  ib_lookup::open_md(ACCESS_TEST_DEVICE, &m_md,
                                     {{"RCACHE", cached() ? "try" : "n"}}));
        if (cached() != (uct_ib_md_rcache(m_md) != NULL)) {
            GTEST_SKIP() << "the registration cache could not be created";
        }

        m_page = ucs_get_page_size();
    }

    void TearDown() override
    {
        for (auto &area : m_areas) {
            munmap(area.first, area.second);
        }
        ib_md_fixture::TearDown();
    }

    bool cached() const
    {
        return GetParam() != "n";
    }

    uct_ib_md_t *md() const
    {
        return uct_ib_md_from(m_md);
    }

    /* @a pages fresh pages, unmapped at TearDown: a registration covers
     * exactly them, with the cache too (its regions are page-aligned) */
    char *map(size_t pages)
    {
        void *area = mmap(NULL, pages * m_page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(MAP_FAILED, area);
        if (area == MAP_FAILED) {
            return NULL;
        }
        m_areas.emplace_back(area, pages * m_page);
        return (char *)area;
    }

    uct_mem_h reg(void *address, size_t length, unsigned flags)
    {
        uct_mem_h memh = UCT_MEM_HANDLE_NULL;
        EXPECT_EQ(UCS_OK, uct_md_mem_reg(m_md, address, length, flags, &memh));
        return memh;
    }

    /* The rkey a peer names: packed by the md and unpacked */
    uint32_t rkey(uct_mem_h memh)
    {
        uint8_t packed[UCT_IB_MD_PACKED_RKEY_SIZE];
        uct_rkey_bundle_t bundle;

        EXPECT_EQ(UCS_OK, uct_md_mkey_pack(m_md, memh, packed));
        EXPECT_EQ(UCS_OK, uct_rkey_unpack(m_component, packed, &bundle));
        uint32_t value = uct_ib_md_direct_rkey(bundle.rkey);
        EXPECT_EQ(UCS_OK, uct_rkey_release(m_component, &bundle));
        return value;
    }

    /* Whether the access is granted; ended at once when it is */
    bool granted(uint32_t key, uint64_t address, uint64_t length,
                 int ibv_access)
    {
        ucs_status_t status =
            uct_ib_md_access_begin(md(), key, address, length, ibv_access);
        if (status == UCS_OK) {
            uct_ib_md_access_end(md());
            return true;
        }
        EXPECT_EQ(UCS_ERR_INVALID_ADDR, status);
        return false;
    }

    bool granted(uint32_t key, const void *address, uint64_t length,
                 int ibv_access)
    {
        return granted(key, (uintptr_t)address, length, ibv_access);
    }

    /* Whether the md's lock is free: nothing was left held */
    bool lock_free()
    {
        if (pthread_rwlock_trywrlock(&md()->lock) != 0) {
            return false;
        }
        pthread_rwlock_unlock(&md()->lock);
        return true;
    }

    unsigned long num_dereg() const
    {
        return __atomic_load_n(&md()->num_dereg, __ATOMIC_RELAXED);
    }

    size_t m_page = 4096;
    std::vector<std::pair<void *, size_t>> m_areas;
};

TEST_P(ib_md_access, put_granted_at_start_middle_and_end)
{
    const size_t length = 4 * m_page;
    char *buf           = map(4);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, length, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key = rkey(memh);

    EXPECT_TRUE(granted(key, buf, length, PUT)) << "the whole buffer";
    EXPECT_TRUE(granted(key, buf, 1, PUT)) << "the first byte";
    EXPECT_TRUE(granted(key, buf, 0, PUT)) << "nothing at the start";
    EXPECT_TRUE(granted(key, buf + 100, 1000, PUT)) << "the middle";
    EXPECT_TRUE(granted(key, buf + m_page, 2 * m_page, PUT)) << "pages";
    EXPECT_TRUE(granted(key, buf + length - 1, 1, PUT)) << "the last byte";
    EXPECT_TRUE(granted(key, buf + length - 8, 8, PUT)) << "the tail";
    EXPECT_TRUE(granted(key, buf + length, 0, PUT)) << "nothing at the end";
    EXPECT_TRUE(granted(key, buf + 64, 64, GET)) << "a GET";
    EXPECT_TRUE(granted(key, buf + 64, 64, PUT | GET)) << "both";
    EXPECT_TRUE(lock_free());

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

TEST_P(ib_md_access, refused_past_the_end)
{
    const size_t length = 4 * m_page;
    char *buf           = map(4);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, length, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key = rkey(memh);

    /* nothing is logged: a line would fail the test */
    EXPECT_FALSE(granted(key, buf + length, 1, PUT)) << "one byte past";
    EXPECT_FALSE(granted(key, buf + length - 1, 2, PUT)) << "across the end";
    EXPECT_FALSE(granted(key, buf, length + 1, PUT)) << "one byte too long";
    EXPECT_FALSE(granted(key, buf + length + 1, 0, PUT)) << "empty, beyond";
    EXPECT_FALSE(granted(key, buf - 1, 1, PUT)) << "before the start";
    EXPECT_FALSE(granted(key, buf - 1, 0, PUT)) << "empty, before";
    EXPECT_FALSE(granted(key, buf + length, 1, GET)) << "a GET past";
    EXPECT_TRUE(lock_free()) << "a refusal kept the lock";

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

/* A length that takes address + length past 2^64 lands below the region
 * end: a check that adds them would grant it */
TEST_P(ib_md_access, refused_when_the_range_wraps)
{
    const size_t length = 4 * m_page;
    char *buf           = map(4);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, length, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key     = rkey(memh);
    uint64_t address = (uintptr_t)buf + 8;

    EXPECT_FALSE(granted(key, address, UINT64_MAX - 7, PUT))
        << "address + length wraps to the region start";
    EXPECT_FALSE(granted(key, address, UINT64_MAX, PUT));
    EXPECT_FALSE(granted(key, (uintptr_t)buf, UINT64_MAX, PUT));
    EXPECT_FALSE(granted(key, UINT64_MAX, 1, PUT));
    EXPECT_FALSE(granted(key, UINT64_MAX, 0, PUT));
    EXPECT_FALSE(granted(key, UINT64_MAX - 7, length, GET));
    EXPECT_TRUE(lock_free());

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

TEST_P(ib_md_access, refused_with_an_unknown_rkey)
{
    char *buf = map(1);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, m_page, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key = rkey(memh);

    for (uint32_t other :
         {~key, key ^ 0x1u, key ^ 0x100u, key + 0x100u, 0u, UINT32_MAX}) {
        if (other == key) {
            continue;
        }
        EXPECT_FALSE(granted(other, buf, 8, PUT))
            << "rkey 0x" << std::hex << other << " (live 0x" << key << ")";
    }
    EXPECT_TRUE(granted(key, buf, 8, PUT));
    EXPECT_TRUE(lock_free());

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

TEST_P(ib_md_access, no_access_right_is_refused)
{
    char *buf = map(1);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, m_page, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);

    EXPECT_FALSE(granted(rkey(memh), buf, 8, 0));
    EXPECT_FALSE(granted(rkey(memh), buf, 0, 0));
    EXPECT_TRUE(lock_free());

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

/* Memory registered for GET only (uct_ib_md_access_flags() gives remote
 * read; a cache region made for it is read-only) refuses a PUT */
TEST_P(ib_md_access, put_refused_on_get_only_memory)
{
    char *buf = map(2);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, 2 * m_page, UCT_MD_MEM_ACCESS_REMOTE_GET);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key = rkey(memh);

    EXPECT_TRUE(granted(key, buf, 2 * m_page, GET));
    EXPECT_FALSE(granted(key, buf, 8, PUT));
    EXPECT_FALSE(granted(key, buf, 8, PUT | GET));
    EXPECT_FALSE(granted(key, buf, 8, IBV_ACCESS_REMOTE_ATOMIC));
    EXPECT_TRUE(lock_free());

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

TEST_P(ib_md_access, put_only_memory_refuses_get)
{
    if (cached()) {
        GTEST_SKIP() << "cache regions for a PUT get every right";
    }

    char *buf = map(1);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, m_page, UCT_MD_MEM_ACCESS_REMOTE_PUT);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);

    EXPECT_TRUE(granted(rkey(memh), buf, m_page, PUT));
    EXPECT_FALSE(granted(rkey(memh), buf, 8, GET));

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

TEST_P(ib_md_access, refused_after_dereg)
{
    if (cached()) {
        GTEST_SKIP() << "the cache keeps the region registered";
    }

    char *buf = map(2);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, 2 * m_page, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key = rkey(memh);

    EXPECT_TRUE(granted(key, buf, 8, PUT));
    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
    EXPECT_FALSE(granted(key, buf, 8, PUT));
    EXPECT_FALSE(granted(key, buf, 8, GET));
    EXPECT_FALSE(granted(key, buf, 0, PUT));
    EXPECT_TRUE(lock_free());
}

/* With the cache, a region outlives its last dereg (the device still
 * honours its rkey, and so does the check) until its memory is unmapped */
TEST_P(ib_md_access, cached_region_refused_after_unmap)
{
    if (!cached()) {
        GTEST_SKIP() << "no cache";
    }

    const size_t length = 4 * m_page;
    char *buf           = (char *)mmap(NULL, length, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void *)buf);
    uct_mem_h memh = reg(buf, length, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key         = rkey(memh);
    unsigned long deregs = num_dereg();

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
    EXPECT_TRUE(granted(key, buf, length, PUT)) << "the cache kept it";

    EXPECT_EQ(0, munmap(buf, length));
    EXPECT_EQ(deregs + 1, num_dereg()) << "the unmap did not deregister";
    EXPECT_FALSE(granted(key, buf, 8, PUT));
    EXPECT_TRUE(lock_free());
}

TEST_P(ib_md_access, allocated_memory_granted)
{
    uct_allocated_memory_t mem;

    ASSERT_EQ(UCS_OK, alloc_on_md(10000, "ib_md_access test", &mem));
    ASSERT_EQ(UCT_ALLOC_METHOD_MD, mem.method);
    uint32_t key = rkey(mem.memh);
    char *buf    = (char *)mem.address;

    EXPECT_TRUE(granted(key, buf, mem.length, PUT));
    EXPECT_TRUE(granted(key, buf + 5000, 5000, GET));
    EXPECT_TRUE(granted(key, buf + mem.length, 0, PUT));
    EXPECT_FALSE(granted(key, buf + mem.length, 1, PUT));

    EXPECT_EQ(UCS_OK, uct_mem_free(&mem));
    EXPECT_FALSE(granted(key, buf, 8, PUT)) << "granted after mem_free";
    EXPECT_TRUE(lock_free());
}

/* Many regions at once: the table grows and keeps every one findable, and
 * each leaves it with its deregistration */
TEST_P(ib_md_access, many_regions)
{
    const size_t count = 300;
    char *area         = map(2 * count);
    ASSERT_TRUE(area != NULL);
    std::vector<uct_mem_h> memhs;
    std::vector<uint32_t> keys;

    /* every other page, so that cache regions do not merge */
    for (size_t i = 0; i < count; ++i) {
        uct_mem_h memh =
            reg(area + 2 * i * m_page, m_page, UCT_MD_MEM_ACCESS_ALL);
        ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL) << i;
        memhs.push_back(memh);
        keys.push_back(rkey(memh));
    }
    EXPECT_GE(ucs_hash_size(&md()->regions), count);

    for (size_t i = 0; i < count; ++i) {
        char *page = area + 2 * i * m_page;
        EXPECT_TRUE(granted(keys[i], page, m_page, PUT)) << i;
        EXPECT_FALSE(granted(keys[i], page + m_page, 1, PUT)) << i;
    }

    for (size_t i = 0; i < count; i += 2) {
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memhs[i]));
    }
    for (size_t i = 0; i < count; ++i) {
        char *page = area + 2 * i * m_page;
        bool gone  = !cached() && ((i % 2) == 0);
        EXPECT_EQ(!gone, granted(keys[i], page, m_page, PUT)) << i;
    }
    for (size_t i = 1; i < count; i += 2) {
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memhs[i]));
    }
    EXPECT_TRUE(lock_free());
}

/* A deregistration that starts while an access is under way returns only
 * after the access ended, and deregisters nothing before */
TEST_P(ib_md_access, dereg_waits_for_access_end)
{
    if (cached()) {
        GTEST_SKIP() << "a cached dereg keeps the region";
    }

    char *buf = map(1);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, m_page, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key         = rkey(memh);
    unsigned long deregs = num_dereg();

    ASSERT_EQ(UCS_OK,
              uct_ib_md_access_begin(md(), key, (uintptr_t)buf, m_page, PUT));
    memset(buf, 'a', m_page); /* the copy of a PUT */

    std::atomic<bool> started(false), returned(false);
    ucs_status_t dereg_status = UCS_ERR_NO_PROGRESS;
    std::thread deregistrar([&]() {
        started      = true;
        dereg_status = uct_md_mem_dereg(m_md, memh);
        returned     = true;
    });

    while (!started) {
        std::this_thread::yield();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_FALSE(returned) << "the dereg did not wait for the access";
    EXPECT_EQ(deregs, num_dereg()) << "ibv_dereg_mr during the access";
    EXPECT_EQ('a', buf[m_page - 1]);

    uct_ib_md_access_end(md());
    deregistrar.join();
    EXPECT_TRUE(returned);
    EXPECT_EQ(UCS_OK, dereg_status);
    EXPECT_EQ(deregs + 1, num_dereg());
    EXPECT_FALSE(granted(key, buf, 8, PUT));
    EXPECT_TRUE(lock_free());
}

/* Two threads register and deregister pages (the table grows and shrinks
 * under them) while a third checks accesses to a region that stays */
TEST_P(ib_md_access, registrations_race_with_accesses)
{
    const size_t per_thread = 150;
    char *area              = map(4 * per_thread + 2);
    ASSERT_TRUE(area != NULL);
    char *fixed          = area + 4 * per_thread * m_page;
    uct_mem_h fixed_memh = reg(fixed, m_page, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(fixed_memh != UCT_MEM_HANDLE_NULL);
    uint32_t fixed_key = rkey(fixed_memh);

    std::atomic<unsigned> failures(0);
    std::atomic<bool> stop(false);
    std::vector<std::thread> threads;

    for (size_t t = 0; t < 2; ++t) {
        threads.emplace_back([&, t]() {
            std::vector<uct_mem_h> memhs;
            for (size_t round = 0; round < 2; ++round) {
                for (size_t i = 0; i < per_thread; ++i) {
                    char *page = area + (2 * (t * per_thread + i)) * m_page;
                    uct_mem_h memh;
                    if (uct_md_mem_reg(m_md, page, m_page,
                                       UCT_MD_MEM_ACCESS_ALL,
                                       &memh) != UCS_OK) {
                        ++failures;
                        return;
                    }
                    memhs.push_back(memh);
                }
                for (uct_mem_h memh : memhs) {
                    if (uct_md_mem_dereg(m_md, memh) != UCS_OK) {
                        ++failures;
                    }
                }
                memhs.clear();
            }
        });
    }

    unsigned long checks = 0;
    std::thread checker([&]() {
        while (!stop) {
            if (!granted(fixed_key, fixed, m_page, PUT) ||
                granted(fixed_key, fixed + m_page, 1, PUT)) {
                ++failures;
            }
            ++checks;
        }
    });

    threads[0].join();
    threads[1].join();
    stop = true;
    checker.join();
    EXPECT_EQ(0u, failures);
    EXPECT_GT(checks, 0u);
    EXPECT_TRUE(granted(fixed_key, fixed, m_page, PUT));
    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, fixed_memh));
    EXPECT_TRUE(lock_free());
}

/* Accesses on several threads run side by side: one held does not stop
 * another from being granted */
TEST_P(ib_md_access, accesses_are_shared)
{
    char *buf = map(1);
    ASSERT_TRUE(buf != NULL);
    uct_mem_h memh = reg(buf, m_page, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    uint32_t key = rkey(memh);

    ASSERT_EQ(UCS_OK,
              uct_ib_md_access_begin(md(), key, (uintptr_t)buf, 8, PUT));
    bool other = false;
    std::thread reader([&]() { other = granted(key, buf + 8, 8, GET); });
    reader.join();
    EXPECT_TRUE(other);
    uct_ib_md_access_end(md());

    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

INSTANTIATE_TEST_SUITE_P(, ib_md_access, testing::Values("n", "yes"),
                         [](const testing::TestParamInfo<std::string> &info) {
                             return (info.param == "n") ? "rcache_off"
                                                        : "rcache_on";
                         });
