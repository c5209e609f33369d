/// @file
/// Streams: ordered queues of work on a device.
///
/// Ownership: copies share one stream. A stream created by cudacore is destroyed when its last
/// holder goes (its last copy, and whatever else holds it: buffers freed on it, ...); close()
/// ends it for every copy (docs/errors-and-lifetime.md, "Closing and resetting"); it holds its
/// context, so the context outlives it. Stream::from_handle wraps a stream the caller owns and
/// never destroys it. Destruction never throws; errors during release (driver shut down, device
/// reset) are ignored. A Stream may be used from several threads, except close(), which must not
/// race with other uses of the stream through any copy.
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
    /// Wraps a stream the caller owns. The wrapper never destroys it; the caller keeps the handle
    /// valid while any copy of the wrapper lives, and may destroy it once the last copy is gone,
    /// even with cudacore objects that used the stream still alive (a library whose kernels ran
    /// there, a buffer freed on it is the exception: it needs the stream at its free). When the
    /// last copy goes, cudacore marks the end of the work it put there (a host function) if
    /// releases may wait for it, and marks it again at each buffer freed there later; a release
    /// waits for the newest mark and never touches the handle. The context is taken from the
    /// stream (cuStreamGetCtx) and held when it is a primary context or one Context::create made.
    /// A default stream (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) is the one of the context current
    /// at this call, and stays that context's: every call on the Stream makes that context
    /// current for itself (as for Context::default_stream). With `options.take_ownership`, the stream is cudacore's from then on, as one it created:
    /// destroyed when its last holder goes (InvalidArgumentError for a default stream, which
    /// nobody destroys). Throws DriverError when the driver does not know the stream.
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
    /// An event may be of another device, except an IPC-enabled one (InvalidArgumentError: the
    /// driver crashes on it); an event wrapped with Event::from_handle must say ipc_enabled in its
    /// options for this check to apply.
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

    /// Host callbacks (cuLaunchHostFunc): runs `function` (any callable taking no arguments) on a
    /// driver thread once the work enqueued before it is done; later work waits for it. It must
    /// not call CUDA (the driver forbids it): no cudacore calls inside. An exception it throws is
    /// caught there (the process goes on) and thrown as HostFunctionError (original() holds it)
    /// by the next call on this Stream or a copy of it: launch_host_func, sync (after waiting),
    /// is_done, record, wait, check_host_functions or a launch on it; reported once, the first
    /// one when several threw. The callable is copied/moved into the stream and destroyed on a
    /// later call from a user thread (so its captures may own cudacore objects), or when the
    /// last copy of the Stream goes. Throws DriverError when the driver refuses the enqueue.
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

    /// Ends the stream for every holder, copies included (docs/errors-and-lifetime.md,
    /// "Closing and resetting"): work already queued on it still runs; a wrapped stream
    /// (from_handle) is never destroyed by cudacore. Calls given a closed stream (launch, copies,
    /// ...) throw InvalidArgumentError naming the call and the stream, where cuda.core would go
    /// on with the legacy default stream. DriverError when the release it makes fails.
    void close();
};

}  // namespace cudacore
