// STARTUP_CLOCK=1: prints "clock NAME NS" lines (CLOCK_REALTIME, as Python's time.time_ns) at
// main's start ("main"), when the work is checked ("work"), when main returns ("done") and from
// the last atexit handler ("atexit"), so that bench/startup.py can split a run into its phases.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <ctime>

inline void startup_clock(const char* what) {
    static const bool wanted = std::getenv("STARTUP_CLOCK") != nullptr;
    if (!wanted) return;
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    std::fprintf(stderr, "clock %s %lld\n", what, static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
}

// Called first in main: the "main" line, and an atexit handler that runs after those registered
// later (the libraries' own, registered on first use), before static destructors.
inline void startup_clock_start() {
    startup_clock("main");
    std::atexit([] { startup_clock("atexit"); });
}
