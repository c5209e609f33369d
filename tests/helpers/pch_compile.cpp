// Compiles a C++ program with automatic precompiled headers (so this process makes its PCH
// folder in $TMPDIR), prints "created" when NVRTC made a PCH (else the outcome and reason), and
// then waits to be killed (stay) or exits normally (exit), for the PCH folder tests.
//
//   helper_pch_compile stay|exit NAME
#include "cudacore/program.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: helper_pch_compile stay|exit NAME\n");
        return 2;
    }
    using namespace cudacore;
    try {
        ProgramOptions options;
        options.name = argv[2];
        options.arch = "sm_90";
        options.toolkit_include_path = false;
        options.define_macro = {{std::string("PCH_HELPER_") + argv[2], std::nullopt}};
        Program program("extern \"C\" __global__ void k(int* d) { d[threadIdx.x] += 1; }\n",
                        SourceType::cxx, options);
        program.compile(CodeType::ptx);
        const PchStatus& status = program.pch_status();
        if (status.outcome == PchOutcome::created) std::printf("created\n");
        else std::printf("%s: %s\n", to_string(status.outcome).c_str(), status.reason.c_str());
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
    }
    std::fflush(stdout);
    if (std::strcmp(argv[1], "stay") == 0)
        for (;;) ::pause();
    return 0;  // the exit handlers remove this process's PCH folder
}
