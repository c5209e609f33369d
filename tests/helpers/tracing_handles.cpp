// Uses the calls of cudacore/tracing_handles.hpp, for the test that records them through
// NVTX_INJECTION64_PATH (tests/helpers/nvtx_recorder.cpp):
//
//   helper_tracing_handles
//       Names this thread "main thread" and a second one "second thread" (by its id); in domain
//       "handles": starts "crosses threads" (category 3, payload 9) here and ends it on the
//       second thread; starts "first" then "second" and ends "first" before "second" (they
//       overlap, not nest); ends the ended RangeId again and an empty one (nothing recorded);
//       starts one from a message maker. Prints whether a tool is attached, how often the maker
//       ran, the ids, then "done".
#include "cudacore/tracing_handles.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <thread>

int main() {
    using namespace cudacore::tracing;
    const Domain domain("handles");
    int made = 0;
    name_current_thread("main thread");
    RangeId crossing = start_range(domain, "crosses threads", {.category = 3, .payload = 9});
    std::thread([&] {
        name_os_thread(static_cast<std::uint32_t>(::syscall(SYS_gettid)), "second thread");
        end_range(crossing);
    }).join();
    RangeId first = start_range(domain, "first");
    RangeId second = start_range(domain, [&] {
        ++made;
        return std::string("second");
    });
    const std::uint64_t first_id = first.value();
    const std::uint64_t second_id = second.value();
    end_range(first);
    end_range(second);
    end_range(first);  // ended: nothing
    RangeId empty;
    end_range(empty);
    std::cout << (tool_attached() ? "tool attached" : "no tool") << "\nmade " << made << "\nset "
              << crossing.is_set() << first.is_set() << "\nids " << first_id << " " << second_id
              << "\ndone\n";
    return 0;
}
