#include "loader/device_queries.hpp"

#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <atomic>
#include <string>

namespace cudacore::detail {
namespace {
std::string describe(int ordinal) { return "device " + std::to_string(ordinal); }

// Compute capabilities by ordinal, packed major * 1000 + minor; 0: not asked yet. Every lazy load
// of a cubin or fatbin asks (to refuse code for another arch), as does every Program without an arch.
constexpr int kCachedOrdinals = 64;
std::atomic<int> compute_capabilities[kCachedOrdinals];
}  // namespace

int device_count() {
    static std::atomic<int> known{-1};
    if (const int count = known.load(std::memory_order_relaxed); count >= 0) [[likely]] return count;
    int count = 0;
    check(driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
    known.store(count, std::memory_order_relaxed);
    return count;
}

const std::vector<CUdevice>& device_handles() {
    static const std::vector<CUdevice> handles = [] {
        const auto& api = driver();
        const int count = device_count();
        std::vector<CUdevice> out(static_cast<std::size_t>(count));
        for (int i = 0; i < count; ++i)
            check(api.cuDeviceGet(&out[static_cast<std::size_t>(i)], i), "cuDeviceGet",
                  [&] { return describe(i); });
        return out;
    }();
    return handles;
}

std::optional<int> ordinal_of(CUdevice device) {
    const std::vector<CUdevice>& handles = device_handles();
    const auto found = std::find(handles.begin(), handles.end(), device);
    if (found == handles.end()) return std::nullopt;
    return static_cast<int>(found - handles.begin());
}

int compute_capability(int ordinal) {
    if (ordinal < kCachedOrdinals) {
        const int packed = compute_capabilities[ordinal].load(std::memory_order_relaxed);
        if (packed != 0) [[likely]] return packed;
    }
    const CUdevice device = device_handles()[static_cast<std::size_t>(ordinal)];
    auto attribute = [&](CUdevice_attribute which) {
        int value = 0;
        check(driver().cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute",
              [&] { return describe(ordinal) + ", attribute " + std::to_string(static_cast<int>(which)); });
        return value;
    };
    const int packed = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 1000 +
                       attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    if (ordinal < kCachedOrdinals) compute_capabilities[ordinal].store(packed, std::memory_order_relaxed);
    return packed;
}

int current_ordinal() {
    const auto& api = driver();
    CUcontext context = nullptr;
    check(api.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
    if (!context) return 0;
    CUdevice device = 0;
    check(api.cuCtxGetDevice(&device), "cuCtxGetDevice");
    return ordinal_of(device).value_or(0);
}

}  // namespace cudacore::detail
