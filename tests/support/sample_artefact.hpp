// A small cache artefact of two made-up entries (keys "one" and "two"), for the artefact tests of
// each tier.
#pragma once

#include "cudacore/cache_artefact.hpp"
#include "cudacore/object_code.hpp"

#include <string>
#include <utility>
#include <vector>

namespace cudacore::test {

// The artefact's bytes, signed with `secret_text` when it is not empty, made by `origin`.
inline std::string sample_artefact_bytes(const std::string& secret_text = {},
                                         CacheArtefactOrigin origin = CacheArtefact::current_origin()) {
    std::vector<CacheArtefact::Entry> entries;
    entries.emplace_back(CacheKey::of_bytes("one"),
                         ObjectCode::from_bytes(CodeType::ptx, std::string(300, 'p'), "one"));
    entries.emplace_back(CacheKey::of_bytes("two"),
                         ObjectCode::from_bytes(CodeType::ptx, std::string("two"), "two"));
    return CacheArtefact(std::move(entries), std::move(origin)).serialize(secret_text);
}

}  // namespace cudacore::test
