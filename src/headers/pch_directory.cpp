#include "headers/pch_directory.hpp"

#include "cudacore/warnings.hpp"
#include "support/owned_folder.hpp"
#include "support/temporary_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string_view>
#include <system_error>

namespace cudacore::detail {

namespace {

struct PchFolder {
    std::mutex mutex;
    OwnedFolder folder;  // made once, in the temporary directory of that time
    pid_t owner = 0;     // the process that made it (a forked child must not remove it)
    std::set<std::string> warned;
};

// A folder is "cudacore-pch-" and six random characters, made and reclaimed as an OwnedFolder:
// its owner holds a lock on it for as long as it lives (a forked child shares the lock), and it
// gets its name only once that lock is held, so a folder by that name whose lock is free belongs
// to processes that are all gone, however they ended (SIGKILL included). A CLI ended by a signal
// removes it too (OwnedFolder registers it as it makes it).
constexpr std::string_view kFolderPrefix = "cudacore-pch-";

// NVRTC crashes (readdir of a null DIR*) when its opendir of --pch-dir fails, as it does with
// EMFILE: a compile with PCH needs a few descriptors beside those of the headers. Fewer free
// than this turns PCH off for the compile instead.
constexpr long kFreeDescriptorsForPch = 16;

// Why this process has too few free file descriptors for NVRTC's PCH; empty when it has enough
// (or cannot tell: no /proc). The words before "' " stay the same from call to call, so that
// warn_pch_off warns once.
std::string descriptor_problem() {
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
    const long soft = static_cast<long>(limit.rlim_cur);
    long open = 0;
    if (DIR* listing = ::opendir("/proc/self/fd")) {
        while (const dirent* entry = ::readdir(listing))
            if (entry->d_name[0] != '.') ++open;
        ::closedir(listing);
        --open;  // the listing's own
    } else if (errno != EMFILE && errno != ENFILE) {
        return {};
    } else {
        open = soft;
    }
    const long free = soft - open;
    if (free >= kFreeDescriptorsForPch) return {};
    return "the file descriptor limit (RLIMIT_NOFILE) '" + std::to_string(soft) + "' leaves " +
           std::to_string(std::max(0L, free)) + " free, and NVRTC's PCH needs " +
           std::to_string(kFreeDescriptorsForPch) + " (it crashes when it cannot open its folder)";
}

PchFolder& pch_folder() {
    static auto* folder = new PchFolder;  // never destroyed: usable from static destructors
    return *folder;
}

void remove_pch_folder() {
    PchFolder& folder = pch_folder();
    if (folder.owner == ::getpid()) folder.folder.remove();
}

}  // namespace

PchDirectory automatic_pch_directory(std::size_t heap_size) noexcept {
    try {
        PchFolder& folder = pch_folder();
        std::lock_guard lock(folder.mutex);
        std::filesystem::path parent;
        if (folder.folder.empty()) {
            const TemporaryDirectory temporary = temporary_directory();
            if (!temporary.problem.empty()) return {{}, temporary.problem};
            parent = temporary.path;
        } else {
            parent = folder.folder.path().parent_path();
        }
        if (std::string room = room_problem(parent, heap_size, "a precompiled header"); !room.empty())
            return {{}, room};
        if (std::string descriptors = descriptor_problem(); !descriptors.empty())
            return {{}, descriptors};
        if (folder.folder.empty()) {
            // Once per process: what processes that ended without their exit handler left.
            reclaim_abandoned_folders(parent, kFolderPrefix);
            try {
                folder.folder = OwnedFolder::make(parent, kFolderPrefix);
            } catch (const std::system_error& e) {
                return {{}, "cannot make a folder for precompiled headers in '" + parent.string() +
                                "': " + e.what()};
            }
            folder.owner = ::getpid();
            std::atexit(remove_pch_folder);
        }
        return {folder.folder.path().string(), {}};
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
