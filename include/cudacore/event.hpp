/// @file
/// Events: markers recorded on streams, for ordering and timing. Created unrecorded, recorded any
/// number of times. Copies share one event, released when the last holder goes or at close(); it
/// holds its context. Events are recycled cheaply (docs/design/release.md). Destruction never
/// throws.
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/context.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <chrono>
#include <memory>

namespace cudacore {

class Device;

/// How an event is created.
struct EventOptions {
    bool timing_enabled = false;  ///< needed to measure elapsed time
    bool blocking_sync = false;   ///< sync() yields the CPU instead of spinning
    bool ipc_enabled = false;     ///< shareable between processes; needs timing_enabled == false
};

/// Milliseconds with sub-microsecond resolution (the driver reports about 0.5 us).
using Milliseconds = std::chrono::duration<double, std::milli>;

/// How Event::from_handle treats an event the caller created.
struct EventFromHandleOptions {
    /// Destroy the event (cuEventDestroy) when the last copy goes. False: never destroyed.
    bool take_ownership = false;
    /// How the caller created it (timing_enabled decides whether elapsed times may be asked).
    EventOptions options{};
    /// Whether it has been recorded already (elapsed times need both events recorded).
    bool recorded = false;
};

/// A CUDA event, recorded on streams for ordering and timing; copies share it.
class Event : public OwningHandle<Event, detail::EventBox, CUevent> {
public:
    /// Wraps an event the caller created in `context` (the driver cannot tell an event's context:
    /// the caller says it; the Event holds it like its own events do). Without take_ownership the
    /// caller keeps the event valid while the Event is used and destroys it after. Throws
    /// InvalidArgumentError for a null handle, DriverError when the driver rejects it
    /// (cuEventQuery).
    static Event from_handle(CUevent event, const Context& context,
                             const EventFromHandleOptions& options = {});

    /// The driver's event, for the caller's own driver calls (cuEventRecord, cuStreamWaitEvent,
    /// cuEventQuery...); valid while this Event or a copy of it lives. sync() and is_done() see
    /// the records made through it too; is_recorded(), which elapsed times require, counts only
    /// the records made through cudacore. Thread-safe; null for a moved-from Event.
    CUevent handle() const noexcept;
    /// The options it was created with (as the caller said, for from_handle).
    const EventOptions& options() const noexcept;
    /// options().timing_enabled: whether elapsed times may be asked of it.
    bool timing_enabled() const noexcept { return options().timing_enabled; }
    /// True once recorded on a stream through cudacore.
    bool is_recorded() const noexcept;
    /// The context it was created in (held by the event).
    Context context() const;
    /// The device of that context.
    Device device() const;

    /// Waits until the work before the last record has finished.
    void sync() const;
    /// True when the work before the last record has finished (or it was never recorded).
    bool is_done() const;

    /// Ends the event for every holder, copies included (docs/errors-and-lifetime.md,
    /// "Closing and resetting"). DriverError when the release it makes fails (closed all the same).
    void close();
};

/// Time from `start` to `end`. Throws InvalidArgumentError when either was created without
/// timing_enabled or was never recorded (the message says which), and DriverError with
/// CUDA_ERROR_NOT_READY when either has not completed yet.
Milliseconds operator-(const Event& end, const Event& start);

/// Times a region of a stream: records a start event on construction and an end event on stop().
class ScopedTimer {
public:
    /// Creates two timing events on `stream`'s context and records the start on `stream`; holds
    /// the stream and both events. DriverError when creating or recording fails.
    explicit ScopedTimer(const Stream& stream);
    /// Records the end event; the first call only. Returns immediately (asynchronous).
    void stop();
    /// Stops if needed, waits for the end event and returns the elapsed time.
    Milliseconds elapsed();

private:
    Stream stream_;
    Event start_;
    Event end_;
    bool stopped_ = false;
};

}  // namespace cudacore
