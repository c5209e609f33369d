// The boxes behind Graph and GraphExec, and the release of what an executable graph holds once
// its launches are done.
#pragma once

#include "cudacore/graph.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace cudacore::detail {

// What the driver cannot tell of a conditional node (its handle, kind and body graphs): noted by
// Graph::add_if and the like, for Graph::params. One table per graph and its body graphs.
struct ConditionalRecord {
    CUgraphNode node = nullptr;
    CUgraphConditionalHandle handle = 0;
    CUgraphConditionalNodeType type = CU_GRAPH_COND_TYPE_IF;
    std::vector<CUgraph> bodies;
};
struct ConditionalRecords {
    std::mutex mutex;
    std::vector<ConditionalRecord> records;
};

struct GraphBox {
    CUgraph handle = nullptr;
    std::shared_ptr<ContextBox> context;
    std::shared_ptr<GraphHoldings> holdings;
    // A body graph of a conditional node belongs to the node: not destroyed here, and it holds
    // the graph it belongs to.
    bool owned = true;
    std::shared_ptr<GraphBox> parent;
    // Made by the first conditional node; shared with the body graphs.
    std::shared_ptr<ConditionalRecords> conditionals;
    GraphBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    ~GraphBox();
};

// What one node's newest parameters refer to, beyond what the graph holds (two objects at most:
// a copy's buffers).
struct NodeHolding {
    std::shared_ptr<const void> first;
    std::shared_ptr<const void> second;
    bool operator==(const NodeHolding& other) const noexcept {
        return first == other.first && second == other.second;
    }
};

struct GraphExecBox {
    CUgraphExec handle = nullptr;
    std::shared_ptr<ContextBox> context;
    // The holdings of the graph it was made from (or last updated from).
    std::shared_ptr<GraphHoldings> graph_holdings;
    // What per-node updates brought in (a kernel's library, buffers, an event, a host callable,
    // a child graph's holdings), per node: a node's next update replaces its entry, and the
    // entry it replaces is released once the launches made so far are done. Under own_mutex.
    std::unordered_map<CUgraphNode, NodeHolding> node_holdings;
    mutable std::mutex own_mutex;
    // The streams it was launched on: what it holds is released once they are done.
    LaunchStreams launches;
    GraphExecBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    ~GraphExecBox();
    // Makes `holding` what `node` holds, the one it replaces released once the launches made so
    // far are done. No allocation when it holds the same objects already.
    void hold_for_node(CUgraphNode node, NodeHolding holding);
    // hold_for_node with one object, copying no shared_ptr when the node holds it already (the
    // per-node kernel update: the same library each time).
    template <class T>
    void hold_one_for_node(CUgraphNode node, const std::shared_ptr<T>& object) {
        {
            std::lock_guard lock(own_mutex);
            const auto found = node_holdings.find(node);
            if (found != node_holdings.end() && found->second.first.get() == object.get() &&
                !found->second.second)
                return;
        }
        hold_for_node(node, {object, nullptr});
    }
    // Every object the per-node updates hold now, read under the mutex (for a capture that
    // launches this graph, and for the release).
    std::vector<std::shared_ptr<const void>> node_objects() const;
};

std::shared_ptr<GraphBox> make_graph_box(CUgraph handle, std::shared_ptr<ContextBox> context,
                                         std::shared_ptr<GraphHoldings> holdings);
// The box of a graph that belongs to a node of `parent` (a child graph, a conditional body): not
// destroyed by its wrappers, which hold `parent` and share its holdings and conditional records.
std::shared_ptr<GraphBox> node_owned_graph_box(CUgraph handle, const std::shared_ptr<GraphBox>& parent);

// "executable graph 0x... on device 0".
std::string describe_exec(const GraphExecBox& box);

std::string describe_graph(CUgraph graph, int ordinal);

// The parameters of a kernel node (a new one, or an update) that launches `kernel` by its
// context-independent handle in `context`, with `config` and `arguments` (none when `count` is 0).
CUDA_KERNEL_NODE_PARAMS kernel_node_params(const LaunchConfig& config, const Kernel& kernel,
                                           CUcontext context, void** arguments, std::size_t count);

// The box of a Graph that is not moved-from, else InvalidArgumentError "Graph::<what>: ...".
const GraphBox& require_graph(const Graph& graph, const char* what);

// A linear copy of `size` bytes between two addresses (device or host: unified addressing).
CUDA_MEMCPY3D linear_copy(CUdeviceptr destination, CUdeviceptr source, std::size_t size);

// Calls the std::function<void()> at `data`, swallowing exceptions (driver host-function hook).
void CUDA_CB run_host_function(void* data);

}  // namespace cudacore::detail
