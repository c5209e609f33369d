// 1,000 mutated copies of a real cubin (random bytes changed, truncations, swapped tables,
// changed header and table bytes; fixed seeds) handed to get_kernel: each loads or gives a
// clear error, and none crashes the process. The loads run in a child process (a driver may
// still crash on well-formed but nonsensical contents): a crash is counted and the child is
// started again after the mutant that crashed it. Prints the count of each outcome.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/device.hpp"
#include "cudacore/program.hpp"

#include <cstdio>
#include <map>
#include <sstream>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
__device__ int counter;
extern "C" __global__ void first(int* p, int n) {
    __shared__ int scratch[64];
    scratch[threadIdx.x % 64] = p[threadIdx.x % n];
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&counter, scratch[n % 64]);
}
extern "C" __global__ void second(float* p) { p[threadIdx.x] *= 2.0f; }
)";

constexpr unsigned kMutants = 1000;

TEST(MutatedCubin, ThousandMutantsLoadOrGiveAClearErrorWithoutCrashing) {
    CUDACORE_REQUIRE_GPU();
    ProgramOptions options;
    options.arch = Device(0).arch();
    const ObjectCode cubin = Program(kSource, SourceType::cxx, options).compile(CodeType::cubin);
    test::TempDir dir;
    const auto path = dir.path() / "original.cubin";
    test::write_file(path, std::string(cubin.code()));

    std::map<std::string, unsigned> outcomes;
    std::vector<unsigned> crashed;
    unsigned next = 0;
    while (next < kMutants) {
        // A driver that hangs on a mutant is stopped (coreutils' timeout) and counted as such.
        const auto result = test::run_process({"/usr/bin/timeout", "-s", "KILL", "120",
                                               test::helper_path("mutated_cubin_loads").string(),
                                               path.string(), std::to_string(next),
                                               std::to_string(kMutants), "first"});
        // Outcomes reported before the child ended; a "start" without one is where it crashed.
        std::istringstream lines(result.out);
        std::string line;
        long started = -1;
        while (std::getline(lines, line)) {
            const auto space = line.find(' ');
            const unsigned index = static_cast<unsigned>(std::stoul(line.substr(0, space)));
            const std::string what = line.substr(space + 1);
            if (what == "start") {
                started = index;
                continue;
            }
            started = -1;
            ++outcomes[what.rfind("other-error", 0) == 0 ? "other-error" : what];
            if (what.rfind("other-error", 0) == 0) ADD_FAILURE() << "mutant " << index << ": " << what;
            next = index + 1;
        }
        if (result.exit_code == 0 && next >= kMutants) break;
        ASSERT_GE(started, 0) << "the helper ended (" << result.exit_code << ") outside a load: "
                              << result.err;
        crashed.push_back(static_cast<unsigned>(started));
        // timeout(1) exits 137 when it had to kill; a crash is -signal (killed) or 128+signal.
        const bool hung = result.exit_code == 137;
        ++outcomes[hung ? std::string("hung (killed after 120 s)")
                        : "crashed (status " + std::to_string(result.exit_code) + ")"];
        next = static_cast<unsigned>(started) + 1;
    }

    unsigned total = 0;
    std::printf("%u mutants of a %zu-byte %s cubin:\n", kMutants, cubin.size(), options.arch->c_str());
    for (const auto& [what, count] : outcomes) {
        std::printf("  %-40s %u\n", what.c_str(), count);
        total += count;
    }
    EXPECT_EQ(total, kMutants);
    std::string crashes;
    for (unsigned index : crashed) crashes += " " + std::to_string(index);
    EXPECT_TRUE(crashed.empty()) << crashed.size() << " mutants crashed or hung the loading process:" << crashes
                                 << " (test::mutated_elf(cubin, index) rebuilds each)";
    EXPECT_GT(outcomes["loaded"], 0u);
    EXPECT_GT(outcomes["refused"], 0u);
}

}  // namespace
