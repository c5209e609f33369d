/// @file
/// Code inspection: what a blob of GPU code is, told from its bytes alone (no GPU, no driver).
///
/// Recognises a cubin (ELF for EM_CUDA), a fatbin (0xBA55ED50 container), PTX text, LTO-IR (NVVM
/// container, 0x7F4E43ED), a host object (any other ELF) and a library (ar archive). For cubins
/// and PTX it lists the kernels; for a fatbin, its entries. Pure functions, thread-safe.
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
    /// "sm_90" for a cubin, the PTX .target ("sm_90", "sm_90a"), "" where the bytes do not say
    /// (LTO-IR, objects, libraries; a fatbin with several archs lists them in `entries`).
    std::string arch{};
    std::size_t size = 0;  ///< bytes of code
    std::vector<std::string> kernels{};  ///< sorted; cubin (and ELF fatbin entries) and PTX only
    std::vector<FatbinEntry> entries{};  ///< fatbin only
    std::string ptx_version{};         ///< PTX only: the .version ("8.8")
};

/// The code type, or nullopt when the bytes are none of the above.
std::optional<CodeType> try_detect_code_type(std::string_view code) noexcept;
/// The code type; throws InvalidArgumentError (naming the size and first bytes) when unknown.
CodeType detect_code_type(std::string_view code);

/// Everything the bytes tell. Throws InvalidArgumentError when the type is unknown or the
/// container (cubin, object, fatbin, library, LTO-IR) is truncated or malformed. Safe on hostile
/// input: the work and memory it takes are proportional to the input's size.
CodeInfo inspect_code(std::string_view code);
/// The same for an ObjectCode, trusting its declared code type.
CodeInfo inspect_code(const ObjectCode& code);

/// Kernel names (.entry) in PTX text, in order of appearance.
std::vector<std::string> ptx_kernel_names(std::string_view ptx);
/// Kernel names (entry functions) of a cubin, sorted. Throws InvalidArgumentError when the ELF is
/// malformed.
std::vector<std::string> cubin_kernel_names(std::string_view cubin);
/// Names of a cubin's global variables (__device__, __constant__, __managed__: defined data
/// objects, lowered names, the compiler's own left out), sorted. Throws InvalidArgumentError when the ELF is malformed.
std::vector<std::string> cubin_global_names(std::string_view cubin);

}  // namespace cudacore
