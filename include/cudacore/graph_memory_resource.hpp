/// @file
/// GraphMemoryResource: memory allocated inside graphs (cuMemAllocAsync while a stream captures),
/// and the device's graph memory statistics and trim. More: docs/design/memory-resources.md.
///
///     auto graph_memory = std::make_shared<GraphMemoryResource>(device);
///     GraphBuilder builder = stream.begin_capture();
///     Buffer scratch = graph_memory->allocate(bytes, builder);   // an allocation node
///     launch(builder, config, kernel, scratch, n);
///     scratch.close(builder);                                    // a free node
///     GraphExec exec = builder.end().instantiate();
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/context.hpp"
#include "cudacore/memory_resource.hpp"

#include <cuda.h>

#include <cstdint>
#include <memory>

namespace cudacore {

class Device;

/// Bytes used by and reserved for graph allocations, now and at their highest since a reset.
struct GraphMemoryStats {
    std::uint64_t used_current = 0;      ///< CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT
    std::uint64_t used_high = 0;         ///< CU_GRAPH_MEM_ATTR_USED_MEM_HIGH
    std::uint64_t reserved_current = 0;  ///< CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT
    std::uint64_t reserved_high = 0;     ///< CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH
};

/// Memory allocated inside a graph capture: only on a capturing stream, existing between the
/// allocation and the free node (close buffers inside the capture, or instantiate with
/// auto_free_on_launch). Create it with std::make_shared. Thread-safe; DriverError when the driver
/// refuses.
class GraphMemoryResource final : public BuiltinMemoryResource<true, false> {
public:
    /// Graph memory of `device`; holds its primary context.
    explicit GraphMemoryResource(const Device& device);
    ~GraphMemoryResource() override;

    GraphMemoryStats stats() const;  ///< the device's graph memory figures, in bytes
    void reset_high_watermarks();  ///< sets used_high and reserved_high back to the current values
    /// Gives memory reserved for graphs and not in use back to the driver.
    void trim();

    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;
    /// trim(), so the device's unused graph memory goes back to the driver.
    void do_close() override;

private:
    Context context_;
    CUdevice device_ = 0;
};

}  // namespace cudacore
