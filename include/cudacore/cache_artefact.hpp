/// @file
/// CacheArtefact: a program cache's entries as one checksummed, optionally signed file, to ship a
/// warmed cache beside an application and import it into a cache tier elsewhere, where
/// compile_cached finds the programs without NVRTC (same compiler versions and headers). Guide:
/// docs/caching.md, "Cache artefacts"; the layout: docs/design/cache-artefact.md.
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

/// The versions an artefact's entries were made with ("none" where one could not be loaded).
struct CacheArtefactOrigin {
    std::string cudacore_version = {};   ///< cudacore's version(), for information
    std::string nvrtc_version = {};      ///< NVRTC's build ("13.0.88"), or "none"
    std::string nvjitlink_version = {};  ///< nvJitLink's build ("13.0.88"), or "none"
};

/// Cache entries with the versions they were made with; copies share the bytes. Thread-safe.
class CacheArtefact {
public:
    /// One entry: the key it is stored under, and its code.
    using Entry = std::pair<CacheKey, ObjectCode>;

/// An artefact of `entries` (a key given twice: the last kept), stamped with `origin`.
    CacheArtefact(std::vector<Entry> entries, CacheArtefactOrigin origin);

    /// The compiler versions cache_key() puts in keys, and cudacore's. Thread-safe.
    static CacheArtefactOrigin current_origin();

    /// The entries, in increasing key order.
    const std::vector<Entry>& entries() const noexcept { return entries_; }
    /// The versions the entries were made with.
    const CacheArtefactOrigin& origin() const noexcept { return origin_; }

    /// The file form, signed with HMAC-SHA-256 under `secret` when not empty.
    /// InvalidArgumentError for a secret under 16 bytes; SerializationError when compression fails.
    std::string serialize(std::string_view secret = {}) const;
    /// Reads what serialize() wrote, never past `max_memory` for the entries; signed with
    /// `secret` if one is given, else unsigned. SerializationError saying why.
    static CacheArtefact deserialize(std::string_view bytes, std::string_view secret = {},
                                     std::uint64_t max_memory = default_max_memory);

    /// The bytes of the file form's header: stated_size() reads them.
    static constexpr std::size_t header_size = 40;
    /// The size of the file form whose first header_size bytes are `head`, as that header states
    /// it (header, compressed payload, seals): what a reader reads, and no more. SerializationError
    /// when `head` is no artefact header (magic, length, version, flags, a payload over
    /// max_payload_size; the message counts `input_size` bytes, head.size() when 0). Thread-safe.
    static std::uint64_t stated_size(std::string_view head, std::uint64_t input_size = 0);
    /// deserialize() of the file `path`, a regular file read only once its header is checked and
    /// only if its size is the stated one, and if its compressed payload could decompress within
    /// `max_memory`: a large file that is no artefact, or a padded one, costs no memory.
    /// SerializationError naming the file and why. Thread-safe.
    static CacheArtefact read_file(const std::filesystem::path& path, std::string_view secret = {},
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
    /// The keys to export; nullopt: every entry the cache lists.
    std::optional<std::vector<CacheKey>> keys = std::nullopt;
    /// Signs the artefact (HMAC-SHA-256) when not empty; at least 16 bytes.
    std::string secret = {};
};

/// What export_cache_artefact wrote.
struct CacheArtefactExport {
    std::uint64_t entries = 0;        ///< entries in the artefact
    std::uint64_t bytes = 0;          ///< the artefact's size
    std::vector<CacheKey> missing{};  ///< keys asked for that the cache did not hold
    /// Entries a signed export left out: they arrived with another trust (an unsigned artefact,
    /// another secret) than the one the secret vouches for, so signing would launder them.
    std::vector<CacheKey> not_vouched{};
};

/// How import_cache_artefact checks an artefact.
struct CacheArtefactImportOptions {
    /// Not empty: the artefact must be signed with it; empty: it must not be signed.
    std::string secret = {};
    /// Imports entries of other NVRTC or nvJitLink versions than this process loads.
    bool accept_other_compiler_versions = false;
    /// Imports an unsigned artefact into a cache that authenticates its entries.
    bool accept_unsigned = false;
    /// The most memory the artefact's entries may take while it is read.
    std::uint64_t max_memory = CacheArtefact::default_max_memory;
};

/// What import_cache_artefact did.
struct CacheArtefactImport {
    std::uint64_t imported = 0;  ///< entries stored
    std::uint64_t skipped = 0;   ///< entries the cache already held, byte for byte
    /// Entries the cache failed to store (a CacheError's message each).
    std::vector<std::string> failed{};
    CacheArtefactOrigin origin{};  ///< the versions the artefact's entries were made with
};

/// The keys of the entries compile_cached(program, target, name_expressions, options) finds in
/// options.cache (not null); empty when it holds no complete entry. Throws as find_cached does.
std::vector<CacheKey> cached_entry_keys(const Program& program, CodeType target,
                                        const std::vector<std::string>& name_expressions,
                                        const CompileOptions& options);

/// Writes the entries of `source` (options.keys, or all it lists) as one artefact; keys it lacks
/// are named in `missing`. A signed artefact holds only entries compiled here or already vouched
/// for by its secret: those of another trust (an unsigned artefact's) are named in `not_vouched`. InvalidArgumentError; CacheError; SerializationError naming the stream.
CacheArtefactExport export_cache_artefact(std::ostream& destination, ProgramCache& source,
                                          const CacheArtefactExportOptions& options = {});
/// The same, written atomically to the file `destination`.
CacheArtefactExport export_cache_artefact(const std::filesystem::path& destination,
                                          ProgramCache& source,
                                          const CacheArtefactExportOptions& options = {});

/// Stores every entry of the artefact read from `source` once the whole artefact, its versions and
/// its trust pass; entries held are skipped, failed stores named. SerializationError with why.
CacheArtefactImport import_cache_artefact(ProgramCache& destination, std::istream& source,
                                          const CacheArtefactImportOptions& options = {});
/// The same, reading the file `source`.
CacheArtefactImport import_cache_artefact(ProgramCache& destination,
                                          const std::filesystem::path& source,
                                          const CacheArtefactImportOptions& options = {});
/// The same for an artefact already read (deserialize checked it with options.secret).
CacheArtefactImport import_cache_artefact(ProgramCache& destination, const CacheArtefact& artefact,
                                          const CacheArtefactImportOptions& options = {});

}  // namespace cudacore
