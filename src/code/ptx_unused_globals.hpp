// Unused module-scope variables dropped from PTX text (ProgramOptions::remove_unused_globals, the
// result of jitify's -remove-unused-globals). Internal.
#pragma once

#include "cudacore/object_code.hpp"

#include <string>
#include <string_view>

namespace cudacore::detail {

// `ptx` without the declarations of module-scope .global and .const variables that nothing else
// in the module names: no instruction, no other kept variable's initializer, no debug section,
// and not the lowered name of one of the program's name expressions (`symbols`). Only declarations
// that start with the state space are removed: .visible, .extern and .weak ones (relocatable code
// that other modules may reference) stay. Every other byte stays as it was. PTX it does not
// understand (a block comment, an unterminated declaration) is returned unchanged. Throws
// std::bad_alloc only.
std::string without_unused_globals(std::string_view ptx, const SymbolMap& symbols);

}  // namespace cudacore::detail
