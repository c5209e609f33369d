// Contexts cudacore creates (Context::create) and destroys.
#include "cudacore/context.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/context_holders.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace cudacore {

namespace detail {

namespace {

// A created context is a ContextBox that destroys its context (cuCtxDestroy) instead of
// releasing a primary context. Made with make_shared, so this destructor runs even through a
// shared_ptr<ContextBox>; every object made in the context holds the box, so it runs after them.
struct CreatedContextBox : ContextBox {
    // The device's primary context, held for the relay stream below (and so that the driver's
    // host-function thread only ever runs cudacore's functions in a context kept until exit).
    std::shared_ptr<ContextBox> primary;

    CreatedContextBox() {
        retained = false;
        created = true;
    }
    ~CreatedContextBox() {
        if (!handle) return;
        // Nothing to destroy when the driver shut down (at exit) or someone destroyed it.
        const DriverApi* api = driver_for_release(*this);
        if (!api) return;
        if (host_function_relay)
            check_release(api->cuStreamDestroy(host_function_relay), "cuStreamDestroy",
                          [&] { return "host-function relay of " + describe_context(*this); });
        check_release(api->cuCtxDestroy(handle), "cuCtxDestroy",
                      [&] { return describe_context(*this); });
    }
};

// Every created context alive, so that a handle of one met again (the current context, a stream
// wrapped with Stream::from_handle) gives back its owning box instead of a box that owns nothing.
// Weak references: the registry never keeps a context alive. Leaked on purpose: boxes destroyed
// after main returns may still look it up.
struct CreatedRegistry {
    std::mutex mutex;
    std::vector<std::weak_ptr<ContextBox>> contexts;
};
CreatedRegistry& created_registry() {
    static auto* instance = new CreatedRegistry;
    return *instance;
}

void remember_created(const std::shared_ptr<ContextBox>& box) {
    CreatedRegistry& registry = created_registry();
    std::lock_guard lock(registry.mutex);
    std::erase_if(registry.contexts, [](const auto& weak) { return weak.expired(); });
    registry.contexts.push_back(box);
}

// The execution affinity `options` ask for, refused before the driver where it cannot be had.
void check_affinity(const Device& device, const ContextOptions& options) {
    if (!options.sm_count) return;
    auto where = [&] { return "Context::create on device " + std::to_string(device.ordinal()); };
    if (*options.sm_count == 0)
        throw InvalidArgumentError(where() + ": ContextOptions::sm_count is 0; it must be at least 1 "
                                             "(or unset for no limit)");
    int supported = 0;
    check(driver().cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT,
                                                  device.handle()),
          "cuDeviceGetExecAffinitySupport", where);
    if (!supported)
        throw InvalidArgumentError(where() + ": ContextOptions::sm_count " +
                                   std::to_string(*options.sm_count) +
                                   ": the driver offers no SM-count execution affinity on this "
                                   "device (it needs a Volta or newer GPU under MPS); leave "
                                   "sm_count unset, or use a GreenContext");
    const int total = device.multiprocessor_count();
    if (*options.sm_count > static_cast<unsigned>(total))
        throw InvalidArgumentError(where() + ": ContextOptions::sm_count " +
                                   std::to_string(*options.sm_count) + " is more than the device's " +
                                   std::to_string(total) + " SMs");
}

}  // namespace

std::shared_ptr<ContextBox> own_context(CUcontext handle, CUdevice device, int ordinal) {
    const DriverApi& api = driver();
    auto box = std::make_shared<CreatedContextBox>();  // owns `handle` from here on
    box->handle = handle;
    box->device = device;
    box->ordinal = ordinal;
    box->primary = primary_context(ordinal);
    check(note_context_id(*box, api), "cuCtxGetId", [&] { return describe_context(*box); });
    // cudacore's host functions for this context's streams run on a primary-context stream
    // (ContextBox::host_function_relay): the driver crashed its host-function thread when a
    // context was destroyed while that thread still finished a function in it.
    {
        ContextScope scope(*box->primary);
        check(api.cuStreamCreateWithPriority(&box->host_function_relay, CU_STREAM_NON_BLOCKING, 0),
              "cuStreamCreateWithPriority", [&] { return "host-function relay of " + describe_context(*box); });
    }
    std::shared_ptr<ContextBox> owned(std::move(box));
    remember_created(owned);
    return owned;
}

std::shared_ptr<ContextBox> find_created_context(CUcontext handle) {
    CreatedRegistry& registry = created_registry();
    std::lock_guard lock(registry.mutex);
    for (const auto& weak : registry.contexts) {
        // A live box still owns its context, so no other context can have its handle.
        if (auto box = weak.lock(); box && box->handle == handle) return box;
    }
    return nullptr;
}

int created_contexts_holding(const ContextBox& primary) {
    CreatedRegistry& registry = created_registry();
    std::lock_guard lock(registry.mutex);
    int count = 0;
    for (const auto& weak : registry.contexts) {
        auto box = std::static_pointer_cast<CreatedContextBox>(weak.lock());
        if (box && box->primary.get() == &primary) ++count;
    }
    return count;
}

}  // namespace detail

Context Context::create(const Device& device, const ContextOptions& options) {
    const unsigned flags = options.flags();  // throws for a bad scheduling value
    detail::check_affinity(device, options);
    const auto& api = detail::driver();
    auto object = [&] { return "new context on device " + std::to_string(device.ordinal()); };
    // Retained first (own_context holds it too): the relay stream lives in it (see
    // CreatedContextBox::primary).
    auto primary = detail::primary_context(device.ordinal());

    CUexecAffinityParam affinity{};
    CUctxCreateParams params{};
    if (options.sm_count) {
        affinity.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
        affinity.param.smCount.val = *options.sm_count;
        params.execAffinityParams = &affinity;
        params.numExecAffinityParams = 1;
    }
    CUcontext handle = nullptr;
    detail::check(api.cuCtxCreate(&handle, options.sm_count ? &params : nullptr, flags,
                                  device.handle()),
                  "cuCtxCreate", object);
    // cuCtxCreate pushed the new context on this thread: put back what was current.
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
    return detail::BoxAccess::make<Context>(detail::own_context(handle, device.handle(), device.ordinal()));
}

std::optional<Context> Context::current_if_any() {
    CUcontext handle = nullptr;
    detail::check(detail::driver().cuCtxGetCurrent(&handle), "cuCtxGetCurrent", "Context::current_if_any");
    if (!handle) return std::nullopt;
    return detail::BoxAccess::make<Context>(detail::wrap_context(handle, "Context::current_if_any"));
}

Context Context::current() {
    std::optional<Context> current = current_if_any();
    if (!current)
        throw InvalidArgumentError("Context::current: no context is current on this thread (make "
                                   "one current with Context::set_current, CurrentContextScope or "
                                   "Device::set_current; Context::current_if_any answers none "
                                   "instead of throwing)");
    return std::move(*current);
}

}  // namespace cudacore
