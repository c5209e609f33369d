#!/usr/bin/env python3
"""Side-by-side benchmark: cudacore against the raw driver / NVRTC calls, cuda.core and CuPy.

One command on a GPU machine (no network needed):

    python3 bench/side_by_side.py --build-dir BUILD --out OUT

It runs BUILD/bench/side_by_side (the C++ half: raw calls and cudacore, as JSON lines), then times
the same operations through cuda.core and CuPy where they offer them, with the same kernels'
source (bench/side_by_side/kernels.hpp), and prints one table: each system's median and
cudacore's ratio to raw and to cuda.core. OUT receives side_by_side.md (the table), side_by_side.png
(the ratios, log scale; needs matplotlib), side_by_side.json (every figure) and cpp.jsonl (the C++
program's output). A missing cuda.core, CuPy, GPU or C++ program is reported and its columns are
left empty; the script does not fail for it. Each area (code, cache, launch, events, memory,
graphs) is one C++ and one Python file in bench/side_by_side/.
"""

import argparse
import datetime
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

from side_by_side.cpp_program import run_cpp
from side_by_side.harness import Results, Runner, read_kernels, say
from side_by_side.operations import OPERATIONS
from side_by_side.report import draw_chart, host_description, markdown, print_table, table_rows
from side_by_side.systems import cuda_core_version, cupy_version, import_cuda_core, run_cuda_core, run_cupy


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build", help="cudacore build tree (holds bench/side_by_side)")
    parser.add_argument("--out", default="side-by-side-out", help="folder for the table, chart and data")
    parser.add_argument("--quick", action="store_true", help="a few repetitions only (smoke test)")
    parser.add_argument("--only", default="", help="comma-separated operation ids")
    parser.add_argument("--cpp-json", help="read the C++ figures from this file instead of running the program")
    parser.add_argument("--cpp-timeout", type=int, default=180, help="seconds the C++ program may take")
    parser.add_argument("--no-cuda-core", action="store_true", help="leave cuda.core out")
    parser.add_argument("--no-cupy", action="store_true", help="leave CuPy out")
    args = parser.parse_args()
    args.only = {o for o in args.only.split(",") if o}
    unknown = args.only - {o for o, _ in OPERATIONS}
    if unknown:
        parser.error(f"unknown operations: {', '.join(sorted(unknown))}")
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()

    # CuPy's kernel cache goes to a private folder (set before CuPy is imported).
    cupy_cache = tempfile.mkdtemp(prefix="side-by-side-cupy-cache-")
    os.environ["CUPY_CACHE_DIR"] = cupy_cache

    results = Results()
    runner = Runner(results, args.quick, args.only)
    environment = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   "host": host_description()}  # kept in the JSON: the page may be made elsewhere
    kernels = read_kernels()

    say("== raw driver / NVRTC and cudacore (C++)")
    cpp_error = run_cpp(args, results, environment)
    if cpp_error:
        for operation, _ in OPERATIONS:
            for system in ("raw", "cudacore"):
                if (operation, system) not in results.figures and (operation, system) not in results.skipped:
                    if not args.only or operation in args.only:
                        results.skip(operation, system, cpp_error)
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if smi.returncode == 0 and smi.stdout.strip():
            environment["nvidia_smi"] = smi.stdout.strip().splitlines()[0]
    except Exception:
        pass  # no nvidia-smi: the driver API version alone is reported
    if "arch" not in environment:
        environment["arch"] = "sm_90"
    if "include_dirs" not in environment:
        cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        environment["include_dirs"] = [d for d in (f"{cuda_home}/include", f"{cuda_home}/include/cccl")
                                       if os.path.isdir(d)]

    versions = {"cudacore": environment.get("cudacore_version"), "cuda.core": None, "cuda-bindings": None,
                "CuPy": None, "Python": platform.python_version()}
    try:
        from importlib.metadata import version
        versions["cuda-bindings"] = version("cuda-bindings")
    except Exception:
        pass

    say("== cuda.core")
    cc, why = (None, "left out (--no-cuda-core)") if args.no_cuda_core else import_cuda_core()
    if cc is None:
        say(f"cuda.core unavailable: {why}")
        for operation, _ in OPERATIONS:
            results.skip(operation, "cuda.core", f"cuda.core unavailable: {why}")
    else:
        versions["cuda.core"] = cuda_core_version()
        try:
            from cuda.bindings import nvrtc as nvrtc_bindings
            _, major, minor = nvrtc_bindings.nvrtcVersion()
            versions["NVRTC (cuda.core)"] = f"{major}.{minor}"
        except Exception:
            pass
        say(f"cuda.core {versions['cuda.core']} ({cc.__name__})")
        try:
            run_cuda_core(cc, runner, kernels, environment)
        except Exception as error:
            say(f"cuda.core stopped: {type(error).__name__}: {error}")
            for operation, _ in OPERATIONS:
                if (operation, "cuda.core") not in results.figures:
                    results.skip(operation, "cuda.core", f"set-up failed: {type(error).__name__}: {error}")
    gc.collect()

    say("== CuPy")
    cupy = None
    if args.no_cupy:
        why = "left out (--no-cupy)"
    else:
        try:
            import cupy
            cupy_module_version = cupy_version(cupy)
            versions["CuPy"] = cupy_module_version
            say(f"CuPy {cupy_module_version}")
            try:
                versions["NVRTC (CuPy)"] = "%d.%d" % tuple(cupy.cuda.nvrtc.getVersion())
            except Exception:
                pass
        except Exception as error:
            why = f"{type(error).__name__}: {error}"
            cupy = None
    if cupy is None:
        say(f"CuPy unavailable: {why}")
        for operation, _ in OPERATIONS:
            results.skip(operation, "CuPy", f"CuPy unavailable: {why}")
    else:
        try:
            run_cupy(cupy, runner, kernels, environment)
        except Exception as error:
            say(f"CuPy stopped: {type(error).__name__}: {error}")
            for operation, _ in OPERATIONS:
                if (operation, "CuPy") not in results.figures:
                    results.skip(operation, "CuPy", f"set-up failed: {type(error).__name__}: {error}")
    shutil.rmtree(cupy_cache, ignore_errors=True)

    # A figure wins over a skip note for the same cell; an operation left out by --only is dropped.
    for key in list(results.skipped):
        if key in results.figures or (args.only and key[0] not in args.only):
            del results.skipped[key]

    rows = table_rows(results, args.only)
    print_table(rows)
    chart_note = draw_chart(results, os.path.join(args.out, "side_by_side.png"), environment.get("gpu"))
    say(chart_note)
    markdown_text = markdown(results, rows, environment, versions, chart_note)
    with open(os.path.join(args.out, "side_by_side.md"), "w", encoding="utf-8") as f:
        f.write(markdown_text)
    with open(os.path.join(args.out, "side_by_side.json"), "w", encoding="utf-8") as f:
        json.dump({
            "environment": environment,
            "versions": versions,
            "figures": [{"operation": o, "system": s, **v} for (o, s), v in sorted(results.figures.items())],
            "skipped": [{"operation": o, "system": s, "reason": r} for (o, s), r in sorted(results.skipped.items())],
        }, f, indent=1)
    say(f"wrote {args.out}/side_by_side.md, side_by_side.json"
        f"{', side_by_side.png' if os.path.exists(os.path.join(args.out, 'side_by_side.png')) else ''}"
        f" in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
