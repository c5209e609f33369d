#include "cudacore/context.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/release/reset_tolerance.hpp"
#include "runtime/context_holders.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "support/thread_exit.hpp"
#include "support/tls_address.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

namespace cudacore {
namespace detail {

ContextBox::~ContextBox() {
    if (!retained) return;
    if (const DriverApi* api = driver_if_loaded()) {
        // Kept events went with the context if someone reset the device.
        const bool alive = context_survives(*this, *api);
        recycled_events.drain([&](CUevent event) {
            if (alive) {
                check_release(api->cuEventDestroy(event), "cuEventDestroy",
                              [&] { return "kept event on device " + std::to_string(ordinal); });
            }
        });
        check_release(api->cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease",
                      [&] { return "primary context of device " + std::to_string(ordinal); });
    }
}

namespace {
// Each primary context cudacore retained is kept (a strong reference) until the process exits,
// as the CUDA runtime keeps its own: its last release destroys the context, and the driver's
// host-function thread crashed when that happened on another thread while it was still
// finishing one of cudacore's host functions there (deferred_release.cpp), a moment nobody can
// observe. The driver destroys it at exit. Only a context someone reset is let go (forgotten).
struct ContextRegistry {
    std::mutex mutex;
    std::vector<std::shared_ptr<ContextBox>> by_ordinal;
};
// Leaked on purpose: objects destroyed after main returns may still look it up.
ContextRegistry& registry() {
    static auto* instance = new ContextRegistry;
    return *instance;
}
}  // namespace

// Bumped by forget_primary_context so per-thread caches drop a forgotten box.
constinit std::atomic<std::uint64_t> primary_context_generation_counter{0};

namespace {

// The calling thread's last lookup: keeps the common case off the registry's mutex. Holds only
// a weak reference, so it never keeps a context retained. Trivially destructible, so no
// per-access initialisation check (and the default TLS model: the library loads with dlopen); the weak
// reference lives in raw storage, built on first use and destroyed at thread exit by an owner
// object that only the first use touches.
struct ThreadCache {
    int ordinal = -1;
    std::uint64_t generation = 0;
    std::uint8_t state = kSlotUnused;  // a ThreadSlot: live once `weak()` is built
    alignas(std::weak_ptr<ContextBox>) unsigned char storage[sizeof(std::weak_ptr<ContextBox>)];
    std::weak_ptr<ContextBox>& weak() {
        return *std::launder(reinterpret_cast<std::weak_ptr<ContextBox>*>(storage));
    }
};
thread_local ThreadCache thread_cache;

void destroy_thread_cache(void* slot) noexcept {
    auto& cache = *static_cast<ThreadCache*>(slot);
    if (cache.state == kSlotLive) cache.weak().~weak_ptr();
    cache.state = kSlotExiting;
}

// Builds the cache's weak reference (once per thread); false once the thread is exiting.
bool thread_cache_usable(ThreadCache& cache) {
    if (cache.state == kSlotLive) [[likely]] return true;
    if (cache.state == kSlotExiting) return false;
    // Built before it is registered: the cleanup may run (thread exit) as soon as it is.
    new (cache.storage) std::weak_ptr<ContextBox>();
    if (register_thread_slot(cache, destroy_thread_cache) == kSlotLive) return true;
    cache.weak().~weak_ptr();
    return false;
}

std::shared_ptr<ContextBox> lookup_or_retain(int ordinal) {
    const DriverApi& api = driver();
    ContextRegistry& reg = registry();
    std::lock_guard lock(reg.mutex);
    if (reg.by_ordinal.size() <= static_cast<std::size_t>(ordinal))
        reg.by_ordinal.resize(ordinal + 1);
    if (auto& existing = reg.by_ordinal[ordinal]) return existing;

    const std::string object = "device " + std::to_string(ordinal);
    CUdevice device = 0;
    check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet", object);
    CUcontext handle = nullptr;
    check(api.cuDevicePrimaryCtxRetain(&handle, device), "cuDevicePrimaryCtxRetain", object);
    auto box = std::make_shared<ContextBox>();
    box->handle = handle;
    box->device = device;
    box->ordinal = ordinal;
    note_context_id(*box, api);
    reg.by_ordinal[ordinal] = box;
    return box;
}
}  // namespace

std::shared_ptr<ContextBox> primary_context(int ordinal) {
    const std::uint64_t generation = primary_context_generation();
    ThreadCache& cache = tls_address(thread_cache);
    if (cache.state == kSlotLive && cache.ordinal == ordinal && cache.generation == generation)
        [[likely]] {
        if (auto box = cache.weak().lock()) return box;
    }
    auto box = lookup_or_retain(ordinal);
    if (thread_cache_usable(cache)) {
        cache.ordinal = ordinal;
        cache.generation = generation;
        cache.weak() = box;
    }
    return box;
}

std::optional<int> known_primary_context_ordinal(CUcontext handle) noexcept {
    ThreadCache& cache = tls_address(thread_cache);
    if (cache.state != kSlotLive || cache.generation != primary_context_generation()) return std::nullopt;
    const std::shared_ptr<ContextBox> box = cache.weak().lock();
    if (!box || box->handle != handle) return std::nullopt;
    return cache.ordinal;
}

std::shared_ptr<ContextBox> retained_primary_context(int ordinal) {
    ContextRegistry& reg = registry();
    std::lock_guard lock(reg.mutex);
    if (ordinal < 0 || reg.by_ordinal.size() <= static_cast<std::size_t>(ordinal)) return nullptr;
    return reg.by_ordinal[ordinal];
}

void forget_primary_context(const ContextBox& stale) {
    ContextRegistry& reg = registry();
    std::lock_guard lock(reg.mutex);
    primary_context_generation_counter.fetch_add(1, std::memory_order_acq_rel);
    for (auto& entry : reg.by_ordinal) {
        if (entry.get() == &stale) entry.reset();  // released when its last holder goes
    }
}

std::shared_ptr<ContextBox> wrap_context(CUcontext context, const char* what) {
    if (!context) throw InvalidArgumentError(std::string(what) + ": null context");
    const DriverApi& api = driver();
    CUdevice device = 0;
    {
        // cuCtxGetDevice (v2000) asks the current context: make `context` current for it.
        check(api.cuCtxPushCurrent(context), "cuCtxPushCurrent", what);
        const CUresult status = api.cuCtxGetDevice(&device);
        CUcontext popped = nullptr;
        api.cuCtxPopCurrent(&popped);
        check(status, "cuCtxGetDevice", what);
    }
    const int ordinal = Device::from_handle(device).ordinal();
    auto primary = primary_context(ordinal);
    if (primary->handle == context) return primary;
    if (auto created = find_created_context(context)) return created;
    auto box = std::make_shared<ContextBox>();
    box->handle = context;
    box->device = device;
    box->ordinal = ordinal;
    box->retained = false;
    check(note_context_id(*box, api), "cuCtxGetId", what);
    return box;
}

ContextScope::ContextScope(const ContextBox& context)
    : ContextScope(context.handle, context.ordinal) {}

ContextScope::ContextScope(CUcontext context, int ordinal) {
    const DriverApi& api = driver();
    CUcontext current = nullptr;
    check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current != context) {
        check(api.cuCtxPushCurrent(context), "cuCtxPushCurrent",
              [&] { return "device " + std::to_string(ordinal); });
        pushed_ = true;
    }
}

ContextScope::~ContextScope() {
    if (!pushed_) return;
    CUcontext popped = nullptr;
    driver().cuCtxPopCurrent(&popped);
}

}  // namespace detail

Context Context::from_handle(CUcontext context, const ContextFromHandleOptions& options) {
    std::shared_ptr<detail::ContextBox> box = detail::wrap_context(context, "Context::from_handle");
    if (!options.take_ownership || box->created) return detail::BoxAccess::make<Context>(std::move(box));
    if (box->retained)
        throw InvalidArgumentError("Context::from_handle: cannot take ownership of the primary context of device " +
                                   std::to_string(box->ordinal) + " (cudacore retains and releases it)");
    return detail::BoxAccess::make<Context>(detail::own_context(context, box->device, box->ordinal));
}

Device Context::device() const { return Device(open_box("Context::device")->ordinal); }

void Context::set_current() const {
    const detail::ContextBox& box = *open_box("Context::set_current");
    detail::check(detail::driver().cuCtxSetCurrent(box.handle), "cuCtxSetCurrent",
                  "device " + std::to_string(box.ordinal));
}

void Context::close() {
    if (box()) close_as(detail::describe_context(*box()));
}

}  // namespace cudacore
