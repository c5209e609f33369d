"""The report: the table printed, the Markdown page (side_by_side.md; bench/make_results.py puts it
into bench/RESULTS.md) and the chart of cudacore's ratios."""

import os
import platform
import re

from .harness import format_ns, say
from .operations import OPERATIONS, SYSTEMS


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


def host_description():
    """"vm, x86_64, 16 CPUs, Python 3.12.3": the machine this process runs on."""
    return (f"{platform.node()}, {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}")


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
    out.append(f"Host: {environment.get('host') or host_description()}")
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
