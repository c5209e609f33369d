// A warmed cache shipped as one artefact: 1,000 specializations of a kernel that includes
// <cuda/std/array> and <cuda/std/limits> (`fill<N, T>`, N = 1..250, T = int, unsigned, float,
// double) are compiled into a warm cache folder, exported with export_cache_artefact, then
// imported into a fresh disk cache and all 1,000 found there (find_cached) by a fresh process, as
// an application's first run on a new machine does. Prints the export, the import, the finds and
// import + finds; checks that every program was found (no compile). CPU only (NVRTC).
//
//   build/bench/cache_artefact_bench [--count 1000] [--warm DIR] [--arch sm_90] [--rounds 3]
//
// Compiling 1,000 programs takes minutes on a few cores: the warm folder (--warm, default
// $TMPDIR/cudacore-artefact-bench-warm) is kept between runs, and only what it lacks is compiled
// (compile_many, one worker per core). Each round imports into a new folder and finds from a new
// process (this program run with --find), so no file digest or key is remembered from before.
// Google Benchmark's --benchmark_* flags are ignored (scripts/gpu-check.sh passes them to every
// bench).
#include "cudacore/cache_activity.hpp"
#include "cudacore/cache_artefact.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/program.hpp"

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
namespace fs = std::filesystem;

constexpr const char* kSource = R"(
#include <cuda/std/array>
#include <cuda/std/limits>
template <int N, class T>
__global__ void fill(T* out) {
    cuda::std::array<T, N> values{};
    for (int i = 0; i < N; ++i) values[i] = cuda::std::numeric_limits<T>::max() / T(i + 2);
    T sum = 0;
    for (T value : values) sum += value / T(N);
    *out = sum;
}
)";

struct Args {
    int count = 1000;
    int rounds = 3;
    std::string arch = "sm_90";
    fs::path warm;
    fs::path find_in;  // --find: the child's mode
};

ProgramOptions options_of(const Args& args) {
    ProgramOptions options;
    options.arch = args.arch;
    options.name = "fill.cu";
    return options;
}

// The name expression of each specialization.
std::vector<std::vector<std::string>> specializations(int count) {
    static const char* const types[] = {"int", "unsigned", "float", "double"};
    std::vector<std::vector<std::string>> names;
    for (int i = 0; i < count; ++i)
        names.push_back({"fill<" + std::to_string(i / 4 + 1) + ", " + types[i % 4] + ">"});
    return names;
}

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The child: finds every specialization in the cache at args.find_in; prints the time and exits
// 1 when one is missing.
int find_all(const Args& args) {
    DiskProgramCache cache(args.find_in);
    const ProgramOptions options = options_of(args);
    const auto names = specializations(args.count);
    const auto start = std::chrono::steady_clock::now();
    int found = 0;
    for (const auto& name : names) {
        const Program program(kSource, SourceType::cxx, options);
        if (find_cached(program, CodeType::cubin, name, {.cache = &cache})) ++found;
    }
    const double ms = ms_since(start);
    std::printf("%.3f %d\n", ms, found);
    return found == args.count ? 0 : 1;
}

// Compiles into the warm folder what it lacks.
void warm_up(const Args& args, DiskProgramCache& warm) {
    const auto names = specializations(args.count);
    std::vector<std::vector<std::string>> missing;
    const ProgramOptions options = options_of(args);
    for (const auto& name : names) {
        const Program program(kSource, SourceType::cxx, options);
        if (!find_cached(program, CodeType::cubin, name, {.cache = &warm})) missing.push_back(name);
    }
    if (missing.empty()) return;
    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    std::printf("compiling %zu specializations into %s (%u workers; kept for later runs)\n",
                missing.size(), args.warm.c_str(), workers);
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    compile_many(kSource, options, CodeType::cubin, missing, {.workers = workers, .cache = &warm});
    std::printf("compiled in %.1f s (%.0f ms a specialization per worker)\n", ms_since(start) / 1000,
                ms_since(start) * workers / static_cast<double>(missing.size()));
}

// Runs this program with --find in `folder`: the child's milliseconds, or a negative value when
// it failed.
double find_in_child(const Args& args, const fs::path& folder) {
    const std::string command = "'" + fs::read_symlink("/proc/self/exe").string() + "' --find '" +
                                folder.string() + "' --count " + std::to_string(args.count) +
                                " --arch " + args.arch;
    FILE* child = ::popen(command.c_str(), "r");
    if (child == nullptr) return -1;
    double ms = -1;
    int found = 0;
    const int read = std::fscanf(child, "%lf %d", &ms, &found);
    const int status = ::pclose(child);
    if (read != 2 || status != 0) {
        std::printf("FAILED: the finding process found %d of %d (status %d)\n", found, args.count,
                    status);
        return -1;
    }
    return ms;
}

Args parse(int argc, char** argv) {
    Args args;
    const char* tmp = std::getenv("TMPDIR");
    args.warm = fs::path(tmp && *tmp ? tmp : "/tmp") / "cudacore-artefact-bench-warm";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--count" && has_value) args.count = std::atoi(argv[++i]);
        else if (arg == "--rounds" && has_value) args.rounds = std::atoi(argv[++i]);
        else if (arg == "--arch" && has_value) args.arch = argv[++i];
        else if (arg == "--warm" && has_value) args.warm = argv[++i];
        else if (arg == "--find" && has_value) args.find_in = argv[++i];
    }
    return args;
}

int run(const Args& args) {
    DiskProgramCache warm(args.warm, std::uint64_t{8} << 30);
    warm_up(args, warm);
    std::string scratch_name = (fs::temp_directory_path() / "cudacore-artefact-bench-XXXXXX").string();
    if (::mkdtemp(scratch_name.data()) == nullptr) return 1;
    const fs::path scratch = scratch_name;
    // Only this bench's programs, by their keys (the warm folder may hold others).
    CacheArtefactExportOptions picked;
    picked.keys.emplace();
    const ProgramOptions options = options_of(args);
    for (const auto& name : specializations(args.count)) {
        const Program program(kSource, SourceType::cxx, options);
        for (const CacheKey& key : cached_entry_keys(program, CodeType::cubin, name, {.cache = &warm}))
            picked.keys->push_back(key);
    }
    const auto exporting = std::chrono::steady_clock::now();
    const CacheArtefactExport exported = export_cache_artefact(scratch / "warm.ccart", warm, picked);
    const double export_ms = ms_since(exporting);
    std::printf("artefact: %d specializations, %llu entries, %.2f MiB; export %.0f ms\n", args.count,
                static_cast<unsigned long long>(exported.entries), exported.bytes / 1048576.0,
                export_ms);
    std::printf("%-6s %12s %12s %14s %10s\n", "round", "import ms", "find ms", "import+find ms",
                "imported");
    bool ok = exported.missing.empty();
    std::vector<double> totals;
    for (int round = 0; round < args.rounds; ++round) {
        const fs::path folder = scratch / ("fresh" + std::to_string(round));
        const auto importing = std::chrono::steady_clock::now();
        DiskProgramCache fresh(folder, std::uint64_t{8} << 30);
        const CacheArtefactImport imported = import_cache_artefact(fresh, scratch / "warm.ccart");
        const double import_ms = ms_since(importing);
        const double find_ms = find_in_child(args, folder);
        ok = ok && find_ms >= 0 && imported.imported == exported.entries;
        totals.push_back(import_ms + find_ms);
        std::printf("%-6d %12.1f %12.1f %14.1f %10llu\n", round, import_ms, find_ms,
                    import_ms + find_ms, static_cast<unsigned long long>(imported.imported));
    }
    std::sort(totals.begin(), totals.end());
    std::printf("median import + find of %d specializations: %.0f ms (goal: under 1000 ms): %s\n",
                args.count, totals[totals.size() / 2], ok ? "all found, none compiled" : "FAILED");
    fs::remove_all(scratch);
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Args args = parse(argc, argv);
        if (args.count <= 0 || args.rounds <= 0) {
            std::fprintf(stderr, "--count and --rounds take a positive number\n");
            return 2;
        }
        if (!args.find_in.empty()) return find_all(args);
        return run(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cache_artefact_bench: %s\n", e.what());
        return 1;
    }
}
