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

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace {

constexpr cudacore::CodeType kTypes[] = {cudacore::CodeType::cubin,  cudacore::CodeType::ptx,
                                         cudacore::CodeType::ltoir,  cudacore::CodeType::fatbin,
                                         cudacore::CodeType::object, cudacore::CodeType::library};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const unsigned choice = data[0] % 7;
    std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    cudacore::CodeType type;
    if (choice < 6) {
        type = kTypes[choice];
    } else {
        const auto detected = cudacore::try_detect_code_type(bytes);
        if (!detected) return 0;
        type = *detected;
    }
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
        if (what.find("crashed the link worker process") != std::string::npos)
            std::fprintf(stderr, "link fuzzer: nvJitLink crashed: %s\n", what.c_str());
    }
    return 0;
}
