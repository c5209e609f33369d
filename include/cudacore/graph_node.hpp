/// @file
/// GraphNode: one node of a Graph, and GraphDependencies: the nodes a new node runs after.
///
/// A GraphNode is a plain value (the driver's CUgraphNode); the node belongs to its graph and is
/// valid while that graph (or a copy of it) lives. Nodes are compared by handle.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cudacore {

// The typed parameter values, one per node kind (defined in graph_node_params.hpp).
struct KernelNodeParams;
struct CopyNodeParams;
struct FillNodeParams;
struct HostNodeParams;
struct ChildGraphNodeParams;
struct EventRecordNodeParams;
struct EventWaitNodeParams;
struct AllocationNodeParams;
struct FreeNodeParams;
struct ConditionalNodeParams;
struct EmptyNodeParams;
struct OtherNodeParams;

/// The parameters of one node, one alternative per kind (each defined and documented in
/// graph_node_params.hpp; include it to use them): what Graph::params reads and Graph::set_params
/// writes.
using GraphNodeParams =
    std::variant<KernelNodeParams, CopyNodeParams, FillNodeParams, HostNodeParams,
                 ChildGraphNodeParams, EventRecordNodeParams, EventWaitNodeParams,
                 AllocationNodeParams, FreeNodeParams, ConditionalNodeParams, EmptyNodeParams,
                 OtherNodeParams>;

/// A node of a Graph, used as a dependency of the nodes added after it.
class GraphNode {
public:
    GraphNode() noexcept = default;
    /// Wraps a node handle (owns nothing: the node belongs to its graph).
    explicit GraphNode(CUgraphNode handle) noexcept : handle_(handle) {}

    /// The driver's node (null for a default-constructed GraphNode).
    CUgraphNode handle() const noexcept { return handle_; }
    /// Not null.
    explicit operator bool() const noexcept { return handle_ != nullptr; }
    /// The node's kind (cuGraphNodeGetType). Throws DriverError for an invalid node.
    CUgraphNodeType type() const;
    /// The nodes this one runs after (cuGraphNodeGetDependencies, with edge data so that edges of
    /// any kind are listed). InvalidArgumentError for a null node, DriverError naming the call
    /// and the node otherwise. Safe from several threads while the graph is not changed.
    std::vector<GraphNode> dependencies() const;
    /// The nodes that run after this one (cuGraphNodeGetDependentNodes); throws as
    /// dependencies().
    std::vector<GraphNode> dependents() const;
    /// "kernel node 0x..." (its kind asked of the driver; "node 0x..." when that fails): used in
    /// messages. Never throws but for memory.
    std::string description() const;

    /// The same object (identity.hpp says how each type compares).
    bool operator==(const GraphNode& other) const noexcept = default;

private:
    CUgraphNode handle_ = nullptr;
};

/// One edge of a graph: `to` runs after `from` (Graph::edges). `data` is the driver's edge data
/// (all zero for a plain full dependency; programmatic launch edges set its ports and type).
struct GraphEdge {
    GraphNode from{};           ///< the node that runs first
    GraphNode to{};             ///< the node that depends on it
    CUgraphEdgeData data{};   ///< the edge's kind (default: a full dependency)
};

/// "kernel", "memcpy", "memset", "host", "graph" (child graph), "empty", "event wait", "event
/// record", "memory allocation", "memory free", "conditional", ... (no driver needed).
std::string graph_node_type_name(CUgraphNodeType type);

/// The nodes a new node depends on: none ({}), one node, a braced list or a vector (copied:
/// a node has few dependencies).
class GraphDependencies {
public:
    GraphDependencies() noexcept = default;
    /// One node (implicit, so a GraphNode passes where dependencies are expected).
    GraphDependencies(const GraphNode& node) : nodes_{node} {}
    /// A braced list of nodes.
    GraphDependencies(std::initializer_list<GraphNode> nodes) : nodes_(nodes) {}
    /// The nodes of a vector.
    GraphDependencies(std::vector<GraphNode> nodes) noexcept : nodes_(std::move(nodes)) {}

    /// GraphNode is layout-compatible with CUgraphNode: the driver reads the array directly.
    const CUgraphNode* handles() const noexcept {
        return nodes_.empty() ? nullptr : reinterpret_cast<const CUgraphNode*>(nodes_.data());
    }
    /// How many nodes.
    std::size_t size() const noexcept { return nodes_.size(); }

private:
    std::vector<GraphNode> nodes_;
};

static_assert(sizeof(GraphNode) == sizeof(CUgraphNode));

}  // namespace cudacore
