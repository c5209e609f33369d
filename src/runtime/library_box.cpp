#include "runtime/library_box.hpp"

#include "errors/release_report.hpp"
#include "runtime/capture_registry.hpp"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <thread>

namespace cudacore::detail {

namespace {

std::atomic<std::uint64_t> loads{0};
std::atomic<std::uint64_t> unloads{0};

void unload_now(const DriverApi& api, CUlibrary library) {
    // Shutdown errors are ignored (the driver may be going away); others reach the handler.
    check_release(api.cuLibraryUnload(library), "cuLibraryUnload", [&] {
        char text[48];
        std::snprintf(text, sizeof text, "library %p", static_cast<void*>(library));
        return std::string(text);
    });
    unloads.fetch_add(1, std::memory_order_relaxed);
}

// Unloads libraries whose kernels may still run: waits for the contexts they were launched in,
// then unloads, on one background thread so that no destructor blocks (a running kernel may wait
// for the very thread that dropped the last handle).
//
// Exit ordering: the thread is started on the first launch of any library (normal running, not
// from a destructor that may run inside exit()), and an atexit handler registered then stops it.
// That handler refuses new work, waits for an unload in progress (so exit() never shuts the
// driver down under cuCtxSynchronize or cuLibraryUnload), and leaves what is still queued to
// the driver, which frees every library at exit. Static objects destroyed before the handler runs
// (those made after the first launch) still defer normally; those destroyed after it leave their
// library to the driver. After the handler, the thread touches nothing.
class DeferredUnloads {
public:
    // Starts the worker thread if it is not running. Called on the launch path's slow branch.
    void start() {
        std::lock_guard lock(mutex_);
        if (started_ || exiting_ || start_failed_) return;
        try {
            std::thread([this] { run(); }).detach();
        } catch (...) {
            start_failed_ = true;  // deferred unloads then leave their library to the driver
            return;
        }
        started_ = true;
        std::atexit([] { instance().stop_accepting(); });
    }

    // False when the unload cannot be deferred (exit has begun, or no worker thread): the caller
    // leaves the library to the driver. Never starts a thread.
    bool push(CUlibrary library, std::vector<std::shared_ptr<ContextBox>> contexts) {
        std::lock_guard lock(mutex_);
        if (exiting_ || !started_) return false;
        queue_.push_back({library, std::move(contexts)});
        ready_.notify_one();
        return true;
    }

    // Blocks until every unload queued so far has been done (or exit has stopped the worker).
    void wait_until_idle() {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [this] { return (queue_.empty() || exiting_) && !busy_; });
    }

    // Leaked on purpose: the thread and late destructors may use it during exit.
    static DeferredUnloads& instance() {
        static auto* unloads = new DeferredUnloads;
        return *unloads;
    }

private:
    struct Pending {
        CUlibrary library;
        std::vector<std::shared_ptr<ContextBox>> contexts;
    };

    // At exit: no new work, and no exit past an unload in progress.
    void stop_accepting() {
        std::unique_lock lock(mutex_);
        exiting_ = true;
        ready_.notify_all();
        idle_.wait(lock, [this] { return !busy_; });
    }

    void run() {
        for (;;) {
            Pending pending;
            {
                std::unique_lock lock(mutex_);
                ready_.wait(lock, [this] { return !queue_.empty() || exiting_; });
                // Exiting: the queue stays as it is (this object is never destroyed), so no
                // context is released and nothing is unloaded while the driver shuts down.
                if (exiting_) {
                    idle_.notify_all();
                    return;
                }
                pending = std::move(queue_.front());
                queue_.pop_front();
                busy_ = true;
            }
            if (const DriverApi* api = driver_if_loaded()) {
                bool idle = true;
                for (const auto& context : pending.contexts) {
                    if (api->cuCtxPushCurrent(context->handle) != CUDA_SUCCESS) continue;
                    // Not while a capture is in progress: it would be invalidated.
                    idle = synchronize_outside_captures(*api, exiting, this) && idle;
                    CUcontext popped = nullptr;
                    api->cuCtxPopCurrent(&popped);
                }
                // Gave up waiting because the process exits: the driver frees the library.
                if (idle) unload_now(*api, pending.library);
            }
            pending.contexts.clear();  // primary contexts outlive the unload
            std::lock_guard lock(mutex_);
            busy_ = false;
            idle_.notify_all();
        }
    }

    static bool exiting(void* self) {
        auto* unloads = static_cast<DeferredUnloads*>(self);
        std::lock_guard lock(unloads->mutex_);
        return unloads->exiting_;
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::condition_variable idle_;
    std::deque<Pending> queue_;
    bool busy_ = false;
    bool started_ = false;
    bool start_failed_ = false;
    bool exiting_ = false;
};

}  // namespace

void LibraryBox::note_launch_slow(const std::shared_ptr<ContextBox>& context) {
    // This library may now need a deferred unload: make sure the worker runs, started here,
    // while the process runs normally, and not later from a destructor inside exit().
    DeferredUnloads::instance().start();
    std::lock_guard lock(launch_contexts_mutex);
    for (const auto& known : launch_contexts)
        if (known == context) return;
    launch_contexts.push_back(context);
    for (auto& slot : launch_context_slots) {
        const ContextBox* expected = nullptr;
        if (slot.compare_exchange_strong(expected, context.get(), std::memory_order_relaxed))
            return;
    }
    // More contexts than slots: later launches there take this (locked) path.
}

LibraryBox::~LibraryBox() {
    if (!handle || !owned) return;
    const DriverApi* api = driver_if_loaded();
    if (!api) return;
    std::vector<std::shared_ptr<ContextBox>> contexts;
    {
        std::lock_guard lock(launch_contexts_mutex);
        contexts.swap(launch_contexts);
    }
    if (contexts.empty()) {
        unload_now(*api, handle);
        return;
    }
    if (loaded_context) contexts.push_back(std::move(loaded_context));
    try {
        if (DeferredUnloads::instance().push(handle, std::move(contexts))) return;
    } catch (...) {
    }
    // Exiting (or no worker thread): leave the library to the driver rather than pull code from
    // under a running kernel.
}

std::uint64_t library_load_count() noexcept { return loads.load(std::memory_order_relaxed); }
std::uint64_t library_unload_count() noexcept { return unloads.load(std::memory_order_relaxed); }
void wait_for_deferred_unloads() { DeferredUnloads::instance().wait_until_idle(); }

CUresult load_library_data(CUlibrary* library, const void* code, CUjit_option* options,
                           void** option_values, unsigned option_count) {
    loads.fetch_add(1, std::memory_order_relaxed);
    return driver().cuLibraryLoadData(library, code, options, option_values, option_count,
                                      nullptr, nullptr, 0);
}

}  // namespace cudacore::detail
