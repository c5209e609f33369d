// Structural validation of binary GPU code: the container (ELF cubin or host object, fatbin,
// ar library, LTO-IR container) is checked before any byte of it reaches nvJitLink, the driver's
// linker or the driver's loader, none of which are safe against malformed input (a bad table
// offset is a crash inside them, not an error). What is checked: headers, every table and
// section in bounds, entry sizes as the format defines them, links between sections pointing at
// sections of the right kind, symbol and relocation indices in range, string tables terminated,
// nested images (fatbin entries, archive members) validated in turn. Every size and offset is
// checked without overflow, and the work done is proportional to the input's size.
//
// What is not checked: the meaning of instructions and of NVIDIA's attribute payloads. A
// well-formed image with nonsensical contents can still upset a driver; see the GPU mutation
// test for what that leaves.
#pragma once

#include "code/fatbin_reader.hpp"
#include "cudacore/object_code.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

// Throws InvalidArgumentError "malformed <type> '<name>' (<N> bytes): <what is wrong>" when
// `code`, declared as `type`, is not a sound container of that type (the name is left out when
// empty). PTX is text that its consumers parse themselves: only its emptiness is checked.
void validate_code(CodeType type, std::string_view code, std::string_view name = {});

// The check Linker makes of each of its inputs: validate_code on its declared type, the error
// prefixed with "Linker '<linker_name>': input <index> is unusable: ".
void validate_link_input(const ObjectCode& input, std::size_t index, std::string_view linker_name);

// The images of a fatbin, after validating its structure (as validate_code does). Throws
// InvalidArgumentError as validate_code does.
std::vector<FatbinImage> fatbin_images(std::string_view fatbin, std::string_view name = {});

}  // namespace cudacore::detail
