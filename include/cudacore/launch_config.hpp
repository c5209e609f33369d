/// @file
/// LaunchConfig: grid, block, cluster, dynamic shared memory, cooperative flag and launch
/// attributes: LaunchConfig{.grid = blocks, .block = 256}. With a cluster, `grid` counts clusters.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace cudacore {

/// Grid, block or cluster dimensions.
struct Dim3 {
    unsigned x = 1;  ///< extent in x
    unsigned y = 1;  ///< extent in y
    unsigned z = 1;  ///< extent in z

    /// x_ x y_ x z_; implicit, so that 256 means 256 x 1 x 1.
    constexpr Dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) noexcept
        : x(x_), y(y_), z(z_) {}
    /// x * y * z, in 64 bits (no overflow).
    constexpr std::uint64_t volume() const noexcept {
        return std::uint64_t{x} * std::uint64_t{y} * std::uint64_t{z};
    }
    /// Equal when x, y and z are.
    constexpr bool operator==(const Dim3&) const noexcept = default;
};

/// "(256, 1, 1)".
std::string to_string(const Dim3& dim);

/// Grid, block, cluster, shared memory and launch attributes of a launch.
struct LaunchConfig {
    Dim3 grid{1};    ///< blocks; clusters when a cluster is set
    Dim3 block{1};   ///< threads per block
    Dim3 cluster{1};  ///< blocks per cluster; 1 x 1 x 1: no clusters (9.0+)
    std::size_t shared_memory_bytes = 0;  ///< dynamic shared memory per block
    bool cooperative = false;  ///< all blocks resident at once (grid-wide sync)

    /// Programmatic dependent launch (9.0+; else InvalidArgumentError).
    bool programmatic_stream_serialization = false;
    /// Records `event` once every block has triggered or exited (or started) (9.0+).
    struct ProgrammaticEvent {
        CUevent event = nullptr;  ///< the caller's; kept valid until the launch has recorded it
    bool trigger_at_block_start = false;  ///< trigger when each block starts
    };
    /// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT when set (a null event is refused).
    std::optional<ProgrammaticEvent> programmatic_event{};
    /// Records `event` when every block has completed or triggered (needs 9.0+).
    std::optional<CUevent> launch_completion_event{};
    /// Priority of this launch, as stream priorities (lower is higher).
    std::optional<int> priority{};
    /// Memory synchronisation domain of the launch and the stream's domain map (9.0+).
    std::optional<CUlaunchMemSyncDomain> memory_sync_domain{};
    std::optional<CUlaunchMemSyncDomainMap> memory_sync_domain_map{};  ///< needs 9.0+
    /// Preferred larger cluster shape (a multiple of `cluster` in x and y, dividing blocks()).
    std::optional<Dim3> preferred_cluster{};
    std::optional<CUclusterSchedulingPolicy> cluster_scheduling_policy{};  ///< needs 9.0+
    /// L1 / shared memory split preference, in percent.
    std::optional<unsigned> preferred_shared_memory_carveout{};
    /// L2 persistence window for this launch.
    std::optional<CUaccessPolicyWindow> access_policy_window{};
    /// Hint that the kernel is limited by NVLink bandwidth.
    std::optional<bool> nvlink_util_centric_scheduling{};

    /// Any launch attribute above is set (cuLaunchKernelEx).
    bool has_launch_attributes() const noexcept {
        return programmatic_stream_serialization || programmatic_event || launch_completion_event ||
               priority || memory_sync_domain || memory_sync_domain_map || preferred_cluster ||
               cluster_scheduling_policy || preferred_shared_memory_carveout ||
               access_policy_window || nvlink_util_centric_scheduling;
    }

    /// `cluster` is not 1 x 1 x 1.
    bool has_cluster() const noexcept { return cluster != Dim3{1}; }
    /// The blocks launched in each dimension, 64-bit (overflow refused rather than wrapped).
    struct Blocks {
        std::uint64_t x = 0,  ///< blocks in x
            y = 0,            ///< blocks in y
            z = 0;            ///< blocks in z
    /// x * y * z.
        constexpr std::uint64_t volume() const noexcept { return x * y * z; }
    };
    /// The blocks launched: grid x cluster in each dimension.
    constexpr Blocks blocks() const noexcept {
        return {std::uint64_t{grid.x} * cluster.x, std::uint64_t{grid.y} * cluster.y,
                std::uint64_t{grid.z} * cluster.z};
    }
    /// Plain cuLaunchKernel suffices (no cluster, not cooperative).
    bool is_plain() const noexcept { return !has_cluster() && !cooperative; }
};

/// "grid (4096, 1, 1), block (256, 1, 1), 0 bytes of dynamic shared memory" (and clusters).
std::string to_string(const LaunchConfig& config);

}  // namespace cudacore
