// Several GPUs and several processes, each beside the raw driver calls in the same run:
// - copies of 256 MiB between device 0 and device 1: copy_between_devices beside
//   cuMemcpyPeerAsync, with peer access enabled ("peer") and disabled ("staged" by the driver
//   through host memory); skipped, saying so, with fewer than two GPUs;
// - the cost of importing what another process exported: a buffer (import_buffer beside
//   cuMemPoolImportPointer, each followed by the free of the mapping and a stream sync) and a
//   memory pool (import_memory_pool beside cuMemPoolImportFromShareableHandle + destroy).
// The exporting process is a child forked before this process touches the driver; it shares
// one 1 MiB buffer of an IPC-enabled pool over an IpcChannel and exits when the channel closes.
#include "bench_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/device_scope.hpp"
#include "cudacore/ipc.hpp"
#include "cudacore/peer_copy.hpp"
#include "cudacore/system.hpp"
#include "loader/driver_api.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t copy_size = 256 * MiB;

// ---- copies between two devices ----------------------------------------------------------

// Plain cuMemAlloc memory on each device (peer access between contexts applies to it), shared
// by the raw and cudacore sides; leaked on purpose (the process ends after the benchmarks).
// The primary contexts are held here: a primary context released by its last holder is
// destroyed, and the memory allocated in it goes with it.
struct TwoDevices {
    std::optional<Context> context0, context1;
    CUdeviceptr source = 0;       // on device 0
    CUdeviceptr destination = 0;  // on device 1
    Buffer source_buffer, destination_buffer;
    std::optional<Stream> stream;  // on device 1
};

TwoDevices* two_devices(benchmark::State& state) {
    if (bench::skip_without_gpu(state)) return nullptr;
    if (Device::count() < 2) {
        state.SkipWithError("needs two GPUs; this machine has one");
        return nullptr;
    }
    static TwoDevices* shared = [] {
        auto* out = new TwoDevices;
        const auto& api = detail::driver();
        const Device a(0), b(1);
        out->context0.emplace(a.context());
        out->context1.emplace(b.context());
        {
            DeviceScope on(a);
            detail::check(api.cuMemAlloc(&out->source, copy_size), "cuMemAlloc", "device 0");
            detail::check(api.cuMemsetD8Async(out->source, 0x5a, copy_size, nullptr),
                          "cuMemsetD8Async", "device 0");
            detail::check(api.cuCtxSynchronize(), "cuCtxSynchronize", "device 0");
        }
        {
            DeviceScope on(b);
            detail::check(api.cuMemAlloc(&out->destination, copy_size), "cuMemAlloc", "device 1");
        }
        out->source_buffer = Buffer::wrap_unowned(out->source, copy_size);
        out->destination_buffer = Buffer::wrap_unowned(out->destination, copy_size);
        out->stream = b.create_stream();
        return out;
    }();
    return shared;
}

// Peer access both ways on (peer) or off (staged); false, with the benchmark skipped, when the
// devices cannot reach each other.
bool set_peer(benchmark::State& state, bool enabled) {
    const Device a(0), b(1);
    if (!enabled) {
        a.disable_peer_access(b);
        b.disable_peer_access(a);
        return true;
    }
    if (!a.can_access_peer(b) || !b.can_access_peer(a)) {
        state.SkipWithError("devices 0 and 1 are not peer capable");
        return false;
    }
    a.enable_peer_access(b);
    b.enable_peer_access(a);
    return true;
}

void raw_copy(benchmark::State& state, bool peer) {
    TwoDevices* d = two_devices(state);
    if (!d || !set_peer(state, peer)) return;
    const auto& api = detail::driver();
    const CUstream stream = d->stream->handle();
    for (auto _ : state) {
        api.cuMemcpyPeerAsync(d->destination, d->context1->handle(), d->source,
                              d->context0->handle(), copy_size, stream);
        api.cuStreamSynchronize(stream);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * copy_size));
}

void cudacore_copy(benchmark::State& state, bool peer) {
    TwoDevices* d = two_devices(state);
    if (!d || !set_peer(state, peer)) return;
    const CopyPath expected = peer ? CopyPath::peer : CopyPath::staged;
    for (auto _ : state) {
        if (copy_between_devices(d->destination_buffer, d->source_buffer, *d->stream) != expected)
            state.SkipWithError("unexpected copy path");
        d->stream->sync();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * copy_size));
}

void raw_peer_copy(benchmark::State& state) { raw_copy(state, true); }
void cudacore_peer_copy(benchmark::State& state) { cudacore_copy(state, true); }
void raw_staged_copy(benchmark::State& state) { raw_copy(state, false); }
void cudacore_staged_copy(benchmark::State& state) { cudacore_copy(state, false); }

// ---- importing from another process -----------------------------------------------------

// This process's end of the channel to the exporting child (made in main before any driver
// call), and what the child shared, received on first use.
std::optional<IpcChannel> exporter_channel;
pid_t exporter_pid = -1;

struct Imported {
    std::string skip_reason;
    IpcPoolDescriptor pool_descriptor;
    FileDescriptor pool_fd;  // kept, duplicated for each pool import
    std::shared_ptr<DeviceMemoryResource> pool;
    IpcBufferDescriptor buffer;
};

Imported& imported() {
    static Imported* shared = [] {
        auto* out = new Imported;
        try {
            if (!exporter_channel) throw IpcError("no exporting process");
            IpcMessage first = exporter_channel->receive(60s);
            if (!first.fd.valid()) {
                out->skip_reason = first.text();
                return out;
            }
            out->pool_descriptor = IpcPoolDescriptor::from_bytes(first.bytes);
            out->pool_fd = std::move(first.fd);
            IpcPoolHandle handle{FileDescriptor(::dup(out->pool_fd.get())), out->pool_descriptor};
            out->pool = import_memory_pool(std::move(handle));
            out->buffer = IpcBufferDescriptor::from_bytes(exporter_channel->receive(60s).bytes);
        } catch (const std::exception& e) {
            out->skip_reason = std::string("exporter: ") + e.what();
        }
        return out;
    }();
    return *shared;
}

Imported* ipc_ready(benchmark::State& state) {
    if (bench::skip_without_gpu(state)) return nullptr;
    Imported& in = imported();
    if (!in.skip_reason.empty()) {
        state.SkipWithError(in.skip_reason.c_str());
        return nullptr;
    }
    return &in;
}

void raw_import_buffer(benchmark::State& state) {
    Imported* in = ipc_ready(state);
    if (!in) return;
    const auto& api = detail::driver();
    const Device device = in->pool->device();
    device.set_current();
    Stream stream = device.create_stream();
    CUmemPoolPtrExportData data{};
    std::memcpy(data.reserved, in->buffer.export_data.data(), sizeof data.reserved);
    for (auto _ : state) {
        CUdeviceptr pointer = 0;
        if (api.cuMemPoolImportPointer(&pointer, in->pool->pool(), &data) != CUDA_SUCCESS) {
            state.SkipWithError("cuMemPoolImportPointer failed");
            break;
        }
        api.cuMemFreeAsync(pointer, stream.handle());
        api.cuStreamSynchronize(stream.handle());
    }
}

void cudacore_import_buffer(benchmark::State& state) {
    Imported* in = ipc_ready(state);
    if (!in) return;
    const Device device = in->pool->device();
    device.set_current();
    Stream stream = device.create_stream();
    for (auto _ : state) {
        {
            Buffer buffer = import_buffer(in->pool, in->buffer, stream);
            benchmark::DoNotOptimize(buffer.handle());
        }  // the mapping is freed on `stream`
        stream.sync();
    }
}

void raw_import_pool(benchmark::State& state) {
    Imported* in = ipc_ready(state);
    if (!in) return;
    const auto& api = detail::driver();
    in->pool->device().set_current();
    for (auto _ : state) {
        const int fd = ::dup(in->pool_fd.get());
        CUmemoryPool pool = nullptr;
        const CUresult status = api.cuMemPoolImportFromShareableHandle(
            &pool, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        ::close(fd);
        if (status != CUDA_SUCCESS) {
            state.SkipWithError("cuMemPoolImportFromShareableHandle failed");
            break;
        }
        api.cuMemPoolDestroy(pool);
    }
}

void cudacore_import_pool(benchmark::State& state) {
    Imported* in = ipc_ready(state);
    if (!in) return;
    in->pool->device().set_current();
    for (auto _ : state) {
        IpcPoolHandle handle{FileDescriptor(::dup(in->pool_fd.get())), in->pool_descriptor};
        auto pool = import_memory_pool(std::move(handle));
        benchmark::DoNotOptimize(pool->pool());
    }  // destroyed with the resource
}

BENCHMARK(raw_peer_copy)->Name("raw/peer_copy_256MiB")->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_peer_copy)->Name("cudacore/peer_copy_256MiB")->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(raw_staged_copy)->Name("raw/staged_copy_256MiB")->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_staged_copy)->Name("cudacore/staged_copy_256MiB")->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(raw_import_buffer)->Name("raw/ipc_import_buffer")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_import_buffer)->Name("cudacore/ipc_import_buffer")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(raw_import_pool)->Name("raw/ipc_import_pool")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_import_pool)->Name("cudacore/ipc_import_pool")->Repetitions(5)->ReportAggregatesOnly(true);

// The exporting child: shares one buffer, then waits until the parent closes the channel.
int run_exporter(const IpcChannel& channel) {
    try {
        if (!system::driver_available() || system::device_count() == 0) {
            channel.send(std::string("no GPU in the exporting process"));
            return 0;
        }
        const Device device(0);
        auto pool = std::make_shared<DeviceMemoryResource>(
            device, DeviceMemoryResourceOptions{.ipc_enabled = true});
        Stream stream = device.create_stream();
        Buffer buffer = pool->allocate(MiB, stream);
        stream.sync();
        send_memory_pool(channel, *pool);
        send_buffer(channel, buffer);
        try {
            channel.receive();  // returns or throws when the parent is done
        } catch (const IpcError&) {
        }
        return 0;
    } catch (const std::exception& e) {
        try {
            channel.send(std::string("exporting process failed: ") + e.what());
        } catch (...) {
        }
        return 1;
    }
}

}  // namespace

int main(int argc, char** argv) {
    // Fork before this process touches the driver: a forked child may not use CUDA otherwise.
    auto [mine, theirs] = IpcChannel::pair();
    std::fflush(nullptr);
    exporter_pid = ::fork();
    if (exporter_pid == 0) {
        { IpcChannel drop = std::move(mine); }
        std::_Exit(run_exporter(theirs));
    }
    { IpcChannel drop = std::move(theirs); }
    if (exporter_pid > 0) exporter_channel.emplace(std::move(mine));
    const int status = cudacore::bench::run_with_ratios(argc, argv);
    exporter_channel.reset();  // the child sees the channel close and exits
    if (exporter_pid > 0) ::waitpid(exporter_pid, nullptr, 0);
    return status;
}
