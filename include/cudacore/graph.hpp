/// @file
/// Graph: a graph definition (CUgraph), captured from streams (graph_builder.hpp) or built node
/// by node, then instantiated into a GraphExec to launch (docs/graphs.md).
///
///     Graph graph = Graph::create(device);
///     GraphNode fill = graph.add_fill_byte({}, data, 0);
///     GraphNode step = graph.add_kernel(fill, LaunchConfig{.grid = blocks, .block = 256},
///                                       kernel, data, n);
///     graph.add_copy(step, host_result, data);
///     GraphExec exec = graph.instantiate();
///     exec.launch(stream);
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph_conditional.hpp"
#include "cudacore/graph_node.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/kernel_arguments.hpp"
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

class GraphExec;
struct GraphInstantiateOptions;

/// What cuGraphDebugDotPrint adds to the DOT output (all off: the structure and node kinds).
struct GraphDotOptions {
    bool verbose = false;                  ///< everything below, and more
    bool kernel_node_params = false;       ///< kernel parameters and attributes
    bool memcpy_node_params = false;       ///< copy parameters
    bool memset_node_params = false;       ///< fill parameters
    bool host_node_params = false;         ///< host function and its data
    bool event_node_params = false;        ///< the events recorded and waited for
    bool memory_node_params = false;       ///< allocation and free nodes
    bool conditional_node_params = false;  ///< conditional node parameters
    bool handles = false;                  ///< node and kernel handles
};

/// The CU_GRAPH_DEBUG_DOT_FLAGS_* for `options` (no driver needed).
unsigned graph_dot_flags(const GraphDotOptions& options);

/// An allocation node and the address it reserves, valid until it is freed.
struct GraphAllocation {
    GraphNode node{};        ///< the allocation node
    CUdeviceptr pointer = 0; ///< the address reserved
    std::size_t size = 0;    ///< bytes allocated
};

/// A CUDA graph built node by node; instantiate it to launch it. Copies share one definition; a
/// Graph and its executable graphs hold its kernels' libraries and what hold() was given, not
/// memory its nodes only point to. Every member throws InvalidArgumentError on a moved-from
/// Graph, a null node or a closed argument, DriverError naming the call and node kind when the
/// driver refuses. Changing one graph from several threads is not safe.
class Graph : public OwningHandle<Graph, detail::GraphBox, CUgraph> {
public:
    /// An empty graph whose nodes run on `device` (its primary context, held by the graph).
    static Graph create(const Device& device = Device::current());
    /// An empty graph whose nodes run in `context`, which the graph and its launches hold.
    static Graph create(const Context& context);

    Device device() const;  ///< the device its nodes run on
    /// Its nodes, in the driver's order (not those of child or body graphs).
    std::vector<GraphNode> nodes() const;
    std::size_t node_count() const;  ///< how many nodes it has
    std::vector<GraphEdge> edges() const;  ///< its edges, with edge data, in the driver's order
    /// Makes `to`, a node of this graph, run after `from`.
    void add_edge(GraphNode from, GraphNode to);
    void remove_edge(GraphNode from, GraphNode to);  ///< removes the edge from `from` to `to`
    /// Removes `node` and its edges; what the graph holds for it stays held.
    void remove_node(GraphNode node);
    /// An independent copy; its conditional nodes read as OtherNodeParams.
    Graph clone() const;
    /// The node of this clone that `original`, a node of the graph it was cloned from, became.
    GraphNode cloned_node(GraphNode original) const;
    /// `node`'s typed parameters; untyped kinds and foreign conditional nodes: OtherNodeParams.
    GraphNodeParams params(GraphNode node) const;
    /// Changes `node`'s parameters (checked as add_* checks them); executable graphs made before
    /// are unchanged. GraphNodeUpdateError for another kind or one the driver cannot change.
    void set_params(GraphNode node, const GraphNodeParams& params);
    /// A kernel node: `kernel`, `config` (no clusters or cooperative launches) and `args`.
    template <class... Args>
    GraphNode add_kernel(GraphDependencies dependencies, const LaunchConfig& config,
                         const Kernel& kernel, const Args&... args) {
        return detail::with_kernel_arguments(
            [&](void** pointers, const std::size_t* sizes, std::size_t count) {
                return add_kernel_node(dependencies, config, kernel, pointers, sizes, count);
            },
            args...);
    }
    /// Copies between buffers of the same size.
    GraphNode add_copy(GraphDependencies dependencies, const Buffer& destination,
                       const Buffer& source);
    /// Device to host; `size` must equal source.size(). Neither memory is held (see hold()).
    GraphNode add_copy(GraphDependencies dependencies, void* host, std::size_t size,
                       const Buffer& source);
    /// Host to device; `size` must equal destination.size(). Neither memory is held.
    GraphNode add_copy(GraphDependencies dependencies, const Buffer& destination,
                       const void* host, std::size_t size);
    /// Sets every byte of `buffer` (not held) to `value`.
    GraphNode add_fill_byte(GraphDependencies dependencies, const Buffer& buffer,
                            std::uint8_t value);
    /// Sets every 32-bit word of `buffer` (not held; its size a multiple of 4) to `pattern`.
    GraphNode add_fill_uint32(GraphDependencies dependencies, const Buffer& buffer,
                              std::uint32_t pattern);
    /// Runs `function` (held) on a driver thread; it must not call CUDA (exceptions are dropped).
    GraphNode add_host_function(GraphDependencies dependencies, std::function<void()> function);
    /// Records `event`, which the graph holds.
    GraphNode add_event_record(GraphDependencies dependencies, const Event& event);
    /// Waits for `event`, which the graph holds and never recycles.
    GraphNode add_event_wait(GraphDependencies dependencies, const Event& event);
    /// A node that does nothing: joins dependencies.
    GraphNode add_empty(GraphDependencies dependencies);
    /// Embeds a copy of `child` as it is now; the graph holds what `child` holds.
    GraphNode add_child(GraphDependencies dependencies, const Graph& child);
    /// `size` bytes, allocated when the graph reaches the node, freed by a free node or launch.
    GraphAllocation add_allocation(GraphDependencies dependencies, std::size_t size);
    /// Frees graph memory at `pointer` (from add_allocation here or in a launched graph).
    GraphNode add_free(GraphDependencies dependencies, CUdeviceptr pointer);
    /// The value a kernel sets (cudaGraphSetConditional) to steer a conditional node (CUDA 12.4+).
    ConditionalHandle create_conditional_handle(const ConditionalHandleOptions& options = {});
    /// One body, run once when the value is non-zero.
    ConditionalNode add_if(GraphDependencies dependencies, const ConditionalHandle& condition);
    /// Two bodies: bodies[0] runs when the value is non-zero, bodies[1] otherwise.
    ConditionalNode add_if_else(GraphDependencies dependencies,
                                const ConditionalHandle& condition);  // bodies: then, else
    /// One body, run again and again while the value is non-zero (checked before each run).
    ConditionalNode add_while(GraphDependencies dependencies, const ConditionalHandle& condition);
    /// `cases` bodies (at least 1): bodies[n] runs when the value is n.
    ConditionalNode add_switch(GraphDependencies dependencies, const ConditionalHandle& condition,
                               unsigned cases);  // bodies[n] runs when the value is n
    /// Keeps `buffer` alive as long as this graph and its executable graphs.
    void hold(const Buffer& buffer);
    /// Keeps `object` alive as long as this graph and its body and executable graphs.
    void hold(std::shared_ptr<const void> object);
    /// How many objects the graph holds (libraries, buffers, events, callables).
    std::size_t held_count() const;
    /// An executable graph; a graph with allocation or free nodes has at most one at a time.
    GraphExec instantiate(const GraphInstantiateOptions& options) const;
    GraphExec instantiate() const;  ///< instantiate() with default GraphInstantiateOptions
    /// Writes the graph in Graphviz DOT to `path`.
    void write_dot(const std::filesystem::path& path, const GraphDotOptions& options = {}) const;
    /// The DOT text; Error when no temporary file can be made.
    std::string to_dot(const GraphDotOptions& options = {}) const;
    std::string description() const;  ///< "graph 0x... on device 0 (5 nodes)"
    /// Ends the graph for every holder; DriverError when the release fails (closed anyway).
    void close();
private:
    GraphNode add_kernel_node(GraphDependencies dependencies, const LaunchConfig& config,
                              const Kernel& kernel, void** arguments, const std::size_t* sizes,
                              std::size_t count);
    ConditionalNode add_conditional(GraphDependencies dependencies,
                                    const ConditionalHandle& condition,
                                    CUgraphConditionalNodeType type, unsigned size,
                                    const char* what);
};

}  // namespace cudacore
