// Sends itself SIGTERM while four threads compile a <cuda/std> kernel, with SIGTERM at the
// disposition MODE asks for, and says what happened:
//   handler: a handler (SA_SIGINFO, a mask) is installed; SIGTERM is sent once the first compile
//            is in NVRTC's front end, and when that handler has run, the program replaces it by
//            a second one (as a program may at any moment) and sends SIGTERM again. Prints
//            "first handler ran N times, second M times" and whether the second is still
//            installed with its flags and mask once the compiles are done.
//   ignore:  SIGTERM is ignored; prints whether it still is once the compiles are done.
//   default: SIGTERM at its default action: the process must end by it. Prints "survived" if not.
// Then each compile's result ("compile I: ptx"). Each thread's program includes DIR/gate<I>.h
// first: the first of them opened (inotify) says that NVRTC's front end runs, before the
// <cuda/std> headers are parsed. SIGTERM is sent only once all four threads are about to compile;
// "finished before the signals: N" counts the compiles done when the signals had been taken.
//
//   helper_compile_signal_probe handler|ignore|default DIR
#include "cudacore/program.hpp"

#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4;
volatile sig_atomic_t first_calls = 0;
volatile sig_atomic_t second_calls = 0;

void first_handler(int, siginfo_t*, void*) { first_calls = first_calls + 1; }
void second_handler(int, siginfo_t*, void*) { second_calls = second_calls + 1; }

void install(void (*handler)(int, siginfo_t*, void*)) {
    struct sigaction action {};
    action.sa_sigaction = handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGUSR1);
    ::sigaction(SIGTERM, &action, nullptr);
}

std::string source_for(const std::string& dir, int thread) {
    return "#include \"" + dir + "/gate" + std::to_string(thread) + ".h\"\n" + R"(
#include <cuda/std/complex>
#include <cuda/std/tuple>
#include <cuda/std/array>
extern "C" __global__ void k(cuda::std::complex<float>* z, float* out) {
    cuda::std::array<float, 4> a{GATE};
    out[threadIdx.x] = cuda::std::abs(z[threadIdx.x]) + cuda::std::get<0>(cuda::std::make_tuple(a[0]));
}
)";
}

// Waits until a file in the watched folder is opened.
bool wait_for_open(int watch) {
    alignas(inotify_event) char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(watch, buffer, sizeof buffer);
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

// Sends SIGTERM to this process and, with a handler installed, waits until it has run.
void send_sigterm(const std::string& mode, volatile sig_atomic_t& calls) {
    const int before = calls;
    ::kill(::getpid(), SIGTERM);
    if (mode != "handler") return;
    while (calls == before) std::this_thread::yield();
}

void report_disposition(const std::string& mode) {
    struct sigaction now {};
    ::sigaction(SIGTERM, nullptr, &now);
    if (mode == "ignore") {
        std::printf("still ignored: %s\n", now.sa_handler == SIG_IGN ? "yes" : "no");
        return;
    }
    std::printf("first handler ran %d times, second %d times\n", static_cast<int>(first_calls),
                static_cast<int>(second_calls));
    const bool same = (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == second_handler &&
                      (now.sa_flags & SA_RESTART) && sigismember(&now.sa_mask, SIGUSR1) == 1;
    std::printf("second handler still installed with its flags and mask: %s\n", same ? "yes" : "no");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: helper_compile_signal_probe handler|ignore|default DIR\n");
        return 2;
    }
    const std::string mode = argv[1], dir = argv[2];
    if (mode == "handler") install(first_handler);
    if (mode == "ignore") ::signal(SIGTERM, SIG_IGN);
    for (int i = 0; i < kThreads; ++i)
        std::ofstream(dir + "/gate" + std::to_string(i) + ".h") << "#define GATE " << i << "\n";
    const int watch = ::inotify_init1(IN_CLOEXEC);
    if (watch < 0 || ::inotify_add_watch(watch, dir.c_str(), IN_OPEN) < 0) return 3;

    std::latch about_to_compile(kThreads);
    std::atomic<int> finished{0};
    std::vector<std::string> results(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
            cudacore::ProgramOptions options;
            options.arch = "sm_90";
            options.pch = false;
            cudacore::Program program(source_for(dir, i), cudacore::SourceType::cxx, options);
            about_to_compile.count_down();
            try {
                const auto code = program.compile(cudacore::CodeType::ptx);
                results[i] = code.code().find(".entry k") != std::string_view::npos ? "ptx" : "no kernel";
            } catch (const std::exception& error) {
                results[i] = std::string("error: ") + error.what();
            }
            ++finished;
        });
    }
    about_to_compile.wait();
    if (!wait_for_open(watch)) return 4;
    send_sigterm(mode, first_calls);
    if (mode == "handler") {
        install(second_handler);  // the program changes its handler during the compiles
        send_sigterm(mode, second_calls);
    }
    const int finished_before = finished.load();
    for (auto& thread : threads) thread.join();
    if (mode == "default") std::printf("survived\n");
    std::printf("finished before the signals: %d\n", finished_before);
    for (int i = 0; i < kThreads; ++i) std::printf("compile %d: %s\n", i, results[i].c_str());
    report_disposition(mode);
    return 0;
}
