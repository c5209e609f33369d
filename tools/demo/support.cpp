// `cudacore demo`'s helpers: timing, random inputs, the skip rules, and the launch every GPU step
// checks against the CPU.
#include "demo.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/event.hpp"
#include "cudacore/launch.hpp"

#include <cmath>
#include <cstdio>
#include <random>

namespace cudacore::cli::demo {

double milliseconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(n);
    for (float& value : values) value = uniform(random);
    return values;
}

bool gpu_for(Demo& demo, const std::string& part, const char* message) {
    if (demo.device) return true;
    std::printf("SKIPPED: %s\n", message);
    demo.outcomes.skipped(part, demo.no_gpu_reason);
    return false;
}

bool made_by(Demo& demo, const std::optional<ObjectCode>& code, const std::string& part,
             const std::string& producer) {
    if (code) return true;
    std::printf("SKIPPED: %s failed\n", producer.c_str());
    demo.outcomes.skipped(part, producer + " failed");
    return false;
}

bool launch_and_compare(const Device& device, const Kernel& kernel,
                        float (*expected)(float, float, float)) {
    Stream stream = device.create_stream();
    const std::vector<float> x = random_floats(kElements, 1);
    const std::vector<float> y = random_floats(kElements, 2);
    Buffer dx = device.allocate(kElements * sizeof(float), stream);
    Buffer dy = device.allocate(kElements * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);

    const float a = 2.0f;
    TypedKernel<void(float, const float*, float*, std::size_t)> typed(kernel);
    const LaunchConfig config{.grid = unsigned((kElements + 255) / 256), .block = 256};
    Event start = stream.record(EventOptions{.timing_enabled = true});
    launch(stream, config, typed, a, static_cast<const float*>(dx.data()),
           static_cast<float*>(dy.data()), kElements);
    Event end = stream.record(EventOptions{.timing_enabled = true});
    std::vector<float> result(kElements);
    dy.copy_to(result, stream);
    stream.sync();

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kElements; ++i)
        if (std::fabs(result[i] - expected(a, x[i], y[i])) > 1e-5f) ++wrong;
    std::printf("%zu elements: kernel time %.3f ms (events); %zu mismatches against the CPU: %s\n",
                kElements, (end - start).count(), wrong, wrong == 0 ? "OK" : "FAILED");
    return wrong == 0;
}

float saxpy_on_cpu(float a, float x, float y) { return a * x + y; }
float square_add_on_cpu(float a, float x, float y) { return a * x * x + y; }
float abs_saxpy_on_cpu(float a, float x, float y) { return a * std::fabs(x) + y; }

}  // namespace cudacore::cli::demo
