// Two processes on one device sharing a memory pool, a buffer and an event (this process and the
// ipc_gpu_peer helper), every misuse as a clear error, and a survivor that neither crashes nor
// loses its device when the other process exits or is killed. One GPU suffices, except for the
// importer on a second GPU.
#include "multi_gpu_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/ipc.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "cudacore/system.hpp"

#include <csignal>
#include <future>
#include <vector>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using cudacore::test::ProcessResult;
using cudacore::test::TempDir;

constexpr std::size_t MiB = std::size_t{1} << 20;

// Skips when the device cannot share pools through file descriptors (the reason is printed).
#define REQUIRE_IPC_POOLS()                                                                 \
    do {                                                                                    \
        CUDACORE_REQUIRE_GPU();                                                             \
        const int types_ =                                                                  \
            Device(0).attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);        \
        if (!(types_ & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))                           \
            GTEST_SKIP() << "device 0 cannot share memory pools through file descriptors";  \
    } while (0)

// The helper in MODE, connected to `listener`; its result arrives when it exits.
struct Peer {
    std::future<ProcessResult> result;
    IpcChannel channel;
};
Peer start_peer(const std::string& mode, const IpcListener& listener) {
    const std::string helper = test::helper_path("ipc_gpu_peer").string();
    const std::string path = listener.path().string();
    auto result = std::async(std::launch::async,
                             [=] { return test::run_process({helper, mode, path}); });
    return {std::move(result), listener.accept(60s)};
}

using test::mismatches;

// The exporter's side of an importer in `mode` that reads the pattern 3i + 1 with a slow kernel,
// rewrites it as 5i + 2 and records `done`: sends `pool`, `shared` and `done`, waits on `done`
// once the importer says it recorded it (only that wait lets the check see the new words), checks
// them with a kernel, and returns in `result` how the importer ended after closing its mapping.
template <class Pool>
void share_and_check_rewrite(const std::string& mode, const Pool& pool, const Buffer& shared,
                             const Event& done, const Stream& stream, const ObjectCode& code,
                             ProcessResult& result) {
    TempDir dir;
    IpcListener listener(dir.path() / "ipc");
    Peer peer = start_peer(mode, listener);
    send_memory_pool(peer.channel, pool);
    send_buffer(peer.channel, shared);
    send_event(peer.channel, done);
    ASSERT_EQ(peer.channel.receive(60s).text(), "recorded");
    stream.wait(done);
    EXPECT_EQ(mismatches(code, shared, stream, 5, 2), 0u);
    ASSERT_EQ(peer.channel.receive(60s).text(), "closed");
    result = peer.result.get();
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
}

// `shared` filled with 3i + 1 and the IPC event for the importer to record.
Event pattern_and_event(const ObjectCode& code, const Buffer& shared, const Stream& stream) {
    test::write_pattern(code, shared, stream, 3, 1);
    stream.sync();  // the allocation and the data are complete before the other process looks
    return stream.device().create_event({.ipc_enabled = true});
}

// The device still works for this process: allocate, write, read back.
void expect_device_usable(const Device& device) {
    Stream stream = device.create_stream();
    Buffer buffer = device.allocate(MiB, stream);
    buffer.fill_uint32(0x12345678u, stream);
    std::vector<std::uint32_t> host(MiB / 4);
    buffer.copy_to(host, stream);
    stream.sync();
    EXPECT_EQ(host.front(), 0x12345678u);
    EXPECT_EQ(host.back(), 0x12345678u);
}

TEST(IpcGpu, ExporterWritesImporterReadsRewritesAndSignalsWithAnIpcEvent) {
    REQUIRE_IPC_POOLS();
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    auto pool = std::make_shared<DeviceMemoryResource>(
        device, DeviceMemoryResourceOptions{.ipc_enabled = true});
    EXPECT_TRUE(pool->is_ipc_enabled());
    EXPECT_FALSE(pool->is_imported());
    Stream stream = device.create_stream();
    Buffer shared = pool->allocate(MiB, stream);
    const Event done = pattern_and_event(code, shared, stream);
    ProcessResult result;
    // The importer's kernel spins for 300 ms before rewriting.
    ASSERT_NO_FATAL_FAILURE(
        share_and_check_rewrite("import-read-signal", *pool, shared, done, stream, code, result));
    EXPECT_NE(result.out.find("mismatches: 0"), std::string::npos) << result.out;

    // The importer closed its mapping; the memory is still ours and intact.
    EXPECT_FALSE(shared.is_closed());
    EXPECT_EQ(mismatches(code, shared, stream, 5, 2), 0u);
    shared.close(stream);
    stream.sync();
}

// Across GPUs: the importer's kernel runs on device 1 and reaches device 0's IPC pool through the
// access the importing process grants; the IPC event, recorded on device 0 after that kernel,
// orders the exporter's stream.
TEST(IpcGpu, AnImporterOnTheOtherGpuReadsRewritesAndSignals) {
    REQUIRE_IPC_POOLS();
    if (system::device_count() < 2) GTEST_SKIP() << "needs two GPUs (this machine has one)";
    const Device device(0), other(1);
    if (!other.can_access_peer(device)) GTEST_SKIP() << "device 1 cannot access device 0's memory";
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    auto pool = std::make_shared<DeviceMemoryResource>(
        device, DeviceMemoryResourceOptions{.ipc_enabled = true});
    Stream stream = device.create_stream();
    Buffer shared = pool->allocate(4 * MiB, stream);
    const Event done = pattern_and_event(code, shared, stream);
    ProcessResult result;
    // Recorded after device 1's kernel, which spins 300 ms before the rewrite.
    ASSERT_NO_FATAL_FAILURE(share_and_check_rewrite("import-read-signal-on-device-1", *pool, shared,
                                                    done, stream, code, result));
    EXPECT_NE(result.out.find("kernel on device 1, pool of device 0"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("mismatches: 0"), std::string::npos) << result.out;
    shared.close(stream);
    stream.sync();
}

// A pinned host pool shared as cuda.core's LegacyPinnedMemoryResource(ipc_enabled=True) is: the
// importer reads the exporter's words from the host, rewrites them with a kernel and records the
// IPC event; the exporter then sees the new words from the host and from a kernel.
TEST(IpcGpu, APinnedPoolsBufferIsReadByHostAndKernelAndRewrittenAcrossProcesses) {
    REQUIRE_IPC_POOLS();
    const Device device(0);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED))
        GTEST_SKIP() << "device 0 has no host NUMA memory pools, which pinned IPC needs";
    if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID) < 0) {
        EXPECT_THROW(PinnedMemoryPoolResource(device, {.ipc_enabled = true}), InvalidArgumentError);
        GTEST_SKIP() << "device 0 reports no host NUMA node (refused with a clear error)";
    }
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    auto pool = std::make_shared<PinnedMemoryPoolResource>(device, PinnedMemoryPoolOptions{.ipc_enabled = true});
    EXPECT_TRUE(pool->is_ipc_enabled());
    EXPECT_FALSE(pool->is_imported());
    ASSERT_TRUE(pool->host_numa_id().has_value());
    Stream stream = device.create_stream();
    Buffer shared = pool->allocate(MiB, stream);
    ASSERT_TRUE(shared.is_host_accessible());
    const Event done = pattern_and_event(code, shared, stream);
    ProcessResult result;
    ASSERT_NO_FATAL_FAILURE(
        share_and_check_rewrite("import-pinned-read-signal", *pool, shared, done, stream, code, result));
    EXPECT_EQ(test::host_mismatches(shared, 5, 2), 0u);  // the kernel check synchronized the stream
    EXPECT_NE(result.out.find("host accessible: 1"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("host mismatches: 0"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("\nmismatches: 0"), std::string::npos) << result.out;

    // A pinned pool is not exported or imported as a device pool, nor the reverse.
    EXPECT_THROW(export_memory_pool(*std::make_shared<PinnedMemoryPoolResource>(device)), InvalidArgumentError);
    IpcPoolHandle handle = export_memory_pool(*pool);
    EXPECT_TRUE(handle.descriptor.pinned);
    try {
        import_memory_pool(std::move(handle));
        FAIL() << "a pinned pool was imported as a device pool";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("import_pinned_memory_pool"), std::string::npos) << e.what();
    }
    shared.close(stream);
    stream.sync();
}

TEST(IpcGpu, MisuseIsAClearErrorOnBothSides) {
    REQUIRE_IPC_POOLS();
    const Device device(0);
    Stream stream = device.create_stream();

    // Exporting what is not shareable.
    try {
        export_event(device.create_event());
        FAIL() << "a non-IPC event was exported";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("ipc_enabled"), std::string::npos) << e.what();
    }
    EXPECT_THROW(export_event(device.create_event({.timing_enabled = true})), InvalidArgumentError);
    Buffer ordinary = device.allocate(MiB, stream);
    try {
        export_buffer(ordinary);
        FAIL() << "a buffer of the default pool was exported";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("IPC-enabled"), std::string::npos) << e.what();
    }
    EXPECT_THROW(export_memory_pool(DeviceMemoryResource(device)), InvalidArgumentError);

    // Misuse on the importing side.
    auto pool = std::make_shared<DeviceMemoryResource>(
        device, DeviceMemoryResourceOptions{.ipc_enabled = true});
    Buffer shared = pool->allocate(MiB, stream);
    stream.sync();
    TempDir dir;
    IpcListener listener(dir.path() / "ipc");
    Peer peer = start_peer("import-errors", listener);
    send_memory_pool(peer.channel, *pool);
    IpcBufferDescriptor foreign = export_buffer(shared);
    foreign.pool_id[0] ^= 0xff;  // as if from another (or an earlier) pool
    peer.channel.send(foreign.to_bytes());
    const auto bytes = export_buffer(shared).to_bytes();
    peer.channel.send(std::span(bytes.data(), bytes.size() - 9));
    EXPECT_EQ(peer.channel.receive(60s).text(), "done");
    const ProcessResult result = peer.result.get();
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::pair<const char*, const char*> expected[] = {
        {"allocate from imported pool: InvalidArgumentError", "cannot allocate"},
        {"foreign pool descriptor: InvalidArgumentError", "stale or foreign descriptor"},
        {"truncated descriptor: SerializationError", "truncated"},
        {"export imported pool: InvalidArgumentError", "was imported"},
        {"import into the default pool: InvalidArgumentError", "was not imported"},
    };
    for (const auto& [line, text] : expected) {
        const auto at = result.out.find(line);
        ASSERT_NE(at, std::string::npos) << line << "\n" << result.out;
        const std::string message = result.out.substr(at, result.out.find('\n', at) - at);
        EXPECT_NE(message.find(text), std::string::npos) << message;
    }
    shared.close(stream);
    stream.sync();
}

// The exporter goes away (normally, or killed) while this process holds its pool, buffer and
// event: using them either still works or throws a cudacore::Error; nothing crashes, releasing
// them does not throw from destructors, and the device stays usable here.
void survive_exporter(const std::string& mode) {
    const Device device(0);
    TempDir dir;
    IpcListener listener(dir.path() / "ipc");
    Peer peer = start_peer(mode, listener);
    {
        auto pool = receive_memory_pool(peer.channel, 60s);
        EXPECT_TRUE(pool->is_imported());
        Stream stream = device.create_stream();
        Buffer shared = receive_buffer(peer.channel, pool, stream, 60s);
        Event done = receive_event(peer.channel, 60s);
        peer.channel.send(std::string("imported"));
        const ProcessResult result = peer.result.get();
        EXPECT_EQ(result.exit_code, mode == "export-and-die" ? -SIGKILL : 0) << result.err;

        // The channel reports the peer's end.
        try {
            peer.channel.receive(5s);
            ADD_FAILURE() << "a message from a process that is gone";
        } catch (const IpcError& e) {
            EXPECT_NE(std::string(e.what()).find("closed its end"), std::string::npos) << e.what();
        }
        // The shared objects: working, or a clear error.
        try {
            done.sync();
            std::vector<std::uint32_t> host(shared.size() / 4);
            shared.copy_to(host, stream);
            stream.sync();
            EXPECT_EQ(host.front(), 0xC0FFEE00u);  // the driver kept the memory mapped
            EXPECT_EQ(host.back(), 0xC0FFEE00u);
        } catch (const Error& e) {
            std::printf("use after the exporter went away: %s\n", e.what());
        }
        try {
            shared.close(stream);
            stream.sync();
        } catch (const Error& e) {
            std::printf("closing after the exporter went away: %s\n", e.what());
        }
    }  // pool, event and stream released here: never throws
    expect_device_usable(device);
}

TEST(IpcGpu, ImporterOutlivesAnExporterThatExits) {
    REQUIRE_IPC_POOLS();
    survive_exporter("export-and-exit");
}

TEST(IpcGpu, ImporterSurvivesAnExporterKilledMidUse) {
    REQUIRE_IPC_POOLS();
    survive_exporter("export-and-die");
}

TEST(IpcGpu, ExporterSurvivesAnImporterKilledWhileItsKernelRuns) {
    REQUIRE_IPC_POOLS();
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    auto pool = std::make_shared<DeviceMemoryResource>(
        device, DeviceMemoryResourceOptions{.ipc_enabled = true});
    Stream stream = device.create_stream();
    Buffer shared = pool->allocate(MiB, stream);
    test::write_pattern(code, shared, stream, 3, 1);
    stream.sync();
    TempDir dir;
    IpcListener listener(dir.path() / "ipc");
    Peer peer = start_peer("import-and-die", listener);
    send_memory_pool(peer.channel, *pool);
    send_buffer(peer.channel, shared);
    EXPECT_EQ(peer.channel.receive(60s).text(), "running");
    EXPECT_EQ(peer.result.get().exit_code, -SIGKILL);
    // The importer's kernel rewrote the same pattern (or never ran): our data is intact, and the
    // memory is still ours to use and free.
    EXPECT_EQ(mismatches(code, shared, stream, 3, 1), 0u);
    shared.close(stream);
    stream.sync();
    EXPECT_NO_THROW(pool.reset());
    expect_device_usable(device);
}

// Ordinary device memory (cuMemAlloc, not a pool) through the same channel calls: a slice of it
// is sent with send_buffer, the importer maps it with receive_buffer (no pool), rewrites it, and
// the exporter sees the new words; the rest of the allocation is untouched.
void share_ordinary_memory(const std::string& mode, const Device& device) {
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    auto plain = std::make_shared<SynchronousMemoryResource>(device);
    Stream stream = device.create_stream();
    Buffer allocation = plain->allocate(4 * MiB, stream);
    allocation.fill_uint32(0xDEADBEEFu, stream);
    Buffer part = slice(allocation, MiB, 2 * MiB);
    test::write_pattern(code, part, stream, 3, 1);
    stream.sync();
    const IpcMemoryDescriptor descriptor = export_memory(part);
    EXPECT_EQ(descriptor.offset, MiB);
    EXPECT_EQ(descriptor.size, 2 * MiB);
    TempDir dir;
    IpcListener listener(dir.path() / "ipc");
    Peer peer = start_peer(mode, listener);
    send_buffer(peer.channel, part);
    ASSERT_EQ(peer.channel.receive(60s).text(), "recorded");
    EXPECT_EQ(mismatches(code, part, stream, 5, 2), 0u);
    ASSERT_EQ(peer.channel.receive(60s).text(), "closed");
    const ProcessResult result = peer.result.get();
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("mismatches: 0"), std::string::npos) << result.out;
    std::vector<std::uint32_t> head(4);
    slice(allocation, 0, 16).copy_to(head, stream);
    stream.sync();
    EXPECT_EQ(head[0], 0xDEADBEEFu) << "outside the slice nothing changed";
}

TEST(IpcGpu, OrdinaryDeviceMemoryTravelsThroughTheSameChannelCalls) {
    CUDACORE_REQUIRE_GPU();
    share_ordinary_memory("import-memory", Device(0));
}

TEST(IpcGpu, OrdinaryDeviceMemoryMappedOnTheOtherGpu) {
    CUDACORE_REQUIRE_GPU();
    if (Device::count() < 2) GTEST_SKIP() << "needs two GPUs (" << Device::count() << " found)";
    if (!Device(1).can_access_peer(Device(0))) GTEST_SKIP() << "devices 0 and 1 are not peers";
    share_ordinary_memory("import-memory-on-device-1", Device(0));
}

TEST(IpcGpu, MemoryTheDriverCannotShareIsRefusedNamingBothWays) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    Stream stream = device.create_stream();
    Buffer pooled = device.allocate(MiB, stream);
    try {
        export_memory(pooled);
        FAIL() << "pool memory was exported as ordinary memory";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("send_memory_pool"), std::string::npos) << e.what();
    }
    // A descriptor round trip needs no driver and keeps every field.
    IpcMemoryDescriptor descriptor{.exporter_pid = 7, .offset = 64, .size = 128};
    descriptor.handle[3] = 9;
    EXPECT_EQ(IpcMemoryDescriptor::from_bytes(descriptor.to_bytes()), descriptor);
    stream.sync();
}

}  // namespace
