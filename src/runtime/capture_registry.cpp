#include "runtime/capture_registry.hpp"

#include <algorithm>

namespace cudacore::detail {

std::atomic<int> active_capture_streams{0};

void GraphHoldings::add(std::shared_ptr<const void> object) {
    if (!object) return;
    std::lock_guard lock(mutex_);
    // Captures add the same library once per launch: the newest entry is the likely match.
    if (std::find(objects_.rbegin(), objects_.rend(), object) != objects_.rend()) return;
    objects_.push_back(std::move(object));
}

void GraphHoldings::add_all(const GraphHoldings& other) {
    if (&other == this) return;
    std::vector<std::shared_ptr<const void>> copy;
    {
        std::lock_guard lock(other.mutex_);
        copy = other.objects_;
    }
    for (auto& object : copy) add(std::move(object));
}

std::size_t GraphHoldings::size() const {
    std::lock_guard lock(mutex_);
    return objects_.size();
}

namespace {

struct Entry {
    CUstream stream;
    std::uint64_t capture_id;
    std::shared_ptr<GraphHoldings> holdings;
};

struct Registry {
    std::mutex mutex;
    std::vector<Entry> entries;
};

// Leaked on purpose: builders may be destroyed during exit.
Registry& registry() {
    static auto* instance = new Registry;
    return *instance;
}

}  // namespace

void register_capture_stream(CUstream stream, std::uint64_t capture_id,
                             std::shared_ptr<GraphHoldings> holdings) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    for (Entry& entry : r.entries) {
        if (entry.stream == stream) {
            entry.capture_id = capture_id;
            entry.holdings = std::move(holdings);
            return;
        }
    }
    r.entries.push_back({stream, capture_id, std::move(holdings)});
    active_capture_streams.fetch_add(1, std::memory_order_relaxed);
}

void unregister_capture_stream(CUstream stream) noexcept {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto found = std::find_if(r.entries.begin(), r.entries.end(),
                              [&](const Entry& entry) { return entry.stream == stream; });
    if (found == r.entries.end()) return;
    r.entries.erase(found);
    active_capture_streams.fetch_sub(1, std::memory_order_relaxed);
}

std::shared_ptr<GraphHoldings> capture_holdings(CUstream stream) {
    Registry& r = registry();
    {
        std::lock_guard lock(r.mutex);
        for (const Entry& entry : r.entries)
            if (entry.stream == stream) return entry.holdings;
    }
    // Not a builder's stream: it may have joined a capture through an event. Rare, so the
    // capture ids of the registered streams are asked only now (and kept).
    const DriverApi* api = driver_if_loaded();
    if (!api) return nullptr;
    const auto id_of = [api](CUstream of, cuuint64_t& id) {
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        return api->cuStreamGetCaptureInfo(of, &status, &id, nullptr, nullptr, nullptr,
                                           nullptr) == CUDA_SUCCESS &&
               status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    };
    cuuint64_t id = 0;
    if (!id_of(stream, id)) return nullptr;
    std::lock_guard lock(r.mutex);
    for (Entry& entry : r.entries) {
        if (entry.capture_id == 0) {
            cuuint64_t known = 0;
            if (id_of(entry.stream, known)) entry.capture_id = known;
        }
        if (entry.capture_id == id) return entry.holdings;
    }
    return nullptr;
}

void hold_for_capture(CUstream stream, std::shared_ptr<const void> object) noexcept {
    try {
        if (auto holdings = capture_holdings(stream)) holdings->add(std::move(object));
    } catch (...) {
        // Out of memory while recording: the launch itself went through; nothing to undo.
    }
}

}  // namespace cudacore::detail
