// Side by side, launch (needs a GPU): a kernel's first lookup (which loads its library) and
// repeated ones, launches enqueued in bursts and launch + synchronize round trips. The raw side
// calls the same run-time loaded driver table cudacore uses (detail::driver()).
#include "side_by_side/areas.hpp"
#include "side_by_side/kernels.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "loader/driver_api.hpp"

#include <chrono>
#include <stdexcept>

namespace cudacore::bench::side_by_side {

const std::vector<std::string> launch_operation_names = {
    "get_kernel_first", "get_kernel_first_compiled", "get_kernel_repeated", "launch_empty_enqueue",
    "launch_8_args_enqueue", "launch_sync_roundtrip"};

void launch_operations(Runner& runner, const Device& device, const Stream& stream,
                       const std::string& launch_cubin) {
    const auto& api = detail::driver();
    const CUstream raw_stream = stream.handle();

    // Loading: a fresh library / ObjectCode per repetition, unloaded outside the timing.
    // Loads `cubin` and looks the kernel up, timed.
    auto raw_load = [&](const std::string& cubin) {
        CUlibrary library = nullptr;
        CUkernel kernel = nullptr;
        const double ns = nanoseconds([&] {
            detail::check(api.cuLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                          "cuLibraryLoadData");
            detail::check(api.cuLibraryGetKernel(&kernel, library, "eight"), "cuLibraryGetKernel");
        });
        api.cuLibraryUnload(library);
        return ns;
    };
    auto raw_first = [&] { return raw_load(launch_cubin); };
    // Times the first get_kernel of `code` (code and kernel go at the end, outside the timing:
    // the library is unloaded).
    auto first_of = [](const ObjectCode& code) {
        const auto start = std::chrono::steady_clock::now();
        const Kernel kernel = code.get_kernel("eight");
        const auto stop = std::chrono::steady_clock::now();
        if (!kernel.handle()) throw std::runtime_error("no kernel");
        return std::chrono::duration<double, std::nano>(stop - start).count();
    };
    // Bytes from elsewhere (a file, a cache, a peer) are validated before the driver sees them.
    runner.compare("get_kernel_first", {5, 200},
                   {{"raw", raw_first, "cuLibraryLoadData + cuLibraryGetKernel"},
                    {"cudacore", [&] { return first_of(ObjectCode::from_cubin(launch_cubin, "launch.cubin")); },
                     "get_kernel on a fresh ObjectCode from cubin bytes (validated, then loaded)"}});
    // Code NVRTC made in this process is well-formed by construction: loaded without the walk.
    if (runner.wanted("get_kernel_first_compiled")) {
        Program program(launch_source, SourceType::cxx, options_for(device.arch(), "side_by_side_launch.cu"));
        runner.compare("get_kernel_first_compiled", {3, 60},
                       {{"raw", [&] { return raw_load(std::string(program.compile(CodeType::cubin).code())); },
                         "cuLibraryLoadData + cuLibraryGetKernel of bytes just compiled (the compile not timed)"},
                        {"cudacore", [&] { return first_of(program.compile(CodeType::cubin)); },
                         "get_kernel on a fresh ObjectCode this process compiled (the compile not timed)"}});
    }

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
    scratch.close(stream);
    stream.sync();
}

}  // namespace cudacore::bench::side_by_side
