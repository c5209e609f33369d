// A driver object that work cudacore enqueued may still use (a CUDA array being copied, a texture
// object read by a running kernel): destroyed at once when no such work was noted, else on the
// release thread once the streams of that work are done (release.hpp).
#include "runtime/release/release.hpp"

#include <new>
#include <utility>

namespace cudacore::detail {

namespace {

void destroy_now(const std::shared_ptr<ContextBox>& context,
                 const std::function<void(const DriverApi&)>& destroy) noexcept {
    if (!destroy || !context) return;
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
    if (streams.empty() && !captures_active()) {
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

}  // namespace cudacore::detail
