// A CUDA process for the checkpoint tests to lock, checkpoint, restore and unlock: allocates
// device memory, writes a pattern into it, prints "ready" and waits for a line on its standard
// input; then reads the memory back and prints "intact" (exit 0) or how many words differ (exit
// 1). Without a GPU it prints "skipped: <why>" and exits 0.
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/system.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kWords = 16u << 20;  // 64 MiB of device memory

std::uint32_t pattern(std::size_t i) { return static_cast<std::uint32_t>(i * 2654435761u + 7u); }

}  // namespace

int main() try {
    if (!cudacore::system::driver_available() || cudacore::system::device_count() == 0) {
        std::printf("skipped: no CUDA device\n");
        return 0;
    }
    const cudacore::Device device(0);
    cudacore::Stream stream = device.create_stream();
    cudacore::Buffer buffer = device.allocate(kWords * 4, stream);
    std::vector<std::uint32_t> host(kWords);
    for (std::size_t i = 0; i < kWords; ++i) host[i] = pattern(i);
    buffer.copy_from(host.data(), kWords * 4, stream);
    stream.sync();
    std::printf("ready\n");
    std::fflush(stdout);

    std::string line;
    std::getline(std::cin, line);  // the controller has locked, checkpointed, restored, unlocked

    std::vector<std::uint32_t> back(kWords, 0);
    buffer.copy_to(back.data(), kWords * 4, stream);
    stream.sync();
    std::size_t differ = 0;
    for (std::size_t i = 0; i < kWords; ++i) differ += back[i] != pattern(i);
    // New work after the restore runs too.
    cudacore::Buffer fresh = device.allocate(1 << 20, stream);
    fresh.fill_uint32(0xC0FFEEu, stream);
    std::vector<std::uint32_t> filled((1 << 20) / 4, 0);
    fresh.copy_to(filled.data(), 1 << 20, stream);
    stream.sync();
    const std::size_t unfilled = static_cast<std::size_t>(
        std::count_if(filled.begin(), filled.end(), [](std::uint32_t w) { return w != 0xC0FFEEu; }));
    if (differ != 0 || unfilled != 0) {
        std::printf("differ: %zu words, %zu words of new work wrong\n", differ, unfilled);
        return 1;
    }
    std::printf("intact\n");
    return 0;
} catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 2;
}
