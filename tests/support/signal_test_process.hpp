// Starting a program for the signal and exit tests: SIGINT, SIGTERM and SIGHUP at their default
// actions and unblocked (whatever the test runner inherited: a background shell ignores
// SIGINT), extra environment variables, and standard output and error sent to a file or to a
// pipe the test reads, as a user's shell would.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace cudacore::test {

struct SignalTestProcess {
    pid_t pid = -1;
    int output = -1;  // the pipe's read end, when output went to a pipe
};

// `output_file` empty: output to a pipe (SignalTestProcess::output). `own_process_group`: the
// process leads a process group of its own, as a shell's job does. Returns pid -1 when it cannot
// start.
inline SignalTestProcess start_signal_test_process(const std::vector<std::string>& argv,
                                                   const std::map<std::string, std::string>& env,
                                                   const std::string& output_file,
                                                   bool own_process_group = false) {
    std::vector<std::string> variables;
    for (char** entry = environ; *entry; ++entry) {
        const std::string variable = *entry;
        if (!env.count(variable.substr(0, variable.find('=')))) variables.push_back(variable);
    }
    for (const auto& [key, value] : env)
        if (!value.empty()) variables.push_back(key + "=" + value);
    std::vector<char*> envp, args;
    for (auto& v : variables) envp.push_back(v.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_copy = argv;
    for (auto& a : argv_copy) args.push_back(a.data());
    args.push_back(nullptr);

    SignalTestProcess started;
    int fds[2] = {-1, -1};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (output_file.empty()) {
        if (::pipe2(fds, O_CLOEXEC) != 0) return started;
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
    }
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&defaults, signal);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (own_process_group) {
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&attributes, 0);
    }
    posix_spawnattr_setflags(&attributes, flags);
    const int error = ::posix_spawn(&started.pid, args[0], &actions, &attributes, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (fds[1] >= 0) ::close(fds[1]);
    if (error != 0) {
        if (fds[0] >= 0) ::close(fds[0]);
        started.pid = -1;
        return started;
    }
    started.output = fds[0];
    return started;
}

// Reads what is left on the pipe (when there is one) and waits for the process: its exit status,
// or minus the signal that ended it.
inline int finish_signal_test_process(SignalTestProcess& process, std::string* output = nullptr) {
    if (process.output >= 0) {
        char buffer[4096];
        for (;;) {
            const ssize_t n = ::read(process.output, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            if (output) output->append(buffer, static_cast<std::size_t>(n));
        }
        ::close(process.output);
        process.output = -1;
    }
    int status = 0;
    while (::waitpid(process.pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Waits up to `limit` for `pid` (a child, or an orphan this process reaps as a subreaper):
// its status as finish_signal_test_process gives it, or nullopt-like INT_MIN when still running.
inline int wait_for_child(pid_t pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        int status = 0;
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        if (done < 0 && errno != EINTR) return -1000;  // not ours
        if (std::chrono::steady_clock::now() > deadline) return -2000;  // still running
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace cudacore::test
