// Graph memory used by address: copy, fill and free nodes on a GraphAllocation with no Buffer
// around it, and graph memory a launch left allocated freed on a stream (free_graph_allocation),
// after which the graph launches again.
#include "multi_gpu_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_allocation_nodes.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"

#include <cstring>
#include <cstdint>
#include <vector>

namespace {

using namespace cudacore;
using test::expect_invalid;

constexpr std::size_t kBytes = std::size_t{1} << 20;

TEST(GraphAllocationNodesGpu, CopyFillAndFreeNodesOnGraphMemoryWithoutABuffer) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Stream stream = device.create_stream();
    Buffer input = device.allocate(kBytes, stream);
    Buffer output = device.allocate(kBytes, stream);
    test::write_pattern(code, input, stream, 3, 1);
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer host = pinned->allocate(kBytes, stream);
    stream.sync();

    Graph graph = Graph::create(device);
    GraphAllocation first = graph.add_allocation({}, kBytes);
    GraphAllocation second = graph.add_allocation({}, kBytes);
    GraphNode in = add_copy(graph, first.node, first, input);                // buffer -> graph memory
    GraphNode across = add_copy(graph, {in, second.node}, second, first);    // graph -> graph
    GraphNode out = add_copy(graph, across, output, second);                 // graph -> buffer
    GraphNode to_host = add_copy(graph, out, host.data(), host.size(), second);  // graph -> host
    GraphNode cleared = add_fill_byte(graph, to_host, first, 0);
    GraphNode freed = add_free(graph, cleared, first);
    add_free(graph, {to_host}, second);
    EXPECT_EQ(freed.type(), CU_GRAPH_NODE_TYPE_MEM_FREE);
    GraphExec exec = graph.instantiate();
    for (int launch = 0; launch < 2; ++launch) {
        std::memset(host.data(), 0, host.size());
        exec.launch(stream);
        stream.sync();
        EXPECT_EQ(test::mismatches(code, output, stream, 3, 1), 0u) << "launch " << launch;
        EXPECT_EQ(test::host_mismatches(host, 3, 1), 0u) << "launch " << launch;
    }
}

TEST(GraphAllocationNodesGpu, GraphMemoryFreedOnAStreamOutsideTheGraphLetsItLaunchAgain) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    const ObjectCode code = test::compile_multi_gpu_kernels(device);
    Stream stream = device.create_stream();
    Buffer output = device.allocate(kBytes, stream);
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    std::vector<std::uint32_t> words(kBytes / 4, 0x01010101u);
    Buffer source = pinned->allocate(kBytes, stream);
    std::memcpy(source.data(), words.data(), kBytes);
    stream.sync();

    Graph graph = Graph::create(device);
    GraphAllocation scratch = graph.add_allocation({}, kBytes);
    GraphNode in = add_copy(graph, scratch.node, scratch, source.data(), source.size());  // host -> graph
    add_copy(graph, in, output, scratch);  // no free node: the memory outlives the launch
    GraphExec exec = graph.instantiate();
    for (int launch = 0; launch < 3; ++launch) {
        exec.launch(stream);
        free_graph_allocation(scratch, stream);  // in stream order, after the launch
        std::vector<std::uint32_t> back(kBytes / 4);
        output.copy_to(back, stream);
        stream.sync();
        EXPECT_EQ(back.front(), 0x01010101u) << "launch " << launch;
        EXPECT_EQ(back.back(), 0x01010101u) << "launch " << launch;
    }
}

TEST(GraphAllocationNodesGpu, EmptyAllocationsAndSizesThatDifferAreRefusedBeforeTheDriver) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    Stream stream = device.create_stream();
    Graph graph = Graph::create(device);
    Buffer small = device.allocate(64, stream);
    GraphAllocation scratch = graph.add_allocation({}, 128);
    expect_invalid([&] { add_copy(graph, scratch.node, scratch, small); },
                   {"add_copy", "sizes differ", "graph allocation of 128 bytes"});
    expect_invalid([&] { add_free(graph, {}, GraphAllocation{}); }, {"add_free", "empty GraphAllocation"});
    expect_invalid([&] { add_fill_byte(graph, {}, GraphAllocation{}, 0); }, {"add_fill_byte", "empty"});
    expect_invalid([&] { free_graph_allocation(GraphAllocation{}, stream); }, {"free_graph_allocation", "empty"});
    expect_invalid([&] { add_copy(graph, scratch.node, nullptr, 128, scratch); }, {"add_copy", "(null)"});
    small.close(stream);
    expect_invalid([&] { add_copy(graph, scratch.node, small, scratch); }, {"add_copy", "is closed"});
    add_free(graph, scratch.node, scratch);
}

}  // namespace
