/// @file
/// Sharing device memory, pinned host memory and events between processes (IPC), as cuda.core
/// does: a pool travels as a file descriptor over an IpcChannel, buffers and events as descriptors
/// (ipc_descriptor.hpp) over any transport. An imported Buffer maps the exporter's memory and
/// never frees it; importers unmap before the exporter frees. Calls throw DriverError when the
/// driver refuses, IpcError when the peer is gone. Lifetimes: docs/multi-gpu-and-ipc.md.
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

/// Exports a DeviceMemoryResource made with ipc_enabled.
IpcPoolHandle export_memory_pool(const DeviceMemoryResource& pool);
/// Exports a pinned host pool; InvalidArgumentError when not made with ipc_enabled.
IpcPoolHandle export_memory_pool(const PinnedMemoryPoolResource& pool);
/// Imports a device pool exported by another process (InvalidArgumentError for a pinned one).
std::shared_ptr<DeviceMemoryResource> import_memory_pool(IpcPoolHandle handle);
/// Imports a pinned host pool; the result cannot allocate and its imported buffers hold it.
std::shared_ptr<PinnedMemoryPoolResource> import_pinned_memory_pool(IpcPoolHandle handle);

/// Describes a buffer allocated from an ipc_enabled pool resource.
IpcBufferDescriptor export_buffer(const Buffer& buffer);
/// Maps an exported buffer into this process through its imported pool, freeing it on `stream`.
Buffer import_buffer(const std::shared_ptr<DeviceMemoryResource>& pool,
                     const IpcBufferDescriptor& descriptor, const Stream& stream);
/// The same for a buffer of a pinned host pool (host accessible here too); holds `pool`.
Buffer import_buffer(const std::shared_ptr<PinnedMemoryPoolResource>& pool,
                     const IpcBufferDescriptor& descriptor, const Stream& stream);

/// Options of import_memory and of receive_buffer without a pool.
struct IpcMemoryImportOptions {
    /// The device whose context maps the memory (-1: its own; another reaches it as a peer).
    int device_ordinal = -1;
};

/// Describes ordinary device memory (cuMemAlloc) with the buffer's offset and size.
/// InvalidArgumentError for pool, managed, pinned or virtual memory. Thread-safe.
IpcMemoryDescriptor export_memory(const Buffer& buffer);
/// Maps memory exported with export_memory (once per process), unmapped when the Buffer goes.
Buffer import_memory(const IpcMemoryDescriptor& descriptor, const IpcMemoryImportOptions& options = {});

/// Describes an event created with ipc_enabled.
IpcEventDescriptor export_event(const Event& event);
/// Opens an exported event on the device its UUID names, usable from either process.
Event import_event(const IpcEventDescriptor& descriptor);

/// The same over an IpcChannel, one message each; receive_* wait at most `timeout` when given.
/// SerializationError for bad bytes.
void send_memory_pool(const IpcChannel& channel, const DeviceMemoryResource& pool);
/// export_memory_pool, then one message carrying a duplicate of the pool's file descriptor.
void send_memory_pool(const IpcChannel& channel, const PinnedMemoryPoolResource& pool);
/// Receives a device pool and imports it; IpcError when the message has no file descriptor.
std::shared_ptr<DeviceMemoryResource> receive_memory_pool(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// Receives a pinned host pool and imports it; throws as receive_memory_pool.
std::shared_ptr<PinnedMemoryPoolResource> receive_pinned_memory_pool(
    const IpcChannel& channel, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// Sends a buffer of an IPC-enabled pool or of ordinary device memory.
void send_buffer(const IpcChannel& channel, const Buffer& buffer);
/// Receives a buffer and maps it through `pool`, freeing the mapping on `stream`.
Buffer receive_buffer(const IpcChannel& channel, const std::shared_ptr<DeviceMemoryResource>& pool,
                      const Stream& stream,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// The same for a buffer of an imported pinned host pool.
Buffer receive_buffer(const IpcChannel& channel, const std::shared_ptr<PinnedMemoryPoolResource>& pool,
                      const Stream& stream,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
/// Receives ordinary device memory and maps it here; InvalidArgumentError for a pool's buffer.
Buffer receive_buffer(const IpcChannel& channel,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                      const IpcMemoryImportOptions& options = {});
void send_event(const IpcChannel& channel, const Event& event);  ///< sends an event's descriptor
/// Receives an event and opens it here.
Event receive_event(const IpcChannel& channel,
                    std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace cudacore
