#include "runtime/deferred_release.hpp"

#include "runtime/capture_registry.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
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
        std::atexit([] { instance().stop_accepting(); });
    }

    // False when it cannot be queued (no worker, or exit has begun). Never starts a thread.
    bool push(std::vector<std::shared_ptr<StreamBox>>& streams,
              std::function<void(bool)>& release) {
        std::lock_guard lock(mutex_);
        if (exiting_ || !started_) return false;
        queue_.emplace_back();  // may throw: nothing is taken from the caller before
        queue_.back().streams = std::move(streams);
        queue_.back().release = std::move(release);
        ready_.notify_one();
        return true;
    }

    void wait_until_idle() {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [this] { return (queue_.empty() || exiting_) && !busy_; });
    }

    // Leaked on purpose: the thread and late destructors may use it during exit.
    static DeferredReleases& instance() {
        static auto* releases = new DeferredReleases;
        return *releases;
    }

private:
    struct Pending {
        std::vector<std::shared_ptr<StreamBox>> streams;
        std::function<void(bool)> release;
    };

    // At exit: no new work, and no exit past a release in progress.
    void stop_accepting() {
        std::unique_lock lock(mutex_);
        exiting_ = true;
        ready_.notify_all();
        idle_.wait(lock, [this] { return !busy_; });
    }

    void run() {
        bool relaxed = false;  // this thread's capture interaction mode, set once a driver is there
        for (;;) {
            Pending pending;
            {
                std::unique_lock lock(mutex_);
                ready_.wait(lock, [this] { return !queue_.empty() || exiting_; });
                // Exiting: the queue stays as it is (this object is never destroyed), so nothing
                // is released while the driver shuts down.
                if (exiting_) {
                    idle_.notify_all();
                    return;
                }
                pending = std::move(queue_.front());
                queue_.pop_front();
                busy_ = true;
            }
            bool idle = false;
            if (const DriverApi* api = driver_if_loaded()) {
                // This thread's waits are no unsafe calls for the capture rules: a capture in
                // global mode elsewhere is not invalidated by them (they never touch a capturing
                // stream).
                if (!relaxed) {
                    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
                    relaxed = api->cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
                }
                idle = true;
                for (const auto& stream : pending.streams) {
                    const ContextBox* context = stream ? stream->context.get() : nullptr;
                    // A context destroyed under us (a device reset) has no work left.
                    if (!context || !context->still_alive(*api) ||
                        api->cuCtxPushCurrent(context->handle) != CUDA_SUCCESS)
                        continue;
                    // A stream the caller owns (from_handle) may be destroyed by now: its handle
                    // is not waited on; its context is, as for the default streams.
                    idle = (stream->owned
                                ? wait_for_stream_outside_captures(*api, stream->handle, exiting, this)
                                : synchronize_outside_captures(*api, exiting, this)) &&
                           idle;
                    CUcontext popped = nullptr;
                    api->cuCtxPopCurrent(&popped);
                }
            }
            // Releases unload libraries, which synchronizes the context: never during a capture
            // begun through cudacore (it would be invalidated).
            const bool released =
                idle && run_outside_captures([&] { pending.release(true); }, exiting, this);
            if (!released) {
                try {
                    pending.release(false);
                } catch (...) {
                    // A release never throws; nothing to report it to.
                }
            }
            pending = {};  // what it held goes here, on this thread (primary contexts last)
            std::lock_guard lock(mutex_);
            busy_ = false;
            idle_.notify_all();
        }
    }

    static bool exiting(void* self) {
        auto* releases = static_cast<DeferredReleases*>(self);
        std::lock_guard lock(releases->mutex_);
        return releases->exiting_;
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::condition_variable idle_;
    std::deque<Pending> queue_;
    bool busy_ = false;
    std::atomic<bool> running_{false};  // started_, read without the mutex
    bool started_ = false;
    bool start_failed_ = false;
    bool exiting_ = false;
};

}  // namespace

void start_deferred_releases() { DeferredReleases::instance().start(); }

void defer_release(std::vector<std::shared_ptr<StreamBox>> streams,
                   std::function<void(bool idle)> release) noexcept {
    try {
        if (DeferredReleases::instance().push(streams, release)) return;
    } catch (...) {
        // Out of memory queueing: as if it could not be queued.
    }
    try {
        if (release) release(false);
    } catch (...) {
    }
}

void wait_for_deferred_releases() { DeferredReleases::instance().wait_until_idle(); }

}  // namespace cudacore::detail
