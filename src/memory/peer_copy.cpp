#include "cudacore/peer_copy.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "support/enum_text.hpp"

#include <optional>

namespace cudacore {

std::string to_string(CopyPath path) {
    static constexpr detail::EnumText<CopyPath> names[] = {
        {CopyPath::same_device, "same_device"},
        {CopyPath::peer, "peer"},
        {CopyPath::staged, "staged"},
    };
    return detail::enum_text(path, names, "CopyPath");
}

namespace {

const detail::BufferBox& open_box(const Buffer& buffer, const char* role, const Buffer& other) {
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string("copy_between_devices: the ") + role + " " +
                                   buffer.description() + " is closed (other side: " +
                                   other.description() + ")");
    return *detail::box_of(buffer);
}

// Device memory only: pinned host and managed memory need no peer path.
bool is_device_only(const detail::BufferBox& box) {
    return box.device_accessible && !box.host_accessible;
}

CopyPath path_for(const detail::BufferBox& to, const detail::BufferBox& from) {
    if (!is_device_only(to) || !is_device_only(from) || to.device_ordinal == from.device_ordinal)
        return CopyPath::same_device;
    const Device destination(to.device_ordinal), source(from.device_ordinal);
    return destination.is_peer_access_enabled(source) || source.is_peer_access_enabled(destination)
               ? CopyPath::peer
               : CopyPath::staged;
}

}  // namespace

CopyPath copy_path(const Buffer& destination, const Buffer& source) {
    return path_for(open_box(destination, "destination", source),
                    open_box(source, "source", destination));
}

CopyPath copy_between_devices(const Buffer& destination, const Buffer& source,
                              const Stream& stream) {
    stream.check_open("copy_between_devices");
    const detail::BufferBox& to = open_box(destination, "destination", source);
    const detail::BufferBox& from = open_box(source, "source", destination);
    if (to.size != from.size)
        throw InvalidArgumentError("copy_between_devices: sizes differ: source " +
                                   source.description() + ", destination " +
                                   destination.description());
    const CopyPath path = path_for(to, from);
    const auto& api = detail::driver();
    auto describe = [&] {
        return "from " + source.description() + " to " + destination.description() + " (" +
               to_string(path) + ")";
    };
    // The default streams mean the current context's: make the stream's context current.
    const auto& stream_box = detail::box_of(stream);
    std::optional<detail::ContextScope> scope;
    if (stream_box && stream_box->context && detail::is_default_stream(stream.handle()))
        scope.emplace(*stream_box->context);
    if (path == CopyPath::same_device) {
        detail::check(api.cuMemcpyAsync(to.handle, from.handle, to.size, stream.handle()),
                      "cuMemcpyAsync", describe);
        return path;
    }
    // Each side's primary context (retained while these boxes are alive through their resource
    // or the table of primary contexts).
    const auto to_context = detail::primary_context(to.device_ordinal);
    const auto from_context = detail::primary_context(from.device_ordinal);
    detail::check(api.cuMemcpyPeerAsync(to.handle, to_context->handle, from.handle,
                                        from_context->handle, to.size, stream.handle()),
                  "cuMemcpyPeerAsync", describe);
    return path;
}

}  // namespace cudacore
