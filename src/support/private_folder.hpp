// A folder only this user (and root) can change, reached through descriptors, for what cudacore
// keeps on disk and later trusts (the program cache, header bundle folders): a path other users
// could redirect would let them put code or headers into this user's kernels.
//
// The folder's parent is resolved once (realpath: a link the user made, such as a home on another
// disk, is followed there), then every component is opened from "/" with O_NOFOLLOW, so a link
// swapped in later is refused, and checked: owned by this user or root, and writable by nobody
// else unless sticky (as /tmp is: others may add entries there but not rename or remove ours). The
// folder itself must be this user's, writable by nobody else, and no link. Internal.
#pragma once

#include <filesystem>
#include <string>

namespace cudacore::detail {

struct PrivateFolder {
    int fd = -1;          // O_RDONLY | O_DIRECTORY, the caller's to close; -1 with `problem`
    std::string problem;  // which component fails and why, or the failed call and errno
};

// Opens the absolute `path` as above, making it (0700) and its missing parents (0700) first when
// `create`. Never throws except std::bad_alloc.
PrivateFolder open_private_folder(const std::filesystem::path& path, bool create);

}  // namespace cudacore::detail
