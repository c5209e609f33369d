// Side by side, graphs (needs a GPU): graphs of 1, 16 and 256 empty-kernel nodes. Launches and
// replays are enqueue-only and reported per kernel; capture + instantiate per graph, what it made
// destroyed outside the timing. Then a one-node graph of the 8-argument kernel given new
// arguments before each launch: per-node update + launch against instantiating again + launch.
#include "side_by_side/areas.hpp"

#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "loader/driver_api.hpp"

#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace cudacore::bench::side_by_side {

namespace {

const std::vector<int> graph_sizes = {1, 16, 256};

// Graph launches per timed repetition: a burst's worth of kernels for small graphs, one for big
// ones.
int graph_replays(int kernels) { return kernels >= launch_burst ? 1 : launch_burst / kernels; }

// Instantiations per timed repetition of the instantiate + launch row (each takes microseconds).
constexpr int instantiations = 8;

// Per-node kernel update + launch, and instantiate + launch, of a one-node graph of `eight`
// whose first argument changes every time.
void graph_update_operations(Runner& runner, const Device& device, const Stream& stream,
                             const Kernel& eight) {
    const auto& api = detail::driver();
    const CUstream raw_stream = stream.handle();
    const LaunchConfig config{.grid = 1, .block = launch_block};
    CUcontext context = nullptr;
    detail::check(api.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
    EightArguments raw_arguments;
    void* raw_pointers[] = {&raw_arguments.a, &raw_arguments.b, &raw_arguments.in,
                            &raw_arguments.c, &raw_arguments.u, &raw_arguments.f,
                            &raw_arguments.s, &raw_arguments.out};
    CUDA_KERNEL_NODE_PARAMS raw_params{};
    raw_params.kern = reinterpret_cast<CUkernel>(eight.handle());
    raw_params.ctx = context;
    raw_params.gridDimX = raw_params.gridDimY = raw_params.gridDimZ = 1;
    raw_params.blockDimX = launch_block;
    raw_params.blockDimY = raw_params.blockDimZ = 1;
    raw_params.kernelParams = raw_pointers;

    // The raw graph and its executable graph, and cudacore's.
    CUgraph raw_graph = nullptr;
    CUgraphNode raw_node = nullptr;
    CUgraphExec raw_exec = nullptr;
    detail::check(api.cuGraphCreate(&raw_graph, 0), "cuGraphCreate");
    struct Destroy {
        CUgraph& graph;
        CUgraphExec& exec;
        ~Destroy() {
            if (exec) detail::driver().cuGraphExecDestroy(exec);
            if (graph) detail::driver().cuGraphDestroy(graph);
        }
    } destroy{raw_graph, raw_exec};
    detail::check(api.cuGraphAddKernelNode(&raw_node, raw_graph, nullptr, 0, &raw_params),
                  "cuGraphAddKernelNode");
    detail::check(api.cuGraphInstantiateWithFlags(&raw_exec, raw_graph, 0),
                  "cuGraphInstantiateWithFlags");
    const EightArguments defaults;
    Graph graph = Graph::create(device);
    const GraphNode node =
        graph.add_kernel({}, config, eight, defaults.a, defaults.b, defaults.in, defaults.c,
                         defaults.u, defaults.f, defaults.s, defaults.out);
    GraphExec exec = graph.instantiate();

    runner.compare(
        "graph_node_update_launch", {10, 300},
        {{"raw",
          [&] {
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < launch_burst; ++i) {
                      raw_arguments.a = i;
                      detail::check(
                          api.cuGraphExecKernelNodeSetParams(raw_exec, raw_node, &raw_params),
                          "cuGraphExecKernelNodeSetParams");
                      detail::check(api.cuGraphLaunch(raw_exec, raw_stream), "cuGraphLaunch");
                  }
              });
              stream.sync();
              return ns / launch_burst;
          },
          "cuGraphExecKernelNodeSetParams (8 arguments) + cuGraphLaunch, per launch"},
         {"cudacore", [&] {
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < launch_burst; ++i) {
                      exec.set_kernel_arguments(node, config, eight, i, defaults.b, defaults.in,
                                                defaults.c, defaults.u, defaults.f, defaults.s,
                                                defaults.out);
                      exec.launch(stream);
                  }
              });
              stream.sync();
              return ns / launch_burst;
          },
          "GraphExec::set_kernel_arguments (8 arguments) + launch, per launch"}});

    // Instantiating again: what a change costs without per-node updates. What was made is kept
    // and destroyed after the timing, on both sides.
    runner.compare(
        "graph_instantiate_launch", {3, 100},
        {{"raw",
          [&] {
              std::vector<CUgraphExec> made(instantiations, nullptr);
              const double ns = nanoseconds([&] {
                  for (CUgraphExec& one : made) {
                      detail::check(api.cuGraphInstantiateWithFlags(&one, raw_graph, 0),
                                    "cuGraphInstantiateWithFlags");
                      detail::check(api.cuGraphLaunch(one, raw_stream), "cuGraphLaunch");
                  }
              });
              stream.sync();
              for (CUgraphExec one : made) api.cuGraphExecDestroy(one);
              return ns / instantiations;
          },
          "cuGraphInstantiateWithFlags + cuGraphLaunch of the one-node graph, per launch"},
         {"cudacore", [&] {
              std::vector<GraphExec> made;
              made.reserve(instantiations);
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < instantiations; ++i) {
                      made.push_back(graph.instantiate());
                      made.back().launch(stream);
                  }
              });
              stream.sync();
              made.clear();
              return ns / instantiations;
          },
          "Graph::instantiate + GraphExec::launch of the one-node graph, per launch"}});
    stream.sync();
}

}  // namespace

const std::vector<std::string> graph_operation_names = {
    "launch_1_kernels",   "launch_16_kernels",  "launch_256_kernels",
    "graph_replay_1",     "graph_replay_16",    "graph_replay_256",
    "graph_capture_instantiate_1", "graph_capture_instantiate_16",
    "graph_capture_instantiate_256", "graph_node_update_launch", "graph_instantiate_launch"};

void graph_operations(Runner& runner, const Device& device, const std::string& launch_cubin) {
    const auto& api = detail::driver();
    device.set_current();
    const Stream stream = device.create_stream();
    const CUstream raw_stream = stream.handle();
    const ObjectCode code = ObjectCode::from_cubin(launch_cubin, "launch.cubin");
    const Kernel empty = code.get_kernel("empty");
    const auto function = reinterpret_cast<CUfunction>(empty.handle());
    const LaunchConfig config{.grid = 1, .block = launch_block};
    auto raw_launches = [&](int kernels) {
        for (int i = 0; i < kernels; ++i)
            detail::check(api.cuLaunchKernel(function, 1, 1, 1, launch_block, 1, 1, 0, raw_stream,
                                             nullptr, nullptr),
                          "cuLaunchKernel");
    };
    auto raw_capture = [&](int kernels) {
        CUgraph graph = nullptr;
        CUgraphExec exec = nullptr;
        detail::check(api.cuStreamBeginCapture(raw_stream, CU_STREAM_CAPTURE_MODE_RELAXED),
                      "cuStreamBeginCapture");
        raw_launches(kernels);
        detail::check(api.cuStreamEndCapture(raw_stream, &graph), "cuStreamEndCapture");
        detail::check(api.cuGraphInstantiateWithFlags(&exec, graph, 0),
                      "cuGraphInstantiateWithFlags");
        return std::make_pair(graph, exec);
    };
    // The graph is returned with its executable graph so that, as on the raw side, it is
    // destroyed outside the timing.
    struct Captured {
        Graph graph;
        GraphExec exec;
    };
    auto cudacore_capture = [&](int kernels) {
        GraphBuilder builder(stream);
        builder.begin();
        for (int i = 0; i < kernels; ++i) launch(builder, config, empty);
        Graph graph = builder.end();
        GraphExec exec = graph.instantiate();
        return Captured{std::move(graph), std::move(exec)};
    };

    for (const int kernels : graph_sizes) {
        const std::string n = std::to_string(kernels);
        runner.compare("launch_" + n + "_kernels", {10, 300},
                       {{"raw",
                         [&] {
                             const double ns = nanoseconds([&] { raw_launches(kernels); });
                             stream.sync();
                             return ns / kernels;
                         },
                         "cuLaunchKernel x " + n + ", per kernel"},
                        {"cudacore", [&] {
                             const double ns = nanoseconds([&] {
                                 for (int i = 0; i < kernels; ++i) launch(stream, config, empty);
                             });
                             stream.sync();
                             return ns / kernels;
                         },
                         "launch() x " + n + ", per kernel"}});

        const int replays = graph_replays(kernels);
        const bool want_replay = runner.wanted("graph_replay_" + n);
        std::pair<CUgraph, CUgraphExec> raw_graph{nullptr, nullptr};
        std::optional<GraphExec> graph;
        if (want_replay) {
            try {
                raw_graph = raw_capture(kernels);
                graph.emplace(cudacore_capture(kernels).exec);
            } catch (const std::exception& error) {
                runner.skip("graph_replay_" + n, {"raw", "cudacore"}, error.what());
                continue;
            }
        }
        runner.compare(
            "graph_replay_" + n, {10, 300},
            {{"raw",
              [&] {
                  const double ns = nanoseconds([&] {
                      for (int i = 0; i < replays; ++i)
                          detail::check(api.cuGraphLaunch(raw_graph.second, raw_stream),
                                        "cuGraphLaunch");
                  });
                  stream.sync();
                  return ns / (replays * kernels);
              },
              "cuGraphLaunch of a captured " + n + "-node graph, per kernel"},
             {"cudacore", [&] {
                  const double ns = nanoseconds([&] {
                      for (int i = 0; i < replays; ++i) graph->launch(stream);
                  });
                  stream.sync();
                  return ns / (replays * kernels);
              },
              "GraphExec::launch of a captured " + n + "-node graph, per kernel"}});
        if (want_replay) {
            stream.sync();
            api.cuGraphExecDestroy(raw_graph.second);
            api.cuGraphDestroy(raw_graph.first);
        }

        runner.compare("graph_capture_instantiate_" + n, {5, 200},
                       {{"raw",
                         [&] {
                             std::pair<CUgraph, CUgraphExec> made{nullptr, nullptr};
                             const double ns = nanoseconds([&] { made = raw_capture(kernels); });
                             api.cuGraphExecDestroy(made.second);
                             api.cuGraphDestroy(made.first);
                             return ns;
                         },
                         "cuStreamBeginCapture, cuLaunchKernel x " + n +
                             ", cuStreamEndCapture, cuGraphInstantiateWithFlags"},
                        {"cudacore", [&] {
                             std::optional<Captured> made;
                             const double ns =
                                 nanoseconds([&] { made.emplace(cudacore_capture(kernels)); });
                             made.reset();
                             return ns;
                         },
                         "GraphBuilder::begin, launch() x " + n + ", end(), instantiate()"}});
    }
    stream.sync();
    if (runner.wanted("graph_node_update_launch") || runner.wanted("graph_instantiate_launch"))
        graph_update_operations(runner, device, stream, code.get_kernel("eight"));
}

}  // namespace cudacore::bench::side_by_side
