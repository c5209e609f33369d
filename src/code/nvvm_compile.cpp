#include "code/nvvm_compile.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "loader/nvvm_api.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

namespace cudacore::detail {

#ifdef CUDACORE_HAVE_NVVM
namespace {

struct NvvmProgramDeleter {
    void operator()(nvvmProgram program) const noexcept { nvvm().nvvmDestroyProgram(&program); }
};
using NvvmProgramHandle = std::unique_ptr<std::remove_pointer_t<nvvmProgram>, NvvmProgramDeleter>;

std::string program_log(const NvvmApi& api, nvvmProgram program) {
    size_t size = 0;
    if (api.nvvmGetProgramLogSize(program, &size) != NVVM_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    if (api.nvvmGetProgramLog(program, log.data()) != NVVM_SUCCESS) return {};
    log.resize(size - 1);
    return log;
}

std::string read_libdevice() {
    const std::string path = libdevice_path();
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw InvalidArgumentError("cannot read libdevice at '" + path + "'");
    if (bytes.empty()) throw InvalidArgumentError("libdevice at '" + path + "' is empty");
    return bytes;
}

// The code and log of a compiled program (PTX without its closing NULs; LTO-IR as it is).
NvvmOutput compiled_output(const NvvmApi& api, nvvmProgram raw, const std::string& object,
                           const std::vector<std::string>& flags) {
    NvvmOutput out;
    out.log = program_log(api, raw);
    size_t size = 0;
    check_nvvm(api.nvvmGetCompiledResultSize(raw, &size), "nvvmGetCompiledResultSize", object);
    out.code.resize(size);
    check_nvvm(api.nvvmGetCompiledResult(raw, out.code.data()), "nvvmGetCompiledResult", object);
    const bool lto = std::find(flags.begin(), flags.end(), "-gen-lto") != flags.end();
    if (!lto) {
        while (!out.code.empty() && out.code.back() == '\0') out.code.pop_back();  // PTX's NUL
    }
    return out;
}

}  // namespace
#endif

NvvmOutput compile_nvvm(const std::string& source, const ProgramOptions& options,
                        const std::vector<std::string>& flags) {
#ifdef CUDACORE_HAVE_NVVM
    const auto& api = nvvm();
    const std::string object = "NVVM program '" + options.name + "'";
    nvvmProgram raw = nullptr;
    check_nvvm(api.nvvmCreateProgram(&raw), "nvvmCreateProgram", object);
    NvvmProgramHandle program(raw);

    // Invalid IR is reported by the add call for bitcode and by compile for text; both become
    // a CompileError carrying NVVM's log.
    auto fail = [&](nvvmResult status, const std::string& what) {
        std::string log = program_log(api, raw);
        if (!log.empty() && log.back() != '\n') log += '\n';
        const char* name = api.nvvmGetErrorString(status);
        log += what + " failed: " + (name ? name : "NVVM error");
        throw CompileError(options.name, std::move(log), flags, "NVVM");
    };
    auto add = [&](const std::string& code, const std::string& name, bool lazy) {
        const nvvmResult status =
            lazy ? api.nvvmLazyAddModuleToProgram(raw, code.data(), code.size(), name.c_str())
                 : api.nvvmAddModuleToProgram(raw, code.data(), code.size(), name.c_str());
        if (status != NVVM_SUCCESS) fail(status, "adding module '" + name + "'");
    };
    add(source, options.name, false);
    for (const auto& extra : options.extra_sources) {
        if (extra.code.empty()) {
            throw InvalidArgumentError(object + ": extra source '" + extra.name + "' is empty");
        }
        add(extra.code, extra.name, false);
    }
    std::string libdevice;
    if (options.use_libdevice.value_or(false)) {
        libdevice = read_libdevice();  // must outlive the program: NVVM reads it at compile
        add(libdevice, "libdevice", true);
    }

    std::vector<const char*> argv;
    argv.reserve(flags.size());
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    const nvvmResult status = api.nvvmCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
    if (status != NVVM_SUCCESS) fail(status, "nvvmCompileProgram");

    return compiled_output(api, raw, object, flags);
#else
    (void)source;
    (void)options;
    (void)flags;
    nvvm_version();  // throws the LoaderError that explains the missing header
    return {};
#endif
}

}  // namespace cudacore::detail
