// Module globals and from_handle on a real GPU: a __constant__ array written from the host is
// what a kernel then sees; __device__ and __managed__ variables read and written; unknown names
// list the globals; views keep the library loaded; ObjectCode, Event, Context and Device wrap
// handles the caller owns.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/release.hpp"
#include "runtime/library_box.hpp"

#include <array>
#include <optional>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
__constant__ float coefficients[4];
__device__ int counter;
__managed__ int shared_flag;
namespace tuning { __device__ float scale; }

extern "C" __global__ void apply(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * coefficients[i % 4];
    if (i == 0) { atomicAdd(&counter, 1); shared_flag = 7; }
}
)";

ObjectCode compile_globals() {
    ProgramOptions options;
    options.name = "globals.cu";
    options.arch = Device(0).arch();
    return Program(kSource, SourceType::cxx, options)
        .compile(CodeType::cubin, {"&tuning::scale"});
}

class GlobalsGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        device_->set_current();
        stream_.emplace(device_->create_stream());
    }
    const Stream& stream() const { return *stream_; }
    std::optional<Device> device_;
    std::optional<Stream> stream_;
};

TEST_F(GlobalsGpu, ConstantArrayWrittenFromTheHostIsWhatTheKernelSees) {
    const ObjectCode code = compile_globals();
    using Coefficients = std::array<float, 4>;
    const Coefficients coefficients{1.0f, 2.0f, 3.0f, 4.0f};
    code.write_global("coefficients", coefficients, stream());
    EXPECT_EQ(code.read_global<Coefficients>("coefficients", stream()), coefficients);

    constexpr int n = 1000;
    std::vector<float> input(n);
    for (int i = 0; i < n; ++i) input[i] = static_cast<float>(i);
    Buffer in = device_->allocate(n * sizeof(float), stream());
    Buffer out = device_->allocate(n * sizeof(float), stream());
    in.copy_from(input, stream());
    code.write_global("counter", 0, stream());
    launch(stream(), LaunchConfig{.grid = (n + 255) / 256, .block = 256}, code.get_kernel("apply"),
           in, out, n);
    std::vector<float> result(n);
    out.copy_to(result, stream());
    stream().sync();
    for (int i = 0; i < n; ++i) ASSERT_EQ(result[i], input[i] * coefficients[i % 4]) << i;
    EXPECT_EQ(code.read_global<int>("counter", stream()), 1);

    // A view is a non-owning Buffer of the variable's size; the same view comes back.
    const Buffer view = code.get_global("coefficients");
    EXPECT_EQ(view.size(), sizeof coefficients);
    EXPECT_FALSE(view.owns_memory());
    EXPECT_TRUE(view.is_device_accessible());
    EXPECT_EQ(code.get_global("coefficients"), view);
}

TEST_F(GlobalsGpu, SizeMismatchUnknownNamesAndNameExpressions) {
    const ObjectCode code = compile_globals();
    try {
        code.write_global("coefficients", 1.0, stream());  // 8 bytes, the array is 16
        FAIL() << "no error for a size mismatch";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("16 bytes"), std::string::npos) << e.what();
    }
    try {
        code.get_global("no_such_global");
        FAIL() << "no error for an unknown global";
    } catch (const InvalidArgumentError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("coefficients"), std::string::npos) << message;
        EXPECT_NE(message.find("counter"), std::string::npos) << message;
    }
    // A namespaced variable by its name expression (lowered: _ZN6tuning5scaleE), with or
    // without the '&'.
    code.write_global("tuning::scale", 2.5f, stream());
    EXPECT_EQ(code.read_global<float>("&tuning::scale", stream()), 2.5f);
}

// Without a name expression, a namespaced variable is found by its C++ name (the cubin's global
// that demangles to it): the variable its lowered name names; an unknown C++ name still lists
// the globals.
TEST_F(GlobalsGpu, NamespacedVariableByItsCxxNameWithoutANameExpression) {
    ProgramOptions options;
    options.name = "globals_unnamed.cu";
    options.arch = Device(0).arch();
    const ObjectCode code = Program(kSource, SourceType::cxx, options).compile(CodeType::cubin);
    ASSERT_EQ(code.symbol_map().count("&tuning::scale"), 0u);
    code.write_global("tuning::scale", 4.25f, stream());
    EXPECT_EQ(code.read_global<float>("tuning::scale", stream()), 4.25f);
    EXPECT_EQ(code.read_global<float>("_ZN6tuning5scaleE", stream()), 4.25f);  // the same variable
    EXPECT_EQ(code.get_global("tuning::scale").handle(), code.get_global("_ZN6tuning5scaleE").handle());
    try {
        code.get_global("tuning::missing");
        ADD_FAILURE() << "found a global that does not exist";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("_ZN6tuning5scaleE"), std::string::npos) << e.what();
    }
}

TEST_F(GlobalsGpu, ManagedVariableIsHostAccessible) {
    const ObjectCode code = compile_globals();
    const Buffer flag = code.get_managed("shared_flag");
    EXPECT_EQ(flag.size(), sizeof(int));
    EXPECT_TRUE(flag.is_host_accessible());
    Buffer in = device_->allocate(sizeof(float), stream());
    Buffer out = device_->allocate(sizeof(float), stream());
    in.fill_byte(0, stream());
    launch(stream(), LaunchConfig{.grid = 1, .block = 1}, code.get_kernel("apply"), in, out, 1);
    stream().sync();
    EXPECT_EQ(flag.span<int>()[0], 7);
}

TEST_F(GlobalsGpu, ViewKeepsTheLibraryLoaded) {
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads = detail::library_unload_count();
    std::optional<Buffer> view;
    {
        const ObjectCode code = compile_globals();
        view = code.get_global("counter");
    }
    EXPECT_EQ(detail::library_unload_count(), unloads);  // the view still holds it
    int value = 41;
    view->copy_from(&value, sizeof value, stream());
    view->copy_to(&value, sizeof value, stream());
    stream().sync();
    EXPECT_EQ(value, 41);
    view.reset();
    EXPECT_EQ(detail::library_unload_count(), unloads + 1);
}

TEST_F(GlobalsGpu, ObjectCodeFromAUserLoadedLibrary) {
    const ObjectCode compiled = compile_globals();
    const auto& api = detail::driver();
    CUlibrary library = nullptr;
    ASSERT_EQ(api.cuLibraryLoadData(&library, compiled.code().data(), nullptr, nullptr, 0, nullptr,
                                    nullptr, 0),
              CUDA_SUCCESS);
    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads = detail::library_unload_count();
    {
        // Not owned: wrapping, using and dropping it leaves it loaded.
        const ObjectCode wrapped = ObjectCode::from_handle(library, {.name = "user library"});
        EXPECT_TRUE(wrapped.is_loaded());
        EXPECT_EQ(wrapped.library_handle(), library);
        EXPECT_TRUE(wrapped.code().empty());
        EXPECT_THROW(wrapped.serialize(), InvalidArgumentError);
        wrapped.write_global("counter", 5, stream());
        EXPECT_EQ(wrapped.read_global<int>("counter", stream()), 5);
        EXPECT_EQ(wrapped.get_kernel("apply").lowered_name(), "apply");
    }
    EXPECT_EQ(detail::library_unload_count(), unloads);
    CUkernel kernel = nullptr;
    EXPECT_EQ(api.cuLibraryGetKernel(&kernel, library, "apply"), CUDA_SUCCESS);  // still loaded
    {
        // Owned: unloaded when the last user goes.
        const ObjectCode owner = ObjectCode::from_handle(library, {.take_ownership = true});
        EXPECT_EQ(owner.read_global<int>("counter", stream()), 5);
    }
    EXPECT_EQ(detail::library_unload_count(), unloads + 1);
}

TEST_F(GlobalsGpu, EventContextAndDeviceFromHandles) {
    const auto& api = detail::driver();
    // Device.
    EXPECT_EQ(Device::from_handle(device_->handle()), *device_);
    // Context: the primary context is recognised and retained.
    const Context context = Context::from_handle(device_->context().handle());
    EXPECT_EQ(context, device_->context());
    EXPECT_EQ(context.device(), *device_);
    EXPECT_THROW(Context::from_handle(nullptr), InvalidArgumentError);
    // Event: not owned (the caller destroys it after), then owned.
    CUevent raw = nullptr;
    ASSERT_EQ(api.cuEventCreate(&raw, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    {
        const Event wrapped = Event::from_handle(raw, context, {.options = {.timing_enabled = true}});
        EXPECT_EQ(wrapped.handle(), raw);
        const Event start = stream().record(EventOptions{.timing_enabled = true});
        stream().record(wrapped);
        wrapped.sync();
        EXPECT_GE((wrapped - start).count(), 0.0);
    }
    EXPECT_EQ(api.cuEventQuery(raw), CUDA_SUCCESS);  // still valid: not destroyed by the wrapper
    {
        const Event owner = Event::from_handle(raw, context, {.take_ownership = true});
        owner.sync();
    }
    // `raw` was destroyed by the owner: not touched again.
}

}  // namespace
