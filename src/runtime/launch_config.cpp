// The text of a launch's shape (grid, clusters, block, shared memory), for messages.
#include "cudacore/launch_config.hpp"

#include <string>

namespace cudacore {

std::string to_string(const Dim3& dim) {
    return "(" + std::to_string(dim.x) + ", " + std::to_string(dim.y) + ", " +
           std::to_string(dim.z) + ")";
}

std::string to_string(const LaunchConfig& config) {
    std::string out = "grid " + to_string(config.grid);
    if (config.has_cluster()) {
        out += " clusters of " + to_string(config.cluster) + " blocks (" +
               std::to_string(config.blocks().volume()) + " blocks)";
    }
    out += ", block " + to_string(config.block);
    out += ", " + std::to_string(config.shared_memory_bytes) + " bytes of dynamic shared memory";
    if (config.cooperative) out += ", cooperative";
    if (config.has_launch_attributes()) out += ", with launch attributes";
    return out;
}

}  // namespace cudacore
