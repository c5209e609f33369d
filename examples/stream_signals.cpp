// Streams signalling each other through words in memory (stream memory operations): a producer
// stream writes a flag after its kernel and a consumer stream waits for it before reading the
// kernel's data; then the host releases a stream that waits on a word of pinned memory, after
// filling the data the stream's next kernel reads. No events, no host functions.
#include <cudacore/cudacore.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <thread>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void fill(int* data, int value, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = value;
}
extern "C" __global__ void add_from(const int* from, int* to, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] += from[i];
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    constexpr unsigned n = 1 << 16;
    const LaunchConfig config{.grid = (n + 255) / 256, .block = 256};
    Device device(0);
    device.set_current();
    const ObjectCode code =
        Program(kSource, SourceType::cxx, {.arch = device.arch()}).compile(CodeType::cubin);
    const Kernel fill = code.get_kernel("fill");
    const Kernel add_from = code.get_kernel("add_from");

    // 1. One stream signals another: the consumer's kernel runs only once the word is 1, which
    //    the producer writes after its kernel.
    const Stream producer = device.create_stream();
    const Stream consumer = device.create_stream();
    // The word in memory from cuMemAlloc (stream memory operations refuse memory from a
    // stream-ordered pool on some drivers).
    auto plain = std::make_shared<SynchronousMemoryResource>(device);
    const Buffer flag = plain->allocate(sizeof(std::uint32_t), producer);
    flag.fill_uint32(0, producer);
    const Buffer data = device.allocate(n * sizeof(int), producer);
    const Buffer sum = device.allocate(n * sizeof(int), consumer);
    sum.fill_uint32(0, consumer);
    // Lazy loading (CUDA's default): a kernel's first launch may wait for the whole context, so
    // each kernel runs once, on nothing, before any stream waits.
    launch(producer, config, fill, data, 0, 0u);
    launch(producer, config, add_from, data, data, 0u);
    producer.sync();
    consumer.sync();
    launch(producer, config, fill, data, 3, n);
    write_value32({.buffer = flag}, 1, producer);
    wait_value32({.buffer = flag}, 1, consumer);
    launch(consumer, config, add_from, data, sum, n);

    // 2. The host releases the consumer: it waits for a word of pinned host memory (mapped to the
    //    device), which a host thread sets once it has written the data the next kernel adds.
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    const Buffer host_flag = pinned->allocate(sizeof(std::uint32_t), consumer);
    const Buffer host_data = pinned->allocate(n * sizeof(int), consumer);
    std::atomic_ref<std::uint32_t> word(*static_cast<std::uint32_t*>(host_flag.data()));
    word.store(0);
    wait_value32({.buffer = host_flag}, 1, consumer);
    std::thread host([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (int& value : host_data.span<int>()) value = 4;
        word.store(1, std::memory_order_release);  // releases the stream
    });
    launch(consumer, config, add_from, host_data, sum, n);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const bool held = !consumer.is_done();
    host.join();

    // A bounded wait: a stream that never sees the word is reported, not waited for for ever.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!consumer.is_done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!consumer.is_done()) {
        std::fprintf(stderr, "error: the consumer was still waiting after 10 s\n");
        return 1;
    }
    std::vector<int> result(n);
    sum.copy_to(result, consumer);
    consumer.sync();
    int wrong = 0;
    for (int value : result) wrong += value != 3 + 4;
    std::printf("producer -> consumer through a written word, then released by the host: "
                "consumer %s at the host's word, %d of %u sums wrong, %s\n",
                held ? "waited" : "did NOT wait", wrong, n,
                held && wrong == 0 ? "as expected" : "WRONG");
    return held && wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
