// Thread block clusters: a launch whose grid counts clusters of 2 x 2 blocks; each block reports
// its place through cooperative_groups' cluster API and reads a neighbour's shared memory
// (distributed shared memory). Mirrors cuda.core's examples/thread_block_cluster.py. Needs 9.0+.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <vector>

// Each block writes 4 words: its rank in its cluster, the cluster's block count, the rank that
// its neighbour (rank + 1) holds in shared memory, and its cluster's rank in the grid.
static const char* kSource = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void report_cluster(unsigned* per_block, unsigned* grid_dims) {
    cg::grid_group grid = cg::this_grid();
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ unsigned my_rank;
    if (threadIdx.x == 0) my_rank = cluster.block_rank();
    cluster.sync();  // every block's shared memory is written before any neighbour reads it
    if (threadIdx.x == 0) {
        const unsigned neighbour = (cluster.block_rank() + 1) % cluster.num_blocks();
        unsigned* out = per_block + 4 * (blockIdx.x + blockIdx.y * gridDim.x);
        out[0] = cluster.block_rank();
        out[1] = cluster.num_blocks();
        out[2] = *cluster.map_shared_rank(&my_rank, neighbour);
        out[3] = (unsigned)grid.cluster_rank();
    }
    cluster.sync();  // no block exits while a neighbour may still read its shared memory
    if (grid.block_rank() == 0 && threadIdx.x == 0) {
        const dim3 blocks = grid.dim_blocks(), clusters = grid.dim_clusters();
        grid_dims[0] = blocks.x;   grid_dims[1] = blocks.y;   grid_dims[2] = blocks.z;
        grid_dims[3] = clusters.x; grid_dims[4] = clusters.y; grid_dims[5] = clusters.z;
    }
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    if (device.compute_capability().major < 9) {
        std::printf("skipped: thread block clusters need compute capability 9.0 or later "
                    "(device 0 is %s)\n",
                    device.arch().c_str());
        return 0;
    }
    Stream stream = device.create_stream();
    Kernel kernel = Program(kSource, SourceType::cxx, {.arch = device.arch()})
                        .compile(CodeType::cubin)
                        .get_kernel("report_cluster");

    // With a cluster the grid counts clusters (as in cuda.core): 3 x 2 clusters of 2 x 2 blocks
    // launch 6 x 4 blocks.
    const LaunchConfig config{.grid = {3, 2}, .block = 64, .cluster = {2, 2}};
    const LaunchConfig::Blocks blocks = config.blocks();
    const std::size_t block_count = blocks.volume();
    Buffer per_block = device.allocate(4 * block_count * sizeof(unsigned), stream);
    Buffer grid_dims = device.allocate(6 * sizeof(unsigned), stream);
    per_block.fill_byte(0xff, stream);
    launch(stream, config, kernel, per_block, grid_dims);
    std::vector<unsigned> info(4 * block_count), dims(6);
    per_block.copy_to(info, stream);
    grid_dims.copy_to(dims, stream);
    stream.sync();
    std::printf("%s\n", to_string(config).c_str());
    std::printf("the kernel saw a grid of (%u, %u, %u) blocks in (%u, %u, %u) clusters\n", dims[0],
                dims[1], dims[2], dims[3], dims[4], dims[5]);

    std::size_t wrong = 0;
    if (dims != std::vector<unsigned>{unsigned(blocks.x), unsigned(blocks.y), 1u, config.grid.x,
                                      config.grid.y, 1u})
        ++wrong;
    const unsigned cluster_size = unsigned(config.cluster.volume());
    for (unsigned y = 0; y < blocks.y; ++y) {
        for (unsigned x = 0; x < blocks.x; ++x) {
            const unsigned* got = &info[4 * (x + y * blocks.x)];
            // Ranks within a cluster and of clusters within the grid run x first, then y.
            const unsigned rank = x % config.cluster.x + (y % config.cluster.y) * config.cluster.x;
            const unsigned cluster = x / config.cluster.x + (y / config.cluster.y) * config.grid.x;
            const unsigned expected[4] = {rank, cluster_size, (rank + 1) % cluster_size, cluster};
            for (int k = 0; k < 4; ++k) {
                if (got[k] == expected[k]) continue;
                if (wrong < 5)
                    std::printf("block (%u, %u): word %d is %u, expected %u\n", x, y, k, got[k],
                                expected[k]);
                ++wrong;
            }
        }
    }
    std::printf("%zu blocks in clusters of %u: ranks, sizes and neighbours' shared memory read "
                "back with %zu wrong values\n",
                block_count, cluster_size, wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
