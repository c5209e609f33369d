// The header bundle bundle_folder_test and its worker process write out: `count` headers
// ("gen/h0.h"...) of `bytes` bytes each, the same bytes in every process.
#pragma once

#include "cudacore/header_bundle.hpp"

#include <string>
#include <vector>

namespace cudacore::test {

inline HeaderBundle sample_folder_bundle(int count, int bytes) {
    std::vector<BundledHeader> headers;
    for (int i = 0; i < count; ++i) {
        std::string text = "#define VALUE_" + std::to_string(i) + " " + std::to_string(1000 + i) + "\n";
        while (static_cast<int>(text.size()) < bytes) text += "// padding of header " + std::to_string(i) + "\n";
        headers.push_back({"gen/sub" + std::to_string(i % 7) + "/h" + std::to_string(i) + ".h", text});
    }
    return HeaderBundle::from_headers(std::move(headers), "sample-folder");
}

// Includes the first header of sample_folder_bundle.
inline constexpr const char* kSampleFolderSource =
    "#include <gen/sub0/h0.h>\nextern \"C\" __global__ void k(int* o) { *o = VALUE_0; }\n";

}  // namespace cudacore::test
