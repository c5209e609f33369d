/// @file
/// Graph: a graph definition (CUgraph), captured from streams (GraphBuilder, graph_builder.hpp)
/// or built node by node here, then instantiated into a GraphExec (graph_exec.hpp) to launch.
///
///     Graph graph = Graph::create(device);
///     GraphNode fill = graph.add_fill_byte({}, data, 0);
///     GraphNode step = graph.add_kernel(fill, LaunchConfig{.grid = blocks, .block = 256},
///                                       kernel, data, n);
///     graph.add_copy(step, host_result, data);
///     GraphExec exec = graph.instantiate();
///     exec.launch(stream);
///
/// Conditional nodes (a CUDA 12.4+ driver) run their body graphs depending on a value that
/// kernels set on the device through a ConditionalHandle (see graph_conditional.hpp):
///
///     ConditionalHandle count = graph.create_conditional_handle();
///     ConditionalNode loop = graph.add_while(setup, count);
///     loop.bodies[0].add_kernel({}, config, step_kernel, count.handle(), data);
///
/// Ownership: copies share one definition, destroyed when the last copy (and the last body graph
/// taken from it) goes. A Graph holds what its nodes need: the libraries of its kernels (also when
/// captured), and what it was given to keep (hold(): buffers, events, host callables added as
/// nodes). Executable graphs hold the same, so their launches stay valid after every other handle
/// is dropped. The memory that copy and kernel nodes merely point to is the caller's to keep valid,
/// unless hold() was asked to. Destruction never throws; release errors are ignored.
///
/// Errors: DriverError naming the call, the graph and the node kind; InvalidArgumentError for
/// closed buffers, size mismatches, kernel argument mismatches (as launch()). Thread-safety:
/// adding nodes to one graph from several threads at once is not safe; copies and queries are.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph_conditional.hpp"
#include "cudacore/graph_node.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/launch_config.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace cudacore {

namespace detail {
struct GraphBox;

/// Packs launch()-style arguments (converted like launch(): Buffers as device pointers) into an
/// array of pointers and sizes, and calls use(pointers, sizes, count) while they are alive.
template <class Use, class... Args>
decltype(auto) with_kernel_arguments(Use&& use, const Args&... args) {
    constexpr std::size_t count = sizeof...(Args);
    std::tuple<decltype(KernelArgument<Args>::convert(args))...> converted{
        KernelArgument<Args>::convert(args)...};
    static constexpr std::size_t sizes[count ? count : 1] = {
        sizeof(converted_argument_t<Args>)...};
    void* pointers[count ? count : 1] = {};
    std::apply(
        [&pointers](const auto&... values) {
            std::size_t index = 0;
            ((pointers[index++] = const_cast<void*>(static_cast<const void*>(&values))), ...);
        },
        converted);
    return use(static_cast<void**>(pointers), static_cast<const std::size_t*>(sizes), count);
}
}  // namespace detail

class GraphExec;
struct GraphInstantiateOptions;

/// What cuGraphDebugDotPrint adds to the DOT output (all off: the structure and node kinds).
struct GraphDotOptions {
    bool verbose = false;  ///< everything below, and more
    bool kernel_node_params = false;
    bool memcpy_node_params = false;
    bool memset_node_params = false;
    bool host_node_params = false;
    bool event_node_params = false;
    bool memory_node_params = false;  ///< allocation and free nodes
    bool conditional_node_params = false;
    bool handles = false;  ///< node and kernel handles
};

/// The CU_GRAPH_DEBUG_DOT_FLAGS_* for `options` (no driver needed).
unsigned graph_dot_flags(const GraphDotOptions& options);

/// A memory allocation node and the address it reserves (valid inside the graph, from the node
/// until a free node or, with GraphInstantiateOptions::auto_free_on_launch, the next launch).
struct GraphAllocation {
    GraphNode node;
    CUdeviceptr pointer = 0;
    std::size_t size = 0;
};

/// A CUDA graph built node by node (explicit graphs); instantiate it to launch it.
class Graph {
public:
    /// An empty graph whose nodes run on `device` (its primary context, held by the graph).
    static Graph create(const Device& device = Device::current());

    CUgraph handle() const noexcept;
    Device device() const;
    std::vector<GraphNode> nodes() const;
    std::size_t node_count() const;

    /// A kernel node: `kernel` with `config` (no clusters or cooperative launches) and `args`,
    /// converted and checked as launch() does. The graph holds the kernel's library.
    template <class... Args>
    GraphNode add_kernel(GraphDependencies dependencies, const LaunchConfig& config,
                         const Kernel& kernel, const Args&... args) {
        return detail::with_kernel_arguments(
            [&](void** pointers, const std::size_t* sizes, std::size_t count) {
                return add_kernel_node(dependencies, config, kernel, pointers, sizes, count);
            },
            args...);
    }
    /// Copies between buffers of the same size, and between a buffer and host memory of its size
    /// (pinned host memory: the graph may run long after this call).
    GraphNode add_copy(GraphDependencies dependencies, const Buffer& destination,
                       const Buffer& source);
    GraphNode add_copy(GraphDependencies dependencies, void* host, std::size_t size,
                       const Buffer& source);
    GraphNode add_copy(GraphDependencies dependencies, const Buffer& destination,
                       const void* host, std::size_t size);
    /// Sets every byte / every 32-bit word of `buffer` (its size a multiple of 4).
    GraphNode add_fill_byte(GraphDependencies dependencies, const Buffer& buffer,
                            std::uint8_t value);
    GraphNode add_fill_uint32(GraphDependencies dependencies, const Buffer& buffer,
                              std::uint32_t pattern);
    /// Runs `function` on a driver thread when the graph reaches the node. It must not call CUDA
    /// and must not throw (exceptions are swallowed). The graph holds the callable.
    GraphNode add_host_function(GraphDependencies dependencies, std::function<void()> function);
    /// Records `event` / waits for it; the graph holds the event.
    GraphNode add_event_record(GraphDependencies dependencies, const Event& event);
    GraphNode add_event_wait(GraphDependencies dependencies, const Event& event);
    /// A node that does nothing: joins dependencies.
    GraphNode add_empty(GraphDependencies dependencies);
    /// Embeds a copy of `child` (its nodes as they are now); the graph holds what `child` holds.
    GraphNode add_child(GraphDependencies dependencies, const Graph& child);
    /// Graph memory: `size` bytes allocated when the graph reaches the node and freed by a free
    /// node (in this graph or a later one) or by the next launch with auto_free_on_launch.
    GraphAllocation add_allocation(GraphDependencies dependencies, std::size_t size);
    GraphNode add_free(GraphDependencies dependencies, CUdeviceptr pointer);

    /// Conditional nodes (CUDA 12.4+ driver). The handle's value decides what runs: set it from a
    /// kernel with cudaGraphSetConditional (graph_conditional.hpp). Body graphs are empty Graphs
    /// to fill with nodes; they belong to the node (allowed in bodies: kernels, copies, fills,
    /// empty, child and conditional nodes, all on this graph's device).
    ConditionalHandle create_conditional_handle(const ConditionalHandleOptions& options = {});
    ConditionalNode add_if(GraphDependencies dependencies, const ConditionalHandle& condition);
    ConditionalNode add_if_else(GraphDependencies dependencies,
                                const ConditionalHandle& condition);  // bodies: then, else
    ConditionalNode add_while(GraphDependencies dependencies, const ConditionalHandle& condition);
    ConditionalNode add_switch(GraphDependencies dependencies, const ConditionalHandle& condition,
                               unsigned cases);  // bodies[n] runs when the value is n

    /// Keeps `buffer` (or any object) alive as long as this graph and its executable graphs.
    void hold(const Buffer& buffer);
    void hold(std::shared_ptr<const void> object);
    /// How many objects the graph holds (libraries, buffers, events, callables).
    std::size_t held_count() const;

    /// An executable graph (see graph_exec.hpp for the options). A graph with allocation or free
    /// nodes has at most one executable graph at a time (the driver refuses a second: DriverError).
    GraphExec instantiate(const GraphInstantiateOptions& options) const;
    GraphExec instantiate() const;

    /// The graph in Graphviz DOT (cuGraphDebugDotPrint), to a file or as a string.
    void write_dot(const std::filesystem::path& path, const GraphDotOptions& options = {}) const;
    std::string to_dot(const GraphDotOptions& options = {}) const;

    /// "graph 0x... on device 0 (5 nodes)": used in error messages.
    std::string description() const;

    /// The same object (identity.hpp says how each type compares).
    bool operator==(const Graph& other) const noexcept { return handle() == other.handle(); }

    explicit Graph(std::shared_ptr<detail::GraphBox> box) noexcept : box_(std::move(box)) {}
    /// The shared state (cudacore's own use).
    const std::shared_ptr<detail::GraphBox>& box() const noexcept { return box_; }

private:
    GraphNode add_kernel_node(GraphDependencies dependencies, const LaunchConfig& config,
                              const Kernel& kernel, void** arguments, const std::size_t* sizes,
                              std::size_t count);
    ConditionalNode add_conditional(GraphDependencies dependencies,
                                    const ConditionalHandle& condition,
                                    CUgraphConditionalNodeType type, unsigned size,
                                    const char* what);

    std::shared_ptr<detail::GraphBox> box_;
};

}  // namespace cudacore
