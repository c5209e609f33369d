/// @file
/// Conditional nodes: body graphs that run depending on a value a kernel sets on the device with
/// cudaGraphSetConditional (a cubin, no -rdc). if: bodies[0] when non-zero; if/else: bodies[1]
/// when zero; while: bodies[0] while non-zero; switch: bodies[n] when the value is n. Needs a
/// CUDA 12.4+ driver (else DriverError). Guide: docs/graphs.md.
///
///     \#include \<cuda_device_runtime_api.h\>
///     extern "C" __global__ void set_count(cudaGraphConditionalHandle loop, const int* n) {
///         cudaGraphSetConditional(loop, *n > 0 ? 1u : 0u);
///     }
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

/// Options of a conditional handle.
struct ConditionalHandleOptions {
    /// The value at the start of every launch with assign_default, else only of the first.
    unsigned default_value = 0;
    bool assign_default = true;  ///< reset to default_value at the start of every launch
};

/// The cuGraphConditionalHandleCreate flags for `options` (no driver needed).
unsigned conditional_handle_flags(const ConditionalHandleOptions& options);

/// The value that decides a conditional node: a plain value, valid while its graph lives.
class ConditionalHandle {
public:
    ConditionalHandle() noexcept = default;
    /// Wraps a handle from cuGraphConditionalHandleCreate (owns nothing).
    explicit ConditionalHandle(CUgraphConditionalHandle handle) noexcept : handle_(handle) {}
    /// What kernels take as their cudaGraphConditionalHandle parameter.
    CUgraphConditionalHandle handle() const noexcept { return handle_; }

private:
    CUgraphConditionalHandle handle_ = 0;
};

/// A conditional node and its body graphs, which belong to it and keep the parent graph alive.
struct ConditionalNode {
    GraphNode node{};             ///< the conditional node, a dependency for later nodes
    std::vector<Graph> bodies;  ///< its body graphs, empty until filled with nodes
};

}  // namespace cudacore
