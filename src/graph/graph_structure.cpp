// A graph's structure read and changed: a node's dependencies and dependents, the edges, edges
// added and removed, nodes removed, clones.
#include "cudacore/graph.hpp"

#include "cudacore/errors.hpp"
#include "graph/graph_box.hpp"
#include "support/box_access.hpp"

#include <algorithm>
#include <cstdio>

namespace cudacore {

namespace {

void require_node(GraphNode node, const char* what) {
    if (!node) throw InvalidArgumentError(std::string(what) + ": a null GraphNode");
}

}  // namespace

std::vector<GraphEdge> Graph::edges() const {
    const auto& box = detail::require_graph(*this, "edges");
    const auto& api = detail::driver();
    std::size_t count = 0;
    detail::check(api.cuGraphGetEdges(box.handle, nullptr, nullptr, nullptr, &count),
                  "cuGraphGetEdges", [&] { return description(); });
    std::vector<CUgraphNode> from(count), to(count);
    std::vector<CUgraphEdgeData> data(count);
    if (count)
        detail::check(api.cuGraphGetEdges(box.handle, from.data(), to.data(), data.data(), &count),
                      "cuGraphGetEdges", [&] { return description(); });
    std::vector<GraphEdge> edges;
    edges.reserve(count);
    for (std::size_t index = 0; index < std::min(count, from.size()); ++index)
        edges.push_back(GraphEdge{GraphNode(from[index]), GraphNode(to[index]), data[index]});
    return edges;
}

namespace {

// cuGraphAddDependencies or cuGraphRemoveDependencies for one plain edge.
template <class Change>
void change_edge(const Graph& graph, GraphNode from, GraphNode to, const char* what,
                 const char* call, Change&& change) {
    require_node(from, what);
    require_node(to, what);
    const CUgraphNode from_handle = from.handle();
    const CUgraphNode to_handle = to.handle();
    detail::check(change(&from_handle, &to_handle), call, [&] {
        return "edge from " + from.description() + " to " + to.description() + " in " +
               graph.description();
    });
}

}  // namespace

void Graph::add_edge(GraphNode from, GraphNode to) {
    const auto& box = detail::require_graph(*this, "add_edge");
    change_edge(*this, from, to, "Graph::add_edge", "cuGraphAddDependencies",
                [&](const CUgraphNode* f, const CUgraphNode* t) {
                    return detail::driver().cuGraphAddDependencies(box.handle, f, t, nullptr, 1);
                });
}

void Graph::remove_edge(GraphNode from, GraphNode to) {
    const auto& box = detail::require_graph(*this, "remove_edge");
    change_edge(*this, from, to, "Graph::remove_edge", "cuGraphRemoveDependencies",
                [&](const CUgraphNode* f, const CUgraphNode* t) {
                    return detail::driver().cuGraphRemoveDependencies(box.handle, f, t, nullptr,
                                                                      1);
                });
}

void Graph::remove_node(GraphNode node) {
    const auto& box = detail::require_graph(*this, "remove_node");
    require_node(node, "Graph::remove_node");
    const std::string described = node.description();  // before the node is gone
    detail::check(detail::driver().cuGraphDestroyNode(node.handle()), "cuGraphDestroyNode",
                  [&] { return described + " in " + description(); });
    if (box.conditionals) {
        std::lock_guard lock(box.conditionals->mutex);
        std::erase_if(box.conditionals->records,
                      [&](const detail::ConditionalRecord& r) { return r.node == node.handle(); });
    }
}

Graph Graph::clone() const {
    const auto& box = detail::require_graph(*this, "clone");
    CUgraph copy = nullptr;
    detail::check(detail::driver().cuGraphClone(&copy, box.handle), "cuGraphClone",
                  [&] { return description(); });
    // Its own holdings, with everything the original holds now: the clone outlives it safely,
    // and what either takes on later stays its own.
    auto holdings = std::make_shared<detail::GraphHoldings>();
    holdings->add_all(*box.holdings);
    return detail::BoxAccess::make<Graph>(
        detail::make_graph_box(copy, box.context, std::move(holdings)));
}

GraphNode Graph::cloned_node(GraphNode original) const {
    const auto& box = detail::require_graph(*this, "cloned_node");
    require_node(original, "Graph::cloned_node");
    CUgraphNode node = nullptr;
    detail::check(detail::driver().cuGraphNodeFindInClone(&node, original.handle(), box.handle),
                  "cuGraphNodeFindInClone",
                  [&] {
                      return "original " + original.description() + ", clone " + description();
                  });
    return GraphNode(node);
}

}  // namespace cudacore
