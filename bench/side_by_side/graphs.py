"""Side by side, graphs (graphs.cpp's rows) through cuda.core's GraphBuilder, with the same kernel
and sizes as the C++ half: launches and replays per kernel (enqueue only), capture + instantiate
per graph. CuPy has no graph rows. The per-node update rows (graph_node_update_launch,
graph_instantiate_launch) are timed by the C++ half only: raw driver calls against cudacore."""

from .harness import LAUNCH_BURST, now_ns
from .operations import GRAPH_SIZES


def cuda_core_rows(cc, runner, device, stream, config, empty):
    system = "cuda.core"
    results = runner.results

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

        runner.compare(f"launch_{kernels}_kernels",
                       [(system, launches, f"launch() x {kernels}, per kernel")])

        replays = 1 if kernels >= LAUNCH_BURST else LAUNCH_BURST // kernels
        graph = None
        if runner.wanted(f"graph_replay_{kernels}"):
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
            runner.compare(f"graph_replay_{kernels}",
                           [(system, replay,
                             f"Graph.launch of a GraphBuilder graph ({kernels} nodes), per kernel")])

        def capture_instantiate(kernels=kernels):
            start = now_ns()
            made = capture(kernels)
            elapsed = now_ns() - start
            del made  # destroyed outside the timing
            return elapsed

        runner.compare(f"graph_capture_instantiate_{kernels}",
                       [(system, capture_instantiate,
                         f"create_graph_builder().begin_building(), launch() x {kernels}, "
                         "end_building(), complete()")])
        if graph is not None:
            stream.sync()
            graph.close()
