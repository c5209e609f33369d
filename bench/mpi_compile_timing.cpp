// cudacore::mpi timings, run under mpirun (bench/mpi_compile.sh drives it over rank counts):
//
//   --mode every        every rank compiles all specializations itself
//   --mode once         rank 0 compiles them all, then broadcast() of the list
//   --mode distributed  compile_distributed(): each rank compiles its share, then all_gather
//   --mode processes    the same with CompileStrategy::processes (each rank's compiles after its
//                       first in child processes)
//       time until every rank holds all --specs specializations (default 64) of a <cuda/std>
//       kernel, each its own program; no cache. --workers N: compile_distributed's threads or
//       children per rank (default 0: the node's cores divided among its ranks).
//   --mode bcast        broadcast() of one --bytes ObjectCode (default 10 MB) against MPI_Bcast of
//       the same number of bytes, best of --repeat runs (default 20) each, and the ratios: "raw"
//       receives into a new buffer each time (as any receiver that keeps the bytes must, and as
//       broadcast() does), "raw_reused" into the same buffer every time.
//   --phases 1          (the compile modes) where the time goes, for bench/mpi_scale.sh: the jobs'
//       cache keys are computed first and timed alone (compile_distributed then finds them
//       remembered); with processes a thread of each node's first rank watches its child
//       processes; each rank's CPU seconds and its children's (getrusage). Adds to the line:
//       keys_s (the slowest rank's),
//       children_from_s / children_to_s (when the first child was seen and the last one gone,
//       from the common start; -1 without children), peak_children (most at once), children
//       (started), child_rank, cpu_child_rank_s (that rank's own CPU), cpu_children_s (its
//       children's), cpu_others_s / cpu_others_max_s (the other ranks' CPU, sum and most).
//   --wakers K --waker-us U  (the compile modes) K threads on each rank that wake every U
//       microseconds (default 1000) while the rank works: what K ranks waiting in a loop that
//       sleeps a millisecond cost the work beside them (compile_distributed's waiting ranks did
//       that until they slept on a futex).
//
// Rank 0 prints one line of key=value pairs. --arch (default sm_90) is the target; no GPU needed.
#include "cudacore/cache_key.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/mpi.hpp"
#include "cudacore/program.hpp"

#include <mpi.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

// One specialization per program: element type x width, each including <cuda/std> headers.
const char* const kSource = R"(
#include <cuda/std/array>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

template <typename T, int WIDTH>
__global__ void clamp_sum(const T* in, T* out, unsigned long long n) {
    cuda::std::array<T, WIDTH> window{};
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i + WIDTH > n) return;
    for (int k = 0; k < WIDTH; ++k) window[k] = in[i + k];
    T total = T(0);
    for (const T& value : window) {
        if constexpr (cuda::std::is_floating_point_v<T>) total += value;
        else total = (total > cuda::std::numeric_limits<T>::max() - value) ? total : total + value;
    }
    out[i] = total;
}
)";

const char* const kTypes[] = {"float", "double", "int", "cuda::std::int64_t"};

std::vector<mpi::CompileJob> jobs_of(int specs, const std::string& arch) {
    std::vector<mpi::CompileJob> jobs;
    for (int i = 0; i < specs; ++i) {
        ProgramOptions options;
        options.arch = arch;
        options.name = "clamp_sum_" + std::to_string(i);
        const std::string expression =
            std::string("clamp_sum<") + kTypes[i % 4] + ", " + std::to_string(1 + i / 4) + ">";
        jobs.push_back({Program(kSource, SourceType::cxx, options), {expression}});
    }
    return jobs;
}

// Seconds from a common start until the slowest rank is done with `work`.
template <class Work>
double timed(MPI_Comm comm, Work&& work) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    work();
    double mine = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// The child processes of the thread that makes it, seen every 2 ms from another thread
// (/proc/self/task/TID/children): when the first was seen and the last gone, how many ran at
// once, how many there were. Calls no MPI function.
class ChildWatch {
public:
    explicit ChildWatch(Clock::time_point start)
        : path_("/proc/self/task/" + std::to_string(::gettid()) + "/children"), start_(start),
          thread_([this] { watch(); }) {}
    ChildWatch(const ChildWatch&) = delete;
    ChildWatch& operator=(const ChildWatch&) = delete;
    ~ChildWatch() { stop(); }
    void stop() {
        done_ = true;
        if (thread_.joinable()) thread_.join();
    }
    double first = -1, last = -1;  // seconds from the start; -1: none seen
    int peak = 0;
    std::set<long> seen;

private:
    void watch() {
        while (!done_) {
            std::ifstream in(path_);
            int count = 0;
            for (long pid = 0; in >> pid; ++count) seen.insert(pid);
            const double now = seconds_since(start_);
            if (count > 0 && first < 0) first = now;
            if (count > 0) last = now;
            peak = std::max(peak, count);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    std::string path_;
    Clock::time_point start_;
    std::atomic<bool> done_{false};
    std::thread thread_;
};

double cpu_seconds(int who) {
    rusage usage{};
    ::getrusage(who, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

int run(int argc, char** argv) {
    std::string mode = "distributed", arch = "sm_90";
    int specs = 64, repeat = 20;
    unsigned workers = 0;
    bool phases = false;
    int wakers = 0, waker_us = 1000;
    std::size_t bytes = 10'000'000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        if (key == "--mode") mode = argv[i + 1];
        else if (key == "--specs") specs = std::atoi(argv[i + 1]);
        else if (key == "--arch") arch = argv[i + 1];
        else if (key == "--bytes") bytes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (key == "--repeat") repeat = std::atoi(argv[i + 1]);
        else if (key == "--workers") workers = static_cast<unsigned>(std::atoi(argv[i + 1]));
        else if (key == "--phases") phases = std::atoi(argv[i + 1]) != 0;
        else if (key == "--wakers") wakers = std::atoi(argv[i + 1]);
        else if (key == "--waker-us") waker_us = std::atoi(argv[i + 1]);
        else throw InvalidArgumentError("unknown option " + key);
    }
    const MPI_Comm comm = MPI_COMM_WORLD;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    if (mode == "every" || mode == "once" || mode == "distributed" || mode == "processes") {
        auto jobs = jobs_of(specs, arch);
        std::vector<ObjectCode> codes;
        // --phases: what each rank measures (see the top of this file).
        double keys = 0, cpu_self = 0, cpu_children = 0;
        std::optional<ChildWatch> watch;
        // Only a node's first rank has children (with processes): the others run no watch, which
        // would wake them every 2 ms.
        bool watches = false;
        if (phases && mode == "processes") {
            MPI_Comm node;
            MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
            int node_rank = 0;
            MPI_Comm_rank(node, &node_rank);
            MPI_Comm_free(&node);
            watches = node_rank == 0;
        }
        const double seconds = timed(comm, [&] {
            const Clock::time_point start = Clock::now();
            const double self_before = cpu_seconds(RUSAGE_SELF), children_before = cpu_seconds(RUSAGE_CHILDREN);
            std::atomic<bool> working{true};
            std::vector<std::thread> waking;
            for (int k = 0; k < wakers; ++k) {
                waking.emplace_back([&] {
                    while (working) std::this_thread::sleep_for(std::chrono::microseconds(waker_us));
                });
            }
            if (phases) {
                if (watches) watch.emplace(start);
                for (auto& job : jobs) cache_key(job.program, CodeType::cubin, job.name_expressions);
                keys = seconds_since(start);
            }
            if (mode == "every") {
                for (auto& job : jobs) codes.push_back(job.program.compile(CodeType::cubin, job.name_expressions));
            } else if (mode == "once") {
                if (rank == 0) {
                    for (auto& job : jobs) codes.push_back(job.program.compile(CodeType::cubin, job.name_expressions));
                }
                codes = mpi::broadcast(codes, 0, comm);
            } else {
                CompileOptions options;
                options.workers = workers;
                if (mode == "processes") options.strategy = CompileStrategy::processes;
                codes = mpi::compile_distributed(comm, jobs, CodeType::cubin, options);
            }
            working = false;
            for (auto& thread : waking) thread.join();
            if (watch) watch->stop();
            cpu_self = cpu_seconds(RUSAGE_SELF) - self_before;
            cpu_children = cpu_seconds(RUSAGE_CHILDREN) - children_before;
        });
        if (codes.size() != static_cast<std::size_t>(specs)) throw Error("wrong number of codes");
        std::string extra;
        if (phases) {
            // keys, first, last, peak, started, cpu_self, cpu_children: one row per rank on rank 0.
            const std::array<double, 7> mine{keys,
                                             watch ? watch->first : -1,
                                             watch ? watch->last : -1,
                                             watch ? double(watch->peak) : 0,
                                             watch ? double(watch->seen.size()) : 0,
                                             cpu_self,
                                             cpu_children};
            std::vector<double> all(mine.size() * static_cast<std::size_t>(size));
            MPI_Gather(mine.data(), int(mine.size()), MPI_DOUBLE, all.data(), int(mine.size()), MPI_DOUBLE, 0, comm);
            if (rank == 0) {
                auto at = [&](int r, int field) { return all[std::size_t(r) * mine.size() + std::size_t(field)]; };
                int child_rank = 0;  // the rank that started the most children (with processes, the node's first)
                double slowest_keys = 0, others = 0, others_max = 0;
                for (int r = 0; r < size; ++r) {
                    slowest_keys = std::max(slowest_keys, at(r, 0));
                    if (at(r, 4) > at(child_rank, 4)) child_rank = r;
                }
                for (int r = 0; r < size; ++r) {
                    if (r == child_rank) continue;
                    others += at(r, 5);
                    others_max = std::max(others_max, at(r, 5));
                }
                char text[512];
                std::snprintf(text, sizeof text,
                              " keys_s=%.3f children_from_s=%.3f children_to_s=%.3f peak_children=%d children=%d"
                              " child_rank=%d cpu_child_rank_s=%.2f cpu_children_s=%.2f cpu_others_s=%.2f"
                              " cpu_others_max_s=%.2f",
                              slowest_keys, at(child_rank, 1), at(child_rank, 2), int(at(child_rank, 3)),
                              int(at(child_rank, 4)), child_rank, at(child_rank, 5), at(child_rank, 6), others,
                              others_max);
                extra = text;
            }
        }
        if (rank == 0) {
            std::printf("mode=%s ranks=%d specs=%d seconds=%.3f%s\n", mode.c_str(), size, specs, seconds,
                        extra.c_str());
        }
        return 0;
    }
    if (mode == "bcast") {
        std::string code(bytes, '\0');
        std::mt19937_64 random(42);
        for (auto& byte : code) byte = static_cast<char>(random());
        const ObjectCode original = ObjectCode::from_cubin(code, "ten_megabytes");
        // raw: MPI_Bcast into a new buffer on each receiver, as keeping the bytes needs (and as
        // broadcast() does); raw_reused: into the same buffer every time (the floor).
        std::string reused(bytes, '\0');
        if (rank == 0) reused = code;
        double best_raw = 1e30, best_reused = 1e30, best_cudacore = 1e30;
        for (int r = 0; r < repeat; ++r) {
            best_reused = std::min(best_reused, timed(comm, [&] {
                MPI_Bcast(reused.data(), static_cast<int>(reused.size()), MPI_BYTE, 0, comm);
            }));
            best_raw = std::min(best_raw, timed(comm, [&] {
                std::string fresh = rank == 0 ? std::string() : std::string(bytes, '\0');
                char* data = rank == 0 ? const_cast<char*>(original.code().data()) : fresh.data();
                MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, comm);
            }));
            best_cudacore = std::min(best_cudacore, timed(comm, [&] {
                const ObjectCode received = mpi::broadcast(rank == 0 ? std::optional<ObjectCode>(original)
                                                                     : std::nullopt, 0, comm);
                if (received.size() != bytes) throw Error("wrong size received");
            }));
        }
        if (reused != code) throw Error("MPI_Bcast delivered other bytes");
        if (rank == 0) {
            std::printf("mode=bcast ranks=%d bytes=%zu raw_ms=%.3f raw_reused_ms=%.3f cudacore_ms=%.3f "
                        "ratio=%.2f ratio_reused=%.2f\n",
                        size, bytes, best_raw * 1e3, best_reused * 1e3, best_cudacore * 1e3,
                        best_cudacore / best_raw, best_cudacore / best_reused);
        }
        return 0;
    }
    throw InvalidArgumentError("unknown --mode " + mode + " (every, once, distributed, processes, bcast)");
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int status = 0;
    try {
        status = run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return status;
}
