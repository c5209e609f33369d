// Allocate + free of 1 MiB from N threads at once (N = 1, 2, 4, 8, 16), each thread on its own
// stream: the raw driver pool (cuMemAllocAsync / cuMemFreeAsync, and cuMemAllocFromPoolAsync on
// the default pool's handle, as cudacore's resources call it), cudacore's default path
// (Device::allocate, then close on the stream or drop), a DeviceMemoryResource, and
// CachingMemoryResource (held as usual, and kept until exit: its buffers then count no
// references to it); empty-kernel launches beside them for reference. Per thread count, the
// variants run in `rounds` rounds of `ops` operations per thread, each round every variant once,
// in an order rotated from round to round (so that none always follows the same neighbour). Per
// variant: the median over rounds of the per-thread wall time per operation and of the aggregate
// throughput of all threads, and its ratio to raw cuMemAllocAsync as the median of the ratios
// within each round, with their lowest and highest: a variant is compared with the raw run of
// its own round, minutes apart from nothing. Under contention the driver's pool lock sets the
// time, and which thread wins it moves a run by more than cudacore's own work; pairing within a
// round and taking the median keeps one unlucky run from deciding a ratio.
// A program, not a Google Benchmark: the threads are its own. Without a GPU it says why and
// exits 0. Google Benchmark's --benchmark_* flags (scripts/gpu-check.sh passes them to every
// *_bench) are ignored.
//
// --split adds variants that take the default path apart (off by default, so that the default
// run's interleaving stays the same from one build to the next): the raw calls a dropped buffer
// makes (cuMemAllocFromPoolAsync, the reset check's cuCtxGetId, cuMemFreeAsync), the raw calls
// run again (how far two runs of the same calls part), the raw calls with 10, 20, 40 and 80 ns of
// busy work of the thread's own between them (Buffer's own is about 40), and Buffer's own cost
// with a resource that calls no driver, held as the device's default resource is (no reference
// count per buffer) and as a DeviceMemoryResource is (one per buffer).
//
//     thread_memory_bench [--threads 1,2,4,8,16] [--ops 5000] [--rounds 9] [--no-launch] [--split]
#include "bench_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/caching_memory_resource.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/stream.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using Clock = std::chrono::steady_clock;

constexpr std::size_t MiB = std::size_t{1} << 20;

struct Settings {
    std::vector<int> threads{1, 2, 4, 8, 16};
    int ops = 5000;
    int rounds = 9;
    bool launches = true;
    bool split = false;
};

// Hands out one fixed address and frees nothing: what is left of an allocate + free is Buffer's
// own work (its box, its references, the exit handler's bookkeeping).
class NoDriverResource final : public MemoryResource {
public:
    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return false; }
    int device_ordinal() const noexcept override { return 0; }
    std::string description() const override { return "no-driver resource"; }

protected:
    CUdeviceptr do_allocate(std::size_t, CUstream) override { return 0x100000; }
    void do_deallocate(CUdeviceptr, std::size_t, CUstream) override {}
};

// One thread's loop: `ops` operations on `stream`; returns the seconds it timed (the whole loop,
// except for launches, which leave draining the stream out).
using Loop = std::function<double(const Stream& stream, int ops)>;

struct Variant {
    std::string name;
    Loop loop;
    bool is_launch = false;
};

struct Result {
    double per_op_us = 0;   // mean over threads of the thread's time per operation
    double throughput = 0;  // operations per second, all threads together
};

// What the table shows of one variant at one thread count, over the rounds.
struct Summary {
    double per_op_us = 0;    // median over rounds
    double throughput = 0;   // median over rounds
    double ratio = 0;        // median over rounds of per_op_us / the raw variant's, same round
    double ratio_low = 0;    // lowest of those ratios
    double ratio_high = 0;   // highest
};

// samples[round] of one variant and of the variant it is compared with.
Summary summarize(const std::vector<Result>& samples, const std::vector<Result>& raw) {
    std::vector<double> times, rates, ratios;
    for (std::size_t r = 0; r < samples.size(); ++r) {
        times.push_back(samples[r].per_op_us);
        rates.push_back(samples[r].throughput);
        ratios.push_back(samples[r].per_op_us / raw[r].per_op_us);
    }
    const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
    return {bench::median(times), bench::median(rates), bench::median(ratios), *low, *high};
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// One thread's loop of `ops` buffers of 1 MiB from `allocate(stream)`, each closed on the stream
// (Close) or dropped (its last reference going frees it on its allocation stream).
template <bool Close, class Allocate>
Loop buffers(Allocate allocate) {
    return [allocate](const Stream& stream, int ops) {
        const auto start = Clock::now();
        for (int i = 0; i < ops; ++i) {
            Buffer buffer = allocate(stream);
            if constexpr (Close) buffer.close(stream);
        }
        return seconds_since(start);
    };
}

// Runs `variant` on one thread per stream, started together; the streams are drained after.
Result run_once(const Device& device, const Variant& variant, const std::vector<Stream>& streams,
                int ops) {
    const int n = static_cast<int>(streams.size());
    std::vector<double> timed(static_cast<std::size_t>(n));
    std::barrier start(n + 1);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            device.set_current();
            start.arrive_and_wait();
            timed[static_cast<std::size_t>(i)] =
                variant.loop(streams[static_cast<std::size_t>(i)], ops);
        });
    }
    start.arrive_and_wait();
    const auto begin = Clock::now();
    for (auto& thread : threads) thread.join();
    const double wall = seconds_since(begin);
    for (const Stream& stream : streams) stream.sync();
    Result result;
    double sum = 0, rate = 0;
    for (double t : timed) {
        sum += t;
        rate += ops / t;
    }
    result.per_op_us = sum / n / ops * 1e6;
    // Allocations: all the operations over the wall time of the run. Launches: the sum of the
    // threads' rates (their timed parts leave out the draining).
    result.throughput = variant.is_launch ? rate : double(n) * ops / wall;
    return result;
}

// Busy work on this thread only: `count` steps of a loop the compiler must keep.
void spin(long count) {
    volatile long sink = 0;
    for (long i = 0; i < count; ++i) sink = i;
}

// How many spin() steps take about `nanoseconds` here (timed once, over ten million steps).
long spins_for_nanoseconds(double nanoseconds) {
    constexpr long steps = 10'000'000;
    const auto start = Clock::now();
    spin(steps);
    const double per_step_ns = seconds_since(start) * 1e9 / steps;
    return std::max(1L, static_cast<long>(nanoseconds / per_step_ns));
}

// One thread's raw allocate + free of 1 MiB on its stream (cuMemAllocAsync, cuMemFreeAsync),
// with `spins` steps of busy work between the two calls when Spin.
template <bool Spin>
Loop raw_pool_loop(const detail::DriverApi& api, long spins = 0) {
    return [&api, spins](const Stream& stream, int ops) {
        const CUstream s = stream.handle();
        const auto start = Clock::now();
        for (int i = 0; i < ops; ++i) {
            CUdeviceptr pointer = 0;
            detail::check(api.cuMemAllocAsync(&pointer, MiB, s), "cuMemAllocAsync");
            if constexpr (Spin) spin(spins);
            detail::check(api.cuMemFreeAsync(pointer, s), "cuMemFreeAsync");
        }
        return seconds_since(start);
    };
}

std::vector<int> parse_list(const char* text) {
    std::vector<int> out;
    for (const char* p = text; *p;) {
        out.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    Settings settings;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--threads" && i + 1 < argc)
            settings.threads = parse_list(argv[++i]);
        else if (arg == "--ops" && i + 1 < argc)
            settings.ops = std::atoi(argv[++i]);
        else if ((arg == "--rounds" || arg == "--runs") && i + 1 < argc)
            settings.rounds = std::atoi(argv[++i]);
        else if (arg == "--no-launch")
            settings.launches = false;
        else if (arg == "--split")
            settings.split = true;
        else if (arg.starts_with("--benchmark_"))
            continue;  // scripts/gpu-check.sh passes these
        else {
            std::fprintf(stderr,
                         "usage: thread_memory_bench [--threads 1,2,4,8,16] [--ops 5000] "
                         "[--rounds 9] [--no-launch] [--split]\n");
            return 2;
        }
    }
    if (settings.ops < 1 || settings.rounds < 1 || settings.threads.empty() ||
        std::any_of(settings.threads.begin(), settings.threads.end(), [](int n) { return n < 1; })) {
        std::fprintf(stderr, "thread_memory_bench: --ops, --rounds and every thread count must be at least 1\n");
        return 2;
    }
    if (const char* reason = bench::gpu_missing_reason(); *reason) {
        std::printf("thread_memory_bench: skipped, %s\n", reason);
        return 0;
    }
    bench::GpuFixture fixture;
    const Device& device = *fixture.device;
    const auto& api = detail::driver();

    // Every side allocates from the device's default pool; keep what it frees reserved, so that
    // no side pays for the pool giving memory back at a synchronisation.
    auto pool_resource = std::make_shared<DeviceMemoryResource>(device);
    pool_resource->set_release_threshold(UINT64_MAX);
    const CUmemoryPool pool = pool_resource->pool();
    auto caching =
        std::make_shared<CachingMemoryResource>(std::make_shared<DeviceMemoryResource>(device));
    // The same, kept until exit: its buffers count no references to it.
    auto kept_caching =
        std::make_shared<CachingMemoryResource>(std::make_shared<DeviceMemoryResource>(device));
    keep_until_exit(kept_caching);

    std::vector<Variant> variants;
    variants.push_back({"raw cuMemAllocAsync", raw_pool_loop<false>(api)});
    variants.push_back({"raw cuMemAllocFromPoolAsync", [&](const Stream& stream, int ops) {
                            const CUstream s = stream.handle();
                            const auto start = Clock::now();
                            for (int i = 0; i < ops; ++i) {
                                CUdeviceptr pointer = 0;
                                detail::check(api.cuMemAllocFromPoolAsync(&pointer, MiB, pool, s),
                                              "cuMemAllocFromPoolAsync");
                                detail::check(api.cuMemFreeAsync(pointer, s), "cuMemFreeAsync");
                            }
                            return seconds_since(start);
                        }});
    const auto device_allocate = [&](const Stream& stream) { return device.allocate(MiB, stream); };
    // allocate() of the resource `held` names (kept alive by main for the whole run).
    const auto from = [](const auto& held) {
        return [&held](const Stream& stream) { return held->allocate(MiB, stream); };
    };
    variants.push_back({"Device::allocate + close", buffers<true>(device_allocate)});
    variants.push_back({"Device::allocate + drop", buffers<false>(device_allocate)});
    variants.push_back({"DeviceMemoryResource + close", buffers<true>(from(pool_resource))});
    variants.push_back({"DeviceMemoryResource + drop", buffers<false>(from(pool_resource))});
    variants.push_back({"CachingMemoryResource + close", buffers<true>(from(caching))});
    variants.push_back({"Caching kept until exit + close", buffers<true>(from(kept_caching))});
    variants.push_back({"CachingMemoryResource pointers", [&](const Stream& stream, int ops) {
                            const CUstream s = stream.handle();
                            const auto start = Clock::now();
                            for (int i = 0; i < ops; ++i) {
                                const CUdeviceptr pointer = caching->allocate_pointer(MiB, s);
                                caching->deallocate_pointer(pointer, MiB, s);
                            }
                            return seconds_since(start);
                        }});
    if (settings.split) {
        const CUcontext context = device.context().handle();
        variants.push_back({"raw FromPool + cuCtxGetId", [&, context](const Stream& stream, int ops) {
                                const CUstream s = stream.handle();
                                const auto start = Clock::now();
                                for (int i = 0; i < ops; ++i) {
                                    CUdeviceptr pointer = 0;
                                    unsigned long long id = 0;
                                    detail::check(api.cuMemAllocFromPoolAsync(&pointer, MiB, pool, s),
                                                  "cuMemAllocFromPoolAsync");
                                    detail::check(api.cuCtxGetId(context, &id), "cuCtxGetId");
                                    detail::check(api.cuMemFreeAsync(pointer, s), "cuMemFreeAsync");
                                }
                                return seconds_since(start);
                            }});
        // The raw calls with work of this thread's own between them, from a quarter to twice
        // Buffer's own (the "no driver" rows below, about 40 ns): what any work there does to the
        // driver pool's lock under contention, apart from what the work costs. Beside them, raw
        // cuMemAllocAsync run again as a variant of its own: how far two runs of the same calls
        // part, the floor under every ratio.
        variants.push_back({"raw cuMemAllocAsync, again", variants[0].loop});
        for (const int nanoseconds : {10, 20, 40, 80}) {
            variants.push_back({"raw + " + std::to_string(nanoseconds) + " ns of own work",
                                raw_pool_loop<true>(api, spins_for_nanoseconds(nanoseconds))});
        }
        auto kept = std::make_shared<NoDriverResource>();
        keep_until_exit(kept);
        auto counted = std::make_shared<NoDriverResource>();
        for (auto [name, resource] : {std::pair{"no driver, kept resource + drop", kept},
                                      std::pair{"no driver, counted resource + drop", counted}}) {
            variants.push_back({name, buffers<false>([resource](const Stream& stream) {
                                    return resource->allocate(MiB, stream);
                                })});
        }
    }
    std::optional<Kernel> empty;
    if (settings.launches) {
        const ObjectCode code =
            fixture.compile(R"(extern "C" __global__ void empty() {})", "thread_memory_bench");
        empty = code.get_kernel("empty");
        const auto function = reinterpret_cast<CUfunction>(empty->handle());
        // Bursts below the launch queue's depth, the stream drained outside the timing.
        auto bursts = [](const Stream& stream, int ops, const std::function<void()>& one) {
            double spent = 0;
            for (int done = 0; done < ops;) {
                const int burst = std::min(bench::launch_burst, ops - done);
                const auto start = Clock::now();
                for (int i = 0; i < burst; ++i) one();
                spent += seconds_since(start);
                done += burst;
                stream.sync();
            }
            return spent;
        };
        variants.push_back({"launch raw",
                            [=, &api](const Stream& stream, int ops) {
                                const CUstream s = stream.handle();
                                return bursts(stream, ops, [&] {
                                    detail::check(api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0,
                                                                     s, nullptr, nullptr),
                                                  "cuLaunchKernel");
                                });
                            },
                            true});
        variants.push_back({"launch cudacore",
                            [=, &empty](const Stream& stream, int ops) {
                                const LaunchConfig config{.grid = 1, .block = 32};
                                return bursts(stream, ops, [&] { launch(stream, config, *empty); });
                            },
                            true});
    }

    std::printf("thread_memory_bench: %s, %d operations per thread, %d rounds (medians)\n",
                device.name().c_str(), settings.ops, settings.rounds);
    const std::size_t raw_launch = settings.launches ? variants.size() - 2 : 0;
    // results[thread count index][variant]
    std::vector<std::vector<Summary>> results(settings.threads.size(),
                                              std::vector<Summary>(variants.size()));
    for (std::size_t t = 0; t < settings.threads.size(); ++t) {
        const int n = settings.threads[t];
        std::vector<Stream> streams;  // one per thread, for every variant and round
        for (int i = 0; i < n; ++i) streams.push_back(device.create_stream());
        for (const Variant& variant : variants)
            run_once(device, variant, streams, settings.ops / 10 + 1);
        // samples[variant][round]
        std::vector<std::vector<Result>> samples(variants.size());
        for (int round = 0; round < settings.rounds; ++round) {
            for (std::size_t k = 0; k < variants.size(); ++k) {
                const std::size_t v = (k + static_cast<std::size_t>(round)) % variants.size();
                samples[v].push_back(run_once(device, variants[v], streams, settings.ops));
            }
        }
        std::printf("\n%d thread%s\n", n, n == 1 ? "" : "s");
        std::printf("  %-32s %12s %10s %16s %16s\n", "variant", "us/op/thread", "vs raw",
                    "(rounds low-high)", "aggregate op/s");
        for (std::size_t v = 0; v < variants.size(); ++v) {
            const Summary r = results[t][v] =
                summarize(samples[v], samples[variants[v].is_launch ? raw_launch : 0]);
            std::printf("  %-32s %12.3f %10.3f %8.3f-%-7.3f %16.0f\n", variants[v].name.c_str(),
                        r.per_op_us, r.ratio, r.ratio_low, r.ratio_high, r.throughput);
        }
        std::fflush(stdout);
    }

    // The issue's table and goals.
    auto index_of = [&](const char* name) {
        for (std::size_t v = 0; v < variants.size(); ++v)
            if (variants[v].name == name) return v;
        return std::size_t{0};
    };
    const std::size_t raw = 0, close = index_of("Device::allocate + close"),
                      drop = index_of("Device::allocate + drop"),
                      resource_close = index_of("DeviceMemoryResource + close"),
                      resource_drop = index_of("DeviceMemoryResource + drop"),
                      cached = index_of("CachingMemoryResource + close"),
                      kept = index_of("Caching kept until exit + close");
    // "operation ..." starts what scripts/gpu-check.sh copies into its summary.
    std::printf(
        "\noperation: allocate + free 1 MiB, per-thread time per operation (median of %d "
        "rounds; in brackets the median of the ratios to raw cuMemAllocAsync in the same round) "
        "and aggregate operations per second\n",
        settings.rounds);
    std::printf(
        "| threads | raw µs | Device::allocate close | drop | DeviceMemoryResource close "
        "| drop | Caching close | Caching kept until exit close | raw op/s | Caching op/s "
        "| Caching kept op/s |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    bool default_within = true;
    for (std::size_t t = 0; t < settings.threads.size(); ++t) {
        const auto& row = results[t];
        auto ratio = [&](std::size_t v) { return row[v].ratio; };
        for (std::size_t v : {close, drop, resource_close, resource_drop})
            default_within = default_within && ratio(v) <= 1.1;
        std::printf(
            "| %d | %.2f | %.2f µs (%.2f) | %.2f µs (%.2f) | %.2f µs (%.2f) | %.2f µs (%.2f) "
            "| %.2f µs (%.2f) | %.2f µs (%.2f) | %.0f | %.0f | %.0f |\n",
            settings.threads[t], row[raw].per_op_us, row[close].per_op_us, ratio(close),
            row[drop].per_op_us, ratio(drop), row[resource_close].per_op_us, ratio(resource_close),
            row[resource_drop].per_op_us, ratio(resource_drop), row[cached].per_op_us,
            ratio(cached), row[kept].per_op_us, ratio(kept), row[raw].throughput,
            row[cached].throughput, row[kept].throughput);
    }
    std::printf("\ngoal, every default-path ratio <= 1.1: %s\n",
                default_within ? "met" : "NOT met");
    const auto one = std::find(settings.threads.begin(), settings.threads.end(), 1);
    const auto many = std::find(settings.threads.begin(), settings.threads.end(), 16);
    if (one != settings.threads.end()) {
        const auto& row = results[static_cast<std::size_t>(one - settings.threads.begin())];
        std::printf("goal, caching one-thread time <= raw: %.3f vs %.3f us: %s\n",
                    row[cached].per_op_us, row[raw].per_op_us,
                    row[cached].per_op_us <= row[raw].per_op_us ? "met" : "NOT met");
    }
    if (many != settings.threads.end()) {
        const auto& row = results[static_cast<std::size_t>(many - settings.threads.begin())];
        const double factor = row[cached].throughput / row[raw].throughput;
        std::printf("goal, caching aggregate at 16 threads >= 8x raw: %.1fx: %s\n", factor,
                    factor >= 8 ? "met" : "NOT met");
    }
    const auto stats = caching->statistics();
    std::printf(
        "caching statistics: hits %llu, misses %llu, cached %llu bytes, peak reserved "
        "%llu bytes\n",
        static_cast<unsigned long long>(stats.hits), static_cast<unsigned long long>(stats.misses),
        static_cast<unsigned long long>(stats.bytes_cached),
        static_cast<unsigned long long>(stats.peak_bytes_reserved));
    return 0;
}
