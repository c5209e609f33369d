/// @file
/// Sharing device memory, pinned host memory and events between processes (IPC), as cuda.core
/// does: a pool travels as a file descriptor over an IpcChannel, buffers and events as
/// descriptors (plain bytes, ipc_descriptor.hpp) over any transport. An imported Buffer maps the
/// exporter's memory and never frees it; importers unmap before the exporter frees. A peer that
/// dies makes channel calls throw IpcError, never a crash. Destruction never throws. The guide
/// and the whole lifetime contract: docs/multi-gpu-and-ipc.md.
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
/// Imports a pool exported by another process (cuMemPoolImportFromShareableHandle) on the device
/// the descriptor names, then closes the descriptor. Throws InvalidArgumentError for a pinned
/// pool (use import_pinned_memory_pool).
std::shared_ptr<DeviceMemoryResource> import_memory_pool(IpcPoolHandle handle);
/// Imports a pinned host pool exported by another process (see import_memory_pool); the result
/// cannot allocate and is held by the buffers imported through it.
std::shared_ptr<PinnedMemoryPoolResource> import_pinned_memory_pool(IpcPoolHandle handle);

/// Describes a buffer allocated from an ipc_enabled pool resource (cuMemPoolExportPointer).
IpcBufferDescriptor export_buffer(const Buffer& buffer);
/// Maps an exported buffer into this process (cuMemPoolImportPointer) through its imported pool;
/// the Buffer frees the mapping on `stream`.
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

/// Describes ordinary device memory (cuMemAlloc) for another process (cuIpcGetMemHandle), with
/// the buffer's offset and size. Throws InvalidArgumentError for a closed buffer and for pool,
/// managed, pinned or virtual memory. Thread-safe.
IpcMemoryDescriptor export_memory(const Buffer& buffer);
/// Maps memory exported with export_memory (cuIpcOpenMemHandle); the Buffer unmaps it when its
/// last copy goes or at close(), never freeing the exporter's memory, and holds its primary
/// context. Import once per process. Throws DriverError when the driver refuses.
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
