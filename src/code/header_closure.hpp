// The headers a set of entry headers needs, found in include folders as the preprocessor finds
// them: HeaderBundle::from_include_folders and from_headers_read. Internal.
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

// A header to start from: its include name and, when known, the file (else the name is looked
// for in the folders, as a quoted include of the main source would be).
struct EntryHeader {
    std::string name;
    std::filesystem::path file;  // empty: look the name up
    std::filesystem::path root;  // with `file`: the folder `name` is relative to
};

// The entries and every header they include, transitively. `what` names the bundle in errors.
// Throws InvalidArgumentError (an entry found nowhere, two files for one name, a quoted include
// that leaves every folder) and SerializationError (a header that cannot be read).
std::vector<BundledHeader> gather_headers(const std::vector<EntryHeader>& entries,
                                          const std::vector<std::filesystem::path>& folders,
                                          const std::string& what);

// `text` with the operand "from" of each quoted #include / #include_next / #import and each
// __has_include("from") / __has_include_next("from") replaced by "to".
std::string rewrite_quoted_include(std::string_view text, std::string_view from, std::string_view to);

}  // namespace cudacore::detail
