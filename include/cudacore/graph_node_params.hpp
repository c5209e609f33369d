/// @file
/// The parameters of one graph node as a typed value per kind, and GraphNodeParams, their variant:
/// what Graph::params reads and Graph::set_params and GraphExec's updates take. A value made by
/// the caller holds what it names; one read back wraps the node's handles, valid while its graph
/// lives. Raw addresses are the caller's to keep valid (Graph::hold). Plain values.
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

/// A kernel node: the kernel, its launch configuration (no clusters nor cooperative launches) and
/// its arguments. Read back, `kernel` does not hold its library (the graph does).
struct KernelNodeParams {
    Kernel kernel;                ///< the kernel the node launches
    LaunchConfig config{};      ///< grid, block and dynamic shared memory
    KernelArguments arguments{};  ///< one run of bytes per kernel parameter
};

/// A copy node: `size` bytes from `source` to `destination` when `general` is empty, else
/// `general` is the driver's full description (2D / 3D, arrays, pitched). Memory is not held.
struct CopyNodeParams {
    CUdeviceptr destination = 0;  ///< where the bytes go (device or host address)
    CUdeviceptr source = 0;       ///< where they come from (device or host address)
    std::size_t size = 0;         ///< how many bytes
    /// A copy the linear fields cannot describe (its context is the graph's).
    std::optional<CUDA_MEMCPY3D> general{};

    /// A copy between two buffers of the same size (InvalidArgumentError when they differ or one
    /// is closed). Neither buffer is held.
    static CopyNodeParams between(const Buffer& destination, const Buffer& source);
};

/// A fill node: `height` rows of `width` elements of `element_size` bytes (1, 2 or 4), each set
/// to `value` (its low element_size bytes), rows `pitch` bytes apart (ignored for one row). The
/// memory is not held (see Graph::hold).
struct FillNodeParams {
    CUdeviceptr destination = 0;  ///< the first element (device address)
    std::uint32_t value = 0;      ///< the value each element is set to
    unsigned element_size = 1;    ///< 1, 2 or 4 bytes
    std::size_t width = 0;        ///< elements per row
    std::size_t height = 1;       ///< rows
    std::size_t pitch = 0;        ///< bytes from one row to the next (rows > 1 only)

    /// Every byte of `buffer` set to `value` (InvalidArgumentError when it is closed).
    static FillNodeParams bytes(const Buffer& buffer, std::uint8_t value);
    /// Every 32-bit word of `buffer` set to `pattern` (InvalidArgumentError when it is closed or
    /// its size is not a multiple of 4).
    static FillNodeParams words(const Buffer& buffer, std::uint32_t pattern);
};

/// A host function node: `function` runs on a driver thread; it must not call CUDA nor throw.
/// Set on a node, the graph holds the callable.
struct HostNodeParams {
    std::function<void()> function{};  ///< what runs
};

/// A child graph node: set, the node copies `graph`'s nodes and the graph holds what it holds;
/// read back, the node's own embedded graph (it keeps the outer graph alive).
struct ChildGraphNodeParams {
    Graph graph;  ///< the embedded graph
};

/// An event record node: records `event` when the graph reaches the node. Set on a node, the
/// graph holds the event. Read back, `event` wraps the node's event without owning it (valid
/// while the graph, which holds it, lives).
struct EventRecordNodeParams {
    Event event;  ///< the event recorded
};

/// An event wait node: waits for `event`'s last record before later nodes run. Held and read
/// back as EventRecordNodeParams.
struct EventWaitNodeParams {
    Event event;  ///< the event waited for
};

/// A memory allocation node (read only: the driver changes no allocation node): `size` bytes at
/// `pointer`, from a pool with `pool_properties`, accessible as `access` says (beyond the owning
/// device).
struct AllocationNodeParams {
    CUdeviceptr pointer = 0;                ///< the address reserved for the allocation
    std::size_t size = 0;                   ///< bytes
    CUmemPoolProps pool_properties{};       ///< where the memory lives and how it is allocated
    std::vector<CUmemAccessDesc> access{};  ///< access granted to other devices
};

/// A memory free node (read only: the driver changes no free node): frees graph memory at
/// `pointer`.
struct FreeNodeParams {
    CUdeviceptr pointer = 0;  ///< the address freed
};

/// A conditional node (read only): its handle, kind, body count and body graphs; read only for
/// nodes Graph::add_if and the like added (others read as OtherNodeParams).
struct ConditionalNodeParams {
    ConditionalHandle handle{};  ///< the deciding value
    /// if (also if/else: two bodies), while, switch
    CUgraphConditionalNodeType type = CU_GRAPH_COND_TYPE_IF;
    unsigned size = 0;             ///< number of bodies
    std::vector<Graph> bodies{};   ///< the body graphs where known
};

/// An empty node: joins its dependencies, does nothing.
struct EmptyNodeParams {};

/// A node of a kind without a typed value here (external semaphores, batched memory operations,
/// conditional nodes the driver cannot describe): read back with its kind only, never set.
struct OtherNodeParams {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;  ///< the node's kind
};

// GraphNodeParams, the variant of the values above, is named in graph_node.hpp (so that
// graph.hpp can declare the calls that take it).

/// The node kind `params` is for (CU_GRAPH_NODE_TYPE_KERNEL for KernelNodeParams, ...;
/// OtherNodeParams::type for OtherNodeParams). No driver needed.
CUgraphNodeType graph_node_params_type(const GraphNodeParams& params) noexcept;

/// The name of the alternative `params` holds ("KernelNodeParams", "CopyNodeParams", ...), for
/// messages. No driver needed.
std::string graph_node_params_name(const GraphNodeParams& params);

/// Whether a node of kind `type` can take `params` through Graph::set_params: the kinds match
/// and the kind is one the driver lets a graph change (not allocation, free, conditional or
/// other nodes). No driver needed.
bool graph_node_params_settable(CUgraphNodeType type, const GraphNodeParams& params) noexcept;

}  // namespace cudacore
