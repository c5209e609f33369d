// Reading and writing the files the CLI's commands take and produce.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace cudacore::cli {

// The largest input file the CLI reads (sources and code files; far above any real one).
inline constexpr std::uint64_t max_input_size = std::uint64_t{1} << 30;  // 1 GiB

// The whole file, which must be a regular file of at most max_input_size bytes. Opened without
// blocking, so a FIFO is refused rather than waited on. Throws InvalidArgumentError naming the
// path and why (absent, a directory or device, too large, an I/O error).
std::string read_input_file(const std::filesystem::path& path);

// Replaces the file at `path` with `bytes`, atomically: written to a temporary file beside it,
// fsynced, then renamed over it, so a full disk or a crash leaves the previous file whole (and
// no partial one). A symlink is written through (the file it points to is replaced); an existing
// file keeps its permission bits. A path that is not a regular file (/dev/stdout, /dev/full, a
// FIFO) has nothing to replace: it is written directly, every write and the close checked. A
// FIFO without a reader is an error, not a wait. The output's directory must be writable (for
// the temporary file): a writable file in a read-only directory is refused rather than
// overwritten in place, which a failing write could truncate. Throws std::runtime_error naming
// the path and the failing call.
void write_output_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace cudacore::cli
