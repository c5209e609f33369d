// inspect_code on arbitrary bytes: it returns, or throws InvalidArgumentError; never crashes,
// loops, or takes memory out of proportion to the input. The committed seeds are the inputs
// that once did: a fatbin whose entry walk wrapped around (84 bytes), a cubin whose 21,000
// kernel names ran into an unterminated 512 KiB string table, PTX with a 40 KB identifier.
#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        const cudacore::CodeInfo info = cudacore::inspect_code(bytes);
        if (info.size != size) std::abort();
        // Results in proportion to the input: names within twice its size, entries that each
        // took at least a header's worth of it.
        std::size_t name_bytes = 0;
        for (const auto& name : info.kernels) name_bytes += name.size();
        if (name_bytes > 2 * size || info.entries.size() > size / 16) std::abort();
    } catch (const cudacore::InvalidArgumentError&) {
    }
    (void)cudacore::ptx_kernel_names(bytes);
    return 0;
}
