// The pieces of GraphExec's per-node changes shared by the typed calls (graph_exec_nodes.cpp)
// and set_params (graph_exec_params.cpp): the checks made before the driver, the driver calls
// whose refusals become GraphNodeUpdateErrors naming the node and the rule, and the rules in
// words.
#pragma once

#include "cudacore/graph_exec.hpp"
#include "graph/graph_box.hpp"

#include <memory>
#include <string>

namespace cudacore::detail {

// The box of the executable graph a per-node change `what` ("set_copy") is made on:
// InvalidArgumentError for an empty GraphExec or a null node.
GraphExecBox& exec_for_node_change(const GraphExec& exec, const char* what,
                                   GraphNode node);

// The driver's rules for changing a node of `kind` in an executable graph, in words.
std::string exec_update_rule(CUgraphNodeType kind);

// Refuses (GraphNodeUpdateError, status CUDA_SUCCESS), before any driver call that changes it,
// a node that is not of kind `wanted`; its kind is asked of the driver (a handle the driver
// refuses is a GraphNodeUpdateError with the driver's status).
void require_exec_node_kind(const GraphExecBox& box, const char* what, GraphNode node,
                            CUgraphNodeType wanted);

// A refusal decided before the driver from the parameters alone (their kind cannot be changed).
[[noreturn]] void refuse_exec_node_change(const GraphExecBox& box, const char* what, GraphNode node,
                                          const std::string& rule);

// New copy / fill parameters for `node` (its kind checked first); the driver's refusal is a
// GraphNodeUpdateError; then the node holds `holding` (what it held before is released once the
// launches made so far are done).
void set_exec_copy(GraphExecBox& box, const char* what, GraphNode node, const CUDA_MEMCPY3D& copy,
                   NodeHolding holding);
void set_exec_fill(GraphExecBox& box, const char* what, GraphNode node,
                   const CUDA_MEMSET_NODE_PARAMS& fill, NodeHolding holding);

}  // namespace cudacore::detail
