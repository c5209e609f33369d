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

// Room for to_driver_config's two attributes plus every launch attribute of LaunchConfig.
inline constexpr int max_launch_attributes = 16;

// Appends config's launch attributes (launch_config.hpp) to `out`, whose attrs has room for
// max_launch_attributes.
inline void append_launch_attributes(const LaunchConfig& config, CUlaunchConfig& out) {
    auto next = [&](CUlaunchAttributeID id) -> CUlaunchAttributeValue& {
        CUlaunchAttribute& attribute = out.attrs[out.numAttrs++];
        attribute = CUlaunchAttribute{};
        attribute.id = id;
        return attribute.value;
    };
    if (config.programmatic_stream_serialization)
        next(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
            .programmaticStreamSerializationAllowed = 1;
    if (config.programmatic_event) {
        auto& value = next(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT).programmaticEvent;
        value.event = config.programmatic_event->event;
        value.flags = 0;
        value.triggerAtBlockStart = config.programmatic_event->trigger_at_block_start ? 1 : 0;
    }
    if (config.launch_completion_event) {
        auto& value = next(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT).launchCompletionEvent;
        value.event = *config.launch_completion_event;
        value.flags = 0;
    }
    if (config.priority) next(CU_LAUNCH_ATTRIBUTE_PRIORITY).priority = *config.priority;
    if (config.memory_sync_domain)
        next(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN).memSyncDomain = *config.memory_sync_domain;
    if (config.memory_sync_domain_map)
        next(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP).memSyncDomainMap =
            *config.memory_sync_domain_map;
    if (config.preferred_cluster) {
        auto& value = next(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION).preferredClusterDim;
        value.x = config.preferred_cluster->x;
        value.y = config.preferred_cluster->y;
        value.z = config.preferred_cluster->z;
    }
    if (config.cluster_scheduling_policy)
        next(CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
            .clusterSchedulingPolicyPreference = *config.cluster_scheduling_policy;
    if (config.preferred_shared_memory_carveout)
        next(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT).sharedMemCarveout =
            *config.preferred_shared_memory_carveout;
    if (config.access_policy_window)
        next(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW).accessPolicyWindow =
            *config.access_policy_window;
    if (config.nvlink_util_centric_scheduling)
        next(CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING).nvlinkUtilCentricScheduling =
            *config.nvlink_util_centric_scheduling ? 1 : 0;
}

}  // namespace cudacore::detail
