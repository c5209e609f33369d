/// @file
/// Kernel: one kernel of a loaded library (a context-independent CUkernel), with its attributes,
/// occupancy and parameter layout. Get one from ObjectCode::get_kernel or Kernel::from_handle.
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/device.hpp"
#include "cudacore/launch_config.hpp"

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace cudacore {

/// Where one kernel parameter lives in the parameter buffer.
struct KernelParameter {
    std::size_t offset = 0;  ///< byte offset in the parameter buffer
    std::size_t size = 0;    ///< its size in bytes
    bool operator==(const KernelParameter&) const = default;  ///< equal when every field is
};

/// Everything cuKernelGetAttribute reports for one device, by CU_FUNC_ATTRIBUTE_ name.
struct KernelAttributes {
    int max_threads_per_block = 0;  ///< most threads per block a launch may use
    int shared_size_bytes = 0;  ///< static shared memory, bytes
    int const_size_bytes = 0;   ///< user constant memory, bytes
    int local_size_bytes = 0;   ///< local memory per thread, bytes
    int num_registers = 0;      ///< registers per thread
    int ptx_version = 0;     ///< major * 10 + minor
    int binary_version = 0;  ///< major * 10 + minor
    int cache_mode_ca = 0;   ///< 1 when compiled with -Xptxas -dlcm=ca
    int max_dynamic_shared_size_bytes = 0;     ///< most a launch may ask for, bytes
    int preferred_shared_memory_carveout = 0;  ///< percent of the maximum
    int cluster_size_must_be_set = 0;          ///< 1 when a launch must give a cluster size
    int required_cluster_width = 0;            ///< required cluster width in blocks, 0 for none
    int required_cluster_height = 0;  ///< required cluster height in blocks, 0 for none
    int required_cluster_depth = 0;   ///< required cluster depth in blocks, 0 for none
    int non_portable_cluster_size_allowed = 0;  ///< 1 when clusters over 8 blocks are allowed
    int cluster_scheduling_policy_preference = 0;  ///< a CUclusterSchedulingPolicy value
};

/// The block size that maximises occupancy, and the grid that fills the device with it.
struct BlockSizeSuggestion {
    int min_grid_size = 0;  ///< blocks needed to fill the device at that block size
    int block_size = 0;     ///< threads per block that maximise occupancy
};

class Kernel;
class ObjectCode;

/// Occupancy of a kernel on one device, computed in that device's primary context; holds the
/// kernel and the context. Thread-safe; DriverError naming the call, kernel and device.
class KernelOccupancy {
public:
    /// Blocks of `block_size` threads that fit on one multiprocessor at once.
    int max_active_blocks_per_multiprocessor(int block_size,
                                             std::size_t dynamic_shared_memory_bytes = 0) const;
    /// The block size that maximises occupancy, at most `block_size_limit` (0: the kernel's).
    BlockSizeSuggestion max_potential_block_size(std::size_t dynamic_shared_memory_bytes = 0,
                                                 int block_size_limit = 0) const;
    /// Dynamic shared memory as a function of the block size.
    BlockSizeSuggestion max_potential_block_size(CUoccupancyB2DSize shared_memory_for_block_size,
                                                 int block_size_limit = 0) const;
    /// Dynamic shared memory left to each block when `blocks_per_multiprocessor` share an SM.
    std::size_t available_dynamic_shared_memory_per_block(int blocks_per_multiprocessor,
                                                          int block_size) const;
    /// For `config`'s grid, block and shared memory (its cluster is ignored).
    int max_potential_cluster_size(const LaunchConfig& config) const;
    /// For `config` with its cluster (a cluster of 1 x 1 x 1 means the kernel's own, if any).
    int max_active_clusters(const LaunchConfig& config) const;

    const Device& device() const noexcept { return device_; }  ///< the device these figures are for

private:
    friend class Kernel;
    KernelOccupancy(std::shared_ptr<detail::KernelBox> kernel, Device device,
                    std::shared_ptr<detail::ContextBox> context)
        : kernel_(std::move(kernel)), device_(device), context_(std::move(context)) {}
    std::shared_ptr<detail::KernelBox> kernel_;
    Device device_;
    std::shared_ptr<detail::ContextBox> context_;
};

/// One kernel of a loaded library. Copies share it; it holds its library, loaded while any Kernel
/// lives and its launches may run. Attributes are per device (Device::current() by default); set
/// them through set_attribute so launch()'s cached limits stay exact. Thread-safe; DriverError
/// naming the call, kernel and device; NoDriverError.
class Kernel {
public:
    /// Wraps a kernel the caller loaded and keeps loaded while the Kernel is used.
    static Kernel from_handle(CUkernel kernel);
    /// Wraps a kernel of `code`'s library, holding it (InvalidArgumentError when it is not one).
    static Kernel from_handle(CUkernel kernel, const ObjectCode& code);

    /// The driver's handle (null for a moved-from Kernel); valid while the Kernel lives.
    CUkernel handle() const noexcept;
    /// The name it was asked for by (a name expression such as "scale<float>", or a plain name).
    const std::string& name() const noexcept;
    /// The name in the code (mangled for C++ kernels not declared extern "C").
    const std::string& lowered_name() const noexcept;
    /// "kernel 'saxpy' (cubin 'saxpy' (5120 bytes))", made on the first call.
    const std::string& description() const;

    /// Parameter layout, queried from the driver once, on first use.
    const std::vector<KernelParameter>& parameters() const;
    std::size_t parameter_count() const { return parameters().size(); }  ///< parameters().size()

    /// One attribute on `device`.
    int attribute(CUfunction_attribute attribute, const Device& device = Device::current()) const;
    /// Every attribute on `device`.
    KernelAttributes attributes(const Device& device = Device::current()) const;
    /// Most threads per block on `device`; asked once per device.
    int max_threads_per_block(const Device& device = Device::current()) const;
    /// Registers per thread on `device`.
    int num_registers(const Device& device = Device::current()) const;
    /// Static shared memory per block on `device`, in bytes.
    int shared_size_bytes(const Device& device = Device::current()) const;
    /// Constant memory the kernel uses on `device`, in bytes.
    int const_size_bytes(const Device& device = Device::current()) const;
    /// Local memory per thread on `device`, in bytes.
    int local_size_bytes(const Device& device = Device::current()) const;
    /// PTX version the kernel was compiled for, major * 10 + minor.
    int ptx_version(const Device& device = Device::current()) const;
    /// Binary architecture of the loaded code on `device`, major * 10 + minor.
    int binary_version(const Device& device = Device::current()) const;
    /// Most dynamic shared memory per block a launch on `device` may ask for, in bytes.
    int max_dynamic_shared_size_bytes(const Device& device = Device::current()) const;

    /// cuKernelSetAttribute for one device.
    void set_attribute(CUfunction_attribute attribute, int value,
                       const Device& device = Device::current()) const;
    /// Allows launches with up to `bytes` of dynamic shared memory (over 48 KB needs this).
    void set_max_dynamic_shared_size_bytes(int bytes,
                                           const Device& device = Device::current()) const;

    /// Occupancy queries on `device`; the result holds this kernel and the primary context.
    KernelOccupancy occupancy(const Device& device = Device::current()) const;

    /// The same kernel.
    bool operator==(const Kernel& other) const noexcept { return handle() == other.handle(); }

private:
    friend struct detail::BoxAccess;
    explicit Kernel(std::shared_ptr<detail::KernelBox> box) noexcept : box_(std::move(box)) {}
    std::shared_ptr<detail::KernelBox> box_;
};

}  // namespace cudacore
