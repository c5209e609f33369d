#include "support/private_folder.hpp"

#include "support/system_call_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <vector>

namespace cudacore::detail {
namespace {

namespace fs = std::filesystem;

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Why the folder `shown`, described by `info`, cannot be trusted; empty when it can. The last
// component must be the user's own; those above may be root's, and shared if sticky.
std::string untrusted(const struct stat& info, const std::string& shown, bool last) {
    const uid_t user = ::geteuid();
    std::string why;
    if (info.st_uid != user && (last || info.st_uid != 0))
        why = "is owned by another user (uid " + std::to_string(info.st_uid) + ")";
    else if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (last || (info.st_mode & S_ISVTX) == 0))
        why = "is writable by other users";
    if (why.empty()) return why;
    std::string message = "'";
    message.append(shown).append("' ").append(why);
    return message;
}

// The path with its parent resolved (links followed once, here), or the path as given when the
// parent does not exist yet (its missing components are made and checked as they come).
fs::path resolved(const fs::path& path) {
    fs::path existing = path.parent_path(), rest;
    while (!existing.empty() && existing != existing.root_path()) {
        char real[PATH_MAX];
        if (::realpath(existing.c_str(), real) != nullptr) return fs::path(real) / rest / path.filename();
        rest = existing.filename() / rest;
        existing = existing.parent_path();
    }
    return path;
}

}  // namespace

// Long because: one walk, each component opened, made where missing, and checked in turn.
PrivateFolder open_private_folder(const fs::path& given, bool create) {
    PrivateFolder result;
    if (!given.is_absolute()) {
        result.problem = given.string();
        result.problem.insert(0, 1, '\'').append("' is not an absolute path");
        return result;
    }
    const fs::path path = resolved(given.lexically_normal());
    std::vector<std::string> parts;
    for (const auto& part : path.relative_path()) if (!part.empty()) parts.push_back(part.string());
    int fd = ::open("/", kFolderFlags);
    if (fd < 0) {
        result.problem = "open '/' failed: " + errno_name_and_text(errno);
        return result;
    }
    fs::path shown = "/";
    for (std::size_t i = 0; i <= parts.size(); ++i) {
        struct stat info {};
        if (::fstat(fd, &info) != 0) {
            result.problem = "fstat '" + shown.string() + "' failed: " + errno_name_and_text(errno);
            ::close(fd);
            return result;
        }
        if (std::string why = untrusted(info, shown.string(), i == parts.size()); !why.empty()) {
            result.problem = why;
            ::close(fd);
            return result;
        }
        if (i == parts.size()) break;
        shown /= parts[i];
        if (create && ::mkdirat(fd, parts[i].c_str(), 0700) != 0 && errno != EEXIST) {
            result.problem = "mkdir '" + shown.string() + "' failed: " + errno_name_and_text(errno);
            ::close(fd);
            return result;
        }
        const int next = ::openat(fd, parts[i].c_str(), kFolderFlags);
        const int error = errno;
        ::close(fd);
        if (next < 0) {
            result.problem = error == ELOOP || error == ENOTDIR
                                 ? "'" + shown.string() + "' is a symbolic link or no folder"
                                 : "open '" + shown.string() + "' failed: " + errno_name_and_text(error);
            return result;
        }
        fd = next;
    }
    result.fd = fd;
    return result;
}

}  // namespace cudacore::detail
