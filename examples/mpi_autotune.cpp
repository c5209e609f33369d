// Autotuning over MPI: every rank compiles its share of the variants of a kernel (block size x
// items per thread) and times them on its own GPU; an all-reduce (MINLOC) finds the fastest, its
// rank broadcasts that ObjectCode, and every rank runs it and checks the result. cudacore's own
// (cuda.core has no MPI example).
//
//     mpirun -np 2 ./build/examples/example_mpi_autotune                    # one GPU per rank
//     mpirun -np 2 ./build/examples/example_mpi_autotune --share-devices    # ranks share GPUs
//     options: --arch sm_90 (the arch to compile for when there is no GPU; default sm_90)
//
// Without a GPU every rank still compiles its share, then the program says so and exits 0.
#include <cudacore/cudacore.hpp>
#include <cudacore/mpi.hpp>

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

const char* const kSource = R"(
template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) axpy(float a, const float* x, float* y, unsigned long long n) {
    unsigned long long first = blockIdx.x * (unsigned long long)(BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        unsigned long long i = first + (unsigned long long)k * BLOCK;
        if (i < n) y[i] = a * x[i] + y[i];
    }
}
)";

struct Variant {
    int block;
    int items;
    std::string name_expression() const {
        return "axpy<" + std::to_string(block) + ", " + std::to_string(items) + ">";
    }
};

std::vector<Variant> all_variants() {
    std::vector<Variant> variants;
    for (int block : {64, 128, 256, 512, 1024})
        for (int items : {1, 2, 4, 8}) variants.push_back({block, items});
    return variants;
}

using Axpy = TypedKernel<void(float, const float*, float*, unsigned long long)>;

LaunchConfig config_for(const Variant& v, unsigned long long n) {
    const unsigned long long per_block = static_cast<unsigned long long>(v.block) * v.items;
    return LaunchConfig{.grid = unsigned((n + per_block - 1) / per_block), .block = unsigned(v.block)};
}

int run(int argc, char** argv) {
    const MPI_Comm comm = MPI_COMM_WORLD;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    bool share_devices = false;
    std::string arch = "sm_90";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--share-devices") == 0) share_devices = true;
        else if (std::strcmp(argv[i], "--arch") == 0 && i + 1 < argc) arch = argv[++i];
    }

    // GPU or not, decided together: timing needs a device on every rank.
    int has_gpu = system::driver_available() && system::device_count() > 0 ? 1 : 0;
    int all_have_gpu = 0;
    MPI_Allreduce(&has_gpu, &all_have_gpu, 1, MPI_INT, MPI_MIN, comm);
    std::optional<Device> device;
    if (all_have_gpu) {
        device = mpi::local_device(comm, share_devices);  // throws on every rank if too few GPUs
        device->set_current();
        // Every rank compiles for rank 0's arch, so any rank's winner runs everywhere.
        arch = device->arch();
        char shared[32] = {};
        std::snprintf(shared, sizeof shared, "%s", arch.c_str());
        MPI_Bcast(shared, sizeof shared, MPI_CHAR, 0, comm);
        arch = shared;
    }

    // This rank's share of the variants (the same split compile_distributed uses).
    const std::vector<Variant> variants = all_variants();
    ProgramOptions options;
    options.name = "axpy";
    options.arch = arch;
    Program program(kSource, SourceType::cxx, options);
    std::vector<std::size_t> mine;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < variants.size(); ++i) {
        if (mpi::compile_owner(i, size) == rank) {
            mine.push_back(i);
            names.push_back(variants[i].name_expression());
        }
    }
    std::optional<ObjectCode> code;
    if (!names.empty()) code = program.compile(CodeType::cubin, names);
    std::printf("rank %d: compiled %zu of %zu variants for %s\n", rank, names.size(), variants.size(),
                arch.c_str());
    if (!all_have_gpu) {
        if (rank == 0) std::printf("no GPU on every rank: compiled only, nothing timed or run\n");
        return 0;
    }

    // Time this rank's variants on its device.
    const unsigned long long n = 1ull << 24;
    const float a = 2.0f;
    Stream stream = device->create_stream();
    std::vector<float> x(n), y(n);
    for (unsigned long long i = 0; i < n; ++i) {
        x[i] = float(i % 1024) / 1024.0f;
        y[i] = float(i % 7);
    }
    Buffer dx = device->allocate(n * sizeof(float), stream);
    Buffer dy = device->allocate(n * sizeof(float), stream);
    dx.copy_from(x, stream);
    dy.copy_from(y, stream);
    struct {
        float milliseconds;
        int rank;
    } best{std::numeric_limits<float>::infinity(), rank}, fastest{};
    std::size_t best_variant = 0;
    constexpr int repetitions = 20;
    for (std::size_t k = 0; k < mine.size(); ++k) {
        const Variant& v = variants[mine[k]];
        Axpy kernel(code->get_kernel(v.name_expression()));
        const LaunchConfig config = config_for(v, n);
        launch(stream, config, kernel, a, static_cast<const float*>(dx.data()), static_cast<float*>(dy.data()), n);
        Event start = stream.record(EventOptions{.timing_enabled = true});
        for (int r = 0; r < repetitions; ++r)
            launch(stream, config, kernel, a, static_cast<const float*>(dx.data()), static_cast<float*>(dy.data()), n);
        Event end = stream.record(EventOptions{.timing_enabled = true});
        end.sync();
        const float ms = static_cast<float>((end - start).count()) / repetitions;
        std::printf("rank %d (device %d): block %4d x %d items: %.4f ms\n", rank, device->ordinal(), v.block,
                    v.items, ms);
        if (ms < best.milliseconds) {
            best.milliseconds = ms;
            best_variant = mine[k];
        }
    }

    // The fastest over all ranks; its rank sends the code and which variant it is.
    MPI_Allreduce(&best, &fastest, 1, MPI_FLOAT_INT, MPI_MINLOC, comm);
    unsigned long long winner_index = best_variant;
    MPI_Bcast(&winner_index, 1, MPI_UNSIGNED_LONG_LONG, fastest.rank, comm);
    const ObjectCode winner = mpi::broadcast(rank == fastest.rank ? code : std::nullopt, fastest.rank, comm);
    const Variant& v = variants[winner_index];
    if (rank == 0) {
        std::printf("fastest: block %d x %d items, %.4f ms (timed on rank %d)\n", v.block, v.items,
                    fastest.milliseconds, fastest.rank);
    }

    // Every rank runs the winner once on fresh data and checks it.
    dy.copy_from(y, stream);
    Axpy kernel(winner.get_kernel(v.name_expression()));
    launch(stream, config_for(v, n), kernel, a, static_cast<const float*>(dx.data()), static_cast<float*>(dy.data()), n);
    std::vector<float> result(n);
    dy.copy_to(result, stream);
    stream.sync();
    unsigned long long wrong = 0;
    for (unsigned long long i = 0; i < n; ++i)
        if (std::fabs(result[i] - (a * x[i] + y[i])) > 1e-5f) ++wrong;
    unsigned long long wrong_everywhere = 0;
    MPI_Allreduce(&wrong, &wrong_everywhere, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    std::printf("rank %d (device %d): ran the winner, %llu mismatches\n", rank, device->ordinal(), wrong);
    if (rank == 0) std::printf("%s\n", wrong_everywhere == 0 ? "all ranks correct" : "MISMATCHES");
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
