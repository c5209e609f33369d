// `cudacore demo`'s shared parts: the kernels several steps compile, the state the steps pass on
// (Demo), what ran, was skipped or failed (Outcomes), and the helpers of the GPU steps. Each step
// is a function of its own file in this folder; tools/command_demo.cpp runs them in order.
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudacore::cli::demo {

namespace fs = std::filesystem;

inline constexpr const char* kSaxpySource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

// One partial sum per block; the host adds the partials.
inline constexpr const char* kReductionSource = R"(
template <typename T, int BlockSize>
__global__ void block_sum(const T* in, T* partial, size_t n) {
    __shared__ T shared[BlockSize];
    T sum = 0;
    for (size_t i = blockIdx.x * (size_t)BlockSize + threadIdx.x; i < n;
         i += (size_t)gridDim.x * BlockSize)
        sum += in[i];
    shared[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = BlockSize / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = shared[0];
}
)";
inline constexpr const char* kReductionName = "block_sum<float, 256>";

inline constexpr std::size_t kElements = std::size_t{1} << 20;

// A fresh directory only this user can enter (mkdtemp makes it 0700, as DiskProgramCache asks),
// removed with its contents on destruction.
class ScratchDirectory {
public:
    ScratchDirectory() {
        std::error_code error;
        const fs::path temporary = fs::temp_directory_path(error);
        if (error)
            throw Error("demo: no temporary directory (TMPDIR): " + error.message());
        std::string path = (temporary / "cudacore-demo-XXXXXX").string();
        if (mkdtemp(path.data()) == nullptr)
            throw Error("demo: mkdtemp(" + path + ") failed: " + std::strerror(errno));
        path_ = path;
    }
    ~ScratchDirectory() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    const fs::path& path() const noexcept { return path_; }

private:
    fs::path path_;
};

// What ran (and passed its checks), what was skipped and why, and what failed.
class Outcomes {
public:
    void passed(const std::string& part) { ran_.push_back(part); }
    void failed(const std::string& part) {
        std::erase(ran_, part);
        if (std::find(failed_.begin(), failed_.end(), part) == failed_.end())
            failed_.push_back(part);
    }
    void skipped(const std::string& part, const std::string& reason) {
        skipped_.emplace_back(part, reason);
    }
    // Records `part` as passed or failed; returns the word to print.
    const char* verify(const std::string& part, bool ok) {
        ok ? passed(part) : failed(part);
        return ok ? "OK" : "FAILED";
    }
    bool any_failed() const noexcept { return !failed_.empty(); }

    // "ran a, b; skipped c, d (why); e (why); all checks passed" (or "FAILED x, y").
    std::string summary() const {
        std::string line = "ran " + (ran_.empty() ? std::string("nothing") : join(ran_));
        // Skipped parts grouped by reason, reasons in order of first appearance.
        std::vector<std::string> reasons;
        for (const auto& [part, reason] : skipped_)
            if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
                reasons.push_back(reason);
        for (std::size_t r = 0; r < reasons.size(); ++r) {
            std::vector<std::string> parts;
            for (const auto& [part, reason] : skipped_)
                if (reason == reasons[r]) parts.push_back(part);
            line += (r == 0 ? "; skipped " : "; ") + join(parts) + " (" + reasons[r] + ")";
        }
        line += failed_.empty() ? "; all checks passed" : "; FAILED " + join(failed_);
        return line;
    }

private:
    static std::string join(const std::vector<std::string>& parts) {
        std::string joined;
        for (const std::string& part : parts) joined += (joined.empty() ? "" : ", ") + part;
        return joined;
    }

    std::vector<std::string> ran_, failed_;
    std::vector<std::pair<std::string, std::string>> skipped_;
};

struct Demo {
    std::optional<Device> device;  // empty: no GPU, GPU parts are skipped for no_gpu_reason
    std::string no_gpu_reason;
    std::string arch;
    std::optional<ObjectCode> saxpy;
    std::optional<ObjectCode> reduction;
    std::optional<ScratchDirectory> scratch;  // made on first use, removed at the end
    Outcomes outcomes;

    const fs::path& scratch_path() {
        if (!scratch) scratch.emplace();
        return scratch->path();
    }
};

double milliseconds_since(std::chrono::steady_clock::time_point start);

std::vector<float> random_floats(std::size_t n, unsigned seed);

// True when there is a GPU; otherwise prints "SKIPPED: <message>" and records `part` skipped.
bool gpu_for(Demo& demo, const std::string& part, const char* message);

// True when `code` was made; otherwise says `part` is skipped because `producer` failed.
bool made_by(Demo& demo, const std::optional<ObjectCode>& code, const std::string& part,
             const std::string& producer);

// Launches `kernel(a, x, y, n)` on random x and y, timed by events, and compares y with
// expected(a, x, y) computed on the CPU. Prints one line; true when every element agrees.
bool launch_and_compare(const Device& device, const Kernel& kernel,
                        float (*expected)(float, float, float));

float saxpy_on_cpu(float a, float x, float y);
float square_add_on_cpu(float a, float x, float y);
float abs_saxpy_on_cpu(float a, float x, float y);

// The steps, in the order the demo runs them (each in this folder's file of its name).
void step_compile(Demo& demo);         // compile.cpp
void step_link(Demo& demo);            // link.cpp
void step_cache(Demo& demo);           // cache.cpp
void step_cache_artefact(Demo& demo);  // cache.cpp
void step_bundle(Demo& demo);          // bundle.cpp
void step_fatbin(Demo& demo);          // fatbin.cpp
void step_serialize(Demo& demo);       // serialize.cpp
void step_load(Demo& demo);            // serialize.cpp
void step_saxpy(Demo& demo);           // launches.cpp
void step_reduction(Demo& demo);       // launches.cpp
void step_driver_log(Demo& demo);      // launches.cpp
void step_graph(Demo& demo);           // graph.cpp
void step_nvcc_style(Demo& demo);      // nvcc_style.cpp
void step_slices(Demo& demo);          // slices.cpp

}  // namespace cudacore::cli::demo
