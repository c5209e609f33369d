// `cudacore demo`: The graph step: saxpy then the reduction captured once and replayed.
#include "demo.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace cudacore::cli::demo {

// SAXPY then the reduction, captured once into a graph and replayed: each replay restores y,
// computes y = a * x + y and sums y into pinned host memory, so the last replay's sum checks all.
void step_graph(Demo& demo) {
    constexpr int replays = 100;
    std::printf("== graph (saxpy + reduction captured once, replayed %d times)\n", replays);
    if (!gpu_for(demo, "graph", "capturing and replaying a graph needs a GPU")) return;
    if (!made_by(demo, demo.saxpy, "graph", "compile")) return;
    if (!made_by(demo, demo.reduction, "graph", "compile")) return;
    const Device& device = *demo.device;
    Stream stream = device.create_stream();
    const std::vector<float> x = random_floats(kElements, 4);
    const std::vector<float> y = random_floats(kElements, 5);
    const unsigned blocks = 1024;
    Buffer dx = device.allocate(kElements * sizeof(float), stream);
    Buffer dy0 = device.allocate(kElements * sizeof(float), stream);
    Buffer dy = device.allocate(kElements * sizeof(float), stream);
    Buffer partial = device.allocate(blocks * sizeof(float), stream);
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer partials = pinned->allocate(blocks * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy0.copy_from(y, stream);
    stream.sync();

    const float a = 2.0f;
    const Kernel saxpy = demo.saxpy->get_kernel("saxpy");
    const Kernel reduction = demo.reduction->get_kernel(kReductionName);
    const auto capture_start = std::chrono::steady_clock::now();
    GraphBuilder builder = stream.begin_capture();
    dy.copy_from(dy0, builder);
    launch(builder, LaunchConfig{.grid = unsigned((kElements + 255) / 256), .block = 256}, saxpy,
           a, dx, dy, kElements);
    launch(builder, LaunchConfig{.grid = blocks, .block = 256}, reduction, dy, partial, kElements);
    partial.copy_to(partials, builder);
    const Graph graph = builder.end();
    const GraphExec exec = graph.instantiate({.upload_stream = stream});
    const double capture_ms = milliseconds_since(capture_start);

    Event start = stream.record(EventOptions{.timing_enabled = true});
    for (int replay = 0; replay < replays; ++replay) exec.launch(stream);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    stream.sync();

    double gpu = 0, cpu = 0;
    for (float p : partials.span<float>()) gpu += p;
    for (std::size_t i = 0; i < kElements; ++i) cpu += a * x[i] + y[i];
    const bool ok = std::fabs(gpu - cpu) <= 1e-3 * (1.0 + std::fabs(cpu));
    std::printf("%zu nodes; capture + instantiate %.3f ms; %d replays %.3f ms (%.3f ms each, "
                "events); sum %.4f, CPU %.4f: %s\n",
                graph.node_count(), capture_ms, replays, (end - start).count(),
                (end - start).count() / replays, gpu, cpu, demo.outcomes.verify("graph", ok));
}

}  // namespace cudacore::cli::demo
