"""Side by side, cache (cache.cpp's rows) through cuda.core's program caches and CuPy's memo and
disk cache: memory and disk cache hits."""

import hashlib
import shutil
import tempfile

from .harness import BATCH, now_ns
from .code import from_cubin_keywords


def include_digest(include_dirs):
    """A fingerprint of the include directories, for cuda.core's cache key (extra_digest)."""
    return hashlib.sha256("\0".join(include_dirs).encode()).digest()


def cuda_core_hits(cc, runner, label, source, names, options, include_dirs, version):
    """cuda.core's program caches (cuda.core.utils, recent releases). include_path needs the
    documented manual pattern: make_program_cache_key with an extra_digest, get, from_cubin.
    `version`: a callable giving cuda.core's version, for the reason when there is no cache."""
    system = "cuda.core"
    results = runner.results
    try:
        from cuda.core.utils import (FileStreamProgramCache, InMemoryProgramCache,
                                     make_program_cache_key)
    except Exception as error:
        for kind in ("memory", "disk"):
            if runner.wanted(f"{kind}_cache_hit_{label}"):
                results.skip(f"{kind}_cache_hit_{label}", system,
                             f"this cuda.core ({version()}) has no program cache ({error})")
        return
    digest = include_digest(include_dirs)
    cache_dir = tempfile.mkdtemp(prefix="side-by-side-cuda-core-")
    caches = {"memory": InMemoryProgramCache(), "disk": FileStreamProgramCache(cache_dir)}
    for kind, cache in caches.items():
        operation = f"{kind}_cache_hit_{label}"
        if not runner.wanted(operation):
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

        def hit(cache=cache, keywords=keywords):
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

        runner.compare(operation, [(system, hit,
                       f"{type(cache).__name__}: make_program_cache_key + get + ObjectCode.from_cubin")])
    shutil.rmtree(cache_dir, ignore_errors=True)


def cupy_hits(cupy, runner, modules, label, source, names):
    """A RawModule compiled again: from the in-process memo, then (memo cleared) from disk."""
    def memory_hit():
        start = now_ns()
        for _ in range(BATCH):
            modules.module_for(source, names, unique=False).compile()
        return (now_ns() - start) / BATCH

    runner.compare(f"memory_cache_hit_{label}",
                   [("CuPy", memory_hit, "RawModule(...).compile() again (in-process memo)")])

    def disk_hit():
        modules.module_for(source, names, unique=False).compile()  # on disk for sure
        cupy._util.clear_memo()
        module = modules.module_for(source, names, unique=False)
        start = now_ns()
        module.compile()
        return now_ns() - start

    runner.compare(f"disk_cache_hit_{label}",
                   [("CuPy", disk_hit, "RawModule.compile() after clearing the memo (reads "
                                       "CUPY_CACHE_DIR; module load included)")])
