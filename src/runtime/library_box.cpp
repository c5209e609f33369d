#include "runtime/library_box.hpp"

#include "errors/release_report.hpp"
#include "runtime/deferred_release.hpp"

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

void LibraryBox::note_launch_slow(const std::shared_ptr<ContextBox>& context) {
    // This library may now need a deferred unload: make sure the worker runs, started here,
    // while the process runs normally, and not later from a destructor inside exit().
    start_deferred_releases();
    std::lock_guard lock(launch_contexts_mutex);
    for (const auto& known : launch_contexts)
        if (known == context) return;
    launch_contexts.push_back(context);
    for (auto& slot : launch_context_slots) {
        const ContextBox* expected = nullptr;
        if (slot.compare_exchange_strong(expected, context.get(), std::memory_order_relaxed))
            return;
    }
    // More contexts than slots: later launches there take this (locked) path.
}

LibraryBox::~LibraryBox() {
    if (!handle || !owned) return;
    const DriverApi* api = driver_if_loaded();
    if (!api) return;
    std::vector<std::shared_ptr<ContextBox>> contexts;
    {
        std::lock_guard lock(launch_contexts_mutex);
        contexts.swap(launch_contexts);
    }
    if (contexts.empty()) {
        unload_now(*api, handle);
        return;
    }
    if (loaded_context) contexts.push_back(std::move(loaded_context));
    // Unloaded once those contexts are idle; at exit (idle false) left to the driver rather than
    // pulled from under a running kernel.
    defer_release(std::move(contexts), [library = handle](bool idle) {
        if (!idle) return;
        if (const DriverApi* api = driver_if_loaded()) unload_now(*api, library);
    });
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
