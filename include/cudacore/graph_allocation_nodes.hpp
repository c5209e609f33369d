/// @file
/// Graph memory used by address: copy, fill and free nodes on a GraphAllocation without a Buffer,
/// and graph memory freed outside any graph. Nodes on the memory must depend on its allocation
/// node. Nothing is held. Every call throws InvalidArgumentError for an empty allocation (pointer
/// 0), a closed argument or sizes that differ, DriverError naming the call when the driver refuses.
///
///     GraphAllocation scratch = graph.add_allocation({}, bytes);
///     GraphNode in = add_copy(graph, scratch.node, scratch, input);
///     GraphNode step = graph.add_kernel(in, config, kernel, scratch.pointer, n);
///     GraphNode out = add_copy(graph, step, output, scratch);
///     graph.instantiate().launch(stream);   // no free node: the memory outlives the launch
///     free_graph_allocation(scratch, stream);  // after the launch, in stream order
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_node.hpp"
#include "cudacore/stream.hpp"

#include <cstddef>
#include <cstdint>

namespace cudacore {

/// A copy node from a buffer into graph memory of the same size.
GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const GraphAllocation& destination,
                   const Buffer& source);
/// A copy node from graph memory into a buffer of the same size.
GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const Buffer& destination,
                   const GraphAllocation& source);
/// A copy node between two graph allocations of the same size.
GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const GraphAllocation& destination,
                   const GraphAllocation& source);
/// A copy node from graph memory to `size` (== source.size) bytes of host memory at `host`.
GraphNode add_copy(Graph& graph, GraphDependencies dependencies, void* host, std::size_t size,
                   const GraphAllocation& source);
/// A copy node from `size` bytes of host memory at `host` into graph memory of that size.
GraphNode add_copy(Graph& graph, GraphDependencies dependencies, const GraphAllocation& destination,
                   const void* host, std::size_t size);
/// A fill node setting every byte of the graph allocation to `value`.
GraphNode add_fill_byte(Graph& graph, GraphDependencies dependencies,
                        const GraphAllocation& allocation, std::uint8_t value);
/// A free node for the allocation (Graph::add_free of its pointer).
GraphNode add_free(Graph& graph, GraphDependencies dependencies, const GraphAllocation& allocation);

/// Frees graph memory outside any graph, in `stream`'s order. Thread-safe.
void free_graph_allocation(const GraphAllocation& allocation, const Stream& stream);

}  // namespace cudacore
