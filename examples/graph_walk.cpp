// Walking a graph: capture a small graph on two streams (fill, kernel, copy, host function), add
// an event record node to it, then print every node's kind, dependencies and parameters, change
// one kernel node's arguments, run it and check the result.
// Mirrors the node views of cuda.core's graph definitions (cuda.core.graph).
#include <cudacore/cudacore.hpp>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <variant>

static const char* kSource = R"(
extern "C" __global__ void scale(float* x, float factor, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}
extern "C" __global__ void add(float* x, const float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] += y[i];
}
)";

namespace {

using namespace cudacore;

// One line per kind: what the typed value says.
std::string describe(const GraphNodeParams& params) {
    char text[200];
    if (auto* k = std::get_if<KernelNodeParams>(&params)) {
        std::snprintf(text, sizeof text, "%s grid %u block %u, %zu arguments",
                      k->kernel.name().c_str(), k->config.grid.x, k->config.block.x,
                      k->arguments.count());
    } else if (auto* c = std::get_if<CopyNodeParams>(&params)) {
        if (c->general) return "a 2D/3D copy";
        std::snprintf(text, sizeof text, "%zu bytes from 0x%llx to 0x%llx", c->size,
                      static_cast<unsigned long long>(c->source),
                      static_cast<unsigned long long>(c->destination));
    } else if (auto* f = std::get_if<FillNodeParams>(&params)) {
        std::snprintf(text, sizeof text, "%zu x %u-byte elements = 0x%x at 0x%llx", f->width,
                      f->element_size, f->value, static_cast<unsigned long long>(f->destination));
    } else if (std::holds_alternative<HostNodeParams>(params)) {
        return "a host function";
    } else if (auto* e = std::get_if<EventRecordNodeParams>(&params)) {
        std::snprintf(text, sizeof text, "records event %p", static_cast<void*>(e->event.handle()));
    } else if (auto* w = std::get_if<EventWaitNodeParams>(&params)) {
        std::snprintf(text, sizeof text, "waits for event %p",
                      static_cast<void*>(w->event.handle()));
    } else {
        return graph_node_params_name(params);
    }
    return text;
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    ObjectCode code =
        Program(kSource, SourceType::cxx, {.arch = device.arch()}).compile(CodeType::cubin);
    Kernel scale = code.get_kernel("scale");
    Kernel add = code.get_kernel("add");

    const std::size_t n = 1 << 12;
    const LaunchConfig config{.grid = unsigned((n + 255) / 256), .block = 256};
    Buffer x = device.allocate(n * sizeof(float), stream);
    Buffer y = device.allocate(n * sizeof(float), stream);
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer result = pinned->allocate(n * sizeof(float), stream);
    auto finished = std::make_shared<std::atomic<int>>(0);

    // Two streams: x = 1 * 3 on the first, y = 2 on the second, then x += y and the copy back.
    GraphBuilder builder = stream.begin_capture();
    std::vector<GraphBuilder> side = builder.split(1);
    x.fill_uint32(0x3f800000, builder);  // 1.0f
    launch(builder, config, scale, x, 3.0f, n);
    y.fill_uint32(0x40000000, side[0]);  // 2.0f
    builder.join(side);
    launch(builder, config, add, x, y, n);
    x.copy_to(result, builder);
    builder.add_host_function([finished] { finished->fetch_add(1); });
    Graph graph = builder.end();

    // Events recorded inside a capture become edges; an event record node is added explicitly.
    std::vector<GraphNode> last;
    for (GraphNode node : graph.nodes())
        if (node.dependents().empty()) last.push_back(node);
    Event done = device.create_event();
    graph.add_event_record(last, done);

    // The walk: each node's kind, what it runs after, and its parameters.
    std::map<CUgraphNode, int> number;
    for (GraphNode node : graph.nodes()) number.emplace(node.handle(), int(number.size()));
    GraphNode scale_node;
    for (GraphNode node : graph.nodes()) {
        std::string after;
        for (GraphNode dependency : node.dependencies())
            after += " " + std::to_string(number[dependency.handle()]);
        const GraphNodeParams params = graph.params(node);
        std::printf("node %d: %-12s after [%s ] %s\n", number[node.handle()],
                    graph_node_type_name(node.type()).c_str(), after.c_str(),
                    describe(params).c_str());
        if (auto* k = std::get_if<KernelNodeParams>(&params); k && k->kernel.name() == "scale")
            scale_node = node;
    }
    std::printf("%zu edges\n", graph.edges().size());

    // Change one node: scale by 5 instead of 3, so x = 1 * 5 + 2 = 7.
    auto scaled = std::get<KernelNodeParams>(graph.params(scale_node));
    scaled.arguments = KernelArguments::of(x, 5.0f, n);
    graph.set_params(scale_node, scaled);

    GraphExec exec = graph.instantiate();
    exec.launch(stream);
    stream.sync();
    std::size_t wrong = 0;
    for (float value : result.span<float>()) wrong += value != 7.0f;
    const bool ok = wrong == 0 && finished->load() == 1 && done.is_done();
    std::printf("%s: %zu of %zu values wrong, host function ran %d time(s)\n",
                ok ? "ok" : "FAILED", wrong, n, finished->load());
    return ok ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
