"""Side by side, code (code.cpp's rows) through cuda.core and CuPy: compiles, 32 specializations,
a second kernel with the same headers, ObjectCode from bytes and serialized."""

import pickle
import uuid

from .harness import BATCH, fresh, now_ns, say


def from_cubin_keywords(cc, data, name, symbols=None):
    """The keywords ObjectCode.from_cubin takes in this cuda.core (older releases take no name),
    chosen once so that timed loops call it directly."""
    try:
        cc.ObjectCode.from_cubin(data, name=name, symbol_mapping=symbols)
        return {"name": name, "symbol_mapping": symbols}
    except TypeError:
        return {"symbol_mapping": symbols}


# ---------------------------------------------------------------------------------------------
# cuda.core


def cuda_core_compile(cc, runner, label, source, names, options):
    def compile_once():
        start = now_ns()
        cc.Program(source, "c++", options=options).compile("cubin", name_expressions=names)
        return now_ns() - start

    runner.compare(f"compile_{label}", [("cuda.core", compile_once, "Program.compile")])


def cuda_core_specializations(cc, runner, kernels, environment):
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

    runner.compare("compile_cuda_std_32_specializations",
                   [(system, many, "a Program.compile per specialization (32)")])

    first_source, first_names = kernels["cuda_std"]
    second_source, second_names = kernels["cuda_std_second"]
    if runner.wanted("compile_cuda_std_second_kernel"):
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

    runner.compare("compile_cuda_std_second_kernel",
                   [(system, second, "Program.compile (default options) after a first kernel")])


def cuda_core_object_code(cc, runner, kernels, options):
    """ObjectCode from bytes and pickled; returns the launch kernels' cubin, the from_cubin
    keywords and their ObjectCode, for the GPU areas."""
    system = "cuda.core"
    launch_source, _ = kernels["launch"]
    launch_code = cc.Program(launch_source, "c++", options=options).compile("cubin")
    cubin = bytes(launch_code.code)

    launch_keywords = from_cubin_keywords(cc, cubin, "launch.cubin")

    def from_bytes():
        start = now_ns()
        for _ in range(BATCH):
            cc.ObjectCode.from_cubin(cubin, **launch_keywords)
        return (now_ns() - start) / BATCH

    runner.compare("object_code_from_bytes", [(system, from_bytes, "ObjectCode.from_cubin(bytes)")])

    code = cc.ObjectCode.from_cubin(cubin, **launch_keywords)

    def roundtrip():
        start = now_ns()
        for _ in range(BATCH):
            copy = pickle.loads(pickle.dumps(code))
            if len(bytes(copy.code)) != len(cubin):
                raise RuntimeError("round trip changed the code")
        return (now_ns() - start) / BATCH

    runner.compare("serialize_roundtrip",
                   [(system, roundtrip, "pickle.dumps + pickle.loads of an ObjectCode")])
    return cubin, launch_keywords, code


# ---------------------------------------------------------------------------------------------
# CuPy


class CupyModules:
    """RawModules compiled with the toolkit's include dirs, or with CuPy's own headers once those
    failed (CuPy brings its own CCCL headers; the toolkit's may clash with them)."""

    def __init__(self, cupy, environment):
        self.cupy = cupy
        self.include_options = tuple(f"-I{d}" for d in environment.get("include_dirs") or [])

    def module_for(self, source, names, unique):
        """A RawModule; `unique` appends a comment that defeats every CuPy cache."""
        text = source + (f"\n// {uuid.uuid4().hex}\n" if unique else "")
        return self.cupy.RawModule(code=text, options=self.include_options, backend="nvrtc",
                                   name_expressions=list(names) or None)


def cupy_compile(runner, modules, label, source, names):
    try:
        modules.module_for(source, names, unique=False).compile()
    except Exception as error:
        if modules.include_options:
            say(f"  CuPy: compiling with the toolkit's include dirs failed ({type(error).__name__}); "
                "using CuPy's own headers")
            modules.include_options = ()

    def cold():
        module = modules.module_for(source, names, unique=True)
        start = now_ns()
        module.compile()
        return now_ns() - start

    runner.compare(f"compile_{label}",
                   [("CuPy", cold, "RawModule.compile() of a never-seen source (NVRTC with CuPy's "
                                   "--pch and -ftz=true, disk-cache write and module load included)")])


def cupy_specializations(cupy, runner, kernels, environment):
    """RawModule with the 32 name expressions; a second kernel's RawModule after a first."""
    system = "CuPy"
    results = runner.results
    operations = ("compile_cuda_std_32_specializations", "compile_cuda_std_second_kernel")
    if all((operation, system) in results.skipped for operation in operations):
        return  # no GPU: the GPU check said why
    include_options = tuple(f"-I{d}" for d in environment.get("include_dirs") or [])

    def compile_module(source, names):
        module = cupy.RawModule(code=fresh(source), options=include_options, backend="nvrtc",
                                name_expressions=list(names))
        start = now_ns()
        module.compile()
        return now_ns() - start

    many_source, many_names = kernels["cuda_std_many"]
    runner.compare("compile_cuda_std_32_specializations",
                   [(system, lambda: compile_module(many_source, many_names),
                     "RawModule(name_expressions=32).compile() of a never-seen source (CuPy's --pch)")])
    first_source, first_names = kernels["cuda_std"]
    second_source, second_names = kernels["cuda_std_second"]
    if runner.wanted("compile_cuda_std_second_kernel"):
        try:  # the first kernel with these headers; a failure shows in the timed compiles
            compile_module(first_source, first_names)
        except Exception:
            pass
    runner.compare("compile_cuda_std_second_kernel",
                   [(system, lambda: compile_module(second_source, second_names),
                     "RawModule.compile() of a never-seen source after a first kernel (CuPy's --pch)")])


def cupy_object_code_skips(results):
    results.skip("object_code_from_bytes", "CuPy", "CuPy has no code object (RawModule loads a path)")
    results.skip("serialize_roundtrip", "CuPy", "CuPy has no code object to serialize")
