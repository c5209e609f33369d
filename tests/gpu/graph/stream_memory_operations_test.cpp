// Stream memory operations on a real GPU: one stream signals another through a written word, the
// host releases a waiting stream by writing pinned memory, batches, graph nodes of both kinds
// (built and captured), the 64-bit forms, what a capture keeps alive, and the errors raised
// before the driver is called. No wait here is unbounded (finished(), Watchdog).
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// Fails, showing `text`, when it lacks `part`.
#define EXPECT_CONTAINS(text, part)                                        \
    do {                                                                   \
        const std::string text_ = (text);                                  \
        EXPECT_NE(text_.find(part), std::string::npos) << text_;           \
    } while (0)

namespace {

using namespace cudacore;
using cudacore::test::wait_until;

constexpr unsigned kCount = 4096;
constexpr LaunchConfig kConfig{.grid = (kCount + 255) / 256, .block = 256};

constexpr const char* kSource = R"(
// Spins for `cycles` clock cycles, then writes `value` everywhere: slow enough that a reader not
// ordered after it would see the old data.
extern "C" __global__ void slow_fill(int* data, int value, unsigned n, long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {}
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = value;
}
extern "C" __global__ void copy_ints(const int* from, int* to, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = from[i];
}
)";

// About 20 ms on a 2 GHz GPU.
constexpr long long kSlowCycles = 40'000'000;

// Every wait here is bounded: the host polls a stream with a deadline instead of synchronizing
// with it, and fails naming the wait. Generous, for compute-sanitizer; a passing run takes
// milliseconds.
constexpr auto kDeadline = std::chrono::seconds(20);

// Ends the process with a message when a test runs past `limit`: for a driver call that itself
// blocks behind a wait that is never satisfied (nothing else can end such a test).
class Watchdog {
public:
    explicit Watchdog(std::chrono::seconds limit)
        : name_(::testing::UnitTest::GetInstance()->current_test_info()->name()),
          thread_([this, limit] {
              std::unique_lock lock(mutex_);
              if (done_.wait_for(lock, limit, [this] { return stopped_; })) return;
              std::fprintf(stderr,
                           "StreamMemoryOperations.%s: still running after %lld s, blocked behind a "
                           "wait that was never satisfied; ending the process instead of hanging\n",
                           name_.c_str(), static_cast<long long>(limit.count()));
              std::fflush(stderr);
              std::_Exit(3);
          }) {}
    ~Watchdog() {
        {
            std::lock_guard lock(mutex_);
            stopped_ = true;
        }
        done_.notify_all();
        thread_.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    std::string name_;
    std::mutex mutex_;
    std::condition_variable done_;
    bool stopped_ = false;
    std::thread thread_;  // last: starts once the members above exist
};

class StreamMemoryOperations : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        watchdog_.emplace(std::chrono::seconds(60));
        device_.emplace(0);
        device_->set_current();
        ProgramOptions options;
        options.name = "stream_memory_operations";
        options.arch = device_->arch();
        code_.emplace(Program(kSource, SourceType::cxx, options).compile(CodeType::cubin));
        slow_fill_.emplace(code_->get_kernel("slow_fill"));
        copy_.emplace(code_->get_kernel("copy_ints"));
        pinned_ = std::make_shared<LegacyPinnedMemoryResource>(*device_);
        plain_ = std::make_shared<SynchronousMemoryResource>(*device_);
        // Lazy loading: a kernel's first launch in a context may wait for the whole context, so a
        // first launch queued behind a wait would block until the wait is released. Each kernel
        // runs once here, before any wait.
        const Stream warm = device_->create_stream();
        const Buffer scratch = device_->allocate(sizeof(int), warm);
        launch(warm, LaunchConfig{.grid = 1, .block = 1}, slow_fill(), scratch, 0, 0u, 0ll);
        launch(warm, LaunchConfig{.grid = 1, .block = 1}, copy_ints(), scratch, scratch, 0u);
        warm.sync();
    }
    void TearDown() override { watchdog_.reset(); }

    const Device& device() const { return *device_; }
    const Kernel& slow_fill() const { return *slow_fill_; }
    const Kernel& copy_ints() const { return *copy_; }
    // `words` zeroed 64-bit words of device memory (cuMemAlloc: pools are refused).
    Buffer zeroed_words(const Stream& stream, std::size_t words = 1) const {
        Buffer buffer = plain_->allocate(words * 8, stream);
        buffer.fill_byte(0, stream);
        stream.sync();
        return buffer;
    }
    // Whether `stream` finished its work within kDeadline. If not: a failure naming `what`, then
    // `release` (which satisfies the wait from outside) and a shorter second chance; a stream
    // blocked even then ends the process, since tearing the test down would block too.
    bool finished(const Stream& stream, const std::string& what,
                  const std::function<void()>& release) const {
        if (wait_until([&] { return stream.is_done(); },
                       std::chrono::duration_cast<std::chrono::milliseconds>(kDeadline)))
            return true;
        ADD_FAILURE() << what << ": the stream was not done after " << kDeadline.count()
                      << " s (a wait that was never satisfied)";
        if (release) release();
        if (!wait_until([&] { return stream.is_done(); }, std::chrono::seconds(5))) {
            std::fprintf(stderr, "%s: still blocked after releasing it from outside; ending the "
                                 "process instead of hanging\n", what.c_str());
            std::fflush(stderr);
            std::_Exit(3);
        }
        return false;
    }
    // A release for finished(): writes `value` to `address` from a stream of its own.
    std::function<void()> write_from_outside(CUdeviceptr address, std::uint32_t value) const {
        return [this, address, value] {
            const Stream rescue = device().create_stream();
            write_value32({.pointer = address}, value, rescue);
        };
    }
    static std::vector<int> read_ints(const Buffer& buffer, const Stream& stream) {
        std::vector<int> host(buffer.size() / sizeof(int));
        buffer.copy_to(host, stream);
        stream.sync();
        return host;
    }
    static std::vector<std::uint64_t> read_words(const Buffer& buffer, const Stream& stream) {
        std::vector<std::uint64_t> host(buffer.size() / 8);
        buffer.copy_to(host, stream);
        stream.sync();
        return host;
    }
    static bool all_equal(const std::vector<int>& values, int expected) {
        return std::all_of(values.begin(), values.end(), [&](int v) { return v == expected; });
    }
    bool device_has(CUdevice_attribute attribute) const { return device().attribute(attribute) != 0; }

    std::optional<Watchdog> watchdog_;
    std::optional<Device> device_;
    std::optional<ObjectCode> code_;
    std::optional<Kernel> slow_fill_, copy_;
    std::shared_ptr<LegacyPinnedMemoryResource> pinned_;
    std::shared_ptr<SynchronousMemoryResource> plain_;
};

TEST_F(StreamMemoryOperations, OneStreamSignalsAnotherThroughAWrittenWord) {
    const Stream producer = device().create_stream();
    const Stream consumer = device().create_stream();
    const Buffer flag = zeroed_words(producer);
    const Buffer data = device().allocate(kCount * sizeof(int), producer);
    const Buffer out = device().allocate(kCount * sizeof(int), consumer);
    data.fill_uint32(1, producer);
    out.fill_uint32(0, consumer);
    producer.sync();
    consumer.sync();

    launch(producer, kConfig, slow_fill(), data, 7, kCount, kSlowCycles);
    write_value32({.buffer = flag}, 1, producer);
    wait_value32({.buffer = flag}, 1, consumer);
    launch(consumer, kConfig, copy_ints(), data, out, kCount);
    finished(consumer, "the consumer waiting for the producer's word",
             write_from_outside(flag.handle(), 1));
    // The consumer saw the data the producer's kernel wrote before the word: ordered by data.
    EXPECT_TRUE(all_equal(read_ints(out, consumer), 7));
    EXPECT_TRUE(finished(producer, "the producer", {}));
    EXPECT_EQ(read_words(flag, producer)[0], 1u);
}

TEST_F(StreamMemoryOperations, WaitsBlockUntilTheConditionHolds) {
    const Stream stream = device().create_stream();
    const Stream writer = device().create_stream();
    const Buffer word = zeroed_words(stream);
    // greater_or_equal: 3 satisfies a wait for 2; bitwise_and: bit 1 of 3; equal waits for 5.
    wait_value32({.buffer = word}, 2, stream, {.condition = WaitCondition::greater_or_equal});
    wait_value32({.buffer = word}, 2, stream, {.condition = WaitCondition::bitwise_and});
    wait_value32({.buffer = word}, 5, stream, {.condition = WaitCondition::equal});
    write_value32({.buffer = word}, 3, writer);
    EXPECT_TRUE(finished(writer, "the writer of 3", {}));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(stream.is_done()) << "the wait for 5 is over with the word at 3";
    write_value32({.buffer = word}, 5, writer);
    EXPECT_TRUE(finished(stream, "the waits for 2 (>=), bit 2 and 5 (==) with the word at 5",
                         write_from_outside(word.handle(), 5)));
    EXPECT_EQ(to_string(WaitCondition::bitwise_nor), "bitwise_nor");
}

TEST_F(StreamMemoryOperations, HostThreadReleasesAStreamByWritingPinnedMemory) {
    const Stream stream = device().create_stream();
    const Buffer host_word = pinned_->allocate(sizeof(std::uint32_t), stream);
    const Buffer host_data = pinned_->allocate(kCount * sizeof(int), stream);
    ASSERT_TRUE(host_word.is_device_accessible());
    auto* word = static_cast<std::uint32_t*>(host_word.data());
    std::atomic_ref<std::uint32_t>(*word).store(0);
    std::fill(host_data.span<int>().begin(), host_data.span<int>().end(), -1);
    const Buffer out = device().allocate(kCount * sizeof(int), stream);
    out.fill_uint32(0, stream);
    stream.sync();
    // The device's address of the mapped host word (the driver's documented way; with unified
    // addressing it is the host address).
    CUdeviceptr device_word = 0;
    ASSERT_EQ(detail::driver().cuMemHostGetDevicePointer(&device_word, word, 0), CUDA_SUCCESS);

    wait_value32({.pointer = device_word}, 1, stream);
    // The host thread writes once the main thread has looked at the stream, or after 5 s: a
    // launch that blocked behind the wait would never let it look, and then must not hang.
    std::atomic<bool> looked{false};
    std::atomic<bool> released_early{false};
    std::thread host([&] {
        if (!wait_until([&] { return looked.load(); }, std::chrono::seconds(5)))
            released_early = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::fill(host_data.span<int>().begin(), host_data.span<int>().end(), 42);
        std::atomic_ref<std::uint32_t>(*word).store(1, std::memory_order_release);
    });
    launch(stream, kConfig, copy_ints(), host_data, out, kCount);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const bool waiting = !stream.is_done();
    looked = true;
    host.join();
    EXPECT_FALSE(released_early) << "the launch behind the wait blocked until the host wrote";
    EXPECT_TRUE(waiting) << "the stream ran past an unsatisfied wait";
    finished(stream, "the stream waiting for the host's word in pinned memory",
             [word] { std::atomic_ref<std::uint32_t>(*word).store(1); });
    EXPECT_TRUE(all_equal(read_ints(out, stream), 42));
}

TEST_F(StreamMemoryOperations, ABatchRunsItsOperationsInOrder) {
    if (!device_has(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS))
        GTEST_SKIP() << "device 0 lacks 64-bit stream memory operations";
    const Stream stream = device().create_stream();
    const Stream releaser = device().create_stream();
    const Buffer words = zeroed_words(stream, 3);
    constexpr std::uint64_t kBig = 0x1234'5678'9abc'def0ull;
    const std::vector<MemoryOperation> operations = {
        wait_value32_operation({.buffer = words, .offset = 16}, 1),  // released below
        write_value32_operation({.buffer = words}, 5),
        write_value64_operation({.buffer = words, .offset = 8}, kBig),
        wait_value32_operation({.buffer = words}, 5, {.condition = WaitCondition::greater_or_equal}),
        wait_value64_operation({.buffer = words, .offset = 8}, kBig),
        write_value32_operation({.buffer = words, .offset = 20}, 9),
    };
    run_memory_operations(operations, stream);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(stream.is_done()) << "the batch's first wait did not hold it";
    run_memory_operations(std::vector{write_value32_operation({.buffer = words, .offset = 16}, 1)}, releaser);
    EXPECT_TRUE(finished(stream, "the batch after its first word was written",
                         write_from_outside(words.handle() + 16, 1)));
    const std::vector<std::uint64_t> values = read_words(words, stream);
    EXPECT_EQ(values[0], 5u);
    EXPECT_EQ(values[1], kBig);
    EXPECT_EQ(values[2], (std::uint64_t{9} << 32) | 1u);
    run_memory_operations({}, stream);  // an empty batch does nothing
}

TEST_F(StreamMemoryOperations, SixtyFourBitWaitsAndWrites) {
    if (!device_has(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS))
        GTEST_SKIP() << "device 0 lacks 64-bit stream memory operations";
    const Stream producer = device().create_stream();
    const Stream consumer = device().create_stream();
    const Buffer word = zeroed_words(producer);
    const Buffer data = device().allocate(kCount * sizeof(int), producer);
    const Buffer out = device().allocate(kCount * sizeof(int), consumer);
    out.fill_uint32(0, consumer);
    consumer.sync();
    // A value past 32 bits: a 32-bit wait on the low half would be satisfied by 2 alone.
    constexpr std::uint64_t kValue = (std::uint64_t{1} << 40) + 2;
    launch(producer, kConfig, slow_fill(), data, 11, kCount, kSlowCycles);
    write_value64({.buffer = word}, kValue, producer);
    wait_value64({.buffer = word}, kValue, consumer, {.condition = WaitCondition::greater_or_equal});
    launch(consumer, kConfig, copy_ints(), data, out, kCount);
    const CUdeviceptr address = word.handle();
    EXPECT_TRUE(finished(consumer, "the consumer waiting for the 64-bit word", [this, address] {
        const Stream rescue = device().create_stream();
        write_value64({.pointer = address}, kValue, rescue);
    }));
    EXPECT_TRUE(all_equal(read_ints(out, consumer), 11));
    EXPECT_TRUE(finished(producer, "the producer", {}));
    EXPECT_EQ(read_words(word, producer)[0], kValue);
}

TEST_F(StreamMemoryOperations, AGraphHoldsWaitAndWriteNodes) {
    const Stream stream = device().create_stream();
    const Stream other = device().create_stream();
    Buffer flag = zeroed_words(stream, 2);
    const Buffer data = device().allocate(kCount * sizeof(int), stream);
    const Buffer out = device().allocate(kCount * sizeof(int), stream);
    out.fill_uint32(0, stream);
    stream.sync();

    Graph graph = Graph::create(device());
    const std::size_t held_before = graph.held_count();
    // The graph waits for `other` to write the first word, then fills, writes the second word,
    // waits for it, and copies.
    const GraphNode released = add_wait_value32(graph, {}, {.buffer = flag}, 1);
    const GraphNode fill = graph.add_kernel(released, kConfig, slow_fill(), data, 5, kCount, 1000ll);
    const GraphNode written = add_write_value32(graph, fill, {.buffer = flag, .offset = 8}, 2);
    const GraphNode waited = add_wait_value32(graph, written, {.buffer = flag, .offset = 8}, 2);
    graph.add_kernel(waited, kConfig, copy_ints(), data, out, kCount);
    EXPECT_EQ(released.type(), CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    EXPECT_EQ(written.type(), CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    EXPECT_GT(graph.held_count(), held_before) << "the graph does not hold the word's buffer";

    GraphExec exec = graph.instantiate();
    const CUdeviceptr flag_address = flag.handle();
    flag = Buffer();  // the graph keeps the words alive
    exec.launch(stream);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(stream.is_done()) << "the graph ran past its wait node";
    write_value32({.pointer = flag_address}, 1, other);
    EXPECT_TRUE(finished(stream, "the graph after its first word was written",
                         write_from_outside(flag_address, 1)));
    EXPECT_TRUE(all_equal(read_ints(out, stream), 5));
}

TEST_F(StreamMemoryOperations, CapturedOperationsBecomeGraphNodes) {
    const Stream stream = device().create_stream();
    const Buffer words = zeroed_words(stream, 2);
    GraphBuilder builder = stream.begin_capture();
    write_value32({.buffer = words}, 3, builder);
    wait_value32({.buffer = words}, 3, builder);
    write_value32({.buffer = words, .offset = 4}, 4, builder);
    const Graph graph = builder.end();
    std::size_t batch_nodes = 0;
    for (const GraphNode& node : graph.nodes())
        batch_nodes += node.type() == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    EXPECT_EQ(batch_nodes, 3u);
    graph.instantiate().launch(stream);
    EXPECT_TRUE(finished(stream, "the captured graph", write_from_outside(words.handle(), 3)));
    EXPECT_EQ(read_words(words, stream)[0], (std::uint64_t{4} << 32) | 3u);
}

TEST_F(StreamMemoryOperations, ACaptureHoldsTheBufferItsOperationsName) {
    const Stream stream = device().create_stream();
    const Buffer backing = zeroed_words(stream);
    auto freed = std::make_shared<std::atomic<bool>>(false);
    Buffer watched = Buffer::from_handle(backing.handle(), 8, nullptr,
                                         [freed](CUdeviceptr, std::size_t) { *freed = true; });
    GraphBuilder builder = stream.begin_capture();
    write_value32({.buffer = watched}, 6, builder);
    std::optional<Graph> graph(builder.end());
    watched = Buffer();  // the last copy of the user's
    EXPECT_FALSE(*freed) << "the buffer went while a captured graph still writes it";
    graph->instantiate().launch(stream);
    EXPECT_TRUE(finished(stream, "the captured write", {}));
    EXPECT_EQ(read_words(backing, stream)[0], 6u);
    EXPECT_FALSE(*freed);
    graph.reset();  // the graph and its executable graph (released once its launch ran) let go
    EXPECT_TRUE(wait_until([&] { return freed->load(); }, std::chrono::seconds(5)))
        << "the graph's hold was never let go";
}

// A driver error on purpose (tests/sanitize_expected_errors.txt lists this test).
TEST_F(StreamMemoryOperations, PoolMemoryIsRefusedWithAClearError) {
    const Stream stream = device().create_stream();
    const Buffer pooled = device().allocate(8, stream);
    pooled.fill_byte(0, stream);
    try {
        write_value32({.buffer = pooled}, 1, stream);
    } catch (const DriverError& error) {
        // The driver tried (580) refuses it: the message says which memory these operations take.
        EXPECT_CONTAINS(std::string(error.what()), "cuStreamWriteValue32");
        EXPECT_CONTAINS(std::string(error.what()), "refuse memory from stream-ordered pools");
        EXPECT_CONTAINS(std::string(error.what()), "SynchronousMemoryResource");
        return;
    }
    // A driver that takes it: the write happened.
    EXPECT_TRUE(finished(stream, "a write to pool memory", {}));
    EXPECT_EQ(read_words(pooled, stream)[0], 1u);
}

TEST_F(StreamMemoryOperations, ErrorsNameTheCallBeforeTheDriverIsCalled) {
    const Stream stream = device().create_stream();
    const Buffer words = zeroed_words(stream, 2);
    auto message_of = [](auto&& call) -> std::string {
        try {
            call();
        } catch (const InvalidArgumentError& error) {
            return error.what();
        }
        return "no InvalidArgumentError";
    };
    EXPECT_CONTAINS(message_of([&] { wait_value32({.buffer = words, .offset = 2}, 1, stream); }),
                "wait_value32: address 0x");
    EXPECT_CONTAINS(message_of([&] { write_value32({.buffer = words, .offset = 2}, 1, stream); }),
                "not aligned to 4 bytes");
    if (device_has(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS))
        EXPECT_CONTAINS(message_of([&] { write_value64({.buffer = words, .offset = 4}, 1, stream); }),
                    "not aligned to 8 bytes");
    EXPECT_CONTAINS(message_of([&] { wait_value32({.buffer = words, .offset = 16}, 1, stream); }),
                "lies outside");
    EXPECT_CONTAINS(message_of([&] { wait_value32({}, 1, stream); }), "no address");
    // The driver's v2 operations refuse a write without a memory barrier: said before the call.
    EXPECT_CONTAINS(message_of([&] { write_value32({.buffer = words}, 1, stream, {.memory_barrier = false}); }),
                    "write_value32 (cuStreamWriteValue32): a write without a memory barrier");
    EXPECT_CONTAINS(message_of([&] {
                        run_memory_operations(std::vector{write_value32_operation({.buffer = words}, 1),
                                                                  write_value64_operation({.buffer = words}, 1,
                                                                                          {.memory_barrier = false})}, stream);
                    }),
                    "run_memory_operations (operation 1) (cuStreamBatchMemOp): a write without a memory barrier");
    EXPECT_CONTAINS(message_of([&] {
                    run_memory_operations(std::vector{write_value32_operation({.buffer = words}, 1),
                                                              MemoryOperation{.kind = MemoryOperation::Kind::write_value32,
                                                                              .address = {.buffer = words},
                                                                              .value = std::uint64_t{1} << 32,
                                                                              .wait = {}, .write = {}}}, stream);
                }),
                "run_memory_operations (operation 1): value 4294967296");
    auto managed = std::make_shared<ManagedMemoryResource>(device());
    const Buffer managed_word = managed->allocate(8, stream);
    EXPECT_CONTAINS(message_of([&] { write_value32({.buffer = managed_word}, 1, stream); }),
                    "managed memory");
    Graph graph = Graph::create(device());
    EXPECT_CONTAINS(message_of([&] { add_memory_operations(graph, {}, {}); }),
                "no operations");
    Stream closed = device().create_stream();
    closed.close();
    EXPECT_CONTAINS(message_of([&] { write_value32({.buffer = words}, 1, closed); }),
                "is closed");

    // A condition the device lacks: named with the call, the device and the attribute.
    struct Unsupported {
        CUdevice_attribute attribute;
        const char* name;
        WaitOptions options;
    };
    const Unsupported candidates[] = {
        {CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, "CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES",
         {.condition = WaitCondition::equal, .flush_remote_writes = true}},
        {CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR",
         {.condition = WaitCondition::bitwise_nor, .flush_remote_writes = false}},
    };
    bool checked = false;
    for (const Unsupported& candidate : candidates) {
        if (device_has(candidate.attribute)) continue;
        const std::string message =
            message_of([&] { wait_value32({.buffer = words}, 0, stream, candidate.options); });
        EXPECT_CONTAINS(message, "wait_value32 (cuStreamWaitValue32): device 0");
        EXPECT_CONTAINS(message, std::string(candidate.name) + " is 0");
        EXPECT_CONTAINS(message_of([&] { add_wait_value32(graph, {}, {.buffer = words}, 0, candidate.options); }),
                    candidate.name);
        checked = true;
    }
    EXPECT_EQ(graph.node_count(), 0u);
    stream.sync();  // nothing was enqueued by the refused calls
    if (!checked) GTEST_SKIP() << "device 0 supports every wait condition and flag";
}

}  // namespace

