// Start-up, driver API: the cubin loaded from a file (argv[1]) and launched; prints "ok" when the
// 32 values came back right. Built on the GPU machine by bench/startup.py (g++ ... -lcuda).
#include <cuda.h>

#include <cstdio>

#define CHECK(call) \
    if ((call) != CUDA_SUCCESS) return 1

int main(int argc, char** argv) {
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
    CHECK(cuMemAlloc(&out, 32 * sizeof(int)));
    int value = 7;
    void* arguments[] = {&out, &value};
    CHECK(cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, nullptr, arguments, nullptr));
    int host[32] = {};
    CHECK(cuMemcpyDtoH(host, out, sizeof host));
    for (int i = 0; i < 32; ++i)
        if (host[i] != 7 + i) return 1;
    CHECK(cuMemFree(out));
    CHECK(cuModuleUnload(module));
    CHECK(cuDevicePrimaryCtxRelease(device));
    std::puts("ok");
    return 0;
}
