// One side of the cross-process serialization test. Each mode runs in its own process:
//
//   helper_serialized_launch save PATH         compiles scale<T> for the current device and
//                                              saves the serialized ObjectCode to PATH
//   helper_serialized_launch launch PATH       loads PATH, launches scale<float> on 4096 values
//                                              and checks every result (exit 0, prints "ok",
//                                              the device's arch and the kernel's binary and
//                                              PTX versions)
//   helper_serialized_launch cache-put DIR     compiles through a DiskProgramCache at DIR
//   helper_serialized_launch cache-launch DIR  takes the code from the cache (failing on a
//                                              miss: it must not compile) and launches it
#include "cudacore/buffer.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/device.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "scale_kernel.hpp"

#include <iostream>
#include <vector>

namespace {

using namespace cudacore;

Program make_program() {
    ProgramOptions options;
    options.name = "serialized_scale.cu";
    options.arch = Device(0).arch();
    return Program(test::kScaleSource, SourceType::cxx, options);
}

const std::vector<std::string> names{"scale<float>"};

int launch_and_check(const ObjectCode& code) {
    Device device(0);
    Stream stream = device.create_stream();
    constexpr int n = 4096;
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
    Buffer data = device.allocate(n * sizeof(float), stream);
    data.copy_from(host, stream);
    const Kernel kernel = code.get_kernel("scale<float>");
    LaunchConfig config;
    config.grid = Dim3((n + 255) / 256);
    config.block = Dim3(256);
    launch(stream, config, kernel, data, 3.0f, n);
    std::vector<float> result(n);
    data.copy_to(result, stream);
    stream.sync();
    for (int i = 0; i < n; ++i) {
        if (result[i] != static_cast<float>(i) * 3.0f + 1.0f) {
            std::cerr << "wrong result at " << i << ": " << result[i] << "\n";
            return 4;
        }
    }
    std::cout << "ok " << n << " values on " << device.arch() << ", kernel "
              << code.lowered_name("scale<float>") << ", binary version "
              << kernel.binary_version(device) << ", PTX version " << kernel.ptx_version(device)
              << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: helper_serialized_launch save|launch|cache-put|cache-launch PATH\n";
        return 64;
    }
    const std::string mode = argv[1];
    try {
        if (mode == "save") {
            make_program().compile(CodeType::cubin, names).save(argv[2]);
            return 0;
        }
        if (mode == "launch") return launch_and_check(ObjectCode::from_saved(argv[2]));
        DiskProgramCache cache(argv[2]);
        Program program = make_program();
        if (mode == "cache-put") {
            compile_cached(program, CodeType::cubin, names, {.cache = &cache});
            return 0;
        }
        if (mode == "cache-launch") {
            auto code = find_cached(program, CodeType::cubin, names, {.cache = &cache});
            if (!code) {
                std::cerr << "cache miss\n";
                return 5;
            }
            return launch_and_check(*code);
        }
    } catch (const std::exception& e) {
        std::cerr << "helper_serialized_launch " << mode << ": " << e.what() << "\n";
        return 1;
    }
    return 64;
}
