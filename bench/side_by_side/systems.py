"""cuda.core and CuPy: importing them and their versions, and running their areas in the order the
rows have always been measured in (keep it, so that runs stay comparable)."""

from . import cache, code, events, graphs, launches, memory
from .harness import LAUNCH_BLOCK
from .operations import GPU_OPERATIONS, OPERATIONS


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


def cupy_version(cupy):
    try:
        return cupy.__version__
    except Exception:
        return None


def run_cuda_core(cc, runner, kernels, environment):
    code.cuda_core_specializations(cc, runner, kernels, environment)
    arch = environment["arch"]
    include_dirs = environment.get("include_dirs") or []

    def options_for(name):
        return cc.ProgramOptions(name=name, arch=arch, include_path=list(include_dirs) or None)

    for label in ("small", "cuda_std"):
        source, names = kernels[label]
        options = options_for(f"side_by_side_{label}.cu")
        code.cuda_core_compile(cc, runner, label, source, names, options)
        cache.cuda_core_hits(cc, runner, label, source, names, options, include_dirs, cuda_core_version)
    cubin, launch_keywords, launch_code = code.cuda_core_object_code(
        cc, runner, kernels, options_for("side_by_side_launch.cu"))

    try:
        device = cc.Device(0)
        device.set_current()
    except Exception as error:
        for operation in GPU_OPERATIONS:
            if runner.wanted(operation):
                runner.results.skip(operation, "cuda.core", f"no GPU: {type(error).__name__}: {error}")
        return
    stream = device.create_stream()
    config = cc.LaunchConfig(grid=1, block=LAUNCH_BLOCK)
    empty = launches.cuda_core_rows(cc, runner, device, stream, config, cubin, launch_keywords, launch_code)
    events.cuda_core_rows(cc, runner, device, stream, config, empty)
    memory.cuda_core_rows(runner, device, stream)
    graphs.cuda_core_rows(cc, runner, device, stream, config, empty)


def run_cupy(cupy, runner, kernels, environment):
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
            if runner.wanted(operation):
                runner.results.skip(operation, "CuPy", reason)
    else:
        modules = code.CupyModules(cupy, environment)
        for label in ("small", "cuda_std"):
            source, names = kernels[label]
            code.cupy_compile(runner, modules, label, source, names)
            cache.cupy_hits(cupy, runner, modules, label, source, names)
        empty, stream = launches.cupy_rows(cupy, runner, modules, kernels)
        events.cupy_rows(cupy, runner, stream, empty)
        memory.cupy_rows(cupy, runner, stream)
        code.cupy_object_code_skips(runner.results)
    code.cupy_specializations(cupy, runner, kernels, environment)
