// The headers of a bundle, from the files the preprocessor opened (code/header_trace.hpp):
// HeaderBundle::from_include_folders and from_headers_read. Internal.
//
// Each header is named as NVRTC will ask for it: a name found in a search folder keeps the text
// of its #include; a quoted name found in the including header's own folder is named by its
// path below the folder the includer was found in, and the includer's directive is rewritten to
// that name (NVRTC matches in-memory headers by the text of the operand only).
#pragma once

#include "cudacore/header_bundle.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cudacore::detail {

// The bundle of exactly the files in `opened` (what the preprocessor opened: absolute paths),
// each named by its path below the folder of `folders` that holds it most deeply and by the
// names other headers' directives ask for (a file no other header includes also below each other
// folder holding it, where no earlier folder has a file of that name), with the quoted includes
// of a header found beside its includer rewritten to that name (their directives are followed
// only to learn names: a file not in `opened` never goes in). `what` names the bundle
// in errors. Throws InvalidArgumentError (files outside every folder unless `allow_outside`,
// each named; two files for one name) and SerializationError (a header that cannot be read).
std::vector<BundledHeader> gather_headers(const std::vector<std::string>& opened,
                                          const std::vector<std::filesystem::path>& folders,
                                          bool allow_outside, const std::string& what);

// Why the entry header `name` cannot be read from the first folder where it exists in some form
// (a symbolic link loop, a dangling link, not a regular file), or empty.
std::string describe_entry_problem(const std::string& name,
                                   const std::vector<std::filesystem::path>& folders);

// `text` with the operand "from" of each quoted #include / #include_next / #import and each
// __has_include("from") / __has_include_next("from") replaced by "to".
std::string rewrite_quoted_include(std::string_view text, std::string_view from, std::string_view to);

}  // namespace cudacore::detail
