// Lazy loading on a real GPU: one load for many threads, cached lookups, names and name
// expressions, PTX / LTO-IR / wrong-arch code, and the library outliving its handles while a
// kernel launched from it still runs.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "kernel_sources.hpp"
#include "runtime/release/release.hpp"
#include "runtime/library_box.hpp"
#include "loader/driver_api.hpp"
#include "support/box_access.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <latch>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using test::saxpy_mismatches;
using namespace std::chrono_literals;

ObjectCode compile(const char* source, CodeType target, const std::string& arch,
                   const std::vector<std::string>& names = {}, const char* name = "test_code") {
    ProgramOptions options;
    options.name = name;
    options.arch = arch;
    return Program(source, SourceType::cxx, options).compile(target, names);
}

std::string device_arch() { return Device(0).arch(); }

TEST(ObjectCodeLoadingGpu, SixtyFourThreadsCauseExactlyOneLoad) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode code = compile(test::kSaxpySource, CodeType::cubin, device_arch());
    EXPECT_FALSE(code.is_loaded());
    const auto loads_before = detail::library_load_count();

    constexpr int kThreads = 64;
    std::latch start(kThreads);
    std::vector<CUkernel> handles(kThreads);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();  // all ask at the same moment
            try {
                handles[t] = code.get_kernel("saxpy").handle();
            } catch (...) {
                ++failures;
            }
        });
    }
    for (auto& thread : threads) thread.join();

    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(detail::library_load_count() - loads_before, 1u);
    EXPECT_TRUE(code.is_loaded());
    for (CUkernel handle : handles) EXPECT_EQ(handle, handles[0]);
}

TEST(ObjectCodeLoadingGpu, SecondLookupIsCachedAndCopiesShareTheLibrary) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode code = compile(test::kSaxpySource, CodeType::cubin, device_arch());
    Kernel first = code.get_kernel("saxpy");
    ObjectCode copy = code;
    const auto loads = detail::library_load_count();
    Kernel second = copy.get_kernel("saxpy");
    EXPECT_EQ(detail::box_of(first), detail::box_of(second));  // the cached Kernel itself, no new driver lookup
    EXPECT_EQ(detail::library_load_count(), loads);
    EXPECT_TRUE(copy.is_loaded());
    code.load();  // already loaded: nothing happens
    EXPECT_EQ(detail::library_load_count(), loads);
}

TEST(ObjectCodeLoadingGpu, SaxpyOnAMillionRandomFloatsMatchesTheCpu) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode code = compile(test::kSaxpySource, CodeType::cubin, device_arch());
    EXPECT_EQ(saxpy_mismatches(code.get_kernel("saxpy"), 1 << 20), 0u);
}

TEST(ObjectCodeLoadingGpu, TemplateKernelByNameExpression) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode code = compile(test::kTemplateSource, CodeType::cubin, device_arch(),
                              {"scale<float>", "scale<double>"});
    Kernel as_float = code.get_kernel("scale<float>");
    Kernel as_double = code.get_kernel("scale<double>");
    EXPECT_NE(as_float.handle(), as_double.handle());
    EXPECT_EQ(as_double.lowered_name(), code.symbol_map().at("scale<double>"));
    EXPECT_EQ(as_double.name(), "scale<double>");
    // The lowered name finds the same kernel.
    EXPECT_EQ(code.get_kernel(as_double.lowered_name()).handle(), as_double.handle());

    Device device(0);
    Stream stream = device.create_stream();
    std::vector<double> data(1000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = double(i) * 0.5;
    Buffer buffer = device.allocate(data.size() * sizeof(double), stream);
    buffer.copy_from(data, stream);
    launch(stream, LaunchConfig{.grid = 4, .block = 256}, as_double, buffer, 3.0, data.size());
    std::vector<double> out(data.size());
    buffer.copy_to(out, stream);
    stream.sync();
    for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(out[i], data[i] * 3.0) << i;
}

TEST(ObjectCodeLoadingGpu, UnknownNameListsTheKernelsTheCodeHolds) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode code = compile(test::kTemplateSource, CodeType::cubin, device_arch(),
                              {"scale<float>"}, "templates");
    try {
        code.get_kernel("scale<int>");
        FAIL() << "found a kernel that was never instantiated";
    } catch (const InvalidArgumentError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("'scale<int>'"), std::string::npos) << message;
        EXPECT_NE(message.find("scale<float> = " + code.symbol_map().at("scale<float>")),
                  std::string::npos)
            << message;
        EXPECT_NE(message.find("cubin 'templates'"), std::string::npos) << message;
    }
}

TEST(ObjectCodeLoadingGpu, CubinForAnotherArchFailsAtFirstUseAndAgainTheSame) {
    CUDACORE_REQUIRE_GPU();
    // SASS does not run across major versions: pick an arch of another major than the device's.
    const std::string device = device_arch();
    const std::string other = Device(0).compute_capability().major >= 12 ? "sm_90" : "sm_120";
    ObjectCode code = compile(test::kSaxpySource, CodeType::cubin, other, {}, "elsewhere");
    std::string first, second;
    try { code.get_kernel("saxpy"); } catch (const DriverError& e) { first = e.what(); }
    try { code.get_kernel("saxpy"); } catch (const DriverError& e) { second = e.what(); }
    ASSERT_FALSE(first.empty()) << "code for " << other << " loaded on " << device;
    EXPECT_EQ(first, second);
    EXPECT_NE(first.find("kernel 'saxpy'"), std::string::npos) << first;
    EXPECT_NE(first.find("cubin 'elsewhere' (" + std::to_string(code.size()) + " bytes"),
              std::string::npos)
        << first;
    EXPECT_NE(first.find("(" + device + ")"), std::string::npos) << first;
    EXPECT_NE(first.find("built for " + other), std::string::npos) << first;
    EXPECT_FALSE(code.is_loaded());
    EXPECT_THROW(code.load(), DriverError);
}

TEST(ObjectCodeLoadingGpu, PtxIsCompiledByTheDriverAndRuns) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode code = compile(test::kSaxpySource, CodeType::ptx, device_arch());
    ASSERT_EQ(code.code_type(), CodeType::ptx);
    EXPECT_EQ(saxpy_mismatches(code.get_kernel("saxpy"), 4096), 0u);
}

TEST(ObjectCodeLoadingGpu, LtoIrIsRefusedThenRunsOnceLinked) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode lto = compile(test::kSaxpySource, CodeType::ltoir, device_arch());
    try {
        lto.get_kernel("saxpy");
        FAIL() << "LTO-IR loaded";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("link it first"), std::string::npos) << e.what();
    }
    LinkerOptions options;
    options.arch = device_arch();
    options.link_time_optimization = true;
    ObjectCode linked = Linker({lto}, options).link(CodeType::cubin);
    EXPECT_EQ(saxpy_mismatches(linked.get_kernel("saxpy"), 4096), 0u);
}

// Pinned host memory the device reads and writes directly (unified addressing).
struct HostFlag {
    int* pointer = nullptr;
    HostFlag() {
        void* memory = nullptr;
        detail::check(detail::driver().cuMemHostAlloc(&memory, 2 * sizeof(int),
                                                      CU_MEMHOSTALLOC_PORTABLE |
                                                          CU_MEMHOSTALLOC_DEVICEMAP),
                      "cuMemHostAlloc");
        pointer = static_cast<int*>(memory);
        pointer[0] = 0;
        pointer[1] = 0;
    }
    ~HostFlag() { detail::driver().cuMemFreeHost(pointer); }
    int* flag() const { return pointer; }
    int* result() const { return pointer + 1; }
    void release() const { std::atomic_ref<int>(pointer[0]).store(1); }
    int read_result() const { return std::atomic_ref<int>(pointer[1]).load(); }
};

TEST(ObjectCodeLoadingGpu, LibraryStaysLoadedWhileALaunchedKernelRunsAfterHandlesAreDropped) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    HostFlag host;
    const long long timeout_cycles = 20'000'000'000LL;  // ~10 s: the test never hangs forever
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads_before = detail::library_unload_count();
    {
        ObjectCode code = compile(test::kSpinSource, CodeType::cubin, device.arch());
        Kernel kernel = code.get_kernel("wait_for_flag");
        launch(stream, LaunchConfig{}, kernel, host.flag(), host.result(), timeout_cycles);
    }  // every handle to the code is gone; the kernel still spins
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(stream.is_done());
    EXPECT_EQ(detail::library_unload_count(), unloads_before) << "unloaded under a running kernel";

    host.release();
    stream.sync();
    EXPECT_EQ(host.read_result(), 42);
    // Now that the kernel is done, the library goes.
    EXPECT_TRUE(
        test::wait_until([&] { return detail::library_unload_count() > unloads_before; }, 10s));
}

TEST(ObjectCodeLoadingGpu, KernelKeepsItsLibraryAfterTheObjectCodeIsDropped) {
    CUDACORE_REQUIRE_GPU();
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads_before = detail::library_unload_count();
    std::optional<Kernel> kernel;
    {
        ObjectCode code = compile(test::kSaxpySource, CodeType::cubin, device_arch());
        kernel = code.get_kernel("saxpy");
    }
    EXPECT_EQ(detail::library_unload_count(), unloads_before);
    EXPECT_EQ(saxpy_mismatches(*kernel, 10000), 0u);
    kernel.reset();
    EXPECT_TRUE(
        test::wait_until([&] { return detail::library_unload_count() > unloads_before; }, 10s));
}

TEST(ObjectCodeLoadingGpu, UnlaunchedLibraryIsUnloadedAtOnce) {
    CUDACORE_REQUIRE_GPU();
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads_before = detail::library_unload_count();
    {
        ObjectCode code = compile(test::kSaxpySource, CodeType::cubin, device_arch());
        code.load();
        Kernel kernel = code.get_kernel("saxpy");
        EXPECT_EQ(kernel.parameter_count(), 4u);
    }
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
}

TEST(ObjectCodeLoadingGpu, ArgumentsAreCheckedAtFirstLaunchWithParametersReadOnFirstUse) {
    CUDACORE_REQUIRE_GPU();
    // Built for this very device: loaded without forcing it into the context, parameters not
    // read by get_kernel. The first launch still checks the arguments against them.
    ObjectCode code = compile(test::kSaxpySource, CodeType::cubin, device_arch(), {}, "lazy");
    Kernel kernel = code.get_kernel("saxpy");
    Stream stream = Device(0).create_stream();
    try {
        launch(stream, LaunchConfig{.grid = 1, .block = 32}, kernel, 1.0f);
        FAIL() << "a launch with 1 argument of 4 was accepted";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("it takes 4 argument(s), 1 given"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(kernel.parameter_count(), 4u);
    EXPECT_EQ(saxpy_mismatches(kernel, 4096), 0u);
}

TEST(ObjectCodeLoadingGpu, CodeCompiledWithAPrecompiledHeaderRuns) {
    CUDACORE_REQUIRE_GPU();
    ProgramOptions options;
    options.name = "pch_saxpy";
    options.arch = device_arch();
    options.define_macro = {{"PCH_GPU_TEST", std::nullopt}};
    Program first(test::kSaxpySource, SourceType::cxx, options);
    first.compile(CodeType::cubin);
    Program second(std::string(test::kSaxpySource) + "\n// again\n", SourceType::cxx, options);
    ObjectCode code = second.compile(CodeType::cubin);
    EXPECT_EQ(second.pch_status().outcome, PchOutcome::used) << second.pch_status().reason;
    EXPECT_EQ(saxpy_mismatches(code.get_kernel("saxpy"), 1 << 16), 0u);
}

TEST(ObjectCodeLoadingGpu, CompileManyResultsRunForBothStrategies) {
    CUDACORE_REQUIRE_GPU();
    for (CompileStrategy strategy : {CompileStrategy::threads, CompileStrategy::processes}) {
        ProgramOptions options;
        options.name = "many_saxpy";
        options.arch = device_arch();
        CompileOptions many;
        many.strategy = strategy;
        many.workers = 2;
        const auto codes =
            compile_many(test::kTemplateSource, options, CodeType::cubin, {{"scale<float>"}, {"scale<double>"}}, many);
        ASSERT_EQ(codes.size(), 2u);
        EXPECT_EQ(codes[0].get_kernel("scale<float>").parameter_count(), 3u);
        EXPECT_EQ(codes[1].get_kernel("scale<double>").parameter_count(), 3u);
        std::vector<Program> programs(2, Program(test::kSaxpySource, SourceType::cxx, options));
        for (const ObjectCode& code : compile_many(programs, CodeType::cubin, {}, many))
            EXPECT_EQ(saxpy_mismatches(code.get_kernel("saxpy"), 4096), 0u);
    }
}

}  // namespace
