/// @file
/// Streams: ordered queues of work on a device. Copies share one stream, destroyed when its last
/// holder goes (copies, buffers freed on it...) or ended for every copy by close(); it holds its
/// context. Stream::from_handle wraps a stream the caller owns and never destroys it. Destruction
/// never throws. Usable from several threads, except close(), which must not race other uses.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/owning_handle.hpp"

#include <cuda.h>

#include <functional>
#include <memory>
#include <type_traits>
#include <optional>

namespace cudacore {

// HostTask is defined here because the template launch_host_func below wraps the caller's
// function in one.
namespace detail {
struct HostFunctionSlot;

/// One enqueued host function; run (and later destroyed) by the stream machinery.
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
    /// Does not synchronise with the legacy default stream.
    bool non_blocking = true;
    /// Lower numbers are higher priority. Must lie in the device's range
    /// (cuCtxGetStreamPriorityRange, e.g. -5 .. 0): a value outside it is an InvalidArgumentError
    /// naming the range (as cuda.core raises), not clamped. Empty: default.
    std::optional<int> priority{};
};

/// How Stream::from_handle wraps a stream (every from_handle takes one such struct,
/// `take_ownership` first: docs/api-conventions.md).
struct StreamFromHandleOptions {
    /// The stream is destroyed (cuStreamDestroy) when its last holder goes, as one cudacore
    /// created; false: the caller keeps and destroys it.
    bool take_ownership = false;
};

/// A CUDA stream: work enqueued on it runs in order; copies share it.
class Stream : public OwningHandle<Stream, detail::StreamBox, CUstream> {
public:
    /// Wraps a stream the caller owns and keeps valid while any copy lives; cudacore never
    /// destroys it unless `options.take_ownership` (not for a default stream:
    /// InvalidArgumentError). Holds its context. Throws DriverError for an unknown stream
    /// (docs/errors-and-lifetime.md).
    static Stream from_handle(CUstream stream, const StreamFromHandleOptions& options = {});

    // Copies share the stream and its closed state; a moved-from Stream is empty: assignment,
    // reset() and destruction are what it is good for, its own calls throw InvalidArgumentError
    // saying it is empty (OwningHandle).

    /// The context the stream belongs to (held by the stream). InvalidArgumentError when closed.
    Context context() const;
    /// The device of that context. InvalidArgumentError when closed.
    Device device() const;
    /// Whether the stream does not synchronise with the legacy default stream
    /// (CU_STREAM_NON_BLOCKING, from cuStreamGetFlags). InvalidArgumentError when closed,
    /// DriverError when the query fails.
    bool non_blocking() const;
    /// Its priority (cuStreamGetPriority; lower is higher). Throws as non_blocking().
    int priority() const;
    /// Whether cudacore created the stream and destroys it (false for from_handle).
    bool owns_handle() const noexcept;

    /// Records a new event (with the given options) at this point of the stream and returns it.
    Event record(const EventOptions& options) const;
    /// record() with default EventOptions. InvalidArgumentError when closed, DriverError when
    /// creating or recording the event fails, HostFunctionError for a pending host function error.
    Event record() const;
    /// Records an existing event at this point of the stream; may be done any number of times.
    void record(const Event& event) const;
    /// Later work on this stream waits for the event / for all work enqueued so far on `other`.
    /// Throws InvalidArgumentError for an IPC event of another device (the driver crashes on it).
    void wait(const Event& event) const;
    /// Records a new event on `other` and waits for it here. InvalidArgumentError when either
    /// stream is closed, DriverError when the driver refuses.
    void wait(const Stream& other) const;
    /// Blocks the calling thread until all work enqueued so far has finished
    /// (cuStreamSynchronize). InvalidArgumentError when closed, DriverError (an error of the work
    /// itself included), then HostFunctionError for a host function that threw.
    void sync() const;
    /// True when all work enqueued so far has finished.
    bool is_done() const;
    /// Begins recording this stream's work into a graph (include cudacore/graph_builder.hpp;
    /// relaxed mode by default): see GraphBuilder.
    GraphBuilder begin_capture() const;
    /// Begins a capture in `mode` (cuStreamBeginCapture). InvalidArgumentError when closed or
    /// already capturing for another GraphBuilder, DriverError when the driver refuses.
    GraphBuilder begin_capture(CaptureMode mode) const;
    /// True while the stream is capturing (cuStreamIsCapturing), by cudacore or anyone else.
    bool is_capturing() const;

    /// Runs `function` on a driver thread once the work before it is done (cuLaunchHostFunc);
    /// later work waits for it. It must not call CUDA. What it throws comes back as
    /// HostFunctionError from the next call on this Stream or a copy. The callable is destroyed
    /// later on a user thread, so its captures may own cudacore objects. Throws DriverError when
    /// the enqueue is refused.
    template <class Function>
    void launch_host_func(Function&& function) const {
        using Stored = std::decay_t<Function>;
        static_assert(std::is_invocable_v<Stored&>, "launch_host_func needs a callable f()");
        enqueue_host_task(std::make_unique<detail::HostTaskOf<Stored>>(std::forward<Function>(function)));
    }
    /// Throws the pending HostFunctionError, if any, and destroys finished host functions.
    void check_host_functions() const;
    /// launch_host_func's untemplated part (cudacore's own use): enqueues `task`, which the
    /// stream then owns.
    void enqueue_host_task(std::unique_ptr<detail::HostTask> task) const;

    /// Ends the stream for every copy (docs/errors-and-lifetime.md); queued work still runs, and a
    /// wrapped stream is never destroyed. Calls given a closed stream throw InvalidArgumentError.
    /// Throws DriverError when the release fails.
    void close();
};

}  // namespace cudacore
