// The isolated link (LinkerOptions::isolated) on arbitrary inputs, as `cudacore link` runs it.
// The first byte chooses the declared code type as in code_validation_fuzzer.cpp (the seeds are
// shared); inputs that pass the Linker's structural checks are linked by nvJitLink in the link
// worker process. Whatever nvJitLink does with them, this process must only ever see a
// LinkError: a crash of nvJitLink ends the worker, and is counted here, one line each on
// standard error ("link fuzzer: nvJitLink crashed: ..."), which scripts/fuzz.sh totals.
#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/object_code.hpp"
#include "code_input.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto read = cudacore::fuzz::read_code_input(data, size);
    if (!read) return 0;
    const cudacore::CodeType type = read->type;
    std::string bytes = std::move(read->bytes);
    cudacore::LinkerOptions options;
    options.name = "fuzz";
    options.arch = "sm_90";
    options.link_time_optimization = type == cudacore::CodeType::ltoir;
    options.isolated = true;
    options.isolated_timeout = std::chrono::seconds(20);  // a hang counts as a crash, not a stall
    try {
        cudacore::Linker linker({cudacore::ObjectCode::from_bytes(type, std::move(bytes), "fuzz.input")},
                                options);
        linker.link();
    } catch (const cudacore::InvalidArgumentError&) {  // refused by the structural checks
    } catch (const cudacore::LinkError& e) {
        const std::string what = e.what();
        if (what.find("the link worker process") != std::string::npos)
            std::fprintf(stderr, "link fuzzer: nvJitLink crashed: %s\n", what.c_str());
    }
    return 0;
}
