/// @file
/// Events: markers recorded on streams, for ordering and timing.
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
    /// Destroy the event when the last copy goes; false: never destroyed.
    bool take_ownership = false;
    EventOptions options{};  ///< how the caller created it
    bool recorded = false;  ///< whether it has been recorded already
};

/// A CUDA event, created unrecorded and recorded any number of times. Copies share it, released
/// when the last holder goes or at close(); it holds its context. Usable from any thread;
/// destruction never throws. Members throw DriverError when the driver refuses.
class Event : public OwningHandle<Event, detail::EventBox, CUevent> {
public:
    /// Wraps an event the caller created in `context`, which the Event holds; without
    /// take_ownership the caller keeps it valid meanwhile. InvalidArgumentError for null.
    static Event from_handle(CUevent event, const Context& context,
                             const EventFromHandleOptions& options = {});

    CUevent handle() const noexcept;  ///< the driver's event; valid while any copy lives
    const EventOptions& options() const noexcept;  ///< the options it was created with
    /// Whether elapsed times may be asked of it.
    bool timing_enabled() const noexcept { return options().timing_enabled; }
    bool is_recorded() const noexcept;  ///< true once recorded on a stream through cudacore
    Context context() const;  ///< the context it was created in
    Device device() const;  ///< the device of that context

    void sync() const;  ///< waits until the work before the last record has finished
    /// True when the work before the last record has finished (or it was never recorded).
    bool is_done() const;

    /// Ends the event for every holder; DriverError when the release fails (closed all the same).
    void close();
};

/// Time from `start` to `end`. InvalidArgumentError when either lacks timing_enabled or was never
/// recorded; DriverError (CUDA_ERROR_NOT_READY) when either has not completed yet.
Milliseconds operator-(const Event& end, const Event& start);

/// Times a region of a stream: records a start event on construction and an end event on stop().
class ScopedTimer {
public:
    /// Creates two timing events on `stream`'s context (all held) and records the start.
    explicit ScopedTimer(const Stream& stream);
    void stop();  ///< records the end event (the first call only), without waiting
    /// Stops if needed, waits for the end event and returns the elapsed time.
    Milliseconds elapsed();

private:
    Stream stream_;
    Event start_;
    Event end_;
    bool stopped_ = false;
};

}  // namespace cudacore
