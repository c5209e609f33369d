#include "cudacore/launch.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/default_stream_scope.hpp"
#include "runtime/release/release.hpp"
#include "runtime/driver_launch_config.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/launch_checks.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <array>
#include <atomic>
#include <cstdio>

namespace cudacore {

namespace detail {

namespace {

// Whether a device supports a launch feature, asked once per device (only for launches that use
// the feature).
class DeviceFeature {
public:
    explicit DeviceFeature(CUdevice_attribute attribute) : attribute_(attribute) {
        for (auto& entry : known_) entry.store(-1, std::memory_order_relaxed);
    }
    bool supported(int ordinal, CUdevice device) { return value(ordinal, device) != 0; }
    int value(int ordinal, CUdevice device) {
        if (ordinal >= 0 && ordinal < static_cast<int>(known_.size())) {
            int cached = known_[ordinal].load(std::memory_order_relaxed);
            if (cached >= 0) return cached;
            cached = ask(device);
            known_[ordinal].store(cached, std::memory_order_relaxed);
            return cached;
        }
        return ask(device);
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
DeviceFeature& stream_priorities() {
    static DeviceFeature feature(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED);
    return feature;
}
DeviceFeature& persisting_l2_cache() {
    static DeviceFeature feature(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
    return feature;
}

[[noreturn]] void config_error(const KernelBox& kernel, const LaunchConfig& config, int ordinal,
                               const std::string& problem) {
    throw InvalidArgumentError("launch of " + kernel.description() + " on device " +
                               std::to_string(ordinal) + " (" + to_string(config) +
                               "): " + problem);
}

// Launch attributes the device lacks are refused here, naming the attribute and what it needs.
void check_launch_attributes(const KernelBox& kernel, const LaunchConfig& config,
                             const ContextBox& context) {
    const int ordinal = context.ordinal;
    const bool hopper = Device(ordinal).compute_capability().major >= 9;
    auto need_hopper = [&](bool used, const char* name) {
        if (used && !hopper)
            config_error(kernel, config, ordinal,
                         std::string(name) + " needs compute capability 9.0 or newer");
    };
    need_hopper(config.programmatic_stream_serialization,
                "programmatic dependent launch (programmatic_stream_serialization)");
    need_hopper(config.programmatic_event.has_value(), "programmatic_event");
    need_hopper(config.launch_completion_event.has_value(), "launch_completion_event");
    need_hopper(config.memory_sync_domain.has_value(), "memory_sync_domain");
    need_hopper(config.memory_sync_domain_map.has_value(), "memory_sync_domain_map");
    need_hopper(config.preferred_cluster.has_value(), "preferred_cluster");
    need_hopper(config.cluster_scheduling_policy.has_value(), "cluster_scheduling_policy");
    if (config.programmatic_event && !config.programmatic_event->event)
        config_error(kernel, config, ordinal, "programmatic_event has a null event");
    if (config.launch_completion_event && !*config.launch_completion_event)
        config_error(kernel, config, ordinal, "launch_completion_event is a null event");
    if (config.preferred_cluster) {
        if (!config.has_cluster())
            config_error(kernel, config, ordinal,
                         "preferred_cluster needs a cluster launch (set cluster too)");
        const Dim3& preferred = *config.preferred_cluster;
        if (preferred.volume() == 0 || preferred.x % config.cluster.x ||
            preferred.y % config.cluster.y || preferred.z != config.cluster.z)
            config_error(kernel, config, ordinal,
                         "preferred_cluster " + to_string(preferred) +
                             " is not a multiple of the cluster in x and y and equal to it in z");
        // The grid counts clusters; the preferred clusters must tile the blocks launched.
        const LaunchConfig::Blocks blocks = config.blocks();
        if (blocks.x % preferred.x || blocks.y % preferred.y)
            config_error(kernel, config, ordinal,
                         "preferred_cluster " + to_string(preferred) +
                             " does not divide the blocks launched (grid x cluster)");
    }
    if (config.priority && !stream_priorities().supported(ordinal, context.device))
        config_error(kernel, config, ordinal, "the device does not support launch priorities");
    if (config.preferred_shared_memory_carveout && *config.preferred_shared_memory_carveout > 100)
        config_error(kernel, config, ordinal,
                     "preferred_shared_memory_carveout is a percentage (0 to 100), not " +
                         std::to_string(*config.preferred_shared_memory_carveout));
    if (config.access_policy_window && !persisting_l2_cache().supported(ordinal, context.device))
        config_error(kernel, config, ordinal,
                     "access_policy_window needs a device with a persisting L2 cache");
}

[[noreturn]] void argument_error(const KernelBox& kernel, const std::string& problem) {
    throw InvalidArgumentError("launch of " + kernel.description() + ": " + problem);
}

void check_arguments(const KernelBox& kernel, const std::size_t* sizes, std::size_t count) {
    const std::vector<KernelParameter>& parameters = kernel.parameters();
    if (count != parameters.size()) [[unlikely]] {
        argument_error(kernel, "it takes " + std::to_string(parameters.size()) +
                                   " argument(s), " + std::to_string(count) + " given");
    }
    for (std::size_t index = 0; index < count; ++index) {
        if (sizes[index] != parameters[index].size) [[unlikely]]
            argument_error(kernel, argument_size_problem(index, count, sizes[index], parameters[index]));
    }
}

// `plain`: no cluster, not cooperative, no launch attributes (computed once per launch).
void check_config(const KernelBox& kernel, const LaunchConfig& config, const ContextBox& context,
                  bool plain) {
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
    if (plain) [[likely]] return;
    if (config.has_launch_attributes()) check_launch_attributes(kernel, config, context);
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
                       kernel.description() + ", " + to_string(config) + ", stream " + handle +
                           " on device " + std::to_string(stream.context->ordinal));
}

}  // namespace

namespace {
// "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", "21st".
std::string ordinal_word(std::size_t position) {
    const std::size_t last_two = position % 100;
    const char* suffix = "th";
    if (last_two < 11 || last_two > 13) {
        if (position % 10 == 1) suffix = "st";
        if (position % 10 == 2) suffix = "nd";
        if (position % 10 == 3) suffix = "rd";
    }
    return std::to_string(position) + suffix;
}
}  // namespace

std::string argument_size_problem(std::size_t index, std::size_t count,
                                  std::size_t argument_bytes, const KernelParameter& parameter) {
    return "argument " + std::to_string(index) + " is " + std::to_string(argument_bytes) +
           " bytes, but parameter " + std::to_string(index) + " (the " + ordinal_word(index + 1) +
           " of " + std::to_string(count) + ", at offset " + std::to_string(parameter.offset) +
           ") is " + std::to_string(parameter.size) +
           " bytes; pass a value of the parameter's type (a literal 10 is a 4-byte int: write "
           "std::size_t{10} for a size_t parameter), or launch a TypedKernel, which converts";
}

void check_launch_config(const KernelBox& kernel, const LaunchConfig& config,
                         const ContextBox& context) {
    check_config(kernel, config, context, false);
}

[[noreturn]] void throw_closed_buffer_argument() {
    throw InvalidArgumentError("launch: a kernel argument is a closed (or empty) Buffer");
}

void check_kernel_arguments(const Kernel& kernel, const std::size_t* sizes, std::size_t count) {
    const auto& box = detail::box_of(kernel);
    if (!box) throw InvalidArgumentError("TypedKernel: an empty (moved-from) Kernel");
    check_arguments(*box, sizes, count);
}

void launch_kernel(const Stream& stream, const LaunchConfig& config, const Kernel& kernel,
                   void** arguments, const std::size_t* sizes, std::size_t count) {
    // Read once: the stream's box is behind the state its copies share.
    const std::shared_ptr<StreamBox>& stream_share = detail::box_of(stream);
    if (!detail::box_of(kernel) || !stream_share) [[unlikely]] {
        stream.check_open("launch");
        throw InvalidArgumentError("launch: an empty (moved-from) Kernel or Stream");
    }
    const KernelBox& box = *detail::box_of(kernel);
    const StreamBox& stream_box = *stream_share;
    stream_box.check_host_functions();  // a host function's exception, reported once
    if (sizes) check_arguments(box, sizes, count);
    const bool plain = config.is_plain() && !config.has_launch_attributes();
    check_config(box, config, *stream_box.context, plain);
    // The launch may outlive every handle: the library remembers where it ran (see LibraryBox).
    if (box.library) box.library->note_launch(stream_share);
    // A captured launch runs when the graph does: the graph holds the library from now on.
    if (captures_active() && box.library) [[unlikely]]
        hold_for_capture(stream_box.handle, box.library);

    // A default stream runs in its own context (one comparison for any other stream).
    const DefaultStreamScope in_context(stream_box);
    const DriverApi& api = driver();
    void** parameters = count ? arguments : nullptr;
    if (plain) [[likely]] {
        CUresult status = api.cuLaunchKernel(
            reinterpret_cast<CUfunction>(box.handle), config.grid.x, config.grid.y, config.grid.z,
            config.block.x, config.block.y, config.block.z,
            static_cast<unsigned>(config.shared_memory_bytes), stream_box.handle, parameters,
            nullptr);
        if (status != CUDA_SUCCESS) [[unlikely]]
            launch_failed(status, "cuLaunchKernel", box, config, stream_box);
        return;
    }
    CUlaunchAttribute attributes[max_launch_attributes];
    CUlaunchConfig driver_config = to_driver_config(config, stream_box.handle, attributes);
    append_launch_attributes(config, driver_config);
    CUresult status = api.cuLaunchKernelEx(&driver_config, reinterpret_cast<CUfunction>(box.handle),
                                           parameters, nullptr);
    if (status != CUDA_SUCCESS) launch_failed(status, "cuLaunchKernelEx", box, config, stream_box);
}

}  // namespace detail

}  // namespace cudacore
