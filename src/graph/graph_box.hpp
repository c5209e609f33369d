// The boxes behind Graph and GraphExec, and the release of what an executable graph holds once
// its launches are done.
#pragma once

#include "cudacore/graph.hpp"
#include "runtime/capture_registry.hpp"
#include "runtime/launch_streams.hpp"
#include "runtime/runtime_handles.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cudacore::detail {

struct GraphBox {
    CUgraph handle = nullptr;
    std::shared_ptr<ContextBox> context;
    std::shared_ptr<GraphHoldings> holdings;
    // A body graph of a conditional node belongs to the node: not destroyed here, and it holds
    // the graph it belongs to.
    bool owned = true;
    std::shared_ptr<GraphBox> parent;
    GraphBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    ~GraphBox();
};

struct GraphExecBox {
    CUgraphExec handle = nullptr;
    std::shared_ptr<ContextBox> context;
    // The holdings of the graph it was made from (or last updated from).
    std::shared_ptr<GraphHoldings> graph_holdings;
    // What per-node updates brought in (kernels' libraries): made by the first one, under
    // own_mutex (most executable graphs never need it).
    std::shared_ptr<GraphHoldings> own;
    mutable std::mutex own_mutex;
    // The streams it was launched on: what it holds is released once they are done.
    LaunchStreams launches;
    GraphExecBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    ~GraphExecBox();
    // `own`, read under its mutex (null when no update brought anything in).
    std::shared_ptr<GraphHoldings> own_holdings() const {
        std::lock_guard lock(own_mutex);
        return own;
    }
};

std::shared_ptr<GraphBox> make_graph_box(CUgraph handle, std::shared_ptr<ContextBox> context,
                                         std::shared_ptr<GraphHoldings> holdings);

// Keeps `holdings` until the streams in `streams` have finished their work, then drops them, on
// the deferred-release worker (runtime/deferred_release.hpp: a destructor never blocks). At exit
// they are leaked: the driver frees everything.
void release_after_streams_idle(std::vector<std::shared_ptr<StreamBox>> streams,
                                std::vector<std::shared_ptr<GraphHoldings>> holdings) noexcept;

std::string describe_graph(CUgraph graph, int ordinal);

// The parameters of a kernel node (a new one, or an update) that launches `kernel` by its
// context-independent handle in `context`, with `config` and `arguments` (none when `count` is 0).
CUDA_KERNEL_NODE_PARAMS kernel_node_params(const LaunchConfig& config, const Kernel& kernel,
                                           CUcontext context, void** arguments, std::size_t count);

// Calls the std::function<void()> at `data`, swallowing exceptions (driver host-function hook).
void CUDA_CB run_host_function(void* data);

}  // namespace cudacore::detail
