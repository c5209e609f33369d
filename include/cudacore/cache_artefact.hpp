/// @file
/// CacheArtefact: a program cache's entries as one file, to ship a warmed cache beside an
/// application (export_cache_artefact) and load it into a cache tier elsewhere
/// (import_cache_artefact): there compile_cached finds the exported programs without NVRTC, as
/// long as the NVRTC and nvJitLink versions and the headers read are the same. The file is
/// checksummed and optionally signed (HMAC-SHA-256); reading checks every byte and bounds its
/// memory before spending it. The guide: docs/caching.md, "Cache artefacts"; the layout:
/// docs/design/cache-artefact.md.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program_cache.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudacore {

class Program;

/// The versions an artefact's entries were made with (every cache key holds the NVRTC and
/// nvJitLink versions: "none" where one could not be loaded).
struct CacheArtefactOrigin {
    std::string cudacore_version = {};   ///< cudacore's version(), for information
    std::string nvrtc_version = {};      ///< NVRTC's "major.minor", or "none"
    std::string nvjitlink_version = {};  ///< nvJitLink's "major.minor", or "none"
};

/// A set of cache entries with the versions they were made with; the value export and import
/// pass through. A plain value: copies share the entries' bytes; thread-safe to read.
class CacheArtefact {
public:
    /// One entry: the key it is stored under, and its code.
    using Entry = std::pair<CacheKey, ObjectCode>;

    /// An artefact of `entries` (any order; a key given twice is kept once, the last one),
    /// stamped with `origin`. Never throws but std::bad_alloc.
    CacheArtefact(std::vector<Entry> entries, CacheArtefactOrigin origin);

    /// The origin of entries made by this process: cudacore's version and the NVRTC and
    /// nvJitLink versions cache_key() puts in keys (loads them to read their versions; never
    /// compiles). Thread-safe.
    static CacheArtefactOrigin current_origin();

    /// The entries, in increasing key order.
    const std::vector<Entry>& entries() const noexcept { return entries_; }
    /// The versions the entries were made with.
    const CacheArtefactOrigin& origin() const noexcept { return origin_; }

    /// The file form, signed with HMAC-SHA-256 under `secret` when not empty. Throws
    /// InvalidArgumentError for a secret under 16 bytes or an entry that cannot be serialized,
    /// SerializationError when compression fails.
    std::string serialize(std::string_view secret = {}) const;
    /// Reads what serialize() wrote, never outside `bytes` nor past `max_memory` for the entries.
    /// With a `secret` the artefact must be signed with it; without one it must not be signed.
    /// Throws SerializationError, beginning "CacheArtefact::deserialize: ", saying why (magic,
    /// size, version, checksum, signature, a damaged entry, the memory bound).
    static CacheArtefact deserialize(std::string_view bytes, std::string_view secret = {},
                                     std::uint64_t max_memory = default_max_memory);

    /// The largest payload read (decompressed): 8 GiB.
    static constexpr std::uint64_t max_payload_size = std::uint64_t{8} << 30;
    /// The memory deserialize() lets the entries take unless told otherwise: 2 GiB.
    static constexpr std::uint64_t default_max_memory = std::uint64_t{2} << 30;

private:
    std::vector<Entry> entries_;
    CacheArtefactOrigin origin_;
};

/// How export_cache_artefact picks and signs entries.
struct CacheArtefactExportOptions {
    /// The keys to export; nullopt: every entry the cache lists (ProgramCache::entry_keys).
    /// cached_entry_keys() gives a program's.
    std::optional<std::vector<CacheKey>> keys = std::nullopt;
    /// Signs the artefact (HMAC-SHA-256) when not empty; at least 16 bytes.
    std::string secret = {};
};

/// What export_cache_artefact wrote.
struct CacheArtefactExport {
    std::uint64_t entries = 0;        ///< entries in the artefact
    std::uint64_t bytes = 0;          ///< the artefact's size
    std::vector<CacheKey> missing{};  ///< keys asked for that the cache did not hold
};

/// How import_cache_artefact checks an artefact.
struct CacheArtefactImportOptions {
    /// When not empty, the artefact must be signed with this secret; when empty, it must not be
    /// signed (as a RemoteProgramCache treats its entries).
    std::string secret = {};
    /// Imports entries made with other NVRTC or nvJitLink versions than this process loads
    /// (refused by default: no key of this process would find them). For an importer that fills
    /// a cache for a process that loads other versions.
    bool accept_other_compiler_versions = false;
    /// Imports an unsigned artefact into a cache that authenticates its entries with a secret;
    /// refused by default (the cache would seal entries nobody signed).
    bool accept_unsigned = false;
    /// The most memory the artefact's entries may take while it is read
    /// (CacheArtefact::deserialize): an artefact that would take more is refused, with the numbers.
    std::uint64_t max_memory = CacheArtefact::default_max_memory;
};

/// What import_cache_artefact did.
struct CacheArtefactImport {
    std::uint64_t imported = 0;  ///< entries stored
    std::uint64_t skipped = 0;   ///< entries the cache already held, byte for byte
    /// Entries the cache failed to store (a CacheError's message each); the others are stored.
    std::vector<std::string> failed{};
    CacheArtefactOrigin origin{};  ///< the versions the artefact's entries were made with
};

/// The keys of the entries compile_cached(program, target, name_expressions, options) finds in
/// options.cache (the code's key, and the first key of C++ code that names a path); empty when
/// it holds no complete entry. Counts hits and misses as find_cached does. Throws
/// InvalidArgumentError for a null cache and what cache_key() throws; cache errors go to
/// options.on_cache_error. Thread-safe as find_cached is.
std::vector<CacheKey> cached_entry_keys(const Program& program, CodeType target,
                                        const std::vector<std::string>& name_expressions,
                                        const CompileOptions& options);

/// Writes the entries of `source` (options.keys, or every entry it lists) as one artefact to
/// `destination`; entries gone meanwhile are left out, keys it lacks named in `missing`. Throws
/// InvalidArgumentError when keys are unset and `source` cannot list, or for a secret under 16
/// bytes; CacheError when the cache fails; SerializationError when the stream fails. Thread-safe
/// as the cache is.
CacheArtefactExport export_cache_artefact(std::ostream& destination, ProgramCache& source,
                                          const CacheArtefactExportOptions& options = {});
/// The same, written atomically to the file `destination` (mode 0666 less the umask): a reader
/// never sees part of an artefact. Throws SerializationError naming the file when it cannot be
/// written.
CacheArtefactExport export_cache_artefact(const std::filesystem::path& destination,
                                          ProgramCache& source,
                                          const CacheArtefactExportOptions& options = {});

/// Stores every entry of the artefact read from `source` into `destination` once the whole
/// artefact, its versions and its trust pass; entries already held are skipped, failed stores
/// named in `failed`. Throws SerializationError beginning "import_cache_artefact: " with the
/// reason. Thread-safe as the cache is.
CacheArtefactImport import_cache_artefact(ProgramCache& destination, std::istream& source,
                                          const CacheArtefactImportOptions& options = {});
/// The same, reading the file `source` (a regular file, of at most what an artefact can hold);
/// messages name the file.
CacheArtefactImport import_cache_artefact(ProgramCache& destination,
                                          const std::filesystem::path& source,
                                          const CacheArtefactImportOptions& options = {});
/// The same for an artefact already read (CacheArtefact::deserialize checked it with
/// options.secret, which tells whether it was signed): its trust and versions are checked as
/// above, then its entries stored. Throws SerializationError beginning "import_cache_artefact: ".
CacheArtefactImport import_cache_artefact(ProgramCache& destination, const CacheArtefact& artefact,
                                          const CacheArtefactImportOptions& options = {});

}  // namespace cudacore
