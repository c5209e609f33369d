// What a loaded ObjectCode holds, asked of the driver (loaded_library.hpp).
#include "cudacore/loaded_library.hpp"

#include "cudacore/errors.hpp"
#include "runtime/library_box.hpp"
#include "support/box_access.hpp"

namespace cudacore {

namespace {

// The loaded library of `code` (loading it first), for `operation`.
const std::shared_ptr<detail::LibraryBox>& loaded(const ObjectCode& code, const char* operation) {
    const std::shared_ptr<detail::ObjectCodeState>& state = detail::ObjectCodeAccess::state(code);
    detail::check_open(*state, operation);
    return detail::loaded_library(*state, {});
}

std::vector<CUkernel> kernel_handles(const ObjectCode& code, const char* operation) {
    const detail::ObjectCodeState& state = *detail::ObjectCodeAccess::state(code);
    const CUlibrary library = loaded(code, operation)->handle;
    const detail::DriverApi& api = detail::driver();
    unsigned count = 0;
    detail::check(api.cuLibraryGetKernelCount(&count, library), "cuLibraryGetKernelCount",
                  [&] { return detail::describe_code(state); });
    std::vector<CUkernel> kernels(count);
    if (count) {
        detail::check(api.cuLibraryEnumerateKernels(kernels.data(), count, library),
                      "cuLibraryEnumerateKernels", [&] { return detail::describe_code(state); });
    }
    return kernels;
}

std::string kernel_name(const ObjectCode& code, CUkernel kernel) {
    const char* name = nullptr;
    detail::check(detail::driver().cuKernelGetName(&name, kernel), "cuKernelGetName", [&] {
        return "a kernel of " + detail::describe_code(*detail::ObjectCodeAccess::state(code));
    });
    return name ? name : "";
}

}  // namespace

std::size_t library_kernel_count(const ObjectCode& code) {
    return kernel_handles(code, "library_kernel_count").size();
}

std::vector<std::string> library_kernel_names(const ObjectCode& code) {
    std::vector<std::string> names;
    for (CUkernel kernel : kernel_handles(code, "library_kernel_names"))
        names.push_back(kernel_name(code, kernel));
    return names;
}

std::vector<Kernel> library_kernels(const ObjectCode& code) {
    std::vector<Kernel> kernels;
    for (CUkernel handle : kernel_handles(code, "library_kernels")) {
        const std::string lowered = kernel_name(code, handle);
        // By its name expression where the symbol map has one: get_kernel's cached Kernel.
        std::string known = lowered;
        for (const auto& [expression, symbol] : code.symbol_map())
            if (symbol == lowered) known = expression;
        kernels.push_back(code.get_kernel(known));
    }
    return kernels;
}

Context library_context(const ObjectCode& code) {
    const std::shared_ptr<detail::LibraryBox>& library = loaded(code, "library_context");
    std::shared_ptr<detail::ContextBox> context = library->loaded_context;
    if (!context) context = detail::primary_context(Device::current().ordinal());
    return detail::BoxAccess::make<Context>(std::move(context));
}

Device library_device(const ObjectCode& code) {
    const std::shared_ptr<detail::LibraryBox>& library = loaded(code, "library_device");
    if (library->loaded_context) return Device(library->loaded_context->ordinal);
    return Device::current();
}

}  // namespace cudacore
