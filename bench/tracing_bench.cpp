// What tracing costs when no tool is attached (the normal run of a program): a scoped range, a
// mark, a range whose message is made from values, and cudacore's own range, each beside an
// empty loop and beside NVTX's own push and pop (its no-tool path: a load and a test per call).
// Each figure is ns per iteration, one range (or mark) an iteration. CPU only; run it without
// NVTX_INJECTION64_PATH (and not under a profiler), or it times the tool.
#include "bench_support.hpp"

#include "cudacore/tracing.hpp"
#include "support/cudacore_trace.hpp"

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvtx3.hpp>

#include <optional>
#include <string>

namespace {

using namespace cudacore;

bool skip_with_tool(benchmark::State& state) {
    if (!tracing::tool_attached()) return false;
    state.SkipWithError("an NVTX tool is attached: this times the tool, not the no-tool path");
    return true;
}

const tracing::Domain& bench_domain() {
    static const tracing::Domain domain("tracing_bench");
    return domain;
}

// The loop alone: what every other figure includes.
void empty_loop(benchmark::State& state) {
    for (auto _ : state) benchmark::ClobberMemory();
}

// NVTX itself: an event's attributes filled, pushed and popped (each call a test of NVTX's
// function pointer with no tool).
void raw_range(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    const auto domain = static_cast<nvtxDomainHandle_t>(bench_domain().native_handle());
    for (auto _ : state) {
        nvtxEventAttributes_t attributes{};
        attributes.version = NVTX_VERSION;
        attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attributes.message.ascii = "step";
        nvtxDomainRangePushEx(domain, &attributes);
        benchmark::ClobberMemory();
        nvtxDomainRangePop(domain);
    }
}

void cudacore_range(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    const tracing::Domain& domain = bench_domain();
    for (auto _ : state) {
        const tracing::Range range(domain, "step");
        benchmark::ClobberMemory();
    }
}

// Colour, category and a payload that changes every iteration.
void range_with_options(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    const tracing::Domain& domain = bench_domain();
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        const tracing::Range range(domain, "step",
                                   {.color = tracing::Color::rgb(0, 160, 0), .category = 2, .payload = ++bytes});
        benchmark::ClobberMemory();
    }
}

// A message formatted from a value: made only for a tool, so never here.
void range_with_made_message(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    const tracing::Domain& domain = bench_domain();
    int step = 0;
    for (auto _ : state) {
        const tracing::Range range(domain, [&] { return "step " + std::to_string(++step); });
        benchmark::ClobberMemory();
    }
}

void mark(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    const tracing::Domain& domain = bench_domain();
    for (auto _ : state) {
        tracing::mark(domain, "instant", {.category = 1});
        benchmark::ClobberMemory();
    }
}

// What each compile, link, load and cache lookup of cudacore adds.
void cudacore_own_range(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    for (auto _ : state) {
        const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache get memory");
        benchmark::ClobberMemory();
    }
}

// NVTX3's own C++ types, in cudacore's domain: what a user writes without cudacore::tracing.
struct bench_nvtx3_domain {
    static constexpr const char* name = "tracing_bench";
};

void nvtx3_scoped_range(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    for (auto _ : state) {
        const nvtx3::scoped_range_in<bench_nvtx3_domain> range("step");
        benchmark::ClobberMemory();
    }
}

void nvtx3_range_with_options(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        const nvtx3::scoped_range_in<bench_nvtx3_domain> range(
            "step", nvtx3::rgb{0, 160, 0}, nvtx3::category{2}, nvtx3::payload{++bytes});
        benchmark::ClobberMemory();
    }
}

// NVTX3 builds the message before it knows whether a tool takes it.
void nvtx3_range_with_made_message(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    int step = 0;
    for (auto _ : state) {
        const std::string message = "step " + std::to_string(++step);
        const nvtx3::scoped_range_in<bench_nvtx3_domain> range(message.c_str());
        benchmark::ClobberMemory();
    }
}

void nvtx3_mark(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    for (auto _ : state) {
        nvtx3::mark_in<bench_nvtx3_domain>("instant", nvtx3::category{1});
        benchmark::ClobberMemory();
    }
}

// NVTX3's range behind cudacore's test of one flag, as a program can write it itself.
void nvtx3_range_behind_flag(benchmark::State& state) {
    if (skip_with_tool(state)) return;
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        std::optional<nvtx3::scoped_range_in<bench_nvtx3_domain>> range;
        if (tracing::tool_attached()) [[unlikely]]
            range.emplace("step", nvtx3::rgb{0, 160, 0}, nvtx3::category{2}, nvtx3::payload{++bytes});
        benchmark::ClobberMemory();
    }
}

}  // namespace

BENCHMARK(nvtx3_scoped_range)->Name("nvtx3/scoped_range");
BENCHMARK(nvtx3_range_with_options)->Name("nvtx3/range_with_options");
BENCHMARK(nvtx3_range_with_made_message)->Name("nvtx3/range_with_made_message");
BENCHMARK(nvtx3_mark)->Name("nvtx3/mark");
BENCHMARK(nvtx3_range_behind_flag)->Name("nvtx3/range_behind_flag");
BENCHMARK(empty_loop)->Name("empty_loop");
BENCHMARK(raw_range)->Name("raw/range");
BENCHMARK(cudacore_range)->Name("cudacore/range");
BENCHMARK(range_with_options)->Name("range_with_options");
BENCHMARK(range_with_made_message)->Name("range_with_made_message");
BENCHMARK(mark)->Name("mark");
BENCHMARK(cudacore_own_range)->Name("cudacore_own_range");

CUDACORE_BENCH_MAIN()
