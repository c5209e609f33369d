"""The harness every Python area shares: the kernels' source (read from kernels.hpp, the C++
program's copy), the results, and Runner, which times one operation as the C++ harness does
(harness.hpp): warm-up, then repetitions alternating between the sides and their order, the
median reported."""

import os
import re
import statistics
import time
import uuid

from .operations import PLANS

HERE = os.path.dirname(os.path.abspath(__file__))

LAUNCH_BURST = 64   # launches per timed burst, as in the C++ program (areas.hpp)
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


def read_kernels():
    """The kernels' source, read out of the header the C++ program compiles in."""
    path = os.path.join(HERE, "kernels.hpp")
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


class Runner:
    """Times operations into `results`; `quick`: a few repetitions only; `only`: the operations
    to run (empty: all)."""

    def __init__(self, results, quick, only):
        self.results = results
        self.quick = quick
        self.only = only

    def wanted(self, operation):
        return not self.only or operation in self.only

    def compare(self, operation, sides):
        """Times each side's repetition (a callable returning ns per operation) after warm-up,
        alternating the sides and their order; a side that raises is reported skipped.
        `sides`: (system, repetition, note) each."""
        if not self.wanted(operation):
            return
        warmup, repetitions = PLANS[operation]
        if self.quick:
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
        results = self.results
        for system, _, note in sides:
            if system in failed:
                results.skip(operation, system, failed[system])
                say(f"  {operation:28s} {system:10s} skipped: {failed[system]}")
            else:
                results.add(operation, system, statistics.median(samples[system]),
                            len(samples[system]), note)
                say(f"  {operation:28s} {system:10s} {format_ns(results.median(operation, system)):>10s}"
                    f"  ({len(samples[system])} repetitions)")
