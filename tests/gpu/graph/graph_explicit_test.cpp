// Graphs built node by node on a real GPU: every node kind, conditional nodes of each kind with
// the condition set on the device, refused updates naming the node, per-node kernel arguments,
// graph memory nodes, instantiate options and DOT output.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "graph_kernel_sources.hpp"

#include <atomic>
#include <optional>
#include <vector>

namespace {

using namespace cudacore;

constexpr unsigned kCount = 512;
constexpr LaunchConfig kConfig{.grid = (kCount + 255) / 256, .block = 256};

class GraphExplicit : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        stream_.emplace(device_->create_stream());
        ProgramOptions options;
        options.name = "graph_kernels";
        options.arch = device_->arch();
        code_.emplace(Program(test::kGraphKernelsSource, SourceType::cxx, options)
                          .compile(CodeType::cubin));
        options.name = "conditional_kernels";
        conditional_.emplace(Program(test::kConditionalKernelsSource, SourceType::cxx, options)
                                 .compile(CodeType::cubin));
        pinned_ = std::make_shared<LegacyPinnedMemoryResource>(*device_);
    }
    const Device& device() const { return *device_; }
    const Stream& stream() const { return *stream_; }
    Kernel kernel(const char* name) const { return code_->get_kernel(name); }
    Kernel conditional(const char* name) const { return conditional_->get_kernel(name); }
    Buffer pinned_ints(std::size_t count, int value = 0) const {
        Buffer buffer = pinned_->allocate(count * sizeof(int), stream());
        std::fill(buffer.span<int>().begin(), buffer.span<int>().end(), value);
        return buffer;
    }
    Buffer pinned_unsigned(unsigned value) const {
        Buffer buffer = pinned_->allocate(sizeof(unsigned), stream());
        buffer.span<unsigned>()[0] = value;
        return buffer;
    }
    void run(const Graph& graph) const {
        GraphExec exec = graph.instantiate();
        exec.launch(stream());
        stream().sync();
    }

    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::optional<ObjectCode> code_;
    std::optional<ObjectCode> conditional_;
    std::shared_ptr<LegacyPinnedMemoryResource> pinned_;
};

TEST_F(GraphExplicit, EveryNodeKindRunsInDependencyOrder) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Buffer copy = device().allocate(kCount * sizeof(int), stream());
    Buffer host = pinned_ints(kCount);
    Buffer input = pinned_ints(kCount, 7);
    stream().sync();
    auto calls = std::make_shared<std::atomic<int>>(0);
    Event done = device().create_event();

    Graph child = Graph::create(device());
    child.add_kernel({}, kConfig, kernel("add_value"), copy, 100, kCount);

    Graph graph = Graph::create(device());
    GraphNode upload = graph.add_copy({}, data, input.data(), input.size());     // 7
    GraphNode fill = graph.add_fill_uint32({}, copy, 0);
    GraphNode joined = graph.add_empty({upload, fill});
    GraphNode added = graph.add_kernel(joined, kConfig, kernel("add_value"), data, 3, kCount);
    GraphNode copied = graph.add_copy(added, copy, data);                        // 10
    GraphNode nested = graph.add_child(copied, child);                           // 110
    GraphNode recorded = graph.add_event_record(nested, done);
    GraphNode waited = graph.add_event_wait(recorded, done);
    GraphNode download = graph.add_copy(waited, host.data(), host.size(), copy);
    graph.add_host_function(download, [calls] { calls->fetch_add(1); });
    EXPECT_EQ(graph.node_count(), 10u);
    EXPECT_EQ(added.type(), CU_GRAPH_NODE_TYPE_KERNEL);
    EXPECT_EQ(nested.type(), CU_GRAPH_NODE_TYPE_GRAPH);
    EXPECT_EQ(recorded.type(), CU_GRAPH_NODE_TYPE_EVENT_RECORD);

    run(graph);
    EXPECT_EQ(std::vector<int>(host.span<int>().begin(), host.span<int>().end()),
              std::vector<int>(kCount, 110));
    EXPECT_EQ(calls->load(), 1);
    EXPECT_TRUE(done.is_done());
}

TEST_F(GraphExplicit, WhileLoopRunsAKernelNTimesWhereNIsComputedOnTheDevice) {
    Buffer seed = pinned_ints(1, 5);  // n = 5 * 2 + 1 = 11
    Buffer counter = device().allocate(sizeof(int), stream());
    Buffer runs = device().allocate(sizeof(int), stream());
    Buffer host = pinned_ints(1);
    stream().sync();

    Graph graph = Graph::create(device());
    ConditionalHandle loop = graph.create_conditional_handle();
    GraphNode reset = graph.add_fill_byte({}, runs, 0);
    GraphNode count = graph.add_kernel(reset, LaunchConfig{}, conditional("set_count"),
                                       loop.handle(), seed, counter);
    ConditionalNode repeat = graph.add_while(count, loop);
    ASSERT_EQ(repeat.bodies.size(), 1u);
    EXPECT_EQ(repeat.node.type(), CU_GRAPH_NODE_TYPE_CONDITIONAL);
    repeat.bodies[0].add_kernel({}, LaunchConfig{}, conditional("while_step"), loop.handle(),
                                counter, runs);
    graph.add_copy(repeat.node, host.data(), host.size(), runs);

    GraphExec exec = graph.instantiate();
    exec.launch(stream());
    stream().sync();
    EXPECT_EQ(host.span<int>()[0], 11);
    seed.span<int>()[0] = 2;  // the next launch reads the new seed: 5 runs
    exec.launch(stream());
    stream().sync();
    EXPECT_EQ(host.span<int>()[0], 5);
}

TEST_F(GraphExplicit, IfRunsItsBodyOnlyWhenTheDeviceSetsTheCondition) {
    for (unsigned value : {0u, 1u}) {
        Buffer condition = pinned_unsigned(value);
        Buffer out = pinned_ints(1, -1);
        Graph graph = Graph::create(device());
        ConditionalHandle handle = graph.create_conditional_handle();
        GraphNode set = graph.add_kernel({}, LaunchConfig{}, conditional("set_condition"),
                                         handle.handle(), condition);
        ConditionalNode branch = graph.add_if(set, handle);
        branch.bodies[0].add_kernel({}, LaunchConfig{}, kernel("mark"), out, 0, 1);
        run(graph);
        EXPECT_EQ(out.span<int>()[0], value ? 1 : -1) << "condition " << value;
    }
}

TEST_F(GraphExplicit, IfElseRunsExactlyOneBody) {
    for (unsigned value : {0u, 3u}) {
        Buffer condition = pinned_unsigned(value);
        Buffer out = pinned_ints(2, 0);
        Graph graph = Graph::create(device());
        ConditionalHandle handle = graph.create_conditional_handle();
        GraphNode set = graph.add_kernel({}, LaunchConfig{}, conditional("set_condition"),
                                         handle.handle(), condition);
        ConditionalNode branch = graph.add_if_else(set, handle);
        ASSERT_EQ(branch.bodies.size(), 2u);
        branch.bodies[0].add_kernel({}, LaunchConfig{}, kernel("mark"), out, 0, 1);
        branch.bodies[1].add_kernel({}, LaunchConfig{}, kernel("mark"), out, 1, 1);
        run(graph);
        EXPECT_EQ(out.span<int>()[0], value ? 1 : 0) << "condition " << value;
        EXPECT_EQ(out.span<int>()[1], value ? 0 : 1) << "condition " << value;
    }
}

TEST_F(GraphExplicit, SwitchRunsTheCaseTheDeviceChose) {
    for (unsigned value : {0u, 2u, 7u}) {
        Buffer condition = pinned_unsigned(value);
        Buffer out = pinned_ints(3, 0);
        Graph graph = Graph::create(device());
        ConditionalHandle handle = graph.create_conditional_handle();
        GraphNode set = graph.add_kernel({}, LaunchConfig{}, conditional("set_condition"),
                                         handle.handle(), condition);
        ConditionalNode cases = graph.add_switch(set, handle, 3);
        ASSERT_EQ(cases.bodies.size(), 3u);
        for (int index = 0; index < 3; ++index)
            cases.bodies[index].add_kernel({}, LaunchConfig{}, kernel("mark"), out, index, 1);
        run(graph);
        for (int index = 0; index < 3; ++index)
            EXPECT_EQ(out.span<int>()[index], unsigned(index) == value ? 1 : 0)
                << "value " << value << ", case " << index;
    }
}

TEST_F(GraphExplicit, RefusedUpdateNamesTheBlockingNode) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Graph original = Graph::create(device());
    original.add_kernel({}, kConfig, kernel("add_value"), data, 1, kCount);
    GraphExec exec = original.instantiate();

    Graph changed = Graph::create(device());
    GraphNode fill = changed.add_fill_byte({}, data, 0);  // a memset where a kernel was
    try {
        exec.update(changed);
        FAIL() << "an update changing a node's type succeeded";
    } catch (const GraphUpdateError& e) {
        EXPECT_EQ(e.reason(), CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED) << e.what();
        EXPECT_EQ(e.node(), fill);
        EXPECT_NE(std::string(e.what()).find("memset node"), std::string::npos) << e.what();
    }
}

TEST_F(GraphExplicit, KernelArgumentsChangePerNodeInOneExecutableGraph) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Buffer host = pinned_ints(kCount);
    stream().sync();
    Graph graph = Graph::create(device());
    GraphNode zero = graph.add_fill_byte({}, data, 0);
    GraphNode add = graph.add_kernel(zero, kConfig, kernel("add_value"), data, 1, kCount);
    graph.add_copy(add, host.data(), host.size(), data);
    GraphExec first = graph.instantiate();
    GraphExec second = graph.instantiate();
    first.set_kernel_arguments(add, kConfig, kernel("add_value"), data, 9, kCount);
    EXPECT_THROW(first.set_kernel_arguments(add, kConfig, kernel("add_value"), data, 9),
                 InvalidArgumentError);  // a missing argument is refused before the driver
    first.launch(stream());
    stream().sync();
    EXPECT_EQ(host.span<int>()[kCount - 1], 9);
    second.launch(stream());
    stream().sync();
    EXPECT_EQ(host.span<int>()[kCount - 1], 1);  // the other executable graph is unchanged
}

TEST_F(GraphExplicit, AllocationNodesGiveMemoryForEachLaunch) {
    Buffer host = pinned_ints(kCount);
    Graph graph = Graph::create(device());
    GraphAllocation scratch = graph.add_allocation({}, kCount * sizeof(int));
    EXPECT_NE(scratch.pointer, 0u);
    EXPECT_EQ(scratch.node.type(), CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    // A view for the nodes: the graph owns the memory (its free node releases it).
    Buffer view = Buffer::wrap_unowned(scratch.pointer, scratch.size, device().memory_resource());
    GraphNode fill = graph.add_fill_uint32(scratch.node, view, 40);
    GraphNode add = graph.add_kernel(fill, kConfig, kernel("add_value"), scratch.pointer, 2,
                                     kCount);
    GraphNode copy = graph.add_copy(add, host.data(), host.size(), view);
    graph.add_free(copy, scratch.pointer);
    GraphExec exec = graph.instantiate();
    for (int launch = 0; launch < 3; ++launch) {
        std::fill(host.span<int>().begin(), host.span<int>().end(), 0);
        exec.launch(stream());
        stream().sync();
        EXPECT_EQ(host.span<int>()[0], 42) << "launch " << launch;
        EXPECT_EQ(host.span<int>()[kCount - 1], 42) << "launch " << launch;
    }
}

TEST_F(GraphExplicit, InstantiateOptionsUploadAndDot) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Graph graph = Graph::create(device());
    graph.add_kernel({}, kConfig, kernel("add_value"), data, 1, kCount);
    GraphExec uploaded = graph.instantiate({.upload_stream = stream()});
    uploaded.upload(stream());
    uploaded.launch(stream());
    GraphExec prioritised = graph.instantiate({.use_node_priority = true});
    prioritised.launch(stream());
    GraphExec auto_free = graph.instantiate({.auto_free_on_launch = true});
    auto_free.launch(stream());
    stream().sync();
    const std::string plain = graph.to_dot();
    const std::string detailed = graph.to_dot({.verbose = true});
    EXPECT_NE(plain.find("digraph"), std::string::npos) << plain;
    EXPECT_GT(detailed.size(), plain.size());  // the flags reach the driver
    test::TempDir dir;
    graph.write_dot(dir.path() / "graph.dot");
    EXPECT_NE(test::read_file(dir.path() / "graph.dot").find("digraph"), std::string::npos);
}

TEST_F(GraphExplicit, ClusterConfigsAreRefusedForKernelNodes) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Graph graph = Graph::create(device());
    LaunchConfig cluster = kConfig;
    cluster.cluster = Dim3{2};
    EXPECT_THROW(graph.add_kernel({}, cluster, kernel("add_value"), data, 1, kCount),
                 InvalidArgumentError);
    EXPECT_THROW(graph.add_kernel({}, kConfig, kernel("add_value"), data, 1),
                 InvalidArgumentError);
    EXPECT_EQ(graph.node_count(), 0u);
}

}  // namespace
