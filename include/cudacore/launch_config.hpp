// LaunchConfig: the grid, block, cluster, dynamic shared memory and cooperative flag of a launch.
//
// A plain struct: LaunchConfig{.grid = blocks, .block = 256}. Dimensions are Dim3 values that
// convert from one number ("256" is 256 x 1 x 1) or from {x, y, z}. launch() checks the config
// before calling the driver: no zero dimension, a block within the kernel's limit on the device,
// dynamic shared memory within the kernel's limit (raise it with
// Kernel::set_max_dynamic_shared_size_bytes), clusters only on devices that have them and only
// dividing the grid, cooperative only where the device supports it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudacore {

struct Dim3 {
    unsigned x = 1;
    unsigned y = 1;
    unsigned z = 1;

    constexpr Dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) noexcept
        : x(x_), y(y_), z(z_) {}
    constexpr std::uint64_t volume() const noexcept {
        return std::uint64_t{x} * std::uint64_t{y} * std::uint64_t{z};
    }
    constexpr bool operator==(const Dim3&) const noexcept = default;
};

// "(256, 1, 1)".
std::string to_string(const Dim3& dim);

struct LaunchConfig {
    Dim3 grid{1};    // blocks
    Dim3 block{1};   // threads per block
    // Blocks per cluster; 1 x 1 x 1 launches without clusters. Needs compute capability 9.0+.
    Dim3 cluster{1};
    std::size_t shared_memory_bytes = 0;  // dynamic shared memory per block
    // All blocks resident at once, so the kernel may synchronise the whole grid.
    bool cooperative = false;

    bool has_cluster() const noexcept { return cluster != Dim3{1}; }
    // Plain cuLaunchKernel suffices (no cluster, not cooperative).
    bool is_plain() const noexcept { return !has_cluster() && !cooperative; }
};

// "grid (4096, 1, 1), block (256, 1, 1), 0 bytes of dynamic shared memory" (+ cluster, cooperative).
std::string to_string(const LaunchConfig& config);

}  // namespace cudacore
