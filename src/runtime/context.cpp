#include "cudacore/context.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace cudacore {
namespace detail {

ContextBox::~ContextBox() {
    if (!retained) return;
    if (const DriverApi* api = driver_if_loaded()) api->cuDevicePrimaryCtxRelease(device);
}

bool ContextBox::still_alive(const DriverApi& api) const noexcept {
    unsigned long long now = 0;
    return api.cuCtxGetId(handle, &now) == CUDA_SUCCESS && now == id;
}

namespace {
struct ContextRegistry {
    std::mutex mutex;
    std::vector<std::weak_ptr<ContextBox>> by_ordinal;
};
// Leaked on purpose: objects destroyed after main returns may still look it up.
ContextRegistry& registry() {
    static auto* instance = new ContextRegistry;
    return *instance;
}
}  // namespace

namespace {
// Bumped by forget_primary_context so per-thread caches drop a forgotten box.
std::atomic<std::uint64_t> registry_generation{0};

// The calling thread's last lookup: keeps the common case off the registry's mutex. Holds only
// a weak reference, so it never keeps a context retained.
struct ThreadCache {
    int ordinal = -1;
    std::uint64_t generation = 0;
    std::weak_ptr<ContextBox> box;
    ~ThreadCache() { alive = false; }
    static thread_local bool alive;  // false once destroyed at thread (or process) exit
};
thread_local bool ThreadCache::alive = true;
thread_local ThreadCache thread_cache;

std::shared_ptr<ContextBox> lookup_or_retain(int ordinal) {
    const DriverApi& api = driver();
    ContextRegistry& reg = registry();
    std::lock_guard lock(reg.mutex);
    if (reg.by_ordinal.size() <= static_cast<std::size_t>(ordinal))
        reg.by_ordinal.resize(ordinal + 1);
    if (auto existing = reg.by_ordinal[ordinal].lock()) return existing;

    const std::string object = "device " + std::to_string(ordinal);
    CUdevice device = 0;
    check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet", object);
    CUcontext handle = nullptr;
    check(api.cuDevicePrimaryCtxRetain(&handle, device), "cuDevicePrimaryCtxRetain", object);
    auto box = std::make_shared<ContextBox>();
    box->handle = handle;
    box->device = device;
    box->ordinal = ordinal;
    api.cuCtxGetId(handle, &box->id);
    reg.by_ordinal[ordinal] = box;
    return box;
}
}  // namespace

std::shared_ptr<ContextBox> primary_context(int ordinal) {
    const std::uint64_t generation = registry_generation.load(std::memory_order_acquire);
    if (ThreadCache::alive && thread_cache.ordinal == ordinal &&
        thread_cache.generation == generation) {
        if (auto box = thread_cache.box.lock()) return box;
    }
    auto box = lookup_or_retain(ordinal);
    if (ThreadCache::alive) {
        thread_cache.ordinal = ordinal;
        thread_cache.generation = generation;
        thread_cache.box = box;
    }
    return box;
}

std::uint64_t primary_context_generation() noexcept {
    return registry_generation.load(std::memory_order_acquire);
}

void forget_primary_context(const ContextBox& stale) {
    ContextRegistry& reg = registry();
    std::lock_guard lock(reg.mutex);
    registry_generation.fetch_add(1, std::memory_order_acq_rel);
    for (auto& entry : reg.by_ordinal) {
        if (auto existing = entry.lock(); existing.get() == &stale) entry.reset();
    }
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

CUcontext Context::handle() const noexcept { return box_ ? box_->handle : nullptr; }

Device Context::device() const { return Device(box_->ordinal); }

void Context::set_current() const {
    detail::check(detail::driver().cuCtxSetCurrent(box_->handle), "cuCtxSetCurrent",
                  "device " + std::to_string(box_->ordinal));
}

}  // namespace cudacore
