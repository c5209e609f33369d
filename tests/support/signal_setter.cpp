// A library that sets signal dispositions, as NVRTC does, for the tests of
// loader/signal_imports.hpp. Built with full RELRO (-z now), so its relocation slots are
// read-only once loaded; it calls sigaction() through its PLT (a jump slot) and signal() through
// its GOT (a GLOB_DAT slot: its address is taken).
#include <signal.h>

extern "C" {

// The library's own handler, as NVRTC has one (it would call exit(4)).
void signal_setter_handler(int) {}

sighandler_t signal_setter_signal(int signal, sighandler_t handler) { return ::signal(signal, handler); }

int signal_setter_sigaction(int signal, const struct sigaction* action, struct sigaction* old) {
    return ::sigaction(signal, action, old);
}

sighandler_t signal_setter_signal_through_pointer(int signal, sighandler_t handler) {
    sighandler_t (*volatile set)(int, sighandler_t) = &::signal;
    return set(signal, handler);
}

}  // extern "C"
