// How error messages of the views and interop layers name the objects they are about: a buffer
// (which may be closed) and a DLPack element type. One wording for every message. Internal.
#pragma once

#include "cudacore/buffer.hpp"

#include <dlpack/dlpack.h>

#include <string>

namespace cudacore::detail {

// The buffer's description, or "a closed Buffer".
inline std::string describe_buffer(const Buffer& buffer) {
    return buffer.is_closed() ? std::string("a closed Buffer") : buffer.description();
}

// A DLPack element type as "float32", "int8", "uint16x4", or "dtype code C of B" for other codes.
inline std::string describe_dtype(const DLDataType& dtype) {
    std::string out;
    switch (dtype.code) {
        case kDLInt: out = "int"; break;
        case kDLUInt: out = "uint"; break;
        case kDLFloat: out = "float"; break;
        case kDLBfloat: out = "bfloat"; break;
        default: out = "dtype code " + std::to_string(dtype.code) + " of "; break;
    }
    out += std::to_string(dtype.bits);
    if (dtype.lanes != 1) out += "x" + std::to_string(dtype.lanes);
    return out;
}

}  // namespace cudacore::detail
