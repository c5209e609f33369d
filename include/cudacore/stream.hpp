// Streams: ordered queues of work on a device.
//
// Ownership: copies share one stream. A stream created by cudacore is destroyed when its last
// copy goes; it holds its context, so the context outlives it. Stream::from_handle wraps a
// stream the caller owns and never destroys it. Destruction never throws; errors during release
// (driver shut down, device reset) are ignored. A Stream may be used from several threads.
#pragma once

#include "cudacore/context.hpp"

#include <cuda.h>

#include <functional>
#include <memory>
#include <type_traits>
#include <optional>

namespace cudacore {

namespace detail {
struct StreamBox;
struct BoxAccess;
struct HostFunctionSlot;

// One enqueued host function; run (and later destroyed) by the stream machinery.
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
enum class CaptureMode : int;  // graph_builder.hpp

struct StreamOptions {
    // Does not synchronise with the legacy default stream.
    bool non_blocking = true;
    // Lower numbers are higher priority. Must lie in the device's range
    // (cuCtxGetStreamPriorityRange, e.g. -5 .. 0): a value outside it is an InvalidArgumentError
    // naming the range (as cuda.core raises), not clamped. Empty: default.
    std::optional<int> priority;
};

class Stream {
public:
    // Wraps a stream the caller owns. The wrapper never destroys it; the caller keeps the handle
    // valid while any copy of the wrapper lives, and may destroy it once the last copy is gone,
    // even with cudacore objects that used the stream still alive (a library whose kernels ran
    // there, a buffer freed on it is the exception: it needs the stream at its free). When the
    // last copy goes, cudacore records an event on the stream if releases may wait for the work
    // it put there; from then on it never touches the handle. The context is taken from the
    // stream (cuStreamGetCtx). Throws DriverError when the driver does not know the stream.
    static Stream from_handle(CUstream stream);

    Stream(const Stream& other) noexcept;
    Stream(Stream&& other) noexcept;
    Stream& operator=(const Stream& other) noexcept;
    Stream& operator=(Stream&& other) noexcept;
    ~Stream();

    CUstream handle() const noexcept;
    Context context() const;
    Device device() const;
    bool non_blocking() const;
    int priority() const;
    bool owns_handle() const noexcept;

    // Records a new event (with the given options) at this point of the stream and returns it.
    Event record(const EventOptions& options) const;
    Event record() const;
    // Records an existing event at this point of the stream; may be done any number of times.
    void record(const Event& event) const;
    // Later work on this stream waits for the event / for all work enqueued so far on `other`.
    // An event may be of another device, except an IPC-enabled one (InvalidArgumentError: the
    // driver crashes on it); an event wrapped with Event::from_handle must say ipc_enabled in its
    // options for this check to apply.
    void wait(const Event& event) const;
    void wait(const Stream& other) const;
    void sync() const;
    // True when all work enqueued so far has finished.
    bool is_done() const;
    // Begins recording this stream's work into a graph (include cudacore/graph_builder.hpp;
    // relaxed mode by default): see GraphBuilder.
    GraphBuilder begin_capture() const;
    GraphBuilder begin_capture(CaptureMode mode) const;
    // True while the stream is capturing (cuStreamIsCapturing), by cudacore or anyone else.
    bool is_capturing() const;

    // Host callbacks (cuLaunchHostFunc): runs `function` (any callable taking no arguments) on a
    // driver thread once the work enqueued before it is done; later work waits for it. It must
    // not call CUDA (the driver forbids it): no cudacore calls inside. An exception it throws is
    // caught there (the process goes on) and thrown as HostFunctionError (original() holds it)
    // by the next call on this Stream or a copy of it: launch_host_func, sync (after waiting),
    // is_done, record, wait, check_host_functions or a launch on it; reported once, the first
    // one when several threw. The callable is copied/moved into the stream and destroyed on a
    // later call from a user thread (so its captures may own cudacore objects), or when the
    // last copy of the Stream goes. Throws DriverError when the driver refuses the enqueue.
    template <class Function>
    void launch_host_func(Function&& function) const {
        using Stored = std::decay_t<Function>;
        static_assert(std::is_invocable_v<Stored&>, "launch_host_func needs a callable f()");
        enqueue_host_task(std::make_unique<detail::HostTaskOf<Stored>>(std::forward<Function>(function)));
    }
    // Throws the pending HostFunctionError, if any, and destroys finished host functions.
    void check_host_functions() const;
    void enqueue_host_task(std::unique_ptr<detail::HostTask> task) const;

    bool operator==(const Stream& other) const noexcept { return handle() == other.handle(); }

    const std::shared_ptr<detail::StreamBox>& box() const noexcept { return box_; }

private:
    friend struct detail::BoxAccess;
    explicit Stream(std::shared_ptr<detail::StreamBox> box) noexcept;
    std::shared_ptr<detail::StreamBox> box_;
    // Set for a stream the caller owns: this object counts itself among the box's wrappers.
    bool counted_ = false;
};

}  // namespace cudacore
