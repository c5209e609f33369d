// A process started on cudacore's behalf dies with its parent: the helper programs
// (cudacore-link-worker) and forked children (compile_many's processes strategy) ask the kernel
// for SIGKILL when their parent ends (PR_SET_PDEATHSIG), then check that the parent is still the
// one that started them, which closes the race of a parent that ended before the request.
#pragma once

#include <sys/types.h>

namespace cudacore::detail {

// The environment variable run_child_process sets in a child: the parent's process id.
inline constexpr const char* kParentPidVariable = "CUDACORE_PARENT_PID";

// In a forked child: SIGKILL when the thread that forked `parent` ends, and _exit(1) at once when
// the parent is already gone (getppid() is no longer `parent`). Async-signal-safe.
void die_with_parent(pid_t parent) noexcept;

// In a helper program started by run_child_process: die_with_parent with the process id in
// $CUDACORE_PARENT_PID; nothing when it is unset or malformed (started by hand).
void die_with_parent_from_environment() noexcept;

}  // namespace cudacore::detail
