// compile_many's work without the throw at the end: what became of each program. For callers
// that must know which program failed, not only the first failure (compile_distributed).
#pragma once

#include "cudacore/compile_many.hpp"

#include <sched.h>

#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace cudacore::detail {

// One program's outcome: its code, or its failure, or neither (not started: an earlier failure
// stopped the pool).
struct ManyOutcome {
    std::optional<ObjectCode> code;
    std::exception_ptr failure;
};

// programs[i]->compile(target, *names[i]) for every i, as compile_many does it (cache lookups,
// the first miss alone for its PCH, threads or child processes), returned in order. Child
// processes run on `child_cpus` when it is not null (for a pool of several ranks' CPUs). Throws
// only what stops the pool as a whole: CacheError from a lookup, Error when fork or pipe fails.
// `operation` names the caller's call in the errors of the child processes and the pool.
std::vector<ManyOutcome> compile_many_outcomes(const std::vector<Program*>& programs, CodeType target,
                                               const std::vector<const std::vector<std::string>*>& names,
                                               const CompileOptions& many, const cpu_set_t* child_cpus,
                                               const char* operation);
// The same with a target per program (targets[i] for programs[i]): one pool for compiles of
// different code types (compile_fatbin's cubins and PTX). With the threads strategy, the other
// workers join only when compiles are left `helpers_after` after the pool starts (zero: at once;
// support/parallel_steps.hpp): until then the calling thread compiles them one after another.
std::vector<ManyOutcome> compile_many_outcomes(const std::vector<Program*>& programs,
                                               const std::vector<CodeType>& targets,
                                               const std::vector<const std::vector<std::string>*>& names,
                                               const CompileOptions& many, const cpu_set_t* child_cpus,
                                               const char* operation, std::chrono::nanoseconds helpers_after);

}  // namespace cudacore::detail
