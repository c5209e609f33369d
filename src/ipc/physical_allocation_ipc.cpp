// Physical allocations shared between processes: the descriptor's bytes, export and import.
#include "cudacore/physical_allocation_ipc.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "ipc/ipc_devices.hpp"
#include "memory/memory_option_checks.hpp"
#include "memory/vmm/virtual_memory_boxes.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <unistd.h>
#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)

#include <cstring>

namespace cudacore {

namespace {

constexpr unsigned char descriptor_magic[8] = {0x89, 'C', 'C', 'V', 'M', 'M', 'A', '\n'};
constexpr std::uint32_t descriptor_format_version = 1;
constexpr std::size_t descriptor_header_size = 16;
constexpr std::size_t descriptor_payload_size = 16 + 8 + 8 + 4 + 64;
constexpr std::size_t descriptor_checksum_size = 8;
constexpr std::size_t descriptor_total_size = descriptor_header_size + descriptor_payload_size + descriptor_checksum_size;

void put(std::vector<std::byte>& out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>(value >> (8 * i)));
}

std::uint64_t get(std::span<const std::byte> bytes, std::size_t offset, int size) {
    std::uint64_t value = 0;
    for (int i = 0; i < size; ++i)
        value |= static_cast<std::uint64_t>(bytes[offset + static_cast<std::size_t>(i)]) << (8 * i);
    return value;
}

[[noreturn]] void fail(const std::string& reason) {
    throw SerializationError("physical allocation IPC descriptor: " + reason);
}

bool known_handle_type(unsigned type) {
    return type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || type == CU_MEM_HANDLE_TYPE_FABRIC;
}

std::string object_of(const PhysicalAllocationDescriptor& descriptor) {
    return "physical allocation of " + std::to_string(descriptor.size) + " bytes on device " +
           to_hex(descriptor.device_uuid) + " of process " + std::to_string(descriptor.exporter_pid);
}

}  // namespace

std::vector<std::byte> PhysicalAllocationDescriptor::to_bytes() const {
    std::vector<std::byte> out;
    out.reserve(descriptor_total_size);
    for (unsigned char c : descriptor_magic) out.push_back(static_cast<std::byte>(c));
    put(out, descriptor_format_version, 4);
    put(out, descriptor_payload_size, 4);
    for (unsigned char c : device_uuid) out.push_back(static_cast<std::byte>(c));
    put(out, size, 8);
    put(out, static_cast<std::uint64_t>(exporter_pid), 8);
    put(out, handle_type, 4);
    for (unsigned char c : fabric_handle) out.push_back(static_cast<std::byte>(c));
    put(out, XXH3_64bits(out.data(), out.size()), 8);
    return out;
}

PhysicalAllocationDescriptor PhysicalAllocationDescriptor::from_bytes(std::span<const std::byte> bytes) {
    if (bytes.size() < descriptor_header_size)
        fail("truncated: " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(descriptor_total_size));
    if (std::memcmp(bytes.data(), descriptor_magic, sizeof descriptor_magic) != 0)
        fail("foreign bytes: not a cudacore physical allocation descriptor (bad descriptor_magic)");
    const auto version = get(bytes, 8, 4);
    if (version != descriptor_format_version)
        fail("stale or newer descriptor: format version " + std::to_string(version) +
             ", this cudacore reads version " + std::to_string(descriptor_format_version));
    if (get(bytes, 12, 4) != descriptor_payload_size)
        fail("payload of " + std::to_string(get(bytes, 12, 4)) + " bytes, expected " +
             std::to_string(descriptor_payload_size));
    if (bytes.size() != descriptor_total_size)
        fail(std::to_string(bytes.size()) + " bytes, expected " + std::to_string(descriptor_total_size));
    if (XXH3_64bits(bytes.data(), descriptor_total_size - descriptor_checksum_size) != get(bytes, descriptor_total_size - descriptor_checksum_size, 8))
        fail("corrupted: checksum mismatch");
    PhysicalAllocationDescriptor out;
    std::size_t at = descriptor_header_size;
    std::memcpy(out.device_uuid.data(), bytes.data() + at, out.device_uuid.size());
    at += out.device_uuid.size();
    out.size = get(bytes, at, 8);
    out.exporter_pid = static_cast<std::int64_t>(get(bytes, at + 8, 8));
    out.handle_type = static_cast<unsigned>(get(bytes, at + 16, 4));
    at += 20;
    std::memcpy(out.fabric_handle.data(), bytes.data() + at, out.fabric_handle.size());
    if (!known_handle_type(out.handle_type))
        fail("handle type " + std::to_string(out.handle_type) +
             " (expected a POSIX file descriptor or a fabric handle)");
    return out;
}

int fabric_handles_supported(const Device& device) {
    return device.attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED);
}

PhysicalAllocationHandle export_physical_allocation(const PhysicalAllocation& allocation,
                                                    const PhysicalAllocationExportOptions& options) {
    const auto& box = detail::open_box_of(allocation, "export_physical_allocation");
    const unsigned type = options.handle_type;
    if (!known_handle_type(type))
        throw InvalidArgumentError("export_physical_allocation: handle type " + std::to_string(type) +
                                   " of " + allocation.description() +
                                   " (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR or CU_MEM_HANDLE_TYPE_FABRIC)");
    if (!(box->handle_types & type)) {
        std::string why = "export_physical_allocation: " + allocation.description() +
                          " was not created with handle type " + detail::handle_type_names(type) +
                          " (PhysicalAllocationOptions::handle_types is " +
                          detail::handle_type_names(box->handle_types) + ")";
        if (type == CU_MEM_HANDLE_TYPE_FABRIC)
            why += "; CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is " +
                   std::to_string(fabric_handles_supported(Device(box->ordinal))) + " on device " +
                   std::to_string(box->ordinal);
        throw InvalidArgumentError(why);
    }
    PhysicalAllocationHandle out;
    out.descriptor.device_uuid = Device(box->ordinal).uuid();
    out.descriptor.size = box->size;
    out.descriptor.exporter_pid = ::getpid();
    out.descriptor.handle_type = type;
    detail::ContextScope scope(*box->context);
    const auto& api = detail::driver();
    const auto describe = [&] { return allocation.description(); };
    if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
        CUmemFabricHandle fabric{};
        detail::check(api.cuMemExportToShareableHandle(&fabric, box->handle, CU_MEM_HANDLE_TYPE_FABRIC, 0),
                      "cuMemExportToShareableHandle", describe);
        static_assert(sizeof fabric.data == 64);
        std::memcpy(out.descriptor.fabric_handle.data(), fabric.data, sizeof fabric.data);
    } else {
        int fd = -1;
        detail::check(api.cuMemExportToShareableHandle(&fd, box->handle,
                                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                      "cuMemExportToShareableHandle", describe);
        out.fd = FileDescriptor(fd);
    }
    return out;
}

PhysicalAllocation import_physical_allocation(PhysicalAllocationHandle handle) {
    const PhysicalAllocationDescriptor& descriptor = handle.descriptor;
    const std::string object = object_of(descriptor);
    const bool fabric = descriptor.handle_type == CU_MEM_HANDLE_TYPE_FABRIC;
    if (!known_handle_type(descriptor.handle_type))
        throw InvalidArgumentError("import_physical_allocation: handle type " +
                                   std::to_string(descriptor.handle_type) + " of " + object);
    if (!fabric && !handle.fd.valid())
        throw InvalidArgumentError("import_physical_allocation: no file descriptor for " + object);
    if (descriptor.size == 0) throw InvalidArgumentError("import_physical_allocation: size 0 for " + object);
    const Device device = detail::device_with_uuid(descriptor.device_uuid, [&] { return object; });
    CUmemGenericAllocationHandle imported = 0;
    {
        detail::ContextScope scope(*detail::primary_context(device.ordinal()));
        CUmemFabricHandle fabric_handle{};
        std::memcpy(fabric_handle.data, descriptor.fabric_handle.data(), sizeof fabric_handle.data);
        void* os_handle = fabric ? static_cast<void*>(&fabric_handle)
                                 : reinterpret_cast<void*>(static_cast<std::intptr_t>(handle.fd.get()));
        detail::check(detail::driver().cuMemImportFromShareableHandle(
                          &imported, os_handle, static_cast<CUmemAllocationHandleType>(descriptor.handle_type)),
                      "cuMemImportFromShareableHandle",
                      [&] { return object + " on device " + std::to_string(device.ordinal()); });
    }
    handle.fd.reset();
    try {
        return detail::BoxAccess::make<PhysicalAllocation>(
            detail::adopt_physical_allocation(imported, descriptor.size, true));
    } catch (...) {
        detail::driver().cuMemRelease(imported);
        throw;
    }
}

void send_physical_allocation(const IpcChannel& channel, const PhysicalAllocation& allocation,
                              const PhysicalAllocationExportOptions& options) {
    const PhysicalAllocationHandle handle = export_physical_allocation(allocation, options);
    channel.send(handle.descriptor.to_bytes(), handle.fd.get());
}

PhysicalAllocation receive_physical_allocation(const IpcChannel& channel,
                                               std::optional<std::chrono::milliseconds> timeout) {
    IpcMessage message = channel.receive(timeout);
    PhysicalAllocationHandle handle;
    handle.descriptor = PhysicalAllocationDescriptor::from_bytes(message.bytes);
    if (handle.descriptor.handle_type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && !message.fd.valid())
        throw IpcError("receive_physical_allocation: the descriptor of " + object_of(handle.descriptor) +
                       " arrived without its file descriptor (" + channel.peer() + ")");
    handle.fd = std::move(message.fd);
    return import_physical_allocation(std::move(handle));
}

}  // namespace cudacore
