#!/usr/bin/env python3
"""Where a CI run's time went, per build folder: each command's time from Ninja's log
(.ninja_log, the last build of each output) summed by kind of target, the slowest compiles, and
the slowest tests from CTest's record of its last run (Testing/Temporary/CTestCostData.txt).

    python3 scripts/ci-times.py BUILD_DIR... [--top N]

A command's time in Ninja's log is its wall time: on cores of its own (ninja -j at the number
of cores, nothing else running) about the processor time it took; on a busy machine more.
"""
import argparse
import collections
import pathlib
import re

# Kinds of target by the object or program path Ninja names, first match wins.
KINDS = [
    ("library", re.compile(r"(^|/)CMakeFiles/cudacore_(layer_\w+|mpi)\.dir/|^libcudacore(_mpi)?\.so")),
    ("workers", re.compile(r"CMakeFiles/cudacore_(compile_worker|link_worker|load_probe)\.dir/|"
                           r"^cudacore-(compile|link)-worker$|^cudacore-load-probe$")),
    ("CLI and tools", re.compile(r"^tools/")),
    ("test helpers", re.compile(r"^tests/(CMakeFiles/)?(helper_|libcudacore_|cudacore_("
                                r"nvtx_recorder|signal_setter|lock_open_delay|fault_injection|test_egl))")),
    ("test support", re.compile(r"^tests/(CMakeFiles/)?(cudacore_test_support|libcudacore_test_support|"
                                r"cudacore_mpi_test_main)")),
    ("CPU tests", re.compile(r"^tests/(CMakeFiles/)?cpu_")),
    ("GPU tests", re.compile(r"^tests/(CMakeFiles/)?gpu_")),
    ("examples", re.compile(r"^examples/")),
    ("benchmarks", re.compile(r"^bench/")),
    ("fuzzers", re.compile(r"^fuzz/")),
]


def kind_of(output):
    return next((kind for kind, pattern in KINDS if pattern.search(output)), "other")


def ninja_times(build):
    """Seconds per output, from the last build that made it."""
    last = {}
    log = build / ".ninja_log"
    if not log.exists():
        return last
    for line in log.read_text().splitlines():
        if line.startswith("#"):
            continue
        start, end, _, output, _ = line.split("\t")
        last[output] = (int(end) - int(start)) / 1000
    return last


def test_times(build):
    """(seconds, name) of each test of CTest's last run, longest first."""
    cost = build / "Testing" / "Temporary" / "CTestCostData.txt"
    if not cost.exists():
        return []
    tests = []
    for line in cost.read_text().splitlines():
        if line.startswith("---"):
            break
        parts = line.rsplit(" ", 2)
        if len(parts) == 3:
            tests.append((float(parts[2]), parts[0]))
    return sorted(tests, reverse=True)


def report(build, top):
    times = ninja_times(build)
    print(f"== {build}: {len(times)} commands, {sum(times.values()):.0f} s in Ninja's log")
    by_kind = collections.Counter()
    count = collections.Counter()
    for output, seconds in times.items():
        by_kind[kind_of(output)] += seconds
        count[kind_of(output)] += 1
    for kind, seconds in by_kind.most_common():
        print(f"   {seconds:7.0f} s  {count[kind]:4d} commands  {kind}")
    compiles = sorted(((s, o) for o, s in times.items() if o.endswith((".o", ".gch", ".pch"))), reverse=True)
    if compiles:
        print(f"   slowest compiles:")
        for seconds, output in compiles[:top]:
            print(f"   {seconds:7.1f} s  {output}")
    tests = test_times(build)
    if tests:
        print(f"   slowest of {len(tests)} tests (CTest's last run, {sum(s for s, _ in tests):.0f} s in all):")
        for seconds, name in tests[:top]:
            print(f"   {seconds:7.1f} s  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", type=pathlib.Path)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    for build in args.builds:
        if build.is_dir():
            report(build, args.top)


if __name__ == "__main__":
    main()
