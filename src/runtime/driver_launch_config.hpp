// LaunchConfig in the driver's form (CUlaunchConfig), for cuLaunchKernelEx and the occupancy
// queries that take a launch configuration.
#pragma once

#include "cudacore/launch_config.hpp"

#include <cuda.h>

namespace cudacore::detail {

// The grid becomes blocks (grid x cluster: LaunchConfig's grid counts clusters when a cluster is
// set); launch() has refused a product that does not fit 32 bits. `attributes` must have room for 2. Occupancy queries pass with_cooperative = false: the
// cooperative attribute is a launch property, not a shape the queries understand.
inline CUlaunchConfig to_driver_config(const LaunchConfig& config, CUstream stream,
                                       CUlaunchAttribute* attributes,
                                       bool with_cooperative = true) {
    CUlaunchConfig out{};
    const LaunchConfig::Blocks blocks = config.blocks();
    out.gridDimX = static_cast<unsigned>(blocks.x);
    out.gridDimY = static_cast<unsigned>(blocks.y);
    out.gridDimZ = static_cast<unsigned>(blocks.z);
    out.blockDimX = config.block.x;
    out.blockDimY = config.block.y;
    out.blockDimZ = config.block.z;
    out.sharedMemBytes = static_cast<unsigned>(config.shared_memory_bytes);
    out.hStream = stream;
    out.attrs = attributes;
    if (config.has_cluster()) {
        CUlaunchAttribute& cluster = attributes[out.numAttrs++];
        cluster = CUlaunchAttribute{};
        cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        cluster.value.clusterDim.x = config.cluster.x;
        cluster.value.clusterDim.y = config.cluster.y;
        cluster.value.clusterDim.z = config.cluster.z;
    }
    if (with_cooperative && config.cooperative) {
        CUlaunchAttribute& cooperative = attributes[out.numAttrs++];
        cooperative = CUlaunchAttribute{};
        cooperative.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        cooperative.value.cooperative = 1;
    }
    return out;
}

}  // namespace cudacore::detail
