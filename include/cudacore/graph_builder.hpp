/// @file
/// GraphBuilder: builds a Graph by stream capture of everything cudacore enqueues on its stream
/// between begin() and end(); split(n) / join fork and join, if_then... record conditional
/// bodies. Guide: docs/graphs.md.
///
///     GraphBuilder builder = stream.begin_capture();           // or GraphBuilder(device).begin()
///     launch(builder, config, saxpy, a, x, y, n);               // a builder is a Stream for this
///     y.copy_to(pinned_result, builder);
///     Graph graph = builder.end();
///     GraphExec exec = graph.instantiate();
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_conditional.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>
#include <string>

namespace cudacore {

/// How strictly a capture refuses unsafe calls (declared, opaque, in stream.hpp).
enum class CaptureMode : int {
    global,      ///< CU_STREAM_CAPTURE_MODE_GLOBAL
    per_thread,  ///< CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
    relaxed,     ///< CU_STREAM_CAPTURE_MODE_RELAXED (the default, as in cuda.core)
};

/// "global", "per_thread", "relaxed"; "CaptureMode(N)" for a value outside the enumeration.
std::string to_string(CaptureMode mode);

/// The driver's mode for `mode`. No driver needed.
CUstreamCaptureMode capture_mode_flag(CaptureMode mode);
/// "global", "thread-local" or "relaxed" ("unknown" for other values).
const char* capture_mode_name(CaptureMode mode);

/// Records the work enqueued on a stream into a graph. Move-only; holds its stream; the Graph holds
/// the captured kernels' libraries. A call the capture mode refuses throws DriverError and end()
/// then throws. One thread at a time per builder; split builders may record on several threads.
/// Members that record throw InvalidArgumentError when not capturing.
class GraphBuilder {
public:
    explicit GraphBuilder(const Stream& stream);  ///< records on `stream`, held while used
    /// Records on a new non-blocking stream of `device`.
    explicit GraphBuilder(const Device& device);
    /// Takes over `other`'s capture; `other` may then only be destroyed or assigned to.
    GraphBuilder(GraphBuilder&&) noexcept;
    /// Discards this builder's own capture in progress, if any, then takes over `other`'s.
    GraphBuilder& operator=(GraphBuilder&&) noexcept;
    GraphBuilder(const GraphBuilder&) = delete;
    GraphBuilder& operator=(const GraphBuilder&) = delete;
    /// Ends and discards a capture still in progress (errors ignored).
    ~GraphBuilder();

    /// Starts capturing. InvalidArgumentError when already capturing or split from another
    /// builder; DriverError when the stream cannot capture.
    GraphBuilder& begin(CaptureMode mode = CaptureMode::relaxed);
    /// Ends the capture and returns what was recorded (a body builder: the body graph).
    /// InvalidArgumentError when split builders are not joined; DriverError when invalidated.
    Graph end();
    /// True between begin() and end() (split and body builders: until joined or ended).
    bool is_capturing() const noexcept;
    CaptureMode mode() const noexcept;  ///< the mode of the capture (relaxed before begin())

    const Stream& stream() const noexcept;  ///< the stream being captured
    /// So that launch(builder, ...) and the like record into the graph.
    operator const Stream&() const noexcept { return stream(); }

    /// `count` (> 0) builders on new streams of the same device, recording after all so far.
    std::vector<GraphBuilder> split(std::size_t count);
    /// Waits for everything recorded on `others`, split from this capture; they stop capturing.
    void join(std::vector<GraphBuilder>& others);
    /// Waits for everything recorded on `other`, split from this capture; it stops capturing.
    void join(GraphBuilder& other);

    /// A host function node here (held); it must not call CUDA (exceptions are swallowed).
    void add_host_function(std::function<void()> function);
    /// Keeps `buffer` alive as long as the graph and its executable graphs.
    void hold(const Buffer& buffer);
    /// Keeps `object` alive as long as the captured graph and its executable graphs.
    void hold(std::shared_ptr<const void> object);

    /// A conditional's value (CUDA 12.4+ driver). The conditional calls below return builders,
    /// already begun, that record the bodies; end() each, then keep recording here.
    ConditionalHandle create_conditional_handle(const ConditionalHandleOptions& options = {});
    /// An if node: the body runs once when the value is non-zero. DriverError when refused.
    GraphBuilder if_then(const ConditionalHandle& condition);
    /// An if/else node: bodies for a non-zero value, then for zero. Throws as if_then.
    std::pair<GraphBuilder, GraphBuilder> if_else(const ConditionalHandle& condition);
    /// A while node: the body runs while the value is non-zero. Throws as if_then.
    GraphBuilder while_loop(const ConditionalHandle& condition);
    /// A switch node: bodies[n] runs when the value is n (`cases` > 0). Throws as if_then.
    std::vector<GraphBuilder> switch_cases(const ConditionalHandle& condition, unsigned cases);

    /// "graph builder on stream 0x... of device 0 (capturing, relaxed)".
    std::string description() const;

private:
    struct Private;
    explicit GraphBuilder(std::unique_ptr<Private> state) noexcept;
    std::vector<GraphBuilder> add_conditional(const ConditionalHandle& condition,
                                              CUgraphConditionalNodeType type, unsigned size,
                                              const char* what);
    void require_capturing(const char* operation) const;

    std::unique_ptr<Private> self_;
};

}  // namespace cudacore
