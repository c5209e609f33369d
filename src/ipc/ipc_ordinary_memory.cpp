// Ordinary device memory (cuMemAlloc) shared between processes: cuIpcGetMemHandle /
// cuIpcOpenMemHandle, carried in an IpcMemoryDescriptor, over the same channel calls as pools.
#include "cudacore/ipc.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "ipc/ipc_devices.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"

#include <unistd.h>

#include <cstring>

namespace cudacore {

namespace {

const char* const kNeither =
    " (share pool memory with send_memory_pool and a buffer of an ipc_enabled pool; ordinary "
    "device memory, cuMemAlloc as SynchronousMemoryResource allocates it, with export_memory)";

std::string describe(const IpcMemoryDescriptor& descriptor) {
    return "device memory of " + std::to_string(descriptor.size) + " bytes at offset " +
           std::to_string(descriptor.offset) + " of process " +
           std::to_string(descriptor.exporter_pid);
}

// Unmaps an imported allocation once, in the context it was mapped in, unless that context was
// reset or the driver is gone (then the mapping went with it).
struct Mapping {
    std::shared_ptr<detail::ContextBox> context;
    CUdeviceptr base = 0;
    ~Mapping() {
        const detail::DriverApi* api = detail::driver_for_release(*context);
        if (!api) return;
        detail::ContextScope scope(*context);
        api->cuIpcCloseMemHandle(base);
    }
};

}  // namespace

IpcMemoryDescriptor export_memory(const Buffer& buffer) {
    if (buffer.is_closed())
        throw InvalidArgumentError("export_memory: " + buffer.description() + " is closed");
    const PointerAttributes attributes = pointer_attributes(buffer.handle());
    if (attributes.memory_type != MemoryType::device || attributes.pool ||
        !attributes.is_legacy_ipc_capable)
        throw InvalidArgumentError("export_memory: " + buffer.description() + " is " +
                                   attributes.description() +
                                   ", not ordinary device memory the driver can share" + kNeither);
    CUipcMemHandle handle{};
    {
        detail::ContextScope scope(*detail::primary_context(attributes.device_ordinal));
        detail::check(detail::driver().cuIpcGetMemHandle(&handle, attributes.range_start),
                      "cuIpcGetMemHandle", [&] { return buffer.description(); });
    }
    IpcMemoryDescriptor out;
    out.device_uuid = Device(attributes.device_ordinal).uuid();
    out.exporter_pid = ::getpid();
    out.offset = attributes.offset_of(buffer.handle());
    out.size = buffer.size();
    static_assert(sizeof handle.reserved == sizeof out.handle);
    std::memcpy(out.handle.data(), handle.reserved, out.handle.size());
    return out;
}

Buffer import_memory(const IpcMemoryDescriptor& descriptor, const IpcMemoryImportOptions& options) {
    const std::string object = describe(descriptor);
    if (descriptor.size == 0) throw InvalidArgumentError("import_memory: size 0 (" + object + ")");
    const Device home = detail::device_with_uuid(descriptor.device_uuid, [&] { return object; });
    const Device device = options.device_ordinal < 0 ? home : Device(options.device_ordinal);
    auto mapping = std::make_shared<Mapping>();
    mapping->context = detail::primary_context(device.ordinal());
    CUipcMemHandle handle{};
    std::memcpy(handle.reserved, descriptor.handle.data(), descriptor.handle.size());
    {
        detail::ContextScope scope(*mapping->context);
        CUdeviceptr base = 0;
        detail::check(detail::driver().cuIpcOpenMemHandle(&base, handle,
                                                          CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                      "cuIpcOpenMemHandle", [&] {
                          return object + " on device " + std::to_string(device.ordinal());
                      });
        mapping->base = base;
    }
    const CUdeviceptr start = mapping->base + descriptor.offset;
    // The Buffer holds the mapping; the last copy (or close()) unmaps it.
    return Buffer::from_handle(start, descriptor.size, nullptr, std::shared_ptr<void>(mapping));
}

void send_buffer(const IpcChannel& channel, const Buffer& buffer) {
    bool pool_buffer = false;
    if (const auto* pool = dynamic_cast<const DeviceMemoryResource*>(buffer.memory_resource().get()))
        pool_buffer = pool->is_ipc_enabled() && !pool->is_imported();
    if (const auto* pool = dynamic_cast<const PinnedMemoryPoolResource*>(buffer.memory_resource().get()))
        pool_buffer = pool->is_ipc_enabled() && !pool->is_imported();
    if (pool_buffer || buffer.is_closed()) {
        channel.send(export_buffer(buffer).to_bytes());
        return;
    }
    const PointerAttributes attributes = pointer_attributes(buffer.handle());
    if (attributes.memory_type != MemoryType::device || attributes.pool ||
        !attributes.is_legacy_ipc_capable)
        throw InvalidArgumentError("send_buffer: " + buffer.description() +
                                   " was not allocated from an IPC-enabled DeviceMemoryResource "
                                   "or PinnedMemoryPoolResource of this process, nor is it "
                                   "ordinary device memory" + std::string(kNeither));
    channel.send(export_memory(buffer).to_bytes());
}

Buffer receive_buffer(const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout,
                      const IpcMemoryImportOptions& options) {
    const IpcMessage message = channel.receive(timeout);
    const char kind = ipc_descriptor_kind(message.bytes);
    if (kind == 'B')
        throw InvalidArgumentError(
            "receive_buffer: " + channel.peer() +
            " sent a buffer of a memory pool: receive it with receive_buffer(channel, pool, "
            "stream) after receive_memory_pool");
    return import_memory(IpcMemoryDescriptor::from_bytes(message.bytes), options);
}

}  // namespace cudacore
