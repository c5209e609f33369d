// Run by bundle_without_toolkit_test inside a mount namespace where the toolkit's include
// folders and the folder NVRTC was installed in are empty: checks that they are, that NVRTC is
// the one CUDACORE_NVRTC_PATH names, that a program fails without its bundle, and that with the
// bundle it compiles to the cubin the toolkit's folders gave.
// Usage: helper_bundle_compile BUNDLE_FILE REFERENCE_CUBIN SOURCE_FILE HIDDEN_FOLDER...
// Exit 0 on success; 2 bad usage, 3 a folder is not hidden, 4 compiled without the bundle,
// 5 the cubin differs, 6 NVRTC came from elsewhere, 7 the error without the bundle does not say
// how to bundle the missing header, 1 anything else (printed).
#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/program.hpp"
#include "loader/compiler_apis.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

namespace {

std::string read_all(const char* path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cudacore;
    if (argc < 5) {
        std::cerr << "usage: " << argv[0] << " BUNDLE REFERENCE SOURCE HIDDEN_FOLDER...\n";
        return 2;
    }
    for (int i = 4; i < argc; ++i) {
        std::error_code error;
        if (!std::filesystem::is_empty(argv[i], error) || error) {
            std::cerr << "the folder " << argv[i] << " is not hidden (not empty)\n";
            return 3;
        }
    }
    try {
        const std::string source = read_all(argv[3]);
        ProgramOptions options;
        options.name = "hidden_toolkit_program";
        options.arch = "sm_90";
        options.pch = false;
        try {
            Program(source, SourceType::cxx, options).compile(CodeType::cubin);
            std::cerr << "compiled without the bundle while the toolkit is hidden\n";
            return 4;
        } catch (const CompileError& e) {
            std::cout << "without the bundle: " << e.what() << "\n";
            // No toolkit folder is found: the error says which headers and how to bundle them.
            if (std::string(e.what()).find("cudacore bundle --header 'cuda/std/cmath'") ==
                std::string::npos) {
                std::cerr << "the error does not say how to bundle the header: " << e.what() << "\n";
                return 7;
            }
        }
        options.pch.reset();
        options.header_bundles = {HeaderBundle::load(argv[1])};
        Program program(source, SourceType::cxx, options);
        const ObjectCode code = program.compile(CodeType::cubin);
        const char* wanted = std::getenv("CUDACORE_NVRTC_PATH");
        if (wanted == nullptr || detail::nvrtc().path != wanted) {
            std::cerr << "NVRTC came from " << detail::nvrtc().path << ", not from "
                      << (wanted ? wanted : "CUDACORE_NVRTC_PATH (unset)") << "\n";
            return 6;
        }
        if (code.code() != read_all(argv[2])) {
            std::cerr << "the cubin from the bundle (" << code.code().size()
                      << " bytes) differs from the toolkit's\n";
            return 5;
        }
        std::cout << "with the bundle: " << code.code().size() << " bytes of cubin, as the toolkit's\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
