// Crash-safe whole-file writes and bounded whole-file reads (internal; used by
// ObjectCode::save/load and the disk program cache).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Writes `data` to a new temporary file beside `path` (same directory, so rename is atomic),
// fsyncs it, renames it over `path` and fsyncs the directory. A crash at any point leaves either
// the previous file or the complete new one under `path`, plus at worst a stray temporary file
// whose name starts with "." and contains ".tmp-". `mode` is passed to open() (umask applies).
// Throws std::system_error whose what() names the failing call and the path.
void write_file_atomically(const std::filesystem::path& path, std::string_view data, mode_t mode);

// Whether `file_name` is a temporary file left by write_file_atomically.
bool is_atomic_write_temporary(std::string_view file_name) noexcept;

// Reads a whole file of at most `max_size` bytes (refusing larger ones before reading them).
// Throws std::system_error (open/fstat/read failure; ENOENT when it does not exist) or
// std::length_error (larger than max_size), naming the path.
std::string read_file_bounded(const std::filesystem::path& path, std::uint64_t max_size);

}  // namespace cudacore::detail
