// The box behind Kernel: the CUkernel, the library it holds, its parameter layout and the
// per-device limits launch() checks (cached, since they are read on every launch).
#pragma once

#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"
#include "runtime/library_box.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

struct KernelDeviceLimits {
    std::atomic<int> max_threads_per_block{-1};          // -1: not asked yet
    std::atomic<int> max_dynamic_shared_size_bytes{-1};
};

struct KernelBox {
    KernelBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    CUkernel handle = nullptr;
    std::string name;
    std::string lowered_name;
    std::shared_ptr<LibraryBox> library;  // null for Kernel::from_handle: never unloaded
    // "kernel 'NAME' (CODE)", made on first call (errors, Kernel::description()): a first
    // get_kernel does not pay for the text.
    const std::string& description() const;
    // The parameter layout, queried on first use (first launch, or Kernel::parameters()): a
    // first get_kernel does not pay for it. Throws DriverError when the query fails (and asks
    // again next time).
    const std::vector<KernelParameter>& parameters() const {
        if (parameters_ready.load(std::memory_order_acquire)) [[likely]] return parameters_;
        return query_parameters_once();
    }
    KernelDeviceLimits* limits = nullptr;  // by device ordinal: inline_limits, or heap_limits
    int limit_count = 0;
    std::array<KernelDeviceLimits, 8> inline_limits;  // enough for most machines: no allocation
    std::unique_ptr<KernelDeviceLimits[]> heap_limits;

    // The limits of device `ordinal` (CUdevice `device`), asked of the driver the first time.
    int max_threads_per_block(int ordinal, CUdevice device) const;
    int max_dynamic_shared_size_bytes(int ordinal, CUdevice device, bool refresh = false) const;

    // The parameter count, where the code tells it (code/kernel_parameter_count.hpp): given
    // when the kernel is made, or read from `code` at the first parameters() call. A Kernel may
    // outlive its ObjectCode and does not hold the bytes, so the ObjectCode's state reads it
    // for its kernels not asked yet as it goes (settle_parameter_count), and `code` is then
    // cleared. Spares drivers that cannot count (before CUDA 13.2) the failing call that
    // otherwise ends the query.
    void set_parameter_count(std::optional<std::size_t> count) { parameter_count_in_code = count; }
    void count_parameters_from(CodeType type, std::string_view code) {
        count_code_type = type;
        count_code = code;
    }
    void settle_parameter_count() const noexcept;

    // Set by make_kernel_box when the caller gives the text (Kernel::from_handle).
    std::string given_description;

private:
    const std::vector<KernelParameter>& query_parameters_once() const;
    void settle_parameter_count_locked() const noexcept;
    mutable std::mutex parameters_mutex;
    mutable std::atomic<bool> parameters_ready{false};
    mutable std::vector<KernelParameter> parameters_;  // final once parameters_ready is set
    // Under parameters_mutex once the box is shared.
    mutable std::optional<std::size_t> parameter_count_in_code;
    mutable CodeType count_code_type = CodeType::cubin;
    mutable std::string_view count_code;  // the ObjectCode's bytes while it lives, else empty

    mutable std::once_flag description_once_;
    mutable std::string description_;
};

// A box for `handle`, with limits sized for every device; its parameters are queried now when
// `query_parameters_now` (Kernel::from_handle checks the handle that way), else on first use.
// An empty `description` is made on first use from the name and the library's code.
std::shared_ptr<KernelBox> make_kernel_box(
    CUkernel handle, std::string name, std::string lowered_name, std::string description,
    std::shared_ptr<LibraryBox> library,
    std::optional<std::size_t> parameter_count_in_code = std::nullopt,
    bool query_parameters_now = false);

}  // namespace cudacore::detail
