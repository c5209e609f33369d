"""Side by side, events (events.cpp's rows) through cuda.core and CuPy: create, create + destroy,
elapsed time."""

from .harness import EVENTS_PER_BATCH, LAUNCH_BLOCK, LOOKUPS, now_ns


def cuda_core_rows(cc, runner, device, stream, config, empty):
    system = "cuda.core"

    def create_events():
        events = []
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            events.append(device.create_event())
        elapsed = now_ns() - start
        del events
        return elapsed / EVENTS_PER_BATCH

    runner.compare("event_create", [(system, create_events, "Device.create_event() (timing disabled)")])

    def create_destroy_events():
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            device.create_event().close()
        return (now_ns() - start) / EVENTS_PER_BATCH

    runner.compare("event_create_destroy",
                   [(system, create_destroy_events,
                     "Device.create_event() (timing disabled) + Event.close()")])

    try:
        timing = cc.EventOptions(timing_enabled=True)
    except TypeError:
        timing = cc.EventOptions(enable_timing=True)  # older cuda.core
    start_event = stream.record(options=timing)
    cc.launch(stream, config, empty)
    end_event = stream.record(options=timing)
    end_event.sync()

    def elapsed_time():
        start = now_ns()
        for _ in range(LOOKUPS):
            end_event - start_event
        return (now_ns() - start) / LOOKUPS

    runner.compare("event_elapsed_time", [(system, elapsed_time, "end - start")])


def cupy_rows(cupy, runner, stream, empty):
    system = "CuPy"

    def create_events():
        events = []
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            events.append(cupy.cuda.Event(disable_timing=True))
        elapsed = now_ns() - start
        del events
        return elapsed / EVENTS_PER_BATCH

    runner.compare("event_create", [(system, create_events, "cupy.cuda.Event(disable_timing=True)")])

    def create_destroy_events():
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            event = cupy.cuda.Event(disable_timing=True)
            del event
        return (now_ns() - start) / EVENTS_PER_BATCH

    runner.compare("event_create_destroy",
                   [(system, create_destroy_events, "cupy.cuda.Event(disable_timing=True), then dropped")])

    start_event = cupy.cuda.Event()
    end_event = cupy.cuda.Event()
    with stream:
        start_event.record(stream)
        empty((1,), (LAUNCH_BLOCK,), ())
        end_event.record(stream)
    end_event.synchronize()

    def elapsed_time():
        start = now_ns()
        for _ in range(LOOKUPS):
            cupy.cuda.get_elapsed_time(start_event, end_event)
        return (now_ns() - start) / LOOKUPS

    runner.compare("event_elapsed_time", [(system, elapsed_time, "cupy.cuda.get_elapsed_time")])
