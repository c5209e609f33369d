#include "runtime/release/capture_registry.hpp"

#include "support/tls_address.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

namespace cudacore::detail {

std::atomic<int> active_capture_streams{0};

namespace {
// Bumped whenever a stream is registered or unregistered: a thread's memory of what it last
// added (below) is only trusted while nothing changed.
std::atomic<std::uint64_t> registry_generation{0};

// What this thread last added to a capture: a capture launches the same kernel many times in a
// row, and the holdings keep each object once, so a repeat needs no lookup at all.
struct LastHeld {
    CUstream stream = nullptr;
    const void* object = nullptr;
    std::uint64_t generation = ~std::uint64_t{0};
};
thread_local LastHeld last_held;
}  // namespace

void GraphHoldings::add(std::shared_ptr<const void> object) {
    if (!object) return;
    std::lock_guard lock(mutex_);
    if (object == first_) return;
    // Captures add the same library once per launch: the newest entry is the likely match.
    if (std::find(more_.rbegin(), more_.rend(), object) != more_.rend()) return;
    if (!first_) first_ = std::move(object);
    else more_.push_back(std::move(object));
}

void GraphHoldings::add_all(const GraphHoldings& other) {
    if (&other == this) return;
    std::vector<std::shared_ptr<const void>> copy;
    {
        std::lock_guard lock(other.mutex_);
        if (other.first_) copy.push_back(other.first_);
        copy.insert(copy.end(), other.more_.begin(), other.more_.end());
    }
    for (auto& object : copy) add(std::move(object));
}

std::size_t GraphHoldings::size() const {
    std::lock_guard lock(mutex_);
    return (first_ ? 1 : 0) + more_.size();
}

namespace {

struct Entry {
    CUstream stream;
    std::uint64_t capture_id;
    GraphHoldings* holdings;  // kept alive by the capture that registered the stream
};

struct Registry {
    std::mutex mutex;  // held for a short scan (a capture registers one stream, or a few)
    std::vector<Entry> entries;
    // Set, under `mutex`, while an action of run_outside_captures runs: registrations wait.
    std::atomic<bool> synchronizing{false};
};

// The counters change only under the registry's lock: a load and a store, no atomic
// read-modify-write, and readers outside the lock see one value or the next.
void count_registration(int change) noexcept {
    registry_generation.store(registry_generation.load(std::memory_order_relaxed) + 1,
                              std::memory_order_release);
    active_capture_streams.store(active_capture_streams.load(std::memory_order_relaxed) + change,
                                 std::memory_order_relaxed);
}

// Leaked on purpose: builders may be destroyed during exit.
Registry& registry() {
    static auto* instance = new Registry;
    return *instance;
}

}  // namespace

namespace {

// One synchronizer at a time (leaked, like the registry: the workers may use it during exit).
std::mutex& synchronizer_mutex() {
    static auto* mutex = new std::mutex;
    return *mutex;
}

// Under the registry's lock: a registration made before is counted in captures_active() when the
// flag is seen raised, and one attempted after waits until it is lowered.
void set_synchronizing(bool value) noexcept {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.synchronizing.store(value, std::memory_order_release);
}

}  // namespace

namespace {

// Calls attempt() while no capture can register (those registered before are counted in
// captures_active()), until it says it is done; between tries, sleeps a millisecond (captures
// are short). False when `give_up` said to stop first.
bool retry_outside_registrations(const std::function<bool()>& attempt, bool (*give_up)(void*),
                                 void* give_up_argument) noexcept {
    for (;;) {
        bool done = false;
        try {
            std::lock_guard lock(synchronizer_mutex());
            set_synchronizing(true);
            try {
                done = attempt();
            } catch (...) {
                done = true;  // ran all the same; nothing to report it to
            }
            set_synchronizing(false);
        } catch (...) {
            return false;  // a lock that cannot be taken: do nothing
        }
        if (done) return true;
        if (give_up(give_up_argument)) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace

bool run_outside_captures(const std::function<void()>& action, bool (*give_up)(void*),
                          void* give_up_argument) noexcept {
    return retry_outside_registrations(
        [&] {
            if (captures_active()) return false;
            action();
            return true;
        },
        give_up, give_up_argument);
}

bool synchronize_outside_captures(const DriverApi& api, bool (*give_up)(void*),
                                  void* give_up_argument) noexcept {
    return run_outside_captures([&api] { api.cuCtxSynchronize(); }, give_up, give_up_argument);
}

bool wait_for_stream_outside_captures(const DriverApi& api, CUstream stream,
                                      bool (*give_up)(void*), void* give_up_argument) noexcept {
    if (is_default_stream(stream)) return synchronize_outside_captures(api, give_up, give_up_argument);
    return retry_outside_registrations(
        [&] {
            CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
            // A stream the driver no longer knows has nothing queued to wait for.
            if (api.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS) return true;
            // Not while it captures, nor while a capture begun through cudacore runs anywhere:
            // nothing a capture records is touched by the wait then.
            if (status != CU_STREAM_CAPTURE_STATUS_NONE || captures_active()) return false;
            api.cuStreamSynchronize(stream);
            return true;
        },
        give_up, give_up_argument);
}

bool register_capture_stream(CUstream stream, std::uint64_t capture_id, GraphHoldings& holdings) {
    Registry& r = registry();
    for (;;) {
        {
            std::lock_guard lock(r.mutex);
            if (!r.synchronizing.load(std::memory_order_relaxed)) [[likely]] {
                for (const Entry& entry : r.entries)
                    if (entry.stream == stream) return false;
                r.entries.push_back({stream, capture_id, &holdings});
                count_registration(+1);
                return true;
            }
        }
        // An action that a capture must not overlap is running: wait for it outside the lock.
        while (r.synchronizing.load(std::memory_order_acquire)) std::this_thread::yield();
    }
}

void unregister_capture_stream(CUstream stream) noexcept {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto found = std::find_if(r.entries.begin(), r.entries.end(),
                              [&](const Entry& entry) { return entry.stream == stream; });
    if (found == r.entries.end()) return;
    r.entries.erase(found);
    count_registration(-1);
}

namespace {

// Calls use(holdings) with the registry locked (so that the capture cannot end and free them
// meanwhile) for the capture `stream` takes part in; false when there is none.
template <class Use>
bool with_capture_holdings(CUstream stream, Use&& use) {
    Registry& r = registry();
    {
        std::lock_guard lock(r.mutex);
        for (const Entry& entry : r.entries) {
            if (entry.stream == stream) {
                use(*entry.holdings);
                return true;
            }
        }
    }
    // Not a builder's stream: it may have joined a capture through an event. Rare, so the
    // capture ids of the registered streams are asked only now (and kept).
    const DriverApi* api = driver_if_loaded();
    if (!api) return false;
    const auto id_of = [api](CUstream of, cuuint64_t& id) {
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        return api->cuStreamGetCaptureInfo(of, &status, &id, nullptr, nullptr, nullptr,
                                           nullptr) == CUDA_SUCCESS &&
               status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    };
    cuuint64_t id = 0;
    if (!id_of(stream, id)) return false;
    std::lock_guard lock(r.mutex);
    for (Entry& entry : r.entries) {
        if (entry.capture_id == 0) {
            cuuint64_t known = 0;
            if (id_of(entry.stream, known)) entry.capture_id = known;
        }
        if (entry.capture_id == id) {
            use(*entry.holdings);
            return true;
        }
    }
    return false;
}

}  // namespace

bool held_last_for_capture(CUstream stream, const void* object) noexcept {
    const LastHeld& last = tls_address(last_held);
    return last.stream == stream && last.object == object &&
           last.generation == registry_generation.load(std::memory_order_acquire);
}

void hold_for_capture_now(CUstream stream, std::shared_ptr<const void> object) noexcept {
    const std::uint64_t generation = registry_generation.load(std::memory_order_acquire);
    try {
        const void* raw = object.get();
        if (with_capture_holdings(stream, [&](GraphHoldings& holdings) { holdings.add(std::move(object)); }))
            last_held = {stream, raw, generation};
    } catch (...) {
        // Out of memory while recording: the launch itself went through; nothing to undo.
    }
}

}  // namespace cudacore::detail
