/*
 * Registration cache: lookup, merge, reference counts, LRU eviction and its
 * limits, invalidation, statistics, memory release events (munmap, mremap,
 * madvise, mmap(MAP_FIXED), shmdt, free/realloc of glibc's mmapped
 * chunks), threads, bad input. The registrations are fake: the ops below
 * keep a registry of live registrations and count the calls.
 */
#include <common/test.h>

extern "C" {
#include <ucs/memory/memevents.h>
#include <ucs/memory/rcache.h>
#include <ucs/sys/sys.h>
}

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <malloc.h>
#include <map>
#include <mutex>
#include <string>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

const unsigned PROT_RW = PROT_READ | PROT_WRITE;

struct fake_region {
    ucs_rcache_region_t super;
    uint64_t id; /* key of the fake registration */
};

typedef std::pair<uintptr_t, uintptr_t> range_t;

/* The fake memory domain: a registry of live registrations */
struct fake_md {
    std::mutex lock;
    std::map<uint64_t, range_t> live;
    std::vector<range_t> deregistered;
    uint64_t next_id          = 0;
    unsigned long reg_calls   = 0;
    unsigned long dereg_calls = 0;
    size_t max_reg_len        = SIZE_MAX; /* larger fails */
    bool fail                 = false;
    std::function<void()> on_reg; /* runs inside mem_reg */

    bool is_live(uint64_t id)
    {
        std::lock_guard<std::mutex> guard(lock);
        return live.count(id) != 0;
    }
};

ucs_status_t fake_mem_reg(void *context, ucs_rcache_t *rcache, void *arg,
                          ucs_rcache_region_t *region)
{
    fake_md *md          = static_cast<fake_md *>(context);
    fake_region *fregion = reinterpret_cast<fake_region *>(region);

    if (md->on_reg) {
        md->on_reg();
    }

    std::lock_guard<std::mutex> guard(md->lock);
    ++md->reg_calls;
    if (md->fail || (region->end - region->start > md->max_reg_len)) {
        return UCS_ERR_IO_ERROR;
    }

    fregion->id           = ++md->next_id;
    md->live[fregion->id] = range_t(region->start, region->end);
    return UCS_OK;
}

void fake_mem_dereg(void *context, ucs_rcache_t *rcache,
                    ucs_rcache_region_t *region)
{
    fake_md *md          = static_cast<fake_md *>(context);
    fake_region *fregion = reinterpret_cast<fake_region *>(region);

    std::lock_guard<std::mutex> guard(md->lock);
    EXPECT_EQ(1u, md->live.erase(fregion->id)) << "deregistered twice";
    md->deregistered.push_back(range_t(region->start, region->end));
    ++md->dereg_calls;
}

const ucs_rcache_ops_t fake_ops = {fake_mem_reg, fake_mem_dereg};

/* Anonymous pages, unmapped at the end unless released before */
class mapped_buffer {
public:
    explicit mapped_buffer(size_t size) : m_size(size)
    {
        m_ptr = mmap(NULL, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(MAP_FAILED, m_ptr) << strerror(errno);
    }

    ~mapped_buffer()
    {
        release();
    }

    char *ptr(size_t offset = 0) const
    {
        return static_cast<char *>(m_ptr) + offset;
    }

    void release()
    {
        if (m_ptr != MAP_FAILED) {
            munmap(m_ptr, m_size);
            m_ptr = MAP_FAILED;
        }
    }

private:
    void *m_ptr;
    size_t m_size;
};

class ucs_rcache : public ucs::test {
protected:
    ucs_rcache() : m_rcache(NULL), m_page(ucs_get_page_size())
    {}

    virtual void TearDown()
    {
        destroy();
        EXPECT_TRUE(m_md.live.empty())
            << m_md.live.size() << " registrations leaked";
        ucs::test::TearDown();
    }

    ucs_rcache_params_t params(size_t max_size           = SIZE_MAX,
                               unsigned long max_regions = ULONG_MAX)
    {
        ucs_rcache_params_t p;

        memset(&p, 0, sizeof(p));
        p.region_struct_size = sizeof(fake_region);
        p.alignment          = 0;
        p.ops                = &fake_ops;
        p.context            = &m_md;
        p.max_size           = max_size;
        p.max_regions        = max_regions;
        p.flags              = 0;
        return p;
    }

    void create(const ucs_rcache_params_t &p)
    {
        ASSERT_EQ(UCS_OK, ucs_rcache_create(&p, "test", &m_rcache));
    }

    void create(size_t max_size           = SIZE_MAX,
                unsigned long max_regions = ULONG_MAX)
    {
        create(params(max_size, max_regions));
    }

    void destroy()
    {
        ucs_rcache_destroy(m_rcache);
        m_rcache = NULL;
    }

    fake_region *get(const void *address, size_t length,
                     unsigned prot = PROT_RW)
    {
        ucs_rcache_region_t *region = NULL;
        ucs_status_t status;

        status = ucs_rcache_get(m_rcache, const_cast<void *>(address), length,
                                prot, NULL, &region);
        EXPECT_EQ(UCS_OK, status);
        if (status != UCS_OK) {
            return NULL;
        }

        EXPECT_LE(region->start, (uintptr_t)address);
        EXPECT_GE(region->end, (uintptr_t)address + length);
        EXPECT_EQ(prot, region->prot & prot);
        EXPECT_EQ(0u, region->start % m_page);
        EXPECT_EQ(0u, region->end % m_page);
        return reinterpret_cast<fake_region *>(region);
    }

    void put(fake_region *region)
    {
        ucs_rcache_region_put(m_rcache, &region->super);
    }

    /* get and put at once: a region that is in the cache but unused */
    uint64_t touch(const void *address, size_t length)
    {
        fake_region *region = get(address, length);
        uint64_t id         = (region != NULL) ? region->id : 0;

        if (region != NULL) {
            put(region);
        }
        return id;
    }

    ucs_rcache_stats_t stats()
    {
        ucs_rcache_stats_t s;

        ucs_rcache_get_stats(m_rcache, &s);
        return s;
    }

    bool was_deregistered(const void *address, size_t length)
    {
        range_t range((uintptr_t)address, (uintptr_t)address + length);

        return std::find(m_md.deregistered.begin(), m_md.deregistered.end(),
                         range) != m_md.deregistered.end();
    }

    fake_md m_md;
    ucs_rcache_t *m_rcache;
    size_t m_page;
};

/* ---- lookup and merge ---------------------------------------------------- */

TEST_F(ucs_rcache, miss_registers_aligned_region)
{
    mapped_buffer buf(4 * m_page);

    create();
    fake_region *region = get(buf.ptr(100), m_page);
    ASSERT_TRUE(region != NULL);
    EXPECT_EQ((uintptr_t)buf.ptr(), region->super.start);
    EXPECT_EQ((uintptr_t)buf.ptr(2 * m_page), region->super.end);
    EXPECT_EQ(1ul, m_md.reg_calls);
    EXPECT_EQ(1ul, stats().misses);
    EXPECT_EQ(2 * m_page, stats().bytes);
    put(region);
}

TEST_F(ucs_rcache, hit_inside_region_costs_no_registration)
{
    mapped_buffer buf(4 * m_page);

    create();
    fake_region *outer = get(buf.ptr(), 4 * m_page);
    fake_region *inner = get(buf.ptr(m_page + 10), 100);
    fake_region *last  = get(buf.ptr(3 * m_page), m_page);

    EXPECT_EQ(outer, inner);
    EXPECT_EQ(outer, last);
    EXPECT_EQ(1ul, m_md.reg_calls);
    EXPECT_EQ(2ul, stats().hits);
    EXPECT_EQ(1ul, stats().misses);
    put(outer);
    put(inner);
    put(last);

    /* unused regions stay registered and still hit */
    EXPECT_EQ(0ul, m_md.dereg_calls);
    touch(buf.ptr(m_page), m_page);
    EXPECT_EQ(1ul, m_md.reg_calls);
    EXPECT_EQ(3ul, stats().hits);
}

TEST_F(ucs_rcache, miss_outside_region)
{
    mapped_buffer buf(8 * m_page);

    create();
    uint64_t first  = touch(buf.ptr(), m_page);
    uint64_t second = touch(buf.ptr(5 * m_page), m_page);
    EXPECT_NE(first, second);
    EXPECT_EQ(2ul, m_md.reg_calls);
    EXPECT_EQ(2ul, stats().misses);
    EXPECT_EQ(2ul, stats().regions);
    EXPECT_EQ(0ul, stats().merges);
}

TEST_F(ucs_rcache, overlapping_request_merges_regions)
{
    mapped_buffer buf(8 * m_page);

    create();
    touch(buf.ptr(), 2 * m_page);
    touch(buf.ptr(3 * m_page), 2 * m_page);

    /* spans both and the gap: one region [0, 5 pages) replaces them */
    fake_region *region = get(buf.ptr(m_page), 3 * m_page);
    ASSERT_TRUE(region != NULL);
    EXPECT_EQ((uintptr_t)buf.ptr(), region->super.start);
    EXPECT_EQ((uintptr_t)buf.ptr(5 * m_page), region->super.end);
    EXPECT_EQ(2ul, stats().merges);
    EXPECT_EQ(1ul, stats().regions);
    EXPECT_EQ(2ul, m_md.dereg_calls);
    put(region);

    EXPECT_EQ(region->id, touch(buf.ptr(), 5 * m_page));
    EXPECT_EQ(3ul, m_md.reg_calls);
}

TEST_F(ucs_rcache, adjacent_regions_stay_separate)
{
    mapped_buffer buf(4 * m_page);

    create();
    uint64_t first  = touch(buf.ptr(), m_page);
    uint64_t second = touch(buf.ptr(m_page), m_page);
    EXPECT_NE(first, second);
    EXPECT_EQ(0ul, stats().merges);
    EXPECT_EQ(2ul, stats().regions);

    /* a request over both is a merge of the two */
    fake_region *both = get(buf.ptr(), 2 * m_page);
    EXPECT_EQ(2ul, stats().merges);
    put(both);
}

TEST_F(ucs_rcache, requests_sharing_a_page_merge)
{
    mapped_buffer buf(4 * m_page);

    create();
    touch(buf.ptr(10), 20);
    fake_region *region = get(buf.ptr(100), m_page);
    EXPECT_EQ(1ul, stats().merges);
    EXPECT_EQ((uintptr_t)buf.ptr(), region->super.start);
    EXPECT_EQ((uintptr_t)buf.ptr(2 * m_page), region->super.end);
    put(region);
}

TEST_F(ucs_rcache, merge_keeps_referenced_region_registered)
{
    mapped_buffer buf(4 * m_page);

    create();
    fake_region *old_region = get(buf.ptr(), 2 * m_page);
    fake_region *merged     = get(buf.ptr(m_page), 2 * m_page);
    ASSERT_NE(old_region, merged);
    EXPECT_TRUE(m_md.is_live(old_region->id));
    EXPECT_EQ(0ul, m_md.dereg_calls);

    /* the old region is never returned again */
    fake_region *again = get(buf.ptr(), m_page);
    EXPECT_EQ(merged, again);
    put(again);

    uint64_t old_id = old_region->id;
    put(old_region);
    EXPECT_FALSE(m_md.is_live(old_id));
    EXPECT_EQ(1ul, m_md.dereg_calls);
    put(merged);
}

TEST_F(ucs_rcache, stronger_protection_reregisters)
{
    mapped_buffer buf(2 * m_page);

    create();
    fake_region *ro = get(buf.ptr(), m_page, PROT_READ);
    EXPECT_EQ((unsigned)PROT_READ, ro->super.prot);
    fake_region *rw = get(buf.ptr(), m_page, PROT_RW);
    EXPECT_NE(ro, rw);
    EXPECT_EQ(PROT_RW, rw->super.prot);
    EXPECT_EQ(1ul, stats().merges);

    /* read-only requests are served by the read-write region */
    fake_region *r = get(buf.ptr(), m_page, PROT_READ);
    EXPECT_EQ(rw, r);
    put(r);
    put(rw);
    put(ro);
}

TEST_F(ucs_rcache, failed_merge_registers_request_alone)
{
    mapped_buffer buf(4 * m_page);

    create();
    touch(buf.ptr(), 2 * m_page);
    m_md.max_reg_len = 2 * m_page; /* the merged 3 pages fail */

    fake_region *region = get(buf.ptr(m_page), 2 * m_page);
    ASSERT_TRUE(region != NULL);
    EXPECT_EQ((uintptr_t)buf.ptr(m_page), region->super.start);
    EXPECT_EQ((uintptr_t)buf.ptr(3 * m_page), region->super.end);
    EXPECT_EQ(3ul, m_md.reg_calls);
    put(region);
}

TEST_F(ucs_rcache, failed_registration_returns_status)
{
    mapped_buffer buf(2 * m_page);
    ucs_rcache_region_t *region = NULL;

    create();
    m_md.fail = true;
    EXPECT_EQ(UCS_ERR_IO_ERROR, ucs_rcache_get(m_rcache, buf.ptr(), m_page,
                                               PROT_RW, NULL, &region));
    EXPECT_TRUE(region == NULL);
    EXPECT_EQ(0ul, stats().regions);
    EXPECT_EQ(0ul, stats().misses);

    m_md.fail = false;
    touch(buf.ptr(), m_page);
    EXPECT_EQ(1ul, stats().regions);
}

TEST_F(ucs_rcache, custom_alignment)
{
    mapped_buffer buf(16 * m_page);
    ucs_rcache_params_t p = params();

    p.alignment = 4 * m_page;
    create(p);
    uintptr_t base =
        ((uintptr_t)buf.ptr() + 4 * m_page - 1) & ~(uintptr_t)(4 * m_page - 1);
    fake_region *region = get((void *)(base + m_page), 10);
    EXPECT_EQ(base, region->super.start);
    EXPECT_EQ(base + 4 * m_page, region->super.end);
    put(region);
}

/* ---- reference counts and invalidation -------------------------------- */

TEST_F(ucs_rcache, refcount_keeps_invalidated_region_until_last_put)
{
    mapped_buffer buf(2 * m_page);

    create();
    fake_region *a = get(buf.ptr(), m_page);
    fake_region *b = get(buf.ptr(), m_page);
    fake_region *c = get(buf.ptr(), m_page);
    ASSERT_TRUE((a == b) && (b == c));
    uint64_t id = a->id;

    ucs_rcache_invalidate(m_rcache, buf.ptr(), m_page);
    EXPECT_EQ(1ul, stats().invalidations);
    EXPECT_TRUE(m_md.is_live(id));

    /* a new get registers anew instead of returning the invalid region */
    fake_region *fresh = get(buf.ptr(), m_page);
    EXPECT_NE(a, fresh);
    EXPECT_EQ(2ul, m_md.reg_calls);

    put(a);
    put(b);
    EXPECT_TRUE(m_md.is_live(id));
    put(c);
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_EQ(1ul, m_md.dereg_calls);
    put(fresh);
}

TEST_F(ucs_rcache, invalidate_removes_only_overlapping_regions)
{
    mapped_buffer buf(8 * m_page);

    create();
    uint64_t r0 = touch(buf.ptr(0), m_page);
    uint64_t r2 = touch(buf.ptr(2 * m_page), m_page);
    uint64_t r4 = touch(buf.ptr(4 * m_page), m_page);
    uint64_t r6 = touch(buf.ptr(6 * m_page), m_page);

    ucs_rcache_invalidate(m_rcache, buf.ptr(m_page), m_page); /* a gap */
    EXPECT_EQ(0ul, stats().invalidations);

    ucs_rcache_invalidate(m_rcache, buf.ptr(2 * m_page + 1), 2 * m_page);
    EXPECT_EQ(2ul, stats().invalidations);
    EXPECT_TRUE(m_md.is_live(r0));
    EXPECT_FALSE(m_md.is_live(r2));
    EXPECT_FALSE(m_md.is_live(r4));
    EXPECT_TRUE(m_md.is_live(r6));
    EXPECT_EQ(2ul, stats().regions);
}

TEST_F(ucs_rcache, put_more_than_get_is_reported)
{
    mapped_buffer buf(m_page);

    create();
    fake_region *region = get(buf.ptr(), m_page);
    put(region);
    {
        ucs::scoped_log_capture capture;
        put(region);
        EXPECT_TRUE(capture.contains("put more often than taken"));
    }
}

TEST_F(ucs_rcache, destroy_with_region_in_use_warns)
{
    mapped_buffer buf(m_page);

    create();
    get(buf.ptr(), m_page);
    {
        ucs::scoped_log_capture capture;
        destroy();
        EXPECT_TRUE(capture.contains("1 regions still in use"));
    }
    EXPECT_EQ(1ul, m_md.dereg_calls);
}

/* Many regions registered, invalidated and looked up in random order: every
 * lookup finds exactly the region a simple map says is cached */
TEST_F(ucs_rcache, lookups_match_reference_model)
{
    const unsigned slots = ucs::test_scale(1000);
    mapped_buffer area(2 * slots * m_page);
    std::map<unsigned, uint64_t> model; /* slot -> registration id */
    unsigned seed = 7;

    create();
    for (unsigned i = 0; i < 20 * slots; ++i) {
        unsigned slot = rand_r(&seed) % slots;
        char *address = area.ptr(2 * slot * m_page);

        if ((rand_r(&seed) % 4) == 0) {
            ucs_rcache_invalidate(m_rcache, address, m_page);
            model.erase(slot);
            continue;
        }

        unsigned long reg_calls = m_md.reg_calls;
        fake_region *region     = get(address + rand_r(&seed) % m_page, 1);
        ASSERT_TRUE(region != NULL);
        if (model.count(slot) != 0) {
            ASSERT_EQ(model[slot], region->id) << "slot " << slot;
            ASSERT_EQ(reg_calls, m_md.reg_calls);
        } else {
            ASSERT_EQ(reg_calls + 1, m_md.reg_calls);
            model[slot] = region->id;
        }
        put(region);
    }
    EXPECT_EQ(model.size(), stats().regions);
    EXPECT_EQ(model.size(), m_md.live.size());
}

/* ---- limits and LRU eviction -------------------------------------------- */

TEST_F(ucs_rcache, evicts_least_recently_used_by_size)
{
    mapped_buffer buf(16 * m_page);

    create(3 * m_page);
    touch(buf.ptr(0), m_page);          /* A */
    touch(buf.ptr(2 * m_page), m_page); /* B */
    touch(buf.ptr(4 * m_page), m_page); /* C */
    touch(buf.ptr(0), m_page);          /* A is used again: B is oldest */
    EXPECT_EQ(0ul, stats().evictions);

    touch(buf.ptr(6 * m_page), m_page); /* D evicts B */
    EXPECT_EQ(1ul, stats().evictions);
    EXPECT_TRUE(was_deregistered(buf.ptr(2 * m_page), m_page));

    touch(buf.ptr(8 * m_page), m_page); /* E evicts C */
    EXPECT_TRUE(was_deregistered(buf.ptr(4 * m_page), m_page));
    EXPECT_EQ(2ul, stats().evictions);
    EXPECT_EQ(3 * m_page, stats().bytes);

    /* A is still cached */
    touch(buf.ptr(0), m_page);
    EXPECT_EQ(5ul, m_md.reg_calls);
}

TEST_F(ucs_rcache, large_region_evicts_several)
{
    mapped_buffer buf(16 * m_page);

    create(4 * m_page);
    touch(buf.ptr(0), m_page);
    touch(buf.ptr(2 * m_page), m_page);
    touch(buf.ptr(4 * m_page), m_page);
    touch(buf.ptr(8 * m_page), 3 * m_page);
    EXPECT_EQ(2ul, stats().evictions);
    EXPECT_LE(stats().bytes, 4 * m_page);
}

TEST_F(ucs_rcache, referenced_regions_are_not_evicted)
{
    mapped_buffer buf(8 * m_page);

    create(SIZE_MAX, 1);
    fake_region *a = get(buf.ptr(0), m_page);
    fake_region *b = get(buf.ptr(2 * m_page), m_page);
    EXPECT_EQ(2ul, stats().regions); /* over the limit while in use */
    EXPECT_EQ(0ul, stats().evictions);

    uint64_t b_id = b->id;
    put(b); /* evicted at once: the cache is over its limit */
    EXPECT_FALSE(m_md.is_live(b_id));
    EXPECT_EQ(1ul, stats().evictions);

    put(a); /* fits */
    EXPECT_EQ(1ul, stats().regions);
    EXPECT_EQ(1ul, stats().evictions);
}

TEST_F(ucs_rcache, max_regions_from_environment)
{
    mapped_buffer buf(8 * m_page);
    ucs::scoped_setenv env("UCX_RCACHE_MAX_REGIONS", "2");

    create(params(SIZE_MAX, 0));
    touch(buf.ptr(0), m_page);
    touch(buf.ptr(2 * m_page), m_page);
    touch(buf.ptr(4 * m_page), m_page);
    EXPECT_EQ(2ul, stats().regions);
    EXPECT_EQ(1ul, stats().evictions);
    EXPECT_TRUE(was_deregistered(buf.ptr(0), m_page));
}

TEST_F(ucs_rcache, max_size_from_environment)
{
    mapped_buffer buf(8 * m_page);
    std::string value = std::to_string(2 * m_page / 1024) + "k";
    ucs::scoped_setenv env("UCX_RCACHE_MAX_SIZE", value.c_str());

    create(params(0, ULONG_MAX));
    touch(buf.ptr(0), m_page);
    touch(buf.ptr(2 * m_page), m_page);
    touch(buf.ptr(4 * m_page), m_page);
    EXPECT_EQ(2 * m_page, stats().bytes);
    EXPECT_EQ(1ul, stats().evictions);
}

TEST_F(ucs_rcache, unlimited_by_default)
{
    mapped_buffer buf(64 * m_page);
    ucs::scoped_setenv env1("UCX_RCACHE_MAX_SIZE", NULL);
    ucs::scoped_setenv env2("UCX_RCACHE_MAX_REGIONS", NULL);

    create(params(0, 0));
    for (unsigned i = 0; i < 32; ++i) {
        touch(buf.ptr(2 * i * m_page), m_page);
    }
    EXPECT_EQ(32ul, stats().regions);
    EXPECT_EQ(0ul, stats().evictions);
}

TEST_F(ucs_rcache, bad_limit_in_environment_fails_create)
{
    ucs::scoped_setenv env("UCX_RCACHE_MAX_SIZE", "lots");
    ucs_rcache_params_t p = params(0, 0);
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_create(&p, "test", &m_rcache));
    EXPECT_TRUE(m_rcache == NULL);
    EXPECT_TRUE(capture.contains("UCX_RCACHE_MAX_SIZE"));
}

/* ---- statistics and bad input -------------------------------------------- */

TEST_F(ucs_rcache, stats_print_one_line)
{
    mapped_buffer buf(4 * m_page);
    char *text  = NULL;
    size_t size = 0;

    create();
    touch(buf.ptr(), m_page);
    touch(buf.ptr(), m_page);
    ucs_rcache_invalidate(m_rcache, buf.ptr(), m_page);

    FILE *stream = open_memstream(&text, &size);
    ASSERT_TRUE(stream != NULL);
    ucs_rcache_print_stats(m_rcache, stream);
    fclose(stream);

    std::string line(text);
    free(text);
    EXPECT_EQ(1, std::count(line.begin(), line.end(), '\n')) << line;
    EXPECT_NE(std::string::npos, line.find("rcache test:")) << line;
    EXPECT_NE(std::string::npos, line.find("hits 1 misses 1")) << line;
    EXPECT_NE(std::string::npos, line.find("invalidations 1")) << line;
    EXPECT_STREQ("test", ucs_rcache_name(m_rcache));
}

TEST_F(ucs_rcache, bad_get_arguments)
{
    mapped_buffer buf(m_page);
    ucs_rcache_region_t *region = NULL;

    create();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_rcache_get(m_rcache, NULL, m_page, PROT_RW, NULL, &region));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_rcache_get(m_rcache, buf.ptr(), 0, PROT_RW, NULL, &region));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_rcache_get(m_rcache, buf.ptr(), m_page, PROT_RW, NULL, NULL));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_get(m_rcache, buf.ptr(), m_page,
                                                    PROT_EXEC, NULL, &region));
    EXPECT_EQ(
        UCS_ERR_INVALID_PARAM,
        ucs_rcache_get(m_rcache, buf.ptr(), SIZE_MAX, PROT_RW, NULL, &region));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_rcache_get(NULL, buf.ptr(), m_page, PROT_RW, NULL, &region));
    EXPECT_TRUE(region == NULL);
    EXPECT_EQ(0ul, m_md.reg_calls);

    /* harmless */
    ucs_rcache_invalidate(m_rcache, buf.ptr(), 0);
    ucs_rcache_destroy(NULL);
}

TEST_F(ucs_rcache, bad_create_arguments)
{
    ucs_rcache_ops_t no_dereg = {fake_mem_reg, NULL};
    ucs_rcache_params_t p;
    ucs::scoped_log_capture capture;

    p = params();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_create(NULL, "x", &m_rcache));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_create(&p, "x", NULL));

    p.ops = NULL;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_create(&p, "x", &m_rcache));
    p.ops = &no_dereg;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_create(&p, "x", &m_rcache));
    EXPECT_TRUE(capture.contains("mem_reg and mem_dereg"));

    p                    = params();
    p.region_struct_size = sizeof(ucs_rcache_region_t) - 1;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_create(&p, "x", &m_rcache));
    EXPECT_TRUE(capture.contains("region_struct_size"));

    p           = params();
    p.alignment = 3 * m_page;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_rcache_create(&p, "x", &m_rcache));
    EXPECT_TRUE(capture.contains("not a power of 2"));
    EXPECT_TRUE(m_rcache == NULL);
}

/* ---- memory release events --------------------------------------------- */

TEST_F(ucs_rcache, munmap_deregisters_unused_region_at_once)
{
    mapped_buffer buf(4 * m_page);

    create();
    uint64_t id = touch(buf.ptr(), 2 * m_page);
    buf.release();
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_EQ(1ul, m_md.dereg_calls);
    EXPECT_EQ(1ul, stats().unmap_events);
    EXPECT_EQ(0ul, stats().regions);
}

TEST_F(ucs_rcache, munmap_of_part_invalidates_region_in_use)
{
    mapped_buffer buf(4 * m_page);

    create();
    fake_region *region = get(buf.ptr(), 4 * m_page);
    munmap(buf.ptr(3 * m_page), m_page);
    EXPECT_EQ(1ul, stats().unmap_events);
    EXPECT_TRUE(m_md.is_live(region->id)); /* still in use */

    /* the same range mapped again: registered anew */
    void *again =
        mmap(buf.ptr(3 * m_page), m_page, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    ASSERT_EQ((void *)buf.ptr(3 * m_page), again);
    fake_region *fresh = get(buf.ptr(), 4 * m_page);
    EXPECT_NE(region, fresh);
    EXPECT_EQ(2ul, m_md.reg_calls);

    uint64_t id = region->id;
    put(region);
    EXPECT_FALSE(m_md.is_live(id));
    put(fresh);
}

TEST_F(ucs_rcache, mremap_invalidates)
{
    size_t size = 2 * m_page;
    void *ptr   = mmap(NULL, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, ptr);

    create();
    uint64_t id = touch(ptr, size);
    void *moved = mremap(ptr, size, 64 * size, MREMAP_MAYMOVE);
    ASSERT_NE(MAP_FAILED, moved);
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_EQ(1ul, stats().unmap_events);
    munmap(moved, 64 * size);
}

TEST_F(ucs_rcache, madvise_dontneed_invalidates)
{
    mapped_buffer buf(4 * m_page);

    create();
    uint64_t kept = touch(buf.ptr(2 * m_page), m_page);
    uint64_t id   = touch(buf.ptr(), m_page);

    /* advice that keeps the pages changes nothing */
    EXPECT_EQ(0, madvise(buf.ptr(), m_page, MADV_WILLNEED));
    EXPECT_TRUE(m_md.is_live(id));

    EXPECT_EQ(0, madvise(buf.ptr(), m_page, MADV_DONTNEED));
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_TRUE(m_md.is_live(kept));
    EXPECT_EQ(1ul, stats().unmap_events);

#ifdef MADV_FREE
    id = touch(buf.ptr(), m_page);
    EXPECT_EQ(0, madvise(buf.ptr(), m_page, MADV_FREE));
    EXPECT_FALSE(m_md.is_live(id));
#endif
}

TEST_F(ucs_rcache, mmap_fixed_over_region_invalidates)
{
    mapped_buffer buf(4 * m_page);

    create();
    uint64_t id = touch(buf.ptr(), 2 * m_page);
    void *ptr   = mmap(buf.ptr(m_page), m_page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_EQ((void *)buf.ptr(m_page), ptr);
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_NE(id, touch(buf.ptr(), 2 * m_page));
}

TEST_F(ucs_rcache, shmdt_invalidates)
{
    int shmid = shmget(IPC_PRIVATE, 2 * m_page, IPC_CREAT | 0600);
    if (shmid < 0) {
        GTEST_SKIP() << "no SysV shared memory: " << strerror(errno);
    }
    void *ptr = shmat(shmid, NULL, 0);
    shmctl(shmid, IPC_RMID, NULL);
    ASSERT_NE((void *)-1, ptr);

    create();
    uint64_t id = touch(ptr, 2 * m_page);
    EXPECT_EQ(0, shmdt(ptr));
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_EQ(1ul, stats().unmap_events);
}

/* The break is moved by hand above glibc's heap and back; skipped if
 * malloc moved it in between (shrinking then would cut malloc's memory) */
TEST_F(ucs_rcache, sbrk_shrink_invalidates)
{
    create();
    char *area = static_cast<char *>(sbrk(2 * m_page));
    ASSERT_NE((void *)-1, area);
    memset(area, 0, 2 * m_page);

    uint64_t id = touch(area, 2 * m_page);
    if (sbrk(0) != area + 2 * m_page) {
        GTEST_SKIP() << "malloc moved the break meanwhile";
    }
    ASSERT_NE((void *)-1, sbrk(-(intptr_t)m_page));
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_EQ(1ul, stats().unmap_events);

    id = touch(area, m_page);
    if (sbrk(0) != area + m_page) {
        GTEST_SKIP() << "malloc moved the break meanwhile";
    }
    ASSERT_EQ(0, brk(area));
    EXPECT_FALSE(m_md.is_live(id));
}

/* Code that releases memory behind libc's back reports it itself */
TEST_F(ucs_rcache, explicit_notify_invalidates)
{
    mapped_buffer buf(2 * m_page);

    create();
    uint64_t id = touch(buf.ptr(), 2 * m_page);
    ucs_memevents_notify((uintptr_t)buf.ptr(m_page),
                         (uintptr_t)buf.ptr(2 * m_page));
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_EQ(1ul, stats().unmap_events);
}

TEST_F(ucs_rcache, no_memevents_flag_leaves_invalidation_to_owner)
{
    mapped_buffer buf(2 * m_page);
    ucs_rcache_params_t p = params();

    p.flags = UCS_RCACHE_FLAG_NO_MEMEVENTS;
    create(p);
    uint64_t id = touch(buf.ptr(), m_page);
    madvise(buf.ptr(), m_page, MADV_DONTNEED);
    EXPECT_TRUE(m_md.is_live(id));
    ucs_rcache_invalidate(m_rcache, buf.ptr(), m_page);
    EXPECT_FALSE(m_md.is_live(id));
}

/* An event that arrives while the cache lock is held (here: from inside a
 * registration) is applied before the lock is released */
TEST_F(ucs_rcache, event_during_registration_is_applied)
{
    mapped_buffer victim(m_page);
    mapped_buffer other(m_page);

    create();
    uint64_t id = touch(victim.ptr(), m_page);
    m_md.on_reg = [&]() { victim.release(); };
    touch(other.ptr(), m_page);
    m_md.on_reg = nullptr;
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_EQ(1ul, stats().unmap_events);
}

/* More events than the queue holds arrive while the lock is held: the
 * queue widens its last entry and still invalidates every region */
TEST_F(ucs_rcache, event_queue_overflow_invalidates_all)
{
    const unsigned count = 100;
    mapped_buffer area(2 * count * m_page);
    mapped_buffer other(m_page);
    std::vector<uint64_t> ids;

    create();
    for (unsigned i = 0; i < count; ++i) {
        ids.push_back(touch(area.ptr(2 * i * m_page), m_page));
    }

    m_md.on_reg = [&]() {
        for (unsigned i = 0; i < count; ++i) {
            munmap(area.ptr(2 * i * m_page), m_page);
        }
    };
    touch(other.ptr(), m_page);
    m_md.on_reg = nullptr;

    for (uint64_t id : ids) {
        EXPECT_FALSE(m_md.is_live(id));
    }
    EXPECT_EQ(count, stats().unmap_events);
    EXPECT_EQ(1ul, stats().regions);
}

TEST_F(ucs_rcache, every_cache_sees_the_event)
{
    mapped_buffer buf(m_page);
    fake_md second_md;
    ucs_rcache_params_t p = params();
    ucs_rcache_region_t *region;
    ucs_rcache_t *second;

    create();
    p.context = &second_md;
    ASSERT_EQ(UCS_OK, ucs_rcache_create(&p, "second", &second));
    uint64_t id = touch(buf.ptr(), m_page);
    ASSERT_EQ(UCS_OK, ucs_rcache_get(second, buf.ptr(), m_page, PROT_RW, NULL,
                                     &region));
    uint64_t second_id = reinterpret_cast<fake_region *>(region)->id;
    ucs_rcache_region_put(second, region);

    buf.release();
    EXPECT_FALSE(m_md.is_live(id));
    EXPECT_FALSE(second_md.is_live(second_id));
    ucs_rcache_destroy(second);
}

/* A forked child inherits the event machinery: unmapping memory and
 * creating its own cache there must work (and not wait forever on a lock
 * taken in the parent before fork()). */
TEST_F(ucs_rcache, forked_child_uses_memevents)
{
    create();
    uint64_t parent_id;
    {
        mapped_buffer warm(m_page);
        parent_id = touch(warm.ptr(), m_page);
    }
    EXPECT_FALSE(m_md.is_live(parent_id));

    pid_t pid = fork();
    ASSERT_NE(-1, pid) << strerror(errno);
    if (pid == 0) {
        /* the child: no gtest assertions, only an exit code */
        alarm(20);
        fake_md child_md;
        ucs_rcache_params_t p = params();
        ucs_rcache_region_t *region;
        ucs_rcache_t *child;
        void *ptr;

        ptr = mmap(NULL, m_page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if ((ptr == MAP_FAILED) || (munmap(ptr, m_page) != 0)) {
            _exit(2);
        }
        p.context = &child_md;
        if (ucs_rcache_create(&p, "child", &child) != UCS_OK) {
            _exit(3);
        }
        ptr = mmap(NULL, m_page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if ((ptr == MAP_FAILED) || (ucs_rcache_get(child, ptr, m_page, PROT_RW,
                                                   NULL, &region) != UCS_OK)) {
            _exit(4);
        }
        ucs_rcache_region_put(child, region);
        munmap(ptr, m_page);
        if (child_md.dereg_calls != 1) {
            _exit(5); /* the unmap event did not reach the child's cache */
        }
        ucs_rcache_destroy(child);
        _exit(0);
    }

    int wstatus = 0;
    ASSERT_EQ(pid, waitpid(pid, &wstatus, 0)) << strerror(errno);
    ASSERT_TRUE(WIFEXITED(wstatus))
        << "the child died by signal " << WTERMSIG(wstatus)
        << " (SIGALRM: it hung on a lock inherited from the parent)";
    EXPECT_EQ(0, WEXITSTATUS(wstatus));

    /* and the parent's cache still sees events after the fork */
    mapped_buffer buf(m_page);
    uint64_t id = touch(buf.ptr(), m_page);
    buf.release();
    EXPECT_FALSE(m_md.is_live(id));
}

/* fork() while another thread is registering, holding the cache's lock:
 * fork waits for it, and the child's cache is usable instead of locked for
 * good by a thread that does not exist there. */
TEST_F(ucs_rcache, fork_while_another_thread_registers)
{
    std::atomic<bool> entered(false), release(false);
    mapped_buffer a(m_page), b(m_page);

    m_md.on_reg = [&]() {
        if (!entered.exchange(true)) {
            while (!release) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
    };
    create();

    std::thread registrar([&]() { put(get(a.ptr(), m_page)); });
    while (!entered) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::thread releaser([&]() {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        release = true;
    });

    /* the verdict goes through a pipe: under valgrind the child's exit
     * code reports the parent's threads' memory as leaked */
    int verdict[2];
    ASSERT_EQ(0, pipe(verdict));
    pid_t pid = fork();
    ASSERT_NE(-1, pid) << strerror(errno);
    if (pid == 0) {
        alarm(10); /* a child stuck on the lock dies without a verdict */
        ucs_rcache_region_t *region;
        char ok = 'n';
        if (ucs_rcache_get(m_rcache, b.ptr(), m_page, PROT_RW, NULL, &region) ==
            UCS_OK) {
            ucs_rcache_region_put(m_rcache, region);
            ok = 'y';
        }
        _exit((write(verdict[1], &ok, 1) == 1) ? 0 : 1);
    }

    close(verdict[1]);
    char c = '?';
    EXPECT_EQ(1, ::read(verdict[0], &c, 1))
        << "the child hung on the cache's lock taken before fork()";
    close(verdict[0]);
    EXPECT_EQ('y', c);
    int wstatus = 0;
    EXPECT_EQ(pid, waitpid(pid, &wstatus, 0)) << strerror(errno);
    registrar.join();
    releaser.join();
    EXPECT_EQ(1ul, m_md.reg_calls); /* the child's was its own */
}

/* ---- glibc malloc: free() of mmapped chunks ---------------------------- */

/* With glibc's own allocator (no valgrind, no sanitizer) the probe must
 * see free() of an mmapped chunk, in optimized builds too. */
TEST(ucs_memevents, glibc_malloc_is_seen)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "the sanitizer replaces malloc";
#endif
    if (ucs::running_on_valgrind()) {
        GTEST_SKIP() << "valgrind replaces malloc";
    }
    unsigned caps = ucs_memevents_caps();
    EXPECT_TRUE(caps & UCS_MEMEVENTS_CAP_UNMAP);
    EXPECT_TRUE(caps & UCS_MEMEVENTS_CAP_MALLOC);
}

/* A block from malloc() that the compiler cannot see being allocated:
 * these tests pass fresh blocks by address only, never read them, and
 * an optimizing compiler would warn that they are uninitialized. */
__attribute__((noipa)) char *malloc_block(size_t size)
{
    return static_cast<char *>(malloc(size));
}

class ucs_rcache_malloc : public ucs_rcache {
protected:
    virtual void SetUp()
    {
        ucs_rcache::SetUp();
        if (!(ucs_memevents_caps() & UCS_MEMEVENTS_CAP_MALLOC)) {
            GTEST_SKIP() << "the allocator is not glibc's (valgrind, "
                            "sanitizer or another malloc)";
        }
        create();
        m_big = big_block_size();
    }

    /* A size glibc mmaps: above its largest dynamic mmap threshold
     * (32 MiB), and larger than all free heap memory, which glibc uses
     * first. The heap is never trimmed once the memory events are on, so
     * earlier tests can leave much of it free. */
    static size_t big_block_size()
    {
        return (40ul << 20) +
               ((mallinfo2().fordblks + (1ul << 20)) & ~0xffffful);
    }

    size_t m_big = 0;
};

TEST_F(ucs_rcache_malloc, chunk_range_of_mmapped_block)
{
    uintptr_t start, end;
    char *big   = malloc_block(m_big);
    char *small = malloc_block(64);

    ASSERT_TRUE((big != NULL) && (small != NULL));
    ASSERT_EQ(1, ucs_memevents_malloc_chunk_range(big, &start, &end));
    EXPECT_LE(start, (uintptr_t)big);
    EXPECT_GE(end, (uintptr_t)big + m_big);
    EXPECT_EQ(0u, start % m_page);
    EXPECT_EQ(0u, end % m_page);
    EXPECT_EQ(0, ucs_memevents_malloc_chunk_range(small, &start, &end));
    free(big);
    free(small);

    /* an aligned block starts past the beginning of its mapping */
    void *aligned = NULL;
    ASSERT_EQ(0, posix_memalign(&aligned, 1ul << 20, m_big));
    ASSERT_EQ(1, ucs_memevents_malloc_chunk_range(aligned, &start, &end));
    EXPECT_LE(start, (uintptr_t)aligned);
    EXPECT_GE(end, (uintptr_t)aligned + m_big);
    EXPECT_EQ(0u, start % m_page);

    uint64_t id = touch(aligned, m_big);
    free(aligned);
    EXPECT_FALSE(m_md.is_live(id));
}

/* The heap is not trimmed while the memory events are on: after a burst
 * of small blocks its free top can serve even a block above the mmap
 * threshold, which the tests here must not take for an mmapped one. */
TEST_F(ucs_rcache_malloc, big_block_mmapped_after_heap_grew)
{
    std::vector<void *> blocks;
    for (unsigned i = 0; i < 640; ++i) {
        blocks.push_back(malloc(100 * 1024));
    }
    for (void *block : blocks) {
        free(block);
    }
    m_big = big_block_size();

    uintptr_t start, end;
    char *big = malloc_block(m_big);
    ASSERT_TRUE(big != NULL);
    EXPECT_EQ(1, ucs_memevents_malloc_chunk_range(big, &start, &end))
        << "a block of " << m_big << " bytes came from the heap";
    free(big);
}

TEST_F(ucs_rcache_malloc, free_and_reuse_registers_anew)
{
    char *ptr = malloc_block(m_big);
    ASSERT_TRUE(ptr != NULL);
    memset(ptr, 1, m_page);

    fake_region *first = get(ptr, m_big);
    uint64_t first_id  = first->id;
    put(first);

    free(ptr);
    EXPECT_FALSE(m_md.is_live(first_id)) << "not deregistered by free()";
    EXPECT_EQ(1ul, stats().unmap_events);

    /* glibc maps the new block where the old one was */
    char *again = malloc_block(m_big);
    ASSERT_TRUE(again != NULL);
    memset(again, 2, m_page);
    fake_region *second = get(again, m_big);
    EXPECT_NE(first_id, second->id);
    EXPECT_EQ(2ul, m_md.reg_calls);
    EXPECT_EQ(0ul, stats().hits);
    put(second);
    free(again);
    if (again != ptr) {
        std::printf("[     INFO ] the new block is at another address\n");
    }
}

TEST_F(ucs_rcache_malloc, free_of_block_in_use_defers_dereg)
{
    char *ptr = malloc_block(m_big);
    ASSERT_TRUE(ptr != NULL);

    fake_region *region = get(ptr + m_page, m_page);
    uint64_t id         = region->id;
    free(ptr);
    EXPECT_TRUE(m_md.is_live(id));

    char *again = malloc_block(m_big);
    ASSERT_TRUE(again != NULL);
    fake_region *fresh = get(again + m_page, m_page);
    EXPECT_NE(region, fresh);
    put(region);
    EXPECT_FALSE(m_md.is_live(id));
    put(fresh);
    free(again);
}

TEST_F(ucs_rcache_malloc, realloc_of_mmapped_block_invalidates)
{
    char *ptr = malloc_block(m_big);
    ASSERT_TRUE(ptr != NULL);

    uint64_t id  = touch(ptr, m_big);
    char *bigger = static_cast<char *>(realloc(ptr, 2 * m_big));
    ASSERT_TRUE(bigger != NULL);
    EXPECT_FALSE(m_md.is_live(id));
    free(bigger);
}

TEST_F(ucs_rcache_malloc, malloc_trim_invalidates_everything)
{
    mapped_buffer buf(4 * m_page);

    uint64_t first  = touch(buf.ptr(), m_page);
    uint64_t second = touch(buf.ptr(2 * m_page), m_page);
    malloc_trim(0);
    EXPECT_FALSE(m_md.is_live(first));
    EXPECT_FALSE(m_md.is_live(second));
}

/* Heap memory keeps its pages after free (the heap is not trimmed while a
 * cache exists), so a registration of reused heap memory stays valid */
TEST_F(ucs_rcache_malloc, heap_is_not_trimmed)
{
    std::vector<void *> blocks;

    void *top_before = sbrk(0);
    for (unsigned i = 0; i < 16; ++i) {
        blocks.push_back(malloc(100 * 1024));
    }
    void *top_grown = sbrk(0);
    for (void *block : blocks) {
        free(block);
    }
    void *top_after = sbrk(0);
    if (top_grown == top_before) {
        GTEST_SKIP() << "the blocks came from free heap memory";
    }
    /* glibc would have trimmed the 1.6 MiB free top of the heap */
    EXPECT_EQ(top_grown, top_after);
}

/* ---- threads ------------------------------------------------------------ */

TEST_F(ucs_rcache, threads_get_put_invalidate_unmap)
{
    const unsigned pages      = 64;
    const unsigned iterations = ucs::test_scale(20000);
    mapped_buffer shared(pages * m_page);
    std::vector<std::thread> threads;

    create(16 * m_page, 8);
    for (unsigned t = 0; t < 3; ++t) {
        threads.emplace_back([&, t]() {
            unsigned seed = t + 1;
            for (unsigned i = 0; i < iterations; ++i) {
                unsigned first = rand_r(&seed) % pages;
                unsigned count =
                    1 + rand_r(&seed) % std::min(4u, pages - first);
                fake_region *region =
                    get(shared.ptr(first * m_page), count * m_page);
                ASSERT_TRUE(region != NULL);
                EXPECT_TRUE(m_md.is_live(region->id));
                if ((i % 64) == 0) {
                    ucs_rcache_invalidate(m_rcache, shared.ptr(first * m_page),
                                          m_page);
                }
                EXPECT_TRUE(m_md.is_live(region->id));
                put(region);
            }
        });
    }

    /* a fourth thread maps, registers and unmaps its own memory; the
     * kernel mostly maps it at the same address again, and the region of
     * the previous mapping must never come back */
    threads.emplace_back([&]() {
        uint64_t prev_id = 0;
        for (unsigned i = 0; i < iterations / 8; ++i) {
            mapped_buffer own(2 * m_page);
            fake_region *region = get(own.ptr(), 2 * m_page);
            ASSERT_TRUE(region != NULL);
            EXPECT_NE(prev_id, region->id) << "iteration " << i;
            prev_id = region->id;
            put(region);
            own.release();
        }
    });

    for (std::thread &thread : threads) {
        thread.join();
    }

    ucs_rcache_stats_t s = stats();
    EXPECT_EQ(s.regions, m_md.live.size());
    EXPECT_LE(s.regions, 8ul);
    EXPECT_GT(s.hits, 0ul);
    EXPECT_EQ(m_md.reg_calls, m_md.dereg_calls + s.regions);
}

} // namespace
