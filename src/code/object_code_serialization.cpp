// ObjectCode's serialized form, version 1. Every integer is little-endian, written and read byte
// by byte, so the format is the same on every host:
//
//   offset  size  field
//   0       8     magic: 0x89 'C' 'C' 'O' 'B' 'J' '\r' '\n' (the high byte and the CR LF catch
//                 7-bit and text-mode transfers, as in PNG)
//   8       4     format version (1)
//   12      4     byte-order mark 0x01020304 (bytes 04 03 02 01)
//   16      8     total size in bytes, checksum included
//   24      4     code type: 1 cubin, 2 ptx, 3 ltoir, 4 fatbin, 5 object, 6 library
//   28      4     name length N, then N bytes
//           4     symbol count S, then S pairs (name expression, lowered name), each a u32
//                 length and its bytes, in strictly increasing order of name expression
//           8     code length C (> 0), then C bytes
//   end-8   8     XXH3-64 (seed 0) of every byte before it
//
// Reading checks, in order: magic, version, byte order, total size against the input and the
// bound, the checksum, then every length against the bytes left and the symbol map's memory
// against its bound (code/decode_cost.hpp) before each is allocated; trailing bytes are an error.
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "code/decode_cost.hpp"
#include "code/object_code_state.hpp"
#include "code/serialized_parts.hpp"

#include "support/atomic_file.hpp"
#include "support/serialized_file.hpp"

#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)

#include <array>
#include <cstring>
#include <new>
#include <stdexcept>
#include <system_error>

namespace cudacore {
namespace {

constexpr std::array<unsigned char, 8> magic = {0x89, 'C', 'C', 'O', 'B', 'J', '\r', '\n'};
constexpr std::uint32_t byte_order_mark = 0x01020304;
constexpr std::size_t fixed_header_size = 8 + 4 + 4 + 8;
constexpr std::size_t checksum_size = 8;
// Header, code type, empty name, no symbols, code length, one code byte, checksum.
constexpr std::size_t minimum_size = fixed_header_size + 4 + 4 + 4 + 8 + 1 + checksum_size;

std::uint32_t code_type_tag(CodeType type) {
    switch (type) {
        case CodeType::cubin: return 1;
        case CodeType::ptx: return 2;
        case CodeType::ltoir: return 3;
        case CodeType::fatbin: return 4;
        case CodeType::object: return 5;
        case CodeType::library: return 6;
    }
    throw InvalidArgumentError("ObjectCode::serialize: unknown code type " +
                               std::to_string(static_cast<int>(type)));
}

std::optional<CodeType> code_type_from_tag(std::uint32_t tag) {
    switch (tag) {
        case 1: return CodeType::cubin;
        case 2: return CodeType::ptx;
        case 3: return CodeType::ltoir;
        case 4: return CodeType::fatbin;
        case 5: return CodeType::object;
        case 6: return CodeType::library;
        default: return std::nullopt;
    }
}

class Writer {
public:
    explicit Writer(std::size_t capacity) { out_.reserve(capacity); }
    void u32(std::uint32_t value) { little_endian(value, 4); }
    void u64(std::uint64_t value) { little_endian(value, 8); }
    void raw(const void* data, std::size_t size) { out_.append(static_cast<const char*>(data), size); }
    void string32(std::string_view text, const char* what) {
        if (text.size() > UINT32_MAX) {
            throw SerializationError("ObjectCode::serialize: " + std::string(what) + " of " +
                                     std::to_string(text.size()) + " bytes is too long");
        }
        u32(static_cast<std::uint32_t>(text.size()));
        raw(text.data(), text.size());
    }
    std::string& bytes() { return out_; }

private:
    void little_endian(std::uint64_t value, int size) {
        for (int i = 0; i < size; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
    std::string out_;
};

std::uint64_t read_little_endian(const unsigned char* p, int size) {
    std::uint64_t value = 0;
    for (int i = 0; i < size; ++i) value |= std::uint64_t{p[i]} << (8 * i);
    return value;
}

// Reads fields from a span whose every access is checked against its end.
class Reader {
public:
    explicit Reader(std::string_view bytes) : bytes_(bytes) {}
    std::uint32_t u32(const char* what) {
        return static_cast<std::uint32_t>(read_little_endian(take(4, what), 4));
    }
    std::uint64_t u64(const char* what) { return read_little_endian(take(8, what), 8); }
    std::string bytes(std::uint64_t size, const char* what) {
        return std::string(reinterpret_cast<const char*>(take(size, what)), size);
    }
    std::string string32(const char* what) { return bytes(u32(what), what); }
    std::size_t position() const { return position_; }
    std::size_t remaining() const { return bytes_.size() - position_; }

private:
    const unsigned char* take(std::uint64_t size, const char* what) {
        if (size > remaining()) {
            throw SerializationError("ObjectCode::deserialize: " + std::string(what) + " at offset " +
                                     std::to_string(position_) + " needs " + std::to_string(size) +
                                     " bytes but only " + std::to_string(remaining()) + " remain");
        }
        auto* p = reinterpret_cast<const unsigned char*>(bytes_.data()) + position_;
        position_ += static_cast<std::size_t>(size);
        return p;
    }
    std::string_view bytes_;
    std::size_t position_ = 0;
};

// A from_handle ObjectCode wraps a library the caller loaded and has no bytes to write.
void refuse_from_handle(bool from_handle, const std::string& name) {
    if (from_handle) {
        throw InvalidArgumentError("ObjectCode::serialize: '" + name + "' wraps a library "
                                   "loaded by the caller (from_handle) and holds no code bytes");
    }
}

[[noreturn]] void reject(const std::string& why) {
    throw SerializationError("ObjectCode::deserialize: " + why);
}

// What a symbol map of `count` symbols taking `memory` bytes (so far) would pass its bound by,
// said by `call`.
[[noreturn]] void refuse_symbol_memory(const char* call, std::uint64_t count, std::uint64_t memory) {
    throw detail::DecodeCostExceeded(std::string(call) + ": a symbol map of " + std::to_string(count) +
                                     " symbols takes at least " + std::to_string(memory) +
                                     " bytes of memory, more than the limit of " +
                                     std::to_string(detail::max_symbol_map_memory) +
                                     " bytes");
}

}  // namespace

namespace detail {

#if defined(CUDACORE_XXH3_AVX2)
void xxh3_64bits_update_avx2(XXH3_state_t* state, const void* data, size_t size) noexcept;  // xxh3_avx2.cpp
#endif

struct SerializedChecksum::State {
    XXH3_state_t xxh3;  // XXH3-64, seed 0
};

SerializedChecksum::SerializedChecksum() : state_(std::make_unique<State>()) { XXH3_64bits_reset(&state_->xxh3); }
SerializedChecksum::~SerializedChecksum() = default;
void SerializedChecksum::update(std::string_view bytes) noexcept {
#if defined(CUDACORE_XXH3_AVX2)
    static const bool avx2 = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0;
    }();
    if (avx2) return xxh3_64bits_update_avx2(&state_->xxh3, bytes.data(), bytes.size());
#endif
    XXH3_64bits_update(&state_->xxh3, bytes.data(), bytes.size());
}
std::uint64_t SerializedChecksum::digest() const noexcept { return XXH3_64bits_digest(&state_->xxh3); }

std::string serialized_head(const ObjectCode& code) {
    check_open(*detail::ObjectCodeAccess::state(code), "ObjectCode::serialize");
    refuse_from_handle(detail::ObjectCodeAccess::state(code)->from_handle, code.name());
    std::size_t symbols_size = 0;
    std::uint64_t symbols_memory = 0;
    for (const auto& [expression, lowered] : code.symbol_map()) {
        symbols_size += 8 + expression.size() + lowered.size();
        symbols_memory += detail::symbol_memory(expression.size(), lowered.size());
    }
    // What deserialize() would refuse is not written.
    if (symbols_memory > detail::max_symbol_map_memory)
        refuse_symbol_memory("ObjectCode::serialize", code.symbol_map().size(), symbols_memory);
    const std::uint64_t head_size = fixed_header_size + 4 + 4 + code.name().size() + 4 + symbols_size + 8;
    const std::uint64_t total = head_size + code.code().size() + checksum_size;
    if (total > ObjectCode::max_serialized_size) {
        throw SerializationError("ObjectCode::serialize: '" + code.name() + "' (" +
                                 std::string(to_string(code.code_type())) + ") would take " +
                                 std::to_string(total) + " bytes, more than the limit of " +
                                 std::to_string(ObjectCode::max_serialized_size));
    }
    Writer out(static_cast<std::size_t>(head_size));
    out.raw(magic.data(), magic.size());
    out.u32(ObjectCode::serialization_format_version);
    out.u32(byte_order_mark);
    out.u64(total);
    out.u32(code_type_tag(code.code_type()));
    out.string32(code.name(), "name");
    out.u32(static_cast<std::uint32_t>(code.symbol_map().size()));
    for (const auto& [expression, lowered] : code.symbol_map()) {
        out.string32(expression, "name expression");
        out.string32(lowered, "lowered name");
    }
    out.u64(code.code().size());
    return std::move(out.bytes());
}

std::string checksum_bytes(std::uint64_t checksum) {
    std::string bytes(checksum_size, '\0');
    for (std::size_t i = 0; i < checksum_size; ++i) bytes[i] = static_cast<char>((checksum >> (8 * i)) & 0xff);
    return bytes;
}

}  // namespace detail

namespace {

// The whole of the checksum in one call (SerializedChecksum picks the fastest code the CPU runs).
std::uint64_t checksum_of(std::string_view bytes) {
    detail::SerializedChecksum checksum;
    checksum.update(bytes);
    return checksum.digest();
}

}  // namespace

// Checks what precedes the fields (magic, size, version, byte order, total) of an input of
// `input_size` bytes that starts with `start`.
void detail::check_serialized_envelope(std::string_view start, std::uint64_t input_size) {
    if (start.size() < magic.size() || std::memcmp(start.data(), magic.data(), magic.size()) != 0) {
        reject("not a serialized ObjectCode (" + std::to_string(input_size) +
               " bytes; the magic number does not match)");
    }
    if (input_size < minimum_size) {
        reject("truncated: " + std::to_string(input_size) + " bytes, the smallest valid input is " +
               std::to_string(minimum_size));
    }
    Reader header(start);
    header.bytes(magic.size(), "magic");
    const std::uint32_t version = header.u32("format version");
    if (version > ObjectCode::serialization_format_version) {
        reject("format version " + std::to_string(version) + " is newer than this build reads (" +
               std::to_string(ObjectCode::serialization_format_version) + "); upgrade cudacore");
    }
    if (version == 0) reject("invalid format version 0");
    const std::uint32_t mark = header.u32("byte-order mark");
    if (mark != byte_order_mark) {
        reject("byte-order mark is 0x" + [&] {
            char hex[16];
            std::snprintf(hex, sizeof hex, "%08x", mark);
            return std::string(hex);
        }() + ", expected 0x01020304 (little-endian)");
    }
    const std::uint64_t total = header.u64("total size");
    if (total > ObjectCode::max_serialized_size) {
        reject("header claims " + std::to_string(total) + " bytes, more than the limit of " +
               std::to_string(ObjectCode::max_serialized_size));
    }
    if (total != input_size) {
        reject(std::string(total > input_size ? "truncated" : "trailing data") + ": header says " +
               std::to_string(total) + " bytes, input has " + std::to_string(input_size));
    }
}

std::uint64_t detail::object_code_memory(const ObjectCode& code) noexcept {
    std::uint64_t memory = code.code().size() + string_heap_memory(code.name().size());
    for (const auto& [expression, lowered] : code.symbol_map())
        memory += symbol_memory(expression.size(), lowered.size());
    return memory;
}

namespace {

using detail::check_serialized_envelope;

void check_checksum(std::uint64_t stored, std::uint64_t computed) {
    if (stored != computed) {
        reject("checksum mismatch (stored " + std::to_string(stored) + ", computed " +
               std::to_string(computed) + "): the data is corrupted");
    }
}

struct Fields {
    CodeType type = CodeType::cubin;
    std::string name;
    SymbolMap symbols;
    std::uint64_t code_size = 0;
};

// Reads code type, name, symbol map and code length (`in` is just past the fixed header).
Fields read_fields(Reader& in) {
    Fields fields;
    const std::uint32_t tag = in.u32("code type");
    const std::optional<CodeType> type = code_type_from_tag(tag);
    if (!type) reject("unknown code type tag " + std::to_string(tag));
    fields.type = *type;
    fields.name = in.string32("name");
    const std::uint32_t symbol_count = in.u32("symbol count");
    // Each symbol takes at least 8 bytes and a tree node: refuse impossible or too costly counts
    // before looping over them, and count each symbol's names before they are copied.
    if (symbol_count > in.remaining() / 8) {
        reject("symbol count " + std::to_string(symbol_count) + " exceeds the " +
               std::to_string(in.remaining()) + " bytes left");
    }
    std::uint64_t memory = std::uint64_t{symbol_count} * detail::symbol_node_memory;
    if (memory > detail::max_symbol_map_memory)
        refuse_symbol_memory("ObjectCode::deserialize", symbol_count, memory);
    for (std::uint32_t i = 0; i < symbol_count; ++i) {
        const std::uint32_t expression_size = in.u32("name expression");
        std::string expression = in.bytes(expression_size, "name expression");
        const std::uint32_t lowered_size = in.u32("lowered name");
        memory += detail::string_heap_memory(expression_size) + detail::string_heap_memory(lowered_size);
        if (memory > detail::max_symbol_map_memory)
            refuse_symbol_memory("ObjectCode::deserialize", symbol_count, memory);
        std::string lowered = in.bytes(lowered_size, "lowered name");
        if (!fields.symbols.empty() && !(fields.symbols.rbegin()->first < expression)) {
            reject("symbol map out of order or duplicated at '" + expression + "'");
        }
        fields.symbols.emplace_hint(fields.symbols.end(), std::move(expression), std::move(lowered));
    }
    fields.code_size = in.u64("code length");
    if (fields.code_size == 0) reject("empty code for '" + fields.name + "'");
    return fields;
}

}  // namespace

std::string ObjectCode::serialize() const {
    std::string out = detail::serialized_head(*this);
    out.reserve(out.size() + code().size() + checksum_size);
    out.append(code());
    out.append(detail::checksum_bytes(checksum_of(out)));
    return out;
}

ObjectCode::SerializedParts ObjectCode::serialize_parts() const {
    SerializedParts parts;
    parts.head = detail::serialized_head(*this);
    detail::SerializedChecksum checksum;
    checksum.update(parts.head);
    checksum.update(code());
    parts.tail = detail::checksum_bytes(checksum.digest());
    return parts;
}

ObjectCode ObjectCode::deserialize(std::string_view bytes) {
    check_serialized_envelope(bytes, bytes.size());
    const std::string_view body = bytes.substr(0, bytes.size() - checksum_size);
    check_checksum(read_little_endian(reinterpret_cast<const unsigned char*>(bytes.data()) + body.size(), 8),
                   checksum_of(body));

    Reader in(body);
    in.bytes(fixed_header_size, "header");
    Fields fields = read_fields(in);
    std::string code = in.bytes(fields.code_size, "code");
    if (in.remaining() != 0) {
        reject(std::to_string(in.remaining()) + " unexpected bytes after the code of '" + fields.name + "'");
    }
    return from_bytes(fields.type, std::move(code), std::move(fields.name), std::move(fields.symbols));
}

ObjectCode ObjectCode::deserialize_parts(std::string_view head, std::string code, std::string_view tail) {
    detail::SerializedChecksum checksum;
    checksum.update(head);
    checksum.update(code);
    return detail::deserialize_checksummed_parts(head, detail::CodeBytes(std::move(code)), tail, checksum.digest());
}

ObjectCode detail::deserialize_checksummed_parts(std::string_view head, CodeBytes code, std::string_view tail,
                                                 std::uint64_t computed) {
    if (tail.size() != checksum_size) {
        reject("the checksum part has " + std::to_string(tail.size()) + " bytes, expected " +
               std::to_string(checksum_size));
    }
    check_serialized_envelope(head, std::uint64_t{head.size()} + code.size() + checksum_size);
    check_checksum(read_little_endian(reinterpret_cast<const unsigned char*>(tail.data()), 8), computed);

    Reader in(head);
    in.bytes(fixed_header_size, "header");
    Fields fields = read_fields(in);
    if (fields.code_size != code.size() || in.remaining() != 0) {
        reject("the head says " + std::to_string(fields.code_size) + " code bytes and leaves " +
               std::to_string(in.remaining()) + " bytes after the code length; given " +
               std::to_string(code.size()) + " code bytes");
    }
    return object_code_from(fields.type, std::move(code), std::move(fields.name), std::move(fields.symbols));
}

bool ObjectCode::looks_serialized(std::string_view bytes) noexcept {
    return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

void ObjectCode::save(const std::filesystem::path& path) const {
    const std::string bytes = serialize();
    const std::string what = "ObjectCode::save of '" + name() + "' (" +
                             std::string(to_string(code_type())) + ", " +
                             std::to_string(bytes.size()) + " bytes)";
    detail::save_serialized(path, bytes, what);
}

ObjectCode ObjectCode::from_saved(const std::filesystem::path& path) {
    // Its first bytes are checked (magic, version, the size they state against the file's)
    // before the rest is read: a large file that is no saved ObjectCode costs no memory.
    std::string bytes;
    try {
        bytes = detail::read_serialized(path, 24, [](std::string_view head, std::uint64_t size) {
            detail::check_serialized_envelope(head, size);
            return size;
        });
    } catch (const SerializationError& e) {
        throw SerializationError(std::string("ObjectCode::from_saved: ") + e.what());
    }
    try {
        return deserialize(bytes);
    } catch (const SerializationError& e) {
        throw SerializationError("ObjectCode::from_saved '" + path.string() + "': " + e.what());
    }
}

ObjectCode ObjectCode::load(const std::filesystem::path& path) { return from_saved(path); }

}  // namespace cudacore
