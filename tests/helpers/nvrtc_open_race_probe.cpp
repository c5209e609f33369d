// Another part of the program runs its first NVRTC compile (NVRTC opened by itself, with dlopen,
// not through cudacore) while cudacore opens the same NVRTC for the first time, and then says what
// SIGINT, SIGTERM and SIGXFSZ do and sends itself SIGTERM:
//   MODE handler: SIGTERM has a handler of the program's (SA_SIGINFO, a mask), which ends the
//                 process with status 42; default: SIGTERM at its default action.
//   WHEN: microseconds after the other compile began that cudacore opens NVRTC; "window": once
//         NVRTC's own handler is seen in force on SIGTERM (inside its first compile's window);
//         "before": cudacore opens it first, then the other part of the program compiles.
// Prints "compile: ok", one line per signal ("SIGTERM: program|default|ignored|other") and
// "survived" when SIGTERM did not end it. NVRTC's handler ends the process with status 4.
//
//   helper_nvrtc_open_race_probe NVRTC_PATH handler|default WHEN
#include "loader/compiler_apis.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

void program_handler(int, siginfo_t*, void*) { ::_exit(42); }

// A program whose front end takes tens of milliseconds: NVRTC's window lasts as long.
std::string source() {
    std::string text;
    for (int i = 0; i < 400; ++i)
        text += "__device__ int f" + std::to_string(i) + "(int x) { return x * " + std::to_string(i) + " + 1; }\n";
    return text + "extern \"C\" __global__ void k(int* p) { *p = f1(*p); }\n";
}

// The compile of another part of the program, through its own handle on NVRTC.
bool foreign_compile(const char* path, std::atomic<bool>& began) {
    void* library = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) return false;
    using Create = int (*)(void**, const char*, const char*, int, const char* const*, const char* const*);
    using Compile = int (*)(void*, int, const char* const*);
    using Destroy = int (*)(void**);
    const auto create = reinterpret_cast<Create>(::dlsym(library, "nvrtcCreateProgram"));
    const auto compile = reinterpret_cast<Compile>(::dlsym(library, "nvrtcCompileProgram"));
    const auto destroy = reinterpret_cast<Destroy>(::dlsym(library, "nvrtcDestroyProgram"));
    if (!create || !compile || !destroy) return false;
    const std::string text = source();
    void* program = nullptr;
    if (create(&program, text.c_str(), "race.cu", 0, nullptr, nullptr) != 0) return false;
    began.store(true);
    const bool ok = compile(program, 0, nullptr) == 0;
    destroy(&program);
    return ok;
}

const char* describe(int signal, void (*program)(int, siginfo_t*, void*)) {
    struct sigaction now {};
    ::sigaction(signal, nullptr, &now);
    if (now.sa_handler == SIG_DFL) return "default";
    if (now.sa_handler == SIG_IGN) return "ignored";
    return now.sa_sigaction == program ? "program" : "other";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: helper_nvrtc_open_race_probe NVRTC_PATH handler|default WHEN\n");
        return 2;
    }
    const std::string mode = argv[2], when = argv[3];
    ::signal(SIGXFSZ, SIG_DFL);  // the program's, whatever it inherited
    if (mode == "handler") {
        struct sigaction action {};
        action.sa_sigaction = program_handler;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaddset(&action.sa_mask, SIGUSR1);
        ::sigaction(SIGTERM, &action, nullptr);
    }
    struct sigaction before {};
    ::sigaction(SIGTERM, nullptr, &before);
    if (when == "before") cudacore::detail::nvrtc();
    std::atomic<bool> began{false};
    bool compiled = false;
    std::thread other([&] { compiled = foreign_compile(argv[1], began); });
    while (!began.load()) std::this_thread::yield();
    if (when == "window") {
        // NVRTC's handler goes in about a millisecond into its first compile.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (struct sigaction now = before; now.sa_handler == before.sa_handler &&
                                            std::chrono::steady_clock::now() < give_up;)
            ::sigaction(SIGTERM, nullptr, &now);
    } else if (when != "before") {
        std::this_thread::sleep_for(std::chrono::microseconds(std::atoi(when.c_str())));
    }
    cudacore::detail::nvrtc();  // cudacore's first open of NVRTC
    other.join();
    std::printf("compile: %s\n", compiled ? "ok" : "failed");
    std::printf("SIGINT: %s\n", describe(SIGINT, program_handler));
    std::printf("SIGTERM: %s\n", describe(SIGTERM, program_handler));
    std::printf("SIGXFSZ: %s\n", describe(SIGXFSZ, program_handler));
    std::fflush(stdout);
    ::kill(::getpid(), SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::printf("survived\n");
    return 0;
}
