#include "cudacore/batched_copy.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/stream.hpp"
#include "memory/buffer_box.hpp"
#include "support/enum_text.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace cudacore {

namespace {

std::string describe_pair(std::size_t index, const CopyPair& copy) {
    std::string out = "copy " + std::to_string(index) + " from " + copy.source.description() +
                      " to " + copy.destination.description();
    if (copy.attributes != CopyAttributes{}) out += " (" + copy.attributes.description() + ")";
    return out;
}

const char* order_name(CopySourceAccessOrder order) {
    switch (order) {
        case CopySourceAccessOrder::stream: return "stream";
        case CopySourceAccessOrder::during_api_call: return "during_api_call";
        case CopySourceAccessOrder::any: return "any";
    }
    return "unknown";
}

bool valid(CopySourceAccessOrder order) {
    const int value = static_cast<int>(order);
    return value >= 0 && value <= 2;
}

CUmemcpyAttributes to_driver(const CopyAttributes& attributes, bool prefer_overlap) {
    CUmemcpyAttributes out{};  // no location hint: CU_MEM_LOCATION_TYPE_INVALID, as cuda.core
    switch (attributes.source_access_order) {
        case CopySourceAccessOrder::stream:
            out.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
            break;
        case CopySourceAccessOrder::during_api_call:
            out.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
            break;
        case CopySourceAccessOrder::any:
            out.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
            break;
    }
    if (attributes.source_location_hint)
        out.srcLocHint = attributes.source_location_hint->to_driver();
    if (attributes.destination_location_hint)
        out.dstLocHint = attributes.destination_location_hint->to_driver();
    out.flags = prefer_overlap || attributes.prefer_overlap_with_compute
                    ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
                    : CU_MEMCPY_FLAG_DEFAULT;
    return out;
}

// Pairs up to copy_batch_kernel_limit go to the kernels. A warp copies 512 bytes per round trip
// to memory, so a 4 KiB pair takes it about as long as the copy engines take for one pair; a
// copy engine copies anything larger faster.
// The kernels' capacities (src/memory/device/batched_copy_kernels.cu), smallest first, and the
// launch shape: one warp per pair, four warps a block.
constexpr std::size_t kernel_capacities[] = {32, 256, 1360};
constexpr unsigned threads_per_block = 128, pairs_per_block = threads_per_block / 32;

#ifdef CUDACORE_HAVE_BATCHED_COPY_KERNELS
alignas(64) const unsigned char batched_copy_fatbin[] = {
#include "batched_copy_kernels.inc"
#include "support/box_access.hpp"
};
#endif

// The kernels, loaded once per process (context-independent, so usable on every device). Never
// unloaded: the driver frees them at exit. Null when they cannot be loaded (a build without
// nvcc, or a driver too old for their code): copy_batch then uses the driver's batch alone.
const CUkernel* copy_kernels(const detail::DriverApi& api) {
    static const std::array<CUkernel, 3>* kernels = [&]() -> const std::array<CUkernel, 3>* {
#ifdef CUDACORE_HAVE_BATCHED_COPY_KERNELS
        CUlibrary library = nullptr;
        if (api.cuLibraryLoadData(&library, batched_copy_fatbin, nullptr, nullptr, 0, nullptr,
                                  nullptr, 0) != CUDA_SUCCESS)
            return nullptr;
        auto* made = new std::array<CUkernel, 3>{};
        for (std::size_t i = 0; i < made->size(); ++i) {
            const std::string name = "cudacore_copy_batch_" + std::to_string(kernel_capacities[i]);
            if (api.cuLibraryGetKernel(&(*made)[i], library, name.c_str()) != CUDA_SUCCESS) {
                delete made;
                api.cuLibraryUnload(library);
                return nullptr;
            }
        }
        return made;
#else
        (void)api;
        return nullptr;
#endif
    }();
    return kernels ? kernels->data() : nullptr;
}

// Whether a kernel on device `ordinal` may copy the pair: small, and both ends memory of that
// device that its kernels can address (device, managed and virtual memory of that device; not
// host memory or another device's memory, which need mappings or peer access it may not have).
bool kernel_can_copy(const CopyPair& copy, int ordinal) noexcept {
    const detail::BufferBox& source = *detail::box_of(copy.source);
    const detail::BufferBox& destination = *detail::box_of(copy.destination);
    return source.size <= copy_batch_kernel_limit && source.device_accessible &&
           destination.device_accessible && source.device_ordinal == ordinal &&
           destination.device_ordinal == ordinal;
}

// Launches the kernels over `pairs` (indices into `copies`), in lists of at most 1,360 pairs.
void launch_copy_kernels(const detail::DriverApi& api, const CUkernel* kernels,
                         std::span<const CopyPair> copies, const std::vector<std::size_t>& pairs,
                         CUstream stream) {
    thread_local std::vector<unsigned long long> list;
    for (std::size_t first = 0; first < pairs.size();) {
        const std::size_t left = pairs.size() - first;
        std::size_t which = 0;
        while (which + 1 < std::size(kernel_capacities) && kernel_capacities[which] < left) ++which;
        const std::size_t capacity = kernel_capacities[which];
        const std::size_t count = std::min(left, capacity);
        list.assign(1 + 3 * capacity, 0);
        list[0] = count;
        for (std::size_t i = 0; i < count; ++i) {
            const CopyPair& copy = copies[pairs[first + i]];
            list[1 + i] = copy.destination.handle();
            list[1 + capacity + i] = copy.source.handle();
            list[1 + 2 * capacity + i] = copy.source.size();
        }
        void* arguments[] = {list.data()};
        const unsigned blocks = static_cast<unsigned>((count + pairs_per_block - 1) / pairs_per_block);
        detail::check(api.cuLaunchKernel(reinterpret_cast<CUfunction>(kernels[which]), blocks, 1, 1,
                                         threads_per_block, 1, 1, 0, stream, arguments, nullptr),
                      "cuLaunchKernel", [&] {
                          return "copy_batch's kernel for " + std::to_string(count) +
                                 " copies (first " + describe_pair(pairs[first], copies[pairs[first]]) +
                                 ")";
                      });
        first += count;
    }
}

// Refuses a batch with a closed buffer, a pair of different sizes or an unknown access order,
// and attributes on the legacy default stream.
void check_batch_copies(std::span<const CopyPair> copies, const Stream& stream) {
    for (std::size_t i = 0; i < copies.size(); ++i) {
        const CopyPair& copy = copies[i];
        if (copy.source.is_closed() || copy.destination.is_closed())
            throw InvalidArgumentError("copy_batch: a buffer is closed in " + describe_pair(i, copy));
        if (copy.source.size() != copy.destination.size())
            throw InvalidArgumentError("copy_batch: sizes differ in " + describe_pair(i, copy));
        if (!valid(copy.attributes.source_access_order))
            throw InvalidArgumentError(
                "copy_batch: source_access_order " +
                std::to_string(static_cast<int>(copy.attributes.source_access_order)) +
                " is not a CopySourceAccessOrder in copy " + std::to_string(i));
    }
    if (detail::is_default_stream(stream.handle())) {
        // The pairs go one by one to cuMemcpyAsync there, which has no room for attributes.
        for (std::size_t i = 0; i < copies.size(); ++i)
            if (copies[i].attributes != CopyAttributes{})
                throw InvalidArgumentError(
                    "copy_batch: " + describe_pair(i, copies[i]) +
                    " has attributes, which only cuMemcpyBatchAsync carries, and it refuses the "
                    "legacy default stream: use a stream of your own, or no attributes");
    }
}

// The pairs `by_driver` of `copies`, by cuMemcpyBatchAsync (on the legacy default stream, which
// it refuses, one cuMemcpyAsync per pair).
void copy_batch_with_driver(const detail::DriverApi& api, std::span<const CopyPair> copies,
                            const std::vector<std::size_t>& by_driver, const Stream& stream,
                            const BatchedCopyOptions& options) {
    if (detail::is_default_stream(stream.handle())) {
        for (const std::size_t i : by_driver)
            detail::check(api.cuMemcpyAsync(copies[i].destination.handle(), copies[i].source.handle(),
                                            copies[i].source.size(), stream.handle()),
                          "cuMemcpyAsync", [&] { return describe_pair(i, copies[i]); });
        return;
    }
    std::vector<CUdeviceptr> sources, destinations;
    std::vector<std::size_t> sizes;
    sources.reserve(by_driver.size());
    destinations.reserve(by_driver.size());
    sizes.reserve(by_driver.size());
    for (const std::size_t i : by_driver) {
        sources.push_back(copies[i].source.handle());
        destinations.push_back(copies[i].destination.handle());
        sizes.push_back(copies[i].source.size());
    }
    // One attribute entry per run of equal neighbours: attributes[k] applies to the copies from
    // starts[k] to the next start (usually one entry for the whole batch).
    std::vector<CUmemcpyAttributes> attributes;
    std::vector<std::size_t> starts;
    for (std::size_t k = 0; k < by_driver.size(); ++k) {
        const CopyAttributes& wanted = copies[by_driver[k]].attributes;
        if (k == 0 || wanted != copies[by_driver[k - 1]].attributes) {
            attributes.push_back(to_driver(wanted, options.prefer_overlap_with_compute));
            starts.push_back(k);
        }
    }
    detail::check(api.cuMemcpyBatchAsync(destinations.data(), sources.data(), sizes.data(),
                                         sizes.size(), attributes.data(), starts.data(),
                                         attributes.size(), stream.handle()),
                  "cuMemcpyBatchAsync", [&] {
                      return std::to_string(sizes.size()) + " copies (first " +
                             describe_pair(by_driver[0], copies[by_driver[0]]) + ")";
                  });
}

}  // namespace

void copy_batch(std::span<const CopyPair> copies, const Stream& stream,
                const BatchedCopyOptions& options) {
    stream.check_open("copy_batch");
    if (copies.empty()) return;
    check_batch_copies(copies, stream);
    const auto& api = detail::driver();
    // The stream's context is made current for every stream: the legacy default stream means the
    // current context's, and cuMemcpyBatchAsync resolves its pointers in the current context
    // (without one it answers CUDA_ERROR_INVALID_VALUE, even on a created stream).
    const auto& box = detail::box_of(stream);
    std::optional<detail::ContextScope> scope;
    if (box && box->context) scope.emplace(*box->context);

    // Small pairs between memory of the stream's device go to the kernels, unless the caller
    // asked for the copy engines; the others to the driver.
    std::vector<std::size_t> by_kernel, by_driver;
    const CUkernel* kernels = options.prefer_overlap_with_compute || !box || !box->context
                                  ? nullptr
                                  : copy_kernels(api);
    for (std::size_t i = 0; i < copies.size(); ++i) {
        if (copies[i].source.size() == 0) continue;  // nothing to copy
        // Attributes are the driver's to honour: such pairs go to the copy engines.
        if (kernels && copies[i].attributes == CopyAttributes{} &&
            kernel_can_copy(copies[i], box->context->ordinal))
            by_kernel.push_back(i);
        else
            by_driver.push_back(i);
    }
    if (!by_kernel.empty()) launch_copy_kernels(api, kernels, copies, by_kernel, stream.handle());
    if (!by_driver.empty()) copy_batch_with_driver(api, copies, by_driver, stream, options);
}

std::string CopyAttributes::description() const {
    std::string out = std::string("source access order ") +
                      (valid(source_access_order) ? order_name(source_access_order) : "invalid");
    if (source_location_hint) out += ", source hint " + source_location_hint->description();
    if (destination_location_hint)
        out += ", destination hint " + destination_location_hint->description();
    if (prefer_overlap_with_compute) out += ", prefer overlap with compute";
    return out;
}

// The deprecated form, kept for one release.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void copy_batch(std::span<const BufferCopy> copies, const Stream& stream, const BatchedCopyOptions& options) {
    std::vector<CopyPair> pairs;
    pairs.reserve(copies.size());
    for (const BufferCopy& copy : copies) pairs.push_back({copy.destination, copy.source, copy.attributes});
    copy_batch(std::span<const CopyPair>(pairs), stream, options);
}
#pragma GCC diagnostic pop

}  // namespace cudacore

namespace cudacore {

std::string to_string(CopySourceAccessOrder order) {
    static constexpr detail::EnumText<CopySourceAccessOrder> names[] = {
        {CopySourceAccessOrder::stream, "stream"},
        {CopySourceAccessOrder::during_api_call, "during_api_call"},
        {CopySourceAccessOrder::any, "any"},
    };
    return detail::enum_text(order, names, "CopySourceAccessOrder");
}

}  // namespace cudacore
