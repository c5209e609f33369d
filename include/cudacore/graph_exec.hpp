/// @file
/// GraphExec: an executable graph (CUgraphExec), made by Graph::instantiate, launched on streams.
/// Copies share it; it holds what its graphs hold and, once launched, releases it only after the
/// context's work has finished (on a background thread), so a launch may outlive every handle.
/// Per-node changes (set_*) change the next launches only. Errors: DriverError, GraphUpdateError
/// for a refused update(), GraphNodeUpdateError for a refused node change, InvalidArgumentError.
/// launch and upload may run from several threads; update and set_* must not race other calls.
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

/// An executable graph: launch it, update it, set a node's kernel arguments.
class GraphExec : public OwningHandle<GraphExec, detail::GraphExecBox, CUgraphExec> {
public:
    /// The device it runs on. InvalidArgumentError for a moved-from GraphExec.
    Device device() const;

    /// Enqueues one run of the graph on `stream` (cuGraphLaunch).
    void launch(const Stream& stream) const;
    /// Uploads the graph's work to the device ahead of its first launch.
    void upload(const Stream& stream) const;

    /// Takes the parameters of `graph`, of the same topology (cuGraphExecUpdate), and holds what
    /// it holds. Throws GraphUpdateError when refused (unchanged then).
    void update(const Graph& graph);

    /// New arguments and config for kernel node `node`, in this executable graph only
    /// (cuGraphExecKernelNodeSetParams), within the driver's rules; holds the kernel's library.
    /// Throws InvalidArgumentError for an empty Kernel, a cluster or cooperative config or
    /// mismatched arguments; GraphNodeUpdateError for another kind or a driver refusal.
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

    /// Enables or disables `node` (kernel, memcpy and memset nodes) for the next launches; a
    /// disabled node does nothing and keeps its parameters. Throws GraphNodeUpdateError for
    /// another kind, InvalidArgumentError for a null node or an empty GraphExec.
    void set_enabled(GraphNode node, bool enabled);
    /// Whether `node` is enabled in this executable graph (cuGraphNodeGetEnabled); throws as
    /// set_enabled.
    bool is_enabled(GraphNode node) const;

    /// New buffers of equal size for copy node `node`, keeping the direction and contexts; holds
    /// both. Throws GraphNodeUpdateError for another kind or a broken rule, InvalidArgumentError
    /// for a closed buffer or sizes that differ.
    void set_copy(GraphNode node, const Buffer& destination, const Buffer& source);
    /// New device-to-host copy for `node` (`size` equal to source.size(), `host` not null); the
    /// buffer is held, the host memory is the caller's to keep valid. Throws as above.
    void set_copy(GraphNode node, void* host, std::size_t size, const Buffer& source);
    /// New host-to-device copy for `node` (`size` equal to destination.size()); throws and holds
    /// as above.
    void set_copy(GraphNode node, const Buffer& destination, const void* host, std::size_t size);
    /// Memset node `node` now sets every byte of `buffer` (held) to `value`. Throws as set_copy.
    void set_fill_byte(GraphNode node, const Buffer& buffer, std::uint8_t value);
    /// Memset node `node` now sets every 32-bit word of `buffer` (a multiple of 4 bytes, else
    /// InvalidArgumentError) to `pattern`. Holds and throws as set_fill_byte.
    void set_fill_uint32(GraphNode node, const Buffer& buffer, std::uint32_t pattern);
    /// Host node `node` now runs `function` (held). Throws InvalidArgumentError for an empty
    /// function, GraphNodeUpdateError for another kind.
    void set_host_function(GraphNode node, std::function<void()> function);
    /// Child graph node `node` takes the parameters of `child`'s nodes (same topology and order);
    /// holds what `child` holds. Throws GraphNodeUpdateError when a node's update is refused.
    void set_child(GraphNode node, const Graph& child);
    /// Event record node `node` now records `event` (held). Throws InvalidArgumentError for an
    /// empty Event, GraphNodeUpdateError for another kind.
    void set_event_record(GraphNode node, const Event& event);
    /// Event wait node `node` now waits for `event` (cuGraphExecEventWaitNodeSetEvent); holds
    /// and throws as set_event_record.
    void set_event_wait(GraphNode node, const Event& event);

    /// New parameters for `node` as a typed value of its kind (graph_node_params.hpp), as the
    /// set_* calls above; holds what the value names (raw addresses are the caller's). Throws
    /// GraphNodeUpdateError for another kind or an allocation, free, conditional or other node,
    /// before any change; InvalidArgumentError for a null address, size 0 or a bad element size.
    void set_params(GraphNode node, const GraphNodeParams& params);

    /// "executable graph 0x... on device 0".
    std::string description() const;

    /// Ends the executable graph for every holder, copies included (docs/errors-and-lifetime.md,
    /// "Closing and resetting"). DriverError when the release it makes fails (closed all the same).
    void close();

private:
    void set_kernel_node(GraphNode node, const LaunchConfig& config, const Kernel& kernel,
                         void** arguments, const std::size_t* sizes, std::size_t count);
};

}  // namespace cudacore
