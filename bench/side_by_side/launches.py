"""Side by side, launch (launches.cpp's rows) through cuda.core and CuPy: first and repeated kernel
lookups, launches enqueued in bursts, launch + synchronize."""

from .harness import LAUNCH_BLOCK, LAUNCH_BURST, LOOKUPS, now_ns


def cuda_core_rows(cc, runner, device, stream, config, cubin, launch_keywords, code):
    """Returns the `empty` kernel, for the event and graph areas."""
    system = "cuda.core"

    def first_get_kernel():
        fresh = cc.ObjectCode.from_cubin(cubin, **launch_keywords)
        start = now_ns()
        kernel = fresh.get_kernel("eight")
        elapsed = now_ns() - start
        del kernel, fresh  # unloads, outside the timing
        return elapsed

    runner.compare("get_kernel_first",
                   [(system, first_get_kernel, "get_kernel on a fresh ObjectCode (lazy load)")])

    empty = code.get_kernel("empty")
    eight = code.get_kernel("eight")

    def repeated_get_kernel():
        start = now_ns()
        for _ in range(LOOKUPS):
            code.get_kernel("eight")
        return (now_ns() - start) / LOOKUPS

    runner.compare("get_kernel_repeated", [(system, repeated_get_kernel, None)])

    import numpy as np
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

    runner.compare("launch_empty_enqueue", [(system, burst(empty, ()), "launch(), bursts of 64")])
    runner.compare("launch_8_args_enqueue",
                   [(system, burst(eight, eight_args),
                     "launch() with numpy scalars and Buffers, bursts of 64")])

    def roundtrip_launch():
        start = now_ns()
        cc.launch(stream, config, empty)
        stream.sync()
        return now_ns() - start

    runner.compare("launch_sync_roundtrip", [(system, roundtrip_launch, "launch() + Stream.sync()")])
    scratch.close(stream)
    stream.sync()
    return empty


def cupy_rows(cupy, runner, modules, kernels):
    """Returns the `empty` kernel and the stream the launches ran on, for the event and memory
    areas."""
    system = "CuPy"
    results = runner.results
    launch_source, _ = kernels["launch"]
    launch_module = modules.module_for(launch_source, (), unique=False)
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

        runner.compare("get_kernel_first",
                       [(system, first_get_kernel,
                         "cupy.cuda.function.Module: load (cuModuleLoadData) + get_function")])
        loaded = function_module()
        loaded.load(cubin)

        def repeated_get_kernel():
            start = now_ns()
            for _ in range(LOOKUPS):
                loaded.get_function("eight")
            return (now_ns() - start) / LOOKUPS

        runner.compare("get_kernel_repeated",
                       [(system, repeated_get_kernel, "Module.get_function (cuModuleGetFunction)")])

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

    runner.compare("launch_empty_enqueue", [(system, burst(empty, ()), "RawKernel call, bursts of 64")])
    runner.compare("launch_8_args_enqueue",
                   [(system, burst(eight, eight_args),
                     "RawKernel call with numpy scalars and arrays, bursts of 64")])

    def roundtrip_launch():
        with stream:
            start = now_ns()
            empty(grid, block, ())
            stream.synchronize()
            return now_ns() - start

    runner.compare("launch_sync_roundtrip",
                   [(system, roundtrip_launch, "RawKernel call + Stream.synchronize()")])
    return empty, stream
