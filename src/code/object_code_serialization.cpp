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
// bound, the checksum, then every length against the bytes left; trailing bytes are an error.
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "code/object_code_state.hpp"

#include "support/atomic_file.hpp"

#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)

#include <array>
#include <cstring>
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

[[noreturn]] void reject(const std::string& why) {
    throw SerializationError("ObjectCode::deserialize: " + why);
}

}  // namespace

std::string ObjectCode::serialize() const {
    if (state_->from_handle) {
        throw InvalidArgumentError("ObjectCode::serialize: '" + name() + "' wraps a library "
                                   "loaded by the caller (from_handle) and holds no code bytes");
    }
    std::size_t symbols_size = 0;
    for (const auto& [expression, lowered] : symbol_map()) symbols_size += 8 + expression.size() + lowered.size();
    const std::uint64_t total = fixed_header_size + 4 + 4 + name().size() + 4 + symbols_size + 8 +
                                code().size() + checksum_size;
    if (total > max_serialized_size) {
        throw SerializationError("ObjectCode::serialize: '" + name() + "' (" +
                                 std::string(to_string(code_type())) + ") would take " +
                                 std::to_string(total) + " bytes, more than the limit of " +
                                 std::to_string(max_serialized_size));
    }
    Writer out(static_cast<std::size_t>(total));
    out.raw(magic.data(), magic.size());
    out.u32(serialization_format_version);
    out.u32(byte_order_mark);
    out.u64(total);
    out.u32(code_type_tag(code_type()));
    out.string32(name(), "name");
    out.u32(static_cast<std::uint32_t>(symbol_map().size()));
    for (const auto& [expression, lowered] : symbol_map()) {
        out.string32(expression, "name expression");
        out.string32(lowered, "lowered name");
    }
    out.u64(code().size());
    out.raw(code().data(), code().size());
    out.u64(XXH3_64bits(out.bytes().data(), out.bytes().size()));
    return std::move(out.bytes());
}

ObjectCode ObjectCode::deserialize(std::string_view bytes) {
    if (bytes.size() < magic.size() || std::memcmp(bytes.data(), magic.data(), magic.size()) != 0) {
        reject("not a serialized ObjectCode (" + std::to_string(bytes.size()) +
               " bytes; the magic number does not match)");
    }
    if (bytes.size() < minimum_size) {
        reject("truncated: " + std::to_string(bytes.size()) + " bytes, the smallest valid input is " +
               std::to_string(minimum_size));
    }
    Reader header(bytes);
    header.bytes(magic.size(), "magic");
    const std::uint32_t version = header.u32("format version");
    if (version > serialization_format_version) {
        reject("format version " + std::to_string(version) + " is newer than this build reads (" +
               std::to_string(serialization_format_version) + "); upgrade cudacore");
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
    if (total > max_serialized_size) {
        reject("header claims " + std::to_string(total) + " bytes, more than the limit of " +
               std::to_string(max_serialized_size));
    }
    if (total != bytes.size()) {
        reject(std::string(total > bytes.size() ? "truncated" : "trailing data") + ": header says " +
               std::to_string(total) + " bytes, input has " + std::to_string(bytes.size()));
    }
    const std::string_view body = bytes.substr(0, bytes.size() - checksum_size);
    const std::uint64_t stored = read_little_endian(
        reinterpret_cast<const unsigned char*>(bytes.data()) + body.size(), 8);
    const std::uint64_t computed = XXH3_64bits(body.data(), body.size());
    if (stored != computed) {
        reject("checksum mismatch (stored " + std::to_string(stored) + ", computed " +
               std::to_string(computed) + "): the data is corrupted");
    }

    Reader in(body);
    in.bytes(fixed_header_size, "header");
    const std::uint32_t tag = in.u32("code type");
    const std::optional<CodeType> type = code_type_from_tag(tag);
    if (!type) reject("unknown code type tag " + std::to_string(tag));
    std::string name = in.string32("name");
    const std::uint32_t symbol_count = in.u32("symbol count");
    // Each symbol takes at least 8 bytes: refuse impossible counts before looping over them.
    if (symbol_count > in.remaining() / 8) {
        reject("symbol count " + std::to_string(symbol_count) + " exceeds the " +
               std::to_string(in.remaining()) + " bytes left");
    }
    SymbolMap symbols;
    for (std::uint32_t i = 0; i < symbol_count; ++i) {
        std::string expression = in.string32("name expression");
        std::string lowered = in.string32("lowered name");
        if (!symbols.empty() && !(symbols.rbegin()->first < expression)) {
            reject("symbol map out of order or duplicated at '" + expression + "'");
        }
        symbols.emplace_hint(symbols.end(), std::move(expression), std::move(lowered));
    }
    const std::uint64_t code_size = in.u64("code length");
    if (code_size == 0) reject("empty code for '" + name + "'");
    std::string code = in.bytes(code_size, "code");
    if (in.remaining() != 0) {
        reject(std::to_string(in.remaining()) + " unexpected bytes after the code of '" + name + "'");
    }
    return from_bytes(*type, std::move(code), std::move(name), std::move(symbols));
}

bool ObjectCode::looks_serialized(std::string_view bytes) noexcept {
    return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

void ObjectCode::save(const std::filesystem::path& path) const {
    const std::string bytes = serialize();
    try {
        detail::write_file_atomically(path, bytes, 0666);
    } catch (const std::system_error& e) {
        throw SerializationError("ObjectCode::save of '" + name() + "' (" +
                                 std::string(to_string(code_type())) + ", " +
                                 std::to_string(bytes.size()) + " bytes): " + e.what());
    }
}

ObjectCode ObjectCode::load(const std::filesystem::path& path) {
    std::string bytes;
    try {
        bytes = detail::read_file_bounded(path, max_serialized_size);
    } catch (const std::exception& e) {
        throw SerializationError(std::string("ObjectCode::load: ") + e.what());
    }
    try {
        return deserialize(bytes);
    } catch (const SerializationError& e) {
        throw SerializationError("ObjectCode::load '" + path.string() + "': " + e.what());
    }
}

}  // namespace cudacore
