// A remote (Redis) cache hit against a disk hit, a memory hit and a compile, side by side in one
// run (a table program, not a Google Benchmark: it starts its own server).
//
//   remote_cache_bench [--url redis://...|rediss://...] [--hits N]
//
// Without --url (or $CUDACORE_REMOTE_CACHE) it starts redis-server on a free loopback port, as the
// tests do, and a second one that speaks only TLS (certificates made with the openssl command; its
// rows are left out, saying why, when that cannot be done), and stops them at the end. For the
// "small" kernel and the "cuda_std" kernel (it includes
// <cuda/std/...> headers): a fresh NVRTC compile (median of a few), then compile_cached() hitting a
// MemoryProgramCache, a DiskProgramCache and a RemoteProgramCache (N hits each, median and 99th
// percentile; a hit computes the key and reads one entry, the code under its first key), and the
// floor under a remote hit: the same value fetched with a bare GET on one connection.
// Prints each hit's speed-up over the compile. Runs without a GPU (arch sm_90).
#include "redis_server.hpp"

#include "cache_bench_kernels.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"

#include "remote/redis_connection.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
using Clock = std::chrono::steady_clock;

using bench::cuda_std_source;
using bench::make_program;
using bench::small_source;

struct Timing {
    double median_us = 0;
    double p99_us = 0;
};

Timing time_calls(int count, const std::function<void()>& call) {
    std::vector<double> samples;
    samples.reserve(count);
    for (int i = 0; i < count; ++i) {
        const auto start = Clock::now();
        call();
        samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    std::sort(samples.begin(), samples.end());
    return {samples[samples.size() / 2],
            samples[std::min(samples.size() - 1, samples.size() * 99 / 100)]};
}

void row(const char* kernel, const std::string& what, const Timing& timing, double compile_us) {
    std::printf("| %-8s | %-40s | %10.1f | %10.1f | %9.0fx |\n", kernel, what.c_str(),
                timing.median_us, timing.p99_us, compile_us / timing.median_us);
}

// compile_cached hits through `cache`: one compile stores the code, then `hits` lookups of an
// equal Program are timed.
Timing time_hits(ProgramCache& cache, const char* source, int hits) {
    Program first = make_program(source);
    compile_cached(first, CodeType::cubin, {}, {.cache = &cache});  // stores
    Program program = make_program(source);
    return time_calls(hits, [&] { compile_cached(program, CodeType::cubin, {}, {.cache = &cache}); });
}

// The rows of one Redis endpoint (`label`: "" or " over TLS"): compile_cached hitting a
// RemoteProgramCache, then the floor under it, the same two values fetched with bare GETs on one
// connection. Returns false when the cache did not hit.
bool remote_rows(const char* kernel, const char* source, const RemoteCacheOptions& options,
                 const std::string& label, int hits, double compile_us) {
    RemoteProgramCache remote(options);
    row(kernel, "compile_cached: remote hit" + label, time_hits(remote, source, hits), compile_us);
    const bool hit = remote.stats().hits != 0 && remote.stats().failed_stores == 0;
    // The floor: a bare GET of the stored value (the code, under its first key).
    detail::RedisConnection connection(options);
    // The prefix is this run's, cleared after each kernel: it holds the code.
    std::string code_key;
    auto keys = connection.command({"KEYS", options.key_prefix + ":*"});
    for (std::size_t i = 0; i < detail::reply_elements(*keys); ++i)
        code_key = std::string(detail::reply_text(detail::reply_element(*keys, i)));
    row(kernel, "one bare GET (the network floor)" + label, time_calls(hits, [&] {
            if (!code_key.empty()) connection.command({"GET", code_key});
        }),
        compile_us);
    remote.clear();
    return hit;
}

}  // namespace

int main(int argc, char** argv) {
    std::string url;
    int hits = 2000;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--url") == 0 && i + 1 < argc) {
            url = argv[++i];
        } else if (std::strcmp(argv[i], "--hits") == 0 && i + 1 < argc) {
            hits = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: remote_cache_bench [--url redis://...] [--hits N]\n");
            return 64;
        }
    }
    if (url.empty()) {
        if (const char* from_env = std::getenv("CUDACORE_REMOTE_CACHE"); from_env && *from_env)
            url = from_env;
    }
    const std::string key_prefix = "cudacore-bench-" + std::to_string(::getpid());
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("cudacore-remote-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir / "tls");
    // The endpoints: the one given, or a plain and a TLS server of our own.
    std::vector<std::pair<std::string, RemoteCacheOptions>> endpoints;
    std::unique_ptr<test::RedisServer> server, tls_server;
    std::string tls_missing;
    int status = 0;
    try {
        if (url.empty()) {
            if (const std::string reason = test::RedisServer::unavailable_reason(); !reason.empty()) {
                std::fprintf(stderr, "remote_cache_bench: %s; or give --url\n", reason.c_str());
                return 1;
            }
            server = std::make_unique<test::RedisServer>();
            endpoints.emplace_back("", RemoteCacheOptions::from_url(server->url()));
            tls_missing = test::make_tls_files(dir / "tls");
            if (tls_missing.empty()) {
                tls_server = std::make_unique<test::RedisServer>("", test::RedisServer::Tls::in(dir / "tls"));
                endpoints.emplace_back(" over TLS", RemoteCacheOptions::from_url(tls_server->url(
                                                     "", "tls_ca=" + (dir / "tls" / "ca.crt").string())));
            }
        } else {
            RemoteCacheOptions options = RemoteCacheOptions::from_url(url);
            endpoints.emplace_back(options.tls ? " over TLS" : "", options);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "remote_cache_bench: %s\n", e.what());
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
        return 1;
    }
    for (auto& [label, options] : endpoints) {
        options.key_prefix = key_prefix;
        std::printf("remote_cache_bench: %s%s\n", options.display_url().c_str(), label.c_str());
    }
    if (!tls_missing.empty()) std::printf("remote_cache_bench: no TLS rows: %s\n", tls_missing.c_str());
    std::printf("%d hits per row\n\n", hits);
    std::printf("| kernel   | call                                     | median µs  |   p99 µs   | vs compile |\n");
    std::printf("| -------- | ---------------------------------------- | ---------- | ---------- | ---------- |\n");
    try {
        DiskProgramCache disk(dir / "disk");
        for (const auto& [name, source] : {std::pair{"small", small_source},
                                          std::pair{"cuda_std", cuda_std_source}}) {
            MemoryProgramCache memory;
            const Timing compile = time_calls(5, [&, source = source] {
                Program program = make_program(source);
                program.compile(CodeType::cubin);
            });
            row(name, "compile (NVRTC)", compile, compile.median_us);
            row(name, "compile_cached: memory hit", time_hits(memory, source, hits), compile.median_us);
            row(name, "compile_cached: disk hit", time_hits(disk, source, hits), compile.median_us);
            for (const auto& [label, options] : endpoints) {
                if (!remote_rows(name, source, options, label, hits, compile.median_us)) {
                    std::fprintf(stderr, "remote_cache_bench: the remote cache%s did not hit\n",
                                 label.c_str());
                    status = 1;
                }
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "remote_cache_bench: %s\n", e.what());
        status = 1;
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return status;
}
