// Compiles four small programs to PTX with compile_many's processes strategy (three workers,
// no cache) and prints "compiled 4" and exits 0, or prints the error and exits 1. For the tests
// that make fork fail (tests/support/fault_injection.c).
#include "cudacore/compile_many.hpp"
#include "cudacore/program.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main() {
    using namespace cudacore;
    try {
        std::vector<Program> programs;
        for (int i = 0; i < 4; ++i) {
            ProgramOptions options;
            options.name = "p" + std::to_string(i);
            options.arch = "sm_90";
            options.toolkit_include_path = false;
            options.pch = false;
            programs.emplace_back("extern \"C\" __global__ void k" + std::to_string(i) +
                                      "(int* d) { d[threadIdx.x] += " + std::to_string(i) + "; }\n",
                                  SourceType::cxx, options);
        }
        CompileOptions many;
        many.strategy = CompileStrategy::processes;
        many.workers = 3;
        const std::vector<ObjectCode> codes = compile_many(programs, CodeType::ptx, {}, many);
        for (std::size_t i = 0; i < codes.size(); ++i) {
            if (codes[i].code().find("k" + std::to_string(i)) == std::string::npos) {
                std::printf("program %zu: wrong code\n", i);
                return 1;
            }
        }
        std::printf("compiled %zu\n", codes.size());
        return 0;
    } catch (const std::exception& e) {
        std::printf("%s\n", e.what());
        return 1;
    }
}
