// Updating an executable graph: two captures of the same shape (two launches adding one) aimed at
// different integers; the executable graph made from the first takes the second's arguments with
// update() and runs again, without a new instantiation. Mirrors cuda.core's graph_update.py, then
// goes on node by node (cuda.core 1.x's executable node views): new kernel arguments for one node,
// a node disabled and enabled again, a node's parameters as a typed value.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <memory>
#include <span>
#include <vector>

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
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
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

    // Node by node. The nodes are those of the graph the executable graph was made from.
    std::vector<GraphNode> launches;
    for (GraphNode node : first.nodes())
        if (node.type() == CU_GRAPH_NODE_TYPE_KERNEL) launches.push_back(node);
    if (launches.size() != 2) throw Error("expected two kernel nodes in the captured graph");
    // Both launches aimed at the first integer again, without touching the graph definition.
    for (GraphNode node : launches)
        exec.set_kernel_arguments(node, LaunchConfig{}, add_one, &values[0]);
    exec.launch(stream);
    stream.sync();
    const bool retargeted = values[0] == 4 && values[1] == 2;
    std::printf("both kernel nodes aimed at the first integer: (%d, %d)\n", values[0], values[1]);

    // One node disabled: the next launch skips it.
    exec.set_enabled(launches[0], false);
    exec.launch(stream);
    stream.sync();
    const bool disabled = values[0] == 5 && !exec.is_enabled(launches[0]);
    std::printf("one node disabled (enabled: %s): (%d, %d)\n",
                exec.is_enabled(launches[0]) ? "yes" : "no", values[0], values[1]);

    // Enabled again, and the other node given its parameters as a typed value.
    exec.set_enabled(launches[0], true);
    exec.set_params(launches[1],
                    KernelNodeParams{add_one, LaunchConfig{}, KernelArguments::of(&values[1])});
    exec.launch(stream);
    stream.sync();
    const bool per_node_right = retargeted && disabled && values[0] == 6 && values[1] == 3;
    std::printf("enabled again, the other node aimed back at the second: (%d, %d), %s\n",
                values[0], values[1], per_node_right ? "as expected" : "WRONG");
    return first_right && second_right && per_node_right ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
