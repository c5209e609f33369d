/// @file
/// cudacore::mpi, compiling together: a list of programs compiled by all ranks of a communicator,
/// each rank its share, the results on every rank. The contract every function of cudacore::mpi
/// keeps is at the top of mpi.hpp.
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
    /// Also store the code received from other ranks in CompileOptions::cache, so that a later
    /// run finds every program locally (compile_cached and find_cached hit). Each rank reads back
    /// where its cache keeps the code it compiled or found (counted as hits) and sends those keys
    /// with the code; the others store it under the same keys: for a C++ program the code under a
    /// key made of the owner's files (and the marker that leads there, for code that names a
    /// path), so a rank whose headers differ misses and compiles rather than use code built from
    /// other headers. A job the owner could
    /// not cache (not stored, or its store failed) is not stored elsewhere either. A store that
    /// fails on a receiving rank is a CacheError on every rank. Leave off for a cache shared by
    /// all ranks (they already stored it there).
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

/// Compiles every job to `target` with all ranks of `comm` together and returns, on every rank,
/// the ObjectCodes in the order of `jobs` (equal to compiling them all in one process). Every rank
/// passes the same jobs (checked through their cache keys: InvalidArgumentError on every rank when
/// they differ) and the same options. Rank r compiles the jobs whose compile_owner is r (with
/// CompileStrategy::processes, the first rank of r's node compiles them), then the results are
/// exchanged with all_gather. A compile error on any rank is thrown on every rank: the failing
/// job with the lowest index wins, as CompileError with its program name, full log and options.
/// Collective over `comm`, which comes first as in MPI's own calls.
///
/// `options`:
/// - cache: each rank compiles its share through compile_cached: a hit is not compiled. A
///   DiskProgramCache in a directory that all ranks see is shared (it is multi-process safe);
///   each rank may also pass its own cache. Not owned; may be null (no cache). extra_digest and
///   on_cache_error apply as in compile_cached.
/// - workers: threads compiling this rank's share at once. 0: this node's cores divided among its
///   ranks, and at most the CPUs this rank may run on (Open MPI's mpirun binds each rank to one
///   core for 2 ranks or fewer, to a socket beyond; pass --bind-to none to let a rank spread).
///   With automatic PCH the first job of the share compiles alone and the rest use its PCH. Jobs
///   compile on different threads, so no two may wrap the same handle (Program::from_handle).
///   With processes: children per rank of the node (0: one per CPU its ranks may run on).
/// - strategy, as compile_many() does it (see CompileStrategy). threads (the default): each rank
///   compiles its share in its own process; NVRTC runs one compile at a time per process on some
///   machines, so the workers then mostly wait. processes: the ranks of a node pool their shares
///   on the node's first rank, since an automatic PCH serves only the process that made it and
///   its children. That rank compiles the node's first job itself (making the PCH), then the rest
///   in `fork()`ed children that use the PCH and run truly in parallel, on the CPUs of all the
///   node's ranks; the other ranks sleep meanwhile, leaving their CPUs free. A child calls no MPI
///   function and leaves with _exit; forking an MPI process is safe with shared-memory and TCP
///   transports but not with some InfiniBand (OpenFabrics verbs) set-ups, hence opt-in. With a
///   cache, the node's first rank looks the node's jobs up (hits are found as with threads), but
///   code compiled in a child is not stored (the record of where a compile looked for headers is
///   made by the compiling process), so neither is it with cache_received on other ranks. Do not
///   use while other threads of this process compile or hold NVRTC.
std::vector<ObjectCode> compile_distributed(MPI_Comm comm, std::vector<CompileJob>& jobs,
                                            CodeType target, const CompileOptions& options = {},
                                            const DistributedOptions& distributed = {});

/// The earlier form with one options struct. A template taking exactly DistributedCompileOptions,
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
