// CachingMemoryResource: size classes, one arena per thread (a mutex that only its thread
// takes on the hot path), a shared arena under a mutex, and events for reuse across streams.
#include "cudacore/caching_memory_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"
#include "memory/make_resource.hpp"
#include "memory/caching_stream_ops.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/cudacore_trace.hpp"
#include "support/tls_address.hpp"
#include "support/thread_exit.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

namespace cudacore {

namespace detail {

namespace {

// Size classes: multiples of 256 bytes up to 1 KiB, then four per power of two, so a block is at
// most a quarter larger than its request.
constexpr std::size_t kLargestCachable = std::size_t{1} << 40;

std::size_t class_size(std::size_t size) noexcept {
    if (size <= 1024) return size <= 256 ? 256 : (size + 255) & ~std::size_t{255};
    const int power = std::bit_width(size - 1) - 1;  // 2^power < size <= 2^(power + 1)
    const std::size_t step = std::size_t{1} << (power - 2);
    return (size + step - 1) & ~(step - 1);
}

// The bin of a class size: 0..3 up to 1 KiB, then four per power of two.
int class_index(std::size_t rounded) noexcept {
    if (rounded <= 1024) return static_cast<int>(rounded / 256) - 1;
    const int power = std::bit_width(rounded - 1) - 1;
    return 4 + (power - 10) * 4 + static_cast<int>(rounded >> (power - 2)) - 5;
}

}  // namespace

// The arena types CachingCore holds, outside the anonymous namespace as CachingCore is
// (owning_handle.hpp declares it): a type with linkage whose fields have none is an error-prone
// mix, which GCC reports where this file is compiled inside another (a unity build).
struct CachedBlock {
    CUdeviceptr pointer = 0;
    CUstream stream = nullptr;  // the stream it was freed on
    CUevent event = nullptr;    // recorded on `stream` at the free; null in a thread's arena
};

// Free blocks by size class and the counters of one arena.
struct Bins {
    std::vector<std::vector<CachedBlock>> by_class;
    std::uint64_t cached = 0;
    std::int64_t in_use = 0;  // may go below 0 in one arena: blocks are freed by other threads
    std::uint64_t hits = 0, misses = 0, oversized = 0, upstream_frees = 0;

    explicit Bins(int classes) : by_class(static_cast<std::size_t>(classes)) {}
    void add_counters_to(CachingMemoryStatistics& out) const {
        out.bytes_cached += cached;
        out.bytes_in_use += static_cast<std::uint64_t>(in_use);  // summed modulo 2^64
        out.hits += hits;
        out.misses += misses;
        out.oversized += oversized;
        out.upstream_frees += upstream_frees;
    }
};

// One thread's arena: on a line of its own; its lock is taken by other threads only in release()
// and statistics().
struct alignas(64) ThreadArena {
    std::mutex lock;
    Bins bins;
    explicit ThreadArena(int classes) : bins(classes) {}
};

namespace {

std::atomic<std::uint64_t> next_core_id{1};

}  // namespace

// Everything the resource's arenas share. Owned by the resource, and for a moment by a thread
// handing its arena over at exit (so it may be destroyed there).
struct CachingCore {
    std::shared_ptr<MemoryResource> upstream;
    CachingMemoryResourceOptions options;
    std::shared_ptr<CachingStreamOps> ops;
    const std::uint64_t id = next_core_id.fetch_add(1, std::memory_order_relaxed);
    const int classes;

    std::mutex registry_mutex;
    std::vector<std::shared_ptr<ThreadArena>> arenas;  // of live threads

    alignas(64) std::mutex shared_mutex;
    Bins shared;          // blocks with an event (or from finished threads), by class
    Bins retired_counts;  // counters of finished threads' arenas (no blocks)

    alignas(64) std::atomic<std::uint64_t> reserved{0};
    std::atomic<std::uint64_t> peak_reserved{0};
    std::atomic<std::uint64_t> releases{0};

    CachingCore(std::shared_ptr<MemoryResource> upstream_resource,
                const CachingMemoryResourceOptions& chosen,
                std::shared_ptr<CachingStreamOps> stream_ops)
        : upstream(std::move(upstream_resource)),
          options(chosen),
          ops(std::move(stream_ops)),
          classes(class_index(class_size(chosen.max_block_size)) + 1),
          shared(classes),
          retired_counts(0) {}

    ~CachingCore() {
        try {
            release();
        } catch (...) {
            // Ignored: the driver may be shut down at exit; a destructor never throws.
        }
    }

    std::shared_ptr<ThreadArena> new_arena() {
        auto arena = std::make_shared<ThreadArena>(classes);
        std::lock_guard lock(registry_mutex);
        arenas.push_back(arena);
        return arena;
    }

    // A finished thread's arena: its blocks go to the shared arena (without events, so only for
    // their own stream, or after release()), its counters to retired_counts.
    void retire(ThreadArena& arena) noexcept {
        {
            std::lock_guard arena_lock(arena.lock);  // always before shared_mutex
            std::lock_guard lock(shared_mutex);
            for (std::size_t c = 0; c < arena.bins.by_class.size(); ++c) {
                auto& from = arena.bins.by_class[c];
                auto& to = shared.by_class[c];
                to.insert(to.end(), from.begin(), from.end());
                from.clear();
            }
            shared.cached += arena.bins.cached;
            arena.bins.cached = 0;
            retired_counts.in_use += arena.bins.in_use;
            retired_counts.hits += arena.bins.hits;
            retired_counts.misses += arena.bins.misses;
            retired_counts.oversized += arena.bins.oversized;
            retired_counts.upstream_frees += arena.bins.upstream_frees;
            arena.bins = Bins(0);
        }
        {
            std::lock_guard lock(registry_mutex);
            std::erase_if(arenas, [&](const auto& each) { return each.get() == &arena; });
        }
        // Beyond the shared bound now: the oldest blocks go back, after waiting for the device
        // (their streams may be gone, so no event can be recorded for them any more).
        try {
            std::vector<Taken> excess;
            {
                std::lock_guard lock(shared_mutex);
                for (std::size_t c = 0; c < shared.by_class.size(); ++c) {
                    auto& bin = shared.by_class[c];
                    std::size_t n = 0;
                    while (shared.cached > options.max_cached_bytes && n < bin.size()) {
                        excess.push_back({bin[n], block_size_of(c)});
                        shared.cached -= block_size_of(c);
                        ++n;
                    }
                    bin.erase(bin.begin(), bin.begin() + static_cast<std::ptrdiff_t>(n));
                }
            }
            give_back(excess);
        } catch (...) {
            // Kept (give_back puts them back when it cannot wait): a thread's exit never throws.
        }
    }

    // A free block of class `index` usable on `stream`, or 0.
    CUdeviceptr take_shared(int index, CUstream stream, std::size_t rounded) {
        std::lock_guard lock(shared_mutex);
        auto& bin = shared.by_class[static_cast<std::size_t>(index)];
        // Oldest first: the likeliest to be done. A few events asked at most per allocation.
        int asked = 0;
        for (std::size_t i = 0; i < bin.size(); ++i) {
            CachedBlock& block = bin[i];
            const bool same_stream = block.stream == stream && stream != CU_STREAM_PER_THREAD;
            if (!same_stream) {
                if (!block.event || asked >= 4) continue;
                ++asked;
                if (!ops->done(block.event)) continue;
            }
            const CachedBlock taken = block;
            bin.erase(bin.begin() + static_cast<std::ptrdiff_t>(i));
            shared.cached -= rounded;
            if (taken.event) ops->recycle(taken.event);
            return taken.pointer;
        }
        return 0;
    }

    // Keeps `block` in the shared arena when there is room; false otherwise.
    bool keep_shared(int index, const CachedBlock& block, std::size_t rounded) {
        std::lock_guard lock(shared_mutex);
        if (shared.cached + rounded > options.max_cached_bytes) return false;
        shared.by_class[static_cast<std::size_t>(index)].push_back(block);
        shared.cached += rounded;
        return true;
    }
    bool shared_has_room(std::size_t rounded) {
        std::lock_guard lock(shared_mutex);
        return shared.cached + rounded <= options.max_cached_bytes;
    }

    CUdeviceptr allocate_upstream(std::size_t size, CUstream stream) {
        // The cache grows: `size` more bytes taken from the upstream resource.
        const detail::CudacoreRange range(tracing::CudacoreCategory::memory, "pool grow", size);
        CUdeviceptr pointer = 0;
        try {
            pointer = upstream->allocate_pointer(size, stream);
        } catch (const DriverError& e) {
            if (e.status() != CUDA_ERROR_OUT_OF_MEMORY) throw;
            release();  // what the cache holds may be what the upstream lacks
            pointer = upstream->allocate_pointer(size, stream);
        }
        const std::uint64_t now = reserved.fetch_add(size, std::memory_order_relaxed) + size;
        std::uint64_t peak = peak_reserved.load(std::memory_order_relaxed);
        while (now > peak && !peak_reserved.compare_exchange_weak(peak, now,
                                                                  std::memory_order_relaxed)) {
        }
        return pointer;
    }

    void free_upstream(CUdeviceptr pointer, std::size_t size, CUstream stream) {
        upstream->deallocate_pointer(pointer, size, stream);
        reserved.fetch_sub(size, std::memory_order_relaxed);
    }

    struct Taken {
        CachedBlock block;
        std::size_t size;
    };

    void release() {
        std::vector<Taken> taken;
        auto take_all = [&](Bins& bins) {
            for (std::size_t c = 0; c < bins.by_class.size(); ++c) {
                for (const CachedBlock& block : bins.by_class[c])
                    taken.push_back({block, block_size_of(c)});
                bins.by_class[c].clear();
            }
            bins.cached = 0;
        };
        {
            std::vector<std::shared_ptr<ThreadArena>> all;
            {
                std::lock_guard lock(registry_mutex);
                all = arenas;
            }
            for (const auto& arena : all) {
                std::lock_guard lock(arena->lock);
                take_all(arena->bins);
            }
            std::lock_guard lock(shared_mutex);
            take_all(shared);
        }
        releases.fetch_add(1, std::memory_order_relaxed);
        give_back(taken);
    }

    // Frees blocks taken out of the arenas, once the device is done with them.
    void give_back(const std::vector<Taken>& taken) {
        if (taken.empty()) return;
        try {
            // The blocks' last users may run on streams destroyed since: wait for everything.
            ops->synchronize();
        } catch (...) {
            // Not freed: back to the shared arena as they were (events kept).
            std::lock_guard lock(shared_mutex);
            for (const Taken& each : taken) {
                shared.by_class[static_cast<std::size_t>(class_index(each.size))].push_back(
                    each.block);
                shared.cached += each.size;
            }
            throw;
        }
        std::exception_ptr first_error;
        std::uint64_t freed = 0;
        for (const Taken& each : taken) {
            if (each.block.event) ops->recycle(each.block.event);
            try {
                // The device is idle as far as these blocks go: the default stream will do.
                free_upstream(each.block.pointer, each.size, nullptr);
                ++freed;
            } catch (...) {
                if (!first_error) first_error = std::current_exception();
            }
        }
        {
            std::lock_guard lock(shared_mutex);
            shared.upstream_frees += freed;
        }
        if (first_error) std::rethrow_exception(first_error);
    }

    // The class size of bin `index`.
    static std::size_t block_size_of(std::size_t index) noexcept {
        if (index < 4) return (index + 1) * 256;
        const std::size_t power = 10 + (index - 4) / 4;
        return (std::size_t{1} << power) + ((index - 4) % 4 + 1) * (std::size_t{1} << (power - 2));
    }
};

namespace {

// The calling thread's arenas, one per resource it used (by the core's id, never reused). Owned
// through a trivially destructible pointer, so that a buffer freed during or after thread exit
// (the exit handler frees buffers still alive) finds no arena instead of a destroyed one.
struct ThreadArenaEntry {
    std::uint64_t id;
    std::weak_ptr<CachingCore> core;
    std::shared_ptr<ThreadArena> arena;
};
struct ThreadArenas {
    std::vector<ThreadArenaEntry> entries;
};
struct ThreadArenasSlot {
    ThreadArenas* arenas = nullptr;
    std::uint8_t state = kSlotUnused;  // a ThreadSlot
};
thread_local ThreadArenasSlot thread_arenas;

// Hands the thread's arenas over to their resources at thread exit.
void retire_thread_arenas(void* slot) noexcept {
    auto& arenas_slot = *static_cast<ThreadArenasSlot*>(slot);
    ThreadArenas* arenas = arenas_slot.arenas;
    arenas_slot = {nullptr, kSlotExiting};
    if (!arenas) return;
    for (ThreadArenaEntry& entry : arenas->entries)
        if (auto core = entry.core.lock()) core->retire(*entry.arena);
    delete arenas;
}

}  // namespace

// The calling thread's arena of `core`, made on first use; null once the thread is exiting.
ThreadArena* thread_arena_of(const std::shared_ptr<CachingCore>& core) {
    ThreadArenasSlot& slot = tls_address(thread_arenas);
    if (slot.state == kSlotLive) [[likely]] {
        for (ThreadArenaEntry& entry : slot.arenas->entries)
            if (entry.id == core->id) [[likely]] return entry.arena.get();
    } else if (slot.state == kSlotExiting) {
        return nullptr;
    } else {
        slot.arenas = new ThreadArenas;
        if (register_thread_slot(slot, retire_thread_arenas) != kSlotLive) {
            delete std::exchange(slot.arenas, nullptr);
            return nullptr;
        }
    }
    // Entries of resources destroyed since are dropped here, off the hot path.
    std::erase_if(slot.arenas->entries, [](const auto& entry) { return entry.core.expired(); });
    slot.arenas->entries.push_back({core->id, core, core->new_arena()});
    return slot.arenas->entries.back().arena.get();
}

namespace {

class DriverStreamOps final : public CachingStreamOps {
public:
    explicit DriverStreamOps(int ordinal) : ordinal_(ordinal) {}
    ~DriverStreamOps() override {
        if (!context_) return;  // never used: no event made
        const DriverApi* api = driver_for_release(*context_);
        if (!api) return;  // gone with the context
        for (CUevent event : free_) api->cuEventDestroy(event);
    }

    CUevent record(CUstream stream) override {
        CUevent event = nullptr;
        {
            std::lock_guard lock(lock_);
            if (!free_.empty()) {
                event = free_.back();
                free_.pop_back();
            }
        }
        const DriverApi& api = driver();
        const ContextBox& context = this->context();
        if (!event) {
            ContextScope scope(context);
            check(api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate",
                  "event of a caching memory resource");
        }
        CUresult status;
        if (is_default_stream(stream)) {
            ContextScope scope(context);
            status = api.cuEventRecord(event, stream);
        } else {
            status = api.cuEventRecord(event, stream);
        }
        if (status != CUDA_SUCCESS) {
            recycle(event);
            throw_driver_error(status, "cuEventRecord",
                               "event of a block freed to a caching memory resource");
        }
        return event;
    }

    bool done(CUevent event) override {
        const CUresult status = driver().cuEventQuery(event);
        if (status == CUDA_ERROR_NOT_READY) return false;
        check(status, "cuEventQuery", "event of a block cached by a caching memory resource");
        return true;
    }

    void recycle(CUevent event) noexcept override {
        try {
            std::lock_guard lock(lock_);
            free_.push_back(event);
        } catch (...) {
            if (const DriverApi* api = driver_if_loaded()) api->cuEventDestroy(event);
        }
    }

    void synchronize() override {
        ContextScope scope(context());
        check(driver().cuCtxSynchronize(), "cuCtxSynchronize",
              "device " + std::to_string(ordinal_) +
                  " (before a caching memory resource gives its blocks back)");
    }

private:
    // The primary context, retained at the first use (a resource over host memory may never
    // need one).
    const ContextBox& context() {
        std::call_once(context_once_, [&] { context_ = primary_context(ordinal_); });
        return *context_;
    }

    int ordinal_;
    std::once_flag context_once_;
    std::shared_ptr<ContextBox> context_;
    std::mutex lock_;
    std::vector<CUevent> free_;
};

}  // namespace

std::shared_ptr<CachingStreamOps> driver_caching_stream_ops(int ordinal) {
    return std::make_shared<DriverStreamOps>(ordinal);
}

}  // namespace detail

namespace {
std::shared_ptr<MemoryResource> checked_upstream(std::shared_ptr<MemoryResource> upstream,
                                                 const CachingMemoryResourceOptions& options) {
    if (!upstream)
        throw InvalidArgumentError("CachingMemoryResource: no upstream memory resource (null)");
    if (options.max_block_size == 0 || options.max_block_size > detail::kLargestCachable)
        throw InvalidArgumentError("CachingMemoryResource over " + upstream->description() +
                                   ": max_block_size " + std::to_string(options.max_block_size) +
                                   " bytes is not within 1 byte to 2^40 bytes");
    return upstream;
}
}  // namespace

CachingMemoryResource::CachingMemoryResource(std::shared_ptr<MemoryResource> upstream,
                                             const CachingMemoryResourceOptions& options)
    : upstream_(checked_upstream(std::move(upstream), options)),
      options_(options),
      core_(std::make_shared<detail::CachingCore>(upstream_, options_,
                                                  detail::caching_stream_ops_for(upstream_->device_ordinal()))) {}

namespace detail {
namespace {
// The tests' seam: set on this thread while a ScopedCachingStreamOps lives.
thread_local std::shared_ptr<CachingStreamOps> scoped_stream_ops;
}  // namespace

std::shared_ptr<CachingStreamOps> caching_stream_ops_for(int ordinal) {
    if (scoped_stream_ops) return scoped_stream_ops;
    return driver_caching_stream_ops(std::max(ordinal, 0));
}

ScopedCachingStreamOps::ScopedCachingStreamOps(std::shared_ptr<CachingStreamOps> ops)
    : previous_(std::exchange(scoped_stream_ops, std::move(ops))) {}

ScopedCachingStreamOps::~ScopedCachingStreamOps() { scoped_stream_ops = std::move(previous_); }

}  // namespace detail

std::shared_ptr<CachingMemoryResource> CachingMemoryResource::create(
    const Device& device, const CachingMemoryResourceOptions& options) {
    return detail::make_resource<CachingMemoryResource>(detail::make_resource<DeviceMemoryResource>(device),
                                                   options);
}

CachingMemoryResource::~CachingMemoryResource() = default;  // the core gives the blocks back

void CachingMemoryResource::do_close() { release(); }

void CachingMemoryResource::release() { core_->release(); }

CachingMemoryStatistics CachingMemoryResource::statistics() const {
    CachingMemoryStatistics out;
    std::vector<std::shared_ptr<detail::ThreadArena>> all;
    {
        std::lock_guard lock(core_->registry_mutex);
        all = core_->arenas;
    }
    for (const auto& arena : all) {
        std::lock_guard lock(arena->lock);
        arena->bins.add_counters_to(out);
    }
    {
        std::lock_guard lock(core_->shared_mutex);
        core_->shared.add_counters_to(out);
        core_->retired_counts.add_counters_to(out);
    }
    out.bytes_reserved = core_->reserved.load(std::memory_order_relaxed);
    out.peak_bytes_reserved = core_->peak_reserved.load(std::memory_order_relaxed);
    out.releases = core_->releases.load(std::memory_order_relaxed);
    return out;
}

std::size_t CachingMemoryResource::block_size(std::size_t size) const noexcept {
    return size > options_.max_block_size || size == 0 ? size : detail::class_size(size);
}

bool CachingMemoryResource::is_device_accessible() const noexcept {
    return upstream_->is_device_accessible();
}
bool CachingMemoryResource::is_host_accessible() const noexcept {
    return upstream_->is_host_accessible();
}
bool CachingMemoryResource::is_managed() const noexcept { return upstream_->is_managed(); }
int CachingMemoryResource::device_ordinal() const noexcept { return upstream_->device_ordinal(); }

std::string CachingMemoryResource::description() const {
    return "caching resource over " + upstream_->description();
}

CUdeviceptr CachingMemoryResource::do_allocate(std::size_t size, CUstream stream) {
    detail::CachingCore& core = *core_;
    detail::ThreadArena* arena = detail::thread_arena_of(core_);
    if (size > options_.max_block_size) [[unlikely]] {
        const CUdeviceptr pointer = core.allocate_upstream(size, stream);
        if (arena) {
            std::lock_guard lock(arena->lock);
            arena->bins.in_use += static_cast<std::int64_t>(size);
            ++arena->bins.misses;
            ++arena->bins.oversized;
        } else {
            std::lock_guard lock(core.shared_mutex);
            core.shared.in_use += static_cast<std::int64_t>(size);
            ++core.shared.misses;
            ++core.shared.oversized;
        }
        return pointer;
    }
    const std::size_t rounded = detail::class_size(size);
    const int index = detail::class_index(rounded);
    if (arena) {
        std::lock_guard lock(arena->lock);
        auto& bin = arena->bins.by_class[static_cast<std::size_t>(index)];
        // Newest first: blocks of this thread's own stream, reusable at once in stream order.
        for (std::size_t i = bin.size(); i-- > 0;) {
            if (bin[i].stream != stream) continue;
            const CUdeviceptr pointer = bin[i].pointer;
            bin.erase(bin.begin() + static_cast<std::ptrdiff_t>(i));
            arena->bins.cached -= rounded;
            arena->bins.in_use += static_cast<std::int64_t>(rounded);
            ++arena->bins.hits;
            return pointer;
        }
    }
    CUdeviceptr pointer = core.take_shared(index, stream, rounded);
    const bool hit = pointer != 0;
    if (!hit) pointer = core.allocate_upstream(rounded, stream);
    if (arena) {
        std::lock_guard lock(arena->lock);
        arena->bins.in_use += static_cast<std::int64_t>(rounded);
        ++(hit ? arena->bins.hits : arena->bins.misses);
    } else {
        std::lock_guard lock(core.shared_mutex);
        core.shared.in_use += static_cast<std::int64_t>(rounded);
        ++(hit ? core.shared.hits : core.shared.misses);
    }
    return pointer;
}

void CachingMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) {
    detail::CachingCore& core = *core_;
    detail::ThreadArena* arena = detail::thread_arena_of(core_);
    const bool cachable = size <= options_.max_block_size;
    const std::size_t rounded = cachable ? detail::class_size(size) : size;
    const int index = cachable ? detail::class_index(rounded) : -1;
    if (arena) {
        std::lock_guard lock(arena->lock);
        arena->bins.in_use -= static_cast<std::int64_t>(rounded);
        if (cachable && arena->bins.cached + rounded <= options_.max_thread_cached_bytes)
            [[likely]] {
            arena->bins.by_class[static_cast<std::size_t>(index)].push_back({pointer, stream});
            arena->bins.cached += rounded;
            return;
        }
    } else {
        std::lock_guard lock(core.shared_mutex);
        core.shared.in_use -= static_cast<std::int64_t>(rounded);
    }
    // The shared arena, with an event that tells other streams when the block is free: recorded
    // now, while `stream` certainly exists.
    if (cachable && core.shared_has_room(rounded)) {
        CUevent event = nullptr;
        try {
            event = core.ops->record(stream);
        } catch (const Error&) {
            event = nullptr;  // not cached then: given back below, in stream order
        }
        if (event) {
            if (core.keep_shared(index, {pointer, stream, event}, rounded)) return;
            core.ops->recycle(event);
        }
    }
    core.free_upstream(pointer, rounded, stream);
    if (arena) {
        std::lock_guard lock(arena->lock);
        ++arena->bins.upstream_frees;
    } else {
        std::lock_guard lock(core.shared_mutex);
        ++core.shared.upstream_frees;
    }
}

}  // namespace cudacore
