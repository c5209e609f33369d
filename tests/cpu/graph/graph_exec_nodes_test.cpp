// Per-node changes of an executable graph without a GPU: empty handles and null nodes refused,
// and, against a stand-in driver table (only the entry points these calls make are filled in),
// a change of the wrong kind refused before any driver call, a driver's refusal named with the
// node and the rule, and what a change refers to held until the node's next change or the end of
// the executable graph.
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "cudacore/graph_node_params.hpp"
#include "graph/graph_box.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <functional>
#include <iterator>
#include <memory>
#include <string>

namespace {

using namespace cudacore;
using detail::DriverApi;

// What the stand-in driver answers and counts.
CUgraphNodeType node_type = CU_GRAPH_NODE_TYPE_KERNEL;
CUresult set_status = CUDA_SUCCESS;
int set_calls = 0;
int type_calls = 0;
unsigned enabled_state = 1;

CUresult fake_node_get_type(CUgraphNode, CUgraphNodeType* type) {
    ++type_calls;
    *type = node_type;
    return CUDA_SUCCESS;
}
CUresult fake_memcpy_set(CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D*, CUcontext) {
    ++set_calls;
    return set_status;
}
CUresult fake_memset_set(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS*, CUcontext) {
    ++set_calls;
    return set_status;
}
CUresult fake_host_set(CUgraphExec, CUgraphNode, const CUDA_HOST_NODE_PARAMS*) {
    ++set_calls;
    return set_status;
}
CUresult fake_set_enabled(CUgraphExec, CUgraphNode, unsigned enabled) {
    ++set_calls;
    if (set_status == CUDA_SUCCESS) enabled_state = enabled;
    return set_status;
}
CUresult fake_get_enabled(CUgraphExec, CUgraphNode, unsigned* enabled) {
    *enabled = enabled_state;
    return set_status;
}

DriverApi stand_in_driver() {
    DriverApi api;
    api.cuGraphNodeGetType = fake_node_get_type;
    api.cuGraphExecMemcpyNodeSetParams = fake_memcpy_set;
    api.cuGraphExecMemsetNodeSetParams = fake_memset_set;
    api.cuGraphExecHostNodeSetParams = fake_host_set;
    api.cuGraphNodeSetEnabled = fake_set_enabled;
    api.cuGraphNodeGetEnabled = fake_get_enabled;
    return api;
}

// The stand-in driver is the loaded one while this lives; the executable graph it makes has a
// handle no driver knows, and a context cudacore does not own (nothing is destroyed through it).
class StandInDriver {
public:
    StandInDriver()
        : api_(stand_in_driver()),
          previous_(detail::loaded_driver.exchange(&api_, std::memory_order_acq_rel)) {
        node_type = CU_GRAPH_NODE_TYPE_KERNEL;
        set_status = CUDA_SUCCESS;
        set_calls = 0;
        type_calls = 0;
        enabled_state = 1;
    }
    ~StandInDriver() { detail::loaded_driver.store(previous_, std::memory_order_release); }
    StandInDriver(const StandInDriver&) = delete;
    StandInDriver& operator=(const StandInDriver&) = delete;

private:
    DriverApi api_;
    const DriverApi* previous_;
};

GraphExec stand_in_exec() {
    static int fake_exec = 0;
    auto context = std::make_shared<detail::ContextBox>();
    context->retained = false;
    auto box = std::make_shared<detail::GraphExecBox>();
    box->handle = reinterpret_cast<CUgraphExec>(&fake_exec);
    box->context = std::move(context);
    return detail::BoxAccess::make<GraphExec>(std::move(box));
}

// Lets the executable graph go without a driver call (its handle is the stand-in's).
void forget(GraphExec& exec) {
    detail::box_of(exec)->handle = nullptr;
    exec = detail::BoxAccess::empty<GraphExec>();
}

const GraphNode kNode(reinterpret_cast<CUgraphNode>(0x1234));

template <class Call>
GraphNodeUpdateError node_update_error(Call&& call) {
    try {
        call();
    } catch (const GraphNodeUpdateError& e) {
        return e;
    }
    ADD_FAILURE() << "no GraphNodeUpdateError";
    return GraphNodeUpdateError("", {}, "", "", "");
}

}  // namespace

TEST(GraphExecNodes, AnEmptyExecutableGraphOrANullNodeIsRefusedNamingTheCall) {
    GraphExec empty = detail::BoxAccess::empty<GraphExec>();
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(16, test::no_stream());
    test::expect_invalid([&] { empty.set_enabled(kNode, false); },
                         {"GraphExec::set_enabled", "empty"});
    test::expect_invalid([&] { empty.is_enabled(kNode); }, {"GraphExec::is_enabled", "empty"});
    test::expect_invalid([&] { empty.set_copy(kNode, buffer, buffer); }, {"GraphExec::set_copy"});
    test::expect_invalid([&] { empty.set_fill_byte(kNode, buffer, 1); }, {"set_fill_byte"});
    test::expect_invalid([&] { empty.set_host_function(kNode, [] {}); }, {"set_host_function"});

    StandInDriver driver;
    GraphExec exec = stand_in_exec();
    test::expect_invalid([&] { exec.set_enabled(GraphNode(), true); },
                         {"GraphExec::set_enabled", "null node", "executable graph"});
    test::expect_invalid([&] { exec.set_fill_uint32(GraphNode(), buffer, 1); }, {"null node"});
    EXPECT_EQ(set_calls, 0);
    forget(exec);
}

TEST(GraphExecNodes, ArgumentsAreCheckedBeforeTheDriver) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer sixteen = resource->allocate(16, test::no_stream());
    Buffer eight = resource->allocate(8, test::no_stream());
    Buffer six = resource->allocate(6, test::no_stream());
    Buffer closed = resource->allocate(16, test::no_stream());
    closed.close();
    StandInDriver driver;
    GraphExec exec = stand_in_exec();
    node_type = CU_GRAPH_NODE_TYPE_MEMCPY;
    test::expect_invalid([&] { exec.set_copy(kNode, sixteen, eight); }, {"sizes differ"});
    test::expect_invalid([&] { exec.set_copy(kNode, closed, sixteen); }, {"closed"});
    char host[16];
    test::expect_invalid([&] { exec.set_copy(kNode, host, 8, sixteen); }, {"16", "8 bytes"});
    test::expect_invalid([&] { exec.set_copy(kNode, sixteen, nullptr, 16); }, {"null"});
    node_type = CU_GRAPH_NODE_TYPE_MEMSET;
    test::expect_invalid([&] { exec.set_fill_uint32(kNode, six, 1); }, {"multiple of 4"});
    node_type = CU_GRAPH_NODE_TYPE_HOST;
    test::expect_invalid([&] { exec.set_host_function(kNode, {}); }, {"empty function"});
    const Event no_event = detail::BoxAccess::empty<Event>();
    test::expect_invalid([&] { exec.set_event_record(kNode, no_event); }, {"empty Event"});
    EXPECT_EQ(set_calls, 0) << "no driver call made";
    forget(exec);
}

TEST(GraphExecNodes, AChangeOfAnotherKindIsRefusedBeforeTheDriverNamingTheNodeAndTheRule) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(16, test::no_stream());
    StandInDriver driver;
    GraphExec exec = stand_in_exec();
    node_type = CU_GRAPH_NODE_TYPE_KERNEL;
    const GraphNodeUpdateError fill =
        node_update_error([&] { exec.set_fill_byte(kNode, buffer, 0); });
    EXPECT_EQ(fill.status(), CUDA_SUCCESS) << "refused before the driver";
    EXPECT_EQ(fill.node(), kNode);
    const std::string message = fill.what();
    for (const char* part : {"GraphExec::set_fill_byte", "kernel node 0x1234", "executable graph",
                             "own kind", "memset parameters given for this kernel node"})
        EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;

    node_type = CU_GRAPH_NODE_TYPE_MEMSET;
    const GraphNodeUpdateError copy =
        node_update_error([&] { exec.set_copy(kNode, buffer, buffer); });
    EXPECT_NE(std::string(copy.what()).find("memcpy parameters given for this memset node"),
              std::string::npos)
        << copy.what();
    node_type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    const GraphNodeUpdateError host =
        node_update_error([&] { exec.set_host_function(kNode, [] {}); });
    EXPECT_NE(std::string(host.what()).find("memory allocation node"), std::string::npos)
        << host.what();
    EXPECT_EQ(set_calls, 0) << "no driver call changed anything";
    forget(exec);
}

TEST(GraphExecNodes, KindsNoDriverCallChangesAreRefusedFromTheValueAlone) {
    StandInDriver driver;
    GraphExec exec = stand_in_exec();
    node_type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;  // named in the message, not asked to decide
    const GraphNodeParams refused[] = {AllocationNodeParams{}, FreeNodeParams{},
                                       ConditionalNodeParams{},
                                       OtherNodeParams{CU_GRAPH_NODE_TYPE_BATCH_MEM_OP}};
    const char* rules[] = {"memory allocation and free nodes cannot be changed",
                           "memory allocation and free nodes cannot be changed",
                           "conditional nodes cannot be changed", "batch memory operation node"};
    for (std::size_t i = 0; i < std::size(refused); ++i) {
        const GraphNodeUpdateError error =
            node_update_error([&] { exec.set_params(kNode, refused[i]); });
        EXPECT_EQ(error.status(), CUDA_SUCCESS);
        const std::string message = error.what();
        const std::string given = graph_node_params_name(refused[i]) + " given";
        for (const char* part : {"GraphExec::set_params", "memory allocation node 0x1234",
                                 "executable graph", rules[i], given.c_str()})
            EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
    }
    EXPECT_EQ(set_calls, 0) << "decided before any driver call that changes something";

    // With no driver open at all, the same refusal (the node then named by its handle alone).
    {
        const DriverApi* open = detail::loaded_driver.exchange(nullptr);
        const GraphNodeUpdateError error =
            node_update_error([&] { exec.set_params(kNode, FreeNodeParams{}); });
        detail::loaded_driver.store(open);
        EXPECT_NE(std::string(error.what()).find("refused for node 0x1234"), std::string::npos)
            << error.what();
    }
    const int asked = type_calls;

    // A value of another kind than the node's, through set_params.
    node_type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    const GraphNodeUpdateError empty =
        node_update_error([&] { exec.set_params(kNode, EmptyNodeParams{}); });
    EXPECT_EQ(type_calls, asked + 1) << "the node's kind decides here";
    EXPECT_NE(std::string(empty.what()).find("empty parameters given for this event record node"),
              std::string::npos)
        << empty.what();
    node_type = CU_GRAPH_NODE_TYPE_EMPTY;
    exec.set_params(kNode, EmptyNodeParams{});  // nothing to change
    node_type = CU_GRAPH_NODE_TYPE_MEMSET;
    test::expect_invalid(
        [&] {
            exec.set_params(kNode,
                            FillNodeParams{.destination = 64, .element_size = 3, .width = 4});
        },
        {"element_size 3"});
    EXPECT_EQ(set_calls, 0);
    forget(exec);
}

TEST(GraphExecNodes, OnlyKernelCopyAndFillNodesCanBeDisabled) {
    StandInDriver driver;
    GraphExec exec = stand_in_exec();
    node_type = CU_GRAPH_NODE_TYPE_HOST;
    const GraphNodeUpdateError error = node_update_error([&] { exec.set_enabled(kNode, false); });
    EXPECT_EQ(error.status(), CUDA_SUCCESS);
    EXPECT_NE(std::string(error.what()).find("host node 0x1234"), std::string::npos)
        << error.what();
    EXPECT_NE(error.rule().find("only kernel, memcpy and memset nodes"), std::string::npos);
    EXPECT_EQ(set_calls, 0);
    for (const CUgraphNodeType type :
         {CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMSET}) {
        node_type = type;
        exec.set_enabled(kNode, false);
        EXPECT_FALSE(exec.is_enabled(kNode)) << graph_node_type_name(type);
        exec.set_enabled(kNode, true);
        EXPECT_TRUE(exec.is_enabled(kNode)) << graph_node_type_name(type);
    }
    EXPECT_EQ(set_calls, 6);
    forget(exec);
}

TEST(GraphExecNodes, ADriverRefusalNamesTheStatusTheNodeAndTheRule) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer buffer = resource->allocate(16, test::no_stream());
    char host[16];
    StandInDriver driver;
    GraphExec exec = stand_in_exec();
    node_type = CU_GRAPH_NODE_TYPE_MEMCPY;
    set_status = CUDA_ERROR_INVALID_VALUE;
    const GraphNodeUpdateError error =
        node_update_error([&] { exec.set_copy(kNode, host, sizeof host, buffer); });
    EXPECT_EQ(error.status(), CUDA_ERROR_INVALID_VALUE);
    const std::string message = error.what();
    for (const char* part : {"GraphExec::set_copy (cuGraphExecMemcpyNodeSetParams)",
                             "CUDA_ERROR_INVALID_VALUE", "memcpy node 0x1234", "executable graph",
                             "direction", "graph the executable graph was made from"})
        EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
    EXPECT_EQ(resource->frees.load(), 0);
    buffer = Buffer();
    EXPECT_EQ(resource->frees.load(), 1) << "a refused change holds nothing";
    forget(exec);
}

TEST(GraphExecNodes, WhatAChangeRefersToIsHeldUntilTheNodesNextChangeOrTheEnd) {
    auto resource = std::make_shared<test::HostMemoryResource>();
    Buffer first = resource->allocate(16, test::no_stream());
    Buffer second = resource->allocate(16, test::no_stream());
    Buffer third = resource->allocate(16, test::no_stream());
    StandInDriver driver;
    GraphExec exec = stand_in_exec();
    node_type = CU_GRAPH_NODE_TYPE_MEMCPY;
    exec.set_copy(kNode, first, second);
    first = Buffer();
    second = Buffer();
    EXPECT_EQ(resource->frees.load(), 0) << "the executable graph holds both buffers";
    exec.set_copy(kNode, third, third);  // never launched: the previous ones go at once
    EXPECT_EQ(resource->frees.load(), 2);
    third = Buffer();
    EXPECT_EQ(resource->frees.load(), 2);

    node_type = CU_GRAPH_NODE_TYPE_HOST;
    auto sentinel = std::make_shared<int>(0);
    std::weak_ptr<int> watch = sentinel;
    exec.set_host_function(GraphNode(reinterpret_cast<CUgraphNode>(0x99)),
                           [sentinel] { ++*sentinel; });
    sentinel.reset();
    EXPECT_FALSE(watch.expired()) << "the callable is held";
    forget(exec);
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(resource->frees.load(), 3) << "the last holdings go with the executable graph";
}
