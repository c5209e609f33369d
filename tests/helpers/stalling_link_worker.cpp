// A link worker that never answers: it asks to die with its parent as cudacore-link-worker does
// (die_with_parent_from_environment), appends its process id to $CUDACORE_TEST_WORKER_PIDS, and
// waits for ever. For the tests of what becomes of a worker whose CLI is killed.
#include "support/parent_death.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

int main() {
    cudacore::detail::die_with_parent_from_environment();
    if (const char* file = std::getenv("CUDACORE_TEST_WORKER_PIDS"))
        std::ofstream(file, std::ios::app) << ::getpid() << "\n";
    for (;;) ::pause();
}
