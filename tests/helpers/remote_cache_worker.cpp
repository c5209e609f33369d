// Compiles through a RemoteProgramCache from several threads, for the test that kills the server
// in the middle of a run of many such processes.
//
//   helper_remote_cache_worker URL THREADS ITERATIONS KEYS
//       each thread calls get_or_compile ITERATIONS times over KEYS keys; the "compile" makes
//       key i's code, and every returned code is checked against it. Exit code 0 when all were
//       right, 3 if any code returned was not its key's, 1 if anything threw. Prints the cache's
//       hits and the compiles done.
#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/remote_program_cache.hpp"

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

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::cerr << "usage: helper_remote_cache_worker URL THREADS ITERATIONS KEYS\n";
        return 64;
    }
    try {
        cudacore::RemoteProgramCache cache(cudacore::RemoteCacheOptions::from_url(argv[1]));
        const unsigned threads = std::stoul(argv[2]);
        const unsigned long long iterations = std::stoull(argv[3]);
        const unsigned long long keys = std::stoull(argv[4]);
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
                  << cache.stats().corrupt_entries << "\n";
        if (wrong) return 3;
        return thrown ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "helper_remote_cache_worker: " << e.what() << "\n";
        return 1;
    }
}
