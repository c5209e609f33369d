#include "cudacore/graph_exec.hpp"

#include "cudacore/errors.hpp"
#include "graph/graph_box.hpp"
#include "runtime/default_stream_scope.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"
#include "support/thread_block_pool.hpp"
#include "errors/closed_object.hpp"
#include "support/cudacore_trace.hpp"

#include <cstdio>
#include <new>
#include <utility>

namespace cudacore {

namespace detail {

void GraphExecBox::hold_for_node(CUgraphNode node, NodeHolding holding) {
    NodeHolding previous;
    {
        std::lock_guard lock(own_mutex);
        NodeHolding& entry = node_holdings[node];  // allocates on a node's first update only
        if (entry == holding) return;
        previous = std::exchange(entry, std::move(holding));
    }
    // Launches in flight may still use what the node held: released once their streams are done.
    if ((previous.first || previous.second) && launches.any())
        hold_until_done(launches.noted(),
                                   {std::move(previous.first), std::move(previous.second)});
}

std::vector<std::shared_ptr<const void>> GraphExecBox::node_objects() const {
    std::vector<std::shared_ptr<const void>> objects;
    std::lock_guard lock(own_mutex);
    objects.reserve(2 * node_holdings.size());
    for (const auto& [node, holding] : node_holdings) {
        if (holding.first) objects.push_back(holding.first);
        if (holding.second) objects.push_back(holding.second);
    }
    return objects;
}

GraphExecBox::~GraphExecBox() {
    const DriverApi* api = driver_if_loaded();
    if (handle && api && (!context || context_survives(*context, *api)))
        check_release(api->cuGraphExecDestroy(handle), "cuGraphExecDestroy", [&] {
            return "executable graph on device " + std::to_string(context ? context->ordinal : -1);
        });  // a running launch finishes first (driver's rule)
    const bool any = (graph_holdings && graph_holdings->size() > 0) || !node_holdings.empty();
    if (!launches.any() || !any || !api) return;
    std::vector<std::shared_ptr<const void>> held;
    try {
        held.reserve(1 + 2 * node_holdings.size());
        held.push_back(std::move(graph_holdings));
        for (auto& [node, holding] : node_holdings) {
            held.push_back(std::move(holding.first));
            held.push_back(std::move(holding.second));
        }
    } catch (...) {
        // Out of memory: leaked rather than freed under a launch that may still run.
        new (std::nothrow) std::shared_ptr<GraphHoldings>(std::move(graph_holdings));
        new (std::nothrow) std::unordered_map<CUgraphNode, NodeHolding>(std::move(node_holdings));
        return;
    }
    hold_until_done(launches.take(), std::move(held));
}

std::string describe_exec(const GraphExecBox& box) {
    char text[96];
    std::snprintf(text, sizeof text, "executable graph %p on device %d",
                  static_cast<void*>(box.handle), box.context ? box.context->ordinal : -1);
    return text;
}

}  // namespace detail

unsigned long long graph_instantiate_flags(const GraphInstantiateOptions& options) {
    if (options.device_launch && options.auto_free_on_launch)
        throw InvalidArgumentError(
            "GraphInstantiateOptions: device_launch cannot be combined with auto_free_on_launch");
    unsigned long long flags = 0;
    if (options.auto_free_on_launch) flags |= CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
    if (options.upload_stream) flags |= CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
    if (options.device_launch) flags |= CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
    if (options.use_node_priority) flags |= CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    return flags;
}

namespace {

const detail::GraphExecBox& require(const GraphExec& exec, const char* what) {
    if (const auto& box = detail::box_of(exec)) [[likely]] return *box;
    return *detail::open_box_of(exec, ("GraphExec::" + std::string(what)).c_str());  // throws
}

const char* instantiate_result_text(CUgraphInstantiateResult result) {
    switch (result) {
        case CUDA_GRAPH_INSTANTIATE_SUCCESS: return "success";
        case CUDA_GRAPH_INSTANTIATE_ERROR: return "unexpected error";
        case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE: return "invalid structure (a cycle?)";
        case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
            return "a node's operation is not supported for device launch";
        case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
            return "nodes of several contexts are not supported for device launch";
        case CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED:
            return "a conditional handle is not used by any conditional node";
        default: break;
    }
    return "unknown result";
}

}  // namespace

GraphExec Graph::instantiate(const GraphInstantiateOptions& options) const {
    const auto& graph = *open_box("Graph::instantiate");
    const detail::CudacoreRange range(tracing::CudacoreCategory::graph, "graph instantiate");
    const unsigned long long flags = graph_instantiate_flags(options);
    const auto& api = detail::driver();
    CUgraphExec exec = nullptr;
    detail::ContextScope scope(*graph.context);
    if (options.upload_stream) {
        CUDA_GRAPH_INSTANTIATE_PARAMS params{};
        params.flags = flags;
        params.hUploadStream = options.upload_stream->handle();
        const CUresult status = api.cuGraphInstantiateWithParams(&exec, graph.handle, &params);
        detail::check(status, "cuGraphInstantiateWithParams", [&] {
            char node[48];
            std::snprintf(node, sizeof node, "%p", static_cast<void*>(params.hErrNode_out));
            return description() + ": " + instantiate_result_text(params.result_out) +
                   (params.hErrNode_out ? std::string(", at node ") + node : std::string());
        });
    } else {
        detail::check(api.cuGraphInstantiateWithFlags(&exec, graph.handle, flags),
                      "cuGraphInstantiateWithFlags", [&] { return description(); });
    }
    auto box = detail::make_pooled<detail::GraphExecBox>();
    box->handle = exec;
    box->context = graph.context;
    box->graph_holdings = graph.holdings;
    return detail::BoxAccess::make<GraphExec>(std::move(box));
}

Device GraphExec::device() const { return Device(require(*this, "device").context->ordinal); }

std::string GraphExec::description() const {
    if (is_closed()) return closed_description() + " (closed)";
    return box() ? detail::describe_exec(*box()) : "empty executable graph";
}

void GraphExec::close() {
    if (box()) close_as(detail::describe_exec(*box()));
}

void GraphExec::launch(const Stream& stream) const {
    stream.check_open("GraphExec::launch");
    const auto& box = require(*this, "launch");
    if (!detail::box_of(stream)) [[unlikely]]
        throw InvalidArgumentError("GraphExec::launch: " + detail::describe_exec(box) +
                                   " on an empty (moved-from) Stream");
    CUresult status;
    {
        const detail::DefaultStreamScope in_context(stream);
        status = detail::driver().cuGraphLaunch(box.handle, stream.handle());
    }
    if (status != CUDA_SUCCESS) [[unlikely]] {
        detail::throw_driver_error(
            status, "cuGraphLaunch", detail::describe_exec(box) + " on " + [&] {
                char text[48];
                std::snprintf(text, sizeof text, "stream %p", static_cast<void*>(stream.handle()));
                return std::string(text);
            }());
    }
    // Its release waits for the streams it ran on (the worker is started on the first).
    this->box()->launches.note(detail::box_of(stream));
    // Launched into a capture: the graph being captured holds what this one needs.
    if (detail::captures_active()) [[unlikely]] {
        detail::hold_for_capture(stream.handle(), box.graph_holdings);
        for (const auto& object : box.node_objects())
            detail::hold_for_capture(stream.handle(), object);
    }
}

void GraphExec::upload(const Stream& stream) const {
    stream.check_open("GraphExec::upload");
    const auto& box = require(*this, "upload");
    const detail::DefaultStreamScope in_context(stream);
    detail::check(detail::driver().cuGraphUpload(box.handle, stream.handle()), "cuGraphUpload",
                  [&] { return detail::describe_exec(box); });
}

void GraphExec::update(const Graph& graph) {
    const auto& box = require(*this, "update");
    if (!detail::box_of(graph) || !graph.handle())
        throw InvalidArgumentError("GraphExec::update: " +
                                   (graph.is_closed() ? graph.description() : "an empty Graph") +
                                   " for " + detail::describe_exec(box));
    CUgraphExecUpdateResultInfo info{};
    const CUresult status = detail::driver().cuGraphExecUpdate(box.handle, graph.handle(), &info);
    if (status == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
        std::string kind;
        if (info.errorNode) {
            CUgraphNodeType type{};
            if (detail::driver().cuGraphNodeGetType(info.errorNode, &type) == CUDA_SUCCESS)
                kind = graph_node_type_name(type);
        }
        throw GraphUpdateError(info.result, GraphNode(info.errorNode),
                               GraphNode(info.errorFromNode), kind,
                               graph.description() + " into " + detail::describe_exec(box));
    }
    detail::check(status, "cuGraphExecUpdate",
                  [&] { return graph.description() + " into " + detail::describe_exec(box); });
    // From now on the new graph's objects are needed; the old ones (those of earlier per-node
    // updates too: every node now has the new graph's parameters) only by launches in flight.
    std::vector<std::shared_ptr<const void>> previous;
    {
        std::lock_guard lock(box.own_mutex);
        previous.reserve(1 + 2 * box.node_holdings.size());
        previous.push_back(std::exchange(this->box()->graph_holdings, detail::box_of(graph)->holdings));
        for (auto& [node, holding] : this->box()->node_holdings) {
            previous.push_back(std::move(holding.first));
            previous.push_back(std::move(holding.second));
        }
        this->box()->node_holdings.clear();
    }
    // Launches in flight may use the old holdings: released once their streams are done (the
    // streams stay noted for this graph's own release too).
    if (box.launches.any())
        detail::hold_until_done(box.launches.noted(), std::move(previous));
}

}  // namespace cudacore
