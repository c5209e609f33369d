/// @file
/// GraphExec: an executable graph (CUgraphExec), made by Graph::instantiate, launched on streams.
/// Per-node changes (set_*) change the next launches only.
///
///     GraphExec exec = graph.instantiate({.upload_stream = stream});
///     for (int step = 0; step < 100; ++step) exec.launch(stream);
///     exec.update(next_graph);   // same topology, new parameters: no re-instantiation
///     exec.set_kernel_arguments(step_node, config, kernel, other_data, n);  // one node only
///     exec.set_enabled(fill_node, false);                                    // skipped from now on
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_node.hpp"
#include "cudacore/graph_update_error.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace cudacore {

/// Options of Graph::instantiate().
struct GraphInstantiateOptions {
    /// Upload the graph on this stream while instantiating (the first launch is then as fast).
    std::optional<Stream> upload_stream{};
    /// Free the graph's unfreed allocations before each relaunch.
    bool auto_free_on_launch = false;
    /// Launchable from the device (cudaGraphLaunch in a kernel); excludes auto_free_on_launch.
    bool device_launch = false;
    /// Kernel nodes run with their own priority attribute rather than the stream's.
    bool use_node_priority = false;
};

/// The CUDA_GRAPH_INSTANTIATE_FLAG_* for `options`; InvalidArgumentError for clashing options.
unsigned long long graph_instantiate_flags(const GraphInstantiateOptions& options);

/// An executable graph: launch it, update it, change its nodes. Copies share it; it holds what its
/// graphs hold and, once launched, releases it only after the context's work has finished, so a
/// launch may outlive every handle. launch and upload may run from several threads; update and
/// set_* must not race other calls. Every member throws InvalidArgumentError on an empty
/// GraphExec, a null node or a closed argument, DriverError when the driver fails, and the set_*
/// calls GraphNodeUpdateError for a node of another kind or a change the driver refuses.
class GraphExec : public OwningHandle<GraphExec, detail::GraphExecBox, CUgraphExec> {
public:
    Device device() const;  ///< the device it runs on

    /// Enqueues one run of the graph on `stream` (cuGraphLaunch).
    void launch(const Stream& stream) const;
    /// Uploads the graph's work to the device ahead of its first launch.
    void upload(const Stream& stream) const;

    /// Takes the parameters of `graph`, of the same topology; GraphUpdateError when refused.
    void update(const Graph& graph);

    /// New arguments and config for kernel node `node`; holds the kernel's library.
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

    /// Enables or disables a kernel, memcpy or memset node for the next launches.
    void set_enabled(GraphNode node, bool enabled);
    bool is_enabled(GraphNode node) const;  ///< whether `node` is enabled in this executable graph

    /// New buffers (held) of equal size for copy node `node`, keeping the direction and contexts.
    void set_copy(GraphNode node, const Buffer& destination, const Buffer& source);
    /// New device-to-host copy for `node` of `size` == source.size() bytes.
    void set_copy(GraphNode node, void* host, std::size_t size, const Buffer& source);
    /// New host-to-device copy for `node`, `size` equal to destination.size().
    void set_copy(GraphNode node, const Buffer& destination, const void* host, std::size_t size);
    /// Memset node `node` now sets every byte of `buffer` (held) to `value`.
    void set_fill_byte(GraphNode node, const Buffer& buffer, std::uint8_t value);
    /// Memset node `node` now sets every 32-bit word of `buffer` (held) to `pattern`.
    void set_fill_uint32(GraphNode node, const Buffer& buffer, std::uint32_t pattern);
    /// Host node `node` now runs `function` (held; not empty).
    void set_host_function(GraphNode node, std::function<void()> function);
    /// Child graph node `node` takes the parameters of `child`'s nodes, holding what it holds.
    void set_child(GraphNode node, const Graph& child);
    /// Event record node `node` now records `event` (held).
    void set_event_record(GraphNode node, const Event& event);
    /// Event wait node `node` now waits for `event` (held).
    void set_event_wait(GraphNode node, const Event& event);

    /// New parameters for `node` as a typed value of its kind (graph_node_params.hpp).
    void set_params(GraphNode node, const GraphNodeParams& params);

    std::string description() const;  ///< "executable graph 0x... on device 0"

    /// Ends the executable graph for every holder; DriverError when the release fails.
    void close();

private:
    void set_kernel_node(GraphNode node, const LaunchConfig& config, const Kernel& kernel,
                         void** arguments, const std::size_t* sizes, std::size_t count);
};

}  // namespace cudacore
