// The global operator new and delete of a program that measures its allocations, the
// AllocationMeter reading them, and the serialized ObjectCode of many symbols
// (allocation_meter.hpp).
#include "allocation_meter.hpp"

#include "code/serialized_parts.hpp"
#include "support/little_endian.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

// Every allocation through operator new (std::string, std::map, std::vector: where a decoded
// value lives) is counted, live and at its peak; zstd's own buffers (malloc) are bounded by its
// window limit and not counted.
namespace {
std::atomic<long long> live_bytes{0};
std::atomic<long long> peak_bytes{0};

void* counted(std::size_t size) {
    void* memory = std::malloc(size == 0 ? 1 : size);
    if (memory == nullptr) throw std::bad_alloc();
    const long long now = live_bytes += static_cast<long long>(malloc_usable_size(memory));
    long long peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
    return memory;
}

void uncounted(void* memory) noexcept {
    if (memory == nullptr) return;
    live_bytes -= static_cast<long long>(malloc_usable_size(memory));
    std::free(memory);
}
}  // namespace

void* operator new(std::size_t size) { return counted(size); }
void* operator new[](std::size_t size) { return counted(size); }
void operator delete(void* memory) noexcept { uncounted(memory); }
void operator delete[](void* memory) noexcept { uncounted(memory); }
void operator delete(void* memory, std::size_t) noexcept { uncounted(memory); }
void operator delete[](void* memory, std::size_t) noexcept { uncounted(memory); }
// The nothrow forms too (std::stable_sort's buffer): every form allocates and frees alike.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return counted(size);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { uncounted(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { uncounted(memory); }

namespace cudacore::test {

AllocationMeter::AllocationMeter() : start_(live_bytes.load()) { peak_bytes = start_; }

long long AllocationMeter::peak() const { return peak_bytes.load() - start_; }

std::string serialized_with_symbols(std::uint32_t symbols) {
    std::string out = "\x89" "CCOBJ\r\n";
    detail::put_little_endian(out, 1, 4);
    detail::put_little_endian(out, 0x01020304, 4);
    const std::uint64_t total = 24 + 4 + 4 + 4 + std::uint64_t{symbols} * 15 + 8 + 1 + 8;
    detail::put_little_endian(out, total, 8);
    detail::put_little_endian(out, 2, 4);  // PTX
    detail::put_little_endian(out, 0, 4);  // no name
    detail::put_little_endian(out, symbols, 4);
    char expression[16];
    for (std::uint32_t i = 0; i < symbols; ++i) {
        std::snprintf(expression, sizeof expression, "s%06u", i);
        detail::put_little_endian(out, 7, 4);
        out.append(expression, 7);
        detail::put_little_endian(out, 0, 4);
    }
    detail::put_little_endian(out, 1, 8);
    out += "x";
    detail::SerializedChecksum checksum;
    checksum.update(out);
    out += detail::checksum_bytes(checksum.digest());
    EXPECT_EQ(out.size(), total);
    return out;
}

}  // namespace cudacore::test
