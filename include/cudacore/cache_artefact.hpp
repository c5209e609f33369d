/// @file
/// CacheArtefact: a program cache's entries as one file, to ship a warmed cache beside an
/// application (export_cache_artefact) and load it into a cache tier on another machine
/// (import_cache_artefact): there, compile_cached finds the exported programs without calling
/// NVRTC, as long as the NVRTC and nvJitLink versions (which every key holds) and the headers the
/// programs read are the same.
///
/// The file (every integer little-endian; docs/caching.md "Cache artefacts"):
///   - a 40-byte header: the magic `\x89CCART\r\n`, the format version (u32), flags (u32; bit 0:
///     signed), the entry count (u64), the payload's size (u64) and its compressed size (u64);
///   - the payload, one zstd frame: the cudacore, NVRTC and nvJitLink versions the entries were
///     made with (each a u32 length and the text), then every entry in increasing key order: its
///     key (32 bytes), the length (u64) and bytes of its ObjectCode::serialize() form (which
///     carries its own checksum);
///   - the SHA-256 (OpenSSL) of every byte before it;
///   - when signed, the HMAC-SHA-256 under the secret of every byte before it.
///
/// Reading checks, in order: the magic, the header's size, the version, the sizes against the
/// input (truncated or trailing data), the checksum, the signature, the frame, then every entry
/// (its length, its code's own checksum, keys strictly increasing); nothing is imported from an
/// artefact that fails any check. What reading costs is bounded before it is spent: the payload
/// is decompressed as it is read (never more than its stated size, with a bounded zstd window),
/// each entry's serialized head is checked before its bytes are decompressed, and the memory the
/// entries take (their code, names and symbol maps) is counted against a limit before each is
/// allocated. An entry is stored under the key it was exported under: the
/// key names the inputs it was compiled from, so a cache that takes it returns what a compile
/// of those inputs would give, and compile_cached still re-checks a C++ program's headers.
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

    /// The file form (this file's description), signed with HMAC-SHA-256 under `secret` when it
    /// is not empty. Throws InvalidArgumentError for a secret shorter than 16 bytes or an entry
    /// that cannot be serialized (ObjectCode::serialize), SerializationError when compression
    /// fails.
    std::string serialize(std::string_view secret = {}) const;
    /// Reads what serialize() wrote, never reading outside `bytes`, and never letting the entries
    /// take more than `max_memory` bytes while they are read (each entry's serialized bytes and
    /// its value: code, name, symbol map). With a `secret`, the artefact must be signed with it;
    /// without one, it must not be signed. Throws SerializationError, beginning
    /// "CacheArtefact::deserialize: " and saying why: not an artefact (wrong magic), truncated,
    /// trailing data, a format version this build does not read, a checksum mismatch, not signed
    /// while a secret is required, signed while no secret is given, a signature that fails
    /// (another secret, or changed), a damaged entry (which), or an entry whose reading would pass
    /// `max_memory` or whose symbol map would take more than 64 MiB (with the numbers).
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
    /// Imports an unsigned artefact into a cache that authenticates what it holds with a secret
    /// (a RemoteProgramCache with one, or a TieredProgramCache over one): refused by default,
    /// since that cache would seal, as if a holder of its secret had written them, entries that
    /// nobody signed.
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
/// options.cache: the key of its code, and for C++ code that names a path (docs/caching.md) the
/// program's first key too, whose marker leads to the code. Empty when the cache holds no
/// complete entry for it (nothing compiled yet, or a header it reads changed since). Reads the cache as find_cached does (its gets count hits and misses).
/// Throws InvalidArgumentError when options.cache is null, and what cache_key() throws; cache
/// errors go to options.on_cache_error. Thread-safe as find_cached is.
std::vector<CacheKey> cached_entry_keys(const Program& program, CodeType target,
                                        const std::vector<std::string>& name_expressions,
                                        const CompileOptions& options);

/// Writes the entries of `source` (those of options.keys, or every entry it lists) as one
/// artefact to `destination`. An entry listed but gone before it is read (evicted, found corrupt)
/// is left out; a key of options.keys the cache does not hold is named in the result's
/// `missing`. Throws InvalidArgumentError when options.keys is unset and `source` cannot list its
/// entries (a RemoteProgramCache), or for a secret shorter than 16 bytes; CacheError when the
/// cache fails; SerializationError naming the call when the stream fails. Thread-safe as the
/// cache is.
CacheArtefactExport export_cache_artefact(std::ostream& destination, ProgramCache& source,
                                          const CacheArtefactExportOptions& options = {});
/// The same, written atomically to the file `destination` (mode 0666 less the umask): a reader
/// never sees part of an artefact. Throws SerializationError naming the file when it cannot be
/// written.
CacheArtefactExport export_cache_artefact(const std::filesystem::path& destination,
                                          ProgramCache& source,
                                          const CacheArtefactExportOptions& options = {});

/// Stores every entry of the artefact read from `source` into `destination` (any tier: memory,
/// disk, remote, tiered), after checking the whole artefact (CacheArtefact::deserialize) and its
/// versions: nothing is stored from one that fails, nor from an unsigned one when `destination`
/// authenticates its entries with a secret (its entry_trust() names an HMAC), unless
/// options.accept_unsigned. Code goes in before the markers that
/// lead to it, so a process reading meanwhile finds either a complete entry or none. An entry the
/// cache already holds with the same bytes is skipped, so importing twice changes nothing; one it
/// fails to store is named in `failed` and the rest go on. Several processes may import into one
/// disk cache at once. Throws SerializationError beginning "import_cache_artefact: " with the
/// reason (deserialize's; "made with NVRTC X and nvJitLink Y; this process loads ..." unless
/// options.accept_other_compiler_versions; "unsigned, and the cache authenticates its entries"
/// unless options.accept_unsigned) and when the stream cannot be read. Thread-safe as the
/// cache is.
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
