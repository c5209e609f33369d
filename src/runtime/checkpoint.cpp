#include "cudacore/checkpoint.hpp"

#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <set>

namespace cudacore::checkpoint {

namespace {

std::string describe(int pid) {
    std::string text = "process " + std::to_string(pid);
    if (pid == static_cast<int>(::getpid())) text += " (the calling process)";
    return text;
}

// The entry point `slot` of the driver, or a DriverError saying this driver cannot do it (a
// driver older than CUDA 12.8, or a platform without checkpointing, lacks the symbols).
template <class Function>
Function entry_point(Function detail::DriverApi::*slot, const char* call, int pid) {
    const detail::DriverApi& api = detail::driver();
    if (Function function = api.*slot) return function;
    const int version = api.driver_version;
    throw DriverError(CUDA_ERROR_NOT_SUPPORTED, call,
                      describe(pid) + ": not supported by this driver (" + api.path +
                          ", CUDA " + std::to_string(version / 1000) + "." +
                          std::to_string(version % 1000 / 10) + ", has no " + call + ")");
}

}  // namespace

std::string to_string(ProcessState state) {
    switch (state) {
        case ProcessState::running: return "running";
        case ProcessState::locked: return "locked";
        case ProcessState::checkpointed: return "checkpointed";
        case ProcessState::failed: return "failed";
        case ProcessState::checkpointing: return "checkpointing";
        case ProcessState::restoring: return "restoring";
    }
    return "ProcessState(" + std::to_string(static_cast<int>(state)) + ")";
}

Process::Process(int pid) : pid_(pid) {
    if (pid <= 0)
        throw InvalidArgumentError("checkpoint::Process: pid " + std::to_string(pid) +
                                   " is not a process id (it must be positive)");
}

Process Process::current() { return Process(static_cast<int>(::getpid())); }

ProcessState Process::state() const {
    auto get = entry_point(&detail::DriverApi::cuCheckpointProcessGetState,
                           "cuCheckpointProcessGetState", pid_);
    CUprocessState state{};
    detail::check(get(pid_, &state), "cuCheckpointProcessGetState", [&] { return describe(pid_); });
    return static_cast<ProcessState>(state);
}

int Process::restore_thread_id() const {
    auto get = entry_point(&detail::DriverApi::cuCheckpointProcessGetRestoreThreadId,
                           "cuCheckpointProcessGetRestoreThreadId", pid_);
    int tid = 0;
    detail::check(get(pid_, &tid), "cuCheckpointProcessGetRestoreThreadId",
                  [&] { return describe(pid_); });
    return tid;
}

namespace {

void lock_with(int pid, unsigned timeout_ms) {
    auto lock = entry_point(&detail::DriverApi::cuCheckpointProcessLock,
                            "cuCheckpointProcessLock", pid);
    CUcheckpointLockArgs args{};  // reserved fields must be zero
    args.timeoutMs = timeout_ms;
    detail::check(lock(pid, &args), "cuCheckpointProcessLock", [&] {
        return describe(pid) + (timeout_ms ? ", timeout " + std::to_string(timeout_ms) + " ms"
                                           : std::string(", no timeout"));
    });
}

}  // namespace

void Process::lock() const { lock_with(pid_, 0); }

void Process::lock(std::chrono::milliseconds timeout) const {
    if (timeout.count() <= 0 || timeout.count() > static_cast<long long>(UINT_MAX))
        throw InvalidArgumentError(
            "checkpoint::Process::lock: timeout of " + std::to_string(timeout.count()) +
            " ms for " + describe(pid_) + " is out of range (1 to " + std::to_string(UINT_MAX) +
            " ms; lock() without a timeout waits as long as needed)");
    lock_with(pid_, static_cast<unsigned>(timeout.count()));
}

void Process::checkpoint() const {
    auto call = entry_point(&detail::DriverApi::cuCheckpointProcessCheckpoint,
                            "cuCheckpointProcessCheckpoint", pid_);
    CUcheckpointCheckpointArgs args{};
    detail::check(call(pid_, &args), "cuCheckpointProcessCheckpoint",
                  [&] { return describe(pid_); });
}

void Process::restore() const { restore({}); }

void Process::restore(const std::vector<GpuRemap>& gpu_remap) const {
    std::set<std::array<unsigned char, 16>> from;
    std::set<std::array<unsigned char, 16>> to;
    for (const GpuRemap& remap : gpu_remap) {
        if (!from.insert(remap.from).second || !to.insert(remap.to).second)
            throw InvalidArgumentError("checkpoint::Process::restore: the GPU remapping for " +
                                       describe(pid_) +
                                       " names one GPU twice (as source or as target)");
    }
    auto call = entry_point(&detail::DriverApi::cuCheckpointProcessRestore,
                            "cuCheckpointProcessRestore", pid_);
    std::vector<CUcheckpointGpuPair> pairs;
    pairs.reserve(gpu_remap.size());
    for (const GpuRemap& remap : gpu_remap) {
        CUcheckpointGpuPair pair{};
        std::copy(remap.from.begin(), remap.from.end(), pair.oldUuid.bytes);
        std::copy(remap.to.begin(), remap.to.end(), pair.newUuid.bytes);
        pairs.push_back(pair);
    }
    CUcheckpointRestoreArgs args{};
    args.gpuPairs = pairs.empty() ? nullptr : pairs.data();
    args.gpuPairsCount = static_cast<unsigned>(pairs.size());
    detail::check(call(pid_, &args), "cuCheckpointProcessRestore", [&] {
        return describe(pid_) + (pairs.empty() ? std::string()
                                               : ", " + std::to_string(pairs.size()) +
                                                     " GPU(s) remapped");
    });
}

void Process::unlock() const {
    auto call = entry_point(&detail::DriverApi::cuCheckpointProcessUnlock,
                            "cuCheckpointProcessUnlock", pid_);
    CUcheckpointUnlockArgs args{};
    detail::check(call(pid_, &args), "cuCheckpointProcessUnlock", [&] { return describe(pid_); });
}

}  // namespace cudacore::checkpoint
