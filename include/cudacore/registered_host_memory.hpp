/// @file
/// Host memory the caller allocated, page-locked and mapped for the devices as a Buffer holding
/// `device`'s primary context; unregistered when its last copy goes (or at close()), never freed:
/// the caller keeps the memory valid until then. Thread-safe like any Buffer.
#pragma once

#include "cudacore/buffer.hpp"

#include <cstddef>

namespace cudacore {

class Device;

/// Options of register_host_memory().
struct HostRegisterOptions {
    /// Devices only read the memory (needs READ_ONLY_HOST_REGISTER_SUPPORTED).
    bool read_only = false;
};

/// Registers `size` bytes at `pointer`. InvalidArgumentError, DriverError, NoDriverError.
Buffer register_host_memory(void* pointer, std::size_t size, const Device& device,
                            const HostRegisterOptions& options = {});

}  // namespace cudacore
