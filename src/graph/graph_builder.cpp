#include "cudacore/graph_builder.hpp"

#include "cudacore/errors.hpp"
#include "graph/graph_box.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/default_stream_scope.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "support/thread_block_pool.hpp"
#include "support/enum_text.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace cudacore {

CUstreamCaptureMode capture_mode_flag(CaptureMode mode) {
    switch (mode) {
        case CaptureMode::global: return CU_STREAM_CAPTURE_MODE_GLOBAL;
        case CaptureMode::per_thread: return CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        case CaptureMode::relaxed: return CU_STREAM_CAPTURE_MODE_RELAXED;
    }
    throw InvalidArgumentError("CaptureMode " + std::to_string(static_cast<int>(mode)) +
                               " is not a capture mode");
}

const char* capture_mode_name(CaptureMode mode) {
    switch (mode) {
        case CaptureMode::global: return "global";
        case CaptureMode::per_thread: return "thread-local";
        case CaptureMode::relaxed: return "relaxed";
    }
    return "unknown";
}

namespace detail {

// One capture sequence: the streams registered for it and what the graph will hold. A body
// builder's capture (into a conditional node's body) has its own sequence and shares the
// holdings of the capture it was made in.
struct CaptureState {
    std::shared_ptr<GraphHoldings> holdings;
    std::shared_ptr<ContextBox> context;
    CaptureMode mode = CaptureMode::relaxed;
    // Registered, unregistered at the end: the first (the builder's own, which the builder
    // holds) apart, since most captures have no other.
    CUstream first_stream = nullptr;
    bool first_registered = false;
    std::vector<std::shared_ptr<StreamBox>> more_streams;
    std::vector<std::shared_ptr<StreamBox>> unjoined_forks;  // split, not joined yet
    std::vector<std::shared_ptr<StreamBox>> open_bodies;     // body builders not ended yet
    std::shared_ptr<CaptureState> parent;                    // for a body's capture
    CaptureState() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    ~CaptureState() { unregister_all(); }  // whatever path dropped it, the registry lets go first

    // The first call registers the builder's own stream (held by the builder); later ones the
    // streams split from it, held here. False when another capture has the stream registered.
    bool register_stream(const std::shared_ptr<StreamBox>& stream) {
        if (first_registered) more_streams.reserve(more_streams.size() + 1);  // no throw once registered
        if (!register_capture_stream(stream->handle, 0, *holdings)) return false;  // id asked when needed
        if (!first_registered) {
            first_stream = stream->handle;
            first_registered = true;
        } else {
            more_streams.push_back(stream);
        }
        return true;
    }
    // Before `holdings` go: the registry points at them.
    void unregister_all() noexcept {
        if (first_registered) unregister_capture_stream(first_stream);
        for (const auto& stream : more_streams) unregister_capture_stream(stream->handle);
        first_registered = false;
        more_streams.clear();
    }
    // A body builder's capture is over: its parent no longer waits for it.
    void body_ended(const std::shared_ptr<StreamBox>& stream) noexcept {
        if (!parent) return;
        auto& open = parent->open_bodies;
        open.erase(std::remove(open.begin(), open.end(), stream), open.end());
    }
};

}  // namespace detail

enum class BuilderKind { primary, forked, body };

struct GraphBuilder::Private {
    BuilderKind kind = BuilderKind::primary;
    Stream stream;
    std::shared_ptr<detail::CaptureState> capture;  // while capturing
    bool capturing = false;
    CaptureMode mode = CaptureMode::relaxed;
    std::shared_ptr<detail::GraphBox> body;  // for a body builder: the body graph

    // From this thread's pool, as the capture's boxes: a builder is made and dropped per capture.
    static void* operator new(std::size_t) { return detail::ThreadBlockPool<Private>().allocate(1); }
    static void operator delete(void* block) noexcept {
        detail::ThreadBlockPool<Private>().deallocate(static_cast<Private*>(block), 1);
    }
};

namespace {

std::string describe_stream(const Stream& stream) {
    char text[80];
    const auto& box = detail::box_of(stream);
    std::snprintf(text, sizeof text, "stream %p of device %d", static_cast<void*>(stream.handle()),
                  box && box->context ? box->context->ordinal : -1);
    return text;
}

// Ends a capture that is being abandoned and destroys what it recorded. Never throws.
void discard_capture(CUstream stream) noexcept {
    const detail::DriverApi* api = detail::driver_if_loaded();
    if (!api) return;
    CUgraph graph = nullptr;
    api->cuStreamEndCapture(stream, &graph);  // ends it even when invalidated
    if (graph) api->cuGraphDestroy(graph);
}

Stream new_stream_like(const Stream& stream) {
    return Device(detail::box_of(stream)->context->ordinal).create_stream();
}

}  // namespace

GraphBuilder::GraphBuilder(std::unique_ptr<Private> state) noexcept : self_(std::move(state)) {}

GraphBuilder::GraphBuilder(const Stream& stream)
    : self_(std::make_unique<Private>(Private{BuilderKind::primary, stream, nullptr, false,
                                              CaptureMode::relaxed, nullptr})) {
    if (!detail::box_of(stream))
        throw InvalidArgumentError("GraphBuilder: an empty (moved-from) Stream");
}

GraphBuilder::GraphBuilder(const Device& device) : GraphBuilder(device.create_stream()) {}

GraphBuilder::GraphBuilder(GraphBuilder&&) noexcept = default;

GraphBuilder& GraphBuilder::operator=(GraphBuilder&& other) noexcept {
    if (this != &other) {
        GraphBuilder discarded(std::move(*this));  // abandons our capture, if any
        self_ = std::move(other.self_);
    }
    return *this;
}

GraphBuilder::~GraphBuilder() {
    if (!self_ || !self_->capturing || !self_->capture) return;
    try {
        Private& self = *self_;
        detail::CaptureState& capture = *self.capture;
        const detail::DriverApi* api = detail::driver_if_loaded();
        if (!api) return;
        if (self.kind == BuilderKind::forked) return;  // the capture's origin ends it
        if (self.kind == BuilderKind::body) {
            // The body graph belongs to its conditional node: end the capture, keep the graph.
            CUgraph body = nullptr;
            api->cuStreamEndCapture(self.stream.handle(), &body);
            capture.unregister_all();
            capture.body_ended(detail::box_of(self.stream));
            return;
        }
        // The origin: forks must rejoin it before the capture can end (errors ignored: an
        // invalidated capture refuses these, and ends all the same). The join events belong to
        // the stream's context, which the destroying thread need not have current.
        std::optional<detail::ContextScope> scope;
        const auto& context = detail::box_of(self.stream)->context;
        if (context) scope.emplace(*context);
        for (const auto& fork : capture.unjoined_forks) {
            CUevent event = nullptr;
            if (api->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) continue;
            api->cuEventRecord(event, fork->handle);
            api->cuStreamWaitEvent(self.stream.handle(), event, 0);
            api->cuEventDestroy(event);
        }
        // Bodies still recording go first: their graphs go with the captured graph.
        for (const auto& body : capture.open_bodies) {
            CUgraph ignored = nullptr;
            api->cuStreamEndCapture(body->handle, &ignored);
        }
        discard_capture(self.stream.handle());
        // A fork the driver still thinks is capturing is ended on its own.
        for (const auto& fork : capture.unjoined_forks) {
            CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
            if (api->cuStreamIsCapturing(fork->handle, &status) == CUDA_SUCCESS &&
                status != CU_STREAM_CAPTURE_STATUS_NONE)
                discard_capture(fork->handle);
        }
        capture.unregister_all();
    } catch (...) {
        // A destructor never throws.
    }
}

GraphBuilder& GraphBuilder::begin(CaptureMode mode) {
    Private& self = *self_;
    if (self.kind != BuilderKind::primary)
        throw InvalidArgumentError("GraphBuilder::begin: " + description() +
                                   " was split from or made for another capture; it is begun "
                                   "already");
    if (self.capturing)
        throw InvalidArgumentError("GraphBuilder::begin: " + description() + " is capturing already");
    const CUstreamCaptureMode flag = capture_mode_flag(mode);
    // Libraries dropped during the capture are unloaded on the worker after it (an unload
    // synchronizes the context): started here, on a normal path.
    detail::start_deferred_releases();
    // Pooled, as the graph's and the executable graph's boxes: made and dropped per capture.
    auto capture = detail::make_pooled<detail::CaptureState>();
    capture->holdings = detail::make_pooled<detail::GraphHoldings>();
    capture->context = detail::box_of(self.stream)->context;
    capture->mode = mode;
    // Registered first: from then on no deferred release synchronizes the context under it
    // (its id is asked only if needed). Unregistered by the state's destructor if beginning fails.
    if (!capture->register_stream(detail::box_of(self.stream)))
        throw InvalidArgumentError("GraphBuilder::begin: " + describe_stream(self.stream) +
                                   " is capturing already, for another graph builder");
    const detail::DefaultStreamScope in_context(self.stream);
    detail::check(detail::driver().cuStreamBeginCapture(self.stream.handle(), flag),
                  "cuStreamBeginCapture", [&] {
                      return describe_stream(self.stream) + ", " + capture_mode_name(mode) +
                             " mode";
                  });
    self.capture = std::move(capture);
    self.capturing = true;
    self.mode = mode;
    return *this;
}

Graph GraphBuilder::end() {
    Private& self = *self_;
    if (self.kind == BuilderKind::forked)
        throw InvalidArgumentError("GraphBuilder::end: " + description() +
                                   " was split from another builder: join it to that one instead");
    if (!self.capturing)
        throw InvalidArgumentError("GraphBuilder::end: no capture was begun on " + description() +
                                   " (or it has ended already)");
    detail::CaptureState& capture = *self.capture;
    if (!capture.unjoined_forks.empty())
        throw InvalidArgumentError("GraphBuilder::end: " +
                                   std::to_string(capture.unjoined_forks.size()) +
                                   " builder(s) split from " + description() +
                                   " are not joined yet; join them first");
    if (!capture.open_bodies.empty())
        throw InvalidArgumentError("GraphBuilder::end: " +
                                   std::to_string(capture.open_bodies.size()) +
                                   " conditional body builder(s) of " + description() +
                                   " are not ended yet; end them first");
    CUgraph graph = nullptr;
    CUresult status;
    {
        const detail::DefaultStreamScope in_context(self.stream);
        status = detail::driver().cuStreamEndCapture(self.stream.handle(), &graph);
    }
    // Whatever the status, the capture is over. The builder is described (as it was while
    // capturing) only for an error.
    const std::string text = status == CUDA_SUCCESS ? std::string() : description();
    std::shared_ptr<detail::CaptureState> ended = std::move(self.capture);
    self.capturing = false;
    ended->unregister_all();
    if (self.kind == BuilderKind::body) ended->body_ended(detail::box_of(self.stream));
    if (status != CUDA_SUCCESS) {
        if (graph && self.kind == BuilderKind::primary) detail::driver().cuGraphDestroy(graph);
        detail::throw_driver_error(status, "cuStreamEndCapture", text);
    }
    if (self.kind == BuilderKind::body) return detail::BoxAccess::make<Graph>(self.body);
    if (ended.use_count() == 1)  // nothing else reads the ended capture: its references move
        return detail::BoxAccess::make<Graph>(
            detail::make_graph_box(graph, std::move(ended->context), std::move(ended->holdings)));
    return detail::BoxAccess::make<Graph>(
        detail::make_graph_box(graph, ended->context, ended->holdings));
}

bool GraphBuilder::is_capturing() const noexcept { return self_ && self_->capturing; }

CaptureMode GraphBuilder::mode() const noexcept {
    return self_ ? self_->mode : CaptureMode::relaxed;
}

const Stream& GraphBuilder::stream() const noexcept { return self_->stream; }

std::string GraphBuilder::description() const {
    if (!self_) return "empty (moved-from) graph builder";
    std::string out = "graph builder on " + describe_stream(self_->stream);
    if (self_->kind == BuilderKind::forked) out += " (split)";
    if (self_->kind == BuilderKind::body) out += " (conditional body)";
    if (self_->capturing) out += std::string(", capturing, ") + capture_mode_name(self_->mode);
    return out;
}

void GraphBuilder::require_capturing(const char* operation) const {
    if (!self_ || !self_->capturing)
        throw InvalidArgumentError(std::string("GraphBuilder::") + operation + ": " +
                                   description() + " is not capturing");
}

std::vector<GraphBuilder> GraphBuilder::split(std::size_t count) {
    require_capturing("split");
    if (count == 0) throw InvalidArgumentError("GraphBuilder::split: count 0 for " + description());
    Private& self = *self_;
    std::vector<GraphBuilder> forks;
    forks.reserve(count);
    for (std::size_t index = 0; index < count; ++index) {
        Stream stream = new_stream_like(self.stream);
        // Waiting on an event of the capturing stream makes the new stream join the capture.
        stream.wait(self.stream);
        self.capture->register_stream(detail::box_of(stream));
        self.capture->unjoined_forks.push_back(detail::box_of(stream));
        forks.push_back(GraphBuilder(std::make_unique<Private>(Private{
            BuilderKind::forked, std::move(stream), self.capture, true, self.mode, nullptr})));
    }
    return forks;
}

void GraphBuilder::join(GraphBuilder& other) {
    require_capturing("join");
    Private& self = *self_;
    if (!other.self_ || other.self_->kind != BuilderKind::forked || !other.self_->capturing ||
        other.self_->capture != self.capture)
        throw InvalidArgumentError("GraphBuilder::join: " + other.description() +
                                   " is not a builder split from this capture (" + description() +
                                   "), or it was joined already");
    self.stream.wait(other.self_->stream);
    auto& forks = self.capture->unjoined_forks;
    const auto& joined = detail::box_of(other.self_->stream);
    forks.erase(std::remove(forks.begin(), forks.end(), joined), forks.end());
    other.self_->capturing = false;
    other.self_->capture.reset();
}

void GraphBuilder::join(std::vector<GraphBuilder>& others) {
    for (GraphBuilder& other : others) join(other);
}

void GraphBuilder::add_host_function(std::function<void()> function) {
    require_capturing("add_host_function");
    if (!function) throw InvalidArgumentError("GraphBuilder::add_host_function: empty function");
    auto callable = std::make_shared<std::function<void()>>(std::move(function));
    const detail::DefaultStreamScope in_context(self_->stream);
    detail::check(detail::driver().cuLaunchHostFunc(self_->stream.handle(),
                                                    detail::run_host_function, callable.get()),
                  "cuLaunchHostFunc", [&] { return description(); });
    self_->capture->holdings->add(std::move(callable));
}

void GraphBuilder::hold(const Buffer& buffer) {
    require_capturing("hold");
    if (detail::box_of(buffer)) self_->capture->holdings->add(detail::holding_of(buffer));
}

void GraphBuilder::hold(std::shared_ptr<const void> object) {
    require_capturing("hold");
    self_->capture->holdings->add(std::move(object));
}

namespace {
struct CaptureInfo {
    CUgraph graph = nullptr;
    const CUgraphNode* dependencies = nullptr;
    const CUgraphEdgeData* edges = nullptr;
    std::size_t count = 0;
};

CaptureInfo capture_info(const Stream& stream, const std::string& what) {
    CaptureInfo info;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    const detail::DefaultStreamScope in_context(stream);
    detail::check(detail::driver().cuStreamGetCaptureInfo(stream.handle(), &status, nullptr,
                                                          &info.graph, &info.dependencies,
                                                          &info.edges, &info.count),
                  "cuStreamGetCaptureInfo", [&] { return what; });
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        throw InvalidArgumentError(what + ": the capture was invalidated by an earlier call");
    return info;
}
}  // namespace

ConditionalHandle GraphBuilder::create_conditional_handle(const ConditionalHandleOptions& options) {
    require_capturing("create_conditional_handle");
    const CaptureInfo info = capture_info(self_->stream, description());
    CUgraphConditionalHandle handle = 0;
    detail::check(detail::driver().cuGraphConditionalHandleCreate(
                      &handle, info.graph, detail::box_of(self_->stream)->context->handle,
                      options.default_value, conditional_handle_flags(options)),
                  "cuGraphConditionalHandleCreate", [&] { return description(); });
    return ConditionalHandle(handle);
}

std::vector<GraphBuilder> GraphBuilder::add_conditional(const ConditionalHandle& condition,
                                                        CUgraphConditionalNodeType type,
                                                        unsigned size, const char* what) {
    require_capturing(what);
    if (size == 0)
        throw InvalidArgumentError(std::string("GraphBuilder::") + what + ": no cases for " +
                                   description());
    Private& self = *self_;
    const auto& api = detail::driver();
    const CaptureInfo info = capture_info(self.stream, description());
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional.handle = condition.handle();
    params.conditional.type = type;
    params.conditional.size = size;
    params.conditional.ctx = detail::box_of(self.stream)->context->handle;
    CUgraphNode node = nullptr;
    detail::check(api.cuGraphAddNode(&node, info.graph, info.dependencies, info.edges, info.count,
                                     &params),
                  "cuGraphAddNode", [&] { return std::string(what) + " node in " + description(); });
    // Later work on this stream runs after the conditional node.
    const detail::DefaultStreamScope in_context(self.stream);
    detail::check(api.cuStreamUpdateCaptureDependencies(self.stream.handle(), &node, nullptr, 1,
                                                        CU_STREAM_SET_CAPTURE_DEPENDENCIES),
                  "cuStreamUpdateCaptureDependencies", [&] { return description(); });

    std::vector<GraphBuilder> bodies;
    bodies.reserve(size);
    for (unsigned index = 0; index < size; ++index) {
        auto body = std::make_shared<detail::GraphBox>();
        body->handle = params.conditional.phGraph_out[index];
        body->context = self.capture->context;
        body->holdings = self.capture->holdings;
        body->owned = false;
        Stream stream = new_stream_like(self.stream);
        detail::check(api.cuStreamBeginCaptureToGraph(stream.handle(), body->handle, nullptr,
                                                      nullptr, 0, capture_mode_flag(self.mode)),
                      "cuStreamBeginCaptureToGraph",
                      [&] { return std::string(what) + " body in " + description(); });
        auto capture = std::make_shared<detail::CaptureState>();
        capture->holdings = self.capture->holdings;
        capture->context = self.capture->context;
        capture->mode = self.mode;
        capture->parent = self.capture;
        try {
            capture->register_stream(detail::box_of(stream));
        } catch (...) {
            capture->unregister_all();
            discard_capture(stream.handle());
            throw;
        }
        self.capture->open_bodies.push_back(detail::box_of(stream));
        bodies.push_back(GraphBuilder(std::make_unique<Private>(Private{
            BuilderKind::body, std::move(stream), std::move(capture), true, self.mode,
            std::move(body)})));
    }
    return bodies;
}

GraphBuilder GraphBuilder::if_then(const ConditionalHandle& condition) {
    return std::move(add_conditional(condition, CU_GRAPH_COND_TYPE_IF, 1, "if_then").front());
}

std::pair<GraphBuilder, GraphBuilder> GraphBuilder::if_else(const ConditionalHandle& condition) {
    auto bodies = add_conditional(condition, CU_GRAPH_COND_TYPE_IF, 2, "if_else");
    return {std::move(bodies[0]), std::move(bodies[1])};
}

GraphBuilder GraphBuilder::while_loop(const ConditionalHandle& condition) {
    return std::move(add_conditional(condition, CU_GRAPH_COND_TYPE_WHILE, 1, "while_loop").front());
}

std::vector<GraphBuilder> GraphBuilder::switch_cases(const ConditionalHandle& condition,
                                                     unsigned cases) {
    return add_conditional(condition, CU_GRAPH_COND_TYPE_SWITCH, cases, "switch_cases");
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(CaptureMode mode) {
    static constexpr detail::EnumText<CaptureMode> names[] = {
        {CaptureMode::global, "global"},
        {CaptureMode::per_thread, "per_thread"},
        {CaptureMode::relaxed, "relaxed"},
    };
    return detail::enum_text(mode, names, "CaptureMode");
}

}  // namespace cudacore
