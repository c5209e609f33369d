// The view of the files a C++ compile read, the one thing a cached compile is keyed by: every
// header (path, stamp, digest) and every include lookup (path, what it finds). For a compile it is
// taken once, after NVRTC is done, each file read once (the bytes that are scanned for includes
// are the bytes that are hashed), and checked against the moment the compile began, as ccache's
// direct mode does: a header, a file a lookup finds, or the folder of a lookup or a header changed
// at or after that moment ("too new"), or a search folder that is another folder now, means that
// NVRTC and the view may have seen different files, and the view says so (`changed`): the code is
// then returned, never stored. File times come from the kernel's coarse clock (or the real time),
// and compile_start() waits until that clock has passed the start, so a change after the start
// is never stamped before it. The toolkit's
// headers are taken as fixed while the process runs (header_key.hpp). Internal.
#pragma once

#include "headers/include_lookups.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudacore::detail {

// What stat says of a file. Any write changes it: the size or mtime, and always ctime (which
// cannot be set back); a file replaced by another has another inode.
struct FileStamp {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    bool operator==(const FileStamp&) const = default;
};

// The stamp of the regular file at `path` (symbolic links followed), or nullopt.
std::optional<FileStamp> file_stamp(const std::string& path);

// A file's SHA-256 (hex) and the stamp it was read with. `settled`: the file had not changed for
// two seconds when it was read, so an equal stamp later means equal contents (two edits within one
// tick of the file system's clock could give equal stamps).
struct FileDigest {
    FileStamp stamp;
    bool settled = false;
    std::string digest;
};

// A file's contents; nullopt when it cannot be read.
std::optional<std::string> read_whole_file(const std::string& path);

// The digest of the regular file at `path`, or nullopt when it is not one or cannot be read. Read
// and hashed only when its stamp differs from the one this process saw last or was not settled
// then (one stat otherwise). Thread-safe.
std::optional<FileDigest> file_digest(const std::string& path);

// The moment a compile began (on the clock of file times) and what each folder
// of its search was then, so that a folder swapped for another during the compile is seen.
struct CompileStart {
    std::int64_t began_ns = 0;
    std::vector<std::pair<std::string, std::optional<FileStamp>>> folders;
};

// Taken before the compile and its header pass start: the real time now, and the compile starts
// once the coarse clock (file times) has passed it, a wait of a few ms, so that a file written
// before the call is stamped before the start and one written after the start at or after it.
// Never throws except std::bad_alloc.
CompileStart compile_start(const IncludeSearch& search);

struct FileView {
    std::vector<std::pair<std::string, FileDigest>> headers;    // sorted by path
    std::vector<std::pair<std::string, std::string>> lookups;   // path, lookup_state(); sorted
    // Why the files may not be those the compile read (the path and what changed), or empty.
    std::string changed;
    // Why the lookups cannot be known or a header cannot be read (no key can be made), or empty.
    std::string refusal;
};

// The view of a compile that began at `start`, of `main_source` (named `main_name`), searching
// `search`, whose header pass reported `headers_read`. Never throws except std::bad_alloc.
FileView take_file_view(const IncludeSearch& search, const std::string& main_name,
                        std::string_view main_source, const std::vector<std::string>& headers_read,
                        const std::vector<std::string>& toolkit_directories,
                        const CompileStart& start);

// The view of the files a stored header record names, as they are now (a cache lookup: no compile
// to compare with). `refusal` names a header that cannot be read. Headers and lookups inside
// `toolkit_directories` are looked at once per process (the toolkit is taken as fixed while the
// process runs, as header_key.hpp says): a record of <cuda/std> names hundreds of them, and a new
// program's first lookup would stat every one. Thread-safe. Never throws except bad_alloc.
FileView view_of_record(const std::vector<std::string>& headers,
                        const std::vector<std::string>& lookups,
                        const std::vector<std::string>& toolkit_directories);

// Forgets the toolkit files view_of_record remembered (forget_header_keys: as a new process).
void forget_toolkit_views();

}  // namespace cudacore::detail
