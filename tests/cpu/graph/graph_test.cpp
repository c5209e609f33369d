// Graphs without a GPU: options turned into driver flags, names and messages, the capture
// registry, empty handles, every entry point without a driver, and the documented device-side
// conditional kernel compiled by NVRTC.
#include "empty_stream.hpp"
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "graph_kernel_sources.hpp"
#include "runtime/release/capture_registry.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <functional>
#include <memory>
#include <string>

namespace {

using namespace cudacore;

std::string invalid_argument_message(const std::function<void()>& call) {
    try {
        call();
    } catch (const InvalidArgumentError& e) {
        return e.what();
    }
    return "<no InvalidArgumentError>";
}

TEST(GraphOptions, InstantiateFlagsFollowEachOption) {
    EXPECT_EQ(graph_instantiate_flags({}), 0u);
    GraphInstantiateOptions auto_free;
    auto_free.auto_free_on_launch = true;
    EXPECT_EQ(graph_instantiate_flags(auto_free), CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    GraphInstantiateOptions device_launch;
    device_launch.device_launch = true;
    EXPECT_EQ(graph_instantiate_flags(device_launch), CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH);
    GraphInstantiateOptions priority;
    priority.use_node_priority = true;
    EXPECT_EQ(graph_instantiate_flags(priority), CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    GraphInstantiateOptions both;
    both.auto_free_on_launch = true;
    both.use_node_priority = true;
    EXPECT_EQ(graph_instantiate_flags(both), CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                                 CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
}

TEST(GraphOptions, UploadStreamAddsTheUploadFlag) {
    // A stream wrapper around a null handle: only its presence matters to the flags.
    GraphInstantiateOptions options;
    options.upload_stream.emplace(test::no_stream());
    EXPECT_EQ(graph_instantiate_flags(options), CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
}

TEST(GraphOptions, DeviceLaunchWithAutoFreeIsRefused) {
    GraphInstantiateOptions options;
    options.device_launch = true;
    options.auto_free_on_launch = true;
    const std::string message =
        invalid_argument_message([&] { graph_instantiate_flags(options); });
    EXPECT_NE(message.find("device_launch"), std::string::npos) << message;
    EXPECT_NE(message.find("auto_free_on_launch"), std::string::npos) << message;
}

TEST(GraphOptions, CaptureModesMapToTheDriverModes) {
    EXPECT_EQ(capture_mode_flag(CaptureMode::global), CU_STREAM_CAPTURE_MODE_GLOBAL);
    EXPECT_EQ(capture_mode_flag(CaptureMode::per_thread), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    EXPECT_EQ(capture_mode_flag(CaptureMode::relaxed), CU_STREAM_CAPTURE_MODE_RELAXED);
    EXPECT_STREQ(capture_mode_name(CaptureMode::global), "global");
    EXPECT_STREQ(capture_mode_name(CaptureMode::per_thread), "thread-local");
    EXPECT_STREQ(capture_mode_name(CaptureMode::relaxed), "relaxed");
    EXPECT_THROW(capture_mode_flag(static_cast<CaptureMode>(42)), InvalidArgumentError);
}

TEST(GraphOptions, DotFlagsFollowEachOption) {
    EXPECT_EQ(graph_dot_flags({}), 0u);
    GraphDotOptions verbose;
    verbose.verbose = true;
    EXPECT_EQ(graph_dot_flags(verbose), unsigned(CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
    GraphDotOptions kernel;
    kernel.kernel_node_params = true;
    EXPECT_TRUE(graph_dot_flags(kernel) & CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS);
    EXPECT_FALSE(graph_dot_flags(kernel) & CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS);
    GraphDotOptions memory;
    memory.memory_node_params = true;
    EXPECT_EQ(graph_dot_flags(memory), unsigned(CU_GRAPH_DEBUG_DOT_FLAGS_MEM_ALLOC_NODE_PARAMS |
                                                CU_GRAPH_DEBUG_DOT_FLAGS_MEM_FREE_NODE_PARAMS));
    GraphDotOptions rest;
    rest.memcpy_node_params = rest.memset_node_params = rest.host_node_params = true;
    rest.event_node_params = rest.conditional_node_params = rest.handles = true;
    EXPECT_EQ(graph_dot_flags(rest), unsigned(CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS |
                                              CU_GRAPH_DEBUG_DOT_FLAGS_MEMSET_NODE_PARAMS |
                                              CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS |
                                              CU_GRAPH_DEBUG_DOT_FLAGS_EVENT_NODE_PARAMS |
                                              CU_GRAPH_DEBUG_DOT_FLAGS_CONDITIONAL_NODE_PARAMS |
                                              CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES));
}

TEST(GraphOptions, ConditionalHandleFlags) {
    EXPECT_EQ(conditional_handle_flags({}), unsigned(CU_GRAPH_COND_ASSIGN_DEFAULT));
    ConditionalHandleOptions keep;
    keep.assign_default = false;
    EXPECT_EQ(conditional_handle_flags(keep), 0u);
}

TEST(GraphNames, NodeTypes) {
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_KERNEL), "kernel");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_MEMCPY), "memcpy");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_MEMSET), "memset");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_HOST), "host");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_GRAPH), "graph");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_EMPTY), "empty");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_WAIT_EVENT), "event wait");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_EVENT_RECORD), "event record");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_MEM_ALLOC), "memory allocation");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_MEM_FREE), "memory free");
    EXPECT_EQ(graph_node_type_name(CU_GRAPH_NODE_TYPE_CONDITIONAL), "conditional");
    EXPECT_EQ(graph_node_type_name(static_cast<CUgraphNodeType>(99)), "node type 99");
}

TEST(GraphNames, UpdateErrorNamesTheReasonAndTheNode) {
    EXPECT_EQ(graph_update_result_text(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED),
              "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: the topology changed");
    int fake_node = 0;
    int fake_from = 0;
    const GraphUpdateError error(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED,
                                 GraphNode(reinterpret_cast<CUgraphNode>(&fake_node)),
                                 GraphNode(reinterpret_cast<CUgraphNode>(&fake_from)), "memset",
                                 "graph 0x1 into executable graph 0x2");
    const std::string message = error.what();
    EXPECT_EQ(error.reason(), CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
    EXPECT_EQ(error.node().handle(), reinterpret_cast<CUgraphNode>(&fake_node));
    EXPECT_NE(message.find("NODE_TYPE_CHANGED"), std::string::npos) << message;
    EXPECT_NE(message.find("blocked by memset node"), std::string::npos) << message;
    EXPECT_NE(message.find("of the executable graph"), std::string::npos) << message;
    EXPECT_NE(message.find("graph 0x1"), std::string::npos) << message;

    const GraphUpdateError anonymous(CU_GRAPH_EXEC_UPDATE_ERROR, GraphNode(), GraphNode(), "", "");
    EXPECT_NE(std::string(anonymous.what()).find("no node named"), std::string::npos);
}

TEST(GraphErrors, CallsRefusedDuringCaptureSaySo) {
    // DriverError messages need no driver: status names come from the table.
    const DriverError unsupported(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "cuStreamSynchronize",
                                  "stream 0x1 on device 0");
    const std::string message = unsupported.what();
    EXPECT_NE(message.find("cuStreamSynchronize"), std::string::npos) << message;
    EXPECT_NE(message.find("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"), std::string::npos) << message;
    EXPECT_NE(message.find("a stream capture was in progress"), std::string::npos) << message;
    const DriverError invalidated(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "cuStreamEndCapture", "");
    EXPECT_NE(std::string(invalidated.what()).find("invalidated it"), std::string::npos);
    const DriverError other(CUDA_ERROR_INVALID_VALUE, "cuMemcpyAsync", "");
    EXPECT_EQ(std::string(other.what()).find("capture"), std::string::npos) << other.what();
}

TEST(GraphDependencies, ViewsTheNodesGiven) {
    int a = 0, b = 0;
    const GraphNode first(reinterpret_cast<CUgraphNode>(&a));
    const GraphNode second(reinterpret_cast<CUgraphNode>(&b));
    const GraphDependencies none;
    EXPECT_EQ(none.size(), 0u);
    EXPECT_EQ(none.handles(), nullptr);
    const GraphDependencies one(first);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one.handles()[0], first.handle());
    const std::vector<GraphNode> nodes{first, second};
    const GraphDependencies many(nodes);
    ASSERT_EQ(many.size(), 2u);
    EXPECT_EQ(many.handles()[1], second.handle());
    const auto from_list = [](GraphDependencies deps) { return deps.size(); };
    EXPECT_EQ(from_list({first, second}), 2u);
    EXPECT_EQ(from_list({}), 0u);
}

TEST(GraphHandles, EmptyGraphAndExecutableGraphRefuseUse) {
    Graph graph = detail::BoxAccess::empty<Graph>();
    EXPECT_EQ(graph.handle(), nullptr);
    EXPECT_EQ(graph.description(), "empty graph");
    EXPECT_NE(invalid_argument_message([&] { graph.node_count(); }).find("empty"),
              std::string::npos);
    EXPECT_NE(invalid_argument_message([&] { graph.instantiate(); }).find("Graph::instantiate"),
              std::string::npos);
    EXPECT_NE(invalid_argument_message([&] { graph.add_empty({}); }).find("Graph::add_empty"),
              std::string::npos);
    GraphExec exec = detail::BoxAccess::empty<GraphExec>();
    EXPECT_EQ(exec.handle(), nullptr);
    EXPECT_EQ(exec.description(), "empty executable graph");
    Stream no_stream = test::no_stream();
    EXPECT_NE(invalid_argument_message([&] { exec.launch(no_stream); }).find("GraphExec::launch"),
              std::string::npos);
    EXPECT_THROW(GraphBuilder{no_stream}, InvalidArgumentError);
}

// A stream the builder never hands to the driver: every check below fails before any call.
Stream unused_stream() {
    static int fake = 0;
    auto box = std::make_shared<detail::StreamBox>();
    box->handle = reinterpret_cast<CUstream>(&fake);
    box->owned = false;
    box->context = std::make_shared<detail::ContextBox>();
    box->context->retained = false;
    return detail::BoxAccess::make<Stream>(std::move(box));
}

TEST(GraphBuilderStates, OperationsOutsideACaptureAreRefusedNamingTheBuilder) {
    GraphBuilder builder(unused_stream());
    EXPECT_FALSE(builder.is_capturing());
    EXPECT_EQ(builder.mode(), CaptureMode::relaxed);
    EXPECT_NE(builder.description().find("graph builder on stream"), std::string::npos);
    const std::string end = invalid_argument_message([&] { builder.end(); });
    EXPECT_NE(end.find("GraphBuilder::end: no capture was begun"), std::string::npos) << end;
    for (const auto& [name, call] : std::vector<std::pair<std::string, std::function<void()>>>{
             {"split", [&] { builder.split(2); }},
             {"add_host_function", [&] { builder.add_host_function([] {}); }},
             {"hold", [&] { builder.hold(std::make_shared<int>(1)); }},
             {"create_conditional_handle", [&] { builder.create_conditional_handle(); }},
             {"while_loop", [&] { builder.while_loop(ConditionalHandle{}); }},
         }) {
        const std::string message = invalid_argument_message(call);
        EXPECT_NE(message.find("GraphBuilder::" + name), std::string::npos) << message;
        EXPECT_NE(message.find("is not capturing"), std::string::npos) << message;
    }
    GraphBuilder other(unused_stream());
    EXPECT_NE(invalid_argument_message([&] { builder.join(other); }).find("is not capturing"),
              std::string::npos);
    // Moving leaves the source empty; destroying either starts nothing.
    GraphBuilder moved(std::move(builder));
    EXPECT_FALSE(moved.is_capturing());
    EXPECT_FALSE(builder.is_capturing());
}

TEST(CaptureRegistry, LaunchesFindTheHoldingsOfTheirCapture) {
    EXPECT_FALSE(detail::captures_active());
    auto holdings = std::make_shared<detail::GraphHoldings>();
    int fake_stream = 0;
    const auto stream = reinterpret_cast<CUstream>(&fake_stream);
    EXPECT_TRUE(detail::register_capture_stream(stream, 7, *holdings));
    EXPECT_TRUE(detail::captures_active());
    // A second capture on the same stream is refused and changes nothing: launches on the stream
    // still land in the first capture's holdings.
    detail::GraphHoldings other;
    EXPECT_FALSE(detail::register_capture_stream(stream, 8, other));

    auto library = std::make_shared<int>(1);
    detail::hold_for_capture(stream, library);
    detail::hold_for_capture(stream, library);  // held once
    EXPECT_EQ(holdings->size(), 1u);
    EXPECT_EQ(other.size(), 0u);
    EXPECT_EQ(library.use_count(), 2);

    detail::unregister_capture_stream(stream);
    EXPECT_FALSE(detail::captures_active());
    detail::hold_for_capture(stream, std::make_shared<int>(2));  // no capture: nothing held
    EXPECT_EQ(holdings->size(), 1u);
    holdings.reset();
    EXPECT_EQ(library.use_count(), 1);
}

TEST(CaptureRegistry, HoldingsMergeWithoutDuplicates) {
    detail::GraphHoldings parent, child;
    auto shared = std::make_shared<int>(1);
    parent.add(shared);
    child.add(shared);
    child.add(std::make_shared<int>(2));
    child.add(nullptr);  // ignored
    parent.add_all(child);
    EXPECT_EQ(parent.size(), 2u);
    parent.add_all(parent);
    EXPECT_EQ(parent.size(), 2u);
}

TEST(GraphNoDriver, EveryEntryPointThrowsNoDriverError) {
    const auto result = test::run_process({test::helper_path("graph_no_driver_probe").string()},
                                          {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    for (const char* entry : {"Graph::create", "GraphBuilder(Device)", "GraphMemoryResource",
                              "GraphNode::type", "GraphNode::dependencies",
                              "GraphNode::dependents"})
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
    // Described by its address alone when no driver can tell its kind.
    EXPECT_NE(result.out.find("GraphNode::description: node 0x10\n"), std::string::npos)
        << result.out;
}

TEST(GraphConditionalKernels, TheDocumentedDeviceCodeCompilesWithNvrtc) {
    // Plain cubin, no -rdc: cudaGraphSetConditional stays an external for the driver to resolve.
    ProgramOptions options;
    options.name = "conditional_kernels";
    options.arch = "sm_90";
    ObjectCode code = Program(test::kConditionalKernelsSource, SourceType::cxx, options)
                          .compile(CodeType::cubin);
    EXPECT_EQ(code.code_type(), CodeType::cubin);
    const CodeInfo info = inspect_code(code);
    for (const char* kernel : {"set_count", "while_step", "set_condition"})
        EXPECT_NE(std::find(info.kernels.begin(), info.kernels.end(), kernel), info.kernels.end())
            << kernel;
}

TEST(GraphConditionalKernels, DeclaringTheFunctionYourselfWorksToo) {
    ProgramOptions options;
    options.name = "conditional_declared";
    options.arch = "sm_90";
    options.toolkit_include_path = false;  // no headers at all
    const char* source = R"(
typedef unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void stop(cudaGraphConditionalHandle loop) { cudaGraphSetConditional(loop, 0); }
)";
    ObjectCode code = Program(source, SourceType::cxx, options).compile(CodeType::cubin);
    EXPECT_GT(code.size(), 0u);
}

}  // namespace
