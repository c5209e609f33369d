/// @file
/// Stream memory operations: a stream waits until a 32- or 64-bit word in memory meets a
/// condition, or writes a value to one, in stream order (cuStreamWaitValue32/64,
/// cuStreamWriteValue32/64, cuStreamBatchMemOp); each also as a graph node
/// (cuGraphAddBatchMemOpNode). One stream signals another, or the host releases a stream, with
/// no event and no host function:
///
///     auto plain = std::make_shared<SynchronousMemoryResource>(device);  // cuMemAlloc memory
///     Buffer flag = plain->allocate(sizeof(std::uint32_t), producer);
///     flag.fill_uint32(0, producer);
///     launch(producer, config, fill, data);
///     write_value32({.buffer = flag}, 1, producer);         // after the kernel
///     wait_value32({.buffer = flag}, 1, consumer);          // consumer's later work waits
///     launch(consumer, config, use, data);
///
/// Where the word lives: a ValueAddress names a Buffer (and a byte offset into it), or a raw
/// device address (host memory mapped to the device, registered or pinned, or memory the caller
/// manages). The word must be aligned to its size (4 or 8 bytes) and lie inside the Buffer.
/// The driver takes device memory from cuMemAlloc (SynchronousMemoryResource), pinned host
/// memory (LegacyPinnedMemoryResource) and registered host memory (register_host_memory); it refuses
/// managed memory (InvalidArgumentError before the call) and, on the driver tried (580), memory from
/// stream-ordered pools such as Device::allocate's (DriverError CUDA_ERROR_INVALID_VALUE, whose
/// message says so).
///
/// Keeps alive: as a copy or a launch does. A Buffer's memory is freed in order on its
/// deallocation stream (Buffer::set_deallocation_stream), so an operation enqueued on that stream
/// is safe however early the last copy goes; on another stream, keep a copy of the Buffer (or
/// order the free after the operation with an event) until the operation has run. Nothing is
/// held per operation, so the Buffer and the raw-address forms cost the same. During a capture
/// begun through cudacore (GraphBuilder) the graph being built holds the Buffer, and a graph
/// node's graph holds it (Graph::hold): a graph runs when the caller no longer thinks of it.
///
/// Lazy loading (CUDA's default, CUDA_MODULE_LOADING=LAZY): a kernel's first launch in a context
/// may wait for the whole context. A launch enqueued behind a wait that only later work releases
/// (a host thread started after the launch returns) may then block for ever: launch each kernel
/// once before ordering work through waits, or set CUDA_MODULE_LOADING=EAGER.
///
/// Device support, checked before the driver is called (InvalidArgumentError naming the call,
/// the device and the attribute): 64-bit operations need
/// CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, WaitCondition::bitwise_nor needs
/// CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, and flush_remote_writes needs
/// CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES (the attributes are read once per device). A write
/// without a memory barrier (WriteOptions::memory_barrier = false) is refused likewise: the
/// driver's v2 operations do not support it.
///
/// A wait that is never satisfied blocks its stream (and whatever waits for it) for ever: the
/// driver cannot tell. Work ordered only through these operations is invisible to CUDA's own
/// dependency tracking: order what CUDA must see (a buffer freed on another stream) with events.
///
/// Thread-safety: the functions may be called from several threads at once, on one stream or
/// several, as other enqueues; adding nodes to one Graph from several threads is not safe.
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

/// The word an operation waits on or writes: `buffer` at byte `offset`, or, when `buffer` is
/// empty, the raw device address `pointer` (host memory mapped to the device, or memory the
/// caller keeps valid). Designated initializers: `{.buffer = flag, .offset = 8}`,
/// `{.pointer = mapped}`.
struct ValueAddress {
    Buffer buffer{};          ///< the memory (held until the operation has run); empty: `pointer`
    std::size_t offset = 0;   ///< bytes into `buffer` (ignored for a raw pointer)
    CUdeviceptr pointer = 0;  ///< a raw device address, used when `buffer` is empty
};

/// When a wait is over (CUstreamWaitValue_flags), for the word W at the address and the value V.
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
    /// Flush outstanding remote writes (GPUDirect RDMA) after the wait (CU_STREAM_WAIT_VALUE_FLUSH);
    /// needs CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES.
    bool flush_remote_writes = false;
};

/// How a write behaves.
struct WriteOptions {
    /// The write is ordered after the stream's earlier writes to memory (a fence before it). False
    /// asks for CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, which the driver's v2 stream memory
    /// operations do not support: refused with InvalidArgumentError before the driver is called.
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

/// "wait_value32", "wait_value64", "write_value32", "write_value64"; "MemoryOperation::Kind(N)" for
/// a value outside the enumeration. Never throws beyond std::bad_alloc.
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

/// Later work on `stream` waits until the 32-bit word at `address` meets `options.condition`
/// against `value` (cuStreamWaitValue32). Throws InvalidArgumentError when the stream or buffer
/// is closed, the word is misaligned (4 bytes), outside the buffer or at address 0, or the device
/// lacks what `options` asks (see the file's description), or the memory is managed; DriverError
/// when the driver refuses (memory from a stream-ordered pool, for one).
/// Keeps alive as a copy does (the file's description): nothing outside a capture.
void wait_value32(const ValueAddress& address, std::uint32_t value, const Stream& stream,
                  const WaitOptions& options = {});
/// The 64-bit wait (cuStreamWaitValue64; 8-byte alignment, and the device must have
/// CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS). Throws and keeps alive as wait_value32.
void wait_value64(const ValueAddress& address, std::uint64_t value, const Stream& stream,
                  const WaitOptions& options = {});
/// Writes `value` to the 32-bit word at `address` once the work enqueued before on `stream` is
/// done (cuStreamWriteValue32). Throws and keeps alive as wait_value32.
void write_value32(const ValueAddress& address, std::uint32_t value, const Stream& stream,
                   const WriteOptions& options = {});
/// The 64-bit write (cuStreamWriteValue64). Throws and keeps alive as wait_value64.
void write_value64(const ValueAddress& address, std::uint64_t value, const Stream& stream,
                   const WriteOptions& options = {});
/// Runs `operations` in one call (cuStreamBatchMemOp), in order. Every operation is checked (and
/// a 32-bit one's value must fit 32 bits) before the driver is called: InvalidArgumentError naming
/// the operation's index; none for an empty batch. Keeps alive as the single calls do.
void run_memory_operations(std::span<const MemoryOperation> operations, const Stream& stream);

/// A graph node running `operations` (cuGraphAddBatchMemOpNode) in `graph`'s context, after
/// `dependencies`. Checked as run_memory_operations (InvalidArgumentError also for an empty batch
/// or a moved-from Graph); DriverError when the driver refuses. The graph (and its executable
/// graphs) holds every Buffer named.
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
