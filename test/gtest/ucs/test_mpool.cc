#include <common/test.h>

#include <ucs/memory/mpool.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_mpool, ...). */
namespace {

/* State shared with the counting ops through the pool's private area. */
struct chunk_stats {
    unsigned allocs;
    unsigned releases;
    unsigned obj_inits;
    unsigned obj_cleanups;
    size_t extra; /* bytes added to every chunk request */
    bool fail;    /* make chunk_alloc fail */
    std::set<void *> live_chunks;
    std::set<void *> objs_with_bad_chunk;
};

chunk_stats *stats_of(ucs_mpool_t *mp)
{
    return *static_cast<chunk_stats **>(ucs_mpool_priv(mp));
}

ucs_status_t counting_chunk_alloc(ucs_mpool_t *mp, size_t *size_p,
                                  void **chunk_p)
{
    chunk_stats *stats = stats_of(mp);
    void *chunk;

    if (stats->fail) {
        return UCS_ERR_NO_MEMORY;
    }

    *size_p += stats->extra;
    chunk = malloc(*size_p);
    if (chunk == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ++stats->allocs;
    stats->live_chunks.insert(chunk);
    *chunk_p = chunk;
    return UCS_OK;
}

void counting_chunk_release(ucs_mpool_t *mp, void *chunk)
{
    chunk_stats *stats = stats_of(mp);

    EXPECT_EQ(1u, stats->live_chunks.erase(chunk));
    ++stats->releases;
    free(chunk);
}

void counting_obj_init(ucs_mpool_t *mp, void *obj, void *chunk)
{
    chunk_stats *stats = stats_of(mp);

    if (!stats->live_chunks.count(chunk) || (obj <= chunk)) {
        stats->objs_with_bad_chunk.insert(obj);
    }
    memset(obj, 0xab, 1);
    ++stats->obj_inits;
}

void counting_obj_cleanup(ucs_mpool_t *mp, void *obj)
{
    ++stats_of(mp)->obj_cleanups;
}

const ucs_mpool_ops_t counting_ops = {counting_chunk_alloc,
                                      counting_chunk_release, counting_obj_init,
                                      counting_obj_cleanup};

class ucs_mpool : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        m_stats = chunk_stats();
    }

    ucs_mpool_params_t params(size_t elem_size, unsigned per_chunk,
                              unsigned max_elems = 0)
    {
        ucs_mpool_params_t p;

        ucs_mpool_params_reset(&p);
        p.elem_size       = elem_size;
        p.elems_per_chunk = per_chunk;
        p.max_elems       = max_elems;
        p.priv_size       = sizeof(chunk_stats *);
        p.ops             = &counting_ops;
        p.name            = "test";
        return p;
    }

    void init(ucs_mpool_t *mp, const ucs_mpool_params_t &p)
    {
        ASSERT_EQ(UCS_OK, ucs_mpool_init(mp, &p));
        *static_cast<chunk_stats **>(ucs_mpool_priv(mp)) = &m_stats;
    }

    std::vector<void *> get_n(ucs_mpool_t *mp, unsigned n)
    {
        std::vector<void *> objs;
        for (unsigned i = 0; i < n; ++i) {
            void *obj = ucs_mpool_get(mp);
            EXPECT_NE(nullptr, obj);
            if (obj == NULL) {
                break;
            }
            objs.push_back(obj);
        }
        return objs;
    }

    static void put_all(std::vector<void *> &objs)
    {
        for (size_t i = 0; i < objs.size(); ++i) {
            ucs_mpool_put(objs[i]);
        }
        objs.clear();
    }

    chunk_stats m_stats;
};

TEST_F(ucs_mpool, get_put_basic)
{
    ucs_mpool_t mp;
    init(&mp, params(40, 8));

    EXPECT_TRUE(ucs_mpool_is_empty(&mp));
    EXPECT_EQ(0u, m_stats.allocs);
    EXPECT_STREQ("test", ucs_mpool_name(&mp));

    std::vector<void *> objs = get_n(&mp, 8);
    std::set<void *> unique(objs.begin(), objs.end());
    EXPECT_EQ(8u, unique.size());
    EXPECT_EQ(1u, m_stats.allocs);
    EXPECT_TRUE(ucs_mpool_is_empty(&mp));
    for (size_t i = 0; i < objs.size(); ++i) {
        EXPECT_EQ(&mp, ucs_mpool_obj_owner(objs[i]));
        memset(objs[i], (int)i, 40);
    }
    for (size_t i = 0; i < objs.size(); ++i) {
        EXPECT_EQ((char)i, static_cast<char *>(objs[i])[39]);
    }

    /* the last one returned is the next one handed out */
    void *last = objs.back();
    put_all(objs);
    EXPECT_FALSE(ucs_mpool_is_empty(&mp));
    void *again = ucs_mpool_get(&mp);
    EXPECT_EQ(last, again);
    ucs_mpool_put(again);
    EXPECT_EQ(1u, m_stats.allocs);

    ucs_mpool_cleanup(&mp, 1);
    EXPECT_EQ(1u, m_stats.releases);
    EXPECT_EQ(8u, m_stats.obj_inits);
    EXPECT_EQ(8u, m_stats.obj_cleanups);
    EXPECT_TRUE(m_stats.objs_with_bad_chunk.empty());
}

TEST_F(ucs_mpool, alignment_and_offset_are_exact)
{
    static const size_t alignments[] = {1, 2, 8, 64, 128, 4096};
    static const size_t offsets[]    = {0, 1, 3, 8, 13, 63, 200};
    static const size_t sizes[]      = {1, 7, 24, 100, 333};

    for (size_t a : alignments) {
        for (size_t off : offsets) {
            for (size_t size : sizes) {
                ucs_mpool_params_t p = params(size, 5);
                p.alignment          = a;
                p.align_offset       = off;
                ucs_mpool_t mp;
                init(&mp, p);

                /* several chunks, each object fully written */
                std::vector<void *> objs = get_n(&mp, 12);
                for (size_t i = 0; i < objs.size(); ++i) {
                    uintptr_t addr = (uintptr_t)objs[i];
                    ASSERT_EQ(0u, (addr + off) % a)
                        << "alignment " << a << " offset " << off << " size "
                        << size << " object " << i;
                    memset(objs[i], (int)(i + 1), size);
                }
                for (size_t i = 0; i < objs.size(); ++i) {
                    const unsigned char *b = (const unsigned char *)objs[i];
                    ASSERT_EQ(i + 1, b[0]);
                    ASSERT_EQ(i + 1, b[size - 1]);
                }
                put_all(objs);
                ucs_mpool_cleanup(&mp, 1);
            }
        }
    }
}

TEST_F(ucs_mpool, grows_on_demand)
{
    const unsigned count = ucs::test_scale(1000);
    ucs_mpool_t mp;
    init(&mp, params(16, 4));

    std::vector<void *> objs = get_n(&mp, count);
    EXPECT_EQ(count, objs.size());
    EXPECT_EQ((count + 3) / 4, m_stats.allocs);
    put_all(objs);

    /* returned objects are reused, no new chunk */
    objs = get_n(&mp, count);
    EXPECT_EQ((count + 3) / 4, m_stats.allocs);
    put_all(objs);
    ucs_mpool_cleanup(&mp, 1);
    EXPECT_EQ(m_stats.allocs, m_stats.releases);
}

TEST_F(ucs_mpool, max_elems_limit)
{
    ucs_mpool_t mp;
    init(&mp, params(32, 4, 10));

    std::vector<void *> objs = get_n(&mp, 10);
    ASSERT_EQ(10u, objs.size());
    /* chunks of 4, 4 and then only 2 */
    EXPECT_EQ(3u, m_stats.allocs);
    EXPECT_EQ(10u, m_stats.obj_inits);

    EXPECT_EQ(nullptr, ucs_mpool_get(&mp));
    EXPECT_EQ(nullptr, ucs_mpool_get_grow(&mp));
    EXPECT_EQ(3u, m_stats.allocs);

    void *obj = objs.back();
    objs.pop_back();
    ucs_mpool_put(obj);
    EXPECT_EQ(obj, ucs_mpool_get(&mp));
    EXPECT_EQ(nullptr, ucs_mpool_get(&mp));
    objs.push_back(obj);

    put_all(objs);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, unlimited_spellings)
{
    for (unsigned max_elems : {0u, UINT_MAX}) {
        ucs_mpool_t mp;
        init(&mp, params(8, 2, max_elems));
        std::vector<void *> objs = get_n(&mp, 100);
        EXPECT_EQ(100u, objs.size());
        put_all(objs);
        ucs_mpool_cleanup(&mp, 1);
    }
}

TEST_F(ucs_mpool, grow_in_advance)
{
    ucs_mpool_t mp;
    init(&mp, params(64, 8, 20));

    EXPECT_EQ(UCS_OK, ucs_mpool_grow(&mp, 10));
    EXPECT_EQ(2u, m_stats.allocs);
    EXPECT_FALSE(ucs_mpool_is_empty(&mp));

    std::vector<void *> objs = get_n(&mp, 16);
    EXPECT_EQ(2u, m_stats.allocs);

    EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT, ucs_mpool_grow(&mp, 10));
    EXPECT_EQ(3u, m_stats.allocs); /* the last 4 objects were added */
    std::vector<void *> more = get_n(&mp, 4);
    EXPECT_EQ(nullptr, ucs_mpool_get(&mp));

    put_all(objs);
    put_all(more);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, release_idle_chunks)
{
    ucs_mpool_t mp;
    init(&mp, params(24, 8));

    EXPECT_EQ(0u, ucs_mpool_release_idle(&mp));

    std::vector<void *> objs = get_n(&mp, 32);
    ASSERT_EQ(32u, objs.size());
    EXPECT_EQ(4u, m_stats.allocs);

    /* everything in use: nothing to release */
    EXPECT_EQ(0u, ucs_mpool_release_idle(&mp));

    /* keep one object of the first chunk and one of the third */
    void *kept1 = objs[0];
    void *kept2 = objs[17];
    for (size_t i = 0; i < objs.size(); ++i) {
        if ((objs[i] != kept1) && (objs[i] != kept2)) {
            ucs_mpool_put(objs[i]);
        }
    }
    objs.clear();

    EXPECT_EQ(2u, ucs_mpool_release_idle(&mp));
    EXPECT_EQ(2u, m_stats.releases);
    EXPECT_EQ(16u, m_stats.obj_cleanups);
    EXPECT_EQ(0u, ucs_mpool_release_idle(&mp));

    /* the kept objects are still valid; the 14 free objects of their chunks
     * come out before a new chunk is allocated */
    memset(kept1, 1, 24);
    memset(kept2, 2, 24);
    objs = get_n(&mp, 14);
    EXPECT_EQ(4u, m_stats.allocs);
    objs.push_back(ucs_mpool_get(&mp));
    EXPECT_EQ(5u, m_stats.allocs);

    ucs_mpool_put(kept1);
    ucs_mpool_put(kept2);
    put_all(objs);
    EXPECT_EQ(3u, ucs_mpool_release_idle(&mp));
    EXPECT_TRUE(ucs_mpool_is_empty(&mp));
    EXPECT_TRUE(m_stats.live_chunks.empty());

    /* still usable after releasing everything */
    objs = get_n(&mp, 3);
    put_all(objs);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, release_idle_respects_limit_accounting)
{
    ucs_mpool_t mp;
    init(&mp, params(8, 4, 8));

    std::vector<void *> objs = get_n(&mp, 8);
    EXPECT_EQ(nullptr, ucs_mpool_get(&mp));
    put_all(objs);
    EXPECT_EQ(2u, ucs_mpool_release_idle(&mp));

    /* the released objects no longer count against max_elems */
    objs = get_n(&mp, 8);
    EXPECT_EQ(8u, objs.size());
    EXPECT_EQ(nullptr, ucs_mpool_get(&mp));
    put_all(objs);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, leak_warning)
{
    ucs_mpool_t mp;
    init(&mp, params(16, 4));

    std::vector<void *> objs = get_n(&mp, 6);
    ucs_mpool_put(objs[0]);
    ucs_mpool_put(objs[1]);
    ucs_mpool_put(objs[2]);
    ucs_mpool_put(objs[3]);
    {
        ucs::scoped_log_capture capture;
        ucs_mpool_cleanup(&mp, 1);
        EXPECT_TRUE(capture.contains("'test': 2 of 8 objects were not "
                                     "returned"));
    }
    EXPECT_TRUE(m_stats.live_chunks.empty());

    /* without leak check: no message */
    init(&mp, params(16, 4));
    objs = get_n(&mp, 3);
    ucs_mpool_cleanup(&mp, 0);
}

TEST_F(ucs_mpool, priv_area)
{
    ucs_mpool_params_t p = params(8, 4);
    p.priv_size          = 100;
    ucs_mpool_t mp;
    init(&mp, p);

    char *priv = static_cast<char *>(ucs_mpool_priv(&mp));
    EXPECT_EQ(0u, (uintptr_t)priv % 16);
    memset(priv + sizeof(chunk_stats *), 0x5a, 100 - sizeof(chunk_stats *));
    std::vector<void *> objs = get_n(&mp, 5);
    put_all(objs);
    EXPECT_EQ(0x5a, priv[99]);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, chunk_alloc_failure)
{
    ucs_mpool_t mp;
    init(&mp, params(8, 4));

    m_stats.fail = true;
    EXPECT_EQ(nullptr, ucs_mpool_get(&mp));
    EXPECT_EQ(UCS_ERR_NO_MEMORY, ucs_mpool_grow(&mp, 1));

    m_stats.fail = false;
    void *obj    = ucs_mpool_get(&mp);
    EXPECT_NE(nullptr, obj);
    ucs_mpool_put(obj);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, larger_chunk_holds_more_objects)
{
    ucs_mpool_params_t p = params(32, 4);
    p.alignment          = 64;
    p.align_offset       = 8;
    m_stats.extra        = 4096;
    ucs_mpool_t mp;
    init(&mp, p);

    std::vector<void *> objs = get_n(&mp, 40);
    EXPECT_EQ(1u, m_stats.allocs);
    for (size_t i = 0; i < objs.size(); ++i) {
        EXPECT_EQ(0u, ((uintptr_t)objs[i] + 8) % 64);
        memset(objs[i], 0, 32);
    }
    put_all(objs);
    ucs_mpool_cleanup(&mp, 1);
}

/* An allocator that keeps a header of an odd size in front of the chunk,
 * as a transport might; the pool must cope with an unaligned chunk. */
ucs_status_t odd_chunk_alloc(ucs_mpool_t *mp, size_t *size_p, void **chunk_p)
{
    char *mem = static_cast<char *>(malloc(*size_p + 3));

    if (mem == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    *chunk_p = mem + 3;
    return UCS_OK;
}

void odd_chunk_release(ucs_mpool_t *mp, void *chunk)
{
    free(static_cast<char *>(chunk) - 3);
}

TEST_F(ucs_mpool, unaligned_chunk_from_allocator)
{
    static const ucs_mpool_ops_t odd_ops = {odd_chunk_alloc, odd_chunk_release,
                                            NULL, NULL};
    ucs_mpool_params_t p                 = params(20, 3);
    p.alignment                          = 32;
    p.align_offset                       = 5;
    p.ops                                = &odd_ops;
    ucs_mpool_t mp;
    init(&mp, p);

    std::vector<void *> objs = get_n(&mp, 10);
    for (size_t i = 0; i < objs.size(); ++i) {
        EXPECT_EQ(0u, ((uintptr_t)objs[i] + 5) % 32);
        memset(objs[i], 0x22, 20);
    }
    put_all(objs);
    EXPECT_EQ(4u, ucs_mpool_release_idle(&mp));
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, mmap_ops)
{
    ucs_mpool_params_t p;
    ucs_mpool_t mp;

    ucs_mpool_params_reset(&p);
    p.elem_size       = 200;
    p.alignment       = 128;
    p.align_offset    = 40;
    p.elems_per_chunk = 10;
    p.ops             = &ucs_mpool_ops_mmap;
    p.name            = "mmap";
    ASSERT_EQ(UCS_OK, ucs_mpool_init(&mp, &p));

    std::vector<void *> objs = get_n(&mp, 100);
    for (size_t i = 0; i < objs.size(); ++i) {
        EXPECT_EQ(0u, ((uintptr_t)objs[i] + 40) % 128);
        memset(objs[i], 0x11, 200);
    }
    put_all(objs);
    EXPECT_GT(ucs_mpool_release_idle(&mp), 0u);
    objs = get_n(&mp, 5);
    put_all(objs);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, default_ops_when_null)
{
    ucs_mpool_params_t p;
    ucs_mpool_t mp;

    ucs_mpool_params_reset(&p);
    p.elem_size = 16;
    p.ops       = NULL;
    p.name      = NULL;
    ASSERT_EQ(UCS_OK, ucs_mpool_init(&mp, &p));
    void *obj = ucs_mpool_get(&mp);
    ASSERT_NE(nullptr, obj);
    ucs_mpool_put(obj);
    ucs_mpool_cleanup(&mp, 1);
}

TEST_F(ucs_mpool, invalid_params)
{
    static const ucs_mpool_ops_t no_alloc_ops = {NULL, ucs_mpool_chunk_free,
                                                 NULL, NULL};
    ucs_mpool_params_t p;
    ucs_mpool_t mp;
    ucs::scoped_log_capture capture;

    p = params(0, 4);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_mpool_init(&mp, &p));

    p           = params(8, 4);
    p.alignment = 24;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_mpool_init(&mp, &p));
    p.alignment = 0;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_mpool_init(&mp, &p));

    p = params(8, 0);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_mpool_init(&mp, &p));

    p     = params(8, 4);
    p.ops = &no_alloc_ops;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_mpool_init(&mp, &p));

    p = params(SIZE_MAX / 2, 4);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_mpool_init(&mp, &p));

    EXPECT_TRUE(capture.contains("elem_size must be > 0"));
    EXPECT_TRUE(capture.contains("alignment 24 is not a power of two"));
    EXPECT_TRUE(capture.contains("elems_per_chunk must be > 0"));
    EXPECT_TRUE(capture.contains("chunk_alloc"));
}

} // namespace
