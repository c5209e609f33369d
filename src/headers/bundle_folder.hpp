// Header bundles written out as folders, so that NVRTC reads their headers from files and its
// automatic precompiled headers work (NVRTC keys a PCH by the files it parsed: headers given in
// memory have none, and a program compiled from them gets no PCH).
//
// One folder per bundle digest, `<cache folder>/header-bundles/<bundle_folder_name()>/` (the
// cache folder as the disk program cache finds it: support/cache_directory.hpp), shared by every process of the
// user and never changed once in place. It is made under a private name in the same parent (an
// OwnedFolder "staging-XXXXXX", whose lock tells reclaimers whether its maker lives) and renamed
// into place whole; a manifest written last holds the digest, the header count and their size.
// Before each use the folder is checked: the manifest, and each header's type and size (a stat
// each); the first use in a process also compares every byte with the bundle. A folder that fails
// is moved aside and made again, under a lock per folder (`.<folder name>.lock`, a bounded wait), so
// that processes that all find it damaged replace it once. The same lock, shared, is held by a
// compile while NVRTC reads the folder, so that remove_bundle_folders (cache clear), which takes
// it exclusively without waiting, never removes a folder in use. Internal: Program::compile,
// HeaderBundle::folder() and HeaderBundle::remove_folders().
#pragma once

#include "cudacore/header_bundle.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

// Asked while a wait goes on: true ends it (a cancelled compile).
using GiveUp = std::function<bool()>;

// The file of a bundle folder written last: what a complete folder holds.
inline constexpr std::string_view kBundleManifestName = ".cudacore-bundle";

// The folder of `bundle`, made (or made again) when missing or damaged. Throws CacheError naming
// the bundle, the folder and the reason: a folder that
// cannot be made or written (read-only, full), one owned by another user or writable by others,
// a header whose name is no plain relative path (absolute, "..", empty parts), a quoted include
// that a folder would resolve beside its header and memory would not, or a lock held too long by
// another process. A folder that could not be made is not tried again by this process for a
// minute (the same error at once). With CUDACORE_DISABLE_CACHE set, or no cache folder named by
// the environment, the folder is below a folder
// of this process's own in the temporary directory (`cudacore-bundles-XXXXXX`), removed at exit.
// Thread-safe.
std::filesystem::path bundle_folder(const HeaderBundle& bundle);

// The name of `bundle`'s folder: a digest of its digest and of the folder's form (each header's
// file opens with `#line 1 "<its name>"`), so that a form written by another version of the
// library lies elsewhere and neither takes the other's for damage. 64 hex digits. Thread-safe.
std::string bundle_folder_name(const HeaderBundle& bundle);

// A bundle's folder with a shared lock on it (its digest's lock file): while `hold` lives,
// remove_bundle_folders leaves the folder in place (a compile reads it). Throws as bundle_folder.
// `path` is where the folder lies; NVRTC is given `nvrtc_path` (/proc/self/fd/N of `fd`, the
// descriptor the folder was checked through: a path swapped after the check redirects nothing).
// `signature` is what stat said of everything in the folder when it was checked.
struct HeldBundleFolder {
    std::filesystem::path path;
    std::string nvrtc_path;
    int fd = -1;
    std::string signature;
    std::shared_ptr<void> hold;
};
// Its waits (another process making the folder, another thread checking one) also end, with
// CacheError, within 10 ms of `give_up` (when set) answering true: a cancelled compile.
HeldBundleFolder hold_bundle_folder(const HeaderBundle& bundle, const GiveUp& give_up = {});

// The folders of `bundles`, in order, each held (hold_bundle_folder) while this lives, or why
// they cannot be had (then `paths` is empty).
struct BundleFolders {
    std::vector<std::string> paths;  // for NVRTC: /proc/self/fd/N
    std::vector<std::string> shown;  // where each lies, for messages
    std::vector<int> fds;            // each folder's descriptor, valid while `holds` live
    std::vector<std::string> signatures;  // what stat said of each folder's files when checked
    std::string problem;
    std::vector<std::shared_ptr<void>> holds;
};
BundleFolders bundle_folders(const std::vector<HeaderBundle>& bundles, const GiveUp& give_up = {}) noexcept;

// `log` (a compile's, which read `folders`) with each bundled header named as the source
// includes it ("cfg.h(3): error ..."), not by the folder NVRTC read it from: every
// "/proc/self/fd/N/" given to NVRTC and every folder path ("~/.cache/cudacore/header-bundles/
// <digest>/") in it is taken out. Never throws beyond std::bad_alloc.
std::string log_naming_bundled_headers(std::string log, const BundleFolders& folders);

// Why one of `folders` no longer holds its bundle after a compile read them: every byte is
// compared again, through the descriptors NVRTC read them through, and what stat says of every
// file and folder in it must be what it said at the check (a folder never changes once in place;
// any change, even one undone, changes a ctime). Names the folder and bundle; empty when each
// holds. The next use of a folder that fails compares every byte again. Never throws.
std::string bundle_folders_problem(const BundleFolders& folders,
                                   const std::vector<HeaderBundle>& bundles) noexcept;

// What remove_bundle_folders did: folders removed, those left because a compile held them,
// damage repaired and what could not be removed (each naming the path, the call and the error).
struct BundleFolderRemoval {
    std::uint64_t removed = 0;
    std::vector<std::filesystem::path> in_use;
    std::vector<std::string> repaired;
    std::vector<std::string> left;
};
// Removes every bundle folder of `<cache_folder>/header-bundles` that no compile holds (each
// under its exclusive lock, moved aside whole, then removed), their lock files, and staging
// folders whose makers are gone. A lock file that is no file (a folder, a symbolic link) is
// replaced; a folder or lock file that cannot be removed is named in `left`, and the removal goes
// on. Other names are left alone. Nothing there: nothing done. Throws CacheError naming the call
// and folder when the folder cannot be opened or listed, or is owned by another user.
BundleFolderRemoval remove_bundle_folders(const std::filesystem::path& cache_folder);

// Why the folder at `folder` does not hold `bundle` as written (missing, no or another manifest,
// a header missing, of another type or size, or with other bytes when `compare_bytes`); empty
// when it does. Never throws.
std::string bundle_folder_problem(const std::filesystem::path& folder, const HeaderBundle& bundle,
                                  bool compare_bytes) noexcept;

}  // namespace cudacore::detail
