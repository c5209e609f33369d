// ObjectCode's serialized form in pieces, for transfers that send the code bytes where they lie
// and checksum them piece by piece as they go out and come in (cudacore::mpi::broadcast), so
// that the checksum is not a separate pass over the bytes before or after the transfer.
// serialize() == serialized_head(code) + code.code() + checksum_bytes(checksum of both).
// ObjectCode::serialize_parts / deserialize_parts are the public, one-pass form of the same.
#pragma once

#include "cudacore/object_code.hpp"
#include "code/code_bytes.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cudacore::detail {

// The serialized form's checksum (src/code/object_code_serialization.cpp says which), fed the
// head and then the code bytes, in pieces of any size.
class SerializedChecksum {
public:
    SerializedChecksum();  // throws std::bad_alloc
    ~SerializedChecksum();
    SerializedChecksum(const SerializedChecksum&) = delete;
    SerializedChecksum& operator=(const SerializedChecksum&) = delete;

    void update(std::string_view bytes) noexcept;
    std::uint64_t digest() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// The bytes before the code: header, code type, name, symbol map and code length. Throws
// InvalidArgumentError for a from_handle ObjectCode and SerializationError past
// max_serialized_size, as serialize() does.
std::string serialized_head(const ObjectCode& code);
// The tail: a checksum as the serialized form stores it.
std::string checksum_bytes(std::uint64_t checksum);

// Checks what precedes a serialized ObjectCode's fields (magic, version, byte order, total size
// against `input_size` and the bound) in `start`, its first bytes (at least 24 for a full check),
// before the rest is read. Throws SerializationError as ObjectCode::deserialize does.
void check_serialized_envelope(std::string_view start, std::uint64_t input_size);

// The memory an ObjectCode's value takes: its code, its name and its symbol map
// (code/decode_cost.hpp). Never throws.
std::uint64_t object_code_memory(const ObjectCode& code) noexcept;

// ObjectCode::deserialize_parts(head, code, tail) for a caller that fed exactly `head` and then
// `code` to a SerializedChecksum and passes its digest as `computed` (checked against `tail`,
// with every field, as deserialize_parts does; `code` becomes the ObjectCode's bytes).
ObjectCode deserialize_checksummed_parts(std::string_view head, CodeBytes code, std::string_view tail,
                                         std::uint64_t computed);

}  // namespace cudacore::detail
