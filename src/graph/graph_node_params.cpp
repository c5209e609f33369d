// The typed node parameter values: argument bytes, kinds and names (no driver needed).
#include "cudacore/graph_node_params.hpp"

#include "cudacore/errors.hpp"

#include <type_traits>

namespace cudacore {

namespace {
void require_open(const Buffer& buffer, const char* what) {
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string(what) + ": " + buffer.description() +
                                   " is closed");
}
}  // namespace

CopyNodeParams CopyNodeParams::between(const Buffer& destination, const Buffer& source) {
    require_open(destination, "CopyNodeParams::between");
    require_open(source, "CopyNodeParams::between");
    if (destination.size() != source.size())
        throw InvalidArgumentError("CopyNodeParams::between: sizes differ: source " +
                                   source.description() + ", destination " +
                                   destination.description());
    CopyNodeParams params;
    params.destination = destination.handle();
    params.source = source.handle();
    params.size = source.size();
    return params;
}

FillNodeParams FillNodeParams::bytes(const Buffer& buffer, std::uint8_t value) {
    require_open(buffer, "FillNodeParams::bytes");
    FillNodeParams params;
    params.destination = buffer.handle();
    params.value = value;
    params.element_size = 1;
    params.width = buffer.size();
    return params;
}

FillNodeParams FillNodeParams::words(const Buffer& buffer, std::uint32_t pattern) {
    require_open(buffer, "FillNodeParams::words");
    if (buffer.size() % 4 != 0)
        throw InvalidArgumentError("FillNodeParams::words: " + buffer.description() +
                                   " is not a multiple of 4 bytes");
    FillNodeParams params;
    params.destination = buffer.handle();
    params.value = pattern;
    params.element_size = 4;
    params.width = buffer.size() / 4;
    return params;
}

CUgraphNodeType graph_node_params_type(const GraphNodeParams& params) noexcept {
    return std::visit(
        [](const auto& value) -> CUgraphNodeType {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, KernelNodeParams>) return CU_GRAPH_NODE_TYPE_KERNEL;
            else if constexpr (std::is_same_v<T, CopyNodeParams>) return CU_GRAPH_NODE_TYPE_MEMCPY;
            else if constexpr (std::is_same_v<T, FillNodeParams>) return CU_GRAPH_NODE_TYPE_MEMSET;
            else if constexpr (std::is_same_v<T, HostNodeParams>) return CU_GRAPH_NODE_TYPE_HOST;
            else if constexpr (std::is_same_v<T, ChildGraphNodeParams>)
                return CU_GRAPH_NODE_TYPE_GRAPH;
            else if constexpr (std::is_same_v<T, EventRecordNodeParams>)
                return CU_GRAPH_NODE_TYPE_EVENT_RECORD;
            else if constexpr (std::is_same_v<T, EventWaitNodeParams>)
                return CU_GRAPH_NODE_TYPE_WAIT_EVENT;
            else if constexpr (std::is_same_v<T, AllocationNodeParams>)
                return CU_GRAPH_NODE_TYPE_MEM_ALLOC;
            else if constexpr (std::is_same_v<T, FreeNodeParams>)
                return CU_GRAPH_NODE_TYPE_MEM_FREE;
            else if constexpr (std::is_same_v<T, ConditionalNodeParams>)
                return CU_GRAPH_NODE_TYPE_CONDITIONAL;
            else if constexpr (std::is_same_v<T, EmptyNodeParams>) return CU_GRAPH_NODE_TYPE_EMPTY;
            else return value.type;
        },
        params);
}

std::string graph_node_params_name(const GraphNodeParams& params) {
    static constexpr const char* names[] = {
        "KernelNodeParams",     "CopyNodeParams",       "FillNodeParams",
        "HostNodeParams",       "ChildGraphNodeParams", "EventRecordNodeParams",
        "EventWaitNodeParams",  "AllocationNodeParams", "FreeNodeParams",
        "ConditionalNodeParams", "EmptyNodeParams",     "OtherNodeParams"};
    static_assert(std::size(names) == std::variant_size_v<GraphNodeParams>);
    return params.valueless_by_exception() ? "valueless GraphNodeParams" : names[params.index()];
}

bool graph_node_params_settable(CUgraphNodeType type, const GraphNodeParams& params) noexcept {
    if (graph_node_params_type(params) != type) return false;
    switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
        case CU_GRAPH_NODE_TYPE_MEMCPY:
        case CU_GRAPH_NODE_TYPE_MEMSET:
        case CU_GRAPH_NODE_TYPE_HOST:
        case CU_GRAPH_NODE_TYPE_GRAPH:
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        case CU_GRAPH_NODE_TYPE_EMPTY: return true;
        default: return false;
    }
}

}  // namespace cudacore
