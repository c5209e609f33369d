// A variable of the process's environment read on a hot path: the value is read again only when
// the environment has changed, and equal values are the same pointer for the life of the process.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cudacore::detail {

// One environment variable, watched. Thread-safe. A change made through setenv, putenv, unsetenv
// or clearenv (or by assigning `environ`) is seen at the next value(); a string given to putenv
// and then written in place is seen too. Reading while another thread changes the environment is
// what getenv's is: undefined.
class WatchedVariable {
public:
    // `name` must live as long as the object (a string literal).
    explicit WatchedVariable(const char* name) noexcept;
    ~WatchedVariable();
    WatchedVariable(const WatchedVariable&) = delete;
    WatchedVariable& operator=(const WatchedVariable&) = delete;

    // The value now, or nullptr when unset. Equal values give the same pointer (interned, never
    // freed), so callers may compare and keep pointers. Costs a few loads while the environment
    // is unchanged (getenv scans every variable); throws std::bad_alloc only on a change.
    const std::string* value() const;

private:
    struct Snapshot;
    const Snapshot* read_again() const;
    const char* name_;
    std::size_t name_length_;
    mutable const Snapshot* current_ = nullptr;  // atomic_ref'd: the newest of made_
    // Every snapshot made, freed with the variable only: a reader may still hold an older one.
    mutable std::mutex made_mutex_;
    mutable std::vector<std::unique_ptr<const Snapshot>> made_;
};

}  // namespace cudacore::detail
