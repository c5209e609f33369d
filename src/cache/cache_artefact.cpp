// Export of a program cache's entries to one artefact, and import of an artefact into a cache
// (the format is in cache_artefact_format.cpp).
#include "cudacore/cache_artefact.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"

#include "cache/cached_entry.hpp"
#include "cache/entry_trust.hpp"
#include "cache/sha256_seal.hpp"
#include "support/atomic_file.hpp"
#include "support/cudacore_trace.hpp"
#include "support/serialized_file.hpp"

#include <zstd.h>

#include <algorithm>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>

namespace cudacore {
namespace {

// Whether an entry of trust `trust` may go into an artefact signed with `secret`: a signature
// vouches for every entry, so only code compiled here (no trust of its own) and entries already
// vouched for by that very secret are signed; one that arrived with another trust (an unsigned
// artefact, another secret) would come out of the artefact trusted as the secret's.
bool may_sign(const std::string& trust, const std::string& secret) {
    return secret.empty() || trust.empty() || trust == detail::entry_trust(secret);
}

// The entries of `keys` that `source` holds; those it does not are added to `missing`, and those
// a signature may not vouch for to `not_vouched`.
std::vector<CacheArtefact::Entry> entries_of(ProgramCache& source, const std::vector<CacheKey>& keys,
                                             const std::string& secret, std::vector<CacheKey>* missing,
                                             std::vector<CacheKey>& not_vouched) {
    std::vector<CacheArtefact::Entry> entries;
    entries.reserve(keys.size());
    for (const CacheKey& key : keys) {
        std::string trust;
        if (std::optional<ObjectCode> code = source.get_with_trust(key, trust)) {
            if (may_sign(trust, secret)) entries.emplace_back(key, std::move(*code));
            else not_vouched.push_back(key);
        } else if (missing != nullptr) {
            missing->push_back(key);
        }
    }
    return entries;
}

// The artefact of `source`'s entries that `options` picks, and what was missing.
CacheArtefact artefact_of(ProgramCache& source, const CacheArtefactExportOptions& options,
                          CacheArtefactExport& result) {
    if (options.keys) return {entries_of(source, *options.keys, options.secret, &result.missing, result.not_vouched),
                              CacheArtefact::current_origin()};
    std::optional<std::vector<CacheKey>> listed = source.entry_keys();
    if (!listed) {
        throw InvalidArgumentError(
            "export_cache_artefact: this cache cannot list its entries (a remote cache); give the "
            "keys to export (CacheArtefactExportOptions::keys)");
    }
    // Listed entries gone before they were read (evicted meanwhile) are simply not exported.
    return {entries_of(source, *listed, options.secret, nullptr, result.not_vouched),
            CacheArtefact::current_origin()};
}

std::string exported_bytes(ProgramCache& source, const CacheArtefactExportOptions& options,
                           CacheArtefactExport& result) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "export_cache_artefact");
    const CacheArtefact artefact = artefact_of(source, options, result);
    std::string bytes = artefact.serialize(options.secret);
    result.entries = artefact.entries().size();
    result.bytes = bytes.size();
    return bytes;
}

// Why entries made with `origin` would not be found by this process's keys, or "".
std::string version_mismatch(const CacheArtefactOrigin& origin) {
    const CacheArtefactOrigin here = CacheArtefact::current_origin();
    if (origin.nvrtc_version == here.nvrtc_version &&
        origin.nvjitlink_version == here.nvjitlink_version)
        return {};
    return "its entries were made with NVRTC " + origin.nvrtc_version + " and nvJitLink " +
           origin.nvjitlink_version + " (cudacore " + origin.cudacore_version +
           "); this process loads NVRTC " + here.nvrtc_version + " and nvJitLink " +
           here.nvjitlink_version + ", whose keys would never find them: refused (set "
           "accept_other_compiler_versions to import them for a process that loads those)";
}

// Stores the entries of `artefact` that are markers leading to code (`lists`) or code (not
// `lists`) with the trust they came with (`trust`), skipping those `destination` holds already
// byte for byte under that trust or as compiled here, all in one put_many_with_trust; where that
// fails, one by one, so that each failure is named and the rest stored.
void store(ProgramCache& destination, const CacheArtefact& artefact, bool lists,
           const std::string& trust, CacheArtefactImport& result) {
    std::vector<CacheArtefact::Entry> wanted;
    for (const auto& entry : artefact.entries()) {
        if (detail::leads_to_other_entry(entry.second) != lists) continue;
        try {
            std::string held_trust;
            const std::optional<ObjectCode> held = destination.get_with_trust(entry.first, held_trust);
            if (held && *held == entry.second && (held_trust.empty() || held_trust == trust)) {
                ++result.skipped;
                continue;
            }
        } catch (const CacheError&) {
            // Unreadable: stored again below.
        }
        wanted.push_back(entry);
    }
    try {
        destination.put_many_with_trust(wanted, trust);
        result.imported += wanted.size();
        return;
    } catch (const CacheError&) {
        // Named entry by entry below.
    }
    for (const auto& entry : wanted) {
        try {
            destination.put_many_with_trust({entry}, trust);
            ++result.imported;
        } catch (const CacheError& e) {
            result.failed.push_back(e.what());
        }
    }
}

// Refuses an unsigned artefact (read without a secret) for a destination that authenticates its
// entries with one, unless the caller accepts it.
void check_trust(const ProgramCache& destination, const CacheArtefactImportOptions& options,
                 const std::string& what) {
    if (!options.secret.empty() || options.accept_unsigned) return;
    const std::string trust = destination.entry_trust();
    if (!detail::trust_holds_secret(trust)) return;
    throw SerializationError("import_cache_artefact" + what + ": the artefact is unsigned (read "
                             "without a secret), and the cache authenticates its entries with a "
                             "secret (" + trust + "): refused, since the cache would seal entries "
                             "nobody signed (give the secret the artefact was signed with, or set "
                             "accept_unsigned)");
}

CacheArtefactImport import_checked(ProgramCache& destination, const CacheArtefact& artefact,
                                   const CacheArtefactImportOptions& options, const std::string& what) {
    CacheArtefactImport result;
    result.origin = artefact.origin();
    if (!options.accept_other_compiler_versions) {
        if (const std::string why = version_mismatch(result.origin); !why.empty())
            throw SerializationError("import_cache_artefact" + what + ": " + why);
    }
    // Stored with the trust it came with: served where that trust is (ProgramCache::
    // put_many_with_trust). Code first, then the markers that lead to it: a reader
    // meanwhile finds a complete entry or none.
    const std::string trust = options.secret.empty() ? std::string(detail::unsigned_artefact_trust)
                                                     : detail::entry_trust(options.secret);
    for (const bool lists : {false, true}) store(destination, artefact, lists, trust, result);
    return result;
}

// Imports the artefact `read` gives (from bytes or a file), its refusals named for `what`.
template <class Read>
CacheArtefactImport import_read(ProgramCache& destination, const CacheArtefactImportOptions& options,
                                const std::string& what, const Read& read) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "import_cache_artefact");
    check_trust(destination, options, what);
    std::optional<CacheArtefact> artefact;
    try {
        artefact.emplace(read());
    } catch (const SerializationError& e) {
        throw SerializationError("import_cache_artefact" + what + ": " + e.what());
    }
    return import_checked(destination, *artefact, options, what);
}

// The size the artefact whose first bytes are `head` states (of an input of `size` bytes), which
// is read whole before it is decompressed: refused where it could not decompress within
// `max_memory` (zstd never writes more than its bound).
std::uint64_t stated_within(std::string_view head, std::uint64_t size, std::uint64_t max_memory) {
    const std::uint64_t stated = CacheArtefact::stated_size(head, size);
    if (stated > ZSTD_compressBound(max_memory) + CacheArtefact::header_size + 2 * detail::sha256_seal_size)
        throw SerializationError("it states " + std::to_string(stated) + " bytes, more than entries within "
                                 "the memory limit of " + std::to_string(max_memory) + " bytes can take");
    return stated;
}

}  // namespace

std::vector<CacheKey> cached_entry_keys(const Program& program, CodeType target,
                                        const std::vector<std::string>& name_expressions,
                                        const CompileOptions& options) {
    if (options.cache == nullptr) {
        throw InvalidArgumentError("cached_entry_keys: CompileOptions::cache is null for program '" +
                                   program.options().name + "' (it only looks in a cache)");
    }
    const CacheKey source_key = cache_key(program, target, name_expressions);
    const std::optional<detail::CachedEntry> entry =
        detail::find_cached_entry(*options.cache, program, target, source_key, options);
    if (!entry) return {};
    if (entry->marker_key) return {*entry->marker_key, entry->code_key};
    return {entry->code_key};
}

CacheArtefactExport export_cache_artefact(std::ostream& destination, ProgramCache& source,
                                          const CacheArtefactExportOptions& options) {
    CacheArtefactExport result;
    const std::string bytes = exported_bytes(source, options, result);
    destination.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    destination.flush();
    if (!destination) {
        throw SerializationError("export_cache_artefact: writing " + std::to_string(bytes.size()) +
                                 " bytes to the stream failed");
    }
    return result;
}

CacheArtefactExport export_cache_artefact(const std::filesystem::path& destination,
                                          ProgramCache& source,
                                          const CacheArtefactExportOptions& options) {
    CacheArtefactExport result;
    const std::string bytes = exported_bytes(source, options, result);
    detail::save_serialized(destination, bytes,
                            "export_cache_artefact to '" + destination.string() + "' (" +
                                std::to_string(bytes.size()) + " bytes)");
    return result;
}

CacheArtefactImport import_cache_artefact(ProgramCache& destination, std::istream& source,
                                          const CacheArtefactImportOptions& options) {
    // The header first: a stream that holds no artefact is refused from it, and the rest is read
    // a piece at a time, never past the size it states (and one byte more, to see trailing data).
    return import_read(destination, options, "", [&] {
        std::string bytes(CacheArtefact::header_size, '\0');
        source.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        bytes.resize(static_cast<std::size_t>(source.gcount()));
        const std::uint64_t stated = stated_within(bytes, bytes.size(), options.max_memory);
        char piece[65536];
        while (bytes.size() <= stated &&
               (source.read(piece, static_cast<std::streamsize>(std::min<std::uint64_t>(sizeof piece, stated + 1 - bytes.size()))) ||
                source.gcount() > 0))
            bytes.append(piece, static_cast<std::size_t>(source.gcount()));
        if (source.bad()) throw SerializationError("reading the stream failed");
        return CacheArtefact::deserialize(bytes, options.secret, options.max_memory);
    });
}

CacheArtefactImport import_cache_artefact(ProgramCache& destination, const CacheArtefact& artefact,
                                          const CacheArtefactImportOptions& options) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "import_cache_artefact");
    check_trust(destination, options, "");
    return import_checked(destination, artefact, options, "");
}

CacheArtefact CacheArtefact::read_file(const std::filesystem::path& path, std::string_view secret,
                                       std::uint64_t max_memory) {
    std::string bytes;
    try {
        bytes = detail::read_serialized(path, header_size, [&](std::string_view head, std::uint64_t size) {
            return stated_within(head, size, max_memory);
        });
    } catch (const SerializationError& e) {
        throw SerializationError(std::string("CacheArtefact::read_file: ") + e.what());
    }
    return deserialize(bytes, secret, max_memory);
}

CacheArtefactImport import_cache_artefact(ProgramCache& destination,
                                          const std::filesystem::path& source,
                                          const CacheArtefactImportOptions& options) {
    return import_read(destination, options, " '" + source.string() + "'",
                       [&] { return CacheArtefact::read_file(source, options.secret, options.max_memory); });
}

}  // namespace cudacore
