// What in a file's text can make compiled code hold the path of a file: the names that expand to
// one (__FILE__, __BASE_FILE__, __builtin_FILE, assert, ...), the macros a file defines (a macro
// whose body names a path names the path of the file that uses it) and the names a file uses.
// compile_cached keys the code of a program by paths relative to its project only when no file
// of the program can name a path (cache/path_key.hpp). The scan is by identifier, not by
// preprocessing: a name in a comment, a string or under `#if 0` counts too, which only keeps a
// path that was not needed. Internal.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudacore::detail {

struct PathNames {
    // Every identifier of the file, sorted, each once.
    std::vector<std::string> identifiers;
    // Identifiers right after a lone '=' outside a #define (a default argument or an initializer):
    // a __builtin_FILE() default argument names the path of the caller's file.
    std::vector<std::string> assigned;
    // #define NAME ...: the name and the identifiers of its body.
    std::vector<std::pair<std::string, std::vector<std::string>>> macros;
};

// Scans one file's text. Never throws except std::bad_alloc.
PathNames scan_path_names(std::string_view text);

// Whether `identifier` may name a path wherever it is written: any name holding, in any case,
// "__file" or "file__" (__FILE__, __BASE_FILE__, __FILE_NAME__), "builtin_file", "source_location"
// or "assert" (NVRTC's assert names the file it is written in; CCCL's _CCCL_ASSERT and the like),
// other than static_assert.
bool names_path(std::string_view identifier);

// The names of the file at `path` whose SHA-256 (hex) is `digest` (a header of a file view),
// scanned once per digest in this process; null when the file cannot be read or no longer holds
// those bytes (the caller then keeps the path). Thread-safe.
std::shared_ptr<const PathNames> path_names_of_file(const std::string& path, const std::string& digest);

}  // namespace cudacore::detail
