/// @file
/// compile_fatbin: one Program compiled for several targets in one call, the compiles run in
/// parallel as compile_many() runs them, and the results built into one fatbin ObjectCode
/// (FatbinBuilder, fatbin.hpp). The fatbin then loads on any GPU it has code for: the driver picks
/// the cubin of the device's arch, else JIT-compiles the PTX.
///
/// Targets: "sm_XX" (and "sm_XXa", "sm_XXf") gives a cubin for that arch, "compute_XX" PTX for
/// that virtual arch (for GPUs newer than any cubin), "lto_XX" LTO-IR (C++ programs only; for
/// linking with nvJitLink later, never loaded by the driver).
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

/// The options the deprecated compile_fatbin(program, targets, names, FatbinCompileOptions) took:
/// compile_fatbin now takes a CompileOptions and a FatbinOptions.
struct FatbinCompileOptions {
    CompileOptions many{};   ///< how the targets are compiled (CompileOptions)
    FatbinOptions fatbin{};  ///< compression
};

/// What one target name asks for: the arch to compile with and the code type it gives.
struct FatbinTarget {
    std::string arch{};  ///< ProgramOptions::arch for this compile: "sm_90", "compute_90"
    CodeType type = CodeType::cubin;  ///< cubin (sm_), ptx (compute_) or ltoir (lto_)
};

/// Reads a target name ("sm_90", "sm_90a", "compute_90", "lto_90"). Throws InvalidArgumentError
/// naming it and the accepted forms when it is none of them. Pure; thread-safe.
FatbinTarget parse_fatbin_target(std::string_view target);

/// Compiles `program` once per target (a copy of it with ProgramOptions::arch set to the target's
/// arch, and for lto_ targets link_time_optimization on), in parallel as compile_many() does, then
/// builds the results, in the order of `targets`, into one fatbin named as the program. Each
/// name expression is compiled for every target; the fatbin's symbol map takes it to its lowered
/// name. `program` itself is not compiled (its log() and handle() stay as they were).
/// Throws InvalidArgumentError when `targets` is empty, names a target twice or holds a malformed
/// one (before anything compiles); the CompileError of the first target (in list order) that
/// failed, with its log and flags (-arch names the target); CacheError from the cache, as
/// compile_many does; LoaderError when NVRTC or nvFatbin cannot be loaded; CompilerApiError
/// from nvFatbin (FatbinBuilder::build). Thread-safe for different Program objects; needs no GPU.
///
/// `options`: workers, strategy (threads or processes) and cache, as compile_many() takes them.
/// With a cache, each target's compile is looked up and stored on its own, exactly as
/// compile_many does (keyed by its headers too); the fatbin itself is assembled again each call
/// (nvFatbin takes milliseconds), so a cached fatbin is never one whose headers changed.
/// first_alone_for_pch is not used: the targets' flags differ, so none could use the PCH another
/// made (each still makes and uses its own automatic PCH, for later calls). With threads (the
/// default), NVRTC's shared locks keep the targets from overlapping much (0.84-1.05x four
/// compiles in a row on 16 cores), so the calling thread compiles the targets one after another
/// and other threads (up to `workers`) join only for targets not yet started 50 ms after the
/// start: a small program costs what compiling its targets in a row costs.
/// CompileStrategy::processes compiles them at once, under compile_many()'s rule for forking
/// (docs/fatbins.md, "Cost"). `fatbin`: how the fatbin is written (compression).
ObjectCode compile_fatbin(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions = {},
                          const CompileOptions& options = {}, const FatbinOptions& fatbin = {});

/// The earlier form with both options in one struct.
[[deprecated("use compile_fatbin(program, targets, name_expressions, compile_options, fatbin_options)")]]
inline ObjectCode compile_fatbin(const Program& program, const std::vector<std::string>& targets,
                                 const std::vector<std::string>& name_expressions,
                                 const FatbinCompileOptions& options) {
    return compile_fatbin(program, targets, name_expressions, options.many, options.fatbin);
}

/// The key of compile_fatbin(program, targets, name_expressions, {fatbin}): the SHA-256 of a
/// format tag, each target's name and the cache_key() of its compile (source, flags with the
/// target's arch, name expressions, compiler versions), in order, the fatbin options and the
/// nvFatbin version ("none" when it cannot be loaded). The same source with another target list
/// (or order) has another key. Like cache_key(), it does not cover the contents of headers.
/// Throws InvalidArgumentError as compile_fatbin does for the targets, and what cache_key()
/// throws. Thread-safe.
CacheKey fatbin_cache_key(const Program& program, const std::vector<std::string>& targets,
                          const std::vector<std::string>& name_expressions = {},
                          const FatbinOptions& fatbin = {});

}  // namespace cudacore
