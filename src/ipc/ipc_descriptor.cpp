// The descriptors' byte form (format in ipc_descriptor.hpp): a checked header, a fixed payload
// per kind and an XXH3 checksum, read with every length checked against the bytes present.
#include "cudacore/ipc_descriptor.hpp"

#include "cudacore/errors.hpp"

#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)

#include <cstring>

namespace cudacore {

namespace {

constexpr std::uint32_t format_version = 1;
constexpr std::size_t header_size = 16;
constexpr std::size_t checksum_size = 8;

const char* kind_name(char kind) {
    switch (kind) {
        case 'P': return "memory pool";
        case 'H': return "pinned memory pool";
        case 'B': return "buffer";
        case 'E': return "event";
        case 'M': return "device memory";
    }
    return "unknown";
}

class Writer {
public:
    Writer(char kind, std::size_t payload_size) {
        const unsigned char magic[8] = {0x89, 'C', 'C', 'I', 'P', 'C',
                                        static_cast<unsigned char>(kind), '\n'};
        raw(magic, sizeof magic);
        integer(format_version, 4);
        integer(payload_size, 4);
    }
    void integer(std::uint64_t value, int bytes) {
        for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<std::byte>(value >> (8 * i)));
    }
    void raw(const unsigned char* data, std::size_t size) {
        for (std::size_t i = 0; i < size; ++i) out_.push_back(static_cast<std::byte>(data[i]));
    }
    std::vector<std::byte> finish() {
        integer(XXH3_64bits(out_.data(), out_.size()), 8);
        return std::move(out_);
    }

private:
    std::vector<std::byte> out_;
};

// Checks the header and the checksum, then reads the payload field by field.
class Reader {
public:
    Reader(std::span<const std::byte> bytes, char kind, std::size_t payload_size)
        : bytes_(bytes), position_(header_size) {
        const std::string what = std::string(kind_name(kind)) + " IPC descriptor";
        const std::size_t expected = header_size + payload_size + checksum_size;
        if (bytes.size() < header_size)
            fail(what, "truncated: " + std::to_string(bytes.size()) + " bytes, expected " +
                           std::to_string(expected));
        static const unsigned char magic[6] = {0x89, 'C', 'C', 'I', 'P', 'C'};
        if (std::memcmp(bytes.data(), magic, sizeof magic) != 0 ||
            static_cast<unsigned char>(bytes[7]) != '\n')
            fail(what, "foreign bytes: not a cudacore IPC descriptor (bad magic)");
        const char found = static_cast<char>(bytes[6]);
        if (found != kind)
            fail(what, std::string("foreign descriptor: this is a ") + kind_name(found) +
                           " descriptor");
        const auto version = static_cast<std::uint32_t>(integer_at(8, 4));
        if (version != format_version)
            fail(what, "stale or newer descriptor: format version " + std::to_string(version) +
                           ", this cudacore reads version " + std::to_string(format_version));
        const auto length = integer_at(12, 4);
        if (length != payload_size)
            fail(what, "payload of " + std::to_string(length) + " bytes, expected " +
                           std::to_string(payload_size));
        if (bytes.size() < expected)
            fail(what, "truncated: " + std::to_string(bytes.size()) + " bytes, expected " +
                           std::to_string(expected));
        if (bytes.size() > expected)
            fail(what, std::to_string(bytes.size() - expected) + " trailing bytes after " +
                           std::to_string(expected));
        const std::uint64_t stored = integer_at(expected - checksum_size, 8);
        if (XXH3_64bits(bytes.data(), expected - checksum_size) != stored)
            fail(what, "corrupted: checksum mismatch");
    }
    std::uint64_t integer(int size) {
        const std::uint64_t value = integer_at(position_, size);
        position_ += static_cast<std::size_t>(size);
        return value;
    }
    template <std::size_t N>
    void raw(std::array<unsigned char, N>& out) {
        std::memcpy(out.data(), bytes_.data() + position_, N);
        position_ += N;
    }

private:
    [[noreturn]] static void fail(const std::string& what, const std::string& reason) {
        throw SerializationError(what + ": " + reason);
    }
    std::uint64_t integer_at(std::size_t offset, int size) const {
        std::uint64_t value = 0;
        for (int i = 0; i < size; ++i)
            value |= static_cast<std::uint64_t>(bytes_[offset + static_cast<std::size_t>(i)])
                     << (8 * i);
        return value;
    }
    std::span<const std::byte> bytes_;
    std::size_t position_;
};

constexpr std::size_t pool_payload = 16 + 16 + 8;
constexpr std::size_t buffer_payload = 16 + 8 + 8 + 64;
constexpr std::size_t event_payload = 16 + 8 + 64;
constexpr std::size_t memory_payload = 16 + 8 + 8 + 8 + 64;

}  // namespace

std::string to_hex(const IpcId& id) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char byte : id) {
        out += digits[byte >> 4];
        out += digits[byte & 15];
    }
    return out;
}

std::vector<std::byte> IpcPoolDescriptor::to_bytes() const {
    Writer out(pinned ? 'H' : 'P', pool_payload);
    out.raw(pool_id.data(), pool_id.size());
    out.raw(device_uuid.data(), device_uuid.size());
    out.integer(static_cast<std::uint64_t>(exporter_pid), 8);
    return out.finish();
}

IpcPoolDescriptor IpcPoolDescriptor::from_bytes(std::span<const std::byte> bytes) {
    // Device and pinned pools differ in their kind only; the Reader checks everything else.
    const bool pinned = bytes.size() > 6 && static_cast<char>(bytes[6]) == 'H';
    Reader in(bytes, pinned ? 'H' : 'P', pool_payload);
    IpcPoolDescriptor out;
    out.pinned = pinned;
    in.raw(out.pool_id);
    in.raw(out.device_uuid);
    out.exporter_pid = static_cast<std::int64_t>(in.integer(8));
    return out;
}

std::vector<std::byte> IpcBufferDescriptor::to_bytes() const {
    Writer out('B', buffer_payload);
    out.raw(pool_id.data(), pool_id.size());
    out.integer(size, 8);
    out.integer(static_cast<std::uint64_t>(exporter_pid), 8);
    out.raw(export_data.data(), export_data.size());
    return out.finish();
}

IpcBufferDescriptor IpcBufferDescriptor::from_bytes(std::span<const std::byte> bytes) {
    Reader in(bytes, 'B', buffer_payload);
    IpcBufferDescriptor out;
    in.raw(out.pool_id);
    out.size = in.integer(8);
    out.exporter_pid = static_cast<std::int64_t>(in.integer(8));
    in.raw(out.export_data);
    if (out.size == 0) throw SerializationError("buffer IPC descriptor: size 0");
    return out;
}

std::vector<std::byte> IpcEventDescriptor::to_bytes() const {
    Writer out('E', event_payload);
    out.raw(device_uuid.data(), device_uuid.size());
    out.integer(static_cast<std::uint64_t>(exporter_pid), 8);
    out.raw(handle.data(), handle.size());
    return out.finish();
}

IpcEventDescriptor IpcEventDescriptor::from_bytes(std::span<const std::byte> bytes) {
    Reader in(bytes, 'E', event_payload);
    IpcEventDescriptor out;
    in.raw(out.device_uuid);
    out.exporter_pid = static_cast<std::int64_t>(in.integer(8));
    in.raw(out.handle);
    return out;
}

std::vector<std::byte> IpcMemoryDescriptor::to_bytes() const {
    Writer out('M', memory_payload);
    out.raw(device_uuid.data(), device_uuid.size());
    out.integer(static_cast<std::uint64_t>(exporter_pid), 8);
    out.integer(offset, 8);
    out.integer(size, 8);
    out.raw(handle.data(), handle.size());
    return out.finish();
}

IpcMemoryDescriptor IpcMemoryDescriptor::from_bytes(std::span<const std::byte> bytes) {
    Reader in(bytes, 'M', memory_payload);
    IpcMemoryDescriptor out;
    in.raw(out.device_uuid);
    out.exporter_pid = static_cast<std::int64_t>(in.integer(8));
    out.offset = in.integer(8);
    out.size = in.integer(8);
    in.raw(out.handle);
    if (out.size == 0) throw SerializationError("device memory IPC descriptor: size 0");
    if (out.offset > ~std::uint64_t{0} - out.size)
        throw SerializationError("device memory IPC descriptor: offset + size overflows");
    return out;
}

char ipc_descriptor_kind(std::span<const std::byte> bytes) noexcept {
    return bytes.size() > 6 ? static_cast<char>(bytes[6]) : '\0';
}

}  // namespace cudacore
