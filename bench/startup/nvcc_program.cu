// Start-up, nvcc: the kernel embedded by nvcc, launched through the runtime API; prints "ok" when
// the 32 values came back right. Built on the GPU machine by bench/startup.py.
#include "fill_kernel.cuh"

#include <cstdio>

int main() {
    int* device = nullptr;
    int host[32] = {};
    if (cudaMalloc(&device, sizeof host) != cudaSuccess) return 1;
    fill<<<1, 32>>>(device, 7);
    if (cudaMemcpy(host, device, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    for (int i = 0; i < 32; ++i)
        if (host[i] != 7 + i) return 1;
    cudaFree(device);
    std::puts("ok");
    return 0;
}
