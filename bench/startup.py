#!/usr/bin/env python3
"""Start-up: exec to the first kernel's result, a fresh process each time, median of N rounds.

    python3 bench/startup.py --build-dir BUILD --out OUT [--runs 10]

Each program runs one small kernel (bench/startup/fill_kernel.cuh: 32 threads write value +
index), copies the result back, checks it and exits:
  - nvcc binary: the kernel embedded by nvcc, the runtime API (built here with nvcc);
  - driver + cubin file: cuModuleLoad of a cubin nvcc made (built here with g++ -lcuda): the floor
    a program that loads its code pays; and the same program with --stream-ordered (a stream of
    its own, memory from the device's pool, the copy on the stream);
  - cudacore, disk cache hit: BUILD/bench/startup_cudacore, its cache warmed by one run, taking
    the driver program's steps; and with --stream-ordered, the steps of the driver program's second
    row (its ratio is to that row);
  - cudacore after `cudacore cache import`: a fresh cache folder each run, filled from an artefact
    exported from the warm cache (the import itself not timed): what a shipped cache costs;
  - cuda.core with its file cache (FileStreamProgramCache: make_program_cache_key, get,
    ObjectCode.from_cubin) and CuPy RawKernel with its disk cache, each a fresh Python process
    (the interpreter's start counted: that is what their users pay).
Each round runs every system once, the order turned each round (drift falls on all alike). Prints
a Markdown table (median and spread of the wall time, ratio to the driver + cubin program, and
that ratio's 95% interval: the 2.5th and 97.5th percentiles of the ratio of medians over 2,000
resamplings of the rounds, each round's runs kept together), the phases of --phase-runs more runs
of the driver and cudacore programs (PHASES, from the programs' STARTUP_CLOCK lines), and where
one more cudacore run spends its time in main() (startup_cudacore --steps),
writing both with every sample to OUT/startup.md and OUT/startup.json. A system that cannot run
is listed with the reason. --only "NAME;..." keeps the rows of those names (the driver + cubin
program always runs: the ratios are to it); many rounds of a few rows narrow the interval where
the whole table would take too long.
"""

import argparse
import json
import os
import random
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


STREAM_ORDERED_DRIVER = "driver + cubin file, stream + pool allocation"
# exec -> main(); main() -> the result checked; then the program's own releases (the driver
# program's explicit ones, cudacore's destructors); the atexit handlers registered after main()
# began (cudacore's); static destructors, the libraries' unload and the process's end.
PHASES = ("exec to main()", "the work", "releases in main()", "atexit handlers", "after them to exit")
STREAM_ORDERED_CUDACORE = "cudacore, disk cache hit, stream + pool allocation (vs the row above it)"


def run_once(argv, env):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or "ok" not in done.stdout:
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stdout[-300:]} {done.stderr[-600:]}")
    return elapsed, done.stderr


def timed_run(argv, env, before=None):
    """One fresh process, in milliseconds (`before` runs first, untimed)."""
    if before:
        before()
    elapsed, err = run_once(argv, env)
    if "miss" in err:
        raise RuntimeError(f"{argv[0]} missed its cache: {err[-300:]}")
    return elapsed * 1000


def phases(argv, env, runs):
    """Medians, in ms, of the phases of one program's runs (PHASES), from its STARTUP_CLOCK lines."""
    split = {phase: [] for phase in PHASES}
    for _ in range(runs):
        began = time.time_ns()
        done = subprocess.run(argv, env=dict(env, STARTUP_CLOCK="1"), capture_output=True, text=True, timeout=120)
        ended = time.time_ns()
        clock = {line.split()[1]: int(line.split()[2]) for line in done.stderr.splitlines() if line.startswith("clock ")}
        if done.returncode != 0 or set(clock) != {"main", "work", "done", "atexit"}:
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr[-300:]}")
        marks = [began, clock["main"], clock["work"], clock["done"], clock["atexit"], ended]
        for phase, start, stop in zip(PHASES, marks, marks[1:]):
            split[phase].append((stop - start) / 1e6)
    return {phase: statistics.median(values) for phase, values in split.items()}


def ratio_interval(samples, base, resamples=2000, seed=1):
    """The 2.5th and 97.5th percentiles of median(samples) / median(base) over resamplings of the
    rounds (the same rounds for both: a round's runs shared its host's state)."""
    rounds = min(len(samples), len(base))
    if rounds < 5:
        return None
    pick = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        chosen = [pick.randrange(rounds) for _ in range(rounds)]
        ratios.append(statistics.median(samples[i] for i in chosen) / statistics.median(base[i] for i in chosen))
    ratios.sort()
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="startup-out")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", default="", help="row names separated by semicolons: run only those rows")
    parser.add_argument("--phase-runs", type=int, default=9)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cudacore-startup-")
    env = dict(os.environ)
    results = {}   # name -> {"samples": [...]} or {"skipped": reason}
    kernel = os.path.join(STARTUP, "fill_kernel.cuh")
    cli = os.path.join(args.build_dir, "tools", "cudacore")
    cudacore_program = os.path.join(args.build_dir, "bench", "startup_cudacore")

    runners = {}  # name -> one timed run, once its set-up worked

    def attempt(name, set_up):
        try:
            runners[name] = set_up()
            runners[name]()  # a first run, untimed: the page cache warm for every row alike
        except Exception as error:  # reported in the table, the other rows still run
            runners.pop(name, None)
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
        return lambda: timed_run([nvcc_binary], env)

    def driver_row():
        subprocess.run([nvcc, f"-arch=sm_{arch}", "-cubin", "-o", cubin, "-x", "cu", kernel],
                       check=True, capture_output=True)
        cuda_home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        subprocess.run(["g++", "-O2", "-o", driver_binary, os.path.join(STARTUP, "driver_program.cpp"),
                        f"-I{cuda_home}/include", "-lcuda"], check=True, capture_output=True)
        return lambda: timed_run([driver_binary, cubin], env)

    warm = os.path.join(work, "cudacore-cache")
    artefact = os.path.join(work, "fill.artefact")

    def driver_stream_row():
        if not os.path.exists(driver_binary):
            raise RuntimeError("the driver program was not built")
        return lambda: timed_run([driver_binary, cubin, "--stream-ordered"], env)

    def cudacore_hit_row():
        cache_env = dict(env, CUDACORE_CACHE_DIR=warm)
        run_once([cudacore_program], cache_env)  # the miss that fills it
        return lambda: timed_run([cudacore_program], cache_env)

    def cudacore_stream_row():
        cache_env = dict(env, CUDACORE_CACHE_DIR=warm)
        if not os.path.isdir(warm):
            raise RuntimeError("the cudacore cache was not warmed")
        return lambda: timed_run([cudacore_program, "--stream-ordered"], cache_env)

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
        return lambda: timed_run([cudacore_program], fresh_env, import_fresh)

    def cuda_core_row():
        script = os.path.join(work, "cuda_core_startup.py")
        with open(script, "w") as f:
            f.write(CUDA_CORE_SCRIPT)
        cache_dir = os.path.join(work, "cuda-core-cache")
        source = os.path.join(work, "fill.cu")
        shutil.copy(kernel, source)
        argv = [args.python, script, source, cache_dir]
        subprocess.run(argv, env=env, capture_output=True, timeout=300)  # fills the cache
        return lambda: timed_run(argv, env)

    def cupy_row():
        script = os.path.join(work, "cupy_startup.py")
        with open(script, "w") as f:
            f.write(CUPY_SCRIPT)
        source = os.path.join(work, "fill.cu")
        shutil.copy(kernel, source)
        cupy_env = dict(env, CUPY_CACHE_DIR=os.path.join(work, "cupy-cache"))
        run_once([args.python, script, source], cupy_env)  # fills the cache
        return lambda: timed_run([args.python, script, source], cupy_env)

    rows = [("nvcc binary (kernel embedded)", nvcc_row), ("driver + cubin file", driver_row),
            ("cudacore, disk cache hit", cudacore_hit_row),
            ("cudacore after `cache import` of an artefact", cudacore_import_row),
            (STREAM_ORDERED_DRIVER, driver_stream_row), (STREAM_ORDERED_CUDACORE, cudacore_stream_row),
            ("cuda.core, FileStreamProgramCache hit (Python)", cuda_core_row),
            ("CuPy RawKernel, disk cache hit (Python)", cupy_row)]
    if args.only:
        wanted = [text for text in args.only.split(";") if text]
        rows = [(name, set_up) for name, set_up in rows
                if name == "driver + cubin file" or name in wanted]
    names = [name for name, _ in rows]
    for name, set_up in rows:
        attempt(name, set_up)
    # Rounds: each system once per round, the order turned every round, so that drift on the host
    # (clocks, other load) falls on every system alike.
    samples = {name: [] for name in runners}
    order = list(runners)
    for round_index in range(args.runs):
        turned = order[round_index % len(order):] + order[:round_index % len(order)] if order else []
        for name in turned:
            try:
                samples[name].append(runners[name]())
            except Exception as error:
                results[name] = {"skipped": f"{type(error).__name__}: {error}"}
                order.remove(name)
    for name in names:
        if name not in results and samples.get(name):
            results[name] = {"samples": samples[name]}
    # Where the two programs' time goes: the phases of a few more runs of each.
    split = {}
    try:
        if os.path.exists(driver_binary):
            split["driver + cubin file"] = phases([driver_binary, cubin], env, args.phase_runs)
        split["cudacore, disk cache hit"] = phases([cudacore_program], dict(env, CUDACORE_CACHE_DIR=warm),
                                                   args.phase_runs)
    except Exception as error:
        split = {"skipped": {f"{type(error).__name__}: {error}"[:160]: 0.0}}
    split_lines = [f"| program (median of {args.phase_runs} more runs) | " + " | ".join(PHASES) + " |",
                   "|---|" + "---:|" * len(PHASES)]
    for name, values in split.items():
        split_lines.append(f"| {name} | " + " | ".join(f"{values.get(phase, 0.0):.1f}" for phase in PHASES) + " |")
    steps = subprocess.run([cudacore_program, "--steps"], env=dict(env, CUDACORE_CACHE_DIR=warm),
                           capture_output=True, text=True)
    step_lines = [line for line in steps.stderr.splitlines() if line.startswith("step ")]
    floor = results.get("driver + cubin file", {}).get("samples")
    floor_median = statistics.median(floor) if floor else None
    lines = ["| start-up: exec to the first kernel's result | median ms | min-max ms | vs driver + cubin | 95% interval |",
             "|---|---:|---:|---:|---:|"]
    for name in names:
        result = results.get(name)
        if result is None:
            continue
        if "skipped" in result:
            lines.append(f"| {name} | | | skipped: {result['skipped'][:160]} | |")
            continue
        values = result["samples"]
        median = statistics.median(values)
        # The stream-ordered cudacore run is compared with the driver program taking its steps.
        base = results.get(STREAM_ORDERED_DRIVER, {}).get("samples") if name == STREAM_ORDERED_CUDACORE else floor
        base_median = statistics.median(base) if base else None
        ratio = f"{median / base_median:.3f}" if base_median else ""
        interval = ratio_interval(values, base) if base and values is not base else None
        spread = f"{interval[0]:.3f}-{interval[1]:.3f}" if interval else ""
        lines.append(f"| {name} | {median:.1f} | {min(values):.1f}-{max(values):.1f} | {ratio} | {spread} |")
    table = "\n".join(lines)
    print(table)
    print("\n".join(["", "the phases of a run, ms:"] + split_lines))
    print("\n".join(["", "where a cudacore hit's time goes (one more run, ms since main()):"] + step_lines))
    with open(os.path.join(args.out, "startup.md"), "w") as f:
        f.write(f"Fresh process each run, median of {args.runs} rounds (each system once a round, the order "
                f"turned each round; the interval: the ratio of medians over resamplings of the rounds)."
                f"\n\n{table}\n\nThe phases of a run, ms:\n\n" + "\n".join(split_lines) +
                "\n\nWhere a cudacore hit's time goes (ms since main()):\n\n"
                + "\n".join(f"    {line}" for line in step_lines) + "\n")
    with open(os.path.join(args.out, "startup.json"), "w") as f:
        json.dump({"rows": results, "phases": split, "cudacore_steps": step_lines}, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
