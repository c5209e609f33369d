#include "support/termination_signals.hpp"

#include "support/removed_on_signal.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace cudacore::detail {

namespace {

// Every signal whose default action ends the process without a core that a user or a tool sends
// to end it (timeout -s ALRM, kill -USR1). SIGPIPE is left to its course: a write to a closed pipe
// raises it in the writing thread, where blocked it would only stay pending.
constexpr int kTakenSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2};

std::atomic<bool> installed{false};
std::atomic<bool> taken_one{false};
sigset_t taken_signals;  // written once, before `installed` is set

// The thread that takes the signals: removes the temporaries, then ends the process by the
// signal's default action.
void wait_and_end(sigset_t taken) {
    int signal = 0;
    while (::sigwait(&taken, &signal) != 0) {
    }
    taken_one.store(true);
    remove_registered_paths();
    // The default action, now: set just before the signal is raised on this thread, where it
    // is unblocked.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    ::sigaction(signal, &default_action, nullptr);
    sigset_t just_this;
    sigemptyset(&just_this);
    sigaddset(&just_this, signal);
    ::pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
    ::raise(signal);
    ::_exit(128 + signal);  // not reached: the default action of each ends the process
}

}  // namespace

bool end_by_signal_after_removing_temporaries() noexcept {
    sigset_t taken;
    sigemptyset(&taken);
    for (const int signal : kTakenSignals) {
        struct sigaction current {};
        // An ignored signal is one the user asked this process not to take: left as it is.
        if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        sigaddset(&taken, signal);
    }
    ::pthread_sigmask(SIG_BLOCK, &taken, nullptr);
    try {
        std::thread(wait_and_end, taken).detach();
        taken_signals = taken;
        installed.store(true);
        return true;
    } catch (...) {  // no thread to be had (ulimit -u): the signals keep their usual course
        ::pthread_sigmask(SIG_UNBLOCK, &taken, nullptr);
        return false;
    }
}

bool termination_requested() noexcept {
    if (!installed.load()) return false;
    if (taken_one.load()) return true;
    // Blocked in every thread, a signal stays pending until the thread above takes it.
    sigset_t pending;
    if (::sigpending(&pending) != 0) return false;
    for (const int signal : kTakenSignals)
        if (sigismember(&taken_signals, signal) && sigismember(&pending, signal)) return true;
    return false;
}

void wait_if_terminating() noexcept {
    if (!termination_requested()) return;
    for (;;) ::pause();  // the signal thread ends the process
}

}  // namespace cudacore::detail
