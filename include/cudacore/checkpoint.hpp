/// @file
/// Checkpoint and restore of a process's CUDA state (cuCheckpointProcess*): lock it, move its
/// device memory to the host and release its GPUs, put it back (optionally onto other GPUs of the
/// same kind) and let it run. Linux only; a refusal is a DriverError with the driver's status
/// naming the call and the process. A process may name itself only for state() and
/// restore_thread_id(). Guide: docs/checkpoint.md.
///
///     cudacore::checkpoint::Process process(pid);
///     process.lock(std::chrono::seconds(10));  // RUNNING -> LOCKED
///     process.checkpoint();                    // LOCKED -> CHECKPOINTED (GPU memory on host)
///     // ... a CPU checkpointing tool may save and restart the process here ...
///     process.restore();                       // CHECKPOINTED -> LOCKED
///     process.unlock();                        // LOCKED -> RUNNING
#pragma once

#include <array>
#include <chrono>
#include <string>
#include <vector>

namespace cudacore::checkpoint {

/// Where a process stands in checkpoint and restore (CUprocessState; the numbers are the
/// driver's).
enum class ProcessState : int {
    running = 0,       ///< CUDA calls run normally (CU_PROCESS_STATE_RUNNING).
    locked = 1,        ///< CUDA calls block until unlocked (CU_PROCESS_STATE_LOCKED).
    checkpointed = 2,  ///< Device memory is in host memory, GPUs are released.
    failed = 3,        ///< An uncorrectable error happened during checkpoint or restore.
    checkpointing = 4,  ///< A checkpoint is in progress (reported by newer drivers only).
    restoring = 5,      ///< A restore is in progress (reported by newer drivers only).
};

/// "running", "locked", "checkpointed", "failed", "checkpointing", "restoring", or
/// "ProcessState(N)" for a number a newer driver may add. Never throws except std::bad_alloc.
std::string to_string(ProcessState state);

/// Restore one checkpointed GPU onto another (same chip type, enough memory).
struct GpuRemap {
    std::array<unsigned char, 16> from{};  ///< UUID of the GPU that was checkpointed.
    std::array<unsigned char, 16> to{};    ///< UUID of the GPU to restore onto.
};

/// One operating-system process, as a target of the driver's checkpoint calls. A plain value
/// (copy freely): it holds a pid and nothing else, keeps nothing alive, and the process may end
/// at any time (the driver then answers with an error). Calls on one Process, or on several for
/// the same pid, from several threads are passed to the driver as they come; the driver orders
/// them (a second lock of a locked process fails with its status).
class Process {
public:
    /// The process with this id. Throws InvalidArgumentError when pid is not positive. Loads
    /// nothing: a process that is not (yet) a CUDA process is only found out by a call.
    explicit Process(int pid);

    /// The calling process itself.
    static Process current();

    /// The process id.
    int pid() const noexcept { return pid_; }

    /// Its state (cuCheckpointProcessGetState). Throws NoDriverError without a driver;
    /// DriverError (naming the call, the status and the pid) where the driver refuses, e.g. for a
    /// process that has not started CUDA; "not supported by this driver" where the driver lacks
    /// the call.
    ProcessState state() const;

    /// The id of the thread the driver runs the process's restore on
    /// (cuCheckpointProcessGetRestoreThreadId): a CPU checkpointing tool must leave that thread
    /// running while it restores the rest. Throws as state().
    int restore_thread_id() const;

    /// Locks a RUNNING process (cuCheckpointProcessLock): its CUDA calls block from then on.
    /// Waits as long as the driver needs. Throws as
    /// state(); DriverError where the process is not RUNNING.
    void lock() const;

    /// As lock(), giving up after `timeout` (the process is then left RUNNING and the driver's
    /// status is thrown as a DriverError). Throws InvalidArgumentError, before any driver call,
    /// when timeout is not positive (the driver reads 0 as "no limit": call lock() for that) or
    /// exceeds 2^32 - 1 ms.
    void lock(std::chrono::milliseconds timeout) const;

    /// Checkpoints a LOCKED process (cuCheckpointProcessCheckpoint): its device memory is
    /// copied into its host memory and its GPU resources are released; it becomes
    /// CHECKPOINTED. Throws as state().
    void checkpoint() const;

    /// Restores a CHECKPOINTED process (cuCheckpointProcessRestore) onto the GPUs it had; it
    /// becomes LOCKED (call unlock() next). Throws as state().
    void restore() const;

    /// As restore(), placing each checkpointed GPU `from` onto `to`. When not empty the list must
    /// name every GPU the process had (the driver checks that). Throws InvalidArgumentError,
    /// before any driver call, when two entries have the same `from` or the same `to`; else as
    /// restore().
    void restore(const std::vector<GpuRemap>& gpu_remap) const;

    /// Unlocks a LOCKED process (cuCheckpointProcessUnlock): its blocked CUDA calls go on and it
    /// becomes RUNNING. Throws as state().
    void unlock() const;

private:
    int pid_;
};

}  // namespace cudacore::checkpoint
