// The other process of the IPC GPU tests. Usage: ipc_gpu_peer MODE SOCKET_PATH
//   import-read-signal: imports the pool, a buffer and an event; a slow kernel checks the
//       exporter's pattern (3i + 1) and rewrites it (5i + 2); records the event, says
//       "recorded", prints "mismatches: N", closes its mapping, says "closed".
//   import-read-signal-on-device-1: the same with the kernel on device 1, which reaches device
//       0's pool through the access this process grants it; the event, device 0's, is recorded
//       on device 0 after that kernel.
//   import-pinned-read-signal: imports a pinned pool, its buffer and an event; prints "host
//       mismatches: N" for the exporter's pattern (3i + 1) read by the host, then as
//       import-read-signal with the kernel on the pool's device.
//   import-errors: imports the pool, then prints how each misuse failed ("NAME: TYPE: message").
//   export-and-exit / export-and-die: exports a pool, a buffer filled with 0xC0FFEE00 words and
//       a recorded IPC event, then exits normally / kills itself with SIGKILL.
//   import-and-die: imports the pool and a buffer, starts a kernel on it, says "running" and
//       kills itself with SIGKILL while the kernel may still run.
//   import-memory / import-memory-on-device-1: receives ordinary device memory (cuMemAlloc,
//       receive_buffer without a pool), maps it on its device (or on device 1, through peer
//       access), checks the pattern 3i + 1 and rewrites it as 5i + 2 with a kernel, synchronizes,
//       says "recorded", prints "mismatches: N", unmaps it and says "closed".
#include "multi_gpu_kernels.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/ipc.hpp"
#include "cudacore/launch.hpp"

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

void report(const char* name, const std::function<void()>& call) {
    try {
        call();
        std::printf("%s: success\n", name);
    } catch (const InvalidArgumentError& e) {
        std::printf("%s: InvalidArgumentError: %s\n", name, e.what());
    } catch (const SerializationError& e) {
        std::printf("%s: SerializationError: %s\n", name, e.what());
    } catch (const DriverError& e) {
        std::printf("%s: DriverError: %s\n", name, e.what());
    } catch (const std::exception& e) {
        std::printf("%s: other: %s\n", name, e.what());
    }
    std::fflush(stdout);
}

// `compute` runs the kernel (device 0's pool may belong to another device); the buffer is
// imported and closed on the pool's device.
int import_read_signal(const IpcChannel& channel, std::optional<Device> compute) {
    auto pool = receive_memory_pool(channel, 30s);
    const Device home = pool->device();
    const Device device = compute.value_or(home);
    if (device != home) {
        auto listed = [&] {
            std::string text;
            for (const Device& peer : pool->peer_accessible_by()) text += " " + std::to_string(peer.ordinal());
            return text.empty() ? std::string(" none") : text;
        };
        std::printf("imported pool reachable by:%s\n", listed().c_str());
        pool->set_peer_accessible_by({device});  // this process's own mapping
        std::printf("after setting:%s\n", listed().c_str());
    }
    Stream home_stream = home.create_stream();
    Stream stream = device.create_stream();
    Buffer shared = receive_buffer(channel, pool, home_stream, 30s);
    Event done = receive_event(channel, 30s);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Buffer bad = device.allocate(sizeof(unsigned long long), stream);
    stream.wait(home_stream);  // the import is ordered on the pool's device
    launch(stream, LaunchConfig{}, code.get_kernel("spin_check_rewrite"), shared,
           static_cast<unsigned long long>(shared.size() / 4), 3u, 1u, 5u, 2u,
           300'000'000ull /* 300 ms */, bad);
    // The IPC event is the pool device's: recorded there, after the kernel on `device`.
    if (device != home) {
        home_stream.wait(stream);
        home_stream.record(done);
    } else {
        stream.record(done);
    }
    channel.send(std::string("recorded"));
    unsigned long long mismatches = ~0ull;
    bad.copy_to(&mismatches, sizeof mismatches, stream);
    stream.sync();
    std::printf("kernel on device %d, pool of device %d\n", device.ordinal(), home.ordinal());
    std::printf("mismatches: %llu\n", mismatches);
    shared.close(home_stream);  // frees this process's mapping only
    home_stream.sync();
    channel.send(std::string("closed"));
    return 0;
}

int import_pinned_read_signal(const IpcChannel& channel) {
    auto pool = receive_pinned_memory_pool(channel, 30s);
    const Device device = pool->device();
    Stream stream = device.create_stream();
    Buffer shared = receive_buffer(channel, pool, stream, 30s);
    Event done = receive_event(channel, 30s);
    std::printf("imported: %s, host accessible: %d\n", pool->description().c_str(),
                static_cast<int>(shared.is_host_accessible()));
    std::printf("host mismatches: %llu\n", test::host_mismatches(shared, 3, 1));
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Buffer bad = device.allocate(sizeof(unsigned long long), stream);
    launch(stream, LaunchConfig{}, code.get_kernel("spin_check_rewrite"), shared,
           static_cast<unsigned long long>(shared.size() / 4), 3u, 1u, 5u, 2u,
           100'000'000ull /* 100 ms */, bad);
    stream.record(done);
    channel.send(std::string("recorded"));
    unsigned long long mismatches = ~0ull;
    bad.copy_to(&mismatches, sizeof mismatches, stream);
    stream.sync();
    std::printf("mismatches: %llu\n", mismatches);
    shared.close(stream);
    stream.sync();
    channel.send(std::string("closed"));
    return 0;
}

int import_errors(const IpcChannel& channel) {
    auto pool = receive_memory_pool(channel, 30s);
    Stream stream = pool->device().create_stream();
    report("allocate from imported pool", [&] { pool->allocate(1024, stream); });
    report("foreign pool descriptor", [&] { receive_buffer(channel, pool, stream, 30s); });
    report("truncated descriptor", [&] { receive_buffer(channel, pool, stream, 30s); });
    report("export imported pool", [&] { export_memory_pool(*pool); });
    report("import into the default pool", [&] {
        auto default_pool = std::make_shared<DeviceMemoryResource>(pool->device());
        import_buffer(default_pool, IpcBufferDescriptor{.pool_id = pool->ipc_pool_id(), .size = 4},
                      stream);
    });
    channel.send(std::string("done"));
    return 0;
}

int export_then_end(const IpcChannel& channel, bool die) {
    const Device device(0);
    auto pool = std::make_shared<DeviceMemoryResource>(
        device, DeviceMemoryResourceOptions{.ipc_enabled = true});
    Stream stream = device.create_stream();
    Buffer data = pool->allocate(1 << 20, stream);
    data.fill_uint32(0xC0FFEE00u, stream);
    Event done = device.create_event({.ipc_enabled = true});
    stream.record(done);
    stream.sync();
    send_memory_pool(channel, *pool);
    send_buffer(channel, data);
    send_event(channel, done);
    channel.receive(30s);  // "imported": the other side holds everything now
    if (die) std::raise(SIGKILL);
    std::_Exit(0);  // gone without closing anything, as a crashing program would
}

int import_and_die(const IpcChannel& channel) {
    auto pool = receive_memory_pool(channel, 30s);
    const Device device = pool->device();
    Stream stream = device.create_stream();
    Buffer shared = receive_buffer(channel, pool, stream, 30s);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Buffer bad = device.allocate(sizeof(unsigned long long), stream);
    launch(stream, LaunchConfig{}, code.get_kernel("spin_check_rewrite"), shared,
           static_cast<unsigned long long>(shared.size() / 4), 3u, 1u, 3u, 1u,
           200'000'000ull, bad);
    channel.send(std::string("running"));
    std::raise(SIGKILL);
    return 1;
}

int import_memory_rewrite(const IpcChannel& channel, int device_ordinal) {
    Buffer shared = receive_buffer(channel, 30s, {.device_ordinal = device_ordinal});
    const Device device = device_ordinal < 0 ? shared.device() : Device(device_ordinal);
    Stream stream = device.create_stream();
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Buffer bad = device.allocate(sizeof(unsigned long long), stream);
    launch(stream, LaunchConfig{}, code.get_kernel("spin_check_rewrite"), shared,
           static_cast<unsigned long long>(shared.size() / 4), 3u, 1u, 5u, 2u,
           50'000'000ull /* 50 ms */, bad);
    unsigned long long mismatches = ~0ull;
    bad.copy_to(&mismatches, sizeof mismatches, stream);
    stream.sync();
    channel.send(std::string("recorded"));
    std::printf("kernel on device %d, memory of %zu bytes\n", device.ordinal(), shared.size());
    std::printf("mismatches: %llu\n", mismatches);
    shared.close();  // unmaps this process's mapping only
    channel.send(std::string("closed"));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: ipc_gpu_peer MODE SOCKET_PATH\n");
        return 2;
    }
    const std::string mode = argv[1];
    try {
        IpcChannel channel = IpcChannel::connect(argv[2]);
        if (mode == "import-read-signal") return import_read_signal(channel, std::nullopt);
        if (mode == "import-read-signal-on-device-1") return import_read_signal(channel, Device(1));
        if (mode == "import-pinned-read-signal") return import_pinned_read_signal(channel);
        if (mode == "import-errors") return import_errors(channel);
        if (mode == "export-and-exit") return export_then_end(channel, false);
        if (mode == "export-and-die") return export_then_end(channel, true);
        if (mode == "import-and-die") return import_and_die(channel);
        if (mode == "import-memory") return import_memory_rewrite(channel, -1);
        if (mode == "import-memory-on-device-1") return import_memory_rewrite(channel, 1);
        std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ipc_gpu_peer %s: %s\n", mode.c_str(), e.what());
        return 1;
    }
}
