#!/usr/bin/env python3
"""CuPy's memory pool from N Python threads, for reference beside bench/thread_memory_bench.

Each thread has its own stream and allocates + frees 1 MiB `--ops` times through CuPy's default
memory pool (cupy.get_default_memory_pool(): a caching pool of its own, over cudaMalloc) and,
where CuPy offers it, through its stream-ordered pool (cupy.cuda.MemoryAsyncPool: the driver's
default pool, as the raw side of the C++ program). Best of `--runs` runs; per-thread time per
operation and aggregate operations per second, as the C++ program prints them. Python's global
interpreter lock serialises most of each operation, so this is CuPy as Python users meet it,
not a bound on what its pool could do. A missing CuPy or GPU is reported; the script exits 0.

    python3 bench/thread_memory_cupy.py [--threads 1,2,4,8,16] [--ops 20000] [--runs 3]
"""

import argparse
import sys
import threading
import time

MIB = 1 << 20


def run_once(cupy, pool, threads, ops):
    """Seconds per operation per thread (mean) and operations per second, all threads."""
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(threads)]
    timed = [0.0] * threads
    start = threading.Barrier(threads + 1)

    def work(index):
        cupy.cuda.Device(0).use()
        with streams[index]:
            start.wait()
            begin = time.perf_counter()
            for _ in range(ops):
                memory = pool.malloc(MIB)
                del memory
            timed[index] = time.perf_counter() - begin

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    start.wait()
    begin = time.perf_counter()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - begin
    for stream in streams:
        stream.synchronize()
    return sum(timed) / threads / ops, threads * ops / wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--ops", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    try:
        import cupy
    except ImportError as error:
        print(f"thread_memory_cupy: skipped, CuPy is not installed ({error})")
        return 0
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("no CUDA device")
        cupy.cuda.Device(0).use()
    except Exception as error:  # no driver, no device
        print(f"thread_memory_cupy: skipped, {error}")
        return 0
    pools = [("CuPy MemoryPool", cupy.get_default_memory_pool())]
    try:
        pools.append(("CuPy MemoryAsyncPool", cupy.cuda.MemoryAsyncPool()))
    except Exception as error:
        print(f"(no MemoryAsyncPool: {error})")
    counts = [int(n) for n in args.threads.split(",")]
    print(f"thread_memory_cupy: CuPy {cupy.__version__}, {args.ops} operations per thread, "
          f"best of {args.runs} runs")
    print("| threads | pool | us/op/thread | aggregate op/s |\n|---|---|---|---|")
    for threads in counts:
        for name, pool in pools:
            run_once(cupy, pool, threads, max(1, args.ops // 10))  # warm-up
            best_time, best_rate = float("inf"), 0.0
            for _ in range(args.runs):
                per_op, rate = run_once(cupy, pool, threads, args.ops)
                best_time, best_rate = min(best_time, per_op), max(best_rate, rate)
            print(f"| {threads} | {name} | {best_time * 1e6:.3f} | {best_rate:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
