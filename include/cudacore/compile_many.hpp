/// @file
/// compile_many: many programs compiled at once by a pool of workers, through a ProgramCache when
/// one is given (only misses compile). For many specializations of one source, one
/// Program::compile with all the name expressions is usually faster.
#pragma once

#include "cudacore/compile_options.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/program_cache.hpp"

#include <string>
#include <vector>

namespace cudacore {

/// The options compile_many() took before CompileOptions.
using CompileManyOptions [[deprecated("use CompileOptions")]] = CompileOptions;

/// programs[i].compile(target, name_expressions[i]) for every i, in order. On failure, throws the
/// lowest-numbered program's error once the compiles in flight finish; InvalidArgumentError when
/// name_expressions has another size. Programs must not be compiled elsewhere meanwhile.
std::vector<ObjectCode> compile_many(std::vector<Program>& programs, CodeType target,
                                     const std::vector<std::vector<std::string>>& name_expressions = {},
                                     const CompileOptions& options = {});

/// One Program of `source` per list of name expressions, compiled with it; throws as above.
std::vector<ObjectCode> compile_many(const std::string& source, const ProgramOptions& program_options,
                                     CodeType target,
                                     const std::vector<std::vector<std::string>>& name_expressions,
                                     const CompileOptions& options = {});

/// Deprecated form with the name expressions before the target.
[[deprecated("use compile_many(source, program_options, target, name_expressions, options)")]]
std::vector<ObjectCode> compile_many(const std::string& source,
                                     const std::vector<std::vector<std::string>>& name_expressions,
                                     CodeType target, const ProgramOptions& program_options,
                                     const CompileOptions& options = {});

}  // namespace cudacore
