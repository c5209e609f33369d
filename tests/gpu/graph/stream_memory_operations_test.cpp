// Stream memory operations on a real GPU: one stream signals another through a written word, the
// host releases a waiting stream by writing pinned memory, batches, graph nodes of both kinds
// (built and captured), the 64-bit forms, what an operation keeps alive, and the errors raised
// before the driver is called.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
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

class StreamMemoryOperations : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        device_->set_current();
        ProgramOptions options;
        options.name = "stream_memory_operations";
        options.arch = device_->arch();
        code_.emplace(Program(kSource, SourceType::cxx, options).compile(CodeType::cubin));
        slow_fill_.emplace(code_->get_kernel("slow_fill"));
        copy_.emplace(code_->get_kernel("copy_ints"));
        pinned_ = std::make_shared<PinnedMemoryResource>(*device_);
        plain_ = std::make_shared<SynchronousMemoryResource>(*device_);
    }
    const Device& device() const { return *device_; }
    const Kernel& slow_fill() const { return *slow_fill_; }
    const Kernel& copy_ints() const { return *copy_; }
    // `words` zeroed 64-bit words of device memory.
    Buffer zeroed_words(const Stream& stream, std::size_t words = 1) const {
        Buffer buffer = plain_->allocate(words * 8, stream);
        buffer.fill_byte(0, stream);
        stream.sync();
        return buffer;
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

    std::optional<Device> device_;
    std::optional<ObjectCode> code_;
    std::optional<Kernel> slow_fill_, copy_;
    std::shared_ptr<PinnedMemoryResource> pinned_;
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
    write_value32(producer, {.buffer = flag}, 1);
    wait_value32(consumer, {.buffer = flag}, 1);
    launch(consumer, kConfig, copy_ints(), data, out, kCount);
    // The consumer saw the data the producer's kernel wrote before the word: ordered by data.
    EXPECT_TRUE(all_equal(read_ints(out, consumer), 7));
    EXPECT_EQ(read_words(flag, producer)[0], 1u);
}

TEST_F(StreamMemoryOperations, WaitsBlockUntilTheConditionHolds) {
    const Stream stream = device().create_stream();
    const Stream writer = device().create_stream();
    const Buffer word = zeroed_words(stream);
    // greater_or_equal: 3 satisfies a wait for 2; bitwise_and: bit 1 of 3; equal waits for 5.
    wait_value32(stream, {.buffer = word}, 2, {.condition = WaitCondition::greater_or_equal});
    wait_value32(stream, {.buffer = word}, 2, {.condition = WaitCondition::bitwise_and});
    wait_value32(stream, {.buffer = word}, 5, {.condition = WaitCondition::equal});
    write_value32(writer, {.buffer = word}, 3);
    writer.sync();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(stream.is_done()) << "the wait for 5 is over with the word at 3";
    write_value32(writer, {.buffer = word}, 5, {.memory_barrier = false});
    stream.sync();
    EXPECT_TRUE(stream.is_done());
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

    // The word as a raw device address of host memory mapped to the device.
    wait_value32(stream, {.pointer = host_word.handle()}, 1);
    launch(stream, kConfig, copy_ints(), host_data, out, kCount);
    std::thread host([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::fill(host_data.span<int>().begin(), host_data.span<int>().end(), 42);
        std::atomic_ref<std::uint32_t>(*word).store(1, std::memory_order_release);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_FALSE(stream.is_done()) << "the stream ran past an unsatisfied wait";
    host.join();
    // Bounded: a wait that never sees the host's word fails the test instead of hanging it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!stream.is_done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!stream.is_done()) {
        ADD_FAILURE() << "the host's write did not release the stream within 5 s";
        const Stream other = device().create_stream();
        write_value32(other, {.pointer = host_word.handle()}, 1);
        other.sync();
    }
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
    run_memory_operations(stream, operations);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(stream.is_done()) << "the batch's first wait did not hold it";
    run_memory_operations(releaser, std::vector{write_value32_operation({.buffer = words, .offset = 16}, 1)});
    stream.sync();
    const std::vector<std::uint64_t> values = read_words(words, stream);
    EXPECT_EQ(values[0], 5u);
    EXPECT_EQ(values[1], kBig);
    EXPECT_EQ(values[2], (std::uint64_t{9} << 32) | 1u);
    run_memory_operations(stream, {});  // an empty batch does nothing
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
    write_value64(producer, {.buffer = word}, kValue);
    wait_value64(consumer, {.buffer = word}, kValue, {.condition = WaitCondition::greater_or_equal});
    launch(consumer, kConfig, copy_ints(), data, out, kCount);
    EXPECT_TRUE(all_equal(read_ints(out, consumer), 11));
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
    write_value32(other, {.pointer = flag_address}, 1);
    stream.sync();
    EXPECT_TRUE(all_equal(read_ints(out, stream), 5));
}

TEST_F(StreamMemoryOperations, CapturedOperationsBecomeGraphNodes) {
    const Stream stream = device().create_stream();
    const Buffer words = zeroed_words(stream, 2);
    GraphBuilder builder = stream.begin_capture();
    write_value32(builder, {.buffer = words}, 3);
    wait_value32(builder, {.buffer = words}, 3);
    write_value32(builder, {.buffer = words, .offset = 4}, 4);
    const Graph graph = builder.end();
    std::size_t batch_nodes = 0;
    for (const GraphNode& node : graph.nodes())
        batch_nodes += node.type() == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    EXPECT_EQ(batch_nodes, 3u);
    graph.instantiate().launch(stream);
    stream.sync();
    EXPECT_EQ(read_words(words, stream)[0], (std::uint64_t{4} << 32) | 3u);
}

TEST_F(StreamMemoryOperations, ABufferStaysAliveUntilTheOperationHasRun) {
    const Stream waiter = device().create_stream();
    const Stream writer = device().create_stream();
    const Buffer backing = zeroed_words(waiter);
    auto freed = std::make_shared<std::atomic<bool>>(false);
    Buffer watched = Buffer::from_handle(backing.handle(), 8, nullptr,
                                         [freed](CUdeviceptr, std::size_t) { *freed = true; });
    wait_value32(waiter, {.buffer = watched}, 1);
    watched = Buffer();  // the last copy of the user's
    EXPECT_FALSE(*freed) << "the buffer went while a wait on it was queued";
    write_value32(writer, {.pointer = backing.handle()}, 1);
    waiter.sync();
    // The hold is dropped on a later call from a user thread once the stream passed it.
    for (int i = 0; i < 100 && !*freed; ++i) {
        waiter.check_host_functions();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(*freed) << "the hold was never let go";
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
    EXPECT_CONTAINS(message_of([&] { wait_value32(stream, {.buffer = words, .offset = 2}, 1); }),
                "wait_value32: address 0x");
    EXPECT_CONTAINS(message_of([&] { write_value32(stream, {.buffer = words, .offset = 2}, 1); }),
                "not aligned to 4 bytes");
    if (device_has(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS))
        EXPECT_CONTAINS(message_of([&] { write_value64(stream, {.buffer = words, .offset = 4}, 1); }),
                    "not aligned to 8 bytes");
    EXPECT_CONTAINS(message_of([&] { wait_value32(stream, {.buffer = words, .offset = 16}, 1); }),
                "lies outside");
    EXPECT_CONTAINS(message_of([&] { wait_value32(stream, {}, 1); }), "no address");
    EXPECT_CONTAINS(message_of([&] {
                    run_memory_operations(stream, std::vector{write_value32_operation({.buffer = words}, 1),
                                                              MemoryOperation{.kind = MemoryOperation::Kind::write_value32,
                                                                              .address = {.buffer = words},
                                                                              .value = std::uint64_t{1} << 32,
                                                                              .wait = {}, .write = {}}});
                }),
                "run_memory_operations (operation 1): value 4294967296");
    auto managed = std::make_shared<ManagedMemoryResource>(device());
    const Buffer managed_word = managed->allocate(8, stream);
    EXPECT_CONTAINS(message_of([&] { write_value32(stream, {.buffer = managed_word}, 1); }),
                    "managed memory");
    Graph graph = Graph::create(device());
    EXPECT_CONTAINS(message_of([&] { add_memory_operations(graph, {}, {}); }),
                "no operations");
    Stream closed = device().create_stream();
    closed.close();
    EXPECT_CONTAINS(message_of([&] { write_value32(closed, {.buffer = words}, 1); }),
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
            message_of([&] { wait_value32(stream, {.buffer = words}, 0, candidate.options); });
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

