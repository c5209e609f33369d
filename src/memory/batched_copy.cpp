#include "cudacore/batched_copy.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "memory/buffer_box.hpp"

#include <optional>
#include <vector>

namespace cudacore {

namespace {

std::string describe_pair(std::size_t index, const BufferCopy& copy) {
    return "copy " + std::to_string(index) + " from " + copy.source.description() + " to " +
           copy.destination.description();
}

}  // namespace

void copy_batch(std::span<const BufferCopy> copies, const Stream& stream,
                const BatchedCopyOptions& options) {
    if (copies.empty()) return;
    std::vector<CUdeviceptr> sources(copies.size()), destinations(copies.size());
    std::vector<std::size_t> sizes(copies.size());
    for (std::size_t i = 0; i < copies.size(); ++i) {
        const BufferCopy& copy = copies[i];
        if (copy.source.is_closed() || copy.destination.is_closed())
            throw InvalidArgumentError("copy_batch: a buffer is closed in " + describe_pair(i, copy));
        if (copy.source.size() != copy.destination.size())
            throw InvalidArgumentError("copy_batch: sizes differ in " + describe_pair(i, copy));
        sources[i] = copy.source.handle();
        destinations[i] = copy.destination.handle();
        sizes[i] = copy.source.size();
    }
    const auto& api = detail::driver();
    const auto& box = stream.box();
    std::optional<detail::ContextScope> scope;
    if (detail::is_default_stream(stream.handle())) {
        if (box && box->context) scope.emplace(*box->context);
        for (std::size_t i = 0; i < copies.size(); ++i)
            detail::check(api.cuMemcpyAsync(destinations[i], sources[i], sizes[i], stream.handle()),
                          "cuMemcpyAsync", [&] { return describe_pair(i, copies[i]); });
        return;
    }
    // One attribute for every copy: sources are read in stream order.
    CUmemcpyAttributes attributes{};
    attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    attributes.flags = options.prefer_overlap_with_compute ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
                                                           : CU_MEMCPY_FLAG_DEFAULT;
    std::size_t first = 0;
    detail::check(api.cuMemcpyBatchAsync(destinations.data(), sources.data(), sizes.data(),
                                         copies.size(), &attributes, &first, 1, stream.handle()),
                  "cuMemcpyBatchAsync", [&] {
                      return std::to_string(copies.size()) + " copies (first " +
                             describe_pair(0, copies[0]) + ")";
                  });
}

void Buffer::fill_uint16(std::uint16_t pattern, const Stream& stream) const {
    detail::BufferBox& box = open_box("fill_uint16");
    check_multiple_of(2, "fill_uint16");
    const auto& stream_box = stream.box();
    std::optional<detail::ContextScope> scope;
    if (stream_box && stream_box->context && detail::is_default_stream(stream.handle()))
        scope.emplace(*stream_box->context);
    detail::check(detail::driver().cuMemsetD16Async(box.handle, pattern, box.size / 2, stream.handle()),
                  "cuMemsetD16Async", [&] { return description(); });
}

}  // namespace cudacore
