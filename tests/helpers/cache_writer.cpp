// Writes or reads one disk cache entry in a loop, for the crash and multi-process cache tests.
//
//   helper_cache_writer put DIR KEY_HEX SIZE COUNT TAG
//       puts COUNT entries (0: until killed) under KEY_HEX; entry i is SIZE copies of the letter
//       'a' + i % 26, named TAG-i.
//   helper_cache_writer get DIR KEY_HEX COUNT
//       reads the entry COUNT times; exit code 2 if any read found a corrupt entry, 3 if a
//       returned entry is not one a writer could have written.
//   helper_cache_writer stress DIR MAX_BYTES KEYS SIZE SEED COUNT
//       COUNT random puts and gets (0: until killed) over KEYS keys in a cache bounded to
//       MAX_BYTES; key i's entry is always stress_code(i, SIZE). Exit code 3 if a hit is not the
//       entry that was put under its key, 2 if a read found a corrupt entry.
//   helper_cache_writer chaos DIR MAX_BYTES KEYS SIZE SEED LOG
//       until killed: random puts (90 in 200), gets (108 in 200) and prunes (2 in 200) over KEYS
//       keys, while another process damages the cache's bookkeeping. Each put stores a value of
//       its own, chaos_code(key, "<pid>-<n>"), after appending "put <key> <tag>" to LOG (one
//       write, O_APPEND). Exit code 3 if a hit is not a value put under its key; 4 if a put threw
//       although it wrote its entry (a get right after returns that very value); 5 if a get or
//       6 if a prune threw. A put that threw without writing appends "failed <key> <tag> <why>".
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <string>

namespace {

bool well_formed(const cudacore::ObjectCode& code) {
    const std::string_view bytes = code.code();
    if (bytes.empty()) return false;
    const auto dash = code.name().rfind('-');
    if (dash == std::string::npos) return false;
    const char letter = static_cast<char>('a' + std::stoull(code.name().substr(dash + 1)) % 26);
    return bytes.find_first_not_of(letter) == std::string_view::npos;
}

cudacore::CacheKey stress_key(unsigned long long i) {
    return cudacore::CacheKey::of_bytes("stress key " + std::to_string(i));
}

// SIZE bytes that differ from key to key (a copy of another key's entry is caught).
cudacore::ObjectCode stress_code(unsigned long long i, std::size_t size) {
    std::string bytes(size, '\0');
    for (std::size_t at = 0; at < size; ++at) bytes[at] = static_cast<char>((i * 131 + at) % 251);
    return cudacore::ObjectCode::from_cubin(std::move(bytes), "stress-" + std::to_string(i));
}

// The value put under key `key` by the put tagged `tag`: SIZE bytes that depend on both (the
// chaos test's checker computes the same).
cudacore::ObjectCode chaos_code(unsigned long long key, const std::string& tag, std::size_t size) {
    const std::size_t seed = std::hash<std::string>{}(std::to_string(key) + "/" + tag);
    std::string bytes(size, '\0');
    for (std::size_t at = 0; at < size; ++at) bytes[at] = static_cast<char>((seed + at * 31) % 251);
    return cudacore::ObjectCode::from_cubin(std::move(bytes),
                                            "chaos-" + std::to_string(key) + "-" + tag);
}

void append(int log, const std::string& line) {
    if (::write(log, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::abort();
}

int chaos(char** argv) {
    const std::uint64_t bound = std::stoull(argv[3]);
    const unsigned long long keys = std::stoull(argv[4]);
    const std::size_t size = std::stoull(argv[5]);
    std::mt19937_64 random(std::stoull(argv[6]));
    const int log = ::open(argv[7], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (log < 0) return 1;
    cudacore::DiskProgramCache cache(argv[2], bound);
    const std::string pid = std::to_string(::getpid());
    for (unsigned long long n = 0;; ++n) {
        const unsigned long long key = random() % keys;
        const auto cache_key = cudacore::CacheKey::of_bytes("chaos key " + std::to_string(key));
        const unsigned op = random() % 200;
        if (op < 90) {
            const std::string tag = pid + "-" + std::to_string(n);
            const cudacore::ObjectCode code = chaos_code(key, tag, size);
            append(log, "put " + std::to_string(key) + " " + tag + "\n");
            try {
                cache.put(cache_key, code);
            } catch (const cudacore::CacheError& e) {
                std::optional<cudacore::ObjectCode> found;
                try {
                    found = cache.get(cache_key);
                } catch (const cudacore::CacheError&) {
                }
                if (found && *found == code) {
                    std::cerr << "helper_cache_writer: put " << tag << " threw, but wrote: "
                              << e.what() << "\n";
                    return 4;
                }
                std::string why = e.what();
                for (char& c : why)
                    if (c == '\n') c = ' ';
                append(log, "failed " + std::to_string(key) + " " + tag + " " + why + "\n");
            }
        } else if (op < 198) {
            std::optional<cudacore::ObjectCode> found;
            try {
                found = cache.get(cache_key);
            } catch (const cudacore::CacheError& e) {
                std::cerr << "helper_cache_writer: get threw: " << e.what() << "\n";
                return 5;
            }
            if (!found) continue;
            const std::string prefix = "chaos-" + std::to_string(key) + "-";
            if (!found->name().starts_with(prefix) ||
                !(*found == chaos_code(key, found->name().substr(prefix.size()), size))) {
                std::cerr << "helper_cache_writer: key " << key << " returned " << found->name()
                          << "\n";
                return 3;
            }
        } else {
            try {
                cache.prune(bound);
            } catch (const cudacore::CacheError& e) {
                std::cerr << "helper_cache_writer: prune threw: " << e.what() << "\n";
                return 6;
            }
        }
    }
}

int stress(char** argv) {
    cudacore::DiskProgramCache cache(argv[2], std::stoull(argv[3]));
    const unsigned long long keys = std::stoull(argv[4]);
    const std::size_t size = std::stoull(argv[5]);
    std::mt19937_64 random(std::stoull(argv[6]));
    const unsigned long long count = std::stoull(argv[7]);
    for (unsigned long long n = 0; count == 0 || n < count; ++n) {
        const unsigned long long i = random() % keys;
        if (random() % 2 == 0) {
            cache.put(stress_key(i), stress_code(i, size));
        } else if (auto code = cache.get(stress_key(i)); code && !(*code == stress_code(i, size))) {
            std::cerr << "helper_cache_writer: key " << i << " returned " << code->name() << "\n";
            return 3;
        }
    }
    return cache.stats().corrupt_entries == 0 ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: helper_cache_writer put DIR KEY SIZE COUNT TAG | get DIR KEY COUNT\n";
        return 64;
    }
    try {
        const std::string mode = argv[1];
        if (mode == "stress" && argc == 8) return stress(argv);
        if (mode == "chaos" && argc == 8) return chaos(argv);
        cudacore::DiskProgramCache cache(argv[2], std::uint64_t{1} << 40);
        const auto key = cudacore::CacheKey::from_hex(argv[3]);
        if (mode == "put" && argc == 7) {
            const std::size_t size = std::stoull(argv[4]);
            const unsigned long long count = std::stoull(argv[5]);
            for (unsigned long long i = 0; count == 0 || i < count; ++i) {
                cache.put(key, cudacore::ObjectCode::from_cubin(
                                   std::string(size, static_cast<char>('a' + i % 26)),
                                   std::string(argv[6]) + "-" + std::to_string(i)));
            }
            return 0;
        }
        if (mode == "get") {
            const unsigned long long count = std::stoull(argv[4]);
            for (unsigned long long i = 0; i < count; ++i) {
                if (auto code = cache.get(key); code && !well_formed(*code)) return 3;
            }
            return cache.stats().corrupt_entries == 0 ? 0 : 2;
        }
        std::cerr << "helper_cache_writer: bad arguments\n";
        return 64;
    } catch (const std::exception& e) {
        std::cerr << "helper_cache_writer: " << e.what() << "\n";
        return 1;
    }
}
