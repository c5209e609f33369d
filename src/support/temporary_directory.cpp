#include "support/temporary_directory.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cudacore::detail {

namespace {

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

TemporaryDirectory temporary_directory() noexcept {
    try {
        TemporaryDirectory temporary;
        const char* env = std::getenv("TMPDIR");
        const bool from_env = env && *env;
        temporary.path = from_env ? env : "/tmp";
        const std::string named = "the temporary directory '" + temporary.path.string() + "'" +
                                  (from_env ? " (from TMPDIR)" : "");
        struct stat info {};
        if (!temporary.path.is_absolute()) {
            temporary.problem = named + " is a relative path (it must be absolute)";
        } else if (::stat(temporary.path.c_str(), &info) != 0) {
            temporary.problem = named + (errno == ENOENT ? std::string(" does not exist")
                                                         : std::string(": ") + std::strerror(errno));
        } else if (!S_ISDIR(info.st_mode)) {
            temporary.problem = named + " is not a directory";
        } else if (::access(temporary.path.c_str(), W_OK | X_OK) != 0) {
            temporary.problem = named + " is not writable: " + std::strerror(errno);
        }
        return temporary;
    } catch (...) {  // std::bad_alloc
        return {"/tmp", "out of memory while checking the temporary directory"};
    }
}

std::string room_problem(const std::filesystem::path& directory, std::uint64_t bytes,
                         const std::string& purpose) noexcept {
    try {
        struct ::rlimit limit {};
        if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
            limit.rlim_cur < bytes) {
            return "the file size limit (" + std::to_string(limit.rlim_cur) + " bytes) is below the " +
                   mib(bytes) + " " + purpose + " may take";
        }
        struct ::statvfs space {};
        if (::statvfs(directory.c_str(), &space) == 0) {
            const std::uint64_t free = std::uint64_t{space.f_bavail} * space.f_frsize;
            if (free < bytes) {
                return "the directory '" + directory.string() + "' has " + mib(free) +
                       " free, less than the " + mib(bytes) + " " + purpose + " may take";
            }
        }
        return {};
    } catch (...) {
        return "out of memory while checking the room in '" + directory.string() + "'";
    }
}

}  // namespace cudacore::detail
