// What capturing the driver's error log (errors/driver_log.hpp) costs per call, from 1 to 32
// threads at once, each thread on its own stream: the thread-scaling table of the capture.
//
// The capture is one callback the loader registers (cuLogsRegisterCallback) when it first opens
// the driver, for the whole life of the process: it keeps no handle, never unregisters it, and
// no variable or option turns it off. A successful call does nothing of cudacore's for it; what a
// success could still cost is the driver's own work for a registered callback. So "off" and "on"
// are timed in one process, in two phases:
//
//  1. Before anything opens the driver through cudacore: the bench opens libcuda itself
//     (dlopen, the same library cudacore opens later) and times raw calls with no callback
//     registered, alternating round by round with the same calls while the bench itself has
//     cudacore's callback (detail::driver_log_callback) registered, through a handle it
//     unregisters after each such round.
//  2. Then cudacore opens the driver (Device 0), which registers its callback for good, and
//     cudacore's launch is timed round by round beside the raw launch in that same state.
//
// Variants, per thread count: raw cuLaunchKernel of an empty kernel (bursts of 256, the stream
// drained outside the timing) with no callback, and with cudacore's callback (phase 1); raw
// cuLaunchKernel and cudacore::launch with cudacore's callback (phase 2); a failing call,
// cuMemFree of an address never allocated, with no callback, and with the callback followed by
// take_driver_log("cuMemFree"), the work a DriverError's message adds (phase 1). Each value is
// the mean over the threads of each thread's time per call, then the median over the rounds;
// ratios are medians of the ratios within each round (a variant against the raw launch of its
// own round and phase). "cudacore / raw, no callback" multiplies the two phases' ratios.
//
// A CPU-only table comes first and needs no GPU: the callback alone, called as the driver calls
// it when a call fails (an error line and the driver's "Returning ..." line) followed by
// take_driver_log, and called with a warning (which it ignores), per call at 1 to 32 threads, in
// the calling thread's CPU time (the launch tables are wall time per thread).
// Without a GPU the bench prints that table, says why the rest is missing, and exits 0.
//
//     driver_log_bench [--threads 1,2,4,8,16,32] [--launches 10240] [--rounds 7]
//
// A program, not a Google Benchmark: the threads are its own. Google Benchmark's --benchmark_*
// flags (scripts/gpu-check.sh passes them to every *_bench) are ignored.
#include "cudacore/device.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"
#include "errors/driver_log.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using Clock = std::chrono::steady_clock;

constexpr int kBurst = 256;  // below the launch queue's depth: enqueueing, not waiting for room

struct Settings {
    std::vector<int> threads{1, 2, 4, 8, 16, 32};
    int launches = 10240;  // per thread and round
    int rounds = 7;
};

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// This thread's CPU time: what a call costs the thread, whether or not it had a core to itself
// (32 threads on fewer cores wait for one, which a wall clock would count).
double thread_cpu_seconds() {
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// Runs `loop(thread index)` on `n` threads started together; the mean over the threads of the
// seconds each returned, divided by `calls`: seconds per call.
double per_call(int n, int calls, const std::function<void(int)>& setup,
                const std::function<double(int)>& loop) {
    std::vector<double> timed(static_cast<std::size_t>(n));
    std::barrier start(n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            if (setup) setup(i);
            start.arrive_and_wait();
            timed[static_cast<std::size_t>(i)] = loop(i);
        });
    }
    for (auto& thread : threads) thread.join();
    double sum = 0;
    for (double t : timed) sum += t;
    return sum / n / calls;
}

// ---- the callback alone (no GPU) -----------------------------------------------------------

void cpu_table(const Settings& settings) {
    constexpr int calls = 200000;
    char error_line[] = "Allocation not found for address 0xdead";
    char return_line[] = "Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemFree_v2";
    char warning[] = "a warning the capture ignores";
    auto failure = [&](int) {
        const double start = thread_cpu_seconds();
        for (int k = 0; k < calls; ++k) {
            detail::driver_log_callback(nullptr, CU_LOG_LEVEL_ERROR, error_line, sizeof error_line - 1);
            detail::driver_log_callback(nullptr, CU_LOG_LEVEL_ERROR, return_line, sizeof return_line - 1);
            if (detail::take_driver_log("cuMemFree").size() != 2) std::abort();
        }
        return thread_cpu_seconds() - start;
    };
    auto ignored = [&](int) {
        const double start = thread_cpu_seconds();
        for (int k = 0; k < calls; ++k)
            detail::driver_log_callback(nullptr, CU_LOG_LEVEL_WARNING, warning, sizeof warning - 1);
        return thread_cpu_seconds() - start;
    };
    std::printf("The callback alone (no driver): CPU ns per call (the calling thread's CPU time), median of "
                "%d rounds of %d calls per thread\n",
                settings.rounds, calls);
    std::printf("| threads | failure: 2 error lines + take_driver_log | warning (ignored) |\n|---|---:|---:|\n");
    for (int n : settings.threads) {
        std::vector<double> failing, warned;
        for (int round = 0; round < settings.rounds; ++round) {
            failing.push_back(per_call(n, calls, {}, failure));
            warned.push_back(per_call(n, calls, {}, ignored));
        }
        std::printf("| %d | %.1f | %.2f |\n", n, median(failing) * 1e9, median(warned) * 1e9);
    }
    std::printf("\n");
}

// ---- the driver, opened by the bench -------------------------------------------------------

struct RawDriver {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuModuleLoadData)(CUmodule*, const void*);
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, CUstream, void**, void**);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuLogsRegisterCallback)(CUlogsCallback, void*, CUlogsCallbackHandle*);
    CUresult (*cuLogsUnregisterCallback)(CUlogsCallbackHandle);
};

template <class F>
bool bind(void* library, F& function, const char* name, bool required = true) {
    function = reinterpret_cast<F>(::dlsym(library, name));
    return function || !required;
}

// The driver's entry points, or the reason there are none (no driver, no device).
std::optional<RawDriver> open_raw_driver(std::string& reason) {
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!library) return reason = "no CUDA driver (libcuda.so.1 not found)", std::nullopt;
    RawDriver d{};
    const bool bound =
        bind(library, d.cuInit, "cuInit") && bind(library, d.cuDeviceGet, "cuDeviceGet") &&
        bind(library, d.cuDeviceGetCount, "cuDeviceGetCount") &&
        bind(library, d.cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
        bind(library, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
        bind(library, d.cuCtxSetCurrent, "cuCtxSetCurrent") && bind(library, d.cuStreamCreate, "cuStreamCreate") &&
        bind(library, d.cuStreamSynchronize, "cuStreamSynchronize") &&
        bind(library, d.cuModuleLoadData, "cuModuleLoadData") &&
        bind(library, d.cuModuleGetFunction, "cuModuleGetFunction") &&
        bind(library, d.cuLaunchKernel, "cuLaunchKernel") && bind(library, d.cuMemFree, "cuMemFree_v2") &&
        bind(library, d.cuLogsRegisterCallback, "cuLogsRegisterCallback", false) &&
        bind(library, d.cuLogsUnregisterCallback, "cuLogsUnregisterCallback", false);
    if (!bound) return reason = "the driver lacks an entry point the bench calls", std::nullopt;
    int count = 0;
    if (d.cuInit(0) != CUDA_SUCCESS || d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
        return reason = "no CUDA device", std::nullopt;
    return d;
}

void check(CUresult status, const char* call) {
    if (status == CUDA_SUCCESS) return;
    std::fprintf(stderr, "error: %s failed with status %d\n", call, static_cast<int>(status));
    std::exit(1);
}

// Device 0's primary context, a stream per thread and the empty kernel, all made raw.
struct RawSetup {
    const RawDriver& d;
    CUcontext context{};
    CUfunction empty{};
    std::vector<CUstream> streams;
    ObjectCode code;

    static ObjectCode compile_empty(const RawDriver& d, CUdevice device) {
        int major = 0, minor = 0;
        check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device), "cuDeviceGetAttribute");
        check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device), "cuDeviceGetAttribute");
        ProgramOptions options;
        options.name = "driver_log_bench.cu";
        options.arch = "sm_" + std::to_string(major * 10 + minor);
        // NVRTC only: compiling opens no driver, so no callback is registered by it.
        return Program(R"(extern "C" __global__ void empty() {})", SourceType::cxx, options).compile(CodeType::cubin);
    }

    RawSetup(const RawDriver& driver, int max_threads) : d(driver), code(make(driver, context)) {
        CUmodule module{};
        check(d.cuModuleLoadData(&module, code.code().data()), "cuModuleLoadData");
        check(d.cuModuleGetFunction(&empty, module, "empty"), "cuModuleGetFunction");
        streams.resize(static_cast<std::size_t>(max_threads));
        for (CUstream& stream : streams) check(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    }

    static ObjectCode make(const RawDriver& d, CUcontext& context) {
        CUdevice device{};
        check(d.cuDeviceGet(&device, 0), "cuDeviceGet");
        check(d.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
        check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
        return compile_empty(d, device);
    }

    // One thread's launches: `launch()` in bursts, `stream` drained between them, untimed.
    double launch_loop(CUstream stream, int launches, const std::function<void()>& launch) const {
        double spent = 0;
        for (int done = 0; done < launches; done += kBurst) {
            const auto start = Clock::now();
            for (int k = 0; k < kBurst; ++k) launch();
            spent += seconds_since(start);
            check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
        }
        return spent;
    }

    double raw_launches(int n, int launches) const {
        return per_call(
            n, launches, [&](int) { d.cuCtxSetCurrent(context); },
            [&](int i) {
                const CUstream stream = streams[static_cast<std::size_t>(i)];
                return launch_loop(stream, launches, [&] {
                    check(d.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr), "cuLaunchKernel");
                });
            });
    }

    // cuMemFree of an address never allocated, per call; `take` reads the log as a DriverError does.
    double failing_frees(int n, int calls, bool take) const {
        return per_call(
            n, calls, [&](int) { d.cuCtxSetCurrent(context); },
            [&](int) {
                const auto start = Clock::now();
                for (int k = 0; k < calls; ++k) {
                    if (d.cuMemFree(CUdeviceptr{0xdead0000}) == CUDA_SUCCESS) std::abort();
                    if (take) detail::take_driver_log("cuMemFree");
                }
                return seconds_since(start);
            });
    }
};

// ---- the tables ----------------------------------------------------------------------------

struct Row {
    std::vector<double> off, on, cudacore, raw_after, fail_off, fail_on;  // seconds per call, per round
    std::vector<double> on_ratio, cudacore_ratio;                         // within each round
};

void phase_one(const RawSetup& raw, const Settings& settings, std::vector<Row>& rows) {
    const bool can_register = raw.d.cuLogsRegisterCallback && raw.d.cuLogsUnregisterCallback;
    const int frees = std::max(1, settings.launches / 10);
    for (std::size_t t = 0; t < settings.threads.size(); ++t) {
        const int n = settings.threads[t];
        Row& row = rows[t];
        raw.raw_launches(n, kBurst);  // warm-up: the threads' first launches
        auto off = [&] {
            row.off.push_back(raw.raw_launches(n, settings.launches));
            row.fail_off.push_back(raw.failing_frees(n, frees, false));
        };
        auto on = [&] {
            CUlogsCallbackHandle handle{};
            check(raw.d.cuLogsRegisterCallback(detail::driver_log_callback, nullptr, &handle), "cuLogsRegisterCallback");
            row.on.push_back(raw.raw_launches(n, settings.launches));
            row.fail_on.push_back(raw.failing_frees(n, frees, true));
            check(raw.d.cuLogsUnregisterCallback(handle), "cuLogsUnregisterCallback");
        };
        for (int round = 0; round < settings.rounds; ++round) {
            if (!can_register) {
                off();
                continue;
            }
            // Which goes first turns from round to round, so that neither always follows the other.
            if (round % 2) on(), off();
            else off(), on();
            row.on_ratio.push_back(row.on.back() / row.off.back());
        }
    }
}

void phase_two(const RawSetup& raw, const Settings& settings, std::vector<Row>& rows) {
    Device device(0);  // cudacore opens the driver: its callback is registered from here on
    device.set_current();
    const Kernel kernel = raw.code.get_kernel("empty");
    std::vector<Stream> streams;
    for (int i = 0; i < settings.threads.back(); ++i) streams.push_back(device.create_stream());
    const LaunchConfig config{.grid = 1, .block = 32};
    for (std::size_t t = 0; t < settings.threads.size(); ++t) {
        const int n = settings.threads[t];
        Row& row = rows[t];
        auto ours = [&] {
            return per_call(
                n, settings.launches, [&](int) { device.set_current(); },
                [&](int i) {
                    const Stream& stream = streams[static_cast<std::size_t>(i)];
                    return raw.launch_loop(stream.handle(), settings.launches, [&] { launch(stream, config, kernel); });
                });
        };
        ours();  // warm-up
        for (int round = 0; round < settings.rounds; ++round) {
            auto raw_round = [&] { row.raw_after.push_back(raw.raw_launches(n, settings.launches)); };
            auto ours_round = [&] { row.cudacore.push_back(ours()); };
            if (round % 2) ours_round(), raw_round();
            else raw_round(), ours_round();
            row.cudacore_ratio.push_back(row.cudacore.back() / row.raw_after.back());
        }
    }
}

void print_tables(const Settings& settings, const std::vector<Row>& rows, bool registered) {
    std::printf("Launches (empty kernel, each thread its own stream, bursts of %d): ns per launch per thread, "
                "median of %d rounds of %d launches per thread\n",
                kBurst, settings.rounds, settings.launches);
    std::printf("| threads | raw, no callback | raw, callback | callback / none | raw, cudacore's callback "
                "| cudacore launch | cudacore / raw | cudacore / raw, no callback |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (std::size_t t = 0; t < rows.size(); ++t) {
        const Row& r = rows[t];
        const double on_ratio = registered ? median(r.on_ratio) : 0;
        std::printf("| %d | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %.3f |\n", settings.threads[t],
                    median(r.off) * 1e9, median(r.on) * 1e9, on_ratio, median(r.raw_after) * 1e9,
                    median(r.cudacore) * 1e9, median(r.cudacore_ratio), on_ratio * median(r.cudacore_ratio));
    }
    std::printf("\nA failing call (cuMemFree of an address never allocated): ns per call per thread\n");
    std::printf("| threads | no callback | callback + take_driver_log | difference |\n|---|---:|---:|---:|\n");
    for (std::size_t t = 0; t < rows.size(); ++t) {
        const Row& r = rows[t];
        std::printf("| %d | %.0f | %.0f | %.0f |\n", settings.threads[t], median(r.fail_off) * 1e9,
                    median(r.fail_on) * 1e9, (median(r.fail_on) - median(r.fail_off)) * 1e9);
    }
}

std::vector<int> parse_list(const char* text) {
    std::vector<int> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (const int n = std::atoi(item.c_str()); n > 0) out.push_back(n);
    return out;
}

}  // namespace

int main(int argc, char** argv) try {
    Settings settings;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) settings.threads = parse_list(argv[++i]);
        else if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc)
            settings.launches = std::max(kBurst, std::atoi(argv[++i]) / kBurst * kBurst);
        else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) settings.rounds = std::max(1, std::atoi(argv[++i]));
        else if (std::strncmp(argv[i], "--benchmark_", 12) == 0) continue;
        else {
            std::fprintf(stderr, "usage: driver_log_bench [--threads 1,2,4,8,16,32] [--launches N] [--rounds N]\n");
            return 2;
        }
    }
    if (settings.threads.empty()) settings.threads = {1};
    std::sort(settings.threads.begin(), settings.threads.end());
    cpu_table(settings);
    std::string reason;
    const std::optional<RawDriver> driver = open_raw_driver(reason);
    if (!driver) {
        std::printf("No launch table: %s.\n", reason.c_str());
        return 0;
    }
    const bool registered = driver->cuLogsRegisterCallback && driver->cuLogsUnregisterCallback;
    if (!registered) std::printf("The driver has no error log callbacks (before CUDA 12.9): no capture to time.\n\n");
    const RawSetup raw(*driver, settings.threads.back());
    std::vector<Row> rows(settings.threads.size());
    phase_one(raw, settings, rows);
    phase_two(raw, settings, rows);
    print_tables(settings, rows, registered);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
