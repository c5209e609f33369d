#!/usr/bin/env python3
"""Start-up: exec to the first kernel's result, a fresh process each time, median of N.

    python3 bench/startup.py --build-dir BUILD --out OUT [--runs 10]

Each program runs one small kernel (bench/startup/fill_kernel.cuh: 32 threads write value +
index), copies the result back, checks it and exits:
  - nvcc binary: the kernel embedded by nvcc, the runtime API (built here with nvcc);
  - driver + cubin file: cuModuleLoad of a cubin nvcc made (built here with g++ -lcuda): the floor
    a program that loads its code pays;
  - cudacore, disk cache hit: BUILD/bench/startup_cudacore, its cache warmed by one run;
  - cudacore after `cudacore cache import`: a fresh cache folder each run, filled from an artefact
    exported from the warm cache (the import itself not timed): what a shipped cache costs;
  - cuda.core with its file cache (FileStreamProgramCache: make_program_cache_key, get,
    ObjectCode.from_cubin) and CuPy RawKernel with its disk cache, each a fresh Python process
    (the interpreter's start counted: that is what their users pay).
Prints a Markdown table (median and spread of the wall time, ratio to the driver + cubin program)
and writes it with every sample to OUT/startup.md and OUT/startup.json. A system that cannot run
is listed with the reason.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STARTUP = os.path.join(HERE, "startup")

CUDA_CORE_SCRIPT = r'''
import ctypes
import sys
import numpy as np
from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, ObjectCode, Program, ProgramOptions, launch
from cuda.core.utils import FileStreamProgramCache, make_program_cache_key
source = open(sys.argv[1]).read()
dev = Device(0)
dev.set_current()
options = ProgramOptions(arch="sm_" + "".join(str(x) for x in dev.compute_capability), name="fill.cu")
cache = FileStreamProgramCache(sys.argv[2])
key = make_program_cache_key(code=source, code_type="c++", options=options, target_type="cubin")
data = cache.get(key)
if data is None:
    code = Program(source, "c++", options=options).compile("cubin")
    cache[key] = code
    data = bytes(code.code)
    sys.stderr.write("miss\n")
kernel = ObjectCode.from_cubin(data).get_kernel("fill")
stream = dev.create_stream()
out = dev.memory_resource.allocate(32 * 4, stream=stream)
launch(stream, LaunchConfig(grid=1, block=32), kernel, out, np.int32(7))
host = LegacyPinnedMemoryResource().allocate(32 * 4)
out.copy_to(host, stream=stream)
stream.sync()
values = (ctypes.c_int32 * 32).from_address(int(host.handle))
if any(values[i] != 7 + i for i in range(32)):
    sys.exit(1)
print("ok")
'''

CUPY_SCRIPT = r'''
import sys
import cupy
source = open(sys.argv[1]).read()
kernel = cupy.RawKernel(source, "fill")
out = cupy.empty(32, dtype=cupy.int32)
kernel((1,), (32,), (out, cupy.int32(7)))
host = out.get()
if not all(int(host[i]) == 7 + i for i in range(32)):
    sys.exit(1)
print("ok")
'''


def run_once(argv, env):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or "ok" not in done.stdout:
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stdout[-300:]} {done.stderr[-600:]}")
    return elapsed, done.stderr


def measure(argv, env, runs, before_each=None):
    samples = []
    for _ in range(runs):
        if before_each:
            before_each()
        elapsed, err = run_once(argv, env)
        if "miss" in err:
            raise RuntimeError(f"{argv[0]} missed its cache: {err[-300:]}")
        samples.append(elapsed * 1000)
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="startup-out")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cudacore-startup-")
    env = dict(os.environ)
    results = {}   # name -> {"samples": [...]} or {"skipped": reason}
    kernel = os.path.join(STARTUP, "fill_kernel.cuh")
    cli = os.path.join(args.build_dir, "tools", "cudacore")
    cudacore_program = os.path.join(args.build_dir, "bench", "startup_cudacore")

    def attempt(name, body):
        try:
            results[name] = {"samples": body()}
        except Exception as error:  # reported in the table, the other rows still run
            results[name] = {"skipped": f"{type(error).__name__}: {error}"}

    arch = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.split("\n")[0].strip().replace(".", "")
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    nvcc_binary = os.path.join(work, "nvcc_program")
    cubin = os.path.join(work, "fill.cubin")
    driver_binary = os.path.join(work, "driver_program")

    def nvcc_row():
        subprocess.run([nvcc, f"-arch=sm_{arch}", "-O2", "-o", nvcc_binary,
                        os.path.join(STARTUP, "nvcc_program.cu")], check=True, capture_output=True)
        return measure([nvcc_binary], env, args.runs)

    def driver_row():
        subprocess.run([nvcc, f"-arch=sm_{arch}", "-cubin", "-o", cubin, "-x", "cu", kernel],
                       check=True, capture_output=True)
        cuda_home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        subprocess.run(["g++", "-O2", "-o", driver_binary, os.path.join(STARTUP, "driver_program.cpp"),
                        f"-I{cuda_home}/include", "-lcuda"], check=True, capture_output=True)
        return measure([driver_binary, cubin], env, args.runs)

    warm = os.path.join(work, "cudacore-cache")
    artefact = os.path.join(work, "fill.artefact")

    def cudacore_hit_row():
        cache_env = dict(env, CUDACORE_CACHE_DIR=warm)
        run_once([cudacore_program], cache_env)  # the miss that fills it
        return measure([cudacore_program], cache_env, args.runs)

    def cudacore_import_row():
        exported = subprocess.run([cli, "cache", "export", artefact], env=dict(env, CUDACORE_CACHE_DIR=warm),
                                  capture_output=True, text=True)
        if exported.returncode != 0:
            raise RuntimeError(f"cache export: {exported.stderr[-400:]}")
        fresh = os.path.join(work, "imported-cache")
        fresh_env = dict(env, CUDACORE_CACHE_DIR=fresh)

        def import_fresh():
            shutil.rmtree(fresh, ignore_errors=True)
            subprocess.run([cli, "cache", "import", artefact], env=fresh_env, check=True, capture_output=True)
        return measure([cudacore_program], fresh_env, args.runs, before_each=import_fresh)

    def cuda_core_row():
        script = os.path.join(work, "cuda_core_startup.py")
        with open(script, "w") as f:
            f.write(CUDA_CORE_SCRIPT)
        cache_dir = os.path.join(work, "cuda-core-cache")
        source = os.path.join(work, "fill.cu")
        shutil.copy(kernel, source)
        argv = [args.python, script, source, cache_dir]
        subprocess.run(argv, env=env, capture_output=True, timeout=300)  # fills the cache
        return measure(argv, env, args.runs)

    def cupy_row():
        script = os.path.join(work, "cupy_startup.py")
        with open(script, "w") as f:
            f.write(CUPY_SCRIPT)
        source = os.path.join(work, "fill.cu")
        shutil.copy(kernel, source)
        cupy_env = dict(env, CUPY_CACHE_DIR=os.path.join(work, "cupy-cache"))
        run_once([args.python, script, source], cupy_env)  # fills the cache
        return measure([args.python, script, source], cupy_env, args.runs)

    attempt("nvcc binary (kernel embedded)", nvcc_row)
    attempt("driver + cubin file", driver_row)
    attempt("cudacore, disk cache hit", cudacore_hit_row)
    attempt("cudacore after `cache import` of an artefact", cudacore_import_row)
    attempt("cuda.core, FileStreamProgramCache hit (Python)", cuda_core_row)
    attempt("CuPy RawKernel, disk cache hit (Python)", cupy_row)

    floor = results.get("driver + cubin file", {}).get("samples")
    floor_median = statistics.median(floor) if floor else None
    lines = ["| start-up: exec to the first kernel's result | median ms | min-max ms | vs driver + cubin |",
             "|---|---:|---:|---:|"]
    for name, result in results.items():
        if "skipped" in result:
            lines.append(f"| {name} | | | skipped: {result['skipped'][:160]} |")
            continue
        samples = result["samples"]
        median = statistics.median(samples)
        ratio = f"{median / floor_median:.3f}" if floor_median else ""
        lines.append(f"| {name} | {median:.1f} | {min(samples):.1f}-{max(samples):.1f} | {ratio} |")
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(args.out, "startup.md"), "w") as f:
        f.write(f"Fresh process each run, median of {args.runs}.\n\n{table}\n")
    with open(os.path.join(args.out, "startup.json"), "w") as f:
        json.dump(results, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
