#!/usr/bin/env python3
"""Every public header compiles on its own, as the first include of a file (g++ -fsyntax-only, in
parallel): none leans on an include its users happened to write before it.

    python3 scripts/check-headers-alone.py [CUDA_HOME]
"""
import concurrent.futures
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CUDA = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUDA_HOME", "/usr/local/cuda"))
# Headers that need more than the toolkit's include folder, by the start of their names
# (cccl.hpp, cccl_thrust_allocator.hpp; mpi.hpp, mpi_transfer.hpp, ...).
EXTRA = {
    "cccl": ["-isystem", str(CUDA / "include" / "cccl")],
    "mdspan": ["-isystem", str(CUDA / "include" / "cccl")],
    "mpi": ["-isystem", "/usr/lib/x86_64-linux-gnu/openmpi/include"],
}


def extra_flags(name):
    return next((flags for start, flags in EXTRA.items()
                 if name == f"{start}.hpp" or name.startswith(f"{start}_")), [])


def check(header, folder):
    source = pathlib.Path(folder) / f"{header.stem}_alone.cpp"
    source.write_text(f'#include "cudacore/{header.name}"\nint main() {{ return 0; }}\n')
    command = ["g++", "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", f"-I{ROOT / 'include'}",
               "-isystem", str(CUDA / "include"), *extra_flags(header.name), str(source)]
    result = subprocess.run(command, capture_output=True, text=True)
    return header.name, result.returncode, result.stderr


def main():
    headers = sorted((ROOT / "include" / "cudacore").glob("*.hpp"))
    failed = 0
    with tempfile.TemporaryDirectory() as folder, concurrent.futures.ThreadPoolExecutor(
            os.cpu_count() or 2) as pool:
        for name, status, errors in pool.map(lambda h: check(h, folder), headers):
            if status != 0 or errors.strip():
                failed += 1
                print(f"headers-alone: cudacore/{name} does not compile on its own:\n{errors}")
    print(f"headers-alone: {len(headers) - failed} of {len(headers)} public headers compile "
          "as the first include of a file")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
