/// @file
/// Sharing device memory, pinned host memory and events between processes (IPC), in the model of
/// cuda.core (a PinnedMemoryPoolResource made with ipc_enabled travels the same way, received
/// with receive_pinned_memory_pool):
///
///   exporter                                          importer
///   auto pool = std::make_shared<DeviceMemoryResource>(
///       device, DeviceMemoryResourceOptions{.ipc_enabled = true});
///   Buffer b = pool->allocate(size, stream);
///   stream.sync();  // the allocation must be complete before another process uses it
///   send_memory_pool(channel, *pool);                 auto pool = receive_memory_pool(channel);
///   send_buffer(channel, b);                          Buffer b = receive_buffer(channel, pool, stream);
///   Event done = device.create_event({.ipc_enabled = true});
///   send_event(channel, done);                        Event done = receive_event(channel);
///                                                     ... kernels use b ...; stream.record(done);
///   stream.wait(done);  // once the importer says it has recorded it
///
/// The pool travels as a file descriptor (POSIX handle) with an IpcPoolDescriptor over an
/// IpcChannel; buffers and events travel as descriptors (plain bytes, see ipc_descriptor.hpp),
/// so any other transport works too with the export_* / import_* functions.
///
/// Ownership and lifetime:
/// - An imported Buffer is a mapping of the exporter's memory in this process. Closing it (or
///   dropping its last copy) frees the mapping on its stream, never the exporter's memory; the
///   exporter's Buffer stays valid until the exporter closes it. The driver requires importers
///   to free their mappings before the exporter frees the memory: order that with an IPC event
///   or a message. Import a descriptor once per process.
/// - The imported pool (a DeviceMemoryResource with is_imported()) cannot allocate; it is held
///   by the buffers imported through it.
/// - When the other process exits or is killed, nothing here crashes: channel calls throw
///   IpcError saying the peer is gone, and driver calls on what it shared either still work
///   (the driver keeps memory alive while it is mapped) or throw DriverError naming the call
///   and the object. Destruction never throws.
/// Errors: InvalidArgumentError for a buffer or event that cannot be exported (not from an
/// IPC-enabled pool, an event without ipc_enabled) or a descriptor meant for another pool;
/// ordinary device memory (cuMemAlloc) travels too: export_memory / import_memory, or
/// send_buffer / receive_buffer without a pool.
/// SerializationError for malformed descriptor bytes; DriverError for driver refusals.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/event.hpp"
#include "cudacore/ipc_channel.hpp"
#include "cudacore/ipc_descriptor.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "cudacore/stream.hpp"

#include <chrono>
#include <memory>
#include <optional>

namespace cudacore {

/// A pool's shareable handle: its file descriptor (owned) and its descriptor.
struct IpcPoolHandle {
    FileDescriptor fd{};             ///< the pool's POSIX file descriptor, closed with the handle
    IpcPoolDescriptor descriptor{};  ///< what identifies the pool and its device
};

/// Exports a DeviceMemoryResource or PinnedMemoryPoolResource made with ipc_enabled
/// (cuMemPoolExportToShareableHandle).
IpcPoolHandle export_memory_pool(const DeviceMemoryResource& pool);
/// The pinned host pool's handle (its descriptor says pinned); InvalidArgumentError when the
/// pool was not made with ipc_enabled.
IpcPoolHandle export_memory_pool(const PinnedMemoryPoolResource& pool);
/// Imports a pool exported by another process (cuMemPoolImportFromShareableHandle), on the
/// device whose UUID the descriptor names. The descriptor is closed afterwards. A device pool is
/// imported with import_memory_pool, a pinned one with import_pinned_memory_pool (which also gives
/// that device access to it here); the other kind is an InvalidArgumentError saying which to use.
std::shared_ptr<DeviceMemoryResource> import_memory_pool(IpcPoolHandle handle);
/// Imports a pinned host pool exported by another process (see import_memory_pool); the result
/// cannot allocate and is held by the buffers imported through it.
std::shared_ptr<PinnedMemoryPoolResource> import_pinned_memory_pool(IpcPoolHandle handle);

/// Describes a buffer allocated from an ipc_enabled pool resource (cuMemPoolExportPointer).
IpcBufferDescriptor export_buffer(const Buffer& buffer);
/// Maps an exported buffer into this process (cuMemPoolImportPointer) through the pool it came
/// from, imported with import_memory_pool / import_pinned_memory_pool. The Buffer frees the
/// mapping on `stream`. A pinned buffer is host accessible here too.
Buffer import_buffer(const std::shared_ptr<DeviceMemoryResource>& pool,
                     const IpcBufferDescriptor& descriptor, const Stream& stream);
/// import_buffer for a buffer of a pinned host pool (host accessible here too); the Buffer
/// holds `pool` and frees its mapping on `stream`.
Buffer import_buffer(const std::shared_ptr<PinnedMemoryPoolResource>& pool,
                     const IpcBufferDescriptor& descriptor, const Stream& stream);

/// Options of import_memory and of receive_buffer without a pool.
struct IpcMemoryImportOptions {
    /// The device whose context maps the memory; -1: the memory's own device. Another device
    /// reaches it through peer access, which the driver enables for the mapping
    /// (CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS); DriverError when the two cannot be peers.
    int device_ordinal = -1;
};

/// Describes ordinary device memory (cuMemAlloc: a SynchronousMemoryResource's buffer, or memory
/// wrapped with from_handle / wrap_unowned) for another process (cuIpcGetMemHandle): the
/// allocation's handle with the buffer's offset and size in it, so a slice shares its part.
/// InvalidArgumentError for a closed buffer and for memory the driver cannot share this way
/// (pool, managed, pinned or virtual memory: CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE 0;
/// pool memory travels with send_memory_pool and export_buffer). Thread-safe.
IpcMemoryDescriptor export_memory(const Buffer& buffer);
/// Maps memory another process exported with export_memory (cuIpcOpenMemHandle) on the device
/// whose UUID the descriptor names (or options.device_ordinal's). The Buffer unmaps it
/// (cuIpcCloseMemHandle) when its last copy goes or at close(), never freeing the exporter's
/// memory; it holds the primary context it was mapped in. Import an allocation once per process
/// (the driver refuses a second mapping) and unmap it before the exporter frees it.
/// DriverError when the driver refuses (the exporter gone, a second mapping).
Buffer import_memory(const IpcMemoryDescriptor& descriptor, const IpcMemoryImportOptions& options = {});

/// Describes an event created with ipc_enabled (cuIpcGetEventHandle).
IpcEventDescriptor export_event(const Event& event);
/// Opens an exported event in this process (cuIpcOpenEventHandle), on the device whose UUID the
/// descriptor names. The event may be recorded, waited on and queried from either process.
Event import_event(const IpcEventDescriptor& descriptor);

/// The same over an IpcChannel (one message each; the pool's message carries its descriptor).
/// receive_* wait at most `timeout` when given and throw IpcError when the peer is gone.
void send_memory_pool(const IpcChannel& channel, const DeviceMemoryResource& pool);
/// export_memory_pool, then one message: the descriptor's bytes with a duplicate of the pool's
/// file descriptor. Throws what export_memory_pool and IpcChannel::send throw.
void send_memory_pool(const IpcChannel& channel, const PinnedMemoryPoolResource& pool);
/// Receives a device pool sent with send_memory_pool and imports it (import_memory_pool).
/// IpcError when the message has no file descriptor; SerializationError for bad bytes.
std::shared_ptr<DeviceMemoryResource> receive_memory_pool(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// Receives a pinned host pool sent with send_memory_pool and imports it
/// (import_pinned_memory_pool); throws as receive_memory_pool.
std::shared_ptr<PinnedMemoryPoolResource> receive_pinned_memory_pool(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// One message: export_buffer's descriptor for a buffer of an IPC-enabled pool of this process,
/// export_memory's for ordinary device memory (received with receive_buffer without a pool).
/// InvalidArgumentError for other memory (neither), naming both ways.
void send_buffer(const IpcChannel& channel, const Buffer& buffer);
/// Receives a buffer descriptor and maps the buffer through `pool` (import_buffer), freeing the
/// mapping on `stream`.
Buffer receive_buffer(const IpcChannel& channel, const std::shared_ptr<DeviceMemoryResource>& pool,
                      const Stream& stream,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// The same for a buffer of an imported pinned host pool.
Buffer receive_buffer(const IpcChannel& channel, const std::shared_ptr<PinnedMemoryPoolResource>& pool,
                      const Stream& stream,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// Receives ordinary device memory sent with send_buffer and maps it here (import_memory).
/// InvalidArgumentError when a pool's buffer arrives instead (receive it with a pool);
/// SerializationError for bad bytes.
Buffer receive_buffer(const IpcChannel& channel,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                      const IpcMemoryImportOptions& options = {});
/// export_event, then one message of the descriptor's bytes.
void send_event(const IpcChannel& channel, const Event& event);
/// Receives an event descriptor and opens the event here (import_event).
Event receive_event(const IpcChannel& channel,
                    std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace cudacore
