/// @file
/// GraphExec: an executable graph (CUgraphExec), made by Graph::instantiate, launched on streams.
///
///     GraphExec exec = graph.instantiate({.upload_stream = stream});
///     for (int step = 0; step < 100; ++step) exec.launch(stream);
///     exec.update(next_graph);   // same topology, new parameters: no re-instantiation
///     exec.set_kernel_arguments(step_node, config, kernel, other_data, n);  // one node only
///     exec.set_enabled(fill_node, false);                                    // skipped from now on
///
/// Ownership: copies share one executable graph. It holds what its graphs hold (the kernels'
/// libraries, the buffers, events and callables given to keep), and once launched, releases them
/// only after the work of its context has finished (on a background thread, so destruction never
/// blocks): a launch may outlive every handle. The definition it came from may be dropped at once.
/// Destruction never throws; release errors are ignored.
///
/// Per-node changes (set_kernel_arguments, set_copy, set_enabled, set_params...) change the next
/// launches only, without instantiating again; each holds what its new parameters refer to.
///
/// Errors: DriverError naming the call and the graph; GraphUpdateError when update() is refused
/// (naming why and the node that blocked it); GraphNodeUpdateError when a per-node change is
/// refused (naming the node, its kind and the rule); InvalidArgumentError for kernel argument
/// mismatches. Thread-safety: launch and upload may be called from several threads; update,
/// set_* and is_enabled must not race with other calls on the same executable graph.
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

    /// Takes the parameters of `graph`, which must have the same topology as the graph this was
    /// made from (cuGraphExecUpdate). Throws GraphUpdateError when refused; the executable graph
    /// is then unchanged. From then on it holds what `graph` holds; what the previous graph held
    /// is released once the launches made so far have finished.
    void update(const Graph& graph);

    /// New arguments (and config) for kernel node `node` of the graph this was made from, in this
    /// executable graph only (cuGraphExecKernelNodeSetParams). The kernel may change within the
    /// driver's rules (same device; no dynamic parallelism or device-side graph launch where the
    /// node had none). The executable graph holds the kernel's library. InvalidArgumentError for
    /// an empty Kernel, a cluster or cooperative config or mismatched arguments;
    /// GraphNodeUpdateError for a node of another kind (before the driver) or when the driver
    /// refuses.
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

    /// Enables or disables `node` (a node of the graph this was made from) for the next launches
    /// (cuGraphNodeSetEnabled): a disabled node does nothing, as an empty node, and keeps its
    /// parameters. The driver allows it for kernel, memcpy and memset nodes: another kind is a
    /// GraphNodeUpdateError naming the node and the rule, before any driver call. Launches already
    /// made are not affected. InvalidArgumentError for a null node or an empty GraphExec.
    void set_enabled(GraphNode node, bool enabled);
    /// Whether `node` is enabled in this executable graph (cuGraphNodeGetEnabled); throws as
    /// set_enabled.
    bool is_enabled(GraphNode node) const;

    /// New buffers for copy node `node`: as Graph::add_copy, the sizes equal. The driver keeps
    /// the direction (device or host memory on each side), each side's context and the copy
    /// one-dimensional; a node of another kind or a broken rule is a GraphNodeUpdateError. The
    /// executable graph holds both buffers (what the node's previous update held is released
    /// once the launches made so far have finished). InvalidArgumentError for a closed buffer
    /// or sizes that differ.
    void set_copy(GraphNode node, const Buffer& destination, const Buffer& source);
    /// New device-to-host copy for `node` (`size` equal to source.size(), `host` not null); the
    /// buffer is held, the host memory is the caller's to keep valid. Throws as above.
    void set_copy(GraphNode node, void* host, std::size_t size, const Buffer& source);
    /// New host-to-device copy for `node` (`size` equal to destination.size()); throws and holds
    /// as above.
    void set_copy(GraphNode node, const Buffer& destination, const void* host, std::size_t size);
    /// Memset node `node` now sets every byte of `buffer` to `value`
    /// (cuGraphExecMemsetNodeSetParams). The driver keeps the kind of memory and its context;
    /// other changes (a new size or element size) only where the node's resources allow. The
    /// buffer is held. Throws as set_copy.
    void set_fill_byte(GraphNode node, const Buffer& buffer, std::uint8_t value);
    /// Memset node `node` now sets every 32-bit word of `buffer` (a multiple of 4 bytes, else
    /// InvalidArgumentError) to `pattern`. Holds and throws as set_fill_byte.
    void set_fill_uint32(GraphNode node, const Buffer& buffer, std::uint32_t pattern);
    /// Host node `node` now runs `function` (cuGraphExecHostNodeSetParams); rules as
    /// Graph::add_host_function. The executable graph holds the callable; the previous one is
    /// released once the launches made so far have finished. InvalidArgumentError for an empty
    /// function; GraphNodeUpdateError for a node of another kind.
    void set_host_function(GraphNode node, std::function<void()> function);
    /// Child graph node `node` takes the parameters of `child`'s nodes
    /// (cuGraphExecChildGraphNodeSetParams): `child` must have the topology and node order of the
    /// node's graph, and the update rules apply to each of its nodes (GraphNodeUpdateError).
    /// The executable graph holds what `child` holds; `child` itself may be dropped at once.
    void set_child(GraphNode node, const Graph& child);
    /// Event record node `node` now records `event` (cuGraphExecEventRecordNodeSetEvent), which
    /// is held and never recycled afterwards. InvalidArgumentError for an empty Event,
    /// GraphNodeUpdateError for a node of another kind.
    void set_event_record(GraphNode node, const Event& event);
    /// Event wait node `node` now waits for `event` (cuGraphExecEventWaitNodeSetEvent); holds
    /// and throws as set_event_record.
    void set_event_wait(GraphNode node, const Event& event);

    /// New parameters for `node` as a typed value of its kind (graph_node_params.hpp), in this
    /// executable graph only: KernelNodeParams, CopyNodeParams, FillNodeParams, HostNodeParams,
    /// ChildGraphNodeParams, EventRecordNodeParams and EventWaitNodeParams as the calls above
    /// (EmptyNodeParams for an empty node changes nothing). A value of another kind than the
    /// node's, and allocation, free, conditional and other node values (the driver changes none
    /// of them in an executable graph), are GraphNodeUpdateErrors naming the node and the rule,
    /// raised before any driver call that changes anything; the driver's refusals as above. The
    /// kernel's library, the event, the child graph's holdings and the callable are held; raw
    /// addresses (copy, fill) are the caller's to keep valid. InvalidArgumentError for a null
    /// address, size 0 or an element size other than 1, 2 or 4.
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
