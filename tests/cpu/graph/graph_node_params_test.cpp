// Graph node parameter values without a GPU: argument bytes, the kind each value is for, its
// name, and which kinds a graph lets set_params change.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"
#include "graph/graph_box.hpp"
#include "support/box_access.hpp"

#include <cstdint>
#include <string>

namespace {

using namespace cudacore;
using cudacore::test::expect_invalid;

TEST(KernelArguments, KeepsEachArgumentsBytesAndSize) {
    struct Pair {
        int a;
        double b;
    };
    const Pair pair{7, 2.5};
    const KernelArguments arguments = KernelArguments::of(3.0f, std::uint64_t{42}, pair, 'x');
    ASSERT_EQ(arguments.count(), 4u);
    EXPECT_EQ(arguments.sizes(), (std::vector<std::size_t>{4, 8, sizeof(Pair), 1}));
    EXPECT_EQ(arguments.as<float>(0), 3.0f);
    EXPECT_EQ(arguments.as<std::uint64_t>(1), 42u);
    EXPECT_EQ(arguments.as<Pair>(2).b, 2.5);
    EXPECT_EQ(arguments.as<char>(3), 'x');
    const std::vector<void*> pointers = arguments.pointers();
    ASSERT_EQ(pointers.size(), 4u);
    for (std::size_t index = 0; index < pointers.size(); ++index) {
        EXPECT_EQ(pointers[index], arguments.data(index));
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pointers[index]) % 16, 0u) << index;
    }
}

TEST(KernelArguments, ReadingAtTheWrongSizeOrIndexIsRefused) {
    const KernelArguments arguments = KernelArguments::of(1, 2.0);
    expect_invalid([&] { (void)arguments.as<double>(0); },
                                            {"argument 0 has 4 bytes, not 8"});
    expect_invalid([&] { (void)arguments.size(2); }, {"argument 2 of 2"});
    expect_invalid([&] { (void)arguments.data(5); }, {"argument 5 of 2"});
    KernelArguments manual;
    expect_invalid([&] { manual.append(nullptr, 4); }, {"null data"});
    manual.append(nullptr, 0);
    EXPECT_EQ(manual.count(), 1u);
    EXPECT_EQ(manual.size(0), 0u);
}

TEST(KernelArguments, CompareByBytes) {
    EXPECT_EQ(KernelArguments::of(1, 2u), KernelArguments::of(1, 2u));
    EXPECT_NE(KernelArguments::of(1, 2u), KernelArguments::of(1, 3u));
    EXPECT_NE(KernelArguments::of(1), KernelArguments::of(1, 2u));
    EXPECT_NE(KernelArguments::of(std::uint64_t{1}), KernelArguments::of(1));
    EXPECT_EQ(KernelArguments{}, KernelArguments::of());
}

TEST(GraphNodeParams, EachValueNamesItsKind) {
    struct Case {
        GraphNodeParams params;
        CUgraphNodeType type;
        const char* name;
    };
    const Case cases[] = {
        {CopyNodeParams{}, CU_GRAPH_NODE_TYPE_MEMCPY, "CopyNodeParams"},
        {FillNodeParams{}, CU_GRAPH_NODE_TYPE_MEMSET, "FillNodeParams"},
        {HostNodeParams{}, CU_GRAPH_NODE_TYPE_HOST, "HostNodeParams"},
        {AllocationNodeParams{}, CU_GRAPH_NODE_TYPE_MEM_ALLOC, "AllocationNodeParams"},
        {FreeNodeParams{}, CU_GRAPH_NODE_TYPE_MEM_FREE, "FreeNodeParams"},
        {ConditionalNodeParams{}, CU_GRAPH_NODE_TYPE_CONDITIONAL, "ConditionalNodeParams"},
        {EmptyNodeParams{}, CU_GRAPH_NODE_TYPE_EMPTY, "EmptyNodeParams"},
        {OtherNodeParams{CU_GRAPH_NODE_TYPE_BATCH_MEM_OP}, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP,
         "OtherNodeParams"},
    };
    for (const Case& c : cases) {
        EXPECT_EQ(graph_node_params_type(c.params), c.type) << c.name;
        EXPECT_EQ(graph_node_params_name(c.params), c.name);
    }
}

TEST(GraphNodeParams, SettableOnlyOnANodeOfTheSameChangeableKind) {
    EXPECT_TRUE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_MEMCPY, CopyNodeParams{}));
    EXPECT_TRUE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_MEMSET, FillNodeParams{}));
    EXPECT_TRUE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_HOST, HostNodeParams{}));
    EXPECT_TRUE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_EMPTY, EmptyNodeParams{}));
    // A different kind.
    EXPECT_FALSE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_KERNEL, CopyNodeParams{}));
    EXPECT_FALSE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_MEMCPY, FillNodeParams{}));
    // Kinds the driver does not let a graph change.
    EXPECT_FALSE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_MEM_ALLOC, AllocationNodeParams{}));
    EXPECT_FALSE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_MEM_FREE, FreeNodeParams{}));
    EXPECT_FALSE(
        graph_node_params_settable(CU_GRAPH_NODE_TYPE_CONDITIONAL, ConditionalNodeParams{}));
    EXPECT_FALSE(graph_node_params_settable(CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT,
                                            OtherNodeParams{CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT}));
}

TEST(GraphNodeParams, BufferHelpersRefuseEmptyBuffers) {
    const Buffer empty;
    expect_invalid([&] { (void)CopyNodeParams::between(empty, empty); },
                                            {"CopyNodeParams::between"});
    expect_invalid([&] { (void)FillNodeParams::bytes(empty, 1); },
                                            {"FillNodeParams::bytes"});
    expect_invalid([&] { (void)FillNodeParams::words(empty, 1); },
                                            {"FillNodeParams::words"});
}

TEST(GraphNodeCalls, AnEmptyGraphRefusesEveryNodeCall) {
    Graph graph = detail::BoxAccess::empty<Graph>();
    const GraphNode node(reinterpret_cast<CUgraphNode>(std::uintptr_t{0x10}));
    expect_invalid([&] { (void)graph.edges(); }, {"Graph::edges", "empty"});
    expect_invalid([&] { graph.add_edge(node, node); }, {"Graph::add_edge", "empty"});
    expect_invalid([&] { graph.remove_edge(node, node); }, {"Graph::remove_edge", "empty"});
    expect_invalid([&] { graph.remove_node(node); }, {"Graph::remove_node", "empty"});
    expect_invalid([&] { (void)graph.clone(); }, {"Graph::clone", "empty"});
    expect_invalid([&] { (void)graph.cloned_node(node); }, {"Graph::cloned_node", "empty"});
    expect_invalid([&] { (void)graph.params(node); }, {"Graph::params", "empty"});
    expect_invalid([&] { graph.set_params(node, EmptyNodeParams{}); },
                   {"Graph::set_params", "empty"});
}

TEST(GraphNodeCalls, ANullNodeIsRefusedBeforeTheDriver) {
    const GraphNode null;
    expect_invalid([&] { (void)null.dependencies(); }, {"GraphNode::dependencies", "null"});
    expect_invalid([&] { (void)null.dependents(); }, {"GraphNode::dependents", "null"});
    EXPECT_EQ(null.description(), "null node");
}

}  // namespace
