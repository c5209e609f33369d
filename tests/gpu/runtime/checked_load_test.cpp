// checked_load on a real GPU: sound code is probed in cudacore-load-probe, then loaded here;
// code for another arch fails cleanly in the probe and then here with its usual DriverError;
// mutated cubins handed to checked_load in this process never crash it.
#include "crafted_code.hpp"
#include "kernel_sources.hpp"
#include "test_support.hpp"

#include "cudacore/checked_load.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"

#include <chrono>
#include <cstdio>
#include <map>

namespace {

using namespace cudacore;

ObjectCode compile(CodeType target, const std::string& arch, const char* name) {
    ProgramOptions options;
    options.name = name;
    options.arch = arch;
    return Program(test::kSaxpySource, SourceType::cxx, options).compile(target);
}

TEST(CheckedLoadGpu, SoundCodeIsProbedThenLoadedAndTheVerdictCached) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    for (const CodeType type : {CodeType::cubin, CodeType::ptx}) {
        const ObjectCode code = compile(type, Device(0).arch(), "checked");
        const auto start = std::chrono::steady_clock::now();
        const LoadProbeVerdict verdict = probe_load(code);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        std::printf("first probe of %s: %.1f ms\n", std::string(to_string(type)).c_str(), ms);
        EXPECT_TRUE(verdict.loadable) << verdict.detail;
        EXPECT_FALSE(verdict.crashed);
        EXPECT_FALSE(verdict.cached);
        checked_load(code);
        EXPECT_TRUE(code.is_loaded());
        EXPECT_NO_THROW(code.get_kernel("saxpy"));
        EXPECT_TRUE(probe_load(code).cached);
    }
}

TEST(CheckedLoadGpu, CodeForAnotherArchFailsCleanlyInTheProbeAndHere) {
    CUDACORE_REQUIRE_GPU();
    const std::string other = Device(0).compute_capability().major >= 12 ? "sm_90" : "sm_120";
    const ObjectCode code = compile(CodeType::cubin, other, "elsewhere");
    const LoadProbeVerdict verdict = probe_load(code);
    EXPECT_FALSE(verdict.loadable);
    EXPECT_FALSE(verdict.crashed) << verdict.detail;
    EXPECT_NE(verdict.detail.find("CUDA_ERROR"), std::string::npos) << verdict.detail;
    EXPECT_THROW(checked_load(code), DriverError);
}

// The first 100 mutants of the GPU mutation test, through checked_load in this process: each
// loads, is refused by validation, fails with a driver error, or is declared unsafe by the
// probe; this process survives all of them.
TEST(CheckedLoadGpu, MutatedCubinsNeverCrashThisProcess) {
    CUDACORE_REQUIRE_GPU();
    const std::string original(compile(CodeType::cubin, Device(0).arch(), "original").code());
    std::map<std::string, int> outcomes;
    for (unsigned index = 0; index < 100; ++index) {
        const auto code = ObjectCode::from_cubin(test::mutated_elf(original, index), "mutant");
        try {
            checked_load(code);
            code.get_kernel("saxpy");
            ++outcomes["loaded"];
        } catch (const InvalidArgumentError& e) {
            const std::string what = e.what();
            ++outcomes[what.find("not safe to load") != std::string::npos ? "unsafe (probe crashed)"
                       : what.find("malformed") != std::string::npos     ? "refused by validation"
                                                                         : "no such kernel"];
        } catch (const DriverError& e) {
            ++outcomes["driver error " + e.status_name()];
        }
    }
    for (const auto& [what, count] : outcomes) std::printf("  %-40s %d\n", what.c_str(), count);
    EXPECT_GT(outcomes["loaded"], 0);
}

}  // namespace
