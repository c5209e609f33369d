#!/usr/bin/env python3
"""Writes bench/RESULTS.md from one GPU run: the current tables only, nothing carried over.

    bash scripts/gpu-check.sh BUILD OUT bench                  # on the GPU machine
    python3 bench/make_results.py OUT --commit SHA             # anywhere, with OUT copied back

OUT is the folder gpu-check.sh's bench mode wrote:
  summary.txt               its first line "== DATE GPU, DRIVER"; "NAME: rc=N" for each *_bench
                            program, followed for the Google Benchmark ones by their ratio table
                            ("operation raw cudacore ratio" lines); "side_by_side.py: rc=N"
  side-by-side/             side_by_side.json (every figure), side_by_side.md, side_by_side.png
  logs.tar.gz (or logs/)    one NAME.txt per program: the table programs' Markdown tables
The page: a header (machine, date, the code's commit, how to regenerate), then
  - the side-by-side table, made from side_by_side.json by bench/side_by_side/report.py (the
    run's side_by_side.md when there is no JSON), its chart copied beside the page;
  - each Google Benchmark program's ratio table, from summary.txt;
  - each table program's Markdown tables (thread_memory_bench, disk_cache_scale_bench, ...),
    from its log; a program that printed none is listed with its exit code and last line.
Runs that bench mode does not make (two GPUs: `gpu-check.sh BUILD OUT multi`; MPI ranks:
bench/mpi_compile.sh; shared use) have no result files this script could read reliably: their
current tables live in bench/results_by_hand.md, edited by hand (each table names its machine,
date and code), and the page includes that file as it is, under a heading that says so.
Earlier figures and the analyses that went with them stay in git (`git log -p bench/RESULTS.md`).

Options: --output PAGE (default bench/RESULTS.md), --by-hand FILE (default
bench/results_by_hand.md; --by-hand '' leaves it out). Exits 1 when OUT has no summary.txt.
"""

import argparse
import io
import json
import os
import re
import shutil
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from side_by_side.harness import Results  # noqa: E402
from side_by_side.report import code_spans, markdown, table_rows  # noqa: E402

# "event_stream_bench: rc=0" (gpu-check.sh's note for each program).
PROGRAM_LINE = re.compile(r"^(\w+): rc=(-?\d+)\s*$")
# A ratio table's row: "operation name   123.4   130.1   1.054" (bench_support.cpp).
RATIO_ROW = re.compile(r"^(\S.*?)\s+(\d[\d.]*(?:e[+-]?\d+)?)\s+(\d[\d.]*(?:e[+-]?\d+)?)\s+"
                       r"(\d[\d.]*(?:e[+-]?\d+)?)\s*$")


def read_summary(path):
    """(first line's date, first line's machine, {program: (rc, [ratio rows])}, side-by-side rc),
    programs in the run's order."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    date, machine = "unknown", "unknown"
    if lines and lines[0].startswith("== "):
        # "== 2026-11-26T04:21:07Z NVIDIA H100 80GB HBM3, 580.159.04"
        date, _, gpu = lines[0][3:].strip().partition(" ")
        name, _, driver = gpu.strip().rpartition(", ")
        machine = f"{name} (driver {driver})" if name else (gpu.strip() or "no GPU named")
    programs, side_by_side_rc, current = {}, None, None
    for line in lines[1:]:
        match = PROGRAM_LINE.match(line)
        if line.startswith("side_by_side.py: rc="):
            side_by_side_rc = int(line.split("=", 1)[1])
            current = None
            continue
        if match and match.group(1).endswith("_bench"):
            current = match.group(1)
            programs[current] = (int(match.group(2)), [])
            continue
        if current is None or line.startswith("operation ") or line.startswith("("):
            continue
        row = RATIO_ROW.match(line)
        if row:
            programs[current][1].append(row.groups())
    return date, machine, programs, side_by_side_rc


def read_logs(out):
    """{NAME: text} of the programs' logs: OUT/logs.tar.gz, else the folder OUT/logs."""
    logs = {}
    archive = os.path.join(out, "logs.tar.gz")
    if os.path.isfile(archive):
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar.getmembers():
                name = os.path.basename(member.name)
                if member.isfile() and name.endswith(".txt"):
                    logs[name[:-4]] = tar.extractfile(member).read().decode("utf-8", "replace")
    elif os.path.isdir(os.path.join(out, "logs")):
        folder = os.path.join(out, "logs")
        for name in sorted(os.listdir(folder)):
            if name.endswith(".txt"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    logs[name[:-4]] = f.read()
    return logs


def markdown_tables(text):
    """The Markdown tables in a program's output: (caption, lines) each, the caption being the
    line just above the table ("disk", "operation: allocate + free 1 MiB, ..."), or ""."""
    tables, table, caption, previous = [], [], "", ""
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            if not table:
                caption = previous
            table.append(line.rstrip())
        else:
            if len(table) >= 3:  # a header, its rule, at least one row
                tables.append((caption, table))
            table = []
            previous = line.strip()
    return tables


def host_of(out):
    """The side-by-side run's host line ("vm, x86_64, 16 CPUs, Python 3.12.3"), or None."""
    try:
        with open(os.path.join(out, "side-by-side", "side_by_side.json"), encoding="utf-8") as f:
            return json.load(f).get("environment", {}).get("host")
    except (OSError, ValueError):
        return None


def side_by_side_section(out, chart_name):
    """The side-by-side Markdown of the run, or None when it has none."""
    folder = os.path.join(out, "side-by-side")
    data_path = os.path.join(folder, "side_by_side.json")
    if os.path.isfile(data_path):
        with open(data_path, encoding="utf-8") as f:
            data = json.load(f)
        results = Results()
        for figure in data.get("figures", []):
            results.add(figure["operation"], figure["system"], figure["median_ns"],
                        figure.get("repetitions"), figure.get("note"))
        for skip in data.get("skipped", []):
            results.skip(skip["operation"], skip["system"], skip["reason"])
        chart_note = (f"Chart: {chart_name} (ratios on a log scale).\n\n"
                      f"![cudacore's ratios to raw and to cuda.core]({chart_name})"
                      if chart_name else "No chart in this run.")
        measured = {operation for operation, _ in results.figures}  # a run with --only: its rows
        return markdown(results, table_rows(results, measured), data.get("environment", {}),
                        data.get("versions", {}), chart_note)
    page_path = os.path.join(folder, "side_by_side.md")
    if os.path.isfile(page_path):
        with open(page_path, encoding="utf-8") as f:
            return f.read()
    return None


def ratio_table(rows):
    out = ["| operation | raw | cudacore | cudacore / raw |", "|---|---:|---:|---:|"]
    for operation, raw, ours, ratio in rows:
        out.append(f"| {code_spans(operation)} | {raw} | {ours} | {ratio} |")
    return out


def last_line(text):
    lines = [" ".join(line.split()) for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def build_page(out, commit, by_hand_text, chart_name):
    date, machine, programs, side_by_side_rc = read_summary(os.path.join(out, "summary.txt"))
    logs = read_logs(out)
    host = host_of(out)
    if host:
        machine += f"; host {host}"
    page = [
        "# Benchmark results",
        "",
        "<!-- Generated by bench/make_results.py from one GPU run; edit that script or",
        "     bench/results_by_hand.md, not this page. -->",
        "The current figures, all from one run of `scripts/gpu-check.sh BUILD OUT bench` unless a "
        "section says otherwise. Earlier runs, and the analyses that went with them, are in this "
        "file's history (`git log -p bench/RESULTS.md`); [docs/performance.md]"
        "(../docs/performance.md) says what each program measures.",
        "",
        f"- Machine: {machine}",
        f"- Date: {date}",
        f"- Code: `{commit}`",
        "- Regenerate: on the GPU machine `bash scripts/gpu-check.sh BUILD OUT bench`; then "
        "`python3 bench/make_results.py OUT --commit SHA` writes this page and "
        "`bench/side_by_side.png`.",
        "",
    ]

    page += ["## Side by side: cudacore, the raw driver, cuda.core and CuPy", ""]
    section = side_by_side_section(out, chart_name)
    if section is None:
        rc = "did not run" if side_by_side_rc is None else f"exited with rc={side_by_side_rc}"
        page += [f"No side-by-side figures in this run (`side_by_side.py` {rc}).", ""]
    else:
        page += ["`bench/side_by_side.py`: each operation through the raw driver / NVRTC (C++), "
                 "cudacore (C++), cuda.core and CuPy (Python), with the same kernels.", "",
                 section.rstrip(), ""]

    ratio_programs = {name: v for name, v in programs.items() if v[1]}
    table_programs = {name: v for name, v in programs.items() if not v[1]}
    page += ["## Google Benchmark programs: cudacore against raw", "",
             "Each program's operations timed both ways in the same run (`bench/bench_support.cpp`): "
             "the median time in the benchmark's unit (ns unless the benchmark sets another), "
             "and cudacore's time over raw's.", ""]
    if not ratio_programs:
        page += ["None in this run.", ""]
    for name, (rc, rows) in ratio_programs.items():
        page += [f"### `{name}`", ""]
        if rc != 0:
            page += [f"Exited with rc={rc}; the rows below are those it printed.", ""]
        page += ratio_table(rows) + [""]

    page += ["## Table programs", "",
             "Programs that print their own Markdown tables (threads, cache scale, Redis, "
             "header bundles, ...), as they printed them in this run, each under the line "
             "it printed above it.", ""]
    if not table_programs:
        page += ["None in this run.", ""]
    missing = []
    for name, (rc, _) in table_programs.items():
        tables = markdown_tables(logs.get(name, ""))
        if not tables:
            missing.append((name, rc, last_line(logs.get(name)) if name in logs else "no log"))
            continue
        page += [f"### `{name}`", ""]
        if rc != 0:
            page += [f"Exited with rc={rc}; the tables below are those it printed.", ""]
        for caption, table in tables:
            if caption:
                page += [code_spans(caption), ""]
            page += table + [""]
    if missing:
        page += ["No table in this run from:", ""]
        for name, rc, line in missing:
            page += [f"- `{name}` (rc={rc}): {code_spans(line)}"]
        page += [""]

    if by_hand_text:
        page += ["## Runs this page does not regenerate (by hand)", "",
                 "Kept by hand in `bench/results_by_hand.md` and included as it is: figures from "
                 "runs that `gpu-check.sh`'s bench mode does not make. Each table names its "
                 "machine, date and code.", "", by_hand_text.strip(), ""]
    return "\n".join(page).rstrip() + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the folder scripts/gpu-check.sh's bench mode wrote")
    parser.add_argument("--commit", required=True, help="the commit of the code that ran")
    parser.add_argument("--output", default=os.path.join(HERE, "RESULTS.md"), help="the page")
    parser.add_argument("--by-hand", default=os.path.join(HERE, "results_by_hand.md"),
                        help="the hand-kept section ('' for none)")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.out, "summary.txt")):
        print(f"make_results: {args.out} has no summary.txt (not a gpu-check.sh output folder)",
              file=sys.stderr)
        return 1
    by_hand_text = ""
    if args.by_hand:
        with open(args.by_hand, encoding="utf-8") as f:
            by_hand_text = f.read()
    # The chart goes beside the page, under the name the page links.
    chart = os.path.join(args.out, "side-by-side", "side_by_side.png")
    chart_name = None
    if os.path.isfile(chart):
        chart_name = "side_by_side.png"
        target = os.path.join(os.path.dirname(os.path.abspath(args.output)), chart_name)
        if os.path.abspath(chart) != target:
            shutil.copyfile(chart, target)
    page = build_page(args.out, args.commit, by_hand_text, chart_name)
    with io.open(args.output, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"wrote {args.output} ({page.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
