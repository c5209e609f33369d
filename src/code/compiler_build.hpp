// The exact build of an opened NVRTC or nvJitLink ("13.0.88"), which nvrtcVersion and
// nvJitLinkVersion do not tell (they answer major.minor): the library names it in its own output,
// the header of the PTX NVRTC writes ("Cuda compilation tools, release 13.0, V13.0.88") and the
// .note.nv.tkinfo section of the cubin nvJitLink writes. Keys name the build, so that a patch
// upgrade of either library under a warm cache misses instead of serving the older compiler's
// code. Asking costs one compile of an empty program (NVRTC, 12-25 ms on 2 cores) or one link of
// an empty module (nvJitLink, about 7 ms); compiler_identity.cpp asks once per library file and
// remembers the answer. libNVVM names its build in its PTX too. Internal.
#pragma once

#include "loader/compiler_apis.hpp"
#include "loader/nvvm_api.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cudacore::detail {

// The build "M.m.p" (three numbers joined by dots) at the start of `text`, or "".
std::string_view build_at_start(std::string_view text);

// The build "M.m.p" that `text` names ("release M.m, VM.m.p", the major.minor the same twice),
// or nullopt where it names none. Never throws but std::bad_alloc.
std::optional<std::string> build_named_in(std::string_view text);

// Compiles an empty program to PTX with `api`; the build its header names, or nullopt where the
// compile fails or the header names none. Never throws but std::bad_alloc.
std::optional<std::string> nvrtc_build(const NvrtcApi& api);

// Links an empty PTX module to a cubin with `api`; the build its .note.nv.tkinfo names, or
// nullopt where the link fails or the note names none. Never throws but std::bad_alloc.
std::optional<std::string> nvjitlink_build(const NvJitLinkApi& api);

// The build of the libNVVM that loads, as keys name it: the one an empty module's PTX names
// ("13.0.88"; nvvmVersion answers libNVVM's own "2.0", which does not move with each toolkit),
// else that major.minor; "none" where it cannot be opened. Asked once per process. Thread-safe;
// throws only std::bad_alloc.
std::string nvvm_build_in_keys();

// The driver as keys of its linker's code name it: cuDriverGetVersion's number (13000), and the
// driver's build where the real name of the libcuda that loaded carries one
// ("libcuda.so.580.159.04": "13000 580.159.04"), so that a driver update misses. Opens the
// driver (throws NoDriverError where there is none); worked out once per process. Thread-safe.
std::string driver_build_in_keys();

}  // namespace cudacore::detail
