// A folder of this process's own in a folder other processes share (the temporary directory),
// which another process may remove only once every process that could use it is gone, however
// it ended (SIGKILL included) and whatever pid namespace it ran in.
//
// Its owner holds an flock on the folder's lock file (`owner.lock`) for as long as the folder is
// in use: the descriptor is kept open, and a forked child shares it. The folder is made under a
// private name (`<prefix>new-XXXXXX`), its lock file made and locked inside, and only then renamed
// to the name reclaimers act on (`<prefix>XXXXXX`, renameat2 with RENAME_NOREPLACE). So a folder
// under that name whose lock is free is abandoned, with no window in which a live folder looks
// abandoned. A reclaimer removes what it holds the lock of, through descriptors, and the folder's
// name last with rmdir: a name reused by a new folder (never empty: it holds its lock file) is
// never removed.
//
// The folder is registered for removal when a program that takes SIGINT, SIGTERM, SIGHUP... as
// the CLI does ends by one (removed_on_signal.hpp), in one step with its making: no moment exists
// in which the folder is made and not registered.
#pragma once

#include "support/removed_on_signal.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

namespace cudacore::detail {

class OwnedFolder {
public:
    OwnedFolder() = default;
    OwnedFolder(OwnedFolder&& other) noexcept;
    OwnedFolder& operator=(OwnedFolder&& other) noexcept;
    OwnedFolder(const OwnedFolder&) = delete;
    OwnedFolder& operator=(const OwnedFolder&) = delete;
    // Removes the folder and gives its lock back (remove()). Never throws.
    ~OwnedFolder();

    // Makes `<parent>/<prefix>XXXXXX`, locked and registered for removal on a signal. A folder
    // reclaimed while it was being made (its maker stalled) is made again. Throws
    // std::system_error naming the call, the folder and errno's text when it cannot be made.
    static OwnedFolder make(const std::filesystem::path& parent, std::string_view prefix);

    const std::filesystem::path& path() const noexcept { return path_; }
    bool empty() const noexcept { return path_.empty(); }

    // Removes the folder with everything in it, then closes the lock and ends the registration.
    // Idempotent; never throws.
    void remove() noexcept;
    // Forgets the folder without removing it (its registration ends, its lock is closed): for a
    // forked child, whose parent still uses both, or a folder renamed into place. Never throws.
    void release() noexcept;

private:
    // One attempt of make(): the folder, or an empty one to start again.
    static OwnedFolder make_once(const std::filesystem::path& parent, std::string_view prefix, bool last);

    std::filesystem::path path_;
    int folder_fd_ = -1;  // the folder itself, whatever it is named later
    int lock_fd_ = -1;    // holds the flock
    RemovedOnSignal removed_on_signal_;
};

// How old a folder must be before it is reclaimed when no lock says whether it is in use:
// - an unfinished private folder (`<prefix>new-XXXXXX`) whose lock is free or not made yet: its
//   maker may be between mkdtemp and its flock. Removing it then is safe (the maker finds it
//   gone, or works through the folder's descriptor and sees the removal, and starts again), so
//   the age only spares makers that retry; what a maker killed there left goes ten seconds later.
// - a public folder without a lock file (made by an older cudacore).
inline constexpr std::chrono::seconds kUnfinishedFolderAge{10};
inline constexpr std::chrono::hours kUnlockedFolderAge{24};

// Removes the folders `<prefix>XXXXXX` in `parent` whose lock is free (their owners are gone,
// never having removed them: killed, crashed, _exit), and the ones described above once older
// than their age. Folders of another user, symbolic links and other names are never
// touched. Errors leave a folder where it is. Never throws.
void reclaim_abandoned_folders(const std::filesystem::path& parent, std::string_view prefix) noexcept;

}  // namespace cudacore::detail
