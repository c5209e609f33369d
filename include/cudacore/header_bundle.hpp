/// @file
/// HeaderBundle: headers carried in memory (include names and contents), so that a program
/// compiles where no CUDA toolkit is installed (ProgramOptions::header_bundles). Made from
/// (name, content) pairs, from entry headers and include folders, or from the headers a compile
/// read; saved as one file and read back with every byte checked (bad input is a
/// SerializationError). Names are the \#include operands as NVRTC matches them; quoted includes
/// are rewritten to full names (docs/design/header-bundles.md). An immutable value: copies share
/// the headers, and every member is safe to call from many threads. File format and folders:
/// docs/deployment.md.
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

    /// A bundle of `headers`, named `name` (in messages). Quoted includes of a header beside its
    /// includer are rewritten to the full name (docs/design/header-bundles.md); nothing else
    /// changes. Throws InvalidArgumentError when a name is empty, holds a NUL byte or appears
    /// twice, and when the headers exceed max_payload_size.
    static HeaderBundle from_headers(std::vector<BundledHeader> headers, std::string name);

    /// The headers `entry_headers` need, found in `include_folders` as NVRTC's preprocessor opens
    /// them for `options`. Throws InvalidArgumentError for an entry in no folder, name clashes or
    /// headers outside the folders; CompileError with NVRTC's log; SerializationError; LoaderError
    /// without NVRTC. Thread-safe.
    static HeaderBundle from_include_folders(const std::vector<std::string>& entry_headers,
                                             const std::vector<std::filesystem::path>& include_folders,
                                             std::string name,
                                             const HeaderBundleOptions& options = {});

    /// Exactly the headers a compile read (Program::compile's headers_read), named below the
    /// `include_folders` the compile searched, in its order (docs/design/header-bundles.md says
    /// how). Throws InvalidArgumentError for headers outside the folders (unless
    /// `allow_outside_folders`) or two files for one name, SerializationError when a header
    /// cannot be read. Reads files only: thread-safe.
    static HeaderBundle from_headers_read(const std::vector<std::string>& headers_read,
                                          const std::vector<std::filesystem::path>& include_folders,
                                          std::string name, bool allow_outside_folders = false);

    /// Reads a bundle written by serialize(). Throws SerializationError saying what is wrong
    /// (magic, newer version, checksum, truncated or trailing bytes, size, header order or names).
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

    /// The folder the headers are written out to, so that NVRTC's precompiled headers work:
    /// `<cache folder>/header-bundles/<digest()>`, made once and shared by the user's processes
    /// (docs/deployment.md, "The bundle's folder, for precompiled headers"). The path is not held.
    /// Throws CacheError naming the bundle, the folder and why it cannot be had (a failure repeats
    /// at once for a minute). Thread-safe.
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
    /// Removes the bundle folders of `cache_folder` that no compile is reading, with their lock
    /// files and leftovers; those in use, repaired and left are named in the result
    /// (docs/deployment.md, "Removing them"). Throws CacheError when the folder cannot be opened,
    /// listed, or is another user's. Thread-safe.
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
