/// @file
/// Checkpoint and restore of a process's CUDA state (cuCheckpointProcess*): lock it, move its
/// device memory to the host and release its GPUs, put it back (optionally onto other GPUs of the
/// same kind) and let it run. Linux only. Guide: docs/checkpoint.md.
///
///     cudacore::checkpoint::Process process(pid);
///     process.lock(std::chrono::seconds(10));  // RUNNING -> LOCKED
///     process.checkpoint();                    // LOCKED -> CHECKPOINTED (GPU memory on host)
///     process.restore();                       // CHECKPOINTED -> LOCKED
///     process.unlock();                        // LOCKED -> RUNNING
#pragma once

#include <array>
#include <chrono>
#include <string>
#include <vector>

namespace cudacore::checkpoint {

/// Where a process stands in checkpoint and restore (the driver's CUprocessState numbers).
enum class ProcessState : int {
    running = 0,       ///< CUDA calls run normally.
    locked = 1,        ///< CUDA calls block until unlocked.
    checkpointed = 2,  ///< Device memory is in host memory, GPUs are released.
    failed = 3,        ///< An uncorrectable error happened during checkpoint or restore.
    checkpointing = 4,  ///< A checkpoint is in progress (newer drivers only).
    restoring = 5,      ///< A restore is in progress (newer drivers only).
};

/// "running", "locked", ...; "ProcessState(N)" for a number a newer driver may add.
std::string to_string(ProcessState state);

/// Restore one checkpointed GPU onto another (same chip type, enough memory).
struct GpuRemap {
    std::array<unsigned char, 16> from{};  ///< UUID of the GPU that was checkpointed.
    std::array<unsigned char, 16> to{};    ///< UUID of the GPU to restore onto.
};

/// One operating-system process, as a target of the driver's checkpoint calls: a plain value
/// holding a pid; the process may end at any time. Calls from several threads go to the driver,
/// which orders them. A process may name itself only for state() and restore_thread_id(). Every
/// call throws NoDriverError without a driver, DriverError naming the call, status and pid where
/// the driver refuses (e.g. a process that has not started CUDA, or in the wrong state).
class Process {
public:
    /// The process with this id (loads nothing). InvalidArgumentError when pid is not positive.
    explicit Process(int pid);
    static Process current();  ///< the calling process itself
    int pid() const noexcept { return pid_; }  ///< the process id
    ProcessState state() const;  ///< its state
    /// The thread the driver restores on, which a CPU checkpointing tool must leave running.
    int restore_thread_id() const;
    /// Locks a RUNNING process: its CUDA calls block from then on. Waits as long as needed.
    void lock() const;
    /// As lock(), giving up after `timeout` (the process left RUNNING). InvalidArgumentError when
    /// timeout is not positive or exceeds 2^32 - 1 ms.
    void lock(std::chrono::milliseconds timeout) const;
    /// Checkpoints a LOCKED process: its device memory goes to host memory, its GPUs are released.
    void checkpoint() const;
    /// Restores a CHECKPOINTED process onto the GPUs it had; it becomes LOCKED.
    void restore() const;
    /// As restore(), placing each checkpointed GPU `from` onto `to` (every GPU named when not
    /// empty). InvalidArgumentError when two entries share a `from` or a `to`.
    void restore(const std::vector<GpuRemap>& gpu_remap) const;
    void unlock() const;  ///< unlocks a LOCKED process: its blocked CUDA calls go on

private:
    int pid_;
};

}  // namespace cudacore::checkpoint
