// The L1 / shared memory split a context or a kernel prefers (cuCtxGetCacheConfig,
// cuCtxSetCacheConfig, cuKernelSetCacheConfig).
#include "cudacore/cache_preference.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <array>

namespace cudacore {

namespace {

struct PreferenceEntry {
    CachePreference preference;
    CUfunc_cache driver;
    const char* name;
};
constexpr std::array<PreferenceEntry, 4> kPreferences{{
    {CachePreference::none, CU_FUNC_CACHE_PREFER_NONE, "none"},
    {CachePreference::prefer_shared, CU_FUNC_CACHE_PREFER_SHARED, "prefer_shared"},
    {CachePreference::prefer_l1, CU_FUNC_CACHE_PREFER_L1, "prefer_l1"},
    {CachePreference::equal, CU_FUNC_CACHE_PREFER_EQUAL, "equal"},
}};

const PreferenceEntry* find_preference(CachePreference preference) noexcept {
    for (const PreferenceEntry& entry : kPreferences)
        if (entry.preference == preference) return &entry;
    return nullptr;
}

}  // namespace

std::string to_string(CachePreference preference) {
    if (const PreferenceEntry* entry = find_preference(preference)) return entry->name;
    return "CachePreference(" + std::to_string(static_cast<int>(preference)) + ")";
}

CUfunc_cache driver_cache_config(CachePreference preference, const char* call) {
    if (const PreferenceEntry* entry = find_preference(preference)) return entry->driver;
    throw InvalidArgumentError(std::string(call) + ": CachePreference " +
                               std::to_string(static_cast<int>(preference)) +
                               " is not a preference (none, prefer_shared, prefer_l1, equal)");
}

CachePreference cache_preference(const Context& context) {
    const auto& box = detail::open_box_of(context, "cache_preference");
    detail::ContextScope scope(*box);
    CUfunc_cache config = CU_FUNC_CACHE_PREFER_NONE;
    detail::check(detail::driver().cuCtxGetCacheConfig(&config), "cuCtxGetCacheConfig",
                  [&] { return detail::describe_context(*box); });
    for (const PreferenceEntry& entry : kPreferences)
        if (entry.driver == config) return entry.preference;
    return CachePreference::none;  // a value newer than this library: no preference it knows
}

void set_cache_preference(const Context& context, CachePreference preference) {
    const auto& box = detail::open_box_of(context, "set_cache_preference");
    const CUfunc_cache config = driver_cache_config(preference, "set_cache_preference");
    detail::ContextScope scope(*box);
    detail::check(detail::driver().cuCtxSetCacheConfig(config), "cuCtxSetCacheConfig",
                  [&] { return to_string(preference) + " in " + detail::describe_context(*box); });
}

CachePreference cache_preference(const Device& device) { return cache_preference(device.context()); }

void set_cache_preference(const Device& device, CachePreference preference) {
    driver_cache_config(preference, "set_cache_preference");  // refused before the context is retained
    set_cache_preference(device.context(), preference);
}

void set_cache_preference(const Kernel& kernel, CachePreference preference, const Device& device) {
    if (!kernel.handle())
        throw InvalidArgumentError("set_cache_preference: the Kernel is empty (moved from)");
    const CUfunc_cache config = driver_cache_config(preference, "set_cache_preference");
    detail::check(detail::driver().cuKernelSetCacheConfig(kernel.handle(), config, device.handle()),
                  "cuKernelSetCacheConfig", [&] {
                      return to_string(preference) + " for " + kernel.description() +
                             " on device " + std::to_string(device.ordinal());
                  });
}

}  // namespace cudacore
