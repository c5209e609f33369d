// Does once each of what cudacore marks in its "cudacore" domain, for the test that records it
// through NVTX_INJECTION64_PATH (tests/helpers/nvtx_recorder.cpp):
//
//   helper_tracing_cudacore CACHE_DIR
//       compile_cached of a program named "twice.cu" through a TieredProgramCache (memory, then
//       a disk cache in CACHE_DIR), twice (a miss with its compile and stores, then a memory
//       hit), then once more through a new memory tier over the same disk cache (a disk hit); a
//       link of its PTX with the Linker; a load of the code (which fails without a GPU, after
//       its range began). With a GPU, also instantiates a graph and allocates 1 MiB from a
//       CachingMemoryResource (the pool grows), and prints "gpu yes" ("gpu no" without). Prints
//       "pch OUTCOME" (the compile's PCH outcome), the cubin's size as "bytes N", and "done";
//       exits 0, or 1 with the error.
#include "cudacore/cached_compile.hpp"
#include "cudacore/caching_memory_resource.hpp"
#include "cudacore/device.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/system.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include <iostream>
#include <memory>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: helper_tracing_cudacore CACHE_DIR\n";
        return 64;
    }
    try {
        using namespace cudacore;
        auto disk = std::make_shared<DiskProgramCache>(argv[1]);
        TieredProgramCache cache({std::make_shared<MemoryProgramCache>(), disk});
        ProgramOptions options;
        options.arch = "sm_90";
        options.name = "twice.cu";
        const std::string source = R"(extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2; })";
        Program program(source, SourceType::cxx, options);
        const ObjectCode cubin = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
        std::cout << "pch " << to_string(program.pch_status().outcome) << "\n";
        std::cout << "bytes " << cubin.size() << "\n";
        Program again(source, SourceType::cxx, options);
        compile_cached(again, CodeType::cubin, {}, {.cache = &cache});
        TieredProgramCache fresh_memory({std::make_shared<MemoryProgramCache>(), disk});
        Program from_disk(source, SourceType::cxx, options);
        compile_cached(from_disk, CodeType::cubin, {}, {.cache = &fresh_memory});

        Program for_ptx(source, SourceType::cxx, options);
        LinkerOptions link_options;
        link_options.arch = "sm_90";
        link_options.name = "twice-link";
        Linker({for_ptx.compile(CodeType::ptx)}, link_options).link(CodeType::cubin);

        try {
            cubin.load();
        } catch (const Error&) {
            // No GPU here (or not an sm_90 one): the load's range began before the driver was asked.
        }
        const bool gpu = system::driver_available() && system::device_count() > 0;
        if (gpu) {
            Device device(0);
            device.set_current();
            Graph graph = Graph::create(device);
            graph.add_empty({});
            const GraphExec exec = graph.instantiate();
            auto pool = CachingMemoryResource::create(device);
            Stream stream = device.create_stream();
            Buffer buffer = pool->allocate(1 << 20, stream);
            stream.sync();
        }
        std::cout << "gpu " << (gpu ? "yes" : "no") << "\n";
        std::cout << "done\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "helper_tracing_cudacore: " << e.what() << "\n";
        return 1;
    }
}
