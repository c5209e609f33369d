// Words for a failed system call: errno's name and text, and which limit a descriptor or
// process error means, so that a message says "EMFILE (Too many open files): this process has
// reached its limit of open files (RLIMIT_NOFILE, ulimit -n: 12)" instead of a guess.
#pragma once

#include <filesystem>
#include <string>

namespace cudacore::detail {

// "EMFILE (Too many open files)"; the number where glibc knows no name. Never throws beyond
// std::bad_alloc.
std::string errno_name_and_text(int error);

// The limit `error` means for a call that opens descriptors, starts a process or writes a file,
// with its current value where there is one: EMFILE, ENFILE, EAGAIN (processes), ENOMEM, ENOSPC,
// EDQUOT, EFBIG. Empty for other errors.
std::string resource_limit_hint(int error);

// "posix_spawn failed: EAGAIN (Resource temporarily unavailable): this user has reached its
// limit of processes (RLIMIT_NPROC, ulimit -u: 1)": the call, the error, and the limit hint.
std::string system_call_failure(const std::string& call, int error);

// Throws std::system_error(`error`) whose what() is "<call> '<path>': <error's text>", as the
// file helpers (atomic_file.hpp, input_file.hpp) report a failed call on a path.
[[noreturn]] void throw_errno(int error, const std::string& call, const std::filesystem::path& path);

}  // namespace cudacore::detail
