"""The side-by-side benchmark's Python half, one module per area beside the C++ one (code, cache,
launch, events, memory, graphs: each times cuda.core and CuPy), around one harness.

    operations.py  the rows: ids, names, plans (warm-up, repetitions), which need a GPU
    harness.py     the kernels' source, Results, Runner (timing, alternation), shared constants
    cpp_program.py runs the C++ program (raw and cudacore) and reads its JSON lines
    systems.py     imports cuda.core and CuPy and runs their areas in row order
    report.py      the table, the Markdown page, the chart

bench/side_by_side.py is the command that runs it all.
"""
