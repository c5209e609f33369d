// A device's primary context as a whole: its state and flags (cuDevicePrimaryCtxGetState,
// cuDevicePrimaryCtxSetFlags). The reset, which must see the memory layer's default resources,
// is in src/memory/primary_context_reset.cpp.
#include "cudacore/primary_context.hpp"

#include "cudacore/errors.hpp"
#include "runtime/context_holders.hpp"
#include "runtime/runtime_handles.hpp"

#include <cstdio>
#include <mutex>
#include <vector>

namespace cudacore {

PrimaryContextState primary_context_state(const Device& device) {
    PrimaryContextState state;
    int active = 0;
    detail::check(detail::driver().cuDevicePrimaryCtxGetState(device.handle(), &state.flags, &active),
                  "cuDevicePrimaryCtxGetState",
                  [&] { return "primary context of device " + std::to_string(device.ordinal()); });
    state.active = active != 0;
    // Bits the options have no field for (coredump flags a tool set) are left out, as
    // Context::options() does.
    const unsigned known =
        CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_SYNC_MEMOPS;
    state.options = ContextOptions::from_flags(state.flags & known);
    return state;
}

unsigned primary_context_flags(const ContextOptions& options, const char* call) {
    if (options.sm_count)
        throw InvalidArgumentError(std::string(call) + ": ContextOptions::sm_count " +
                                   std::to_string(*options.sm_count) +
                                   " cannot be set on a primary context (an execution affinity is "
                                   "given only by Context::create); leave it unset");
    const unsigned scheduling = static_cast<unsigned>(options.scheduling);
    if (scheduling > static_cast<unsigned>(ContextScheduling::blocking_sync))
        throw InvalidArgumentError(std::string(call) + ": ContextOptions::scheduling is " +
                                   std::to_string(scheduling) +
                                   "; it must be automatic, spin, yield or blocking_sync");
    return options.flags();
}

void set_primary_context_options(const Device& device, const ContextOptions& options) {
    const unsigned flags = primary_context_flags(options, "set_primary_context_options");
    detail::check(detail::driver().cuDevicePrimaryCtxSetFlags(device.handle(), flags),
                  "cuDevicePrimaryCtxSetFlags", [&] {
                      return "primary context of device " + std::to_string(device.ordinal()) +
                             ", flags 0x" + [&] {
                                 char hex[16];
                                 std::snprintf(hex, sizeof hex, "%x", flags);
                                 return std::string(hex);
                             }();
                  });
}

namespace detail {

std::string describe_primary_holders(const ContextBox& primary, long holders) {
    std::string text = "primary context of device " + std::to_string(primary.ordinal) +
                       " is still held by " + std::to_string(holders) + " cudacore object" +
                       (holders == 1 ? "" : "s");
    std::vector<std::string> known;
    if (const int created = created_contexts_holding(primary))
        known.push_back(std::to_string(created) + " context" + (created == 1 ? "" : "s") +
                        " created on the device (Context::create)");
    if (const int peers = peer_accesses_holding(primary.ordinal))
        known.push_back(std::to_string(peers) + " peer access" + (peers == 1 ? "" : "es") +
                        " enabled with Device::enable_peer_access");
    text += " (";
    for (const std::string& part : known) text += part + "; ";
    text += known.empty() ? "" : "the others: ";
    text += "Context values, streams and events made in it and buffers allocated on them, memory "
            "resources and pools of the device, arrays, textures, graphs, loaded code)";
    return text;
}

}  // namespace detail

}  // namespace cudacore
