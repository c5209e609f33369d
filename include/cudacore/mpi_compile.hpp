/// @file
/// cudacore::mpi, compiling together: a list of programs compiled by all ranks of a communicator,
/// each rank its share, the results on every rank. The contract every cudacore::mpi call keeps:
/// docs/mpi.md.
#pragma once

#include "cudacore/compile_many.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/mpi_transfer.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/program_cache.hpp"

#include <mpi.h>

#include <concepts>
#include <cstddef>
#include <string>
#include <vector>

namespace cudacore::mpi {

/// One program and the name expressions to compile it with.
struct CompileJob {
    Program program;  ///< the program to compile (required: a Program has no empty value)
    /// Kernel names or template instantiations ("scale<float>") to look up after compiling.
    std::vector<std::string> name_expressions = {};
};

/// What only compile_distributed() takes besides CompileOptions.
struct DistributedOptions {
    /// Also store the code received from other ranks in CompileOptions::cache, under the keys its
    /// owner used (a rank whose headers differ misses). A failed store is a CacheError on every
    /// rank. Leave off for a cache all ranks share (docs/mpi.md).
    bool cache_received = false;
    TransferOptions transfer = {};  ///< how the results travel between ranks (chunk size)
};

/// The options the deprecated compile_distributed(comm, jobs, target, DistributedCompileOptions)
/// took; the fields mean what CompileOptions' and DistributedOptions' of the same names mean.
struct DistributedCompileOptions {
    ProgramCache* cache = nullptr;                        ///< CompileOptions::cache
    bool cache_received = false;                          ///< DistributedOptions::cache_received
    unsigned workers = 0;                                 ///< CompileOptions::workers
    CompileStrategy strategy = CompileStrategy::threads;  ///< CompileOptions::strategy
    TransferOptions transfer = {};                        ///< DistributedOptions::transfer
};

/// Which rank compiles job `index` of `job_count` over `ranks` ranks: round robin (index % ranks),
/// so every rank gets job_count / ranks jobs, give or take one, and the share is the same on every
/// run.
int compile_owner(std::size_t index, int ranks) noexcept;

/// Compiles every job to `target` with all ranks of `comm` and returns the code, in order, on
/// every rank (the same jobs and options on each, else InvalidArgumentError everywhere). A
/// compile error anywhere is thrown on every rank as CompileError. Collective over `comm`
/// (docs/mpi.md, "compile_distributed in full").
std::vector<ObjectCode> compile_distributed(MPI_Comm comm, std::vector<CompileJob>& jobs,
                                            CodeType target, const CompileOptions& options = {},
                                            const DistributedOptions& distributed = {});

/// Deprecated form with one options struct. A template taking exactly DistributedCompileOptions,
/// so that a braced `{.cache = ...}` means the new form's CompileOptions.
template <class Options>
    requires std::same_as<Options, DistributedCompileOptions>
[[deprecated("use compile_distributed(comm, jobs, target, compile_options, distributed_options)")]]
std::vector<ObjectCode> compile_distributed(MPI_Comm comm, std::vector<CompileJob>& jobs, CodeType target,
                                            const Options& options) {
    CompileOptions compile;
    compile.strategy = options.strategy;
    compile.workers = options.workers;
    compile.cache = options.cache;
    return compile_distributed(comm, jobs, target, compile, {options.cache_received, options.transfer});
}

}  // namespace cudacore::mpi
