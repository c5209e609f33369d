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
left empty; the script does not fail for it.
"""

import argparse
import datetime
import gc
import hashlib
import json
import os
import pickle
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))

# (operation id, what the table calls it). The ids are the C++ program's.
OPERATIONS = [
    ("compile_small", "compile small kernel to cubin"),
    ("compile_cuda_std", "compile <cuda/std> kernel to cubin"),
    ("memory_cache_hit_small", "memory cache hit, small"),
    ("disk_cache_hit_small", "disk cache hit, small"),
    ("memory_cache_hit_cuda_std", "memory cache hit, <cuda/std>"),
    ("disk_cache_hit_cuda_std", "disk cache hit, <cuda/std>"),
    ("object_code_from_bytes", "ObjectCode from cubin bytes"),
    ("get_kernel_first", "first get_kernel (load)"),
    ("get_kernel_repeated", "repeated get_kernel"),
    ("launch_empty_enqueue", "launch empty kernel (enqueue)"),
    ("launch_8_args_enqueue", "launch 8-argument kernel (enqueue)"),
    ("launch_sync_roundtrip", "launch + synchronize"),
    ("event_create", "event create"),
    ("event_create_destroy", "event create + destroy"),
    ("event_elapsed_time", "event elapsed time"),
    ("alloc_free_1mib", "allocate + free 1 MiB (stream-ordered)"),
    ("serialize_roundtrip", "serialize + deserialize"),
    ("compile_cuda_std_32_specializations", "compile 32 specializations of the <cuda/std> kernel"),
    ("compile_cuda_std_second_kernel", "compile a second <cuda/std> kernel (same headers)"),
]
GPU_OPERATIONS = {
    "get_kernel_first", "get_kernel_repeated", "launch_empty_enqueue", "launch_8_args_enqueue",
    "launch_sync_roundtrip", "event_create", "event_create_destroy", "event_elapsed_time",
    "alloc_free_1mib",
}
SYSTEMS = ["raw", "cudacore", "cuda.core", "CuPy"]

# Warm-up and timed repetitions per operation (Python side; the C++ program has its own, alike).
PLANS = {
    "compile_small": (2, 20),
    "compile_cuda_std": (1, 6),
    "memory_cache_hit_small": (20, 300),
    "disk_cache_hit_small": (20, 300),
    "memory_cache_hit_cuda_std": (20, 300),
    "disk_cache_hit_cuda_std": (20, 300),
    "object_code_from_bytes": (10, 300),
    "get_kernel_first": (5, 200),
    "get_kernel_repeated": (5, 300),
    "launch_empty_enqueue": (10, 300),
    "launch_8_args_enqueue": (10, 300),
    "launch_sync_roundtrip": (20, 500),
    "event_create": (5, 300),
    "event_create_destroy": (5, 300),
    "event_elapsed_time": (5, 300),
    "alloc_free_1mib": (5, 300),
    "serialize_roundtrip": (10, 300),
    "compile_cuda_std_32_specializations": (1, 3),
    "compile_cuda_std_second_kernel": (1, 6),
}
# Graphs (side_by_side.cpp, graph_operations): graphs of 1, 16 and 256 empty-kernel nodes.
# Launches and replays are enqueue-only and per kernel; capture + instantiate is per graph.
GRAPH_SIZES = (1, 16, 256)
for _n in GRAPH_SIZES:
    OPERATIONS.append((f"launch_{_n}_kernels", f"{_n} empty-kernel launches, per kernel"))
for _n in GRAPH_SIZES:
    OPERATIONS.append((f"graph_replay_{_n}", f"replay {_n}-node graph, per kernel"))
for _n in GRAPH_SIZES:
    OPERATIONS.append((f"graph_capture_instantiate_{_n}", f"capture + instantiate {_n}-node graph"))
for _n in GRAPH_SIZES:
    GPU_OPERATIONS |= {f"launch_{_n}_kernels", f"graph_replay_{_n}", f"graph_capture_instantiate_{_n}"}
    PLANS[f"launch_{_n}_kernels"] = (10, 300)
    PLANS[f"graph_replay_{_n}"] = (10, 300)
    PLANS[f"graph_capture_instantiate_{_n}"] = (5, 200)
del _n

LAUNCH_BURST = 64   # launches per timed burst, as in the C++ program
LAUNCH_BLOCK = 32
BATCH = 20          # tiny operations are timed in batches, reported per operation
LOOKUPS = 100
EVENTS_PER_BATCH = 64
ALLOCATIONS_PER_BATCH = 32
MIB = 1 << 20


def say(*parts):
    print(*parts, flush=True)


def now_ns():
    return time.perf_counter_ns()


def read_kernels():
    """The kernels' source, read out of the header the C++ program compiles in."""
    path = os.path.join(HERE, "side_by_side", "kernels.hpp")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    sources = dict(re.findall(r'constexpr const char\* (\w+) = R"cuda\((.*?)\)cuda";', text, re.S))
    names = dict(re.findall(r'constexpr const char\* (\w+) = "([^"]*)";', text))
    for needed in ("small_source", "cuda_std_source", "launch_source"):
        if needed not in sources:
            raise RuntimeError(f"{path}: no {needed} literal found")
    return {
        "small": (sources["small_source"], ()),
        "cuda_std": (sources["cuda_std_source"], (names["cuda_std_name_expression"],)),
        "launch": (sources["launch_source"], ()),
        "cuda_std_many": (sources.get("cuda_std_many_source"), specialization_names(text)),
        "cuda_std_second": (sources.get("cuda_std_second_source"),
                            (names.get("cuda_std_second_name_expression"),)),
    }


def specialization_names(header_text):
    """rotate_n<float, 1> ... rotate_n<double, N>: the C++ program's specialization_names()."""
    found = re.search(r"constexpr int specializations_per_type = (\d+);", header_text)
    per_type = int(found.group(1)) if found else 0
    return tuple(f"rotate_n<{t}, {n}>" for t in ("float", "double") for n in range(1, per_type + 1))


_unique_source = [0]


def fresh(source):
    """`source` with a unique trailing comment: never seen by any cache."""
    _unique_source[0] += 1
    return source + f"\n// repetition {_unique_source[0]} {uuid.uuid4().hex}\n"


def cuda_core_specialization_operations(cc, args, results, kernels, environment):
    """32 specializations (a Program per specialization, as cuda.core users write it) and a
    second kernel with the same headers (default options, after a first one)."""
    system = "cuda.core"
    include_dirs = environment.get("include_dirs") or []
    options = cc.ProgramOptions(name="side_by_side_cuda_std_many.cu", arch=environment["arch"],
                                include_path=list(include_dirs) or None)
    many_source, many_names = kernels["cuda_std_many"]

    def many():
        source = fresh(many_source)
        start = now_ns()
        for name in many_names:
            cc.Program(source, "c++", options=options).compile("cubin", name_expressions=(name,))
        return now_ns() - start

    compare(results, "compile_cuda_std_32_specializations",
            [(system, many, "a Program.compile per specialization (32)")], args.quick, args.only)

    first_source, first_names = kernels["cuda_std"]
    second_source, second_names = kernels["cuda_std_second"]
    if not args.only or "compile_cuda_std_second_kernel" in args.only:
        try:  # the first kernel with these headers; a failure shows in the timed compiles
            cc.Program(fresh(first_source), "c++", options=options).compile(
                "cubin", name_expressions=first_names)
        except Exception:
            pass

    def second():
        source = fresh(second_source)
        start = now_ns()
        cc.Program(source, "c++", options=options).compile("cubin", name_expressions=second_names)
        return now_ns() - start

    compare(results, "compile_cuda_std_second_kernel",
            [(system, second, "Program.compile (default options) after a first kernel")],
            args.quick, args.only)


def cupy_specialization_operations(cupy, args, results, kernels, environment):
    """RawModule with the 32 name expressions; a second kernel's RawModule after a first."""
    system = "CuPy"
    operations = ("compile_cuda_std_32_specializations", "compile_cuda_std_second_kernel")
    if all((operation, system) in results.skipped for operation in operations):
        return  # no GPU: cupy_operations said why
    include_options = tuple(f"-I{d}" for d in environment.get("include_dirs") or [])

    def compile_module(source, names):
        module = cupy.RawModule(code=fresh(source), options=include_options, backend="nvrtc",
                                name_expressions=list(names))
        start = now_ns()
        module.compile()
        return now_ns() - start

    many_source, many_names = kernels["cuda_std_many"]
    compare(results, "compile_cuda_std_32_specializations",
            [(system, lambda: compile_module(many_source, many_names),
              "RawModule(name_expressions=32).compile() of a never-seen source (CuPy's --pch)")],
            args.quick, args.only)
    first_source, first_names = kernels["cuda_std"]
    second_source, second_names = kernels["cuda_std_second"]
    if not args.only or "compile_cuda_std_second_kernel" in args.only:
        try:  # the first kernel with these headers; a failure shows in the timed compiles
            compile_module(first_source, first_names)
        except Exception:
            pass
    compare(results, "compile_cuda_std_second_kernel",
            [(system, lambda: compile_module(second_source, second_names),
              "RawModule.compile() of a never-seen source after a first kernel (CuPy's --pch)")],
            args.quick, args.only)


# ---------------------------------------------------------------------------------------------
# Results


class Results:
    def __init__(self):
        self.figures = {}   # (operation, system) -> {"median_ns", "repetitions", "note"}
        self.skipped = {}   # (operation, system) -> reason

    def add(self, operation, system, median_ns, repetitions, note=None):
        self.figures[(operation, system)] = {
            "median_ns": median_ns, "repetitions": repetitions, "note": note}

    def skip(self, operation, system, reason):
        self.skipped[(operation, system)] = reason

    def median(self, operation, system):
        figure = self.figures.get((operation, system))
        return figure["median_ns"] if figure else None


def compare(results, operation, sides, quick, only):
    """Times each side's repetition (a callable returning ns per operation) after warm-up,
    alternating the sides and their order; a side that raises is reported skipped."""
    if only and operation not in only:
        return
    warmup, repetitions = PLANS[operation]
    if quick:
        warmup, repetitions = min(warmup, 1), max(3, repetitions // 20)
    samples = {system: [] for system, _, _ in sides}
    failed = {}

    def run(system, repetition):
        if system in failed:
            return None
        try:
            return repetition()
        except Exception as error:  # reported, never fatal
            failed[system] = f"{type(error).__name__}: {error}"
            return None

    for _ in range(warmup):
        for system, repetition, _ in sides:
            run(system, repetition)
    for i in range(repetitions):
        order = sides if i % 2 == 0 else list(reversed(sides))
        for system, repetition, _ in order:
            ns = run(system, repetition)
            if ns is not None:
                samples[system].append(ns)
    for system, _, note in sides:
        if system in failed:
            results.skip(operation, system, failed[system])
            say(f"  {operation:28s} {system:10s} skipped: {failed[system]}")
        else:
            results.add(operation, system, statistics.median(samples[system]), len(samples[system]), note)
            say(f"  {operation:28s} {system:10s} {format_ns(results.median(operation, system)):>10s}"
                f"  ({len(samples[system])} repetitions)")


# ---------------------------------------------------------------------------------------------
# The C++ half


def run_cpp(args, results, environment):
    if args.cpp_json:
        with open(args.cpp_json, encoding="utf-8") as f:
            lines = f.read().splitlines()
        say(f"C++ figures read from {args.cpp_json}")
    else:
        binary = None
        for candidate in ("bench/side_by_side", "side_by_side"):
            path = os.path.join(args.build_dir, candidate)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                binary = path
                break
        if binary is None:
            reason = (f"C++ program not found in {args.build_dir}/bench (build it: "
                      f"cmake --build {args.build_dir} --target side_by_side)")
            say("raw / cudacore: " + reason)
            return reason
        env = dict(os.environ)
        # The build tree may have moved since it was built: find libcudacore beside it.
        build = os.path.abspath(args.build_dir)
        extra = [build, os.path.join(build, "runtime-libs")]
        env["LD_LIBRARY_PATH"] = ":".join(extra + [p for p in [env.get("LD_LIBRARY_PATH")] if p])
        command = [binary] + (["--quick"] if args.quick else [])
        if args.only:
            command += ["--only", ",".join(sorted(args.only))]
        say("running " + " ".join(command))
        started = time.monotonic()
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=args.cpp_timeout)
        except subprocess.TimeoutExpired as error:
            reason = f"C++ program ran past {args.cpp_timeout} s"
            say("raw / cudacore: " + reason)
            lines = (error.stdout or b"").decode(errors="replace").splitlines() \
                if isinstance(error.stdout, bytes) else (error.stdout or "").splitlines()
            done = None
        else:
            lines = done.stdout.splitlines()
            if done.stderr.strip():
                say("C++ program stderr:\n" + done.stderr.rstrip())
            say(f"C++ program: exit status {done.returncode}, {time.monotonic() - started:.1f} s")
        if args.out:
            with open(os.path.join(args.out, "cpp.jsonl"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
    error = None
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            say(f"ignoring a line that is not JSON: {line[:120]}")
            continue
        if "environment" in record:
            environment.update(record["environment"])
        elif "error" in record:
            error = record["error"]
            say("C++ program error: " + error)
        elif "skipped" in record:
            results.skip(record["operation"], record["system"], record["skipped"])
        elif "median_ns" in record:
            results.add(record["operation"], record["system"], record["median_ns"],
                        record["repetitions"], record.get("note"))
    return error


# ---------------------------------------------------------------------------------------------
# cuda.core


def import_cuda_core():
    """cuda.core's public module (cuda.core, or cuda.core.experimental in older releases)."""
    errors = []
    for name in ("cuda.core", "cuda.core.experimental"):
        try:
            module = __import__(name, fromlist=["Device"])
            if hasattr(module, "Device") and hasattr(module, "Program"):
                return module, None
        except Exception as error:
            errors.append(f"{name}: {type(error).__name__}: {error}")
    return None, "; ".join(errors) or "cuda.core has no Device/Program"


def cuda_core_version():
    try:
        from importlib.metadata import version
        return version("cuda-core")
    except Exception:
        try:
            import cuda.core
            return getattr(cuda.core, "__version__", "unknown")
        except Exception:
            return None


def from_cubin_keywords(cc, data, name, symbols=None):
    """The keywords ObjectCode.from_cubin takes in this cuda.core (older releases take no name),
    chosen once so that timed loops call it directly."""
    try:
        cc.ObjectCode.from_cubin(data, name=name, symbol_mapping=symbols)
        return {"name": name, "symbol_mapping": symbols}
    except TypeError:
        return {"symbol_mapping": symbols}


def include_digest(include_dirs):
    """A fingerprint of the include directories, for cuda.core's cache key (extra_digest)."""
    return hashlib.sha256("\0".join(include_dirs).encode()).digest()


def cuda_core_operations(cc, args, results, kernels, environment):
    system = "cuda.core"
    quick, only = args.quick, args.only
    arch = environment["arch"]
    include_dirs = environment.get("include_dirs") or []

    def options_for(name):
        return cc.ProgramOptions(name=name, arch=arch, include_path=list(include_dirs) or None)

    for label in ("small", "cuda_std"):
        source, names = kernels[label]
        options = options_for(f"side_by_side_{label}.cu")

        def compile_once(source=source, names=names, options=options):
            start = now_ns()
            cc.Program(source, "c++", options=options).compile("cubin", name_expressions=names)
            return now_ns() - start

        compare(results, f"compile_{label}", [(system, compile_once, "Program.compile")], quick, only)

        # cuda.core's program caches (cuda.core.utils, recent releases). include_path needs the
        # documented manual pattern: make_program_cache_key with an extra_digest, get, from_cubin.
        try:
            from cuda.core.utils import (FileStreamProgramCache, InMemoryProgramCache,
                                         make_program_cache_key)
        except Exception as error:
            for kind in ("memory", "disk"):
                if not only or f"{kind}_cache_hit_{label}" in only:
                    results.skip(f"{kind}_cache_hit_{label}", system,
                                 f"this cuda.core ({cuda_core_version()}) has no program cache ({error})")
            continue
        digest = include_digest(include_dirs)
        cache_dir = tempfile.mkdtemp(prefix="side-by-side-cuda-core-")
        caches = {"memory": InMemoryProgramCache(), "disk": FileStreamProgramCache(cache_dir)}
        for kind, cache in caches.items():
            operation = f"{kind}_cache_hit_{label}"
            if only and operation not in only:
                continue
            try:
                key = make_program_cache_key(code=source, code_type="c++", options=options,
                                             target_type="cubin", name_expressions=names,
                                             extra_digest=digest)
                compiled = cc.Program(source, "c++", options=options).compile(
                    "cubin", name_expressions=names)
                cache[key] = compiled
            except Exception as error:
                results.skip(operation, system, f"{type(error).__name__}: {error}")
                continue

            keywords = from_cubin_keywords(cc, bytes(compiled.code), options.name,
                                           dict(getattr(compiled, "symbol_mapping", None) or {}))

            def hit(cache=cache, source=source, names=names, options=options, keywords=keywords):
                start = now_ns()
                for _ in range(BATCH):
                    key = make_program_cache_key(code=source, code_type="c++", options=options,
                                                 target_type="cubin", name_expressions=names,
                                                 extra_digest=digest)
                    data = cache.get(key)
                    if data is None:
                        raise RuntimeError("a lookup missed the cache")
                    cc.ObjectCode.from_cubin(data, **keywords)
                return (now_ns() - start) / BATCH

            compare(results, operation, [(system, hit,
                    f"{type(cache).__name__}: make_program_cache_key + get + ObjectCode.from_cubin")],
                    quick, only)
        shutil.rmtree(cache_dir, ignore_errors=True)

    launch_source, _ = kernels["launch"]
    launch_code = cc.Program(launch_source, "c++", options=options_for("side_by_side_launch.cu")).compile("cubin")
    cubin = bytes(launch_code.code)

    launch_keywords = from_cubin_keywords(cc, cubin, "launch.cubin")

    def from_bytes():
        start = now_ns()
        for _ in range(BATCH):
            cc.ObjectCode.from_cubin(cubin, **launch_keywords)
        return (now_ns() - start) / BATCH

    compare(results, "object_code_from_bytes", [(system, from_bytes, "ObjectCode.from_cubin(bytes)")],
            quick, only)

    code = cc.ObjectCode.from_cubin(cubin, **launch_keywords)

    def roundtrip():
        start = now_ns()
        for _ in range(BATCH):
            copy = pickle.loads(pickle.dumps(code))
            if len(bytes(copy.code)) != len(cubin):
                raise RuntimeError("round trip changed the code")
        return (now_ns() - start) / BATCH

    compare(results, "serialize_roundtrip", [(system, roundtrip, "pickle.dumps + pickle.loads of an ObjectCode")],
            quick, only)

    # Runtime.
    try:
        device = cc.Device(0)
        device.set_current()
    except Exception as error:
        for operation in GPU_OPERATIONS:
            if not only or operation in only:
                results.skip(operation, system, f"no GPU: {type(error).__name__}: {error}")
        return
    stream = device.create_stream()

    def first_get_kernel():
        fresh = cc.ObjectCode.from_cubin(cubin, **launch_keywords)
        start = now_ns()
        kernel = fresh.get_kernel("eight")
        elapsed = now_ns() - start
        del kernel, fresh  # unloads, outside the timing
        return elapsed

    compare(results, "get_kernel_first", [(system, first_get_kernel, "get_kernel on a fresh ObjectCode (lazy load)")],
            quick, only)

    empty = code.get_kernel("empty")
    eight = code.get_kernel("eight")

    def repeated_get_kernel():
        start = now_ns()
        for _ in range(LOOKUPS):
            code.get_kernel("eight")
        return (now_ns() - start) / LOOKUPS

    compare(results, "get_kernel_repeated", [(system, repeated_get_kernel, None)], quick, only)

    import numpy as np
    config = cc.LaunchConfig(grid=1, block=LAUNCH_BLOCK)
    scratch = device.allocate(256, stream=stream)
    stream.sync()
    eight_args = (np.int32(1), np.float64(2), scratch, np.int8(3), np.uint64(4), np.float32(5),
                  np.int16(6), scratch)

    def burst(kernel, kernel_args):
        def repetition():
            start = now_ns()
            for _ in range(LAUNCH_BURST):
                cc.launch(stream, config, kernel, *kernel_args)
            elapsed = now_ns() - start
            stream.sync()
            return elapsed / LAUNCH_BURST
        return repetition

    compare(results, "launch_empty_enqueue", [(system, burst(empty, ()), "launch(), bursts of 64")], quick, only)
    compare(results, "launch_8_args_enqueue",
            [(system, burst(eight, eight_args), "launch() with numpy scalars and Buffers, bursts of 64")],
            quick, only)

    def roundtrip_launch():
        start = now_ns()
        cc.launch(stream, config, empty)
        stream.sync()
        return now_ns() - start

    compare(results, "launch_sync_roundtrip", [(system, roundtrip_launch, "launch() + Stream.sync()")], quick, only)

    def create_events():
        events = []
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            events.append(device.create_event())
        elapsed = now_ns() - start
        del events
        return elapsed / EVENTS_PER_BATCH

    compare(results, "event_create", [(system, create_events, "Device.create_event() (timing disabled)")],
            quick, only)

    def create_destroy_events():
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            device.create_event().close()
        return (now_ns() - start) / EVENTS_PER_BATCH

    compare(results, "event_create_destroy",
            [(system, create_destroy_events, "Device.create_event() (timing disabled) + Event.close()")],
            quick, only)

    try:
        timing = cc.EventOptions(timing_enabled=True)
    except TypeError:
        timing = cc.EventOptions(enable_timing=True)  # older cuda.core
    start_event = stream.record(options=timing)
    cc.launch(stream, config, empty)
    end_event = stream.record(options=timing)
    end_event.sync()

    def elapsed_time():
        start = now_ns()
        for _ in range(LOOKUPS):
            end_event - start_event
        return (now_ns() - start) / LOOKUPS

    compare(results, "event_elapsed_time", [(system, elapsed_time, "end - start")], quick, only)

    def alloc_free():
        start = now_ns()
        for _ in range(ALLOCATIONS_PER_BATCH):
            buffer = device.allocate(MIB, stream=stream)
            buffer.close(stream)
        elapsed = now_ns() - start
        stream.sync()
        return elapsed / ALLOCATIONS_PER_BATCH

    compare(results, "alloc_free_1mib", [(system, alloc_free, "Device.allocate + Buffer.close(stream)")],
            quick, only)
    scratch.close(stream)
    stream.sync()
    cuda_core_graph_operations(cc, device, stream, config, empty, results, quick, only)


def cuda_core_graph_operations(cc, device, stream, config, empty, results, quick, only):
    """The graph rows through cuda.core's GraphBuilder, with the same kernel and sizes as the C++
    half: launches and replays per kernel (enqueue only), capture + instantiate per graph."""
    system = "cuda.core"

    def capture(kernels):
        builder = device.create_graph_builder().begin_building()
        for _ in range(kernels):
            cc.launch(builder, config, empty)
        builder.end_building()
        return builder.complete()

    for kernels in GRAPH_SIZES:
        def launches(kernels=kernels):
            start = now_ns()
            for _ in range(kernels):
                cc.launch(stream, config, empty)
            elapsed = now_ns() - start
            stream.sync()
            return elapsed / kernels

        compare(results, f"launch_{kernels}_kernels",
                [(system, launches, f"launch() x {kernels}, per kernel")], quick, only)

        replays = 1 if kernels >= LAUNCH_BURST else LAUNCH_BURST // kernels
        graph = None
        if not only or f"graph_replay_{kernels}" in only:
            try:
                graph = capture(kernels)
            except Exception as error:  # an older cuda.core without graphs: reported, not fatal
                results.skip(f"graph_replay_{kernels}", system, f"{type(error).__name__}: {error}")

        def replay(graph=graph, kernels=kernels, replays=replays):
            start = now_ns()
            for _ in range(replays):
                graph.launch(stream)
            elapsed = now_ns() - start
            stream.sync()
            return elapsed / (replays * kernels)

        if graph is not None:
            compare(results, f"graph_replay_{kernels}",
                    [(system, replay, f"Graph.launch of a GraphBuilder graph ({kernels} nodes), per kernel")],
                    quick, only)

        def capture_instantiate(kernels=kernels):
            start = now_ns()
            made = capture(kernels)
            elapsed = now_ns() - start
            del made  # destroyed outside the timing
            return elapsed

        compare(results, f"graph_capture_instantiate_{kernels}",
                [(system, capture_instantiate,
                  f"create_graph_builder().begin_building(), launch() x {kernels}, end_building(), complete()")],
                quick, only)
        if graph is not None:
            stream.sync()
            graph.close()


# ---------------------------------------------------------------------------------------------
# CuPy


def cupy_operations(cupy, args, results, kernels, environment):
    system = "CuPy"
    quick, only = args.quick, args.only
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count == 0:
            raise RuntimeError("no CUDA device")
        cupy.cuda.Device(0).use()
    except Exception as error:
        reason = f"no GPU: {type(error).__name__}: {error} (CuPy compiles for the current device)"
        for operation, _ in OPERATIONS:
            if operation in ("object_code_from_bytes", "serialize_roundtrip"):
                continue
            if not only or operation in only:
                results.skip(operation, system, reason)
        return
    include_options = tuple(f"-I{d}" for d in environment.get("include_dirs") or [])

    def module_for(source, names, unique):
        """A RawModule; `unique` appends a comment that defeats every CuPy cache."""
        text = source + (f"\n// {uuid.uuid4().hex}\n" if unique else "")
        return cupy.RawModule(code=text, options=include_options, backend="nvrtc",
                              name_expressions=list(names) or None)

    for label in ("small", "cuda_std"):
        source, names = kernels[label]
        try:
            module_for(source, names, unique=False).compile()
        except Exception as error:
            if include_options:
                # CuPy brings its own CCCL headers; the toolkit's may clash with them.
                say(f"  CuPy: compiling with the toolkit's include dirs failed ({type(error).__name__}); "
                    "using CuPy's own headers")
                include_options = ()

        def cold(source=source, names=names):
            module = module_for(source, names, unique=True)
            start = now_ns()
            module.compile()
            return now_ns() - start

        compare(results, f"compile_{label}",
                [(system, cold, "RawModule.compile() of a never-seen source (NVRTC with CuPy's "
                                "--pch and -ftz=true, disk-cache write and module load included)")],
                quick, only)

        def memory_hit(source=source, names=names):
            start = now_ns()
            for _ in range(BATCH):
                module_for(source, names, unique=False).compile()
            return (now_ns() - start) / BATCH

        compare(results, f"memory_cache_hit_{label}",
                [(system, memory_hit, "RawModule(...).compile() again (in-process memo)")], quick, only)

        def disk_hit(source=source, names=names):
            module_for(source, names, unique=False).compile()  # on disk for sure
            cupy._util.clear_memo()
            module = module_for(source, names, unique=False)
            start = now_ns()
            module.compile()
            return now_ns() - start

        compare(results, f"disk_cache_hit_{label}",
                [(system, disk_hit, "RawModule.compile() after clearing the memo (reads "
                                    "CUPY_CACHE_DIR; module load included)")], quick, only)

    launch_source, _ = kernels["launch"]
    launch_module = module_for(launch_source, (), unique=False)
    launch_module.compile()
    # The launch kernels' cubin through CuPy's own NVRTC wrapper, for the module-level operations.
    from cupy.cuda import compiler
    compiled = compiler.compile_using_nvrtc(launch_source)
    cubin = compiled[0] if isinstance(compiled, tuple) else compiled

    function_module = getattr(getattr(cupy.cuda, "function", None), "Module", None)
    if function_module is None:
        results.skip("get_kernel_first", system, "cupy.cuda.function.Module is missing")
        results.skip("get_kernel_repeated", system, "cupy.cuda.function.Module is missing")
    else:
        def first_get_kernel():
            module = function_module()
            start = now_ns()
            module.load(cubin)
            module.get_function("eight")
            elapsed = now_ns() - start
            del module  # unloads, outside the timing
            return elapsed

        compare(results, "get_kernel_first",
                [(system, first_get_kernel, "cupy.cuda.function.Module: load (cuModuleLoadData) + get_function")],
                quick, only)
        loaded = function_module()
        loaded.load(cubin)

        def repeated_get_kernel():
            start = now_ns()
            for _ in range(LOOKUPS):
                loaded.get_function("eight")
            return (now_ns() - start) / LOOKUPS

        compare(results, "get_kernel_repeated",
                [(system, repeated_get_kernel, "Module.get_function (cuModuleGetFunction)")], quick, only)

    import numpy as np
    stream = cupy.cuda.Stream(non_blocking=True)
    empty = launch_module.get_function("empty")
    eight = launch_module.get_function("eight")
    scratch = cupy.zeros(32, dtype=cupy.float64)
    eight_args = (np.int32(1), np.float64(2), scratch, np.int8(3), np.uint64(4), np.float32(5),
                  np.int16(6), scratch)
    grid, block = (1,), (LAUNCH_BLOCK,)

    # RawKernel launches on the current stream: made current outside the timed region.
    def burst(kernel, kernel_args):
        def repetition():
            with stream:
                start = now_ns()
                for _ in range(LAUNCH_BURST):
                    kernel(grid, block, kernel_args)
                elapsed = now_ns() - start
            stream.synchronize()
            return elapsed / LAUNCH_BURST
        return repetition

    compare(results, "launch_empty_enqueue", [(system, burst(empty, ()), "RawKernel call, bursts of 64")],
            quick, only)
    compare(results, "launch_8_args_enqueue",
            [(system, burst(eight, eight_args), "RawKernel call with numpy scalars and arrays, bursts of 64")],
            quick, only)

    def roundtrip_launch():
        with stream:
            start = now_ns()
            empty(grid, block, ())
            stream.synchronize()
            return now_ns() - start

    compare(results, "launch_sync_roundtrip", [(system, roundtrip_launch, "RawKernel call + Stream.synchronize()")],
            quick, only)

    def create_events():
        events = []
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            events.append(cupy.cuda.Event(disable_timing=True))
        elapsed = now_ns() - start
        del events
        return elapsed / EVENTS_PER_BATCH

    compare(results, "event_create", [(system, create_events, "cupy.cuda.Event(disable_timing=True)")],
            quick, only)

    def create_destroy_events():
        start = now_ns()
        for _ in range(EVENTS_PER_BATCH):
            event = cupy.cuda.Event(disable_timing=True)
            del event
        return (now_ns() - start) / EVENTS_PER_BATCH

    compare(results, "event_create_destroy",
            [(system, create_destroy_events, "cupy.cuda.Event(disable_timing=True), then dropped")],
            quick, only)

    start_event = cupy.cuda.Event()
    end_event = cupy.cuda.Event()
    with stream:
        start_event.record(stream)
        empty(grid, block, ())
        end_event.record(stream)
    end_event.synchronize()

    def elapsed_time():
        start = now_ns()
        for _ in range(LOOKUPS):
            cupy.cuda.get_elapsed_time(start_event, end_event)
        return (now_ns() - start) / LOOKUPS

    compare(results, "event_elapsed_time", [(system, elapsed_time, "cupy.cuda.get_elapsed_time")], quick, only)

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

    compare(results, "alloc_free_1mib", [(system, alloc_free, note)], quick, only)
    results.skip("object_code_from_bytes", system, "CuPy has no code object (RawModule loads a path)")
    results.skip("serialize_roundtrip", system, "CuPy has no code object to serialize")


def cupy_version(cupy):
    try:
        return cupy.__version__
    except Exception:
        return None


# ---------------------------------------------------------------------------------------------
# Report


def format_ns(ns):
    if ns is None:
        return ""
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def ratio(results, operation, other):
    ours = results.median(operation, "cudacore")
    theirs = results.median(operation, other)
    if ours is None or theirs is None or theirs <= 0:
        return None
    return ours / theirs


def flagged(operation, to_raw, to_cuda_core):
    """cudacore more than 5% slower than raw, or slower than cuda.core."""
    return (to_raw is not None and to_raw > 1.05) or (to_cuda_core is not None and to_cuda_core > 1.0)


def table_rows(results, only=()):
    rows = []
    for operation, label in OPERATIONS:
        if only and operation not in only:
            continue
        medians = [format_ns(results.median(operation, system)) for system in SYSTEMS]
        to_raw = ratio(results, operation, "raw")
        to_cuda_core = ratio(results, operation, "cuda.core")
        mark = " (!)" if flagged(operation, to_raw, to_cuda_core) else ""
        rows.append([label] + medians + [
            f"{to_raw:.3f}" if to_raw is not None else "",
            f"{to_cuda_core:.3f}" if to_cuda_core is not None else "",
            mark.strip()])
    return rows


HEADER = ["operation"] + SYSTEMS + ["cudacore / raw", "cudacore / cuda.core", ""]


def print_table(rows):
    widths = [max(len(str(row[i])) for row in rows + [HEADER]) for i in range(len(HEADER))]
    def line(cells):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    say("")
    say(line(HEADER))
    say("  ".join("-" * w for w in widths))
    for row in rows:
        say(line(row))
    say("(median per operation; ratio < 1: cudacore faster; (!) cudacore > 5% slower than raw "
        "or slower than cuda.core)")


def code_spans(text):
    """Header names such as <cuda/std> as code, so that Markdown does not read them as HTML."""
    return re.sub(r"(<[^<>\s]+>)", r"`\1`", text)


def markdown(results, rows, environment, versions, chart_note):
    out = []
    out.append(f"Date: {environment.get('date')}  ")
    out.append(f"GPU: {environment.get('gpu') or 'none (' + str(environment.get('no_gpu_reason')) + ')'}  ")
    driver = environment.get("driver_version")
    driver_text = f"CUDA {driver // 1000}.{driver % 1000 // 10} driver API" if driver else "none"
    if environment.get("nvidia_smi"):
        driver_text += f"; nvidia-smi: {environment['nvidia_smi']}"
    out.append(f"Driver: {driver_text}  ")
    out.append(f"Arch: {environment.get('arch')}; NVRTC (C++ side): {environment.get('nvrtc_version')}  ")
    out.append("Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v) + "  ")
    out.append(f"Host: {platform.node()}, {platform.processor() or platform.machine()}, "
               f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
    out.append("")
    out.append("| " + " | ".join(h or "note" for h in HEADER) + " |")
    out.append("|" + "---|" + "---:|" * (len(HEADER) - 2) + "---|")
    for row in rows:
        out.append("| " + " | ".join([code_spans(row[0])] + row[1:]) + " |")
    out.append("")
    out.append("Each figure is the median of many repetitions after warm-up (per operation; tiny "
               "operations timed in batches). Ratios below 1: cudacore is faster. (!) marks cudacore "
               "more than 5% slower than raw or slower than cuda.core. Empty: the system does not "
               "offer the operation, or it could not run (reasons below).")
    out.append("")
    out.append("What each system's figure measures (where the row's name does not say it all):")
    out.append("")
    for operation, label in OPERATIONS:
        notes = [f"{system}: {results.figures[(operation, system)]['note']}" for system in SYSTEMS
                 if (operation, system) in results.figures and results.figures[(operation, system)]["note"]]
        if notes:
            out.append(f"- {code_spans(label)}: " + "; ".join(notes))
    if results.skipped:
        # One line per system and reason, listing the operations it hit.
        grouped = {}
        for (operation, system), reason in results.skipped.items():
            grouped.setdefault((system, reason), []).append(operation)
        order = {operation: i for i, (operation, _) in enumerate(OPERATIONS)}
        out.append("")
        out.append("Not measured:")
        out.append("")
        for (system, reason), operations in sorted(grouped.items(), key=lambda kv: SYSTEMS.index(kv[0][0])):
            operations.sort(key=lambda o: order.get(o, 99))
            out.append(f"- {system}, {', '.join(operations)}: {reason}")
    out.append("")
    out.append(chart_note)
    return "\n".join(out) + "\n"


def draw_chart(results, path, gpu=None):
    """Ratios on a log scale; returns a sentence saying what happened."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as error:
        return f"Chart skipped: matplotlib is not importable ({type(error).__name__}: {error})."
    labels, to_raw, to_cuda_core = [], [], []
    for operation, label in OPERATIONS:
        a, b = ratio(results, operation, "raw"), ratio(results, operation, "cuda.core")
        if a is None and b is None:
            continue
        labels.append(label)
        to_raw.append(a)
        to_cuda_core.append(b)
    if not labels:
        return "Chart skipped: no operation has a cudacore figure and a raw or cuda.core one."
    from matplotlib.ticker import FuncFormatter
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(labels) + 1.6))
    height = 0.38
    # Bars grow from 1 (parity): to the left where cudacore is faster, to the right where slower.
    for offset, values, name, color in ((-height / 2, to_raw, "cudacore / raw", "#4878a8"),
                                        (height / 2, to_cuda_core, "cudacore / cuda.core", "#e0a030")):
        rows = [(i, v) for i, v in enumerate(values) if v is not None and v > 0]
        ax.barh([i + offset for i, _ in rows], [v - 1 for _, v in rows], height, left=1,
                label=name, color=color)
        for i, v in rows:
            ax.annotate(f"{v:.2f}", (v, i + offset), xytext=(3 if v >= 1 else -3, 0),
                        textcoords="offset points", va="center", ha="left" if v >= 1 else "right",
                        fontsize=7)
    every = [v for v in to_raw + to_cuda_core if v]
    span = max(2.0, max(max(every), 1 / min(every)) * 2)
    ax.set_xscale("log")
    ax.set_xlim(1 / span, span)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(list(range(len(labels))))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("ratio of medians, log scale (left of 1x: cudacore faster; right: slower)")
    ax.legend(loc="best", fontsize=8)
    ax.set_title("cudacore side by side" + (f" ({gpu})" if gpu else ""))
    ax.grid(axis="x", which="major", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"Chart: {os.path.basename(path)} (ratios on a log scale)."


def write_results_page(path, table_markdown, with_chart):
    """bench/RESULTS.md with its results section (between the markers) replaced by this run."""
    template = os.path.join(HERE, "RESULTS.md")
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    try:
        with open(template, encoding="utf-8") as f:
            page = f.read()
    except OSError as error:
        say(f"RESULTS.md not written: {error}")
        return
    if begin not in page or end not in page:
        say(f"RESULTS.md not written: {template} has no results markers")
        return
    chart = "\n![cudacore's ratios to raw and to cuda.core](side_by_side.png)\n" if with_chart else ""
    section = f"{begin}\n{table_markdown}{chart}{end}"
    page = page[:page.index(begin)] + section + page[page.index(end) + len(end):]
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)


# ---------------------------------------------------------------------------------------------


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
    environment = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
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
            cuda_core_specialization_operations(cc, args, results, kernels, environment)
            cuda_core_operations(cc, args, results, kernels, environment)
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
            cupy_operations(cupy, args, results, kernels, environment)
            cupy_specialization_operations(cupy, args, results, kernels, environment)
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
    write_results_page(os.path.join(args.out, "RESULTS.md"), markdown_text,
                       os.path.exists(os.path.join(args.out, "side_by_side.png")))
    say(f"wrote {args.out}/side_by_side.md, RESULTS.md, side_by_side.json"
        f"{', side_by_side.png' if os.path.exists(os.path.join(args.out, 'side_by_side.png')) else ''}"
        f" in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
