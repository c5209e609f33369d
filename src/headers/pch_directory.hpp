// Where NVRTC's automatic precompiled headers go: a folder of this process's own in the
// temporary directory, made on first use and removed at exit (NVRTC's --pch-dir), and checked
// for room before every compile that may write a PCH there. NVRTC maps the PCH file it writes,
// so a file system without room for it ends the process with SIGBUS instead of an error.
// The folders of processes that ended without their exit handlers (killed, crashed) are removed
// by the next process that makes its folder in the same temporary directory: each owner holds a
// lock on its folder while it lives, and a folder gets the name reclaimers act on only once that
// lock is held (support/owned_folder.hpp).
#pragma once

#include <cstddef>
#include <string>

namespace cudacore::detail {

struct PchDirectory {
    std::string path;     // the folder for --pch-dir, when usable
    std::string problem;  // why automatic PCH must be off now, naming the folder; empty if none
};

// The folder, or why PCH cannot be written: the temporary directory is unusable (missing,
// relative, not writable), or has less free space than `heap_size` (the PCH heap, the largest a
// PCH can be), or the file size limit is below it. Thread-safe; never throws.
PchDirectory automatic_pch_directory(std::size_t heap_size) noexcept;

// Reports `problem` through the warning handler (WarningKind::pch_off), once per process and
// folder. Never throws.
void warn_pch_off(const std::string& problem) noexcept;

}  // namespace cudacore::detail
