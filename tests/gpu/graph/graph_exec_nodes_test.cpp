// Changing one node of an executable graph on a real GPU, without instantiating again: every kind
// the driver can change (kernel, copy, fill, host function, child graph, event record and wait),
// by its typed call and through set_params; nodes disabled and enabled again; each refused rule
// named with the node; and what a change refers to held after the caller dropped it, released
// only once the launches made before the next change have finished.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "graph_kernel_sources.hpp"
#include "loader/driver_api.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <variant>

namespace {

using namespace cudacore;

constexpr unsigned kCount = 256;
constexpr LaunchConfig kConfig{.grid = 1, .block = kCount};

// A kernel of add_value's shape from another program: the node's kernel may change to it.
constexpr const char* kTwiceSource = R"(
extern "C" __global__ void add_twice(int* data, int value, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 2 * value;
}
)";

// Waits (bounded) until `done` says so: releases made on the background thread.
template <class Done>
bool eventually(Done&& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

// A device buffer that sets `*freed` when its memory is finally released.
Buffer watched_buffer(const Device& device, const Stream& stream, std::size_t size,
                      std::shared_ptr<std::atomic<bool>> freed) {
    Buffer memory = device.allocate(size, stream);
    const CUdeviceptr address = memory.handle();
    auto owner = std::shared_ptr<void>(new Buffer(std::move(memory)), [freed](void* held) {
        delete static_cast<Buffer*>(held);
        freed->store(true);
    });
    return Buffer::from_handle(address, size, device.memory_resource(), std::move(owner));
}

class GraphExecNodes : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        stream_.emplace(device_->create_stream());
        ProgramOptions options;
        options.name = "graph_kernels";
        options.arch = device_->arch();
        code_.emplace(
            Program(test::kGraphKernelsSource, SourceType::cxx, options).compile(CodeType::cubin));
        pinned_ = std::make_shared<LegacyPinnedMemoryResource>(*device_);
    }
    const Device& device() const { return *device_; }
    const Stream& stream() const { return *stream_; }
    Kernel kernel(const char* name) const { return code_->get_kernel(name); }
    Buffer pinned_ints(int value = 0) const {
        Buffer buffer = pinned_->allocate(kCount * sizeof(int), stream());
        std::fill(buffer.span<int>().begin(), buffer.span<int>().end(), value);
        return buffer;
    }
    Buffer device_ints(int value) const {
        Buffer buffer = device().allocate(kCount * sizeof(int), stream());
        buffer.fill_uint32(static_cast<std::uint32_t>(value), stream());
        return buffer;
    }
    void run(const GraphExec& exec) const {
        exec.launch(stream());
        stream().sync();
    }
    // The graph the kernel and enable tests change: `data` zeroed, add_value(`value`) on it, then
    // copied to `host`.
    struct AddValueGraph {
        Buffer data;
        Buffer host;
        Graph graph;
        GraphNode zero, add, copy;
    };
    AddValueGraph add_value_graph(int value) const {
        AddValueGraph made{device_ints(0), pinned_ints(), Graph::create(device()), {}, {}, {}};
        made.zero = made.graph.add_fill_uint32({}, made.data, 0);
        made.add = made.graph.add_kernel(made.zero, kConfig, kernel("add_value"), made.data, value,
                                         kCount);
        made.copy = made.graph.add_copy(made.add, made.host.data(), made.host.size(), made.data);
        return made;
    }

    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::optional<ObjectCode> code_;
    std::shared_ptr<LegacyPinnedMemoryResource> pinned_;
};

TEST_F(GraphExecNodes, AKernelNodeTakesNewArgumentsAndAKernelOfAnotherProgram) {
    auto [data, host, graph, zero, add, copy] = add_value_graph(1);
    GraphExec exec = graph.instantiate();
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 1);

    exec.set_kernel_arguments(add, kConfig, kernel("add_value"), data, 7, kCount);
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 7);

    // The other program's kernel: held by the executable graph once the caller drops it.
    {
        ProgramOptions options;
        options.arch = device().arch();
        ObjectCode twice = Program(kTwiceSource, SourceType::cxx, options).compile(CodeType::cubin);
        exec.set_params(add, KernelNodeParams{twice.get_kernel("add_twice"), kConfig,
                                              KernelArguments::of(data, 5, kCount)});
    }
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 10);
    EXPECT_EQ(host.span<int>()[kCount - 1], 10);
}

TEST_F(GraphExecNodes, AValueReadFromTheGraphChangesOnlyTheExecutableGraph) {
    auto [data, host, graph, zero, add, copy] = add_value_graph(1);
    GraphExec exec = graph.instantiate();

    GraphNodeParams params = graph.params(add);
    ASSERT_TRUE(std::holds_alternative<KernelNodeParams>(params));
    std::get<KernelNodeParams>(params).arguments = KernelArguments::of(data, 12, kCount);
    exec.set_params(add, params);
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 12);
    GraphExec fresh = graph.instantiate();  // the definition is unchanged
    run(fresh);
    EXPECT_EQ(host.span<int>()[kCount - 1], 1);
}

TEST_F(GraphExecNodes, CopyNodesTakeNewBuffersInEachDirectionAndHoldThem) {
    Buffer source = device_ints(3);
    Buffer middle = device_ints(0);
    Buffer host = pinned_ints();
    Buffer upload = pinned_ints(40);
    Graph graph = Graph::create(device());
    GraphNode device_copy = graph.add_copy({}, middle, source);
    GraphNode download = graph.add_copy(device_copy, host.data(), host.size(), middle);
    GraphExec exec = graph.instantiate();
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 3);

    // A new source the caller drops at once: the executable graph holds it.
    auto freed = std::make_shared<std::atomic<bool>>(false);
    {
        Buffer replacement = watched_buffer(device(), stream(), kCount * sizeof(int), freed);
        replacement.fill_uint32(11, stream());
        stream().sync();
        exec.set_copy(device_copy, middle, replacement);
    }
    EXPECT_FALSE(freed->load()) << "the copy's new source is held";
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 11);
    EXPECT_EQ(host.span<int>()[kCount - 1], 11);

    // Device to host into other host memory, and the same through set_params.
    Buffer other_host = pinned_ints();
    exec.set_copy(download, other_host.data(), other_host.size(), middle);
    run(exec);
    EXPECT_EQ(other_host.span<int>()[kCount - 1], 11);
    exec.set_params(download, CopyNodeParams::between(host, middle));
    host.span<int>()[0] = 0;
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 11);

    // The next change of the node lets the dropped source go (no launch in flight).
    exec.set_copy(device_copy, middle, source);
    EXPECT_TRUE(eventually([&] { return freed->load(); })) << "released after its replacement";
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 3);

    // Host to device.
    Graph up = Graph::create(device());
    GraphNode copy_up = up.add_copy({}, middle, host.data(), host.size());
    up.add_copy(copy_up, other_host.data(), other_host.size(), middle);
    GraphExec up_exec = up.instantiate();
    up_exec.set_copy(copy_up, middle, upload.data(), upload.size());
    run(up_exec);
    EXPECT_EQ(other_host.span<int>()[kCount - 1], 40);
}

TEST_F(GraphExecNodes, FillNodesTakeANewBufferAndValue) {
    Buffer first = device_ints(0);
    Buffer second = device_ints(0);
    Buffer host = pinned_ints();
    Graph graph = Graph::create(device());
    GraphNode fill = graph.add_fill_uint32({}, first, 5);
    GraphNode copy = graph.add_copy(fill, host.data(), host.size(), first);
    GraphExec exec = graph.instantiate();
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 5);

    exec.set_fill_uint32(fill, first, 9);
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 9);

    exec.set_fill_uint32(fill, second, 21);
    exec.set_copy(copy, host.data(), host.size(), second);
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 21);

    exec.set_params(fill, FillNodeParams::words(second, 33));
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 33);
}

TEST_F(GraphExecNodes, AByteFillTakesANewValue) {
    Buffer bytes = device().allocate(kCount, stream());
    Buffer host = pinned_->allocate(kCount, stream());
    Graph graph = Graph::create(device());
    GraphNode fill = graph.add_fill_byte({}, bytes, 1);
    graph.add_copy(fill, host.data(), host.size(), bytes);
    GraphExec exec = graph.instantiate();
    exec.set_fill_byte(fill, bytes, 0x5a);
    run(exec);
    EXPECT_EQ(host.span<unsigned char>()[kCount - 1], 0x5a);
}

TEST_F(GraphExecNodes, AHostNodeRunsItsNewFunctionAndTheReplacedOneIsReleased) {
    auto first_calls = std::make_shared<std::atomic<int>>(0);
    auto second_calls = std::make_shared<std::atomic<int>>(0);
    Graph graph = Graph::create(device());
    GraphNode host = graph.add_host_function({}, [first_calls] { ++*first_calls; });
    GraphExec exec = graph.instantiate();
    run(exec);
    EXPECT_EQ(first_calls->load(), 1);

    // The second callable owns the only reference to `sentinel`: it lives as long as the callable.
    auto sentinel = std::make_shared<int>(0);
    std::weak_ptr<int> second_alive = sentinel;
    exec.set_host_function(host, [second_calls, sentinel] { ++*second_calls; });
    sentinel.reset();
    run(exec);
    run(exec);
    EXPECT_EQ(first_calls->load(), 1);
    EXPECT_EQ(second_calls->load(), 2);
    EXPECT_FALSE(second_alive.expired()) << "the executable graph holds the callable";

    exec.set_params(host, HostNodeParams{[second_calls] { *second_calls += 10; }});
    EXPECT_TRUE(eventually([&] { return second_alive.expired(); }))
        << "the replaced callable is released once the launches made with it are done";
    run(exec);
    EXPECT_EQ(second_calls->load(), 12);
}

TEST_F(GraphExecNodes, AChildGraphNodeTakesTheParametersOfANewChildOfTheSameShape) {
    Buffer data = device_ints(0);
    Buffer host = pinned_ints();
    Graph child = Graph::create(device());
    child.add_kernel({}, kConfig, kernel("add_value"), data, 1, kCount);
    Graph graph = Graph::create(device());
    GraphNode zero = graph.add_fill_uint32({}, data, 0);
    GraphNode embedded = graph.add_child(zero, child);
    graph.add_copy(embedded, host.data(), host.size(), data);
    GraphExec exec = graph.instantiate();
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 1);

    {
        ProgramOptions options;
        options.arch = device().arch();
        ObjectCode twice = Program(kTwiceSource, SourceType::cxx, options).compile(CodeType::cubin);
        Graph replacement = Graph::create(device());
        replacement.add_kernel({}, kConfig, twice.get_kernel("add_twice"), data, 4, kCount);
        exec.set_child(embedded, replacement);
    }  // the child and its program dropped: the executable graph holds what the child held
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 8);

    Graph again = Graph::create(device());
    again.add_kernel({}, kConfig, kernel("add_value"), data, 3, kCount);
    exec.set_params(embedded, ChildGraphNodeParams{again});
    run(exec);
    EXPECT_EQ(host.span<int>()[kCount - 1], 3);
}

TEST_F(GraphExecNodes, AnEventRecordNodeRecordsItsNewEvent) {
    const EventOptions timing{.timing_enabled = true};
    Event start = device().create_event(timing);
    Event old_event = device().create_event(timing);
    Event new_event = device().create_event(timing);
    Graph graph = Graph::create(device());
    GraphNode record = graph.add_event_record({}, old_event);
    GraphExec exec = graph.instantiate();
    exec.set_event_record(record, new_event);
    stream().record(start);
    run(exec);
    const auto& api = detail::driver();
    float ms = -1;
    EXPECT_EQ(api.cuEventElapsedTime(&ms, start.handle(), new_event.handle()), CUDA_SUCCESS)
        << "the new event was recorded by the launch";
    EXPECT_GE(ms, 0.0f);
    EXPECT_NE(api.cuEventElapsedTime(&ms, start.handle(), old_event.handle()), CUDA_SUCCESS)
        << "the old event was never recorded";

    Event third = device().create_event(timing);
    exec.set_params(record, EventRecordNodeParams{third});
    run(exec);
    EXPECT_EQ(api.cuEventElapsedTime(&ms, start.handle(), third.handle()), CUDA_SUCCESS);
}

TEST_F(GraphExecNodes, AnEventWaitNodeWaitsForItsNewEvent) {
    Buffer host = pinned_ints();
    Event done_already = device().create_event();
    stream().record(done_already);
    stream().sync();
    Graph graph = Graph::create(device());
    GraphNode wait = graph.add_event_wait({}, done_already);
    GraphNode write = graph.add_kernel(wait, kConfig, kernel("mark"), host, 0, 77);
    (void)write;
    GraphExec exec = graph.instantiate();

    // The new event is recorded on a stream held back by a host function until the gate opens.
    Stream gated = device().create_stream();
    auto gate = std::make_shared<std::atomic<bool>>(false);
    gated.launch_host_func([gate] {
        while (!gate->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    Event gate_event = device().create_event();
    gated.record(gate_event);
    exec.set_event_wait(wait, gate_event);
    exec.launch(stream());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(host.span<int>()[0], 0) << "the kernel waits for the new event";
    gate->store(true);
    stream().sync();
    EXPECT_EQ(host.span<int>()[0], 77);
    gated.sync();
}

TEST_F(GraphExecNodes, ADisabledNodeDoesNothingUntilEnabledAgain) {
    auto [data, host, graph, zero, add, copy] = add_value_graph(6);
    GraphExec exec = graph.instantiate();
    EXPECT_TRUE(exec.is_enabled(add));

    exec.set_enabled(add, false);
    EXPECT_FALSE(exec.is_enabled(add));
    host.span<int>()[0] = -1;
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 0) << "the kernel was skipped, the fill and copy ran";

    exec.set_enabled(copy, false);
    host.span<int>()[0] = -1;
    run(exec);
    EXPECT_EQ(host.span<int>()[0], -1) << "the copy was skipped";
    EXPECT_FALSE(exec.is_enabled(copy));

    exec.set_enabled(add, true);
    exec.set_enabled(copy, true);
    EXPECT_TRUE(exec.is_enabled(add));
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 6);
    EXPECT_EQ(host.span<int>()[kCount - 1], 6);
}

TEST_F(GraphExecNodes, RefusedChangesNameTheNodeTheExecutableGraphAndTheRule) {
    Buffer data = device_ints(0);
    Buffer host = pinned_ints();
    Graph child = Graph::create(device());
    child.add_empty({});
    Graph graph = Graph::create(device());
    GraphNode add = graph.add_kernel({}, kConfig, kernel("add_value"), data, 1, kCount);
    Buffer copied = device_ints(0);
    GraphNode device_copy = graph.add_copy(add, copied, data);
    GraphNode host_node = graph.add_host_function(device_copy, [] {});
    GraphNode embedded = graph.add_child(host_node, child);
    GraphAllocation allocation = graph.add_allocation(embedded, 64);
    graph.add_free(allocation.node, allocation.pointer);
    GraphExec exec = graph.instantiate();
    const std::string exec_name = exec.description();

    // `by_driver`: refused by the driver (its status, whichever it is), else by cudacore first.
    const auto expect_refusal = [&](auto&& call, bool by_driver,
                                    std::initializer_list<const char*> parts) {
        try {
            call();
            ADD_FAILURE() << "not refused: " << *parts.begin();
        } catch (const GraphNodeUpdateError& e) {
            EXPECT_EQ(e.status() != CUDA_SUCCESS, by_driver) << e.what();
            const std::string message = e.what();
            EXPECT_NE(message.find(exec_name), std::string::npos) << message;
            for (const char* part : parts)
                EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
        }
    };
    // Decided before the driver: a value of another kind, a kind that cannot change.
    expect_refusal([&] { exec.set_fill_byte(add, data, 0); }, false,
                   {"kernel node", "memset parameters given for this kernel node"});
    expect_refusal([&] { exec.set_params(allocation.node, AllocationNodeParams{}); }, false,
                   {"memory allocation and free nodes cannot be changed"});
    expect_refusal([&] { exec.set_params(add, FreeNodeParams{allocation.pointer}); }, false,
                   {"FreeNodeParams given"});
    expect_refusal([&] { exec.set_enabled(host_node, false); }, false,
                   {"host node", "only kernel, memcpy and memset nodes"});
    // Refused by the driver: a copy changing direction, a child of another shape, a node of
    // another graph.
    expect_refusal([&] { exec.set_copy(device_copy, host.data(), host.size(), data); },
                   true,
                   {"cuGraphExecMemcpyNodeSetParams", "memcpy node", "direction"});
    Graph bigger = Graph::create(device());
    bigger.add_empty(bigger.add_empty({}));
    expect_refusal([&] { exec.set_child(embedded, bigger); }, true,
                   {"cuGraphExecChildGraphNodeSetParams", "graph node", "topology"});
    Graph other = Graph::create(device());
    GraphNode stranger = other.add_kernel({}, kConfig, kernel("add_value"), data, 1, kCount);
    expect_refusal(
        [&] { exec.set_kernel_arguments(stranger, kConfig, kernel("add_value"), data, 2, kCount); },
        true,
        {"cuGraphExecKernelNodeSetParams", "kernel node", "graph the executable graph was made"});

    // Nothing refused changed anything: the graph still runs as built.
    run(exec);
}

TEST_F(GraphExecNodes, WhatANodeHeldIsReleasedOnlyAfterTheLaunchesMadeBeforeItsChange) {
    Buffer host = pinned_ints();
    Buffer middle = device_ints(0);
    Buffer spare = device_ints(1);
    auto gate = std::make_shared<std::atomic<bool>>(false);
    auto freed = std::make_shared<std::atomic<bool>>(false);
    Graph graph = Graph::create(device());
    GraphNode wait = graph.add_host_function({}, [gate] {
        while (!gate->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    GraphNode copy = graph.add_copy(wait, middle, spare);
    graph.add_copy(copy, host.data(), host.size(), middle);
    GraphExec exec = graph.instantiate();
    {
        Buffer held = watched_buffer(device(), stream(), kCount * sizeof(int), freed);
        held.fill_uint32(12, stream());
        stream().sync();
        exec.set_copy(copy, middle, held);
    }
    exec.launch(stream());  // held back by the host node until the gate opens
    exec.set_copy(copy, middle, spare);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(freed->load()) << "a launch in flight still reads the replaced source";
    gate->store(true);
    stream().sync();
    EXPECT_EQ(host.span<int>()[0], 12) << "the launch made before the change used its source";
    EXPECT_TRUE(eventually([&] { return freed->load(); })) << "released once the launch was done";
}

TEST_F(GraphExecNodes, AWholeGraphUpdateLetsGoOfWhatPerNodeChangesHeld) {
    Buffer data = device_ints(0);
    Buffer host = pinned_ints();
    auto freed = std::make_shared<std::atomic<bool>>(false);
    Graph graph = Graph::create(device());
    GraphNode copy = graph.add_copy({}, host.data(), host.size(), data);
    GraphExec exec = graph.instantiate();
    {
        Buffer held = watched_buffer(device(), stream(), kCount * sizeof(int), freed);
        held.fill_uint32(4, stream());
        stream().sync();
        exec.set_copy(copy, host.data(), host.size(), held);
    }
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 4);
    EXPECT_FALSE(freed->load());
    exec.update(graph);  // every node takes the graph's parameters again
    EXPECT_TRUE(eventually([&] { return freed->load(); }));
    run(exec);
    EXPECT_EQ(host.span<int>()[0], 0);
}

}  // namespace
