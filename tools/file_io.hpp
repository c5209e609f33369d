// Reading and writing the files the CLI's commands take and produce.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace cudacore::cli {

// The largest input file the CLI reads (sources and code files; far above any real one).
inline constexpr std::uint64_t max_input_size = std::uint64_t{1} << 30;  // 1 GiB

// The one way the CLI reads a file it is given (sources, code, manifests, artefacts): the whole
// file, which must be a regular file of at most `limit` bytes. Opened without blocking and
// checked through the descriptor it is read from, so a FIFO is refused rather than waited on, and
// a directory or a device (/dev/zero) is refused before a byte is read. Throws
// InvalidArgumentError "cannot read [<what> ]'<path>': <why>" (absent, a directory, FIFO or
// device, too large, an I/O error); `what` names the file's role ("the manifest"), when given.
std::string read_input_file(const std::filesystem::path& path, std::string_view what = {},
                            std::uint64_t limit = max_input_size);

// Checks, as read_input_file does, that `path` can be read as a regular file (no size limit),
// for a reader of its own that reads no further than it must. Throws InvalidArgumentError
// "cannot read <what> '<path>': <why>".
void check_input_file(const std::filesystem::path& path, std::string_view what);
// Replaces the file at `path` with `bytes`, atomically: written to a temporary file beside it,
// fsynced, then renamed over it, so a full disk or a crash leaves the previous file whole (and
// no partial one). A symlink is followed, as cp and compilers do (a dangling one too: the file
// it points at is created); an existing file keeps its permission bits. Anything that is not a
// regular file (a directory, FIFO, device such as /dev/stdout, socket) is refused and left as
// it is, and so is an empty path. Names up to the file system's limit work. The output's
// directory must be writable (for the temporary file). Throws std::runtime_error naming the path
// and why.
void write_output_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace cudacore::cli
