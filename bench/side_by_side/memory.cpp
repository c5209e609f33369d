// Side by side, memory (needs a GPU): stream-ordered 1 MiB allocate + free from the device's
// default pool.
#include "side_by_side/areas.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "loader/driver_api.hpp"

#include <cstdint>
#include <memory>

namespace cudacore::bench::side_by_side {

const std::vector<std::string> memory_operation_names = {"alloc_free_1mib"};

void memory_operations(Runner& runner, const Device& device, const Stream& stream) {
    const auto& api = detail::driver();
    const CUstream raw_stream = stream.handle();
    // The pool keeps freed memory across synchronisations (release threshold raised for both
    // sides alike), so the figure is the pool's and the wrapper's cost, not the driver reserving
    // memory again.
    auto resource = std::dynamic_pointer_cast<DeviceMemoryResource>(device.memory_resource());
    if (resource) resource->set_release_threshold(UINT64_MAX);
    constexpr std::size_t allocation_size = 1 << 20;
    constexpr int allocations_per_batch = 32;
    runner.compare(
        "alloc_free_1mib", {5, 300},
        {{"raw",
          [&] {
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < allocations_per_batch; ++i) {
                      CUdeviceptr pointer = 0;
                      detail::check(api.cuMemAllocAsync(&pointer, allocation_size, raw_stream),
                                    "cuMemAllocAsync");
                      detail::check(api.cuMemFreeAsync(pointer, raw_stream), "cuMemFreeAsync");
                  }
              });
              stream.sync();
              return ns / allocations_per_batch;
          },
          "cuMemAllocAsync + cuMemFreeAsync (default pool)"},
         {"cudacore", [&] {
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < allocations_per_batch; ++i) {
                      Buffer buffer = device.allocate(allocation_size, stream);
                      buffer.close(stream);
                  }
              });
              stream.sync();
              return ns / allocations_per_batch;
          },
          "Device::allocate + Buffer::close(stream) (default pool)"}});
    stream.sync();
}

}  // namespace cudacore::bench::side_by_side
