// Temporary files and folders removed when the process is ended by SIGINT, SIGTERM, SIGHUP, SIGALRM,
// SIGUSR1 or SIGUSR2 (termination_signals.hpp).
// A signal ends a process without running destructors or exit handlers, so whatever cudacore
// made in $TMPDIR (the header trace folder, a PCH folder, an atomic write's temporary file)
// would stay. Whoever makes such a path registers it here for as long as it exists; the program
// that takes the signal (the CLI: see termination_signals.hpp) calls remove_registered_paths()
// before it ends.
//
// The registry is a fixed table in static storage (256 paths of up to PATH_MAX bytes): register
// and unregister take no lock and allocate nothing, and remove_registered_paths() is
// async-signal-safe, so it may also be called from a signal handler.
//
// A path must never exist unregistered while a removal could run: a folder made, then
// registered, stays when the signal comes between the two. So a path is made inside its
// registration (RemovedOnSignal::make): the slot is taken first, the removal waits for a slot
// being filled, and once a removal has begun nothing more is made.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>

namespace cudacore::detail {

// Registers `path` (absolute, or relative to the working directory at removal time) for as long
// as the object lives; moving it moves the registration. A path too long or a full table
// registers nothing (the path is then removed only by its owner, as before). Never throws;
// thread-safe.
//
// Use: a path made by cudacore is made through make() below, so that no moment exists in which
// it is made and not registered. The constructor registers a path made already (a file opened
// by a call make() cannot wrap); it is destroyed right before (or after) its owner removes it.
class RemovedOnSignal {
public:
    RemovedOnSignal() noexcept = default;
    // Registers `path`, made already; registers nothing once a removal has begun.
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

    // Makes a path and registers it in one step: a slot is taken, then `make` is called, and the
    // path it returns (absolute, or relative to the working directory) is what the slot holds.
    // A removal that begins while `make` runs waits for it (kRemovalWaitsForMake at most), so
    // what `make` made is removed with the rest. Once a removal has begun the process is ending:
    // `make` is not called, the call waits kEndingWait for that end, then throws
    // std::system_error(ECANCELED). What `make` throws passes through with nothing registered
    // (`make` removes what it made before it throws). Where nothing can be registered (a full
    // table, a path over PATH_MAX), `make` runs all the same and its path is not registered.
    // Thread-safe.
    static RemovedOnSignal make(const std::function<std::filesystem::path()>& make);

private:
    int slot_ = -1;
};

// How long a removal waits for a path being made (a few system calls, longer on a starved
// machine), and how long a maker waits for the end of a process whose removal has begun.
inline constexpr std::chrono::seconds kRemovalWaitsForMake{2};
inline constexpr std::chrono::seconds kEndingWait{10};

// The same as a pair of calls, for code that keeps a number rather than an object: a slot
// number (or -1 when nothing was registered) to give back to unregister_removed_on_signal.
int register_removed_on_signal(const char* path) noexcept;
void unregister_removed_on_signal(int slot) noexcept;

// Removes every registered path (a folder with everything in it; symbolic links are removed,
// not followed) and ends their registration; paths being made (RemovedOnSignal::make) are
// waited for first, with nothing removed meanwhile (the process runs on), and removed too. For a process that is ending: from the first call on, nothing more
// is registered or made. Async-signal-safe: only open, getdents64, unlinkat, close,
// clock_gettime and nanosleep, no allocation, no lock (called on the thread that is making a
// path, it gives that path up after kRemovalWaitsForMake). Errors leave a path where it is.
// Returns how many registered paths it was given.
int remove_registered_paths() noexcept;

// How many paths are registered now (for tests).
int registered_path_count() noexcept;

}  // namespace cudacore::detail
