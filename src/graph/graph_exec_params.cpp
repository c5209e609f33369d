// GraphExec::set_params: a node's new parameters as a typed value (graph_node_params.hpp),
// dispatched on its kind to the per-node changes of graph_exec_nodes.cpp. Kinds the driver
// cannot change in an executable graph are refused here, before any driver call.
#include "cudacore/graph_exec.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/graph_node_params.hpp"
#include "graph/graph_exec_update.hpp"

#include <type_traits>
#include <variant>
#include <vector>

namespace cudacore {

namespace {

// Kernel arguments up to this many go through an array on the stack (no allocation).
constexpr std::size_t kStackArguments = 16;

CUDA_MEMSET_NODE_PARAMS exec_fill_params(const detail::GraphExecBox& box,
                                         const FillNodeParams& fill) {
    if (fill.element_size != 1 && fill.element_size != 2 && fill.element_size != 4)
        throw InvalidArgumentError("GraphExec::set_params: FillNodeParams::element_size " +
                                   std::to_string(fill.element_size) + " (1, 2 or 4) for " +
                                   detail::describe_exec(box));
    if (!fill.destination || fill.width == 0 || fill.height == 0)
        throw InvalidArgumentError(
            "GraphExec::set_params: FillNodeParams with a null destination "
            "or nothing to fill for " +
            detail::describe_exec(box));
    CUDA_MEMSET_NODE_PARAMS params{};
    params.dst = fill.destination;
    params.value = fill.value;
    params.elementSize = fill.element_size;
    params.width = fill.width;
    params.height = fill.height;
    params.pitch = fill.height > 1 ? fill.pitch : 0;
    return params;
}

CUDA_MEMCPY3D exec_copy_params(const detail::GraphExecBox& box, const CopyNodeParams& copy) {
    if (copy.general) return *copy.general;
    if (!copy.destination || !copy.source || copy.size == 0)
        throw InvalidArgumentError(
            "GraphExec::set_params: CopyNodeParams with a null address or "
            "size 0 for " +
            detail::describe_exec(box));
    return detail::linear_copy(copy.destination, copy.source, copy.size);
}

}  // namespace

void GraphExec::set_params(GraphNode node, const GraphNodeParams& params) {
    auto& box = detail::exec_for_node_change(*this, "set_params", node);
    std::visit(
        [&](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, KernelNodeParams>) {
                const std::size_t count = value.arguments.count();
                void* on_stack[kStackArguments];
                std::vector<void*> on_heap;
                void** pointers = on_stack;
                if (count > kStackArguments) {
                    on_heap.resize(count);
                    pointers = on_heap.data();
                }
                for (std::size_t i = 0; i < count; ++i)
                    pointers[i] = const_cast<void*>(value.arguments.data(i));
                set_kernel_node(node, value.config, value.kernel, pointers,
                                value.arguments.sizes().data(), count);
            } else if constexpr (std::is_same_v<T, CopyNodeParams>) {
                // Raw addresses: the caller's to keep valid (what the node held goes).
                detail::set_exec_copy(box, "set_params", node, exec_copy_params(box, value), {});
            } else if constexpr (std::is_same_v<T, FillNodeParams>) {
                detail::set_exec_fill(box, "set_params", node, exec_fill_params(box, value), {});
            } else if constexpr (std::is_same_v<T, HostNodeParams>) {
                set_host_function(node, value.function);
            } else if constexpr (std::is_same_v<T, ChildGraphNodeParams>) {
                set_child(node, value.graph);
            } else if constexpr (std::is_same_v<T, EventRecordNodeParams>) {
                set_event_record(node, value.event);
            } else if constexpr (std::is_same_v<T, EventWaitNodeParams>) {
                set_event_wait(node, value.event);
            } else if constexpr (std::is_same_v<T, EmptyNodeParams>) {
                // Nothing to change; the kind is still checked.
                detail::require_exec_node_kind(box, "set_params", node, CU_GRAPH_NODE_TYPE_EMPTY);
            } else {
                // Allocation, free, conditional and other nodes: no driver call changes them.
                detail::refuse_exec_node_change(
                    box, "set_params", node,
                    detail::exec_update_rule(graph_node_params_type(params)) + " (" +
                        graph_node_params_name(params) + " given)");
            }
        },
        params);
}

}  // namespace cudacore
