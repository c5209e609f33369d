// A node of a graph: its kind, its dependencies and dependents, its description.
#include "cudacore/graph_node.hpp"

#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace cudacore {

namespace {

std::string node_address(CUgraphNode node) {
    char text[48];
    std::snprintf(text, sizeof text, "node %p", static_cast<void*>(node));
    return text;
}

void require_node(GraphNode node, const char* what) {
    if (!node) throw InvalidArgumentError(std::string(what) + ": a null GraphNode");
}

// The nodes `query` lists for `node` (with edge data: CUDA 13 refuses a query that would drop
// non-default edges), asked twice: once for the count, once for the nodes.
template <class Query>
std::vector<GraphNode> linked_nodes(GraphNode node, const char* call, const char* what,
                                    Query&& query) {
    require_node(node, what);
    std::size_t count = 0;
    detail::check(query(nullptr, nullptr, &count), call, [&] { return node.description(); });
    std::vector<GraphNode> nodes(count);
    std::vector<CUgraphEdgeData> edges(count);
    if (count)
        detail::check(query(reinterpret_cast<CUgraphNode*>(nodes.data()), edges.data(), &count),
                      call, [&] { return node.description(); });
    nodes.resize(std::min(count, nodes.size()));
    return nodes;
}

}  // namespace

std::string graph_node_type_name(CUgraphNodeType type) {
    switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
        case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
        case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
        case CU_GRAPH_NODE_TYPE_HOST: return "host";
        case CU_GRAPH_NODE_TYPE_GRAPH: return "graph";
        case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event wait";
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event record";
        case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: return "external semaphore signal";
        case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return "external semaphore wait";
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "memory allocation";
        case CU_GRAPH_NODE_TYPE_MEM_FREE: return "memory free";
        case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "batch memory operation";
        case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
        default: break;
    }
    return "node type " + std::to_string(static_cast<int>(type));
}

CUgraphNodeType GraphNode::type() const {
    CUgraphNodeType type{};
    detail::check(detail::driver().cuGraphNodeGetType(handle_, &type), "cuGraphNodeGetType", [&] {
        char text[48];
        std::snprintf(text, sizeof text, "graph node %p", static_cast<void*>(handle_));
        return std::string(text);
    });
    return type;
}

std::vector<GraphNode> GraphNode::dependencies() const {
    return linked_nodes(*this, "cuGraphNodeGetDependencies", "GraphNode::dependencies",
                        [&](CUgraphNode* nodes, CUgraphEdgeData* edges, std::size_t* count) {
                            return detail::driver().cuGraphNodeGetDependencies(handle_, nodes,
                                                                               edges, count);
                        });
}

std::vector<GraphNode> GraphNode::dependents() const {
    return linked_nodes(*this, "cuGraphNodeGetDependentNodes", "GraphNode::dependents",
                        [&](CUgraphNode* nodes, CUgraphEdgeData* edges, std::size_t* count) {
                            return detail::driver().cuGraphNodeGetDependentNodes(handle_, nodes,
                                                                                 edges, count);
                        });
}

std::string GraphNode::description() const {
    if (!handle_) return "null node";
    CUgraphNodeType type{};
    const detail::DriverApi* api = detail::driver_if_loaded();
    if (api && api->cuGraphNodeGetType(handle_, &type) == CUDA_SUCCESS)
        return graph_node_type_name(type) + " " + node_address(handle_);
    return node_address(handle_);
}

}  // namespace cudacore
