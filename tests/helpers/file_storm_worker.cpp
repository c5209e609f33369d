// One process of the file storm (tests/cpu/cache/compile/file_storm_test.cpp): compiles the storm's
// programs (tests/support/file_storm_programs.hpp) to PTX through the disk cache at
// default_cache_directory() ($CUDACORE_CACHE_DIR, which also holds the bundle's folder) while
// another process changes their headers.
//
//   helper_file_storm_worker compile WORK COUNT SEED
//     COUNT compiles of programs picked at random, each through compile_cached. One line each:
//     "R <program> <start ns> <end ns> <compiled 0|1> <value of each slot, or - > <hash of the PTX>"
//     (times on the monotonic clock, which every process shares; compiled: 0 when the code came
//     from the cache), or "E <program> <start ns> <end ns> <message>" for a compile that failed.
//     A not_cached warning prints "W not_cached MESSAGE".
//   helper_file_storm_worker plain WORK COUNT SEED
//     The same with Program::compile, no cache and no PCH (NVRTC's PCH is not checked against
//     headers edited since it was made), each line "compiled": what the checker must accept.
//   helper_file_storm_worker final WORK
//     For each program: compile_cached, then a plain compile (Program::compile, no cache, the
//     bundle read from memory: pch off). One line each:
//     "F <program> <compiled 0|1> <cached values> <cached hash> <plain values> <plain hash>"
//     or "E <program> 0 0 <message>".
// A value is a number, "none" for a header caught empty, or "?" when the PTX does not show one.
// Exit 0 when it ran (failed compiles are reported, not an exit status), 2 on bad usage.
#include "file_storm_programs.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <random>
#include <string>

namespace {

using namespace cudacore;

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// "<slot values> <hash>" of `ptx` for `program`.
std::string describe(int program, std::string_view ptx) {
    const auto values = test::storm_values_in_ptx(ptx);
    std::string text;
    for (int slot = 0; slot < test::kStormSlots; ++slot) {
        if (slot == test::kBundleSlot && !test::storm_program_bundled(program)) text += "- ";
        else if (!values[slot]) text += "? ";
        else if (*values[slot] == test::kNoValue) text += "none ";
        else text += std::to_string(*values[slot]) + " ";
    }
    return text + std::to_string(std::hash<std::string_view>{}(ptx));
}

// One line for a message, whatever it holds.
std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text.substr(0, 2000);
}

int compile_many_times(const std::filesystem::path& work, int count, unsigned seed, bool cached) {
    std::optional<DiskProgramCache> cache;
    if (cached) cache.emplace(default_cache_directory());
    std::mt19937 random(seed);
    for (int i = 0; i < count; ++i) {
        const int program = static_cast<int>(random() % test::kStormPrograms);
        const long long start = now_ns();
        try {
            ProgramOptions options = test::storm_options(program, work);
            if (!cache) options.pch = false;  // NVRTC's PCH is not checked against edited headers
            Program source(test::storm_source(program), SourceType::cxx, options);
            const std::uint64_t compiles = cache_stats().compiles;
            const ObjectCode code = cache ? compile_cached(source, CodeType::ptx, {}, {.cache = &*cache})
                                          : source.compile(CodeType::ptx);
            const bool compiled = !cache || cache_stats().compiles != compiles;
            std::printf("R %d %lld %lld %d %s\n", program, start, now_ns(), compiled ? 1 : 0,
                        describe(program, code.code()).c_str());
        } catch (const std::exception& e) {
            std::printf("E %d %lld %lld %s\n", program, start, now_ns(), one_line(e.what()).c_str());
        }
        std::fflush(stdout);
    }
    return 0;
}

int compile_each_twice(const std::filesystem::path& work) {
    DiskProgramCache cache(default_cache_directory());
    for (int program = 0; program < test::kStormPrograms; ++program) {
        try {
            Program cached(test::storm_source(program), SourceType::cxx, test::storm_options(program, work));
            const std::uint64_t compiles = cache_stats().compiles;
            const ObjectCode from_cache = compile_cached(cached, CodeType::ptx, {}, {.cache = &cache});
            const bool compiled = cache_stats().compiles != compiles;
            ProgramOptions plain_options = test::storm_options(program, work);
            plain_options.pch = false;  // a bundle from memory, the headers parsed afresh
            Program plain(test::storm_source(program), SourceType::cxx, plain_options);
            const ObjectCode fresh = plain.compile(CodeType::ptx);
            std::printf("F %d %d %s %s\n", program, compiled ? 1 : 0,
                        describe(program, from_cache.code()).c_str(),
                        describe(program, fresh.code()).c_str());
        } catch (const std::exception& e) {
            std::printf("E %d 0 0 %s\n", program, one_line(e.what()).c_str());
        }
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (!(((mode == "compile" || mode == "plain") && argc == 5) || (mode == "final" && argc == 3))) {
        std::fprintf(stderr, "usage: helper_file_storm_worker compile|plain WORK COUNT SEED | final WORK\n");
        return 2;
    }
    set_warning_handler([](const Warning& warning) {
        if (warning.kind == WarningKind::not_cached) std::printf("W not_cached %s\n", one_line(warning.message).c_str());
    });
    try {
        if (mode == "final") return compile_each_twice(argv[2]);
        return compile_many_times(argv[2], std::atoi(argv[3]),
                                  static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10)),
                                  mode == "compile");
    } catch (const std::exception& e) {  // the cache folder itself cannot be had
        std::printf("E -1 0 0 %s\n", one_line(e.what()).c_str());
        return 0;
    }
}
