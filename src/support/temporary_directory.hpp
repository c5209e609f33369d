// The folder for temporary files ($TMPDIR, else /tmp), checked before anything is written there:
// a missing or relative $TMPDIR, or a nearly full file system, is found first and reported with
// the folder and the reason, instead of failing (or crashing: NVRTC's PCH dies with SIGBUS on a
// full file system) in the middle of a compile.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace cudacore::detail {

struct TemporaryDirectory {
    std::filesystem::path path;  // $TMPDIR when set and not empty, else /tmp
    // Empty when usable; else why not, naming the folder: "the temporary directory '/x' (from
    // TMPDIR) does not exist".
    std::string problem;
};

// Reads $TMPDIR now (it may change while the process runs). Never throws.
TemporaryDirectory temporary_directory() noexcept;

// Why `directory` cannot take files of `bytes` bytes now: less free space than that, or a file
// size limit (RLIMIT_FSIZE) below it; `purpose` says what needs the room ("the precompiled
// header"). Empty when there is room. Never throws.
std::string room_problem(const std::filesystem::path& directory, std::uint64_t bytes,
                         const std::string& purpose) noexcept;

}  // namespace cudacore::detail
