/// @file
/// GraphBuilder: builds a Graph by stream capture of everything cudacore enqueues on its stream
/// between begin() and end(); split(n) / join fork and join, if_then... record conditional bodies.
/// The capture mode says which unsafe calls are refused (DriverError, then end() throws); a
/// builder destroyed while capturing discards the capture. Move-only; holds its stream; the Graph
/// holds the captured kernels' libraries. One thread at a time per builder; split builders may
/// record on several threads. Guide: docs/graphs.md.
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

/// Declared (opaque) in stream.hpp for Stream::begin_capture.
enum class CaptureMode : int {
    global,      ///< CU_STREAM_CAPTURE_MODE_GLOBAL
    per_thread,  ///< CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
    relaxed,     ///< CU_STREAM_CAPTURE_MODE_RELAXED (the default, as in cuda.core)
};

/// "global", "per_thread", "relaxed"; "CaptureMode(N)" for a value outside the enumeration. Never
/// throws beyond std::bad_alloc.
std::string to_string(CaptureMode mode);

/// The driver's mode for `mode`, and its name ("global", "thread-local", "relaxed"). No driver.
CUstreamCaptureMode capture_mode_flag(CaptureMode mode);
/// "global", "thread-local" or "relaxed" ("unknown" for a value outside the enumeration).
const char* capture_mode_name(CaptureMode mode);

/// Records the work enqueued on a stream into a graph (stream capture).
class GraphBuilder {
public:
    /// Records on `stream` (not owned beyond this builder's life; it is held while used).
    explicit GraphBuilder(const Stream& stream);
    /// Records on a new non-blocking stream of `device`.
    explicit GraphBuilder(const Device& device);
    /// Takes over `other`'s capture; `other` may then only be destroyed or assigned to.
    GraphBuilder(GraphBuilder&&) noexcept;
    /// Discards this builder's own capture in progress, if any (as the destructor does), then
    /// takes over `other`'s.
    GraphBuilder& operator=(GraphBuilder&&) noexcept;
    GraphBuilder(const GraphBuilder&) = delete;
    GraphBuilder& operator=(const GraphBuilder&) = delete;
    /// Ends and discards a capture still in progress (errors ignored).
    ~GraphBuilder();

    /// Starts capturing. Throws InvalidArgumentError when this builder is already capturing or
    /// was split from / made for another builder, DriverError when the stream cannot capture
    /// (it is capturing already, or is the legacy default stream).
    GraphBuilder& begin(CaptureMode mode = CaptureMode::relaxed);
    /// Ends the capture and returns what was recorded (a body builder: the body graph, valid while
    /// the captured graph lives). Throws InvalidArgumentError when no capture is open or split
    /// builders are not joined; DriverError when the capture was invalidated.
    Graph end();
    /// True between begin() and end() (for split and body builders: until joined / ended).
    bool is_capturing() const noexcept;
    /// The mode of the capture (relaxed before begin()).
    CaptureMode mode() const noexcept;

    /// The stream being captured (held by the builder).
    const Stream& stream() const noexcept;
    /// So that launch(builder, ...), buffer.copy_to(x, builder) and the like record into the graph.
    operator const Stream&() const noexcept { return stream(); }

    /// `count` builders on new streams of the same device, each recording after everything
    /// recorded here so far. Throws InvalidArgumentError when not capturing or count is 0.
    std::vector<GraphBuilder> split(std::size_t count);
    /// This builder waits for everything recorded on `others` (split from this capture); they
    /// stop capturing. Throws InvalidArgumentError for a builder of another capture.
    void join(std::vector<GraphBuilder>& others);
    /// This builder waits for everything recorded on `other`, which stops capturing.
    /// InvalidArgumentError when this builder is not capturing, or `other` was not split from
    /// this capture or is joined already.
    void join(GraphBuilder& other);

    /// A host function node at this point of the stream (cuLaunchHostFunc). It must not call CUDA
    /// or throw (exceptions are swallowed); the graph holds it.
    void add_host_function(std::function<void()> function);
    /// Keeps `buffer` (or any object) alive as long as the graph and its executable graphs.
    void hold(const Buffer& buffer);
    /// Keeps any object alive as long as the captured graph and its executable graphs.
    /// InvalidArgumentError when not capturing.
    void hold(std::shared_ptr<const void> object);

    /// Conditional nodes at this point of the capture (CUDA 12.4+ driver). The returned builders
    /// record the bodies (already begun); end() each, then keep recording here.
    ConditionalHandle create_conditional_handle(const ConditionalHandleOptions& options = {});
    /// An if node: the body builder records what runs once when the value is non-zero.
    /// InvalidArgumentError when not capturing or the capture was invalidated; DriverError when
    /// the driver refuses the node.
    GraphBuilder if_then(const ConditionalHandle& condition);
    /// An if/else node: the first builder records what runs when the value is non-zero, the
    /// second what runs when it is zero. Throws as if_then.
    std::pair<GraphBuilder, GraphBuilder> if_else(const ConditionalHandle& condition);
    /// A while node: the body runs again and again while the value is non-zero (checked before
    /// each run). Throws as if_then.
    GraphBuilder while_loop(const ConditionalHandle& condition);
    /// A switch node of `cases` bodies: bodies[n] runs when the value is n, none when it is
    /// `cases` or more. Throws as if_then, and InvalidArgumentError for 0 cases.
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
