// `cudacore bundle` (make a header bundle from entry headers and folders, or from a compile;
// list one) and `cudacore compile --header-bundle`, driven as a user would.
#include "test_support.hpp"

#include "cudacore/header_bundle.hpp"

#include <filesystem>

namespace {

using cudacore::HeaderBundle;
using cudacore::test::cli_path;
using cudacore::test::run_process;
using cudacore::test::TempDir;
using cudacore::test::write_file;

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

}  // namespace
