// Over 200 lines: one class, Graph, with one documented call per kind of node.
/// @file
/// Graph: a graph definition (CUgraph), captured from streams (graph_builder.hpp) or built node
/// by node, then instantiated into a GraphExec to launch. Conditional nodes and typed node
/// parameters: docs/graphs.md. Copies share one definition; a Graph holds its kernels' libraries
/// and what hold() was given, as its executable graphs do; memory that nodes only point to is the
/// caller's to keep. Errors: DriverError naming the call, graph and node kind; InvalidArgumentError
/// for closed buffers and mismatches. Adding nodes to one graph from several threads is not safe.
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
    bool verbose = false;  ///< everything below, and more
    /// Kernel node parameters and attributes (CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS and
    /// _KERNEL_NODE_ATTRIBUTES).
    bool kernel_node_params = false;
    bool memcpy_node_params = false;  ///< copy parameters (_MEMCPY_NODE_PARAMS)
    bool memset_node_params = false;  ///< fill parameters (_MEMSET_NODE_PARAMS)
    bool host_node_params = false;    ///< host function and its data (_HOST_NODE_PARAMS)
    bool event_node_params = false;   ///< the events recorded and waited for (_EVENT_NODE_PARAMS)
    bool memory_node_params = false;  ///< allocation and free nodes
    /// Conditional node parameters (_CONDITIONAL_NODE_PARAMS).
    bool conditional_node_params = false;
    bool handles = false;  ///< node and kernel handles
};

/// The CU_GRAPH_DEBUG_DOT_FLAGS_* for `options` (no driver needed).
unsigned graph_dot_flags(const GraphDotOptions& options);

/// A memory allocation node and the address it reserves (valid inside the graph, from the node
/// until a free node or, with GraphInstantiateOptions::auto_free_on_launch, the next launch).
struct GraphAllocation {
    GraphNode node{};        ///< the allocation node (a dependency for the nodes that use it)
    CUdeviceptr pointer = 0; ///< the address the driver reserved for it (cuGraphAddMemAllocNode)
    std::size_t size = 0;    ///< bytes allocated
};

/// A CUDA graph built node by node (explicit graphs); instantiate it to launch it.
class Graph : public OwningHandle<Graph, detail::GraphBox, CUgraph> {
public:
    /// An empty graph whose nodes run on `device` (its primary context, held by the graph).
    static Graph create(const Device& device = Device::current());
    /// An empty graph whose nodes run in `context` (a created context, say), which the graph,
    /// its executable graphs and their launches hold. InvalidArgumentError for a closed Context.
    static Graph create(const Context& context);

    /// The device its nodes run on. InvalidArgumentError for a moved-from Graph.
    Device device() const;
    /// Its nodes, in the driver's order (cuGraphGetNodes; not the nodes of child or body graphs).
    /// DriverError when the query fails, InvalidArgumentError for a moved-from Graph.
    std::vector<GraphNode> nodes() const;
    /// How many nodes it has (cuGraphGetNodes); throws as nodes().
    std::size_t node_count() const;
    /// Its edges (cuGraphGetEdges, with edge data), in the driver's order. Throws as nodes().
    std::vector<GraphEdge> edges() const;

    /// Makes `to` run after `from` (cuGraphAddDependencies), both nodes of this graph. Throws
    /// InvalidArgumentError for a null node, DriverError when the driver refuses (a node of
    /// another graph, an existing edge). Not safe with other changes to this graph.
    void add_edge(GraphNode from, GraphNode to);
    /// Removes the edge from `from` to `to` (cuGraphRemoveDependencies); throws as add_edge
    /// (DriverError when there is no such edge).
    void remove_edge(GraphNode from, GraphNode to);
    /// Removes `node` and its edges (cuGraphDestroyNode); `node` must not be used afterwards.
    /// What the graph holds for it stays held (a graph never lets go of what it holds). Throws as
    /// add_edge.
    void remove_node(GraphNode node);

    /// An independent copy of the graph (cuGraphClone), holding what this one holds. The clone's
    /// conditional nodes read as OtherNodeParams. Throws InvalidArgumentError for a moved-from
    /// Graph, DriverError when the driver fails.
    Graph clone() const;
    /// The node of this graph (a clone) that `original`, a node of the graph it was cloned from,
    /// became (cuGraphNodeFindInClone). InvalidArgumentError for a null node, DriverError when
    /// `original` is not a node of the graph this was cloned from.
    GraphNode cloned_node(GraphNode original) const;

    /// The typed parameters of `node` (graph_node_params.hpp). Objects it names are the graph's,
    /// valid while it lives; kinds without a typed value, and conditional nodes this Graph did
    /// not add, read as OtherNodeParams. Throws InvalidArgumentError for a null node, DriverError
    /// when the driver fails.
    GraphNodeParams params(GraphNode node) const;
    /// Changes `node`'s parameters to `params` (checked as add_* checks them); the graph then
    /// holds what the new value needs. Executable graphs made before are unchanged. Throws
    /// GraphNodeUpdateError for another kind or a kind the driver cannot change (allocation, free,
    /// conditional, other), InvalidArgumentError for a wrong value, DriverError when the driver
    /// refuses. Not safe with other changes to this graph (docs/graphs.md).
    void set_params(GraphNode node, const GraphNodeParams& params);

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
    /// Device to host: `size` must equal source.size() and `host` be non-null, else
    /// InvalidArgumentError. Neither the buffer nor the host memory is held (see hold()).
    GraphNode add_copy(GraphDependencies dependencies, void* host, std::size_t size,
                       const Buffer& source);
    /// Host to device: `size` must equal destination.size() and `host` be non-null, else
    /// InvalidArgumentError. Neither the buffer nor the host memory is held (see hold()).
    GraphNode add_copy(GraphDependencies dependencies, const Buffer& destination,
                       const void* host, std::size_t size);
    /// Sets every byte / every 32-bit word of `buffer` (its size a multiple of 4).
    GraphNode add_fill_byte(GraphDependencies dependencies, const Buffer& buffer,
                            std::uint8_t value);
    /// Sets every 32-bit word of `buffer` to `pattern`; InvalidArgumentError when its size is
    /// not a multiple of 4 or it is closed. The buffer is not held (see hold()).
    GraphNode add_fill_uint32(GraphDependencies dependencies, const Buffer& buffer,
                              std::uint32_t pattern);
    /// Runs `function` on a driver thread when the graph reaches the node. It must not call CUDA
    /// and must not throw (exceptions are swallowed). The graph holds the callable.
    GraphNode add_host_function(GraphDependencies dependencies, std::function<void()> function);
    /// Records `event` / waits for it; the graph holds the event.
    GraphNode add_event_record(GraphDependencies dependencies, const Event& event);
    /// Waits for `event` (cuGraphAddEventWaitNode); the graph holds the event, which is never
    /// recycled afterwards. InvalidArgumentError for an empty Event.
    GraphNode add_event_wait(GraphDependencies dependencies, const Event& event);
    /// A node that does nothing: joins dependencies.
    GraphNode add_empty(GraphDependencies dependencies);
    /// Embeds a copy of `child` (its nodes as they are now); the graph holds what `child` holds.
    GraphNode add_child(GraphDependencies dependencies, const Graph& child);
    /// Graph memory: `size` bytes allocated when the graph reaches the node and freed by a free
    /// node (in this graph or a later one) or by the next launch with auto_free_on_launch.
    GraphAllocation add_allocation(GraphDependencies dependencies, std::size_t size);
    /// Frees graph memory at `pointer` (an add_allocation pointer of this graph or of one already
    /// launched) when the graph reaches the node (cuGraphAddMemFreeNode; the driver checks it:
    /// DriverError).
    GraphNode add_free(GraphDependencies dependencies, CUdeviceptr pointer);

    /// A handle whose value, set by a kernel with cudaGraphSetConditional, decides what a
    /// conditional node runs (CUDA 12.4+ driver; graph_conditional.hpp).
    ConditionalHandle create_conditional_handle(const ConditionalHandleOptions& options = {});
    /// One body, run once when the value is non-zero.
    ConditionalNode add_if(GraphDependencies dependencies, const ConditionalHandle& condition);
    /// Two bodies: bodies[0] runs when the value is non-zero, bodies[1] otherwise.
    ConditionalNode add_if_else(GraphDependencies dependencies,
                                const ConditionalHandle& condition);  // bodies: then, else
    /// One body, run again and again while the value is non-zero (checked before each run).
    ConditionalNode add_while(GraphDependencies dependencies, const ConditionalHandle& condition);
    /// `cases` bodies: bodies[n] runs when the value is n, none when it is `cases` or more.
    /// InvalidArgumentError for 0 cases.
    ConditionalNode add_switch(GraphDependencies dependencies, const ConditionalHandle& condition,
                               unsigned cases);  // bodies[n] runs when the value is n

    /// Keeps `buffer` (or any object) alive as long as this graph and its executable graphs.
    void hold(const Buffer& buffer);
    /// Keeps any object alive as long as this graph, its body graphs and its executable graphs
    /// (those already made too: they share the graph's holdings). InvalidArgumentError for a
    /// moved-from Graph.
    void hold(std::shared_ptr<const void> object);
    /// How many objects the graph holds (libraries, buffers, events, callables).
    std::size_t held_count() const;

    /// An executable graph (see graph_exec.hpp for the options). A graph with allocation or free
    /// nodes has at most one executable graph at a time (the driver refuses a second: DriverError).
    GraphExec instantiate(const GraphInstantiateOptions& options) const;
    /// instantiate() with default GraphInstantiateOptions. InvalidArgumentError for a moved-from
    /// Graph, DriverError when the driver refuses the graph.
    GraphExec instantiate() const;

    /// The graph in Graphviz DOT (cuGraphDebugDotPrint), to a file or as a string.
    void write_dot(const std::filesystem::path& path, const GraphDotOptions& options = {}) const;
    /// The DOT text, written by the driver to a temporary file, read back and removed. Error when
    /// no temporary file can be made, DriverError when the driver fails.
    std::string to_dot(const GraphDotOptions& options = {}) const;

    /// "graph 0x... on device 0 (5 nodes)": used in error messages.
    std::string description() const;

    /// Ends the graph for every holder, copies included (docs/errors-and-lifetime.md,
    /// "Closing and resetting"). DriverError when the release it makes fails (closed all the same).
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
