#include "support/system_call_error.hpp"

#include <system_error>

#include <sys/resource.h>

#include <cstring>

namespace cudacore::detail {

namespace {

// "12", or "unlimited".
std::string soft_limit(int resource) {
    struct ::rlimit limit {};
    if (::getrlimit(resource, &limit) != 0) return "unknown";
    if (limit.rlim_cur == RLIM_INFINITY) return "unlimited";
    return std::to_string(limit.rlim_cur);
}

}  // namespace

std::string errno_name_and_text(int error) {
    const char* name = ::strerrorname_np(error);
    return (name ? std::string(name) : "errno " + std::to_string(error)) + " (" + std::strerror(error) + ")";
}

std::string resource_limit_hint(int error) {
    switch (error) {
        case EMFILE:
            return "this process has reached its limit of open files (RLIMIT_NOFILE, ulimit -n: " +
                   soft_limit(RLIMIT_NOFILE) + ")";
        case ENFILE: return "the system has reached its limit of open files (fs.file-max)";
        case EAGAIN:
            return "this user has reached its limit of processes (RLIMIT_NPROC, ulimit -u: " +
                   soft_limit(RLIMIT_NPROC) + "), or the system its limit of threads "
                   "(kernel.threads-max, kernel.pid_max)";
        case ENOMEM: return "there is not enough memory (or address space, ulimit -v: " +
                            soft_limit(RLIMIT_AS) + ") for it";
        case ENOSPC: return "the file system is full";
        case EDQUOT: return "the disk quota is used up";
        case EFBIG: return "the file size limit (RLIMIT_FSIZE: " + soft_limit(RLIMIT_FSIZE) +
                           " bytes) is reached";
        default: return {};
    }
}

std::string system_call_failure(const std::string& call, int error) {
    std::string message = call + " failed: " + errno_name_and_text(error);
    if (std::string hint = resource_limit_hint(error); !hint.empty()) message += ": " + hint;
    return message;
}

void throw_errno(int error, const std::string& call, const std::filesystem::path& path) {
    throw std::system_error(error, std::generic_category(), call + " '" + path.string() + "'");
}

}  // namespace cudacore::detail
