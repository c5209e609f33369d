// Updating an executable graph: two captures of the same shape (two launches adding one) aimed at
// different integers; the executable graph made from the first takes the second's arguments with
// update() and runs again, without a new instantiation. Mirrors cuda.core's graph_update.py.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <memory>
#include <span>

static const char* kSource = R"(
extern "C" __global__ void add_one(int* value) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *value += 1;
}
)";

namespace {

using namespace cudacore;

// A graph of two launches, each adding one to *target.
Graph increment_twice(const Stream& stream, const Kernel& add_one, int* target) {
    GraphBuilder builder = stream.begin_capture();
    launch(builder, LaunchConfig{}, add_one, target);
    launch(builder, LaunchConfig{}, add_one, target);
    return builder.end();
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    Kernel add_one = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                         .compile(CodeType::cubin)
                         .get_kernel("add_one");

    // Two integers in pinned memory, which kernels write and the host reads.
    auto pinned = std::make_shared<PinnedMemoryResource>(device);
    Buffer buffer = pinned->allocate(2 * sizeof(int), stream);
    const std::span<int> values = buffer.span<int>();
    values[0] = values[1] = 0;

    const Graph first = increment_twice(stream, add_one, &values[0]);
    const Graph second = increment_twice(stream, add_one, &values[1]);
    GraphExec exec = first.instantiate({.upload_stream = stream});
    exec.launch(stream);
    stream.sync();
    std::printf("after the first graph: (%d, %d)\n", values[0], values[1]);
    const bool first_right = values[0] == 2 && values[1] == 0;

    exec.update(second);  // same topology, new kernel arguments: the executable graph is reused
    exec.upload(stream);
    exec.launch(stream);
    stream.sync();
    const bool second_right = values[0] == 2 && values[1] == 2;
    std::printf("one executable graph, updated to a new target: (%d, %d), %s\n", values[0],
                values[1], first_right && second_right ? "as expected" : "WRONG");
    return first_right && second_right ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
