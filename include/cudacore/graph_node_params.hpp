/// @file
/// The parameters of one graph node as a typed value per kind (GraphNodeParams, their variant):
/// what Graph::params reads and Graph::set_params and GraphExec's updates take. A value read back
/// wraps the node's handles, valid while its graph lives; raw addresses are the caller's to keep.
///
///     for (GraphNode node : graph.nodes()) {
///         GraphNodeParams params = graph.params(node);
///         if (auto* kernel = std::get_if<KernelNodeParams>(&params)) {
///             kernel->config.grid = 2 * kernel->config.grid.x;
///             graph.set_params(node, *kernel);
///         }
///     }
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/event.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_conditional.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/kernel_arguments.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/launch_config.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace cudacore {

/// A kernel node (no clusters nor cooperative launches).
struct KernelNodeParams {
    Kernel kernel;                ///< the kernel the node launches
    LaunchConfig config{};      ///< grid, block and dynamic shared memory
    KernelArguments arguments{};  ///< one run of bytes per kernel parameter
};

/// A copy node: `size` bytes from `source` to `destination`, or the driver's full description in
/// `general` (2D / 3D, arrays, pitched). Memory is not held.
struct CopyNodeParams {
    CUdeviceptr destination = 0;  ///< where the bytes go (device or host address)
    CUdeviceptr source = 0;       ///< where they come from (device or host address)
    std::size_t size = 0;         ///< how many bytes
    /// A copy the linear fields cannot describe (in the graph's context).
    std::optional<CUDA_MEMCPY3D> general{};

    /// A copy between two open buffers (not held) of the same size.
    static CopyNodeParams between(const Buffer& destination, const Buffer& source);
};

/// A fill node: `height` rows, `pitch` bytes apart, of `width` elements of `element_size` bytes,
/// each set to `value`'s low bytes. The memory is not held.
struct FillNodeParams {
    CUdeviceptr destination = 0;  ///< the first element (device address)
    std::uint32_t value = 0;      ///< the value each element is set to
    unsigned element_size = 1;    ///< 1, 2 or 4 bytes
    std::size_t width = 0;        ///< elements per row
    std::size_t height = 1;       ///< rows
    std::size_t pitch = 0;        ///< bytes from one row to the next (rows > 1 only)

    /// Every byte of the open `buffer` set to `value`.
    static FillNodeParams bytes(const Buffer& buffer, std::uint8_t value);
    /// Every 32-bit word of the open `buffer` (a multiple of 4 bytes) set to `pattern`.
    static FillNodeParams words(const Buffer& buffer, std::uint32_t pattern);
};

/// A host function node: `function` runs on a driver thread and must not call CUDA nor throw.
struct HostNodeParams {
    std::function<void()> function{};  ///< what runs
};

/// A child graph node: set, it copies `graph`'s nodes; read back, the node's embedded graph.
struct ChildGraphNodeParams {
    Graph graph;  ///< the embedded graph
};

/// An event record node; read back, `event` wraps the node's event without owning it.
struct EventRecordNodeParams {
    Event event;  ///< the event recorded
};

/// An event wait node, held and read back as EventRecordNodeParams.
struct EventWaitNodeParams {
    Event event;  ///< the event waited for
};

/// A memory allocation node (read only).
struct AllocationNodeParams {
    CUdeviceptr pointer = 0;                ///< the address reserved for the allocation
    std::size_t size = 0;                   ///< bytes
    CUmemPoolProps pool_properties{};       ///< where the memory lives and how it is allocated
    std::vector<CUmemAccessDesc> access{};  ///< access granted to other devices
};

/// A memory free node (read only): frees graph memory at `pointer`.
struct FreeNodeParams {
    CUdeviceptr pointer = 0;  ///< the address freed
};

/// A conditional node (read only) that Graph::add_if and the like added.
struct ConditionalNodeParams {
    ConditionalHandle handle{};  ///< the deciding value
    /// if (if/else: two bodies), while, switch
    CUgraphConditionalNodeType type = CU_GRAPH_COND_TYPE_IF;
    unsigned size = 0;             ///< number of bodies
    std::vector<Graph> bodies{};   ///< the body graphs where known
};

/// An empty node: joins its dependencies, does nothing.
struct EmptyNodeParams {};

/// A node of a kind without a typed value here: read back with its kind only, never set.
struct OtherNodeParams {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;  ///< the node's kind
};

// GraphNodeParams, their variant, is in graph_node.hpp so that graph.hpp can take it.

/// The node kind `params` is for (OtherNodeParams: its type). No driver needed.
CUgraphNodeType graph_node_params_type(const GraphNodeParams& params) noexcept;

/// The name of the alternative `params` holds ("KernelNodeParams", ...). No driver needed.
std::string graph_node_params_name(const GraphNodeParams& params);

/// Whether a node of kind `type` can take `params` through set_params. No driver needed.
bool graph_node_params_settable(CUgraphNodeType type, const GraphNodeParams& params) noexcept;

}  // namespace cudacore
