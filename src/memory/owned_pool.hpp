// Pools cudacore creates (cuMemPoolCreate) for owned, IPC and pinned pool resources.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

namespace cudacore::detail {

struct ContextBox;
class LaunchStreams;

// cuMemPoolCreate with `location`, `max_size` (0: driver default) and `handle_types`; throws
// DriverError naming `object`.
CUmemoryPool create_pool(const CUmemLocation& location, std::size_t max_size,
                         unsigned handle_types, const std::string& object);

// The place a resource that destroys its pool keeps the streams its memory was freed on
// (MemoryResource::free_streams_).
std::shared_ptr<LaunchStreams> make_free_streams();

// Destroys `pool` (of `context`) once the frees queued on the streams in `free_streams` have run:
// at once when there are none, else on the release thread (runtime/release/release.hpp; the context held
// until then; left to the driver at exit). Nothing is destroyed after someone reset the device.
// The driver allows destroying a pool whose frees have not run yet, but on the H100 (driver 580)
// doing so corrupted the process's heap or crashed a driver thread now and then (the
// adopted-stream teardown: 14 of 48 processes of 25 rounds each). Never throws.
void destroy_pool_after_frees(CUmemoryPool pool, std::shared_ptr<ContextBox> context,
                              LaunchStreams* free_streams) noexcept;

}  // namespace cudacore::detail
