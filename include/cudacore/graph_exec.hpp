/// @file
/// GraphExec: an executable graph (CUgraphExec), made by Graph::instantiate, launched on streams.
///
///     GraphExec exec = graph.instantiate({.upload_stream = stream});
///     for (int step = 0; step < 100; ++step) exec.launch(stream);
///     exec.update(next_graph);   // same topology, new parameters: no re-instantiation
///
/// Ownership: copies share one executable graph. It holds what its graphs hold (the kernels'
/// libraries, the buffers, events and callables given to keep), and once launched, releases them
/// only after the work of its context has finished (on a background thread, so destruction never
/// blocks): a launch may outlive every handle. The definition it came from may be dropped at once.
/// Destruction never throws; release errors are ignored.
///
/// Errors: DriverError naming the call and the graph; GraphUpdateError when update() is refused
/// (naming why and the node that blocked it); InvalidArgumentError for kernel argument mismatches.
/// Thread-safety: launch and upload may be called from several threads; update and set_kernel_*
/// must not race with other calls on the same executable graph.
#pragma once

#include "cudacore/errors.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_node.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <memory>
#include <optional>
#include <string>

namespace cudacore {

// Declared only (src/ defines them): the private members' types and the friend reaching them.
namespace detail {
struct GraphExecBox;
struct BoxAccess;
}

/// Options of Graph::instantiate().
struct GraphInstantiateOptions {
    /// Upload the graph on this stream as part of instantiation (the first launch is then as
    /// fast as the others).
    std::optional<Stream> upload_stream{};
    /// Free the graph's unfreed allocations before each relaunch.
    bool auto_free_on_launch = false;
    /// Launchable from the device (cudaGraphLaunch in a kernel); excludes auto_free_on_launch.
    bool device_launch = false;
    /// Kernel nodes run with their own priority attribute rather than the stream's.
    bool use_node_priority = false;
};

/// The CUDA_GRAPH_INSTANTIATE_FLAG_* for `options` (UPLOAD when upload_stream is set). Throws
/// InvalidArgumentError for device_launch together with auto_free_on_launch. No driver needed.
unsigned long long graph_instantiate_flags(const GraphInstantiateOptions& options);

/// update() refused: `reason` is the CUgraphExecUpdateResult, `node` the node of the new graph
/// that blocked it (null when the driver names none) and `from_node` the matching node of the
/// executable graph. The message names both and the reason in words.
class GraphUpdateError : public Error {
public:
    /// Makes the error from the driver's reason and the nodes it names.
    GraphUpdateError(CUgraphExecUpdateResult reason, GraphNode node, GraphNode from_node,
                     std::string node_kind, std::string graph);
    /// Why the driver refused (CUgraphExecUpdateResultInfo::result).
    CUgraphExecUpdateResult reason() const noexcept { return reason_; }
    /// The node of the new graph that blocked the update (null when the driver named none).
    GraphNode node() const noexcept { return node_; }
    /// The node of the executable graph it was matched with (null when none).
    GraphNode from_node() const noexcept { return from_node_; }

private:
    CUgraphExecUpdateResult reason_;
    GraphNode node_;
    GraphNode from_node_;
};

/// "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: the topology changed" (no driver needed).
std::string graph_update_result_text(CUgraphExecUpdateResult result);

/// An executable graph: launch it, update it, set a node's kernel arguments.
class GraphExec {
public:
    /// The driver's executable graph (null for a moved-from GraphExec); valid while any copy
    /// lives.
    CUgraphExec handle() const noexcept;
    /// The device it runs on. InvalidArgumentError for a moved-from GraphExec.
    Device device() const;

    /// Enqueues one run of the graph on `stream` (cuGraphLaunch).
    void launch(const Stream& stream) const;
    /// Uploads the graph's work to the device ahead of its first launch.
    void upload(const Stream& stream) const;

    /// Takes the parameters of `graph`, which must have the same topology as the graph this was
    /// made from (cuGraphExecUpdate). Throws GraphUpdateError when refused; the executable graph
    /// is then unchanged. From then on it holds what `graph` holds; what the previous graph held
    /// is released once the launches made so far have finished.
    void update(const Graph& graph);

    /// New arguments (and config) for kernel node `node` of the graph this was made from, in this
    /// executable graph only. The kernel must be the node's kernel or one of the same shape.
    template <class... Args>
    void set_kernel_arguments(GraphNode node, const LaunchConfig& config, const Kernel& kernel,
                              const Args&... args) {
        detail::with_kernel_arguments(
            [&](void** pointers, const std::size_t* sizes, std::size_t count) {
                set_kernel_node(node, config, kernel, pointers, sizes, count);
                return 0;
            },
            args...);
    }

    /// "executable graph 0x... on device 0".
    std::string description() const;

private:
    friend struct detail::BoxAccess;
    explicit GraphExec(std::shared_ptr<detail::GraphExecBox> box) noexcept : box_(std::move(box)) {}
    void set_kernel_node(GraphNode node, const LaunchConfig& config, const Kernel& kernel,
                         void** arguments, const std::size_t* sizes, std::size_t count);

    std::shared_ptr<detail::GraphExecBox> box_;
};

}  // namespace cudacore
