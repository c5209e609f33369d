// driver_status_name and driver_status_text (declared in cudacore/errors.hpp): the names this
// library knows, else what the loaded driver says (cuGetErrorName, cuGetErrorString), through the
// lookup the loader sets once the driver is open (errors/driver_status_lookup.hpp): the errors
// layer is below the loader and references none of its symbols.
#include "cudacore/errors.hpp"
#include "errors/driver_status_lookup.hpp"

#include <atomic>
#include <string>

namespace cudacore {
namespace detail {
namespace {
std::atomic<DriverStatusLookup> driver_status_lookup{nullptr};
}  // namespace

void set_driver_status_lookup(DriverStatusLookup lookup) noexcept {
    driver_status_lookup.store(lookup, std::memory_order_release);
}
}  // namespace detail

std::string driver_status_name(CUresult status) {
    switch (status) {
#define CUDACORE_DRIVER_STATUS(name) \
    case name: return #name;
#include "errors/driver_status_names.inc"
#undef CUDACORE_DRIVER_STATUS
        default: break;
    }
    if (const auto lookup = detail::driver_status_lookup.load(std::memory_order_acquire)) {
        if (const char* name = lookup(status, false)) return name;
    }
    return "CUresult " + std::to_string(static_cast<int>(status));
}

std::string driver_status_text(CUresult status) {
    if (const auto lookup = detail::driver_status_lookup.load(std::memory_order_acquire)) {
        if (const char* text = lookup(status, true)) return text;
    }
    return "no description (the driver is not loaded)";
}

}  // namespace cudacore
