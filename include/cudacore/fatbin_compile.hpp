/// @file
/// compile_fatbin: one Program compiled for several targets ("sm_XX" cubin, "compute_XX" PTX,
/// "lto_XX" LTO-IR) in parallel and built into one fatbin. Guide and costs: docs/fatbins.md.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/fatbin.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// The options of the deprecated compile_fatbin overload.
struct FatbinCompileOptions {
    CompileOptions many{};   ///< how the targets are compiled (CompileOptions)
    FatbinOptions fatbin{};  ///< compression
};

/// What one target name asks for: the arch to compile with and the code type it gives.
struct FatbinTarget {
    std::string arch{};  ///< ProgramOptions::arch for this compile: "sm_90", "compute_90"
    CodeType type = CodeType::cubin;  ///< cubin (sm_), ptx (compute_) or ltoir (lto_)
};

/// Reads a target name ("sm_90", "compute_90", "lto_90"); InvalidArgumentError for others.
FatbinTarget parse_fatbin_target(std::string_view target);

/// Compiles a copy of `program` per target as compile_many() does and builds them, in order, into
/// one fatbin named as the program. InvalidArgumentError for empty, repeated or malformed targets;
/// the first failing target's CompileError; CacheError; LoaderError; CompilerApiError. No GPU.
ObjectCode compile_fatbin(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions = {},
                          const CompileOptions& options = {}, const FatbinOptions& fatbin = {});

/// Deprecated form with both options in one struct.
[[deprecated("use compile_fatbin(program, targets, name_expressions, compile_options, fatbin_options)")]]
ObjectCode compile_fatbin(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions,
                          const FatbinCompileOptions& options);

/// The key of compile_fatbin(program, targets, name_expressions, {fatbin}) as cache_key() keys a
/// compile: everything but the contents of the headers the program includes (compile_fatbin with
/// a cache looks each target up by its exact key, headers included). Throws as compile_fatbin.
CacheKey fatbin_cache_key(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions = {},
                          const FatbinOptions& fatbin = {});

}  // namespace cudacore
