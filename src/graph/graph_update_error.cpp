// The refusals of an executable graph's update, whole (GraphUpdateError) or per node
// (GraphNodeUpdateError): each names the driver's reason and the node that blocked it.
#include "cudacore/graph_update_error.hpp"

#include <cstdio>
#include <string>
#include <utility>

namespace cudacore {

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

std::string exec_node_text(GraphNode node, const std::string& kind) {
    char text[48];
    std::snprintf(text, sizeof text, "node %p", static_cast<void*>(node.handle()));
    return (kind.empty() ? std::string() : kind + " ") + text;
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

GraphNodeUpdateError::GraphNodeUpdateError(std::string call, GraphNode node, std::string node_kind,
                                           std::string graph, std::string rule, CUresult status)
    : Error(call + " refused for " + exec_node_text(node, node_kind) + " of " + graph + ": " +
            (status == CUDA_SUCCESS
                 ? std::string()
                 : driver_status_name(status) + " (" + driver_status_text(status) + "); ") +
            rule),
      node_(node),
      rule_(std::move(rule)),
      status_(status) {}

}  // namespace cudacore
