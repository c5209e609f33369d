// Peer access between any two contexts of two devices (cuCtxEnablePeerAccess), created ones
// included; two primary contexts go through Device::enable_peer_access, which keeps them.
#include "cudacore/context_peer_access.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace cudacore {

namespace {

// Accesses enabled through these calls, by weak references: the table keeps no context alive,
// and an entry whose context went (the driver dropped the access with it) counts for nothing.
struct Enabled {
    std::weak_ptr<detail::ContextBox> from;
    std::weak_ptr<detail::ContextBox> to;
    bool is(const detail::ContextBox* a, const detail::ContextBox* b) const {
        auto x = from.lock(), y = to.lock();
        return x && y && x.get() == a && y.get() == b;
    }
};
struct ContextPeerTable {
    std::mutex mutex;
    std::vector<Enabled> enabled;
};
ContextPeerTable& context_peer_table() {
    static auto* table = new ContextPeerTable;  // leaked on purpose: usable at exit
    return *table;
}

std::string describe_pair(const detail::ContextBox& from, const detail::ContextBox& to) {
    return "peer access from " + detail::describe_context(from) + " to " +
           detail::describe_context(to);
}

// Both boxes, open; InvalidArgumentError naming `call` for a closed one or one device.
std::pair<std::shared_ptr<detail::ContextBox>, std::shared_ptr<detail::ContextBox>> open_pair(
    const Context& context, const Context& peer, const char* call) {
    auto from = detail::open_box_of(context, call);
    auto to = detail::open_box_of(peer, call);
    if (from.get() != to.get() && from->ordinal == to->ordinal)
        throw InvalidArgumentError(std::string(call) + ": " + detail::describe_context(*from) +
                                   " and " + detail::describe_context(*to) +
                                   " are on the same device; peer access is between contexts of "
                                   "two devices");
    return {std::move(from), std::move(to)};
}

}  // namespace

void enable_peer_access(const Context& context, const Context& peer) {
    // Named copies, not a structured binding: lambdas below capture them (clang 14 refuses a
    // binding in a capture).
    const auto pair = open_pair(context, peer, "enable_peer_access");
    const auto& from = pair.first;
    const auto& to = pair.second;
    if (from == to) return;
    if (from->retained && to->retained) return Device(from->ordinal).enable_peer_access(Device(to->ordinal));
    auto& table = context_peer_table();
    std::lock_guard lock(table.mutex);
    std::erase_if(table.enabled, [](const Enabled& e) { return e.from.expired() || e.to.expired(); });
    for (const Enabled& e : table.enabled)
        if (e.is(from.get(), to.get())) return;
    if (!Device(from->ordinal).can_access_peer(Device(to->ordinal)))
        throw DriverError(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "cuDeviceCanAccessPeer",
                          describe_pair(*from, *to) +
                              " (the hardware does not support it between these devices)");
    detail::ContextScope scope(*from);
    const CUresult status = detail::driver().cuCtxEnablePeerAccess(to->handle, 0);
    if (status != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)  // enabled elsewhere: same outcome
        detail::check(status, "cuCtxEnablePeerAccess", [&] { return describe_pair(*from, *to); });
    table.enabled.push_back({from, to});
}

void disable_peer_access(const Context& context, const Context& peer) {
    // Named copies, not a structured binding: lambdas below capture them (clang 14 refuses a
    // binding in a capture).
    const auto pair = open_pair(context, peer, "disable_peer_access");
    const auto& from = pair.first;
    const auto& to = pair.second;
    if (from == to) return;
    if (from->retained && to->retained) return Device(from->ordinal).disable_peer_access(Device(to->ordinal));
    auto& table = context_peer_table();
    std::lock_guard lock(table.mutex);
    detail::ContextScope scope(*from);
    const CUresult status = detail::driver().cuCtxDisablePeerAccess(to->handle);
    if (status != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
        detail::check(status, "cuCtxDisablePeerAccess", [&] { return describe_pair(*from, *to); });
    std::erase_if(table.enabled, [&](const Enabled& e) {
        return e.is(from.get(), to.get()) || e.from.expired() || e.to.expired();
    });
}

bool is_peer_access_enabled(const Context& context, const Context& peer) {
    const auto& from = detail::box_of(context);
    const auto& to = detail::box_of(peer);
    if (!from || !to) return false;
    if (from == to) return true;
    if (from->retained && to->retained)
        return Device(from->ordinal).is_peer_access_enabled(Device(to->ordinal));
    auto& table = context_peer_table();
    std::lock_guard lock(table.mutex);
    for (const Enabled& e : table.enabled)
        if (e.is(from.get(), to.get())) return true;
    return false;
}

}  // namespace cudacore
