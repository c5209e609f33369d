// The box behind Kernel: the CUkernel, the library it holds, its parameter layout and the
// per-device limits launch() checks (cached, since they are read on every launch).
#pragma once

#include "cudacore/kernel.hpp"
#include "runtime/library_box.hpp"

#include <atomic>
#include <memory>
#include <optional>
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
    std::vector<KernelParameter> parameters;
    std::unique_ptr<KernelDeviceLimits[]> limits;  // by device ordinal
    int limit_count = 0;

    // The limits of device `ordinal` (CUdevice `device`), asked of the driver the first time.
    int max_threads_per_block(int ordinal, CUdevice device) const;
    int max_dynamic_shared_size_bytes(int ordinal, CUdevice device, bool refresh = false) const;
};

// A box for `handle`, with its parameters queried and limits sized for every device.
// `parameter_count`, where the code told it (code/kernel_parameter_count.hpp), spares drivers
// that cannot count (before CUDA 13.2) the failing call that otherwise ends the query.
std::shared_ptr<KernelBox> make_kernel_box(CUkernel handle, std::string name,
                                           std::string lowered_name, std::string description,
                                           std::shared_ptr<LibraryBox> library,
                                           std::optional<std::size_t> parameter_count = {});

}  // namespace cudacore::detail
