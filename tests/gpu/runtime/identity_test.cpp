// Handles and identity on a real GPU: the driver's linker chosen per Linker links PTX that runs
// right; the handles of ObjectCode, Kernel and Linker are the driver's; Kernel::from_handle tied
// to an ObjectCode keeps its library loaded; the runtime types key unordered containers and print.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/identity.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/program.hpp"
#include "kernel_sources.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/release.hpp"
#include "runtime/library_box.hpp"

#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace {

using namespace cudacore;
using test::saxpy_mismatches;
using namespace std::chrono_literals;

ObjectCode compile(const char* source, CodeType target, const std::vector<std::string>& names = {},
                   bool relocatable = false, const char* name = "identity_code") {
    ProgramOptions options;
    options.name = name;
    options.arch = Device(0).arch();
    if (relocatable) options.relocatable_device_code = true;
    return Program(source, SourceType::cxx, options).compile(target, names);
}

LinkerOptions driver_linker(const char* name) {
    LinkerOptions options;
    options.name = name;
    options.backend = LinkerBackend::driver;  // arch: the current device's
    return options;
}

// ---- the driver's linker, chosen per Linker -------------------------------------------------

TEST(DriverLinkerGpu, LinksPtxThatRunsWithTheRightValues) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    ObjectCode ptx = compile(test::kSaxpySource, CodeType::ptx);
    Linker linker({ptx}, driver_linker("driver_saxpy"));
    EXPECT_EQ(linker.backend(), "driver");
    EXPECT_EQ(linker.flags().front(), "CU_JIT_TARGET=" + Device(0).arch());
    ObjectCode cubin = linker.link(CodeType::cubin);
    EXPECT_EQ(cubin.code_type(), CodeType::cubin);
    EXPECT_EQ(cubin.name(), "driver_saxpy");
    // The link state is the driver's, kept after link().
    ASSERT_TRUE(std::holds_alternative<CUlinkState>(linker.handle()));
    EXPECT_NE(std::get<CUlinkState>(linker.handle()), nullptr);
    EXPECT_EQ(saxpy_mismatches(cubin.get_kernel("saxpy"), 100'000), 0u);
}

TEST(DriverLinkerGpu, LinksTwoRelocatablePtxUnits) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    constexpr const char* kUnitA = R"(
extern __device__ float scale_of(float x);
extern "C" __global__ void kernel_a(float* data) { data[threadIdx.x] = scale_of(data[threadIdx.x]); }
)";
    constexpr const char* kUnitB = R"(
__device__ float scale_of(float x) { return 3.0f * x + 1.0f; }
)";
    ObjectCode a = compile(kUnitA, CodeType::ptx, {}, true, "unit_a");
    ObjectCode b = compile(kUnitB, CodeType::ptx, {}, true, "unit_b");
    Linker linker({a, b}, driver_linker("driver_units"));
    ObjectCode cubin = linker.link();
    Stream stream = device.create_stream();
    std::vector<float> data(64);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
    Buffer buffer = device.allocate(data.size() * sizeof(float), stream);
    buffer.copy_from(data, stream);
    launch(stream, LaunchConfig{.grid = 1, .block = 64}, cubin.get_kernel("kernel_a"), buffer);
    std::vector<float> out(data.size());
    buffer.copy_to(out, stream);
    stream.sync();
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], 3.0f * data[i] + 1.0f) << i;
}

TEST(DriverLinkerGpu, BadPtxIsALinkErrorFromTheDriverWithItsLog) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    Linker linker({ObjectCode::from_ptx(".version 8.0\n.target sm_90\n.address_size 64\nnonsense",
                                        "bad_ptx")},
                  driver_linker("driver_bad"));
    try {
        linker.link();
        FAIL() << "no exception";
    } catch (const LinkError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("driver_bad"), std::string::npos) << what;
        // The driver compiles PTX when it is added (or, at the latest, when the link completes).
        EXPECT_TRUE(what.find("cuLinkAddData(ptx 'bad_ptx'") != std::string::npos ||
                    what.find("cuLinkComplete") != std::string::npos)
            << what;
        EXPECT_EQ(e.options().front(), "CU_JIT_TARGET=" + Device(0).arch());
    }
    EXPECT_TRUE(std::holds_alternative<CUlinkState>(linker.handle()));
}

// ---- handles --------------------------------------------------------------------------------

TEST(HandlesGpu, ObjectCodeAndKernelHandlesAreTheDrivers) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    ObjectCode code = compile(test::kTemplateSource, CodeType::cubin, {"scale<float>"});
    EXPECT_FALSE(code.handle().has_value()) << "handle() must not load";
    Kernel kernel = code.get_kernel("scale<float>");
    ASSERT_TRUE(code.handle().has_value());
    ObjectCode copy = code;
    EXPECT_EQ(copy.handle(), code.handle());

    const detail::DriverApi& api = detail::driver();
    const std::string lowered = code.symbol_map().at("scale<float>");
    CUkernel raw = nullptr;
    ASSERT_EQ(api.cuLibraryGetKernel(&raw, *code.handle(), lowered.c_str()), CUDA_SUCCESS);
    EXPECT_EQ(raw, kernel.handle());
    const char* name = nullptr;
    ASSERT_EQ(api.cuKernelGetName(&name, kernel.handle()), CUDA_SUCCESS);
    EXPECT_EQ(std::string(name), lowered);

    // Wrapped again through the ObjectCode: the same kernel, named by its name expression.
    Kernel wrapped = Kernel::from_handle(raw, code);
    EXPECT_EQ(wrapped, kernel);
    EXPECT_EQ(wrapped.name(), "scale<float>");
    EXPECT_EQ(wrapped.lowered_name(), lowered);
    EXPECT_EQ(wrapped.parameter_count(), 3u);
}

TEST(HandlesGpu, KernelFromHandleKeepsTheLibraryAfterEveryOtherHandleIsGone) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads_before = detail::library_unload_count();
    std::optional<Kernel> kernel;
    {
        ObjectCode code = compile(test::kSaxpySource, CodeType::cubin);
        code.load();
        CUkernel raw = nullptr;
        ASSERT_EQ(detail::driver().cuLibraryGetKernel(&raw, *code.handle(), "saxpy"), CUDA_SUCCESS);
        kernel = Kernel::from_handle(raw, code);
        EXPECT_EQ(kernel->handle(), raw);
    }  // the ObjectCode (and its cached kernels) are gone
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(detail::library_unload_count(), unloads_before) << "unloaded under a live Kernel";
    EXPECT_EQ(saxpy_mismatches(*kernel, 10'000), 0u);
    kernel.reset();
    EXPECT_TRUE(
        test::wait_until([&] { return detail::library_unload_count() > unloads_before; }, 10s));
}

TEST(HandlesGpu, KernelFromHandleRefusesAKernelOfAnotherLibrary) {
    CUDACORE_REQUIRE_GPU();
    Device(0).set_current();
    ObjectCode saxpy = compile(test::kSaxpySource, CodeType::cubin, {}, false, "saxpy_code");
    ObjectCode other = compile(test::kTemplateSource, CodeType::cubin, {"scale<int>"}, false,
                               "other_code");
    const CUkernel foreign = saxpy.get_kernel("saxpy").handle();
    try {
        Kernel::from_handle(foreign, other);
        FAIL() << "no exception";
    } catch (const InvalidArgumentError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("not one of the kernels"), std::string::npos) << what;
        EXPECT_NE(what.find("other_code"), std::string::npos) << what;
    }
}

// ---- hashing and printing -------------------------------------------------------------------

TEST(IdentityGpu, RuntimeTypesKeyUnorderedContainers) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    std::unordered_set<Device> devices = {device, Device(0), Device::current()};
    EXPECT_EQ(devices.size(), 1u);

    Context context = device.context();
    std::unordered_set<Context> contexts = {context, device.context()};
    EXPECT_EQ(contexts.size(), 1u);

    Stream s1 = device.create_stream();
    Stream s2 = device.create_stream();
    std::unordered_set<Stream> streams = {s1, s2, s1};
    EXPECT_EQ(streams.size(), 2u);
    EXPECT_TRUE(streams.contains(Stream::from_handle(s1.handle())));
    EXPECT_TRUE(contexts.contains(s1.context()));

    Event e1 = s1.record();
    Event e2 = device.create_event();
    std::unordered_map<Event, int> events = {{e1, 1}, {e2, 2}};
    EXPECT_EQ(events.at(Event(e1)), 1);
    EXPECT_EQ(events.size(), 2u);

    Buffer b1 = device.allocate(256, s1);
    Buffer b2 = device.allocate(256, s1);
    std::unordered_set<Buffer> buffers = {b1, b2, Buffer(b1)};
    EXPECT_EQ(buffers.size(), 2u);
    EXPECT_TRUE(buffers.contains(b2));

    ObjectCode code = compile(test::kSaxpySource, CodeType::cubin);
    Kernel k = code.get_kernel("saxpy");
    std::unordered_set<Kernel> kernels = {k, code.get_kernel("saxpy"), Kernel::from_handle(k.handle())};
    EXPECT_EQ(kernels.size(), 1u);
    s1.sync();
}

TEST(IdentityGpu, RuntimeTypesPrintReadably) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    EXPECT_EQ(to_string(device), "device 0");
    const std::string context = to_string(device.context());
    EXPECT_EQ(context.rfind("context 0x", 0), 0u) << context;
    EXPECT_NE(context.find(" of device 0"), std::string::npos) << context;
    Stream stream = device.create_stream();
    const std::string s = to_string(stream);
    EXPECT_EQ(s.rfind("stream 0x", 0), 0u) << s;
    EXPECT_NE(s.find(" on device 0"), std::string::npos) << s;
    const std::string e = to_string(stream.record());
    EXPECT_EQ(e.rfind("event 0x", 0), 0u) << e;
    Buffer buffer = device.allocate(4096, stream);
    EXPECT_EQ(to_string(buffer), buffer.description());
    EXPECT_NE(to_string(buffer).find("4096 bytes"), std::string::npos);
    ObjectCode code = compile(test::kSaxpySource, CodeType::cubin);
    Kernel kernel = code.get_kernel("saxpy");
    std::ostringstream out;
    out << device << " | " << kernel;
    EXPECT_EQ(out.str(), "device 0 | " + kernel.description());
    stream.sync();
}

}  // namespace
