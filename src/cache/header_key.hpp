// The code key of a C++ program made from its header record (cached_compile.cpp), and what
// re-checks it at a later lookup: the headers and include lookups outside the CUDA toolkit. The
// toolkit's are looked at once per process: toolkit_include_dirs() is found once per $CUDA_HOME
// value and the files under it are taken as fixed while the process runs (a toolkit replaced under
// a running process is seen by the next process), like the headers built into NVRTC. Internal.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/compiler_flags.hpp"
#include "cudacore/object_code.hpp"
#include "headers/file_view.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudacore::detail {

// A code key made from a header record, with what it was made from.
struct HeaderKey {
    CacheKey source_key;        // the program's cache_key, under which the record is stored
    std::uint64_t generation;   // header_key_generation() then
    ObjectCode list;            // the header-list entry (the record) it was made from
    CacheKey key;               // the code key
    // The working directory the search was resolved in, where the record depends on it (a path it
    // lists lies in a folder resolved there, or a pre-include is looked for there); else empty.
    std::string working_directory;
    // The project folder its paths are relative to (cache/path_key.hpp).
    std::string project_folder;
    std::vector<std::pair<std::string, FileDigest>> headers_outside_toolkit;
    std::vector<std::pair<std::string, std::string>> lookups_outside_toolkit;  // path, state
};

// Whether `known` is still the code key of `list` (the record found under its source key now):
// the same record, the same working directory where it depends on one, every header outside the
// toolkit unchanged (one stat when its settled stamp is unchanged, else its digest) and every
// lookup outside it finding what it found. `working_directory_now`: the working directory as the
// caller read it in this lookup, or empty to read it here. Thread-safe.
bool header_key_holds(const HeaderKey& known, const ObjectCode& list,
                      const std::string& working_directory_now = {});

// Keys made before the last forget_header_keys() are not used again.
std::uint64_t header_key_generation() noexcept;

// This process's code keys, by source key, for Program objects that have not keyed their record
// themselves (program_key_memo.hpp): the one made last under `source_key` when it still holds for
// `list` and was made for the project folder `project_folder`, else null. The source key stands
// for the include search too: the search follows from the program's name and flags, and the
// working directory, which the key checks where the record depends on it
// (`working_directory_now` as in header_key_holds). Thread-safe.
std::shared_ptr<const HeaderKey> find_header_key(const CacheKey& source_key,
                                                 const ObjectCode& list,
                                                 const std::string& project_folder,
                                                 const std::string& working_directory_now = {});
void remember_header_key(std::shared_ptr<const HeaderKey> key);

// Forgets every code key remembered in this process, by the process and by each Program, so that
// the next lookup keys its record afresh as another process does.
void forget_header_keys();

}  // namespace cudacore::detail
