// The memory breadth features without a GPU: option checks against given device attributes,
// memory locations, DLPack export and import (through a host-memory test resource and a fake
// producer), and every new entry point failing with NoDriverError when there is no driver.
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/batched_copy.hpp"
#include "cudacore/dlpack.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_location.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/virtual_memory_resource.hpp"
#include "memory/memory_option_checks.hpp"

#include <map>
#include <vector>

namespace {

using namespace cudacore;
using cudacore::test::HostMemoryResource;
using cudacore::test::expect_invalid;
using cudacore::test::no_stream;

// A device described by its attributes; unlisted ones read 1 (supported).
detail::AttributeQuery device_with(std::map<CUdevice_attribute, int> values) {
    return [values](CUdevice_attribute attribute) {
        auto found = values.find(attribute);
        return found == values.end() ? 1 : found->second;
    };
}

// Per-copy attributes (cuda.core's CopyOptions): the defaults, how they are described, and the
// refusals made before the driver is reached.
TEST(CopyAttributes, DefaultsAndDescription) {
    EXPECT_EQ(CopyAttributes{},
              CopyAttributes{.source_access_order = CopySourceAccessOrder::stream});
    EXPECT_EQ(CopyAttributes{}.description(), "source access order stream");
    const CopyAttributes hinted{.source_access_order = CopySourceAccessOrder::any,
                                .source_location_hint = MemoryLocation::device(0),
                                .destination_location_hint = MemoryLocation::host(),
                                .prefer_overlap_with_compute = true};
    EXPECT_NE(hinted, CopyAttributes{});
    EXPECT_EQ(hinted.description(),
              "source access order any, source hint device 0, destination hint host, "
              "prefer overlap with compute");
}

// cuda.core refuses options where cuMemcpyBatchAsync cannot carry them rather than dropping
// them: here, the legacy default stream, whose pairs go one by one to cuMemcpyAsync.
TEST(CopyAttributes, RefusedOnTheLegacyDefaultStream) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer a = resource->allocate(64, no_stream()), b = resource->allocate(64, no_stream());
    const std::vector<CopyPair> copies = {
        {b, a}, {a, b, {.source_access_order = CopySourceAccessOrder::any}}};
    expect_invalid([&] { copy_batch(copies, no_stream()); },
                   {"copy_batch: copy 1", "source access order any", "legacy default stream"});
    const std::vector<CopyPair> hinted = {
        {b, a, {.destination_location_hint = MemoryLocation::host()}}};
    expect_invalid([&] { copy_batch(hinted, no_stream()); },
                   {"copy 0", "destination hint host", "legacy default stream"});
}

TEST(CopyAttributes, AnOrderOutOfRangeIsNamed) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer a = resource->allocate(64, no_stream()), b = resource->allocate(64, no_stream());
    const std::vector<CopyPair> copies = {
        {b, a}, {a, b, {.source_access_order = static_cast<CopySourceAccessOrder>(9)}}};
    expect_invalid([&] { copy_batch(copies, test::fake_stream(0x1000)); },
                   {"source_access_order 9 is not a CopySourceAccessOrder in copy 1"});
}

// The deprecated pairs keep their meaning: source first. The message names each buffer in its
// role, so a pair taken the wrong way round would show.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(CopyPair, DeprecatedSourceFirstPairsKeepTheirMeaning) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer small = resource->allocate(32, no_stream()), large = resource->allocate(64, no_stream());
    const std::vector<BufferCopy> old_pairs = {{small, large}};
    const std::vector<CopyPair> new_pairs = {{large, small}};
    std::string old_message, new_message;
    try {
        copy_batch(old_pairs, no_stream());
    } catch (const InvalidArgumentError& e) {
        old_message = e.what();
    }
    try {
        copy_batch(new_pairs, no_stream());
    } catch (const InvalidArgumentError& e) {
        new_message = e.what();
    }
    EXPECT_NE(old_message.find("sizes differ in copy 0 from " + small.description() + " to " + large.description()),
              std::string::npos)
        << old_message;
    EXPECT_EQ(old_message, new_message);
}
#pragma GCC diagnostic pop

TEST(VirtualMemoryOptions, DefaultsPassOnACapableDevice) {
    EXPECT_NO_THROW(detail::check_virtual_memory_options({}, 0, device_with({})));
    VirtualMemoryResourceOptions options;
    options.handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    options.gpu_direct_rdma = true;
    options.peer_access = {{1, MemoryAccess::read}, {2, MemoryAccess::read_write}};
    options.address_alignment = 1 << 21;
    EXPECT_NO_THROW(detail::check_virtual_memory_options(options, 0, device_with({})));
}

TEST(VirtualMemoryOptions, DeviceWithoutVirtualMemoryIsNamed) {
    expect_invalid(
        [] {
            detail::check_virtual_memory_options(
                {}, 3, device_with({{CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0}}));
        },
        {"device 3", "virtual memory management",
         "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0"});
}

// cuda.core's allocation_type: managed is checked against the device's managed memory support;
// pinned (the default) is not.
TEST(VirtualMemoryOptions, ManagedAllocationTypeNeedsManagedMemory) {
    VirtualMemoryResourceOptions options;
    EXPECT_EQ(options.allocation_type, VirtualMemoryAllocationType::pinned);
    options.allocation_type = VirtualMemoryAllocationType::managed;
    EXPECT_NO_THROW(detail::check_virtual_memory_options(options, 0, device_with({})));
    const auto no_managed = device_with({{CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0}});
    expect_invalid([&] { detail::check_virtual_memory_options(options, 2, no_managed); },
                   {"allocation_type managed", "device 2", "does not support managed memory",
                    "CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0"});
    EXPECT_NO_THROW(detail::check_virtual_memory_options({}, 2, no_managed));
    options.allocation_type = static_cast<VirtualMemoryAllocationType>(7);
    expect_invalid([&] { detail::check_virtual_memory_options(options, 0, device_with({})); },
                   {"allocation_type 7 is not a VirtualMemoryAllocationType"});
}

TEST(VirtualMemoryOptions, RdmaUnsupportedIsNamedAsSuch) {
    VirtualMemoryResourceOptions options;
    options.gpu_direct_rdma = true;
    expect_invalid(
        [&] {
            detail::check_virtual_memory_options(
                options, 1,
                device_with({{CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0}}));
        },
        {"gpu_direct_rdma", "GPUDirect RDMA", "device 1",
         "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is 0"});
    // Not asked for: not checked.
    EXPECT_NO_THROW(detail::check_virtual_memory_options(
        {}, 1, device_with({{CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0}})));
}

TEST(VirtualMemoryOptions, UnsupportedHandleTypeIsNamedAsSuch) {
    VirtualMemoryResourceOptions options;
    options.handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;
    expect_invalid(
        [&] {
            detail::check_virtual_memory_options(
                options, 0, device_with({{CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0}}));
        },
        {"handle type fabric", "device 0", "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is 0"});
    options.handle_types = 0x100;
    expect_invalid([&] { detail::check_virtual_memory_options(options, 0, device_with({})); },
                   {"unknown handle type bits 0x100"});
}

TEST(VirtualMemoryOptions, AccessAndAlignmentMistakesAreRefused) {
    VirtualMemoryResourceOptions options;
    options.owner_access = MemoryAccess::none;
    expect_invalid([&] { detail::check_virtual_memory_options(options, 0, device_with({})); },
                   {"owner_access none", "device 0"});
    options = {};
    options.peer_access = {{0, MemoryAccess::read}};
    expect_invalid([&] { detail::check_virtual_memory_options(options, 0, device_with({})); },
                   {"peer_access lists the owning device 0"});
    options.peer_access = {{1, MemoryAccess::read}, {1, MemoryAccess::read_write}};
    expect_invalid([&] { detail::check_virtual_memory_options(options, 0, device_with({})); },
                   {"device 1 twice"});
    options = {};
    options.address_alignment = 3 << 20;
    expect_invalid([&] { detail::check_virtual_memory_options(options, 0, device_with({})); },
                   {"address_alignment 3145728", "power of two"});
}

TEST(PoolOptions, HandleTypesOutsideTheSupportedMaskAreNamed) {
    auto device = device_with({{CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR}});
    EXPECT_NO_THROW(detail::check_pool_handle_types(0, device, "device 0"));
    EXPECT_NO_THROW(
        detail::check_pool_handle_types(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, device, "device 0"));
    expect_invalid(
        [&] { detail::check_pool_handle_types(CU_MEM_HANDLE_TYPE_FABRIC, device, "device 2"); },
        {"handle type fabric", "device 2", "CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES",
         "posix_file_descriptor"});
}

TEST(MemoryOptions, HandleTypeNamesAndRounding) {
    EXPECT_EQ(detail::handle_type_names(0), "none");
    EXPECT_EQ(detail::handle_type_names(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                        CU_MEM_HANDLE_TYPE_FABRIC),
              "posix_file_descriptor | fabric");
    EXPECT_EQ(detail::round_up(1, 2 << 20), std::size_t{2} << 20);
    EXPECT_EQ(detail::round_up(2 << 20, 2 << 20), std::size_t{2} << 20);
    EXPECT_EQ(detail::round_up((2 << 20) + 1, 2 << 20), std::size_t{4} << 20);
}

TEST(MemoryLocation, ConvertsToAndFromTheDriverForm) {
    const MemoryLocation device = MemoryLocation::device(3);
    EXPECT_EQ(device.to_driver().type, CU_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_EQ(device.to_driver().id, 3);
    EXPECT_EQ(MemoryLocation::host().to_driver().type, CU_MEM_LOCATION_TYPE_HOST);
    EXPECT_EQ(MemoryLocation::host_numa(1).to_driver().type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
    EXPECT_EQ(MemoryLocation::host_numa(1).to_driver().id, 1);
    for (const MemoryLocation& location :
         {MemoryLocation::device(2), MemoryLocation::host(), MemoryLocation::host_numa(5)}) {
        const CUmemLocation raw = location.to_driver();
        EXPECT_EQ(MemoryLocation::from_driver(raw.type, raw.id), location) << location.description();
    }
    EXPECT_FALSE(MemoryLocation::from_driver(CU_MEM_LOCATION_TYPE_INVALID, 0).has_value());
    EXPECT_EQ(MemoryLocation::host_numa(1).description(), "host NUMA node 1");
}

TEST(DLPack, ExportCarriesLayoutAndHoldsTheBufferUntilDeleted) {
    auto resource = std::make_shared<HostMemoryResource>();
    DLManagedTensor* tensor = nullptr;
    void* data = nullptr;
    {
        Buffer buffer = resource->allocate(6 * 4 * sizeof(float), no_stream());
        data = buffer.data();
        DLPackLayout layout;
        layout.shape = {3, 4};
        layout.strides = {8, 1};  // every other row of a 6x4 array
        tensor = to_dlpack(buffer, layout);
    }
    EXPECT_EQ(resource->frees.load(), 0) << "the tensor must keep the buffer alive";
    const DLTensor& t = tensor->dl_tensor;
    EXPECT_EQ(t.data, data);
    EXPECT_EQ(t.device.device_type, kDLCPU);
    ASSERT_EQ(t.ndim, 2);
    EXPECT_EQ(t.shape[0], 3);
    EXPECT_EQ(t.shape[1], 4);
    ASSERT_NE(t.strides, nullptr);
    EXPECT_EQ(t.strides[0], 8);
    EXPECT_EQ(t.strides[1], 1);
    EXPECT_EQ(t.dtype.code, kDLFloat);
    EXPECT_EQ(t.dtype.bits, 32);
    EXPECT_EQ(dlpack_extent_bytes(t), (2 * 8 + 3 + 1) * sizeof(float));
    tensor->deleter(tensor);
    EXPECT_EQ(resource->frees.load(), 1);
}

TEST(DLPack, ExportRefusesLayoutsThatDoNotFit) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer buffer = resource->allocate(64, no_stream());
    DLPackLayout layout;
    layout.shape = {17};  // 68 bytes of float
    expect_invalid([&] { to_dlpack(buffer, layout); }, {"spans 68 bytes", "64 bytes"});
    layout.shape = {4};
    layout.byte_offset = 60;
    expect_invalid([&] { to_dlpack(buffer, layout); }, {"spans 76 bytes", "byte_offset 60"});
    layout = {};
    layout.shape = {2, 2};
    layout.strides = {1};
    expect_invalid([&] { to_dlpack(buffer, layout); }, {"1 strides for 2 dimensions"});
    layout.strides = {-1, 1};
    expect_invalid([&] { to_dlpack(buffer, layout); }, {"stride -1", "negative"});
    layout = {};
    layout.shape = {4};
    layout.dtype = {kDLInt, 4, 1};
    expect_invalid([&] { to_dlpack(buffer, layout); }, {"int4 is not", "whole number of bytes"});
    buffer.close();
    layout = {};
    layout.shape = {4};
    expect_invalid([&] { to_dlpack(buffer, layout); }, {"closed"});
}

// A producer as another library would make one: counts its deleter calls.
struct FakeProducer {
    std::vector<std::int16_t> storage = std::vector<std::int16_t>(32, 7);
    std::int64_t shape[1] = {16};
    int deleted = 0;
    DLManagedTensor tensor{};

    explicit FakeProducer(DLDeviceType type = kDLCPU) {
        tensor.dl_tensor.data = storage.data();
        tensor.dl_tensor.device = {type, 0};
        tensor.dl_tensor.ndim = 1;
        tensor.dl_tensor.dtype = {kDLInt, 16, 1};
        tensor.dl_tensor.shape = shape;
        tensor.dl_tensor.strides = nullptr;
        tensor.dl_tensor.byte_offset = 8;
        tensor.manager_ctx = this;
        tensor.deleter = [](DLManagedTensor* self) {
            ++static_cast<FakeProducer*>(self->manager_ctx)->deleted;
        };
    }
};

TEST(DLPack, ImportKeepsTheProducerAliveUntilTheLastCopyGoes) {
    FakeProducer producer;
    {
        Buffer buffer = from_dlpack(&producer.tensor);
        EXPECT_EQ(buffer.handle(), reinterpret_cast<CUdeviceptr>(producer.storage.data()) + 8);
        EXPECT_EQ(buffer.size(), 16 * sizeof(std::int16_t));
        EXPECT_TRUE(buffer.is_host_accessible());
        EXPECT_FALSE(buffer.is_device_accessible());
        EXPECT_FALSE(buffer.is_managed());
        EXPECT_EQ(buffer.span<std::int16_t>()[0], 7);
        Buffer copy = buffer;
        buffer = Buffer();
        EXPECT_EQ(producer.deleted, 0);
    }
    EXPECT_EQ(producer.deleted, 1);
}

TEST(DLPack, CloseReleasesTheProducerOnce) {
    FakeProducer producer;
    Buffer buffer = from_dlpack(&producer.tensor);
    buffer.close();
    EXPECT_EQ(producer.deleted, 1);
    buffer = Buffer();
    EXPECT_EQ(producer.deleted, 1);
}

TEST(DLPack, ImportReadsDeviceKinds) {
    FakeProducer managed(kDLCUDAManaged);
    Buffer a = from_dlpack(&managed.tensor);
    EXPECT_TRUE(a.is_managed());
    EXPECT_TRUE(a.is_device_accessible());
    EXPECT_TRUE(a.is_host_accessible());
    FakeProducer device(kDLCUDA);
    device.tensor.dl_tensor.device.device_id = 1;
    Buffer b = from_dlpack(&device.tensor);
    EXPECT_TRUE(b.is_device_accessible());
    EXPECT_FALSE(b.is_host_accessible());
    EXPECT_EQ(b.device_ordinal(), 1);
}

TEST(DLPack, RefusedTensorsAreNotConsumed) {
    FakeProducer other(kDLVulkan);
    expect_invalid([&] { from_dlpack(&other.tensor); }, {"device type", "not CPU or CUDA"});
    EXPECT_EQ(other.deleted, 0);
    FakeProducer empty;
    empty.shape[0] = 0;
    expect_invalid([&] { from_dlpack(&empty.tensor); }, {"empty"});
    EXPECT_EQ(empty.deleted, 0);
    expect_invalid([] { from_dlpack(nullptr); }, {"null tensor"});
}

TEST(DLPack, RoundTripKeepsTheOriginalBufferAlive) {
    auto resource = std::make_shared<HostMemoryResource>();
    Buffer imported;
    {
        Buffer original = resource->allocate(40, no_stream());
        for (auto& value : original.span<std::int32_t>()) value = 42;
        DLPackLayout layout;
        layout.shape = {10};
        layout.dtype = {kDLInt, 32, 1};
        imported = from_dlpack(to_dlpack(original, layout));
    }
    EXPECT_EQ(resource->frees.load(), 0);
    EXPECT_EQ(imported.size(), 40u);
    EXPECT_EQ(imported.span<std::int32_t>()[9], 42);
    imported = Buffer();
    EXPECT_EQ(resource->frees.load(), 1);
}

TEST(MemoryBreadthNoDriver, EveryNewEntryPointThrowsNoDriverError) {
    auto result = cudacore::test::run_process(
        {cudacore::test::helper_path("memory_breadth_no_driver_probe").string()},
        {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.err, "");
    for (const char* entry :
         {"VirtualMemoryResource()", "DeviceMemoryResource::create_owned_pool",
          "PinnedMemoryPoolResource()", "SynchronousMemoryResource()", "register_host_memory",
          "Buffer::fill_uint16", "copy_batch", "advise", "prefetch_batch", "range_attributes",
          "MemoryPool::attributes"}) {
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    }
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
}

}  // namespace
