// Events shared between processes, and finding a device by UUID.
#include "cudacore/ipc.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "ipc/ipc_devices.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace cudacore {

namespace detail {

std::optional<int> ordinal_with_uuid(const IpcId& uuid) {
    // Filled by the first call that gets through (a failed read is tried again by the next).
    static const std::vector<IpcId> uuids = [] {
        std::vector<IpcId> out;
        for (const Device& device : Device::all()) out.push_back(device.uuid());
        return out;
    }();
    for (std::size_t ordinal = 0; ordinal < uuids.size(); ++ordinal)
        if (uuids[ordinal] == uuid) return static_cast<int>(ordinal);
    return std::nullopt;
}

Device device_with_uuid(const IpcId& uuid, const std::function<std::string()>& object) {
    if (const std::optional<int> ordinal = ordinal_with_uuid(uuid)) return Device(*ordinal);
    throw InvalidArgumentError("no device of this process has UUID " + to_hex(uuid) + " (" +
                               object() + "; is the device hidden by CUDA_VISIBLE_DEVICES?)");
}

}  // namespace detail

IpcEventDescriptor export_event(const Event& event) {
    detail::open_box_of(event, "export_event");
    auto describe = [&] {
        char text[64];
        std::snprintf(text, sizeof text, "event %p on device %d",
                      static_cast<void*>(event.handle()), event.device().ordinal());
        return std::string(text);
    };
    if (!event.options().ipc_enabled)
        throw InvalidArgumentError("export_event: " + describe() +
                                   " was not created with EventOptions{.ipc_enabled = true}");
    CUipcEventHandle handle{};
    {
        // The driver looks the event up in the current context: make the event's own current.
        detail::ContextScope scope(*detail::box_of(event)->context);
        detail::check(detail::driver().cuIpcGetEventHandle(&handle, event.handle()),
                      "cuIpcGetEventHandle", describe);
    }
    IpcEventDescriptor out;
    out.device_uuid = event.device().uuid();
    out.exporter_pid = ::getpid();
    std::memcpy(out.handle.data(), handle.reserved, out.handle.size());
    return out;
}

Event import_event(const IpcEventDescriptor& descriptor) {
    const std::string object =
        "IPC event of process " + std::to_string(descriptor.exporter_pid);
    const Device device = detail::device_with_uuid(descriptor.device_uuid, [&] { return object; });
    auto context = detail::primary_context(device.ordinal());
    CUipcEventHandle handle{};
    std::memcpy(handle.reserved, descriptor.handle.data(), sizeof handle.reserved);
    CUevent event = nullptr;
    {
        detail::ContextScope scope(*context);
        detail::check(detail::driver().cuIpcOpenEventHandle(&event, handle), "cuIpcOpenEventHandle",
                      [&] { return object + " on device " + std::to_string(device.ordinal()); });
    }
    auto box = std::make_shared<detail::EventBox>();
    box->handle = event;
    box->context = std::move(context);
    box->options = EventOptions{.ipc_enabled = true};
    // The exporter may have recorded it: treat it as recorded for waits and queries.
    box->records.store(1, std::memory_order_release);
    return detail::BoxAccess::make<Event>(std::move(box));
}

void send_event(const IpcChannel& channel, const Event& event) {
    channel.send(export_event(event).to_bytes());
}

Event receive_event(const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout) {
    const IpcMessage message = channel.receive(timeout);
    return import_event(IpcEventDescriptor::from_bytes(message.bytes));
}

}  // namespace cudacore
