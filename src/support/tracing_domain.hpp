// A tracing domain's state (what a Domain and a RangeId point at) and the strings registered in
// it: shared by the domains (tracing.cpp) and the ranges (tracing_handles.cpp).
#pragma once

#include "cudacore/tracing.hpp"

#include <nvtx3/nvToolsExt.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace cudacore::tracing::detail {

struct RegisteredText {
    std::string text;
    nvtxStringHandle_t handle = nullptr;  // null without a tool
};

struct DomainState {
    std::string name;
    nvtxDomainHandle_t handle = nullptr;  // null without a tool (NVTX's default domain)
    mutable std::mutex strings_mutex;
    mutable std::map<std::string, std::unique_ptr<RegisteredText>, std::less<>> strings;
};

}  // namespace cudacore::tracing::detail
