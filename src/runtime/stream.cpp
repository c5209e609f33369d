#include "cudacore/stream.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/system.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

namespace cudacore {

namespace detail {
StreamBox::~StreamBox() {
    if (!owned || !handle) return;
    const DriverApi* api = driver_if_loaded();
    if (api && context->still_alive(*api)) api->cuStreamDestroy(handle);
}
}  // namespace detail

namespace {
std::string describe(const detail::StreamBox& box) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "stream %p on device %d", static_cast<void*>(box.handle),
                  box.context ? box.context->ordinal : -1);
    return buffer;
}
}  // namespace

Stream Stream::from_handle(CUstream stream) {
    const auto& api = detail::driver();
    CUcontext context = nullptr;
    CUdevice device = 0;
    detail::check(api.cuStreamGetCtx(stream, &context), "cuStreamGetCtx", "user stream");
    detail::check(api.cuStreamGetDevice(stream, &device), "cuStreamGetDevice", "user stream");
    int ordinal = 0;
    for (const Device& candidate : system::devices())
        if (candidate.handle() == device) ordinal = candidate.ordinal();

    auto box = std::make_shared<detail::StreamBox>();
    box->handle = stream;
    box->owned = false;
    // A stream of the primary context holds it like our own streams do; a stream of a context
    // the caller created is the caller's to keep alive, like the stream itself.
    auto primary = detail::primary_context(ordinal);
    if (primary->handle == context) {
        box->context = std::move(primary);
    } else {
        box->context = std::make_shared<detail::ContextBox>();
        box->context->handle = context;
        box->context->device = device;
        box->context->ordinal = ordinal;
        box->context->retained = false;
        api.cuCtxGetId(context, &box->context->id);
    }
    return detail::BoxAccess::make<Stream>(std::move(box));
}

CUstream Stream::handle() const noexcept { return box_ ? box_->handle : nullptr; }

Context Stream::context() const { return detail::BoxAccess::make<Context>(box_->context); }

Device Stream::device() const { return Device(box_->context->ordinal); }

bool Stream::owns_handle() const noexcept { return box_->owned; }

bool Stream::non_blocking() const {
    unsigned flags = 0;
    detail::check(detail::driver().cuStreamGetFlags(box_->handle, &flags), "cuStreamGetFlags",
                  [&] { return describe(*box_); });
    return (flags & CU_STREAM_NON_BLOCKING) != 0;
}

int Stream::priority() const {
    int priority = 0;
    detail::check(detail::driver().cuStreamGetPriority(box_->handle, &priority),
                  "cuStreamGetPriority", [&] { return describe(*box_); });
    return priority;
}

Event Stream::record(const EventOptions& options) const {
    Event event = detail::BoxAccess::make<Event>(detail::create_event_box(box_->context, options));
    record(event);
    return event;
}

Event Stream::record() const { return record(EventOptions{}); }

void Stream::record(const Event& event) const {
    detail::check(detail::driver().cuEventRecord(event.handle(), box_->handle), "cuEventRecord",
                  [&] { return describe(*box_); });
    event.box()->recorded.store(true, std::memory_order_release);
}

void Stream::wait(const Event& event) const {
    detail::check(detail::driver().cuStreamWaitEvent(box_->handle, event.handle(), 0),
                  "cuStreamWaitEvent", [&] { return describe(*box_); });
}

void Stream::wait(const Stream& other) const {
    // An event of our own, recorded on `other`, orders the two streams.
    Event marker = other.record(EventOptions{});
    wait(marker);
}

void Stream::sync() const {
    detail::check(detail::driver().cuStreamSynchronize(box_->handle), "cuStreamSynchronize",
                  [&] { return describe(*box_); });
}

bool Stream::is_done() const {
    CUresult status = detail::driver().cuStreamQuery(box_->handle);
    if (status == CUDA_ERROR_NOT_READY) return false;
    detail::check(status, "cuStreamQuery", [&] { return describe(*box_); });
    return true;
}

}  // namespace cudacore
