// Header bundles written out as folders, so that NVRTC reads their headers from files and its
// automatic precompiled headers work (NVRTC keys a PCH by the files it parsed: headers given in
// memory have none, and a program compiled from them gets no PCH).
//
// One folder per bundle digest, `<cache folder>/header-bundles/<digest>/` (the cache folder as
// the disk program cache finds it: support/cache_directory.hpp), shared by every process of the
// user and never changed once in place. It is made under a private name in the same parent (an
// OwnedFolder "staging-XXXXXX", whose lock tells reclaimers whether its maker lives) and renamed
// into place whole; a manifest written last holds the digest, the header count and their size.
// Before each use the folder is checked: the manifest, and each header's type and size (a stat
// each); the first use in a process also compares every byte with the bundle. A folder that fails
// is moved aside and made again, under a lock per digest (`.<digest>.lock`, a bounded wait), so
// that processes that all find it damaged replace it once. Internal: Program::compile and
// HeaderBundle::folder().
#pragma once

#include "cudacore/header_bundle.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

// The file of a bundle folder written last: what a complete folder holds.
inline constexpr std::string_view kBundleManifestName = ".cudacore-bundle";

// The folder of `bundle`, made (or made again) when missing or damaged. Throws CacheError naming
// the bundle, the folder and the reason: no cache folder in the environment, a folder that
// cannot be made or written (read-only, full), one owned by another user or writable by others,
// a header whose name is no plain relative path (absolute, "..", empty parts), a quoted include
// that a folder would resolve beside its header and memory would not, or a lock held too long by
// another process. A folder that could not be made is not tried again by this process for a
// minute (the same error at once). Thread-safe.
std::filesystem::path bundle_folder(const HeaderBundle& bundle);

// The folders of `bundles`, in order, or why they cannot be had (then `paths` is empty).
struct BundleFolders {
    std::vector<std::string> paths;
    std::string problem;
};
BundleFolders bundle_folders(const std::vector<HeaderBundle>& bundles) noexcept;

// Why the folder at `folder` does not hold `bundle` as written (missing, no or another manifest,
// a header missing, of another type or size, or with other bytes when `compare_bytes`); empty
// when it does. Never throws.
std::string bundle_folder_problem(const std::filesystem::path& folder, const HeaderBundle& bundle,
                                  bool compare_bytes) noexcept;

}  // namespace cudacore::detail
