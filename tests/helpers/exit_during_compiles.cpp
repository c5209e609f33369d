// Compiles a small kernel on four threads without end and, DELAY_MS after each has compiled once
// (with "early": DELAY_MS after they started, while NVRTC is opened and its first compiles run),
// ends the process by exit(0) or by returning from main: NVRTC's exit-time destructors must not
// run under a compile or under its initialisation (they free what those use). A thread whose
// compile is refused because the process is exiting stops.
//
//   helper_exit_during_compiles DELAY_MS exit|return [early]
#include "cudacore/compile_errors.hpp"
#include "cudacore/program.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

int main(int argc, char** argv) {
    if (argc != 3 && !(argc == 4 && std::string(argv[3]) == "early")) {
        std::fprintf(stderr, "usage: helper_exit_during_compiles DELAY_MS exit|return [early]\n");
        return 2;
    }
    const bool early = argc == 4;
    static std::atomic<int> compiled_once{0};
    for (int t = 0; t < 4; ++t) {
        std::thread([t] {
            for (int n = 0;; ++n) {
                if (n == 1) ++compiled_once;
                try {
                    cudacore::ProgramOptions options;
                    options.arch = "sm_90";
                    options.name = "exit_" + std::to_string(t) + ".cu";
                    cudacore::Program program("extern \"C\" __global__ void k(int* p) { *p = " + std::to_string(n) + "; }\n",
                                              cudacore::SourceType::cxx, options);
                    program.compile(cudacore::CodeType::cubin);
                } catch (const cudacore::CompilerApiError&) {
                    return;  // the process is exiting
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "%s\n", e.what());
                }
            }
        }).detach();
    }
    while (!early && compiled_once.load() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[1])));
    std::printf("ending\n");
    std::fflush(stdout);
    if (std::string(argv[2]) == "return") return 0;
    std::exit(0);
}
