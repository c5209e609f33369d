// Crash-safe whole-file writes (internal; used by ObjectCode::save, the disk program cache and
// the CLI). Reading: support/input_file.hpp.
#pragma once

#include "support/removed_on_signal.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Writes `data` to a new temporary file beside `path` (same directory, so rename is atomic),
// fsyncs it, renames it over `path` and fsyncs the directory. A crash at any point leaves either
// the previous file or the complete new one under `path`, plus at worst a stray temporary file
// whose name starts with "." and contains ".tmp-<pid>-" (the writer's process id; the name part
// before it is shortened where the whole would pass the file system's NAME_MAX). Every write,
// the fsync and the close are checked; on failure the temporary file is removed and the previous
// file is left as it was. `mode` is passed to open() (umask applies).
// Throws std::system_error whose what() names the failing call and the path (EISDIR when `path`
// names no file, such as "dir/"), std::invalid_argument for an empty path.
void write_file_atomically(const std::filesystem::path& path, std::string_view data, mode_t mode);

// What `cp` does to its destination, atomically: writes `data` to the regular file `path` names
// with write_file_atomically, after following symbolic links (a dangling one too: the file it
// points at is created, the link is kept). An existing file keeps its permission bits; a new one
// gets `mode`. Anything else (a directory, FIFO, device or socket) is refused and left as it is,
// as are an empty path and one ending in '/'. Throws std::invalid_argument for those refusals
// (what() says why: "it is a FIFO, not a regular file: refused, and left as it is") and
// std::system_error for failing calls.
void write_regular_file(const std::filesystem::path& path, std::string_view data, mode_t mode);

// The same, inside the directory open as `directory_fd` (every step relative to it, so a
// directory renamed or replaced by a symlink after it was opened is never written through).
// `display_path` names the file in errors.
void write_file_atomically_at(int directory_fd, const std::string& file_name,
                              std::string_view data, mode_t mode,
                              const std::filesystem::path& display_path);

// write_file_atomically_at in two steps, so that many files can share one flush (a cache
// importing thousands of entries): the constructor writes `data` to the temporary file (fsynced
// only with `sync`; without it the caller makes it durable before commit(), with syncfs or
// fsync), holding the writer's lock on it; commit() renames it over `file_name`. The directory is
// not fsynced: the caller does it once for all. Destroyed (or failed) before commit(), the
// temporary file is removed. The directory must stay open while it lives. Holds one descriptor.
// Throws std::system_error as write_file_atomically does. Movable, not copyable.
class PendingAtomicWrite {
public:
    PendingAtomicWrite(int directory_fd, const std::string& file_name, std::string_view data,
                       mode_t mode, const std::filesystem::path& display_path, bool sync);
    PendingAtomicWrite(PendingAtomicWrite&& other) noexcept;
    PendingAtomicWrite& operator=(PendingAtomicWrite&&) = delete;
    PendingAtomicWrite(const PendingAtomicWrite&) = delete;
    PendingAtomicWrite& operator=(const PendingAtomicWrite&) = delete;
    ~PendingAtomicWrite();
    // Renames the temporary file into place; throws std::system_error (the temporary removed).
    void commit();

private:
    void discard() noexcept;
    int directory_fd_;
    std::string file_name_;
    std::string temporary_;  // empty once renamed or removed
    std::filesystem::path display_path_;
    int lock_fd_ = -1;
    RemovedOnSignal removed_on_signal_;
};

// Whether `file_name` is a temporary file left by write_file_atomically.
bool is_atomic_write_temporary(std::string_view file_name) noexcept;
// The process id recorded in a temporary file's name, if it has one.
std::optional<pid_t> atomic_write_temporary_writer(std::string_view file_name) noexcept;
// Whether a writer still holds the temporary file `file_name` of the directory open as
// `directory_fd`: the writer holds an flock on it from its creation until it is renamed into
// place, so this is true for a live writer in any pid namespace. False when it is free, gone or
// cannot be opened. Never throws.
bool atomic_write_temporary_in_use(int directory_fd, const char* file_name) noexcept;

}  // namespace cudacore::detail
