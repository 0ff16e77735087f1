/*
 * Module loader: search path, API version check, refusals with warnings,
 * UCX_MODULES filtering, shadowing, modules next to the anchor library.
 *
 * The test modules (testfw_module.c) are built into .libs/ next to the
 * gtest binary (or OPENUCT_TEST_MODULE_DIR). Each test copies them under
 * its own framework name into a fresh directory, so every test loads
 * distinct objects.
 */
#include <common/test.h>

extern "C" {
#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>
#include <ucs/sys/module.h>
}

#include <dlfcn.h>
#include <fstream>
#include <ftw.h>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

const uint32_t test_api_version = UCS_MODULE_API_VERSION(1, 3);

const char *test_variants[] = {"good", "badver", "noinit", "initfail"};

std::string built_modules_dir()
{
    const char *env = getenv("OPENUCT_TEST_MODULE_DIR");
    char exe[PATH_MAX];
    ssize_t len;

    if (env != NULL) {
        return env;
    }

    len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0) {
        return ".libs";
    }
    exe[len] = '\0';

    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/'));
    if (dir.size() >= 6 && dir.compare(dir.size() - 6, 6, "/.libs") == 0) {
        return dir; /* running the libtool-installed binary */
    }
    return dir + "/.libs";
}

int remove_entry(const char *path, const struct stat *, int, struct FTW *)
{
    return remove(path);
}

/* Sets a global option for the lifetime of the object */
class scoped_global_opt {
public:
    scoped_global_opt(const char *name, const char *value) : m_name(name)
    {
        char old[1024];
        EXPECT_EQ(UCS_OK, ucs_config_parser_get_value(&ucs_global_opts,
                                                      ucs_global_opts_table,
                                                      name, old, sizeof(old)));
        m_old = old;
        EXPECT_EQ(UCS_OK, ucs_config_parser_set_value(&ucs_global_opts,
                                                      ucs_global_opts_table,
                                                      name, value));
    }

    ~scoped_global_opt()
    {
        ucs_config_parser_set_value(&ucs_global_opts, ucs_global_opts_table,
                                    m_name.c_str(), m_old.c_str());
    }

private:
    std::string m_name;
    std::string m_old;
};

void collect_module(const char *name, const char *path, void *arg)
{
    auto *list =
        static_cast<std::vector<std::pair<std::string, std::string>> *>(arg);
    list->push_back(std::make_pair(std::string(name), std::string(path)));
}

} // namespace

class ucs_module_loader : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        char tmpl[] = "/tmp/openuct-modules-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        static unsigned runs = 0;
        m_run                = runs++;
        m_tmpdir             = tmpl;
        m_builtdir           = built_modules_dir();
        ASSERT_EQ(0, access((m_builtdir + "/libtestfw_good.so").c_str(), R_OK))
            << "test modules not found in " << m_builtdir
            << "; build them (make -C test/gtest gtest) or set "
               "OPENUCT_TEST_MODULE_DIR";
    }

    void TearDown() override
    {
        nftw(m_tmpdir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        ucs::test::TearDown();
    }

    std::string mkdir_tmp(const std::string &sub)
    {
        std::string dir = m_tmpdir + "/" + sub;
        EXPECT_EQ(0, mkdir(dir.c_str(), 0755)) << dir;
        return dir;
    }

    /* Copy the built variant to dir/lib<framework>_<name>.so */
    std::string install(const std::string &dir, const std::string &variant,
                        const std::string &framework, const std::string &name)
    {
        std::string src = m_builtdir + "/libtestfw_" + variant + ".so";
        std::string dst = dir + "/lib" + framework + "_" + name + ".so";
        std::ifstream in(src, std::ios::binary);
        std::ofstream out(dst, std::ios::binary);
        out << in.rdbuf();
        EXPECT_TRUE(in.good() && out.good()) << src << " -> " << dst;
        return dst;
    }

    /* Every variant plus a non-library, under @a framework */
    void install_all(const std::string &dir, const std::string &framework)
    {
        for (const char *variant : test_variants) {
            install(dir, variant, framework, variant);
        }
        std::ofstream(dir + "/lib" + framework + "_garbage.so")
            << "this is not a shared object\n";
    }

    std::vector<std::pair<std::string, std::string>>
    loaded(const std::string &framework)
    {
        std::vector<std::pair<std::string, std::string>> list;
        ucs_modules_for_each(framework.c_str(), collect_module, &list);
        EXPECT_EQ(list.size(), ucs_modules_loaded_count(framework.c_str()));
        return list;
    }

    /* init calls of the loaded module at @a path, -1 if not loaded */
    int init_count(const std::string &path)
    {
        void *handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (handle == NULL) {
            return -1;
        }
        auto *count =
            static_cast<unsigned *>(dlsym(handle, "testfw_init_count"));
        int result = (count != NULL) ? (int)*count : -1;
        dlclose(handle);
        return result;
    }

    /* A test framework's name, new in every run of a test: a framework
     * loads once per process, and --gtest_repeat runs a test again. */
    std::string fw(const char *name) const
    {
        return (m_run == 0) ? name : name + std::to_string(m_run);
    }

    std::string m_tmpdir;
    std::string m_builtdir;
    unsigned m_run = 0;
};

TEST_F(ucs_module_loader, loads_good_refuses_bad)
{
    std::string dir = mkdir_tmp("mods");
    install_all(dir, fw("tfa"));
    install(dir, "good", fw("tfa"), "sub_name"); /* belongs to "tfa_sub" */
    install(dir, "good", fw("tfb"), "good");     /* another framework */

    scoped_global_opt module_dir("MODULE_DIR", dir.c_str());
    scoped_global_opt modules("MODULES", "all");
    {
        ucs::scoped_log_capture capture;
        ucs_modules_load(fw("tfa").c_str(), test_api_version, NULL);

        std::string mod = "module " + dir + "/lib" + fw("tfa");
        EXPECT_TRUE(capture.contains(mod +
                                     "_badver.so: "
                                     "built for API version 2.0, this "
                                     "library has 1.3; rebuild the module"));
        EXPECT_TRUE(capture.contains(mod + "_noinit.so: "
                                           "missing ucs_module_init (not an "
                                           "openuct module?); not loaded"));
        EXPECT_TRUE(capture.contains(mod + "_initfail.so: "
                                           "ucs_module_init() failed: No such "
                                           "device; not loaded"));
        EXPECT_TRUE(capture.contains(mod + "_garbage.so: "
                                           "cannot load: "));
        EXPECT_FALSE(capture.contains("lib" + fw("tfa") + "_good.so"));
        EXPECT_FALSE(capture.contains("sub_name"));
        EXPECT_FALSE(capture.contains("lib" + fw("tfb") + "_"));
    }

    auto list = loaded(fw("tfa"));
    ASSERT_EQ(1u, list.size());
    EXPECT_EQ("good", list[0].first);
    EXPECT_EQ(dir + "/lib" + fw("tfa") + "_good.so", list[0].second);
    EXPECT_EQ(1, init_count(dir + "/lib" + fw("tfa") + "_good.so"));
    EXPECT_EQ(-1, init_count(dir + "/lib" + fw("tfa") + "_badver.so"));
    EXPECT_EQ(-1, init_count(dir + "/lib" + fw("tfa") + "_initfail.so"));
    EXPECT_EQ(-1, init_count(dir + "/lib" + fw("tfb") + "_good.so"));

    /* once per framework: a second call loads nothing and says nothing */
    {
        ucs::scoped_log_capture capture;
        ucs_modules_load(fw("tfa").c_str(), test_api_version, NULL);
        EXPECT_FALSE(capture.contains("lib" + fw("tfa") + "_"));
    }
    EXPECT_EQ(1, init_count(dir + "/lib" + fw("tfa") + "_good.so"));
    EXPECT_EQ(1u, ucs_modules_loaded_count(fw("tfa").c_str()));
    EXPECT_EQ(0u, ucs_modules_loaded_count(fw("tfb").c_str()));
}

TEST_F(ucs_module_loader, modules_allow_list)
{
    std::string dir = mkdir_tmp("mods");
    install_all(dir, fw("tfc"));
    install_all(dir, fw("tfd"));
    install_all(dir, fw("tfe"));
    scoped_global_opt module_dir("MODULE_DIR", dir.c_str());

    {
        /* excluded modules are not even opened: no warnings */
        scoped_global_opt modules("MODULES", "good");
        ucs_modules_load(fw("tfc").c_str(), test_api_version, NULL);
        auto list = loaded(fw("tfc"));
        ASSERT_EQ(1u, list.size());
        EXPECT_EQ("good", list[0].first);
    }
    {
        scoped_global_opt modules("MODULES", "^badver,noinit,initfail,garbage");
        ucs_modules_load(fw("tfd").c_str(), test_api_version, NULL);
        auto list = loaded(fw("tfd"));
        ASSERT_EQ(1u, list.size());
        EXPECT_EQ("good", list[0].first);
    }
    {
        scoped_global_opt modules("MODULES", "^good,badver,noinit,initfail,"
                                             "garbage");
        ucs_modules_load(fw("tfe").c_str(), test_api_version, NULL);
        EXPECT_EQ(0u, ucs_modules_loaded_count(fw("tfe").c_str()));
        EXPECT_EQ(-1, init_count(dir + "/lib" + fw("tfe") + "_good.so"));
    }
}

TEST_F(ucs_module_loader, earlier_directory_shadows_later)
{
    std::string dir1 = mkdir_tmp("first");
    std::string dir2 = mkdir_tmp("second");
    install(dir1, "good", fw("tff"), "one");
    install(dir2, "good", fw("tff"), "one");
    install(dir2, "good", fw("tff"), "two");
    std::string path = dir1 + ":" + dir2;
    scoped_global_opt module_dir("MODULE_DIR", path.c_str());
    scoped_global_opt modules("MODULES", "all");

    ucs_modules_load(fw("tff").c_str(), test_api_version, NULL);
    auto list = loaded(fw("tff"));
    ASSERT_EQ(2u, list.size());
    EXPECT_EQ("one", list[0].first);
    EXPECT_EQ(dir1 + "/lib" + fw("tff") + "_one.so", list[0].second);
    EXPECT_EQ("two", list[1].first);
    EXPECT_EQ(dir2 + "/lib" + fw("tff") + "_two.so", list[1].second);
    EXPECT_EQ(-1, init_count(dir2 + "/lib" + fw("tff") + "_one.so"));
}

TEST_F(ucs_module_loader, modules_next_to_anchor_library)
{
    std::string libdir      = mkdir_tmp("lib");
    std::string moddir      = mkdir_tmp("lib/openuct");
    std::string anchor_path = install(libdir, "good", "anchor", "lib");
    install(moddir, "good", fw("tfg"), "near");
    scoped_global_opt module_dir("MODULE_DIR", "");
    scoped_global_opt modules("MODULES", "all");

    void *handle = dlopen(anchor_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(nullptr, handle) << dlerror();
    void *anchor = dlsym(handle, "testfw_init_count");
    ASSERT_NE(nullptr, anchor);

    ucs_modules_load(fw("tfg").c_str(), test_api_version, anchor);
    auto list = loaded(fw("tfg"));
    ASSERT_EQ(1u, list.size());
    EXPECT_EQ(moddir + "/lib" + fw("tfg") + "_near.so", list[0].second);
    dlclose(handle);
}

TEST_F(ucs_module_loader, missing_module_dir_warns)
{
    std::string missing = m_tmpdir + "/does-not-exist";
    scoped_global_opt module_dir("MODULE_DIR", missing.c_str());
    ucs::scoped_log_capture capture;

    ucs_modules_load(fw("tfh").c_str(), test_api_version, NULL);
    EXPECT_TRUE(
        capture.contains("UCX_MODULE_DIR: cannot read directory " + missing));
    EXPECT_EQ(0u, ucs_modules_loaded_count(fw("tfh").c_str()));
}

TEST_F(ucs_module_loader, unknown_module_name_warns)
{
    std::string dir = mkdir_tmp("mods");
    install(dir, "good", fw("tfi"), "good");
    install(dir, "good", fw("tfi"), "other");
    scoped_global_opt module_dir("MODULE_DIR", dir.c_str());
    scoped_global_opt modules("MODULES", "nonexistent");
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();

    ucs_modules_load(fw("tfi").c_str(), test_api_version, NULL);
    EXPECT_EQ(0u, ucs_modules_loaded_count(fw("tfi").c_str()));

    /* one line: the value, the missing name, the available modules */
    ASSERT_EQ(1u, capture.messages().size() - start);
    EXPECT_TRUE(capture.contains("UCX_MODULES=nonexistent: no " + fw("tfi") +
                                 " module named 'nonexistent'; available " +
                                 fw("tfi") + " modules: good, other"))
        << capture.messages().back();
}

TEST_F(ucs_module_loader, unknown_name_in_negation_warns)
{
    std::string dir = mkdir_tmp("mods");
    install(dir, "good", fw("tfj"), "good");
    scoped_global_opt module_dir("MODULE_DIR", dir.c_str());
    scoped_global_opt modules("MODULES", "^good,typo");
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();

    ucs_modules_load(fw("tfj").c_str(), test_api_version, NULL);
    EXPECT_EQ(0u, ucs_modules_loaded_count(fw("tfj").c_str()));
    ASSERT_EQ(1u, capture.messages().size() - start);
    EXPECT_TRUE(capture.contains("UCX_MODULES=^good,typo: no " + fw("tfj") +
                                 " module named 'typo'; available " +
                                 fw("tfj") + " modules: good"));
}

TEST_F(ucs_module_loader, empty_modules_warns)
{
    std::string dir = mkdir_tmp("mods");
    install(dir, "good", fw("tfk"), "good");
    scoped_global_opt module_dir("MODULE_DIR", dir.c_str());
    scoped_global_opt modules("MODULES", "");
    ucs::scoped_log_capture capture;
    size_t start = capture.messages().size();

    ucs_modules_load(fw("tfk").c_str(), test_api_version, NULL);
    EXPECT_EQ(0u, ucs_modules_loaded_count(fw("tfk").c_str()));
    ASSERT_EQ(1u, capture.messages().size() - start);
    EXPECT_TRUE(capture.contains("UCX_MODULES is empty: no " + fw("tfk") +
                                 " module is loaded; unset it or set it "
                                 "to 'all'"));
}

TEST_F(ucs_module_loader, known_module_names_do_not_warn)
{
    std::string dir = mkdir_tmp("mods");
    install(dir, "good", fw("tfl"), "good");
    install(dir, "good", fw("tfl"), "other");
    scoped_global_opt module_dir("MODULE_DIR", dir.c_str());
    {
        /* the fixture fails on any warning */
        scoped_global_opt modules("MODULES", "other");
        ucs_modules_load(fw("tfl").c_str(), test_api_version, NULL);
    }
    auto list = loaded(fw("tfl"));
    ASSERT_EQ(1u, list.size());
    EXPECT_EQ("other", list[0].first);
}
