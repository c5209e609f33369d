#include "cudacore/current_context_scope.hpp"

#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

namespace cudacore {

// An object of its own over the context's box: closing the caller's Context while the scope
// lives leaves the context held (and current) until the scope ends.
CurrentContextScope::CurrentContextScope(const Context& context)
    : context_(detail::BoxAccess::make<Context>(detail::open_box_of(context, "CurrentContextScope"))) {
    const auto& box = detail::box_of(context_);
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
