// What decoding a serialized ObjectCode costs in memory, counted before anything is allocated:
// the serialized form stores a symbol as two lengths and their bytes (8 bytes for two empty
// names), while the SymbolMap keeps each in a tree node of two strings, about 15 times that.
// Every reader of ObjectCodes from outside (files, artefacts, disk and remote cache entries,
// messages) goes through the one deserializer that charges this cost, and refuses what would pass
// max_symbol_map_memory; the writer refuses the same, so what is written reads back.
#pragma once

#include "cudacore/errors.hpp"

#include <cstdint>
#include <string>

namespace cudacore::detail {

// A refusal for cost: decoding would take more memory than its bound allows. A SerializationError
// like any other refusal, so callers that only tell good from bad need not know it; a caller
// that backs off from a source whose values cost too much (the remote cache) catches it first.
class DecodeCostExceeded : public SerializationError {
public:
    using SerializationError::SerializationError;
};

// The most memory a deserialized symbol map may take: 64 MiB, about 500,000 symbols (a program
// names a few to a few thousand).
inline constexpr std::uint64_t max_symbol_map_memory = std::uint64_t{64} << 20;

// One symbol's tree node (its links, colour and two std::string objects, each holding up to 15
// characters in place) with the allocator's own header: 64 bytes of strings, 32 of node, 16 of
// malloc, rounded up.
inline constexpr std::uint64_t symbol_node_memory = 128;

// The heap memory a std::string of `size` characters takes beyond its object: none within the
// small-string buffer, else its characters, the terminator and the allocator's header.
constexpr std::uint64_t string_heap_memory(std::uint64_t size) noexcept {
    return size <= 15 ? 0 : size + 1 + 16;
}

// The memory a symbol of these names takes in a SymbolMap.
constexpr std::uint64_t symbol_memory(std::uint64_t expression_size, std::uint64_t lowered_size) noexcept {
    return symbol_node_memory + string_heap_memory(expression_size) + string_heap_memory(lowered_size);
}

}  // namespace cudacore::detail
