// Side-by-side timings, C++ half: every operation of the comparison timed through the raw driver
// and NVRTC calls and through cudacore, in one run. The raw calls go through the same run-time
// loaded tables cudacore uses (detail::driver(), detail::nvrtc()), so both sides call the very
// same driver and compiler functions. bench/side_by_side.py runs this program, adds cuda.core
// and CuPy, and prints the table.
//
// Output: one JSON object per line on stdout.
//   {"environment": {...}}                                          first: GPU, driver, arch, flags
//   {"operation": OP, "system": "raw"|"cudacore", "median_ns": N, "repetitions": R, "note": ...}
//   {"operation": OP, "system": ..., "skipped": REASON}             could not be timed here
// Each figure is the median of R repetitions after warm-up; raw and cudacore repetitions
// alternate (and swap order) so that drift (clocks, caches, other load) hits both alike. Tiny
// operations are timed in batches and reported per operation. Without a GPU only the CPU-only
// operations run (compile, caches, ObjectCode from bytes, serialization); the others are
// reported skipped with the reason.
//
//   side_by_side [--quick] [--only OP,OP...]
#include "side_by_side_kernels.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/system.hpp"
#include "cudacore/version.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/driver_api.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

using namespace cudacore;
using namespace cudacore::bench::side_by_side;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The nanoseconds `work` takes, once.
template <class Work>
double nanoseconds(Work&& work) {
    const auto start = Clock::now();
    work();
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

void emit(const json& line) { std::cout << line.dump() << std::endl; }

void emit_skipped(const std::string& operation, const std::string& system, const std::string& why) {
    emit({{"operation", operation}, {"system", system}, {"skipped", why}});
}

double median(std::vector<double> samples) {
    const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
    std::nth_element(samples.begin(), middle, samples.end());
    if (samples.size() % 2 == 1) return *middle;
    return (*middle + *std::max_element(samples.begin(), middle)) / 2;
}

// One repetition of one system: returns the nanoseconds per operation of its timed region
// (setup and teardown around that region stay untimed).
using Repetition = std::function<double()>;

struct Side {
    Side(std::string system_, Repetition repetition_, std::string note_ = {})
        : system(std::move(system_)), repetition(std::move(repetition_)), note(std::move(note_)) {}
    std::string system;
    Repetition repetition;  // empty: the system does not offer the operation
    std::string note;       // what exactly is timed, when the name does not say it
};

struct Plan {
    int warmup = 3;
    int repetitions = 100;
};

class Runner {
public:
    Runner(bool quick, std::set<std::string> only) : quick_(quick), only_(std::move(only)) {}

    bool wanted(const std::string& operation) const {
        return only_.empty() || only_.contains(operation);
    }

    // Warm-up, then repetitions alternating between the sides (and their order), then one line
    // per side. A side that throws is reported skipped with the error and the others go on.
    void compare(const std::string& operation, Plan plan, std::vector<Side> sides) {
        if (!wanted(operation)) return;
        if (quick_) plan = {std::min(plan.warmup, 1), std::max(3, plan.repetitions / 20)};
        std::vector<std::vector<double>> samples(sides.size());
        std::vector<std::optional<std::string>> failures(sides.size());
        auto run = [&](std::size_t index) {
            if (failures[index] || !sides[index].repetition) return;
            try {
                const double ns = sides[index].repetition();
                samples[index].push_back(ns);
            } catch (const std::exception& error) {
                failures[index] = error.what();
            }
        };
        for (int i = 0; i < plan.warmup; ++i)
            for (std::size_t s = 0; s < sides.size(); ++s) run(s);
        for (auto& side_samples : samples) side_samples.clear();
        for (int i = 0; i < plan.repetitions; ++i) {
            for (std::size_t k = 0; k < sides.size(); ++k)
                run(i % 2 == 0 ? k : sides.size() - 1 - k);
        }
        for (std::size_t s = 0; s < sides.size(); ++s) {
            if (!sides[s].repetition) continue;
            if (failures[s]) {
                emit_skipped(operation, sides[s].system, *failures[s]);
                continue;
            }
            json line = {{"operation", operation},
                         {"system", sides[s].system},
                         {"median_ns", median(samples[s])},
                         {"repetitions", samples[s].size()}};
            if (!sides[s].note.empty()) line["note"] = sides[s].note;
            emit(line);
        }
    }

    void skip(const std::string& operation, const std::vector<std::string>& systems,
              const std::string& why) {
        if (!wanted(operation)) return;
        for (const auto& system : systems) emit_skipped(operation, system, why);
    }

private:
    bool quick_;
    std::set<std::string> only_;
};

// ---------------------------------------------------------------------------------------------
// Compilation (no GPU needed)

ProgramOptions options_for(const std::string& arch, const std::string& name) {
    ProgramOptions options;
    options.arch = arch;
    options.name = name;
    return options;
}

// The NVRTC sequence Program::compile runs, called directly: create, add the name expressions,
// compile with the same flags (computed once, outside the timing, as a raw user would), fetch the
// log, the cubin and the lowered names, destroy.
std::string raw_compile(const char* source, const char* name, const std::vector<std::string>& flags,
                        const std::vector<std::string>& name_expressions) {
    const auto& api = detail::nvrtc();
    nvrtcProgram program = nullptr;
    detail::check_nvrtc(api.nvrtcCreateProgram(&program, source, name, 0, nullptr, nullptr),
                        "nvrtcCreateProgram", name);
    struct Destroy {
        nvrtcProgram* program;
        ~Destroy() { detail::nvrtc().nvrtcDestroyProgram(program); }
    } destroy{&program};
    for (const auto& expression : name_expressions)
        detail::check_nvrtc(api.nvrtcAddNameExpression(program, expression.c_str()),
                            "nvrtcAddNameExpression", expression);
    std::vector<const char*> argv;
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    const nvrtcResult compiled =
        api.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    std::size_t log_size = 0;
    api.nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    api.nvrtcGetProgramLog(program, log.data());
    detail::check_nvrtc(compiled, "nvrtcCompileProgram", std::string(name) + ": " + log);
    std::size_t size = 0;
    detail::check_nvrtc(api.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize", name);
    std::string cubin(size, '\0');
    detail::check_nvrtc(api.nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN", name);
    for (const auto& expression : name_expressions) {
        const char* lowered = nullptr;
        detail::check_nvrtc(api.nvrtcGetLoweredName(program, expression.c_str(), &lowered),
                            "nvrtcGetLoweredName", expression);
    }
    return cubin;
}

struct KernelSource {
    std::string label;  // "small", "cuda_std"
    const char* source;
    std::vector<std::string> name_expressions;
    Plan compile_plan;
};

// A private directory for the disk cache, removed at exit.
struct TempDirectory {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("cudacore-side-by-side-" + std::to_string(::getpid()));
    ~TempDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

void compile_operations(Runner& runner, const std::string& arch, const TempDirectory& cache_dir) {
    const std::vector<KernelSource> kernels = {
        {"small", small_source, {}, {2, 20}},
        {"cuda_std", cuda_std_source, {cuda_std_name_expression}, {1, 6}},
    };
    for (const auto& kernel : kernels) {
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

        // Cache hits: cudacore only (the raw calls have no cache). A hit computes the key (the
        // canonical flags and a SHA-256 of source and flags) and, on disk, reads and checks a file.
        MemoryProgramCache memory_cache;
        DiskProgramCache disk_cache(cache_dir.path);
        Program program(kernel.source, SourceType::cxx, options);
        const std::vector<std::string>& names = kernel.name_expressions;
        auto hit = [&](ProgramCache* cache_pointer) {
            return [&, cache_pointer] {
                ProgramCache& cache = *cache_pointer;
                constexpr int batch = 10;
                // A C++ program's hit reads two entries (its header list, then the code keyed by
                // those headers' digests): every lookup must hit, none may miss or store.
                const CacheStats before = cache.stats();
                const double ns = nanoseconds([&] {
                    for (int i = 0; i < batch; ++i) compile_cached(cache, program, CodeType::cubin, names);
                });
                const CacheStats after = cache.stats();
                if (after.misses != before.misses || after.insertions != before.insertions ||
                    after.hits < before.hits + batch)
                    throw std::runtime_error("a lookup missed the cache");
                return ns / batch;
            };
        };
        const bool want_memory = runner.wanted("memory_cache_hit_" + kernel.label);
        const bool want_disk = runner.wanted("disk_cache_hit_" + kernel.label);
        if (want_memory) compile_cached(memory_cache, program, CodeType::cubin, names);  // fill
        if (want_disk) compile_cached(disk_cache, program, CodeType::cubin, names);
        runner.compare("memory_cache_hit_" + kernel.label, {20, 300},
                       {{"cudacore", hit(&memory_cache), "MemoryProgramCache via compile_cached"}});
        runner.compare("disk_cache_hit_" + kernel.label, {20, 300},
                       {{"cudacore", hit(&disk_cache),
                         "DiskProgramCache via compile_cached (file in the page cache)"}});
    }
}

// The 32 name expressions of cuda_std_many_source ("rotate_n<float, 1>" ...).
std::vector<std::string> specialization_names() {
    std::vector<std::string> names;
    for (const char* type : {"float", "double"})
        for (int n = 1; n <= specializations_per_type; ++n)
            names.push_back("rotate_n<" + std::string(type) + ", " + std::to_string(n) + ">");
    return names;
}

// Many specializations, and a second kernel with the same headers. Every repetition compiles a
// never-seen source (a unique trailing comment), so no cache of any system can answer it.
void specialization_operations(Runner& runner, const std::string& arch) {
    static int unique = 0;
    auto fresh = [](const char* source) {
        return std::string(source) + "\n// repetition " + std::to_string(++unique) + "\n";
    };
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

// ---------------------------------------------------------------------------------------------
// ObjectCode values (no GPU needed)

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

// ---------------------------------------------------------------------------------------------
// Runtime (needs a GPU)

constexpr int launch_burst = 64;  // launches per timed burst: well below the launch queue depth
constexpr unsigned launch_block = 32;

struct EightArguments {
    int a = 1;
    double b = 2;
    CUdeviceptr in = 0;
    signed char c = 3;
    unsigned long long u = 4;
    float f = 5;
    short s = 6;
    CUdeviceptr out = 0;
};

void runtime_operations(Runner& runner, const Device& device, const std::string& launch_cubin) {
    const auto& api = detail::driver();
    device.set_current();
    const Stream stream = device.create_stream();
    const CUstream raw_stream = stream.handle();

    // Loading: a fresh library / ObjectCode per repetition, unloaded outside the timing.
    runner.compare(
        "get_kernel_first", {5, 200},
        {{"raw",
          [&] {
              CUlibrary library = nullptr;
              CUkernel kernel = nullptr;
              const double ns = nanoseconds([&] {
                  detail::check(api.cuLibraryLoadData(&library, launch_cubin.data(), nullptr, nullptr,
                                                      0, nullptr, nullptr, 0),
                                "cuLibraryLoadData");
                  detail::check(api.cuLibraryGetKernel(&kernel, library, "eight"), "cuLibraryGetKernel");
              });
              api.cuLibraryUnload(library);
              return ns;
          },
          "cuLibraryLoadData + cuLibraryGetKernel"},
         {"cudacore", [&] {
              const ObjectCode code = ObjectCode::from_cubin(launch_cubin, "launch.cubin");
              const auto start = Clock::now();
              const Kernel kernel = code.get_kernel("eight");
              const auto stop = Clock::now();
              if (!kernel.handle()) throw std::runtime_error("no kernel");
              return std::chrono::duration<double, std::nano>(stop - start).count();
              // code and kernel go here, outside the timing: the library is unloaded
          },
          "get_kernel on a fresh ObjectCode (lazy load)"}});

    const ObjectCode code = ObjectCode::from_cubin(launch_cubin, "launch.cubin");
    const Kernel empty = code.get_kernel("empty");
    const Kernel eight = code.get_kernel("eight");
    CUlibrary raw_library = nullptr;
    detail::check(api.cuLibraryLoadData(&raw_library, launch_cubin.data(), nullptr, nullptr, 0,
                                        nullptr, nullptr, 0),
                  "cuLibraryLoadData");
    struct Unload {
        CUlibrary library;
        ~Unload() { detail::driver().cuLibraryUnload(library); }
    } unload{raw_library};
    CUkernel raw_empty = nullptr;
    CUkernel raw_eight = nullptr;
    detail::check(api.cuLibraryGetKernel(&raw_empty, raw_library, "empty"), "cuLibraryGetKernel");
    detail::check(api.cuLibraryGetKernel(&raw_eight, raw_library, "eight"), "cuLibraryGetKernel");

    constexpr int lookups = 100;
    runner.compare(
        "get_kernel_repeated", {5, 300},
        {{"raw",
          [&] {
              CUkernel kernel = nullptr;
              return nanoseconds([&] {
                         for (int i = 0; i < lookups; ++i)
                             detail::check(api.cuLibraryGetKernel(&kernel, raw_library, "eight"),
                                           "cuLibraryGetKernel");
                     }) / lookups;
          },
          "cuLibraryGetKernel on a loaded library"},
         {"cudacore", [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < lookups; ++i) {
                             Kernel kernel = code.get_kernel("eight");
                             if (!kernel.handle()) throw std::runtime_error("no kernel");
                         }
                     }) / lookups;
          }}});

    // Launches: enqueue only, bursts below the queue depth, the stream drained outside the timing.
    auto raw_burst = [&](CUkernel kernel, void** arguments) {
        return [&, kernel, arguments] {
            const auto function = reinterpret_cast<CUfunction>(kernel);
            const double ns = nanoseconds([&] {
                for (int i = 0; i < launch_burst; ++i)
                    detail::check(api.cuLaunchKernel(function, 1, 1, 1, launch_block, 1, 1, 0,
                                                     raw_stream, arguments, nullptr),
                                  "cuLaunchKernel");
            });
            detail::check(api.cuStreamSynchronize(raw_stream), "cuStreamSynchronize");
            return ns / launch_burst;
        };
    };
    const LaunchConfig config{.grid = 1, .block = launch_block};
    runner.compare("launch_empty_enqueue", {10, 300},
                   {{"raw", raw_burst(raw_empty, nullptr), "cuLaunchKernel, bursts of 64"},
                    {"cudacore", [&] {
                         const double ns = nanoseconds([&] {
                             for (int i = 0; i < launch_burst; ++i) launch(stream, config, empty);
                         });
                         stream.sync();
                         return ns / launch_burst;
                     },
                     "launch(), bursts of 64"}});

    Buffer scratch = device.allocate(256, stream);
    stream.sync();
    EightArguments values;
    values.in = scratch.handle();
    values.out = scratch.handle() + 128;
    void* raw_arguments[] = {&values.a, &values.b, &values.in, &values.c,
                             &values.u, &values.f, &values.s, &values.out};
    const auto* in = reinterpret_cast<const int*>(values.in);
    auto* out = reinterpret_cast<double*>(values.out);
    runner.compare("launch_8_args_enqueue", {10, 300},
                   {{"raw", raw_burst(raw_eight, raw_arguments), "cuLaunchKernel, bursts of 64"},
                    {"cudacore", [&] {
                         const double ns = nanoseconds([&] {
                             for (int i = 0; i < launch_burst; ++i)
                                 launch(stream, config, eight, 1, 2.0, in, static_cast<signed char>(3),
                                        4ull, 5.0f, static_cast<short>(6), out);
                         });
                         stream.sync();
                         return ns / launch_burst;
                     },
                     "launch() with 8 arguments (sizes checked), bursts of 64"}});

    runner.compare("launch_sync_roundtrip", {20, 500},
                   {{"raw",
                     [&] {
                         const auto function = reinterpret_cast<CUfunction>(raw_empty);
                         return nanoseconds([&] {
                             detail::check(api.cuLaunchKernel(function, 1, 1, 1, launch_block, 1, 1, 0,
                                                              raw_stream, nullptr, nullptr),
                                           "cuLaunchKernel");
                             detail::check(api.cuStreamSynchronize(raw_stream), "cuStreamSynchronize");
                         });
                     },
                     "cuLaunchKernel + cuStreamSynchronize"},
                    {"cudacore", [&] {
                         return nanoseconds([&] {
                             launch(stream, config, empty);
                             stream.sync();
                         });
                     },
                     "launch() + Stream::sync()"}});

    // Events.
    constexpr int events_per_batch = 64;
    runner.compare(
        "event_create", {5, 300},
        {{"raw",
          [&] {
              std::vector<CUevent> events(events_per_batch);
              const double ns = nanoseconds([&] {
                  for (auto& event : events)
                      detail::check(api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
              });
              for (CUevent event : events) api.cuEventDestroy(event);
              return ns / events_per_batch;
          },
          "cuEventCreate (timing disabled); destroyed outside the timing"},
         {"cudacore", [&] {
              std::vector<Event> events;
              events.reserve(events_per_batch);
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < events_per_batch; ++i) events.push_back(device.create_event());
              });
              events.clear();
              return ns / events_per_batch;
          },
          "Device::create_event() (timing disabled), taking the events the previous batch "
          "dropped (event.hpp: reuse); destroyed outside the timing"}});

    // The whole life of an event made and dropped at once: what a loop pays per event.
    runner.compare(
        "event_create_destroy", {5, 300},
        {{"raw",
          [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < events_per_batch; ++i) {
                             CUevent event = nullptr;
                             detail::check(api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                                           "cuEventCreate");
                             detail::check(api.cuEventDestroy(event), "cuEventDestroy");
                         }
                     }) / events_per_batch;
          },
          "cuEventCreate + cuEventDestroy (timing disabled)"},
         {"cudacore", [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < events_per_batch; ++i) {
                             Event event = device.create_event();
                             if (event.is_recorded()) throw std::runtime_error("a recorded new event");
                         }
                     }) / events_per_batch;
          },
          "Device::create_event() (timing disabled), then the Event dropped"}});

    const Event start = device.create_event({.timing_enabled = true});
    const Event end = device.create_event({.timing_enabled = true});
    stream.record(start);
    launch(stream, config, empty);
    stream.record(end);
    end.sync();
    constexpr int elapsed_per_batch = 100;
    runner.compare(
        "event_elapsed_time", {5, 300},
        {{"raw",
          [&] {
              float ms = 0;
              return nanoseconds([&] {
                         for (int i = 0; i < elapsed_per_batch; ++i)
                             detail::check(api.cuEventElapsedTime(&ms, start.handle(), end.handle()),
                                           "cuEventElapsedTime");
                     }) / elapsed_per_batch;
          },
          "cuEventElapsedTime on two completed events"},
         {"cudacore", [&] {
              Milliseconds total{0};
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < elapsed_per_batch; ++i) total += end - start;
              });
              if (total.count() < 0) throw std::runtime_error("negative elapsed time");
              return ns / elapsed_per_batch;
          },
          "end - start (checks both were recorded with timing)"}});

    // Stream-ordered 1 MiB allocate + free from the device's default pool. The pool keeps freed
    // memory across synchronisations (release threshold raised for both sides alike), so the
    // figure is the pool's and the wrapper's cost, not the driver reserving memory again.
    auto resource = std::dynamic_pointer_cast<DeviceMemoryResource>(device.memory_resource());
    if (resource) resource->set_release_threshold(UINT64_MAX);
    constexpr std::size_t allocation_size = 1 << 20;
    constexpr int allocations_per_batch = 32;
    runner.compare(
        "alloc_free_1mib", {5, 300},
        {{"raw",
          [&] {
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < allocations_per_batch; ++i) {
                      CUdeviceptr pointer = 0;
                      detail::check(api.cuMemAllocAsync(&pointer, allocation_size, raw_stream),
                                    "cuMemAllocAsync");
                      detail::check(api.cuMemFreeAsync(pointer, raw_stream), "cuMemFreeAsync");
                  }
              });
              stream.sync();
              return ns / allocations_per_batch;
          },
          "cuMemAllocAsync + cuMemFreeAsync (default pool)"},
         {"cudacore", [&] {
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < allocations_per_batch; ++i) {
                      Buffer buffer = device.allocate(allocation_size, stream);
                      buffer.close(stream);
                  }
              });
              stream.sync();
              return ns / allocations_per_batch;
          },
          "Device::allocate + Buffer::close(stream) (default pool)"}});
    scratch.close(stream);
    stream.sync();
}

// ---------------------------------------------------------------------------------------------
// Graphs (needs a GPU): graphs of 1, 16 and 256 empty-kernel nodes. Replays and launches are
// enqueue-only and reported per kernel; capture + instantiate per graph, what it made destroyed
// outside the timing.

const std::vector<int> graph_sizes = {1, 16, 256};

// Graph launches per timed repetition: 64 kernels' worth for small graphs, one for big ones.
int graph_replays(int kernels) { return kernels >= launch_burst ? 1 : launch_burst / kernels; }

void graph_operations(Runner& runner, const Device& device, const std::string& launch_cubin) {
    const auto& api = detail::driver();
    device.set_current();
    const Stream stream = device.create_stream();
    const CUstream raw_stream = stream.handle();
    const ObjectCode code = ObjectCode::from_cubin(launch_cubin, "launch.cubin");
    const Kernel empty = code.get_kernel("empty");
    const auto function = reinterpret_cast<CUfunction>(empty.handle());
    const LaunchConfig config{.grid = 1, .block = launch_block};
    auto raw_launches = [&](int kernels) {
        for (int i = 0; i < kernels; ++i)
            detail::check(api.cuLaunchKernel(function, 1, 1, 1, launch_block, 1, 1, 0, raw_stream,
                                             nullptr, nullptr),
                          "cuLaunchKernel");
    };
    auto raw_capture = [&](int kernels) {
        CUgraph graph = nullptr;
        CUgraphExec exec = nullptr;
        detail::check(api.cuStreamBeginCapture(raw_stream, CU_STREAM_CAPTURE_MODE_RELAXED),
                      "cuStreamBeginCapture");
        raw_launches(kernels);
        detail::check(api.cuStreamEndCapture(raw_stream, &graph), "cuStreamEndCapture");
        detail::check(api.cuGraphInstantiateWithFlags(&exec, graph, 0),
                      "cuGraphInstantiateWithFlags");
        return std::make_pair(graph, exec);
    };
    // The graph is returned with its executable graph so that, as on the raw side, it is
    // destroyed outside the timing.
    struct Captured {
        Graph graph;
        GraphExec exec;
    };
    auto cudacore_capture = [&](int kernels) {
        GraphBuilder builder(stream);
        builder.begin();
        for (int i = 0; i < kernels; ++i) launch(builder, config, empty);
        Graph graph = builder.end();
        GraphExec exec = graph.instantiate();
        return Captured{std::move(graph), std::move(exec)};
    };

    for (const int kernels : graph_sizes) {
        const std::string n = std::to_string(kernels);
        runner.compare("launch_" + n + "_kernels", {10, 300},
                       {{"raw",
                         [&] {
                             const double ns = nanoseconds([&] { raw_launches(kernels); });
                             stream.sync();
                             return ns / kernels;
                         },
                         "cuLaunchKernel x " + n + ", per kernel"},
                        {"cudacore", [&] {
                             const double ns = nanoseconds([&] {
                                 for (int i = 0; i < kernels; ++i) launch(stream, config, empty);
                             });
                             stream.sync();
                             return ns / kernels;
                         },
                         "launch() x " + n + ", per kernel"}});

        const int replays = graph_replays(kernels);
        const bool want_replay = runner.wanted("graph_replay_" + n);
        std::pair<CUgraph, CUgraphExec> raw_graph{nullptr, nullptr};
        std::optional<GraphExec> graph;
        if (want_replay) {
            try {
                raw_graph = raw_capture(kernels);
                graph.emplace(cudacore_capture(kernels).exec);
            } catch (const std::exception& error) {
                runner.skip("graph_replay_" + n, {"raw", "cudacore"}, error.what());
                continue;
            }
        }
        runner.compare(
            "graph_replay_" + n, {10, 300},
            {{"raw",
              [&] {
                  const double ns = nanoseconds([&] {
                      for (int i = 0; i < replays; ++i)
                          detail::check(api.cuGraphLaunch(raw_graph.second, raw_stream),
                                        "cuGraphLaunch");
                  });
                  stream.sync();
                  return ns / (replays * kernels);
              },
              "cuGraphLaunch of a captured " + n + "-node graph, per kernel"},
             {"cudacore", [&] {
                  const double ns = nanoseconds([&] {
                      for (int i = 0; i < replays; ++i) graph->launch(stream);
                  });
                  stream.sync();
                  return ns / (replays * kernels);
              },
              "GraphExec::launch of a captured " + n + "-node graph, per kernel"}});
        if (want_replay) {
            stream.sync();
            api.cuGraphExecDestroy(raw_graph.second);
            api.cuGraphDestroy(raw_graph.first);
        }

        runner.compare("graph_capture_instantiate_" + n, {5, 200},
                       {{"raw",
                         [&] {
                             std::pair<CUgraph, CUgraphExec> made{nullptr, nullptr};
                             const double ns = nanoseconds([&] { made = raw_capture(kernels); });
                             api.cuGraphExecDestroy(made.second);
                             api.cuGraphDestroy(made.first);
                             return ns;
                         },
                         "cuStreamBeginCapture, cuLaunchKernel x " + n +
                             ", cuStreamEndCapture, cuGraphInstantiateWithFlags"},
                        {"cudacore", [&] {
                             std::optional<Captured> made;
                             const double ns =
                                 nanoseconds([&] { made.emplace(cudacore_capture(kernels)); });
                             made.reset();
                             return ns;
                         },
                         "GraphBuilder::begin, launch() x " + n + ", end(), instantiate()"}});
    }
    stream.sync();
}

const std::vector<std::string> graph_operation_names = {
    "launch_1_kernels",   "launch_16_kernels",  "launch_256_kernels",
    "graph_replay_1",     "graph_replay_16",    "graph_replay_256",
    "graph_capture_instantiate_1", "graph_capture_instantiate_16",
    "graph_capture_instantiate_256"};

const std::vector<std::string> gpu_operations = {
    "get_kernel_first",      "get_kernel_repeated", "launch_empty_enqueue",
    "launch_8_args_enqueue", "launch_sync_roundtrip", "event_create",
    "event_create_destroy",  "event_elapsed_time",    "alloc_free_1mib"};

// Why the GPU operations cannot run here, or empty.
std::string gpu_missing_reason() {
    if (!system::driver_available()) return "no CUDA driver";
    try {
        if (system::device_count() == 0) return "no CUDA device";
    } catch (const std::exception& error) {
        return error.what();
    }
    return "";
}

json environment(const std::string& arch, const std::string& missing_gpu) {
    json info = {{"cudacore_version", version()},
                 {"built_cuda_version", system::built_cuda_version()},
                 {"arch", arch},
                 {"gpu", nullptr},
                 {"driver_version", nullptr},
                 {"no_gpu_reason", missing_gpu.empty() ? json(nullptr) : json(missing_gpu)},
                 {"launch_burst", launch_burst},
                 {"launch_block", launch_block}};
    if (missing_gpu.empty()) {
        const Device device(0);
        info["gpu"] = device.name();
        info["driver_version"] = system::driver_version();
    }
    try {
        const auto& nvrtc = detail::nvrtc();
        info["nvrtc_version"] = std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor);
        info["nvrtc_path"] = nvrtc.path;
    } catch (const std::exception& error) {
        info["nvrtc_version"] = nullptr;
        info["nvrtc_error"] = error.what();
    }
    info["include_dirs"] = toolkit_include_dirs();
    try {
        info["flags"] = Program(small_source, SourceType::cxx, options_for(arch, "flags"))
                            .flags(CodeType::cubin);
    } catch (const std::exception& error) {
        info["flags_error"] = error.what();
    }
    return info;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Times each operation through the raw driver / NVRTC calls and through cudacore; "
                 "prints JSON lines (see bench/side_by_side.py)."};
    bool quick = false;
    std::vector<std::string> only;
    app.add_flag("--quick", quick, "a few repetitions only (for smoke tests)");
    app.add_option("--only", only, "run only these operations")->delimiter(',');
    CLI11_PARSE(app, argc, argv);
    Runner runner(quick, {only.begin(), only.end()});

    const std::string missing_gpu = gpu_missing_reason();
    // Without a GPU, compile for an H100 (the machine the table is made on).
    std::string arch = "sm_90";
    if (missing_gpu.empty()) arch = Device(0).arch();
    emit({{"environment", environment(arch, missing_gpu)}});

    int status = 0;
    try {
        TempDirectory cache_dir;
        compile_operations(runner, arch, cache_dir);
        specialization_operations(runner, arch);
        const std::string launch_cubin(
            Program(launch_source, SourceType::cxx, options_for(arch, "side_by_side_launch.cu"))
                .compile(CodeType::cubin)
                .code());
        object_code_operations(runner, launch_cubin);
        if (missing_gpu.empty()) {
            runtime_operations(runner, Device(0), launch_cubin);
            graph_operations(runner, Device(0), launch_cubin);
        } else {
            for (const auto& operation : gpu_operations)
                runner.skip(operation, {"raw", "cudacore"}, missing_gpu);
            for (const auto& operation : graph_operation_names)
                runner.skip(operation, {"raw", "cudacore"}, missing_gpu);
        }
    } catch (const std::exception& error) {
        // Set-up failed (no NVRTC, no context...): say so in the stream the script reads.
        emit({{"error", error.what()}});
        status = 1;
    }
    return status;
}
