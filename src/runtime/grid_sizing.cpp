// Grids made from a size or from occupancy (grid_sizing.hpp).
#include "cudacore/grid_sizing.hpp"

#include "cudacore/errors.hpp"

#include <algorithm>
#include <string>

namespace cudacore {

namespace {
constexpr std::uint64_t kMaxGridX = 0x7fffffffu;  // the driver's largest grid in x
constexpr std::uint64_t kMaxGridYZ = 65535;
}  // namespace

Dim3 grid_for(std::uint64_t elements, unsigned block_threads) {
    if (block_threads == 0)
        throw InvalidArgumentError("grid_for: a block of 0 threads (for " + std::to_string(elements) +
                                   " elements)");
    const std::uint64_t blocks = elements / block_threads + (elements % block_threads != 0);
    if (blocks > kMaxGridX)
        throw InvalidArgumentError("grid_for: " + std::to_string(elements) + " elements in blocks of " +
                                   std::to_string(block_threads) + " threads need " +
                                   std::to_string(blocks) + " blocks, over the driver's " +
                                   std::to_string(kMaxGridX) + " in x (use a larger block, a 2- or "
                                   "3-dimensional grid, or a grid-stride loop)");
    return Dim3(static_cast<unsigned>(blocks));
}

Dim3 grid_for(const Dim3& elements, const Dim3& block) {
    static constexpr const char* axes[] = {"x", "y", "z"};
    const unsigned extent[] = {elements.x, elements.y, elements.z};
    const unsigned size[] = {block.x, block.y, block.z};
    unsigned grid[3] = {};
    for (int axis = 0; axis < 3; ++axis) {
        if (size[axis] == 0)
            throw InvalidArgumentError("grid_for: the block " + to_string(block) + " is 0 in " +
                                       axes[axis]);
        const std::uint64_t blocks = extent[axis] / size[axis] + (extent[axis] % size[axis] != 0);
        const std::uint64_t limit = axis == 0 ? kMaxGridX : kMaxGridYZ;
        if (blocks > limit)
            throw InvalidArgumentError("grid_for: " + to_string(elements) + " elements in blocks of " +
                                       to_string(block) + " need " + std::to_string(blocks) +
                                       " blocks in " + axes[axis] + ", over the driver's " +
                                       std::to_string(limit));
        grid[axis] = static_cast<unsigned>(blocks);
    }
    return Dim3(grid[0], grid[1], grid[2]);
}

LaunchConfig occupancy_config(const Kernel& kernel, const Device& device,
                              const OccupancyConfigOptions& options) {
    const BlockSizeSuggestion best = kernel.occupancy(device).max_potential_block_size(
        options.shared_memory_bytes, options.block_size_limit);
    const unsigned block = static_cast<unsigned>(std::max(best.block_size, 1));
    LaunchConfig config;
    config.block = Dim3(block);
    config.grid = options.elements ? grid_for(options.elements, block)
                                   : Dim3(static_cast<unsigned>(std::max(best.min_grid_size, 1)));
    config.shared_memory_bytes = options.shared_memory_bytes;
    return config;
}

}  // namespace cudacore
