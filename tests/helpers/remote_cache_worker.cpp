// Compiles through a RemoteProgramCache from several threads, for the test that kills the server
// in the middle of a run of many such processes.
//
//   helper_remote_cache_worker URL THREADS ITERATIONS KEYS [COMPILE_MS]
//       each thread calls get_or_compile ITERATIONS times over KEYS keys; the "compile" makes
//       key i's code (taking COMPILE_MS milliseconds, 0 by default), and every returned code is
//       checked against it. Exit code 0 when all were right, 3 if any code returned was not its
//       key's, 1 if anything threw. Prints the cache's hits, the compiles done and the compile
//       lock's counters ("compiling" is printed when a compile starts, for tests that kill the
//       worker mid-compile).
//
//   helper_remote_cache_worker --compile-cached URL THREADS PROGRAMS
//       compile_cached through a TieredProgramCache (memory, then the server) of PROGRAMS small
//       C++ programs (program i adds i), each thread asking for every program, in an order of its
//       own. Prints the compiles done (cache_stats().compiles) and the lock's counters. Exit code 0 when every call returned code, 1
//       if anything threw.
//
//   helper_remote_cache_worker --hold-lease URL HOLD_MS
//       takes the compile lease of lease_program() (a PTX compile for sm_90, the program the
//       cancellation test compiles too), prints "holding", holds it HOLD_MS milliseconds, lets it
//       go and compiles the program through the cache (storing it). Prints the compiles done.
//       Exit code 0 when it held the lease and compiled, 1 otherwise.
#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

cudacore::CacheKey key_of(unsigned long long i) {
    return cudacore::CacheKey::of_bytes("fleet key " + std::to_string(i));
}

cudacore::ObjectCode code_of(unsigned long long i) {
    std::string bytes(2000 + i, '\0');
    for (std::size_t at = 0; at < bytes.size(); ++at) bytes[at] = static_cast<char>((i * 131 + at) % 251);
    return cudacore::ObjectCode::from_cubin(std::move(bytes), "fleet-" + std::to_string(i));
}

void print_counters(const cudacore::RemoteCacheCounters& counters) {
    std::cout << " locks " << counters.locks_acquired << " waits " << counters.lock_waits
              << " wait_hits " << counters.lock_wait_hits << " timeouts "
              << counters.lock_wait_timeouts << " lost " << counters.locks_lost << "\n";
}

int compile_cached_worker(const std::string& url, unsigned threads, unsigned programs) {
    auto remote =
        std::make_shared<cudacore::RemoteProgramCache>(cudacore::RemoteCacheOptions::from_url(url));
    cudacore::TieredProgramCache cache({std::make_shared<cudacore::MemoryProgramCache>(), remote});
    std::atomic<int> thrown{0};
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (unsigned n = 0; n < programs; ++n) {
                const unsigned i = (n + t * 5) % programs;
                try {
                    cudacore::ProgramOptions options;
                    options.arch = "sm_90";
                    cudacore::Program program("extern \"C\" __global__ void add(int* x) { x[threadIdx.x] += " +
                                                  std::to_string(i) + "; }",
                                              cudacore::SourceType::cxx, options);
                    const auto code = cudacore::compile_cached(program, cudacore::CodeType::cubin, {}, {.cache = &cache});
                    if (code.size() == 0) ++thrown;
                } catch (const std::exception& e) {
                    std::cerr << "helper_remote_cache_worker: " << e.what() << "\n";
                    ++thrown;
                }
            }
        });
    }
    for (auto& worker : workers) worker.join();
    std::cout << "compiles " << cudacore::cache_stats().compiles;
    print_counters(remote->counters());
    return thrown ? 1 : 0;
}

// The program whose lease --hold-lease holds (tests/cpu/remote/remote_compile_lock_test.cpp
// builds the same).
cudacore::Program lease_program() {
    cudacore::ProgramOptions options;
    options.arch = "sm_90";
    options.name = "leased";
    return cudacore::Program("extern \"C\" __global__ void leased(int* x) { x[threadIdx.x] *= 3; }",
                             cudacore::SourceType::cxx, options);
}

int hold_lease(const std::string& url, std::chrono::milliseconds hold) {
    cudacore::RemoteProgramCache cache(cudacore::RemoteCacheOptions::from_url(url));
    cudacore::Program program = lease_program();
    cudacore::CompileTurn turn = cache.await_compile_turn(
        cudacore::cache_key(program, cudacore::CodeType::ptx, {}), [] { return std::nullopt; });
    if (!turn.lease) {
        std::cerr << "helper_remote_cache_worker: no lease for the program\n";
        return 1;
    }
    std::cout << "holding" << std::endl;
    std::this_thread::sleep_for(hold);
    turn.lease.reset();
    cudacore::compile_cached(program, cudacore::CodeType::ptx, {}, {.cache = &cache});
    std::cout << "compiles " << cudacore::cache_stats().compiles << std::endl;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "--hold-lease") {
        try {
            return hold_lease(argv[2], std::chrono::milliseconds(std::stoll(argv[3])));
        } catch (const std::exception& e) {
            std::cerr << "helper_remote_cache_worker: " << e.what() << "\n";
            return 1;
        }
    }
    if (argc == 5 && std::string(argv[1]) == "--compile-cached") {
        try {
            return compile_cached_worker(argv[2], std::stoul(argv[3]), std::stoul(argv[4]));
        } catch (const std::exception& e) {
            std::cerr << "helper_remote_cache_worker: " << e.what() << "\n";
            return 1;
        }
    }
    if (argc != 5 && argc != 6) {
        std::cerr << "usage: helper_remote_cache_worker URL THREADS ITERATIONS KEYS [COMPILE_MS]\n";
        return 64;
    }
    try {
        cudacore::RemoteProgramCache cache(cudacore::RemoteCacheOptions::from_url(argv[1]));
        const unsigned threads = std::stoul(argv[2]);
        const unsigned long long iterations = std::stoull(argv[3]);
        const unsigned long long keys = std::stoull(argv[4]);
        const std::chrono::milliseconds compile_time(argc == 6 ? std::stoll(argv[5]) : 0);
        std::atomic<int> wrong{0}, thrown{0};
        std::atomic<unsigned long long> compiles{0};
        std::vector<std::thread> workers;
        for (unsigned t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
                for (unsigned long long n = 0; n < iterations; ++n) {
                    const unsigned long long i = (n * 7 + t * 13) % keys;
                    try {
                        const auto code = cudacore::get_or_compile(cache, key_of(i), [&] {
                            ++compiles;
                            std::cout << "compiling " << i << std::endl;
                            std::this_thread::sleep_for(compile_time);
                            return code_of(i);
                        });
                        if (!(code == code_of(i))) ++wrong;
                    } catch (...) {
                        ++thrown;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
            });
        }
        for (auto& worker : workers) worker.join();
        std::cout << "hits " << cache.stats().hits << " compiles " << compiles << " corrupt "
                  << cache.stats().corrupt_entries;
        print_counters(cache.counters());
        if (wrong) return 3;
        return thrown ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "helper_remote_cache_worker: " << e.what() << "\n";
        return 1;
    }
}
