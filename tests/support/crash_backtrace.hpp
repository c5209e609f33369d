// For programs that tests run many times to find rare crashes (teardown torture, the
// adopted-stream scenario): on SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, writes the crashing
// thread's name and frames to stderr ("library(+offset)" for code without symbols, which
// addr2line reads against the same build), then dies of the same signal, so the exit status is
// unchanged.
#pragma once

#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace cudacore::test {

inline void write_crash_backtrace(int signal_number) {
    char line[96];
    const int length = std::snprintf(line, sizeof line, "\n=== signal %d (%s) on thread %ld\n",
                                     signal_number, strsignal(signal_number),
                                     static_cast<long>(::syscall(SYS_gettid)));
    if (length > 0) (void)!::write(STDERR_FILENO, line, static_cast<std::size_t>(length));
    // The thread's name tells a driver thread (host functions, events) from the program's own.
    const int comm = ::open("/proc/thread-self/comm", O_RDONLY);
    if (comm >= 0) {
        char name[32];
        const ssize_t read = ::read(comm, name, sizeof name);
        ::close(comm);
        if (read > 0) {
            (void)!::write(STDERR_FILENO, "=== thread name: ", 17);
            (void)!::write(STDERR_FILENO, name, static_cast<std::size_t>(read));
        }
    }
    void* frames[64];
    const int count = ::backtrace(frames, 64);
    ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
}

inline void install_crash_backtrace() {
    // backtrace() loads libgcc on first use: not inside a signal handler.
    void* warm[1];
    ::backtrace(warm, 1);
    struct sigaction action {};
    action.sa_handler = [](int signal_number) {
        write_crash_backtrace(signal_number);
        ::signal(signal_number, SIG_DFL);
        ::raise(signal_number);
    };
    action.sa_flags = SA_RESETHAND;
    for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
        ::sigaction(signal_number, &action, nullptr);
}

}  // namespace cudacore::test
