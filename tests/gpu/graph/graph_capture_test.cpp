// Graphs built by stream capture on a real GPU: a captured sequence of launches, copies, fills
// and allocations gives what running it directly gives; fork and join; capture modes; illegal
// calls during capture; captures abandoned by exceptions; update in place; the lifetime of what
// a launched graph uses; graph memory.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "graph/graph_box.hpp"
#include "graph_kernel_sources.hpp"
#include "runtime/release/release.hpp"
#include "runtime/library_box.hpp"
#include "support/box_access.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

constexpr unsigned kCount = 1000;
constexpr LaunchConfig kConfig{.grid = (kCount + 255) / 256, .block = 256};

ObjectCode compile_graph_kernels() {
    ProgramOptions options;
    options.name = "graph_kernels";
    options.arch = Device(0).arch();
    return Program(test::kGraphKernelsSource, SourceType::cxx, options).compile(CodeType::cubin);
}

class GraphCapture : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        stream_.emplace(device_->create_stream());
        code_.emplace(compile_graph_kernels());
        add_.emplace(code_->get_kernel("add_value"));
        pinned_ = std::make_shared<LegacyPinnedMemoryResource>(*device_);
    }
    const Device& device() const { return *device_; }
    const Stream& stream() const { return *stream_; }
    const Kernel& add() const { return *add_; }
    // One add() of 1 to `data`, captured on `on` and instantiated.
    GraphExec captured_add(const Stream& on, const Buffer& data) const {
        GraphBuilder builder = on.begin_capture();
        launch(builder, kConfig, add(), data, 1, kCount);
        return builder.end().instantiate();
    }
    // kCount ints of pinned host memory, zeroed.
    Buffer host_ints() const {
        Buffer buffer = pinned_->allocate(kCount * sizeof(int), stream());
        std::fill(buffer.span<int>().begin(), buffer.span<int>().end(), 0);
        return buffer;
    }
    static std::vector<int> values(const Buffer& host) {
        auto span = host.span<int>();
        return {span.begin(), span.end()};
    }

    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::optional<ObjectCode> code_;
    std::optional<Kernel> add_;
    std::shared_ptr<LegacyPinnedMemoryResource> pinned_;
};

// fill 5, +3, copy through pool memory allocated in the sequence, +10 there, copy to the host.
void run_sequence(const Stream& stream, const Device& device, const Kernel& add,
                  const Buffer& data, const Buffer& host) {
    data.fill_uint32(5, stream);
    launch(stream, kConfig, add, data, 3, kCount);
    Buffer scratch = device.allocate(data.size(), stream);
    scratch.copy_from(data, stream);
    launch(stream, kConfig, add, scratch, 10, kCount);
    scratch.copy_to(host, stream);
    scratch.close(stream);
}

TEST_F(GraphCapture, CapturedSequenceGivesTheSameResultsAsRunningItDirectly) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Buffer direct = host_ints();
    run_sequence(stream(), device(), add(), data, direct);
    stream().sync();

    Buffer replayed = host_ints();
    GraphBuilder builder = stream().begin_capture();
    EXPECT_TRUE(builder.is_capturing());
    EXPECT_TRUE(stream().is_capturing());
    run_sequence(builder, device(), add(), data, replayed);
    Graph graph = builder.end();
    EXPECT_FALSE(stream().is_capturing());
    // Nothing ran during capture.
    stream().sync();
    EXPECT_EQ(values(replayed), std::vector<int>(kCount, 0));
    // fill, kernel, alloc, copy, kernel, copy, free
    EXPECT_GE(graph.node_count(), 7u);
    EXPECT_GE(graph.held_count(), 1u);  // the kernels' library

    GraphExec exec = graph.instantiate();
    for (int replay = 0; replay < 3; ++replay) {
        std::fill(replayed.span<int>().begin(), replayed.span<int>().end(), 0);
        exec.launch(stream());
        stream().sync();
        EXPECT_EQ(values(replayed), values(direct)) << "replay " << replay;
    }
    EXPECT_EQ(values(direct), std::vector<int>(kCount, 18));
}

TEST_F(GraphCapture, ForkAndJoinRecordInParallel) {
    Buffer a = device().allocate(kCount * sizeof(int), stream());
    Buffer b = device().allocate(kCount * sizeof(int), stream());
    Buffer host_a = host_ints();
    Buffer host_b = host_ints();
    GraphBuilder builder(device());
    builder.begin();
    a.fill_byte(0, builder);
    b.fill_byte(0, builder);
    std::vector<GraphBuilder> forks = builder.split(2);
    ASSERT_EQ(forks.size(), 2u);
    EXPECT_NE(forks[0].stream(), forks[1].stream());
    EXPECT_NE(forks[0].stream(), builder.stream());
    launch(forks[0], kConfig, add(), a, 1, kCount);
    launch(forks[0], kConfig, add(), a, 1, kCount);
    launch(forks[1], kConfig, add(), b, 40, kCount);
    builder.join(forks);
    EXPECT_FALSE(forks[0].is_capturing());
    a.copy_to(host_a, builder);
    b.copy_to(host_b, builder);
    Graph graph = builder.end();

    // The two branches are parallel: the forked kernels have no edge between them, which the
    // DOT output shows as two kernels depending on the same node. Checked by results here.
    GraphExec exec = graph.instantiate();
    exec.launch(stream());
    stream().sync();
    EXPECT_EQ(values(host_a), std::vector<int>(kCount, 2));
    EXPECT_EQ(values(host_b), std::vector<int>(kCount, 40));
    EXPECT_NE(graph.to_dot().find("digraph"), std::string::npos);
}

TEST_F(GraphCapture, EndBeforeJoiningIsRefusedAndTheCaptureStaysOpen) {
    GraphBuilder builder = stream().begin_capture();
    std::vector<GraphBuilder> forks = builder.split(1);
    try {
        builder.end();
        FAIL() << "end() with an unjoined split builder succeeded";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("not joined"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(builder.is_capturing());
    builder.join(forks);
    Graph graph = builder.end();
    EXPECT_FALSE(stream().is_capturing());
}

TEST_F(GraphCapture, EveryCaptureModeRecords) {
    for (CaptureMode mode : {CaptureMode::global, CaptureMode::per_thread, CaptureMode::relaxed}) {
        Buffer data = device().allocate(kCount * sizeof(int), stream());
        Buffer host = host_ints();
        GraphBuilder builder(stream());
        builder.begin(mode);
        EXPECT_EQ(builder.mode(), mode);
        data.fill_uint32(1, builder);
        launch(builder, kConfig, add(), data, 1, kCount);
        data.copy_to(host, builder);
        GraphExec exec = builder.end().instantiate();
        exec.launch(stream());
        stream().sync();
        EXPECT_EQ(values(host), std::vector<int>(kCount, 2)) << capture_mode_name(mode);
    }
}

TEST_F(GraphCapture, EndingACaptureNeverBegunIsRefused) {
    GraphBuilder builder(device());
    try {
        builder.end();
        FAIL() << "end() without begin() succeeded";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("no capture was begun"), std::string::npos)
            << e.what();
    }
    builder.begin();
    EXPECT_THROW(builder.begin(), InvalidArgumentError);  // already capturing
    builder.end();
    EXPECT_THROW(builder.end(), InvalidArgumentError);  // already ended
}

// A second builder on a stream that is capturing is refused before anything reaches the driver,
// and the first capture goes on unharmed: its launches are held and its graph runs.
TEST_F(GraphCapture, ASecondBuilderOnACapturingStreamIsRefusedAndTheFirstGoesOn) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    data.fill_uint32(0, stream());
    GraphBuilder first(stream());
    first.begin();
    GraphBuilder second(stream());
    try {
        second.begin();
        FAIL() << "a second capture began on a capturing stream";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("GraphBuilder::begin"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("is capturing already"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(second.is_capturing());
    launch(first, kConfig, add(), data, 4, kCount);
    Graph graph = first.end();
    EXPECT_EQ(detail::box_of(graph)->holdings->size(), 1u);  // the kernel's library, held by the first capture
    graph.instantiate().launch(stream());
    Buffer host = host_ints();
    data.copy_to(host, stream());
    stream().sync();
    EXPECT_EQ(values(host), std::vector<int>(kCount, 4));
    // The stream is free again: a new capture begins on it.
    second.begin();
    EXPECT_TRUE(second.is_capturing());
    second.end();
}

TEST_F(GraphCapture, IllegalCallDuringCaptureNamesTheCallAndTheCapture) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    stream().sync();
    GraphBuilder builder = stream().begin_capture(CaptureMode::global);
    launch(builder, kConfig, add(), data, 1, kCount);
    try {
        stream().sync();  // synchronising a capturing stream is never allowed
        FAIL() << "sync() during capture succeeded";
    } catch (const DriverError& e) {
        EXPECT_EQ(e.call(), "cuStreamSynchronize");
        EXPECT_EQ(e.status(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        EXPECT_NE(std::string(e.what()).find("a stream capture was in progress"),
                  std::string::npos)
            << e.what();
    }
    // The capture is invalidated: end() says so, and the stream is usable again.
    try {
        builder.end();
        FAIL() << "end() of an invalidated capture succeeded";
    } catch (const DriverError& e) {
        EXPECT_EQ(e.call(), "cuStreamEndCapture");
        EXPECT_EQ(e.status(), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    EXPECT_FALSE(builder.is_capturing());
    EXPECT_FALSE(stream().is_capturing());
    Buffer host = host_ints();
    data.fill_uint32(4, stream());
    data.copy_to(host, stream());
    stream().sync();
    EXPECT_EQ(values(host), std::vector<int>(kCount, 4));
}

TEST_F(GraphCapture, AnExceptionDuringCaptureLeavesTheStreamUsable) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    try {
        GraphBuilder builder = stream().begin_capture();
        launch(builder, kConfig, add(), data, 1, kCount);
        std::vector<GraphBuilder> forks = builder.split(2);  // left unjoined
        launch(forks[1], kConfig, add(), data, 1, kCount);
        throw std::runtime_error("failure while recording");
    } catch (const std::runtime_error&) {
    }
    EXPECT_FALSE(stream().is_capturing());
    Buffer host = host_ints();
    data.fill_uint32(9, stream());
    launch(stream(), kConfig, add(), data, 1, kCount);
    data.copy_to(host, stream());
    stream().sync();
    EXPECT_EQ(values(host), std::vector<int>(kCount, 10));
    // And it captures again.
    GraphBuilder again = stream().begin_capture();
    launch(again, kConfig, add(), data, 1, kCount);
    Graph graph = again.end();
    EXPECT_EQ(graph.node_count(), 1u);
}

// Dropping a launched executable graph or a launched library queues a release that waits for
// the context first; it must wait for a capture in progress on another stream too, never
// invalidate it (a context-wide synchronize would).
TEST_F(GraphCapture, DeferredReleasesLeaveACaptureInProgressAlone) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Stream other = device().create_stream();
    std::optional<GraphExec> exec(captured_add(other, data));
    exec->launch(other);
    std::optional<ObjectCode> code(compile_graph_kernels());
    std::optional<Kernel> kernel(code->get_kernel("add_value"));
    launch(other, kConfig, *kernel, data, 1, kCount);

    detail::wait_for_deferred_releases();  // earlier tests' libraries leave first
    const auto unloads_before = detail::library_unload_count();
    GraphBuilder capture = stream().begin_capture();
    exec.reset();  // both releases are queued while the capture runs
    kernel.reset();
    code.reset();
    constexpr int launches = 20;
    for (int i = 0; i < launches; ++i) {
        launch(capture, kConfig, add(), data, 1, kCount);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // time for the workers
    }
    Graph graph = capture.end();  // throws if the capture was invalidated
    EXPECT_EQ(graph.node_count(), static_cast<std::size_t>(launches));
    // Once the capture is over, the releases go ahead.
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
}

// A capture begun outside cudacore (by the driver call itself) is unknown to cudacore; the waits
// of deferred releases must leave it alone too: they wait for the streams their work ran on, never
// for the whole context (which would invalidate the capture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
// at its end). The release here unloads nothing (the fixture holds the kernel's code): an unload
// synchronizes the context, which the driver does not allow during any capture.
TEST_F(GraphCapture, DeferredReleasesWaitWithoutInvalidatingARawCapture) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Stream other = device().create_stream();
    std::optional<GraphExec> exec(captured_add(other, data));
    for (int i = 0; i < 20; ++i) exec->launch(other);  // work the release waits for
    detail::wait_for_deferred_releases();
    const auto unloads_before = detail::library_unload_count();
    const auto& api = detail::driver();
    ASSERT_EQ(api.cuStreamBeginCapture(stream().handle(), CU_STREAM_CAPTURE_MODE_RELAXED),
              CUDA_SUCCESS);
    exec.reset();
    detail::wait_for_deferred_releases();  // done while the raw capture is in progress
    EXPECT_EQ(detail::library_unload_count(), unloads_before);
    CUgraph graph = nullptr;
    EXPECT_EQ(api.cuStreamEndCapture(stream().handle(), &graph), CUDA_SUCCESS);
    if (graph) api.cuGraphDestroy(graph);
}

// Code never launched is unloaded at once when dropped, except during a capture begun through
// cudacore: the unload (which synchronizes the context) then waits for the capture to end.
TEST_F(GraphCapture, CodeDroppedDuringACaptureIsUnloadedAfterIt) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    std::optional<ObjectCode> code(compile_graph_kernels());
    code->load();
    detail::wait_for_deferred_releases();
    const auto unloads_before = detail::library_unload_count();
    GraphBuilder capture = stream().begin_capture();
    launch(capture, kConfig, add(), data, 1, kCount);
    code.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(detail::library_unload_count(), unloads_before) << "unloaded during the capture";
    launch(capture, kConfig, add(), data, 1, kCount);
    Graph graph = capture.end();  // throws if the capture was invalidated
    EXPECT_EQ(graph.node_count(), 2u);
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
}

// A release whose work ran on a stream that is now capturing waits until that capture is over:
// waiting on the stream during it would invalidate it.
TEST_F(GraphCapture, AReleaseWaitsForTheCaptureOnItsStreamToEnd) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Stream other = device().create_stream();
    std::optional<ObjectCode> code(compile_graph_kernels());
    std::optional<Kernel> kernel(code->get_kernel("add_value"));
    launch(other, kConfig, *kernel, data, 1, kCount);
    detail::wait_for_deferred_releases();
    const auto unloads_before = detail::library_unload_count();
    const auto& api = detail::driver();
    ASSERT_EQ(api.cuStreamBeginCapture(other.handle(), CU_STREAM_CAPTURE_MODE_RELAXED),
              CUDA_SUCCESS);
    kernel.reset();
    code.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(detail::library_unload_count(), unloads_before) << "unloaded during the capture";
    CUgraph graph = nullptr;
    EXPECT_EQ(api.cuStreamEndCapture(other.handle(), &graph), CUDA_SUCCESS);
    if (graph) api.cuGraphDestroy(graph);
    detail::wait_for_deferred_releases();
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1);
}

TEST_F(GraphCapture, HostFunctionsRunOnEveryReplay) {
    auto calls = std::make_shared<std::atomic<int>>(0);
    GraphBuilder builder = stream().begin_capture();
    builder.add_host_function([calls] { calls->fetch_add(1); });
    GraphExec exec = builder.end().instantiate();
    EXPECT_EQ(calls->load(), 0);
    for (int i = 0; i < 3; ++i) exec.launch(stream());
    stream().sync();
    EXPECT_EQ(calls->load(), 3);
    EXPECT_GT(calls.use_count(), 1);  // the graph holds the callable
}

TEST_F(GraphCapture, UpdateInPlaceTakesTheNewParameters) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    Buffer host = host_ints();
    auto capture_add = [&](int value) {
        GraphBuilder builder = stream().begin_capture();
        launch(builder, kConfig, add(), data, value, kCount);
        data.copy_to(host, builder);
        return builder.end();
    };
    GraphExec exec = capture_add(1).instantiate();
    exec.update(capture_add(100));
    data.fill_byte(0, stream());
    exec.launch(stream());
    stream().sync();
    EXPECT_EQ(values(host), std::vector<int>(kCount, 100));

    // Another topology (a fill before the kernel) is refused; the executable graph is unchanged.
    GraphBuilder builder = stream().begin_capture();
    data.fill_byte(0, builder);
    launch(builder, kConfig, add(), data, 7, kCount);
    data.copy_to(host, builder);
    Graph other = builder.end();
    EXPECT_THROW(exec.update(other), GraphUpdateError);
    data.fill_byte(0, stream());
    exec.launch(stream());
    stream().sync();
    EXPECT_EQ(values(host), std::vector<int>(kCount, 100));
}

// An executable graph launched on an empty (moved-from) Stream is refused before the driver is
// asked: its release could not wait for a stream it does not know.
TEST_F(GraphCapture, LaunchOnAnEmptyStreamIsRefused) {
    Buffer data = device().allocate(kCount * sizeof(int), stream());
    GraphExec exec = captured_add(stream(), data);
    Stream moved_from = device().create_stream();
    Stream taken = std::move(moved_from);
    test::expect_invalid([&] { exec.launch(moved_from); },
                         {"GraphExec::launch", "empty (moved-from) Stream"});
    exec.launch(taken);  // the stream itself still works
    taken.sync();
}

TEST_F(GraphCapture, LaunchesAfterEveryOtherHandleWasDropped) {
    Buffer host = host_ints();
    std::optional<GraphExec> exec;
    // Earlier tests' libraries may still be on their way out (their releases wait for the device
    // on the release worker): let them go first, so the count below moves for this test alone.
    detail::wait_for_deferred_releases();
    const auto unloads_before = detail::library_unload_count();
    {
        ObjectCode code = compile_graph_kernels();
        Kernel kernel = code.get_kernel("add_value");
        Buffer data = device().allocate(kCount * sizeof(int), stream());
        GraphBuilder builder = stream().begin_capture();
        data.fill_uint32(20, builder);
        launch(builder, kConfig, kernel, data, 22, kCount);
        data.copy_to(host, builder);
        builder.hold(data);  // owned by the graph from now on
        exec.emplace(builder.end().instantiate({.upload_stream = stream()}));
        // ObjectCode, Kernel, Buffer, Graph and builder all go here.
    }
    stream().sync();
    EXPECT_EQ(detail::library_unload_count(), unloads_before);  // the graph holds the library
    for (int i = 0; i < 2; ++i) {
        std::fill(host.span<int>().begin(), host.span<int>().end(), 0);
        exec->launch(stream());
        stream().sync();
        EXPECT_EQ(values(host), std::vector<int>(kCount, 42));
    }
    exec->launch(stream());
    exec.reset();  // dropped while its launch may still run: released once the device is done
    stream().sync();
    // The graph's release runs on the deferred-release worker, and queues the unload there once
    // it lets go of the library: waited for, within a bound, so a leak still fails here.
    test::wait_until(
        [&] {
            detail::wait_for_deferred_releases();
            return detail::library_unload_count() > unloads_before;
        },
        std::chrono::seconds(10));
    EXPECT_EQ(detail::library_unload_count(), unloads_before + 1)
        << "the library of a dropped executable graph was not unloaded within 10 s";
    EXPECT_EQ(values(host), std::vector<int>(kCount, 42));
}

TEST_F(GraphCapture, GraphMemoryIsAllocatedAndFreedInsideEveryReplay) {
    auto graph_memory = std::make_shared<GraphMemoryResource>(device());
    // Outside a capture the resource refuses, naming the stream.
    try {
        graph_memory->allocate(1024, stream());
        FAIL() << "graph memory allocated outside a capture";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("not capturing"), std::string::npos) << e.what();
    }
    Buffer host = host_ints();
    GraphBuilder builder = stream().begin_capture();
    Buffer scratch = graph_memory->allocate(kCount * sizeof(int), builder);
    scratch.fill_uint32(1, builder);
    launch(builder, kConfig, add(), scratch, 2, kCount);
    scratch.copy_to(host, builder);
    scratch.close(builder);
    Graph graph = builder.end();
    std::size_t allocations = 0, frees = 0;
    for (const GraphNode& node : graph.nodes()) {
        allocations += node.type() == CU_GRAPH_NODE_TYPE_MEM_ALLOC;
        frees += node.type() == CU_GRAPH_NODE_TYPE_MEM_FREE;
    }
    EXPECT_EQ(allocations, 1u);
    EXPECT_EQ(frees, 1u);

    // A graph with memory nodes has at most one executable graph at a time.
    std::optional<GraphExec> exec(graph.instantiate());
    EXPECT_THROW(graph.instantiate(), DriverError);
    for (int replay = 0; replay < 4; ++replay) {
        std::fill(host.span<int>().begin(), host.span<int>().end(), 0);
        exec->launch(stream());
        stream().sync();
        EXPECT_EQ(values(host), std::vector<int>(kCount, 3)) << "replay " << replay;
    }
    const GraphMemoryStats stats = graph_memory->stats();
    EXPECT_GE(stats.used_high, kCount * sizeof(int));
    EXPECT_GE(stats.reserved_current, kCount * sizeof(int));
    EXPECT_GE(stats.reserved_high, stats.reserved_current);
    graph_memory->reset_high_watermarks();
    // The executable graph keeps its memory until it is destroyed; then trim gives it back.
    exec.reset();
    device().sync();
    graph_memory->trim();
    EXPECT_LT(graph_memory->stats().reserved_current, stats.reserved_current);
}

TEST_F(GraphCapture, WhileLoopRecordedByCaptureRunsADeviceComputedNumberOfTimes) {
    ProgramOptions options;
    options.name = "conditional_kernels";
    options.arch = device().arch();
    ObjectCode conditional = Program(test::kConditionalKernelsSource, SourceType::cxx, options)
                                 .compile(CodeType::cubin);
    Kernel set_count = conditional.get_kernel("set_count");
    Kernel step = conditional.get_kernel("while_step");
    Buffer seed = pinned_->allocate(sizeof(int), stream());
    seed.span<int>()[0] = 4;  // n = 4 * 2 + 1 = 9, known only to the device
    Buffer counter = device().allocate(sizeof(int), stream());
    Buffer runs = pinned_->allocate(sizeof(int), stream());
    runs.span<int>()[0] = 0;

    GraphBuilder builder = stream().begin_capture();
    ConditionalHandle loop = builder.create_conditional_handle();
    launch(builder, LaunchConfig{}, set_count, loop.handle(), seed, counter);
    GraphBuilder body = builder.while_loop(loop);
    launch(body, LaunchConfig{}, step, loop.handle(), counter, runs);
    body.end();
    Graph graph = builder.end();
    GraphExec exec = graph.instantiate();
    exec.launch(stream());
    stream().sync();
    EXPECT_EQ(runs.span<int>()[0], 9);
}

TEST_F(GraphCapture, IfElseAndSwitchRecordedByCaptureFollowTheDevice) {
    ProgramOptions options;
    options.name = "conditional_kernels";
    options.arch = device().arch();
    ObjectCode conditional = Program(test::kConditionalKernelsSource, SourceType::cxx, options)
                                 .compile(CodeType::cubin);
    Kernel set_condition = conditional.get_kernel("set_condition");
    Kernel mark = code_->get_kernel("mark");
    Buffer value = pinned_->allocate(sizeof(unsigned), stream());
    Buffer out = host_ints();

    GraphBuilder builder = stream().begin_capture();
    ConditionalHandle branch = builder.create_conditional_handle();
    launch(builder, LaunchConfig{}, set_condition, branch.handle(), value);
    auto [then_body, else_body] = builder.if_else(branch);
    launch(then_body, LaunchConfig{}, mark, out, 0, 1);
    launch(else_body, LaunchConfig{}, mark, out, 1, 1);
    then_body.end();
    else_body.end();
    ConditionalHandle choice = builder.create_conditional_handle();
    launch(builder, LaunchConfig{}, set_condition, choice.handle(), value);
    std::vector<GraphBuilder> cases = builder.switch_cases(choice, 3);
    for (int index = 0; index < 3; ++index) {
        launch(cases[index], LaunchConfig{}, mark, out, 2 + index, 1);
        cases[index].end();
    }
    GraphExec exec = builder.end().instantiate();

    for (unsigned chosen : {0u, 1u, 2u, 5u}) {
        value.span<unsigned>()[0] = chosen;
        std::fill(out.span<int>().begin(), out.span<int>().end(), 0);
        exec.launch(stream());
        stream().sync();
        const auto got = values(out);
        EXPECT_EQ(got[0], chosen != 0 ? 1 : 0) << "value " << chosen;
        EXPECT_EQ(got[1], chosen == 0 ? 1 : 0) << "value " << chosen;
        for (unsigned index = 0; index < 3; ++index)
            EXPECT_EQ(got[2 + index], index == chosen ? 1 : 0) << "value " << chosen;
    }
}

TEST_F(GraphCapture, EndingWithAnOpenBodyIsRefused) {
    GraphBuilder builder = stream().begin_capture();
    ConditionalHandle handle = builder.create_conditional_handle();
    GraphBuilder body = builder.if_then(handle);
    EXPECT_THROW(builder.end(), InvalidArgumentError);
    body.end();
    EXPECT_THROW(body.end(), InvalidArgumentError);  // ended already
    Graph graph = builder.end();
    EXPECT_EQ(graph.node_count(), 1u);  // the conditional node
    EXPECT_FALSE(stream().is_capturing());
}

}  // namespace

namespace {

// An event recorded into a capture belongs to the graph, whose launches record it again: when
// dropped it is destroyed, never kept for the next create_event (event.hpp), while an event
// recorded outside captures is kept.
TEST_F(GraphCapture, AnEventRecordedIntoACaptureIsNeverReused) {
    detail::EventRecycler& kept = detail::box_of(stream())->context->recycled_events;
    const int kind = detail::EventRecycler::kind_of({});
    std::optional<Event> captured = device().create_event();
    GraphBuilder builder = stream().begin_capture();
    builder.stream().record(*captured);
    Graph graph = builder.end();
    GraphExec exec = graph.instantiate();
    exec.launch(stream());
    stream().sync();
    const int before_captured = kept.kept(kind);
    captured.reset();
    EXPECT_EQ(kept.kept(kind), before_captured);

    std::optional<Event> plain = device().create_event();
    stream().record(*plain);
    plain->sync();
    const int before_plain = kept.kept(kind);
    plain.reset();
    EXPECT_EQ(kept.kept(kind), before_plain + 1);
}

}  // namespace
