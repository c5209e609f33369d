// cudacore-link-worker: links what a Linker with LinkerOptions::isolated sends on standard input
// and answers on descriptor 3 (src/code/nvjitlink_run.cpp has both sides). Run in a process of
// its own so that nvJitLink crashing on hostile input ends this process, not the caller's.
#include "code/nvjitlink_run.hpp"

// Under AddressSanitizer (the fuzzing build) a crash inside nvJitLink must still end this
// process by its signal, which is how the caller tells a crash from a failed link; and
// nvJitLink's own leaks are not this program's.
extern "C" const char* __asan_default_options() {
    return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:"
           "detect_leaks=0";
}

int main() { return cudacore::detail::link_worker_main(); }
