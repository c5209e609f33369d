// The box behind Kernel: the CUkernel, the library it holds, its parameter layout and the
// per-device limits launch() checks (cached, since they are read on every launch).
#pragma once

#include "cudacore/kernel.hpp"
#include "runtime/library_box.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

namespace cudacore::detail {

struct KernelDeviceLimits {
    std::atomic<int> max_threads_per_block{-1};          // -1: not asked yet
    std::atomic<int> max_dynamic_shared_size_bytes{-1};
};

struct KernelBox {
    CUkernel handle = nullptr;
    std::string name;
    std::string lowered_name;
    std::string description;
    std::shared_ptr<LibraryBox> library;  // null for Kernel::from_handle: never unloaded
    // The parameter layout, queried on first use (first launch, or Kernel::parameters()): a
    // first get_kernel does not pay for it. Throws DriverError when the query fails (and asks
    // again next time).
    const std::vector<KernelParameter>& parameters() const {
        if (parameters_ready.load(std::memory_order_acquire)) [[likely]] return parameters_;
        return query_parameters_once();
    }
    std::unique_ptr<KernelDeviceLimits[]> limits;  // by device ordinal
    int limit_count = 0;

    // The limits of device `ordinal` (CUdevice `device`), asked of the driver the first time.
    int max_threads_per_block(int ordinal, CUdevice device) const;
    int max_dynamic_shared_size_bytes(int ordinal, CUdevice device, bool refresh = false) const;

private:
    const std::vector<KernelParameter>& query_parameters_once() const;
    mutable std::mutex parameters_mutex;
    mutable std::atomic<bool> parameters_ready{false};
    mutable std::vector<KernelParameter> parameters_;  // final once parameters_ready is set

public:
    // The parameter count read from the code when the kernel was made
    // (code/kernel_parameter_count.hpp), or nullopt when the code does not say or there is no
    // code (Kernel::from_handle). Read then, not at the first launch: a Kernel may outlive its
    // ObjectCode and does not hold the code bytes.
    std::optional<std::size_t> parameter_count_in_code;
};

// A box for `handle`, with limits sized for every device; its parameters are queried now when
// `query_parameters_now` (Kernel::from_handle checks the handle that way), else on first use.
// `parameter_count_in_code`, where the code tells the count, spares drivers that cannot count
// (before CUDA 13.2) the failing call that otherwise ends the query.
std::shared_ptr<KernelBox> make_kernel_box(
    CUkernel handle, std::string name, std::string lowered_name, std::string description,
    std::shared_ptr<LibraryBox> library,
    std::optional<std::size_t> parameter_count_in_code = std::nullopt,
    bool query_parameters_now = false);

}  // namespace cudacore::detail
