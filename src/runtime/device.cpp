#include "cudacore/device.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "cudacore/system_info.hpp"
#include "loader/device_queries.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace cudacore {

namespace {
std::string describe(int ordinal) { return "device " + std::to_string(ordinal); }

}  // namespace

Device::Device(int ordinal) : ordinal_(ordinal), handle_(0) {
    const std::vector<CUdevice>& handles = detail::device_handles();
    const int count = static_cast<int>(handles.size());
    if (ordinal < 0 || ordinal >= count) {
        throw InvalidArgumentError("device ordinal " + std::to_string(ordinal) +
                                   " is out of range: " + std::to_string(count) +
                                   " device(s) present");
    }
    handle_ = handles[static_cast<std::size_t>(ordinal)];
}

Device Device::from_handle(CUdevice device) {
    if (const std::optional<int> ordinal = detail::ordinal_of(device)) return Device(*ordinal);
    throw InvalidArgumentError("Device::from_handle: no device has the handle " +
                               std::to_string(static_cast<long long>(device)) + " (" +
                               std::to_string(detail::device_handles().size()) + " device(s) present)");
}

Device Device::current() { return Device(detail::current_ordinal()); }

std::string Device::name() const {
    char buffer[256] = {};
    detail::check(detail::driver().cuDeviceGetName(buffer, sizeof buffer, handle_),
                  "cuDeviceGetName", [&] { return describe(ordinal_); });
    return buffer;
}

std::array<unsigned char, 16> Device::uuid() const {
    CUuuid raw{};
    detail::check(detail::driver().cuDeviceGetUuid(&raw, handle_), "cuDeviceGetUuid",
                  [&] { return describe(ordinal_); });
    std::array<unsigned char, 16> out{};
    std::copy(std::begin(raw.bytes), std::end(raw.bytes), out.begin());
    return out;
}

std::string Device::uuid_string() const {
    const auto bytes = uuid();
    std::string out = "GPU-";
    char hex[3];
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
        out += hex;
    }
    return out;
}

std::string Device::pci_bus_id() const {
    char buffer[64] = {};
    detail::check(detail::driver().cuDeviceGetPCIBusId(buffer, sizeof buffer, handle_),
                  "cuDeviceGetPCIBusId", [&] { return describe(ordinal_); });
    return buffer;
}

ComputeCapability Device::compute_capability() const {
    const int packed = detail::compute_capability(ordinal_);
    return {packed / 1000, packed % 1000};
}

std::string Device::arch() const {
    const auto cc = compute_capability();
    return "sm_" + std::to_string(cc.major) + std::to_string(cc.minor);
}

std::size_t Device::total_memory() const {
    std::size_t bytes = 0;
    detail::check(detail::driver().cuDeviceTotalMem(&bytes, handle_), "cuDeviceTotalMem",
                  [&] { return describe(ordinal_); });
    return bytes;
}

int Device::multiprocessor_count() const {
    return attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
}

int Device::attribute(CUdevice_attribute which) const {
    int value = 0;
    detail::check(detail::driver().cuDeviceGetAttribute(&value, which, handle_),
                  "cuDeviceGetAttribute", [&] {
                      return describe(ordinal_) + ", attribute " +
                             std::to_string(static_cast<int>(which));
                  });
    return value;
}

std::map<std::string, int> Device::attributes() const {
    const auto& api = detail::driver();
    std::map<std::string, int> out;
    auto add = [&](CUdevice_attribute which, std::string name) {
        int value = 0;
        if (api.cuDeviceGetAttribute(&value, which, handle_) != CUDA_SUCCESS) return;
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        out.emplace(std::move(name), value);
    };
#define CUDACORE_DEVICE_ATTRIBUTE(suffix) add(CU_DEVICE_ATTRIBUTE_##suffix, #suffix);
#include "runtime/device_attribute_names.inc"
#undef CUDACORE_DEVICE_ATTRIBUTE
    return out;
}

Context Device::context() const {
    return detail::BoxAccess::make<Context>(detail::primary_context(ordinal_));
}

Context Device::set_current() const {
    // The primary context stays retained for the life of the process (context.cpp), so the
    // thread's current context never dangles.
    Context context = this->context();
    context.set_current();
    return context;
}

void Device::sync() const {
    Context context = this->context();
    detail::ContextScope scope(*detail::box_of(context));
    detail::check(detail::driver().cuCtxSynchronize(), "cuCtxSynchronize", [&] { return describe(ordinal_); });
}

bool Device::can_access_peer(const Device& peer) const {
    int can = 0;
    detail::check(detail::driver().cuDeviceCanAccessPeer(&can, handle_, peer.handle_),
                  "cuDeviceCanAccessPeer",
                  describe(ordinal_) + " -> " + describe(peer.ordinal_));
    return can != 0;
}

Stream Device::default_stream() const {
    Context context = set_current();
    auto box = std::make_shared<detail::StreamBox>();
    box->handle = CU_STREAM_LEGACY;
    box->context = detail::box_of(context);
    box->owned = false;
    return detail::BoxAccess::make<Stream>(std::move(box));
}

Stream Device::per_thread_stream() const {
    Context context = set_current();
    auto box = std::make_shared<detail::StreamBox>();
    box->handle = CU_STREAM_PER_THREAD;
    box->context = detail::box_of(context);
    box->owned = false;
    return detail::BoxAccess::make<Stream>(std::move(box));
}

Stream Device::create_stream(const StreamOptions& options) const {
    return detail::with_primary_context(ordinal_, [&](const std::shared_ptr<detail::ContextBox>& context) {
        return detail::BoxAccess::make<Stream>(
            detail::create_stream_box(context, options, describe(ordinal_)));
    });
}

Event Device::create_event(const EventOptions& options) const {
    // The context's reference moves into the event's box: no count taken and dropped again.
    return detail::with_primary_context(ordinal_, [&](std::shared_ptr<detail::ContextBox>& context) {
        return detail::BoxAccess::make<Event>(detail::create_event_box(std::move(context), options));
    });
}

system::SystemDevice Device::system_device() const {
    return system::SystemDevice::with_uuid(uuid_string());
}

}  // namespace cudacore
