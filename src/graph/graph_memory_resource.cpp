#include "cudacore/graph_memory_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "memory/buffer_box.hpp"
#include "support/box_access.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"

#include <cstdio>

namespace cudacore {

GraphMemoryResource::GraphMemoryResource(const Device& device)
    : BuiltinMemoryResource(device.ordinal()),
      context_(detail::BoxAccess::make<Context>(detail::primary_context(device.ordinal()))),
      device_(device.handle()) {}

GraphMemoryResource::~GraphMemoryResource() = default;

std::string GraphMemoryResource::description() const {
    return "graph memory of device " + std::to_string(ordinal_);
}

CUdeviceptr GraphMemoryResource::do_allocate(std::size_t size, CUstream stream) {
    const auto& api = detail::driver();
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    const auto describe = [&] {
        char text[96];
        std::snprintf(text, sizeof text, "%zu bytes on stream %p from ", size,
                      static_cast<void*>(stream));
        return text + description();
    };
    if (detail::is_default_stream(stream))
        throw InvalidArgumentError("GraphMemoryResource::allocate: " + describe() +
                                   ": a default stream cannot capture");
    detail::check(api.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing", describe);
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        throw InvalidArgumentError("GraphMemoryResource::allocate: " + describe() +
                                   ": the stream is not capturing a graph (allocate from a "
                                   "GraphBuilder's stream between begin() and end())");
    CUdeviceptr pointer = 0;
    detail::check(api.cuMemAllocAsync(&pointer, size, stream), "cuMemAllocAsync", describe);
    return pointer;
}

void GraphMemoryResource::do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) {
    const detail::DriverApi* api = detail::driver_for_release(*detail::box_of(context_));
    if (!api) return;
    CUresult status;
    if (detail::is_default_stream(stream)) {
        detail::ContextScope scope(*detail::box_of(context_));
        status = api->cuMemFreeAsync(pointer, stream);
    } else {
        // Inside a capture: a free node; after it: freed in stream order outside the graph.
        status = api->cuMemFreeAsync(pointer, stream);
    }
    detail::check(status, "cuMemFreeAsync",
                  [&] { return std::to_string(size) + " bytes to " + description(); });
}

GraphMemoryStats GraphMemoryResource::stats() const {
    const auto& api = detail::driver();
    GraphMemoryStats stats;
    const auto get = [&](CUgraphMem_attribute attribute, std::uint64_t& out, const char* name) {
        cuuint64_t value = 0;
        detail::check(api.cuDeviceGetGraphMemAttribute(device_, attribute, &value),
                      "cuDeviceGetGraphMemAttribute",
                      [&] { return std::string(name) + " of " + description(); });
        out = value;
    };
    get(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, stats.used_current, "used memory");
    get(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, stats.used_high, "used memory high watermark");
    get(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, stats.reserved_current, "reserved memory");
    get(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, stats.reserved_high, "reserved memory high watermark");
    return stats;
}

void GraphMemoryResource::reset_high_watermarks() {
    const auto& api = detail::driver();
    // Only zero is accepted: it resets the watermark to the current value.
    for (CUgraphMem_attribute attribute :
         {CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH}) {
        cuuint64_t zero = 0;
        detail::check(api.cuDeviceSetGraphMemAttribute(device_, attribute, &zero),
                      "cuDeviceSetGraphMemAttribute",
                      [&] { return "high watermark of " + description(); });
    }
}

void GraphMemoryResource::do_close() { trim(); }

void GraphMemoryResource::trim() {
    detail::ContextScope scope(*detail::box_of(context_));
    detail::check(detail::driver().cuDeviceGraphMemTrim(device_), "cuDeviceGraphMemTrim",
                  [&] { return description(); });
}

}  // namespace cudacore
