// compile_distributed: each rank compiles its share of the jobs, then all ranks exchange them.
#include "cudacore/mpi_compile.hpp"
#include "cudacore/mpi_devices.hpp"

#include "mpi/mpi_support.hpp"
#include "mpi/node_pool.hpp"

#include "cache/cached_entry.hpp"
#include "code/code_keys.hpp"
#include "cache/compile/compile_many_outcomes.hpp"
#include "cudacore/cache_key.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/cached_compile.hpp"

#include "support/parallel_steps.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>

namespace cudacore::mpi {
namespace {

// Where the sender's cache holds one job's code, sent after the sender's codes so that receivers
// store it under the same keys (cache_received). An ObjectCode, since all_gather moves those:
// named placement_name, its bytes little-endian fields: placement_magic, a u32 (1: cached, 0:
// not), and when cached the code's key (32 bytes), a u32 (1: a marker leads to it) and then the
// marker's key (32 bytes).
constexpr std::string_view placement_name = "cudacore cache placement";
constexpr std::string_view placement_magic = "CCPLACE2";

ObjectCode encode_placement(const std::optional<cudacore::detail::CachedEntry>& entry) {
    detail::WireWriter out;
    out.raw(placement_magic);
    out.u32(entry ? 1 : 0);
    if (entry) {
        out.raw(std::string_view(reinterpret_cast<const char*>(entry->code_key.digest.data()),
                                 entry->code_key.digest.size()));
        out.u32(entry->marker_key ? 1 : 0);
        if (entry->marker_key)
            out.raw(std::string_view(reinterpret_cast<const char*>(entry->marker_key->digest.data()),
                                     entry->marker_key->digest.size()));
    }
    return ObjectCode::from_bytes(CodeType::object, std::move(out.bytes()), std::string(placement_name));
}

// Where this rank's cache holds `code`, just compiled or found for `job` by compile_cached, or
// nullopt when it holds no complete entry of exactly this code (not stored, the store failed,
// or another process replaced it since).
std::optional<cudacore::detail::CachedEntry> placement_of(ProgramCache& cache, const CompileJob& job,
                                                          CodeType target, const CacheKey& source_key,
                                                          const ObjectCode& code,
                                                          const CompileOptions& options) {
    std::optional<cudacore::detail::CachedEntry> entry =
        cudacore::detail::find_cached_entry(cache, job.program, target, source_key, options);
    if (entry && entry->code != code) return std::nullopt;
    return entry;
}

struct Placement {
    CacheKey code_key;
    std::optional<CacheKey> marker_key;
};

// The inverse of encode_placement; throws SerializationError for anything else.
std::optional<Placement> decode_placement(const ObjectCode& message, const std::string& context) {
    constexpr const char* what = "a cache placement";
    if (message.name() != placement_name || message.code_type() != CodeType::object) {
        throw SerializationError(context + ": expected " + what + ", got '" + message.name() + "'");
    }
    detail::WireReader in(message.code(), context.c_str());
    if (in.raw(placement_magic.size(), what) != placement_magic) {
        throw SerializationError(context + ": " + what + " without its magic");
    }
    const std::uint32_t cached = in.u32(what);
    if (cached > 1) throw SerializationError(context + ": " + what + " with state " + std::to_string(cached));
    std::optional<Placement> placement;
    if (cached == 1) {
        placement.emplace();
        const std::string_view key = in.raw(placement->code_key.digest.size(), what);
        std::memcpy(placement->code_key.digest.data(), key.data(), key.size());
        const std::uint32_t marked = in.u32(what);
        if (marked > 1) throw SerializationError(context + ": " + what + " with marker state " + std::to_string(marked));
        if (marked == 1) {
            const std::string_view marker = in.raw(placement->code_key.digest.size(), what);
            placement->marker_key.emplace();
            std::memcpy(placement->marker_key->digest.data(), marker.data(), marker.size());
        }
    }
    if (in.remaining() != 0) {
        throw SerializationError(context + ": " + std::to_string(in.remaining()) + " bytes after " + what);
    }
    return placement;
}

// Threads for this rank's compiles: the node's cores shared among its ranks, and no more than
// the CPUs this rank may run on. Collective (it counts the ranks of this node).
unsigned compile_workers(MPI_Comm comm, unsigned requested) {
    const NodeRank node = node_rank(comm);
    if (requested) return requested;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const cpu_set_t allowed = detail::allowed_cpus();
    return std::max(1u, std::min(static_cast<unsigned>(std::max(1, CPU_COUNT(&allowed))),
                                 cores / static_cast<unsigned>(std::max(1, node.size))));
}

// Every rank must hold the same jobs: compares the digest of all cache keys with rank 0's, and
// returns the keys. Collective.
std::vector<CacheKey> agreed_keys(MPI_Comm comm, const std::vector<CompileJob>& jobs, CodeType target,
                                  const char* operation) {
    std::vector<CacheKey> keys(jobs.size());
    std::array<std::uint8_t, 40> digest{};  // job count (8 bytes) + SHA-256 of the keys
    std::optional<detail::Failure> failure = detail::attempt([&] {
        std::string all_keys;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            keys[i] = cache_key(jobs[i].program, target, jobs[i].name_expressions);
            all_keys.append(reinterpret_cast<const char*>(keys[i].digest.data()), keys[i].digest.size());
        }
        const std::uint64_t count = jobs.size();
        std::memcpy(digest.data(), &count, 8);
        const CacheKey combined = CacheKey::of_bytes(all_keys);
        std::memcpy(digest.data() + 8, combined.digest.data(), 32);
    });
    detail::agree(comm, failure, operation);
    auto reference = digest;
    detail::check(MPI_Bcast(reference.data(), static_cast<int>(reference.size()), MPI_BYTE, 0, comm),
                  "MPI_Bcast", std::string("the job digest of ") + operation);
    if (reference != digest) {
        failure = detail::Failure{std::make_exception_ptr(InvalidArgumentError(
                                      std::string(operation) + ": rank " + std::to_string(detail::rank_of(comm)) +
                                      " was given other jobs than rank 0 (" + std::to_string(jobs.size()) +
                                      " jobs; their sources, options, targets or name expressions differ)")),
                                  -1, {}};
    }
    detail::agree(comm, failure, operation);
    return keys;
}

// Which rank compiles each job, and where the job sits in that rank's list of codes.
struct Assignment {
    std::vector<int> compiler;       // for each job: the rank that compiles it
    std::vector<std::size_t> slot;   // for each job: its place in that rank's list
    std::vector<std::size_t> owned;  // for each rank: how many jobs it compiles
    std::vector<std::size_t> share;  // the jobs this rank compiles, in job order
};

// Job i goes to compile_owner(i), or with a pool (processes) to the first rank of that owner's
// node.
Assignment assign_jobs(std::size_t jobs, int size, int rank, const detail::NodePool* pool) {
    Assignment a{std::vector<int>(jobs), std::vector<std::size_t>(jobs),
                 std::vector<std::size_t>(static_cast<std::size_t>(size)), {}};
    for (std::size_t i = 0; i < jobs; ++i) {
        const int owner = compile_owner(i, size);
        a.compiler[i] = pool ? pool->compiler[static_cast<std::size_t>(owner)] : owner;
        a.slot[i] = a.owned[static_cast<std::size_t>(a.compiler[i])]++;
        if (a.compiler[i] == rank) a.share.push_back(i);
    }
    return a;
}

// This rank's share, in job order, compiled by threads or child processes. A failure stops the
// handing out of further jobs; the jobs before it run to their end, so the lowest failing index
// of the share wins. With cache_received, each code is followed (after all of them) by where
// this rank's cache holds it, so that the other ranks store it under the same keys.
class ShareCompile {
public:
    ShareCompile(std::vector<CompileJob>& jobs, const std::vector<CacheKey>& keys,
                 const std::vector<std::size_t>& share, CodeType target, const CompileOptions& options,
                 bool cache_received)
        : jobs_(jobs), keys_(keys), share_(share), target_(target), options_(options),
          send_placements_(options.cache && cache_received), compiled_(share.size()),
          placed_(share.size()), failures_(share.size()) {}

    // With automatic PCH the first compile runs alone, so that the rest use the PCH it makes.
    void with_threads(unsigned workers) {
        std::size_t alone = 0;
        if (workers > 1 && share_.size() > 1) {
            const Program& first = jobs_[share_.front()].program;
            if (first.source_type() == SourceType::cxx && uses_automatic_pch(first.options())) {
                alone = 1;
                step(0);
            }
        }
        if (!failures_.empty() && !(alone && failures_.front()))
            cudacore::detail::run_steps(share_.size() - alone, workers,
                                        [&](std::size_t k) { return step(k + alone); });
    }

    // compile_many's pool: the first miss here (its PCH), the others in child processes.
    void with_processes(unsigned workers, const cpu_set_t& cpus, const char* operation) {
        std::vector<Program*> programs;
        std::vector<const std::vector<std::string>*> names;
        for (std::size_t i : share_) {
            programs.push_back(&jobs_[i].program);
            names.push_back(&jobs_[i].name_expressions);
        }
        std::vector<cudacore::detail::ManyOutcome> outcomes;
        CompileOptions many = options_;
        many.strategy = CompileStrategy::processes;
        many.workers = workers;
        many.first_alone_for_pch = true;
        std::optional<detail::Failure> failure = detail::attempt(
            [&] {
                outcomes = cudacore::detail::compile_many_outcomes(programs, target_, names, many, &cpus,
                                                                   operation);
            },
            share_.empty() ? 0 : static_cast<long>(share_.front()));
        // The lowest failing index of the share wins, as with threads; a failure stops the
        // compiles still running (lower indices among them), which then have no code.
        bool failed = false;
        for (std::size_t k = 0; k < outcomes.size() && !failure && !failed; ++k) {
            if (!outcomes[k].failure) continue;
            failures_[k] = detail::Failure{outcomes[k].failure, static_cast<long>(share_[k]), {}};
            name_backend(k);
            failed = true;
        }
        for (std::size_t k = 0; k < outcomes.size() && !failure && !failed; ++k) {
            const std::size_t i = share_[k];
            if (!outcomes[k].code) {  // not started: only after a failure, found above
                failures_[k] = detail::Failure{
                    std::make_exception_ptr(Error(std::string(operation) + ": job " + std::to_string(i) +
                                                  " was not compiled")),
                    static_cast<long>(i), {}};
                break;
            }
            compiled_[k] = std::move(outcomes[k].code);
            if (send_placements_) failures_[k] = detail::attempt([&] { place(k); }, static_cast<long>(i));
        }
        if (failure && !failures_.empty()) failures_.front() = std::move(failure);
    }

    // The share's first failure, if any; otherwise fills `message` with what this rank sends:
    // its codes in job order, then their placements.
    std::optional<detail::Failure> finish(std::vector<ObjectCode>& message) {
        for (auto& failed : failures_) {
            if (failed) return std::move(failed);
        }
        message.reserve(2 * share_.size());
        for (auto& code : compiled_) message.push_back(std::move(*code));
        for (auto& placement : placed_)
            if (placement) message.push_back(std::move(*placement));
        return std::nullopt;
    }

private:
    void name_backend(std::size_t k) {
        if (!failures_[k]) return;
        try {
            failures_[k]->backend = jobs_[share_[k]].program.backend();
        } catch (...) {
            // The backend only decorates the report.
        }
    }

    // Where this rank's cache holds the code compiled_[k] (cache_received only).
    void place(std::size_t k) {
        const std::size_t i = share_[k];
        placed_[k] = encode_placement(placement_of(*options_.cache, jobs_[i], target_, keys_[i], *compiled_[k], options_));
    }

    bool step(std::size_t k) {
        const std::size_t i = share_[k];
        failures_[k] = detail::attempt(
            [&] {
                CompileJob& job = jobs_[i];
                compiled_[k] = compile_cached(job.program, target_, job.name_expressions, options_);
                if (send_placements_) place(k);
            },
            static_cast<long>(i));
        name_backend(k);
        return !failures_[k];
    }

    std::vector<CompileJob>& jobs_;
    const std::vector<CacheKey>& keys_;
    const std::vector<std::size_t>& share_;
    const CodeType target_;
    const CompileOptions& options_;
    const bool send_placements_;
    std::vector<std::optional<ObjectCode>> compiled_;
    std::vector<std::optional<ObjectCode>> placed_;
    std::vector<std::optional<detail::Failure>> failures_;
};

// What rank `sender` sent: one code per job it compiled, in job order, then, when it caches
// received code, one placement per code.
const std::vector<ObjectCode>& sent_by(const std::vector<std::vector<ObjectCode>>& shares,
                                       const Assignment& assignment, int sender, const char* operation) {
    const std::size_t count = assignment.owned[static_cast<std::size_t>(sender)];
    const auto& list = shares[static_cast<std::size_t>(sender)];
    if (list.size() != count && list.size() != 2 * count) {
        throw SerializationError(std::string(operation) + ": rank " + std::to_string(sender) + " sent " +
                                 std::to_string(list.size()) + " codes for its share of " +
                                 std::to_string(count) + " jobs");
    }
    return list;
}

// Stores the other ranks' codes as each sender's compile_cached stored them: the code under the
// sender's code key (made of its files: a rank whose files differ misses), and where a marker
// leads to it, the marker under the sender's first key. A job the sender could not cache is not
// stored.
void store_placements(ProgramCache& cache, const std::vector<std::vector<ObjectCode>>& shares,
                      const Assignment& assignment,
                      const std::vector<ObjectCode>& result, int rank, const char* operation) {
    for (std::size_t i = 0; i < result.size(); ++i) {
        const int sender = assignment.compiler[i];
        if (sender == rank) continue;
        const auto& list = sent_by(shares, assignment, sender, operation);
        const std::size_t count = assignment.owned[static_cast<std::size_t>(sender)];
        if (list.size() == count) continue;  // the sender sent no placements
        const std::optional<Placement> placement = decode_placement(
            list[count + assignment.slot[i]],
            std::string(operation) + ": job " + std::to_string(i) + " from rank " + std::to_string(sender));
        if (!placement) continue;
        cache.put(placement->code_key, result[i]);
        if (placement->marker_key) cache.put(*placement->marker_key, cudacore::detail::path_bound_marker());
    }
}

}  // namespace

int compile_owner(std::size_t index, int ranks) noexcept {
    return ranks <= 0 ? 0 : static_cast<int>(index % static_cast<std::size_t>(ranks));
}

std::vector<ObjectCode> compile_distributed(MPI_Comm comm, std::vector<CompileJob>& jobs, CodeType target,
                                            const CompileOptions& options, const DistributedOptions& distributed) {
    constexpr const char* operation = "cudacore::mpi::compile_distributed";
    detail::require_mpi(operation);
    const int rank = detail::rank_of(comm);
    const int size = detail::size_of(comm);
    detail::check_transfer_arguments(operation, 0, size, distributed.transfer);
    const std::vector<CacheKey> keys = agreed_keys(comm, jobs, target, operation);

    // The node's cores split among its ranks; with processes, the node's shares pooled on its
    // first rank.
    const bool pooled = options.strategy == CompileStrategy::processes;
    std::optional<detail::NodeComm> node;
    detail::NodePool pool;
    std::optional<detail::NodeWait> node_wait;
    if (pooled) {
        node.emplace(comm);
        pool = detail::pool_on_node(comm, *node);
        node_wait.emplace(*node, pool.leads);
    }
    const unsigned workers =
        !pooled ? compile_workers(comm, options.workers)
                : std::max(1u, options.workers ? options.workers * static_cast<unsigned>(pool.node_size)
                                               : static_cast<unsigned>(CPU_COUNT(&pool.cpus)));
    const Assignment assignment = assign_jobs(jobs.size(), size, rank, pooled ? &pool : nullptr);
    ShareCompile share(jobs, keys, assignment.share, target, options, distributed.cache_received);
    if (pooled) {
        share.with_processes(workers, pool.cpus, operation);
        node_wait->done();  // the node's other ranks sleep until its first rank is through
    } else {
        share.with_threads(workers);
    }
    std::vector<ObjectCode> mine;
    std::optional<detail::Failure> failure = share.finish(mine);
    detail::agree(comm, failure, operation);

    std::vector<std::vector<ObjectCode>> shares = all_gather(mine, comm, distributed.transfer);
    std::vector<ObjectCode> result;
    result.reserve(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i)
        result.push_back(sent_by(shares, assignment, assignment.compiler[i], operation)[assignment.slot[i]]);
    if (options.cache && distributed.cache_received) {
        failure = detail::attempt(
            [&] { store_placements(*options.cache, shares, assignment, result, rank, operation); });
        detail::agree(comm, failure, operation);
    }
    return result;
}

}  // namespace cudacore::mpi
