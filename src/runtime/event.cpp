#include "cudacore/event.hpp"

#include "support/thread_block_pool.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/release/reset_tolerance.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"

#include <cstdio>

namespace cudacore {

namespace detail {

EventBox::~EventBox() {
    if (!handle || !owned) return;
    if (const DriverApi* api = driver_for_release(*context)) {
        // A complete event is as good as a new one: the context keeps it for its next event.
        const int kind = recycle_kind.load(std::memory_order_relaxed);
        if (kind >= 0 && reusable() && context->recycled_events.keep(handle, kind))
            return;
        check_release(api->cuEventDestroy(handle), "cuEventDestroy", [&] {
            return "event on device " + std::to_string(context->ordinal);
        });
    }
}

}  // namespace detail

Event Event::from_handle(CUevent event, const Context& context,
                         const EventFromHandleOptions& options) {
    if (!event) throw InvalidArgumentError("Event::from_handle: null event");
    const CUresult status = detail::driver().cuEventQuery(event);
    if (status != CUDA_SUCCESS && status != CUDA_ERROR_NOT_READY)
        detail::throw_driver_error(status, "cuEventQuery", "Event::from_handle");
    auto box = std::make_shared<detail::EventBox>();
    box->handle = event;
    box->context = detail::box_of(context);
    box->options = options.options;
    box->owned = options.take_ownership;
    box->records.store(options.recorded ? 1 : 0, std::memory_order_relaxed);
    return detail::BoxAccess::make<Event>(std::move(box));
}

namespace detail {

std::shared_ptr<EventBox> create_event_box(std::shared_ptr<ContextBox>&& context,
                                           const EventOptions& options) {
    auto object = [&] { return "event on device " + std::to_string(context->ordinal); };
    if (options.ipc_enabled && options.timing_enabled) {
        throw InvalidArgumentError(
            "EventOptions: ipc_enabled requires timing_enabled = false (" + object() + ")");
    }
    unsigned flags = CU_EVENT_DEFAULT;
    if (!options.timing_enabled) flags |= CU_EVENT_DISABLE_TIMING;
    if (options.blocking_sync) flags |= CU_EVENT_BLOCKING_SYNC;
    if (options.ipc_enabled) flags |= CU_EVENT_INTERPROCESS;

    // The box first: an event is never made that no box would destroy.
    auto box = make_pooled<EventBox>();
    box->options = options;
    const DriverApi& api = driver();
    // Only primary contexts keep events (a context the caller owns may go without telling us).
    if (context->retained) [[likely]] {
        const int kind = EventRecycler::kind_of(options);
        box->recycle_kind.store(kind, std::memory_order_relaxed);
        if (kind >= 0) {
            // A kept event needs no current context. If someone reset the device, the kept events
            // went with it: the new event below then meets the destroyed context, as it would
            // without them (with_primary_context retries on a fresh one).
            if (CUevent kept = context->recycled_events.take(kind)) {
                if (context_survives(*context, api)) [[likely]] {
                    box->handle = kept;
                    box->context = std::move(context);
                    return box;
                }
            }
        }
    }
    ContextScope scope(*context);
    CUevent handle = nullptr;
    check(api.cuEventCreate(&handle, flags), "cuEventCreate", object);
    box->handle = handle;
    box->context = std::move(context);
    return box;
}

}  // namespace detail

namespace {
std::string describe(const detail::EventBox& box) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "event %p on device %d", static_cast<void*>(box.handle),
                  box.context->ordinal);
    return buffer;
}
}  // namespace

CUevent Event::handle() const noexcept {
    const auto& mine = box();
    if (!mine) return nullptr;
    // What the caller does with the handle is unknown (a record cudacore never sees): the event
    // is never handed to another Event after this one (EventBox::reusable).
    if (!mine->exposed.load(std::memory_order_relaxed))
        mine->exposed.store(true, std::memory_order_relaxed);
    return mine->handle;
}

const EventOptions& Event::options() const noexcept {
    static const EventOptions defaults;
    return box() ? box()->options : defaults;
}

bool Event::is_recorded() const noexcept {
    return box() && box()->records.load(std::memory_order_acquire) != 0;
}

Context Event::context() const {
    return detail::BoxAccess::make<Context>(open_box("Event::context")->context);
}

Device Event::device() const { return Device(open_box("Event::device")->context->ordinal); }

void Event::sync() const {
    detail::EventBox& box = *open_box("Event::sync");
    const std::uint32_t seen = box.records.load(std::memory_order_acquire);
    detail::check(detail::driver().cuEventSynchronize(box.handle), "cuEventSynchronize",
                  [&] { return describe(box); });
    box.note_complete(seen);
}

bool Event::is_done() const {
    detail::EventBox& box = *open_box("Event::is_done");
    const std::uint32_t seen = box.records.load(std::memory_order_acquire);
    CUresult status = detail::driver().cuEventQuery(box.handle);
    if (status == CUDA_ERROR_NOT_READY) return false;
    detail::check(status, "cuEventQuery", [&] { return describe(box); });
    box.note_complete(seen);
    return true;
}

void Event::close() {
    // The release, where this was the last share, is the box's (the recycler included).
    if (box()) close_as(describe(*box()));
}

Milliseconds operator-(const Event& end, const Event& start) {
    using detail::box_of;
    // Misuse of either event is reported before asking the driver anything (flags we keep).
    auto require_usable = [](const Event& event, const char* role) {
        detail::open_box_of(event, "elapsed time");
        if (!event.timing_enabled()) [[unlikely]] {
            throw InvalidArgumentError(std::string("elapsed time: the ") + role + " event (" +
                                       describe(*box_of(event)) +
                                       ") was created without timing_enabled");
        }
        if (!event.is_recorded()) [[unlikely]] {
            throw InvalidArgumentError(std::string("elapsed time: the ") + role + " event (" +
                                       describe(*box_of(event)) + ") was never recorded");
        }
    };
    require_usable(start, "start");
    require_usable(end, "end");
    detail::EventBox& start_box = *box_of(start);
    detail::EventBox& end_box = *box_of(end);
    float ms = 0.0f;
    const std::uint32_t start_seen = start_box.records.load(std::memory_order_acquire);
    const std::uint32_t end_seen = end_box.records.load(std::memory_order_acquire);
    const CUresult status = detail::driver().cuEventElapsedTime(&ms, start_box.handle, end_box.handle);
    if (status == CUDA_ERROR_NOT_READY) [[unlikely]] {
        // Say which one has not completed (the common success path makes no extra call).
        const bool start_done = detail::driver().cuEventQuery(start_box.handle) != CUDA_ERROR_NOT_READY;
        detail::throw_driver_error(status, "cuEventElapsedTime",
                                   std::string("the ") + (start_done ? "end" : "start") + " event (" +
                                       describe(start_done ? end_box : start_box) +
                                       ") has not completed; call sync() on it first");
    }
    detail::check(status, "cuEventElapsedTime",
                  [&] { return describe(start_box) + " -> " + describe(end_box); });
    // An elapsed time means both had completed.
    start_box.note_complete(start_seen);
    end_box.note_complete(end_seen);
    return Milliseconds(ms);
}

namespace {
// The stream's context, after checking the stream is open (a closed or moved-from Stream holds
// no state to read it from).
const std::shared_ptr<detail::ContextBox>& timed_context(const Stream& stream) {
    stream.check_open("ScopedTimer");
    const auto& box = detail::box_of(stream);
    if (!box)
        throw InvalidArgumentError("ScopedTimer: the Stream object was moved from (it holds no stream)");
    return box->context;
}
}  // namespace

ScopedTimer::ScopedTimer(const Stream& stream)
    : stream_(stream),
      start_(detail::BoxAccess::make<Event>(
          detail::create_event_box(timed_context(stream), {.timing_enabled = true}))),
      end_(detail::BoxAccess::make<Event>(
          detail::create_event_box(timed_context(stream), {.timing_enabled = true}))) {
    stream_.record(start_);
}

void ScopedTimer::stop() {
    if (stopped_) return;
    stream_.record(end_);
    stopped_ = true;
}

Milliseconds ScopedTimer::elapsed() {
    stop();
    end_.sync();
    return end_ - start_;
}

}  // namespace cudacore
