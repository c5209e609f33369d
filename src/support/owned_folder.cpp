#include "support/owned_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace cudacore::detail {

namespace {

constexpr const char* kLockName = "owner.lock";
constexpr std::string_view kUnfinished = "new-";
constexpr std::size_t kSuffixSize = 6;  // mkdtemp's XXXXXX

bool is_suffix(std::string_view text) {
    if (text.size() != kSuffixSize) return false;
    for (const char c : text)
        if (!std::isalnum(static_cast<unsigned char>(c))) return false;
    return true;
}

void close_fd(int& fd) noexcept {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// Removes everything inside the folder open as `folder` (symbolic links are removed, never
// followed); `keep_last` (the lock file) goes after the rest, so that a remover killed halfway
// leaves a folder the next one still recognises. Best effort.
void remove_contents(int folder, const char* keep_last) noexcept {
    try {
        const int listing_fd = ::fcntl(folder, F_DUPFD_CLOEXEC, 0);
        if (listing_fd < 0) return;
        DIR* listing = ::fdopendir(listing_fd);
        if (!listing) {
            ::close(listing_fd);
            return;
        }
        std::vector<std::string> names;
        while (const dirent* entry = ::readdir(listing)) {
            const std::string_view name = entry->d_name;
            if (name != "." && name != ".." && !(keep_last && name == keep_last)) names.emplace_back(name);
        }
        ::closedir(listing);
        for (const std::string& name : names) {
            struct stat info {};
            if (::fstatat(folder, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
            if (S_ISDIR(info.st_mode)) {
                const int inner = ::openat(folder, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (inner >= 0) {
                    remove_contents(inner, nullptr);
                    ::close(inner);
                }
                ::unlinkat(folder, name.c_str(), AT_REMOVEDIR);
            } else {
                ::unlinkat(folder, name.c_str(), 0);
            }
        }
        if (keep_last) ::unlinkat(folder, keep_last, 0);
    } catch (...) {  // std::bad_alloc: what is left stays
    }
}

bool older_than(const struct stat& info, std::chrono::seconds age) {
    const auto modified = std::chrono::system_clock::from_time_t(info.st_mtime);
    return std::chrono::system_clock::now() - modified > age;
}

// Removes the folder `name` of `parent` if it is abandoned (see the header).
void reclaim_one(int parent, const char* name, bool unfinished) noexcept {
    const int folder = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (folder < 0) return;  // gone already, a symbolic link, or not a folder
    struct stat info {};
    if (::fstat(folder, &info) != 0 || info.st_uid != ::geteuid()) {
        ::close(folder);
        return;  // not ours: never touched
    }
    // Not blocking: a FIFO under the lock's name would hold the open until a writer came.
    int lock = ::openat(folder, kLockName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    bool abandoned = false;
    if (lock < 0) {
        // No lock file: its maker is about to make it, died before, or (a public folder) an
        // older cudacore made the folder.
        abandoned = errno == ENOENT &&
                    older_than(info, unfinished ? std::chrono::seconds(kUnfinishedFolderAge)
                                                : std::chrono::seconds(kUnlockedFolderAge));
    } else if (::flock(lock, LOCK_EX | LOCK_NB) == 0) {
        // The lock is ours now: no owner holds it, and none can take it while we remove.
        abandoned = !unfinished || older_than(info, kUnfinishedFolderAge);
    }
    if (abandoned) {
        // Only a folder still under this name: a maker that renames its folder away (a header
        // bundle folder put in place) removes its lock file and gives the lock back only after
        // the rename, so a reclaimer that opened the folder before then holds another name's.
        struct stat named {};
        abandoned = ::fstatat(parent, name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
                    named.st_dev == info.st_dev && named.st_ino == info.st_ino;
    }
    if (abandoned) {
        remove_contents(folder, kLockName);
        // By name, last: if the name now belongs to another folder, that one is not empty.
        ::unlinkat(parent, name, AT_REMOVEDIR);
    }
    if (lock >= 0) ::close(lock);
    ::close(folder);
}

[[noreturn]] void fail(const char* call, const std::filesystem::path& path, int error) {
    throw std::system_error(error, std::generic_category(),
                            std::string(call) + " '" + path.string() + "' failed");
}

}  // namespace

OwnedFolder::OwnedFolder(OwnedFolder&& other) noexcept
    : path_(std::move(other.path_)),
      folder_fd_(std::exchange(other.folder_fd_, -1)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      removed_on_signal_(std::move(other.removed_on_signal_)) {
    other.path_.clear();
}

OwnedFolder& OwnedFolder::operator=(OwnedFolder&& other) noexcept {
    if (this != &other) {
        remove();
        path_ = std::move(other.path_);
        other.path_.clear();
        folder_fd_ = std::exchange(other.folder_fd_, -1);
        lock_fd_ = std::exchange(other.lock_fd_, -1);
        removed_on_signal_ = std::move(other.removed_on_signal_);
    }
    return *this;
}

OwnedFolder::~OwnedFolder() { remove(); }

OwnedFolder OwnedFolder::make(const std::filesystem::path& parent, std::string_view prefix) {
    OwnedFolder made;
    // Made inside its registration: a signal that ends the process meanwhile removes it too.
    RemovedOnSignal registration = RemovedOnSignal::make([&] {
        for (int attempt = 0; made.empty(); ++attempt) made = make_once(parent, prefix, attempt == 8);
        return made.path_;
    });
    made.removed_on_signal_ = std::move(registration);
    return made;
}

OwnedFolder OwnedFolder::make_once(const std::filesystem::path& parent, std::string_view prefix,
                                   bool last) {
    std::string unfinished = (parent / (std::string(prefix) + std::string(kUnfinished) + "XXXXXX")).string();
    if (::mkdtemp(unfinished.data()) == nullptr) fail("mkdtemp", unfinished, errno);
    OwnedFolder made;
    made.path_ = unfinished;  // removed with it on any error below
    // A reclaimer may remove the folder at any moment until it is locked (its maker stalled
    // past kUnfinishedFolderAge): ENOENT from here on means start again.
    made.folder_fd_ = ::open(unfinished.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (made.folder_fd_ < 0) {
        if (errno == ENOENT && !last) return {};
        fail("open", unfinished, errno);
    }
    made.lock_fd_ = ::openat(made.folder_fd_, kLockName,
                             O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (made.lock_fd_ < 0) {
        if (errno == ENOENT && !last) return {};
        fail("open", made.path_ / kLockName, errno);
    }
    if (::flock(made.lock_fd_, LOCK_EX | LOCK_NB) != 0) {
        // Only a reclaimer removing it (its maker stalled here) holds it: start again.
        if (errno == EWOULDBLOCK && !last) return {};
        fail("flock", made.path_ / kLockName, errno);
    }
    // Complete and locked: visible to reclaimers from now on.
    const std::string name = std::string(prefix) + unfinished.substr(unfinished.size() - kSuffixSize);
    const std::filesystem::path target = parent / name;
    if (::renameat2(AT_FDCWD, unfinished.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0) {
        // EEXIST: the name is taken (by a folder of the old form); ENOENT: reclaimed meanwhile.
        if ((errno == EEXIST || errno == ENOENT) && !last) return {};
        fail("renameat2", target, errno);
    }
    made.path_ = target;
    // What carries the name is the folder we made (the check above cannot be fooled by a
    // folder renamed meanwhile only if nobody reclaimed ours: see reclaim_one).
    struct stat ours {}, named {};
    if (::fstat(made.folder_fd_, &ours) != 0 ||
        ::fstatat(AT_FDCWD, target.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 ||
        ours.st_dev != named.st_dev || ours.st_ino != named.st_ino) {
        made.release();  // not ours to remove
        if (!last) return {};
        fail("renameat2", target, EEXIST);
    }
    return made;
}

void OwnedFolder::remove() noexcept {
    if (folder_fd_ >= 0) {
        remove_contents(folder_fd_, kLockName);
        ::rmdir(path_.c_str());
    }
    release();
}

void OwnedFolder::release() noexcept {
    close_fd(folder_fd_);
    close_fd(lock_fd_);
    removed_on_signal_.release();
    path_.clear();
}

void reclaim_abandoned_folders(const std::filesystem::path& parent, std::string_view prefix) noexcept {
    try {
        const int directory = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (directory < 0) return;
        const int listing_fd = ::fcntl(directory, F_DUPFD_CLOEXEC, 0);
        DIR* listing = listing_fd >= 0 ? ::fdopendir(listing_fd) : nullptr;
        if (!listing) {
            if (listing_fd >= 0) ::close(listing_fd);
            ::close(directory);
            return;
        }
        std::vector<std::pair<std::string, bool>> candidates;  // (name, unfinished)
        while (const dirent* entry = ::readdir(listing)) {
            std::string_view name = entry->d_name;
            if (!name.starts_with(prefix)) continue;
            name.remove_prefix(prefix.size());
            const bool unfinished = name.starts_with(kUnfinished);
            if (unfinished) name.remove_prefix(kUnfinished.size());
            if (is_suffix(name)) candidates.emplace_back(entry->d_name, unfinished);
        }
        ::closedir(listing);
        for (const auto& [name, unfinished] : candidates) reclaim_one(directory, name.c_str(), unfinished);
        ::close(directory);
    } catch (...) {  // std::bad_alloc: the folders stay for the next process
    }
}

}  // namespace cudacore::detail
