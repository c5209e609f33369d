// Uses each part of the public tracing API once, for the test that records it through
// NVTX_INJECTION64_PATH (tests/helpers/nvtx_recorder.cpp):
//
//   helper_tracing_api
//       In domain "app": category 7 named "io", a registered string, nested ranges (an ASCII
//       message with colour, category and a signed payload; a registered message with a double;
//       a message made by a callable) with marks between them (unsigned, registered), a range in
//       domain "other" inside them, and two nested ranges on a second thread; then NVTX3's own
//       types in cudacore's domain (tracing::nvtx3_domain): a range "nvtx3 range" of category 1
//       holding a mark with the registered string "nvtx3 registered". Prints whether a tool is
//       attached and how often the message makers ran, then "done".
#include "cudacore/tracing.hpp"

#include <nvtx3/nvtx3.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <thread>

namespace {
struct Nvtx3Message {
    static constexpr const char* message = "nvtx3 registered";
};
}  // namespace

int main() {
    using namespace cudacore::tracing;
    int made = 0;
    const Domain app("app");
    // The deprecated forms, kept one release: used here so that they stay tested until removed.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    app.name_category(7, "io");
    const RegisteredString step = app.register_string("registered step");
    {
        const Range outer(app, "outer",
                          {.color = Color::rgb(255, 0, 0), .category = 7, .payload = std::int64_t{-5}});
        mark(app, "first mark", {.payload = std::uint64_t{42}});
        {
            const Range inner(app, step, {.payload = 2.5});
            const Range lazy(app, [&] {
                ++made;
                return "made " + std::to_string(3);
            });
            mark(app, step, {.category = 7});
            const Range elsewhere(Domain("other"), "in other domain");
        }
#pragma GCC diagnostic pop
        mark(app, [&] {
            ++made;
            return std::string("made mark");
        }, {.color = Color{0x80112233}, .payload = 7u});
    }
    {
        const nvtx3::scoped_range_in<nvtx3_domain> range("nvtx3 range", nvtx3::category{1});
        nvtx3::mark_in<nvtx3_domain>(nvtx3::registered_string_in<nvtx3_domain>::get<Nvtx3Message>());
    }
    std::thread([&] {
        const Range outer(app, "thread outer");
        const Range inner(app, "thread inner");
    }).join();
    std::cout << (tool_attached() ? "tool attached" : "no tool") << "\nmade " << made << "\ndone\n";
    return 0;
}
