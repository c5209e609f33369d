// The remote component as a user finds it: cudacore::remote, its own header, its own library.
#include <cudacore/remote_program_cache.hpp>

#include <cstdio>

int main() {
    const cudacore::RemoteCacheOptions options =
        cudacore::RemoteCacheOptions::from_url("redis://127.0.0.1:6399/2?prefix=consumer");
    std::printf("cudacore::remote %s, prefix %s\n", options.display_url().c_str(), options.key_prefix.c_str());
    return 0;
}
