#include "runtime/library_box.hpp"

#include "runtime/release/release.hpp"

#include <cstdio>

namespace cudacore::detail {

namespace {

std::atomic<std::uint64_t> loads{0};
std::atomic<std::uint64_t> unloads{0};

void unload_now(const DriverApi& api, CUlibrary library) {
    // Shutdown errors are ignored (the driver may be going away); others reach the handler.
    check_release(api.cuLibraryUnload(library), "cuLibraryUnload", [&] {
        char text[48];
        std::snprintf(text, sizeof text, "library %p", static_cast<void*>(library));
        return std::string(text);
    });
    unloads.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

LibraryBox::~LibraryBox() {
    if (!handle || !owned) return;
    // Unloaded once the streams its kernels were launched on are done (an unload synchronizes the
    // context: during a capture begun through cudacore it waits on the release thread for the
    // capture to end, even with nothing launched to wait for); at exit left to the driver rather
    // than pulled from under a running kernel.
    release_after_uses(launch_streams, nullptr,
                       [library = handle](const DriverApi& api) { unload_now(api, library); },
                       nullptr);
}

std::string LibraryBox::code_description() const {
    return describe_code(code_type, code_name, code_size, from_handle, handle);
}

std::uint64_t library_load_count() noexcept { return loads.load(std::memory_order_relaxed); }
std::uint64_t library_unload_count() noexcept { return unloads.load(std::memory_order_relaxed); }

CUresult load_library_data(CUlibrary* library, const void* code, CUjit_option* options,
                           void** option_values, unsigned option_count) {
    loads.fetch_add(1, std::memory_order_relaxed);
    return driver().cuLibraryLoadData(library, code, options, option_values, option_count,
                                      nullptr, nullptr, 0);
}

}  // namespace cudacore::detail
