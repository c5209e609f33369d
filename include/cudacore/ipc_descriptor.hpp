/// @file
/// What one process sends another to share a memory pool, a buffer or an event: plain, versioned,
/// checksummed bytes, no driver involved. from_bytes throws SerializationError saying what is
/// wrong, never reading out of bounds. The format: docs/design/ipc-descriptors.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cudacore {

/// A memory pool's identity (random, made by the exporting process) or a device's UUID.
using IpcId = std::array<unsigned char, 16>;

std::string to_hex(const IpcId& id);  ///< "1f2e...": 32 lower-case hex digits, for messages

/// What another process needs to import a memory pool.
struct IpcPoolDescriptor {
    IpcId pool_id{};  ///< the pool's identity, matched by the buffers exported from it
    IpcId device_uuid{};  ///< the device the pool lives on (ordinals differ between processes)
    std::int64_t exporter_pid = 0;  ///< the exporting process (getpid()), named in messages
    bool pinned = false;  ///< a PinnedMemoryPoolResource's host pool (KIND 'H'), not a device pool

    std::vector<std::byte> to_bytes() const;  ///< the descriptor as bytes
    /// Reads what to_bytes wrote.
    static IpcPoolDescriptor from_bytes(std::span<const std::byte> bytes);
    bool operator==(const IpcPoolDescriptor&) const = default;  ///< equal when every field is
};

/// What another process needs to import a buffer of a shared pool.
struct IpcBufferDescriptor {
    IpcId pool_id{};  ///< the pool the buffer was allocated from
    std::uint64_t size = 0;  ///< the buffer's size in bytes
    std::int64_t exporter_pid = 0;  ///< the exporting process (getpid()), named in messages
    std::array<unsigned char, 64> export_data{};  ///< opaque, from cuMemPoolExportPointer

    std::vector<std::byte> to_bytes() const;  ///< the descriptor as bytes
    /// Reads what to_bytes wrote.
    static IpcBufferDescriptor from_bytes(std::span<const std::byte> bytes);
    bool operator==(const IpcBufferDescriptor&) const = default;  ///< equal when every field is
};

/// What another process needs to import an interprocess event.
struct IpcEventDescriptor {
    IpcId device_uuid{};  ///< the event's device (ordinals differ between processes)
    std::int64_t exporter_pid = 0;  ///< the exporting process (getpid()), named in messages
    std::array<unsigned char, 64> handle{};  ///< opaque, from cuIpcGetEventHandle

    std::vector<std::byte> to_bytes() const;  ///< the descriptor as bytes
    /// Reads what to_bytes wrote.
    static IpcEventDescriptor from_bytes(std::span<const std::byte> bytes);
    bool operator==(const IpcEventDescriptor&) const = default;  ///< equal when every field is
};

/// What another process needs to map ordinary device memory (cuMemAlloc, not a pool).
struct IpcMemoryDescriptor {
    IpcId device_uuid{};  ///< the memory's device (ordinals differ between processes)
    std::int64_t exporter_pid = 0;  ///< the exporting process (getpid()), named in messages
    std::uint64_t offset = 0;  ///< the shared part's first byte in the allocation
    std::uint64_t size = 0;    ///< the shared part's size in bytes
    std::array<unsigned char, 64> handle{};  ///< opaque, from cuIpcGetMemHandle

    std::vector<std::byte> to_bytes() const;  ///< the descriptor as bytes
    /// Reads what to_bytes wrote; also refuses size 0 or a range that overflows.
    static IpcMemoryDescriptor from_bytes(std::span<const std::byte> bytes);
    bool operator==(const IpcMemoryDescriptor&) const = default;  ///< equal when every field is
};

/// The KIND byte of descriptor bytes ('P', 'H', 'B', 'E', 'M'; '\0' when too short).
char ipc_descriptor_kind(std::span<const std::byte> bytes) noexcept;

}  // namespace cudacore
