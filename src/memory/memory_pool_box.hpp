// What the copies of a MemoryPool share (cudacore/memory_pool.hpp), and the checks of a pool made
// elsewhere that DeviceMemoryResource::from_handle makes: the device such a pool belongs to, as
// the driver tells it.
#pragma once

#include "cudacore/memory_pool.hpp"
#include "loader/driver_api.hpp"

#include <cuda.h>

#include <memory>
#include <string>

namespace cudacore {

namespace detail {
struct ContextBox;
}  // namespace detail

// The pool, its name and what keeps it alive (the resource that destroys it, if any).
struct detail::MemoryPoolBox {
    CUmemoryPool handle = nullptr;
    std::string description;
    std::shared_ptr<const void> owner;  // null for a pool that outlives the program

    MemoryPoolBox(CUmemoryPool pool, std::string name, std::shared_ptr<const void> keeps_alive) noexcept
        : handle(pool), description(std::move(name)), owner(std::move(keeps_alive)) {}
    MemoryPoolBox(const MemoryPoolBox&) = delete;
    MemoryPoolBox& operator=(const MemoryPoolBox&) = delete;
};

namespace detail {

// Checks that device `ordinal` may own `pool`: it has read-write access to it (a pool's own
// device always has; the driver has no query for the owner itself). Throws InvalidArgumentError
// naming `call`, the pool and the access the device has when it has not; DriverError when the
// query fails.
void check_pool_device(CUmemoryPool pool, int ordinal, const DriverApi& api, const char* call);

// Whether `pool` is the default pool of device `ordinal`.
bool is_default_pool_of(CUmemoryPool pool, int ordinal, const DriverApi& api);

}  // namespace detail

}  // namespace cudacore
