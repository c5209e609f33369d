// Start-up, driver API: the cubin loaded from a file (argv[1]) and launched; prints "ok" when the
// 32 values came back right. Built on the GPU machine by bench/startup.py (g++ ... -lcuda).
// With --stream-ordered, the steps cudacore's program takes: a stream of its own, the memory from
// the device's pool (cuMemAllocAsync), the copy back on the stream.
#include "startup_clock.hpp"

#include <cuda.h>

#include <cstdio>
#include <cstring>

#define CHECK(call) \
    if ((call) != CUDA_SUCCESS) return 1

int main(int argc, char** argv) {
    startup_clock_start();
    if (argc < 2) return 2;
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction fill;
    CUdeviceptr out;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CHECK(cuModuleLoad(&module, argv[1]));
    CHECK(cuModuleGetFunction(&fill, module, "fill"));
    const bool stream_ordered = argc > 2 && std::strcmp(argv[2], "--stream-ordered") == 0;
    CUstream stream = nullptr;
    if (stream_ordered) {
        CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
        CHECK(cuMemAllocAsync(&out, 32 * sizeof(int), stream));
    } else {
        CHECK(cuMemAlloc(&out, 32 * sizeof(int)));
    }
    int value = 7;
    void* arguments[] = {&out, &value};
    CHECK(cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, stream, arguments, nullptr));
    int host[32] = {};
    if (stream_ordered) {
        CHECK(cuMemcpyDtoHAsync(host, out, sizeof host, stream));
        CHECK(cuStreamSynchronize(stream));
    } else {
        CHECK(cuMemcpyDtoH(host, out, sizeof host));
    }
    for (int i = 0; i < 32; ++i)
        if (host[i] != 7 + i) return 1;
    startup_clock("work");
    if (stream_ordered) {
        CHECK(cuMemFreeAsync(out, stream));
        CHECK(cuStreamSynchronize(stream));
        CHECK(cuStreamDestroy(stream));
    } else {
        CHECK(cuMemFree(out));
    }
    CHECK(cuModuleUnload(module));
    CHECK(cuDevicePrimaryCtxRelease(device));
    std::puts("ok");
    startup_clock("done");
    return 0;
}
