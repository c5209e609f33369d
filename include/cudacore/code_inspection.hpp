/// @file
/// Code inspection: what a blob of GPU code is (cubin, fatbin, PTX, LTO-IR, host object, library)
/// and its kernels or fatbin entries, told from its bytes alone. Pure functions, thread-safe.
#pragma once

#include "cudacore/object_code.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// One image inside a fatbin.
struct FatbinEntry {
    std::string kind{};        ///< "ptx", "elf" or "ltoir" (else "kind N")
    std::string arch{};        ///< "sm_90" (ELF), "compute_90" (PTX), "lto_90" (LTO-IR)
    std::size_t size = 0;      ///< payload bytes
    bool compressed = false;   ///< compressed payloads are not looked into
};

/// What inspect_code() finds in compiled code: type, arch, size, kernels.
struct CodeInfo {
    CodeType type = CodeType::cubin;  ///< detected from the bytes (the declared type otherwise)
    /// "sm_90" for a cubin, the PTX .target; "" where the bytes do not say (a fatbin's `entries`).
    std::string arch{};
    std::size_t size = 0;  ///< bytes of code
    std::vector<std::string> kernels{};  ///< sorted; cubin (and ELF fatbin entries) and PTX only
    std::vector<FatbinEntry> entries{};  ///< fatbin only
    std::string ptx_version{};         ///< PTX only: the .version ("8.8")
};

/// The code type, or nullopt when unknown.
std::optional<CodeType> try_detect_code_type(std::string_view code) noexcept;
/// The code type; InvalidArgumentError (naming the size and first bytes) when unknown.
CodeType detect_code_type(std::string_view code);

/// Everything the bytes tell; InvalidArgumentError when the type is unknown or the container is
/// malformed. Safe on hostile input (work and memory proportional to its size).
CodeInfo inspect_code(std::string_view code);
/// The same for an ObjectCode, trusting its declared code type.
CodeInfo inspect_code(const ObjectCode& code);

/// Kernel names (.entry) in PTX text, in order of appearance.
std::vector<std::string> ptx_kernel_names(std::string_view ptx);
/// Kernel names of a cubin, sorted; InvalidArgumentError when the ELF is malformed.
std::vector<std::string> cubin_kernel_names(std::string_view cubin);
/// Names of a cubin's global variables, sorted; throws as cubin_kernel_names.
std::vector<std::string> cubin_global_names(std::string_view cubin);

}  // namespace cudacore
