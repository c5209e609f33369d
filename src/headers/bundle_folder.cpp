#include "headers/bundle_folder.hpp"

#include "cudacore/errors.hpp"
#include "headers/include_directives.hpp"
#include "support/atomic_file.hpp"
#include "support/file_descriptor.hpp"
#include "support/input_file.hpp"
#include "support/cache_directory.hpp"
#include "support/hex.hpp"
#include "support/owned_folder.hpp"
#include "support/private_folder.hpp"
#include "support/sha256.hpp"
#include "support/system_call_error.hpp"
#include "support/temporary_directory.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

namespace cudacore::detail {

namespace {

namespace fs = std::filesystem;

// Staging folders (and damaged folders moved aside) are OwnedFolders with this prefix.
constexpr std::string_view kStagingPrefix = "staging-";
// OwnedFolder's lock file, at the top of a staging folder until it is in place.
constexpr const char* kOwnerLock = "owner.lock";
// How long a process waits for another that is making the same folder.
constexpr std::chrono::seconds kLockWait{60};
// How long a folder that could not be made is not tried again by this process.
constexpr std::chrono::seconds kRetryAfter{60};

[[noreturn]] void fail_call(const std::string& what, const std::string& call, const fs::path& path,
                       int error) {
    throw CacheError(what + ": " + call + " '" + path.string() + "' failed: " +
                     errno_name_and_text(error) +
                     (resource_limit_hint(error).empty() ? "" : ": " + resource_limit_hint(error)));
}

std::string manifest_text(const HeaderBundle& bundle) {
    return "cudacore header bundle folder 2\ndigest " + bundle.digest() + "\nheaders " +
           std::to_string(bundle.size()) + "\nbytes " + std::to_string(bundle.content_size()) + "\n";
}

// What a header's file in the folder begins with: a #line naming the header as the bundle does,
// so that __FILE__, assert and NVRTC's messages name it as a compile that reads the bundle from
// memory does (NVRTC still looks for quoted includes beside the file itself).
std::string line_directive(const std::string& name) { return "#line 1 \"" + name + "\"\n"; }

// Why a header name cannot be a file below the folder; empty when it can.
std::string unsafe_name(const std::string& name) {
    if (name == kOwnerLock || name == kBundleManifestName)
        return "the header '" + name + "' has a name the folder keeps for itself";
    // The #line that names it must carry the name as NVRTC reads it: no escape, no end of line,
    // no byte NVRTC's lexer takes for the end of the file, no trigraph (before C++17).
    if (name.find_first_of("\"\\\n\r") != std::string::npos || name.find('\xff') != std::string::npos ||
        name.find("??") != std::string::npos)
        return "the header '" + name + "' has a name a #line cannot carry";
    if (name.starts_with('/')) return "the header '" + name + "' has an absolute name";
    std::string_view rest = name;
    while (true) {
        const std::size_t slash = rest.find('/');
        const std::string_view part = rest.substr(0, slash);
        if (part.empty() || part == "." || part == "..")
            return "the header '" + name + "' has a name that is no plain relative path";
        if (slash == std::string_view::npos) return {};
        rest.remove_prefix(slash + 1);
    }
}

// Why reading `bundle` from a folder could find another header than reading it from memory:
// a quoted include "X" in a header of the folder D is looked for beside it (D/X) first in a
// folder, while in memory it names X. Bundles made from folders or pairs never differ (such
// includes are rewritten to the full name: header_closure.hpp, includer_folder_rule.hpp); one
// read back from a file saved before from_headers applied that rule may. Empty when none does.
// The names of `headers` (sorted by name) below `folder` ("a/b/"), without it: made once per
// folder, so that an operand is looked up at the cost of its own length, not its folder's too (a
// long folder name and many quoted includes would otherwise cost their product).
const std::set<std::string_view>& names_below(std::map<std::string_view, std::set<std::string_view>>& made,
                                              const std::vector<BundledHeader>& headers, std::string_view folder) {
    auto [known, fresh] = made.try_emplace(folder);
    if (!fresh) return known->second;
    auto first = std::lower_bound(headers.begin(), headers.end(), folder,
                                  [](const BundledHeader& header, std::string_view name) { return header.name < name; });
    for (; first != headers.end() && std::string_view(first->name).starts_with(folder); ++first)
        known->second.insert(std::string_view(first->name).substr(folder.size()));
    return known->second;
}

std::string quoted_include_problem(const HeaderBundle& bundle) {
    const std::set<std::string, std::less<>> no_wrappers;
    std::map<std::string_view, std::set<std::string_view>> below;
    for (const BundledHeader& header : bundle.headers()) {
        const std::size_t slash = header.name.rfind('/');
        if (slash == std::string::npos || header.content.find('"') == std::string::npos) continue;
        const std::string_view folder = std::string_view(header.name).substr(0, slash + 1);
        const std::set<std::string_view>& beside = names_below(below, bundle.headers(), folder);
        for (const IncludeOperand& operand : scan_include_directives(header.content, no_wrappers).operands) {
            if (!operand.quoted || !beside.contains(operand.name)) continue;
            return "the header '" + header.name + "' includes \"" + operand.name + "\", which is '" +
                   std::string(folder) + operand.name + "' beside it in a folder but '" + operand.name + "' in memory";
        }
    }
    return {};
}

// The folder of this process's own that holds its bundle folders while CUDACORE_DISABLE_CACHE
// is set, or where the environment names no cache folder (no HOME: a service, a container):
// nothing is kept in the cache folder, and the folder goes with the process (at exit, on a signal
// in the CLI, or reclaimed by a later process after a kill), as the PCH folder does.
constexpr std::string_view kPrivateBundlesPrefix = "cudacore-bundles-";
struct PrivateBundles {
    std::mutex mutex;
    OwnedFolder folder;
    pid_t owner = 0;  // the process that made it (a forked child must not remove it)
};

PrivateBundles& private_bundles() {
    static auto* bundles = new PrivateBundles;  // never destroyed: usable from static destructors
    return *bundles;
}

void remove_private_bundles() {
    PrivateBundles& bundles = private_bundles();
    if (bundles.owner == ::getpid()) bundles.folder.remove();
}

// `why`: why no cache folder is used ("CUDACORE_DISABLE_CACHE is set"), for its errors.
fs::path private_bundles_root(const std::string& what, const std::string& why) {
    PrivateBundles& bundles = private_bundles();
    std::lock_guard lock(bundles.mutex);
    if (bundles.folder.empty()) {
        const TemporaryDirectory temporary = temporary_directory();
        if (!temporary.problem.empty()) throw CacheError(what + ": " + why + " and " + temporary.problem);
        reclaim_abandoned_folders(temporary.path, kPrivateBundlesPrefix);  // what killed processes left
        try {
            bundles.folder = OwnedFolder::make(temporary.path, kPrivateBundlesPrefix);
        } catch (const std::system_error& e) {
            throw CacheError(what + ": " + why + " and " + e.what());
        }
        bundles.owner = ::getpid();
        std::atexit(remove_private_bundles);
    }
    return bundles.folder.path();
}

// `<cache folder>/header-bundles`, made private (0700) where missing, and reached through a path
// only this user and root can change (support/private_folder.hpp): a folder others can write to,
// or one they could swap, could hand this user's compiles their headers. With
// CUDACORE_DISABLE_CACHE set, or no cache folder named by the environment, a folder of this
// process's own in the temporary directory instead.
// The folder is returned open: the bundle folders below it are opened through it.
struct BundlesRoot {
    fs::path path;
    std::shared_ptr<FileDescriptor> folder;
};

BundlesRoot bundles_root(const std::string& what) {
    fs::path root;
    if (cache_disabled_in_environment()) {
        root = private_bundles_root(what, "CUDACORE_DISABLE_CACHE is set");
    } else if (const CacheDirectory cache = cache_directory_from_environment(); !cache.problem.empty()) {
        root = private_bundles_root(what, "no cache folder (" + cache.problem + ")");
    } else {
        root = cache.path / kHeaderBundleFolders;
    }
    PrivateFolder opened = open_private_folder(root, true);
    if (opened.fd < 0) {
        // The folder first: warn_pch_off says it once per folder.
        throw CacheError("refusing '" + root.string() + "' for " + what + ": " + opened.problem +
                         ", who could plant headers");
    }
    return {root, std::make_shared<FileDescriptor>(opened.fd)};
}

// Writes `content` to the new file `name` (folders made as needed) below the folder `folder`.
void write_header(int folder, const std::string& name, std::string_view content,
                  const fs::path& display, const std::string& what) {
    int parent = folder;
    std::string_view rest = name;
    std::vector<std::unique_ptr<FileDescriptor>> opened;
    for (std::size_t slash = rest.find('/'); slash != std::string_view::npos; slash = rest.find('/')) {
        const std::string part(rest.substr(0, slash));
        if (::mkdirat(parent, part.c_str(), 0700) != 0 && errno != EEXIST)
            fail_call(what, "mkdir", display / name, errno);
        opened.push_back(std::make_unique<FileDescriptor>(
            ::openat(parent, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
        if (opened.back()->fd < 0) fail_call(what, "open", display / name, errno);
        parent = opened.back()->fd;
        rest.remove_prefix(slash + 1);
    }
    const FileDescriptor file(::openat(parent, std::string(rest).c_str(),
                                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (file.fd < 0) fail_call(what, "open", display / name, errno);
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t wrote = ::write(file.fd, content.data() + done, content.size() - done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) fail_call(what, "write", display / name, wrote < 0 ? errno : ENOSPC);
        done += static_cast<std::size_t>(wrote);
    }
}

// Adds what stat says of one file or folder to `signature` (when asked): any change to it, its
// contents or its entries changes its ctime, so a folder whose signature is the same after a
// compile as at its check held still in between.
void sign(std::string* signature, const struct stat& info) {
    if (!signature) return;
    for (const long long value : {static_cast<long long>(info.st_dev), static_cast<long long>(info.st_ino),
                                  static_cast<long long>(info.st_size), static_cast<long long>(info.st_mtim.tv_sec),
                                  static_cast<long long>(info.st_mtim.tv_nsec), static_cast<long long>(info.st_ctim.tv_sec),
                                  static_cast<long long>(info.st_ctim.tv_nsec)})
        signature->append(std::to_string(value)).push_back(' ');
}

// The subfolders of a bundle folder, each opened once per check with O_NOFOLLOW on every
// component (a subfolder swapped for a link is refused) and signed when first opened.
class Subfolders {
public:
    explicit Subfolders(int root) : root_(root) {}

    // The descriptor of the folder `path` ("" for the root, "a/b"), or -1 with `problem` set.
    int open(const std::string& path, const std::string& header, std::string* signature, std::string& problem) {
        if (path.empty()) return root_;
        if (auto it = opened_.find(path); it != opened_.end()) return it->second->fd;
        const std::size_t slash = path.rfind('/');
        const int parent = slash == std::string::npos ? root_ : open(path.substr(0, slash), header, signature, problem);
        if (parent < 0) return -1;
        const std::string part = slash == std::string::npos ? path : path.substr(slash + 1);
        auto folder = std::make_unique<FileDescriptor>(
            ::openat(parent, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        struct stat info {};
        if (folder->fd < 0 || ::fstat(folder->fd, &info) != 0) {
            problem = "the folder '" + part + "' of the header '" + header + "' is missing, a link or no folder";
            return -1;
        }
        sign(signature, info);
        return opened_.emplace(path, std::move(folder)).first->second->fd;
    }

private:
    int root_;
    std::map<std::string, std::unique_ptr<FileDescriptor>> opened_;
};

// Opens the header `name` through `folders` without following a link. Sets `problem` and
// returns -1 when it cannot.
int open_header(Subfolders& folders, const std::string& name, std::string* signature, std::string& problem) {
    const std::size_t slash = name.rfind('/');
    const int parent = folders.open(slash == std::string::npos ? std::string() : name.substr(0, slash), name,
                                    signature, problem);
    if (parent < 0) return -1;
    const std::string file_name = slash == std::string::npos ? name : name.substr(slash + 1);
    const int file = ::openat(parent, file_name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (file < 0) problem = errno == ELOOP ? "the header '" + name + "' is a symbolic link"
                                           : "the header '" + name + "' is missing";
    return file;
}

// Checks one header of the bundle folder `folders` opens; empty when it is as the bundle holds it.
std::string header_problem(Subfolders& folders, const BundledHeader& header, bool compare_bytes,
                           std::string* signature) {
    std::string problem;
    const FileDescriptor file(open_header(folders, header.name, signature, problem));
    if (file.fd < 0) return problem;
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) return "the header '" + header.name + "' cannot be read";
    if (!S_ISREG(info.st_mode))
        return "the header '" + header.name + "' is " + std::string(file_kind(info.st_mode));
    const std::string line = line_directive(header.name);
    const std::uint64_t size = line.size() + header.content.size();
    if (static_cast<std::uint64_t>(info.st_size) != size)
        return "the header '" + header.name + "' has " + std::to_string(info.st_size) + " bytes, not " + std::to_string(size);
    sign(signature, info);
    if (!compare_bytes) return {};
    const std::string held = read_open_file_bounded(file.fd, header.name, size);
    if (std::string_view(held).substr(0, line.size()) != line ||
        std::string_view(held).substr(line.size()) != header.content)
        return "the header '" + header.name + "' differs from the bundle's";
    return {};
}

std::string replace_damaged_lock(const fs::path& root, const fs::path& lock, const std::string& what);

// The lock of one digest's folder (`.<digest>.lock`): exclusive while the folder is made or
// removed, shared while a compile reads it. A remover unlinks the lock file while it holds it, so
// a lock taken on a file no longer under that name is taken again on the new one. Something
// other than a file under that name (damage: a folder, a symbolic link) is replaced.
class DigestLock {
public:
    // Takes `operation` (LOCK_EX or LOCK_SH); with `wait`, waits up to kLockWait for another
    // holder (then throws CacheError), else gives up at once (held() false). A wait also ends,
    // with CacheError, within 10 ms of `give_up` (when set) answering true.
    DigestLock(const fs::path& root, const std::string& digest, int operation, bool wait,
               const std::string& what, const GiveUp& give_up = {})
        : path_(root / ("." + digest + ".lock")) {
        const auto deadline = std::chrono::steady_clock::now() + kLockWait;
        for (bool replaced = false;;) {
            fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd_ < 0) {
                const int error = errno;
                // ELOOP: a symbolic link (never followed); EISDIR: a folder; ENXIO: a socket.
                const bool damaged = error == ELOOP || error == EISDIR || error == ENXIO;
                if (!damaged || std::exchange(replaced, true)) fail_call(what, "open", path_, error);
                repaired_ = replace_damaged_lock(root, path_, what);
                continue;
            }
            if (::flock(fd_, operation | LOCK_NB) == 0) {
                if (still_named()) return;
            } else if (errno != EWOULDBLOCK && errno != EINTR) {
                const int error = errno;
                close();
                fail_call(what, "flock", path_, error);
            } else if (!wait) {
                close();
                return;
            }
            close();
            if (std::chrono::steady_clock::now() > deadline) {
                throw CacheError(what + ": another process has held '" + path_.string() +
                                 "' for more than " + std::to_string(kLockWait.count()) + " s");
            }
            if (give_up && give_up())
                throw CacheError(what + ": gave up waiting for '" + path_.string() + "': the compile was cancelled");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    DigestLock(const DigestLock&) = delete;
    DigestLock& operator=(const DigestLock&) = delete;
    ~DigestLock() { close(); }  // closing it gives the lock back

    bool held() const { return fd_ >= 0; }
    // What was replaced under the lock file's name ("'…' was a directory: replaced"), or empty.
    const std::string& repaired() const { return repaired_; }
    // Turns the exclusive lock into a shared one with no moment unlocked between (Linux converts
    // a lock on the same descriptor in one step), so a remover cannot take the folder just made.
    void share(const std::string& what) const {
        if (::flock(fd_, LOCK_SH | LOCK_NB) != 0) fail_call(what, "flock", path_, errno);
    }
    // Removes the lock file (held exclusively): waiters find it gone and take the next one.
    void remove_file() const { ::unlink(path_.c_str()); }

private:
    bool still_named() const {
        struct stat held {}, named {};
        return ::fstat(fd_, &held) == 0 && ::lstat(path_.c_str(), &named) == 0 &&
               held.st_dev == named.st_dev && held.st_ino == named.st_ino;
    }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    fs::path path_;
    int fd_ = -1;
    std::string repaired_;
};

OwnedFolder staging_folder(const fs::path& root, const std::string& what) {
    try {
        return OwnedFolder::make(root, kStagingPrefix);
    } catch (const std::system_error& e) {
        throw CacheError(what + ": " + e.what());
    }
}

// Moves what holds `folder`'s name now (damaged) into a staging folder that removes it, so
// that the name is free; a remover killed halfway leaves it to the next reclaim.
void move_aside(const fs::path& root, const fs::path& folder, const std::string& what) {
    struct stat info {};
    if (::lstat(folder.c_str(), &info) != 0 && errno == ENOENT) return;
    OwnedFolder trash = staging_folder(root, what);
    if (::rename(folder.c_str(), (trash.path() / "damaged").c_str()) != 0 && errno != ENOENT)
        fail_call(what, "rename", folder, errno);
}  // trash removed here, with what was moved into it

// Moves what stands under a digest's lock file's name when it is no regular file (damage: a
// folder, whatever is in it, a symbolic link, a socket) into a staging folder that removes it,
// so that the lock file is made again. Returns what it replaced, naming the path; empty when it
// moved nothing (another process repaired it first).
std::string replace_damaged_lock(const fs::path& root, const fs::path& lock, const std::string& what) {
    struct stat info {};
    if (::lstat(lock.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return {};
    OwnedFolder trash = staging_folder(root, what);
    const fs::path moved = trash.path() / "damaged";
    if (::rename(lock.c_str(), moved.c_str()) != 0) return {};
    // Repaired by another process between the lstat and the rename: its lock file (which it may
    // hold) goes back.
    struct stat taken {};
    if (::lstat(moved.c_str(), &taken) == 0 && S_ISREG(taken.st_mode)) {
        ::renameat2(AT_FDCWD, moved.c_str(), AT_FDCWD, lock.c_str(), RENAME_NOREPLACE);
        return {};
    }
    return "'" + lock.string() + "' was " + std::string(file_kind(info.st_mode)) + ": replaced";
}  // trash removed here, with what was moved into it

// Writes the bundle into a staging folder and renames it to `folder`. Returns false when
// another folder took the name first (the staging folder is removed).
bool make_folder(const fs::path& root, const fs::path& folder, const HeaderBundle& bundle,
                 const std::string& what) {
    OwnedFolder staging = staging_folder(root, what);
    const FileDescriptor fd(::open(staging.path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.fd < 0) fail_call(what, "open", staging.path(), errno);
    for (const BundledHeader& header : bundle.headers())
        write_header(fd.fd, header.name, line_directive(header.name) + header.content, staging.path(), what);
    try {
        write_file_atomically_at(fd.fd, std::string(kBundleManifestName), manifest_text(bundle),
                                 0600, staging.path() / kBundleManifestName);
    } catch (const std::system_error& e) {
        throw CacheError(what + ": " + e.what());
    }
    if (::renameat2(AT_FDCWD, staging.path().c_str(), AT_FDCWD, folder.c_str(), RENAME_NOREPLACE) != 0) {
        if (errno == EEXIST || errno == ENOTEMPTY) return false;
        fail_call(what, "renameat2", folder, errno);
    }
    ::unlinkat(fd.fd, kOwnerLock, 0);  // the folder holds the headers and the manifest only
    staging.release();                 // in place: no longer the staging folder's to remove
    return true;
}

// What this process has compared byte for byte, what quoted_include_problem said of each digest,
// and the mutex every use holds.
struct FailedMake {
    std::chrono::steady_clock::time_point at;
    std::string message;
};
struct CheckedFolders {
    std::timed_mutex mutex;
    std::set<std::string> compared;                    // folder paths
    std::map<std::string, std::string> include_problems;  // by digest
    std::map<std::string, FailedMake> failed;          // by folder path
    // The descriptor of each digest's folder NVRTC is given, kept while it is the same folder.
    std::map<std::string, std::shared_ptr<FileDescriptor>> descriptors;
};

CheckedFolders& checked_folders() {
    static auto* checked = new CheckedFolders;  // never destroyed: usable from static destructors
    return *checked;
}

// Makes the folder missing or damaged at `folder`: once, by whichever process takes the lock
// first (the others find it made). Returns the digest's lock, shared: the folder held.
std::shared_ptr<DigestLock> make_again(const fs::path& root, const fs::path& folder, const HeaderBundle& bundle,
                                       const std::string& what, const GiveUp& give_up) {
    auto lock = std::make_shared<DigestLock>(root, bundle_folder_name(bundle), LOCK_EX, true, what, give_up);
    if (!bundle_folder_problem(folder, bundle, true).empty()) {
        reclaim_abandoned_folders(root, kStagingPrefix);  // what killed makers left
        move_aside(root, folder, what);
        make_folder(root, folder, bundle, what);
        if (std::string problem = bundle_folder_problem(folder, bundle, true); !problem.empty())
            throw CacheError(what + ": the folder '" + folder.string() + "' just made fails its check: " + problem);
    }
    lock->share(what);
    return lock;
}

}  // namespace

namespace {

// Why the folder open as `fd` (shown as `folder`) does not hold `bundle`, or empty. With
// `signature`, what stat says of the folder and everything in it is added there. Never throws.
std::string open_folder_problem(int fd, const fs::path& folder, const HeaderBundle& bundle,
                                bool compare_bytes, std::string* signature) noexcept {
    try {
        struct stat info {};
        if (::fstat(fd, &info) != 0) return "it cannot be read: " + errno_name_and_text(errno);
        sign(signature, info);
        const FileDescriptor manifest(::openat(fd, std::string(kBundleManifestName).c_str(),
                                           O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
        const std::string expected = manifest_text(bundle);
        if (manifest.fd < 0 ||
            read_open_file_bounded(manifest.fd, folder / kBundleManifestName, expected.size()) != expected)
            return "its manifest " + std::string(kBundleManifestName) + " is missing or not this bundle's";
        Subfolders folders(fd);
        for (const BundledHeader& header : bundle.headers())
            if (std::string problem = header_problem(folders, header, compare_bytes, signature); !problem.empty())
                return problem;
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

// The digest folder below `root`, opened without following a link; null when it cannot be.
std::shared_ptr<FileDescriptor> open_digest_folder(const BundlesRoot& root, const std::string& digest) {
    auto folder = std::make_shared<FileDescriptor>(
        ::openat(root.folder->fd, digest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return folder->fd < 0 ? nullptr : folder;
}

bool same_folder(int a, int b) {
    struct stat x {}, y {};
    return ::fstat(a, &x) == 0 && ::fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

// What a compile holds while NVRTC reads a folder: the digest's lock (shared) and the folder's
// descriptor, whose /proc/self/fd path NVRTC is given.
struct FolderHold {
    std::shared_ptr<DigestLock> lock;
    std::shared_ptr<FileDescriptor> folder;
};

}  // namespace

std::string bundle_folder_problem(const fs::path& folder, const HeaderBundle& bundle,
                                  bool compare_bytes) noexcept {
    const FileDescriptor fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.fd < 0) return errno == ENOENT ? "it is missing" : "it cannot be opened: " + errno_name_and_text(errno);
    return open_folder_problem(fd.fd, folder, bundle, compare_bytes, nullptr);
}

// Long because: the checks, the making again and the descriptor kept, under one mutex.
HeldBundleFolder hold_bundle_folder(const HeaderBundle& bundle, const GiveUp& give_up) {
    const std::string what = "header bundle " + bundle.describe() + " as a folder";
    for (const BundledHeader& header : bundle.headers())
        if (std::string unsafe = unsafe_name(header.name); !unsafe.empty()) throw CacheError(what + ": " + unsafe);
    const BundlesRoot root = bundles_root(what);
    const std::string name = bundle_folder_name(bundle);
    const fs::path folder = root.path / name;
    CheckedFolders& checked = checked_folders();
    // Another thread may hold it while it waits for a digest's lock: waited for as that lock is.
    std::unique_lock guard(checked.mutex, std::defer_lock);
    while (!guard.try_lock_for(std::chrono::milliseconds(10)))
        if (give_up && give_up()) throw CacheError(what + ": gave up waiting for another thread: the compile was cancelled");
    auto scanned = checked.include_problems.find(bundle.digest());
    if (scanned == checked.include_problems.end())
        scanned = checked.include_problems.emplace(bundle.digest(), quoted_include_problem(bundle)).first;
    if (!scanned->second.empty()) throw CacheError(what + ": " + scanned->second);
    // Checked under the shared lock, which a remover (cache clear) cannot take from us: a folder
    // found whole stays so for as long as the hold lives. A maker's exclusive lock turns shared.
    auto lock = std::make_shared<DigestLock>(root.path, name, LOCK_SH, true, what, give_up);
    const bool compared = checked.compared.contains(folder.string());
    std::shared_ptr<FileDescriptor> opened = open_digest_folder(root, name);
    std::string signature;
    if (!opened || !open_folder_problem(opened->fd, folder, bundle, !compared, &signature).empty()) {
        lock.reset();
        // A folder that could not be made a moment ago (a full or read-only file system) is not
        // written again by every compile: the same error until kRetryAfter has passed.
        const auto now = std::chrono::steady_clock::now();
        if (const auto failed = checked.failed.find(folder.string());
            failed != checked.failed.end() && now - failed->second.at < kRetryAfter)
            throw CacheError(failed->second.message);
        try {
            lock = make_again(root.path, folder, bundle, what, give_up);
            opened = open_digest_folder(root, name);
            signature.clear();
            if (!opened || !open_folder_problem(opened->fd, folder, bundle, true, &signature).empty())
                throw CacheError(what + ": the folder '" + folder.string() + "' just made cannot be opened");
        } catch (const CacheError& e) {
            if (!(give_up && give_up())) checked.failed[folder.string()] = {now, e.what()};  // not a cancel's
            throw;
        }
        checked.failed.erase(folder.string());
    }
    checked.compared.insert(folder.string());
    // The same folder keeps the same descriptor, so NVRTC sees the same path and its PCH holds.
    std::shared_ptr<FileDescriptor>& kept = checked.descriptors[name];
    if (!kept || !same_folder(kept->fd, opened->fd)) kept = opened;
    auto hold = std::make_shared<FolderHold>(FolderHold{std::move(lock), kept});
    if (kept != opened) {  // the same folder: its signature through the kept descriptor is the same
        signature.clear();
        open_folder_problem(kept->fd, folder, bundle, false, &signature);
    }
    return {folder, "/proc/self/fd/" + std::to_string(kept->fd), kept->fd, std::move(signature), std::move(hold)};
}

std::string bundle_folder_name(const HeaderBundle& bundle) {
    Sha256 hash;
    hash.update("cudacore header bundle folder 2, headers opened by #line\n");
    hash.update(bundle.digest());
    const Sha256Digest digest = hash.finish();
    return hex_of(digest.data(), digest.size());
}

fs::path bundle_folder(const HeaderBundle& bundle) { return hold_bundle_folder(bundle).path; }

BundleFolders bundle_folders(const std::vector<HeaderBundle>& bundles, const GiveUp& give_up) noexcept {
    BundleFolders folders;
    try {
        if (::access("/proc/self/fd", X_OK) != 0)
            throw CacheError("/proc/self/fd is not there to give NVRTC the folders it was checked through");
        for (const HeaderBundle& bundle : bundles) {
            HeldBundleFolder held = hold_bundle_folder(bundle, give_up);
            folders.paths.push_back(held.nvrtc_path);
            folders.shown.push_back(held.path.string());
            folders.fds.push_back(held.fd);
            folders.signatures.push_back(std::move(held.signature));
            folders.holds.push_back(std::move(held.hold));
        }
    } catch (const std::exception& e) {
        folders = {};
        try {
            folders.problem = e.what();
        } catch (...) {
        }
        if (folders.problem.empty()) folders.problem = "out of memory";
    }
    return folders;
}

std::string log_naming_bundled_headers(std::string log, const BundleFolders& folders) {
    std::vector<std::string> prefixes;
    for (const std::string& path : folders.paths) prefixes.push_back(path + "/");
    for (const std::string& path : folders.shown) prefixes.push_back(path + "/");
    // The longest first, so that no prefix is taken out of a longer one that holds it.
    std::sort(prefixes.begin(), prefixes.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const std::string& prefix : prefixes) {
        if (prefix.size() < 2) continue;
        std::string out;
        out.reserve(log.size());
        std::size_t from = 0;
        for (std::size_t at = log.find(prefix); at != std::string::npos; at = log.find(prefix, from)) {
            out.append(log, from, at - from);
            from = at + prefix.size();
        }
        out.append(log, from, std::string::npos);
        log = std::move(out);
    }
    return log;
}

std::string bundle_folders_problem(const BundleFolders& folders,
                                   const std::vector<HeaderBundle>& bundles) noexcept {
    for (std::size_t i = 0; i < folders.fds.size() && i < bundles.size(); ++i) {
        std::string signature;
        std::string problem = open_folder_problem(folders.fds[i], folders.shown[i], bundles[i], true, &signature);
        if (problem.empty() && signature != folders.signatures[i])
            problem = "a file or folder in it changed while the compile read it";
        if (!problem.empty()) {
            try {  // the next use compares every byte again, and makes the folder again
                CheckedFolders& checked = checked_folders();
                std::lock_guard guard(checked.mutex);
                checked.compared.erase(folders.shown[i]);
                return "the folder '" + folders.shown[i] + "' of header bundle " + bundles[i].describe() +
                       ": " + problem;
            } catch (...) {
                return "a bundle folder changed while it was read";
            }
        }
    }
    return {};
}

BundleFolderRemoval remove_bundle_folders(const fs::path& cache_folder) {
    const fs::path root = cache_folder / kHeaderBundleFolders;
    const std::string what = "removing the header bundle folders of '" + cache_folder.string() + "'";
    {
        const FileDescriptor folder(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (folder.fd < 0 && errno == ENOENT) return {};
        if (folder.fd < 0) fail_call(what, "open", root, errno);
        struct stat info {};
        if (::fstat(folder.fd, &info) != 0) fail_call(what, "fstat", root, errno);
        if (info.st_uid != ::geteuid())
            throw CacheError(what + ": refusing '" + root.string() + "': it is owned by another user");
    }
    reclaim_abandoned_folders(root, kStagingPrefix);  // what killed makers left; live ones stay
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root, error)) names.push_back(entry.path().filename());
    if (error) throw CacheError(what + ": cannot list '" + root.string() + "': " + error.message());
    BundleFolderRemoval removal;
    for (const std::string& name : names) {
        const bool lock_file = name.size() > 6 && name.starts_with('.') && name.ends_with(".lock");
        const std::string digest = lock_file ? name.substr(1, name.size() - 6) : name;
        // Digests are 64 hexadecimal digits: anything else (staging folders, a user's files) is left.
        if (digest.size() != 64 || digest.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
        if (lock_file && fs::exists(root / digest, error)) continue;  // removed with its folder
        // What cannot be removed is named, and the removal goes on.
        try {
            const DigestLock lock(root, digest, LOCK_EX, false, what);
            if (!lock.repaired().empty()) removal.repaired.push_back(lock.repaired());
            if (!lock.held()) {  // a compile reads the folder, or a maker writes it
                if (!lock_file) removal.in_use.push_back(root / digest);
                continue;
            }
            if (!lock_file) {
                move_aside(root, root / digest, what);
                ++removal.removed;
            }
            lock.remove_file();
        } catch (const CacheError& e) {
            removal.left.push_back(e.what());
        }
    }
    return removal;
}

}  // namespace cudacore::detail
