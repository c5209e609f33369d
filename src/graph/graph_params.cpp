// Graph::params and Graph::set_params: one node's parameters read and changed as the typed value
// of its kind (graph_node_params.hpp).
#include "cudacore/graph_node_params.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/graph_exec.hpp"
#include "graph/graph_box.hpp"
#include "runtime/kernel_box.hpp"
#include "support/box_access.hpp"

#include <cstring>

namespace cudacore {

namespace {

// A kernel node's argument bytes: from kernelParams (one pointer per parameter) or from the
// packed buffer `extra` names (CU_LAUNCH_PARAM_BUFFER_POINTER), sized by the kernel's parameters.
KernelArguments read_arguments(const CUDA_KERNEL_NODE_PARAMS& params, const Kernel& kernel) {
    const std::vector<KernelParameter>& layout = kernel.parameters();
    KernelArguments arguments;
    if (params.kernelParams) {
        for (std::size_t index = 0; index < layout.size(); ++index)
            arguments.append(params.kernelParams[index], layout[index].size);
        return arguments;
    }
    const unsigned char* buffer = nullptr;
    for (void** entry = params.extra; entry && *entry != CU_LAUNCH_PARAM_END; entry += 2)
        if (*entry == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buffer = static_cast<const unsigned char*>(entry[1]);
    if (!buffer && !layout.empty())
        throw Error("Graph::params: " + kernel.description() +
                    ": the node gives neither kernelParams nor a parameter buffer");
    for (const KernelParameter& parameter : layout)
        arguments.append(buffer + parameter.offset, parameter.size);
    return arguments;
}

// The driver's check for `node` (`call` failed): names the call, the node and the graph.
void check_graph_node(CUresult status, const char* call, GraphNode node, const Graph& graph) {
    detail::check(status, call, [&] { return node.description() + " in " + graph.description(); });
}

KernelNodeParams read_kernel(GraphNode node, const Graph& graph) {
    CUDA_KERNEL_NODE_PARAMS params{};
    check_graph_node(detail::driver().cuGraphKernelNodeGetParams(node.handle(), &params),
               "cuGraphKernelNodeGetParams", node, graph);
    // A kernel launched through a CUkernel handle names it in `kern`, or (captured launches of a
    // CUkernel passed as a CUfunction) in `func`.
    CUkernel handle = params.kern ? params.kern : reinterpret_cast<CUkernel>(params.func);
    Kernel kernel = Kernel::from_handle(handle);
    LaunchConfig config;
    config.grid = Dim3{params.gridDimX, params.gridDimY, params.gridDimZ};
    config.block = Dim3{params.blockDimX, params.blockDimY, params.blockDimZ};
    config.shared_memory_bytes = params.sharedMemBytes;
    KernelArguments arguments = read_arguments(params, kernel);
    return KernelNodeParams{std::move(kernel), config, std::move(arguments)};
}

bool is_linear_type(CUmemorytype type) {
    return type == CU_MEMORYTYPE_UNIFIED || type == CU_MEMORYTYPE_DEVICE ||
           type == CU_MEMORYTYPE_HOST;
}

CUdeviceptr linear_address(CUmemorytype type, CUdeviceptr device, const void* host) {
    return type == CU_MEMORYTYPE_HOST ? reinterpret_cast<CUdeviceptr>(host) : device;
}

CopyNodeParams read_copy(GraphNode node, const Graph& graph) {
    CUDA_MEMCPY3D copy{};
    check_graph_node(detail::driver().cuGraphMemcpyNodeGetParams(node.handle(), &copy),
               "cuGraphMemcpyNodeGetParams", node, graph);
    CopyNodeParams params;
    const bool linear = is_linear_type(copy.srcMemoryType) && is_linear_type(copy.dstMemoryType) &&
                        copy.Height <= 1 && copy.Depth <= 1 && copy.srcXInBytes == 0 &&
                        copy.srcY == 0 && copy.srcZ == 0 && copy.srcLOD == 0 &&
                        copy.dstXInBytes == 0 && copy.dstY == 0 && copy.dstZ == 0 &&
                        copy.dstLOD == 0;
    if (!linear) {
        params.general = copy;
        return params;
    }
    params.destination = linear_address(copy.dstMemoryType, copy.dstDevice, copy.dstHost);
    params.source = linear_address(copy.srcMemoryType, copy.srcDevice, copy.srcHost);
    params.size = copy.WidthInBytes;
    return params;
}

FillNodeParams read_fill(GraphNode node, const Graph& graph) {
    CUDA_MEMSET_NODE_PARAMS fill{};
    check_graph_node(detail::driver().cuGraphMemsetNodeGetParams(node.handle(), &fill),
               "cuGraphMemsetNodeGetParams", node, graph);
    return FillNodeParams{fill.dst, fill.value, fill.elementSize, fill.width, fill.height,
                          fill.pitch};
}

HostNodeParams read_host(GraphNode node, const Graph& graph) {
    CUDA_HOST_NODE_PARAMS host{};
    check_graph_node(detail::driver().cuGraphHostNodeGetParams(node.handle(), &host),
               "cuGraphHostNodeGetParams", node, graph);
    // Ours: the callable the graph holds. Otherwise the raw function with its data.
    if (host.fn == &detail::run_host_function && host.userData)
        return HostNodeParams{*static_cast<const std::function<void()>*>(host.userData)};
    CUhostFn function = host.fn;
    void* data = host.userData;
    return HostNodeParams{[function, data] { function(data); }};
}

Event read_event(const detail::GraphBox& box, CUevent handle) {
    // Not owned: the graph holds the event (or whoever recorded it into a capture does).
    auto event = std::make_shared<detail::EventBox>();
    event->handle = handle;
    event->context = box.context;
    event->owned = false;
    event->never_reuse();
    return detail::BoxAccess::make<Event>(std::move(event));
}

AllocationNodeParams read_allocation(GraphNode node, const Graph& graph) {
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    check_graph_node(detail::driver().cuGraphMemAllocNodeGetParams(node.handle(), &alloc),
               "cuGraphMemAllocNodeGetParams", node, graph);
    AllocationNodeParams params;
    params.pointer = alloc.dptr;
    params.size = alloc.bytesize;
    params.pool_properties = alloc.poolProps;
    if (alloc.accessDescs)
        params.access.assign(alloc.accessDescs, alloc.accessDescs + alloc.accessDescCount);
    return params;
}

// A Graph of a node's own graph (node_owned_graph_box: a child graph, a conditional body).
Graph node_owned_graph(CUgraph handle, const std::shared_ptr<detail::GraphBox>& parent) {
    return detail::BoxAccess::make<Graph>(detail::node_owned_graph_box(handle, parent));
}

GraphNodeParams read_conditional(GraphNode node, const std::shared_ptr<detail::GraphBox>& box) {
    if (box->conditionals) {
        std::lock_guard lock(box->conditionals->mutex);
        for (const detail::ConditionalRecord& record : box->conditionals->records) {
            if (record.node != node.handle()) continue;
            ConditionalNodeParams params;
            params.handle = ConditionalHandle(record.handle);
            params.type = record.type;
            params.size = static_cast<unsigned>(record.bodies.size());
            for (CUgraph body : record.bodies) params.bodies.push_back(node_owned_graph(body, box));
            return params;
        }
    }
    return OtherNodeParams{CU_GRAPH_NODE_TYPE_CONDITIONAL};  // the driver has no query for it
}

}  // namespace

// Long because: one case per node kind, each a driver query and its conversion.
GraphNodeParams Graph::params(GraphNode node) const {
    const auto& box = detail::require_graph(*this, "params");
    if (!node)
        throw InvalidArgumentError("Graph::params: a null GraphNode (" + description() + ")");
    const auto& api = detail::driver();
    const CUgraphNodeType type = node.type();
    switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: return read_kernel(node, *this);
        case CU_GRAPH_NODE_TYPE_MEMCPY: return read_copy(node, *this);
        case CU_GRAPH_NODE_TYPE_MEMSET: return read_fill(node, *this);
        case CU_GRAPH_NODE_TYPE_HOST: return read_host(node, *this);
        case CU_GRAPH_NODE_TYPE_GRAPH: {
            CUgraph child = nullptr;
            check_graph_node(api.cuGraphChildGraphNodeGetGraph(node.handle(), &child),
                       "cuGraphChildGraphNodeGetGraph", node, *this);
            return ChildGraphNodeParams{node_owned_graph(child, this->box())};
        }
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD: {
            CUevent event = nullptr;
            check_graph_node(api.cuGraphEventRecordNodeGetEvent(node.handle(), &event),
                       "cuGraphEventRecordNodeGetEvent", node, *this);
            return EventRecordNodeParams{read_event(box, event)};
        }
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
            CUevent event = nullptr;
            check_graph_node(api.cuGraphEventWaitNodeGetEvent(node.handle(), &event),
                       "cuGraphEventWaitNodeGetEvent", node, *this);
            return EventWaitNodeParams{read_event(box, event)};
        }
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return read_allocation(node, *this);
        case CU_GRAPH_NODE_TYPE_MEM_FREE: {
            CUdeviceptr pointer = 0;
            check_graph_node(api.cuGraphMemFreeNodeGetParams(node.handle(), &pointer),
                       "cuGraphMemFreeNodeGetParams", node, *this);
            return FreeNodeParams{pointer};
        }
        case CU_GRAPH_NODE_TYPE_CONDITIONAL: return read_conditional(node, this->box());
        case CU_GRAPH_NODE_TYPE_EMPTY: return EmptyNodeParams{};
        default: return OtherNodeParams{type};
    }
}

namespace {

// The kernel node update: checked as add_kernel checks a new node; the graph holds the library.
void graph_set_kernel(const detail::GraphBox& box, GraphNode node, const KernelNodeParams& value,
                const Graph& graph) {
    const auto& kernel_box = detail::box_of(value.kernel);
    if (!kernel_box)
        throw InvalidArgumentError("Graph::set_params: an empty Kernel for " + node.description() +
                                   " in " + graph.description());
    if (!value.config.is_plain())
        throw InvalidArgumentError("Graph::set_params: " + value.kernel.description() + " (" +
                                   to_string(value.config) + ") for " + node.description() +
                                   ": kernel nodes take no cluster or cooperative launch");
    detail::check_kernel_arguments(value.kernel, value.arguments.sizes().data(),
                                   value.arguments.count());
    std::vector<void*> pointers = value.arguments.pointers();
    const CUDA_KERNEL_NODE_PARAMS params =
        detail::kernel_node_params(value.config, value.kernel, box.context->handle,
                                   pointers.data(), pointers.size());
    check_graph_node(detail::driver().cuGraphKernelNodeSetParams(node.handle(), &params),
               "cuGraphKernelNodeSetParams", node, graph);
    if (kernel_box->library) box.holdings->add(kernel_box->library);
}

void graph_set_fill(GraphNode node, const FillNodeParams& value, const Graph& graph) {
    if (value.element_size != 1 && value.element_size != 2 && value.element_size != 4)
        throw InvalidArgumentError("Graph::set_params: fill element size " +
                                   std::to_string(value.element_size) + " (1, 2 or 4) for " +
                                   node.description() + " in " + graph.description());
    CUDA_MEMSET_NODE_PARAMS params{};
    params.dst = value.destination;
    params.value = value.value;
    params.elementSize = value.element_size;
    params.width = value.width;
    params.height = value.height;
    // One row: its own width (the driver checks pitch >= width even then).
    params.pitch = value.height > 1 ? value.pitch : value.width * value.element_size;
    check_graph_node(detail::driver().cuGraphMemsetNodeSetParams(node.handle(), &params),
               "cuGraphMemsetNodeSetParams", node, graph);
}

void graph_set_host(const detail::GraphBox& box, GraphNode node, const HostNodeParams& value,
              const Graph& graph) {
    if (!value.function)
        throw InvalidArgumentError("Graph::set_params: an empty function for " +
                                   node.description() + " in " + graph.description());
    auto callable = std::make_shared<std::function<void()>>(value.function);
    CUDA_HOST_NODE_PARAMS params{};
    params.fn = detail::run_host_function;
    params.userData = callable.get();
    check_graph_node(detail::driver().cuGraphHostNodeSetParams(node.handle(), &params),
               "cuGraphHostNodeSetParams", node, graph);
    box.holdings->add(std::move(callable));
}

void graph_set_child(const detail::GraphBox& box, GraphNode node, const ChildGraphNodeParams& value,
               const Graph& graph) {
    const auto& child = detail::box_of(value.graph);
    if (!child || !child->handle)
        throw InvalidArgumentError("Graph::set_params: an empty Graph for " + node.description() +
                                   " in " + graph.description());
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_GRAPH;
    params.graph.graph = child->handle;
    check_graph_node(detail::driver().cuGraphNodeSetParams(node.handle(), &params),
               "cuGraphNodeSetParams", node, graph);
    box.holdings->add_all(*child->holdings);
}

template <class Set>
void graph_set_event(const detail::GraphBox& box, GraphNode node, const Event& event,
                     const char* call, const Graph& graph, Set&& set) {
    const auto& event_box = detail::box_of(event);
    if (!event_box)
        throw InvalidArgumentError("Graph::set_params: an empty Event for " + node.description() +
                                   " in " + graph.description());
    event_box->never_reuse();  // the graph's launches use it: never handed out again
    check_graph_node(set(event_box->handle), call, node, graph);
    box.holdings->add(event_box);
}

}  // namespace

void Graph::set_params(GraphNode node, const GraphNodeParams& params) {
    const auto& box = detail::require_graph(*this, "set_params");
    if (!node)
        throw InvalidArgumentError("Graph::set_params: a null GraphNode (" + description() + ")");
    const CUgraphNodeType type = node.type();
    if (!graph_node_params_settable(type, params)) {
        const bool same_kind = graph_node_params_type(params) == type;
        // The same error as GraphExec's per-node changes: one type for "this node won't take it".
        throw GraphNodeUpdateError(
            "Graph::set_params", node, graph_node_type_name(type), description(),
            same_kind ? "the driver does not let a graph change a " + graph_node_type_name(type) +
                            " node's parameters"
                      : "it is a " + graph_node_type_name(type) + " node, not one for " +
                            graph_node_params_name(params));
    }
    const auto& api = detail::driver();
    const CUgraphNode handle = node.handle();
    // The graph's context current: the driver checks addresses (copies, fills) against it.
    detail::ContextScope scope(*box.context);
    if (auto* kernel = std::get_if<KernelNodeParams>(&params)) {
        graph_set_kernel(box, node, *kernel, *this);
    } else if (auto* copy = std::get_if<CopyNodeParams>(&params)) {
        const CUDA_MEMCPY3D copy_params =
            copy->general ? *copy->general
                          : detail::linear_copy(copy->destination, copy->source, copy->size);
        check_graph_node(api.cuGraphMemcpyNodeSetParams(handle, &copy_params),
                   "cuGraphMemcpyNodeSetParams", node, *this);
    } else if (auto* fill = std::get_if<FillNodeParams>(&params)) {
        graph_set_fill(node, *fill, *this);
    } else if (auto* host = std::get_if<HostNodeParams>(&params)) {
        graph_set_host(box, node, *host, *this);
    } else if (auto* child = std::get_if<ChildGraphNodeParams>(&params)) {
        graph_set_child(box, node, *child, *this);
    } else if (auto* record = std::get_if<EventRecordNodeParams>(&params)) {
        graph_set_event(box, node, record->event, "cuGraphEventRecordNodeSetEvent", *this,
                  [&](CUevent event) { return api.cuGraphEventRecordNodeSetEvent(handle, event); });
    } else if (auto* wait = std::get_if<EventWaitNodeParams>(&params)) {
        graph_set_event(box, node, wait->event, "cuGraphEventWaitNodeSetEvent", *this,
                  [&](CUevent event) { return api.cuGraphEventWaitNodeSetEvent(handle, event); });
    }
    // EmptyNodeParams: nothing to change.
}

}  // namespace cudacore
