#include "bench_support.hpp"

#include "cudacore/system.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace cudacore::bench {

namespace {

// Keeps every run's real time per iteration while printing as usual.
class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& run : runs) {
            if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
            times_[run.benchmark_name()] = run.GetAdjustedRealTime();
        }
    }
    const std::map<std::string, double>& times() const { return times_; }

private:
    std::map<std::string, double> times_;
};

}  // namespace

int run_with_ratios(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    bool header = false;
    for (const auto& [name, raw_time] : reporter.times()) {
        if (name.rfind("raw/", 0) != 0) continue;
        const std::string op = name.substr(4);
        auto ours = reporter.times().find("cudacore/" + op);
        if (ours == reporter.times().end() || raw_time <= 0) continue;
        if (!header) {
            std::printf("\n%-48s %14s %14s %8s\n", "operation", "raw", "cudacore", "ratio");
            header = true;
        }
        std::printf("%-48s %14.1f %14.1f %8.3f\n", op.c_str(), raw_time, ours->second,
                    ours->second / raw_time);
    }
    if (header) std::printf("(times in each benchmark's unit; ratio = cudacore / raw)\n");
    return 0;
}

const char* gpu_missing_reason() {
    if (!system::driver_available()) return "no CUDA driver";
    if (system::device_count() == 0) return "no CUDA device";
    return "";
}

}  // namespace cudacore::bench
