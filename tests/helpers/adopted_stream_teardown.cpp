// cuda.core's PyTorch example as a C++ port writes it: a "framework" owns a stream and a memory
// pool; the program adopts the framework's stream (Stream::from_handle), allocates from the pool
// on it, round-trips the buffers through DLPack, compiles one Program with two name expressions,
// launches both on the adopted stream, checks the results, then lets everything go in reverse
// order and returns while releases may still be pending. Exit code 0 and "ok" on success.
//
//   helper_adopted_stream_teardown [rounds] [--busy-exit]
// rounds: default 1, each round is the whole program. --busy-exit: a kernel still runs on the
// adopted stream when the code is dropped, so its release is waiting while the program ends.
// Without a GPU it prints "no GPU" and exits 0.
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/dlpack.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/system.hpp"
#include "crash_backtrace.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace cudacore;

namespace {

bool busy_exit = false;  // --busy-exit: a kernel still runs when the code is dropped

constexpr const char* kSaxpy = R"(
extern "C" __global__ void spin(unsigned long long cycles) {
    long long start = clock64();
    while (clock64() - start < (long long)cycles) {}
}
template <typename T>
__global__ void saxpy_kernel(T a, const T* x, T* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

// What a framework keeps for itself: its own stream and memory pool.
struct Framework {
    explicit Framework(const Device& device)
        : stream(device.create_stream()), pool(DeviceMemoryResource::create_owned_pool(device)) {}
    Stream stream;
    std::shared_ptr<DeviceMemoryResource> pool;
};

// A buffer as a framework tensor: exported, then taken back through DLPack.
template <typename T>
Buffer as_framework_tensor(const Buffer& buffer, std::size_t n) {
    DLPackLayout layout;
    layout.shape = {static_cast<std::int64_t>(n)};
    layout.dtype = DLDataType{kDLFloat, static_cast<std::uint8_t>(sizeof(T) * 8), 1};
    return from_dlpack(to_dlpack(buffer, layout));
}

template <typename T>
bool run_saxpy(const ObjectCode& code, const char* name, const Stream& stream,
               DeviceMemoryResource& pool, std::size_t n) {
    Buffer x_owned = pool.allocate(n * sizeof(T), stream);
    Buffer y_owned = pool.allocate(n * sizeof(T), stream);
    Buffer x = as_framework_tensor<T>(x_owned, n);
    Buffer y = as_framework_tensor<T>(y_owned, n);
    std::vector<T> hx(n), hy(n), result(n);
    for (std::size_t i = 0; i < n; ++i) {
        hx[i] = static_cast<T>(i % 97);
        hy[i] = static_cast<T>(1);
    }
    x.copy_from(hx, stream);
    y.copy_from(hy, stream);
    const T a = static_cast<T>(2);
    launch(stream, LaunchConfig{.grid = unsigned((n + 127) / 128), .block = 128},
           code.get_kernel(name), a, static_cast<const T*>(x.data()), static_cast<T*>(y.data()), n);
    y.copy_to(result, stream);
    stream.sync();
    for (std::size_t i = 0; i < n; ++i)
        if (result[i] != a * hx[i] + hy[i]) return false;
    return true;
}

bool one_round(int round) {
    std::optional<Device> device;
    device.emplace(0);
    std::optional<Framework> framework;
    framework.emplace(*device);
    std::optional<Stream> adopted;
    adopted.emplace(Stream::from_handle(framework->stream.handle()));

    ProgramOptions options;
    options.name = "saxpy_templates";
    options.arch = device->arch();
    std::optional<ObjectCode> code;
    code.emplace(Program(kSaxpy, SourceType::cxx, options)
                     .compile(CodeType::cubin, {"saxpy_kernel<float>", "saxpy_kernel<double>"}));
    const std::size_t n = 1 << 16;
    const bool ok = run_saxpy<float>(*code, "saxpy_kernel<float>", *adopted, *framework->pool, n) &&
                    run_saxpy<double>(*code, "saxpy_kernel<double>", *adopted, *framework->pool, n);
    if (!ok) std::fprintf(stderr, "round %d: wrong saxpy result\n", round);
    // About 50 ms of work left on the adopted stream: the release of the code waits for it while
    // the program goes on to its end.
    if (busy_exit)
        launch(*adopted, LaunchConfig{.grid = 1, .block = 1}, code->get_kernel("spin"), 100'000'000ull);
    // Reverse order: the code, the adopted stream, the pool, the framework's stream, the device.
    code.reset();
    adopted.reset();
    framework->pool.reset();
    framework.reset();
    device.reset();
    return ok;
}

}  // namespace

int main(int argc, char** argv) try {
    cudacore::test::install_crash_backtrace();
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("no GPU\n");
        return 0;
    }
    int rounds = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--busy-exit") busy_exit = true;
        else rounds = std::atoi(argv[i]);
    }
    for (int round = 0; round < rounds; ++round)
        if (!one_round(round)) return 1;
    std::printf("ok\n");
    std::fflush(stdout);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
