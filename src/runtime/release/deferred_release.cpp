// The release thread (release.hpp's defer_release): releases that must wait until work queued on
// some streams is done: a library whose kernels may
// still run, what an executable graph held while its launches run. One background thread (the
// release thread) waits and then releases, so that no destructor blocks (a running kernel may
// wait for the very thread that dropped the last handle).
//
// What the release thread may touch. The driver runs calls on one stream or context from several
// threads at once unsafely in places (a green context has no internal synchronization at all,
// and a wait inside the driver raced with another thread's frees and destroys on the same
// streams), so the release thread makes no driver call on a stream or a context the user may be
// using meanwhile:
// - It waits without the driver. When a release is queued, on the caller's thread, a host
//   function is enqueued on each stream the work was launched on (cuLaunchHostFunc), which raises
//   a signal once the work before it is done; the release thread waits for the signals. The
//   default streams get theirs on the legacy stream (which follows every blocking stream).
// - It never touches the handle of a stream the caller owns (Stream::from_handle): the caller
//   may destroy it once its last wrapper is gone. While a wrapper lives, the release enqueues
//   its own signal; after, it takes the one the last wrapper enqueued (runtime_handles.hpp).
// - It holds no stream: the boxes of the streams stay with their owners, so a stream is
//   destroyed on a user's thread. Only a stream that was capturing when the release was queued
//   (no host function can go there then) is held, and waited for here once its capture is over.
// - The release itself (cuLibraryUnload, dropping what a graph held) runs only while no capture
//   begun through cudacore is in progress (capture_registry.hpp); those do not begin during it.
//   A capture begun with the driver call itself is unknown to cudacore: an unload during it
//   invalidates it.
//
// Exit ordering: start_deferred_releases() runs on normal paths (the first launch of a library or
// an executable graph on a stream), never from a destructor that may run inside exit(). It
// registers an atexit handler that refuses new work and waits for a release in progress (a wait
// for signals ends at once then), so exit() never shuts the driver down under a release; what is
// still queued then is left to the driver, which frees everything at exit. After the handler the
// thread touches nothing.
#include "runtime/release/release.hpp"

#include "runtime/release/capture_registry.hpp"
#include "runtime/release/reset_tolerance.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <thread>

namespace cudacore::detail {

namespace {

class DeferredReleases {
public:
    void start() {
        if (running_.load(std::memory_order_acquire)) [[likely]] return;  // every capture asks
        std::lock_guard lock(mutex_);
        if (started_ || exiting_ || start_failed_) return;
        try {
            std::thread([this] { run(); }).detach();
        } catch (...) {
            start_failed_ = true;  // releases then leave their objects to the driver
            return;
        }
        started_ = true;
        running_.store(true, std::memory_order_release);
        release_at_exit([] { instance().stop_accepting(); });
    }

    // False when it cannot be queued (no worker, or exit has begun). Never starts a thread.
    bool push(std::vector<std::shared_ptr<StreamBox>>& streams,
              std::vector<std::shared_ptr<StreamDone>>& signals, std::function<void(bool)>& release) {
        std::lock_guard lock(mutex_);
        if (exiting_ || !started_) return false;
        queue_.emplace_back();  // may throw: nothing is taken from the caller before
        queue_.back().streams = std::move(streams);
        queue_.back().signals = std::move(signals);
        queue_.back().release = std::move(release);
        ready_.notify_one();
        return true;
    }

    void wait_until_idle() {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [this] {
            return ((queue_.empty() && contexts_to_drop_.empty()) || exiting_) && !busy_;
        });
    }

    // Called by the driver's host-function thread: no driver call here. The context the signal
    // held goes to the release thread, whose drop may be its last release.
    void raise(StreamDone& signal) {
        {
            std::lock_guard lock(mutex_);
            signal.done = true;
            if (signal.context && !hand_over(signal.context)) {
                // Out of memory, or no release thread (it never started): kept (leaked to the
                // driver at exit) rather than released on the driver's thread.
                new std::shared_ptr<ContextBox>(std::move(signal.context));
            }
        }
        ready_.notify_all();
    }

    // Counts a host function enqueued (before cuLaunchHostFunc; forgotten if that fails).
    void host_function_enqueued() {
        std::lock_guard lock(mutex_);
        ++host_functions_;
    }
    void host_function_done() {
        {
            std::lock_guard lock(mutex_);
            --host_functions_;
        }
        idle_.notify_all();
    }

    // Leaked on purpose: the thread and late destructors may use it during exit.
    static DeferredReleases& instance() {
        static auto* releases = new DeferredReleases;
        return *releases;
    }

private:
    struct Pending {
        // Raised once the work queued before the release on each of its streams is done.
        std::vector<std::shared_ptr<StreamDone>> signals;
        // Streams no signal could be enqueued on (capturing at the time): waited for here.
        std::vector<std::shared_ptr<StreamBox>> streams;
        std::function<void(bool)> release;
    };

    // At exit: no new work, and no exit past a release in progress. Then a bounded wait for the
    // host functions cudacore enqueued to have run: the driver's host-function thread crashed
    // when the process exited (the driver tearing itself down) while one was pending or running
    // (the adopted-stream teardown, about 1 run in 100 on the H100). A function that waits for
    // a kernel still running at exit is not waited for past the bound.
    void stop_accepting() {
        std::unique_lock lock(mutex_);
        exiting_ = true;  // also what wait_until_idle waits for
        ready_.notify_all();
        idle_.notify_all();
        idle_.wait(lock, [this] { return !busy_; });
        idle_.wait_for(lock, std::chrono::seconds(1), [this] { return host_functions_ == 0; });
    }


    // Waits for the streams of `pending` to finish their work; false when the wait ended early
    // (the process is exiting). `relaxed`: whether this thread's capture interaction mode is
    // set already.
    bool wait_for_streams(const DriverApi& api, const Pending& pending, bool& relaxed) {
        bool idle = true;
        // This thread's waits are no unsafe calls for the capture rules: a capture in global
        // mode elsewhere is not invalidated by them.
        if (!relaxed) {
            CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
            relaxed = api.cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
        }
        for (const auto& stream : pending.streams) {
            const ContextBox* context = stream->context.get();
            // A context destroyed under us (a device reset) has no work left.
            if (!context || !context_survives(*context, api) ||
                api.cuCtxPushCurrent(context->handle) != CUDA_SUCCESS)
                continue;
            idle = (is_default_stream(stream->handle)
                        ? synchronize_outside_captures(api, exiting, this)
                        : wait_for_stream_outside_captures(api, stream->handle, exiting, this)) &&
                   idle;
            CUcontext popped = nullptr;
            api.cuCtxPopCurrent(&popped);
        }
        return idle;
    }

    // Each pass takes what there is to do (the queue's first release, the contexts raised signals
    // handed over) and ends in one place, which wakes the waiters for idle: whatever it emptied,
    // wait_until_idle hears of it.
    void run() {
        bool relaxed = false;  // this thread's capture interaction mode, set once a driver is there
        std::unique_lock lock(mutex_);
        for (;;) {
            ready_.wait(lock, [this] {
                return !queue_.empty() || !contexts_to_drop_.empty() || exiting_;
            });
            // Exiting: the queue stays as it is (this object is never destroyed), so nothing
            // is released while the driver shuts down.
            if (exiting_) {
                idle_.notify_all();
                return;
            }
            busy_ = true;
            if (!queue_.empty()) {
                Pending pending = std::move(queue_.front());
                queue_.pop_front();
                // The signals: a wait without any driver call (see the top of this file).
                ready_.wait(lock, [&] {
                    if (exiting_) return true;
                    for (const auto& signal : pending.signals)
                        if (!signal->done) return false;
                    return true;
                });
                lock.unlock();
                run_release(std::move(pending), relaxed);
                lock.lock();
            }
            drop_contexts(lock);
            busy_ = false;
            idle_.notify_all();
        }
    }

    // Runs one release once its signals were raised, without the lock; what it held is dropped
    // here, on this thread.
    void run_release(Pending pending, bool& relaxed) {
        bool idle = !exiting(this);
        const DriverApi* api = driver_if_loaded();
        if (idle && api && !pending.streams.empty()) idle = wait_for_streams(*api, pending, relaxed);
        // Releases unload libraries, which synchronizes the context: never during a capture
        // begun through cudacore (it would be invalidated).
        const bool released =
            idle && api && run_outside_captures([&] { pending.release(true); }, exiting, this);
        if (!released) {
            try {
                pending.release(false);
            } catch (...) {
                // A release never throws; nothing to report it to.
            }
        }
    }

    // Under the lock: gives `context` to the release thread to drop. False when it cannot.
    bool hand_over(std::shared_ptr<ContextBox>& context) noexcept {
        if (!started_) return false;
        try {
            contexts_to_drop_.push_back(std::move(context));
            return true;
        } catch (...) {
            return false;
        }
    }

    // Drops the contexts that raised signals handed over, outside the lock (a last release is a
    // driver call). Not at exit: the driver then frees them itself.
    void drop_contexts(std::unique_lock<std::mutex>& lock) {
        while (!contexts_to_drop_.empty() && !exiting_) {
            std::vector<std::shared_ptr<ContextBox>> contexts;
            contexts.swap(contexts_to_drop_);
            lock.unlock();
            contexts.clear();
            lock.lock();
        }
    }

    static bool exiting(void* self) {
        auto* releases = static_cast<DeferredReleases*>(self);
        std::lock_guard lock(releases->mutex_);
        return releases->exiting_;
    }

    std::mutex mutex_;
    std::condition_variable ready_;  // new work, a raised signal, or exit
    std::condition_variable idle_;
    std::deque<Pending> queue_;
    std::vector<std::shared_ptr<ContextBox>> contexts_to_drop_;  // from raised signals
    bool busy_ = false;
    std::atomic<bool> running_{false};  // started_, read without the mutex
    bool started_ = false;
    bool start_failed_ = false;
    bool exiting_ = false;
    std::size_t host_functions_ = 0;  // enqueued by cudacore and not yet run to their end
};

// Runs on the driver's host-function thread after the work queued before it: raises the signal
// and drops the reference that the enqueue gave it.
void CUDA_CB raise_signal(void* data) {
    auto* held = static_cast<std::shared_ptr<StreamDone>*>(data);
    DeferredReleases& releases = DeferredReleases::instance();
    releases.raise(**held);
    delete held;
    releases.host_function_done();
}

// Moves each stream out of `streams` for a signal that the work queued on it so far is done.
// Streams the caller owns are not touched once their last wrapper went: the signal that wrapper
// (or a free queued there since, refresh_end_of_work) enqueued stands for them, and without one
// they are dropped, since the caller may have destroyed the handle. Any other stream that no
// signal could be enqueued on (capturing) stays, to be waited for on the release thread.
std::vector<std::shared_ptr<StreamDone>> signals_for(std::vector<std::shared_ptr<StreamBox>>& streams) {
    std::vector<std::shared_ptr<StreamDone>> signals;
    signals.reserve(streams.size());
    for (auto it = streams.begin(); it != streams.end();) {
        StreamBox& stream = **it;
        std::shared_ptr<StreamDone> signal;
        if (stream.adopted) {
            std::lock_guard lock(stream.adopted->mutex);
            if (stream.adopted->wrappers == 0 && !stream.adopted->end_of_work) {
                it = streams.erase(it);
                continue;
            }
            signal = stream.adopted->wrappers > 0 ? signal_when_done(stream) : stream.adopted->end_of_work;
        } else {
            signal = signal_when_done(stream);
        }
        if (!signal) {
            ++it;
            continue;
        }
        signals.push_back(std::move(signal));
        it = streams.erase(it);
    }
    return signals;
}

// The stream a host function marking the end of `source`'s work goes to: `source` itself, or for
// a green context its relay, made to wait for that work through an event (created in the
// stream's context, which is current or carried by the stream). Null when that fails.
CUstream relay_after(const DriverApi& api, const StreamBox& stream, CUstream source) noexcept {
    const CUstream relay = stream.context->host_function_relay;
    if (!relay) return source;
    CUevent event = nullptr;
    if (api.cuCtxPushCurrent(stream.context->handle) != CUDA_SUCCESS) return nullptr;
    const bool made = api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
    if (!made) return nullptr;
    const bool waits = api.cuEventRecord(event, source) == CUDA_SUCCESS &&
                       api.cuStreamWaitEvent(relay, event, 0) == CUDA_SUCCESS;
    api.cuEventDestroy(event);  // released by the driver once the wait is done
    return waits ? relay : nullptr;
}

}  // namespace

void refresh_end_of_work(StreamBox& stream) noexcept {
    if (!stream.adopted) return;
    AdoptedStream& adopted = *stream.adopted;
    std::lock_guard lock(adopted.mutex);
    if (adopted.wrappers > 0) return;
    adopted.waited_for = true;
    renew_end_of_work(stream);
}

void renew_end_of_work(StreamBox& stream) noexcept {
    // Work on a stream runs in order: the newest signal stands for all before it. Where none can
    // be enqueued (a capture), the older one stays: the free went into the capture, not the pool.
    if (std::shared_ptr<StreamDone> signal = signal_when_done(stream)) stream.adopted->end_of_work = std::move(signal);
}

std::shared_ptr<StreamDone> signal_when_done(const StreamBox& stream) noexcept {
    try {
        const DriverApi* api = driver_if_loaded();
        if (!api) return nullptr;
        auto signal = std::make_shared<StreamDone>();
        // A context destroyed under us (a device reset) has no work left to wait for.
        if (!stream.context || !context_survives(*stream.context, *api)) {
            signal->done = true;
            return signal;
        }
        // The default streams need their context current; explicit streams carry theirs.
        const bool push = is_default_stream(stream.handle);
        // The legacy stream waits for every blocking stream, per-thread ones of other threads too.
        const CUstream source = push ? CU_STREAM_LEGACY : stream.handle;
        if (push && api->cuCtxPushCurrent(stream.context->handle) != CUDA_SUCCESS) return nullptr;
        // Enqueued into a capture, the function would mark nothing on the stream itself.
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        bool enqueued = false;
        if (api->cuStreamIsCapturing(source, &status) == CUDA_SUCCESS &&
            status == CU_STREAM_CAPTURE_STATUS_NONE) {
            const CUstream target = relay_after(*api, stream, source);
            signal->context = stream.context;  // until the function has run (StreamDone)
            auto* held = new std::shared_ptr<StreamDone>(signal);
            DeferredReleases& releases = DeferredReleases::instance();
            releases.host_function_enqueued();
            enqueued = target && api->cuLaunchHostFunc(target, &raise_signal, held) == CUDA_SUCCESS;
            if (!enqueued) {
                releases.host_function_done();
                delete held;
                signal->context.reset();
            }
        }
        if (push) {
            CUcontext popped = nullptr;
            api->cuCtxPopCurrent(&popped);
        }
        return enqueued ? signal : nullptr;
    } catch (...) {
        return nullptr;  // out of memory: the stream is waited for on the release thread
    }
}

bool streams_done(const std::vector<std::shared_ptr<StreamBox>>& streams) noexcept {
    const DriverApi* api = driver_if_loaded();
    if (!api) return false;
    // The query is no reason to invalidate a capture in global mode on another thread.
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (api->cuThreadExchangeStreamCaptureMode(&mode) != CUDA_SUCCESS) return false;
    bool done = true;
    for (const auto& box : streams) {
        const StreamBox& stream = *box;
        // A default stream's query says nothing of the blocking streams the legacy one waits
        // for (nor of another thread's per-thread stream); a caller's stream may be gone with
        // its last wrapper. Both are left to the signals.
        if (is_default_stream(stream.handle) || stream.adopted) {
            done = false;
            break;
        }
        if (!stream.context || !context_survives(*stream.context, *api)) continue;  // no work left
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        if (api->cuStreamIsCapturing(stream.handle, &status) != CUDA_SUCCESS ||
            status != CU_STREAM_CAPTURE_STATUS_NONE || api->cuStreamQuery(stream.handle) != CUDA_SUCCESS) {
            done = false;
            break;
        }
    }
    api->cuThreadExchangeStreamCaptureMode(&mode);
    return done;
}

void start_deferred_releases() { DeferredReleases::instance().start(); }

void defer_release(std::vector<std::shared_ptr<StreamBox>> streams,
                   std::function<void(bool idle)> release) noexcept {
    try {
        std::vector<std::shared_ptr<StreamDone>> signals = signals_for(streams);
        if (DeferredReleases::instance().push(streams, signals, release)) return;
    } catch (...) {
        // Out of memory queueing: as if it could not be queued.
    }
    try {
        if (release) release(false);
    } catch (...) {
    }
}

void wait_for_deferred_releases() { DeferredReleases::instance().wait_until_idle(); }

void release_at_exit(void (*release)()) noexcept {
    std::atexit(release);  // a failure (no room for a handler) leaves it to the driver
}

}  // namespace cudacore::detail
