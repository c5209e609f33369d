"""Side by side, memory (memory.cpp's row) through cuda.core and CuPy: stream-ordered 1 MiB
allocate + free."""

from .harness import ALLOCATIONS_PER_BATCH, MIB, now_ns


def cuda_core_rows(runner, device, stream):
    def alloc_free():
        start = now_ns()
        for _ in range(ALLOCATIONS_PER_BATCH):
            buffer = device.allocate(MIB, stream=stream)
            buffer.close(stream)
        elapsed = now_ns() - start
        stream.sync()
        return elapsed / ALLOCATIONS_PER_BATCH

    runner.compare("alloc_free_1mib",
                   [("cuda.core", alloc_free, "Device.allocate + Buffer.close(stream)")])
    stream.sync()


def cupy_rows(cupy, runner, stream):
    try:
        pool = cupy.cuda.MemoryAsyncPool()
        note = "MemoryAsyncPool.malloc + free (cudaMallocAsync / cudaFreeAsync)"
    except Exception:
        pool = cupy.get_default_memory_pool()
        note = "default MemoryPool.malloc + free (CuPy's caching pool, not stream-ordered)"

    def alloc_free():
        with stream:
            start = now_ns()
            for _ in range(ALLOCATIONS_PER_BATCH):
                memory = pool.malloc(MIB)
                del memory
            elapsed = now_ns() - start
        stream.synchronize()
        return elapsed / ALLOCATIONS_PER_BATCH

    runner.compare("alloc_free_1mib", [("CuPy", alloc_free, note)])
