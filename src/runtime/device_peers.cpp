// Several devices in one process: enumeration and peer access between primary contexts.
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "runtime/context_holders.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace cudacore {

int Device::count() { return system::device_count(); }

std::vector<Device> Device::all() {
    const int n = count();
    std::vector<Device> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) out.emplace_back(i);
    return out;
}

namespace {

std::string describe_pair(const Device& from, const Device& to) {
    return "peer access from device " + std::to_string(from.ordinal()) + " to device " +
           std::to_string(to.ordinal());
}

// Peer access enabled through cudacore, with both primary contexts kept retained while it is
// (the driver ties the access to those contexts). Leaked on purpose: usable at exit.
struct PeerAccessTable {
    std::mutex mutex;
    std::map<std::pair<int, int>, std::pair<Context, Context>> enabled;
};
PeerAccessTable& peer_table() {
    static auto* table = new PeerAccessTable;
    return *table;
}

}  // namespace

int detail::peer_accesses_holding(int ordinal) {
    auto& table = peer_table();
    std::lock_guard lock(table.mutex);
    int count = 0;
    for (const auto& [pair, contexts] : table.enabled)
        if (pair.first == ordinal || pair.second == ordinal) ++count;
    return count;
}

void Device::enable_peer_access(const Device& peer) const {
    if (peer == *this) return;
    auto& table = peer_table();
    std::lock_guard lock(table.mutex);
    if (table.enabled.count({ordinal_, peer.ordinal_})) return;
    if (!can_access_peer(peer))
        throw DriverError(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "cuDeviceCanAccessPeer",
                          describe_pair(*this, peer) +
                              " (the hardware does not support it between these devices)");
    Context mine = context();
    Context theirs = peer.context();
    detail::ContextScope scope(*detail::box_of(mine));
    const CUresult status = detail::driver().cuCtxEnablePeerAccess(theirs.handle(), 0);
    // Someone else (or the runtime API) may have enabled it already: same outcome.
    if (status != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        detail::check(status, "cuCtxEnablePeerAccess", [&] { return describe_pair(*this, peer); });
    table.enabled.emplace(std::pair{ordinal_, peer.ordinal_},
                          std::pair{std::move(mine), std::move(theirs)});
}

void Device::disable_peer_access(const Device& peer) const {
    if (peer == *this || !can_access_peer(peer)) return;  // nothing can have been enabled
    auto& table = peer_table();
    std::lock_guard lock(table.mutex);
    Context mine = context();
    Context theirs = peer.context();
    detail::ContextScope scope(*detail::box_of(mine));
    const CUresult status = detail::driver().cuCtxDisablePeerAccess(theirs.handle());
    if (status != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
        detail::check(status, "cuCtxDisablePeerAccess", [&] { return describe_pair(*this, peer); });
    table.enabled.erase({ordinal_, peer.ordinal_});
}

bool Device::is_peer_access_enabled(const Device& peer) const {
    if (peer == *this) return true;
    auto& table = peer_table();
    std::lock_guard lock(table.mutex);
    return table.enabled.count({ordinal_, peer.ordinal_}) != 0;
}

}  // namespace cudacore
