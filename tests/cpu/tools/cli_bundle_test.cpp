// `cudacore bundle` (make a header bundle from entry headers and folders, or from a compile;
// list one) and `cudacore compile --header-bundle`, driven as a user would.
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "cudacore/header_bundle.hpp"

#include <filesystem>

namespace {

using cudacore::HeaderBundle;
using cudacore::test::cli_path;
using cudacore::test::run_process;
using cudacore::test::TempDir;
using cudacore::test::write_file;

// Header bundles are written out as folders under the cache folder: a temporary one for this
// program, never the user's.
[[maybe_unused]] ::testing::Environment* const cache_folder_environment =
    ::testing::AddGlobalTestEnvironment(new cudacore::test::TemporaryCacheFolderEnvironment);

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string at(const TempDir& dir, const char* name) { return (dir.path() / name).string(); }

void make_headers(const TempDir& dir) {
    std::filesystem::create_directories(dir.path() / "inc/lib");
    write_file(dir.path() / "inc/lib/value.h", "#pragma once\n#include \"detail.h\"\n#define VALUE (DETAIL + 1)\n");
    write_file(dir.path() / "inc/lib/detail.h", "#define DETAIL 4242420\n");
    write_file(dir.path() / "k.cu",
               "#include <lib/value.h>\nextern \"C\" __global__ void k(int* o) { *o = VALUE; }\n");
}

TEST(CliBundle, MakesListsAndCompilesWithABundle) {
    TempDir dir;
    make_headers(dir);
    auto made = run_process({cli_path().string(), "bundle", "--header", "<lib/value.h>", "-I",
                             at(dir, "inc"), "--no-toolkit-include", "-o", at(dir, "v.ccbundle")});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    EXPECT_TRUE(contains(made.err, "'v' (2 headers")) << made.err;
    const HeaderBundle bundle = HeaderBundle::load(at(dir, "v.ccbundle"));
    EXPECT_NE(bundle.find("lib/detail.h"), nullptr);

    auto listed = run_process({cli_path().string(), "bundle", "--list", at(dir, "v.ccbundle")});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_TRUE(contains(listed.out, "headers  2\n")) << listed.out;
    EXPECT_TRUE(contains(listed.out, "  lib/value.h  ")) << listed.out;
    EXPECT_TRUE(contains(listed.out, "digest   " + bundle.digest())) << listed.out;

    // The headers come from the bundle: no -I, no toolkit folder.
    auto compiled = run_process({cli_path().string(), "compile", at(dir, "k.cu"), "-o",
                                 at(dir, "k.ptx"), "--target", "ptx", "--arch", "sm_90",
                                 "--no-cache", "--header-bundle", at(dir, "v.ccbundle")});
    ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
    EXPECT_TRUE(contains(cudacore::test::read_file(dir.path() / "k.ptx"), "4242421"));

    // Without the bundle that holds it, the header is missing and the error says where it looked.
    const HeaderBundle other = HeaderBundle::from_headers({{"other.h", ""}}, "other");
    other.save(dir.path() / "other.ccbundle");
    auto missing = run_process({cli_path().string(), "compile", at(dir, "k.cu"), "-o",
                                at(dir, "k2.ptx"), "--target", "ptx", "--arch", "sm_90",
                                "--no-cache", "--header-bundle", at(dir, "other.ccbundle")});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "the header 'lib/value.h' is in none of the header bundles "
                                      "searched: 'other' (1 header")) << missing.err;
}

TEST(CliBundle, FromCompileTakesTheHeadersTheCompileRead) {
    TempDir dir;
    make_headers(dir);
    auto made = run_process({cli_path().string(), "bundle", "--from-compile", at(dir, "k.cu"),
                             "-I", at(dir, "inc"), "--arch", "sm_90", "-o", at(dir, "c.ccbundle"),
                             "--name", "from-k"});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const HeaderBundle bundle = HeaderBundle::load(at(dir, "c.ccbundle"));
    EXPECT_EQ(bundle.name(), "from-k");
    EXPECT_NE(bundle.find("lib/value.h"), nullptr);
    EXPECT_NE(bundle.find("lib/detail.h"), nullptr);
    ASSERT_NE(bundle.find("lib/value.h"), nullptr);
    EXPECT_TRUE(contains(*bundle.find("lib/value.h"), "#include \"lib/detail.h\""));
}

TEST(CliBundle, RefusesBadInputWithOneLine) {
    TempDir dir;
    write_file(dir.path() / "junk.ccbundle", "not a bundle at all");
    auto listed = run_process({cli_path().string(), "bundle", "--list", at(dir, "junk.ccbundle")});
    EXPECT_EQ(listed.exit_code, 1);
    EXPECT_TRUE(contains(listed.err, "not a header bundle")) << listed.err;
    auto neither = run_process({cli_path().string(), "bundle", "-o", at(dir, "x.ccbundle")});
    EXPECT_EQ(neither.exit_code, 1);
    EXPECT_TRUE(contains(neither.err, "--header")) << neither.err;
    auto absent = run_process({cli_path().string(), "bundle", "--header", "absent.h",
                               "--no-toolkit-include", "-o", at(dir, "x.ccbundle")});
    EXPECT_EQ(absent.exit_code, 1);
    EXPECT_TRUE(contains(absent.err, "'absent.h' is in none of the include folders")) << absent.err;
}

// A bundle is meant to be shipped: it holds what the preprocessor opened, nothing a dead
// #include names, and nothing outside the include folders unless asked for.
TEST(CliBundle, ShipsOnlyWhatTheCompileReads) {
    TempDir dir;
    make_headers(dir);
    write_file(dir.path() / "private.key", "// secret bytes\n");
    const std::string secret = at(dir, "private.key");
    write_file(dir.path() / "inc/lib/value.h",
               "#pragma once\n#include \"detail.h\"\n#if 0\n#include \"" + secret +
                   "\"\n#include <../../private.key>\n#endif\n#define VALUE (DETAIL + 1)\n");
    for (const std::vector<std::string>& mode :
         {std::vector<std::string>{"--header", "<lib/value.h>", "--no-toolkit-include"},
          std::vector<std::string>{"--from-compile", at(dir, "k.cu"), "--arch", "sm_90"}}) {
        std::vector<std::string> command{cli_path().string(), "bundle"};
        command.insert(command.end(), mode.begin(), mode.end());
        for (const char* arg : {"-I", "", "-o", ""}) command.emplace_back(arg);
        command[command.size() - 3] = at(dir, "inc");
        command.back() = at(dir, "shipped.ccbundle");
        auto made = run_process(command);
        ASSERT_EQ(made.exit_code, 0) << mode[0] << ": " << made.err;
        const HeaderBundle bundle = HeaderBundle::load(at(dir, "shipped.ccbundle"));
        // The two files read. From a compile they are also named below the source's folder,
        // which holds inc/: the list of headers read cannot tell how the source asked for them.
        const bool from_compile = mode[0] == "--from-compile";
        ASSERT_EQ(bundle.size(), from_compile ? 4u : 2u) << mode[0];
        EXPECT_NE(bundle.find("lib/value.h"), nullptr) << mode[0];
        EXPECT_NE(bundle.find("lib/detail.h"), nullptr) << mode[0];
        if (from_compile) EXPECT_EQ(*bundle.find("inc/lib/detail.h"), *bundle.find("lib/detail.h"));
        for (const auto& header : bundle.headers())
            EXPECT_FALSE(contains(header.content, "secret bytes")) << mode[0] << " " << header.name;
    }
    // Live, the absolute include is refused and named; --allow-outside takes it.
    write_file(dir.path() / "inc/lib/live.h", "#include \"" + secret + "\"\n");
    auto refused = run_process({cli_path().string(), "bundle", "--header", "lib/live.h", "-I",
                                at(dir, "inc"), "--no-toolkit-include", "-o", at(dir, "l.ccbundle")});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_TRUE(contains(refused.err, "outside every include folder")) << refused.err;
    EXPECT_TRUE(contains(refused.err, secret)) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(at(dir, "l.ccbundle")));
    auto allowed = run_process({cli_path().string(), "bundle", "--header", "lib/live.h", "-I",
                                at(dir, "inc"), "--no-toolkit-include", "--allow-outside", "-o",
                                at(dir, "l.ccbundle")});
    ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
    EXPECT_NE(HeaderBundle::load(at(dir, "l.ccbundle")).find(secret), nullptr);
    // A symbolic link loop is called one.
    std::filesystem::create_symlink("loop2.h", dir.path() / "inc/loop1.h");
    std::filesystem::create_symlink("loop1.h", dir.path() / "inc/loop2.h");
    auto loop = run_process({cli_path().string(), "bundle", "--header", "loop1.h", "-I",
                             at(dir, "inc"), "--no-toolkit-include", "-o", at(dir, "o.ccbundle")});
    EXPECT_EQ(loop.exit_code, 1);
    EXPECT_TRUE(contains(loop.err, "symbolic link loop")) << loop.err;
}

}  // namespace
