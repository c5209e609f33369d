// Running one of cudacore's helper programs (the load probe, the link worker) in a child
// process: bytes in on its standard input, its standard output and error (and optionally a reply
// channel, descriptor 3) collected, a time limit, and how it ended. Used where third-party code
// may crash on bytes from outside: the crash ends the child, and the caller reports it.
#pragma once

#include <spawn.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <functional>
#include <vector>

namespace cudacore::detail {

struct ChildProcessOptions {
    // Written to the child's standard input, which is then closed (the child sees its end).
    std::string_view input;
    // Killed (SIGKILL) when still running after this long; zero: no limit.
    std::chrono::milliseconds timeout{0};
    // A pipe as the child's descriptor 3, collected into ChildProcessResult::reply, so that what
    // the child's libraries print on standard output cannot mix with what it answers.
    bool reply_channel = false;
    // At most this much of standard output and of standard error is kept (the rest is read
    // and dropped, so the child never blocks on a full pipe).
    std::size_t max_output = 1 << 20;
    // A reply longer than this kills the child (ChildProcessResult::reply_too_long): a reply is
    // kept whole, so its length is what the caller's memory pays.
    std::size_t max_reply = std::size_t{1} << 30;
    // Asked every 10 ms while the child runs: true kills it (SIGKILL) as the time limit does
    // (ChildProcessResult::stopped). Empty: never.
    std::function<bool()> stop_requested{};
};

struct ChildProcessResult {
    int exit_code = -1;      // its exit status, when it exited
    int signal = 0;          // the signal that ended it, when one did
    bool timed_out = false;  // killed after ChildProcessOptions::timeout (or stopped)
    bool stopped = false;    // killed because ChildProcessOptions::stop_requested said so
    bool reply_too_long = false;  // killed because its reply passed ChildProcessOptions::max_reply
    std::size_t max_reply = 0;    // that bound
    std::chrono::milliseconds timeout{0};
    std::string out;    // standard output
    std::string err;    // standard error
    std::string reply;  // descriptor 3 (reply_channel)

    // Ended by a signal or the time limit rather than by exiting.
    bool crashed() const noexcept { return signal != 0 || timed_out; }
    // "exited with status 1", "killed by signal 11 (Segmentation fault)", "timed out after
    // 5000 ms".
    std::string how_it_ended() const;
};

// A child that could not be started (or watched): code() is the errno of `call`; what() names
// the program, the call, errno's name and text, and the limit it means ("'/x/cudacore-link-worker'
// could not be started: posix_spawn failed: EAGAIN (Resource temporarily unavailable): this user
// has reached its limit of processes (RLIMIT_NPROC, ulimit -u: 1)...").
class ChildStartError : public std::system_error {
public:
    ChildStartError(int error, std::string call, const std::filesystem::path& program);
    // The call that failed: "socketpair", "pipe2", "fcntl(F_DUPFD_CLOEXEC)", "posix_spawn".
    const std::string& call() const noexcept { return call_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string call_;
    std::string message_;
};

// Starts `program` with `args` (argv[1...]) and the caller's environment plus
// CUDACORE_PARENT_PID (this process's id, for die_with_parent_from_environment: our helper
// programs die with their parent), feeds it options.input, collects its output until it ends or
// the time limit passes, and waits for it. Once the child has exited, what it left open (a
// descendant holding its outputs) is read for a second at most (kDrainAfterExit). The child
// starts with default signal dispositions
// and an empty signal mask. The calling process is never affected by the child's signals
// (SIGPIPE included). Throws ChildStartError when the child cannot be started. Thread-safe.
ChildProcessResult run_child_process(const std::filesystem::path& program,
                                     const std::vector<std::string>& args,
                                     const ChildProcessOptions& options);

// The caller's environment with CUDACORE_PARENT_PID set to this process's id: what a helper
// program is started with, so that it can die with its parent (parent_death.hpp).
std::vector<std::string> helper_environment();

// Initializes `attributes` (posix_spawnattr_init; the caller destroys them) so that the child
// starts with default handling of every signal and none blocked, whatever the caller set (an
// ignored SIGSEGV would be inherited and turn a crash into a hang; the CLI blocks SIGINT and
// SIGTERM in its threads).
void init_default_signal_attributes(posix_spawnattr_t& attributes) noexcept;

// Where the helper program `name` is: `chosen` when not empty, else $`env_var` when set, else
// beside the library (a build tree) or in ../libexec/cudacore/ from it (an installation).
// Throws LoaderError listing the places searched and the variable to set.
std::filesystem::path find_helper_program(const std::string& name, const char* env_var,
                                          const std::filesystem::path& chosen);

}  // namespace cudacore::detail
