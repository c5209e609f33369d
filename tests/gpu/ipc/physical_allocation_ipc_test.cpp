// Physical allocations shared between two processes (this one and the vmm_ipc_peer helper): a
// POSIX file descriptor over an IpcChannel, the importer mapping it on the same GPU and on the
// other one; the memory outliving the exporter's own objects; fabric handles where the device
// has them, and a clear refusal naming the attribute where it does not.
#include "multi_gpu_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/physical_allocation_ipc.hpp"
#include "cudacore/system.hpp"
#include "cudacore/virtual_address_range.hpp"
#include "cudacore/virtual_memory_mapping.hpp"

#include <future>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using test::ProcessResult;
using test::TempDir;

#define REQUIRE_POSIX_VMM()                                                                     \
    do {                                                                                        \
        CUDACORE_REQUIRE_GPU();                                                                 \
        const Device device_(0);                                                                \
        if (!device_.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))        \
            GTEST_SKIP() << "device 0 has no virtual memory management";                       \
        if (!device_.attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)) \
            GTEST_SKIP() << "device 0 cannot export allocations as file descriptors";          \
    } while (0)

// The exporter's side: `memory` (device 0) filled with 3i + 1 through a mapping of ours, sent to
// the helper in `mode`, which rewrites it as 5i + 2; checked here through our mapping.
void share_and_check(const std::string& mode, bool close_ours_first,
                     const PhysicalAllocationExportOptions& how = {}) {
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Stream stream = device.create_stream();
    const std::size_t g = allocation_granularity(device).minimum;
    PhysicalAllocation memory = PhysicalAllocation::create(
        device, 4 * g, {.handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | how.handle_type});
    VirtualAddressRange range = VirtualAddressRange::reserve(device, memory.size());
    VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, 0, memory);
    Buffer ours = mapping.as_buffer();
    test::write_pattern(code, ours, stream, 3, 1);
    stream.sync();

    TempDir dir;
    IpcListener listener(dir.path() / "vmm");
    const std::string helper = test::helper_path("vmm_ipc_peer").string();
    const std::string path = listener.path().string();
    auto result = std::async(std::launch::async, [=] { return test::run_process({helper, mode, path}); });
    IpcChannel channel = listener.accept(60s);
    send_physical_allocation(channel, memory, how);
    if (close_ours_first) memory.close();  // the mapping (and the other process) hold it
    ASSERT_EQ(channel.receive(60s).text(), "written");
    EXPECT_EQ(test::mismatches(code, ours, stream, 5, 2), 0u);
    ASSERT_EQ(channel.receive(60s).text(), "closed");
    const ProcessResult done = result.get();
    ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
    EXPECT_NE(done.out.find("mismatches: 0"), std::string::npos) << done.out;
    // The importer let go; our mapping still works.
    EXPECT_EQ(test::mismatches(code, ours, stream, 5, 2), 0u);
}

TEST(PhysicalAllocationIpcGpu, AnotherProcessMapsTheAllocationReadsAndRewritesIt) {
    REQUIRE_POSIX_VMM();
    share_and_check("import-check-rewrite", false);
}

TEST(PhysicalAllocationIpcGpu, TheMemoryOutlivesTheExportersOwnAllocationObject) {
    REQUIRE_POSIX_VMM();
    share_and_check("import-check-rewrite", true);
}

TEST(PhysicalAllocationIpcGpu, TheImporterUsesItFromTheOtherGpu) {
    REQUIRE_POSIX_VMM();
    if (system::device_count() < 2) GTEST_SKIP() << "needs two GPUs, found " << system::device_count();
    if (!Device(1).can_access_peer(Device(0)))
        GTEST_SKIP() << "device 1 cannot reach device 0's memory (cuDeviceCanAccessPeer)";
    share_and_check("import-check-rewrite-on-device-1", false);
}

TEST(PhysicalAllocationIpcGpu, ExportRefusesAHandleTypeTheAllocationWasNotMadeWith) {
    REQUIRE_POSIX_VMM();
    const Device device(0);
    PhysicalAllocation plain = PhysicalAllocation::create(device, allocation_granularity(device).minimum);
    test::expect_invalid([&] { export_physical_allocation(plain); },
                         {"export_physical_allocation", "not created with handle type",
                          "posix_file_descriptor", "handle_types is none"});
    test::expect_invalid([&] { export_physical_allocation(plain, {.handle_type = CU_MEM_HANDLE_TYPE_FABRIC}); },
                         {"CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is"});
}

TEST(PhysicalAllocationIpcGpu, FabricHandlesTravelWhereTheDeviceHasThemAndAreRefusedClearlyWhereNot) {
    REQUIRE_POSIX_VMM();
    const Device device(0);
    const int fabric = fabric_handles_supported(device);
    if (!fabric) {
        test::expect_invalid(
            [&] { PhysicalAllocation::create(device, allocation_granularity(device).minimum,
                                             {.handle_types = CU_MEM_HANDLE_TYPE_FABRIC}); },
            {"PhysicalAllocationOptions", "fabric", "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED"});
        GTEST_SKIP() << "device 0 has no fabric handles: CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is "
                     << fabric << " (the refusal was checked)";
    }
    try {
        share_and_check("import-check-rewrite", false, {.handle_type = CU_MEM_HANDLE_TYPE_FABRIC});
    } catch (const DriverError& e) {
        // The attribute says yes, but creating or exporting fabric memory also needs the IMEX
        // service (multi-node NVLink systems); without it the driver refuses.
        GTEST_SKIP() << "fabric handles supported by the device (attribute " << fabric
                     << ") but refused here: " << e.what();
    }
}

}  // namespace
