// current_device_arch (declared in cudacore/program_options.hpp): the arch a Program or Linker
// without one compiles for, asked of the driver through the loader as Device::current().arch()
// asks it (src/runtime/device.cpp): the device of the calling thread's current context, else
// device 0, with the same calls and errors. Here, not in the runtime, so that the code layer
// references no symbol of a higher one (scripts/check-layer-symbols.py).
#include "cudacore/errors.hpp"
#include "cudacore/program_options.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

namespace cudacore {
namespace {

std::string describe(int ordinal) { return "device " + std::to_string(ordinal); }

// What never changes in a process is asked once (again after a failure), as the runtime does:
// Programs and Linkers without an arch, and cache keys of Programs without one, ask every time.
int device_count(const detail::DriverApi& api) {
    static std::atomic<int> known{-1};
    if (const int count = known.load(std::memory_order_relaxed); count >= 0) return count;
    int count = 0;
    detail::check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    known.store(count, std::memory_order_relaxed);
    return count;
}

const std::vector<CUdevice>& device_handles(const detail::DriverApi& api, int count) {
    static const std::vector<CUdevice> handles = [&] {
        std::vector<CUdevice> out(static_cast<std::size_t>(count));
        for (int i = 0; i < count; ++i)
            detail::check(api.cuDeviceGet(&out[static_cast<std::size_t>(i)], i), "cuDeviceGet",
                          [&] { return describe(i); });
        return out;
    }();
    return handles;
}

// Compute capabilities by ordinal, packed major * 1000 + minor; 0: not asked yet.
constexpr int kCachedOrdinals = 64;
std::atomic<int> compute_capabilities[kCachedOrdinals];

// The current device's arch ("sm_90"). `count` > 0.
std::string current_arch(const detail::DriverApi& api, int count) {
    CUcontext context = nullptr;
    detail::check(api.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
    CUdevice current = 0;
    if (context) detail::check(api.cuCtxGetDevice(&current), "cuCtxGetDevice");
    const std::vector<CUdevice>& handles = device_handles(api, count);
    // A context on a device this process cannot number counts as device 0, as in Device::current.
    int ordinal = 0;
    if (context) {
        const auto found = std::find(handles.begin(), handles.end(), current);
        if (found != handles.end()) ordinal = static_cast<int>(found - handles.begin());
    }
    int packed = ordinal < kCachedOrdinals
                     ? compute_capabilities[ordinal].load(std::memory_order_relaxed) : 0;
    if (packed == 0) {
        auto attribute = [&](CUdevice_attribute which) {
            int value = 0;
            detail::check(api.cuDeviceGetAttribute(&value, which,
                                                   handles[static_cast<std::size_t>(ordinal)]),
                          "cuDeviceGetAttribute", [&] {
                              return describe(ordinal) + ", attribute " +
                                     std::to_string(static_cast<int>(which));
                          });
            return value;
        };
        const int major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        packed = major * 1000 + attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        if (ordinal < kCachedOrdinals)
            compute_capabilities[ordinal].store(packed, std::memory_order_relaxed);
    }
    return "sm_" + std::to_string(packed / 1000) + std::to_string(packed % 1000);
}

}  // namespace

std::string current_device_arch(const char* what_needs_it) {
    std::string reason;
    if (!detail::driver_available()) {
        reason = "no CUDA driver is present";
    } else {
        try {
            const detail::DriverApi& api = detail::driver();
            if (const int count = device_count(api); count > 0) return current_arch(api, count);
            reason = "no CUDA device is present";
        } catch (const Error& e) {
            reason = e.what();
        }
    }
    throw InvalidArgumentError(std::string(what_needs_it) +
                               ": arch is not set and the current device's arch cannot be used (" +
                               reason + "); set arch, for example \"sm_90\"");
}

}  // namespace cudacore
