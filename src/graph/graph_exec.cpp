#include "cudacore/graph_exec.hpp"

#include "cudacore/errors.hpp"
#include "graph/graph_box.hpp"
#include "runtime/deferred_release.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/reset_tolerance.hpp"
#include "support/box_access.hpp"

#include <cstdio>
#include <new>
#include <utility>

namespace cudacore {

namespace detail {

void release_after_streams_idle(std::vector<std::shared_ptr<StreamBox>> streams,
                                std::vector<std::shared_ptr<GraphHoldings>> holdings) noexcept {
    // Shared between the caller and the release, so that whatever fails (a release that cannot be
    // made, or exit) the holdings are leaked rather than freed under a graph that may still run.
    std::shared_ptr<std::vector<std::shared_ptr<GraphHoldings>>> held;
    try {
        held = std::make_shared<std::vector<std::shared_ptr<GraphHoldings>>>(std::move(holdings));
        defer_release(std::move(streams), [held](bool idle) {
            if (idle) held->clear();
            else new auto(held);  // exiting: the driver frees everything
        });
    } catch (...) {
        // Out of memory: leaked (held, or what `holdings` still has).
        using Held = std::vector<std::shared_ptr<GraphHoldings>>;
        if (held) new (std::nothrow) std::shared_ptr<Held>(std::move(held));
        else new (std::nothrow) Held(std::move(holdings));
    }
}

GraphExecBox::~GraphExecBox() {
    const DriverApi* api = driver_if_loaded();
    if (handle && api && (!context || context_survives(*context, *api)))
        api->cuGraphExecDestroy(handle);  // a running launch finishes first (driver's rule)
    const bool any = (graph_holdings && graph_holdings->size() > 0) || (own && own->size() > 0);
    if (!launches.any() || !any || !api) return;
    std::vector<std::shared_ptr<GraphHoldings>> held;
    try {
        held.reserve(2);
    } catch (...) {
        // Out of memory: leaked rather than freed under a launch that may still run.
        new (std::nothrow) std::shared_ptr<GraphHoldings>(std::move(graph_holdings));
        new (std::nothrow) std::shared_ptr<GraphHoldings>(std::move(own));
        return;
    }
    held.push_back(std::move(graph_holdings));
    held.push_back(std::move(own));
    release_after_streams_idle(launches.take(), std::move(held));
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

std::string graph_update_result_text(CUgraphExecUpdateResult result) {
    switch (result) {
        case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "CU_GRAPH_EXEC_UPDATE_SUCCESS: the update succeeded";
        case CU_GRAPH_EXEC_UPDATE_ERROR:
            return "CU_GRAPH_EXEC_UPDATE_ERROR: the update failed for an unexpected reason";
        case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
            return "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: the topology changed";
        case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED:
            return "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: a node's type changed";
        case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
            return "CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: a kernel node's function changed";
        case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
            return "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: a node's parameters changed in "
                   "a way that cannot be updated";
        case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED:
            return "CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: something about a node cannot be "
                   "updated";
        case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
            return "CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE: a kernel node's "
                   "function changed in an unsupported way";
        case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED:
            return "CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: a node's attributes changed in "
                   "a way that cannot be updated";
        default: break;
    }
    return "CUgraphExecUpdateResult " + std::to_string(static_cast<int>(result));
}

namespace {
std::string node_text(GraphNode node, const std::string& kind) {
    if (!node) return "no node named";
    char text[64];
    std::snprintf(text, sizeof text, "node %p", static_cast<void*>(node.handle()));
    return kind.empty() ? std::string(text) : kind + " " + text;
}
}  // namespace

GraphUpdateError::GraphUpdateError(CUgraphExecUpdateResult reason, GraphNode node,
                                   GraphNode from_node, std::string node_kind, std::string graph)
    : Error("GraphExec::update refused (cuGraphExecUpdate): " + graph_update_result_text(reason) +
            "; blocked by " + node_text(node, node_kind) +
            (from_node ? " (" + node_text(from_node, "") + " of the executable graph)" : "") +
            (graph.empty() ? "" : " [" + graph + "]")),
      reason_(reason),
      node_(node),
      from_node_(from_node) {}

namespace {

const detail::GraphExecBox& require(const std::shared_ptr<detail::GraphExecBox>& box,
                                    const char* what) {
    if (!box || !box->handle) [[unlikely]]
        throw InvalidArgumentError(std::string("GraphExec::") + what +
                                   ": an empty (moved-from) GraphExec");
    return *box;
}

std::string describe_exec(const detail::GraphExecBox& box) {
    char text[96];
    std::snprintf(text, sizeof text, "executable graph %p on device %d",
                  static_cast<void*>(box.handle), box.context ? box.context->ordinal : -1);
    return text;
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
    if (!box_ || !box_->handle)
        throw InvalidArgumentError("Graph::instantiate: an empty (moved-from) Graph");
    const unsigned long long flags = graph_instantiate_flags(options);
    const auto& api = detail::driver();
    CUgraphExec exec = nullptr;
    detail::ContextScope scope(*box_->context);
    if (options.upload_stream) {
        CUDA_GRAPH_INSTANTIATE_PARAMS params{};
        params.flags = flags;
        params.hUploadStream = options.upload_stream->handle();
        const CUresult status = api.cuGraphInstantiateWithParams(&exec, box_->handle, &params);
        detail::check(status, "cuGraphInstantiateWithParams", [&] {
            char node[48];
            std::snprintf(node, sizeof node, "%p", static_cast<void*>(params.hErrNode_out));
            return description() + ": " + instantiate_result_text(params.result_out) +
                   (params.hErrNode_out ? std::string(", at node ") + node : std::string());
        });
    } else {
        detail::check(api.cuGraphInstantiateWithFlags(&exec, box_->handle, flags),
                      "cuGraphInstantiateWithFlags", [&] { return description(); });
    }
    auto box = std::make_shared<detail::GraphExecBox>();
    box->handle = exec;
    box->context = box_->context;
    box->graph_holdings = box_->holdings;
    return detail::BoxAccess::make<GraphExec>(std::move(box));
}

CUgraphExec GraphExec::handle() const noexcept { return box_ ? box_->handle : nullptr; }

Device GraphExec::device() const { return Device(require(box_, "device").context->ordinal); }

std::string GraphExec::description() const {
    return box_ && box_->handle ? describe_exec(*box_) : "empty executable graph";
}

void GraphExec::launch(const Stream& stream) const {
    stream.check_open("GraphExec::launch");
    const auto& box = require(box_, "launch");
    if (!detail::box_of(stream)) [[unlikely]]
        throw InvalidArgumentError("GraphExec::launch: " + describe_exec(box) +
                                   " on an empty (moved-from) Stream");
    const CUresult status = detail::driver().cuGraphLaunch(box.handle, stream.handle());
    if (status != CUDA_SUCCESS) [[unlikely]] {
        detail::throw_driver_error(status, "cuGraphLaunch", describe_exec(box) + " on " + [&] {
            char text[48];
            std::snprintf(text, sizeof text, "stream %p", static_cast<void*>(stream.handle()));
            return std::string(text);
        }());
    }
    // Its release waits for the streams it ran on (the worker is started on the first).
    box_->launches.note(detail::box_of(stream));
    // Launched into a capture: the graph being captured holds what this one needs.
    if (detail::captures_active()) [[unlikely]] {
        detail::hold_for_capture(stream.handle(), box.graph_holdings);
        if (auto own = box.own_holdings()) detail::hold_for_capture(stream.handle(), own);
    }
}

void GraphExec::upload(const Stream& stream) const {
    stream.check_open("GraphExec::upload");
    const auto& box = require(box_, "upload");
    detail::check(detail::driver().cuGraphUpload(box.handle, stream.handle()), "cuGraphUpload",
                  [&] { return describe_exec(box); });
}

void GraphExec::update(const Graph& graph) {
    const auto& box = require(box_, "update");
    if (!detail::box_of(graph) || !graph.handle())
        throw InvalidArgumentError("GraphExec::update: an empty Graph for " + describe_exec(box));
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
                               graph.description() + " into " + describe_exec(box));
    }
    detail::check(status, "cuGraphExecUpdate",
                  [&] { return graph.description() + " into " + describe_exec(box); });
    // From now on the new graph's objects are needed; the old ones only by launches in flight.
    std::shared_ptr<detail::GraphHoldings> previous =
        std::exchange(box_->graph_holdings, detail::box_of(graph)->holdings);
    // Launches in flight may use the old holdings: released once their streams are done (the
    // streams stay noted for this graph's own release too).
    if (box.launches.any())
        detail::release_after_streams_idle(box.launches.noted(), {std::move(previous)});
}

void GraphExec::set_kernel_node(GraphNode node, const LaunchConfig& config, const Kernel& kernel,
                                void** arguments, const std::size_t* sizes, std::size_t count) {
    const auto& box = require(box_, "set_kernel_arguments");
    if (!detail::box_of(kernel))
        throw InvalidArgumentError("GraphExec::set_kernel_arguments: empty Kernel");
    if (!config.is_plain())
        throw InvalidArgumentError("GraphExec::set_kernel_arguments: " + kernel.description() +
                                   " (" + to_string(config) +
                                   "): no cluster or cooperative launch in a kernel node update");
    detail::check_kernel_arguments(kernel, sizes, count);
    const CUDA_KERNEL_NODE_PARAMS params =
        detail::kernel_node_params(config, kernel, box.context->handle, arguments, count);
    detail::check(
        detail::driver().cuGraphExecKernelNodeSetParams(box.handle, node.handle(), &params),
        "cuGraphExecKernelNodeSetParams",
        [&] { return kernel.description() + " in " + describe_exec(box); });
    if (detail::box_of(kernel)->library) {
        std::lock_guard lock(box.own_mutex);
        if (!box_->own) box_->own = std::make_shared<detail::GraphHoldings>();
        box_->own->add(detail::box_of(kernel)->library);
    }
}

}  // namespace cudacore
