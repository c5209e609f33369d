// The forms of release.hpp that take what the GPU may still use and let it go after that work:
// release_after_uses, a driver object (a CUDA array being copied, a texture object read by a
// running kernel, a library whose kernels may run) destroyed at once when no such work was noted,
// else on the release thread once the streams of that work are done; hold_until_done, objects
// (what an executable graph held) dropped once given streams are done.
#include "runtime/release/release.hpp"

#include <new>
#include <utility>

namespace cudacore::detail {

namespace {

void destroy_now(const std::shared_ptr<ContextBox>& context,
                 const std::function<void(const DriverApi&)>& destroy) noexcept {
    if (!destroy) return;
    if (!context) {  // an object of no context (a library): the driver, while it is loaded
        if (const DriverApi* api = driver_if_loaded()) destroy(*api);
        return;
    }
    const DriverApi* api = driver_for_release(*context);
    if (!api) return;
    try {
        ContextScope scope(*context);
        destroy(*api);
    } catch (...) {
        // A release never throws (ContextScope may, when the context cannot be made current).
    }
}

}  // namespace

void release_after_uses(LaunchStreams& uses, const std::shared_ptr<ContextBox>& context,
                        std::function<void(const DriverApi&)> destroy,
                        std::shared_ptr<void> held) noexcept {
    if (!driver_if_loaded()) {
        // No driver (never loaded, or unloading at exit): nothing to destroy.
        return;
    }
    std::vector<std::shared_ptr<StreamBox>> streams;
    try {
        if (uses.any()) streams = uses.take();
    } catch (...) {
        // Out of memory listing the streams: leaked rather than destroyed under running work.
        new (std::nothrow) std::shared_ptr<void>(std::move(held));
        return;
    }
    if (!captures_active() && (streams.empty() || streams_done(streams))) {
        destroy_now(context, destroy);
        return;  // `held` drops here, after the object that needed it
    }
    std::shared_ptr<std::pair<std::function<void(const DriverApi&)>, std::shared_ptr<void>>> state;
    try {
        state = std::make_shared<std::pair<std::function<void(const DriverApi&)>,
                                           std::shared_ptr<void>>>(std::move(destroy),
                                                                   std::move(held));
    } catch (...) {
        new (std::nothrow) std::shared_ptr<void>(std::move(held));
        return;
    }
    defer_release(std::move(streams), [state, context](bool idle) {
        if (!idle) {
            new (std::nothrow) auto(state);  // exiting: the driver frees everything
            return;
        }
        destroy_now(context, state->first);
        state->second.reset();
    });
}

void hold_until_done(std::vector<std::shared_ptr<StreamBox>> streams,
                     std::vector<std::shared_ptr<const void>> holdings) noexcept {
    // Shared between the caller and the release, so that whatever fails (a release that cannot be
    // made, or exit) the holdings are leaked rather than freed under a graph that may still run.
    using Held = std::vector<std::shared_ptr<const void>>;
    std::shared_ptr<Held> held;
    try {
        held = std::make_shared<Held>(std::move(holdings));
        defer_release(std::move(streams), [held](bool idle) {
            if (idle) held->clear();
            else new auto(held);  // exiting: the driver frees everything
        });
    } catch (...) {
        // Out of memory: leaked (held, or what `holdings` still has).
        if (held) new (std::nothrow) std::shared_ptr<Held>(std::move(held));
        else new (std::nothrow) Held(std::move(holdings));
    }
}

}  // namespace cudacore::detail
