// HeaderBundle: made from pairs, from entry headers and folders, from a compile's headers; the
// file form read back exactly, and corrupt, truncated or foreign bytes refused with a clear
// error; programs compiled with bundles (which bundle wins a name, a missing header's error,
// precompiled headers only from the bundle's folder). NVRTC runs without a GPU.
#include "suite_kernels.hpp"
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <memory>

namespace {

using namespace cudacore;
using cudacore::test::read_file;
using cudacore::test::TempDir;
using cudacore::test::write_file;

// Header bundles are written out as folders under the cache folder: a temporary one for this
// program, never the user's.
[[maybe_unused]] ::testing::Environment* const cache_folder_environment =
    ::testing::AddGlobalTestEnvironment(new cudacore::test::TemporaryCacheFolderEnvironment);

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

void write(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    write_file(path, text);
}

HeaderBundle sample_bundle() {
    return HeaderBundle::from_headers({{"value.h", "#define VALUE 41\n"},
                                       {"nested/more.h", "#define MORE 1\n"},
                                       {"empty.h", ""}},
                                      "sample");
}

// Expects a SerializationError whose message contains `part`.
void expect_rejected(std::string_view bytes, const std::string& part) {
    try {
        HeaderBundle::deserialize(bytes);
        ADD_FAILURE() << "accepted " << bytes.size() << " bytes; expected: " << part;
    } catch (const SerializationError& e) {
        EXPECT_TRUE(contains(e.what(), part)) << e.what() << "\nexpected: " << part;
    }
}

TEST(HeaderBundle, FromHeadersSortsAndFinds) {
    const HeaderBundle bundle = sample_bundle();
    EXPECT_EQ(bundle.name(), "sample");
    ASSERT_EQ(bundle.size(), 3u);
    EXPECT_EQ(bundle.headers()[0].name, "empty.h");
    EXPECT_EQ(bundle.headers()[1].name, "nested/more.h");
    EXPECT_EQ(bundle.headers()[2].name, "value.h");
    ASSERT_NE(bundle.find("value.h"), nullptr);
    EXPECT_EQ(*bundle.find("value.h"), "#define VALUE 41\n");
    EXPECT_EQ(bundle.find("missing.h"), nullptr);
    EXPECT_EQ(bundle.find("more.h"), nullptr);  // names match exactly
    EXPECT_EQ(bundle.digest().size(), 64u);
    EXPECT_TRUE(contains(bundle.describe(), "'sample' (3 headers, digest "));
    EXPECT_TRUE(HeaderBundle().empty());
}

TEST(HeaderBundle, FromHeadersRefusesBadNames) {
    test::expect_invalid([] { HeaderBundle::from_headers({{"", "x"}}, "b"); }, {"empty name"});
    test::expect_invalid(
        [] { HeaderBundle::from_headers({{"a.h", "1"}, {"a.h", "2"}}, "b"); },
        {"'a.h' is given twice"});
    test::expect_invalid(
        [] { HeaderBundle::from_headers({{std::string("a\0b", 3), "1"}}, "b"); }, {"NUL"});
}

TEST(HeaderBundle, DigestFollowsContentNotName) {
    const HeaderBundle a = HeaderBundle::from_headers({{"h.h", "int x;"}}, "a");
    const HeaderBundle renamed = HeaderBundle::from_headers({{"h.h", "int x;"}}, "other name");
    const HeaderBundle edited = HeaderBundle::from_headers({{"h.h", "int y;"}}, "a");
    const HeaderBundle moved = HeaderBundle::from_headers({{"g.h", "int x;"}}, "a");
    EXPECT_EQ(a.digest(), renamed.digest());
    EXPECT_NE(a.digest(), edited.digest());
    EXPECT_NE(a.digest(), moved.digest());
    EXPECT_FALSE(a == renamed);
    EXPECT_TRUE(a == HeaderBundle::from_headers({{"h.h", "int x;"}}, "a"));
}

TEST(HeaderBundle, RoundTripsThroughBytesAndFiles) {
    const HeaderBundle bundle = sample_bundle();
    const std::string bytes = bundle.serialize();
    const HeaderBundle back = HeaderBundle::deserialize(bytes);
    EXPECT_EQ(back.name(), bundle.name());
    EXPECT_EQ(back.headers(), bundle.headers());
    EXPECT_EQ(back.digest(), bundle.digest());
    EXPECT_EQ(back.serialize(), bytes);  // the form is canonical

    TempDir dir;
    bundle.save(dir.path() / "b.ccbundle");
    EXPECT_EQ(HeaderBundle::load(dir.path() / "b.ccbundle").headers(), bundle.headers());

    // Compressed: a large repetitive header takes far less room.
    const HeaderBundle big =
        HeaderBundle::from_headers({{"big.h", std::string(1 << 20, 'x')}}, "big");
    EXPECT_LT(big.serialize().size(), 10'000u);
    EXPECT_EQ(HeaderBundle::deserialize(big.serialize()).headers(), big.headers());
    EXPECT_EQ(HeaderBundle::deserialize(HeaderBundle().serialize()).size(), 0u);
}

TEST(HeaderBundle, RefusesForeignTruncatedAndCorruptBytes) {
    const std::string bytes = sample_bundle().serialize();
    expect_rejected("", "not a header bundle");
    expect_rejected("#include <x>", "not a header bundle");
    expect_rejected(bytes.substr(0, 5), "truncated");
    expect_rejected(bytes.substr(0, 20), "truncated");
    // Every shorter prefix and every single flipped bit is refused, never accepted or a crash.
    for (std::size_t size = 0; size < bytes.size(); ++size) {
        EXPECT_THROW(HeaderBundle::deserialize(std::string_view(bytes).substr(0, size)),
                     SerializationError)
            << size;
    }
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            std::string flipped = bytes;
            flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
            EXPECT_THROW(HeaderBundle::deserialize(flipped), SerializationError) << i << ":" << bit;
        }
    }
    expect_rejected(bytes + "x", "trailing data");
    // A header count past the limit is refused from the file's header: before its payload is
    // decompressed, and before room for that many headers (64 bytes each) is taken.
    std::string counted = bytes;
    const std::uint32_t too_many = HeaderBundle::max_headers + 1;
    std::memcpy(counted.data() + 12, &too_many, sizeof too_many);
    expect_rejected(counted, "1048577 headers, more than the limit of 1048576");
    std::string corrupt = bytes;
    corrupt.back() = static_cast<char>(corrupt.back() ^ 1);
    expect_rejected(corrupt, "checksum mismatch");
    std::string newer = bytes;
    newer[8] = 2;
    expect_rejected(newer, "format version 2 is newer");
    std::string huge = bytes;
    huge[16 + 7] = 0x7f;  // the payload size's top byte
    expect_rejected(huge, "more than the limit");
    // An ObjectCode's serialized form is not a bundle.
    expect_rejected(ObjectCode::from_ptx(".version 8.0\n.target sm_90\n", "k").serialize(),
                    "not a header bundle");

    TempDir dir;
    write_file(dir.path() / "cut.ccbundle", bytes.substr(0, bytes.size() - 3));
    try {
        HeaderBundle::load(dir.path() / "cut.ccbundle");
        ADD_FAILURE() << "loaded a truncated file";
    } catch (const SerializationError& e) {
        EXPECT_TRUE(contains(e.what(), "cut.ccbundle")) << e.what();
        EXPECT_TRUE(contains(e.what(), "truncated")) << e.what();
    }
    EXPECT_THROW(HeaderBundle::load(dir.path() / "absent.ccbundle"), SerializationError);
    EXPECT_THROW(HeaderBundle::load(dir.path()), SerializationError);

    // The fixed header is checked before the rest is read: a large file that is no bundle, or a
    // bundle padded past its stated size, is refused without being read (the peak memory does
    // not grow by the file), and a FIFO without waiting for a writer.
    const std::uint64_t big = std::uint64_t{3} << 30;
    write_file(dir.path() / "junk.ccbundle", "not a bundle, and large");
    std::filesystem::resize_file(dir.path() / "junk.ccbundle", big);
    write_file(dir.path() / "padded.ccbundle", bytes);
    std::filesystem::resize_file(dir.path() / "padded.ccbundle", big);
    ASSERT_EQ(::mkfifo((dir.path() / "fifo.ccbundle").c_str(), 0600), 0);
    struct rusage before {};
    ::getrusage(RUSAGE_SELF, &before);
    for (const auto& [name, part] : {std::pair{"junk.ccbundle", "magic number does not match"},
                                     std::pair{"padded.ccbundle", "trailing data"},
                                     std::pair{"fifo.ccbundle", "not a regular file"}}) {
        try {
            HeaderBundle::load(dir.path() / name);
            ADD_FAILURE() << "loaded " << name;
        } catch (const SerializationError& e) {
            EXPECT_TRUE(contains(e.what(), part)) << e.what();
            EXPECT_TRUE(contains(e.what(), name)) << e.what();
        }
    }
    struct rusage after {};
    ::getrusage(RUSAGE_SELF, &after);
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024) << "KiB";
}

TEST(HeaderBundle, FromIncludeFoldersFollowsIncludesAndRenamesRelativeOnes) {
    TempDir dir;
    const auto first = dir.path() / "first";
    const auto second = dir.path() / "second";
    write(first / "top.h",
          "#pragma once\n#include \"lib/api.h\"\n#include <shared.h>\n"
          "#if __has_include(<absent_anywhere.h>)\n#include <absent_anywhere.h>\n#endif\n"
          "#define TOP 1\n");
    write(first / "lib/api.h",
          "#pragma once\n#  include \"detail.h\"  // beside api.h\n#if __has_include(\"opt.h\")\n"
          "#include \"opt.h\"\n#endif\nconst char* s = \"detail.h\";\n");
    write(first / "lib/detail.h", "#define DETAIL 2\n");
    write(first / "lib/opt.h", "#define OPT 3\n");
    write(first / "unused.h", "#define UNUSED\n");
    write(second / "shared.h", "#define SHARED 4\n");
    write(second / "top.h", "#error the first folder's top.h comes first\n");

    const HeaderBundle bundle =
        HeaderBundle::from_include_folders({"<top.h>"}, {first, second}, "folders");
    std::vector<std::string> names;
    for (const auto& header : bundle.headers()) names.push_back(header.name);
    EXPECT_EQ(names, (std::vector<std::string>{"lib/api.h", "lib/detail.h", "lib/opt.h",
                                               "shared.h", "top.h"}));
    // NVRTC matches in-memory names by the operand's text: the relative includes now name the
    // header by its path in the bundle; a string that only looks like one is left alone.
    const std::string api = *bundle.find("lib/api.h");
    EXPECT_TRUE(contains(api, "#  include \"lib/detail.h\"  // beside api.h")) << api;
    EXPECT_TRUE(contains(api, "__has_include(\"lib/opt.h\")")) << api;
    EXPECT_TRUE(contains(api, "#include \"lib/opt.h\"")) << api;
    EXPECT_TRUE(contains(api, "const char* s = \"detail.h\";")) << api;
    EXPECT_EQ(*bundle.find("top.h"), read_file(first / "top.h"));

    test::expect_invalid(
        [&] { HeaderBundle::from_include_folders({"nowhere.h"}, {first, second}, "x"); },
        {"'nowhere.h' is in none of the include folders", first.string().c_str()});
    write(first / "escape.h", "#include \"../outside.h\"\n");
    write(dir.path() / "outside.h", "\n");
    test::expect_invalid(
        [&] { HeaderBundle::from_include_folders({"escape.h"}, {first}, "x"); },
        {"outside every include folder"});
}

TEST(HeaderBundle, FromHeadersReadNamesEachByItsFolder) {
    TempDir dir;
    write(dir.path() / "src/kernel.cu", "#include \"local.h\"\n#include <lib/a.h>\n");
    write(dir.path() / "src/local.h", "#define LOCAL 1\n");
    write(dir.path() / "inc/lib/a.h", "#include \"b.h\"\n#if 0\n#include \"dead.h\"\n#endif\n");
    write(dir.path() / "inc/lib/b.h", "#define B 2\n");
    write(dir.path() / "inc/lib/dead.h", "#define DEAD 3\n");
    const HeaderBundle bundle = HeaderBundle::from_headers_read(
        {(dir.path() / "src/local.h").string(), (dir.path() / "inc/lib/a.h").string(),
         (dir.path() / "inc/lib/b.h").string()},
        {dir.path() / "src", dir.path() / "inc"}, "read");
    ASSERT_EQ(bundle.size(), 3u);
    EXPECT_NE(bundle.find("local.h"), nullptr);
    EXPECT_NE(bundle.find("lib/b.h"), nullptr);
    // dead.h exists and a.h names it, but the compile never read it: it stays out.
    EXPECT_EQ(bundle.find("lib/dead.h"), nullptr);
    EXPECT_EQ(bundle.find("dead.h"), nullptr);
    ASSERT_NE(bundle.find("lib/a.h"), nullptr);
    EXPECT_TRUE(contains(*bundle.find("lib/a.h"), "#include \"lib/b.h\"\n"));
    // Nested folders: the deepest one names each header, as an #include in a header would; a
    // header no other includes (the source's) is also named below the outer folder, as the source
    // may ask for it, with its quoted includes rewritten to that folder's names.
    const HeaderBundle nested = HeaderBundle::from_headers_read(
        {(dir.path() / "inc/lib/a.h").string(), (dir.path() / "inc/lib/b.h").string()},
        {dir.path(), dir.path() / "inc"}, "nested");
    EXPECT_NE(nested.find("lib/a.h"), nullptr);
    EXPECT_NE(nested.find("lib/b.h"), nullptr);
    ASSERT_NE(nested.find("inc/lib/a.h"), nullptr);
    EXPECT_TRUE(contains(*nested.find("inc/lib/a.h"), "#include \"inc/lib/b.h\"\n"));
    EXPECT_EQ(nested.size(), 4u);
    // A header outside the folders is refused, each named; taken by its path when allowed.
    const std::string local = (dir.path() / "src/local.h").string();
    const std::string kernel = (dir.path() / "src/kernel.cu").string();
    test::expect_invalid(
        [&] { HeaderBundle::from_headers_read({local, kernel}, {dir.path() / "inc"}, "read"); },
        {"2 headers lie outside every include folder", local.c_str(), kernel.c_str()});
    const HeaderBundle outside =
        HeaderBundle::from_headers_read({local}, {dir.path() / "inc"}, "read", true);
    ASSERT_EQ(outside.size(), 1u);
    EXPECT_NE(outside.find(local), nullptr);
}

// The first line where `a` and `b` differ, with its number; empty when they are equal.
std::string first_difference(const std::string& a, const std::string& b) {
    if (a == b) return {};
    std::size_t line = 1, at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) line += a[at++] == '\n';
    const auto line_of = [&](const std::string& text) {
        const std::size_t start = text.rfind('\n', at == 0 ? 0 : at - 1);
        const std::size_t begin = start == std::string::npos || at == 0 ? 0 : start + 1;
        return text.substr(begin, text.find('\n', begin) - begin);
    };
    return "line " + std::to_string(line) + ": '" + line_of(a) + "' against '" + line_of(b) + "'";
}

// The headers of `source` compiled with `options` read, as a bundle made from the folders the
// header's documentation says to pass: the source's folder, each include_path folder, the
// toolkit's. Then `headers_on_disk` (where the source's own headers lie) is removed, and the
// program compiled with that bundle in memory gives the bytes of the compile that read the
// files; with `also_from_folder`, it compiles from the bundle's folder too (with PCH, which
// orders a PTX's declarations differently: compiled, not compared). False when the program does
// not compile as given (some suite kernels need other options).
bool expect_bundle_of_headers_read_compiles(const std::string& source, ProgramOptions options,
                                            const std::string& what, bool also_from_folder = false,
                                            const std::filesystem::path& headers_on_disk = {}) {
    SCOPED_TRACE(what);
    options.pch = false;
    Program reading(source, SourceType::cxx, options);
    std::vector<std::string> headers_read;
    std::string expected;
    try {
        expected = std::string(reading.compile(CodeType::ptx, {}, headers_read).code());
    } catch (const CompileError&) {
        return false;
    }
    EXPECT_FALSE(headers_read.empty());
    std::vector<std::filesystem::path> folders{std::filesystem::absolute(options.name).parent_path()};
    for (const auto& folder : options.include_path) folders.emplace_back(folder);
    for (const auto& folder : toolkit_include_dirs()) folders.emplace_back(folder);
    options.header_bundles = {HeaderBundle::from_headers_read(headers_read, folders, "read")};
    options.include_path.clear();
    if (!headers_on_disk.empty()) std::filesystem::remove_all(headers_on_disk);
    try {
        Program in_memory(source, SourceType::cxx, options);
        EXPECT_EQ(first_difference(std::string(in_memory.compile(CodeType::ptx).code()), expected), "");
        if (!also_from_folder) return true;
        options.pch.reset();
        Program from_folder(source, SourceType::cxx, options);
        from_folder.compile(CodeType::ptx);
        EXPECT_NE(from_folder.pch_status().outcome, PchOutcome::not_attempted) << from_folder.pch_status().reason;
    } catch (const CompileError& e) {
        ADD_FAILURE() << e.what();
    }
    return true;
}

// A property over the programs of the suite and the examples that read headers, and over one
// that includes "example_headers/my_header1.cuh" from its folder while example_headers/ is an
// -I folder too (as another library's test suite does): a bundle made from a compile's headers
// compiles that program, with the same bytes.
TEST(HeaderBundle, BundleOfTheHeadersACompileReadCompilesThatProgram) {
    std::size_t with_headers = 0;
    for (const test::SuiteKernel& kernel : test::suite_and_example_kernels()) {
        if (kernel.source.find("#include") == std::string::npos) continue;
        ProgramOptions options;
        options.name = kernel.origin;
        options.arch = "sm_90";
        with_headers += expect_bundle_of_headers_read_compiles(kernel.source, options, kernel.origin);
    }
    EXPECT_GE(with_headers, 5u) << "the examples and tests/support were not found (set "
                                   "CUDACORE_SOURCE_DIR to the source tree)";
    TempDir dir;
    write(dir.path() / "example_headers/my_header1.cuh",
          "#pragma once\n#include \"my_header2.cuh\"\ntemplate <class T> __device__ T cube(T x) { return x * x * x; }\n");
    write(dir.path() / "example_headers/my_header2.cuh", "#pragma once\n#define SCALE 7500001\n");
    ProgramOptions options;
    options.name = (dir.path() / "my_program.cu").string();
    options.arch = "sm_90";
    options.include_path = {(dir.path() / "example_headers").string()};
    EXPECT_TRUE(expect_bundle_of_headers_read_compiles(
        "#include \"example_headers/my_header1.cuh\"\n#include <cuda/std/cmath>\n"
        "extern \"C\" __global__ void k(int* o) { *o = cube(*o) + SCALE + (int)cuda::std::abs(-2); }\n",
        options, "example_headers", true, dir.path() / "example_headers"));
}

// What the preprocessor opens, not what the text names: dead includes (under a false #if,
// absolute, climbing out of the folders) bring nothing in unless they are reached.
TEST(HeaderBundle, FromIncludeFoldersHoldsWhatThePreprocessorOpens) {
    TempDir dir;
    const auto inc = dir.path() / "inc";
    write(dir.path() / "secret.txt", "#define SECRET 1\n");
    const std::string secret = (dir.path() / "secret.txt").string();
    write(inc / "top.h", "#pragma once\n#if 0\n#include \"" + secret + "\"\n#include \"dead.h\"\n"
          "#include <../secret.txt>\n#endif\n#ifdef USE_A\n#include \"a.h\"\n#else\n"
          "#include \"b.h\"\n#endif\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
          "#include \"hopper.h\"\n#endif\n");
    for (const char* name : {"dead.h", "a.h", "b.h", "hopper.h"}) write(inc / name, "#pragma once\n");
    auto names = [](const HeaderBundle& bundle) {
        std::vector<std::string> out;
        for (const auto& header : bundle.headers()) out.push_back(header.name);
        return out;
    };
    EXPECT_EQ(names(HeaderBundle::from_include_folders({"top.h"}, {inc}, "plain",
                                                       {.archs = {"sm_80"}})),
              (std::vector<std::string>{"b.h", "top.h"}));
    EXPECT_EQ(names(HeaderBundle::from_include_folders({"top.h"}, {inc}, "defined",
                                                       {.defines = {"USE_A"}, .archs = {"sm_80"}})),
              (std::vector<std::string>{"a.h", "top.h"}));
    // Several targets: what any of them reads.
    EXPECT_EQ(names(HeaderBundle::from_include_folders({"top.h"}, {inc}, "targets",
                                                       {.archs = {"sm_80", "sm_90"}})),
              (std::vector<std::string>{"b.h", "hopper.h", "top.h"}));

    // Reached, they are refused, each named; allowed, the absolute one is named by its path.
    write(inc / "live_absolute.h", "#include \"" + secret + "\"\n");
    test::expect_invalid(
        [&] { HeaderBundle::from_include_folders({"live_absolute.h"}, {inc}, "x"); },
        {"1 header lies outside every include folder", secret.c_str()});
    const HeaderBundle allowed = HeaderBundle::from_include_folders(
        {"live_absolute.h"}, {inc}, "x", {.allow_outside_folders = true});
    EXPECT_EQ(names(allowed), (std::vector<std::string>{secret, "live_absolute.h"}));
    write(inc / "climbs.h", "#include <../secret.txt>\n");
    test::expect_invalid([&] { HeaderBundle::from_include_folders({"climbs.h"}, {inc}, "x"); },
                         {"outside every include folder", secret.c_str()});
}

TEST(HeaderBundle, EntryThatIsALinkLoopIsNamedAsOne) {
    TempDir dir;
    const auto inc = dir.path() / "inc";
    std::filesystem::create_directories(inc);
    std::filesystem::create_symlink("loop_b.h", inc / "loop_a.h");
    std::filesystem::create_symlink("loop_a.h", inc / "loop_b.h");
    std::filesystem::create_symlink("gone.h", inc / "dangling.h");
    test::expect_invalid([&] { HeaderBundle::from_include_folders({"loop_a.h"}, {inc}, "x"); },
                         {"symbolic link loop", "loop_a.h"});
    test::expect_invalid([&] { HeaderBundle::from_include_folders({"dangling.h"}, {inc}, "x"); },
                         {"symbolic link to nothing", "dangling.h"});
}

// --- Programs compiled with bundles ---------------------------------------------------------

constexpr const char* kUsesValue = R"(
#include "value.h"
extern "C" __global__ void store(int* out) { *out = VALUE; }
)";

ProgramOptions bundle_options(std::vector<HeaderBundle> bundles) {
    ProgramOptions options;
    options.name = "bundled";
    options.arch = "sm_90";
    options.header_bundles = std::move(bundles);
    return options;
}

std::string ptx_of(const char* source, const ProgramOptions& options) {
    Program program(source, SourceType::cxx, options);
    return std::string(program.compile(CodeType::ptx).code());
}

TEST(HeaderBundleCompile, ReadsHeadersFromTheBundle) {
    const HeaderBundle bundle = HeaderBundle::from_headers({{"value.h", "#define VALUE 1234567\n"}}, "v");
    ProgramOptions options = bundle_options({bundle});
    options.pch = false;  // in memory (pch unset: from the bundle's folder, bundle_folder_test)
    Program program(kUsesValue, SourceType::cxx, options);
    const std::string ptx(program.compile(CodeType::ptx).code());
    EXPECT_TRUE(contains(ptx, "1234567")) << ptx;
    EXPECT_EQ(program.pch_status().outcome, PchOutcome::not_attempted);
    EXPECT_TRUE(contains(program.pch_status().reason, "pch = false"));
    options.pch.reset();
    EXPECT_TRUE(contains(ptx_of(kUsesValue, options), "1234567"));
    // No toolkit folder and no PCH flag among the flags.
    for (const auto& flag : program.flags(CodeType::ptx)) {
        EXPECT_FALSE(flag.starts_with("--include-path")) << flag;
        EXPECT_FALSE(flag.starts_with("--pch")) << flag;
    }
}

TEST(HeaderBundleCompile, FirstBundleHoldingANameWins) {
    const HeaderBundle first = HeaderBundle::from_headers({{"value.h", "#define VALUE 1111111\n"}}, "first");
    const HeaderBundle second = HeaderBundle::from_headers(
        {{"value.h", "#define VALUE 2222222\n"}, {"other.h", "#define OTHER 3333333\n"}}, "second");
    EXPECT_TRUE(contains(ptx_of(kUsesValue, bundle_options({first, second})), "1111111"));
    EXPECT_TRUE(contains(ptx_of(kUsesValue, bundle_options({second, first})), "2222222"));
    // A name only the later bundle holds is still found there.
    const char* both = "#include \"value.h\"\n#include <other.h>\n"
                       "extern \"C\" __global__ void k(int* o) { o[0] = VALUE; o[1] = OTHER; }\n";
    const std::string ptx = ptx_of(both, bundle_options({first, second}));
    EXPECT_TRUE(contains(ptx, "1111111")) << ptx;
    EXPECT_TRUE(contains(ptx, "3333333")) << ptx;
}

// C's rule for quoted includes, as jitify applies it to headers given by name and text: a quoted
// include in "dir/x.h" finds "dir/y.h" before "y.h". from_headers rewrites the operand to the
// full name; angle operands, those with nothing beside their includer and other bytes stay.
TEST(HeaderBundle, FromHeadersLooksBesideTheIncluderFirst) {
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"a/b.h", "#include \"c.h\"\n#include <c.h>\n#if __has_include(\"c.h\")\n#endif\n"
                   "#include \"top.h\"\n#include \"../c.h\"\n#include \"sub/d.h\" // \"c.h\"\n"},
         {"a/c.h", "#define V 1\n"},
         {"a/sub/d.h", "#include \"../c.h\"\n"},
         {"c.h", "#define V 2\n"},
         {"top.h", "#include \"c.h\"\n"}},
        "nested");
    EXPECT_EQ(*bundle.find("a/b.h"),
              "#include \"a/c.h\"\n#include <c.h>\n#if __has_include(\"a/c.h\")\n#endif\n"
              "#include \"top.h\"\n#include \"c.h\"\n#include \"a/sub/d.h\" // \"c.h\"\n");
    EXPECT_EQ(*bundle.find("a/sub/d.h"), "#include \"a/c.h\"\n");
    EXPECT_EQ(*bundle.find("top.h"), "#include \"c.h\"\n");  // the top: its own name
    // Read back, the bundle is as made (the rule is not applied twice).
    EXPECT_EQ(HeaderBundle::deserialize(bundle.serialize()).headers(), bundle.headers());
}

// The same bundle compiled from memory, from its folder (PCH) and through the cache gives the
// header beside the includer, and one code.
TEST(HeaderBundleCompile, QuotedIncludeOfAnInMemoryHeaderFindsItsFolderFirst) {
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"lib/api.h", "#include \"impl.h\"\n"},
         {"lib/impl.h", "#define VALUE 7500001\n"},
         {"impl.h", "#define VALUE 7500002\n"}},
        "nested_compile");
    const char* source = "#include <lib/api.h>\nextern \"C\" __global__ void k(int* o) { *o = VALUE; }\n";
    ProgramOptions in_memory = bundle_options({bundle});
    in_memory.pch = false;
    const std::string ptx = ptx_of(source, in_memory);
    EXPECT_TRUE(contains(ptx, "7500001")) << ptx;
    ProgramOptions from_folder = bundle_options({bundle});
    Program folder_program(source, SourceType::cxx, from_folder);
    EXPECT_EQ(std::string(folder_program.compile(CodeType::ptx).code()), ptx);
    EXPECT_NE(folder_program.pch_status().outcome, PchOutcome::not_attempted) << folder_program.pch_status().reason;
    MemoryProgramCache cache;
    Program cached_program(source, SourceType::cxx, in_memory);
    EXPECT_EQ(std::string(compile_cached(cached_program, CodeType::ptx, {}, {.cache = &cache}).code()), ptx);
}

// Automatic PCH gave wrong code when in-memory headers changed between compiles with the same
// leading #includes: with bundles each compile reads its own headers.
TEST(HeaderBundleCompile, SameIncludesDifferentBundlesGiveEachItsOwnCode) {
    for (int round = 0; round < 2; ++round) {
        for (int value : {5550001, 5550002, 5550003}) {
            const HeaderBundle bundle = HeaderBundle::from_headers(
                {{"value.h", "#define VALUE " + std::to_string(value) + "\n"}}, "v");
            const std::string ptx = ptx_of(kUsesValue, bundle_options({bundle}));
            EXPECT_TRUE(contains(ptx, std::to_string(value))) << round << " " << value;
        }
    }
    ProgramOptions asks_pch = bundle_options({sample_bundle()});
    asks_pch.pch = true;
    test::expect_invalid([&] { Program(kUsesValue, SourceType::cxx, asks_pch).flags(CodeType::ptx); },
                         {"header_bundles", "pch"});
    asks_pch.pch.reset();
    asks_pch.create_pch = "x.pch";
    test::expect_invalid([&] { Program(kUsesValue, SourceType::cxx, asks_pch).flags(CodeType::ptx); },
                         {"create_pch"});
}

TEST(HeaderBundleCompile, MissingHeaderNamesItAndTheBundles) {
    const HeaderBundle a = HeaderBundle::from_headers({{"a.h", "\n"}}, "bundle-a");
    const HeaderBundle b = HeaderBundle::from_headers({{"b.h", "\n"}}, "bundle-b");
    Program program("#include <a.h>\n#include <cuda_fp16.h>\n__global__ void k() {}\n",
                    SourceType::cxx, bundle_options({a, b}));
    try {
        program.compile(CodeType::ptx);
        ADD_FAILURE() << "compiled without cuda_fp16.h";
    } catch (const CompileError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "the header 'cuda_fp16.h' is in none of the header bundles")) << what;
        EXPECT_TRUE(contains(what, "'bundle-a' (1 header")) << what;
        EXPECT_TRUE(contains(what, "'bundle-b' (1 header")) << what;
        EXPECT_TRUE(contains(e.log(), "open source file \"cuda_fp16.h\"")) << e.log();
    }
}

// NVRTC reads a bundle's headers from its folder (~/.cache/cudacore/header-bundles/<digest>/,
// given to it as /proc/self/fd/N): its log names them as the source includes them.
TEST(HeaderBundleCompile, ErrorInABundledHeaderIsNamedAsIncluded) {
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"cfg.h", "#define WIDTH 4\nint broken = undeclared_in_cfg;\n"},
         {"sub/inner.h", "#include <cfg.h>\n"}},
        "config");
    for (const bool from_memory : {false, true}) {
        ProgramOptions options = bundle_options({bundle});
        if (from_memory) options.pch = false;
        Program program("#include <sub/inner.h>\n__global__ void k() {}\n", SourceType::cxx, options);
        try {
            program.compile(CodeType::ptx);
            ADD_FAILURE() << "compiled a header with an error in it";
        } catch (const CompileError& e) {
            const std::string log = e.log();
            SCOPED_TRACE(std::string(from_memory ? "from memory" : "from the folder: ") +
                         program.pch_status().reason);
            EXPECT_TRUE(contains(log, "cfg.h(2)")) << log;
            EXPECT_TRUE(contains(log, "undeclared_in_cfg")) << log;
            EXPECT_FALSE(contains(log, "header-bundles")) << log;
            EXPECT_FALSE(contains(log, "/proc/self/fd")) << log;
            EXPECT_FALSE(contains(program.log(), "header-bundles")) << program.log();
            // The line that names the header starts with the name the source wrote.
            EXPECT_TRUE(contains(log, "\ncfg.h(2)") || log.starts_with("cfg.h(2)")) << log;
        }
    }
}

TEST(HeaderBundleCompile, RefusedForPtxAndNvvmPrograms) {
    ProgramOptions options = bundle_options({sample_bundle()});
    test::expect_invalid(
        [&] { Program(".version 8.0\n.target sm_90\n", SourceType::ptx, options).flags(CodeType::cubin); },
        {"header_bundles"});
    test::expect_invalid(
        [&] { Program("target triple = \"nvptx64\"\n", SourceType::nvvm, options).flags(CodeType::ptx); },
        {"header_bundles"});
}

// A bundle made from the toolkit compiles a program that includes <cuda/std/...> and
// cuda_fp16.h to the same code as the toolkit's folders do.
TEST(HeaderBundleCompile, ToolkitBundleGivesTheToolkitsCode) {
    if (toolkit_include_dirs().empty()) GTEST_SKIP() << "no CUDA toolkit include folder found";
    const char* source = R"(
#include <cuda/std/cmath>
#include <cuda_fp16.h>
extern "C" __global__ void k(float* out, const __half* in) {
    out[threadIdx.x] = cuda::std::sqrt(__half2float(in[threadIdx.x]));
}
)";
    const std::vector<std::string> toolkit = toolkit_include_dirs();
    const std::vector<std::filesystem::path> folders(toolkit.begin(), toolkit.end());
    const HeaderBundle bundle =
        HeaderBundle::from_include_folders({"<cuda/std/cmath>", "cuda_fp16.h"}, folders, "toolkit");
    ProgramOptions from_disk;
    from_disk.name = "toolkit_program";
    from_disk.arch = "sm_90";
    from_disk.pch = false;
    ProgramOptions from_memory = from_disk;
    from_memory.pch.reset();
    from_memory.header_bundles = {bundle};
    const std::string reference(Program(source, SourceType::cxx, from_disk).compile(CodeType::cubin).code());
    const std::string bundled(Program(source, SourceType::cxx, from_memory).compile(CodeType::cubin).code());
    EXPECT_EQ(bundled, reference);

    // Cached, as a program of a bare name: NVRTC looks the folders of bundled names up (relative
    // to the working directory) before it looks beside those headers, which shows no include the
    // scan missed. Stored once, then found without a compile.
    std::vector<std::string> warnings;
    const WarningHandler previous =
        set_warning_handler([&](const Warning& warning) { warnings.push_back(warning.message); });
    MemoryProgramCache cache;
    Program first(source, SourceType::cxx, from_memory);
    EXPECT_EQ(std::string(compile_cached(first, CodeType::cubin, {}, {.cache = &cache}).code()), reference);
    Program again(source, SourceType::cxx, from_memory);
    EXPECT_EQ(std::string(compile_cached(again, CodeType::cubin, {}, {.cache = &cache}).code()), reference);
    set_warning_handler(previous);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    EXPECT_EQ(cache.stats().insertions, 1u);
    EXPECT_EQ(cache.stats().hits, 1u);
}

}  // namespace
