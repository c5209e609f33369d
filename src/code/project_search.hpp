// A C++ compile's include search and project folder (code/path_key.hpp), worked out once per
// program name, flags and $CUDA_HOME in this process rather than at every lookup: a query engine
// makes a new Program per request, and each new Program's first key would otherwise resolve its
// folders (one getcwd, the toolkit's folders, the project folder) twice. The working directory,
// the one input that can change between two calls, is read again at every call where the search
// depends on it. Internal.
#pragma once

#include "code/path_key.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/program.hpp"
#include "headers/include_lookups.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cudacore::detail {

// What a compile's keys read of where it searches.
struct ProjectSearch {
    IncludeSearch search;
    ProjectRoot root;
    // The key fields of the flags and of the program name (cache_key): each flag with the
    // standard headers' folder by digest and its absolute folders relative to `root`, then the
    // name, relative to `root` where absolute.
    std::vector<std::string> key_fields;
};

// The search of a program named `program_name` compiled with `flags` (Program::flags), as
// include_search and project_root give it now: remembered per name, flags and $CUDA_HOME, and
// taken again when the working directory it was resolved in is no longer the current one. Never
// null; thread-safe; throws only std::bad_alloc.
std::shared_ptr<const ProjectSearch> project_search(const std::string& program_name,
                                                    const std::vector<std::string>& flags);

// cache_key(program, target, name_expressions), with the search it was keyed with when this call
// worked it out (null when the Program's memo held the key, or the program is not C++), so that
// the lookup that follows need not work it out again. Throws what cache_key throws.
struct SourceKey {
    CacheKey key;
    std::shared_ptr<const ProjectSearch> search;
    unsigned compiler_generation = 0;  // compiler_identity_generation() before the key was made
};
SourceKey source_key(const Program& program, CodeType target,
                     const std::vector<std::string>& name_expressions);

}  // namespace cudacore::detail
