// C's rule for quoted includes, applied to headers given by name and text
// (HeaderBundle::from_headers): a quoted #include or __has_include in a header "dir/x.h" looks
// for its name in "dir/" first. NVRTC matches in-memory headers by the text of the operand only,
// so an operand the rule finds beside its includer is rewritten to the full name; read from a
// bundle's folder, NVRTC then finds the same header. Internal.
#pragma once

#include "cudacore/header_bundle.hpp"

#include <vector>

namespace cudacore::detail {

// `headers` (sorted by name, each name once) with each quoted operand (not #include_next's) of a
// header below a folder rewritten to "<the header's folder>/<operand>" (lexically normal) where
// that names a header of `headers`; nothing else changes, every line keeps its number. Throws
// std::bad_alloc only.
std::vector<BundledHeader> with_includer_folder_rule(std::vector<BundledHeader> headers);

}  // namespace cudacore::detail
