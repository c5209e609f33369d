/// @file
/// Conditional nodes: body graphs that run depending on a value a kernel sets on the device with
/// cudaGraphSetConditional (\<cuda_device_runtime_api.h\>; a cubin, no -rdc). Each launch starts
/// the value at its default. if: bodies[0] when non-zero; if/else: bodies[1] when zero; while:
/// bodies[0] while non-zero; switch: bodies[n] when the value is n. Needs a CUDA 12.4+ driver
/// (else DriverError). Guide: docs/graphs.md.
///
///     \#include \<cuda_device_runtime_api.h\>
///     // Sets the loop count once, from data only the device has.
///     extern "C" __global__ void set_count(cudaGraphConditionalHandle loop, const int* n) {
///         cudaGraphSetConditional(loop, *n > 0 ? 1u : 0u);
///     }
///     // The while body: one step, then stop when the counter runs out.
///     extern "C" __global__ void step(cudaGraphConditionalHandle loop, int* counter, int* out) {
///         *out += 1;
///         if (--*counter <= 0) cudaGraphSetConditional(loop, 0);
///     }
#pragma once

#include <cuda.h>

#include <vector>

#include "cudacore/graph_node.hpp"

namespace cudacore {

class Graph;

/// Options of a conditional handle: its default value and whether it is reset on each launch.
struct ConditionalHandleOptions {
    /// The value at the start of every launch, when assign_default is true; otherwise the value
    /// is kept from the previous launch (and starts at default_value).
    unsigned default_value = 0;
    /// Reset to default_value at the start of every launch (CU_GRAPH_COND_ASSIGN_DEFAULT).
    bool assign_default = true;
};

/// The cuGraphConditionalHandleCreate flags for `options` (no driver needed).
unsigned conditional_handle_flags(const ConditionalHandleOptions& options);

/// A plain value: the driver's handle, valid while its graph lives.
class ConditionalHandle {
public:
    ConditionalHandle() noexcept = default;
    /// Wraps a handle from cuGraphConditionalHandleCreate (owns nothing).
    explicit ConditionalHandle(CUgraphConditionalHandle handle) noexcept : handle_(handle) {}
    /// Pass this to kernels (as their cudaGraphConditionalHandle parameter).
    CUgraphConditionalHandle handle() const noexcept { return handle_; }

private:
    CUgraphConditionalHandle handle_ = 0;
};

/// A conditional node and its body graphs (1 for if and while, 2 for if/else, one per case for
/// switch), which belong to the node and keep the parent graph alive.
struct ConditionalNode {
    GraphNode node{};             ///< the conditional node, a dependency for later nodes
    std::vector<Graph> bodies;  ///< its body graphs, empty until filled with nodes
};

}  // namespace cudacore
