// A fleet compiling the same kernels against one Redis: 8 processes each ask compile_cached for
// the same 64 specializations (through a memory cache in front of the remote one), and the
// compile lock has each compiled once in all. A table program, not a Google Benchmark: it starts
// its own server.
//
//   fleet_compile_bench [--url redis://...] [--processes P] [--kernels K]
//
// Without --url (or $CUDACORE_REMOTE_CACHE) it starts redis-server on a free loopback port, as the
// tests do. Runs, each on a fresh key prefix: one process compiling the K kernels (the baseline);
// then P processes with the compile lock (target: K compiles in all) and with it off (lock_ms=0:
// each process compiles what it misses), twice: each process starting at its own offset in the
// list (process p at p*K/P: they spread over the keys, so the wall time can approach the
// baseline's divided by min(P, cores)), and all in the same order (as copies of one service
// started together: with the lock they take turns, key by key). Compiles are counted by each
// process's cache_stats(). Exits 1 when a locked run did not compile each kernel exactly once.
// Runs without a GPU (arch sm_90).
#include "redis_server.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
using Clock = std::chrono::steady_clock;

// Specialization i of one kernel: its own constant, so each is a different program and key.
Program specialization(int i) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "fleet.cu";
    const std::string source = R"(
extern "C" __global__ void scale(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * )" + std::to_string(i + 2) + R"(.0f + 1.0f;
}
)";
    return Program(source, SourceType::cxx, options);
}

struct Run {
    long long compiles = 0;
    long long lock_waits = 0;
    long long timeouts = 0;
    double wall_s = 0;
    bool failed = false;
};

// One process of a run: compiles the kernels from its offset, then writes its counts to `out`.
void child(const RemoteCacheOptions& options, int kernels, int offset, int out) {
    long long numbers[3] = {-1, -1, -1};
    try {
        auto remote = std::make_shared<RemoteProgramCache>(options);
        TieredProgramCache cache({std::make_shared<MemoryProgramCache>(), remote});
        for (int n = 0; n < kernels; ++n) {
            Program program = specialization((offset + n) % kernels);
            compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
        }
        numbers[0] = static_cast<long long>(cache_stats().compiles);
        numbers[1] = static_cast<long long>(remote->counters().lock_waits);
        numbers[2] = static_cast<long long>(remote->counters().lock_wait_timeouts);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fleet_compile_bench: %s\n", e.what());
    }
    [[maybe_unused]] const ssize_t written = ::write(out, numbers, sizeof numbers);
    ::_exit(numbers[0] < 0 ? 1 : 0);
}

// `processes` processes at once, each a fork of this one (which has compiled nothing).
Run run(RemoteCacheOptions options, const std::string& prefix, int processes, int kernels,
        bool spread) {
    options.key_prefix = prefix;
    Run result;
    std::vector<std::pair<pid_t, int>> children;
    const auto start = Clock::now();
    for (int p = 0; p < processes; ++p) {
        int pipe_fds[2];
        if (::pipe(pipe_fds) != 0) {
            result.failed = true;
            break;
        }
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(pipe_fds[0]);
            child(options, kernels, spread ? p * kernels / processes : 0, pipe_fds[1]);
        }
        ::close(pipe_fds[1]);
        if (pid < 0) {
            ::close(pipe_fds[0]);
            result.failed = true;
            break;
        }
        children.emplace_back(pid, pipe_fds[0]);
    }
    for (const auto& [pid, fd] : children) {
        long long numbers[3] = {-1, -1, -1};
        if (::read(fd, numbers, sizeof numbers) != static_cast<ssize_t>(sizeof numbers) ||
            numbers[0] < 0)
            result.failed = true;
        ::close(fd);
        int status = 0;
        ::waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result.failed = true;
        result.compiles += std::max(0LL, numbers[0]);
        result.lock_waits += std::max(0LL, numbers[1]);
        result.timeouts += std::max(0LL, numbers[2]);
    }
    result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
}

void row(const char* what, int processes, const Run& run, double baseline_s) {
    std::printf("| %-33s | %9d | %8lld | %10lld | %8lld | %8.2f | %7.2fx |%s\n", what, processes,
                run.compiles, run.lock_waits, run.timeouts, run.wall_s, baseline_s / run.wall_s,
                run.failed ? " (a process failed)" : "");
}

}  // namespace

int main(int argc, char** argv) {
    std::string url;
    int processes = 8;
    int kernels = 64;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--url") == 0 && i + 1 < argc) {
            url = argv[++i];
        } else if (std::strcmp(argv[i], "--processes") == 0 && i + 1 < argc) {
            processes = std::max(1, std::atoi(argv[++i]));
        } else if (std::strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) {
            kernels = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: fleet_compile_bench [--url redis://...] [--processes P] "
                                 "[--kernels K]\n");
            return 64;
        }
    }
    if (url.empty()) {
        if (const char* from_env = std::getenv("CUDACORE_REMOTE_CACHE"); from_env && *from_env)
            url = from_env;
    }
    std::unique_ptr<test::RedisServer> server;
    if (url.empty()) {
        if (const std::string reason = test::RedisServer::unavailable_reason(); !reason.empty()) {
            std::fprintf(stderr, "fleet_compile_bench: %s; or give --url\n", reason.c_str());
            return 1;
        }
        server = std::make_unique<test::RedisServer>();
        url = server->url();
    }
    const RemoteCacheOptions options = RemoteCacheOptions::from_url(url);
    const std::string prefix = "cudacore-fleet-bench-" + std::to_string(::getpid());
    std::printf("fleet_compile_bench: %s, %d kernels, %ld cores\n\n", options.display_url().c_str(),
                kernels, ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("| run                               | processes | compiles | lock waits | timeouts | wall s   | vs one  |\n");
    std::printf("| --------------------------------- | --------- | -------- | ---------- | -------- | -------- | ------- |\n");
    int status = 0;
    const Run one = run(options, prefix + "-one", 1, kernels, true);
    row("one process", 1, one, one.wall_s);
    if (one.failed) status = 1;
    RemoteCacheOptions unlocked_options = options;
    unlocked_options.lock_expiry = std::chrono::milliseconds(0);
    for (const bool spread : {true, false}) {
        const std::string order = spread ? "-spread" : "-same";
        const Run locked = run(options, prefix + order + "-locked", processes, kernels, spread);
        row(spread ? "spread start, lock" : "same order, lock", processes, locked, one.wall_s);
        const Run unlocked =
            run(unlocked_options, prefix + order + "-unlocked", processes, kernels, spread);
        row(spread ? "spread start, no lock (lock_ms=0)" : "same order, no lock (lock_ms=0)",
            processes, unlocked, one.wall_s);
        if (locked.failed || unlocked.failed) status = 1;
        if (locked.compiles != kernels) {
            std::fprintf(stderr, "fleet_compile_bench: %lld compiles with the lock, not %d\n",
                         locked.compiles, kernels);
            status = 1;
        }
    }
    // Leave the server as found: remove this run's entries.
    for (const char* run_name : {"-one", "-spread-locked", "-spread-unlocked", "-same-locked",
                                 "-same-unlocked"}) {
        RemoteCacheOptions cleanup = options;
        cleanup.key_prefix = prefix + run_name;
        try {
            RemoteProgramCache(cleanup).clear();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fleet_compile_bench: clearing %s: %s\n", cleanup.key_prefix.c_str(),
                         e.what());
        }
    }
    return status;
}
