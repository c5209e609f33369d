// Started by the graph CPU tests with the driver path pointing at a missing file: every graph
// entry point must throw NoDriverError. Prints "NAME: NoDriverError" per entry point.
#include "cudacore/cudacore.hpp"

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
    return 0;
}
