// What holds a device's primary context, for the refusal of a reset (reset_primary_context,
// src/memory/primary_context_reset.cpp) that names what is alive.
#pragma once

#include "runtime/runtime_handles.hpp"

#include <memory>
#include <string>

namespace cudacore::detail {

// The primary context of device `ordinal` when cudacore retained it and still hands it out, else
// null; retains nothing.
std::shared_ptr<ContextBox> retained_primary_context(int ordinal);

// How many contexts made by Context::create, still alive, hold `primary` (each holds its
// device's primary context: context_creation.cpp).
int created_contexts_holding(const ContextBox& primary);

// How many peer accesses enabled through Device::enable_peer_access hold device `ordinal`'s
// primary context (either side: device_peers.cpp keeps both retained while enabled).
int peer_accesses_holding(int ordinal);

// "primary context of device N is still held by H cudacore objects (...)": the kinds it can
// tell, for the refusal's message.
std::string describe_primary_holders(const ContextBox& primary, long holders);

}  // namespace cudacore::detail
