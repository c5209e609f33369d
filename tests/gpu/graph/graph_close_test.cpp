// close() on Graph and GraphExec on a real GPU: the definition and the executable graph are
// destroyed when the closed object was their last holder, what a launched executable graph holds
// is released only after that launch's work, later calls name the call and the closed graph,
// copies are closed with it while reset() drops one share, closing twice is harmless.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "runtime/release/release.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

using cudacore::test::expect_invalid;

// A graph of one host node that adds 1 to `counter`.
Graph counting_graph(const Device& device, std::atomic<int>& counter) {
    Graph graph = Graph::create(device);
    graph.add_host_function({}, [&counter] { counter.fetch_add(1); });
    return graph;
}

TEST(GraphCloseGpu, TheDefinitionGoesWithItsLastHolderAndLaterCallsRefuse) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    std::atomic<int> counter{0};
    Graph graph = counting_graph(device, counter);
    auto kept = std::make_shared<int>(7);
    std::weak_ptr<int> watch = kept;
    graph.hold(std::move(kept));
    Graph copy = graph;
    GraphExec exec = graph.instantiate();
    graph.close();
    EXPECT_TRUE(graph.is_closed());
    EXPECT_EQ(graph.handle(), nullptr);
    expect_invalid([&] { graph.node_count(); }, {"Graph::node_count: graph 0x", "is closed (Graph::close was called"});
    expect_invalid([&] { graph.instantiate(); }, {"Graph::instantiate"});
    expect_invalid([&] { graph.add_host_function({}, [] {}); }, {"Graph::add_host_function"});
    expect_invalid([&] { exec.update(graph); }, {"GraphExec::update: graph 0x", "(closed) for executable graph"});
    graph.close();  // nothing more
    // The copy is closed with it; the executable graph holds its own share and keeps working.
    EXPECT_TRUE(copy.is_closed());
    EXPECT_EQ(copy.handle(), nullptr);
    expect_invalid([&] { copy.node_count(); }, {"Graph::node_count: graph 0x", "is closed (Graph::close was called"});
    exec.launch(stream);
    stream.sync();
    EXPECT_EQ(counter.load(), 1);
    EXPECT_FALSE(watch.expired());
    // The last holder goes: what the graph held goes with the definition.
    exec.close();
    detail::wait_for_deferred_releases();
    EXPECT_TRUE(watch.expired());
}

TEST(GraphExecCloseGpu, ALaunchedGraphsHoldingsOutliveCloseUntilItsWorkIsDone) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    std::atomic<int> counter{0};
    std::optional<GraphExec> exec;
    std::weak_ptr<int> watch;
    {
        Graph graph = counting_graph(device, counter);
        auto kept = std::make_shared<int>(7);
        watch = kept;
        graph.hold(std::move(kept));
        exec = graph.instantiate();
    }
    std::atomic<bool> go{false};
    stream.launch_host_func([&go] {
        while (!go.load()) std::this_thread::sleep_for(1ms);
    });
    exec->launch(stream);
    GraphExec copy = *exec;
    exec->close();  // closes the copy too: destroyed, its holdings kept for the launch queued
    EXPECT_TRUE(copy.is_closed());
    copy.close();  // nothing more
    EXPECT_TRUE(exec->is_closed());
    EXPECT_EQ(exec->handle(), nullptr);
    expect_invalid([&] { exec->launch(stream); }, {"GraphExec::launch: executable graph", "is closed (GraphExec::close was called"});
    expect_invalid([&] { exec->upload(stream); }, {"GraphExec::upload"});
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(watch.expired());  // the launch has not run yet
    EXPECT_EQ(counter.load(), 0);
    go = true;
    stream.sync();
    EXPECT_EQ(counter.load(), 1);  // the launch ran in full after close()
    detail::wait_for_deferred_releases();
    EXPECT_TRUE(watch.expired());
    exec->close();  // nothing more
}

TEST(GraphExecCloseGpu, AfterResetACopyKeepsLaunching) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    std::atomic<int> counter{0};
    GraphExec exec = counting_graph(device, counter).instantiate();
    GraphExec copy = exec;
    exec.reset();
    EXPECT_FALSE(exec.is_closed());
    EXPECT_EQ(exec.handle(), nullptr);
    expect_invalid([&] { exec.launch(stream); }, {"GraphExec::launch", "is empty (moved from or reset"});
    EXPECT_FALSE(copy.is_closed());
    copy.launch(stream);
    copy.launch(stream);
    stream.sync();
    EXPECT_EQ(counter.load(), 2);
}

}  // namespace
