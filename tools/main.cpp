// cudacore: compile, link, inspect and run CUDA code from the command line.
#include "commands.hpp"

#include "cudacore/version.hpp"
#include "cudacore/warnings.hpp"

#include "support/termination_signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace {

// A closed standard descriptor would be the next file the command opens (a lock, a cache entry's
// temporary file), and what it prints would go into that file. Each is held by /dev/null opened
// for reading only, so that a write to it still fails, and is reported, as it would have.
void hold_closed_standard_descriptors() noexcept {
    for (int fd = 0; fd <= 2; ++fd)
        if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF && ::open("/dev/null", O_RDONLY) != fd) return;
}

}  // namespace

int main(int argc, char** argv) {
    hold_closed_standard_descriptors();
    // Before any thread starts: SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1 and SIGUSR2 remove our
    // temporaries and then end the process as the signal does (130, 143, 129...), whatever NVRTC
    // does with their handlers.
    cudacore::detail::end_by_signal_after_removing_temporaries();
    // Every warning the library raises reaches the user (a compile that was not cached, a
    // remote cache that failed, a repaired disk cache...): the library raises each once.
    cudacore::set_warning_handler([](const cudacore::Warning& warning) {
        std::cerr << "cudacore: warning: " << warning.message << "\n";
    });
    CLI::App app{"cudacore: compile, link, cache and launch CUDA C++ at run time"};
    app.set_version_flag("--version", std::string("cudacore ") + cudacore::version());
    app.require_subcommand(1);
    cudacore::cli::add_devices_command(app);
    cudacore::cli::add_demo_command(app);
    cudacore::cli::add_compile_command(app);
    cudacore::cli::add_link_command(app);
    cudacore::cli::add_inspect_command(app);
    cudacore::cli::add_cache_command(app);
    cudacore::cli::add_bundle_command(app);
    int status = 0;
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        status = app.exit(e);  // --help and --version print here, and exit 0
    } catch (const std::exception& e) {  // cudacore::Error and anything else: one line, exit 1
        std::cerr << "cudacore: " << e.what() << "\n";
        return 1;
    }
    // What the command printed must have reached its output (a full disk, a closed descriptor):
    // else a script that reads it would take nothing for an answer.
    std::cout.flush();
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
        const int error = errno;
        std::cerr << "cudacore: writing to the standard output failed"
                  << (error ? std::string(": ") + std::strerror(error) : std::string()) << "\n";
        return status != 0 ? status : 1;
    }
    return status;
}
