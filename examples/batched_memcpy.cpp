// Batched copies: many buffer pairs enqueued by one copy_batch call, with the same attributes for
// all, checked against one-by-one copies, with per-copy attributes, and between managed buffers
// with location hints. Mirrors cuda.core's examples/batched_memcpy.py.
#include <cudacore/cudacore.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

using namespace cudacore;

constexpr std::size_t kSize = 4096;

// The buffer's bytes, read back through the host (synchronizes the stream).
std::vector<std::uint8_t> read_back(const Buffer& buffer, const Stream& stream) {
    std::vector<std::uint8_t> bytes(buffer.size());
    buffer.copy_to(bytes, stream);
    stream.sync();
    return bytes;
}

// Whether every byte of `buffer` is `value`.
bool all_bytes_are(const Buffer& buffer, std::uint8_t value, const Stream& stream) {
    const std::vector<std::uint8_t> bytes = read_back(buffer, stream);
    return std::all_of(bytes.begin(), bytes.end(), [&](std::uint8_t b) { return b == value; });
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    const int count = 4;
    std::size_t wrong = 0;

    // 1. The same (default) attributes for every copy: pinned sources to device memory.
    std::vector<CopyPair> copies;
    for (int i = 0; i < count; ++i) {
        Buffer source = pinned->allocate(kSize, stream);
        source.fill_byte(std::uint8_t(i + 1), stream);
        copies.push_back({device.allocate(kSize, stream), source});
    }
    copy_batch(copies, stream);
    for (int i = 0; i < count; ++i)
        wrong += !all_bytes_are(copies[i].destination, std::uint8_t(i + 1), stream);

    // 2. The batch gives what the same copies made one by one give.
    std::vector<CopyPair> batched, one_by_one;
    for (int i = 0; i < count; ++i) {
        copies[i].source.fill_byte(std::uint8_t(i + 100), stream);
        batched.push_back({device.allocate(kSize, stream), copies[i].source});
        one_by_one.push_back({copies[i].source, device.allocate(kSize, stream)});
        copies[i].source.copy_to(one_by_one[i].destination, stream);
    }
    copy_batch(batched, stream);
    for (int i = 0; i < count; ++i)
        wrong += read_back(batched[i].destination, stream) !=
                 read_back(one_by_one[i].destination, stream);

    // 3. Attributes per copy: the source read in stream order, or whenever the driver likes
    // (then no earlier work may still use the source: the fills above are done).
    stream.sync();
    std::vector<CopyPair> mixed;
    for (int i = 0; i < count; ++i) {
        const CopySourceAccessOrder order =
            i % 2 == 0 ? CopySourceAccessOrder::stream : CopySourceAccessOrder::any;
        mixed.push_back({device.allocate(kSize, stream), copies[i].source, {.source_access_order = order}});
    }
    copy_batch(mixed, stream);
    for (int i = 0; i < count; ++i)
        wrong += !all_bytes_are(mixed[i].destination, std::uint8_t(i + 100), stream);

    // 4. Managed buffers with hints: the source's pages are on the device, the destination's on
    // the host (the driver uses hints for managed memory, where the device supports it).
    auto managed = std::make_shared<ManagedMemoryResource>(device);
    std::vector<CopyPair> hinted;
    for (int i = 0; i < 2; ++i) {
        Buffer source = managed->allocate(kSize, stream);
        source.fill_byte(std::uint8_t(i + 200), stream);
        hinted.push_back({managed->allocate(kSize, stream), source, {.source_location_hint = MemoryLocation::device(device.ordinal()),
                           .destination_location_hint = MemoryLocation::host()}});
    }
    copy_batch(hinted, stream);
    for (int i = 0; i < 2; ++i)
        wrong += !all_bytes_are(hinted[i].destination, std::uint8_t(i + 200), stream);

    std::printf("batched copies: %d with shared attributes, %d against one-by-one copies, %d with "
                "their own attributes, 2 managed with hints: %zu wrong\n",
                count, count, count, wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
