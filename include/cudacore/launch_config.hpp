// LaunchConfig: the grid, block, cluster, dynamic shared memory and cooperative flag of a launch.
//
// A plain struct: LaunchConfig{.grid = blocks, .block = 256}. Dimensions are Dim3 values that
// convert from one number ("256" is 256 x 1 x 1) or from {x, y, z}. launch() checks the config
// before calling the driver: no zero dimension, a block within the kernel's limit on the device,
// dynamic shared memory within the kernel's limit (raise it with
// Kernel::set_max_dynamic_shared_size_bytes), clusters only on devices that have them,
// cooperative only where the device supports it.
//
// With a cluster, `grid` counts clusters, not blocks (as in cuda.core): grid 4 with cluster 2
// runs 8 blocks, grid (2, 3) with cluster (2, 2) runs (4, 6), 24 blocks. blocks() gives the
// blocks launched. Without a cluster, `grid` counts blocks.
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
    Dim3 grid{1};    // blocks; clusters when a cluster is set
    Dim3 block{1};   // threads per block
    // Blocks per cluster; 1 x 1 x 1 launches without clusters. Needs compute capability 9.0+.
    Dim3 cluster{1};
    std::size_t shared_memory_bytes = 0;  // dynamic shared memory per block
    // All blocks resident at once, so the kernel may synchronise the whole grid.
    bool cooperative = false;

    bool has_cluster() const noexcept { return cluster != Dim3{1}; }
    // The blocks launched in each dimension: grid x cluster (64-bit, so an overflow of the
    // driver's 32-bit dimensions can be refused rather than wrapped).
    struct Blocks {
        std::uint64_t x, y, z;
        constexpr std::uint64_t volume() const noexcept { return x * y * z; }
    };
    constexpr Blocks blocks() const noexcept {
        return {std::uint64_t{grid.x} * cluster.x, std::uint64_t{grid.y} * cluster.y,
                std::uint64_t{grid.z} * cluster.z};
    }
    // Plain cuLaunchKernel suffices (no cluster, not cooperative).
    bool is_plain() const noexcept { return !has_cluster() && !cooperative; }
};

// "grid (4096, 1, 1), block (256, 1, 1), 0 bytes of dynamic shared memory" (+ cooperative); with a
// cluster "grid (4, 1, 1) clusters of (2, 1, 1) blocks (8 blocks), block ...".
std::string to_string(const LaunchConfig& config);

}  // namespace cudacore
