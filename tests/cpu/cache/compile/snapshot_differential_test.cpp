// A harness that tries to break "a hit is the code the program compiles to": random projects whose
// directives come in every form the compile snapshot must read as NVRTC does (quoted and angled,
// __has_include directly and through a wrapper macro, a line splice, the digraph %:, and decoys in
// comments, skipped groups and string literals, raw strings from C++11, and what the snapshot
// must refuse: a name a macro makes, #include_next, a digit separator in a skipped group that NVRTC
// reads as a quote), with or without line information, named absolutely or relatively, whose project folders
// may hold the toolkit's names, and whose headers may name their own path (__FILE__), compiled
// under a random --std. Each is compiled through the cache, with the check compile (nothing is
// declared), and without it; then changed (a header created, rewritten or removed, the toolkit's
// names among them) and compiled both ways again. A third of them also have a header bundle
// (nested names, a quoted include beside, __FILE__ and __LINE__), which a plain compile reads from
// its folder (with PCH) and the cache from memory. Whatever the cache returns, a miss, a hit or a
// compile it did not store, must be the plain compile's code byte for byte.
//
// Environment: CUDACORE_TEST_SEED picks other projects (a failure names the project and prints
// its files), CUDACORE_DIFFERENTIAL_PROJECTS how many (default 24); CUDACORE_DIFFERENTIAL_VERBOSE=1
// prints each failed compile and each reason a compile was not stored.
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "code/nvrtc_compile.hpp"
#include "cudacore/cached_compile.hpp"
#include "headers/pch_directory.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;

// Header bundles are written out as folders under the cache folder: a temporary one for this
// program, never the user's.
[[maybe_unused]] ::testing::Environment* const cache_folder_environment =
    ::testing::AddGlobalTestEnvironment(new cudacore::test::TemporaryCacheFolderEnvironment);

// Project names, and two of the toolkit's (light headers: vector_functions.h includes
// "vector_types.h" beside itself, which a project folder of that name must not shadow).
const std::vector<std::string>& header_names() {
    static const std::vector<std::string> names{"a.h", "b.h", "sub/c.h", "vector_types.h", "vector_functions.h"};
    return names;
}

bool is_toolkit_name(const std::string& name) { return name.starts_with("vector_"); }

std::string macro_of(const std::string& name) {
    std::string macro = "V_";
    for (char c : name) macro += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return macro;
}

class RandomProject {
public:
    RandomProject(const fs::path& root, std::mt19937& random) : root_(root), random_(random) {
        const char* standards[] = {"c++03", "c++11", "c++14", "c++17", "c++20"};
        standard_ = standards[random_() % 5];
        lineinfo_ = chance(0.25);
        relative_name_ = chance(0.3);
        refusals_ = chance(0.3);
        for (const char* folder : {"src", "i1", "i2"}) {
            folders_.push_back(root_ / folder);
            folders_.push_back(root_ / folder / "sub");
        }
        for (const auto& folder : folders_) fs::create_directories(folder);
        for (const auto& folder : folders_)
            for (const auto& name : header_names())
                if (chance(is_toolkit_name(name) ? 0.1 : 0.3)) write_header(folder / name, name);
        if (chance(0.3)) make_bundle();
        source_ = "#define HAS_INC(x) __has_include(x)\n" + directives("m", 3) +
                  "extern \"C\" __global__ void k(int* out) { *out = 0" + sum_ + "; }\n";
        test::write_file(root_ / "src" / "k.cu", source_);
    }

    ProgramOptions options() const {
        ProgramOptions options;
        options.arch = "sm_90";
        options.name = (root_ / "src" / "k.cu").string();
        options.include_path = {(root_ / "i1").string(), (root_ / "i2").string()};
        options.std = standard_;
        options.pch = false;
        options.lineinfo = lineinfo_;
        if (relative_name_) options.name = "src/k.cu";  // resolved against the working directory
        if (bundle_) {
            // PCH unset: a plain compile reads the bundle from its folder, the cache from memory.
            options.header_bundles = {*bundle_};
            options.pch.reset();
        }
        return options;
    }
    const std::string& source() const { return source_; }
    const std::string& standard() const { return standard_; }

    std::string dump() const {
        std::string out = "--std " + standard_ + (lineinfo_ ? " --lineinfo" : "") +
                          (relative_name_ ? ", named src/k.cu in " + root_.string() : "") + "\n";
        if (bundle_)
            for (const auto& header : bundle_->headers()) out += "== bundled " + header.name + "\n" + header.content;
        for (const auto& entry : fs::recursive_directory_iterator(root_))
            if (entry.is_regular_file()) out += "== " + entry.path().string() + "\n" + test::read_file(entry.path());
        return out;
    }

    // Creates, rewrites or removes one to three headers; returns what it did.
    std::string change() {
        std::string done;
        for (int i = 1 + static_cast<int>(random_() % 3); i > 0; --i) {
            const std::string& name = header_names()[random_() % header_names().size()];
            const fs::path path = folders_[random_() % folders_.size()] / name;
            if (fs::exists(path) && chance(0.5)) {
                fs::remove(path);
                done += " removed " + path.lexically_relative(root_).string();
            } else {
                done += (fs::exists(path) ? " rewrote " : " created ") + path.lexically_relative(root_).string();
                write_header(path, name);
            }
        }
        return done;
    }

private:
    bool chance(double p) { return std::uniform_real_distribution<>(0, 1)(random_) < p; }

    // Up to `count` directives, each in a random form; a directive that includes adds what it
    // found into the kernel's sum.
    std::string directives(const std::string& prefix, int count) {
        std::string text;
        for (int i = 0; i < count; ++i) {
            const std::string& name = header_names()[random_() % header_names().size()];
            const std::string operand = chance(0.5) ? "\"" + name + "\"" : "<" + name + ">";
            const std::string term = prefix + std::to_string(i);
            // The value the kernel sees: the header's macro where it was included, else 0.
            const std::string value = "#ifdef " + macro_of(name) + "\n#define " + term + " " + macro_of(name) +
                                      "\n#else\n#define " + term + " 0\n#endif\n";
            const bool cxx11 = standard_ != "c++03";
            const bool cxx14 = cxx11 && standard_ != "c++11";
            switch (random_() % (refusals_ ? 13 : 10)) {
                case 0: text += "#include " + operand + "\n" + value; break;
                case 1: text += "#if __has_include(" + operand + ")\n#include " + operand + "\n#endif\n" + value; break;
                case 2: text += "#if HAS_INC(" + operand + ")\n#include " + operand + "\n#endif\n" + value; break;
                case 3: text += "#inc\\\nlude " + operand + "\n" + value; break;
                case 4: text += "%:include " + operand + "\n" + value; break;
                case 5: text += "/* #include " + operand + " */\n" + value; break;
                case 6: text += "#if 0\n#include " + operand + "\n#endif\n" + value; break;
                case 7: text += "// #include " + operand + "\n" + value; break;
                case 8: text += "__device__ const char s_" + term + "[] = \"#include \\\"x.h\\\"\";\n" + value; break;
                case 9:
                    // A raw string from C++11; before it, R is a name and the directive is one.
                    if (cxx11) text += "__device__ const char r_" + term + "[] = R\"d(\n#include " + operand + "\n)d\";\n";
                    text += value;
                    break;
                case 10: text += "#define INC_" + term + " " + operand + "\n#include INC_" + term + "\n" + value; break;
                case 11:
                    // A digit separator in a skipped group, which NVRTC reads as a quote there.
                    if (cxx14) text += "#if 0\nint q_" + term + " = 1'2 /*\n#endif\n#include " + operand + "\n#if 0\n*/\n#endif\n";
                    text += value;
                    break;
                case 12: text += "#include_next " + operand + "\n" + value; break;
            }
            sum_ += " + " + std::to_string(2 + i) + " * " + term;
        }
        return text;
    }

    // A project header: a value, perhaps its own path, and directives of its own (guarded by
    // #pragma once, so that a header may reach itself).
    void write_header(const fs::path& path, const std::string& name) {
        const std::string prefix = "h" + std::to_string(next_file_++) + "_";
        std::string text = "#pragma once\n";
        if (depth_ < 2) {
            ++depth_;
            std::string saved = std::move(sum_);
            sum_.clear();
            text += directives(prefix, 2);
            text += "#undef " + macro_of(name) + "\n#define " + macro_of(name) + " (" +
                    std::to_string(1 + random_() % 97) + sum_ + ")\n";
            sum_ = std::move(saved);
            --depth_;
        } else {
            text += "#undef " + macro_of(name) + "\n#define " + macro_of(name) + " " + std::to_string(1 + random_() % 97) + "\n";
        }
        if (chance(0.2)) text += "__device__ char file_" + prefix + "[] = __FILE__;\n";
        fs::create_directories(path.parent_path());
        test::write_file(path, text);
    }

    // A header bundle of one to three of the names (their files may also lie in the project's
    // folders): each a value, perhaps its own path and line, perhaps a quoted include of another
    // bundled name beside it.
    void make_bundle() {
        std::vector<BundledHeader> headers;
        for (const std::string& name : header_names()) {
            if (is_toolkit_name(name) || !chance(0.6)) continue;
            std::string text = "#pragma once\n";
            if (chance(0.4)) text += "#include \"" + std::string(name == "sub/c.h" ? "../a.h" : "sub/c.h") + "\"\n";
            text += "#undef " + macro_of(name) + "\n#define " + macro_of(name) + " " + std::to_string(100 + random_() % 97) +
                    (chance(0.3) ? " + __LINE__" : "") + "\n";
            if (chance(0.3)) text += "__device__ char bundled_file_" + macro_of(name) + "[] = __FILE__;\n";
            headers.push_back({name, text});
        }
        if (!headers.empty()) bundle_ = HeaderBundle::from_headers(std::move(headers), "random");
    }

    fs::path root_;
    std::mt19937& random_;
    std::optional<HeaderBundle> bundle_;
    std::vector<fs::path> folders_;
    std::string standard_;
    bool lineinfo_ = false;
    bool relative_name_ = false;
    bool refusals_ = false;  // forms the snapshot refuses (cases 10 to 12) may appear
    std::string source_;
    std::string sum_;
    int next_file_ = 0;
    int depth_ = 0;
};

// Removes what NVRTC's automatic PCH left in this process's PCH folder.
void remove_automatic_pch_files() {
    const detail::PchDirectory folder = detail::automatic_pch_directory(detail::pch_heap_size());
    if (!folder.problem.empty()) return;
    for (const auto& entry : fs::directory_iterator(folder.path))
        if (entry.path().extension() == ".pch") fs::remove(entry.path());
}

// The PTX, or "error" when the compile fails.
std::string ptx_of(const std::function<ObjectCode()>& compile) {
    try {
        return std::string(compile().code());
    } catch (const CompileError& e) {
        if (std::getenv("CUDACORE_DIFFERENTIAL_VERBOSE")) std::printf("compile error: %s\n", e.what());
        return "error";
    }
}

TEST(SnapshotDifferential, RandomProjectsCompileThroughTheCacheAsTheirFiles) {
    const char* seed = std::getenv("CUDACORE_TEST_SEED");
    const char* count = std::getenv("CUDACORE_DIFFERENTIAL_PROJECTS");
    const int projects = count ? std::atoi(count) : 24;
    std::mt19937 random(seed ? std::stoul(seed) : 20261129u);
    test::TempDir dir;
    test::ScopedWorkingDirectory working(dir.path());
    test::WarningLog warnings;  // a compile that is not stored says why
    std::map<std::string, int> not_stored;  // by the reason's first words
    int compiles = 0, stored = 0, hits_after_change = 0, errors = 0;
    for (int index = 0; index < projects; ++index) {
        RandomProject project(dir.path() / std::to_string(index), random);
        working.change_to(dir.path() / std::to_string(index));
        MemoryProgramCache cache;
        auto program = [&] { return Program(project.source(), SourceType::cxx, project.options()); };
        auto cached_compile = [&] {
            Program cached = program();
            const std::size_t before = cache.stats().insertions;
            const std::size_t warned = warnings.seen.size();
            const std::string out = ptx_of([&] { return compile_cached(cached, CodeType::ptx, {}, {.cache = &cache}); });
            ++compiles;
            stored += cache.stats().insertions > before;
            if (warnings.seen.size() > warned) {
                const std::string& message = warnings.seen.back().message;
                if (std::getenv("CUDACORE_DIFFERENTIAL_VERBOSE")) std::printf("not stored: %s\n", message.c_str());
                const std::size_t why = message.find("not cached: ");
                ++not_stored[message.substr(why == std::string::npos ? 0 : why + 12, 70)];
            }
            return out;
        };
        Program plain = program();
        const std::string expected = ptx_of([&] { return plain.compile(CodeType::ptx); });
        errors += expected == "error";
        const std::string first = cached_compile();
        EXPECT_EQ(first, expected) << "project " << index << ": the cached compile differs from the plain compile\n"
                                   << project.dump();
        if (const std::optional<ObjectCode> hit = find_cached(program(), CodeType::ptx, {}, {.cache = &cache}))
            EXPECT_EQ(std::string(hit->code()), expected) << "project " << index << ": the hit differs\n" << project.dump();

        const std::string changes = project.change();
        // NVRTC takes its automatic PCH (which a plain compile of a bundle's folder uses) for
        // current while a header it holds was rewritten within the second it was made, or a new
        // one shadows it: the plain compile after a change makes its PCH afresh.
        remove_automatic_pch_files();
        Program changed_plain = program();
        const std::string now = ptx_of([&] { return changed_plain.compile(CodeType::ptx); });
        const std::optional<ObjectCode> hit = find_cached(program(), CodeType::ptx, {}, {.cache = &cache});
        if (hit) {
            ++hits_after_change;
            EXPECT_EQ(std::string(hit->code()), now)
                << "project " << index << ": a hit after" << changes << " differs from the plain compile\n" << project.dump();
        }
        EXPECT_EQ(cached_compile(), now) << "project " << index << ": after" << changes
                                         << ", the cached compile differs from the plain compile\n" << project.dump();
    }
    std::printf("%d projects, %d cached compiles: %d stored, %d hits after a change, %d plain compiles failed\n",
                projects, compiles, stored, hits_after_change, errors);
    for (const auto& [reason, times] : not_stored) std::printf("  not stored %d times: %s...\n", times, reason.c_str());
    // The harness must exercise the cache, not only its refusals.
    EXPECT_GE(stored, compiles / 4);
}

}  // namespace
