#include "cudacore/stream.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/system.hpp"
#include "runtime/default_stream_scope.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"
#include "runtime/stream_description.hpp"
#include "support/box_access.hpp"

#include <cstdio>
#include <utility>

namespace cudacore {

namespace detail {
std::string stream_description(CUstream handle, int ordinal) {
    char text[64];
    std::snprintf(text, sizeof text, "stream %p on device %d", static_cast<void*>(handle), ordinal);
    return text;
}

std::string describe_stream(const StreamBox& box) {
    return stream_description(box.handle, box.context ? box.context->ordinal : -1);
}

StreamBox::~StreamBox() {
    if (!owned || !handle) return;
    if (const DriverApi* api = driver_for_release(*context)) {
        check_release(api->cuStreamDestroy(handle), "cuStreamDestroy", [&] {
            return "stream on device " + std::to_string(context->ordinal);
        });
    }
}
void StreamBox::settle_host_functions(HostFunctionSlot& slot) const {
    std::vector<std::unique_ptr<HostTask>> finished;
    std::exception_ptr failure;
    {
        std::lock_guard lock(slot.mutex);
        finished.swap(slot.finished);
        failure = std::exchange(slot.failure, nullptr);
        slot.attention.store(false, std::memory_order_relaxed);
    }
    finished.clear();  // the callables' captures are destroyed here, on a user thread
    if (!failure) return;
    std::string what = "unknown exception";
    try {
        std::rethrow_exception(failure);
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    throw HostFunctionError("a host function enqueued with launch_host_func on " +
                                stream_description(handle, context ? context->ordinal : -1) +
                                " threw: " + what,
                            failure);
}

namespace {
// Runs on the driver's callback thread: no CUDA calls here, and nothing may escape.
void CUDA_CB run_host_task(void* data) {
    HostTask* task = static_cast<HostTask*>(data);
    std::shared_ptr<HostFunctionSlot> slot = std::move(task->slot);
    std::exception_ptr failure;
    try {
        task->run();
    } catch (...) {
        failure = std::current_exception();
    }
    try {
        std::lock_guard lock(slot->mutex);
        if (failure && !slot->failure) slot->failure = failure;
        slot->finished.emplace_back(task);  // destroyed later, on a user thread
        slot->attention.store(true, std::memory_order_relaxed);
    } catch (...) {
        // Out of memory while bookkeeping: drop the record rather than terminate.
    }
}
}  // namespace

}  // namespace detail


namespace detail {

namespace {
// What the public objects of a caller's stream share (Stream::from_handle): while it lives they
// count as one wrapper of the stream (AdoptedStream).
struct StreamWrapper {
    std::shared_ptr<StreamBox> box;
    explicit StreamWrapper(std::shared_ptr<StreamBox> wrapped) : box(std::move(wrapped)) {
        std::lock_guard lock(box->adopted->mutex);
        ++box->adopted->wrappers;
    }
    StreamWrapper(const StreamWrapper&) = delete;
    StreamWrapper& operator=(const StreamWrapper&) = delete;
    ~StreamWrapper() {
        AdoptedStream& adopted = *box->adopted;
        std::lock_guard lock(adopted.mutex);
        // The last wrapper: the caller may destroy the stream from now on. Under the lock, so
        // that a release queued meanwhile either sees a wrapper (and enqueues its own signal) or
        // this one. A new signal each time: a wrapper made again from a buffer's stream may have
        // queued more work since the last.
        if (--adopted.wrappers == 0 && adopted.waited_for) renew_end_of_work(*box);
    }
};
}  // namespace

std::shared_ptr<void> public_companion(const std::shared_ptr<StreamBox>& box) {
    if (!box->adopted) return nullptr;
    return std::make_shared<StreamWrapper>(box);
}

}  // namespace detail

void Stream::close() {
    if (box()) close_as(detail::describe_stream(*box()));
}

void Stream::check_host_functions() const {
    check_usable("Stream::check_host_functions");
    box()->check_host_functions();
}

void Stream::enqueue_host_task(std::unique_ptr<detail::HostTask> task) const {
    check_usable("Stream::launch_host_func");
    box()->check_host_functions();
    detail::HostFunctionSlot* slot = box()->host_slot.load(std::memory_order_acquire);
    if (!slot) {
        std::lock_guard lock(box()->host_slot_mutex);
        if (!box()->host_slot_owner) {
            box()->host_slot_owner = std::make_shared<detail::HostFunctionSlot>();
            box()->host_slot.store(box()->host_slot_owner.get(), std::memory_order_release);
        }
        slot = box()->host_slot_owner.get();
    }
    {
        std::lock_guard lock(box()->host_slot_mutex);
        task->slot = box()->host_slot_owner;
    }
    const detail::DefaultStreamScope in_context(*box());
    const CUresult status =
        detail::driver().cuLaunchHostFunc(box()->handle, &detail::run_host_task, task.get());
    if (status != CUDA_SUCCESS) {
        task->slot.reset();
        detail::throw_driver_error(status, "cuLaunchHostFunc", detail::describe_stream(*box()));
    }
    task.release();  // the driver thread owns it now (run_host_task hands it back)
}

Stream Stream::from_handle(CUstream stream, const StreamFromHandleOptions& options) {
    if (options.take_ownership && detail::is_default_stream(stream))
        throw InvalidArgumentError("Stream::from_handle: cannot take ownership of a default stream (nobody destroys it)");
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
    box->owned = options.take_ownership;
    if (!options.take_ownership && !detail::is_default_stream(stream))
        box->adopted = std::make_unique<detail::AdoptedStream>();
    // A stream of the primary context, or of a context Context::create made, holds it like our
    // own streams do; a stream of a context the caller created is the caller's to keep alive,
    // like the stream itself.
    auto primary = detail::primary_context(ordinal);
    if (primary->handle == context) {
        box->context = std::move(primary);
    } else if (auto created = detail::find_created_context(context)) {
        box->context = std::move(created);
    } else {
        box->context = std::make_shared<detail::ContextBox>();
        box->context->handle = context;
        box->context->device = device;
        box->context->ordinal = ordinal;
        box->context->retained = false;
        detail::note_context_id(*box->context, api);
    }
    return detail::BoxAccess::make<Stream>(std::move(box));
}

Context Stream::context() const {
    check_usable("Stream::context");
    return detail::BoxAccess::make<Context>(box()->context);
}

Device Stream::device() const {
    check_usable("Stream::device");
    return Device(box()->context->ordinal);
}

bool Stream::owns_handle() const noexcept { return box() && box()->owned; }

bool Stream::non_blocking() const {
    check_usable("Stream::non_blocking");
    unsigned flags = 0;
    const detail::DefaultStreamScope in_context(*box());
    detail::check(detail::driver().cuStreamGetFlags(box()->handle, &flags), "cuStreamGetFlags",
                  [&] { return detail::describe_stream(*box()); });
    return (flags & CU_STREAM_NON_BLOCKING) != 0;
}

int Stream::priority() const {
    check_usable("Stream::priority");
    int priority = 0;
    const detail::DefaultStreamScope in_context(*box());
    detail::check(detail::driver().cuStreamGetPriority(box()->handle, &priority),
                  "cuStreamGetPriority", [&] { return detail::describe_stream(*box()); });
    return priority;
}

Event Stream::record(const EventOptions& options) const {
    check_usable("Stream::record");
    box()->check_host_functions();
    Event event = detail::BoxAccess::make<Event>(detail::create_event_box(box()->context, options));
    record(event);
    return event;
}

Event Stream::record() const { return record(EventOptions{}); }

void Stream::record(const Event& event) const {
    const detail::StreamBox& mine = *open_box("Stream::record");
    mine.check_host_functions();
    // Recorded into a capture, the event becomes part of a graph whose launches record it again
    // later: never reused (any capture in progress counts, one relaxed load otherwise).
    detail::EventBox& box = *detail::open_box_of(event, "Stream::record");
    if (detail::captures_active()) [[unlikely]] box.never_reuse();
    const detail::DefaultStreamScope in_context(mine);
    detail::check(detail::driver().cuEventRecord(box.handle, mine.handle), "cuEventRecord",
                  [&] { return detail::describe_stream(mine); });
    box.note_recorded();
}

void Stream::wait(const Event& event) const {
    check_usable("Stream::wait");
    box()->check_host_functions();
    // The driver crashes (SIGSEGV inside cuStreamWaitEvent, driver 580) when a stream waits on an
    // interprocess event of another device, so that is refused here.
    if (event.options().ipc_enabled && event.device().ordinal() != box()->context->ordinal) [[unlikely]] {
        throw InvalidArgumentError("Stream::wait: " + detail::describe_stream(*box()) + " cannot wait on an IPC event of device " +
                                   std::to_string(event.device().ordinal()) +
                                   ": the driver does not support waiting on an interprocess event of another "
                                   "device; wait from a stream of that device, or record an event of this "
                                   "stream's device after it");
    }
    detail::EventBox& event_box = *detail::open_box_of(event, "Stream::wait");
    if (detail::captures_active()) [[unlikely]] event_box.never_reuse();  // as in record()
    const detail::DefaultStreamScope in_context(*box());
    detail::check(detail::driver().cuStreamWaitEvent(box()->handle, event_box.handle, 0),
                  "cuStreamWaitEvent", [&] { return detail::describe_stream(*box()); });
}

void Stream::wait(const Stream& other) const {
    check_usable("Stream::wait");
    other.check_usable("Stream::wait (the stream waited for)");
    // An event of our own, recorded on `other`, orders the two streams.
    Event marker = other.record(EventOptions{});
    wait(marker);
}

void Stream::sync() const {
    check_usable("Stream::sync");
    {
        const detail::DefaultStreamScope in_context(*box());
        detail::check(detail::driver().cuStreamSynchronize(box()->handle), "cuStreamSynchronize",
                      [&] { return detail::describe_stream(*box()); });
    }
    box()->check_host_functions();
}

bool Stream::is_done() const {
    check_usable("Stream::is_done");
    box()->check_host_functions();
    CUresult status;
    {
        const detail::DefaultStreamScope in_context(*box());
        status = detail::driver().cuStreamQuery(box()->handle);
    }
    if (status == CUDA_ERROR_NOT_READY) return false;
    detail::check(status, "cuStreamQuery", [&] { return detail::describe_stream(*box()); });
    return true;
}

bool Stream::is_capturing() const {
    check_usable("Stream::is_capturing");
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    const detail::DefaultStreamScope in_context(*box());
    detail::check(detail::driver().cuStreamIsCapturing(handle(), &status), "cuStreamIsCapturing",
                  [&] { return detail::describe_stream(*box()); });
    return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace cudacore
