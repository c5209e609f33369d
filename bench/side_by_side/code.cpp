// Side by side, code (no GPU needed): compiling through NVRTC directly and through Program, and
// ObjectCode values made from bytes and serialized. The raw side calls the same run-time loaded
// NVRTC table cudacore uses (detail::nvrtc()).
#include "side_by_side/areas.hpp"
#include "side_by_side/kernels.hpp"

#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "loader/compiler_apis.hpp"

#include <stdexcept>

namespace cudacore::bench::side_by_side {

namespace {

// What a raw user writes around each NVRTC call: a failure ends the row with NVRTC's words.
void check_nvrtc(nvrtcResult status, const char* call, const std::string& object) {
    if (status == NVRTC_SUCCESS) return;
    const char* text = detail::nvrtc().nvrtcGetErrorString(status);
    throw std::runtime_error(std::string(call) + " failed for " + object + ": " + (text ? text : "NVRTC error"));
}

// The NVRTC sequence Program::compile runs, called directly: create, add the name expressions,
// compile with the same flags (computed once, outside the timing, as a raw user would), fetch the
// log, the cubin and the lowered names, destroy.
std::string raw_compile(const char* source, const char* name, const std::vector<std::string>& flags,
                        const std::vector<std::string>& name_expressions) {
    const auto& api = detail::nvrtc();
    nvrtcProgram program = nullptr;
    check_nvrtc(api.nvrtcCreateProgram(&program, source, name, 0, nullptr, nullptr),
                        "nvrtcCreateProgram", name);
    struct Destroy {
        nvrtcProgram* program;
        ~Destroy() { detail::nvrtc().nvrtcDestroyProgram(program); }
    } destroy{&program};
    for (const auto& expression : name_expressions)
        check_nvrtc(api.nvrtcAddNameExpression(program, expression.c_str()),
                            "nvrtcAddNameExpression", expression);
    std::vector<const char*> argv;
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    const nvrtcResult compiled =
        api.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    std::size_t log_size = 0;
    api.nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    api.nvrtcGetProgramLog(program, log.data());
    check_nvrtc(compiled, "nvrtcCompileProgram", std::string(name) + ": " + log);
    std::size_t size = 0;
    check_nvrtc(api.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize", name);
    std::string cubin(size, '\0');
    check_nvrtc(api.nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN", name);
    for (const auto& expression : name_expressions) {
        const char* lowered = nullptr;
        check_nvrtc(api.nvrtcGetLoweredName(program, expression.c_str(), &lowered),
                            "nvrtcGetLoweredName", expression);
    }
    return cubin;
}

// The 32 name expressions of cuda_std_many_source ("rotate_n<float, 1>" ...).
std::vector<std::string> specialization_names() {
    std::vector<std::string> names;
    for (const char* type : {"float", "double"})
        for (int n = 1; n <= specializations_per_type; ++n)
            names.push_back("rotate_n<" + std::string(type) + ", " + std::to_string(n) + ">");
    return names;
}

// `source` with a unique trailing comment: no cache of any system can answer its compile.
std::string fresh(const char* source) {
    static int unique = 0;
    return std::string(source) + "\n// repetition " + std::to_string(++unique) + "\n";
}

}  // namespace

ProgramOptions options_for(const std::string& arch, const std::string& name) {
    ProgramOptions options;
    options.arch = arch;
    options.name = name;
    return options;
}

std::vector<KernelSource> compiled_kernels() {
    return {
        {"small", small_source, {}, {2, 20}},
        {"cuda_std", cuda_std_source, {cuda_std_name_expression}, {1, 6}},
    };
}

void compile_operations(Runner& runner, const std::string& arch, const KernelSource& kernel) {
    const std::string program_name = "side_by_side_" + kernel.label + ".cu";
    const ProgramOptions options = options_for(arch, program_name);
    const std::vector<std::string> flags =
        Program(kernel.source, SourceType::cxx, options).flags(CodeType::cubin);
    runner.compare(
        "compile_" + kernel.label, kernel.compile_plan,
        {{"raw",
          [&] {
              return nanoseconds([&] {
                  raw_compile(kernel.source, program_name.c_str(), flags, kernel.name_expressions);
              });
          }},
         {"cudacore", [&] {
              return nanoseconds([&] {
                  Program program(kernel.source, SourceType::cxx, options);
                  program.compile(CodeType::cubin, kernel.name_expressions);
              });
          }}});
}

// Many specializations, and a second kernel with the same headers. Every repetition compiles a
// never-seen source, so no cache of any system can answer it.
void specialization_operations(Runner& runner, const std::string& arch) {
    const std::vector<std::string> names = specialization_names();
    const ProgramOptions many_options = options_for(arch, "side_by_side_cuda_std_many.cu");
    const std::vector<std::string> many_flags =
        Program(cuda_std_many_source, SourceType::cxx, many_options).flags(CodeType::cubin);
    runner.compare(
        "compile_cuda_std_32_specializations", {1, 5},
        {{"raw",
          [&] {
              const std::string source = fresh(cuda_std_many_source);
              return nanoseconds([&] {
                  raw_compile(source.c_str(), many_options.name.c_str(), many_flags, names);
              });
          },
          "one NVRTC program with the 32 name expressions"},
         {"cudacore", [&] {
              const std::string source = fresh(cuda_std_many_source);
              return nanoseconds([&] {
                  Program program(source, SourceType::cxx, many_options);
                  const ObjectCode code = program.compile(CodeType::cubin, names);
                  if (code.symbol_map().size() != names.size())
                      throw std::runtime_error("a specialization is missing");
              });
          },
          "one Program::compile with the 32 name expressions"}});

    // The first kernel with these headers is compiled (by the warm-up) before the timed ones.
    const std::vector<std::string> second_names = {cuda_std_second_name_expression};
    const ProgramOptions second_options = options_for(arch, "side_by_side_cuda_std_second.cu");
    const std::vector<std::string> second_flags =
        Program(cuda_std_second_source, SourceType::cxx, second_options).flags(CodeType::cubin);
    if (runner.wanted("compile_cuda_std_second_kernel")) {
        Program(fresh(cuda_std_source), SourceType::cxx, second_options)
            .compile(CodeType::cubin, {cuda_std_name_expression});
    }
    runner.compare(
        "compile_cuda_std_second_kernel", {1, 6},
        {{"raw",
          [&] {
              const std::string source = fresh(cuda_std_second_source);
              return nanoseconds([&] {
                  raw_compile(source.c_str(), second_options.name.c_str(), second_flags,
                              second_names);
              });
          },
          "NVRTC with cudacore's flags (--pch included)"},
         {"cudacore", [&] {
              const std::string source = fresh(cuda_std_second_source);
              return nanoseconds([&] {
                  Program program(source, SourceType::cxx, second_options);
                  program.compile(CodeType::cubin, second_names);
                  if (program.pch_status().outcome != PchOutcome::used)
                      throw std::runtime_error(std::string("PCH not used: ") +
                                               to_string(program.pch_status().outcome) + " " +
                                               program.pch_status().reason);
              });
          },
          "Program::compile, the headers' PCH made by an earlier kernel (default options)"}});
}

void object_code_operations(Runner& runner, const std::string& launch_cubin) {
    constexpr int batch = 20;
    runner.compare(
        "object_code_from_bytes", {10, 300},
        {{"raw",
          [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < batch; ++i) {
                             std::string bytes(launch_cubin);
                             if (bytes.empty()) throw std::runtime_error("no bytes");
                         }
                     }) / batch;
          },
          "a std::string copy of the cubin"},
         {"cudacore", [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < batch; ++i) {
                             ObjectCode code = ObjectCode::from_cubin(launch_cubin, "launch.cubin");
                             if (code.size() == 0) throw std::runtime_error("no bytes");
                         }
                     }) / batch;
          },
          "ObjectCode::from_cubin of a copy of the bytes"}});

    const ObjectCode code = ObjectCode::from_cubin(launch_cubin, "launch.cubin");
    runner.compare(
        "serialize_roundtrip", {10, 300},
        {{"raw",
          [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < batch; ++i) {
                             std::string out(launch_cubin);
                             std::string in(out);
                             if (in.size() != launch_cubin.size()) throw std::runtime_error("size");
                         }
                     }) / batch;
          },
          "the cubin bytes copied out and back in (no name, symbols or checksum)"},
         {"cudacore", [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < batch; ++i) {
                             ObjectCode copy = ObjectCode::deserialize(code.serialize());
                             if (copy.size() != code.size()) throw std::runtime_error("size");
                         }
                     }) / batch;
          },
          "ObjectCode::serialize + ObjectCode::deserialize (XXH3 checksum both ways)"}});
}

}  // namespace cudacore::bench::side_by_side
