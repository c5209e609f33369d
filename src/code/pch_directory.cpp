#include "code/pch_directory.hpp"

#include "cudacore/warnings.hpp"
#include "support/temporary_directory.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

namespace cudacore::detail {

namespace {

struct PchFolder {
    std::mutex mutex;
    std::string path;  // made once, in the temporary directory of that time
    pid_t owner = 0;   // the process that made it (a forked child must not remove it)
    std::set<std::string> warned;
};

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
            std::string pattern = (parent / "cudacore-pch-XXXXXX").string();
            if (::mkdtemp(pattern.data()) == nullptr) {
                return {{}, "cannot make a folder for precompiled headers in '" + parent.string() +
                                "': " + std::error_code(errno, std::generic_category()).message()};
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
