#include "code/pch_directory.hpp"

#include "cudacore/warnings.hpp"
#include "support/temporary_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string_view>
#include <system_error>
#include <vector>

namespace cudacore::detail {

namespace {

struct PchFolder {
    std::mutex mutex;
    std::string path;  // made once, in the temporary directory of that time
    pid_t owner = 0;   // the process that made it (a forked child must not remove it)
    std::set<std::string> warned;
};

// A folder is "cudacore-pch-" and mkdtemp's six characters. Its owner holds an flock on the
// lock file inside for as long as it lives (the descriptor is never closed; a forked child
// shares it), so the lock is free exactly when every process that could use the folder is gone,
// however it ended (SIGKILL included), and whatever pid namespace it ran in: a process id could
// be reused or belong to another namespace sharing the temporary directory.
constexpr std::string_view kFolderPrefix = "cudacore-pch-";
constexpr std::size_t kFolderNameSize = kFolderPrefix.size() + 6;
constexpr const char* kLockName = "owner.lock";
// A folder without a lock file is one whose owner died between making it and locking it (or
// made by an older cudacore): reclaimed once it is this old, long past any such moment.
constexpr auto kUnlockedFolderAge = std::chrono::hours(24);

// Whether the process (or processes) that own the folder `name` in `parent` are gone.
bool owner_is_gone(int parent, const char* name) {
    struct stat folder {};
    if (::fstatat(parent, name, &folder, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(folder.st_mode) ||
        folder.st_uid != ::geteuid())
        return false;  // not a folder of ours: never touched
    const std::string lock_path = std::string(name) + "/" + kLockName;
    const int lock = ::openat(parent, lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (lock < 0) {
        if (errno != ENOENT) return false;
        const auto age = std::chrono::system_clock::now() -
                         std::chrono::system_clock::from_time_t(folder.st_mtime);
        return age > kUnlockedFolderAge;
    }
    // Taken only to test it; closing the descriptor gives it back at once.
    const bool free = ::flock(lock, LOCK_EX | LOCK_NB) == 0;
    ::close(lock);
    return free;
}

// Removes the PCH folders in `parent` whose processes are gone (their exit handler, which
// removes the folder, never ran: killed, crashed, _exit). Errors leave a folder where it is.
void reclaim_abandoned_folders(const std::filesystem::path& parent) noexcept {
    try {
        const int directory = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (directory < 0) return;
        DIR* listing = ::fdopendir(directory);
        if (!listing) {
            ::close(directory);
            return;
        }
        std::vector<std::string> gone;
        while (const dirent* entry = ::readdir(listing)) {
            const std::string_view name = entry->d_name;
            if (name.size() == kFolderNameSize && name.starts_with(kFolderPrefix) &&
                owner_is_gone(directory, entry->d_name))
                gone.emplace_back(name);
        }
        ::closedir(listing);
        for (const std::string& name : gone) {
            std::error_code ignored;  // another process may be reclaiming it too
            std::filesystem::remove_all(parent / name, ignored);
        }
    } catch (...) {  // std::bad_alloc: the folders stay for the next process
    }
}

// Locks the new folder for this process's lifetime: false when the lock cannot be made.
bool lock_folder(const std::string& path) {
    const std::string lock_path = path + "/" + kLockName;
    const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (lock < 0) return false;
    if (::flock(lock, LOCK_EX | LOCK_NB) != 0) {
        ::close(lock);
        return false;
    }
    return true;  // the descriptor stays open (and the lock held) until the process ends
}

PchFolder& pch_folder() {
    static auto* folder = new PchFolder;  // never destroyed: usable from static destructors
    return *folder;
}

void remove_pch_folder() {
    PchFolder& folder = pch_folder();
    if (folder.path.empty() || folder.owner != ::getpid()) return;
    std::error_code ignored;
    std::filesystem::remove_all(folder.path, ignored);
}

}  // namespace

PchDirectory automatic_pch_directory(std::size_t heap_size) noexcept {
    try {
        PchFolder& folder = pch_folder();
        std::lock_guard lock(folder.mutex);
        std::filesystem::path parent;
        if (folder.path.empty()) {
            const TemporaryDirectory temporary = temporary_directory();
            if (!temporary.problem.empty()) return {{}, temporary.problem};
            parent = temporary.path;
        } else {
            parent = std::filesystem::path(folder.path).parent_path();
        }
        if (std::string room = room_problem(parent, heap_size, "a precompiled header"); !room.empty())
            return {{}, room};
        if (folder.path.empty()) {
            // Once per process: what processes that ended without their exit handler left.
            reclaim_abandoned_folders(parent);
            std::string pattern = (parent / (std::string(kFolderPrefix) + "XXXXXX")).string();
            if (::mkdtemp(pattern.data()) == nullptr) {
                return {{}, "cannot make a folder for precompiled headers in '" + parent.string() +
                                "': " + std::error_code(errno, std::generic_category()).message()};
            }
            if (!lock_folder(pattern)) {
                const int error = errno;
                std::error_code ignored;
                std::filesystem::remove_all(pattern, ignored);
                return {{}, "cannot lock the folder for precompiled headers '" + pattern +
                                "': " + std::error_code(error, std::generic_category()).message()};
            }
            folder.path = pattern;
            folder.owner = ::getpid();
            std::atexit(remove_pch_folder);
        }
        return {folder.path, {}};
    } catch (...) {  // std::bad_alloc
        return {{}, "out of memory while choosing the precompiled header folder"};
    }
}

void warn_pch_off(const std::string& problem) noexcept {
    try {
        PchFolder& folder = pch_folder();
        {
            std::lock_guard lock(folder.mutex);
            // Once per folder: the text after the folder's name (free space) changes.
            const std::string key = problem.substr(0, problem.find("' "));
            if (!folder.warned.insert(key).second) return;
        }
        warn(WarningKind::pch_off, "precompiled headers are off: " + problem);
    } catch (...) {
    }
}

}  // namespace cudacore::detail
