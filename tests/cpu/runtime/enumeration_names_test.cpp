// Every public enumeration's to_string gives the enumerator's name as spelled in C++, and
// "Type(N)" for a value outside the enumeration (docs/api-conventions.md, "Enumerations";
// scripts/check-api-conventions.py checks that each has one).
#include "cudacore/array_format.hpp"
#include "cudacore/batched_copy.hpp"
#include "cudacore/checkpoint.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/context.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/managed_attach.hpp"
#include "cudacore/managed_memory.hpp"
#include "cudacore/memory_access.hpp"
#include "cudacore/memory_location.hpp"
#include "cudacore/peer_copy.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream_attributes.hpp"
#include "cudacore/stream_memory_operations.hpp"
#include "cudacore/system_topology.hpp"
#include "cudacore/tensor_map.hpp"
#include "cudacore/texture.hpp"
#include "cudacore/tracing.hpp"
#include "cudacore/virtual_memory_resource.hpp"
#include "cudacore/warnings.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using namespace cudacore;

// Each enumerator of `Enum`, numbered from 0 in declaration order, is named `names`, and the
// value after the last is "type(N)".
template <class Enum>
void expect_names(const std::vector<const char*>& names, const std::string& type) {
    SCOPED_TRACE(type);
    for (std::size_t i = 0; i < names.size(); ++i)
        EXPECT_EQ(to_string(static_cast<Enum>(i)), names[i]);
    EXPECT_EQ(to_string(static_cast<Enum>(names.size() + 40)),
              type + "(" + std::to_string(names.size() + 40) + ")");
}

TEST(EnumerationNames, EachEnumeratorByItsNameAndOthersByTheirNumber) {
    expect_names<ArrayFormatKind>(
        {"plain", "packed", "block_compressed", "video"},
        "ArrayFormatKind");
    expect_names<CopySourceAccessOrder>(
        {"stream", "during_api_call", "any"},
        "CopySourceAccessOrder");
    expect_names<CompileStrategy>({"threads", "processes"}, "CompileStrategy");
    expect_names<ContextScheduling>(
        {"automatic", "spin", "yield", "blocking_sync"},
        "ContextScheduling");
    expect_names<CaptureMode>({"global", "per_thread", "relaxed"}, "CaptureMode");
    expect_names<ManagedAdvice>(
        {"set_read_mostly", "unset_read_mostly", "set_preferred_location", "unset_preferred_location",
         "set_accessed_by", "unset_accessed_by"},
        "ManagedAdvice");
    expect_names<MemoryLocation::Kind>({"device", "host", "host_numa"}, "MemoryLocation::Kind");
    expect_names<SourceType>({"cxx", "ptx", "nvvm"}, "SourceType");
    expect_names<system::TopologyLevel>(
        {"same_board", "single_switch", "multiple_switch", "host_bridge", "node", "system"},
        "TopologyLevel");
    expect_names<TensorMapInterleave>({"none", "bytes16", "bytes32"}, "TensorMapInterleave");
    expect_names<TensorMapSwizzle>({"none", "bytes32", "bytes64", "bytes128"}, "TensorMapSwizzle");
    expect_names<TensorMapL2Promotion>(
        {"none", "bytes64", "bytes128", "bytes256"},
        "TensorMapL2Promotion");
    expect_names<TensorMapOobFill>({"zero", "nan_request_zero_fma"}, "TensorMapOobFill");
    expect_names<TextureAddressMode>({"clamp", "wrap", "mirror", "border"}, "TextureAddressMode");
    expect_names<TextureFilterMode>({"point", "linear"}, "TextureFilterMode");
    expect_names<TextureReadMode>({"element_type", "normalized_float"}, "TextureReadMode");
    expect_names<tracing::Payload::Type>({"none", "int64", "uint64", "float64"}, "Payload::Type");
    expect_names<MemoryAccess>({"none", "read", "read_write"}, "MemoryAccess");
    expect_names<VirtualMemoryAllocationType>({"pinned", "managed"}, "VirtualMemoryAllocationType");
    expect_names<WarningKind>(
        {"release_failed", "not_cached", "pch_off", "remote_cache_failed", "disk_cache_repaired",
         "secret_file_exposed", "standard_headers_off"},
        "WarningKind");
    expect_names<MemoryOperation::Kind>(
        {"wait_value32", "wait_value64", "write_value32", "write_value64"},
        "MemoryOperation::Kind");
    expect_names<ArrayShape>(
        {"one_d", "two_d", "three_d", "one_d_layered", "two_d_layered", "cubemap", "cubemap_layered"},
        "ArrayShape");
    expect_names<ManagedAttach>({"global", "host", "single"}, "ManagedAttach");
    expect_names<CopyPath>({"same_device", "peer", "staged"}, "CopyPath");
    expect_names<PchOutcome>({"not_attempted", "created", "used", "failed"}, "PchOutcome");
}

// Enumerations whose values are the driver's or NVTX's numbers, not 0, 1, 2...
TEST(EnumerationNames, EnumerationsNumberedByTheirOwnValues) {
    EXPECT_EQ(to_string(tracing::CudacoreCategory::compile), "compile");
    EXPECT_EQ(to_string(tracing::CudacoreCategory::memory), "memory");
    EXPECT_EQ(to_string(static_cast<tracing::CudacoreCategory>(0)), "CudacoreCategory(0)");
    EXPECT_EQ(to_string(static_cast<tracing::CudacoreCategory>(4000000000u)), "CudacoreCategory(4000000000)");
    EXPECT_EQ(to_string(checkpoint::ProcessState::running), "running");
    EXPECT_EQ(to_string(SynchronizationPolicy::automatic), "automatic");  // CU_SYNC_POLICY_AUTO, 1
    EXPECT_EQ(to_string(SynchronizationPolicy::blocking_sync), "blocking_sync");
    EXPECT_EQ(to_string(static_cast<SynchronizationPolicy>(-1)), "SynchronizationPolicy(-1)");
    EXPECT_EQ(to_string(static_cast<checkpoint::ProcessState>(99)), "ProcessState(99)");
    EXPECT_EQ(to_string(static_cast<MemoryOperation::Kind>(-1)), "MemoryOperation::Kind(4294967295)");
    EXPECT_EQ(to_string(static_cast<ContextScheduling>(-3)), "ContextScheduling(-3)");
}

}  // namespace
