// The environment variables NVRTC reads that may change the code it makes, which keys hold: a
// process with NV_NVVM_VERSION=nvvm-latest gets other PTX than one without. Internal.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Every variable NVRTC 13.0 asks getenv for while it compiles C++ to PTX, a cubin or LTO-IR (with
// and without debug and line information), by whether keys hold it. Keyed: those that change the
// code or might (versions, producers, appended flags, the front end's own folders, and "bar",
// which NVRTC 13.0 reads at every compile for no documented purpose). Not keyed:
// the working directory (keys hold it where the code depends on it), the folder of temporary
// files, and NVRTC's threads, locks, logs, dumps and precompiled headers (whose code is the same).
// tests/cpu/code/compiler_environment_test.cpp fails when NVRTC asks for one in neither list.
inline constexpr std::array<std::string_view, 9> nvrtc_keyed_variables = {
    "NV_NVVM_VERSION",  "LLVM_OVERRIDE_PRODUCER", "NVRTC_APPEND_FLAGS", "NVVM_IR_VER_CHK", "EDG_BASE",
    "EDG_MODULES_PATH", "NVRTCWIZ",               "CAN_FINALIZE_DEBUG", "bar"};
inline constexpr std::array<std::string_view, 10> nvrtc_unkeyed_variables = {
    "PWD",
    "TMPDIR",
    "CUDA_CACHE_DISABLE",
    "NVRTC_DISABLE_CONCURRENT_NVVM",
    "LIBNVVM_DISABLE_CONCURRENT_API",
    "NVRTC_INTERNAL_GLOBAL_LOCK",
    "AS_SECURE_LOG_FILE",
    "NVRTC_PCH_HEAP_SIZE",
    "NVRTC_DISABLE_PCH",
    "DUMP_KNOBS_TO_FILE"};

// "NAME=value\n" for each keyed variable that is set, read once per process, when first asked: at
// the first key or the first compile, whichever comes first (NVRTC reads some of them only at its
// first compile); "" where none is set, so that keys stay as they were. Thread-safe; throws only
// std::bad_alloc.
const std::string& nvrtc_environment_in_keys();

}  // namespace cudacore::detail
