// Reading a disk cache entry that holds arbitrary bytes: DiskProgramCache::get must return
// nothing and remove the file, or return exactly the code that encode_entry would have written;
// never crash or read out of bounds. Also runs decode_entry directly on the bytes.
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

// A private cache directory for this process, removed at exit.
struct FuzzCache {
    std::filesystem::path directory = std::filesystem::temp_directory_path() /
                                      ("cudacore-fuzz-cache-" + std::to_string(::getpid()));
    cudacore::DiskProgramCache cache{directory};
    ~FuzzCache() {
        std::error_code ignored;
        std::filesystem::remove_all(directory, ignored);
    }
};

cudacore::DiskProgramCache& fuzz_cache() {
    static FuzzCache fuzz;
    return fuzz.cache;
}

const cudacore::CacheKey key = cudacore::CacheKey::of_bytes("fuzzed entry");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    std::optional<cudacore::ObjectCode> decoded;
    try {
        decoded = cudacore::DiskProgramCache::decode_entry(bytes, key);
    } catch (const cudacore::SerializationError&) {
    }

    auto& cache = fuzz_cache();
    const auto path = cache.entry_path(key);
    std::filesystem::create_directory(path.parent_path());  // a shard folder comes with its first entry
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const std::optional<cudacore::ObjectCode> got = cache.get(key);
    if (got.has_value() != decoded.has_value()) std::abort();
    if (got) {
        if (*got != *decoded) std::abort();
        if (cudacore::DiskProgramCache::encode_entry(key, *got) != bytes) std::abort();
    } else if (std::filesystem::exists(path)) {
        std::abort();  // a bad entry must be removed
    }
    return 0;
}
