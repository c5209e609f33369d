#include "support/parent_death.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace cudacore::detail {

void die_with_parent(pid_t parent) noexcept {
    if (parent <= 0) return;
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Asked after the request: a parent that ended before it was made left this process to
    // another one (init or a subreaper), and the request will never fire.
    if (::getppid() != parent) ::_exit(1);
}

void die_with_parent_from_environment() noexcept {
    const char* value = std::getenv(kParentPidVariable);
    if (!value || !*value) return;
    pid_t parent = 0;
    const char* end = value + std::strlen(value);
    const auto [stop, error] = std::from_chars(value, end, parent);
    if (error != std::errc() || stop != end) return;
    die_with_parent(parent);
}

}  // namespace cudacore::detail
