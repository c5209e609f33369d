#include "bench_support.hpp"

#include "cudacore/program.hpp"
#include "cudacore/system.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace cudacore::bench {

double median(std::vector<double> samples) {
    if (samples.empty()) return 0;
    const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
    std::nth_element(samples.begin(), middle, samples.end());
    if (samples.size() % 2 == 1) return *middle;
    return (*middle + *std::max_element(samples.begin(), middle)) / 2;
}

namespace {

// Keeps every run's real time per iteration while printing as usual.
class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        // The median of repetitions where there are some, else the single run.
        for (const Run& run : runs) {
            if (run.error_occurred) continue;
            std::string name = run.run_name.function_name;
            if (!run.run_name.args.empty()) name += "/" + run.run_name.args;
            if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")
                medians_[name] = run.GetAdjustedRealTime();
            else if (run.run_type == Run::RT_Iteration)
                singles_[name] = run.GetAdjustedRealTime();
        }
    }
    std::map<std::string, double> times() const {
        std::map<std::string, double> out = singles_;
        for (const auto& [name, time] : medians_) out[name] = time;
        // Alternating rounds ("raw/OP@3"): the median over the rounds, under "raw/OP".
        std::map<std::string, std::vector<double>> rounds;
        for (const auto& [name, time] : out)
            if (const auto at = name.rfind('@'); at != std::string::npos)
                rounds[name.substr(0, at)].push_back(time);
        for (auto& [name, times] : rounds) out[name] = median(std::move(times));
        return out;
    }

private:
    std::map<std::string, double> singles_;
    std::map<std::string, double> medians_;
};

}  // namespace

int run_with_ratios(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    bool header = false;
    const auto times = reporter.times();
    for (const auto& [name, raw_time] : times) {
        if (name.rfind("raw/", 0) != 0 || name.find('@') != std::string::npos) continue;
        const std::string op = name.substr(4);
        auto ours = times.find("cudacore/" + op);
        if (ours == times.end() || raw_time <= 0) continue;
        if (!header) {
            std::printf("\n%-48s %14s %14s %10s\n", "operation", "raw", "cudacore", "ratio");
            header = true;
        }
        std::printf("%-48s %14.1f %14.1f %10.4g\n", op.c_str(), raw_time, ours->second,
                    ours->second / raw_time);
    }
    if (header) std::printf("(times in each benchmark's unit; ratio = cudacore / raw)\n");
    return 0;
}

int alternate(const std::string& op, std::function<void(benchmark::State&)> raw,
              std::function<void(benchmark::State&)> ours, Clock clock, int rounds) {
    for (int round = 1; round <= rounds; ++round) {
        for (const auto& [side, function] : {std::pair{"raw/", &raw}, std::pair{"cudacore/", &ours}}) {
            auto* benchmark = benchmark::RegisterBenchmark(
                (side + op + "@" + std::to_string(round)).c_str(), *function);
            benchmark->MinTime(0.1);
            if (clock == Clock::real) benchmark->UseRealTime();
            if (clock == Clock::manual) benchmark->UseManualTime();
        }
    }
    return rounds;
}

const char* gpu_missing_reason() {
    // Asked once: a driver that fails to count its devices is a reason too, not a crash.
    static const std::string reason = []() -> std::string {
        if (!system::driver_available()) return "no CUDA driver";
        try {
            if (system::device_count() == 0) return "no CUDA device";
        } catch (const std::exception& error) {
            return error.what();
        }
        return "";
    }();
    return reason.c_str();
}

bool skip_without_gpu(benchmark::State& state) {
    const char* reason = gpu_missing_reason();
    if (*reason) state.SkipWithError(reason);
    return *reason != 0;
}

GpuFixture::GpuFixture() {
    if (*gpu_missing_reason()) return;
    device.emplace(0);
    device->set_current();
    stream.emplace(device->create_stream());
}

ObjectCode GpuFixture::compile(const char* source, const char* name) const {
    ProgramOptions options;
    options.name = name;
    options.arch = device->arch();
    return Program(source, SourceType::cxx, options).compile(CodeType::cubin);
}

}  // namespace cudacore::bench
