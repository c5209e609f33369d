// The memory breadth features beside the raw driver calls, in the same run:
//   vmm_grow_2MiB_to_64MiB   VirtualMemoryResource allocate + 5 doublings + free, against the same
//                            reserve / create / map / set-access sequence written with raw calls
//   copy_1000x256B           the raw side is 1,000 cuMemcpyAsync calls, the cudacore side one
//                            copy_batch (its kernels): the ratio is the batching speed-up
//                            (target: cudacore at most 1/3 of raw)
//   memcpy_batch_1000x256B   copy_batch (its kernels) against the driver's own batch, one
//                            cuMemcpyBatchAsync
//   memcpy_batch_engines_1000x256B
//                            copy_batch with prefer_overlap_with_compute (the driver's batch
//                            through cudacore) against cuMemcpyBatchAsync with the same flag
//                            (CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE): overhead only
//   each timed until the copies are done (stream synchronized)
//   and the overhead of each new operation against its raw call: owned pool and pinned pool
//   allocate/free (timed in batches of 32, the stream drained between batches, freed memory
//   kept in the pool on both sides; times per batch),
//   synchronous allocate/free, 2-byte fill, advise, batched prefetch, host
//   registration, a pool attribute read.
#include "bench_support.hpp"

#include "cudacore/batched_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/managed_memory.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "cudacore/registered_host_memory.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "cudacore/virtual_memory_resource.hpp"
#include "loader/driver_api.hpp"

#include <vector>

namespace {

using namespace cudacore;
using bench::skip_without_gpu;

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t small_copies = 1000, small_bytes = 256;

// ---- VMM growth ---------------------------------------------------------------------------

// The raw calls a user would write for what VirtualMemoryResource::grow does: map the new piece
// at the range right after the allocation when the driver hands that range out, else reserve a
// new range, map every piece there and release the old range (waiting for the stream first, as
// grow does, since queued work may still use the old addresses).
struct RawVmm {
    const detail::DriverApi& api = detail::driver();
    CUmemAllocationProp prop{};
    CUmemAccessDesc access{};
    std::size_t granularity = 0;
    struct Piece { std::size_t offset; std::size_t size; CUmemGenericAllocationHandle handle; };
    struct Range { CUdeviceptr address; std::size_t size; };
    CUdeviceptr base = 0;
    std::vector<Piece> pieces;
    std::vector<Range> reserved;
    std::size_t mapped = 0, in_place = 0, remapped = 0;

    explicit RawVmm(const Device& device) {
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device.handle();
        api.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    void allocate(std::size_t size) {
        api.cuMemAddressReserve(&base, size, granularity, 0, 0);
        CUmemGenericAllocationHandle handle = 0;
        api.cuMemCreate(&handle, size, &prop, 0);
        api.cuMemMap(base, size, 0, handle, 0);
        api.cuMemSetAccess(base, size, &access, 1);
        pieces = {{0, size, handle}};
        reserved = {{base, size}};
        mapped = size;
    }
    void grow(std::size_t new_size, CUstream stream) {
        const std::size_t extra = new_size - mapped;
        CUmemGenericAllocationHandle handle = 0;
        api.cuMemCreate(&handle, extra, &prop, 0);
        const CUdeviceptr end = reserved.back().address + reserved.back().size;
        CUdeviceptr next = 0;
        if (api.cuMemAddressReserve(&next, extra, 0, end, 0) == CUDA_SUCCESS && next == end) {
            api.cuMemMap(next, extra, 0, handle, 0);
            api.cuMemSetAccess(next, extra, &access, 1);
            reserved.push_back({next, extra});
            ++in_place;
        } else {
            if (next) api.cuMemAddressFree(next, extra);
            CUdeviceptr moved = 0;
            api.cuMemAddressReserve(&moved, new_size, granularity, 0, 0);
            for (const Piece& piece : pieces) api.cuMemMap(moved + piece.offset, piece.size, 0, piece.handle, 0);
            api.cuMemMap(moved + mapped, extra, 0, handle, 0);
            api.cuMemSetAccess(moved, new_size, &access, 1);
            api.cuStreamSynchronize(stream);
            for (const Piece& piece : pieces) api.cuMemUnmap(base + piece.offset, piece.size);
            for (const Range& range : reserved) api.cuMemAddressFree(range.address, range.size);
            base = moved;
            reserved = {{moved, new_size}};
            ++remapped;
        }
        pieces.push_back({mapped, extra, handle});
        mapped = new_size;
    }
    void release() {
        for (const Piece& piece : pieces) api.cuMemUnmap(base + piece.offset, piece.size);
        for (const Piece& piece : pieces) api.cuMemRelease(piece.handle);
        for (const Range& range : reserved) api.cuMemAddressFree(range.address, range.size);
        pieces.clear();
        reserved.clear();
    }
};

void raw_vmm_grow(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    RawVmm vmm(device);
    for (auto _ : state) {
        vmm.allocate(2 * MiB);
        for (std::size_t size = 4 * MiB; size <= 64 * MiB; size *= 2) vmm.grow(size, stream.handle());
        benchmark::DoNotOptimize(vmm.base);
        vmm.release();
    }
    state.counters["in_place"] = static_cast<double>(vmm.in_place);
    state.counters["remapped"] = static_cast<double>(vmm.remapped);
}

void cudacore_vmm_grow(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    auto vmm = std::make_shared<VirtualMemoryResource>(device);
    Stream stream = device.create_stream();
    std::size_t in_place = 0, remapped = 0;  // a grow in place keeps the address
    for (auto _ : state) {
        Buffer buffer = vmm->allocate(2 * MiB, stream);
        for (int i = 0; i < 5; ++i) {
            const CUdeviceptr address = buffer.handle();
            buffer = vmm->grow(buffer, buffer.size() * 2, stream);
            ++(buffer.handle() == address ? in_place : remapped);
        }
        benchmark::DoNotOptimize(buffer.handle());
    }
    state.counters["in_place"] = static_cast<double>(in_place);
    state.counters["remapped"] = static_cast<double>(remapped);
}

// ---- batched copies -----------------------------------------------------------------------

struct SmallCopies {
    Device device{0};
    Stream stream = device.create_stream();
    std::vector<Buffer> sources, targets;
    std::vector<CopyPair> copies;
    std::vector<CUdeviceptr> source_pointers, target_pointers;
    std::vector<std::size_t> sizes;
    SmallCopies() {
        device.set_current();
        for (std::size_t i = 0; i < small_copies; ++i) {
            sources.push_back(device.allocate(small_bytes, stream));
            targets.push_back(device.allocate(small_bytes, stream));
            copies.push_back({targets.back(), sources.back()});
            source_pointers.push_back(sources.back().handle());
            target_pointers.push_back(targets.back().handle());
            sizes.push_back(small_bytes);
        }
        stream.sync();
    }
};

void raw_copy_loop(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    SmallCopies c;
    const auto& api = detail::driver();
    for (auto _ : state) {
        for (std::size_t i = 0; i < small_copies; ++i)
            api.cuMemcpyAsync(c.target_pointers[i], c.source_pointers[i], small_bytes, c.stream.handle());
        api.cuStreamSynchronize(c.stream.handle());
    }
}

void raw_copy_batch(benchmark::State& state, bool prefer_overlap) {
    if (skip_without_gpu(state)) return;
    SmallCopies c;
    const auto& api = detail::driver();
    CUmemcpyAttributes attributes{};
    attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    if (prefer_overlap) attributes.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
    std::size_t first = 0;
    for (auto _ : state) {
        api.cuMemcpyBatchAsync(c.target_pointers.data(), c.source_pointers.data(), c.sizes.data(),
                               small_copies, &attributes, &first, 1, c.stream.handle());
        api.cuStreamSynchronize(c.stream.handle());
    }
}

void cudacore_copy_batch(benchmark::State& state, bool copy_engines) {
    if (skip_without_gpu(state)) return;
    SmallCopies c;
    const BatchedCopyOptions options{.prefer_overlap_with_compute = copy_engines};
    for (auto _ : state) {
        copy_batch(c.copies, c.stream, options);
        c.stream.sync();
    }
}

// ---- pools and the synchronous resource ---------------------------------------------------

// Stream-ordered allocate + free in timed batches of pool_batch, the stream drained between
// batches (untimed) as a program's would be: left undrained for a whole benchmark, hundreds of
// thousands of frees pile up in the stream and the driver's cost per call drifts with the pile.
// The time reported is a batch's (an iteration is a batch). cudacore frees each buffer with
// close(stream), as the side-by-side's allocate + free does; the "drop" row lets each buffer go
// instead, which first asks the driver whether someone reset the device (one cuCtxGetId).
constexpr int pool_batch = 32;

void set_batch_time(benchmark::State& state, std::chrono::steady_clock::time_point start) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(elapsed.count());
}

void raw_pool_alloc_free(benchmark::State& state, bool host) {
    if (skip_without_gpu(state)) return;
    const auto& api = detail::driver();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = host ? 0 : device.handle();
    CUmemoryPool pool = nullptr;
    if (api.cuMemPoolCreate(&pool, &props) != CUDA_SUCCESS) {
        state.SkipWithError("cuMemPoolCreate failed");
        return;
    }
    cuuint64_t keep_all = UINT64_MAX;  // as on the cudacore side: no memory returned at a sync
    api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all);
    if (host) {
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device.handle();
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        api.cuMemPoolSetAccess(pool, &access, 1);
    }
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < pool_batch; ++i) {
            CUdeviceptr pointer = 0;
            api.cuMemAllocFromPoolAsync(&pointer, MiB, pool, stream.handle());
            benchmark::DoNotOptimize(pointer);
            api.cuMemFreeAsync(pointer, stream.handle());
        }
        set_batch_time(state, start);
        stream.sync();
    }
    api.cuMemPoolDestroy(pool);
}

void cudacore_pool_alloc_free(benchmark::State& state, bool host, bool close) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    std::shared_ptr<MemoryResource> resource;
    // Both sides keep freed memory in the pool across the syncs between batches (release
    // threshold raised), so that a batch times the pool, not the driver reserving memory again.
    if (host) {
        auto pinned = std::make_shared<PinnedMemoryPoolResource>(device);
        pinned->memory_pool().set_release_threshold(UINT64_MAX);
        resource = pinned;
    } else {
        auto owned = DeviceMemoryResource::create_owned_pool(device);
        owned->set_release_threshold(UINT64_MAX);
        resource = owned;
    }
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < pool_batch; ++i) {
            Buffer buffer = resource->allocate(MiB, stream);
            benchmark::DoNotOptimize(buffer.handle());
            if (close) buffer.close(stream);
        }
        set_batch_time(state, start);
        stream.sync();
    }
}

void raw_sync_alloc_free(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const auto& api = detail::driver();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    for (auto _ : state) {
        CUdeviceptr pointer = 0;
        api.cuMemAlloc(&pointer, MiB);
        benchmark::DoNotOptimize(pointer);
        api.cuStreamSynchronize(stream.handle());  // what freeing a stream's buffer waits for
        api.cuMemFree(pointer);
    }
}

void cudacore_sync_alloc_free(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    auto resource = std::make_shared<SynchronousMemoryResource>(device);
    for (auto _ : state) {
        Buffer buffer = resource->allocate(MiB, stream);
        benchmark::DoNotOptimize(buffer.handle());
    }
}

// ---- buffer operations, managed controls, registration --------------------------------------

void raw_fill16(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    Buffer buffer = device.allocate(4096, stream);
    const auto& api = detail::driver();
    for (auto _ : state) api.cuMemsetD16Async(buffer.handle(), 0x1234, 2048, stream.handle());
    stream.sync();
}

void cudacore_fill16(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    Buffer buffer = device.allocate(4096, stream);
    for (auto _ : state) buffer.fill_uint16(0x1234, stream);
    stream.sync();
}

struct ManagedSet {
    Device device{0};
    Stream stream = device.create_stream();
    std::shared_ptr<ManagedMemoryResource> managed = std::make_shared<ManagedMemoryResource>(device);
    std::vector<Buffer> buffers;
    std::vector<CUdeviceptr> pointers;
    std::vector<std::size_t> sizes;
    ManagedSet() {
        device.set_current();
        for (int i = 0; i < 8; ++i) {
            buffers.push_back(managed->allocate(MiB, stream));
            pointers.push_back(buffers.back().handle());
            sizes.push_back(MiB);
        }
    }
};

void raw_advise(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    ManagedSet m;
    const auto& api = detail::driver();
    CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    for (auto _ : state)
        api.cuMemAdvise(m.pointers[0], MiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, device);
}

void cudacore_advise(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    ManagedSet m;
    for (auto _ : state)
        advise(m.buffers[0], ManagedAdvice::set_preferred_location, MemoryLocation::device(0));
}

// Alternates device and host so every prefetch moves pages.
void raw_prefetch_batch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    ManagedSet m;
    const auto& api = detail::driver();
    CUmemLocation locations[2] = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
    std::size_t first = 0;
    int turn = 0;
    for (auto _ : state) {
        api.cuMemPrefetchBatchAsync(m.pointers.data(), m.sizes.data(), m.pointers.size(),
                                    &locations[turn ^= 1], &first, 1, 0, m.stream.handle());
        api.cuStreamSynchronize(m.stream.handle());
    }
}

void cudacore_prefetch_batch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    ManagedSet m;
    const MemoryLocation locations[2] = {MemoryLocation::device(0), MemoryLocation::host()};
    int turn = 0;
    for (auto _ : state) {
        prefetch_batch(m.buffers, locations[turn ^= 1], m.stream);
        m.stream.sync();
    }
}

void raw_register(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    std::vector<char> host(MiB);
    const auto& api = detail::driver();
    for (auto _ : state) {
        api.cuMemHostRegister(host.data(), host.size(),
                              CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
        api.cuStreamSynchronize(nullptr);  // what unregistering a buffer waits for
        api.cuMemHostUnregister(host.data());
    }
}

void cudacore_register(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    std::vector<char> host(MiB);
    for (auto _ : state) {
        Buffer buffer = register_host_memory(host.data(), host.size(), device);
        benchmark::DoNotOptimize(buffer.handle());
    }
}

void raw_pool_attribute(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    auto resource = DeviceMemoryResource::create_owned_pool(device);
    const auto& api = detail::driver();
    for (auto _ : state) {
        cuuint64_t value = 0;
        api.cuMemPoolGetAttribute(resource->pool(), CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &value);
        benchmark::DoNotOptimize(value);
    }
}

void cudacore_pool_attribute(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    auto resource = DeviceMemoryResource::create_owned_pool(device);
    MemoryPool pool = resource->memory_pool();
    for (auto _ : state) benchmark::DoNotOptimize(pool.used_mem_current());
}

// Each pair in alternating rounds (bench::alternate): these operations drift over a run (pools
// growing, clocks) by more than the overheads measured.
using bench::alternate;
// The pool rows drift most from round to round on a busy host (a round's mean moves by 2x): twice
// the rounds, for steadier medians.
constexpr int pool_rounds = 31;
const int registered[] = {
    alternate("vmm_grow_2MiB_to_64MiB", raw_vmm_grow, cudacore_vmm_grow, true),
    alternate("copy_1000x256B", raw_copy_loop, [](auto& s) { cudacore_copy_batch(s, false); }, true),
    alternate("memcpy_batch_1000x256B", [](auto& s) { raw_copy_batch(s, false); },
              [](auto& s) { cudacore_copy_batch(s, false); }, true),
    alternate("memcpy_batch_engines_1000x256B", [](auto& s) { raw_copy_batch(s, true); },
              [](auto& s) { cudacore_copy_batch(s, true); }, true),
    alternate("owned_pool_alloc_free_1MiB", [](auto& s) { raw_pool_alloc_free(s, false); },
              [](auto& s) { cudacore_pool_alloc_free(s, false, true); }, bench::Clock::manual,
              pool_rounds),
    alternate("owned_pool_alloc_drop_1MiB", [](auto& s) { raw_pool_alloc_free(s, false); },
              [](auto& s) { cudacore_pool_alloc_free(s, false, false); }, bench::Clock::manual,
              pool_rounds),
    alternate("pinned_pool_alloc_free_1MiB", [](auto& s) { raw_pool_alloc_free(s, true); },
              [](auto& s) { cudacore_pool_alloc_free(s, true, true); }, bench::Clock::manual,
              pool_rounds),
    alternate("synchronous_alloc_free_1MiB", raw_sync_alloc_free, cudacore_sync_alloc_free, true),
    alternate("fill_uint16_4KiB", raw_fill16, cudacore_fill16, false),
    alternate("advise_preferred_location", raw_advise, cudacore_advise, false),
    alternate("prefetch_batch_8x1MiB", raw_prefetch_batch, cudacore_prefetch_batch, true),
    alternate("register_host_1MiB", raw_register, cudacore_register, true),
    alternate("pool_attribute_read", raw_pool_attribute, cudacore_pool_attribute, false),
};

}  // namespace

CUDACORE_BENCH_MAIN()
