// Every deprecated public form, called once (compiled only, never run): scripts/check-deprecated-
// forms.py compiles this file and checks that each [[deprecated("use ...")]] message of
// include/cudacore is what the compiler says here, so every old form still compiles and names
// its replacement.
#include "cudacore/array_copy.hpp"
#include "cudacore/batched_copy.hpp"
#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/memory_pool.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/mpi.hpp"
#include "cudacore/pinned_memory_resource.hpp"
#include "cudacore/stream_attributes.hpp"
#include "cudacore/tracing.hpp"

#include <string>
#include <vector>

using namespace cudacore;

void compile_forms(Program& program, MemoryProgramCache& cache, const ProgramOptions& options) {
    CachedCompileOptions cached;
    compile_cached(cache, program, CodeType::ptx, {}, cached);
    compile_cached(cache, program, CodeType::ptx, {}, [](const CacheError&) {});
    find_cached(cache, program, CodeType::ptx);
    CompileManyOptions many;
    compile_many("source", std::vector<std::vector<std::string>>{{"k"}}, CodeType::ptx, options, many);
    compile_fatbin(program, {"sm_90"}, {}, FatbinCompileOptions{});
}

void copy_forms(const CudaArray& array, const CudaArray& other, const Buffer& buffer, void* host,
                const Stream& stream) {
    copy_from_array(array, buffer, stream);
    copy_from_array(array, host, 16, stream);
    copy_array(array, other, stream);
    const std::vector<BufferCopy> pairs{{buffer, buffer}};
    copy_batch(pairs, stream);
}

void memory_forms(const Buffer& buffer, const Device& device, const Stream& stream) {
    const PinnedMemoryResource pinned(device);
    prefetch(buffer, device, stream);
    prefetch_to_host(buffer, stream);
    [[maybe_unused]] const PoolAccess access = PoolAccess::read_write;
    MemoryPool::from_handle(nullptr, device);
}

void setter_forms(const Stream& stream, const CUaccessPolicyWindow& window) {
    set_synchronization_policy(SynchronizationPolicy::spin, stream);
    set_access_policy_window(window, stream);
}

void code_forms(nvrtcProgram raw, const ProgramOptions& options) {
    ObjectCode::load("k.ccobj");
    Program::from_handle(raw, options, true);
}

void tracing_forms(const tracing::Domain& domain) {
    domain.name_category(1, "category");
    const auto message = domain.register_string("message");
    const tracing::Range range(domain, message);
    tracing::mark(domain, message);
}

void mpi_forms(std::vector<mpi::CompileJob>& jobs) {
    mpi::compile_distributed(MPI_COMM_WORLD, jobs, CodeType::ptx, mpi::DistributedCompileOptions{});
}

std::uint64_t cache_activity_forms(const GlobalCacheStats& stats) {
    return stats.memory.hits + stats.disk.misses + stats.remote.stores;
}
