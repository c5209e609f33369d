/// @file
/// The errors of a refused graph change: GraphUpdateError when GraphExec::update() is refused,
/// GraphNodeUpdateError when a change to one node is.
#pragma once

#include "cudacore/errors.hpp"
#include "cudacore/graph_node.hpp"

#include <cuda.h>

#include <string>

namespace cudacore {

/// update() refused; the message names both nodes and the reason in words.
class GraphUpdateError : public Error {
public:
    /// Makes the error from the driver's reason and the nodes it names.
    GraphUpdateError(CUgraphExecUpdateResult reason, GraphNode node, GraphNode from_node,
                     std::string node_kind, std::string graph);
    CUgraphExecUpdateResult reason() const noexcept { return reason_; }  ///< why the driver refused
    /// The node of the new graph that blocked the update (null when the driver named none).
    GraphNode node() const noexcept { return node_; }
    /// The node of the executable graph it was matched with (null when none).
    GraphNode from_node() const noexcept { return from_node_; }

private:
    CUgraphExecUpdateResult reason_;
    GraphNode node_;
    GraphNode from_node_;
};

/// A change to one node refused, by cudacore before any driver call or by the driver; the message
/// names the call, the node, its graph and the rule broken.
class GraphNodeUpdateError : public Error {
public:
    /// Makes the error; `status` CUDA_SUCCESS when no driver call refused the change.
    GraphNodeUpdateError(std::string call, GraphNode node, std::string node_kind,
                         std::string graph, std::string rule, CUresult status = CUDA_SUCCESS);
    /// The node of the graph the executable graph was made from.
    GraphNode node() const noexcept { return node_; }
    /// The rule the change broke, in words.
    const std::string& rule() const noexcept { return rule_; }
    /// The driver's answer, or CUDA_SUCCESS when cudacore refused first.
    CUresult status() const noexcept { return status_; }

private:
    GraphNode node_;
    std::string rule_;
    CUresult status_;
};

/// "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: the topology changed" (no driver needed).
std::string graph_update_result_text(CUgraphExecUpdateResult result);

}  // namespace cudacore
