// Side by side, memory (needs a GPU): stream-ordered 1 MiB allocate + free from the device's
// default pool; a copy of part of a buffer (slices against the raw copy of the same range); the
// attributes of an address (every field of PointerAttributes against the raw query of the same
// attributes).
#include "side_by_side/areas.hpp"
#include "pointer_attribute_list.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "loader/driver_api.hpp"

#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace cudacore::bench::side_by_side {

const std::vector<std::string> memory_operation_names = {"alloc_free_1mib", "slice_copy_64kib",
                                                          "pointer_attributes"};

namespace {

// 64 KiB from byte 128 KiB of one 1 MiB buffer to byte 512 KiB of another, 32 times a batch:
// cudacore makes both slices each time (what a user writes), raw adds the offsets.
void slice_copy_row(Runner& runner, const Device& device, const Stream& stream) {
    const auto& api = detail::driver();
    constexpr std::size_t size = 64 << 10, from = 128 << 10, to = 512 << 10;
    constexpr int copies_per_batch = 32;
    const Buffer source = device.allocate(1 << 20, stream);
    const Buffer destination = device.allocate(1 << 20, stream);
    stream.sync();
    runner.compare(
        "slice_copy_64kib", {5, 300},
        {{"raw",
          [&] {
              const CUdeviceptr s = source.handle() + from, d = destination.handle() + to;
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < copies_per_batch; ++i)
                      detail::check(api.cuMemcpyAsync(d, s, size, stream.handle()), "cuMemcpyAsync");
              });
              stream.sync();
              return ns / copies_per_batch;
          },
          "cuMemcpyAsync(destination + offset, source + offset, 64 KiB)"},
         {"cudacore", [&] {
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < copies_per_batch; ++i)
                      slice(destination, to, size).copy_from(slice(source, from, size), stream);
              });
              stream.sync();
              return ns / copies_per_batch;
          },
          "slice(destination, offset, 64 KiB).copy_from(slice(source, ...), stream)"}});
}

// Every attribute PointerAttributes has, of an address inside a pool allocation.
void pointer_attributes_row(Runner& runner, const Device& device, const Stream& stream) {
    const auto& api = detail::driver();
    const Buffer buffer = device.allocate(1 << 20, stream);
    stream.sync();
    const CUdeviceptr address = buffer.handle() + 4096;
    constexpr int queries_per_batch = 64;
    runner.compare(
        "pointer_attributes", {5, 300},
        {{"raw",
          [&] {
              unsigned type = 0, managed = 0, mapped = 0, legacy = 0;
              CUcontext context = nullptr;
              int ordinal = 0;
              CUdeviceptr device_pointer = 0, start = 0;
              void* host = nullptr;
              std::size_t range = 0;
              CUmemoryPool pool = nullptr;
              unsigned long long id = 0;
              void* values[] = {&type, &managed, &context, &ordinal, &device_pointer, &host,
                                &start, &range, &pool, &id, &mapped, &legacy};
              static_assert(std::size(values) == bench::raw_pointer_attribute_count);
              return nanoseconds([&] {
                         for (int i = 0; i < queries_per_batch; ++i)
                             detail::check(api.cuPointerGetAttributes(bench::raw_pointer_attribute_count,
                                                                      bench::raw_pointer_attributes, values, address),
                                           "cuPointerGetAttributes");
                     }) / queries_per_batch;
          },
          "cuPointerGetAttributes of the same 12 attributes"},
         {"cudacore", [&] {
              std::size_t sink = 0;
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < queries_per_batch; ++i)
                      sink += pointer_attributes(address).range_size;
              });
              if (sink == 0) throw std::runtime_error("pointer_attributes found no range");
              return ns / queries_per_batch;
          },
          "pointer_attributes(address)"}});
}

}  // namespace

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
    slice_copy_row(runner, device, stream);
    pointer_attributes_row(runner, device, stream);
}

}  // namespace cudacore::bench::side_by_side
