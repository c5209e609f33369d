// A loaded library on a real GPU: loading PTX with JIT options and reading the JIT's logs
// (load_options.hpp), and the kernels, device and context of a loaded library as the driver
// lists them (loaded_library.hpp), for cubin, PTX and a library handed in with from_handle.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/context.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/load_options.hpp"
#include "cudacore/loaded_library.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "loader/driver_api.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
template <typename T> __global__ void scale(T* data, T factor, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
extern "C" __global__ void busy(float* out, const float* in, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in[i], b = a * 2, c = a * 3, d = a * 5, e = a * 7, f = a * 11, g = a * 13;
    for (int k = 0; k < 64; ++k) {
        a = a * b + c; b = b * c + d; c = c * d + e; d = d * e + f; e = e * f + g; f = f * g + a;
        g = g * a + b;
    }
    out[i] = a + b + c + d + e + f + g;
}
)";

const std::vector<std::string> kNames{"scale<float>", "scale<double>"};

ObjectCode compile(CodeType target) {
    ProgramOptions options;
    options.name = "loaded_library_test";
    options.arch = Device(0).arch();
    return Program(kSource, SourceType::cxx, options).compile(target, kNames);
}

bool has(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(LoadOptionsGpu, PtxLoadsWithJitOptionsAndReturnsItsLogs) {
    CUDACORE_REQUIRE_GPU();
    // PTX no process loaded before: one the driver found in its JIT cache (an earlier run of this
    // test) is not compiled, and reports no resource usage.
    const ObjectCode compiled = compile(CodeType::ptx);
    const std::string unique = std::string(compiled.code()) + "\n// run " + std::to_string(::getpid()) + "-" +
                               std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n";
    const ObjectCode code = ObjectCode::from_ptx(unique, "unique", compiled.symbol_map());
    const LoadReport report =
        load_with_options(code, {.optimization_level = 3, .max_registers = 32, .verbose_log = true});
    EXPECT_TRUE(code.is_loaded());
    EXPECT_NE(report.info_log.find("registers"), std::string::npos) << report.info_log;
    EXPECT_LE(code.get_kernel("busy").num_registers(Device(0)), 32);
    // The options applied to that one load: a second is refused, saying so.
    try {
        load_with_options(code, {});
        ADD_FAILURE() << "a second load_with_options was not refused";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("is loaded already"), std::string::npos) << e.what();
    }
    // The same bytes, made again, load anew with other options.
    const ObjectCode again = ObjectCode::from_ptx(std::string(code.code()), "again", code.symbol_map());
    const LoadReport cached = load_with_options(again, {.max_registers = 64, .cache_mode = CU_JIT_CACHE_OPTION_CA});
    EXPECT_TRUE(cached.error_log.empty()) << cached.error_log;
    EXPECT_LE(again.get_kernel("busy").num_registers(Device(0)), 64);
}

TEST(LoadOptionsGpu, PtxThatDoesNotCompileCarriesTheErrorLog) {
    CUDACORE_REQUIRE_GPU();
    const ObjectCode broken = ObjectCode::from_ptx(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus_instruction; }\n",
        "broken");
    try {
        load_with_options(broken, {.generate_line_info = true});
        ADD_FAILURE() << "broken PTX loaded";
    } catch (const DriverError& e) {
        EXPECT_NE(std::string(e.what()).find("JIT log"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("bogus_instruction"), std::string::npos) << e.what();
    }
    EXPECT_THROW(broken.get_kernel("k"), DriverError) << "the failure is kept";
}

TEST(LoadedLibraryGpu, KernelsAreListedForCubinPtxAndAHandedInLibrary) {
    CUDACORE_REQUIRE_GPU();
    for (CodeType type : {CodeType::cubin, CodeType::ptx}) {
        SCOPED_TRACE(std::string(to_string(type)));
        const ObjectCode code = compile(type);
        EXPECT_EQ(library_kernel_count(code), 3u);
        EXPECT_TRUE(code.is_loaded()) << "listing loads the code";
        const std::vector<std::string> names = library_kernel_names(code);
        EXPECT_TRUE(has(names, "busy"));
        EXPECT_TRUE(has(names, code.lowered_name("scale<float>")));
        EXPECT_TRUE(has(names, code.lowered_name("scale<double>")));
        std::vector<std::string> known;
        for (const Kernel& kernel : library_kernels(code)) {
            known.push_back(kernel.name());
            EXPECT_EQ(kernel.handle(), code.get_kernel(kernel.name()).handle()) << kernel.name();
        }
        EXPECT_TRUE(has(known, "scale<float>")) << "by its name expression";
        EXPECT_TRUE(has(known, "scale<double>"));
        EXPECT_TRUE(has(known, "busy"));

        const ObjectCode handed = ObjectCode::from_handle(code.library_handle(), {.name = "handed in"});
        EXPECT_EQ(library_kernel_count(handed), 3u);
        EXPECT_EQ(library_kernel_names(handed).size(), 3u);
    }
}

TEST(LoadedLibraryGpu, DeviceAndContextAreWhereItWasLoaded) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const ObjectCode code = compile(CodeType::cubin);
    EXPECT_EQ(library_device(code), device);
    EXPECT_EQ(library_context(code).handle(), device.context().handle());
    EXPECT_EQ(library_context(code).device(), device);
    const ObjectCode handed = ObjectCode::from_handle(code.library_handle());
    EXPECT_EQ(library_device(handed), Device::current());
}

// Code loaded while a created context is current is that context's: library_context answers it,
// the library holds it (it outlives the Context object), and the code's globals are its memory.
// Loaded while a foreign context (wrapped without ownership) is current, it is the primary
// context's, as before: cudacore does not hold what its owner may destroy.
TEST(LoadedLibraryGpu, CodeLoadedInACreatedContextIsThatContexts) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    ProgramOptions options;
    options.name = "loaded_in_created";
    options.arch = device.arch();
    const ObjectCode code =
        Program("__device__ int counter = 7;\n"
                "extern \"C\" __global__ void bump() { counter += 1; }\n",
                SourceType::cxx, options)
            .compile(CodeType::cubin);
    CUcontext created_handle = nullptr;
    {
        const Context mine = Context::create(device);
        created_handle = mine.handle();
        const CurrentContextScope on(mine);
        code.load();
    }
    const Context context = library_context(code);
    EXPECT_EQ(context.handle(), created_handle);
    EXPECT_TRUE(context.is_created());
    EXPECT_FALSE(context.is_primary());
    EXPECT_EQ(library_device(code), device);
    const Buffer counter = code.get_global("counter");
    CUcontext owner = nullptr;
    {
        const CurrentContextScope on(context);  // the driver's pointer query needs a context
        ASSERT_EQ(detail::driver().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, counter.handle()),
                  CUDA_SUCCESS);
    }
    EXPECT_EQ(owner, created_handle);
    const Stream stream = context.create_stream();
    launch(stream, LaunchConfig{}, code.get_kernel("bump"));
    EXPECT_EQ(code.read_global<int>("counter", stream), 8);

    // A foreign context current at the load: the primary context, as with none current.
    CUcontext foreign = nullptr;
    ASSERT_EQ(detail::driver().cuCtxCreate(&foreign, nullptr, 0, device.handle()), CUDA_SUCCESS);
    CUcontext popped = nullptr;
    ASSERT_EQ(detail::driver().cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    {
        const ObjectCode again = compile(CodeType::cubin);
        const CurrentContextScope on(Context::from_handle(foreign));
        again.load();
        EXPECT_EQ(library_context(again).handle(), device.context().handle());
    }
    EXPECT_EQ(detail::driver().cuCtxDestroy(foreign), CUDA_SUCCESS);
}

TEST(LoadedLibraryGpu, AClosedObjectCodeIsRefused) {
    CUDACORE_REQUIRE_GPU();
    ObjectCode code = compile(CodeType::cubin);
    code.close();
    EXPECT_THROW(library_kernel_count(code), InvalidArgumentError);
    EXPECT_THROW(library_kernels(code), InvalidArgumentError);
    EXPECT_THROW(library_context(code), InvalidArgumentError);
}

}  // namespace
