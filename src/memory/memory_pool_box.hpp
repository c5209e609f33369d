// What the copies of a MemoryPool share (cudacore/memory_pool.hpp), and the pools MemoryPool
// wraps itself (MemoryPool::from_handle): the device such a pool belongs to, as the driver tells
// it, and the box that destroys it when it was taken over.
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

// The pool, its name, what keeps it alive, and for a pool taken over by from_handle the
// context its release runs in.
struct detail::MemoryPoolBox {
    CUmemoryPool handle = nullptr;
    std::string description;
    std::shared_ptr<const void> owner;  // null for a pool that outlives the program
    // Set for a pool this box destroys (MemoryPool::from_handle with take_ownership): its
    // device's primary context, held so that the release follows the rules of the pools
    // cudacore creates (owned_pool.hpp: nothing destroyed at exit or after a device reset).
    std::shared_ptr<ContextBox> destroyed_in;

    MemoryPoolBox(CUmemoryPool pool, std::string name, std::shared_ptr<const void> keeps_alive,
                  std::shared_ptr<ContextBox> destroy_in = {}) noexcept
        : handle(pool), description(std::move(name)), owner(std::move(keeps_alive)),
          destroyed_in(std::move(destroy_in)) {}
    ~MemoryPoolBox();
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

// A MemoryPool over `pool` of device `ordinal`, named as one made elsewhere; with `context` (the
// device's primary context) the pool is destroyed when the last copy goes or at close().
MemoryPool wrap_memory_pool(CUmemoryPool pool, int ordinal, std::shared_ptr<ContextBox> context);

}  // namespace detail

}  // namespace cudacore
