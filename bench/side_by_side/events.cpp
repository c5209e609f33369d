// Side by side, events (needs a GPU): creating events, creating and destroying them, and the
// elapsed time between two recorded ones.
#include "side_by_side/areas.hpp"

#include "cudacore/event.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "loader/driver_api.hpp"

#include <stdexcept>

namespace cudacore::bench::side_by_side {

const std::vector<std::string> event_operation_names = {"event_create", "event_create_destroy",
                                                        "event_elapsed_time"};

void event_operations(Runner& runner, const Device& device, const Stream& stream,
                      const std::string& launch_cubin) {
    const auto& api = detail::driver();
    constexpr int events_per_batch = 64;
    runner.compare(
        "event_create", {5, 300},
        {{"raw",
          [&] {
              std::vector<CUevent> events(events_per_batch);
              const double ns = nanoseconds([&] {
                  for (auto& event : events)
                      detail::check(api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
              });
              for (CUevent event : events) api.cuEventDestroy(event);
              return ns / events_per_batch;
          },
          "cuEventCreate (timing disabled); destroyed outside the timing"},
         {"cudacore", [&] {
              std::vector<Event> events;
              events.reserve(events_per_batch);
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < events_per_batch; ++i) events.push_back(device.create_event());
              });
              events.clear();
              return ns / events_per_batch;
          },
          "Device::create_event() (timing disabled), taking the events the previous batch "
          "dropped (event.hpp: reuse); destroyed outside the timing"}});

    // The whole life of an event made and dropped at once: what a loop pays per event.
    runner.compare(
        "event_create_destroy", {5, 300},
        {{"raw",
          [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < events_per_batch; ++i) {
                             CUevent event = nullptr;
                             detail::check(api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                                           "cuEventCreate");
                             detail::check(api.cuEventDestroy(event), "cuEventDestroy");
                         }
                     }) / events_per_batch;
          },
          "cuEventCreate + cuEventDestroy (timing disabled)"},
         {"cudacore", [&] {
              return nanoseconds([&] {
                         for (int i = 0; i < events_per_batch; ++i) {
                             Event event = device.create_event();
                             if (event.is_recorded()) throw std::runtime_error("a recorded new event");
                         }
                     }) / events_per_batch;
          },
          "Device::create_event() (timing disabled), then the Event dropped"}});

    // Two timing events around an empty kernel, recorded once: the rows read them again and again.
    const ObjectCode code = ObjectCode::from_cubin(launch_cubin, "launch.cubin");
    const Kernel empty = code.get_kernel("empty");
    const Event start = device.create_event({.timing_enabled = true});
    const Event end = device.create_event({.timing_enabled = true});
    stream.record(start);
    launch(stream, LaunchConfig{.grid = 1, .block = launch_block}, empty);
    stream.record(end);
    end.sync();
    constexpr int elapsed_per_batch = 100;
    runner.compare(
        "event_elapsed_time", {5, 300},
        {{"raw",
          [&] {
              float ms = 0;
              return nanoseconds([&] {
                         for (int i = 0; i < elapsed_per_batch; ++i)
                             detail::check(api.cuEventElapsedTime(&ms, start.handle(), end.handle()),
                                           "cuEventElapsedTime");
                     }) / elapsed_per_batch;
          },
          "cuEventElapsedTime on two completed events"},
         {"cudacore", [&] {
              Milliseconds total{0};
              const double ns = nanoseconds([&] {
                  for (int i = 0; i < elapsed_per_batch; ++i) total += end - start;
              });
              if (total.count() < 0) throw std::runtime_error("negative elapsed time");
              return ns / elapsed_per_batch;
          },
          "end - start (checks both were recorded with timing)"}});
}

}  // namespace cudacore::bench::side_by_side
