// The value RemoteProgramCache stores under a key, and the secret that authenticates it: the
// layout and checks are described in remote_program_cache.hpp (RemoteProgramCache::encode_entry).
#pragma once

#include "cudacore/remote_program_cache.hpp"

#include <string>
#include <string_view>

namespace cudacore::detail {

// The secret named by options.secret_file or options.secret_env ("" when neither is set), its
// trailing white space (a file's final newline) removed. Throws InvalidArgumentError naming the
// server, the file or variable and what is wrong: both set, unreadable, unset, or shorter than
// 16 bytes.
std::string read_entry_secret(const RemoteCacheOptions& options);

// RemoteProgramCache::entry_trust() of a cache with `secret` ("" for none).
std::string entry_trust(std::string_view secret);

// The trust an unsigned artefact's entries are stored with (ProgramCache::put_many_with_trust);
// a signed one's is entry_trust() of its secret, as a remote cache with that secret names its own.
inline constexpr std::string_view unsigned_artefact_trust = "unsigned cache artefact";

// Whether a cache of entry_trust() `trust` (a TieredProgramCache joins its tiers') authenticates
// entries with a secret: what it serves was sealed by a holder of that secret.
bool trust_holds_secret(std::string_view trust) noexcept;

}  // namespace cudacore::detail
