// Shared helpers for cudacore's tests: GPU detection and running child processes.
#pragma once

#include <sys/types.h>

#include <gtest/gtest.h>

#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/warnings.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

namespace cudacore::test {

// Empty when a driver and at least one device are present; else why GPU tests must skip.
std::string gpu_unavailable_reason();

// Skips the current test, printing the reason, when there is no GPU.
#define CUDACORE_REQUIRE_GPU()                                                  \
    do {                                                                        \
        const std::string reason_ = ::cudacore::test::gpu_unavailable_reason(); \
        if (!reason_.empty()) GTEST_SKIP() << "no GPU: " << reason_;            \
    } while (0)

// Runs `kernel` (kSaxpySource's saxpy, from any code) on n random floats on device 0 and
// returns how many results differ from the CPU's.
std::size_t saxpy_mismatches(const Kernel& kernel, std::size_t n);

// Runs `call`, expecting an `Expected` (InvalidArgumentError unless named) whose message contains
// every one of `parts`. Returns a copy of what it caught, for further checks (empty when `call`
// threw nothing).
template <class Expected = InvalidArgumentError, class Call>
std::optional<Expected> expect_invalid(Call&& call, std::initializer_list<const char*> parts) {
    try {
        call();
        ADD_FAILURE() << "nothing thrown; expected " << typeid(Expected).name();
    } catch (const Expected& e) {
        for (const char* part : parts)
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
                << "missing \"" << part << "\" in: " << e.what();
        return e;
    }
    return std::nullopt;
}

// Collects the warnings cudacore reports while alive (the handler before it is put back after).
struct WarningLog {
    WarningLog() {
        previous = set_warning_handler([this](const Warning& warning) { seen.push_back(warning); });
    }
    ~WarningLog() { set_warning_handler(previous); }
    WarningLog(const WarningLog&) = delete;
    WarningLog& operator=(const WarningLog&) = delete;
    std::vector<Warning> seen;
    WarningHandler previous;
};

// Asks `done` every few milliseconds until it says true (true) or `limit` has passed (false):
// for work that background threads finish.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit);

// The folder of the running test executable; helper programs are built beside it.
std::filesystem::path executable_dir();
// A helper program built from tests/helpers/NAME.cpp.
std::filesystem::path helper_path(const std::string& name);
// A data file the tests read (tests/support/data/NAME, copied next to the test programs at build
// time, so a build moved to another machine carries it). Throws std::runtime_error naming the
// path when it is missing.
std::string read_test_data(const std::string& name);
// The cudacore command-line tool of this build.
std::filesystem::path cli_path();

struct ProcessResult {
    int exit_code = -1;  // -signal when killed by a signal
    std::string out;
    std::string err;
};

// Resource limits for a child process (0: unlimited, as inherited).
struct ProcessLimits {
    // RLIMIT_AS: bounds the child's memory, so a test of a reader that might bloat ends in an
    // allocation failure instead of exhausting the machine. Not applied in AddressSanitizer and
    // ThreadSanitizer builds (they reserve terabytes of address space).
    std::uint64_t address_space_bytes = 0;
    // RLIMIT_FSIZE with SIGXFSZ ignored: a write past this size fails with EFBIG, which stands in
    // for a full filesystem (no mount or root needed).
    std::uint64_t file_size_bytes = 0;
    // Killed (SIGKILL) after this long; the result then has exit_code -SIGKILL. 0: no limit.
    unsigned timeout_seconds = 0;
};

// Runs a program to completion, capturing stdout and stderr. `env` entries are added to (or
// replace in) the child's environment; an empty value removes the variable.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          const ProcessLimits& limits = {});

// The environment that preloads the fault-injection library (tests/support/fault_injection.c)
// into a child, with `faults` (CUDACORE_FAULT_* variables) added. Under AddressSanitizer the
// preloaded library comes before the sanitizer's runtime, so the runtime's link-order check is
// turned off for the child.
std::map<std::string, std::string> fault_injection_env(std::map<std::string, std::string> faults);

// Starts a program (argv[0] a path) without waiting for it, for tests that kill or race
// processes; its output goes where this process's does. Fails the test when it cannot start.
pid_t spawn(const std::vector<std::string>& argv);

// Waits for `pid`: its exit code, or minus the signal that ended it.
int wait_for(pid_t pid);

// A fresh, empty temporary directory, removed when the object is destroyed.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// Sets environment variable `name` to `value` (nullptr: unsets it) for the object's scope, then
// puts back what was there. Not thread-safe (the environment is the process's).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value);
    ScopedEnv(const char* name, const std::string& value) : ScopedEnv(name, value.c_str()) {}
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

// Makes `path` the working directory for the object's scope, then goes back. Not thread-safe.
class ScopedWorkingDirectory {
public:
    explicit ScopedWorkingDirectory(const std::filesystem::path& path);
    ~ScopedWorkingDirectory();
    ScopedWorkingDirectory(const ScopedWorkingDirectory&) = delete;
    ScopedWorkingDirectory& operator=(const ScopedWorkingDirectory&) = delete;
    // Moves on to `path`; the destructor still goes back to where the object started.
    void change_to(const std::filesystem::path& path) { std::filesystem::current_path(path); }

private:
    std::filesystem::path old_;
};

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& contents);

}  // namespace cudacore::test
