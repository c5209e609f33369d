#include "cudacore/launch.hpp"

#include "cudacore/errors.hpp"
#include "runtime/capture_registry.hpp"
#include "runtime/driver_launch_config.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/runtime_handles.hpp"

#include <array>
#include <atomic>
#include <cstdio>

namespace cudacore {

std::string to_string(const Dim3& dim) {
    return "(" + std::to_string(dim.x) + ", " + std::to_string(dim.y) + ", " +
           std::to_string(dim.z) + ")";
}

std::string to_string(const LaunchConfig& config) {
    std::string out = "grid " + to_string(config.grid);
    if (config.has_cluster()) {
        out += " clusters of " + to_string(config.cluster) + " blocks (" +
               std::to_string(config.blocks().volume()) + " blocks)";
    }
    out += ", block " + to_string(config.block);
    out += ", " + std::to_string(config.shared_memory_bytes) + " bytes of dynamic shared memory";
    if (config.cooperative) out += ", cooperative";
    return out;
}

namespace detail {

namespace {

// Whether a device supports a launch feature, asked once per device (only for launches that use
// the feature).
class DeviceFeature {
public:
    explicit DeviceFeature(CUdevice_attribute attribute) : attribute_(attribute) {
        for (auto& entry : known_) entry.store(-1, std::memory_order_relaxed);
    }
    bool supported(int ordinal, CUdevice device) {
        if (ordinal >= 0 && ordinal < static_cast<int>(known_.size())) {
            int cached = known_[ordinal].load(std::memory_order_relaxed);
            if (cached >= 0) return cached != 0;
            cached = ask(device);
            known_[ordinal].store(cached, std::memory_order_relaxed);
            return cached != 0;
        }
        return ask(device) != 0;
    }

private:
    int ask(CUdevice device) const {
        int value = 0;
        check(driver().cuDeviceGetAttribute(&value, attribute_, device), "cuDeviceGetAttribute",
              "device " + std::to_string(device));
        return value;
    }
    CUdevice_attribute attribute_;
    std::array<std::atomic<int>, 64> known_;  // by ordinal; -1: not asked yet
};

DeviceFeature& cluster_launch() {
    static DeviceFeature feature(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
    return feature;
}
DeviceFeature& cooperative_launch() {
    static DeviceFeature feature(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
    return feature;
}

[[noreturn]] void config_error(const KernelBox& kernel, const LaunchConfig& config, int ordinal,
                               const std::string& problem) {
    throw InvalidArgumentError("launch of " + kernel.description + " on device " +
                               std::to_string(ordinal) + " (" + to_string(config) +
                               "): " + problem);
}

[[noreturn]] void argument_error(const KernelBox& kernel, const std::string& problem) {
    throw InvalidArgumentError("launch of " + kernel.description + ": " + problem);
}

void check_arguments(const KernelBox& kernel, const std::size_t* sizes, std::size_t count) {
    const std::vector<KernelParameter>& parameters = kernel.parameters();
    if (count != parameters.size()) [[unlikely]] {
        argument_error(kernel, "it takes " + std::to_string(parameters.size()) +
                                   " argument(s), " + std::to_string(count) + " given");
    }
    for (std::size_t index = 0; index < count; ++index) {
        if (sizes[index] != parameters[index].size) [[unlikely]] {
            argument_error(kernel, "argument " + std::to_string(index) + " is " +
                                       std::to_string(sizes[index]) + " bytes, but parameter " +
                                       std::to_string(index) + " (at offset " +
                                       std::to_string(parameters[index].offset) + ") is " +
                                       std::to_string(parameters[index].size) + " bytes");
        }
    }
}

void check_config(const KernelBox& kernel, const LaunchConfig& config, const ContextBox& context) {
    const int ordinal = context.ordinal;
    if (config.grid.volume() == 0) [[unlikely]]
        config_error(kernel, config, ordinal, "the grid has a zero dimension");
    if (config.block.volume() == 0) [[unlikely]]
        config_error(kernel, config, ordinal, "the block has a zero dimension");
    const int max_threads = kernel.max_threads_per_block(ordinal, context.device);
    if (config.block.volume() > static_cast<std::uint64_t>(max_threads)) [[unlikely]] {
        config_error(kernel, config, ordinal,
                     "the block has " + std::to_string(config.block.volume()) +
                         " threads, over the kernel's limit of " + std::to_string(max_threads));
    }
    if (config.shared_memory_bytes > 0) {
        const int limit = kernel.max_dynamic_shared_size_bytes(ordinal, context.device);
        if (config.shared_memory_bytes > static_cast<std::size_t>(limit)) [[unlikely]] {
            // The attribute may have been raised outside cudacore: ask again before refusing.
            const int fresh = kernel.max_dynamic_shared_size_bytes(ordinal, context.device, true);
            if (config.shared_memory_bytes > static_cast<std::size_t>(fresh)) {
                config_error(kernel, config, ordinal,
                             std::to_string(config.shared_memory_bytes) +
                                 " bytes of dynamic shared memory is over the kernel's limit of " +
                                 std::to_string(fresh) +
                                 " bytes; raise it with Kernel::set_max_dynamic_shared_size_bytes");
            }
        }
    }
    if (config.is_plain()) [[likely]] return;
    if (config.has_cluster()) {
        if (config.cluster.volume() == 0)
            config_error(kernel, config, ordinal, "the cluster has a zero dimension");
        if (!cluster_launch().supported(ordinal, context.device))
            config_error(kernel, config, ordinal,
                         "the device does not support cluster launches (compute capability 9.0 "
                         "or newer is needed)");
        // The grid counts clusters: the driver gets grid x cluster blocks, which must fit.
        const LaunchConfig::Blocks blocks = config.blocks();
        constexpr std::uint64_t kMax = 0xffffffffu;
        if (blocks.x > kMax || blocks.y > kMax || blocks.z > kMax)
            config_error(kernel, config, ordinal,
                         "grid x cluster is (" + std::to_string(blocks.x) + ", " +
                             std::to_string(blocks.y) + ", " + std::to_string(blocks.z) +
                             ") blocks, over the driver's 32-bit grid dimensions (with a "
                             "cluster, the grid counts clusters)");
    }
    if (config.cooperative && !cooperative_launch().supported(ordinal, context.device))
        config_error(kernel, config, ordinal, "the device does not support cooperative launches");
}

[[noreturn]] void launch_failed(CUresult status, const char* call, const KernelBox& kernel,
                                const LaunchConfig& config, const StreamBox& stream) {
    char handle[32];
    std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(stream.handle));
    throw_driver_error(status, call,
                       kernel.description + ", " + to_string(config) + ", stream " + handle +
                           " on device " + std::to_string(stream.context->ordinal));
}

}  // namespace

[[noreturn]] void throw_closed_buffer_argument() {
    throw InvalidArgumentError("launch: a kernel argument is a closed (or empty) Buffer");
}

void check_kernel_arguments(const Kernel& kernel, const std::size_t* sizes, std::size_t count) {
    if (!kernel.box()) throw InvalidArgumentError("TypedKernel: an empty (moved-from) Kernel");
    check_arguments(*kernel.box(), sizes, count);
}

void launch_kernel(const Stream& stream, const LaunchConfig& config, const Kernel& kernel,
                   void** arguments, const std::size_t* sizes, std::size_t count) {
    if (!kernel.box() || !stream.box()) [[unlikely]]
        throw InvalidArgumentError("launch: an empty (moved-from) Kernel or Stream");
    const KernelBox& box = *kernel.box();
    const StreamBox& stream_box = *stream.box();
    if (sizes) check_arguments(box, sizes, count);
    check_config(box, config, *stream_box.context);
    // The launch may outlive every handle: the library remembers where it ran (see LibraryBox).
    if (box.library) box.library->note_launch(stream_box.context);
    // A captured launch runs when the graph does: the graph holds the library from now on.
    if (captures_active() && box.library) [[unlikely]]
        hold_for_capture(stream_box.handle, box.library);

    const DriverApi& api = driver();
    void** parameters = count ? arguments : nullptr;
    if (config.is_plain()) [[likely]] {
        CUresult status = api.cuLaunchKernel(
            reinterpret_cast<CUfunction>(box.handle), config.grid.x, config.grid.y, config.grid.z,
            config.block.x, config.block.y, config.block.z,
            static_cast<unsigned>(config.shared_memory_bytes), stream_box.handle, parameters,
            nullptr);
        if (status != CUDA_SUCCESS) [[unlikely]]
            launch_failed(status, "cuLaunchKernel", box, config, stream_box);
        return;
    }
    CUlaunchAttribute attributes[2];
    const CUlaunchConfig driver_config = to_driver_config(config, stream_box.handle, attributes);
    CUresult status = api.cuLaunchKernelEx(&driver_config, reinterpret_cast<CUfunction>(box.handle),
                                           parameters, nullptr);
    if (status != CUDA_SUCCESS) launch_failed(status, "cuLaunchKernelEx", box, config, stream_box);
}

}  // namespace detail

}  // namespace cudacore
