// Host work ordered on a stream: a kernel increments pinned memory, a host function enqueued after
// it sees that write and adds its own on the CPU, then a second kernel runs after the host
// function. Mirrors cuda.core's examples/host_launch.py.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <memory>
#include <span>

static const char* kSource = R"(
extern "C" __global__ void increment_index(int* values, unsigned long long index) {
    values[index] += 1;
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    Kernel increment = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                           .compile(CodeType::cubin)
                           .get_kernel("increment_index");

    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer buffer = pinned->allocate(2 * sizeof(int), stream);
    const std::span<int> values = buffer.span<int>();
    values[0] = values[1] = 0;

    launch(stream, LaunchConfig{}, increment, buffer, 0ull);
    // Runs on a driver thread once the kernel above is done; the next kernel waits for it. It
    // must not call CUDA.
    bool saw_first_kernel = false;
    stream.launch_host_func([&] {
        saw_first_kernel = values[0] == 1 && values[1] == 0;
        values[1] += 1;
    });
    launch(stream, LaunchConfig{}, increment, buffer, 1ull);
    stream.sync();

    const bool right = saw_first_kernel && values[0] == 1 && values[1] == 2;
    std::printf("kernel, host function, kernel on one stream: the host function %s the first "
                "kernel's write; final values (%d, %d), %s\n",
                saw_first_kernel ? "saw" : "did NOT see", values[0], values[1],
                right ? "as expected" : "WRONG");
    return right ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
