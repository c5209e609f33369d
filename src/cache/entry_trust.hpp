// The trust an entry keeps from the tier or artefact it arrived with (ProgramCache::entry_trust()):
// the names a sealed remote store and a cache artefact give their entries, and whether a trust
// holds a secret. Shared by the tiers and the artefacts, so neither needs the other.
#pragma once

#include <string>
#include <string_view>

namespace cudacore::detail {

// RemoteProgramCache::entry_trust() of a cache with `secret` ("" for none). Throws
// std::runtime_error when OpenSSL's SHA-256 fails.
std::string entry_trust(std::string_view secret);

// The trust an unsigned artefact's entries are stored with (ProgramCache::put_many_with_trust);
// a signed one's is entry_trust() of its secret, as a remote cache with that secret names its own.
inline constexpr std::string_view unsigned_artefact_trust = "unsigned cache artefact";

// Whether a cache of entry_trust() `trust` (a TieredProgramCache joins its tiers') authenticates
// entries with a secret: what it serves was sealed by a holder of that secret.
bool trust_holds_secret(std::string_view trust) noexcept;

}  // namespace cudacore::detail
