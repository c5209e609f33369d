// Graphs read and changed node by node on a real GPU: every kind's parameters read back, edges
// added and removed (the results show the new order), nodes removed, clones that run after the
// original and everything it was built from are gone, and set_params seen by the next
// instantiation.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "graph_kernel_sources.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

namespace {

using namespace cudacore;
using cudacore::test::expect_invalid;

// Runs `call`, expecting the GraphNodeUpdateError cudacore throws before any driver call
// (status() CUDA_SUCCESS), its message holding every one of `parts`.
template <class Call>
void expect_node_refused(Call&& call, std::initializer_list<const char*> parts) {
    const auto refused = expect_invalid<GraphNodeUpdateError>(std::forward<Call>(call), parts);
    if (refused) EXPECT_EQ(refused->status(), CUDA_SUCCESS) << refused->what();
}

constexpr unsigned kCount = 256;
constexpr LaunchConfig kConfig{.grid = 1, .block = 256};

class GraphNodes : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        stream_.emplace(device_->create_stream());
        code_.emplace(compile(test::kGraphKernelsSource, "graph_kernels"));
        pinned_ = std::make_shared<LegacyPinnedMemoryResource>(*device_);
    }
    ObjectCode compile(const char* source, const char* name) const {
        ProgramOptions options;
        options.name = name;
        options.arch = device_->arch();
        return Program(source, SourceType::cxx, options).compile(CodeType::cubin);
    }
    const Device& device() const { return *device_; }
    const Stream& stream() const { return *stream_; }
    Kernel kernel(const char* name) const { return code_->get_kernel(name); }
    Buffer pinned_ints(std::size_t count, int value = 0) const {
        Buffer buffer = pinned_->allocate(count * sizeof(int), stream());
        std::fill(buffer.span<int>().begin(), buffer.span<int>().end(), value);
        return buffer;
    }
    Buffer device_ints(std::size_t count) const {
        return device().allocate(count * sizeof(int), stream());
    }
    void run(const Graph& graph) const {
        GraphExec exec = graph.instantiate();
        exec.launch(stream());
        stream().sync();
    }
    static std::vector<int> ints(const Buffer& host) {
        return {host.span<int>().begin(), host.span<int>().end()};
    }
    static bool contains(const std::vector<GraphNode>& nodes, GraphNode node) {
        return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
    }

    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::optional<ObjectCode> code_;
    std::shared_ptr<LegacyPinnedMemoryResource> pinned_;
};

TEST_F(GraphNodes, EveryKindReadsBackItsParameters) {
    Buffer data = device_ints(kCount);
    Buffer copy = device_ints(kCount);
    Buffer input = pinned_ints(kCount, 7);
    stream().sync();
    auto calls = std::make_shared<std::atomic<int>>(0);
    Event done = device().create_event();
    Graph child = Graph::create(device());
    child.add_kernel({}, kConfig, kernel("add_value"), copy, 100, kCount);

    Graph graph = Graph::create(device());
    GraphNode upload = graph.add_copy({}, data, input.data(), input.size());
    GraphNode fill_bytes = graph.add_fill_byte({}, copy, 0x5a);
    GraphNode fill_words = graph.add_fill_uint32(fill_bytes, copy, 0x01020304u);
    GraphNode joined = graph.add_empty({upload, fill_words});
    GraphNode added = graph.add_kernel(joined, kConfig, kernel("add_value"), data, 3, kCount);
    GraphNode copied = graph.add_copy(added, copy, data);
    GraphNode nested = graph.add_child(copied, child);
    GraphNode recorded = graph.add_event_record(nested, done);
    GraphNode waited = graph.add_event_wait(recorded, done);
    GraphNode host = graph.add_host_function(waited, [calls] { calls->fetch_add(1); });
    GraphAllocation allocation = graph.add_allocation(host, 4096);
    GraphNode freed = graph.add_free(allocation.node, allocation.pointer);

    // Structure.
    EXPECT_EQ(added.dependencies(), std::vector<GraphNode>{joined});
    EXPECT_EQ(joined.dependents(), std::vector<GraphNode>{added});
    const std::vector<GraphNode> into_joined = joined.dependencies();
    EXPECT_EQ(into_joined.size(), 2u);
    EXPECT_TRUE(contains(into_joined, upload) && contains(into_joined, fill_words));
    EXPECT_TRUE(freed.dependents().empty());
    EXPECT_EQ(graph.edges().size(), 11u);
    EXPECT_EQ(added.description().rfind("kernel node 0x", 0), 0u) << added.description();

    const auto kernel_params = std::get<KernelNodeParams>(graph.params(added));
    EXPECT_EQ(kernel_params.kernel.handle(), kernel("add_value").handle());
    EXPECT_EQ(kernel_params.kernel.name(), "add_value");
    EXPECT_EQ(kernel_params.config.grid, Dim3(1));
    EXPECT_EQ(kernel_params.config.block, Dim3(256));
    ASSERT_EQ(kernel_params.arguments.count(), 3u);
    EXPECT_EQ(kernel_params.arguments.as<CUdeviceptr>(0), data.handle());
    EXPECT_EQ(kernel_params.arguments.as<int>(1), 3);
    EXPECT_EQ(kernel_params.arguments.as<unsigned>(2), kCount);

    const auto device_copy = std::get<CopyNodeParams>(graph.params(copied));
    EXPECT_FALSE(device_copy.general.has_value());
    EXPECT_EQ(device_copy.destination, copy.handle());
    EXPECT_EQ(device_copy.source, data.handle());
    EXPECT_EQ(device_copy.size, copy.size());
    const auto host_copy = std::get<CopyNodeParams>(graph.params(upload));
    EXPECT_EQ(host_copy.source, reinterpret_cast<CUdeviceptr>(input.data()));
    EXPECT_EQ(host_copy.destination, data.handle());

    const auto bytes = std::get<FillNodeParams>(graph.params(fill_bytes));
    EXPECT_EQ(bytes.destination, copy.handle());
    EXPECT_EQ(bytes.value, 0x5au);
    EXPECT_EQ(bytes.element_size, 1u);
    EXPECT_EQ(bytes.width, copy.size());
    EXPECT_EQ(bytes.height, 1u);
    const auto words = std::get<FillNodeParams>(graph.params(fill_words));
    EXPECT_EQ(words.value, 0x01020304u);
    EXPECT_EQ(words.element_size, 4u);
    EXPECT_EQ(words.width, copy.size() / 4);

    std::get<HostNodeParams>(graph.params(host)).function();  // the node's own callable
    EXPECT_EQ(calls->load(), 1);

    const auto nested_params = std::get<ChildGraphNodeParams>(graph.params(nested));
    ASSERT_EQ(nested_params.graph.node_count(), 1u);
    const GraphNode inner = nested_params.graph.nodes()[0];
    EXPECT_EQ(std::get<KernelNodeParams>(nested_params.graph.params(inner)).arguments.as<int>(1),
              100);

    EXPECT_EQ(std::get<EventRecordNodeParams>(graph.params(recorded)).event.handle(),
              done.handle());
    EXPECT_EQ(std::get<EventWaitNodeParams>(graph.params(waited)).event.handle(), done.handle());

    const auto alloc = std::get<AllocationNodeParams>(graph.params(allocation.node));
    EXPECT_EQ(alloc.pointer, allocation.pointer);
    EXPECT_EQ(alloc.size, 4096u);
    EXPECT_EQ(alloc.pool_properties.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_EQ(alloc.pool_properties.location.id, device().ordinal());
    EXPECT_EQ(std::get<FreeNodeParams>(graph.params(freed)).pointer, allocation.pointer);
    EXPECT_TRUE(std::holds_alternative<EmptyNodeParams>(graph.params(joined)));

    // Reading changed nothing: the graph still runs as built.
    Buffer out = pinned_ints(kCount);
    graph.add_copy(freed, out.data(), out.size(), copy);
    run(graph);
    EXPECT_EQ(ints(out), std::vector<int>(kCount, 110));
    EXPECT_EQ(calls->load(), 2);
}

TEST_F(GraphNodes, ConditionalNodesReadBackTheirHandleKindAndBodies) {
    Graph graph = Graph::create(device());
    ConditionalHandle condition = graph.create_conditional_handle();
    ConditionalNode branch = graph.add_switch({}, condition, 3);
    const auto params = std::get<ConditionalNodeParams>(graph.params(branch.node));
    EXPECT_EQ(params.handle.handle(), condition.handle());
    EXPECT_EQ(params.type, CU_GRAPH_COND_TYPE_SWITCH);
    EXPECT_EQ(params.size, 3u);
    ASSERT_EQ(params.bodies.size(), 3u);
    for (std::size_t index = 0; index < 3; ++index)
        EXPECT_EQ(params.bodies[index].handle(), branch.bodies[index].handle());
    // Not changeable through set_params: refused before the driver, naming the node.
    expect_node_refused([&] { graph.set_params(branch.node, params); },
                        {"Graph::set_params", "conditional node", "does not let a graph change"});
}

TEST_F(GraphNodes, CapturedNodesReadBackTheKernelAndItsArguments) {
    Buffer data = device_ints(kCount);
    Buffer host = pinned_ints(kCount);
    stream().sync();
    GraphBuilder builder = stream().begin_capture();
    data.fill_uint32(0, builder);
    launch(builder, kConfig, kernel("add_value"), data, 9, kCount);
    data.copy_to(host, builder);
    Graph graph = builder.end();
    std::size_t kernels = 0;
    for (GraphNode node : graph.nodes()) {
        GraphNodeParams params = graph.params(node);
        if (auto* k = std::get_if<KernelNodeParams>(&params)) {
            ++kernels;
            EXPECT_EQ(k->kernel.name(), "add_value");
            EXPECT_EQ(k->arguments.as<CUdeviceptr>(0), data.handle());
            EXPECT_EQ(k->arguments.as<int>(1), 9);
            // Set back with another value: the captured node takes it.
            k->arguments = KernelArguments::of(data, 12, kCount);
            graph.set_params(node, *k);
        }
    }
    EXPECT_EQ(kernels, 1u);
    run(graph);
    EXPECT_EQ(ints(host), std::vector<int>(kCount, 12));
}

TEST_F(GraphNodes, EdgesAddedAndRemovedChangeTheOrder) {
    Buffer data = device_ints(kCount);
    Buffer host = pinned_ints(kCount);
    stream().sync();
    Graph graph = Graph::create(device());
    GraphNode fill = graph.add_fill_uint32({}, data, 1);
    GraphNode add = graph.add_kernel(fill, kConfig, kernel("add_value"), data, 10, kCount);
    GraphNode download = graph.add_copy(add, host.data(), host.size(), data);
    run(graph);
    EXPECT_EQ(ints(host), std::vector<int>(kCount, 11));  // fill, add, copy

    // Now add, fill, copy: the fill overwrites what the kernel added.
    graph.remove_edge(fill, add);
    graph.add_edge(add, fill);
    graph.remove_edge(add, download);
    graph.add_edge(fill, download);
    EXPECT_TRUE(add.dependencies().empty());
    EXPECT_EQ(fill.dependencies(), std::vector<GraphNode>{add});
    EXPECT_EQ(download.dependencies(), std::vector<GraphNode>{fill});
    const std::vector<GraphEdge> edges = graph.edges();
    ASSERT_EQ(edges.size(), 2u);
    for (const GraphEdge& edge : edges)
        EXPECT_EQ(static_cast<int>(edge.data.type),
                  static_cast<int>(CU_GRAPH_DEPENDENCY_TYPE_DEFAULT));
    std::fill(host.span<int>().begin(), host.span<int>().end(), -1);
    run(graph);
    EXPECT_EQ(ints(host), std::vector<int>(kCount, 1));

    // The driver's refusal names the call, both nodes and the graph.
    try {
        graph.remove_edge(fill, add);  // no such edge any more
        ADD_FAILURE() << "no DriverError";
    } catch (const DriverError& e) {
        const std::string text = e.what();
        EXPECT_NE(text.find("cuGraphRemoveDependencies"), std::string::npos) << text;
        EXPECT_NE(text.find("memset node"), std::string::npos) << text;
        EXPECT_NE(text.find("kernel node"), std::string::npos) << text;
        EXPECT_NE(text.find(graph.description()), std::string::npos) << text;
    }
}

TEST_F(GraphNodes, ARemovedNodeNoLongerRuns) {
    Buffer data = device_ints(kCount);
    Buffer host = pinned_ints(kCount);
    stream().sync();
    Graph graph = Graph::create(device());
    GraphNode fill = graph.add_fill_uint32({}, data, 0);
    GraphNode first = graph.add_kernel(fill, kConfig, kernel("add_value"), data, 10, kCount);
    GraphNode second = graph.add_kernel(first, kConfig, kernel("add_value"), data, 100, kCount);
    GraphNode download = graph.add_copy(second, host.data(), host.size(), data);
    graph.remove_node(second);
    EXPECT_EQ(graph.node_count(), 3u);
    EXPECT_TRUE(download.dependencies().empty());  // its edge went with the node
    graph.add_edge(first, download);
    run(graph);
    EXPECT_EQ(ints(host), std::vector<int>(kCount, 10));
}

TEST_F(GraphNodes, AClonesRunsAfterTheOriginalAndWhatItWasBuiltFromAreGone) {
    Buffer data = device_ints(kCount);
    Buffer host = pinned_ints(kCount);
    stream().sync();
    auto calls = std::make_shared<std::atomic<int>>(0);
    std::optional<Graph> clone;
    GraphNode original_kernel;
    {
        // Its own code, event and callable: only the graphs hold them after this scope.
        ObjectCode code = compile(test::kGraphKernelsSource, "clone_kernels");
        Event event = device().create_event();
        Graph graph = Graph::create(device());
        GraphNode fill = graph.add_fill_uint32({}, data, 2);
        original_kernel =
            graph.add_kernel(fill, kConfig, code.get_kernel("add_value"), data, 40, kCount);
        GraphNode recorded = graph.add_event_record(original_kernel, event);
        GraphNode host_call = graph.add_host_function(recorded, [calls] { calls->fetch_add(1); });
        graph.add_copy(host_call, host.data(), host.size(), data);
        clone.emplace(graph.clone());
        EXPECT_NE(clone->handle(), graph.handle());
        EXPECT_EQ(clone->node_count(), graph.node_count());
        EXPECT_GE(clone->held_count(), graph.held_count());
        const GraphNode in_clone = clone->cloned_node(original_kernel);
        EXPECT_NE(in_clone, original_kernel);
        EXPECT_EQ(std::get<KernelNodeParams>(clone->params(in_clone)).arguments.as<int>(1), 40);
        // Changing the original after cloning does not reach the clone.
        graph.set_params(original_kernel,
                         KernelNodeParams{code.get_kernel("add_value"), kConfig,
                                          KernelArguments::of(data, 1000, kCount)});
    }
    run(*clone);
    EXPECT_EQ(ints(host), std::vector<int>(kCount, 42));
    EXPECT_EQ(calls->load(), 1);
}

TEST_F(GraphNodes, SetParamsIsWhatTheNextInstantiationRuns) {
    Buffer data = device_ints(kCount);
    Buffer other = device_ints(kCount);
    Buffer host = pinned_ints(kCount);
    Buffer other_host = pinned_ints(kCount);
    stream().sync();
    auto first_calls = std::make_shared<std::atomic<int>>(0);
    auto second_calls = std::make_shared<std::atomic<int>>(0);
    Event first_event = device().create_event();
    Event second_event = device().create_event();
    Graph child = Graph::create(device());
    child.add_kernel({}, kConfig, kernel("add_value"), data, 1, kCount);
    Graph new_child = Graph::create(device());
    new_child.add_kernel({}, kConfig, kernel("add_value"), data, 2000, kCount);

    Graph graph = Graph::create(device());
    GraphNode fill = graph.add_fill_uint32({}, data, 5);
    GraphNode add = graph.add_kernel(fill, kConfig, kernel("add_value"), data, 10, kCount);
    GraphNode nested = graph.add_child(add, child);
    GraphNode recorded = graph.add_event_record(nested, first_event);
    GraphNode host_call =
        graph.add_host_function(recorded, [first_calls] { first_calls->fetch_add(1); });
    GraphNode download = graph.add_copy(host_call, host.data(), host.size(), data);
    run(graph);
    EXPECT_EQ(ints(host), std::vector<int>(kCount, 16));
    EXPECT_EQ(first_calls->load(), 1);

    graph.set_params(fill, FillNodeParams::words(data, 50));
    graph.set_params(add, KernelNodeParams{kernel("add_value"), kConfig,
                                           KernelArguments::of(data, 300, kCount)});
    graph.set_params(nested, ChildGraphNodeParams{new_child});
    graph.set_params(recorded, EventRecordNodeParams{second_event});
    graph.set_params(host_call, HostNodeParams{[second_calls] { second_calls->fetch_add(1); }});
    CopyNodeParams to_other{};
    to_other.destination = reinterpret_cast<CUdeviceptr>(other_host.data());
    to_other.source = data.handle();
    to_other.size = data.size();
    graph.set_params(download, to_other);
    graph.set_params(graph.add_empty({}), EmptyNodeParams{});

    EXPECT_EQ(std::get<KernelNodeParams>(graph.params(add)).arguments.as<int>(1), 300);
    EXPECT_EQ(std::get<FillNodeParams>(graph.params(fill)).value, 50u);
    EXPECT_EQ(std::get<EventRecordNodeParams>(graph.params(recorded)).event.handle(),
              second_event.handle());
    EXPECT_EQ(std::get<CopyNodeParams>(graph.params(download)).destination, to_other.destination);

    run(graph);
    EXPECT_EQ(ints(other_host), std::vector<int>(kCount, 2350));
    EXPECT_EQ(ints(host), std::vector<int>(kCount, 16));  // the old destination is untouched
    EXPECT_EQ(first_calls->load(), 1);
    EXPECT_EQ(second_calls->load(), 1);
    EXPECT_TRUE(second_event.is_done());
}

TEST_F(GraphNodes, SetParamsOfTheWrongKindIsRefusedNamingTheNode) {
    Buffer data = device_ints(kCount);
    stream().sync();
    Graph graph = Graph::create(device());
    GraphNode add = graph.add_kernel({}, kConfig, kernel("add_value"), data, 1, kCount);
    GraphAllocation allocation = graph.add_allocation(add, 1024);
    expect_node_refused([&] { graph.set_params(add, FillNodeParams::bytes(data, 0)); },
                        {"Graph::set_params", "kernel node", "not one for FillNodeParams"});
    expect_node_refused([&] { graph.set_params(allocation.node, graph.params(allocation.node)); },
                        {"memory allocation node", "does not let a graph change"});
    // Wrong values of the right kind.
    expect_invalid([&] {
        graph.set_params(add, KernelNodeParams{kernel("add_value"), kConfig,
                                               KernelArguments::of(data, 1)});
    },
                   {"add_value"});
    FillNodeParams odd = FillNodeParams::bytes(data, 0);
    odd.element_size = 3;
    GraphNode fill = graph.add_fill_byte({}, data, 0);
    expect_invalid([&] { graph.set_params(fill, odd); }, {"element size 3", "memset node"});
    expect_node_refused([&] { graph.set_params(fill, HostNodeParams{}); }, {"memset node"});
    GraphNode host = graph.add_host_function({}, [] {});
    expect_invalid([&] { graph.set_params(host, HostNodeParams{}); }, {"an empty function"});
}

}  // namespace
