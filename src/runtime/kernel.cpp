#include "cudacore/kernel.hpp"

#include "code/kernel_parameter_count.hpp"
#include "code/object_code_state.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "errors/driver_log.hpp"
#include "runtime/driver_launch_config.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/library_box.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace cudacore {

namespace detail {

namespace {

std::string on_device(const std::string& kernel, int ordinal) {
    return kernel + " on device " + std::to_string(ordinal);
}

int query_attribute(const KernelBox& box, CUfunction_attribute attribute, int ordinal,
                    CUdevice device) {
    int value = 0;
    check(driver().cuKernelGetAttribute(&value, attribute, box.handle, device),
          "cuKernelGetAttribute", [&] { return on_device(box.description(), ordinal); });
    return value;
}

std::vector<KernelParameter> query_parameters(CUkernel handle, const std::string& description,
                                              std::optional<std::size_t> code_count) {
    std::vector<KernelParameter> parameters;
    const DriverApi& api = driver();
    // The count from the driver where it can tell (cuKernelGetParamCount, CUDA 13.2+), else from
    // the code, so no call fails (compute-sanitizer reports every failed call as an error).
    std::size_t count = 0;
    const bool driver_counted =
        api.cuKernelGetParamCount && api.cuKernelGetParamCount(handle, &count) == CUDA_SUCCESS;
    if (!driver_counted && code_count) count = *code_count;
    if (driver_counted || code_count) {
        parameters.resize(count);
        for (std::size_t index = 0; index < count; ++index) {
            const CUresult status = api.cuKernelGetParamInfo(
                handle, index, &parameters[index].offset, &parameters[index].size);
            // The code claimed more than the driver knows: keep what it knows.
            if (status == CUDA_ERROR_INVALID_VALUE && !driver_counted) {
                discard_driver_log();  // an answer, not a failure: its lines must not reach a later error
                parameters.resize(index);
                break;
            }
            check(status, "cuKernelGetParamInfo", [&] {
                return description + ", parameter " + std::to_string(index) + " of " +
                       std::to_string(count);
            });
        }
        return parameters;
    }
    // Older drivers report no count and the code did not say: ask index after index until the
    // driver says there is none.
    for (std::size_t index = 0;; ++index) {
        KernelParameter parameter;
        CUresult status =
            api.cuKernelGetParamInfo(handle, index, &parameter.offset, &parameter.size);
        if (status == CUDA_ERROR_INVALID_VALUE) {
            discard_driver_log();  // the end of the list, not a failure
            break;
        }
        check(status, "cuKernelGetParamInfo",
              description + ", parameter " + std::to_string(index));
        parameters.push_back(parameter);
    }
    return parameters;
}

}  // namespace

const std::string& KernelBox::description() const {
    if (!given_description.empty()) return given_description;
    std::call_once(description_once_, [&] {
        description_ = "kernel '" + name + "' (" +
                       (library ? library->code_description() : std::string("user handle")) + ")";
    });
    return description_;
}

void KernelBox::settle_parameter_count_locked() const noexcept {
    if (count_code.empty()) return;
    parameter_count_in_code = kernel_parameter_count(count_code_type, count_code, lowered_name);
    count_code = {};
}

void KernelBox::settle_parameter_count() const noexcept {
    std::lock_guard lock(parameters_mutex);
    settle_parameter_count_locked();
}

const std::vector<KernelParameter>& KernelBox::query_parameters_once() const {
    std::lock_guard lock(parameters_mutex);
    if (parameters_ready.load(std::memory_order_relaxed)) return parameters_;
    settle_parameter_count_locked();
    // Parameter info needs a current context: the one the library was loaded into, else the
    // primary context of the calling thread's device.
    std::shared_ptr<ContextBox> context =
        library && library->loaded_context ? library->loaded_context
                                           : primary_context(Device::current().ordinal());
    {
        ContextScope scope(*context);
        parameters_ = query_parameters(handle, description(), parameter_count_in_code);
    }
    parameters_ready.store(true, std::memory_order_release);
    return parameters_;
}

int KernelBox::max_threads_per_block(int ordinal, CUdevice device) const {
    if (ordinal < limit_count) {
        int cached = limits[ordinal].max_threads_per_block.load(std::memory_order_relaxed);
        if (cached >= 0) [[likely]] return cached;
        cached = query_attribute(*this, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, ordinal, device);
        limits[ordinal].max_threads_per_block.store(cached, std::memory_order_relaxed);
        return cached;
    }
    return query_attribute(*this, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, ordinal, device);
}

int KernelBox::max_dynamic_shared_size_bytes(int ordinal, CUdevice device, bool refresh) const {
    if (ordinal < limit_count) {
        int cached = limits[ordinal].max_dynamic_shared_size_bytes.load(std::memory_order_relaxed);
        if (cached >= 0 && !refresh) [[likely]] return cached;
        cached = query_attribute(*this, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, ordinal,
                                 device);
        limits[ordinal].max_dynamic_shared_size_bytes.store(cached, std::memory_order_relaxed);
        return cached;
    }
    return query_attribute(*this, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, ordinal,
                           device);
}

std::shared_ptr<KernelBox> make_kernel_box(
    CUkernel handle, std::string name, std::string lowered_name, std::string description,
    std::shared_ptr<LibraryBox> library,
    std::optional<std::size_t> parameter_count_in_code,
    bool query_parameters_now) {
    auto box = std::make_shared<KernelBox>();
    box->handle = handle;
    box->name = std::move(name);
    box->lowered_name = std::move(lowered_name);
    box->given_description = std::move(description);
    box->library = std::move(library);
    box->set_parameter_count(parameter_count_in_code);
    const int count = system::device_count();
    box->limit_count = count;
    if (static_cast<std::size_t>(count) <= box->inline_limits.size()) {
        box->limits = box->inline_limits.data();
    } else {
        box->heap_limits = std::make_unique<KernelDeviceLimits[]>(static_cast<std::size_t>(count));
        box->limits = box->heap_limits.get();
    }
    if (query_parameters_now) box->parameters();
    return box;
}

}  // namespace detail

Kernel Kernel::from_handle(CUkernel kernel) {
    const char* name = nullptr;
    detail::check(detail::driver().cuKernelGetName(&name, kernel), "cuKernelGetName",
                  "user kernel handle");
    std::string lowered = name ? name : "";
    return detail::BoxAccess::make<Kernel>(
        detail::make_kernel_box(kernel, lowered, lowered, "kernel '" + lowered + "' (user handle)",
                                nullptr, {}, /*query_parameters_now=*/true));
}

Kernel Kernel::from_handle(CUkernel kernel, const ObjectCode& code) {
    if (kernel == nullptr) throw InvalidArgumentError("Kernel::from_handle: null CUkernel");
    detail::ObjectCodeState& state = *detail::ObjectCodeAccess::state(code);
    const std::shared_ptr<detail::LibraryBox>& library = detail::loaded_library(state, {});
    // The kernel must be one of this library's: otherwise holding the library would not keep
    // the kernel's code loaded.
    const detail::DriverApi& api = detail::driver();
    unsigned count = 0;
    detail::check(api.cuLibraryGetKernelCount(&count, library->handle), "cuLibraryGetKernelCount",
                  detail::describe_code(state));
    std::vector<CUkernel> kernels(count);
    if (count) {
        detail::check(api.cuLibraryEnumerateKernels(kernels.data(), count, library->handle),
                      "cuLibraryEnumerateKernels", detail::describe_code(state));
    }
    if (std::find(kernels.begin(), kernels.end(), kernel) == kernels.end()) {
        throw InvalidArgumentError("Kernel::from_handle: the CUkernel is not one of the kernels "
                                   "of " + detail::describe_code(state) + " (it holds: " +
                                   detail::kernel_list(state, library->handle) + ")");
    }
    const char* name = nullptr;
    detail::check(api.cuKernelGetName(&name, kernel), "cuKernelGetName",
                  "a kernel of " + detail::describe_code(state));
    const std::string lowered = name ? name : "";
    // The name it is known by: its name expression when the symbol map has one.
    std::string known = lowered;
    for (const auto& [expression, symbol] : state.symbols)
        if (symbol == lowered) known = expression;
    std::string description = "kernel '" + known + "' (" + detail::describe_code(state) + ")";
    return detail::BoxAccess::make<Kernel>(
        detail::make_kernel_box(kernel, std::move(known), lowered, std::move(description), library,
                                detail::kernel_parameter_count(state.type, state.code, lowered)));
}

CUkernel Kernel::handle() const noexcept { return box_ ? box_->handle : nullptr; }
const std::string& Kernel::name() const noexcept { return box_->name; }
const std::string& Kernel::lowered_name() const noexcept { return box_->lowered_name; }
const std::string& Kernel::description() const { return box_->description(); }
const std::vector<KernelParameter>& Kernel::parameters() const {
    return box_->parameters();
}

int Kernel::attribute(CUfunction_attribute attribute, const Device& device) const {
    return detail::query_attribute(*box_, attribute, device.ordinal(), device.handle());
}

KernelAttributes Kernel::attributes(const Device& device) const {
    auto get = [&](CUfunction_attribute which) { return attribute(which, device); };
    KernelAttributes a;
    a.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    a.shared_size_bytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    a.const_size_bytes = get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    a.local_size_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    a.num_registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
    a.ptx_version = get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
    a.binary_version = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    a.cache_mode_ca = get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
    a.max_dynamic_shared_size_bytes = get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    a.preferred_shared_memory_carveout = get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    a.cluster_size_must_be_set = get(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET);
    a.required_cluster_width = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
    a.required_cluster_height = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT);
    a.required_cluster_depth = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
    a.non_portable_cluster_size_allowed = get(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
    a.cluster_scheduling_policy_preference =
        get(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
    return a;
}

int Kernel::max_threads_per_block(const Device& device) const {
    return box_->max_threads_per_block(device.ordinal(), device.handle());
}
int Kernel::num_registers(const Device& device) const {
    return attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, device);
}
int Kernel::shared_size_bytes(const Device& device) const {
    return attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, device);
}
int Kernel::const_size_bytes(const Device& device) const {
    return attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, device);
}
int Kernel::local_size_bytes(const Device& device) const {
    return attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, device);
}
int Kernel::ptx_version(const Device& device) const {
    return attribute(CU_FUNC_ATTRIBUTE_PTX_VERSION, device);
}
int Kernel::binary_version(const Device& device) const {
    return attribute(CU_FUNC_ATTRIBUTE_BINARY_VERSION, device);
}
int Kernel::max_dynamic_shared_size_bytes(const Device& device) const {
    return box_->max_dynamic_shared_size_bytes(device.ordinal(), device.handle(), true);
}

void Kernel::set_attribute(CUfunction_attribute attribute, int value, const Device& device) const {
    detail::check(detail::driver().cuKernelSetAttribute(attribute, value, box_->handle,
                                                        device.handle()),
                  "cuKernelSetAttribute",
                  box_->description() + " on device " + std::to_string(device.ordinal()) +
                      ", attribute " + std::to_string(static_cast<int>(attribute)) + " = " +
                      std::to_string(value));
    // Keep launch()'s cached limit exact.
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        box_->max_dynamic_shared_size_bytes(device.ordinal(), device.handle(), true);
}

void Kernel::set_max_dynamic_shared_size_bytes(int bytes, const Device& device) const {
    set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes, device);
}

KernelOccupancy Kernel::occupancy(const Device& device) const {
    return KernelOccupancy(box_, device, detail::primary_context(device.ordinal()));
}

// --- occupancy: the CUkernel is passed as a CUfunction, computed in the primary context.

namespace {

std::string occupancy_object(const detail::KernelBox& kernel, const Device& device) {
    return kernel.description() + " on device " + std::to_string(device.ordinal());
}

CUfunction as_function(const detail::KernelBox& kernel) {
    return reinterpret_cast<CUfunction>(kernel.handle);
}

}  // namespace

int KernelOccupancy::max_active_blocks_per_multiprocessor(
    int block_size, std::size_t dynamic_shared_memory_bytes) const {
    detail::ContextScope scope(*context_);
    int blocks = 0;
    detail::check(detail::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                      &blocks, as_function(*kernel_), block_size, dynamic_shared_memory_bytes),
                  "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                  occupancy_object(*kernel_, device_) + ", block size " +
                      std::to_string(block_size));
    return blocks;
}

BlockSizeSuggestion KernelOccupancy::max_potential_block_size(
    std::size_t dynamic_shared_memory_bytes, int block_size_limit) const {
    detail::ContextScope scope(*context_);
    BlockSizeSuggestion out;
    detail::check(detail::driver().cuOccupancyMaxPotentialBlockSize(
                      &out.min_grid_size, &out.block_size, as_function(*kernel_), nullptr,
                      dynamic_shared_memory_bytes, block_size_limit),
                  "cuOccupancyMaxPotentialBlockSize", occupancy_object(*kernel_, device_));
    return out;
}

BlockSizeSuggestion KernelOccupancy::max_potential_block_size(
    CUoccupancyB2DSize shared_memory_for_block_size, int block_size_limit) const {
    detail::ContextScope scope(*context_);
    BlockSizeSuggestion out;
    detail::check(detail::driver().cuOccupancyMaxPotentialBlockSize(
                      &out.min_grid_size, &out.block_size, as_function(*kernel_),
                      shared_memory_for_block_size, 0, block_size_limit),
                  "cuOccupancyMaxPotentialBlockSize", occupancy_object(*kernel_, device_));
    return out;
}

std::size_t KernelOccupancy::available_dynamic_shared_memory_per_block(
    int blocks_per_multiprocessor, int block_size) const {
    detail::ContextScope scope(*context_);
    std::size_t bytes = 0;
    detail::check(detail::driver().cuOccupancyAvailableDynamicSMemPerBlock(
                      &bytes, as_function(*kernel_), blocks_per_multiprocessor, block_size),
                  "cuOccupancyAvailableDynamicSMemPerBlock", occupancy_object(*kernel_, device_));
    return bytes;
}

int KernelOccupancy::max_potential_cluster_size(const LaunchConfig& config) const {
    detail::ContextScope scope(*context_);
    LaunchConfig without_cluster = config;
    without_cluster.cluster = Dim3{1};
    CUlaunchAttribute attributes[2];
    const CUlaunchConfig driver_config =
        detail::to_driver_config(without_cluster, nullptr, attributes, false);
    int size = 0;
    detail::check(detail::driver().cuOccupancyMaxPotentialClusterSize(
                      &size, as_function(*kernel_), &driver_config),
                  "cuOccupancyMaxPotentialClusterSize",
                  occupancy_object(*kernel_, device_) + ", " + to_string(config));
    return size;
}

int KernelOccupancy::max_active_clusters(const LaunchConfig& config) const {
    detail::ContextScope scope(*context_);
    CUlaunchAttribute attributes[2];
    const CUlaunchConfig driver_config = detail::to_driver_config(config, nullptr, attributes, false);
    int clusters = 0;
    detail::check(detail::driver().cuOccupancyMaxActiveClusters(
                      &clusters, as_function(*kernel_), &driver_config),
                  "cuOccupancyMaxActiveClusters",
                  occupancy_object(*kernel_, device_) + ", " + to_string(config));
    return clusters;
}

}  // namespace cudacore
