// The kernel every start-up program runs: each thread writes value + its index.
extern "C" __global__ void fill(int* out, int value) { out[threadIdx.x] = value + static_cast<int>(threadIdx.x); }
