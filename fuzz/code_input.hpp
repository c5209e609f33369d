// How the code fuzzers read their input: the first byte chooses the declared code type (as given
// to ObjectCode::from_bytes) or, past the last type, the type told from the bytes (as `cudacore
// link` classifies its inputs); the rest are the code's bytes.
#pragma once

#include "cudacore/code_inspection.hpp"
#include "cudacore/object_code.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace cudacore::fuzz {

struct CodeInput {
    CodeType type;
    std::string bytes;
};

// Empty when the input is too short or its bytes look like no code type it could be told from.
inline std::optional<CodeInput> read_code_input(const std::uint8_t* data, std::size_t size) {
    constexpr CodeType kTypes[] = {CodeType::cubin,  CodeType::ptx,    CodeType::ltoir,
                                   CodeType::fatbin, CodeType::object, CodeType::library};
    if (size < 2) return std::nullopt;
    const unsigned choice = data[0] % 7;
    std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (choice < 6) return CodeInput{kTypes[choice], std::move(bytes)};
    const auto detected = try_detect_code_type(bytes);
    if (!detected) return std::nullopt;
    return CodeInput{*detected, std::move(bytes)};
}

}  // namespace cudacore::fuzz
