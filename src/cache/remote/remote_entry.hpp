// The value RemoteProgramCache stores under a key, and the secret that authenticates it: the
// layout and checks are described in remote_program_cache.hpp (RemoteProgramCache::encode_entry).
#pragma once

#include "cudacore/remote_cache_options.hpp"

#include <string>
#include <string_view>

namespace cudacore::detail {

// The secret named by options.secret_file or options.secret_env ("" when neither is set), its
// trailing white space (a file's final newline) removed. Throws InvalidArgumentError naming the
// server, the file or variable and what is wrong: both set, unreadable, unset, or shorter than
// 16 bytes.
std::string read_entry_secret(const RemoteCacheOptions& options);

}  // namespace cudacore::detail
