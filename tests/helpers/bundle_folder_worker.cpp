// Run by bundle_folder_test: writes out the test's header bundle as a folder (HeaderBundle::
// folder(), under $CUDACORE_CACHE_DIR), checks it byte for byte, and prints its path.
// Usage: helper_bundle_folder_worker HEADERS BYTES_EACH [compile | fallback]
// With "compile", also compiles a program that includes the first header, from the folder, and
// prints a second line: "code <hash of the PTX>".
// With "fallback", only compiles that program twice (whatever the folder does) and prints each
// PCH outcome and each warning: "outcome not_attempted", "warning <message>".
// Exit 0 on success; 2 bad usage, 3 the folder fails its check, 4 the compile did not use the
// folder, 5 the code lacks the header's value, 1 anything else (printed).
#include "bundle_folder_sample.hpp"

#include "headers/bundle_folder.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <cstdlib>
#include <functional>
#include <iostream>

int main(int argc, char** argv) {
    using namespace cudacore;
    if (argc < 3) {
        std::cerr << "usage: " << argv[0] << " HEADERS BYTES_EACH [compile]\n";
        return 2;
    }
    try {
        const HeaderBundle bundle = test::sample_folder_bundle(std::atoi(argv[1]), std::atoi(argv[2]));
        if (argc > 3 && std::string(argv[3]) == "fallback") {
            set_warning_handler([](const Warning& w) { std::cout << "warning " << w.message << "\n"; });
            ProgramOptions options;
            options.name = "folder_worker";
            options.arch = "sm_90";
            options.header_bundles = {bundle};
            for (int round = 0; round < 2; ++round) {  // a second program: the same headers
                Program program(test::kSampleFolderSource, SourceType::cxx, options);
                const std::string ptx(program.compile(CodeType::ptx).code());
                std::cout << "outcome " << to_string(program.pch_status().outcome) << "\n";
                if (ptx.find("1000") == std::string::npos) return 5;
            }
            return 0;
        }
        const std::filesystem::path folder = bundle.folder();
        if (const std::string problem = detail::bundle_folder_problem(folder, bundle, true); !problem.empty()) {
            std::cerr << folder << " fails its check: " << problem << "\n";
            return 3;
        }
        std::string code_line;
        if (argc > 3) {
            ProgramOptions options;
            options.name = "folder_worker";
            options.arch = "sm_90";
            options.header_bundles = {bundle};
            Program program(test::kSampleFolderSource, SourceType::cxx, options);
            const std::string ptx(program.compile(CodeType::ptx).code());
            if (ptx.find("1000") == std::string::npos) return 5;
            if (program.pch_status().outcome != PchOutcome::created &&
                program.pch_status().outcome != PchOutcome::used) {
                std::cerr << "no PCH: " << program.pch_status().reason << "\n";
                return 4;
            }
            code_line = "code " + std::to_string(std::hash<std::string>{}(ptx)) + "\n";
        }
        std::cout << folder.string() << "\n" << code_line;
        return 0;
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
