// Temporary files and folders removed when the process is ended by SIGINT, SIGTERM or SIGHUP.
// A signal ends a process without running destructors or exit handlers, so whatever cudacore
// made in $TMPDIR (the header trace folder, a PCH folder, an atomic write's temporary file)
// would stay. Whoever makes such a path registers it here for as long as it exists; the program
// that takes the signal (the CLI: see termination_signals.hpp) calls remove_registered_paths()
// before it ends.
//
// The registry is a fixed table in static storage (256 paths of up to PATH_MAX bytes): register
// and unregister take no lock and allocate nothing, and remove_registered_paths() is
// async-signal-safe, so it may also be called from a signal handler.
#pragma once

#include <filesystem>

namespace cudacore::detail {

// Registers `path` (absolute, or relative to the working directory at removal time) for as long
// as the object lives; moving it moves the registration. A path too long or a full table
// registers nothing (the path is then removed only by its owner, as before). Never throws;
// thread-safe.
//
// Use: made right after the path is created, destroyed right before (or after) its owner
// removes it, e.g. as a member declared after the path it guards:
//     path_ = make_the_folder();
//     removed_on_signal_ = detail::RemovedOnSignal(path_);
class RemovedOnSignal {
public:
    RemovedOnSignal() noexcept = default;
    explicit RemovedOnSignal(const std::filesystem::path& path) noexcept;
    RemovedOnSignal(RemovedOnSignal&& other) noexcept;
    RemovedOnSignal& operator=(RemovedOnSignal&& other) noexcept;
    RemovedOnSignal(const RemovedOnSignal&) = delete;
    RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;
    // Unregisters (the path itself is left alone: removing it is its owner's job).
    ~RemovedOnSignal();

    // Whether the path is registered (false for a default-made object, a path over PATH_MAX or a
    // full table).
    bool registered() const noexcept { return slot_ >= 0; }
    // Unregisters now.
    void release() noexcept;

private:
    int slot_ = -1;
};

// The same as a pair of calls, for code that keeps a number rather than an object: a slot
// number (or -1 when nothing was registered) to give back to unregister_removed_on_signal.
int register_removed_on_signal(const char* path) noexcept;
void unregister_removed_on_signal(int slot) noexcept;

// Removes every registered path (a folder with everything in it; symbolic links are removed,
// not followed) and ends their registration. Async-signal-safe: only open, getdents64, unlinkat
// and close, no allocation, no lock. Errors leave a path where it is. Returns how many registered
// paths it was given.
int remove_registered_paths() noexcept;

// How many paths are registered now (for tests).
int registered_path_count() noexcept;

}  // namespace cudacore::detail
