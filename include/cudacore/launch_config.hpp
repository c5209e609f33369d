/// @file
/// LaunchConfig: the grid, block, cluster, dynamic shared memory, cooperative flag and launch
/// attributes of a launch: LaunchConfig{.grid = blocks, .block = 256}. Dim3 converts from one
/// number or {x, y, z}. With a cluster, `grid` counts clusters (grid 4, cluster 2: 8 blocks);
/// blocks() gives the blocks. launch() checks it first (launch_check.hpp).
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
    /// The same object (identity.hpp says how each type compares).
    constexpr bool operator==(const Dim3&) const noexcept = default;
};

/// "(256, 1, 1)".
std::string to_string(const Dim3& dim);

/// Grid, block, cluster, shared memory and launch attributes of a launch.
struct LaunchConfig {
    Dim3 grid{1};    ///< blocks; clusters when a cluster is set
    Dim3 block{1};   ///< threads per block
    /// Blocks per cluster; 1 x 1 x 1 launches without clusters. Needs compute capability 9.0+.
    Dim3 cluster{1};
    std::size_t shared_memory_bytes = 0;  ///< dynamic shared memory per block
    /// All blocks resident at once, so the kernel may synchronise the whole grid.
    bool cooperative = false;

    /// Programmatic dependent launch (compute capability 9.0+, cuLaunchKernelEx): this kernel may
    /// start once every block of the one before called cudaTriggerProgrammaticLaunchCompletion(),
    /// and calls cudaGridDependencySynchronize() before reading its results. Refused with
    /// InvalidArgumentError where the device lacks it.
    bool programmatic_stream_serialization = false;
    /// Records `event` once every block has triggered (or exited), for programmatic dependencies
    /// across streams; trigger_at_block_start: when each block starts instead (needs 9.0+).
    struct ProgrammaticEvent {
        CUevent event = nullptr;  ///< the caller's; kept valid until the launch has recorded it
        /// Trigger when each block starts rather than when it triggers or exits.
        bool trigger_at_block_start = false;
    };
    /// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT when set (needs 9.0+; a null event is refused).
    std::optional<ProgrammaticEvent> programmatic_event{};
    /// Records `event` when every block has completed or triggered (needs 9.0+).
    std::optional<CUevent> launch_completion_event{};
    /// Priority of this launch, as stream priorities (lower is higher; the device's range from
    /// cuCtxGetStreamPriorityRange). Needs stream priority support.
    std::optional<int> priority{};
    /// Memory synchronisation domain of the launch and the stream's domain map (needs 9.0+).
    std::optional<CUlaunchMemSyncDomain> memory_sync_domain{};
    std::optional<CUlaunchMemSyncDomainMap> memory_sync_domain_map{};  ///< needs 9.0+
    /// Preferred (larger) cluster shape, in blocks, the driver may use where it fits: a multiple
    /// of `cluster` in x and y, equal to it in z, dividing blocks() (the grid counts clusters).
    /// Needs a cluster launch, compute capability 9.0+ and a driver that knows the attribute.
    std::optional<Dim3> preferred_cluster{};
    std::optional<CUclusterSchedulingPolicy> cluster_scheduling_policy{};  ///< needs 9.0+
    /// L1 / shared memory split preference, in percent of the maximum shared memory.
    std::optional<unsigned> preferred_shared_memory_carveout{};
    /// L2 persistence window for this launch (needs L2 persisting cache support).
    std::optional<CUaccessPolicyWindow> access_policy_window{};
    /// Hint that the kernel is limited by NVLink bandwidth (passed as is; the driver decides).
    std::optional<bool> nvlink_util_centric_scheduling{};

    /// Any of the launch attributes above is set (the launch then goes through cuLaunchKernelEx).
    bool has_launch_attributes() const noexcept {
        return programmatic_stream_serialization || programmatic_event || launch_completion_event ||
               priority || memory_sync_domain || memory_sync_domain_map || preferred_cluster ||
               cluster_scheduling_policy || preferred_shared_memory_carveout ||
               access_policy_window || nvlink_util_centric_scheduling;
    }

    /// `cluster` is not 1 x 1 x 1.
    bool has_cluster() const noexcept { return cluster != Dim3{1}; }
    /// The blocks launched in each dimension: grid x cluster (64-bit, so an overflow of the
    /// driver's 32-bit dimensions can be refused rather than wrapped).
    struct Blocks {
        std::uint64_t x = 0,  ///< blocks in x
            y = 0,            ///< blocks in y
            z = 0;            ///< blocks in z
        /// x * y * z (callers check each dimension against the driver's limits first).
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

/// "grid (4096, 1, 1), block (256, 1, 1), 0 bytes of dynamic shared memory" (+ cooperative); with a
/// cluster "grid (4, 1, 1) clusters of (2, 1, 1) blocks (8 blocks), block ...".
std::string to_string(const LaunchConfig& config);

}  // namespace cudacore
