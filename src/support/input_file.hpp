// Reading files handed in from outside (inputs, secrets, saved values, headers): one way to open
// them, so that each reader refuses the same things in the same words.
#pragma once

#include "support/file_descriptor.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace cudacore::detail {

// A file opened for reading (open_input_file): `file` and what its descriptor says of it, or,
// where it cannot be read, `refused` saying why.
struct OpenedInputFile {
    FileDescriptor file;
    std::uint64_t size = 0;
    mode_t mode = 0;      // type and permission bits (st_mode)
    std::uint64_t device = 0, inode = 0;  // the file's identity
    std::string refused;  // empty: opened, a regular file
};

// Opens `path` for reading without blocking (a FIFO is refused, not waited on; a terminal never
// becomes the controlling one) and checks, through the descriptor it is then read by, that it is
// a regular file. `refused` is "no such file", the errno's name and text ("EACCES (Permission
// denied)"), or "it is a FIFO, not a regular file". Never throws but std::bad_alloc.
OpenedInputFile open_input_file(const std::filesystem::path& path);

// Reads a whole regular file of at most `max_size` bytes, refusing larger ones before reading
// them, and anything that is not a regular file (a directory, a device, a FIFO: opened
// non-blocking, so a FIFO without a writer never hangs the read). Throws std::system_error
// (open/fstat/read failure; ENOENT when it does not exist; EISDIR / EINVAL for a directory or
// another kind of file) or std::length_error (larger than max_size), naming the path.
std::string read_file_bounded(const std::filesystem::path& path, std::uint64_t max_size);
// The same for a descriptor already open (`path` names it in errors).
std::string read_open_file_bounded(int fd, const std::filesystem::path& path,
                                   std::uint64_t max_size);

// "a directory", "a FIFO", "a character device"...: what kind of file `mode` says it is.
std::string_view file_kind(mode_t mode) noexcept;

}  // namespace cudacore::detail
