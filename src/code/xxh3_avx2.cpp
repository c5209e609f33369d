// XXH3-64's streaming update built for AVX2: this file alone is compiled with -mavx2
// (CMakeLists.txt), and SerializedChecksum calls it only where the CPU has AVX2. It checksums
// twice as fast as the SSE2 code the rest of the library is built with (x86-64's baseline), and
// gives the same result. It includes xxHash and nothing else, all of it static (XXH_INLINE_ALL),
// so that no AVX2 code can stand in for a function that other files use.
#include <xxhash.h>

namespace cudacore::detail {

void xxh3_64bits_update_avx2(XXH3_state_t* state, const void* data, size_t size) noexcept {
    XXH3_64bits_update(state, data, size);
}

}  // namespace cudacore::detail
