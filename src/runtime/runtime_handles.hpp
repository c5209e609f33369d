// The boxes behind Context, Stream and Event: the raw handle, what it depends on, and how to
// release it. Shared ownership of a box gives the lifetime rules: no rebinding, no invalidation,
// dependencies held. Releases follow the reset-tolerance rule (runtime/release/reset_tolerance.hpp).
#pragma once

#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/event_recycler.hpp"
#include "runtime/release/reset_tolerance.hpp"

#include <optional>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cudacore::detail {

// The legacy, per-thread and null streams mean "the current context's default stream": the
// driver needs a current context for them, and only for them (explicit streams carry theirs).
inline bool is_default_stream(CUstream stream) noexcept {
    return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

struct ContextBox {
    CUcontext handle = nullptr;
    CUdevice device = 0;
    int ordinal = 0;
    bool retained = true;  // false for a context the caller owns (Stream::from_handle)
    bool created = false;  // made by Context::create: destroyed with the last share (context_creation.cpp)
    unsigned long long id = 0;  // note_context_id at retain: a reset's new context has another
    // Where cudacore's own host functions for this context's streams go (deferred_release.cpp):
    // null for the stream itself; for a green context, a stream of the primary context that
    // waits for the green stream's work first. The driver's host-function thread must not touch
    // a green context, which has no internal synchronization: a green context destroyed while
    // that thread finished one of its functions crashed the process (the teardown torture).
    CUstream host_function_relay = nullptr;
    // Completed events of a retained primary context, for its next events (destroyed before the
    // context is released).
    EventRecycler recycled_events;
    ~ContextBox();
};

// What host functions of one stream share with the driver thread that runs them: the first
// exception one threw, and the finished ones waiting to be destroyed on a user thread.
struct HostFunctionSlot {
    std::atomic<bool> attention{false};  // a failure or finished functions are waiting
    std::mutex mutex;
    std::exception_ptr failure;
    std::vector<std::unique_ptr<HostTask>> finished;
};

// Raised (under the release queue's lock, deferred_release.cpp) by a host function that the
// driver runs once the work queued on a stream before it is done.
struct StreamDone {
    bool done = false;
    // The stream's context, held until the host function has run: the driver crashes its own
    // threads when a context is destroyed (the last primary-context release, a green context's
    // destruction) while a host function is pending there. The function hands it to the release
    // thread, which drops it: no driver call is made on the driver's thread.
    std::shared_ptr<ContextBox> context;
};

// For a stream the caller owns (Stream::from_handle): the caller keeps the handle valid while a
// Stream wraps it, and no longer. The Stream objects count themselves here; when the last goes
// and a release may wait for the stream (`waited_for`: a library or an executable graph launched
// there), it enqueues a signal of the end of every piece of work cudacore put there. A release
// waits for that signal, or for one enqueued while a wrapper still lives, and never touches the
// handle (deferred_release.cpp).
struct AdoptedStream {
    std::mutex mutex;
    int wrappers = 0;
    bool waited_for = false;
    std::shared_ptr<StreamDone> end_of_work;  // enqueued when the last wrapper went
};

struct StreamBox {
    CUstream handle = nullptr;
    std::shared_ptr<ContextBox> context;
    bool owned = true;
    // Set for a stream the caller owns other than the default streams (whose handles stay valid).
    std::unique_ptr<AdoptedStream> adopted;
    // Made on the first launch_host_func; `host_slot` is read without the lock on hot paths.
    std::atomic<HostFunctionSlot*> host_slot{nullptr};
    std::mutex host_slot_mutex;
    std::shared_ptr<HostFunctionSlot> host_slot_owner;
    StreamBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    ~StreamBox();
    // Throws the pending HostFunctionError (once) and destroys finished host functions.
    void check_host_functions() const {
        HostFunctionSlot* slot = host_slot.load(std::memory_order_acquire);
        if (slot && slot->attention.load(std::memory_order_relaxed)) [[unlikely]]
            settle_host_functions(*slot);
    }
    void settle_host_functions(HostFunctionSlot& slot) const;
};

// What the public Stream objects of one state share besides the box (BoxAccess::make): for a
// caller's stream, their count as one wrapper (AdoptedStream); null for the others.
std::shared_ptr<void> public_companion(const std::shared_ptr<StreamBox>& box);

struct EventBox {
    CUevent handle = nullptr;
    std::shared_ptr<ContextBox> context;
    EventOptions options;
    bool owned = true;  // false for Event::from_handle without ownership
    // >= 0: made by create_event_box, given back to its context's recycler when complete. -1
    // once it went into a graph (a capture or a graph node), whose launches record it later.
    std::atomic<int> recycle_kind{-1};
    void never_reuse() noexcept { recycle_kind.store(-1, std::memory_order_relaxed); }
    // `records` counts records through cudacore, each counted once cuEventRecord returned (an
    // event wrapped or imported as recorded starts at 1): nonzero is Event::is_recorded(). For
    // reuse, whether it is complete when dropped is known without asking the driver
    // (cuEventQuery costs more than the cuEventCreate reuse saves): `complete_records` is the
    // count at which a sync, a query or an elapsed time last found it complete. `exposed` once
    // handle() gave it out: what was done with it then is unknown.
    std::atomic<std::uint32_t> records{0};
    std::atomic<std::uint32_t> complete_records{0};
    std::atomic<bool> exposed{false};
    void note_recorded() noexcept {
        records.store(records.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    // `seen`: `records` read before the wait or query that found the event complete. A record
    // counted meanwhile may not have been waited for: then nothing is noted.
    void note_complete(std::uint32_t seen) noexcept {
        // Stored only when new: timing the same pair again leaves their lines clean.
        if (records.load(std::memory_order_acquire) == seen &&
            complete_records.load(std::memory_order_relaxed) != seen)
            complete_records.store(seen, std::memory_order_relaxed);
    }
    // Known complete and never handed out: as good as a new event.
    bool reusable() const noexcept {
        return !exposed.load(std::memory_order_relaxed) &&
               records.load(std::memory_order_acquire) ==
                   complete_records.load(std::memory_order_relaxed);
    }
    EventBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    ~EventBox();
};

// The box for a context a caller hands us: the retained primary context when it is one, else a
// box that never releases it. `what` names the caller in errors.
std::shared_ptr<ContextBox> wrap_context(CUcontext context, const char* what);

// The owning box of a context made by Context::create that is still alive, else null.
std::shared_ptr<ContextBox> find_created_context(CUcontext handle);

// Makes `handle` (a context that is neither primary nor already cudacore's, of `device` /
// `ordinal`) cudacore's, as Context::create's: destroyed with the last holder of the box
// returned, found again by find_created_context.
std::shared_ptr<ContextBox> own_context(CUcontext handle, CUdevice device, int ordinal);

// The primary context of a device, retained once and shared while anything holds it.
std::shared_ptr<ContextBox> primary_context(int ordinal);
// The ordinal of the device whose primary context is `handle`, when it is the one this thread
// last took through primary_context (cudacore holds it retained, so no other context has its
// handle); else nullopt. No driver call: what the current context's device is, without
// cuCtxGetDevice, on the common path.
std::optional<int> known_primary_context_ordinal(CUcontext handle) noexcept;

// Stops handing out `stale` (its context was destroyed by someone resetting the device): the
// next primary_context() retains the primary context anew, which re-creates it.
void forget_primary_context(const ContextBox& stale);
// Changes whenever forget_primary_context runs: a cache of anything made in a primary context is
// valid while this value is unchanged. Inline: hot paths read it on every call.
extern std::atomic<std::uint64_t> primary_context_generation_counter;
inline std::uint64_t primary_context_generation() noexcept {
    return primary_context_generation_counter.load(std::memory_order_acquire);
}

// Runs create(primary context of `ordinal`); when the driver says that context was destroyed
// under us, forgets it and runs create once more on a freshly retained one. Keeps the check for
// a reset device off the hot path. `create` gets the reference as an lvalue and may move it out
// once nothing after can throw.
template <typename Create>
auto with_primary_context(int ordinal, Create&& create) {
    auto context = primary_context(ordinal);
    try {
        return create(context);
    } catch (const DriverError& e) {
        if (!context_destroyed_under_us(e.status(), *context)) throw;
    }
    forget_primary_context(*context);
    context = primary_context(ordinal);
    return create(context);
}

// Makes `context` current for the scope when it is not already (push/pop), so creating
// resources never changes the caller's current context.
class ContextScope {
public:
    explicit ContextScope(const ContextBox& context);
    ContextScope(CUcontext context, int ordinal);
    ~ContextScope();
    ContextScope(const ContextScope&) = delete;
    ContextScope& operator=(const ContextScope&) = delete;

private:
    bool pushed_ = false;
};

// "primary context of device 0", "created context 0x... on device 0", "context 0x... on device 0".
std::string describe_context(const ContextBox& context);

// A new stream in `context` (made current for the call when it is not), which the stream holds.
// `where` names the caller's object in errors.
std::shared_ptr<StreamBox> create_stream_box(const std::shared_ptr<ContextBox>& context,
                                             const StreamOptions& options,
                                             const std::string& where);

// An event in `context` (made current for the call when it is not). The rvalue form takes the
// reference over only once the event exists: on a throw, `context` is left as it was.
std::shared_ptr<EventBox> create_event_box(std::shared_ptr<ContextBox>&& context,
                                           const EventOptions& options);
inline std::shared_ptr<EventBox> create_event_box(const std::shared_ptr<ContextBox>& context,
                                                  const EventOptions& options) {
    return create_event_box(std::shared_ptr<ContextBox>(context), options);
}

}  // namespace cudacore::detail
