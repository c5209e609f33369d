/// @file
/// GraphNode: one node of a Graph (a plain value, valid while its graph lives), and
/// GraphDependencies: the nodes a new node runs after.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cudacore {

// The typed parameter values, defined in graph_node_params.hpp.
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

/// The parameters of one node, one alternative per kind (graph_node_params.hpp).
using GraphNodeParams =
    std::variant<KernelNodeParams, CopyNodeParams, FillNodeParams, HostNodeParams,
                 ChildGraphNodeParams, EventRecordNodeParams, EventWaitNodeParams,
                 AllocationNodeParams, FreeNodeParams, ConditionalNodeParams, EmptyNodeParams,
                 OtherNodeParams>;

/// A node of a Graph, compared by handle; safe from several threads while the graph is unchanged.
class GraphNode {
public:
    GraphNode() noexcept = default;
    /// Wraps a node handle (the node belongs to its graph).
    explicit GraphNode(CUgraphNode handle) noexcept : handle_(handle) {}

    /// The driver's node (null when default-constructed).
    CUgraphNode handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }  ///< not null
    CUgraphNodeType type() const;  ///< the node's kind; DriverError for an invalid node
    /// The nodes this one runs after; InvalidArgumentError for a null node.
    std::vector<GraphNode> dependencies() const;
    /// The nodes that run after this one; throws as dependencies().
    std::vector<GraphNode> dependents() const;
    /// "kernel node 0x..." ("node 0x..." when the driver cannot say).
    std::string description() const;

    bool operator==(const GraphNode& other) const noexcept = default;  ///< the same node

private:
    CUgraphNode handle_ = nullptr;
};

/// One edge of a graph: `to` runs after `from`, with the driver's edge data.
struct GraphEdge {
    GraphNode from{};           ///< the node that runs first
    GraphNode to{};             ///< the node that depends on it
    CUgraphEdgeData data{};   ///< the edge's kind (zero: a full dependency)
};

/// "kernel", "memcpy", "memset", "host", "graph", "empty", ... (no driver needed).
std::string graph_node_type_name(CUgraphNodeType type);

/// The nodes a new node depends on: none ({}), one node, a braced list or a vector.
class GraphDependencies {
public:
    GraphDependencies() noexcept = default;
    GraphDependencies(const GraphNode& node) : nodes_{node} {}  ///< one node (implicit)
    /// A braced list of nodes.
    GraphDependencies(std::initializer_list<GraphNode> nodes) : nodes_(nodes) {}
    /// The nodes of a vector.
    GraphDependencies(std::vector<GraphNode> nodes) noexcept : nodes_(std::move(nodes)) {}

    /// The nodes as the driver's array (GraphNode is layout-compatible with CUgraphNode).
    const CUgraphNode* handles() const noexcept {
        return nodes_.empty() ? nullptr : reinterpret_cast<const CUgraphNode*>(nodes_.data());
    }
    std::size_t size() const noexcept { return nodes_.size(); }  ///< how many nodes

private:
    std::vector<GraphNode> nodes_;
};

static_assert(sizeof(GraphNode) == sizeof(CUgraphNode));

}  // namespace cudacore
