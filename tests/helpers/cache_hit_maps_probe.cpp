// One compile_cached through a disk cache, in a process of its own, then what it mapped: for the
// tests that a cache hit opens neither NVRTC nor nvJitLink, and that a program of libcudacore alone
// loads none of the Redis tier's libraries.
//
//   helper_cache_hit_maps_probe CACHE_DIR SOURCE_FILE [INCLUDE_DIR]
//       compiles SOURCE_FILE (C++, sm_90 cubin) through a DiskProgramCache in CACHE_DIR and prints
//       "hit" or "miss", then one line "mapped NAME" for each of libnvrtc, libnvJitLink, libssl,
//       libcrypto, libhiredis and liburiparser that /proc/self/maps lists, then "bytes N" (the
//       code's size). Warnings go to stderr.
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: helper_cache_hit_maps_probe CACHE_DIR SOURCE_FILE [INCLUDE_DIR]\n";
        return 2;
    }
    using namespace cudacore;
    set_warning_handler([](const Warning& warning) { std::cerr << "warning: " << warning.message << "\n"; });
    std::ifstream file(argv[2]);
    std::stringstream source;
    source << file.rdbuf();
    ProgramOptions options;
    options.name = argv[2];
    options.arch = "sm_90";
    if (argc > 3) options.include_path = {argv[3]};
    Program program(source.str(), SourceType::cxx, options);
    DiskProgramCache cache(argv[1]);
    const ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
    std::cout << (cache.stats().hits > 0 ? "hit" : "miss") << "\n";
    std::ifstream maps("/proc/self/maps");
    std::string mapped;
    for (std::string line; std::getline(maps, line);) mapped += line + "\n";
    for (const char* name : {"libnvrtc", "libnvJitLink", "libssl", "libcrypto", "libhiredis", "liburiparser"})
        if (mapped.find(std::string("/") + name + ".so") != std::string::npos) std::cout << "mapped " << name << "\n";
    std::cout << "bytes " << code.size() << "\n";
    return 0;
}
