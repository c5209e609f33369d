// A maker stalled right after mkdtemp (as SIGSTOP, or a starved machine, holds it), for tests of
// what others do to its folder meanwhile. Linked into a test program (after_mkdtemp.cpp), this
// mkdtemp makes the folder with the C library's, then, while an AfterMkdtemp lives, runs its
// action on folders whose name starts with its prefix before returning.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace cudacore::test {

class AfterMkdtemp {
public:
    // From now until destruction, `action` runs on each folder made whose name starts with
    // `prefix`. One at a time; not thread-safe.
    AfterMkdtemp(std::string prefix, std::function<void(const std::filesystem::path&)> action);
    ~AfterMkdtemp();
    AfterMkdtemp(const AfterMkdtemp&) = delete;
    AfterMkdtemp& operator=(const AfterMkdtemp&) = delete;
    // How many folders it ran on.
    int runs() const;
};

// Sets the folder's modification time `age` into the past: what a stall that long leaves.
void age_folder(const std::filesystem::path& folder, std::chrono::seconds age);

}  // namespace cudacore::test
