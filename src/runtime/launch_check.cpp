// Checking a launch before making it (launch_check.hpp).
#include "cudacore/launch_check.hpp"

#include "cudacore/errors.hpp"
#include "runtime/launch_checks.hpp"
#include "support/box_access.hpp"

namespace cudacore {

namespace {

[[noreturn]] void refuse(const detail::KernelBox& kernel, const LaunchConfig& config,
                         const Device& device, const std::string& problem) {
    throw InvalidArgumentError("launch of " + kernel.description() + " on device " +
                               std::to_string(device.ordinal()) + " (" + to_string(config) +
                               "): " + problem);
}

// Each dimension of `extent` against the device's limit for it.
void check_dimensions(const detail::KernelBox& kernel, const LaunchConfig& config,
                      const Device& device, const char* what, const std::uint64_t (&extent)[3],
                      const CUdevice_attribute (&limits)[3]) {
    static constexpr const char* axes[] = {"x", "y", "z"};
    for (int axis = 0; axis < 3; ++axis) {
        const int limit = device.attribute(limits[axis]);
        if (extent[axis] > static_cast<std::uint64_t>(limit))
            refuse(kernel, config, device,
                   std::string(what) + " is " + std::to_string(extent[axis]) + " in " + axes[axis] +
                       ", over the device's limit of " + std::to_string(limit));
    }
}

void check_cluster(const Kernel& handle, const detail::KernelBox& kernel,
                   const LaunchConfig& config, const Device& device) {
    const Dim3& cluster = config.cluster;
    // A shape fixed when compiled (__cluster_dims__) or set as an attribute must be the one given.
    const int width = handle.attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, device);
    if (width > 0) {
        const Dim3 required(static_cast<unsigned>(width),
                            static_cast<unsigned>(handle.attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, device)),
                            static_cast<unsigned>(handle.attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, device)));
        if (cluster != required)
            refuse(kernel, config, device,
                   "the kernel requires clusters of " + to_string(required) + " blocks, not " +
                       to_string(cluster));
        return;
    }
    if (cluster.volume() > 8 &&
        !handle.attribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, device))
        refuse(kernel, config, device,
               "the cluster has " + std::to_string(cluster.volume()) +
                   " blocks, over the portable limit of 8; allow more with "
                   "kernel.set_attribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)");
    // The largest cluster the kernel can run with this block and shared memory; the query wants
    // the grid in blocks.
    LaunchConfig shape = config;
    const LaunchConfig::Blocks blocks = config.blocks();
    shape.grid = Dim3(static_cast<unsigned>(blocks.x), static_cast<unsigned>(blocks.y),
                      static_cast<unsigned>(blocks.z));
    const int largest = handle.occupancy(device).max_potential_cluster_size(shape);
    if (cluster.volume() > static_cast<std::uint64_t>(largest))
        refuse(kernel, config, device,
               "the cluster has " + std::to_string(cluster.volume()) +
                   " blocks, over the largest the kernel can run with this block and shared "
                   "memory, " + std::to_string(largest) + " (cuOccupancyMaxPotentialClusterSize)");
}

void check_cooperative(const Kernel& handle, const detail::KernelBox& kernel,
                       const LaunchConfig& config, const Device& device) {
    const int per_multiprocessor = handle.occupancy(device).max_active_blocks_per_multiprocessor(
        static_cast<int>(config.block.volume()), config.shared_memory_bytes);
    const std::uint64_t resident =
        static_cast<std::uint64_t>(per_multiprocessor) * device.multiprocessor_count();
    if (config.blocks().volume() > resident)
        refuse(kernel, config, device,
               "a cooperative launch of " + std::to_string(config.blocks().volume()) +
                   " blocks, but only " + std::to_string(resident) + " (" +
                   std::to_string(per_multiprocessor) +
                   " per multiprocessor) can be resident at once");
}

// What launch() leaves to the driver, checked here so that the reason can be given.
void check_beyond_launch(const Kernel& handle, const detail::KernelBox& kernel,
                         const LaunchConfig& config, const Device& device) {
    check_dimensions(kernel, config, device, "the block", {config.block.x, config.block.y, config.block.z},
                     {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z});
    const LaunchConfig::Blocks blocks = config.blocks();
    check_dimensions(kernel, config, device, "the grid, in blocks,", {blocks.x, blocks.y, blocks.z},
                     {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z});
    const std::uint64_t static_bytes = static_cast<std::uint64_t>(handle.shared_size_bytes(device));
    const int device_limit = device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (static_bytes + config.shared_memory_bytes > static_cast<std::uint64_t>(device_limit))
        refuse(kernel, config, device,
               std::to_string(static_bytes) + " bytes of static and " +
                   std::to_string(config.shared_memory_bytes) +
                   " bytes of dynamic shared memory are over the device's " +
                   std::to_string(device_limit) + " bytes per block");
    if (config.has_cluster()) check_cluster(handle, kernel, config, device);
    if (config.cooperative) check_cooperative(handle, kernel, config, device);
}

}  // namespace

void check_launch(const LaunchConfig& config, const Kernel& kernel, const Device& device) {
    const std::shared_ptr<detail::KernelBox>& box = detail::box_of(kernel);
    if (!box) throw InvalidArgumentError("check_launch: an empty (moved-from) Kernel");
    detail::check_launch_config(*box, config, *detail::primary_context(device.ordinal()));
    check_beyond_launch(kernel, *box, config, device);
}

std::optional<std::string> launch_problem(const LaunchConfig& config, const Kernel& kernel,
                                          const Device& device) {
    if (!detail::box_of(kernel))
        throw InvalidArgumentError("launch_problem: an empty (moved-from) Kernel");
    try {
        check_launch(config, kernel, device);
    } catch (const InvalidArgumentError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

}  // namespace cudacore
