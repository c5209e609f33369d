// Defines ObjectCode's loading calls (object_code.hpp: load, from_handle, the handles, get_kernel),
// which src/code cannot hold: they load a CUlibrary and make Kernels, the runtime's objects.
#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/library_box.hpp"
#include "support/box_access.hpp"

#include <optional>

namespace cudacore {

void ObjectCode::load() const {
    detail::check_open(*state_, "ObjectCode::load");
    detail::loaded_library(*state_, {});
}

ObjectCode ObjectCode::from_handle(CUlibrary library, const FromHandleOptions& options) {
    if (!library) throw InvalidArgumentError("ObjectCode::from_handle: null CUlibrary");
    detail::driver();  // NoDriverError without a driver, as for any runtime object
    auto state = std::make_shared<detail::ObjectCodeState>();
    state->type = CodeType::cubin;
    state->name = options.name;
    state->from_handle = true;
    auto box = std::make_shared<detail::LibraryBox>();
    box->handle = library;
    box->owned = options.take_ownership;
    box->from_handle = true;
    box->code_name = options.name;
    detail::LazyLibrary& lazy = detail::lazy_library(*state);
    lazy.library = std::move(box);
    // Already loaded: later uses skip the lazy load (std::call_once is never entered).
    lazy.attempted.store(true, std::memory_order_release);
    return ObjectCode(std::move(state));
}

CUlibrary ObjectCode::library_handle() const {
    detail::check_open(*state_, "ObjectCode::library_handle");
    return detail::loaded_library(*state_, {})->handle;
}

bool ObjectCode::is_loaded() const noexcept {
    const detail::LazyLibrary* lazy = detail::lazy_library_if_made(*state_);
    return lazy && lazy->attempted.load(std::memory_order_acquire) && lazy->library != nullptr;
}

std::optional<CUlibrary> ObjectCode::handle() const noexcept {
    if (!is_loaded()) return std::nullopt;
    return detail::lazy_library_if_made(*state_)->library->handle;
}

Kernel ObjectCode::get_kernel(std::string_view name) const {
    // A name looked up before is a lock-free read; everything else is out of line, so this path
    // saves no registers and sets up no frame for the loading code it does not run.
    if (const detail::LazyLibrary* lazy = detail::lazy_library_if_made(*state_)) [[likely]] {
        if (const Kernel* found = lazy->kernels.find(name)) [[likely]] return *found;
    }
    return first_kernel_lookup(name);
}

[[gnu::noinline]] Kernel ObjectCode::first_kernel_lookup(std::string_view name) const {
    detail::check_open(*state_, "ObjectCode::get_kernel");
    detail::LazyLibrary& lazy = detail::lazy_library(*state_);
    if (const Kernel* found = lazy.kernels.find(name)) return *found;  // another thread's meanwhile
    const std::shared_ptr<detail::LibraryBox>& library = detail::loaded_library(*state_, name);

    const std::string lowered = lowered_name(name);
    CUkernel handle = nullptr;
    CUresult status = detail::driver().cuLibraryGetKernel(&handle, library->handle, lowered.c_str());
    if (status == CUDA_ERROR_NOT_FOUND) {
        throw InvalidArgumentError(
            "get_kernel: no kernel '" + std::string(name) + "'" +
            (lowered != name ? " (lowered: '" + lowered + "')" : std::string()) + " in " +
            detail::describe_code(*state_) + "; it holds: " + detail::kernel_list(*state_, library->handle) +
            (state_->symbols.empty() ? std::string()
                                     : " (templates are found by the name expressions given "
                                       "to Program::compile)"));
    }
    detail::check(status, "cuLibraryGetKernel", [&] {
        return "kernel '" + std::string(name) + "' (" + detail::describe_code(*state_) + ")";
    });

    // The description and the parameter count are made when first needed (kernel_box.hpp); the
    // count is read from these bytes while they live (settle_kernel_parameter_counts).
    auto box = detail::make_kernel_box(handle, std::string(name), lowered, {}, library);
    box->count_parameters_from(state_->type, state_->code);
    // Another thread may have made it meanwhile: everyone gets the first one.
    return lazy.kernels.insert(name, detail::BoxAccess::make<Kernel>(std::move(box)));
}

}  // namespace cudacore
