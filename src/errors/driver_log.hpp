// The driver's own words for a failed call (CUDA 12.9 and later: error log management). The
// loader registers driver_log_callback once per process, when it opens a driver that has
// cuLogsRegisterCallback; the driver calls it while a call is failing, and it keeps the message
// in a small fixed ring of the calling thread, made at the thread's first error line. Only a
// failure reads the ring (take_driver_log), so a successful call costs nothing more: no check,
// no allocation. Internal.
//
// Why a callback and a thread-local ring rather than cuLogsCurrent / cuLogsDumpToMemory: the
// dump reads the driver's one process-wide buffer, so the lines of one call could only be told
// apart with an iterator taken (cuLogsCurrent) before every call, which is work on the
// successful path, and other threads' lines would be mixed in. The reference does not name the
// thread the callback runs on; on a 580 driver (CUDA 13.0) the driver calls it inside the
// failing call, on the calling thread, before the call returns (a message such as "Allocation
// not found", then "Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemcpyHtoD_v2"), and statuses
// that are answers rather than failures (CUDA_ERROR_NOT_READY from a query) log nothing. The GPU
// test (tests/gpu/errors/driver_log_test.cpp) checks both: each error carries the text of its
// own failure, and another thread's lines stay there.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail {

// What the driver calls with each log message (cuLogsRegisterCallback). Copies at most
// kDriverLogLineBytes of an error-level message into this thread's ring, dropping the oldest
// line when it holds kDriverLogLines (warnings are ignored: they come with successful calls too,
// and would reach the next unrelated failure); allocates only the ring, at this thread's first
// error line (a line is dropped when that fails, or once the thread's exit freed the ring);
// never throws.
void driver_log_callback(void* data, CUlogLevel level, char* message, std::size_t length) noexcept;

inline constexpr std::size_t kDriverLogLines = 8;
inline constexpr std::size_t kDriverLogLineBytes = 512;

// This thread's lines for the failure of `call`, oldest first (trailing blanks removed, a line
// cut at kDriverLogLineBytes ending "...", a first line saying how many were dropped if the ring
// overflowed), and empties the ring. Called only when a status is not CUDA_SUCCESS.
//
// The driver ends a failed call's lines with "Returning N (NAME) from ENTRY_POINT". Lines up to
// an earlier such line belong to failures nobody reported (a probe whose failure is an answer),
// and are left out; so is the last group when its entry point is not `call` (an error cudacore
// builds itself, with no failing driver call). `call` matches an entry point of the same name or
// a versioned one ("cuMemAlloc" matches "cuMemAlloc_v2"). An empty `call`, or a driver that
// writes no such lines, keeps every line.
std::vector<std::string> take_driver_log(std::string_view call = {});

// Empties this thread's ring (a failure that is not reported: a shutdown status in a release).
void discard_driver_log() noexcept;

// "; driver log: LINE | LINE" for a message, or "" when `lines` is empty.
std::string describe_driver_log(const std::vector<std::string>& lines);

}  // namespace cudacore::detail
