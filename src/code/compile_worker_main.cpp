// cudacore-compile-worker: the check compile of a cached compile (src/code/snapshot_compile.cpp
// has both sides). Its own process, so that its clock and working directory can be moved without
// touching the caller's.
#include "code/snapshot_compile.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace {
long long clock_shift = 0;  // set from the request, before NVRTC is loaded
}


// NVRTC reads the time for __DATE__ and __TIME__ with time(): this definition,
// exported by the executable (CMakeLists.txt), is the one it calls. The real time comes from the
// system call, not from glibc's time(), which this one replaces.
extern "C" time_t time(time_t* out) {
    struct timespec now {};
    ::syscall(SYS_clock_gettime, CLOCK_REALTIME, &now);
    const time_t value = static_cast<time_t>(now.tv_sec + clock_shift);
    if (out) *out = value;
    return value;
}

extern "C" const char* __asan_default_options() {
    return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:"
           "detect_leaks=0";
}

int main() {
    return cudacore::detail::compile_worker_main([](long long seconds) { clock_shift = seconds; });
}
