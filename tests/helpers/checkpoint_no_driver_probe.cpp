// Calls every checkpoint entry point that needs the driver and prints how each failed (run with
// the driver path pointing at a missing file).
#include "cudacore/checkpoint.hpp"
#include "expect_no_driver.hpp"

#include <chrono>

int main() {
    using cudacore::checkpoint::Process;
    const auto probe = cudacore::test::expect_no_driver;
    const Process self = Process::current();
    probe("Process::state", [&] { self.state(); });
    probe("Process::restore_thread_id", [&] { self.restore_thread_id(); });
    probe("Process::lock", [&] { self.lock(); });
    probe("Process::lock(timeout)", [&] { self.lock(std::chrono::milliseconds(100)); });
    probe("Process::checkpoint", [&] { self.checkpoint(); });
    probe("Process::restore", [&] { self.restore(); });
    probe("Process::unlock", [&] { self.unlock(); });
    return 0;
}
