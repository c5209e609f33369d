// Memory pools and their buffers shared between processes.
#include "cudacore/ipc.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "ipc/ipc_devices.hpp"
#include "memory/buffer_box.hpp"
#include "memory/ipc_memory_pool.hpp"
#include "memory/make_resource.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace cudacore {

namespace {

// Shareable handle of `pool` (of either resource kind), exported in its device's context.
template <class Resource>
IpcPoolHandle export_pool(const Resource& pool, bool pinned, const char* how_to_enable) {
    if (!pool.is_ipc_enabled() || pool.is_imported())
        throw InvalidArgumentError("export_memory_pool: " + pool.description() +
                                   (pool.is_imported()
                                        ? " was imported: only the process that made it exports it"
                                        : std::string(" is not shareable (make it with ") + how_to_enable + ")"));
    int fd = -1;
    {
        // IPC calls run in the pool's device context, whatever is current in the caller.
        detail::ContextScope scope(*detail::BoxAccess::context(pool));
        detail::check(detail::driver().cuMemPoolExportToShareableHandle(
                          &fd, pool.pool(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                      "cuMemPoolExportToShareableHandle", [&] { return pool.description(); });
    }
    IpcPoolHandle out;
    out.fd = FileDescriptor(fd);
    out.descriptor.pool_id = pool.ipc_pool_id();
    out.descriptor.device_uuid = pool.device().uuid();
    out.descriptor.exporter_pid = ::getpid();
    out.descriptor.pinned = pinned;
    return out;
}

// The pool a handle shares, imported on the device its descriptor names; `pinned` is what the
// caller expects, and another kind is refused before the driver is asked.
template <class Resource>
std::shared_ptr<Resource> import_pool(IpcPoolHandle handle, bool pinned) {
    const IpcPoolDescriptor& descriptor = handle.descriptor;
    // Made only for an error: an import that succeeds formats nothing.
    auto object = [&] {
        return std::string(descriptor.pinned ? "pinned memory pool " : "memory pool ") +
               to_hex(descriptor.pool_id) + " of process " + std::to_string(descriptor.exporter_pid);
    };
    const char* call = pinned ? "import_pinned_memory_pool" : "import_memory_pool";
    if (descriptor.pinned != pinned)
        throw InvalidArgumentError(std::string(call) + ": " + object() + " is a " +
                                   (descriptor.pinned ? "pinned host" : "device") + " memory pool: import it with " +
                                   (descriptor.pinned ? "import_pinned_memory_pool (receive_pinned_memory_pool)"
                                                      : "import_memory_pool (receive_memory_pool)"));
    if (!handle.fd.valid()) throw InvalidArgumentError(std::string(call) + ": no file descriptor for " + object());
    const Device device = detail::device_with_uuid(descriptor.device_uuid, object);
    CUmemoryPool pool = nullptr;
    {
        detail::ContextScope scope(*detail::primary_context(device.ordinal()));
        detail::check(
            detail::driver().cuMemPoolImportFromShareableHandle(
                &pool, reinterpret_cast<void*>(static_cast<std::intptr_t>(handle.fd.get())),
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            "cuMemPoolImportFromShareableHandle",
            [&] { return object() + " on device " + std::to_string(device.ordinal()); });
    }
    return detail::make_resource<Resource>(device, detail::ImportedPool{pool, descriptor.pool_id});
}

// Maps an exported buffer through the imported `pool` (either resource kind).
template <class Resource>
Buffer import_pointer(const std::shared_ptr<Resource>& pool, const IpcBufferDescriptor& descriptor,
                      const Stream& stream) {
    stream.check_open("import_buffer");
    const std::string object = "buffer of " + std::to_string(descriptor.size) +
                               " bytes from memory pool " + to_hex(descriptor.pool_id) +
                               " of process " + std::to_string(descriptor.exporter_pid);
    if (!pool) throw InvalidArgumentError("import_buffer: no memory pool for " + object);
    if (!pool->is_imported())
        throw InvalidArgumentError("import_buffer: " + pool->description() +
                                   " was not imported from another process (" + object + ")");
    if (pool->ipc_pool_id() != descriptor.pool_id)
        throw InvalidArgumentError("import_buffer: stale or foreign descriptor: " + object +
                                   ", but the pool given is " + to_hex(pool->ipc_pool_id()));
    CUmemPoolPtrExportData data{};
    std::memcpy(data.reserved, descriptor.export_data.data(), sizeof data.reserved);
    detail::BufferBoxPtr box;
    box->size = descriptor.size;
    box->device_ordinal = pool->device_ordinal();
    box->device_accessible = pool->is_device_accessible();
    box->host_accessible = pool->is_host_accessible();
    box->free_stream = detail::box_of(stream);
    {
        detail::ContextScope scope(*detail::BoxAccess::context(*pool));
        CUdeviceptr pointer = 0;
        detail::check(detail::driver().cuMemPoolImportPointer(&pointer, pool->pool(), &data),
                      "cuMemPoolImportPointer", [&] { return object; });
        box->handle = pointer;
    }
    box->resource = pool;
    // Tracked like any allocation: the last copy going (or close(), or exit) frees this process's
    // mapping with cuMemFreeAsync on `stream`, as the driver requires of every importer before
    // the exporter frees the memory, and before the imported pool can be destroyed.
    box->track();
    return detail::make_buffer(box);
}

// A pool's descriptor, with its file descriptor alongside (SCM_RIGHTS).
void send_pool_handle(const IpcChannel& channel, const IpcPoolHandle& handle) {
    channel.send(handle.descriptor.to_bytes(), handle.fd.get());
}

// A pool's descriptor and the file descriptor that came with it.
IpcPoolHandle receive_pool_handle(const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout,
                                  const char* call) {
    IpcMessage message = channel.receive(timeout);
    IpcPoolHandle handle;
    handle.descriptor = IpcPoolDescriptor::from_bytes(message.bytes);
    if (!message.fd.valid())
        throw IpcError(std::string(call) + ": the pool descriptor arrived without its file descriptor (" +
                       channel.peer() + ")");
    handle.fd = std::move(message.fd);
    return handle;
}

IpcBufferDescriptor receive_buffer_descriptor(const IpcChannel& channel,
                                              std::optional<std::chrono::milliseconds> timeout) {
    return IpcBufferDescriptor::from_bytes(channel.receive(timeout).bytes);
}

}  // namespace

IpcPoolHandle export_memory_pool(const DeviceMemoryResource& pool) {
    return export_pool(pool, false, "DeviceMemoryResourceOptions{.ipc_enabled = true}");
}

IpcPoolHandle export_memory_pool(const PinnedMemoryPoolResource& pool) {
    return export_pool(pool, true, "PinnedMemoryPoolOptions{.ipc_enabled = true}");
}

std::shared_ptr<DeviceMemoryResource> import_memory_pool(IpcPoolHandle handle) {
    return import_pool<DeviceMemoryResource>(std::move(handle), false);
}

std::shared_ptr<PinnedMemoryPoolResource> import_pinned_memory_pool(IpcPoolHandle handle) {
    return import_pool<PinnedMemoryPoolResource>(std::move(handle), true);
}

IpcBufferDescriptor export_buffer(const Buffer& buffer) {
    if (buffer.is_closed())
        throw InvalidArgumentError("export_buffer: " + buffer.description() + " is closed");
    const MemoryResource* resource = buffer.memory_resource().get();
    CUmemoryPool pool = nullptr;
    const detail::ContextBox* context = nullptr;
    IpcId id{};
    // Either pool resource kind, when it made the pool shareable itself.
    auto shared_by = [&](const auto* owner) {
        if (!owner || !owner->is_ipc_enabled() || owner->is_imported()) return false;
        context = detail::BoxAccess::context(*owner).get();
        id = owner->ipc_pool_id();
        pool = owner->pool();
        return true;
    };
    shared_by(dynamic_cast<const DeviceMemoryResource*>(resource)) ||
        shared_by(dynamic_cast<const PinnedMemoryPoolResource*>(resource));
    if (!pool || !buffer.owns_memory())
        throw InvalidArgumentError("export_buffer: " + buffer.description() +
                                   " was not allocated from an IPC-enabled DeviceMemoryResource or "
                                   "PinnedMemoryPoolResource of this process");
    CUmemPoolPtrExportData data{};
    {
        detail::ContextScope scope(*context);
        detail::check(detail::driver().cuMemPoolExportPointer(&data, buffer.handle()),
                      "cuMemPoolExportPointer", [&] { return buffer.description(); });
    }
    IpcBufferDescriptor out;
    out.pool_id = id;
    out.size = buffer.size();
    out.exporter_pid = ::getpid();
    std::memcpy(out.export_data.data(), data.reserved, out.export_data.size());
    return out;
}

Buffer import_buffer(const std::shared_ptr<DeviceMemoryResource>& pool,
                     const IpcBufferDescriptor& descriptor, const Stream& stream) {
    return import_pointer(pool, descriptor, stream);
}

Buffer import_buffer(const std::shared_ptr<PinnedMemoryPoolResource>& pool,
                     const IpcBufferDescriptor& descriptor, const Stream& stream) {
    return import_pointer(pool, descriptor, stream);
}

void send_memory_pool(const IpcChannel& channel, const DeviceMemoryResource& pool) {
    send_pool_handle(channel, export_memory_pool(pool));
}

std::shared_ptr<DeviceMemoryResource> receive_memory_pool(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout) {
    return import_memory_pool(receive_pool_handle(channel, timeout, "receive_memory_pool"));
}

void send_memory_pool(const IpcChannel& channel, const PinnedMemoryPoolResource& pool) {
    send_pool_handle(channel, export_memory_pool(pool));
}

std::shared_ptr<PinnedMemoryPoolResource> receive_pinned_memory_pool(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout) {
    return import_pinned_memory_pool(receive_pool_handle(channel, timeout, "receive_pinned_memory_pool"));
}

Buffer receive_buffer(const IpcChannel& channel, const std::shared_ptr<DeviceMemoryResource>& pool,
                      const Stream& stream, std::optional<std::chrono::milliseconds> timeout) {
    return import_pointer(pool, receive_buffer_descriptor(channel, timeout), stream);
}

Buffer receive_buffer(const IpcChannel& channel, const std::shared_ptr<PinnedMemoryPoolResource>& pool,
                      const Stream& stream, std::optional<std::chrono::milliseconds> timeout) {
    return import_pointer(pool, receive_buffer_descriptor(channel, timeout), stream);
}

}  // namespace cudacore
