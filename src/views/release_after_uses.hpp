// Releasing a driver object that work cudacore enqueued may still use (a CUDA array being copied,
// a texture object read by a running kernel): destroyed at once when no such work was noted, else
// on the release thread once the streams of that work are done (deferred_release.hpp), so that
// no destructor blocks and nothing is pulled from under the GPU.
#pragma once

#include "loader/driver_api.hpp"
#include "runtime/launch_streams.hpp"
#include "runtime/runtime_handles.hpp"

#include <functional>
#include <memory>

namespace cudacore::detail {

// Runs destroy(api) (the driver's destroy call, whose failure it reports itself) and then drops
// `held` (what the object kept alive): now, when `uses` noted no stream and no capture begun
// through cudacore is in progress; otherwise on the release thread once the noted streams are
// done. Nothing is destroyed without a driver or once `context` is gone (a device reset took the
// object with it). At exit (a release that cannot wait) `held` is leaked and nothing destroyed:
// the driver frees it all. `destroy` may be empty (a view that owns no handle). Never throws.
void release_after_uses(LaunchStreams& uses, const std::shared_ptr<ContextBox>& context,
                        std::function<void(const DriverApi&)> destroy,
                        std::shared_ptr<void> held) noexcept;

}  // namespace cudacore::detail
