// Streams: ordered queues of work on a device.
//
// Ownership: copies share one stream. A stream created by cudacore is destroyed when its last
// copy goes; it holds its context, so the context outlives it. Stream::from_handle wraps a
// stream the caller owns and never destroys it. Destruction never throws; errors during release
// (driver shut down, device reset) are ignored. A Stream may be used from several threads.
#pragma once

#include "cudacore/context.hpp"

#include <cuda.h>

#include <memory>
#include <optional>

namespace cudacore {

namespace detail {
struct StreamBox;
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
    // Wraps a stream the caller owns. The wrapper never destroys it; the caller keeps it valid
    // while the wrapper is used. The context is taken from the stream (cuStreamGetCtx).
    static Stream from_handle(CUstream stream);

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

    bool operator==(const Stream& other) const noexcept { return handle() == other.handle(); }

    explicit Stream(std::shared_ptr<detail::StreamBox> box) noexcept : box_(std::move(box)) {}
    const std::shared_ptr<detail::StreamBox>& box() const noexcept { return box_; }

private:
    std::shared_ptr<detail::StreamBox> box_;
};

}  // namespace cudacore
