// Compiling once per fleet: every rank needs all 16 specializations of a kernel that includes
// <cuda/std> headers. compile_distributed compiles each one once, somewhere among the ranks, and
// hands every rank all of them. By default the ranks of a node pool their shares on the node's
// first rank (CompileStrategy::processes): it makes one automatic PCH and compiles the rest in
// child processes that use it, while the node's other ranks sleep (docs/mpi.md). Every rank then
// checks that it holds the same code as every other rank, and with a GPU on every rank, runs each
// specialization and checks its result. cudacore's own (cuda.core has no MPI example).
//
//     mpirun -np 4 ./build/examples/example_mpi_compile_fleet             # child processes
//     mpirun -np 4 ./build/examples/example_mpi_compile_fleet --threads   # threads in each rank
//     options: --arch sm_90 (the arch to compile for when there is no GPU; default sm_90)
//
// Without a GPU every rank still compiles, exchanges and compares the code, then exits 0.
#include <cudacore/cudacore.hpp>
#include <cudacore/mpi.hpp>

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

const char* const kSource = R"(
#include <cuda/std/limits>
#include <cuda/std/type_traits>

// out[i] = in[i] * FACTOR, saturating for integers.
template <typename T, int FACTOR>
__global__ void scale(const T* in, T* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if constexpr (cuda::std::is_integral_v<T>) {
        const T limit = cuda::std::numeric_limits<T>::max() / FACTOR;
        out[i] = in[i] > limit ? cuda::std::numeric_limits<T>::max() : in[i] * FACTOR;
    } else {
        out[i] = in[i] * T(FACTOR);
    }
}
)";

constexpr int kFactors = 8;  // FACTOR 1 to 8, for float and for int: 16 specializations

std::string name_expression(int job) {
    return std::string("scale<") + (job < kFactors ? "float" : "int") + ", " +
           std::to_string(job % kFactors + 1) + ">";
}

// The same check on every rank: whether all ranks hold the same value.
bool same_everywhere(MPI_Comm comm, unsigned long long value) {
    unsigned long long low = 0, high = 0;
    MPI_Allreduce(&value, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
    MPI_Allreduce(&value, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    return low == high;
}

// Runs job `job`'s specialization over n values and counts the results that are wrong.
template <typename T>
unsigned long long run_and_check(const Device& device, const Stream& stream, const ObjectCode& code,
                                 int job) {
    constexpr unsigned n = 4096;
    const int factor = job % kFactors + 1;
    std::vector<T> in(n), out(n);
    for (unsigned i = 0; i < n; ++i) in[i] = static_cast<T>(i);
    Buffer d_in = device.allocate(n * sizeof(T), stream);
    Buffer d_out = device.allocate(n * sizeof(T), stream);
    d_in.copy_from(in, stream);
    launch(stream, LaunchConfig{.grid = n / 256, .block = 256}, code.get_kernel(name_expression(job)),
           static_cast<const T*>(d_in.data()), static_cast<T*>(d_out.data()), n);
    d_out.copy_to(out, stream);
    stream.sync();
    unsigned long long wrong = 0;
    for (unsigned i = 0; i < n; ++i)
        if (out[i] != static_cast<T>(in[i] * static_cast<T>(factor))) ++wrong;
    return wrong;
}

int run(int argc, char** argv) {
    const MPI_Comm comm = MPI_COMM_WORLD;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CompileOptions options;
    options.strategy = CompileStrategy::processes;
    std::string arch = "sm_90";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--threads") == 0) options.strategy = CompileStrategy::threads;
        else if (std::strcmp(argv[i], "--arch") == 0 && i + 1 < argc) arch = argv[++i];
    }

    // GPU or not, decided together; with GPUs every rank compiles for rank 0's arch.
    int has_gpu = system::driver_available() && system::device_count() > 0 ? 1 : 0;
    int all_have_gpu = 0;
    MPI_Allreduce(&has_gpu, &all_have_gpu, 1, MPI_INT, MPI_MIN, comm);
    std::optional<Device> device;
    if (all_have_gpu) {
        device = mpi::local_device(comm, /*share_devices=*/true);
        device->set_current();
        char shared[32] = {};
        std::snprintf(shared, sizeof shared, "%s", device->arch().c_str());
        MPI_Bcast(shared, sizeof shared, MPI_CHAR, 0, comm);
        arch = shared;
    }

    // Every rank describes the same 16 jobs: one program per specialization.
    std::vector<mpi::CompileJob> jobs;
    for (int job = 0; job < 2 * kFactors; ++job) {
        ProgramOptions program_options;
        program_options.name = "scale_" + std::to_string(job);
        program_options.arch = arch;
        jobs.push_back({Program(kSource, SourceType::cxx, program_options), {name_expression(job)}});
    }
    MPI_Barrier(comm);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<ObjectCode> codes = mpi::compile_distributed(comm, jobs, CodeType::cubin, options);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double slowest = 0;
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);

    // Every rank holds every code, and the same bytes as every other rank.
    bool same = true;
    for (const ObjectCode& code : codes)
        same = same_everywhere(comm, std::hash<std::string_view>{}(code.code())) && same;
    std::printf("rank %d: holds %zu codes for %s, %s\n", rank, codes.size(), arch.c_str(),
                same ? "the same as every rank" : "DIFFERENT from another rank");
    if (rank == 0) {
        std::printf("%zu programs compiled once across %d ranks (%s) in %.2f s\n", jobs.size(), size,
                    options.strategy == CompileStrategy::processes ? "child processes" : "threads",
                    slowest);
    }
    if (!same || codes.size() != jobs.size()) return 1;
    if (!all_have_gpu) {
        if (rank == 0) std::printf("no GPU on every rank: compiled and exchanged only, nothing run\n");
        return 0;
    }

    // Every rank runs every specialization it received and checks it.
    const Stream stream = device->create_stream();
    unsigned long long wrong = 0;
    for (int job = 0; job < static_cast<int>(codes.size()); ++job)
        wrong += job < kFactors ? run_and_check<float>(*device, stream, codes[job], job)
                                : run_and_check<int>(*device, stream, codes[job], job);
    unsigned long long wrong_everywhere = 0;
    MPI_Allreduce(&wrong, &wrong_everywhere, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    std::printf("rank %d (device %d): ran all %zu, %llu wrong values\n", rank, device->ordinal(),
                codes.size(), wrong);
    if (rank == 0) std::printf("%s\n", wrong_everywhere == 0 ? "all ranks correct" : "WRONG VALUES");
    return wrong_everywhere == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int status = 1;
    try {
        status = run(argc, argv);
    } catch (const std::exception& e) {
        // A failure outside cudacore::mpi's collectives (which raise theirs on every rank) may
        // leave other ranks waiting in MPI: end the whole job.
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        std::fprintf(stderr, "rank %d: error: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return status;
}
