// Started by the graph CPU tests with the driver path pointing at a missing file: every graph
// entry point must throw NoDriverError. Prints "NAME: NoDriverError" per entry point.
#include "cudacore/cudacore.hpp"

#include <cstdint>
#include <cstdio>
#include <functional>

int main() {
    using namespace cudacore;
    const auto probe = [](const char* name, const std::function<void()>& call) {
        try {
            call();
            std::printf("%s: UNEXPECTED success\n", name);
        } catch (const NoDriverError&) {
            std::printf("%s: NoDriverError\n", name);
        } catch (const std::exception& e) {
            std::printf("%s: UNEXPECTED %s\n", name, e.what());
        }
    };
    probe("Graph::create", [] { Graph::create(Device(0)); });
    probe("GraphBuilder(Device)", [] { GraphBuilder builder{Device(0)}; });
    probe("GraphMemoryResource", [] { std::make_shared<GraphMemoryResource>(Device(0)); });
    probe("GraphNode::type", [] { GraphNode().type(); });
    // A node handle never handed to a driver: the driver is looked for first.
    const GraphNode node(reinterpret_cast<CUgraphNode>(std::uintptr_t{0x10}));
    probe("GraphNode::dependencies", [&] { (void)node.dependencies(); });
    probe("GraphNode::dependents", [&] { (void)node.dependents(); });
    std::printf("GraphNode::description: %s\n", node.description().c_str());
    return 0;
}
