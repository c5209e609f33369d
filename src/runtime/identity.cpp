// The runtime part of cudacore/identity.hpp: printing Device, Context, Stream, Event and Kernel
// from what their boxes already hold (no driver call), and Event's hash.
#include "cudacore/identity.hpp"

#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <cstdio>
#include <ostream>

namespace cudacore {

namespace {

std::string pointer(const void* handle) {
    char text[2 + 2 * sizeof(void*) + 1];
    std::snprintf(text, sizeof text, "0x%llx",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(handle)));
    return text;
}

std::string of_device(const std::shared_ptr<detail::ContextBox>& context, const char* preposition) {
    if (!context) return {};
    return std::string(" ") + preposition + " device " + std::to_string(context->ordinal);
}

}  // namespace

std::string to_string(const Device& device) { return "device " + std::to_string(device.ordinal()); }

std::string to_string(const Context& context) {
    return "context " + pointer(context.handle()) + of_device(detail::box_of(context), "of");
}

std::string to_string(const Stream& stream) {
    const auto& box = detail::box_of(stream);
    return "stream " + pointer(stream.handle()) + of_device(box ? box->context : nullptr, "on");
}

std::string to_string(const Event& event) {
    const auto& box = detail::box_of(event);
    return "event " + pointer(box ? box->handle : nullptr) + of_device(box ? box->context : nullptr, "on");
}

std::string to_string(const Kernel& kernel) {
    return detail::box_of(kernel) ? kernel.description() : "kernel " + pointer(kernel.handle());
}

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << to_string(device); }
std::ostream& operator<<(std::ostream& out, const Context& context) { return out << to_string(context); }
std::ostream& operator<<(std::ostream& out, const Stream& stream) { return out << to_string(stream); }
std::ostream& operator<<(std::ostream& out, const Event& event) { return out << to_string(event); }
std::ostream& operator<<(std::ostream& out, const Kernel& kernel) { return out << to_string(kernel); }

}  // namespace cudacore

// The driver event, read from the box: hashing is no use of the handle by the caller.
std::size_t std::hash<cudacore::Event>::operator()(const cudacore::Event& event) const noexcept {
    const auto& box = cudacore::detail::box_of(event);
    return std::hash<const void*>{}(box ? box->handle : nullptr);
}
