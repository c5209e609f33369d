// Kernels for the green context and tensor map tests (compiled with NVRTC; TMA needs sm_90).
#pragma once

namespace cudacore::test {

// record_sm: each block writes the id of the SM it ran on. meet: sets its own flag, then spins
// until the other kernel's flag is set or `timeout_ns` passes, and reports whether it saw it
// (true only when both kernels were resident at once).
inline constexpr const char* green_context_kernels = R"(
extern "C" __global__ void record_sm(unsigned* sm_of_block, unsigned long long hold_ns) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {  // hold the SM a little so the blocks spread over every SM of the partition
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < hold_ns);
    if (threadIdx.x == 0) sm_of_block[blockIdx.x] = smid;
}

extern "C" __global__ void meet(volatile unsigned* mine, volatile unsigned* other,
                                unsigned* saw_other, unsigned long long timeout_ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    *mine = 1;
    __threadfence_system();
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*other == 0 && now - start < timeout_ns);
    *saw_other = *other != 0 ? 1u : 0u;
}
)";

// load_tile: one block copies the 32 x 16 float tile at (x, y) of a 2-D tensor map into shared
// memory with one bulk tensor copy (TMA) completed on an mbarrier, then writes it out row-major.
inline constexpr const char* tensor_map_kernels = R"(
struct alignas(64) TensorMapBytes { unsigned long long opaque[16]; };  // a CUtensorMap

extern "C" __global__ void load_tile(const __grid_constant__ TensorMapBytes map, int x, int y,
                                     float* out) {
    constexpr int box_x = 32, box_y = 16;
    constexpr unsigned bytes = box_x * box_y * sizeof(float);
    __shared__ alignas(128) float tile[box_y * box_x];
    __shared__ alignas(8) unsigned long long barrier;
    const unsigned barrier_address = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
    const unsigned tile_address = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier_address), "r"(1));
        // The barrier's initialisation must be visible to the async proxy (the copy engine).
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(barrier_address), "r"(bytes) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];"
            ::"r"(tile_address), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y),
              "r"(barrier_address)
            : "memory");
    }
    unsigned done = 0;
    while (!done) {  // phase 0 completes when the copy's bytes have arrived
        asm volatile(
            "{\n .reg .pred complete;\n"
            " mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
            " selp.u32 %0, 1, 0, complete;\n}"
            : "=r"(done) : "r"(barrier_address), "r"(0u) : "memory");
    }
    for (int i = threadIdx.x; i < box_x * box_y; i += blockDim.x) out[i] = tile[i];
}
)";

// load_box_<rank>d (rank 1..5): one block copies the box at coordinates (c0, ..., c4; those past
// the rank are ignored) of a float tensor map of that rank into shared memory with one bulk
// tensor copy, then writes its `elements` floats (at most 256) out as they landed: dimension 0
// fastest, as the box is laid out in shared memory.
inline constexpr const char* tensor_map_rank_kernels = R"(
struct alignas(64) TensorMapBytes { unsigned long long opaque[16]; };  // a CUtensorMap

#define TO_SHARED ".shared::cluster.global.mbarrier::complete_tx::bytes"

template <int Rank>
__device__ void load_box(const TensorMapBytes& map, int c0, int c1, int c2, int c3, int c4,
                         unsigned elements, float* out) {
    __shared__ alignas(128) float box[256];
    __shared__ alignas(8) unsigned long long barrier;
    const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(box));
    const unsigned long long src = reinterpret_cast<unsigned long long>(&map);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(1));
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(bar), "r"(elements * 4u) : "memory");
        if constexpr (Rank == 1)
            asm volatile("cp.async.bulk.tensor.1d" TO_SHARED " [%0], [%1, {%2}], [%3];"
                         ::"r"(dst), "l"(src), "r"(c0), "r"(bar) : "memory");
        else if constexpr (Rank == 2)
            asm volatile("cp.async.bulk.tensor.2d" TO_SHARED " [%0], [%1, {%2, %3}], [%4];"
                         ::"r"(dst), "l"(src), "r"(c0), "r"(c1), "r"(bar) : "memory");
        else if constexpr (Rank == 3)
            asm volatile("cp.async.bulk.tensor.3d" TO_SHARED " [%0], [%1, {%2, %3, %4}], [%5];"
                         ::"r"(dst), "l"(src), "r"(c0), "r"(c1), "r"(c2), "r"(bar) : "memory");
        else if constexpr (Rank == 4)
            asm volatile("cp.async.bulk.tensor.4d" TO_SHARED " [%0], [%1, {%2, %3, %4, %5}], [%6];"
                         ::"r"(dst), "l"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                         : "memory");
        else
            asm volatile("cp.async.bulk.tensor.5d" TO_SHARED
                         " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                         ::"r"(dst), "l"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
                           "r"(bar)
                         : "memory");
    }
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{\n .reg .pred complete;\n"
            " mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
            " selp.u32 %0, 1, 0, complete;\n}"
            : "=r"(done) : "r"(bar), "r"(0u) : "memory");
    }
    for (unsigned i = threadIdx.x; i < elements; i += blockDim.x) out[i] = box[i];
}

#define LOAD_BOX(rank)                                                                          \
    extern "C" __global__ void load_box_##rank##d(const __grid_constant__ TensorMapBytes map,  \
                                                  int c0, int c1, int c2, int c3, int c4,      \
                                                  unsigned elements, float* out) {             \
        load_box<rank>(map, c0, c1, c2, c3, c4, elements, out);                                 \
    }
LOAD_BOX(1)
LOAD_BOX(2)
LOAD_BOX(3)
LOAD_BOX(4)
LOAD_BOX(5)
)";

}  // namespace cudacore::test
