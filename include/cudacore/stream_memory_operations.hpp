/// @file
/// Stream memory operations: wait until a 32- or 64-bit word meets a condition, or write one, in
/// stream order or as graph nodes. Every call throws InvalidArgumentError (closed, bad word, what
/// the device lacks) or DriverError. Guide: docs/loading-and-launching.md.
///
///     auto plain = std::make_shared<SynchronousMemoryResource>(device);  // cuMemAlloc memory
///     Buffer flag = plain->allocate(sizeof(std::uint32_t), producer);
///     flag.fill_uint32(0, producer);
///     launch(producer, config, fill, data);
///     write_value32({.buffer = flag}, 1, producer);         // after the kernel
///     wait_value32({.buffer = flag}, 1, consumer);          // consumer's later work waits
///     launch(consumer, config, use, data);
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_node.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cudacore {

/// The word: `buffer` at byte `offset` (`{.buffer = flag, .offset = 8}`), or raw `pointer`.
struct ValueAddress {
    Buffer buffer{};          ///< the memory (held until the operation has run); empty: `pointer`
    std::size_t offset = 0;   ///< bytes into `buffer` (ignored for a raw pointer)
    CUdeviceptr pointer = 0;  ///< a raw device address, used when `buffer` is empty
};

/// When a wait is over, for the word W at the address and the value V.
enum class WaitCondition : unsigned {
    /// (int32_t)(W - V) >= 0 (int64_t for 64-bit waits): W has reached V, cyclically.
    greater_or_equal = CU_STREAM_WAIT_VALUE_GEQ,
    equal = CU_STREAM_WAIT_VALUE_EQ,          ///< W == V
    bitwise_and = CU_STREAM_WAIT_VALUE_AND,   ///< (W & V) != 0
    /// ~(W | V) != 0; needs CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR.
    bitwise_nor = CU_STREAM_WAIT_VALUE_NOR,
};

/// "greater_or_equal", "equal", "bitwise_and", "bitwise_nor" (no driver needed).
std::string to_string(WaitCondition condition);

/// How a wait behaves.
struct WaitOptions {
    WaitCondition condition = WaitCondition::equal;  ///< when the wait is over
    /// Flush remote writes (GPUDirect RDMA) after the wait; needs CAN_FLUSH_REMOTE_WRITES.
    bool flush_remote_writes = false;
};

/// How a write behaves.
struct WriteOptions {
    /// Ordered after the stream's earlier writes; false is refused (InvalidArgumentError).
    bool memory_barrier = true;
};

/// One operation of a batch (run_memory_operations, add_memory_operations).
struct MemoryOperation {
    /// What the operation does.
    enum class Kind : unsigned { wait_value32, wait_value64, write_value32, write_value64 };
    Kind kind = Kind::wait_value32;  ///< wait or write, 32 or 64 bits
    ValueAddress address{};            ///< the word
    std::uint64_t value = 0;         ///< V (the low 32 bits for 32-bit operations, which must fit)
    WaitOptions wait{};                ///< for waits
    WriteOptions write{};              ///< for writes
};

/// "wait_value32", ...; "MemoryOperation::Kind(N)" outside the enumeration.
std::string to_string(MemoryOperation::Kind kind);

/// A MemoryOperation waiting until the 32-bit word at `address` meets `options` against `value`.
inline MemoryOperation wait_value32_operation(ValueAddress address, std::uint32_t value,
                                              const WaitOptions& options = {}) {
    return {.kind = MemoryOperation::Kind::wait_value32, .address = std::move(address),
            .value = value, .wait = options, .write = {}};
}
/// The 64-bit wait.
inline MemoryOperation wait_value64_operation(ValueAddress address, std::uint64_t value,
                                              const WaitOptions& options = {}) {
    return {.kind = MemoryOperation::Kind::wait_value64, .address = std::move(address),
            .value = value, .wait = options, .write = {}};
}
/// A MemoryOperation writing `value` to the 32-bit word at `address`.
inline MemoryOperation write_value32_operation(ValueAddress address, std::uint32_t value,
                                               const WriteOptions& options = {}) {
    return {.kind = MemoryOperation::Kind::write_value32, .address = std::move(address),
            .value = value, .wait = {}, .write = options};
}
/// The 64-bit write.
inline MemoryOperation write_value64_operation(ValueAddress address, std::uint64_t value,
                                               const WriteOptions& options = {}) {
    return {.kind = MemoryOperation::Kind::write_value64, .address = std::move(address),
            .value = value, .wait = {}, .write = options};
}

/// Later work on `stream` waits until the 32-bit word meets the condition against `value`.
void wait_value32(const ValueAddress& address, std::uint32_t value, const Stream& stream,
                  const WaitOptions& options = {});
/// The 64-bit wait (8-byte aligned; needs 64-bit stream memory operations).
void wait_value64(const ValueAddress& address, std::uint64_t value, const Stream& stream,
                  const WaitOptions& options = {});
/// Writes `value` to the 32-bit word once the work enqueued before on `stream` is done.
void write_value32(const ValueAddress& address, std::uint32_t value, const Stream& stream,
                   const WriteOptions& options = {});
/// The 64-bit write.
void write_value64(const ValueAddress& address, std::uint64_t value, const Stream& stream,
                   const WriteOptions& options = {});
/// Runs `operations` in order in one batch, each checked first (errors name its index).
void run_memory_operations(std::span<const MemoryOperation> operations, const Stream& stream);

/// A graph node running `operations`; the graph holds every Buffer named.
GraphNode add_memory_operations(Graph& graph, GraphDependencies dependencies,
                                std::span<const MemoryOperation> operations);
/// A node of one 32-bit wait (add_memory_operations with wait_value32_operation).
GraphNode add_wait_value32(Graph& graph, GraphDependencies dependencies,
                           const ValueAddress& address, std::uint32_t value,
                           const WaitOptions& options = {});
/// A node of one 64-bit wait.
GraphNode add_wait_value64(Graph& graph, GraphDependencies dependencies,
                           const ValueAddress& address, std::uint64_t value,
                           const WaitOptions& options = {});
/// A node of one 32-bit write.
GraphNode add_write_value32(Graph& graph, GraphDependencies dependencies,
                            const ValueAddress& address, std::uint32_t value,
                            const WriteOptions& options = {});
/// A node of one 64-bit write.
GraphNode add_write_value64(Graph& graph, GraphDependencies dependencies,
                            const ValueAddress& address, std::uint64_t value,
                            const WriteOptions& options = {});

}  // namespace cudacore
