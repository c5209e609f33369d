// Changes to one node of an executable graph: enabling, and new parameters for each kind the
// driver can change in place. A change of the wrong kind is refused before the driver; a
// refusal by the driver becomes a GraphNodeUpdateError naming the node, its kind and the rule.
// What the new parameters refer to is held per node (GraphExecBox::hold_for_node).
#include "cudacore/graph_exec.hpp"

#include "cudacore/errors.hpp"
#include "errors/closed_object.hpp"
#include "graph/graph_box.hpp"
#include "graph/graph_exec_update.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/kernel_box.hpp"
#include "support/box_access.hpp"

#include <cstdio>
#include <utility>

namespace cudacore {

namespace {

// What the driver requires of every per-node change, beyond the rules of each kind.
constexpr const char* kSameGraphRule =
    "; the node must be a node of the graph the executable graph was made from, not removed since";

constexpr const char* kEnableRule =
    "only kernel, memcpy and memset nodes can be enabled or disabled";

// The node's kind, as the driver says; empty when it cannot say (the node is no node).
std::string exec_node_kind_name(GraphNode node) {
    CUgraphNodeType type{};
    if (detail::driver().cuGraphNodeGetType(node.handle(), &type) != CUDA_SUCCESS) return {};
    return graph_node_type_name(type);
}

// A refusal by the driver of `driver_call`.
[[noreturn]] void exec_refused_by_driver(const detail::GraphExecBox& box, const char* what,
                                         const char* driver_call, GraphNode node, CUresult status,
                                         const std::string& rule) {
    throw GraphNodeUpdateError(std::string("GraphExec::") + what + " (" + driver_call + ")", node,
                               exec_node_kind_name(node), detail::describe_exec(box),
                               rule + kSameGraphRule, status);
}

// The driver's answer (`status`) to `driver_call` changing a node of `kind`: a refusal names the
// kind's update rule; success leaves the node holding `holding` (what it held before is released
// once the launches made so far are done).
void settle_exec_node_change(detail::GraphExecBox& box, const char* what, const char* driver_call,
                             GraphNode node, CUgraphNodeType kind, CUresult status,
                             detail::NodeHolding holding) {
    if (status != CUDA_SUCCESS)
        exec_refused_by_driver(box, what, driver_call, node, status,
                               detail::exec_update_rule(kind));
    box.hold_for_node(node.handle(), std::move(holding));
}

const detail::BufferBox& open_exec_buffer(const detail::GraphExecBox& box, const Buffer& buffer,
                                          const char* what) {
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string("GraphExec::") + what + ": " + buffer.description() +
                                   " is closed (" + detail::describe_exec(box) + ")");
    return *detail::box_of(buffer);
}

void set_exec_buffer_fill(detail::GraphExecBox& box, const char* what, GraphNode node,
                          const Buffer& buffer, unsigned value, unsigned element_size) {
    const auto& target = open_exec_buffer(box, buffer, what);
    if (target.size % element_size != 0)
        throw InvalidArgumentError(std::string("GraphExec::") + what + ": " + buffer.description() +
                                   " is not a multiple of " + std::to_string(element_size) +
                                   " bytes");
    CUDA_MEMSET_NODE_PARAMS fill{};
    fill.dst = target.handle;
    fill.value = value;
    fill.elementSize = element_size;
    fill.width = target.size / element_size;
    fill.height = 1;
    detail::set_exec_fill(box, what, node, fill, {detail::holding_of(buffer), nullptr});
}

using ExecSetEvent = CUresult (*)(CUgraphExec, CUgraphNode, CUevent);

void set_exec_event(detail::GraphExecBox& box, const char* what, const char* driver_call,
                    ExecSetEvent set, CUgraphNodeType kind, GraphNode node, const Event& event) {
    const auto& event_box = detail::box_of(event);
    if (!event_box)
        throw InvalidArgumentError(std::string("GraphExec::") + what + ": an empty Event for " +
                                   detail::describe_exec(box));
    detail::require_exec_node_kind(box, what, node, kind);
    event_box->never_reuse();  // the graph's launches use it: never handed out again
    const CUresult status = set(box.handle, node.handle(), event_box->handle);
    settle_exec_node_change(box, what, driver_call, node, kind, status, {event_box, nullptr});
}

}  // namespace

namespace detail {

GraphExecBox& exec_for_node_change(const GraphExec& exec, const char* what, GraphNode node) {
    const auto& box = box_of(exec);
    if (!box) [[unlikely]]
        open_box_of(exec, ("GraphExec::" + std::string(what)).c_str());  // throws
    if (!node) [[unlikely]]
        throw InvalidArgumentError(std::string("GraphExec::") + what + ": a null node for " +
                                   describe_exec(*box));
    return *box;
}

std::string exec_update_rule(CUgraphNodeType kind) {
    switch (kind) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
            return "a kernel node keeps its device and context, and takes no kernel using dynamic "
                   "parallelism or device-side graph launch where the previous one did not";
        case CU_GRAPH_NODE_TYPE_MEMCPY:
            return "a copy keeps the context and the kind of memory (host or device: its "
                   "direction) of each side, and stays one-dimensional and non-empty";
        case CU_GRAPH_NODE_TYPE_MEMSET:
            return "a fill keeps the kind and context of its memory and stays one-dimensional and "
                   "non-empty; a new size or element size only where the node's resources allow";
        case CU_GRAPH_NODE_TYPE_GRAPH:
            return "the new child graph has the topology and node order of the node's graph, and "
                   "each of its nodes follows the update rules of its kind";
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        case CU_GRAPH_NODE_TYPE_MEM_FREE:
            return "memory allocation and free nodes cannot be changed in an executable graph "
                   "(instantiate again)";
        case CU_GRAPH_NODE_TYPE_CONDITIONAL:
            return "conditional nodes cannot be changed in an executable graph (change the nodes "
                   "of their bodies through update())";
        default: break;
    }
    return "a " + graph_node_type_name(kind) + " node takes new parameters of its own kind";
}

void require_exec_node_kind(const GraphExecBox& box, const char* what, GraphNode node,
                            CUgraphNodeType wanted) {
    CUgraphNodeType type{};
    const CUresult status = driver().cuGraphNodeGetType(node.handle(), &type);
    if (status != CUDA_SUCCESS) [[unlikely]]
        exec_refused_by_driver(box, what, "cuGraphNodeGetType", node, status,
                               "the node is not a valid graph node");
    if (type != wanted) [[unlikely]]
        throw GraphNodeUpdateError(
            std::string("GraphExec::") + what, node, graph_node_type_name(type), describe_exec(box),
            "a node takes new parameters of its own kind only (" + graph_node_type_name(wanted) +
                " parameters given for this " + graph_node_type_name(type) + " node)");
}

void refuse_exec_node_change(const GraphExecBox& box, const char* what, GraphNode node,
                             const std::string& rule) {
    // Decided from the value alone; the node's kind, where the driver is open, only names it.
    throw GraphNodeUpdateError(std::string("GraphExec::") + what, node,
                               driver_if_loaded() ? exec_node_kind_name(node) : std::string(),
                               describe_exec(box), rule);
}

void set_exec_copy(GraphExecBox& box, const char* what, GraphNode node, const CUDA_MEMCPY3D& copy,
                   NodeHolding holding) {
    require_exec_node_kind(box, what, node, CU_GRAPH_NODE_TYPE_MEMCPY);
    const CUresult status = driver().cuGraphExecMemcpyNodeSetParams(box.handle, node.handle(),
                                                                    &copy, box.context->handle);
    settle_exec_node_change(box, what, "cuGraphExecMemcpyNodeSetParams", node,
                            CU_GRAPH_NODE_TYPE_MEMCPY, status, std::move(holding));
}

void set_exec_fill(GraphExecBox& box, const char* what, GraphNode node,
                   const CUDA_MEMSET_NODE_PARAMS& fill, NodeHolding holding) {
    require_exec_node_kind(box, what, node, CU_GRAPH_NODE_TYPE_MEMSET);
    const CUresult status = driver().cuGraphExecMemsetNodeSetParams(box.handle, node.handle(),
                                                                    &fill, box.context->handle);
    settle_exec_node_change(box, what, "cuGraphExecMemsetNodeSetParams", node,
                            CU_GRAPH_NODE_TYPE_MEMSET, status, std::move(holding));
}

}  // namespace detail

void GraphExec::set_enabled(GraphNode node, bool enabled) {
    auto& box = detail::exec_for_node_change(*this, "set_enabled", node);
    CUgraphNodeType type{};
    const auto& api = detail::driver();
    const CUresult type_status = api.cuGraphNodeGetType(node.handle(), &type);
    if (type_status != CUDA_SUCCESS)
        exec_refused_by_driver(box, "set_enabled", "cuGraphNodeGetType", node, type_status,
                               "the node is not a valid graph node");
    if (type != CU_GRAPH_NODE_TYPE_KERNEL && type != CU_GRAPH_NODE_TYPE_MEMCPY &&
        type != CU_GRAPH_NODE_TYPE_MEMSET)
        throw GraphNodeUpdateError("GraphExec::set_enabled", node, graph_node_type_name(type),
                                   detail::describe_exec(box), kEnableRule);
    const CUresult status = api.cuGraphNodeSetEnabled(box.handle, node.handle(), enabled ? 1 : 0);
    if (status != CUDA_SUCCESS)
        exec_refused_by_driver(box, "set_enabled", "cuGraphNodeSetEnabled", node, status,
                               kEnableRule);
}

bool GraphExec::is_enabled(GraphNode node) const {
    const auto& box = detail::exec_for_node_change(*this, "is_enabled", node);
    unsigned enabled = 0;
    const CUresult status =
        detail::driver().cuGraphNodeGetEnabled(box.handle, node.handle(), &enabled);
    if (status != CUDA_SUCCESS)
        exec_refused_by_driver(box, "is_enabled", "cuGraphNodeGetEnabled", node, status,
                               kEnableRule);
    return enabled != 0;
}

void GraphExec::set_copy(GraphNode node, const Buffer& destination, const Buffer& source) {
    auto& box = detail::exec_for_node_change(*this, "set_copy", node);
    const auto& to = open_exec_buffer(box, destination, "set_copy");
    const auto& from = open_exec_buffer(box, source, "set_copy");
    if (to.size != from.size)
        throw InvalidArgumentError("GraphExec::set_copy: sizes differ: source " +
                                   source.description() + ", destination " +
                                   destination.description());
    detail::set_exec_copy(box, "set_copy", node,
                          detail::linear_copy(to.handle, from.handle, to.size),
                          {detail::holding_of(destination), detail::holding_of(source)});
}

void GraphExec::set_copy(GraphNode node, void* host, std::size_t size, const Buffer& source) {
    auto& box = detail::exec_for_node_change(*this, "set_copy", node);
    const auto& from = open_exec_buffer(box, source, "set_copy");
    if (!host || size != from.size)
        throw InvalidArgumentError("GraphExec::set_copy: host destination of " +
                                   std::to_string(size) + " bytes" + (host ? "" : " (null)") +
                                   " for " + source.description());
    detail::set_exec_copy(
        box, "set_copy", node,
        detail::linear_copy(reinterpret_cast<CUdeviceptr>(host), from.handle, size),
        {detail::holding_of(source), nullptr});
}

void GraphExec::set_copy(GraphNode node, const Buffer& destination, const void* host,
                         std::size_t size) {
    auto& box = detail::exec_for_node_change(*this, "set_copy", node);
    const auto& to = open_exec_buffer(box, destination, "set_copy");
    if (!host || size != to.size)
        throw InvalidArgumentError("GraphExec::set_copy: host source of " + std::to_string(size) +
                                   " bytes" + (host ? "" : " (null)") + " for " +
                                   destination.description());
    detail::set_exec_copy(box, "set_copy", node,
                          detail::linear_copy(to.handle, reinterpret_cast<CUdeviceptr>(host), size),
                          {detail::holding_of(destination), nullptr});
}

void GraphExec::set_fill_byte(GraphNode node, const Buffer& buffer, std::uint8_t value) {
    auto& box = detail::exec_for_node_change(*this, "set_fill_byte", node);
    set_exec_buffer_fill(box, "set_fill_byte", node, buffer, value, 1);
}

void GraphExec::set_fill_uint32(GraphNode node, const Buffer& buffer, std::uint32_t pattern) {
    auto& box = detail::exec_for_node_change(*this, "set_fill_uint32", node);
    set_exec_buffer_fill(box, "set_fill_uint32", node, buffer, pattern, 4);
}

void GraphExec::set_host_function(GraphNode node, std::function<void()> function) {
    auto& box = detail::exec_for_node_change(*this, "set_host_function", node);
    if (!function)
        throw InvalidArgumentError("GraphExec::set_host_function: an empty function for " +
                                   detail::describe_exec(box));
    detail::require_exec_node_kind(box, "set_host_function", node, CU_GRAPH_NODE_TYPE_HOST);
    auto callable = std::make_shared<std::function<void()>>(std::move(function));
    CUDA_HOST_NODE_PARAMS params{};
    params.fn = detail::run_host_function;
    params.userData = callable.get();
    const CUresult status =
        detail::driver().cuGraphExecHostNodeSetParams(box.handle, node.handle(), &params);
    settle_exec_node_change(box, "set_host_function", "cuGraphExecHostNodeSetParams", node,
                            CU_GRAPH_NODE_TYPE_HOST, status, {std::move(callable), nullptr});
}

void GraphExec::set_child(GraphNode node, const Graph& child) {
    auto& box = detail::exec_for_node_change(*this, "set_child", node);
    const auto& child_box = detail::box_of(child);
    if (!child_box || !child_box->handle)
        throw InvalidArgumentError("GraphExec::set_child: an empty Graph for " +
                                   detail::describe_exec(box));
    detail::require_exec_node_kind(box, "set_child", node, CU_GRAPH_NODE_TYPE_GRAPH);
    const CUresult status = detail::driver().cuGraphExecChildGraphNodeSetParams(
        box.handle, node.handle(), child_box->handle);
    if (status != CUDA_SUCCESS)
        exec_refused_by_driver(
            box, "set_child", "cuGraphExecChildGraphNodeSetParams", node, status,
            detail::exec_update_rule(CU_GRAPH_NODE_TYPE_GRAPH) + " (" + child.description() + ")");
    box.hold_for_node(node.handle(), {child_box->holdings, nullptr});
}

void GraphExec::set_event_record(GraphNode node, const Event& event) {
    auto& box = detail::exec_for_node_change(*this, "set_event_record", node);
    set_exec_event(box, "set_event_record", "cuGraphExecEventRecordNodeSetEvent",
                   detail::driver().cuGraphExecEventRecordNodeSetEvent,
                   CU_GRAPH_NODE_TYPE_EVENT_RECORD, node, event);
}

void GraphExec::set_event_wait(GraphNode node, const Event& event) {
    auto& box = detail::exec_for_node_change(*this, "set_event_wait", node);
    set_exec_event(box, "set_event_wait", "cuGraphExecEventWaitNodeSetEvent",
                   detail::driver().cuGraphExecEventWaitNodeSetEvent, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
                   node, event);
}

void GraphExec::set_kernel_node(GraphNode node, const LaunchConfig& config, const Kernel& kernel,
                                void** arguments, const std::size_t* sizes, std::size_t count) {
    auto& box = detail::exec_for_node_change(*this, "set_kernel_arguments", node);
    const auto& kernel_box = detail::box_of(kernel);
    if (!kernel_box)
        throw InvalidArgumentError("GraphExec::set_kernel_arguments: an empty Kernel for " +
                                   detail::describe_exec(box));
    if (!config.is_plain())
        throw InvalidArgumentError("GraphExec::set_kernel_arguments: " + kernel.description() +
                                   " (" + to_string(config) +
                                   "): no cluster or cooperative launch in a kernel node update");
    detail::check_kernel_arguments(kernel, sizes, count);
    const CUDA_KERNEL_NODE_PARAMS params =
        detail::kernel_node_params(config, kernel, box.context->handle, arguments, count);
    const CUresult status =
        detail::driver().cuGraphExecKernelNodeSetParams(box.handle, node.handle(), &params);
    if (status != CUDA_SUCCESS) [[unlikely]] {
        // The hot path of a per-node update asks nothing more of the driver; a refused node of
        // another kind is named as such (the driver changes nothing for one).
        detail::require_exec_node_kind(box, "set_kernel_arguments", node,
                                       CU_GRAPH_NODE_TYPE_KERNEL);
        exec_refused_by_driver(box, "set_kernel_arguments", "cuGraphExecKernelNodeSetParams", node,
                               status,
                               detail::exec_update_rule(CU_GRAPH_NODE_TYPE_KERNEL) + " (" +
                                   kernel.description() + ")");
    }
    box.hold_one_for_node(node.handle(), kernel_box->library);  // no copy when unchanged
}

}  // namespace cudacore
