/// @file
/// CacheKey: the SHA-256 of everything that decides what Program::compile returns, but the
/// contents of included headers (compile_cached adds them). The fields: docs/caching.md, "The
/// fields of a program's key".
#pragma once

#include "cudacore/object_code.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

class Program;

/// The key of a program cache entry.
struct CacheKey {
    std::array<std::uint8_t, 32> digest{};  ///< the SHA-256 digest's 32 bytes

    std::string hex() const;  ///< 64 lower-case hex digits; used as the disk cache's file name
    /// The inverse of hex(); InvalidArgumentError unless given 64 hex digits.
    static CacheKey from_hex(std::string_view hex);
    /// SHA-256 of arbitrary bytes (for caches keyed by something other than a Program).
    static CacheKey of_bytes(std::string_view bytes);

    auto operator<=>(const CacheKey&) const = default;  ///< ordered field by field
};

/// The key of program.compile(target, name_expressions), remembered with the Program value. Names
/// the compilers' builds from their files; opens a compiler (one empty compile or link) only where
/// neither its file's name nor a line remembered in the disk cache tells its build. Throws as
/// program.flags(target). Thread-safe.
CacheKey cache_key(const Program& program, CodeType target,
                   const std::vector<std::string>& name_expressions = {});

/// std::hash-style hasher of a CacheKey, for unordered containers.
struct CacheKeyHash {
    std::size_t operator()(const CacheKey& key) const noexcept;  ///< the digest's first 8 bytes
};

}  // namespace cudacore
