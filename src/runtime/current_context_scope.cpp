#include "cudacore/current_context_scope.hpp"

#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

namespace cudacore {

CurrentContextScope::CurrentContextScope(const Context& context) : context_(context) {
    const auto& box = detail::box_of(context_);
    if (!box)
        throw InvalidArgumentError("CurrentContextScope: the Context is closed (or moved from)");
    detail::check(detail::driver().cuCtxPushCurrent(box->handle), "cuCtxPushCurrent",
                  [&] { return detail::describe_context(*box); });
}

CurrentContextScope::~CurrentContextScope() {
    const detail::DriverApi* api = detail::driver_if_loaded();
    if (!api) return;
    CUcontext popped = nullptr;
    api->cuCtxPopCurrent(&popped);  // errors ignored: a destructor never throws
}

}  // namespace cudacore
