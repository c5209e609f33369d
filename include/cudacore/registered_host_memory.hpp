/// @file
/// Host memory the caller allocated (malloc, std::vector, mmap) page-locked and mapped for the
/// devices (cuMemHostRegister), as a Buffer that kernels may read and write and that copies at DMA
/// speed. The memory is unregistered (cuMemHostUnregister) when the last copy of the Buffer goes
/// or at close(), after waiting for the stream it is ordered on; it is never freed: the caller
/// keeps it valid until then and frees it afterwards.
///
/// The Buffer holds the primary context of `device` (registration is portable to every context).
/// Thread-safe like any Buffer.
#pragma once

#include "cudacore/buffer.hpp"

#include <cstddef>

namespace cudacore {

class Device;

/// Options of register_host_memory().
struct HostRegisterOptions {
    /// CU_MEMHOSTREGISTER_READ_ONLY: devices only read the memory (needs
    /// CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED).
    bool read_only = false;
};

/// Throws InvalidArgumentError for a null pointer, size 0 or read_only on a device that cannot,
/// DriverError when registration fails (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED for memory
/// registered twice), NoDriverError.
Buffer register_host_memory(void* pointer, std::size_t size, const Device& device,
                            const HostRegisterOptions& options = {});

}  // namespace cudacore
