#include "cudacore/graph.hpp"
#include "errors/closed_object.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/graph_exec.hpp"
#include "graph/graph_box.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"
#include "support/thread_block_pool.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace cudacore {

namespace detail {

GraphBox::~GraphBox() {
    if (!owned || !handle) return;
    // A graph of no context (nothing to check) needs only the driver.
    const DriverApi* api = context ? driver_for_release(*context) : driver_if_loaded();
    if (api) {
        check_release(api->cuGraphDestroy(handle), "cuGraphDestroy",
                      [&] { return describe_graph(handle, context ? context->ordinal : -1); });
    }
}

std::shared_ptr<GraphBox> make_graph_box(CUgraph handle, std::shared_ptr<ContextBox> context,
                                         std::shared_ptr<GraphHoldings> holdings) {
    auto box = make_pooled<GraphBox>();
    box->handle = handle;
    box->context = std::move(context);
    box->holdings = holdings ? std::move(holdings) : make_pooled<GraphHoldings>();
    return box;
}

std::shared_ptr<GraphBox> node_owned_graph_box(CUgraph handle, const std::shared_ptr<GraphBox>& parent) {
    auto body = std::make_shared<GraphBox>();
    body->handle = handle;
    body->context = parent->context;
    body->holdings = parent->holdings;  // what bodies need, the graph holds
    body->owned = false;
    body->parent = parent;
    body->conditionals = parent->conditionals;
    return body;
}

std::string describe_graph(CUgraph graph, int ordinal) {
    char text[80];
    std::snprintf(text, sizeof text, "graph %p on device %d", static_cast<void*>(graph), ordinal);
    return text;
}

CUDA_KERNEL_NODE_PARAMS kernel_node_params(const LaunchConfig& config, const Kernel& kernel,
                                           CUcontext context, void** arguments, std::size_t count) {
    CUDA_KERNEL_NODE_PARAMS params{};
    params.func = nullptr;  // use kern: a context-independent kernel, in ctx
    params.kern = kernel.handle();
    params.ctx = context;
    params.gridDimX = config.grid.x;
    params.gridDimY = config.grid.y;
    params.gridDimZ = config.grid.z;
    params.blockDimX = config.block.x;
    params.blockDimY = config.block.y;
    params.blockDimZ = config.block.z;
    params.sharedMemBytes = static_cast<unsigned>(config.shared_memory_bytes);
    params.kernelParams = count ? arguments : nullptr;
    return params;
}

const GraphBox& require_graph(const Graph& graph, const char* what) {
    if (const auto& box = box_of(graph)) [[likely]] return *box;
    return *open_box_of(graph, ("Graph::" + std::string(what)).c_str());  // throws
}

CUDA_MEMCPY3D linear_copy(CUdeviceptr destination, CUdeviceptr source, std::size_t size) {
    CUDA_MEMCPY3D copy{};
    // Unified addressing: the driver tells host from device memory by the address.
    copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    copy.srcDevice = source;
    copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    copy.dstDevice = destination;
    copy.WidthInBytes = size;
    copy.Height = 1;
    copy.Depth = 1;
    return copy;
}

void CUDA_CB run_host_function(void* data) {
    try {
        (*static_cast<std::function<void()>*>(data))();
    } catch (...) {
        // A driver thread has nowhere to report it (documented: must not throw).
    }
}

}  // namespace detail

unsigned graph_dot_flags(const GraphDotOptions& options) {
    unsigned flags = 0;
    if (options.verbose) flags |= CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE;
    if (options.kernel_node_params)
        flags |= CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS |
                 CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_ATTRIBUTES;
    if (options.memcpy_node_params) flags |= CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS;
    if (options.memset_node_params) flags |= CU_GRAPH_DEBUG_DOT_FLAGS_MEMSET_NODE_PARAMS;
    if (options.host_node_params) flags |= CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS;
    if (options.event_node_params) flags |= CU_GRAPH_DEBUG_DOT_FLAGS_EVENT_NODE_PARAMS;
    if (options.memory_node_params)
        flags |= CU_GRAPH_DEBUG_DOT_FLAGS_MEM_ALLOC_NODE_PARAMS |
                 CU_GRAPH_DEBUG_DOT_FLAGS_MEM_FREE_NODE_PARAMS;
    if (options.conditional_node_params) flags |= CU_GRAPH_DEBUG_DOT_FLAGS_CONDITIONAL_NODE_PARAMS;
    if (options.handles) flags |= CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES;
    return flags;
}

namespace {

const detail::GraphBox& require(const Graph& graph, const char* what) {
    return detail::require_graph(graph, what);
}

const detail::BufferBox& open_buffer(const Buffer& buffer, const char* what,
                                     const std::string& graph) {
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string("Graph::") + what + ": " + buffer.description() +
                                   " is closed (" + graph + ")");
    return *detail::box_of(buffer);
}

// One node added through `call`, with its errors naming the node kind and the graph.
template <class Call>
GraphNode add_node(const detail::GraphBox& box, const char* call, const char* kind, Call&& add) {
    CUgraphNode node = nullptr;
    const CUresult status = add(&node);
    detail::check(status, call, [&] {
        return std::string(kind) + " node in " +
               detail::describe_graph(box.handle, box.context ? box.context->ordinal : -1);
    });
    return GraphNode(node);
}

using detail::linear_copy;

}  // namespace

Graph Graph::create(const Device& device) {
    auto context = detail::primary_context(device.ordinal());
    CUgraph graph = nullptr;
    detail::check(detail::driver().cuGraphCreate(&graph, 0), "cuGraphCreate",
                  "empty graph for device " + std::to_string(device.ordinal()));
    return detail::BoxAccess::make<Graph>(detail::make_graph_box(graph, std::move(context), nullptr));
}

Graph Graph::create(const Context& context) {
    auto box = detail::open_box_of(context, "Graph::create");
    CUgraph graph = nullptr;
    detail::check(detail::driver().cuGraphCreate(&graph, 0), "cuGraphCreate",
                  [&] { return "empty graph for " + detail::describe_context(*box); });
    return detail::BoxAccess::make<Graph>(detail::make_graph_box(graph, std::move(box), nullptr));
}

Device Graph::device() const { return Device(require(*this, "device").context->ordinal); }

void Graph::close() {
    if (box()) close_as(description());
}

std::string Graph::description() const {
    if (is_closed()) return closed_description() + " (closed)";
    if (!box()) return "empty graph";
    std::string out = detail::describe_graph(box()->handle, box()->context->ordinal);
    if (!box()->owned) out += " (a conditional node's body)";
    return out;
}

std::vector<GraphNode> Graph::nodes() const {
    const auto& box = require(*this, "nodes");
    const auto& api = detail::driver();
    std::size_t count = 0;
    detail::check(api.cuGraphGetNodes(box.handle, nullptr, &count), "cuGraphGetNodes",
                  [&] { return description(); });
    std::vector<GraphNode> nodes(count);
    if (count)
        detail::check(api.cuGraphGetNodes(box.handle, reinterpret_cast<CUgraphNode*>(nodes.data()),
                                          &count),
                      "cuGraphGetNodes", [&] { return description(); });
    nodes.resize(count);
    return nodes;
}

std::size_t Graph::node_count() const {
    const auto& box = require(*this, "node_count");
    std::size_t count = 0;
    detail::check(detail::driver().cuGraphGetNodes(box.handle, nullptr, &count), "cuGraphGetNodes",
                  [&] { return description(); });
    return count;
}

GraphNode Graph::add_kernel_node(GraphDependencies dependencies, const LaunchConfig& config,
                                 const Kernel& kernel, void** arguments, const std::size_t* sizes,
                                 std::size_t count) {
    const auto& box = require(*this, "add_kernel");
    if (!detail::box_of(kernel)) throw InvalidArgumentError("Graph::add_kernel: an empty Kernel");
    if (!config.is_plain())
        throw InvalidArgumentError("Graph::add_kernel: " + kernel.description() + " (" +
                                   to_string(config) +
                                   "): kernel nodes take no cluster or cooperative launch; "
                                   "capture such a launch with a GraphBuilder instead");
    detail::check_kernel_arguments(kernel, sizes, count);
    const CUDA_KERNEL_NODE_PARAMS params =
        detail::kernel_node_params(config, kernel, box.context->handle, arguments, count);
    const GraphNode node = add_node(box, "cuGraphAddKernelNode", "kernel", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddKernelNode(out, box.handle, dependencies.handles(),
                                                     dependencies.size(), &params);
    });
    const auto& library = detail::box_of(kernel)->library;
    if (library) box.holdings->add(library);
    return node;
}

GraphNode Graph::add_copy(GraphDependencies dependencies, const Buffer& destination,
                          const Buffer& source) {
    const auto& box = require(*this, "add_copy");
    const auto& to = open_buffer(destination, "add_copy", description());
    const auto& from = open_buffer(source, "add_copy", description());
    if (to.size != from.size)
        throw InvalidArgumentError("Graph::add_copy: sizes differ: source " + source.description() +
                                   ", destination " + destination.description());
    const CUDA_MEMCPY3D copy = linear_copy(to.handle, from.handle, to.size);
    return add_node(box, "cuGraphAddMemcpyNode", "memcpy", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddMemcpyNode(out, box.handle, dependencies.handles(),
                                                     dependencies.size(), &copy,
                                                     box.context->handle);
    });
}

GraphNode Graph::add_copy(GraphDependencies dependencies, void* host, std::size_t size,
                          const Buffer& source) {
    const auto& box = require(*this, "add_copy");
    const auto& from = open_buffer(source, "add_copy", description());
    if (!host || size != from.size)
        throw InvalidArgumentError("Graph::add_copy: host destination of " + std::to_string(size) +
                                   " bytes" + (host ? "" : " (null)") + " for " +
                                   source.description());
    const CUDA_MEMCPY3D copy = linear_copy(reinterpret_cast<CUdeviceptr>(host), from.handle, size);
    return add_node(box, "cuGraphAddMemcpyNode", "memcpy (device to host)", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddMemcpyNode(out, box.handle, dependencies.handles(),
                                                     dependencies.size(), &copy,
                                                     box.context->handle);
    });
}

GraphNode Graph::add_copy(GraphDependencies dependencies, const Buffer& destination,
                          const void* host, std::size_t size) {
    const auto& box = require(*this, "add_copy");
    const auto& to = open_buffer(destination, "add_copy", description());
    if (!host || size != to.size)
        throw InvalidArgumentError("Graph::add_copy: host source of " + std::to_string(size) +
                                   " bytes" + (host ? "" : " (null)") + " for " +
                                   destination.description());
    const CUDA_MEMCPY3D copy = linear_copy(to.handle, reinterpret_cast<CUdeviceptr>(host), size);
    return add_node(box, "cuGraphAddMemcpyNode", "memcpy (host to device)", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddMemcpyNode(out, box.handle, dependencies.handles(),
                                                     dependencies.size(), &copy,
                                                     box.context->handle);
    });
}

namespace {
GraphNode add_memset(const detail::GraphBox& box, GraphDependencies dependencies,
                     const detail::BufferBox& buffer, unsigned value, unsigned element_size) {
    CUDA_MEMSET_NODE_PARAMS params{};
    params.dst = buffer.handle;
    params.pitch = 0;
    params.value = value;
    params.elementSize = element_size;
    params.width = buffer.size / element_size;
    params.height = 1;
    return add_node(box, "cuGraphAddMemsetNode", "memset", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddMemsetNode(out, box.handle, dependencies.handles(),
                                                     dependencies.size(), &params,
                                                     box.context->handle);
    });
}
}  // namespace

GraphNode Graph::add_fill_byte(GraphDependencies dependencies, const Buffer& buffer,
                               std::uint8_t value) {
    const auto& box = require(*this, "add_fill_byte");
    return add_memset(box, dependencies, open_buffer(buffer, "add_fill_byte", description()),
                      value, 1);
}

GraphNode Graph::add_fill_uint32(GraphDependencies dependencies, const Buffer& buffer,
                                 std::uint32_t pattern) {
    const auto& box = require(*this, "add_fill_uint32");
    const auto& target = open_buffer(buffer, "add_fill_uint32", description());
    if (target.size % 4 != 0)
        throw InvalidArgumentError("Graph::add_fill_uint32: " + buffer.description() +
                                   " is not a multiple of 4 bytes");
    return add_memset(box, dependencies, target, pattern, 4);
}

GraphNode Graph::add_host_function(GraphDependencies dependencies,
                                   std::function<void()> function) {
    const auto& box = require(*this, "add_host_function");
    if (!function) throw InvalidArgumentError("Graph::add_host_function: an empty function");
    auto callable = std::make_shared<std::function<void()>>(std::move(function));
    CUDA_HOST_NODE_PARAMS params{};
    params.fn = detail::run_host_function;
    params.userData = callable.get();
    const GraphNode node = add_node(box, "cuGraphAddHostNode", "host", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddHostNode(out, box.handle, dependencies.handles(),
                                                   dependencies.size(), &params);
    });
    box.holdings->add(std::move(callable));
    return node;
}

GraphNode Graph::add_event_record(GraphDependencies dependencies, const Event& event) {
    const auto& box = require(*this, "add_event_record");
    const auto& event_box = detail::open_box_of(event, "Graph::add_event_record");
    event_box->never_reuse();  // the graph's launches use it: never handed out again
    const GraphNode node =
        add_node(box, "cuGraphAddEventRecordNode", "event record", [&](CUgraphNode* out) {
            return detail::driver().cuGraphAddEventRecordNode(
                out, box.handle, dependencies.handles(), dependencies.size(), event_box->handle);
        });
    box.holdings->add(event_box);
    return node;
}

GraphNode Graph::add_event_wait(GraphDependencies dependencies, const Event& event) {
    const auto& box = require(*this, "add_event_wait");
    const auto& event_box = detail::open_box_of(event, "Graph::add_event_wait");
    event_box->never_reuse();  // the graph's launches use it: never handed out again
    const GraphNode node =
        add_node(box, "cuGraphAddEventWaitNode", "event wait", [&](CUgraphNode* out) {
            return detail::driver().cuGraphAddEventWaitNode(
                out, box.handle, dependencies.handles(), dependencies.size(), event_box->handle);
        });
    box.holdings->add(event_box);
    return node;
}

GraphNode Graph::add_empty(GraphDependencies dependencies) {
    const auto& box = require(*this, "add_empty");
    return add_node(box, "cuGraphAddEmptyNode", "empty", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddEmptyNode(out, box.handle, dependencies.handles(),
                                                    dependencies.size());
    });
}

GraphNode Graph::add_child(GraphDependencies dependencies, const Graph& child) {
    const auto& box = require(*this, "add_child");
    const auto& child_box = require(child, "add_child");
    const GraphNode node = add_node(box, "cuGraphAddChildGraphNode", "child graph",
                                    [&](CUgraphNode* out) {
                                        return detail::driver().cuGraphAddChildGraphNode(
                                            out, box.handle, dependencies.handles(),
                                            dependencies.size(), child_box.handle);
                                    });
    box.holdings->add_all(*child_box.holdings);
    return node;
}

GraphAllocation Graph::add_allocation(GraphDependencies dependencies, std::size_t size) {
    const auto& box = require(*this, "add_allocation");
    if (size == 0) throw InvalidArgumentError("Graph::add_allocation: size 0 in " + description());
    CUDA_MEM_ALLOC_NODE_PARAMS params{};
    params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    params.poolProps.location.id = box.context->ordinal;
    params.bytesize = size;
    const GraphNode node = add_node(box, "cuGraphAddMemAllocNode", "memory allocation",
                                    [&](CUgraphNode* out) {
                                        return detail::driver().cuGraphAddMemAllocNode(
                                            out, box.handle, dependencies.handles(),
                                            dependencies.size(), &params);
                                    });
    return GraphAllocation{node, params.dptr, size};
}

GraphNode Graph::add_free(GraphDependencies dependencies, CUdeviceptr pointer) {
    const auto& box = require(*this, "add_free");
    return add_node(box, "cuGraphAddMemFreeNode", "memory free", [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddMemFreeNode(out, box.handle, dependencies.handles(),
                                                      dependencies.size(), pointer);
    });
}

ConditionalHandle Graph::create_conditional_handle(const ConditionalHandleOptions& options) {
    const auto& box = require(*this, "create_conditional_handle");
    CUgraphConditionalHandle handle = 0;
    detail::check(detail::driver().cuGraphConditionalHandleCreate(
                      &handle, box.handle, box.context->handle, options.default_value,
                      conditional_handle_flags(options)),
                  "cuGraphConditionalHandleCreate", [&] { return description(); });
    return ConditionalHandle(handle);
}

ConditionalNode Graph::add_conditional(GraphDependencies dependencies,
                                       const ConditionalHandle& condition,
                                       CUgraphConditionalNodeType type, unsigned size,
                                       const char* what) {
    const auto& box = require(*this, what);
    if (size == 0)
        throw InvalidArgumentError(std::string("Graph::") + what + ": no cases (" +
                                   description() + ")");
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional.handle = condition.handle();
    params.conditional.type = type;
    params.conditional.size = size;
    params.conditional.ctx = box.context->handle;
    const GraphNode node = add_node(box, "cuGraphAddNode", what, [&](CUgraphNode* out) {
        return detail::driver().cuGraphAddNode(out, box.handle, dependencies.handles(), nullptr,
                                               dependencies.size(), &params);
    });
    // Noted for Graph::params (the driver has no query for it); the bodies share the table.
    if (!box.conditionals) this->box()->conditionals = std::make_shared<detail::ConditionalRecords>();
    {
        detail::ConditionalRecord record;
        record.node = node.handle();
        record.handle = condition.handle();
        record.type = type;
        record.bodies.assign(params.conditional.phGraph_out, params.conditional.phGraph_out + size);
        std::lock_guard lock(box.conditionals->mutex);
        box.conditionals->records.push_back(std::move(record));
    }
    ConditionalNode result{node, {}};
    result.bodies.reserve(size);
    for (unsigned index = 0; index < size; ++index)
        result.bodies.push_back(detail::BoxAccess::make<Graph>(
            detail::node_owned_graph_box(params.conditional.phGraph_out[index], this->box())));
    return result;
}

ConditionalNode Graph::add_if(GraphDependencies dependencies, const ConditionalHandle& condition) {
    return add_conditional(dependencies, condition, CU_GRAPH_COND_TYPE_IF, 1, "add_if");
}

ConditionalNode Graph::add_if_else(GraphDependencies dependencies,
                                   const ConditionalHandle& condition) {
    return add_conditional(dependencies, condition, CU_GRAPH_COND_TYPE_IF, 2, "add_if_else");
}

ConditionalNode Graph::add_while(GraphDependencies dependencies,
                                 const ConditionalHandle& condition) {
    return add_conditional(dependencies, condition, CU_GRAPH_COND_TYPE_WHILE, 1, "add_while");
}

ConditionalNode Graph::add_switch(GraphDependencies dependencies,
                                  const ConditionalHandle& condition, unsigned cases) {
    return add_conditional(dependencies, condition, CU_GRAPH_COND_TYPE_SWITCH, cases,
                           "add_switch");
}

void Graph::hold(const Buffer& buffer) {
    const auto& box = require(*this, "hold");
    if (detail::box_of(buffer)) box.holdings->add(detail::holding_of(buffer));
}

void Graph::hold(std::shared_ptr<const void> object) {
    require(*this, "hold").holdings->add(std::move(object));
}

std::size_t Graph::held_count() const { return require(*this, "held_count").holdings->size(); }

GraphExec Graph::instantiate() const { return instantiate(GraphInstantiateOptions{}); }

void Graph::write_dot(const std::filesystem::path& path, const GraphDotOptions& options) const {
    const auto& box = require(*this, "write_dot");
    detail::check(detail::driver().cuGraphDebugDotPrint(box.handle, path.c_str(),
                                                        graph_dot_flags(options)),
                  "cuGraphDebugDotPrint",
                  [&] { return description() + " to '" + path.string() + "'"; });
}

std::string Graph::to_dot(const GraphDotOptions& options) const {
    // The driver only writes files: one of our own, read back and removed.
    std::string pattern =
        (std::filesystem::temp_directory_path() / "cudacore-graph-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
        throw Error("Graph::to_dot: cannot create a temporary file for " + description());
    ::close(fd);
    const std::filesystem::path path = pattern;
    struct Remove {
        std::filesystem::path path;
        ~Remove() {
            std::error_code ignored;
            std::filesystem::remove(path, ignored);
        }
    } remove{path};
    write_dot(path, options);
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace cudacore
