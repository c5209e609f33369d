// checked_load / probe_load without a GPU: malformed code is refused before any probe runs; how
// the probe ends (clean error, crash, time-out) becomes the verdict, cached by the code's hash.
// The real probe runs against a driver path that does not exist; stand-in probes (a helper
// program) crash or hang on demand.
#include "crafted_code.hpp"
#include "test_support.hpp"

#include "cudacore/checked_load.hpp"
#include "cudacore/errors.hpp"
#include "runtime/library_box.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace {

using namespace cudacore;

class CheckedLoad : public ::testing::Test {
protected:
    void SetUp() override {
        // No driver for this process or its probes, whatever the machine has.
        setenv("CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda-for-checked-load.so.1", 1);
        setenv("FAKE_LOAD_PROBE_LOG", (dir_.path() / "probe.log").c_str(), 1);
        fake_.probe_program = test::helper_path("fake_load_probe");
    }
    // Code that passes validation, different for each `salt` (verdicts are cached by hash).
    static ObjectCode sound_code(int salt) {
        return ObjectCode::from_cubin(test::minimal_cubin() + std::string(salt, '\0'),
                                      "sound_" + std::to_string(salt));
    }
    std::size_t probe_runs() const {
        const auto log = dir_.path() / "probe.log";
        if (!std::filesystem::exists(log)) return 0;
        const std::string text = test::read_file(log);
        return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    }
    test::TempDir dir_;
    LoadProbeOptions fake_;
};

TEST_F(CheckedLoad, MalformedCodeIsRefusedWithoutAProbe) {
    setenv("FAKE_LOAD_PROBE_MODE", "ok", 1);
    const auto code = ObjectCode::from_cubin(test::minimal_cubin().substr(0, 100), "trunc.cubin");
    try {
        checked_load(code, fake_);
        FAIL() << "a truncated cubin was loaded";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("malformed cubin"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("trunc.cubin"), std::string::npos) << e.what();
    }
    EXPECT_EQ(probe_runs(), 0u);
}

TEST_F(CheckedLoad, RealProbeReportsTheDriversAbsenceAndTheVerdictIsCached) {
    const ObjectCode code = sound_code(1);
    const LoadProbeVerdict first = probe_load(code);
    EXPECT_FALSE(first.loadable);
    EXPECT_FALSE(first.crashed);  // a clean error: loading here is safe and says the same
    EXPECT_NE(first.detail.find("libcuda-for-checked-load"), std::string::npos) << first.detail;
    EXPECT_FALSE(first.cached);
    const LoadProbeVerdict again = probe_load(ObjectCode::from_cubin(std::string(code.code())));
    EXPECT_TRUE(again.cached);
    EXPECT_EQ(again.detail, first.detail);
    EXPECT_THROW(checked_load(code), NoDriverError);
}

TEST_F(CheckedLoad, CrashingProbeMeansTheCodeIsNotLoadedHere) {
    setenv("FAKE_LOAD_PROBE_MODE", "crash", 1);
    const ObjectCode code = sound_code(2);
    const LoadProbeVerdict verdict = probe_load(code, fake_);
    EXPECT_TRUE(verdict.crashed);
    EXPECT_FALSE(verdict.loadable);
    EXPECT_NE(verdict.detail.find("killed by signal 11"), std::string::npos) << verdict.detail;
    try {
        checked_load(code, fake_);
        FAIL() << "code that crashed the probe was loaded";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("cubin 'sound_2'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not safe to load"), std::string::npos) << e.what();
    }
    // No load was tried here: the loading state was never even made.
    const auto* lazy = cudacore::detail::lazy_library_if_made(*cudacore::detail::ObjectCodeAccess::state(code));
    EXPECT_TRUE(lazy == nullptr || !lazy->attempted.load());
    EXPECT_EQ(probe_runs(), 1u);  // the second verdict came from the cache
}

TEST_F(CheckedLoad, HangingProbeIsKilledAtTheTimeout) {
    setenv("FAKE_LOAD_PROBE_MODE", "hang", 1);
    LoadProbeOptions options = fake_;
    options.timeout = std::chrono::milliseconds(300);
    const auto start = std::chrono::steady_clock::now();
    const LoadProbeVerdict verdict = probe_load(sound_code(3), options);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    EXPECT_TRUE(verdict.crashed);
    EXPECT_EQ(verdict.detail, "timed out after 300 ms");
}

TEST_F(CheckedLoad, CleanProbeErrorIsReportedAndProbesPassTheCodeAndDevice) {
    setenv("FAKE_LOAD_PROBE_MODE", "error", 1);
    const LoadProbeVerdict verdict = probe_load(sound_code(4), fake_);
    EXPECT_FALSE(verdict.crashed);
    EXPECT_EQ(verdict.detail, "cuLibraryLoadData failed: CUDA_ERROR_INVALID_IMAGE");
    const std::string log = test::read_file(dir_.path() / "probe.log");
    EXPECT_EQ(log.rfind("cubin ", 0), 0u) << log;
    EXPECT_NE(log.find(" 0\n"), std::string::npos) << log;  // device 0 (no driver here)
}

TEST_F(CheckedLoad, MissingProbeProgramSaysWhatWasTried) {
    LoadProbeOptions options;
    options.probe_program = dir_.path() / "no-such-probe";
    try {
        probe_load(sound_code(5), options);
        FAIL() << "a missing probe ran";
    } catch (const LoaderError& e) {
        EXPECT_NE(std::string(e.what()).find("no-such-probe"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("CUDACORE_LOAD_PROBE"), std::string::npos) << e.what();
    }
}

}  // namespace
