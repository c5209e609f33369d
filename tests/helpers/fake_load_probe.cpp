// Stands in for cudacore-load-probe in tests of checked_load: FAKE_LOAD_PROBE_MODE says how it
// ends (ok, error, crash, hang); each run appends its arguments to FAKE_LOAD_PROBE_LOG.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

int main(int argc, char** argv) {
    if (const char* log = std::getenv("FAKE_LOAD_PROBE_LOG")) {
        std::ofstream out(log, std::ios::app);
        for (int i = 1; i < argc; ++i) out << argv[i] << (i + 1 < argc ? " " : "\n");
    }
    const char* mode = std::getenv("FAKE_LOAD_PROBE_MODE");
    if (!mode || std::strcmp(mode, "ok") == 0) return 0;
    if (std::strcmp(mode, "error") == 0) {
        std::fprintf(stderr, "cuLibraryLoadData failed: CUDA_ERROR_INVALID_IMAGE\n");
        return 1;
    }
    if (std::strcmp(mode, "crash") == 0) kill(getpid(), SIGSEGV);
    if (std::strcmp(mode, "hang") == 0) std::this_thread::sleep_for(std::chrono::seconds(60));
    return 3;
}
