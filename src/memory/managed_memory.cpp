#include "cudacore/managed_memory.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "memory/buffer_box.hpp"
#include "memory/buffer_context.hpp"
#include "memory/managed_advice.hpp"
#include "support/box_access.hpp"
#include "support/enum_text.hpp"

#include <optional>

namespace cudacore {

namespace {

const char* advice_name(ManagedAdvice advice) {
    switch (advice) {
        case ManagedAdvice::set_read_mostly: return "CU_MEM_ADVISE_SET_READ_MOSTLY";
        case ManagedAdvice::unset_read_mostly: return "CU_MEM_ADVISE_UNSET_READ_MOSTLY";
        case ManagedAdvice::set_preferred_location: return "CU_MEM_ADVISE_SET_PREFERRED_LOCATION";
        case ManagedAdvice::unset_preferred_location: return "CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION";
        case ManagedAdvice::set_accessed_by: return "CU_MEM_ADVISE_SET_ACCESSED_BY";
        case ManagedAdvice::unset_accessed_by: return "CU_MEM_ADVISE_UNSET_ACCESSED_BY";
    }
    return "?";
}

CUmem_advise advice_value(ManagedAdvice advice) {
    switch (advice) {
        case ManagedAdvice::set_read_mostly: return CU_MEM_ADVISE_SET_READ_MOSTLY;
        case ManagedAdvice::unset_read_mostly: return CU_MEM_ADVISE_UNSET_READ_MOSTLY;
        case ManagedAdvice::set_preferred_location: return CU_MEM_ADVISE_SET_PREFERRED_LOCATION;
        case ManagedAdvice::unset_preferred_location: return CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION;
        case ManagedAdvice::set_accessed_by: return CU_MEM_ADVISE_SET_ACCESSED_BY;
        case ManagedAdvice::unset_accessed_by: return CU_MEM_ADVISE_UNSET_ACCESSED_BY;
    }
    return CU_MEM_ADVISE_SET_READ_MOSTLY;
}

CUresult advise_raw(CUdeviceptr pointer, std::size_t size, ManagedAdvice advice,
                    const MemoryLocation& location) {
    return detail::driver().cuMemAdvise(pointer, size, advice_value(advice), location.to_driver());
}

// The batched calls want a current context too (the legacy default stream means the current
// context's): the stream's own when it has one, else the first buffer's.
class BatchContext {
public:
    BatchContext(const Stream& stream, const Buffer& first) {
        stream.check_open("prefetch_batch / discard_batch");
        const auto& box = detail::box_of(stream);
        if (box && box->context) scope_.emplace(*box->context);
        else buffer_.emplace(first);
    }

private:
    std::optional<detail::ContextScope> scope_;
    std::optional<detail::BufferContext> buffer_;
};

struct Batch {
    std::vector<CUdeviceptr> pointers;
    std::vector<std::size_t> sizes;
};

Batch gather(std::span<const Buffer> buffers, const char* operation) {
    Batch batch;
    batch.pointers.reserve(buffers.size());
    batch.sizes.reserve(buffers.size());
    for (const Buffer& buffer : buffers) {
        if (buffer.is_closed())
            throw InvalidArgumentError(std::string(operation) + ": " + buffer.description() +
                                       " is closed");
        batch.pointers.push_back(buffer.handle());
        batch.sizes.push_back(buffer.size());
    }
    return batch;
}

std::string describe_batch(std::span<const Buffer> buffers) {
    std::string out = std::to_string(buffers.size()) + " buffers";
    if (!buffers.empty()) out += " (first " + buffers.front().description() + ")";
    return out;
}

}  // namespace

namespace detail {

void apply_managed_options(CUdeviceptr pointer, std::size_t size,
                           const ManagedMemoryResourceOptions& options,
                           const std::function<std::string()>& describe) {
    auto apply = [&](ManagedAdvice advice, const MemoryLocation& location) {
        const CUresult status = advise_raw(pointer, size, advice, location);
        if (status == CUDA_SUCCESS) return;
        driver().cuMemFree(pointer);
        throw_driver_error(status, "cuMemAdvise",
                           std::string(advice_name(advice)) + " to " + location.description() +
                               " on " + std::to_string(size) + " bytes of " + describe());
    };
    if (options.preferred_location)
        apply(ManagedAdvice::set_preferred_location, *options.preferred_location);
    if (options.read_mostly) apply(ManagedAdvice::set_read_mostly, MemoryLocation::host());
}

}  // namespace detail

void advise(const Buffer& buffer, ManagedAdvice advice, const MemoryLocation& location) {
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string("advise: ") + buffer.description() + " is closed");
    // cuMemAdvise wants some current context (any: the advice names its location) and fails
    // with CUDA_ERROR_INVALID_CONTEXT without one: the buffer's is made current only then.
    CUcontext current = nullptr;
    std::optional<detail::BufferContext> context;
    if (detail::driver().cuCtxGetCurrent(&current) != CUDA_SUCCESS || !current) context.emplace(buffer);
    detail::check(advise_raw(buffer.handle(), buffer.size(), advice, location), "cuMemAdvise", [&] {
        return std::string(advice_name(advice)) + " to " + location.description() + " on " +
               buffer.description();
    });
}

void prefetch_batch(std::span<const Buffer> buffers, const MemoryLocation& location,
                    const Stream& stream) {
    if (buffers.empty()) return;
    Batch batch = gather(buffers, "prefetch_batch");
    CUmemLocation where = location.to_driver();
    const auto& api = detail::driver();
    BatchContext context(stream, buffers.front());
    if (detail::is_default_stream(stream.handle())) {
        for (std::size_t i = 0; i < buffers.size(); ++i)
            detail::check(api.cuMemPrefetchAsync(batch.pointers[i], batch.sizes[i], where, 0,
                                                 stream.handle()),
                          "cuMemPrefetchAsync",
                          [&] { return buffers[i].description() + " to " + location.description(); });
        return;
    }
    std::size_t first = 0;
    detail::check(api.cuMemPrefetchBatchAsync(batch.pointers.data(), batch.sizes.data(),
                                              batch.pointers.size(), &where, &first, 1, 0,
                                              stream.handle()),
                  "cuMemPrefetchBatchAsync",
                  [&] { return describe_batch(buffers) + " to " + location.description(); });
}

void discard_batch(std::span<const Buffer> buffers, const Stream& stream) {
    if (buffers.empty()) return;
    if (detail::is_default_stream(stream.handle()))
        throw InvalidArgumentError("discard_batch: the legacy default stream is refused by "
                                   "cuMemDiscardBatchAsync; use a created stream (" +
                                   describe_batch(buffers) + ")");
    Batch batch = gather(buffers, "discard_batch");
    BatchContext context(stream, buffers.front());
    detail::check(detail::driver().cuMemDiscardBatchAsync(batch.pointers.data(), batch.sizes.data(),
                                                          batch.pointers.size(), 0, stream.handle()),
                  "cuMemDiscardBatchAsync", [&] { return describe_batch(buffers); });
}

void discard_and_prefetch_batch(std::span<const Buffer> buffers, const MemoryLocation& location,
                                const Stream& stream) {
    if (buffers.empty()) return;
    if (detail::is_default_stream(stream.handle()))
        throw InvalidArgumentError("discard_and_prefetch_batch: the legacy default stream is "
                                   "refused by cuMemDiscardAndPrefetchBatchAsync; use a created "
                                   "stream (" + describe_batch(buffers) + ")");
    Batch batch = gather(buffers, "discard_and_prefetch_batch");
    CUmemLocation where = location.to_driver();
    BatchContext context(stream, buffers.front());
    std::size_t first = 0;
    detail::check(detail::driver().cuMemDiscardAndPrefetchBatchAsync(
                      batch.pointers.data(), batch.sizes.data(), batch.pointers.size(), &where,
                      &first, 1, 0, stream.handle()),
                  "cuMemDiscardAndPrefetchBatchAsync",
                  [&] { return describe_batch(buffers) + " to " + location.description(); });
}

ManagedRangeAttributes range_attributes(const Buffer& buffer) {
    if (buffer.is_closed())
        throw InvalidArgumentError("range_attributes: " + buffer.description() + " is closed");
    const auto& api = detail::driver();
    detail::BufferContext context(buffer);
    auto get_int = [&](CUmem_range_attribute attribute, const char* name) {
        int value = 0;
        detail::check(api.cuMemRangeGetAttribute(&value, sizeof value, attribute, buffer.handle(),
                                                 buffer.size()),
                      "cuMemRangeGetAttribute",
                      [&] { return std::string(name) + " of " + buffer.description(); });
        return value;
    };
    ManagedRangeAttributes out;
    out.read_mostly = get_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, "read mostly") != 0;
    out.preferred_location = MemoryLocation::from_driver(
        static_cast<CUmemLocationType>(
            get_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, "preferred location type")),
        get_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, "preferred location id"));
    out.last_prefetch_location = MemoryLocation::from_driver(
        static_cast<CUmemLocationType>(get_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                               "last prefetch location type")),
        get_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, "last prefetch location id"));
    // One slot per device; unused slots hold CU_DEVICE_INVALID (-2), the host CU_DEVICE_CPU (-1).
    int count = 0;
    detail::check(api.cuDeviceGetCount(&count), "cuDeviceGetCount", buffer.description());
    std::vector<int> devices(static_cast<std::size_t>(std::max(count, 1)), -1);
    detail::check(api.cuMemRangeGetAttribute(devices.data(), devices.size() * sizeof(int),
                                             CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, buffer.handle(),
                                             buffer.size()),
                  "cuMemRangeGetAttribute", [&] { return "accessed by of " + buffer.description(); });
    for (int device : devices)
        if (device >= 0) out.accessed_by.push_back(device);
    return out;
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(ManagedAdvice advice) {
    static constexpr detail::EnumText<ManagedAdvice> names[] = {
        {ManagedAdvice::set_read_mostly, "set_read_mostly"},
        {ManagedAdvice::unset_read_mostly, "unset_read_mostly"},
        {ManagedAdvice::set_preferred_location, "set_preferred_location"},
        {ManagedAdvice::unset_preferred_location, "unset_preferred_location"},
        {ManagedAdvice::set_accessed_by, "set_accessed_by"},
        {ManagedAdvice::unset_accessed_by, "unset_accessed_by"},
    };
    return detail::enum_text(advice, names, "ManagedAdvice");
}

}  // namespace cudacore
