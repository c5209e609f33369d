/// @file
/// Streams: ordered queues of work on a device. Copies share one stream, destroyed when its last
/// holder goes or ended for every copy by close(); it holds its context.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/owning_handle.hpp"

#include <cuda.h>

#include <functional>
#include <memory>
#include <type_traits>
#include <optional>

namespace cudacore {

namespace detail {
struct HostFunctionSlot;

struct HostTask {
    virtual ~HostTask() = default;
    virtual void run() = 0;
    std::shared_ptr<HostFunctionSlot> slot;
};

template <class Function>
struct HostTaskOf final : HostTask {
    explicit HostTaskOf(Function&& f) : function(std::move(f)) {}
    explicit HostTaskOf(const Function& f) : function(f) {}
    void run() override { std::invoke(function); }
    Function function;
};
}

class Device;
class Event;
struct EventOptions;
class GraphBuilder;
enum class CaptureMode : int;  ///< graph_builder.hpp

/// How a stream is created.
struct StreamOptions {
    bool non_blocking = true;  ///< does not synchronise with the legacy default stream
    /// Lower is higher priority, in the device's range (else InvalidArgumentError).
    std::optional<int> priority{};
};

/// How Stream::from_handle wraps a stream.
struct StreamFromHandleOptions {
    /// Destroy the stream when its last holder goes; false: the caller destroys it.
    bool take_ownership = false;
};

/// A CUDA stream: work enqueued on it runs in order; copies share it. Every member but
/// owns_handle() throws InvalidArgumentError when the stream is closed or empty, and DriverError
/// when the driver refuses; a pending host function's error comes back as HostFunctionError.
/// All are thread-safe except close(), which must not race other uses.
class Stream : public OwningHandle<Stream, detail::StreamBox, CUstream> {
public:
    /// Wraps a stream the caller keeps valid (owned only with take_ownership, refused for a
    /// default stream). DriverError for an unknown stream.
    static Stream from_handle(CUstream stream, const StreamFromHandleOptions& options = {});

    /// The context the stream belongs to (held by the stream).
    Context context() const;
    /// The device of that context.
    Device device() const;
    /// Whether the stream does not synchronise with the legacy default stream.
    bool non_blocking() const;
    /// Its priority (lower is higher).
    int priority() const;
    /// Whether cudacore created the stream and destroys it (false for from_handle).
    bool owns_handle() const noexcept;

    /// Records a new event (with the given options) at this point of the stream and returns it.
    Event record(const EventOptions& options) const;
    /// record() with default EventOptions.
    Event record() const;
    /// Records an existing event at this point of the stream; may be done any number of times.
    void record(const Event& event) const;
    /// Later work waits for the event (InvalidArgumentError: an IPC event of another device).
    void wait(const Event& event) const;
    /// Later work on this stream waits for all work enqueued so far on `other`.
    void wait(const Stream& other) const;
    /// Blocks until all work enqueued so far has finished (its errors thrown as DriverError).
    void sync() const;
    /// True when all work enqueued so far has finished.
    bool is_done() const;
    /// Begins recording this stream's work into a graph, relaxed mode (graph_builder.hpp).
    GraphBuilder begin_capture() const;
    /// Begins a capture in `mode`; InvalidArgumentError when already capturing for another.
    GraphBuilder begin_capture(CaptureMode mode) const;
    /// True while the stream is capturing, by cudacore or anyone else.
    bool is_capturing() const;

    /// Runs `function` on a driver thread after the work before it; it must not call CUDA. It is
    /// destroyed later on a user thread, so its captures may own cudacore objects.
    template <class Function>
    void launch_host_func(Function&& function) const {
        using Stored = std::decay_t<Function>;
        static_assert(std::is_invocable_v<Stored&>, "launch_host_func needs a callable f()");
        enqueue_host_task(std::make_unique<detail::HostTaskOf<Stored>>(std::forward<Function>(function)));
    }
    /// Throws the pending HostFunctionError, if any, and destroys finished host functions.
    void check_host_functions() const;
    /// launch_host_func's untemplated part: enqueues `task`, which the stream then owns.
    void enqueue_host_task(std::unique_ptr<detail::HostTask> task) const;

    /// Ends the stream for every copy; queued work still runs, a wrapped stream is not destroyed.
    void close();
};

}  // namespace cudacore
