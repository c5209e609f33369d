/// @file
/// HeaderBundle: headers carried in memory (include names and contents), so that a program
/// compiles where no CUDA toolkit is installed. ProgramOptions::header_bundles hands them to
/// NVRTC (nvrtcCreateProgram's headers), which then reads no header file for them.
///
/// A bundle is an immutable value: copies are cheap and share the headers; every member is safe
/// to call from many threads at once. It is made from (name, content) pairs, from entry headers
/// and the include folders they are found in (with every header they include, transitively), or
/// from the headers a compile read (Program::compile with headers_read). It is saved as one file
/// (serialize() / save(), format below) and read back with deserialize() / load(), which check
/// every byte and never trust a length: bad input is a SerializationError, never a crash.
///
/// Names are matched as NVRTC matches them: exactly as the \#include operand is written
/// (`#include <cuda/std/cmath>` asks for "cuda/std/cmath"). NVRTC does not resolve a quoted
/// include of an in-memory header against that header's own folder, so a bundle made from
/// folders rewrites such includes (`#include "info.h"` in cooperative_groups/details/async.h
/// becomes `#include "cooperative_groups/details/info.h"`), and so does from_headers() for the
/// headers it is given; nothing else in a header changes.
///
/// The file format is in docs/deployment.md ("The bundle file").
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// One header of a bundle: the name an \#include asks for, and the bytes it reads.
struct BundledHeader {
    std::string name{};     ///< the include name: "cuda/std/cmath", "my/api.h"
    std::string content{};  ///< the header's bytes
    /// Equal when both fields are.
    bool operator==(const BundledHeader&) const = default;
};

/// How the preprocessor runs when a bundle is made from entry headers
/// (HeaderBundle::from_include_folders): macros, dialect and targets decide which \#if branches,
/// and so which headers, a compile reads. Meant for designated initializers.
struct HeaderBundleOptions {
    /// Macros to define, "NAME" or "NAME=VALUE" (NVRTC's --define-macro).
    std::vector<std::string> defines = {};
    /// The C++ dialect ("c++17", "c++20"); empty: NVRTC's default.
    std::string std = {};
    /// Targets ("sm_90", "compute_80"): the bundle holds what a compile for any of them reads.
    /// Empty: NVRTC's default target.
    std::vector<std::string> archs = {};
    /// Take headers that lie outside every include folder (named by their absolute paths)
    /// instead of refusing them.
    bool allow_outside_folders = false;
};

/// Headers in memory, by include name. See the top of this file.
class HeaderBundle {
public:
    /// The file format this build writes and the newest it reads.
    static constexpr std::uint32_t format_version = 1;
    /// The most header bytes (names and contents, uncompressed) a bundle may hold: 1 GiB. Input
    /// that claims more is refused before anything is allocated for it.
    static constexpr std::uint64_t max_payload_size = std::uint64_t{1} << 30;

    /// An empty bundle named "empty" (no headers).
    HeaderBundle();

    /// A bundle of `headers`, named `name` (used in messages), with C's rule for quoted includes
    /// (as jitify applies it): a quoted \#include or __has_include in a header below a folder
    /// ("dir/x.h") whose operand names a header of `headers` relative to that folder
    /// (`#include "y.h"` where "dir/y.h" is given; "../y.h" where "y.h" is) is rewritten to that
    /// full name ("dir/y.h"), since NVRTC matches in-memory headers by the operand's text only;
    /// other operands (angle ones, those with no header beside their includer, \#include_next)
    /// and every other byte stay as given, so the headers() returned may differ from `headers` in
    /// those operands only. Read from memory or from the bundle's folder, such an include finds
    /// the header beside its includer, as the preprocessor does on disk. Throws
    /// InvalidArgumentError when a header name is empty, holds a NUL byte, or appears twice,
    /// and when the headers exceed max_payload_size.
    static HeaderBundle from_headers(std::vector<BundledHeader> headers, std::string name);

    /// The headers `entry_headers` need, exactly as the preprocessor finds them: NVRTC's front end
    /// runs over a source that includes each entry ("cuda/std/cmath", "<cuda/std/cmath>" or
    /// "\"my.h\"", looked for in `include_folders` in order) with `options`' macros, dialect and
    /// each of its targets, and the bundle holds every header file it opened (the union over the
    /// targets), nothing else: an \#include under a false \#if, or one whose header is never
    /// reached, brings nothing in. Headers are named as the preprocessor asks for them (see
    /// from_headers_read); a header outside every include folder (an absolute \#include, a
    /// `<../x.h>` that climbs out) is refused, each named, unless
    /// options.allow_outside_folders. The entries must parse as the first lines of a source
    /// (NVRTC's front end runs, with -default-device). Needs NVRTC. Throws InvalidArgumentError when an entry is
    /// found in no folder (a symbolic link loop or a dangling link is named as such), when two
    /// files would take the same include name, or when headers lie outside the folders;
    /// CompileError (with NVRTC's log) when the preprocessor fails (an \#error, a missing header);
    /// SerializationError naming the file when a header cannot be read; LoaderError when NVRTC
    /// cannot be loaded. Thread-safe.
    static HeaderBundle from_include_folders(const std::vector<std::string>& entry_headers,
                                             const std::vector<std::filesystem::path>& include_folders,
                                             std::string name,
                                             const HeaderBundleOptions& options = {});

    /// The headers a compile read, as Program::compile(target, names, headers_read) lists them
    /// (absolute paths, what the preprocessor opened): the bundle holds exactly these files, so
    /// that it compiles that program. Each is named by its path below the folder of
    /// `include_folders` that holds it most deeply (the shortest name: with the toolkit's include/
    /// and $CUDA_HOME/include/cccl, "cuda/std/cmath"), and by the names the \#include directives of the
    /// other headers ask for it by; a header that no other includes (the source includes it, by a
    /// name the list cannot tell) is also named below each other folder that holds it, unless a
    /// folder searched before that one has a file of that name ("example_headers/my.cuh" below
    /// the source's folder and "my.cuh" below an -I folder example_headers/). A quoted include of
    /// a header found beside its includer is rewritten to the name it has below the includer's
    /// folder (see the top of this file). Pass the folders the compile searched, in its order:
    /// the main source's folder (for its quoted includes) and each -I folder, the toolkit's last
    /// (toolkit_include_dirs()).
    /// A header in none of the folders is refused, each named, unless `allow_outside_folders`
    /// (then it is named by its absolute path). Throws InvalidArgumentError for headers outside
    /// the folders or two files for one include name, SerializationError naming the file when a
    /// header cannot be read. Reads files only: thread-safe.
    static HeaderBundle from_headers_read(const std::vector<std::string>& headers_read,
                                          const std::vector<std::filesystem::path>& include_folders,
                                          std::string name, bool allow_outside_folders = false);

    /// Reads a bundle written by serialize(). Throws SerializationError, saying what is wrong,
    /// for bytes that are not a bundle (magic), a newer format version, a checksum mismatch,
    /// truncated or trailing bytes, a payload that does not decompress to its stated size or
    /// exceeds max_payload_size, and headers out of order, duplicated or unnamed.
    static HeaderBundle deserialize(std::string_view bytes);
    /// Reads and deserializes the file at `path`. Throws SerializationError naming the path
    /// (cannot be read, not a regular file, larger than a bundle can be, or what deserialize()
    /// throws).
    static HeaderBundle load(const std::filesystem::path& path);

    /// The file form (docs/deployment.md, "The bundle file"), compressed with zstd. Throws
    /// SerializationError when zstd fails.
    std::string serialize() const;
    /// Writes serialize() to `path`, atomically (a new file renamed over the old one). Throws
    /// SerializationError naming the path when it cannot be written.
    void save(const std::filesystem::path& path) const;

    /// The name given when the bundle was made (for messages; not in digest()).
    const std::string& name() const noexcept;
    /// The headers, in increasing name order.
    const std::vector<BundledHeader>& headers() const noexcept;
    /// The number of headers.
    std::size_t size() const noexcept;
    /// Whether there is no header.
    bool empty() const noexcept;
    /// The content of the header named `include_name`, or null when the bundle has none. The
    /// pointer lives as long as any copy of this bundle.
    const std::string* find(std::string_view include_name) const noexcept;
    /// The bytes of every header's name and content.
    std::uint64_t content_size() const noexcept;
    /// SHA-256 (64 hex digits) of the headers' names and contents, in name order: two bundles
    /// with the same digest hold the same headers. The bundle's name is not part of it. The
    /// program cache keys a compile by the digest of each bundle it uses.
    const std::string& digest() const noexcept;
    /// "'name' (N headers, digest 0123456789ab)", for messages.
    std::string describe() const;

    /// The folder this bundle's headers are written out to, so that compiles read them from
    /// files and NVRTC's automatic precompiled headers work (Program::compile does this itself
    /// for ProgramOptions::header_bundles; call this to prepare the folder ahead, or to see it):
    /// `<cache folder>/header-bundles/<digest()>`, the cache folder being
    /// default_cache_directory()'s. Made once, whole, and shared by every process of the user
    /// (under a lock file beside it; concurrent makers wait 60 s at most); checked at every call,
    /// and made again when the check fails; never changed once in place; outside the program
    /// cache's size bound. With CUDACORE_DISABLE_CACHE set it is a folder of this process's own
    /// in the temporary directory. The path is not held: remove_folders() may remove it later.
    /// docs/deployment.md, "The bundle's folder, for precompiled headers", is the whole
    /// contract (checks, locks, shadowing, line information, what happens when it fails).
    /// Throws CacheError naming the bundle, the folder and why when it cannot be had (no cache
    /// folder in the environment; a folder that cannot be made or written, or is another user's
    /// or writable by others; header names that are no plain relative paths; a quoted include a
    /// folder would resolve otherwise than memory; a lock held too long); after a failure, calls
    /// in this process throw the same error at once for a minute. Thread-safe.
    std::filesystem::path folder() const;

    /// What remove_folders() did.
    struct FolderRemoval {
        std::uint64_t removed = 0;                   ///< bundle folders removed
        std::vector<std::filesystem::path> in_use{};  ///< folders left: a compile was reading them
        /// Damage repaired ("'<lock file>' was a directory: replaced").
        std::vector<std::string> repaired{};
        /// What could not be removed, naming the path, the failing call and the error.
        std::vector<std::string> left{};
    };
    /// Removes the bundle folders of `cache_folder` (`<cache_folder>/header-bundles/`): every
    /// folder no compile is reading, its lock file, and what makers killed halfway left. A folder
    /// a compile reads (in any process) is left and named in `in_use`; damaged lock files are
    /// replaced and named in `repaired`; what cannot be removed is named in `left` and the
    /// removal goes on (docs/deployment.md, "Removing them"). No such folder: nothing removed.
    /// Throws CacheError naming the call and the folder when it cannot be opened or listed, or is
    /// another user's. Thread-safe.
    static FolderRemoval remove_folders(const std::filesystem::path& cache_folder);

    /// Equal when the names and digests are.
    bool operator==(const HeaderBundle& other) const noexcept;

private:
    struct State;
    explicit HeaderBundle(std::shared_ptr<const State> state);
    /// from_headers() without the rule for quoted includes: the headers exactly as given (those
    /// read back, or named as the preprocessor found them).
    static HeaderBundle exactly(std::vector<BundledHeader> headers, std::string name);
    std::shared_ptr<const State> state_;
};

}  // namespace cudacore
