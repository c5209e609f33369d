// Stream memory operations (cuStreamWaitValue32/64, cuStreamWriteValue32/64, cuStreamBatchMemOp)
// and their graph nodes (cuGraphAddBatchMemOpNode). In the graph layer: the words they address are
// Buffers (memory) and their nodes belong to a Graph, both of this rank.
#include "cudacore/stream_memory_operations.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "graph/graph_box.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/default_stream_scope.hpp"
#include "runtime/release/release.hpp"
#include "runtime/stream_description.hpp"
#include "support/box_access.hpp"
#include "support/enum_text.hpp"

#include <atomic>
#include <cstdio>
#include <vector>

namespace cudacore {

namespace detail::memory_operations {
namespace {

// What a device may lack, with the attribute that says so; read once per device (the first 64).
enum Feature : unsigned { kSixtyFourBit, kWaitNor, kFlushRemoteWrites, kFeatureCount };
constexpr CUdevice_attribute kFeatureAttribute[kFeatureCount] = {
    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR,
    CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES,
};
constexpr const char* kFeatureAttributeName[kFeatureCount] = {
    "CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS",
    "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR",
    "CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES",
};
constexpr const char* kFeatureWhat[kFeatureCount] = {
    "64-bit stream memory operations",
    "the not-or wait condition (WaitCondition::bitwise_nor)",
    "flushing remote writes (WaitOptions::flush_remote_writes)",
};
constexpr int kCachedDevices = 64;
// 0: not read yet; 1: the attribute is 0; 2: it is not (static storage starts zeroed).
std::atomic<unsigned char> feature_cache[kCachedDevices][kFeatureCount];

bool device_has(int ordinal, Feature feature) {
    if (ordinal >= 0 && ordinal < kCachedDevices) {
        const unsigned char known = feature_cache[ordinal][feature].load(std::memory_order_relaxed);
        if (known != 0) [[likely]]
            return known == 2;
    }
    const bool has = Device(ordinal).attribute(kFeatureAttribute[feature]) != 0;
    if (ordinal >= 0 && ordinal < kCachedDevices)
        feature_cache[ordinal][feature].store(has ? 2 : 1, std::memory_order_relaxed);
    return has;
}

void require_feature(int ordinal, Feature feature, const char* call, const char* driver_call) {
    if (device_has(ordinal, feature)) [[likely]]
        return;
    throw InvalidArgumentError(std::string(call) + " (" + driver_call + "): device " +
                               std::to_string(ordinal) + " (" + Device(ordinal).name() +
                               ") does not support " + kFeatureWhat[feature] + " (" +
                               kFeatureAttributeName[feature] + " is 0)");
}

bool is_wait(MemoryOperation::Kind kind) {
    return kind == MemoryOperation::Kind::wait_value32 || kind == MemoryOperation::Kind::wait_value64;
}
bool is_64_bit(MemoryOperation::Kind kind) {
    return kind == MemoryOperation::Kind::wait_value64 || kind == MemoryOperation::Kind::write_value64;
}

// "the operation" or "operation 3" in a batch's messages.
std::string which(long index) {
    return index < 0 ? std::string() : " (operation " + std::to_string(index) + ")";
}

std::string hex(CUdeviceptr address) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    return text;
}

// The word's address, checked: open buffer, inside it, aligned to `width`, not null.
CUdeviceptr resolve(const ValueAddress& address, std::size_t width, const char* call, long index) {
    CUdeviceptr pointer = address.pointer;
    if (address.buffer) {
        const std::size_t size = address.buffer.size();
        if (address.offset > size || size - address.offset < width)
            throw InvalidArgumentError(std::string(call) + which(index) + ": a " +
                                       std::to_string(width * 8) + "-bit word at offset " +
                                       std::to_string(address.offset) + " lies outside " +
                                       address.buffer.description());
        // The driver documents it: no stream memory operation takes managed memory.
        if (address.buffer.is_managed())
            throw InvalidArgumentError(std::string(call) + which(index) + ": " +
                                       address.buffer.description() +
                                       " is managed memory, which stream memory operations refuse");
        pointer = address.buffer.handle() + address.offset;
    } else if (box_of(address.buffer) && address.buffer.is_closed()) {
        throw InvalidArgumentError(std::string(call) + which(index) + ": " +
                                   address.buffer.description() + " is closed");
    }
    if (pointer == 0)
        throw InvalidArgumentError(std::string(call) + which(index) +
                                   ": no address (an empty ValueAddress: give a buffer or a pointer)");
    if (pointer % width != 0)
        throw InvalidArgumentError(std::string(call) + which(index) + ": address " + hex(pointer) +
                                   " is not aligned to " + std::to_string(width) + " bytes, as a " +
                                   std::to_string(width * 8) + "-bit operation needs");
    return pointer;
}

unsigned wait_flags(const WaitOptions& options, int ordinal, const char* call,
                    const char* driver_call) {
    switch (options.condition) {
        case WaitCondition::greater_or_equal:
        case WaitCondition::equal:
        case WaitCondition::bitwise_and: break;
        case WaitCondition::bitwise_nor: require_feature(ordinal, kWaitNor, call, driver_call); break;
        default:
            throw InvalidArgumentError(std::string(call) + ": unknown wait condition " +
                                       std::to_string(static_cast<unsigned>(options.condition)));
    }
    unsigned flags = static_cast<unsigned>(options.condition);
    if (options.flush_remote_writes) {
        require_feature(ordinal, kFlushRemoteWrites, call, driver_call);
        flags |= CU_STREAM_WAIT_VALUE_FLUSH;
    }
    return flags;
}

// The driver's v2 stream memory operations (the only ones enabled without a kernel module
// option) refuse CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER with CUDA_ERROR_INVALID_VALUE: said here.
unsigned write_flags(const WriteOptions& options, const char* call, const char* driver_call,
                     long index) {
    if (!options.memory_barrier)
        throw InvalidArgumentError(std::string(call) + which(index) + " (" + driver_call +
                                   "): a write without a memory barrier "
                                   "(WriteOptions::memory_barrier = false, "
                                   "CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) is not supported by the "
                                   "driver's v2 stream memory operations");
    return CU_STREAM_WRITE_VALUE_DEFAULT;
}

// The driver's form of one operation, checked for the device `ordinal`.
CUstreamBatchMemOpParams to_driver(const MemoryOperation& operation, int ordinal, const char* call,
                                   const char* driver_call, long index) {
    CUstreamBatchMemOpParams params{};
    const bool wide = is_64_bit(operation.kind);
    if (!wide && operation.value > UINT32_MAX)
        throw InvalidArgumentError(std::string(call) + which(index) + ": value " +
                                   std::to_string(operation.value) +
                                   " does not fit the 32 bits of a 32-bit operation");
    if (operation.kind > MemoryOperation::Kind::write_value64)
        throw InvalidArgumentError(std::string(call) + which(index) + ": unknown operation kind " +
                                   std::to_string(static_cast<unsigned>(operation.kind)));
    if (wide) require_feature(ordinal, kSixtyFourBit, call, driver_call);
    const CUdeviceptr pointer = resolve(operation.address, wide ? 8 : 4, call, index);
    if (is_wait(operation.kind)) {
        params.waitValue.operation = wide ? CU_STREAM_MEM_OP_WAIT_VALUE_64 : CU_STREAM_MEM_OP_WAIT_VALUE_32;
        params.waitValue.address = pointer;
        if (wide) params.waitValue.value64 = operation.value;
        else params.waitValue.value = static_cast<cuuint32_t>(operation.value);
        params.waitValue.flags = wait_flags(operation.wait, ordinal, call, driver_call);
    } else {
        params.writeValue.operation = wide ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32;
        params.writeValue.address = pointer;
        if (wide) params.writeValue.value64 = operation.value;
        else params.writeValue.value = static_cast<cuuint32_t>(operation.value);
        params.writeValue.flags = write_flags(operation.write, call, driver_call, index);
    }
    return params;
}

// What the driver's CUDA_ERROR_INVALID_VALUE most often means for a well-formed operation: the
// memory is of a kind it refuses (seen with memory from stream-ordered pools).
std::string refused_memory_hint(CUresult status) {
    if (status != CUDA_ERROR_INVALID_VALUE) return {};
    return "; stream memory operations refuse memory from stream-ordered pools (Device::allocate) "
           "and managed memory: use cuMemAlloc memory (SynchronousMemoryResource), pinned or "
           "registered host memory";
}

const StreamBox& open_stream(const Stream& stream, const char* call) {
    stream.check_open(call);
    const auto& box = box_of(stream);
    if (!box) throw InvalidArgumentError(std::string(call) + ": a moved-from Stream");
    return *box;
}

// During a capture begun through cudacore, the node runs whenever the graph does: the graph being
// built holds `buffer` (the header's "Keeps alive"). Outside captures nothing is held, as for
// copies and launches: one relaxed load.
void hold_for_capture_if_capturing(const StreamBox& stream_box, const Buffer& buffer) {
    if (!captures_active() || !buffer.owns_memory()) [[likely]] return;
    CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    const DefaultStreamScope in_context(stream_box);
    check(driver().cuStreamIsCapturing(stream_box.handle, &capturing), "cuStreamIsCapturing",
          [&] { return describe_stream(stream_box); });
    if (capturing != CU_STREAM_CAPTURE_STATUS_NONE)
        hold_for_capture_now(stream_box.handle, holding_of(buffer));
}

// One wait or write through its single driver call.
template <class Value, class Call>
void enqueue_one(const Stream& stream, const ValueAddress& address, Value value, unsigned flags,
                 const char* call, const char* driver_call, Call&& driver_function) {
    const StreamBox& box = open_stream(stream, call);
    const CUdeviceptr pointer = resolve(address, sizeof(Value), call, -1);
    CUresult status;
    {
        const DefaultStreamScope in_context(box);
        status = driver_function(box.handle, pointer, value, flags);
    }
    if (status != CUDA_SUCCESS) [[unlikely]]
        throw_driver_error(status, driver_call, describe_stream(box) + ", address " + hex(pointer) +
                                                    refused_memory_hint(status));
    if (address.buffer) hold_for_capture_if_capturing(box, address.buffer);
}

int stream_ordinal(const Stream& stream, const char* call) {
    const StreamBox& box = open_stream(stream, call);
    return box.context ? box.context->ordinal : -1;
}

}  // namespace
}  // namespace detail::memory_operations

namespace mo = detail::memory_operations;

std::string to_string(WaitCondition condition) {
    switch (condition) {
        case WaitCondition::greater_or_equal: return "greater_or_equal";
        case WaitCondition::equal: return "equal";
        case WaitCondition::bitwise_and: return "bitwise_and";
        case WaitCondition::bitwise_nor: return "bitwise_nor";
    }
    return "WaitCondition(" + std::to_string(static_cast<unsigned>(condition)) + ")";
}

void wait_value32(const ValueAddress& address, std::uint32_t value, const Stream& stream,
                  const WaitOptions& options) {
    constexpr const char* call = "wait_value32";
    const unsigned flags =
        mo::wait_flags(options, mo::stream_ordinal(stream, call), call, "cuStreamWaitValue32");
    mo::enqueue_one(stream, address, value, flags, call, "cuStreamWaitValue32",
                    detail::driver().cuStreamWaitValue32);
}

void wait_value64(const ValueAddress& address, std::uint64_t value, const Stream& stream,
                  const WaitOptions& options) {
    constexpr const char* call = "wait_value64";
    const int ordinal = mo::stream_ordinal(stream, call);
    mo::require_feature(ordinal, mo::kSixtyFourBit, call, "cuStreamWaitValue64");
    const unsigned flags = mo::wait_flags(options, ordinal, call, "cuStreamWaitValue64");
    mo::enqueue_one(stream, address, value, flags, call, "cuStreamWaitValue64",
                    detail::driver().cuStreamWaitValue64);
}

void write_value32(const ValueAddress& address, std::uint32_t value, const Stream& stream,
                   const WriteOptions& options) {
    mo::enqueue_one(stream, address, value,
                    mo::write_flags(options, "write_value32", "cuStreamWriteValue32", -1), "write_value32",
                    "cuStreamWriteValue32", detail::driver().cuStreamWriteValue32);
}

void write_value64(const ValueAddress& address, std::uint64_t value, const Stream& stream,
                   const WriteOptions& options) {
    constexpr const char* call = "write_value64";
    mo::require_feature(mo::stream_ordinal(stream, call), mo::kSixtyFourBit, call,
                        "cuStreamWriteValue64");
    mo::enqueue_one(stream, address, value,
                    mo::write_flags(options, call, "cuStreamWriteValue64", -1), call,
                    "cuStreamWriteValue64", detail::driver().cuStreamWriteValue64);
}

void run_memory_operations(std::span<const MemoryOperation> operations, const Stream& stream) {
    constexpr const char* call = "run_memory_operations";
    const detail::StreamBox& box = mo::open_stream(stream, call);
    if (operations.empty()) return;
    const int ordinal = box.context ? box.context->ordinal : -1;
    std::vector<CUstreamBatchMemOpParams> params;
    params.reserve(operations.size());
    for (std::size_t i = 0; i < operations.size(); ++i)
        params.push_back(mo::to_driver(operations[i], ordinal, call, "cuStreamBatchMemOp",
                                       static_cast<long>(i)));
    CUresult status;
    {
        const detail::DefaultStreamScope in_context(box);
        status = detail::driver().cuStreamBatchMemOp(box.handle, static_cast<unsigned>(params.size()),
                                                     params.data(), 0);
    }
    if (status != CUDA_SUCCESS) [[unlikely]]
        detail::throw_driver_error(status, "cuStreamBatchMemOp",
                                   detail::describe_stream(box) + ", " +
                                       std::to_string(params.size()) + " operations" +
                                       mo::refused_memory_hint(status));
    for (const MemoryOperation& operation : operations)
        if (operation.address.buffer) mo::hold_for_capture_if_capturing(box, operation.address.buffer);
}

GraphNode add_memory_operations(Graph& graph, GraphDependencies dependencies,
                                std::span<const MemoryOperation> operations) {
    constexpr const char* call = "add_memory_operations";
    const auto& box = detail::box_of(graph);
    if (!box || !box->handle) throw InvalidArgumentError(std::string(call) + ": a moved-from Graph");
    if (operations.empty())
        throw InvalidArgumentError(std::string(call) + ": no operations (" + graph.description() + ")");
    const int ordinal = box->context ? box->context->ordinal : -1;
    std::vector<CUstreamBatchMemOpParams> params;
    params.reserve(operations.size());
    for (std::size_t i = 0; i < operations.size(); ++i)
        params.push_back(mo::to_driver(operations[i], ordinal, call, "cuGraphAddBatchMemOpNode",
                                       static_cast<long>(i)));
    CUDA_BATCH_MEM_OP_NODE_PARAMS node_params{};
    node_params.ctx = box->context ? box->context->handle : nullptr;
    node_params.count = static_cast<unsigned>(params.size());
    node_params.paramArray = params.data();
    node_params.flags = 0;
    CUgraphNode node = nullptr;
    const CUresult status = detail::driver().cuGraphAddBatchMemOpNode(
        &node, box->handle, dependencies.handles(), dependencies.size(), &node_params);
    if (status != CUDA_SUCCESS) [[unlikely]]
        detail::throw_driver_error(status, "cuGraphAddBatchMemOpNode",
                                   "batch memory operation node (" +
                                       std::to_string(params.size()) + " operations) in " +
                                       graph.description() + mo::refused_memory_hint(status));
    for (const MemoryOperation& operation : operations)
        if (operation.address.buffer) graph.hold(operation.address.buffer);
    return GraphNode(node);
}

namespace {
// One operation as its own node (the four single-word adders below).
GraphNode add_single_memory_operation(Graph& graph, GraphDependencies dependencies, const MemoryOperation& operation) {
    return add_memory_operations(graph, std::move(dependencies), {&operation, 1});
}
}  // namespace

GraphNode add_wait_value32(Graph& graph, GraphDependencies dependencies,
                           const ValueAddress& address, std::uint32_t value,
                           const WaitOptions& options) {
    return add_single_memory_operation(graph, std::move(dependencies), wait_value32_operation(address, value, options));
}

GraphNode add_wait_value64(Graph& graph, GraphDependencies dependencies,
                           const ValueAddress& address, std::uint64_t value,
                           const WaitOptions& options) {
    return add_single_memory_operation(graph, std::move(dependencies), wait_value64_operation(address, value, options));
}

GraphNode add_write_value32(Graph& graph, GraphDependencies dependencies,
                            const ValueAddress& address, std::uint32_t value,
                            const WriteOptions& options) {
    return add_single_memory_operation(graph, std::move(dependencies), write_value32_operation(address, value, options));
}

GraphNode add_write_value64(Graph& graph, GraphDependencies dependencies,
                            const ValueAddress& address, std::uint64_t value,
                            const WriteOptions& options) {
    return add_single_memory_operation(graph, std::move(dependencies), write_value64_operation(address, value, options));
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(MemoryOperation::Kind kind) {
    static constexpr detail::EnumText<MemoryOperation::Kind> names[] = {
        {MemoryOperation::Kind::wait_value32, "wait_value32"},
        {MemoryOperation::Kind::wait_value64, "wait_value64"},
        {MemoryOperation::Kind::write_value32, "write_value32"},
        {MemoryOperation::Kind::write_value64, "write_value64"},
    };
    return detail::enum_text(kind, names, "MemoryOperation::Kind");
}

}  // namespace cudacore
