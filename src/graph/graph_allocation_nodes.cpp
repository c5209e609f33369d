// Copy, fill and free nodes on graph memory by address, and graph memory freed on a stream.
#include "cudacore/graph_allocation_nodes.hpp"

#include "cudacore/errors.hpp"
#include "graph/graph_box.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <cstdio>

namespace cudacore {

namespace {

std::string describe(const GraphAllocation& allocation) {
    char text[96];
    std::snprintf(text, sizeof text, "graph allocation of %zu bytes at 0x%llx", allocation.size,
                  static_cast<unsigned long long>(allocation.pointer));
    return text;
}

// One side of a copy: its address, size and name.
struct Side {
    CUdeviceptr address = 0;
    std::size_t size = 0;
    std::string name;
};

Side side(const GraphAllocation& allocation, const char* call) {
    if (!allocation.pointer)
        throw InvalidArgumentError(std::string(call) + ": an empty GraphAllocation (pointer 0)");
    return {allocation.pointer, allocation.size, describe(allocation)};
}

Side side(const Buffer& buffer, const char* call) {
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string(call) + ": " + buffer.description() + " is closed");
    return {buffer.handle(), buffer.size(), buffer.description()};
}

Side host_side(const void* host, std::size_t size, const char* role) {
    return {reinterpret_cast<CUdeviceptr>(host), size,
            std::string("host ") + role + " of " + std::to_string(size) + " bytes" + (host ? "" : " (null)")};
}

GraphNode copy_node(Graph& graph, const GraphDependencies& dependencies, const Side& to,
                    const Side& from) {
    const auto& box = detail::require_graph(graph, "add_copy");
    if (!to.address || !from.address || to.size != from.size)
        throw InvalidArgumentError("add_copy: sizes differ or a side is null: source " + from.name +
                                   ", destination " + to.name + " (" + graph.description() + ")");
    const CUDA_MEMCPY3D copy = detail::linear_copy(to.address, from.address, to.size);
    CUgraphNode node = nullptr;
    detail::check(detail::driver().cuGraphAddMemcpyNode(&node, box.handle, dependencies.handles(),
                                                        dependencies.size(), &copy, box.context->handle),
                  "cuGraphAddMemcpyNode",
                  [&] { return "memcpy node from " + from.name + " to " + to.name + " in " + graph.description(); });
    return GraphNode(node);
}

}  // namespace

GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const GraphAllocation& destination,
                   const Buffer& source) {
    return copy_node(graph, dependencies, side(destination, "add_copy"), side(source, "add_copy"));
}

GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const Buffer& destination,
                   const GraphAllocation& source) {
    return copy_node(graph, dependencies, side(destination, "add_copy"), side(source, "add_copy"));
}

GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const GraphAllocation& destination,
                   const GraphAllocation& source) {
    return copy_node(graph, dependencies, side(destination, "add_copy"), side(source, "add_copy"));
}

GraphNode add_copy(Graph& graph, GraphDependencies dependencies, void* host, std::size_t size,
                   const GraphAllocation& source) {
    return copy_node(graph, dependencies, host_side(host, size, "destination"), side(source, "add_copy"));
}

GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const GraphAllocation& destination,
                   const void* host, std::size_t size) {
    return copy_node(graph, dependencies, side(destination, "add_copy"), host_side(host, size, "source"));
}

GraphNode add_fill_byte(Graph& graph, GraphDependencies dependencies,
                        const GraphAllocation& allocation, std::uint8_t value) {
    const Side target = side(allocation, "add_fill_byte");
    const auto& box = detail::require_graph(graph, "add_fill_byte");
    CUDA_MEMSET_NODE_PARAMS params{};
    params.dst = target.address;
    params.value = value;
    params.elementSize = 1;
    params.width = target.size;
    params.height = 1;
    CUgraphNode node = nullptr;
    detail::check(detail::driver().cuGraphAddMemsetNode(&node, box.handle, dependencies.handles(),
                                                        dependencies.size(), &params, box.context->handle),
                  "cuGraphAddMemsetNode",
                  [&] { return "memset node on " + target.name + " in " + graph.description(); });
    return GraphNode(node);
}

GraphNode add_free(Graph& graph, GraphDependencies dependencies, const GraphAllocation& allocation) {
    side(allocation, "add_free");
    return graph.add_free(std::move(dependencies), allocation.pointer);
}

void free_graph_allocation(const GraphAllocation& allocation, const Stream& stream) {
    const Side target = side(allocation, "free_graph_allocation");
    const auto& box = detail::open_box_of(stream, "free_graph_allocation");
    detail::ContextScope scope(*box->context);
    detail::check(detail::driver().cuMemFreeAsync(target.address, box->handle), "cuMemFreeAsync",
                  [&] {
                      char text[48];
                      std::snprintf(text, sizeof text, " on stream %p", static_cast<void*>(box->handle));
                      return target.name + text;
                  });
}

}  // namespace cudacore
