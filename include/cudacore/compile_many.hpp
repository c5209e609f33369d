/// @file
/// compile_many: many programs (or many sets of name expressions of one source) compiled at once,
/// by a pool of workers, through a ProgramCache when one is given (only the misses compile).
/// CompileOptions says how: workers and strategy (CompileStrategy), cache, first_alone_for_pch;
/// its extra_digest and on_cache_error apply to every program as in compile_cached.
///
/// For many specializations of ONE source, the fastest path is usually a single Program::compile
/// with all the name expressions: one NVRTC run parses the headers once. compile_many is for
/// separate programs (each its own ObjectCode), and runs them in parallel.
///
/// With automatic PCH on (the default), the first program to compile runs alone, then the rest
/// in parallel: later programs with the same leading \#includes and options use the PCH it made
/// instead of each making their own.
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

/// programs[i].compile(target, name_expressions[i]) for every i (name_expressions empty, or one
/// list per program), returned in order. With options.cache, each program is looked up first
/// exactly as find_cached does; with the threads strategy, misses are compiled through
/// compile_cached and stored. With the processes strategy, misses compiled in a child are not
/// stored: the record of where the compile looked for headers is made by the compiling process.
/// On failure, throws the error of the lowest-numbered program that failed (a CompileError
/// carries its log) after the compiles in flight finish; programs not yet started then are
/// skipped. Throws InvalidArgumentError when name_expressions has another size, CacheError from
/// the cache, SerializationError or Error when a child process fails (processes). Programs must
/// not be compiled elsewhere meanwhile.
std::vector<ObjectCode> compile_many(std::vector<Program>& programs, CodeType target,
                                     const std::vector<std::vector<std::string>>& name_expressions = {},
                                     const CompileOptions& options = {});

/// One Program per list of name expressions, all of `source` with `program_options`, each
/// compiled with its list. Throws as above.
std::vector<ObjectCode> compile_many(const std::string& source, const ProgramOptions& program_options,
                                     CodeType target,
                                     const std::vector<std::vector<std::string>>& name_expressions,
                                     const CompileOptions& options = {});

/// The earlier form with the name expressions before the target.
[[deprecated("use compile_many(source, program_options, target, name_expressions, options)")]]
inline std::vector<ObjectCode> compile_many(const std::string& source,
                                            const std::vector<std::vector<std::string>>& name_expressions,
                                            CodeType target, const ProgramOptions& program_options,
                                            const CompileOptions& options = {}) {
    return compile_many(source, program_options, target, name_expressions, options);
}

}  // namespace cudacore
