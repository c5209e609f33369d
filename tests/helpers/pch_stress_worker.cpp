// One process of the PCH stress (tests/cpu/cache/compile/pch_stress_test.cpp, scripts/pch_stress.sh):
// compiles `count` small <cuda/std> kernels with automatic PCH in $TMPDIR, the way `mode` says,
// with the disk cache at CACHE_DIR (none when it is "-"), and prints one line per result:
// "R <variant> <fnv1a-64 of the code>". Exits 0 when every compile returned code, 1 with
// "E <error>" otherwise. Modes: compile_many with the threads or processes strategy, or one
// program after another with compile_cached (cached) or Program::compile (plain).
//
//   helper_pch_stress_worker threads|processes|cached|plain CACHE_DIR|- FIRST_VARIANT COUNT
#include "cudacore/cached_compile.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/program.hpp"

#include "pch_stress_kernels.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: helper_pch_stress_worker threads|processes|cached|plain CACHE_DIR|- FIRST COUNT\n");
        return 2;
    }
    using namespace cudacore;
    const std::string mode = argv[1];
    const int first = std::atoi(argv[3]);
    const int count = std::atoi(argv[4]);
    try {
        std::optional<DiskProgramCache> cache;
        if (std::strcmp(argv[2], "-") != 0) cache.emplace(argv[2]);
        std::vector<Program> programs;
        std::vector<int> variants;
        for (int i = 0; i < count; ++i) {
            const int variant = (first + i) % test::kStressVariants;
            variants.push_back(variant);
            programs.emplace_back(test::stress_kernel(variant), SourceType::cxx,
                                  test::stress_options(variant));
        }
        std::vector<ObjectCode> codes;
        if (mode == "cached" && cache) {
            for (Program& program : programs) codes.push_back(compile_cached(program, CodeType::ptx, {}, {.cache = &*cache}));
        } else if (mode == "cached" || mode == "plain") {
            for (Program& program : programs) codes.push_back(program.compile(CodeType::ptx));
        } else {
            CompileOptions many;
            many.strategy = mode == "processes" ? CompileStrategy::processes : CompileStrategy::threads;
            many.workers = 2;
            many.cache = cache ? &*cache : nullptr;
            codes = compile_many(programs, CodeType::ptx, {}, many);
        }
        for (std::size_t i = 0; i < codes.size(); ++i)
            std::printf("R %d %016llx\n", variants[i],
                        static_cast<unsigned long long>(test::fnv1a(codes[i].code())));
    } catch (const std::exception& e) {
        std::printf("E %s\n", e.what());
        return 1;
    }
    return 0;
}
