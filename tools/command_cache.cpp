// `cudacore cache stats|clear|prune --max-bytes N`: look after the program cache on disk, in its
// shard folders; clear also removes the header bundle folders kept beside them. stats reads the per-shard counters
// (fast at millions of entries; a read-only cache is counted without repairing them); prune
// recounts every shard and repairs damaged bookkeeping, naming what it repaired or skipped. With --remote URL (or
// $CUDACORE_REMOTE_CACHE), stats and clear also count and clear the Redis cache's entries.
// `cache export FILE [--keys MANIFEST]` writes the disk cache's entries (all, or a manifest's)
// as one artefact, `cache import FILE` loads one into the disk cache; both sign and check with
// --secret-file / --secret-env, else with the remote cache's secret when one is set. Every file
// they read goes through read_input_file (file_io.hpp): a regular file of bounded size, never a
// blocking open.
#include "commands.hpp"
#include "file_io.hpp"
#include "remote_option.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"

#include "cache/seal_secret.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace cudacore::cli {

namespace {

struct CacheArgs {
    std::string directory;  // empty: the default location
    std::uint64_t max_bytes = 0;
    RemoteArguments remote;  // a Redis cache (else $CUDACORE_REMOTE_CACHE)
    std::string artefact;          // export: the file written; import: the file read
    std::string manifest;          // export: the keys to export (else every entry)
    std::string secret_file;       // the artefact's secret (else the remote cache's)
    std::string secret_env;
    bool accept_other_versions = false;
};

std::filesystem::path cache_directory(const CacheArgs& args) {
    return args.directory.empty() ? default_cache_directory() : std::filesystem::path(args.directory);
}

// The cache, or nullptr when its directory does not exist: looking after a cache never creates
// one (only a compile does), and refuses a folder that is not one (no cudacore marker).
std::unique_ptr<DiskProgramCache> open_existing_cache(const std::filesystem::path& directory) {
    return DiskProgramCache::open_existing(directory);
}

void print_stats(const CacheArgs& args) {
    const std::filesystem::path directory = cache_directory(args);
    const std::unique_ptr<DiskProgramCache> cache = open_existing_cache(directory);
    const CacheStats stats = cache ? cache->stats() : CacheStats{};
    std::error_code error;
    const char* absent = std::filesystem::exists(directory, error) ? " (no program cache yet)" : " (does not exist yet)";
    std::printf("directory  %s%s\n", directory.c_str(), cache ? "" : absent);
    std::printf("entries    %llu\n", static_cast<unsigned long long>(stats.entries));
    std::printf("bytes      %llu\n", static_cast<unsigned long long>(stats.bytes));
    if (stats.temporary_files > 0) {
        std::printf("temporary  %llu files (being written, or left by killed writers)\n",
                    static_cast<unsigned long long>(stats.temporary_files));
    }
    std::printf("max bytes  %llu (evicted least recently used first)\n",
                static_cast<unsigned long long>(cache ? stats.max_bytes
                                                      : DiskProgramCache::default_max_bytes));
    if (cache_disabled_by_environment()) std::printf("disabled   yes (CUDACORE_DISABLE_CACHE)\n");
    if (const auto remote = open_remote_cache(args.remote)) {
        std::printf("remote     %s, prefix %s\n", remote->url.c_str(), remote->key_prefix.c_str());
        std::fflush(stdout);
        std::printf("remote entries %llu\n",
                    static_cast<unsigned long long>(remote->server_entries()));
    }
}

// `cache clear`: every entry of the disk cache and every header bundle folder no compile is
// reading, and the remote cache's entries with --remote. The bundle folders go first, and even
// where no program cache exists yet (a compile with bundles makes them without one). Damage
// repaired is named; what cannot be removed is named and passed over, the rest removed, and then
// the command fails naming it.
void clear_caches(const CacheArgs& args) {
    const std::filesystem::path directory = cache_directory(args);
    // Opened first: a folder that is no cache is refused before anything in it is removed.
    const std::unique_ptr<DiskProgramCache> cache = open_existing_cache(directory);
    std::vector<std::string> left;
    try {
        const HeaderBundle::FolderRemoval folders = HeaderBundle::remove_folders(directory);
        if (folders.removed > 0 || !folders.in_use.empty()) {
            std::printf("removed %llu header bundle folders from %s\n",
                        static_cast<unsigned long long>(folders.removed),
                        (directory / "header-bundles").c_str());
        }
        for (const std::filesystem::path& in_use : folders.in_use)
            std::printf("left %s: a compile is reading it\n", in_use.c_str());
        for (const std::string& line : folders.repaired)
            std::fprintf(stderr, "cudacore: repaired: %s\n", line.c_str());
        // Named again by the program cache's clear below, when there is one.
        if (!cache) left.insert(left.end(), folders.left.begin(), folders.left.end());
    } catch (const CacheError& e) {
        left.push_back(e.what());
    }
    if (!cache) {
        std::printf("no cache at %s: nothing to remove\n", directory.c_str());
    } else {
        const std::uint64_t entries = cache->stats().entries;
        try {
            cache->clear();
            std::printf("removed %llu entries from %s\n", static_cast<unsigned long long>(entries),
                        cache->directory().c_str());
        } catch (const CacheError& e) {
            left.push_back(e.what());
        }
    }
    if (const auto remote = open_remote_cache(args.remote)) {
        const std::uint64_t entries = remote->server_entries();
        remote->tier->clear();
        std::printf("removed %llu entries from %s (prefix %s)\n",
                    static_cast<unsigned long long>(entries), remote->url.c_str(),
                    remote->key_prefix.c_str());
    }
    if (left.empty()) return;
    std::string message = "cache clear could not remove everything:";
    for (const std::string& line : left) message += "\n" + line;
    throw CacheError(message);
}

// `cache prune`: least recently used entries of the disk cache until it holds at most
// --max-bytes.
void prune_cache(const CacheArgs& args) {
    const std::filesystem::path directory = cache_directory(args);
    const std::unique_ptr<DiskProgramCache> cache = open_existing_cache(directory);
    if (!cache) {
        std::printf("no cache at %s: nothing to remove\n", directory.c_str());
        return;
    }
    // Damage to the cache's own bookkeeping is repaired and named; what cannot be is
    // skipped and named, and the prune goes on: the cache stays usable.
    const DiskProgramCache::PruneReport report = cache->prune_and_repair(args.max_bytes);
    for (const std::string& line : report.repaired)
        std::fprintf(stderr, "cudacore: repaired: %s\n", line.c_str());
    for (const std::string& line : report.skipped)
        std::fprintf(stderr, "cudacore: warning: %s\n", line.c_str());
    const CacheStats stats = cache->stats();
    std::printf("removed %llu entries; %llu entries, %llu bytes remain\n",
                static_cast<unsigned long long>(report.removed),
                static_cast<unsigned long long>(stats.entries),
                static_cast<unsigned long long>(stats.bytes));
}

// The artefact's secret: --secret-file / --secret-env, else the remote cache's (--remote-secret-*,
// or the URL's of --remote or $CUDACORE_REMOTE_CACHE), else none.
std::string artefact_secret(const CacheArgs& args) {
    if (args.secret_file.empty() && args.secret_env.empty()) return remote_cache_secret(args.remote);
    return detail::read_seal_secret({.owner = "the artefact's secret",
                                     .file = args.secret_file,
                                     .file_option = "--secret-file",
                                     .env = args.secret_env,
                                     .env_option = "--secret-env"});
}

// A manifest of a million keys is 65 MB.
constexpr std::uint64_t largest_manifest = std::uint64_t{256} << 20;
// The keys of a manifest: one key (64 hex digits) a line; blank lines and lines beginning with
// '#' are skipped.
std::vector<CacheKey> read_manifest(const std::string& path) {
    std::istringstream in(read_input_file(path, "the manifest", largest_manifest));
    std::vector<CacheKey> keys;
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty() || line.front() == '#') continue;
        try {
            keys.push_back(CacheKey::from_hex(line));
        } catch (const InvalidArgumentError& e) {
            throw InvalidArgumentError("cache export: the manifest '" + path + "', line " +
                                       std::to_string(number) + ": " + e.what());
        }
    }
    return keys;
}

// `cache export FILE`: the disk cache's entries, or those the manifest names, as one artefact.
void export_cache(const CacheArgs& args) {
    const std::filesystem::path directory = cache_directory(args);
    const std::unique_ptr<DiskProgramCache> cache = open_existing_cache(directory);
    if (!cache) throw CacheError("cache export: no program cache at " + directory.string());
    CacheArtefactExportOptions options;
    if (!args.manifest.empty()) options.keys = read_manifest(args.manifest);
    options.secret = artefact_secret(args);
    const CacheArtefactExport exported = export_cache_artefact(args.artefact, *cache, options);
    for (const CacheKey& key : exported.missing)
        std::fprintf(stderr, "cudacore: warning: %s is not in the cache: not exported\n", key.hex().c_str());
    for (const CacheKey& key : exported.not_vouched)
        std::fprintf(stderr,
                     "cudacore: warning: %s arrived with another trust (an unsigned artefact, another "
                     "secret) than the secret signs: not exported\n",
                     key.hex().c_str());
    std::printf("exported %llu entries (%llu bytes%s) to %s\n",
                static_cast<unsigned long long>(exported.entries),
                static_cast<unsigned long long>(exported.bytes),
                options.secret.empty() ? "" : ", signed", args.artefact.c_str());
    if (!exported.missing.empty())
        throw CacheError("cache export: " + std::to_string(exported.missing.size()) +
                         " keys of the manifest are not in the cache");
    if (!args.manifest.empty() && !exported.not_vouched.empty())
        throw CacheError("cache export: " + std::to_string(exported.not_vouched.size()) +
                         " keys of the manifest arrived with another trust than the secret signs");
}

// The artefact `args` names, read and checked (its secret, damage, cost, versions) before
// anything is made on disk.
CacheArtefact read_artefact(const CacheArgs& args, const CacheArtefactImportOptions& options) {
    // Read only as far as its checked header says it reaches (CacheArtefact::read_file).
    check_input_file(args.artefact, "the artefact");
    std::optional<CacheArtefact> artefact;
    try {
        artefact.emplace(CacheArtefact::read_file(args.artefact, options.secret, options.max_memory));
    } catch (const SerializationError& e) {
        throw SerializationError("cache import '" + args.artefact + "': " + e.what());
    }
    const CacheArtefactOrigin here = CacheArtefact::current_origin();
    const CacheArtefactOrigin& made = artefact->origin();
    if (!options.accept_other_compiler_versions &&
        (made.nvrtc_version != here.nvrtc_version || made.nvjitlink_version != here.nvjitlink_version)) {
        throw SerializationError("cache import '" + args.artefact + "': its entries were made with NVRTC " +
                                 made.nvrtc_version + " and nvJitLink " + made.nvjitlink_version +
                                 "; this process loads NVRTC " + here.nvrtc_version + " and nvJitLink " +
                                 here.nvjitlink_version + ", whose keys would never find them: refused "
                                 "(--accept-other-compiler-versions imports them for a process that loads those)");
    }
    return std::move(*artefact);
}

// The folders from `directory` up to the first that exists: what making it would create.
std::vector<std::filesystem::path> missing_folders(const std::filesystem::path& directory) {
    std::vector<std::filesystem::path> missing;
    struct stat info {};
    for (std::filesystem::path at = std::filesystem::absolute(directory).lexically_normal();
         !at.empty() && at != at.parent_path() && ::lstat(at.c_str(), &info) != 0 && errno == ENOENT;
         at = at.parent_path()) {
        missing.push_back(at);
    }
    return missing;
}

// `cache import FILE`: the artefact's entries into the disk cache (made when absent). An
// artefact or a folder refused leaves nothing made.
void import_cache(const CacheArgs& args) {
    CacheArtefactImportOptions options;
    options.secret = artefact_secret(args);
    options.accept_other_compiler_versions = args.accept_other_versions;
    const CacheArtefact artefact = read_artefact(args, options);
    const std::vector<std::filesystem::path> made = missing_folders(cache_directory(args));
    std::unique_ptr<DiskProgramCache> cache;
    try {
        cache = std::make_unique<DiskProgramCache>(cache_directory(args));
    } catch (const CacheError&) {
        // Refused (another user's, or reachable by others): the folders made for it go again,
        // deepest first; a folder someone filled meanwhile stays.
        for (const std::filesystem::path& folder : made) ::rmdir(folder.c_str());
        throw;
    }
    const CacheArtefactImport imported = import_cache_artefact(*cache, artefact, options);
    std::printf("imported %llu entries, %llu already there, into %s (made with NVRTC %s, "
                "nvJitLink %s; %s)\n",
                static_cast<unsigned long long>(imported.imported),
                static_cast<unsigned long long>(imported.skipped), cache->directory().c_str(),
                imported.origin.nvrtc_version.c_str(), imported.origin.nvjitlink_version.c_str(),
                options.secret.empty() ? "unsigned: nobody vouches for its code" : "signature checked");
    if (imported.failed.empty()) return;
    std::string message = "cache import could not store " + std::to_string(imported.failed.size()) +
                          " entries:";
    for (const std::string& line : imported.failed) message += "\n" + line;
    throw CacheError(message);
}

void add_secret_options(CLI::App& command, CacheArgs& args) {
    auto* file = command.add_option("--secret-file", args.secret_file,
                                    "The artefact's secret (HMAC-SHA-256), read from this file "
                                    "(default: the remote cache's secret, when one is set)");
    auto* env = command.add_option("--secret-env", args.secret_env,
                                   "As --secret-file, read from this environment variable");
    file->excludes(env);
}

void add_artefact_commands(CLI::App& command, const std::shared_ptr<CacheArgs>& args) {
    auto* exporter = command.add_subcommand(
        "export", "Write the cache's entries (or a manifest's) to one artefact file");
    exporter->fallthrough();
    exporter->add_option("artefact", args->artefact, "The artefact file to write")->required();
    exporter->add_option("--keys", args->manifest,
                         "A manifest: the keys to export, one (64 hex digits) a line, as "
                         "`cudacore compile --manifest` appends them; '#' starts a comment");
    add_secret_options(*exporter, *args);
    exporter->callback([args] { export_cache(*args); });
    auto* importer = command.add_subcommand(
        "import", "Load an artefact's entries into the cache, refusing a damaged or foreign one");
    importer->fallthrough();
    importer->add_option("artefact", args->artefact, "The artefact file to read")->required();
    importer->add_flag("--accept-other-compiler-versions", args->accept_other_versions,
                       "Import entries made with other NVRTC / nvJitLink versions than this "
                       "process loads (for a cache filled for another process)");
    add_secret_options(*importer, *args);
    importer->callback([args] { import_cache(*args); });
}

}  // namespace

void add_cache_command(CLI::App& app) {
    auto* command = app.add_subcommand("cache", "Show, clear, prune, export or import the program cache on disk (and a Redis one with --remote)");
    command->require_subcommand(1);
    auto args = std::make_shared<CacheArgs>();
    command->add_option("--dir", args->directory,
                        "Cache directory (default: $CUDACORE_CACHE_DIR, else "
                        "$XDG_CACHE_HOME/cudacore, else ~/.cache/cudacore)");
    add_remote_option(*command, args->remote);

    // Subcommands fall through to `cache`'s options: `cache stats --dir D` and
    // `cache --dir D stats` both work.
    command->add_subcommand("stats", "Where the cache is, how many entries and bytes it holds")
        ->fallthrough()
        ->callback([args] { print_stats(*args); });
    command->add_subcommand("clear", "Remove every entry, and every header bundle folder not in use")->fallthrough()->callback([args] { clear_caches(*args); });
    auto* prune = command->add_subcommand(
        "prune", "Remove least recently used entries until the cache holds at most --max-bytes");
    // Checked as text first: a negative number would otherwise wrap to a huge unsigned one.
    prune->fallthrough();
    prune->add_option("--max-bytes", args->max_bytes, "The size to shrink the cache to")
        ->required()
        ->check(CLI::Validator(
            [](const std::string& text) -> std::string {
                if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
                    return "must be a number of bytes, 0 or more (got '" + text + "')";
                return {};
            },
            "BYTES"));
    prune->callback([args] { prune_cache(*args); });
    add_artefact_commands(*command, args);
}

}  // namespace cudacore::cli
