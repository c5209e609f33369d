// Scenarios for lifetime tests: each must end with exit code 0 and nothing on stderr.
//   static  - streams and events held in static objects, destroyed after main returns
//   reverse - many objects destroyed in reverse order of creation
//   random  - many objects destroyed in random orders, several rounds
//   reset   - objects destroyed after someone else reset the device's primary context
//   reset-kept-events - the context kept dropped events for reuse, then someone else reset the
//             device while a stream still holds the context: new events are not the dead ones
//   exit    - std::exit() from deep inside, with live objects on the stack and in statics
//   static-kernel - launched ObjectCode / Kernel held in statics: one made before the first launch
//             (destroyed after the deferred-unload thread stopped: left to the driver), one made
//             after it (destroyed inside exit() while the thread still runs: unloaded there)
//   exit-while-kernel-runs - the last handles to a running kernel's code dropped (its unload
//             deferred behind the kernel), then std::exit() while the kernel still runs: exit
//             stops the release that waits for the kernel (a wait without driver calls) and
//             leaves the library to the driver, instead of unloading it under the kernel
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "kernel_sources.hpp"
#include "loader/driver_api.hpp"
#include "runtime/library_box.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <optional>
#include <random>
#include <thread>
#include <variant>
#include <vector>

using namespace cudacore;

namespace {

std::optional<Stream> static_stream;
std::optional<Event> static_event;
std::vector<std::variant<Stream, Event, Context>> static_objects;

using Object = std::variant<Stream, Event, Context>;

// Made before main: destroyed after every atexit handler registered later.
std::optional<ObjectCode> static_code;
std::optional<Kernel> static_kernel;

ObjectCode compile(const Device& device, const char* source) {
    ProgramOptions options;
    options.name = "lifetime_scenarios";
    options.arch = device.arch();
    return Program(source, SourceType::cxx, options).compile(CodeType::cubin);
}

// Registered before the first launch, so it runs after the deferred-unload thread was stopped:
// by then an unload that was in progress when exit() began has finished.
void report_unloads_at_exit() {
    std::printf("at exit: %llu loads, %llu unloads\n",
                static_cast<unsigned long long>(detail::library_load_count()),
                static_cast<unsigned long long>(detail::library_unload_count()));
    std::fflush(stdout);
}

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
        } else if (std::strcmp(scenario, "reset-kept-events") == 0) {
            Stream before = device.create_stream();
            for (int i = 0; i < 4; ++i) {
                Event event = device.create_event();
                before.record(event);
                event.sync();
            }  // each complete when dropped: kept by the context that `before` holds
            CUresult status = detail::driver().cuDevicePrimaryCtxReset(device.handle());
            std::printf("reset: %d\n", static_cast<int>(status));
            std::fflush(stdout);
            // The kept events went with the context: a new event is made in a fresh one.
            Event after = device.create_event();
            Stream stream = device.create_stream();
            stream.record(after);
            stream.sync();
            if (!after.is_done()) {
                std::fprintf(stderr, "the event recorded after the reset is not done\n");
                return 1;
            }
        } else if (std::strcmp(scenario, "exit") == 0) {
            static_stream = device.create_stream();
            auto objects = make_objects(device, 12);
            std::printf("scenario %s done\n", scenario);
            std::fflush(stdout);
            std::exit(0);
        } else if (std::strcmp(scenario, "static-kernel") == 0) {
            constexpr std::size_t n = 256;
            Stream stream = device.create_stream();
            Buffer data = device.allocate(n * sizeof(float), stream);
            data.fill_byte(0, stream);
            static_code = compile(device, test::kSaxpySource);
            static_kernel = static_code->get_kernel("saxpy");
            launch(stream, LaunchConfig{.grid = 1, .block = n}, *static_kernel, 2.0f, data, data, n);
            // Made after the first launch: destroyed inside exit() before the deferred-unload
            // thread stops, so its (deferred) unload runs during exit.
            static Kernel late_kernel = compile(device, test::kSaxpySource).get_kernel("saxpy");
            launch(stream, LaunchConfig{.grid = 1, .block = n}, late_kernel, 3.0f, data, data, n);
            data.close(stream);
            stream.sync();
        } else if (std::strcmp(scenario, "exit-while-kernel-runs") == 0) {
            std::atexit(report_unloads_at_exit);
            Stream stream = device.create_stream();
            Buffer flag = device.allocate(2 * sizeof(int), stream);
            flag.fill_byte(0, stream);  // the flag is never set: the kernel runs until its timeout
            {
                ObjectCode code = compile(device, test::kSpinSource);
                Kernel kernel = code.get_kernel("wait_for_flag");
                const long long timeout_cycles = 400'000'000LL;  // about 0.2 s
                launch(stream, LaunchConfig{}, kernel, static_cast<int*>(flag.data()),
                       static_cast<int*>(flag.data()) + 1, timeout_cycles);
            }  // the last handles are gone: the unload waits (on the worker) for the kernel
            flag.close(stream);  // freed in stream order, after the kernel
            // Let the worker take up that release before exiting.
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            std::printf("kernel running: %s\n", stream.is_done() ? "no" : "yes");
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
