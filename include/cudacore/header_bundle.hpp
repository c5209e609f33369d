/// @file
/// HeaderBundle: headers carried in memory (include names and contents), so that a program
/// compiles where no CUDA toolkit is installed (ProgramOptions::header_bundles). Saved as one
/// file and read back with every byte checked. How names are matched and rewritten:
/// docs/design/header-bundles.md; the file format and folders: docs/deployment.md.
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
    bool operator==(const BundledHeader&) const = default;  ///< equal when both fields are
};

/// How the preprocessor runs when a bundle is made from entry headers.
struct HeaderBundleOptions {
    /// Macros to define, "NAME" or "NAME=VALUE" (NVRTC's --define-macro).
    std::vector<std::string> defines = {};
    std::string std = {};  ///< the C++ dialect ("c++17", "c++20"); empty: NVRTC's default
    /// Targets ("sm_90", "compute_80"; empty: NVRTC's default): what a compile for any reads.
    std::vector<std::string> archs = {};
    /// Take headers outside every include folder (by absolute path) instead of refusing them.
    bool allow_outside_folders = false;
};

/// Headers in memory, by include name: an immutable value; thread-safe. SerializationError for
/// bad input.
class HeaderBundle {
public:
    /// The file format this build writes and the newest it reads.
    static constexpr std::uint32_t format_version = 1;
    /// The most header bytes (names and contents, uncompressed) a bundle may hold: 1 GiB.
    static constexpr std::uint64_t max_payload_size = std::uint64_t{1} << 30;
    /// The most headers a bundle may hold: 1,048,576 (all of the toolkit's CCCL is about 4,000).
    static constexpr std::uint32_t max_headers = std::uint32_t{1} << 20;

    HeaderBundle();  ///< an empty bundle named "empty" (no headers)

    /// A bundle of `headers`, named `name` (in messages); quoted includes of a header beside its
    /// includer are rewritten to the full name. InvalidArgumentError for an empty, NUL-holding or
    /// repeated name, and beyond max_payload_size or max_headers.
    static HeaderBundle from_headers(std::vector<BundledHeader> headers, std::string name);

    /// The headers `entry_headers` need, found in `include_folders` as NVRTC opens them for
    /// `options`. InvalidArgumentError for an entry in no folder, name clashes or headers outside
    /// the folders; CompileError with NVRTC's log; LoaderError without NVRTC.
    static HeaderBundle from_include_folders(const std::vector<std::string>& entry_headers,
                                             const std::vector<std::filesystem::path>& include_folders,
                                             std::string name,
                                             const HeaderBundleOptions& options = {});

    /// Exactly the headers a compile read (Program::compile's headers_read), named below the
    /// `include_folders` it searched. InvalidArgumentError for headers outside them (unless
    /// `allow_outside_folders`) or two files for one name.
    static HeaderBundle from_headers_read(const std::vector<std::string>& headers_read,
                                          const std::vector<std::filesystem::path>& include_folders,
                                          std::string name, bool allow_outside_folders = false);

    /// Reads a bundle written by serialize().
    static HeaderBundle deserialize(std::string_view bytes);
    /// Reads and deserializes the file at `path`.
    static HeaderBundle load(const std::filesystem::path& path);

    std::string serialize() const;  ///< the file form, compressed with zstd
    /// Writes serialize() to `path` atomically.
    void save(const std::filesystem::path& path) const;

    /// The name given when the bundle was made (for messages; not in digest()).
    const std::string& name() const noexcept;
    /// The headers, in increasing name order.
    const std::vector<BundledHeader>& headers() const noexcept;
    std::size_t size() const noexcept;  ///< the number of headers
    bool empty() const noexcept;  ///< whether there is no header
    /// The content of the header named `include_name`, or null; valid while any copy lives.
    const std::string* find(std::string_view include_name) const noexcept;
    std::uint64_t content_size() const noexcept;  ///< the bytes of every header's name and content
    /// SHA-256 (64 hex digits) of the headers' names and contents: what the cache keys by.
    const std::string& digest() const noexcept;
    std::string describe() const;  ///< "'name' (N headers, digest 0123456789ab)", for messages

    /// `<cache folder>/header-bundles/<a digest of digest()>`, the headers written out once for
    /// NVRTC's precompiled headers, each file opening with `#line 1 "<its name>"` (so `__FILE__`
    /// names it as a compile from memory does); with CUDACORE_DISABLE_CACHE set, or no cache
    /// folder named by the environment, below a folder of this process's own in the temporary
    /// directory, removed at exit. CacheError naming the bundle, the folder and why.
    std::filesystem::path folder() const;

    /// What remove_folders() did.
    struct FolderRemoval {
        std::uint64_t removed = 0;                   ///< bundle folders removed
        std::vector<std::filesystem::path> in_use{};  ///< folders left: a compile was reading them
        std::vector<std::string> repaired{};          ///< damage repaired
        std::vector<std::string> left{};              ///< what could not be removed, and why
    };
    /// Removes the bundle folders of `cache_folder` that no compile is reading; CacheError when
    /// the folder cannot be listed or is another user's.
    static FolderRemoval remove_folders(const std::filesystem::path& cache_folder);

    /// Equal when the names and digests are.
    bool operator==(const HeaderBundle& other) const noexcept;

private:
    struct State;
    explicit HeaderBundle(std::shared_ptr<const State> state);
    /// from_headers() without the rule for quoted includes.
    static HeaderBundle exactly(std::vector<BundledHeader> headers, std::string name);
    std::shared_ptr<const State> state_;
};

}  // namespace cudacore
