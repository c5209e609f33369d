/// @file
/// cudacore::mpi: moving ObjectCode between the ranks of an MPI job, compiling a list of
/// programs with all ranks together, and picking each rank's GPU.
///
/// An optional component: library target cudacore::mpi (find_package(cudacore COMPONENTS mpi)),
/// built when CMake finds MPI. cudacore.hpp does not include this header and the core library
/// never depends on MPI.
///
/// Contract shared by every function here:
///   - MPI must be initialized (MPI_Init / MPI_Init_thread) and not finalized; otherwise
///     InvalidArgumentError, before any communication.
///   - Every function is collective over `comm`: all its ranks call it, in the same order, with
///     the same root and options (as for any MPI collective). Calls on one communicator must not
///     overlap (from several threads); different communicators are independent.
///   - Failures are agreed: when any rank fails (a compile error, a corrupted message, a bad
///     argument on the root), every rank throws, none is left waiting. The failing rank throws its
///     own exception; the others throw one of the same kind (CompileError with the failing
///     program's name, full log and options; SerializationError; CacheError;
///     InvalidArgumentError; otherwise Error) whose message names the failing rank. An error of
///     MPI itself is MpiError (with the default MPI_ERRORS_ARE_FATAL handler, MPI aborts first).
///   - Code travels in ObjectCode's serialized form (magic, version, XXH3-64 checksum; see
///     object_code.hpp): broadcast() sends it in the parts of serialize_parts() (the code bytes
///     straight from the ObjectCode, received into the new ObjectCode's own storage, no copy; the
///     checksum computed piece by piece as the bytes go out and come in, and sent after them),
///     all_gather() as pack(). Every receiver checks it; a received ObjectCode holds no driver
///     state and loads lazily like any other. Messages of any size are sent in chunks of at most
///     TransferOptions::chunk_bytes (MPI counts are `int`).
#pragma once

#include "cudacore/compile_many.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/program_cache.hpp"

#include <mpi.h>

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::mpi {

/// An MPI call returned an error (only seen when the communicator's error handler returns).
class MpiError : public Error {
public:
    /// Makes the error from the MPI call, its error code and the object involved.
    MpiError(std::string call, int code, std::string object);
    /// The MPI function that failed ("MPI_Bcast").
    const std::string& call() const noexcept { return call_; }
    /// The error code it returned (MPI_ERR_...).
    int code() const noexcept { return code_; }

private:
    std::string call_;
    int code_;
};

/// Options of the functions that send ObjectCodes between ranks.
struct TransferOptions {
    /// Largest piece of one MPI call, in bytes (1 ..= INT_MAX). The default keeps every count
    /// well inside `int`; tests use tiny values to exercise the chunking.
    std::size_t chunk_bytes = std::size_t{1} << 30;
};

// ---- Code on the wire --------------------------------------------------------------------

/// The message form of a list of ObjectCodes: magic "CCMPI\0\0\1", a u64 count, count u64
/// lengths, then each code's serialize() bytes (little-endian, like the serialized form).
std::string pack(const std::vector<ObjectCode>& codes);
/// The inverse. Throws SerializationError for anything but a well-formed message whose every
/// ObjectCode passes its checksum; never reads outside `message`.
std::vector<ObjectCode> unpack(std::string_view message);

/// Broadcasts bytes from `root` in chunks. On the root `bytes` is sent; on the others it is
/// replaced by what was sent. Collective; throws MpiError, InvalidArgumentError (bad root or
/// options, agreed on every rank).
void broadcast_bytes(std::string& bytes, int root, MPI_Comm comm, const TransferOptions& options = {});

// ---- Collectives on ObjectCode -------------------------------------------------------------

/// The root's code, on every rank (the root gets its own back). `code` must hold a value on the
/// root and is ignored elsewhere (pass std::nullopt); a root without one makes every rank throw
/// InvalidArgumentError. A message that fails its checks is a SerializationError on every rank.
ObjectCode broadcast(const std::optional<ObjectCode>& code, int root, MPI_Comm comm,
                     const TransferOptions& options = {});
/// The same for a list (ignored on the other ranks; the root's list may be empty).
std::vector<ObjectCode> broadcast(const std::vector<ObjectCode>& codes, int root, MPI_Comm comm,
                                  const TransferOptions& options = {});

/// Every rank's code, in rank order, on every rank.
std::vector<ObjectCode> all_gather(const ObjectCode& code, MPI_Comm comm,
                                   const TransferOptions& options = {});
/// Every rank's list (lists may differ in length), indexed by rank, on every rank.
std::vector<std::vector<ObjectCode>> all_gather(const std::vector<ObjectCode>& codes, MPI_Comm comm,
                                                const TransferOptions& options = {});

// ---- Compiling together --------------------------------------------------------------------

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
    /// with the code; the others store it under the same keys: for a C++ program its header list
    /// and the code under a key holding the owner's header digests, so a rank whose headers differ
    /// misses and compiles rather than use code built from other headers. A job the owner could
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

// ---- Devices ----------------------------------------------------------------------------------

/// This rank's place among the ranks of its node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)).
struct NodeRank {
    int rank = 0;  ///< 0-based, in the order of `comm`'s ranks
    int size = 1;  ///< ranks of `comm` on this node
};
/// This rank's NodeRank in `comm`. Collective over `comm`. InvalidArgumentError when MPI is not
/// initialised (or finalised), MpiError when an MPI call fails.
NodeRank node_rank(MPI_Comm comm);

/// The device ordinal for node rank `node.rank` on a node with `device_count` devices: node.rank
/// modulo device_count. Throws InvalidArgumentError when device_count < 1, or when there are more
/// ranks on the node than devices and `allow_sharing` is false.
int device_ordinal_for(NodeRank node, int device_count, bool allow_sharing);

/// The GPU for this rank: device_ordinal_for(node_rank(comm), system::device_count(),
/// allow_sharing). Collective. Throws NoDriverError without a driver, InvalidArgumentError as
/// device_ordinal_for (on every rank of the node, since they all see the same counts).
Device local_device(MPI_Comm comm, bool allow_sharing = false);

}  // namespace cudacore::mpi
