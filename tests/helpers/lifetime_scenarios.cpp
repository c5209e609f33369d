// Scenarios for lifetime tests: each must end with exit code 0 and nothing on stderr.
//   static  - streams and events held in static objects, destroyed after main returns
//   reverse - many objects destroyed in reverse order of creation
//   random  - many objects destroyed in random orders, several rounds
//   reset   - objects destroyed after someone else reset the device's primary context
//   exit    - std::exit() from deep inside, with live objects on the stack and in statics
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <variant>
#include <vector>

using namespace cudacore;

namespace {

std::optional<Stream> static_stream;
std::optional<Event> static_event;
std::vector<std::variant<Stream, Event, Context>> static_objects;

using Object = std::variant<Stream, Event, Context>;

std::vector<Object> make_objects(const Device& device, int count) {
    std::vector<Object> objects;
    for (int i = 0; i < count; ++i) {
        switch (i % 3) {
            case 0: objects.emplace_back(device.create_stream()); break;
            case 1: objects.emplace_back(device.create_event({.timing_enabled = (i % 2) == 0})); break;
            default: objects.emplace_back(device.context()); break;
        }
    }
    // Record every event on every stream so the objects are really in use.
    for (auto& s : objects)
        if (auto* stream = std::get_if<Stream>(&s))
            for (auto& e : objects)
                if (auto* event = std::get_if<Event>(&e)) stream->record(*event);
    return objects;
}

}  // namespace

int main(int argc, char** argv) {
    const char* scenario = argc > 1 ? argv[1] : "static";
    try {
        Device device(0);
        if (std::strcmp(scenario, "static") == 0) {
            static_stream = device.create_stream();
            static_event = device.create_event({.timing_enabled = true});
            static_stream->record(*static_event);
            static Stream function_static = device.create_stream();
            function_static.record(*static_event);
            for (auto& o : make_objects(device, 30)) static_objects.push_back(std::move(o));
        } else if (std::strcmp(scenario, "reverse") == 0) {
            auto objects = make_objects(device, 60);
            while (!objects.empty()) objects.pop_back();
        } else if (std::strcmp(scenario, "random") == 0) {
            std::mt19937 rng(12345);
            for (int round = 0; round < 20; ++round) {
                auto objects = make_objects(device, 30);
                std::shuffle(objects.begin(), objects.end(), rng);
                while (!objects.empty()) objects.erase(objects.begin());
            }
        } else if (std::strcmp(scenario, "reset") == 0) {
            auto objects = make_objects(device, 30);
            // Someone else resets the primary context under our live objects.
            CUresult status = detail::driver().cuDevicePrimaryCtxReset(device.handle());
            std::printf("reset: %d\n", static_cast<int>(status));
            std::fflush(stdout);
            std::shuffle(objects.begin(), objects.end(), std::mt19937(7));
            objects.clear();
            // The library keeps working afterwards with fresh objects.
            Stream stream = device.create_stream();
            stream.record(device.create_event());
            stream.sync();
        } else if (std::strcmp(scenario, "exit") == 0) {
            static_stream = device.create_stream();
            auto objects = make_objects(device, 12);
            std::printf("scenario %s done\n", scenario);
            std::fflush(stdout);
            std::exit(0);
        } else {
            std::fprintf(stderr, "unknown scenario %s\n", scenario);
            return 2;
        }
    } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    std::printf("scenario %s done\n", scenario);
    return 0;
}
